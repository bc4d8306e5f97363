//! CSV importers against the real corpus (samples/corpus; the Saleae exports and most
//! scope exports only in the shared corpus, in the tests marked `have_shared_corpus`), the
//! format notes' test cases, sigrok-cli as a reference reader, and bad input. Expected
//! numbers come from the raw text (line counts, first/last time cells) or from the corpus
//! notes, never from the parser.

use latscope_importers::{Format, ImportError, LoadControl, detect, import_bytes, open};
use latscope_model::{ClockOrigin, DigitalTrack, PS_PER_S, Source};
use latscope_testkit::{Need, corpus, in_repo};
use std::path::{Path, PathBuf};

fn load(bytes: &[u8]) -> Source {
    let format = detect(bytes).unwrap_or_else(|| {
        panic!("not detected: {:?}", String::from_utf8_lossy(&bytes[..bytes.len().min(200)]))
    });
    import_bytes(format, bytes, &LoadControl::new()).unwrap_or_else(|e| panic!("{e}"))
}

fn load_str(s: &str) -> Source {
    load(s.as_bytes())
}

/// Lines of a file without terminators (handles CRLF and a missing final newline).
fn text_lines(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines().map(|l| l.trim_end_matches('\r').to_string()).collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1e-3)
}

fn span(s: &Source) -> (f64, f64) {
    s.time_range_seconds().unwrap_or_else(|| panic!("{}: empty", s.name))
}

fn assert_span(s: &Source, first: f64, last: f64) {
    let (a, b) = span(s);
    assert!(close(a, first) && close(b, last), "{}: span {a}..{b}, expected {first}..{last}", s.name);
}

fn cell(line: &str, sep: char, i: usize) -> String {
    line.split(sep).nth(i).unwrap_or("").trim().to_string()
}

fn secs(s: &str) -> f64 {
    s.trim().replace(',', ".").parse::<f64>().unwrap_or_else(|_| panic!("not a number: {s:?}"))
}

/// Per-channel transition counts of a change-row CSV, from its text.
fn transitions(rows: &[String], channels: usize) -> Vec<usize> {
    (0..channels)
        .map(|c| rows.windows(2).filter(|w| cell(&w[0], ',', c + 1) != cell(&w[1], ',', c + 1)).count())
        .collect()
}

fn digital_counts(s: &Source) -> Vec<usize> {
    s.digital.iter().map(|d| d.transitions()).collect()
}

fn names(s: &Source) -> Vec<String> {
    s.digital.iter().map(|d| d.name.clone()).chain(s.analog.iter().map(|a| a.name.clone())).collect()
}

fn open_corpus(rel: &str) -> (Source, Vec<String>) {
    let path = corpus(rel);
    let s = open(&path, &LoadControl::new()).unwrap_or_else(|e| panic!("{e}"));
    (s, text_lines(&path))
}

#[test]
#[cfg_attr(not(have_shared_corpus), ignore = "needs the shared corpus: ../shared/corpus or $LATSCOPE_CORPUS")]
fn saleae_logic2_digital_corpus() {
    let eight: Vec<String> = (0..8).map(|i| format!("Channel {i}")).collect();
    let str_vec = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<String>>();
    for (file, expect_names) in [
        ("saleae_csv/logic2_digital_1ch_sent_short.csv", str_vec(&["Channel 2"])),
        ("saleae_csv/logic2_digital_8ch_sent_mlx.csv", eight),
        ("saleae_csv/logic2_digital_usb_fs_dn_dp_outen.csv", str_vec(&["Dn", "Dp", "out_en"])),
    ] {
        let (s, lines) = open_corpus(file);
        assert_eq!(s.format, "saleae-logic2-csv", "{file}");
        assert_eq!(names(&s), expect_names, "{file}");
        let rows = &lines[1..];
        assert_eq!(s.records(), rows.len() as u64, "{file}");
        assert_eq!(digital_counts(&s), transitions(rows, expect_names.len()), "{file}");
        assert_span(&s, secs(&cell(&rows[0], ',', 0)), secs(&cell(&rows[rows.len() - 1], ',', 0)));
        assert_eq!(s.diagnostics.malformed, 0, "{file}");
    }
}

#[test]
#[cfg_attr(not(have_shared_corpus), ignore = "needs the shared corpus: ../shared/corpus or $LATSCOPE_CORPUS")]
fn saleae_x_values_are_unknown_level() {
    // NOTES.md: the last two rows of the mlx export hold X for Channel 2.
    let (s, lines) = open_corpus("saleae_csv/logic2_digital_8ch_sent_mlx.csv");
    let ch2 = &s.digital[2];
    assert_eq!(ch2.levels().last(), Some(&2));
    let t_first_x = secs(&cell(&lines[lines.len() - 2], ',', 0)) - secs(&cell(&lines[1], ',', 0));
    let t = ch2.last_time().unwrap_or(0);
    assert!((t as f64 / PS_PER_S as f64 - t_first_x).abs() < 1e-12);
}

#[test]
#[cfg_attr(not(have_shared_corpus), ignore = "needs the shared corpus: ../shared/corpus or $LATSCOPE_CORPUS")]
fn saleae_logic2_analog_corpus() {
    let (s, lines) = open_corpus("saleae_csv/logic2_analog_adc_current_source.csv");
    assert_eq!(s.format, "saleae-logic2-csv");
    let rows = &lines[1..];
    let total: usize = s.analog.iter().filter(|a| a.name.starts_with("ADC")).map(|a| a.samples.len()).sum();
    assert_eq!(total, rows.len());
    assert!(s.analog.iter().all(|a| a.unit == "V"));
    assert_eq!(s.analog.len(), 2, "the 50 S/s axis is uniform: {:?}", s.diagnostics.summary());
    assert_eq!(names(&s), ["ADC", "FUENTE CORRIENTE"]);
    assert_span(&s, secs(&cell(&rows[0], ',', 0)), secs(&cell(&rows[rows.len() - 1], ',', 0)));
    // The step is 20 ms (50 S/s): NOTES.md.
    assert!((s.analog[0].dt_ps - 20e9).abs() < 1e3, "{}", s.analog[0].dt_ps);
    assert_eq!(s.analog[0].samples[0], secs(&cell(&rows[0], ',', 1)) as f32);
}

#[test]
#[cfg_attr(not(have_shared_corpus), ignore = "needs the shared corpus: ../shared/corpus or $LATSCOPE_CORPUS")]
fn saleae_analyzer_tables_corpus() {
    let (s, lines) = open_corpus("saleae_csv/logic2_analyzer_usb_lsfs_frames.csv");
    assert_eq!(s.format, "saleae-logic2-analyzer-csv");
    assert_eq!(s.spans.len(), 1);
    assert_eq!(s.spans[0].name, "USB LS and FS");
    assert_eq!(s.spans[0].len(), lines.len() - 1);
    let last_end =
        lines[1..].iter().map(|l| secs(&cell(l, ',', 2)) + secs(&cell(l, ',', 3))).fold(f64::MIN, f64::max);
    assert_span(&s, 0.0, last_end);
    assert_eq!(s.strings.resolve(s.spans[0].label[0]), "Reset");

    let (s, lines) = open_corpus("saleae_csv/logic1_i2c_analyzer_max77705_batt_power_on.csv");
    assert_eq!(s.format, "saleae-analyzer-csv");
    assert_eq!(s.spans[0].len(), lines.len() - 1);
    assert_span(&s, secs(&cell(&lines[1], ',', 0)), secs(&cell(&lines[lines.len() - 1], ',', 0)));
    assert_eq!(
        s.strings.resolve(s.spans[0].label[1]),
        "Packet ID=0 Address=0x3F Data=0xFF Read/Write=Read ACK/NAK=NAK"
    );
}

/// (file, format, channel names, header lines, time column, separator, time unit in s).
type ScopeCase = (&'static str, &'static str, &'static [&'static str], usize, usize, char, f64);

const SCOPE_CASES: &[ScopeCase] = &[
    ("scope_csv/agilent_mso7034a_scope_4.csv", "scope-csv/keysight", &["CH1", "CH2"], 2, 0, ',', 1.0),
    ("scope_csv/agilent_mso7034a_ascii_xy_scope_8_1.csv", "scope-csv/keysight", &["CH1"], 2, 0, ',', 1.0),
    (
        "scope_csv/keysight_infiniivision_2ch_engnotation.csv",
        "scope-csv/keysight",
        &["CH1", "CH2"],
        2,
        0,
        ',',
        1.0,
    ),
    ("scope_csv/tek_tds2001c_F0000CH1.csv", "scope-csv/tektronix", &["CH1"], 0, 3, ',', 1.0),
    ("scope_csv/siglent_sds1202xe_ch1.csv", "scope-csv/siglent", &["CH1"], 12, 0, ',', 1.0),
    ("scope_csv/picoscope_wellenform_chA.csv", "scope-csv/picoscope", &["Channel A"], 3, 0, ',', 1e-3),
    (
        "scope_csv/picoscope_german_tab_2ch.txt",
        "scope-csv/picoscope",
        &["Kanal A", "Kanal B"],
        3,
        0,
        '\t',
        1e-3,
    ),
];

#[test]
fn scope_corpus_opens_with_counts_and_spans() {
    let cases: Vec<&ScopeCase> = SCOPE_CASES.iter().filter(|c| in_repo(c.0)).collect();
    assert_eq!(cases.len(), 3);
    scope_cases_open_with_counts_and_spans(&cases);
}

#[test]
#[cfg_attr(not(have_shared_corpus), ignore = "needs the shared corpus: ../shared/corpus or $LATSCOPE_CORPUS")]
fn scope_corpus_of_the_shared_corpus_opens_with_counts_and_spans() {
    let cases: Vec<&ScopeCase> = SCOPE_CASES.iter().filter(|c| !in_repo(c.0)).collect();
    assert_eq!(cases.len(), 4);
    scope_cases_open_with_counts_and_spans(&cases);
}

fn scope_cases_open_with_counts_and_spans(cases: &[&ScopeCase]) {
    for &&(file, format, chans, header, tcol, sep, unit) in cases {
        let (s, lines) = open_corpus(file);
        let rows: Vec<&String> = lines[header..].iter().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(s.format, format, "{file}");
        assert_eq!(names(&s), chans, "{file}");
        for a in &s.analog {
            assert_eq!(a.samples.len(), rows.len(), "{file} {}", a.name);
            assert_eq!(a.unit, "V", "{file}");
        }
        let first = secs(&cell(rows[0], sep, tcol)) * unit;
        let last = secs(&cell(rows[rows.len() - 1], sep, tcol)) * unit;
        assert_span(&s, first, last);
        // A uniform axis: the step equals the span over the row count.
        let dt = (last - first) / (rows.len() - 1) as f64;
        assert!((s.analog[0].dt_ps / 1e12 - dt).abs() <= dt * 1e-6, "{file}: dt {}", s.analog[0].dt_ps);
        // Values are the file's, in volts.
        let v0 = secs(&cell(rows[0], sep, tcol + 1));
        assert!((f64::from(s.analog[0].samples[0]) - v0).abs() <= 1e-6 * v0.abs().max(1e-3), "{file}");
        assert_eq!(s.diagnostics.malformed, 0, "{file}: {:?}", s.diagnostics.summary());
    }
}

#[test]
#[cfg_attr(not(have_shared_corpus), ignore = "needs the shared corpus: ../shared/corpus or $LATSCOPE_CORPUS")]
fn rigol_corpus_uses_start_plus_increment() {
    for (file, chans) in [
        ("scope_csv/rigol_ds1000z_2ch_power_lab.csv", vec!["CH1", "CH2"]),
        ("scope_csv/rigol_ds1000z_1ch_newfile2.csv", vec!["CH1"]),
    ] {
        let (s, lines) = open_corpus(file);
        assert_eq!(s.format, "scope-csv/rigol");
        assert_eq!(names(&s), chans);
        let second = &lines[1];
        let n = chans.len();
        let start = secs(&cell(second, ',', n + 1));
        let inc = secs(&cell(second, ',', n + 2));
        let rows = &lines[2..];
        let last_index = secs(&cell(&rows[rows.len() - 1], ',', 0));
        for a in &s.analog {
            assert_eq!(a.samples.len(), rows.len());
            assert!((a.dt_ps - inc * 1e12).abs() < 1e-6);
        }
        assert_span(&s, start, start + last_index * inc);
        // NOTES.md: 1-channel file has 30000 points.
        if n == 1 {
            assert_eq!(rows.len(), 30_000);
        }
    }
}

#[test]
fn scope_square_wave_to_digital() {
    // The 1.2 kHz probe-compensation square wave of scope_4.csv: every sample is either
    // below 0.3 V or above 2.2 V, so the edges are where the text value crosses 1.25 V.
    let (s, lines) = open_corpus("scope_csv/agilent_mso7034a_scope_4.csv");
    let rows = &lines[2..];
    for (k, a) in s.analog.iter().enumerate() {
        let v: Vec<f64> = rows.iter().map(|r| secs(&cell(r, ',', k + 1))).collect();
        assert!(v.iter().all(|x| *x < 0.3 || *x > 2.2));
        let high: Vec<bool> = v.iter().map(|x| *x > 1.25).collect();
        let edges: Vec<usize> = (1..high.len()).filter(|&i| high[i] != high[i - 1]).collect();
        assert!(!edges.is_empty());
        let d = a.to_digital(latscope_model::Threshold::Auto);
        assert_eq!(d.initial, u8::from(high[0]), "{}", a.name);
        let expect: Vec<i64> = edges.iter().map(|&i| a.time_of(i)).collect();
        assert_eq!(d.times().collect::<Vec<_>>(), expect, "{}", a.name);
    }
}

#[test]
fn stated_counts_from_notes_and_formats() {
    let (s, _) = open_corpus("scope_csv/keysight_infiniivision_2ch_engnotation.csv");
    assert!((s.analog[0].dt_ps - 1000.0).abs() < 1e-6, "1 ns/pt");
}

#[test]
#[cfg_attr(not(have_shared_corpus), ignore = "needs the shared corpus: ../shared/corpus or $LATSCOPE_CORPUS")]
fn stated_counts_from_notes_and_formats_of_the_shared_corpus() {
    // 140,000 records, Δt = 2 µs. NOTES: Tek 2500 rows at 1 ns.
    let (s, _) = open_corpus("scope_csv/siglent_sds1202xe_ch1.csv");
    assert_eq!(s.analog[0].samples.len(), 140_000);
    assert!((s.analog[0].dt_ps - 2e6).abs() < 1e-3);
    assert!(s.diagnostics.warnings.iter().all(|w| !w.contains("Record Length")));
    let (s, _) = open_corpus("scope_csv/tek_tds2001c_F0000CH1.csv");
    assert_eq!(s.analog[0].samples.len(), 2500);
    assert!((s.analog[0].dt_ps - 1000.0).abs() < 1e-6);
    assert!(s.metadata.contains(&("instrument".to_string(), "TDS2001C".to_string())));
    assert!(s.metadata.contains(&("Trigger Point".to_string(), "3.30E+02".to_string())));
}

#[test]
#[cfg_attr(not(have_shared_corpus), ignore = "needs the shared corpus: ../shared/corpus or $LATSCOPE_CORPUS")]
fn non_captures_in_the_shared_corpus_are_refused_clearly() {
    let bode = corpus("scope_csv/digilent_waveforms_ad2_bode.csv");
    let err = open(&bode, &LoadControl::new()).err().map(|e| e.to_string()).unwrap_or_default();
    // Says what the file is (its own instrument line and columns) and what to export instead.
    for part in [
        "digilent_waveforms_ad2_bode.csv: line 21: Digilent WaveForms Network Analyzer - Bode export:",
        "`Channel 2 Phase (deg)` against `Frequency (Hz)` is a frequency-domain table",
        "export time-domain data from the WaveForms Scope instrument",
        "first column is `Time (s)`",
    ] {
        assert!(err.contains(part), "{part:?} missing from: {err}");
    }
}

#[test]
fn non_captures_in_the_corpus_are_refused_clearly() {
    let sidecar = corpus("scope_csv/agilent_mso7034a_scope_4.txt");
    match open(&sidecar, &LoadControl::new()) {
        Err(ImportError::Unsupported { .. }) => {
            let msg = open(&sidecar, &LoadControl::new()).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(msg.contains("sigrok-cli CSV") && msg.contains("PicoScope"), "{msg}");
        }
        other => panic!("sidecar: {:?}", other.map(|s| s.format)),
    }
}

// ---- logic-analyzer CSV cases ----

#[test]
fn case_5_5_1_saleae_doc_example_with_x_and_smileys() {
    let s = load_str(
        "Time [s],Channel 0 :),Channel 1 :),Ch2\n0.000000000,0,1,X\n0.125000000,0,0,X\n0.250000000,1,1,X\n1.000000000,X,X,X\n",
    );
    assert_eq!(s.format, "saleae-logic2-csv");
    assert_eq!(names(&s), ["Channel 0 :)", "Channel 1 :)", "Ch2"]);
    let c0 = &s.digital[0];
    assert_eq!(
        (c0.initial, c0.times().collect::<Vec<_>>(), c0.levels().to_vec()),
        (0, vec![250_000_000_000, PS_PER_S], vec![1, 2])
    );
    let c1 = &s.digital[1];
    assert_eq!(
        (c1.initial, c1.times().collect::<Vec<_>>(), c1.levels().to_vec()),
        (1, vec![125_000_000_000, 250_000_000_000, PS_PER_S], vec![0, 1, 2])
    );
    assert_eq!((s.digital[2].initial, s.digital[2].transitions()), (2, 0));
    assert_eq!(s.digital[2].end, PS_PER_S);
}

#[test]
fn case_5_5_2_logic1_layout() {
    let s = load_str("Time[s], Channel 0, Channel 1\n0.000000000000000, 1, 1\n7.642110550000000, 1, 0\n");
    assert_eq!(s.format, "saleae-logic1-csv");
    assert_eq!(names(&s), ["Channel 0", "Channel 1"]);
    assert_eq!(s.digital[1].times().collect::<Vec<_>>(), [7_642_110_550_000]);
    assert_eq!(s.digital[0].transitions(), 0);
    // Analog export with the same layout.
    let s = load_str("Time[s], Channel 0\n0.000000000000000, 1.25\n0.001000000000000, 3.30\n");
    assert_eq!(
        (s.format.as_str(), s.analog[0].samples.clone(), s.analog[0].dt_ps),
        ("saleae-logic1-csv", vec![1.25, 3.3], 1e9)
    );
    // Tab option of Logic 1.x.
    let s = load_str("Time[s]\tChannel 0\n0.0\t1\n0.5\t0\n");
    assert_eq!(
        (s.format.as_str(), s.digital[0].times().collect::<Vec<_>>()),
        ("saleae-logic1-csv", vec![PS_PER_S / 2])
    );
}

#[test]
fn case_5_5_3_negative_first_time() {
    let s = load_str("Time [s],A,B\n-0.000002000,1,0\n0.000000000,0,0\n0.000001000,0,1\n");
    assert_eq!(s.origin, ClockOrigin::from_secs_ps(0, -2_000_000));
    assert_eq!(s.digital[0].times().collect::<Vec<_>>(), [2_000_000]);
    assert_eq!(s.digital[1].times().collect::<Vec<_>>(), [3_000_000]);
    assert_span(&s, -2e-6, 1e-6);
}

#[test]
fn case_5_5_4_mso_waveforms_with_blanks_and_trigger_reset() {
    let s = load_str(
        "Trigger [s],Time [s],Ch0,Ch1\n0.000000000000,0.000000000000,1200.000000,-200.000000\n\
         0.062500000000,0.062500000000,1400.000000,300.000000\n0.125000000000,0.125000000000,1300.000000,100.000000\n\
         0.000000000000,0.200000000000,,-200.000000\n0.062500000000,0.262500000000,1000.000000,0.000000\n",
    );
    assert_eq!(s.format, "saleae-logic2-csv");
    // Two waveforms (the Time column jumps between them): two segments per channel.
    let n: Vec<(String, usize)> = s.analog.iter().map(|a| (a.name.clone(), a.samples.len())).collect();
    assert_eq!(
        n,
        [
            ("Ch0 #1".to_string(), 3),
            ("Ch0 #2".to_string(), 2),
            ("Ch1 #1".to_string(), 3),
            ("Ch1 #2".to_string(), 2)
        ]
    );
    assert!(s.analog[1].samples[0].is_nan(), "an empty cell is a gap, not 0");
    assert_eq!(s.analog[1].t0, 200_000_000_000);
    assert_eq!(s.analog[2].samples, [-200.0, 300.0, 100.0]);
    assert!(s.diagnostics.warnings.iter().any(|w| w.contains("1 empty value")));
}

const SIGROK_HEADER: &str = "; CSV generated by libsigrok 0.5.2\n; from Session-emulating driver on Mon Nov 30 00:18:46 2026\n; Channels (4/8): MOSI, RST, SCK, MISO\n; Samplerate: 4 MHz\n";

#[test]
fn case_5_5_5_sigrok_outputs() {
    // label=units, no time column: times from the samplerate.
    let s = load_str(&format!("{SIGROK_HEADER}logic,logic,logic,logic\n1,1,1,1\n1,0,1,1\n0,0,1,1\n"));
    assert_eq!(s.format, "sigrok-csv");
    assert_eq!(names(&s), ["MOSI", "RST", "SCK", "MISO"]);
    assert_eq!(s.digital[0].times().collect::<Vec<_>>(), [500_000]);
    assert_eq!(s.digital[1].times().collect::<Vec<_>>(), [250_000]);
    assert_eq!(s.digital[0].end, 500_000);
    assert!(s.metadata.contains(&("instrument".to_string(), "Session-emulating driver".to_string())));
    // time=true:dedup=true with a nanoseconds column starting at 250 ns.
    let s = load_str(&format!(
        "{SIGROK_HEADER}nanoseconds,logic,logic,logic,logic\n250,1,1,1,1\n1048576000,1,1,1,1\n1048576250,1,1,1,1\n1223121500,0,0,0,1\n"
    ));
    assert_eq!(s.origin, ClockOrigin::from_secs_ps(0, 250_000));
    assert_eq!(s.digital[0].times().collect::<Vec<_>>(), [(1_223_121_500 - 250) * 1000]);
    assert_eq!(s.digital[3].transitions(), 0);
    // label=channel.
    let s = load_str(&format!("{SIGROK_HEADER}Time,MOSI,RST,SCK,MISO\n0,1,1,1,1\n1,0,1,1,1\n"));
    assert_eq!(names(&s), ["MOSI", "RST", "SCK", "MISO"]);
    assert_eq!(s.digital[0].times().collect::<Vec<_>>(), [1_000], "4 MHz → nanoseconds");
    // label=off: no label row.
    let s = load_str(&format!("{SIGROK_HEADER}1,1,1,1\n0,1,1,1\n"));
    assert_eq!((names(&s).len(), s.digital[0].times().collect::<Vec<_>>()), (4, vec![250_000]));
    // header=false (and label=off): names D0…, no samplerate → 1 s per sample, warned.
    let s = load_str("1,0\n0,1\n0,1\n");
    assert_eq!(s.format, "sigrok-csv");
    assert_eq!(names(&s), ["D0", "D1"]);
    assert_eq!(s.digital[0].times().collect::<Vec<_>>(), [PS_PER_S]);
    assert!(s.diagnostics.warnings.iter().any(|w| w.contains("no samplerate")));
    // Mixed logic + analog, with the sigrok-cli 0.7 echo lines.
    let s = load_str(
        "; CSV generated by libsigrok 0.5.2\n; Channels (3/13): D0, D1, A0\n; Samplerate: 200 kHz\nA0: -10.0000 V DC\nlogic,logic,V DC\n1,0,-10\nA0: 5.0 V DC\n0,1,5.87785\n",
    );
    assert_eq!(names(&s), ["D0", "D1", "A0"]);
    assert_eq!(
        (s.analog[0].unit.as_str(), s.analog[0].samples.clone(), s.analog[0].dt_ps),
        ("V DC", vec![-10.0, 5.87785], 5e6)
    );
    assert_eq!(s.diagnostics.malformed, 0);
    assert!(s.diagnostics.warnings.iter().any(|w| w.contains("2 sigrok-cli analog echo")));
}

#[test]
fn case_5_5_6_crlf_and_bom() {
    let s = load(b"\xEF\xBB\xBFTime [s],Channel 0\r\n0.000000000,0\r\n0.5,1\r\n1.0,1\r\n");
    assert_eq!(names(&s), ["Channel 0"]);
    assert_eq!((s.digital[0].times().collect::<Vec<_>>(), s.digital[0].end), (vec![PS_PER_S / 2], PS_PER_S));
}

#[test]
fn case_5_5_7_packed_and_sample_number_columns_are_refused_clearly() {
    let data = b"Time[s], Channels\n0.0, 0x03\n0.5, 0x01\n";
    let err = import_bytes(Format::SaleaeCsv, data, &LoadControl::new())
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("line 2") && err.contains("display_base"), "{err}");
    let data = b"Sample Number, Channel 0\n0, 1\n1, 0\n";
    let err = import_bytes(Format::SaleaeCsv, data, &LoadControl::new())
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("sample numbers"), "{err}");
}

#[test]
fn saleae_iso8601_times_set_an_epoch_origin() {
    let s = load_str(
        "Time [s],Channel 0\n2024-03-05T12:34:56.000000000Z,0\n2024-03-05T12:34:56.250000000Z,1\n2024-03-05T12:34:57.000000000Z,1\n",
    );
    assert_eq!(s.format, "saleae-logic2-csv");
    // `date -u -d 2024-03-05T12:34:56Z +%s` = 1709642096.
    assert_eq!((s.origin.secs, s.origin.ps), (1_709_642_096, 0));
    assert_eq!(s.digital[0].times().collect::<Vec<_>>(), [250_000_000_000]);
    assert_eq!(s.digital[0].end, PS_PER_S);
    let s =
        load_str("Time [s],ADC\n2024-03-05T12:34:56.000000000Z,0.5\n2024-03-05T12:34:56.020000000Z,0.7\n");
    assert_eq!((s.analog[0].dt_ps, s.origin.secs), (20e9, 1_709_642_096));
}

// ---- oscilloscope CSV cases ----

#[test]
fn case_6_7_1_keysight_with_empty_last_row() {
    let mut text = String::from("x-axis,1,2\nsecond,Volt,Volt\n");
    for i in 0..999 {
        let t = -1000 + 2 * i;
        text.push_str(&format!("{t}.000E-06,-249.982E-06,+31.500101E-03\n"));
    }
    text.push_str("+998.000E-06,,\n");
    let s = load_str(&text);
    assert_eq!(s.format, "scope-csv/keysight");
    assert_eq!(s.analog.iter().map(|a| a.samples.len()).collect::<Vec<_>>(), [1000, 1000]);
    assert_eq!(s.analog[0].dt_ps, 2e6);
    assert!(s.analog[0].samples[999].is_nan() && s.analog[1].samples[999].is_nan());
    assert_eq!(s.analog[1].samples[0], 31.500101e-3_f64 as f32);
    assert_span(&s, -1e-3, 998e-6);
    assert!(s.diagnostics.warnings.iter().any(|w| w.contains("2 empty value")));
}

#[test]
fn case_6_7_2_keysight_ascii_xy_plain_decimals() {
    let s = load_str("x-axis,1\nsecond,Volt\n-0.001,-0.000249982\n-0.00098,-0.000249982\n-0.00096,0.031");
    assert_eq!((names(&s), s.analog[0].samples.len(), s.analog[0].dt_ps), (vec!["CH1".to_string()], 3, 2e7));
}

#[test]
fn case_6_7_3_tektronix_mdo_preamble() {
    let mut text = String::from(
        "Model,MDO4104C\nFirmware Version,1.10\n\nWaveform Type,ANALOG,\nPoint Format,Y,\nHorizontal Units,s,\nHorizontal Scale,0.0002,\n\
         Horizontal Delay,0.000597,\nSample Interval,2e-08,\nRecord Length,100000,\nGating,0.0% to 100.0%,\nProbe Attenuation,10,10\n\
         Vertical Units,V,V\nVertical Offset,0,0\nVertical Scale,2,2\nVertical Position,-3,1.02\n,,\n,,\n,,\nLabel,,\nTIME,CH1,CH2\n",
    );
    for i in 0..100_000i64 {
        // t = -4.03e-4 + i * 2e-8, written as Tek does with 5 decimals of mantissa.
        let t_ns = -403_000 + 20 * i;
        text.push_str(&format!(
            "{:.5e},4.96,{}\n",
            t_ns as f64 * 1e-9,
            if i % 2 == 0 { "4.92" } else { "5" }
        ));
    }
    text.push('\n');
    assert_eq!(text.lines().count(), 100_022);
    let s = load_str(&text);
    assert_eq!(s.format, "scope-csv/tektronix");
    assert_eq!(names(&s), ["CH1", "CH2"]);
    assert_eq!(s.analog[0].samples.len(), 100_000);
    assert!(s.metadata.contains(&("instrument".to_string(), "MDO4104C".to_string())));
    assert_span(&s, -4.03e-4, 1.59698e-3);
    assert!(s.diagnostics.warnings.iter().all(|w| !w.contains("Record Length")));
}

#[test]
fn case_6_7_4_siglent_leading_space_and_us_units() {
    let s = load_str(
        "Record Length,Analog:4\nSample Interval,CH1:0.0000020000000\nVertical Units,CH1:V,,,\nHorizontal Units,us,,,\n\
         Horizontal Scale,20000.0000000000,,,\nModel Number,SDS1202X-E,,,\nSource,CH1\nSecond,Volt\n 0.00000000000,1.16000\n 0.00000200000,1.18000\n 0.00000400000,0.00\n 0.00000600000,1.22000\n",
    );
    assert_eq!(
        (s.format.as_str(), s.analog[0].samples.len(), s.analog[0].dt_ps),
        ("scope-csv/siglent", 4, 2e6)
    );
    assert_eq!(s.analog[0].samples, [1.16, 1.18, 0.0, 1.22]);
    assert!(s.metadata.contains(&("Sample Interval".to_string(), "0.0000020000000".to_string())));
}

#[test]
fn case_6_7_5_rigol_trailing_commas() {
    let s = load_str(
        "X,CH1,CH2,Start,Increment,\nSequence,Volt,Volt,-5.999998e-02,2.000000e-05\n0,4.72e+01,2.40e+00,\n1,4.64e+01,3.20e+00,\n",
    );
    assert_eq!(s.format, "scope-csv/rigol");
    assert_eq!(names(&s), ["CH1", "CH2"]);
    assert_eq!(s.analog[0].samples, [47.2, 46.4]);
    // t[1] = Start + Increment = -0.05998 s exactly.
    assert_eq!(
        (s.origin, s.analog[0].time_of(1)),
        (ClockOrigin::from_secs_ps(0, -59_999_980_000), 20_000_000)
    );
    assert_eq!(s.diagnostics.malformed, 0);
    // DHO memory export with `t0 =` / `tInc =` cells.
    let s = load_str("CH1V,CH2V,t0 =-0.001, tInc = 1e-06,\n1.5,2.5,\n1.6,2.6,\n");
    assert_eq!(
        (s.format.as_str(), names(&s)),
        ("scope-csv/rigol", vec!["CH1".to_string(), "CH2".to_string()])
    );
    assert_eq!((s.analog[0].dt_ps, s.origin), (1e6, ClockOrigin::from_secs_ps(0, -1_000_000_000)));
}

#[test]
fn case_6_7_6_tek_tbs_interleaved_preamble() {
    let mut text = String::new();
    let pre = [
        ("Record Length", "2.500000e+03"),
        ("Sample Interval", "4.000000e-07"),
        ("Trigger Point", "1.250000000000e+03"),
        ("", ""),
        ("Source", "CH1"),
        ("Vertical Units", "V"),
        ("Horizontal Units", "s"),
        ("Model Number", "TDS2012B"),
    ];
    for i in 0..2500 {
        let (k, v) = pre.get(i).copied().unwrap_or(("", ""));
        let t = -0.0005 + i as f64 * 4e-7;
        text.push_str(&format!("{k},{v},,{t:.12},0.08000,\r\n"));
    }
    let s = load_str(&text);
    assert_eq!(s.format, "scope-csv/tektronix");
    assert_eq!((names(&s), s.analog[0].samples.len()), (vec!["CH1".to_string()], 2500));
    assert!(s.metadata.contains(&("Trigger Point".to_string(), "1.250000000000e+03".to_string())));
    assert_eq!(s.analog[0].dt_ps, 400_000.0);
    assert_span(&s, -0.0005, -0.0005 + 2499.0 * 4e-7);
}

#[test]
fn case_6_7_7_picoscope_dot_and_german_give_identical_si_values() {
    let a = load_str(
        "Time,Channel A,Channel B\n(us),(mV),(V)\n\n-500.00000000,12.34567890,0.12345679\n-499.00000000,13.0,0.2\n",
    );
    let b = load_str(
        "Zeit;Kanal A;Kanal B\n(us);(mV);(V)\n\n-500,00000000;12,34567890;0,12345679\n-499,00000000;13,0;0,2\n",
    );
    let c = load_str(
        "Zeit\tKanal A\tKanal B\r\n(us)\t(mV)\t(V)\r\n\r\n-500,00000000\t12,34567890\t0,12345679\r\n-499,00000000\t13,0\t0,2\r\n",
    );
    for s in [&a, &b, &c] {
        assert_eq!(s.format, "scope-csv/picoscope");
        assert_eq!(s.analog[0].unit, "V");
        assert_eq!(s.analog[0].samples, [0.0123456789_f64 as f32, 0.013]);
        assert_eq!(s.analog[1].samples, [0.12345679f32, 0.2]);
        assert_eq!((s.analog[0].dt_ps, s.origin), (1e6, ClockOrigin::from_secs_ps(0, -500_000_000)));
    }
    let d = load_str("Time,Channel A\n(ms),(V)\n\n0,∞\n1,-∞\n2,\n3,1.0\n");
    assert_eq!(d.analog[0].samples.len(), 4);
    assert!(d.analog[0].samples[0].is_infinite() && d.analog[0].samples[2].is_nan());
    assert!(d.diagnostics.warnings.iter().any(|w| w.contains("2 over-range")));
}

#[test]
fn case_6_7_8_siglent_long_form_record_length_mismatch() {
    let s = load_str(
        "Record Length,Analog:14000\nSample Rate,100000000.0\nVertical Scale,CH1: 0.05\nVertical Offset,CH1:0.00000\nHorizontal Scale, 0.000010000\nSecond,Volt\n-0.00007000000,-0.19400\n-0.00006999000,-0.19000\n",
    );
    assert_eq!(
        (s.format.as_str(), s.analog[0].samples.len(), s.analog[0].dt_ps),
        ("scope-csv/siglent", 2, 1e4)
    );
    assert!(s.diagnostics.warnings.iter().any(|w| w.contains("Record Length 14000") && w.contains("2 rows")));
    assert!(s.metadata.contains(&("Sample Rate".to_string(), "100000000.0".to_string())));
}

#[test]
fn digilent_time_domain_and_generic_fallback() {
    let s = load_str(
        "#Digilent WaveForms Oscilloscope Acquisition\n#Device Name: Discovery2\n\nTime (s),Channel 1 (V),Channel 2 (mV)\n-0.001,0.5,500\n0,0.6,600\n0.001,0.7,700\n",
    );
    assert_eq!(
        (s.format.as_str(), names(&s)),
        ("scope-csv/digilent", vec!["Channel 1".to_string(), "Channel 2".to_string()])
    );
    assert_eq!(s.analog[1].samples, [0.5, 0.6, 0.7]);
    assert!(s.metadata.contains(&("Device Name".to_string(), "Discovery2".to_string())));
    let s = load_str("time (ms), ch1, ch2\n0, 1.5, 2\n0.5, 1.6, 3\n");
    assert_eq!((s.format.as_str(), s.analog[0].dt_ps), ("scope-csv/generic", 5e8));
    assert!(s.diagnostics.warnings.iter().any(|w| w.contains("generic")));
    let s = load_str("0.0,1.5\n1e-6,1.6\n2e-6,1.7\n");
    assert_eq!(
        (s.format.as_str(), names(&s), s.analog[0].dt_ps),
        ("scope-csv/generic", vec!["CH1".to_string()], 1e6)
    );
}

// ---- sigrok-cli as reference ----

/// Tiny VCD reader: per-signal (name, [(time in timescale units, value)]).
type VcdSignals = Vec<(String, Vec<(i64, u8)>)>;

fn read_vcd(text: &str) -> (u64, VcdSignals) {
    let mut ids: Vec<(String, String)> = Vec::new();
    let mut out: VcdSignals = Vec::new();
    let mut scale_ps = 1;
    let mut t = 0i64;
    let mut words = text.split_whitespace().peekable();
    while let Some(w) = words.next() {
        match w {
            "$timescale" => {
                let v: String = words.next().unwrap_or_default().to_string();
                let (num, unit) = v.split_at(v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len()));
                let unit = if unit.is_empty() {
                    words.next().unwrap_or_default().to_string()
                } else {
                    unit.to_string()
                };
                let n: u64 = num.parse().unwrap_or(1);
                scale_ps = n * match unit.as_str() {
                    "s" => 1_000_000_000_000,
                    "ms" => 1_000_000_000,
                    "us" => 1_000_000,
                    "ns" => 1_000,
                    _ => 1,
                };
            }
            "$var" => {
                let _ty = words.next();
                let _width = words.next();
                let id = words.next().unwrap_or_default().to_string();
                let name = words.next().unwrap_or_default().to_string();
                ids.push((id, name.clone()));
                out.push((name, Vec::new()));
            }
            _ if w.starts_with('#') => t = w[1..].parse().unwrap_or(t),
            _ if (w.starts_with('0') || w.starts_with('1')) && w.len() > 1 => {
                if let Some(k) = ids.iter().position(|(id, _)| id == &w[1..]) {
                    out[k].1.push((t, w.as_bytes()[0] - b'0'));
                }
            }
            _ => {}
        }
    }
    (scale_ps, out)
}

#[test]
#[cfg_attr(not(have_sigrok_cli), ignore = "needs sigrok-cli: apt-get install sigrok-cli")]
fn sigrok_cli_csv_matches_its_own_vcd() {
    let dir = std::env::temp_dir().join(format!("latscope-csv-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    let sr = dir.join("demo.sr");
    let run = |args: &[&str]| {
        let out = Need::SigrokCli.output(std::process::Command::new("sigrok-cli").args(args));
        assert!(out.status.success(), "sigrok-cli {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        out.stdout
    };
    run(&[
        "-d",
        "demo",
        "--samples",
        "20000",
        "-C",
        "D0,D1,D2,D3,D4,D5,D6,D7",
        "-o",
        sr.to_str().unwrap_or_default(),
    ]);
    let srs = sr.to_str().unwrap_or_default();
    let vcd = String::from_utf8(run(&["-i", srs, "-O", "vcd"])).unwrap_or_default();
    let (scale, signals) = read_vcd(&vcd);
    for opts in [
        "csv",
        "csv:time=true",
        "csv:time=true:dedup=true",
        "csv:label=channel:time=true",
        "csv:header=false:label=off",
    ] {
        let csv = run(&["-i", srs, "-O", opts]);
        let mut s = load(&csv);
        assert_eq!(s.format, "sigrok-csv", "{opts}");
        assert_eq!(s.digital.len(), 8, "{opts}");
        if opts.contains("header=false") {
            // No samplerate: 1 s per sample. Rescale to the 200 kHz the demo uses.
            for d in &mut s.digital {
                *d = DigitalTrack::with_changes(
                    d.name.clone(),
                    d.initial,
                    d.times().map(|t| t / 200_000).collect(),
                    d.levels().to_vec(),
                    d.end,
                );
            }
        }
        for (k, (name, changes)) in signals.iter().enumerate() {
            let d = &s.digital[k];
            if !opts.contains("label=off") {
                assert_eq!(&d.name, name, "{opts}");
            }
            assert_eq!(d.initial, changes[0].1, "{opts} {name}");
            // VCD lists the initial value at #0 then every change.
            let expect: Vec<i64> = changes[1..].iter().map(|(t, _)| t * scale as i64).collect();
            assert_eq!(d.times().collect::<Vec<_>>(), expect, "{opts} {name}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn samples_in_the_repo_open() {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../samples/csv"));
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = e.unwrap_or_else(|e| panic!("{e}")).path();
        if path.extension().is_some_and(|x| x == "csv") {
            let s = open(&path, &LoadControl::new()).unwrap_or_else(|e| panic!("{e}"));
            let data_lines = text_lines(&path)
                .iter()
                .filter(|l| {
                    !l.starts_with(';') && l.chars().next().is_some_and(|c| c.is_ascii_digit() || c == '-')
                })
                .count();
            assert_eq!(s.format, "sigrok-csv");
            assert_eq!(s.records(), data_lines as u64, "{}", path.display());
            assert_eq!(s.diagnostics.malformed, 0);
            n += 1;
        }
    }
    assert!(n >= 2);
}

// ---- bad input ----

#[test]
fn garbage_rows_and_wrong_column_counts_are_counted_with_line_numbers() {
    let s = load_str("Time [s],A,B\n0.0,0,1\nhello world\n0.1,1\n0.2,1,0\n0.3,7,0\nzz,1,1\n0.4,0,0\n");
    assert_eq!(s.diagnostics.malformed, 4);
    let lines: Vec<u64> = s.diagnostics.first_malformed.iter().filter_map(|d| d.line).collect();
    assert_eq!(lines, [3, 4, 6, 7]);
    assert_eq!(s.digital[0].times().collect::<Vec<_>>(), [200_000_000_000, 400_000_000_000]);
    let s = load_str("x-axis,1,2\nsecond,Volt,Volt\n0,1,2\n1e-6,oops,3\n2e-6\n3e-6,1,2\n");
    assert_eq!(s.diagnostics.malformed, 2);
    assert_eq!(s.diagnostics.first_malformed[0].line, Some(4));
    assert_eq!(s.diagnostics.first_malformed[1].line, Some(5));
    assert_eq!(s.analog[0].samples.len(), 2);
}

#[test]
fn absurd_times_are_malformed_not_overflows() {
    // 9.3e6 s from the first row is past the ±46-day window that keeps ps arithmetic exact.
    let s = load_str("Time [s],A\n0.0,0\n9300000.0,1\n1e30,1\n0.5,1\n");
    assert_eq!(s.diagnostics.malformed, 2);
    assert_eq!(s.digital[0].times().collect::<Vec<_>>(), [PS_PER_S / 2]);
    let s = load_str("X,CH1,Start,Increment,\nSequence,Volt,-1e-6,1e300,\n0,1,\n5,2,\n");
    assert_eq!(s.diagnostics.malformed, 2, "{:?}", s.diagnostics.summary());
}

#[test]
fn an_endless_line_is_skipped_and_the_rest_loads() {
    let mut data = b"Time [s],A\n0.0,0\n".to_vec();
    data.extend(std::iter::repeat_n(b'7', 3 << 20));
    data.extend_from_slice(b"\n0.5,1\n1.0,0\n");
    let s = load(&data);
    assert_eq!(s.diagnostics.malformed, 1);
    assert_eq!(s.diagnostics.first_malformed[0].line, Some(3));
    assert!(s.diagnostics.first_malformed[0].message.contains("1 MiB"));
    assert_eq!(s.digital[0].times().collect::<Vec<_>>(), [PS_PER_S / 2, PS_PER_S]);
}

#[test]
fn mutated_corpus_bytes_never_panic() {
    // A deterministic stand-in for the fuzzer: truncations and byte flips of real files.
    let mut inputs: Vec<Vec<u8>> = vec![
        b"Time [s],A\n0.0,0\n".to_vec(),
        b"X,CH1,Start,Increment,\nSequence,Volt,-1e-5,1e-7,\n0,1,\n".to_vec(),
        b"Record Length,2.50E+03,,-0.00000033,0.0056\n,,,x,y\n".to_vec(),
        SIGROK_HEADER.as_bytes().to_vec(),
    ];
    inputs.extend(heads(latscope_testkit::corpus_files("scope_csv", None)));
    mutations_never_panic(&inputs);
}

#[test]
#[cfg_attr(not(have_shared_corpus), ignore = "needs the shared corpus: ../shared/corpus or $LATSCOPE_CORPUS")]
fn mutated_bytes_of_the_shared_corpus_never_panic() {
    let mut files = latscope_testkit::shared_corpus_files("saleae_csv", None);
    files.extend(latscope_testkit::shared_corpus_files("scope_csv", None));
    mutations_never_panic(&heads(files));
}

/// The first 4 KiB of each file.
fn heads(files: Vec<PathBuf>) -> Vec<Vec<u8>> {
    files
        .iter()
        .map(|p| {
            let bytes = std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            bytes[..bytes.len().min(4096)].to_vec()
        })
        .collect()
}

/// 200 truncations and byte flips of each input: detection and import must not panic.
fn mutations_never_panic(inputs: &[Vec<u8>]) {
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut rand = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for input in inputs {
        for _ in 0..200 {
            let mut m = input.clone();
            for _ in 0..(rand() % 8) {
                if m.is_empty() {
                    break;
                }
                let i = (rand() as usize) % m.len();
                m[i] = b",;\t\n\r0123456789.-eE+X\"x:"[(rand() as usize) % 24];
            }
            m.truncate((rand() as usize) % (m.len() + 1));
            if let Some(f) = detect(&m) {
                let _ = import_bytes(f, &m, &LoadControl::new());
            }
        }
    }
}

#[test]
fn regression_inputs_parse_without_panicking() {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/regressions/csv"));
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = e.unwrap_or_else(|e| panic!("{e}")).path();
        if path.extension().is_some_and(|x| x == "md") {
            continue;
        }
        let data = std::fs::read(&path).unwrap_or_default();
        if let Some(f) = detect(&data) {
            let _ = import_bytes(f, &data, &LoadControl::new());
        }
        n += 1;
    }
    assert!(n > 0, "no regression inputs in {}", dir.display());
}

#[test]
fn cancel_stops_a_large_import() {
    let mut text = String::from("Time [s],A\n");
    for i in 0..100_000 {
        text.push_str(&format!("{i}.0,{}\n", i % 2));
    }
    let ctl = LoadControl::new();
    ctl.cancel();
    let r = import_bytes(Format::SaleaeCsv, text.as_bytes(), &ctl);
    assert!(matches!(r, Err(latscope_importers::ParseFailure::Cancelled)));
}

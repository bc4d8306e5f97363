#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Detectors and pulse widths on real captures: the tick timer of a loaded machine (ftrace)
//! and sigrok logic/analog captures, cross-checked with a line scan and with `sigrok-cli`.

mod common;

use common::{abs, sample, samples, scan};
use latscope_analysis::outcome::{AnalysisKind, Outcome};
use latscope_analysis::runner::run_spec;
use latscope_analysis::spec::parse_spec;
use latscope_model::{PS_PER_US, Placed, Ps};

fn run1(spec: &str, sources: &[latscope_model::Source]) -> Outcome {
    let mut out =
        run_spec(&parse_spec(spec).unwrap(), &Placed::all(sources)).unwrap_or_else(|e| panic!("{spec}: {e}"));
    assert_eq!(out.len(), 1, "{spec}");
    out.remove(0)
}

#[test]
fn tick_stalls_match_a_line_scan() {
    let path = samples().join("ftrace/timer_wakeups_under_load.txt");
    let ticks: Vec<Ps> = scan(&path)
        .iter()
        .filter(|l| {
            l.event == "hrtimer_expire_entry"
                && l.field("function") == Some("tick_nohz_handler")
                && l.cpu == 0
        })
        .map(|l| l.ts)
        .collect();
    let mut gaps: Vec<Ps> = ticks.windows(2).map(|w| w[1] - w[0]).collect();
    gaps.sort_unstable();
    let median = gaps[gaps.len() / 2];
    // The tick is 250 Hz on this kernel.
    assert!((3_900 * PS_PER_US..4_100 * PS_PER_US).contains(&median), "{median}");
    let want: Vec<(Ps, Ps, Ps)> = ticks
        .windows(2)
        .filter(|w| (w[1] - w[0]) as f64 > 2.0 * median as f64)
        .map(|w| (w[0], w[1], w[1] - w[0] - median))
        .collect();
    assert!(!want.is_empty(), "a loaded machine with nohz idle has long gaps");
    let sources = vec![common::open(&path)];
    let o = run1("stall:hrtimer_expire_entry[function=tick_nohz_handler,cpu=0] factor 2", &sources);
    assert_eq!(o.kind, AnalysisKind::Stall);
    let got: Vec<(Ps, Ps, Ps)> =
        o.windows.iter().map(|w| (abs(&sources[0], w.start), abs(&sources[0], w.end), w.excess)).collect();
    assert_eq!(got, want);
    assert_eq!(
        o.notes[0],
        latscope_analysis::outcome::Note { what: "median period (ps)".into(), count: median as u64 }
    );
    // People read it in the report's units: the 250 Hz tick is about 4 ms.
    assert_eq!(o.notes[0].label(), "median period");
    let shown = o.notes[0].value_text();
    let ms: f64 = shown.strip_suffix(" ms").unwrap_or_else(|| panic!("{shown}")).parse().unwrap();
    assert!((ms - median as f64 / 1e9).abs() < 1e-3, "{shown} vs {median} ps");
}

#[test]
fn polling_runs_match_a_line_scan() {
    let path = samples().join("ftrace/timer_wakeups_under_load.txt");
    let times: Vec<Ps> = scan(&path).iter().filter(|l| l.event == "hrtimer_start").map(|l| l.ts).collect();
    let spacing = 20 * PS_PER_US;
    let mut want = Vec::new();
    let mut k = 0;
    while k < times.len() {
        let mut j = k;
        while j + 1 < times.len() && times[j + 1] - times[j] <= spacing {
            j += 1;
        }
        if j - k + 1 >= 3 {
            want.push((times[k], times[j], format!("iterations={}", j - k + 1)));
        }
        k = j + 1;
    }
    assert!(!want.is_empty());
    let sources = vec![common::open(&path)];
    let o = run1("poll:hrtimer_start within 20us min 3", &sources);
    let got: Vec<(Ps, Ps, String)> = o
        .samples
        .iter()
        .map(|s| (abs(&sources[0], s.start), abs(&sources[0], s.end), s.key.clone()))
        .collect();
    assert_eq!(got, want);
}

/// Samples of the named channels as sigrok-cli prints them.
fn sigrok_csv(file: &str, channels: &str) -> Vec<Vec<f64>> {
    let out = latscope_testkit::Need::SigrokCli.output(std::process::Command::new("sigrok-cli").args([
        "-i",
        &samples().join("sigrok").join(file).to_string_lossy(),
        "-O",
        "csv",
        "-C",
        channels,
    ]));
    assert!(out.status.success(), "sigrok-cli {file}: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    // Comment and unit header lines (`logic,…`, `V DC`) do not parse as numbers.
    text.lines()
        .filter(|l| !l.starts_with(';'))
        .filter_map(|l| l.split(',').map(|v| v.trim().parse::<f64>().ok()).collect::<Option<Vec<f64>>>())
        .collect()
}

/// (rise sample, fall sample) of high pulses of a column, and rising-edge sample indices.
fn pulses(col: &[f64], level: f64) -> (Vec<(usize, usize)>, Vec<usize>) {
    let mut out = Vec::new();
    let mut rises = Vec::new();
    let mut open = None;
    for i in 1..col.len() {
        let (a, b) = (col[i - 1] >= level, col[i] >= level);
        if !a && b {
            open = Some(i);
            rises.push(i);
        } else if a
            && !b
            && let Some(s) = open.take()
        {
            out.push((s, i));
        }
    }
    (out, rises)
}

#[test]
#[cfg_attr(not(have_sigrok_cli), ignore = "needs sigrok-cli: apt-get install sigrok-cli")]
fn digital_pulses_stalls_and_long_phases_match_sigrok_cli() {
    let rows = sigrok_csv("demo_4ch_1mhz.sr", "D0,D1,D2,D3");
    let sources = vec![sample("sigrok/demo_4ch_1mhz.sr")];
    for (c, ch) in ["D0", "D1", "D2", "D3"].iter().enumerate() {
        let col: Vec<f64> = rows.iter().map(|r| r[c]).collect();
        let (want, rises) = pulses(&col, 0.5);
        let o = run1(&format!("pulse:{ch}"), &sources);
        assert_eq!(o.kind, AnalysisKind::Pulse);
        // 1 MHz: one sample is 1 us.
        let got: Vec<Ps> = o.latencies();
        let want_w: Vec<Ps> = want.iter().map(|&(a, b)| (b - a) as Ps * PS_PER_US).collect();
        assert_eq!(got, want_w, "{ch}");
        let o = run1(&format!("stall:{ch}:rise factor 1.5"), &sources);
        let mut gaps: Vec<usize> = rises.windows(2).map(|w| w[1] - w[0]).collect();
        gaps.sort_unstable();
        let median = gaps[gaps.len() / 2];
        let stalls = rises.windows(2).filter(|w| (w[1] - w[0]) as f64 > 1.5 * median as f64).count();
        assert_eq!(o.windows.len(), stalls, "{ch}");
        assert_eq!(o.notes[0].count, median as u64 * PS_PER_US as u64, "{ch}");
        let over = want_w.iter().copied().max().unwrap() - 1;
        let o = run1(&format!("long:{ch} over {}ps", over), &sources);
        assert_eq!(o.windows.len(), want_w.iter().filter(|&&w| w > over).count(), "{ch}");
        assert!(o.windows.iter().all(|w| w.excess == 1));
    }
}

#[test]
#[cfg_attr(not(have_sigrok_cli), ignore = "needs sigrok-cli: apt-get install sigrok-cli")]
fn analog_crossings_at_a_given_level_match_sigrok_cli() {
    let rows = sigrok_csv("mixed_100khz_2logic_1analog.sr", "A0");
    let col: Vec<f64> = rows.iter().map(|r| r[0]).collect();
    let (lo, hi) = col.iter().fold((f64::MAX, f64::MIN), |(a, b), &v| (a.min(v), b.max(v)));
    // A level exactly representable in f32 and between samples' values.
    let level = f64::from(((lo + hi) / 2.0) as f32) + 1e-4;
    let (want, _) = pulses(&col, level);
    assert!(!want.is_empty());
    let sources = vec![sample("sigrok/mixed_100khz_2logic_1analog.sr")];
    let o = run1(&format!("pulse:A0@{level}"), &sources);
    assert_eq!(o.samples.len(), want.len());
    // 12 MHz: widths in samples times 1e12/12e6 ps, as the importer rounds sample times.
    let dt = 1e12 / 12e6;
    for (s, &(a, b)) in o.samples.iter().zip(&want) {
        let w = ((b as f64 * dt).round() - (a as f64 * dt).round()) as Ps;
        assert_eq!(s.latency(), w);
    }
    // The automatic threshold finds pulses too, and a rule pairs its edges.
    let auto = run1("pulse:A0", &sources);
    assert!(!auto.samples.is_empty());
    let r = run1("A0:rise -> A0:fall policy next", &sources);
    assert_eq!(r.latencies(), auto.latencies());
}

#[test]
#[cfg_attr(not(have_shared_corpus), ignore = "needs the shared corpus: ../shared/corpus or $LATSCOPE_CORPUS")]
fn long_spans_on_a_function_graph_track() {
    // rpi_function_graph_irq_thread.txt prints `7.084 us | bcm2835_mbox_irq();` and
    // `! 153.437 us | }`: the function_graph span track holds those two calls.
    let p = common::corpus("ftrace_text/rpi_function_graph_irq_thread.txt");
    let sources = vec![common::open(&p)];
    let o = run1("long:function_graph over 100us", &sources);
    assert_eq!(o.windows.len(), 1);
    assert_eq!(o.windows[0].excess, 53_437_000);
    assert_eq!(o.samples[0].latency(), 153_437_000);
    let o = run1("long:function_graph over 7us", &sources);
    let mut got = o.latencies();
    got.sort_unstable();
    assert_eq!(got, [7_084_000, 153_437_000]);
    assert!(o.samples.iter().any(|s| s.key == "bcm2835_mbox_irq"), "{:?}", o.samples);
}

/// `pulse:` pairs a track's transitions directly; a plain pair rule over the same edges
/// goes through the general pairing engine. Both must agree on every channel of every
/// sigrok sample (digital, and analog through its automatic threshold), high and low.
#[test]
fn pulse_widths_equal_the_general_pairing_engine_on_every_channel() {
    let mut checked = 0;
    for entry in std::fs::read_dir(samples().join("sigrok")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "sr") {
            continue;
        }
        let src = common::open(&path);
        let names: Vec<String> = src
            .digital
            .iter()
            .map(|d| d.name.clone())
            .chain(src.analog.iter().map(|a| a.name.clone()))
            .collect();
        let sources = std::slice::from_ref(&src);
        for ch in names {
            for (phase, a, b) in [("high", "rise", "fall"), ("low", "fall", "rise")] {
                let fast = run1(&format!("pulse:{ch}:{phase}"), sources);
                let general = run1(&format!("w={ch}:{a} -> {ch}:{b} policy next"), sources);
                let what = format!("{}: {ch} {phase}", path.display());
                assert_eq!(fast.samples, general.samples, "{what}");
                assert_eq!(
                    (fast.unmatched_start, fast.unmatched_end),
                    (general.unmatched_start, general.unmatched_end),
                    "{what}"
                );
                checked += fast.samples.len();
            }
        }
    }
    assert!(checked > 10_000, "only {checked} pulses compared");
}

/// The benches' big traces: a real trace repeated, each copy shifted past the previous one.
#[test]
fn a_replicated_trace_repeats_every_event_shifted_by_one_period() {
    let real = sample("ftrace/virtio_blk_direct_read.txt");
    let n = real.events.len();
    let big = real.replicated(2 * n + 5).unwrap();
    assert_eq!(big.events.len(), 2 * n + 5);
    let ts = &real.events.ts;
    let period = ts[n - 1] - ts[0] + 1_000_000_000;
    for i in (0..n).step_by(97) {
        for copy in 0..2 {
            let (a, b) = (real.events.get(i).unwrap(), big.events.get(copy * n + i).unwrap());
            assert_eq!(b.ts(), a.ts() + copy as Ps * period);
            assert_eq!(big.strings.resolve(b.name()), real.strings.resolve(a.name()));
            let fields = |src: &latscope_model::Source, e: latscope_model::EventRef<'_>| {
                e.fields().map(|(k, v)| format!("{}={v:?}", src.strings.resolve(k))).collect::<Vec<_>>()
            };
            assert_eq!(fields(&big, b), fields(&real, a));
        }
    }
}

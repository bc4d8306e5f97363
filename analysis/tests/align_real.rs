#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Alignment between real recordings: the text and trace.dat forms of one ring
//! buffer, and a marker trace with a GPIO capture made from it on a skewed clock.

mod common;

use common::{abs, sample};
use latscope_analysis::align::{AlignSpec, apply_align, parse_align};
use latscope_analysis::endpoint::{Endpoint, endpoint_times};
use latscope_analysis::runner::run_spec;
use latscope_analysis::spec::parse_spec;
use latscope_model::{DigitalTrack, PS_PER_S, PS_PER_US, Placed, Placement, Ps, Source, SourceKind};

#[test]
fn text_and_trace_dat_of_one_buffer_align_to_their_origin_difference() {
    let sources =
        [sample("ftrace/markers_around_requests.txt"), sample("ftrace/markers_around_requests.dat")];
    let spec = parse_align("1:match block_rq_issue -> block_rq_issue drift").unwrap();
    let mut placements = [Placement::IDENTITY; 2];
    let a = apply_align(&spec, &[&sources[0], &sources[1]], &mut placements).unwrap();
    let origin = |s: &Source| s.origin.secs * PS_PER_S + s.origin.ps;
    let expect = origin(&sources[1]) - origin(&sources[0]);
    assert_eq!(a.matched, 318);
    // The text keeps microseconds; trace.dat nanoseconds.
    assert!((a.placement.offset - expect).abs() < PS_PER_US, "{} vs {expect}", a.placement.offset);
    assert!(a.placement.drift_ppm.abs() < 1.0, "{}", a.placement.drift_ppm);
    assert!(a.residual_rms_ps < PS_PER_US as f64, "{}", a.residual_rms_ps);
    assert_eq!(placements, [Placement::IDENTITY, a.placement]);
}

/// A logic capture whose pin goes high `delay` after each marker, on a clock running
/// `ppm` fast and starting `start` later than the trace's relative zero.
fn gpio_from(markers: &[Ps], delay: Ps, ppm: f64, start: Ps) -> Source {
    let mut d = DigitalTrack::new("GPIO", 0);
    for &t in markers {
        let local = ((t + delay - start) as f64 * (1.0 + ppm / 1e6)).round() as Ps;
        d.push(local, 1);
        d.push(local + 5 * PS_PER_US, 0);
    }
    let mut s = Source::new("scope", "test", SourceKind::File);
    s.digital.push(d);
    s
}

#[test]
fn marker_and_gpio_on_skewed_clocks_pair_across_sources_once_aligned() {
    let trace = sample("ftrace/markers_around_requests.txt");
    let start_marker = Endpoint::event_where(
        "tracing_mark_write",
        vec![latscope_analysis::endpoint::Pred::new(
            "text",
            latscope_analysis::endpoint::PredOp::Contains,
            "req_start",
        )],
    );
    let markers = endpoint_times(&trace, "t", &start_marker).unwrap();
    assert_eq!(markers.len(), 300);
    let delay = 3 * PS_PER_US;
    let gpio = gpio_from(&markers, delay, 40.0, 2 * PS_PER_S);
    let mut placements = [Placement::IDENTITY; 2];
    // Before alignment the edges are seconds away from their markers.
    let rule = parse_spec("lat=tracing_mark_write[text~req_start] -> GPIO:rise policy next").unwrap();
    let before = run_spec(&rule, &[Placed::unaligned(&trace), Placed::unaligned(&gpio)]).unwrap();
    assert!(before[0].samples.len() < 300);
    let a = apply_align(
        &parse_align("1:match tracing_mark_write[text~req_start] -> GPIO:rise drift").unwrap(),
        &[&trace, &gpio],
        &mut placements,
    )
    .unwrap();
    assert_eq!(a.matched, 300);
    assert!((a.placement.drift_ppm + 40.0 / 1.00004).abs() < 0.01, "{}", a.placement.drift_ppm);
    let out =
        run_spec(&rule, &[Placed::new(&trace, placements[0]), Placed::new(&gpio, placements[1])]).unwrap();
    assert_eq!(out.len(), 1);
    let o = &out[0];
    assert_eq!(o.source, 0);
    assert_eq!(o.samples.len(), 300);
    // The fit absorbs the constant delay into the offset: what is left is rounding.
    for s in &o.samples {
        assert!(s.latency().abs() <= 2, "{s:?}");
        assert!(markers.contains(&s.start));
    }
    assert!(o.notes.iter().any(|n| n.what.contains("across sources")));
    // By hand: the inverse of the construction, so the latency is the real 3 us delay.
    let sources = [trace, gpio_from(&markers, delay, 0.0, 2 * PS_PER_S)];
    let refs: Vec<&Source> = sources.iter().collect();
    let mut placements = [Placement::IDENTITY; 2];
    let spec = parse_align("1:+2s").unwrap();
    assert_eq!(spec, AlignSpec::Manual { source: 1, offset: 2 * PS_PER_S, drift_ppm: 0.0 });
    apply_align(&spec, &refs, &mut placements).unwrap();
    let o = &run_spec(&rule, &Placed::with(&sources, &placements)).unwrap()[0];
    assert_eq!(o.samples.len(), 300);
    assert!(o.latencies().iter().all(|&l| l == delay));
    assert_eq!(abs(&sources[0], o.samples[0].start), abs(&sources[0], markers[0]));
    assert!(apply_align(&parse_align("0:+1us").unwrap(), &refs, &mut placements).is_err());
    assert!(apply_align(&parse_align("5:+1us").unwrap(), &refs, &mut placements).is_err());
}

/// A rule keyed by a string field across two sources: each half of one real recording
/// holds one endpoint, so the pairs must come out as from the whole file, with the string
/// keys rendered (they are re-interned across sources, not looked up in one source).
#[test]
fn string_keys_across_sources_render_their_text() {
    let text = std::fs::read_to_string(common::samples().join("ftrace/markers_around_requests.txt")).unwrap();
    let dir = std::env::temp_dir().join(format!("latscope-across-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let half = |keep: &str, drop: &str, name: &str| {
        let body: String = text
            .lines()
            .filter(|l| l.starts_with('#') || (l.contains(keep) && !l.contains(drop)))
            .map(|l| format!("{l}\n"))
            .collect();
        let path = dir.join(name);
        std::fs::write(&path, body).unwrap();
        common::open(&path)
    };
    let issues = half("block_rq_issue:", "block_rq_complete:", "issues.txt");
    let completions = half("block_rq_complete:", "block_rq_issue:", "completions.txt");
    let whole = sample("ftrace/markers_around_requests.txt");
    let rule = parse_spec("io=block_rq_issue -> block_rq_complete by rwbs,sector").unwrap();
    let alone = run_spec(&rule, &[Placed::unaligned(&whole)]).unwrap();
    let across = run_spec(&rule, &[Placed::unaligned(&issues), Placed::unaligned(&completions)]).unwrap();
    assert_eq!(across.len(), 1);
    assert!(across[0].notes.iter().any(|n| n.what.contains("across sources")));
    let keys =
        |o: &latscope_analysis::outcome::Outcome| o.samples.iter().map(|s| s.key.clone()).collect::<Vec<_>>();
    assert_eq!(keys(&across[0]), keys(&alone[0]));
    assert_eq!(across[0].latencies(), alone[0].latencies());
    assert!(
        across[0].samples.iter().all(|s| s.key.starts_with("rwbs=R") && !s.key.contains('-')),
        "{:?}",
        &across[0].samples[..2]
    );
    // Each pair names its events in the source that holds them: the issue in input 0, the
    // completion in input 1, at the pair's times.
    // Times compare on the clock both were recorded on (the pair's are the issues').
    assert_eq!(across[0].source, 0);
    let named =
        |src: &Source, at: Option<latscope_analysis::outcome::EventAt>, input: u32, name: &str, t: Ps| {
            let at = at.expect("an event end names its event");
            assert_eq!(at.source, input);
            let ev = src.events.get(at.index as usize).unwrap();
            assert_eq!(src.strings.resolve(ev.name()), name);
            assert_eq!(abs(src, ev.ts()), abs(&issues, t));
        };
    for s in &across[0].samples {
        named(&issues, s.start_event, 0, "block_rq_issue", s.start);
        named(&completions, s.end_event, 1, "block_rq_complete", s.end);
    }
    std::fs::remove_dir_all(&dir).ok();
}

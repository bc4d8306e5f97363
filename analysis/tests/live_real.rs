#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Live analyses on real captures replayed as they would arrive: the events of a file fed
//! to a builder one at a time, and its digital tracks' changes likewise, cut into
//! snapshots at times that fall inside bursts and pairs. At every snapshot, what
//! [`LiveAnalyses::update`] gives (reading only what is new) must equal what the whole
//! runner gives on that snapshot, and at the end what it gives on the file as opened.
//! [`LiveAnalyses::stand`] and [`LiveAnalyses::glance`], followed over the same snapshots,
//! must give the statistics that sorting all the whole runner's samples gives.

mod common;

use common::{corpus, sample};
use latscope_analysis::live::{Glance, LiveAnalyses};
use latscope_analysis::runner::run_spec;
use latscope_analysis::spec::{Spec, parse_spec};
use latscope_analysis::stats::{StatsOptions, summarize};
use latscope_model::{
    DigitalTrack, EventTableBuilder, FieldKind, FieldValue, Placed, Ps, Source, SourceKind, Sym,
};

/// Replays `src` in time order: each call to `upto` appends the events and changes
/// before `t`, as the simulator's accumulator does, and returns the snapshot.
struct Replay<'a> {
    src: &'a Source,
    b: EventTableBuilder,
    /// Symbols of `src` -> the replay's, interned as they first arrive.
    syms: Vec<Option<Sym>>,
    events: usize,
    tracks: Vec<DigitalTrack>,
    changes: Vec<usize>,
}

impl<'a> Replay<'a> {
    fn new(src: &'a Source) -> Self {
        let tracks = src.digital.iter().map(|d| DigitalTrack::new(d.name.clone(), d.initial)).collect();
        Replay {
            src,
            b: EventTableBuilder::new(),
            syms: vec![None; src.strings.len()],
            events: 0,
            tracks,
            changes: vec![0; src.digital.len()],
        }
    }

    fn sym(&mut self, s: Sym) -> Sym {
        if let Some(mine) = self.syms[s.0 as usize] {
            return mine;
        }
        let mine = self.b.intern(self.src.strings.bytes_of(s));
        self.syms[s.0 as usize] = Some(mine);
        mine
    }

    fn upto(&mut self, t: Ps) -> Source {
        let src = self.src;
        while self.events < src.events.len() && src.events.ts[self.events] < t {
            let ev = src.events.get(self.events).unwrap();
            let name = self.sym(ev.name());
            let comm = self.sym(ev.comm());
            let mut kinds: Vec<(Sym, FieldKind)> = Vec::new();
            let mut values: Vec<FieldValue> = Vec::new();
            for (n, v) in ev.fields() {
                let v = match v {
                    FieldValue::Str(s) => FieldValue::Str(self.sym(s)),
                    other => other,
                };
                kinds.push((self.sym(n), v.kind()));
                values.push(v);
            }
            let layout = self.b.layout(name, &kinds);
            self.b.push(ev.ts(), ev.cpu(), ev.pid(), comm, ev.flags(), layout, &values);
            self.events += 1;
        }
        for (k, d) in src.digital.iter().enumerate() {
            while self.changes[k] < d.transitions() && d.time(self.changes[k]) < t {
                self.tracks[k].push(d.time(self.changes[k]), d.level(self.changes[k]));
                self.changes[k] += 1;
            }
            self.tracks[k].end = t.min(d.end);
        }
        let mut snap = Source::new(&src.name, &src.format, SourceKind::File);
        snap.origin = src.origin;
        snap.events = self.b.table().clone();
        snap.strings = self.b.interner.clone();
        snap.digital = self.tracks.clone().into();
        snap
    }
}

/// `cuts` snapshot times over the source's span: evenly spread, each moved to fall just
/// after an event or a change so that bursts are split.
fn cut_times(src: &Source, cuts: usize) -> Vec<Ps> {
    let mut times: Vec<Ps> = src.events.ts.to_vec();
    for d in src.digital.iter() {
        times.extend(d.times());
    }
    times.sort_unstable();
    let Some(&last) = times.last() else { return Vec::new() };
    let mut out: Vec<Ps> = (1..cuts).map(|k| times[k * (times.len() - 1) / cuts] + 1).collect();
    out.push(last + 1);
    out.dedup();
    out
}

/// Replays `src` in `cuts` snapshots and checks every spec at each (module doc).
fn live_equals_whole(src: &Source, specs: &[&str], cuts: usize) {
    let specs: Vec<Spec> = specs.iter().map(|s| parse_spec(s).unwrap()).collect();
    let mut live = LiveAnalyses::new(specs.clone());
    let mut standing = Standings::new(&specs);
    let mut glances = Glances::new(&specs);
    let mut replay = Replay::new(src);
    let mut pairs_seen = vec![0usize; specs.len()];
    for (k, t) in cut_times(src, cuts).into_iter().enumerate() {
        let snap = replay.upto(t);
        standing.check(&snap, &format!("snapshot {k}"));
        glances.check(&snap, &format!("snapshot {k}"));
        let got = live.update(&snap);
        for ((spec, got), seen) in specs.iter().zip(got).zip(&mut pairs_seen) {
            let want = run_spec(spec, &[Placed::unaligned(&snap)]);
            assert_eq!(
                got,
                want,
                "{} at snapshot {k} (t = {t} ps, {} events)",
                spec.name(),
                snap.events.len()
            );
            *seen = got.map_or(0, |o| o.iter().map(|o| o.samples.len()).sum());
        }
    }
    // The last snapshot holds the whole file: the answer on the file as opened.
    let whole = replay.upto(Ps::MAX);
    standing.check(&whole, "the whole file");
    glances.check(&whole, "the whole file");
    let got = live.update(&whole);
    for ((spec, got), seen) in specs.iter().zip(got).zip(&pairs_seen) {
        assert_eq!(got, run_spec(spec, &[Placed::unaligned(src)]), "{} on the whole file", spec.name());
        assert!(*seen > 0, "{} found nothing in {}: the check would prove nothing", spec.name(), src.name);
    }
    // A shorter source does not extend what was read: it is read anew, not mixed in.
    let early = Replay::new(src).upto(cut_times(src, cuts)[cuts / 3]);
    for (spec, got) in specs.iter().zip(live.update(&early)) {
        assert_eq!(got, run_spec(spec, &[Placed::unaligned(&early)]), "{} read anew", spec.name());
    }
    standing.check(&early, "a shorter source");
    glances.check(&early, "a shorter source");
}

/// [`LiveAnalyses::glance`] followed over the same snapshots: at each, a spec that grows
/// gives the whole runner's outcome but for its samples, which are a few of the whole
/// runner's in start order with the worst among them; its summary is what `summarize`
/// gives on all of them (means and stddevs to rounding, since they are summed as the
/// samples arrived); every CDF point lies on its samples' CDF.
struct Glances {
    specs: Vec<Spec>,
    live: LiveAnalyses,
}

/// Samples a glance keeps: few, so the spread is a choice.
const GLANCE_KEEP: usize = 40;

impl Glances {
    fn new(specs: &[Spec]) -> Self {
        Glances { specs: specs.to_vec(), live: LiveAnalyses::new(specs.to_vec()) }
    }

    fn check(&mut self, snap: &Source, at: &str) {
        let opts = StatsOptions { linear_buckets: 40, ..StatsOptions::default() };
        for (spec, got) in self.specs.iter().zip(self.live.glance(snap, opts, GLANCE_KEEP, 100)) {
            let want = run_spec(spec, &[Placed::unaligned(snap)]);
            let (got, want) = match (got, want) {
                (Ok(g), Ok(w)) => (g, w),
                (Err(g), Err(w)) => {
                    assert_eq!(g, w, "{} at {at}", spec.name());
                    continue;
                }
                (g, w) => panic!("{} at {at}: glanced {g:?}, the whole runner {w:?}", spec.name()),
            };
            let g = match got {
                Glance::Whole(outcomes) => {
                    assert_eq!(outcomes, want, "{} at {at}", spec.name());
                    continue;
                }
                Glance::Grown(g) => g,
            };
            let [w] = &want[..] else { panic!("{} at {at}: {} outcomes", spec.name(), want.len()) };
            let name = &w.name;
            let mut bare = g.outcome.clone();
            bare.samples = w.samples.clone();
            assert_eq!(&bare, w, "{name} at {at}: all but the samples");
            let kept = &g.outcome.samples;
            assert!(kept.len() <= GLANCE_KEEP + 10 && kept.len() <= w.samples.len(), "{name} at {at}");
            let mut from = 0;
            for k in kept {
                let i = w.samples[from..].iter().position(|s| s == k);
                from += i.unwrap_or_else(|| panic!("{name} at {at}: {k:?} is not a sample, in order")) + 1;
            }
            let s = summarize(w, &opts).unwrap();
            let strip = |x: &latscope_analysis::stats::StatsNs| latscope_analysis::stats::StatsNs {
                mean: None,
                stddev: None,
                ..*x
            };
            let close = |a: Option<f64>, b: Option<f64>| match (a, b) {
                (Some(a), Some(b)) => (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0),
                (a, b) => a == b,
            };
            let got = &g.summary;
            assert_eq!(strip(&got.stats_ns), strip(&s.stats_ns), "{name} at {at}");
            assert!(close(got.stats_ns.mean, s.stats_ns.mean), "{name} at {at}: mean");
            assert!(close(got.stats_ns.stddev, s.stats_ns.stddev), "{name} at {at}: stddev");
            assert_eq!(
                (got.count, &got.histogram_log, &got.histogram_linear, got.groups_total, &got.worst),
                (s.count, &s.histogram_log, &s.histogram_linear, s.groups_total, &s.worst),
                "{name} at {at}"
            );
            assert_eq!(got.groups.len(), s.groups.len(), "{name} at {at}");
            for (a, b) in got.groups.iter().zip(&s.groups) {
                assert_eq!((&a.key, &a.key_raw, a.count), (&b.key, &b.key_raw, b.count), "{name} at {at}");
                assert_eq!(strip(&a.stats_ns), strip(&b.stats_ns), "{name} at {at}: {}", a.key);
                assert!(close(a.stats_ns.mean, b.stats_ns.mean), "{name} at {at}: {} mean", a.key);
            }
            for wst in &s.worst {
                assert!(kept.contains(wst), "{name} at {at}: worst {wst:?} not kept");
            }
            let mut lat: Vec<Ps> = w.samples.iter().map(|s| s.latency()).collect();
            lat.sort_unstable();
            for &[x, y] in &g.cdf {
                let below = lat.partition_point(|&l| (l as f64 / 1e3) <= x);
                assert_eq!(y, below as f64 / lat.len() as f64, "{name} at {at}: CDF at {x} ns");
            }
            assert_eq!(g.cdf.last().map(|p| p[1]), (!lat.is_empty()).then_some(1.0), "{name} at {at}");
        }
    }
}

/// [`LiveAnalyses::stand`] followed over the same snapshots: at each, every outcome's
/// count and statistics are what sorting all its samples gives (`summarize` of the whole
/// runner's outcome), and the samples added since the last start again, with the one
/// still open (a polling run going on), are the whole runner's, by their times. A sample
/// is added once: none added is open or added before.
struct Standings {
    specs: Vec<Spec>,
    live: LiveAnalyses,
    /// Per spec and outcome: (start, end) of the samples added so far.
    added: Vec<Vec<Vec<(Ps, Ps)>>>,
}

impl Standings {
    fn new(specs: &[Spec]) -> Self {
        Standings {
            specs: specs.to_vec(),
            live: LiveAnalyses::new(specs.to_vec()),
            added: vec![Vec::new(); specs.len()],
        }
    }

    fn check(&mut self, snap: &Source, at: &str) {
        let opts = StatsOptions { worst: 1, linear_buckets: 1, max_groups: 0 };
        for ((spec, got), added) in self.specs.iter().zip(self.live.stand(snap)).zip(&mut self.added) {
            let want = run_spec(spec, &[Placed::unaligned(snap)]);
            let (got, want) = match (got, want) {
                (Ok(g), Ok(w)) => (g, w),
                (Err(g), Err(w)) => {
                    assert_eq!(g, w, "{} at {at}", spec.name());
                    continue;
                }
                (g, w) => panic!("{} at {at}: stood {g:?}, the whole runner {w:?}", spec.name()),
            };
            assert_eq!(got.len(), want.len(), "{} at {at}", spec.name());
            added.resize(got.len(), Vec::new());
            for ((g, w), so_far) in got.iter().zip(&want).zip(added.iter_mut()) {
                let s = summarize(w, &opts).unwrap();
                let name = &w.name;
                assert_eq!(g.name, *name);
                assert_eq!(g.count, s.count, "{name} at {at}");
                assert_eq!(
                    (g.p50_ns, g.p99_ns, g.max_ns),
                    (s.stats_ns.p50, s.stats_ns.p99, s.stats_ns.max),
                    "{name} at {at}"
                );
                if g.anew {
                    so_far.clear();
                }
                so_far.extend(g.added.iter().map(|s| (s.start, s.end)));
                assert!(g.open.len() <= 1, "{name} at {at}: {:?}", g.open);
                let mut mine = so_far.clone();
                mine.extend(g.open.iter().map(|s| (s.start, s.end)));
                mine.sort_unstable();
                let mut theirs: Vec<(Ps, Ps)> = w.samples.iter().map(|s| (s.start, s.end)).collect();
                theirs.sort_unstable();
                assert_eq!(mine, theirs, "{name} at {at}: the samples added");
            }
        }
    }
}

#[test]
fn kernel_rules_on_a_real_trace_equal_the_whole_runner_at_every_snapshot() {
    let src = sample("ftrace/timer_wakeups_under_load.txt");
    live_equals_whole(
        &src,
        &[
            // Task ids in keys are shown with their names, which a live trace learns late.
            "wake=sched_wakeup -> sched_switch by pid:next_pid policy first",
            "wake-within=sched_wakeup -> sched_switch by pid:next_pid within 200us",
            "oncpu=sched_switch -> sched_switch by cpu",
            "switch-out=sched_switch[prev_state=S] -> sched_switch by prev_pid:next_pid policy lifo",
            "timer=hrtimer_expire_entry -> hrtimer_expire_exit by cpu policy lifo",
            // A preset that grows as pair rules do.
            "wakeup",
            // Detectors over events: the median gap moves as the trace grows.
            "stall:sched_switch factor 4",
            "stall:hrtimer_expire_entry[cpu=0] factor 1.5",
            // Polling runs: a run is open at most snapshots, ended by a later occurrence or
            // by the trace reaching past its spacing.
            "poll:sched_switch within 50us min 3",
            "poll:hrtimer_expire_entry[cpu=0] within 5ms",
        ],
        37,
    );
}

#[test]
fn block_and_marker_rules_on_a_real_trace_equal_the_whole_runner_at_every_snapshot() {
    let src = sample("ftrace/markers_around_requests.txt");
    live_equals_whole(
        &src,
        &[
            // Devices are shown as MAJ,MIN and stored as numbers (raw keys).
            "req=block_rq_issue -> block_rq_complete by dev,sector",
            "marker=tracing_mark_write -> block_rq_issue policy next",
            "block",
        ],
        53,
    );
}

/// systing records `sched_waking` but no `sched_wakeup`: `wakeup` pairs from it, noted.
#[test]
fn presets_on_a_real_perfetto_trace_equal_the_whole_runner_at_every_snapshot() {
    let src = common::open(&corpus("perfetto/systing_compact_sched_irq.pb"));
    let specs = ["wakeup", "irq-handler", "softirq", "block"];
    let live = LiveAnalyses::new(specs.iter().map(|s| parse_spec(s).unwrap()).collect());
    assert_eq!(live.incremental(), specs.map(|s| (s, true)), "each reads only what is new");
    live_equals_whole(&src, &specs[..3], 31);
}

#[test]
fn edge_rules_on_a_real_logic_capture_equal_the_whole_runner_at_every_snapshot() {
    let src = common::open(&corpus("sigrok/lazysig_spi_24mhz.sr"));
    // The two busiest channels (the clock and chip select of an SPI bus).
    let mut busiest: Vec<&latscope_model::DigitalTrack> = src.digital.iter().collect();
    busiest.sort_by_key(|d| std::cmp::Reverse(d.transitions()));
    assert!(busiest.len() >= 2 && busiest[1].transitions() > 10, "{}", src.name);
    let (a, b) = (busiest[0].name.as_str(), busiest[1].name.as_str());
    // Phases longer than the second-longest width (the widths are whole sample periods,
    // few distinct): some, not all.
    let longer_than = |spec: &str| -> Ps {
        let o = run_spec(&parse_spec(spec).unwrap(), &[Placed::unaligned(&src)]).unwrap().remove(0);
        let widths: std::collections::BTreeSet<Ps> = o.samples.iter().map(|s| s.latency()).collect();
        *widths.iter().rev().nth(1).unwrap()
    };
    let (a_over, b_over) = (longer_than(&format!("pulse:{a}")), longer_than(&format!("pulse:{b}:low")));
    let specs = [
        format!("a-high={a}:rise -> {a}:fall"),
        format!("a-period={a}:rise -> {a}:rise"),
        format!("a-to-b={a}:fall -> {b}:any policy next"),
        format!("b-any={b}:any -> {b}:any within 1us"),
        format!("stall:{a}:rise factor 3"),
        format!("pulse:{a}"),
        format!("pulse:{b}:low"),
        format!("long:{a} over {a_over}ps"),
        format!("long:{b}:low over {b_over}ps"),
        // The clock's bursts (a word's eight edges), and CS's toggles as runs too.
        format!("poll:{a}:rise within 1us min 4"),
        format!("poll:{b}:any within 1ms"),
    ];
    let specs: Vec<&str> = specs.iter().map(String::as_str).collect();
    // A digital channel's pulses, its long phases and its stalls read what is new, as the
    // pair rules do.
    let parsed: Vec<Spec> = specs.iter().map(|s| parse_spec(s).unwrap()).collect();
    let live = LiveAnalyses::new(parsed.clone());
    let grows: Vec<bool> = live.incremental().into_iter().map(|(_, g)| g).collect();
    assert_eq!(grows, [true; 11], "{:?}", live.incremental());
    // The long phases are some of the pulses, each a window.
    for (spec, pulses) in parsed[7..].iter().zip(&parsed[5..7]) {
        let run = |s: &Spec| run_spec(s, &[Placed::unaligned(&src)]).unwrap().remove(0);
        let (long, all) = (run(spec), run(pulses));
        assert!(!long.samples.is_empty() && long.samples.len() < all.samples.len(), "{}", spec.name());
        assert_eq!(long.windows.len(), long.samples.len(), "{}", spec.name());
    }
    live_equals_whole(&src, &specs, 29);
}

/// A rule across two real sources that grow side by side (a kernel trace and a logic
/// capture placed over it), read by [`AcrossStanding`] at each snapshot with the common
/// time both are complete to: every sample it hands on is one of the whole runner's over
/// the two files, and once both have arrived its samples and statistics are the whole
/// runner's.
#[test]
fn rules_across_a_kernel_trace_and_a_logic_capture_growing_side_by_side_equal_the_whole_runner() {
    use latscope_analysis::live::AcrossStanding;
    use latscope_model::Placement;
    let kernel = sample("ftrace/markers_around_requests.txt");
    let logic = common::open(&corpus("sigrok/lazysig_spi_24mhz.sr"));
    let mut busiest: Vec<&DigitalTrack> = logic.digital.iter().collect();
    busiest.sort_by_key(|d| std::cmp::Reverse(d.transitions()));
    let ch = busiest[0].name.clone();
    // The 0.5 s capture from 0.1 s before the 0.2 s trace's first event.
    let at = kernel.events.ts[0] - 100_000_000_000;
    let placements = [Placement::IDENTITY, Placement::new(at, 0.0)];
    let rules = [
        format!("m=tracing_mark_write -> {ch}:rise"),
        format!("r={ch}:fall -> block_rq_issue policy next"),
        format!("w=block_rq_issue -> {ch}:any within 2ms"),
        // A cmd-irq with both ends given is its pair rule: a channel's edge to IRQ 36.
        format!("cmd-irq:cmd={ch}:fall,irq=36"),
        format!("cmd-irq:cmd=block_rq_issue,irq={ch}:rise"),
    ];
    let whole_sources = [Placed::new(&kernel, placements[0]), Placed::new(&logic, placements[1])];
    for text in &rules {
        let (spec, rule) = match text.strip_prefix("cmd-irq") {
            Some(_) => {
                let spec = latscope_analysis::spec::preset_spec(text).unwrap();
                let Spec::Preset(latscope_analysis::spec::Preset::CmdIrq { name, opts }) = &spec else {
                    panic!("{text} is cmd-irq")
                };
                let rule = latscope_analysis::presets::cmd_irq_rule(name, opts).expect("both ends given");
                (spec, rule)
            }
            None => {
                let Spec::Pair(rule) = parse_spec(text).unwrap() else { panic!("{text} is a pair rule") };
                (Spec::Pair(rule.clone()), rule)
            }
        };
        let whole = run_spec(&spec, &whole_sources).unwrap();
        assert_eq!(whole.len(), 1, "{text}: one outcome across the two");
        let whole = &whole[0];
        assert!(whole.samples.len() > 5, "{text}: a test of something: {}", whole.samples.len());
        let (mut kr, mut lr) = (Replay::new(&kernel), Replay::new(&logic));
        let mut live = AcrossStanding::new(rule);
        let mut got: Vec<latscope_analysis::outcome::Sample> = Vec::new();
        let end =
            (kernel.events.ts[kernel.events.len() - 1]).max(placements[1].to_common(logic.digital[0].end));
        let cuts: Vec<Ps> = (1..=40).map(|k| at + (end - at) * k / 40).chain([end + 1]).collect();
        for (n, &t) in cuts.iter().enumerate() {
            // Each source arrives up to its own time: the logic runs 3 ms ahead.
            let (ks, ls) = (kr.upto(t), lr.upto(placements[1].from_common(t + 3_000_000_000)));
            let last = n + 1 == cuts.len();
            let complete = if last {
                Ps::MAX
            } else {
                ks.events
                    .ts
                    .last()
                    .copied()
                    .unwrap_or(Ps::MIN)
                    .min(placements[1].to_common(ls.digital[0].end))
            };
            let sources = [Placed::new(&ks, placements[0]), Placed::new(&ls, placements[1])];
            let Ok(standing) = live.stand(&sources, complete) else { continue };
            for s in &standing.added {
                assert!(whole.samples.iter().any(|w| (w.start, w.end) == (s.start, s.end)), "{text}: {s:?}");
            }
            got.extend(standing.added);
            assert_eq!(standing.count, got.len() as u64, "{text}");
            if last {
                let sum = summarize(whole, &StatsOptions::default()).unwrap();
                assert_eq!(standing.count, sum.count, "{text}");
                assert_eq!(
                    (standing.p50_ns, standing.p99_ns, standing.max_ns),
                    (sum.stats_ns.p50, sum.stats_ns.p99, sum.stats_ns.max),
                    "{text}"
                );
            }
        }
        got.sort_by_key(|s| (s.start, s.end));
        let times =
            |v: &[latscope_analysis::outcome::Sample]| v.iter().map(|s| (s.start, s.end)).collect::<Vec<_>>();
        assert_eq!(times(&got), times(&whole.samples), "{text}");
    }
}

/// `cmd-irq` left to choose its IRQ (`cmd=SDA:fall`) over a kernel trace and a logic
/// capture growing side by side, read by [`CmdIrqStanding`]: the number chosen is counted
/// as they arrive, and once both have arrived the samples and statistics are the whole
/// runner's across the two files. Every sample handed on since the last start (the choice
/// changed) is one of the whole runner's for the number chosen then.
#[test]
fn cmd_irq_choosing_its_irq_over_a_kernel_trace_and_a_logic_capture_growing_side_by_side_equals_the_whole_runner()
 {
    use latscope_analysis::live::CmdIrqStanding;
    use latscope_analysis::spec::{Preset, preset_spec};
    use latscope_model::Placement;
    let kernel = sample("ftrace/markers_around_requests.txt");
    let logic = common::open(&corpus("sigrok/i2c_dds120_scl_analog.sr"));
    // The 0.75 s capture from 0.1 s before the 0.2 s trace's first event.
    let at = kernel.events.ts[0] - 100_000_000_000;
    let placements = [Placement::IDENTITY, Placement::new(at, 0.0)];
    let spec = preset_spec("cmd-irq:cmd=SDA:fall").unwrap();
    let Spec::Preset(Preset::CmdIrq { name, opts }) = &spec else { panic!("cmd-irq") };
    let whole_sources = [Placed::new(&kernel, placements[0]), Placed::new(&logic, placements[1])];
    let whole = run_spec(&spec, &whole_sources).unwrap().remove(0);
    assert!(whole.samples.len() > 200, "a test of something: {}", whole.samples.len());
    let chosen =
        whole.notes.iter().find(|n| n.what.starts_with("irq ")).expect("the IRQ chosen").what.clone();
    let (mut kr, mut lr) = (Replay::new(&kernel), Replay::new(&logic));
    let mut live = CmdIrqStanding::new(name, opts).expect("the command given, the IRQ left to choose");
    let mut got: Vec<latscope_analysis::outcome::Sample> = Vec::new();
    let end = (kernel.events.ts[kernel.events.len() - 1]).max(placements[1].to_common(logic.digital[0].end));
    let cuts: Vec<Ps> = (1..=40).map(|k| at + (end - at) * k / 40).chain([end + 1]).collect();
    let mut starts = 0;
    for (n, &t) in cuts.iter().enumerate() {
        // Each source arrives up to its own time: the logic runs 3 ms ahead.
        let (ks, ls) = (kr.upto(t), lr.upto(placements[1].from_common(t + 3_000_000_000)));
        let complete = if n + 1 == cuts.len() {
            Ps::MAX
        } else {
            ks.events.ts.last().copied().unwrap_or(Ps::MIN).min(placements[1].to_common(ls.digital[0].end))
        };
        let sources = [Placed::new(&ks, placements[0]), Placed::new(&ls, placements[1])];
        let standing = live.stand(&sources, complete).unwrap();
        if standing.anew {
            got.clear();
            starts += 1;
        }
        got.extend(standing.added);
        if n + 1 == cuts.len() {
            let s = latscope_analysis::stats::summarize(&whole, &StatsOptions::default()).unwrap();
            assert_eq!(standing.count, whole.samples.len() as u64);
            assert_eq!(
                (standing.p50_ns, standing.p99_ns, standing.max_ns),
                (s.stats_ns.p50, s.stats_ns.p99, s.stats_ns.max)
            );
        }
    }
    got.sort_by_key(|s| (s.start, s.end));
    let times =
        |v: &[latscope_analysis::outcome::Sample]| v.iter().map(|s| (s.start, s.end)).collect::<Vec<_>>();
    assert_eq!(times(&got), times(&whole.samples), "{chosen}");
    assert!(starts >= 1, "{starts}");
}

#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The workbench driven headless through egui_kittest: real sample files, real workers.

mod workbench_harness;
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT as _, Queryable as _};
use latscope::gui::analysis::{PlotKind, samples_in_latency, scatter_point};
use latscope::gui::message::{
    AlignMsg, AnalysisMsg, DeriveMsg, FileMsg, Message, ShellMsg, SimMsg, TableMsg, ViewMsg,
};
use latscope::gui::picker::NoPicker;
use latscope::gui::prepare::{LaneClass, LaneKind};
use latscope::gui::sim::{SimCommand, SimEdit};
use latscope::gui::view::LaneId;
use latscope::gui::{Options, Workbench};
use std::path::PathBuf;
use std::time::Duration;
use workbench_harness::{click_at, set_rules, source_id, take_errors, wait};

fn sample(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join("samples").join(rel)
}

fn harness(options: Options) -> Harness<'static, Workbench> {
    workbench_harness::harness(
        Workbench::new(options, Box::new(NoPicker), Vec::new()),
        egui::vec2(1400.0, 900.0),
    )
}

fn open(files: &[&str]) -> Harness<'static, Workbench> {
    let mut h = harness(Options { files: files.iter().map(|f| sample(f)).collect(), ..Options::default() });
    let n = files.len();
    // Loaded, and the presets chosen on open have answered (their panel is in place).
    wait(&mut h, "loading", |wb| wb.doc.sources.len() == n && wb.loads().is_empty() && wb.settled());
    h.step();
    h.step();
    h
}

#[test]
fn ftrace_sample_loads_with_its_tracks_in_the_track_list() {
    let h = open(&["ftrace/virtio_blk_direct_read.txt"]);
    let wb = h.state();
    assert!(wb.errors.is_empty(), "{:?}", wb.errors);
    let sv = wb.view.shown(&wb.doc)[0];
    let src = sv.source();
    // Every event track `info` lists is a lane, and one lane per CPU that has events.
    let names: Vec<&str> = sv.lanes.iter().map(|l| l.name.as_str()).collect();
    for t in src.tracks() {
        assert!(names.contains(&t.name.as_str()), "track {} missing from {names:?}", t.name);
    }
    let mut cpus: Vec<u16> = src.events.cpu.to_vec();
    cpus.sort_unstable();
    cpus.dedup();
    for c in &cpus {
        assert!(names.contains(&format!("CPU {c}").as_str()), "CPU {c} lane missing");
    }
    // The per-CPU lanes hold every event exactly once, and sched_switch gives task slices.
    let mut total = 0;
    let mut slices = 0;
    for l in &sv.prepared.lanes {
        if let LaneKind::Cpu(c) = &l.kind {
            total += c.events.len();
            slices += c.tasks.len();
            assert!(c.events.iter().all(|&i| src.events.cpu[i as usize] == c.cpu));
        }
    }
    assert_eq!(total, src.events.len());
    assert!(slices > 0, "sched_switch present but no task slices");
    // The track list shows the lanes by name.
    let _ = h.get_by_label("irq_handler_entry");
    let _ = h.get_by_label("CPU 0");
}

#[test]
fn sources_join_in_the_order_their_files_were_given_whatever_loads_first() {
    // The big text trace takes longest to load; the small captures finish before it.
    let files = ["ftrace/timer_wakeups_under_load.txt", "sigrok/demo_4ch_1mhz.sr", "ftrace/blk_read.txt"];
    let h = open(&files);
    let names: Vec<&str> =
        h.state().view.shown(&h.state().doc).iter().map(|s| s.source().name.as_str()).collect();
    assert_eq!(names, ["timer_wakeups_under_load.txt", "demo_4ch_1mhz.sr", "blk_read.txt"]);
}

#[test]
fn sigrok_captures_load_as_digital_and_analog_lanes() {
    let h = open(&["sigrok/demo_4ch_1mhz.sr", "sigrok/mixed_100khz_2logic_1analog.sr"]);
    let wb = h.state();
    assert!(wb.errors.is_empty(), "{:?}", wb.errors);
    for sv in wb.view.shown(&wb.doc) {
        let src = sv.source();
        let digital = sv.prepared.lanes.iter().filter(|l| matches!(l.kind, LaneKind::Digital { .. })).count();
        let analog = sv.prepared.lanes.iter().filter(|l| matches!(l.kind, LaneKind::Analog { .. })).count();
        assert_eq!(digital, src.digital.len());
        assert_eq!(analog, src.analog.len());
        assert!(digital > 0);
        for d in &src.digital {
            assert!(h.query_all_by_label(&d.name).count() >= 1, "{} not in the track list", d.name);
        }
    }
    let mixed = wb.view.shown(&wb.doc).into_iter().find(|s| s.source().name.starts_with("mixed")).unwrap();
    assert_eq!(mixed.source().analog.len(), 1);
}

#[test]
fn keys_zoom_pan_and_fit_the_viewport() {
    let mut h = open(&["ftrace/virtio_blk_direct_read.txt"]);
    h.key_press(egui::Key::F);
    h.step();
    let fit = h.state().view.viewport;
    let width = f64::from(h.state().frame.layout.data_width);
    let (lo, hi) = h.state().time_range().unwrap();
    assert!(fit.start <= lo && fit.start + fit.ps_per_px * width >= hi, "fit shows everything");
    let centre = fit.start + fit.ps_per_px * width / 2.0;

    h.key_press(egui::Key::W);
    h.step();
    let z = h.state().view.viewport;
    assert!((z.ps_per_px / fit.ps_per_px - 0.5).abs() < 1e-9, "W halves the time per pixel");
    let z_centre = z.start + z.ps_per_px * width / 2.0;
    assert!((z_centre - centre).abs() < fit.ps_per_px, "zoom keeps the centre");

    h.key_press(egui::Key::D);
    h.step();
    let d = h.state().view.viewport;
    assert!((d.start - z.start - 0.2 * z.ps_per_px * width).abs() < 1.0, "D pans a fifth right");
    h.key_press(egui::Key::A);
    h.step();
    assert!((h.state().view.viewport.start - z.start).abs() < 1.0, "A pans back");

    h.key_press(egui::Key::S);
    h.step();
    assert!((h.state().view.viewport.ps_per_px / fit.ps_per_px - 1.0).abs() < 1e-9, "S undoes W");
}

#[test]
fn wheel_zooms_around_the_pointer() {
    let mut h = open(&["ftrace/virtio_blk_direct_read.txt"]);
    let before = h.state().view.viewport;
    let left = h.state().frame.layout.data_left;
    let x = left + 300.0;
    let t_under = before.t_of(left, x);
    h.hover_at(egui::pos2(x, 300.0));
    h.step();
    h.event(egui::Event::MouseWheel {
        unit: egui::MouseWheelUnit::Point,
        delta: egui::vec2(0.0, 120.0),
        phase: egui::TouchPhase::Move,
        modifiers: egui::Modifiers::NONE,
        source: egui::MouseWheelSource::Wheel,
    });
    for _ in 0..10 {
        h.step();
    }
    let after = h.state().view.viewport;
    assert!(after.ps_per_px < before.ps_per_px, "wheel up zooms in");
    let t_after = after.t_of(left, x);
    assert!((t_after - t_under).abs() < 2.0 * before.ps_per_px, "the time under the pointer stays put");
}

#[test]
fn next_event_on_the_focused_lane_moves_cursor_a_event_by_event() {
    let mut h = open(&["ftrace/virtio_blk_direct_read.txt"]);
    let (si, li, first, second) = {
        let sv = h.state().view.shown(&h.state().doc)[0];
        let li = sv.lanes.iter().position(|l| l.name == "irq_handler_entry").unwrap();
        let LaneKind::Events(ev) = &sv.data_lane(li).unwrap().kind else { panic!("events lane") };
        let ts = &sv.source().events.ts;
        (sv.id, li, sv.to_common(ts[ev.events[0] as usize]), sv.to_common(ts[ev.events[1] as usize]))
    };
    h.state_mut()
        .update(Message::View(ViewMsg::FocusLane(latscope::gui::view::LaneId { source: si, lane: li })));
    h.state_mut().update(Message::View(ViewMsg::SetCursor(latscope::gui::view::CursorId::A, first - 1.0)));
    h.key_press(egui::Key::N);
    h.step();
    assert_eq!(h.state().view.overlay.cursor_a, Some(first));
    h.key_press(egui::Key::N);
    h.step();
    assert_eq!(h.state().view.overlay.cursor_a, Some(second));
    h.key_press_modifiers(egui::Modifiers::SHIFT, egui::Key::N);
    h.step();
    assert_eq!(h.state().view.overlay.cursor_a, Some(first));
}

#[test]
fn cancel_stops_a_load_and_leaves_nothing_behind() {
    let mut h = harness(Options::default());
    h.state_mut().update(Message::Files(FileMsg::Open(vec![sample("ftrace/timer_wakeups_under_load.txt")])));
    let job = h.state().loads()[0].ticket;
    assert!(h.state().loads()[0].progress() < 1.0);
    h.state_mut().update(Message::Files(FileMsg::CancelJob(job)));
    assert!(h.state().loads().is_empty());
    // Give the worker time to answer; its answer must be ignored.
    for _ in 0..60 {
        h.step();
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(h.state().doc.sources.is_empty());
    assert!(h.state().errors.is_empty(), "{:?}", h.state().errors);
}

#[test]
fn a_bad_file_is_an_error_in_the_window_naming_the_file() {
    let mut h = harness(Options { files: vec![sample("sigrok/README.md")], ..Options::default() });
    wait(&mut h, "the error", |wb| !wb.errors.is_empty());
    let e = &h.state().errors[0];
    assert!(e.contains("README.md"), "{e}");
    assert!(h.state().doc.sources.is_empty());
}

#[test]
fn palette_lists_every_action_and_filters_them() {
    let mut h = harness(Options::default());
    h.key_press_modifiers(egui::Modifiers::COMMAND | egui::Modifiers::SHIFT, egui::Key::P);
    h.step();
    h.step();
    assert!(h.state().dialogs.palette_open);
    for a in latscope::gui::views::palette::ACTIONS {
        assert!(h.query_all_by_label(a.name).count() >= 1, "{} not listed", a.name);
    }
    assert_eq!(latscope::gui::views::palette::matching("zoom").len(), 2);
    h.key_press(egui::Key::Escape);
    h.step();
    assert!(!h.state().dialogs.palette_open);
}

#[test]
fn table_filter_runs_on_a_worker_and_matches_the_event_counts() {
    let mut h = open(&["ftrace/virtio_blk_direct_read.txt"]);
    let expected = h.state().view.shown(&h.state().doc)[0]
        .source()
        .tracks()
        .iter()
        .find(|t| t.name == "block_rq_issue")
        .map(|t| t.count as usize)
        .unwrap();
    h.state_mut().update(Message::Table(TableMsg::SetFilter("block_rq_issue".into())));
    wait(&mut h, "the filter", |wb| !wb.table_pending());
    let wb = h.state();
    let src = wb.view.shown(&wb.doc)[0].source();
    assert_eq!(wb.table.rows.rows.len(), expected);
    assert!(
        wb.table
            .rows
            .rows
            .iter()
            .all(
                |r| src.strings.resolve(src.events.get(r.index as usize).unwrap().name()) == "block_rq_issue"
            )
    );
    // Search steps through the matches in time order.
    h.state_mut().update(Message::Table(TableMsg::SearchStep(true)));
    let first = h.state().view.overlay.selected.unwrap().index;
    h.state_mut().update(Message::Table(TableMsg::SearchStep(true)));
    let second = h.state().view.overlay.selected.unwrap().index;
    assert_eq!(first, h.state().table.rows.rows[0].index as usize);
    assert_eq!(second, h.state().table.rows.rows[1].index as usize);
}

#[test]
fn analysis_pairs_every_irq_handler_entry() {
    let mut h = open(&["ftrace/virtio_blk_direct_read.txt"]);
    set_rules(&mut h, &["irq-handler"]);
    h.state_mut().update(Message::Analysis(AnalysisMsg::Run));
    wait(&mut h, "the analysis", |wb| !wb.analysis_running());
    let wb = h.state();
    assert!(wb.errors.is_empty(), "{:?}", wb.errors);
    let r = &wb.analysis.results[0];
    let entries = wb.view.shown(&wb.doc)[0]
        .source()
        .tracks()
        .iter()
        .find(|t| t.name == "irq_handler_entry")
        .unwrap()
        .count;
    assert_eq!(r.outcome.samples.len() as u64 + r.outcome.unmatched_start, entries);
    let summary = r.summary.as_ref().unwrap();
    let s = summary.stats_ns;
    assert!(s.min <= s.p50 && s.p50 <= s.p99 && s.p99 <= s.max);
    let binned: u64 = summary.histogram_linear.iter().map(|b| b.count).sum();
    assert_eq!(binned as usize, r.outcome.samples.len());
    // Jumping to the worst case puts the cursors on it.
    let worst = r.worst[0];
    let sample = r.outcome.samples[worst].clone();
    h.state_mut().update(Message::Analysis(AnalysisMsg::ShowSample { outcome: 0, sample: worst }));
    let o = &h.state().view.overlay;
    assert_eq!(o.cursor_a, Some(sample.start as f64));
    assert_eq!(o.cursor_b, Some(sample.end as f64));
}

#[test]
fn rule_editor_checks_as_you_type_and_runs_the_rules_it_lists() {
    let registry = latscope_engine::Registry::native();
    let validate = |text: &str| latscope::gui::analysis::validate(&registry, text);
    assert!(validate("  ").is_none());
    assert_eq!(validate("block").map(|v| v.ok()), Some(Some("block".to_owned())));
    // The decoders' presets are rules too, as `report --preset` takes them.
    assert_eq!(validate("sd-cmd-resp").map(|v| v.ok()), Some(Some("sd-cmd-resp".to_owned())));
    let err = validate("lat=block_rq_issue block_rq_complete").unwrap().unwrap_err().to_string();
    assert!(err.starts_with("column ") && err.contains("->"), "{err}");

    let mut h = open(&["ftrace/virtio_blk_direct_read.txt"]);
    set_rules(&mut h, &["block", "lat=block_rq_issue -> block_rq_complete by sector", "pulse:NOPE"]);
    h.state_mut().update(Message::Analysis(AnalysisMsg::Run));
    wait(&mut h, "the analysis", |wb| !wb.analysis_running());
    let wb = h.state();
    let issues = wb.view.shown(&wb.doc)[0]
        .source()
        .tracks()
        .iter()
        .find(|t| t.name == "block_rq_issue")
        .unwrap()
        .count;
    let names: Vec<&str> = wb.analysis.results.iter().map(|r| r.outcome.name.as_str()).collect();
    assert_eq!(names, ["block", "lat"]);
    for r in wb.analysis.results.iter() {
        assert_eq!(r.outcome.samples.len() as u64 + r.outcome.unmatched_start, issues, "{}", r.outcome.name);
    }
    // The rule no source can satisfy is reported, not dropped and not fatal.
    assert_eq!(wb.errors.len(), 1, "{:?}", wb.errors);
    assert!(wb.errors[0].contains("pulse:NOPE"), "{:?}", wb.errors);
}

#[test]
fn simulator_demo_runs_live_and_feeds_the_timeline() {
    let mut h = harness(Options::default());
    h.state_mut().update(Message::Sim(SimMsg::Edit(SimEdit::MaxSpeed(true))));
    h.state_mut().update(Message::Sim(SimMsg::Command(SimCommand::Start {
        scenario: "litesdcard".into(),
        sets: vec![],
        duration: Some(30_000_000_000),
    })));
    wait(&mut h, "the simulation", |wb| wb.sim.finished);
    let wb = h.state();
    assert!(wb.sim.snapshots >= 1);
    let sim = wb.sim.source.unwrap();
    let sv = wb.view.shown(&wb.doc).into_iter().find(|s| s.id == sim).unwrap();
    assert_eq!(sv.source().events.len(), wb.sim.events);
    assert!(sv.source().events.len() > 10);
    // The panel's time of a finished run is where its trace ends (a command pulse begun
    // before the clock stopped ends after it), the same end the analysis panel names.
    let end = sv.source().time_range().map(|r| r.1);
    assert_eq!(Some(wb.sim.now), end);
    assert!(sv.source().digital.iter().all(|d| d.end == wb.sim.now));
    assert!(
        sv.lanes.iter().any(|l| l.name == "CMD"),
        "{:?}",
        sv.lanes.iter().map(|l| &l.name).collect::<Vec<_>>()
    );
    // Identical to a batch run of the same scenario: the live view loses nothing.
    let sc = latscope_sim::prepare("litesdcard", &[], None, Some("30ms")).unwrap();
    let batch = latscope_sim::run(sc).unwrap();
    let live_irqs = sv.source().tracks().into_iter().find(|t| t.name == "irq_handler_entry").map(|t| t.count);
    let batch_irqs =
        batch.source.tracks().into_iter().find(|t| t.name == "irq_handler_entry").map(|t| t.count);
    assert_eq!(live_irqs, batch_irqs);
    // The finished run's metrics reach the panel, equal to the batch run's.
    wait(&mut h, "the metrics", |wb| !wb.sim.metrics.is_empty() || wb.sim.error.is_some());
    assert_eq!(h.state().sim.error, None);
    assert_eq!(h.state().sim.metrics, batch.report.metrics.0);
}

fn drawn(wb: &Workbench, result: usize, kind: PlotKind) -> egui_plot::PlotTransform {
    wb.frame
        .plots
        .iter()
        .find(|d| d.result == result && d.kind == kind)
        .unwrap_or_else(|| panic!("{kind:?} of result {result} not drawn"))
        .transform
}

fn run_analysis(h: &mut Harness<'static, Workbench>) {
    h.state_mut().update(Message::Analysis(AnalysisMsg::Run));
    wait(h, "the analysis", |wb| !wb.analysis_running());
    h.step();
}

#[test]
fn cdf_and_scatter_describe_every_pair_and_clicks_jump_to_the_timeline() {
    let mut h = open(&["ftrace/virtio_blk_direct_read.txt"]);
    set_rules(&mut h, &["block"]);
    run_analysis(&mut h);
    let r = h.state().analysis.results[0].clone();
    let n = r.outcome.samples.len();
    assert!(n > 10, "{n} block samples");
    // The CDF runs from the minimum (at the share of samples equal to it) to the maximum at
    // 1.0, one point per distinct latency, rising.
    let mut lat: Vec<f64> = r.outcome.samples.iter().map(|s| s.latency() as f64 / 1e3).collect();
    lat.sort_by(f64::total_cmp);
    let at_min = lat.iter().filter(|&&x| x == lat[0]).count();
    assert_eq!(r.cdf.first(), Some(&[lat[0], at_min as f64 / n as f64]));
    assert_eq!(r.cdf.last(), Some(&[lat[n - 1], 1.0]));
    assert!(r.cdf.windows(2).all(|w| w[0][0] < w[1][0] && w[0][1] < w[1][1]));
    let mut distinct = lat.clone();
    distinct.dedup();
    assert_eq!(r.cdf.len(), distinct.len());
    // Each point is the share of samples at or below it.
    for &[x, y] in &r.cdf {
        let below = lat.iter().filter(|&&l| l <= x).count();
        assert_eq!(y, below as f64 / n as f64, "at {x} ns");
    }
    assert_eq!(r.summary.as_ref().unwrap().stats_ns.min, Some(lat[0]));
    // One scatter point per pair.
    assert_eq!(r.scatter.len(), n);

    // Clicking the worst case's point in the scatter puts the cursors and arrow on that pair.
    set_plot(&mut h, PlotKind::Scatter);
    h.step();
    h.step();
    let t = drawn(h.state(), 0, PlotKind::Scatter);
    let worst = r.worst[0];
    let p = scatter_point(&r.outcome, worst).unwrap();
    click_at(&mut h, t.position_from_point(&egui_plot::PlotPoint::new(p[0], p[1])));
    let s = &r.outcome.samples[worst];
    let o = &h.state().view.overlay;
    assert_eq!((o.cursor_a, o.cursor_b), (Some(s.start as f64), Some(s.end as f64)));
    assert_eq!(o.arrow.map(|a| (a.a, a.b)), Some((s.start as f64, s.end as f64)));

    // Clicking the first histogram bar shows the samples in it on the timeline.
    h.state_mut().update(Message::View(ViewMsg::ClearCursors));
    set_plot(&mut h, PlotKind::Histogram);
    h.step();
    h.step();
    let t = drawn(h.state(), 0, PlotKind::Histogram);
    let bucket = r.summary.as_ref().unwrap().histogram_linear[0];
    assert!(bucket.count > 0);
    let centre = egui_plot::PlotPoint::new((bucket.lo_ns + bucket.hi_ns) / 2.0, 0.5);
    click_at(&mut h, t.position_from_point(&centre));
    let inside = samples_in_latency(&r.outcome, bucket.lo_ns, bucket.hi_ns);
    assert_eq!(inside.len() as u64, bucket.count);
    let wb = h.state();
    let (from, to) = (
        wb.view.viewport.start,
        wb.view.viewport.start + wb.view.viewport.ps_per_px * f64::from(wb.frame.layout.data_width),
    );
    for &i in &inside {
        let s = &r.outcome.samples[i];
        assert!(from <= s.start as f64 && s.end as f64 <= to, "sample {i} off screen");
    }
    if inside.len() > 1 {
        // Zoomed to them: they span most of the view.
        let lo = inside.iter().map(|&i| r.outcome.samples[i].start).min().unwrap() as f64;
        let hi = inside.iter().map(|&i| r.outcome.samples[i].end).max().unwrap() as f64;
        assert!((hi - lo) / (to - from) > 0.9, "{} of the view", (hi - lo) / (to - from));
    }
}

fn cli_json(args: &[&str]) -> serde_json::Value {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_latscope")).args(args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn two_captures_compare_side_by_side_like_the_report() {
    let files = ["ftrace/virtio_blk_direct_read.txt", "ftrace/blk_read.txt"];
    let mut h = open(&files);
    set_rules(&mut h, &["block"]);
    run_analysis(&mut h);
    let wb = h.state();
    assert!(wb.errors.is_empty(), "{:?}", wb.errors);
    let a = wb.analysis.results.iter().find(|r| r.outcome.source == 0).unwrap();
    let b = wb.analysis.results.iter().find(|r| r.outcome.source == 1).unwrap();
    let c = a.comparison.as_ref().expect("A/B comparison on input 0's result");
    assert!(b.comparison.is_none());
    assert_eq!((c.a.count, c.b.count), (a.outcome.samples.len() as u64, b.outcome.samples.len() as u64));
    let (sa, sb) = (a.summary.as_ref().unwrap().stats_ns, b.summary.as_ref().unwrap().stats_ns);
    assert_eq!(c.delta_ns.p50, Some(sb.p50.unwrap() - sa.p50.unwrap()));
    // The same numbers as `latscope report A B --format json`'s comparison (A: the source
    // loaded first).
    let paths: Vec<String> = wb
        .doc
        .sources
        .iter()
        .map(|s| sample(&format!("ftrace/{}", s.source().name)).display().to_string())
        .collect();
    let j = cli_json(&["report", &paths[0], &paths[1], "--preset", "block", "--format", "json"]);
    let cj = &j["comparison"][0];
    assert_eq!(cj["a"]["count"].as_u64(), Some(c.a.count));
    assert_eq!(cj["b"]["count"].as_u64(), Some(c.b.count));
    assert_eq!(cj["delta_ns"]["p99"].as_f64(), c.delta_ns.p99);
    // Both columns and both CDFs are on screen.
    h.step();
    let _ = h.get_by_label("A/B: block");
    let _ = h.get_by_label("B − A");
}

#[test]
fn align_text_and_dat_of_one_recording_then_rules_run_like_report_align() {
    let files = ["ftrace/blk_read.txt", "ftrace/blk_read_v6.dat"];
    let mut h = open(&files);
    let spec = "match block_rq_issue -> block_rq_issue";
    h.state_mut().update(Message::Align(AlignMsg::Open));
    h.step();
    h.step();
    let _ = h.get_by_label("Match events");
    let index = |h: &Harness<'static, Workbench>, f: &str| {
        h.state().doc.sources.iter().position(|s| f.ends_with(&s.source().name)).unwrap()
    };
    let (text, dat) = (index(&h, files[0]), index(&h, files[1]));
    let (reference, other) = (source_id(h.state(), text), source_id(h.state(), dat));
    h.state_mut().update(Message::Align(AlignMsg::Align { reference, other, spec: align_spec(spec) }));
    wait(&mut h, "the alignment", |wb| !wb.aligning());
    let wb = h.state();
    assert!(wb.errors.is_empty(), "{:?}", wb.errors);
    let a = wb.doc.alignment.clone().expect("aligned");
    let issues = wb.view.shown(&wb.doc)[0]
        .source()
        .tracks()
        .iter()
        .find(|t| t.name == "block_rq_issue")
        .unwrap()
        .count;
    assert_eq!(a.matched as u64, issues);
    assert!(a.residual_rms_ps < 1e6, "rms {} ps", a.residual_rms_ps);
    // The aligned source carries the offset: its first issue lands on the reference's.
    let first = |i: usize| {
        let sv = wb.view.shown(&wb.doc)[i];
        let src = sv.source();
        let k = (0..src.events.len())
            .find(|&k| src.strings.resolve(src.events.get(k).unwrap().name()) == "block_rq_issue");
        sv.to_common(src.events.ts[k.unwrap()])
    };
    assert!((first(text) - first(dat)).abs() < 1e6, "{} vs {}", first(text), first(dat));
    assert_eq!(wb.view.shown(&wb.doc)[dat].placement, a.placement);
    assert_eq!(a.source, dat);

    // Rules now run over the sources together, with the counts `report --align` gives.
    set_rules(&mut h, &["block"]);
    run_analysis(&mut h);
    let paths: Vec<String> = files.iter().map(|f| sample(f).display().to_string()).collect();
    let align = format!("1:{spec}");
    let j = cli_json(&[
        "report", &paths[0], &paths[1], "--align", &align, "--preset", "block", "--format", "json",
    ]);
    let cli: Vec<(u64, u64)> = j["analyses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| (x["input"].as_u64().unwrap(), x["count"].as_u64().unwrap()))
        .collect();
    let gui: Vec<(u64, u64)> = h
        .state()
        .analysis
        .results
        .iter()
        .map(|r| (u64::from(r.outcome.source == dat), r.outcome.samples.len() as u64))
        .collect();
    // The CLI's input 0 is the text; the GUI's source order is the order the loads finished.
    let (mut gui, mut cli) = (gui, cli);
    gui.sort_unstable();
    cli.sort_unstable();
    assert_eq!(gui, cli);
    assert!(h.state().analysis.results.iter().all(|r| r.comparison.is_none()), "aligned: one trace, no A/B");
    assert!(j["align"].as_str().unwrap().contains(&format!("{issues} matched")));

    // Removing the alignment puts source 1 back on its own clock.
    h.state_mut().update(Message::Align(AlignMsg::Reset));
    wait(&mut h, "the reset", |wb| !wb.aligning());
    assert!(h.state().view.shown(&h.state().doc)[dat].placement.is_identity());
    assert!(h.state().doc.alignment.is_none());
}

#[test]
fn stall_windows_and_polling_loops_are_shaded_on_their_source() {
    let mut h = open(&["ftrace/timer_wakeups_under_load.txt"]);
    set_rules(&mut h, &["stall:local_timer_entry", "poll:hrtimer_start within 20us"]);
    run_analysis(&mut h);
    let wb = h.state();
    assert!(wb.errors.is_empty(), "{:?}", wb.errors);
    let stall = wb.analysis.results.iter().find(|r| r.outcome.name == "stall:local_timer_entry").unwrap();
    let poll = wb.analysis.results.iter().find(|r| r.outcome.name.starts_with("poll:hrtimer_start")).unwrap();
    assert!(!stall.outcome.windows.is_empty(), "no stall window in the sample");
    assert!(!poll.outcome.samples.is_empty(), "no polling loop in the sample");
    let bands = &wb.view.overlay.bands;
    assert_eq!(bands.len(), stall.outcome.windows.len() + poll.outcome.samples.len());
    let sv = wb.view.shown(&wb.doc)[0];
    for (b, w) in bands.iter().zip(&stall.outcome.windows) {
        assert_eq!((b.source, b.start, b.end), (sv.id, sv.to_common(w.start), sv.to_common(w.end)));
        assert!(b.label.contains("excess"), "{}", b.label);
    }
    let loops = &bands[stall.outcome.windows.len()..];
    assert!(loops.iter().zip(&poll.outcome.samples).all(|(b, s)| b.label.ends_with(&s.key)));

    // Hovering the widest window's band on the lane of the stalled stream (nothing else
    // shown, so no event is under the pointer) tells what the band is.
    let w = *stall.outcome.windows.iter().max_by_key(|w| w.end - w.start).unwrap();
    let (a, b) = (sv.to_common(w.start), sv.to_common(w.end));
    let label = bands.iter().find(|band| band.start == a).unwrap().label.clone();
    let lanes: Vec<(usize, String)> = sv.lanes.iter().map(|l| l.name.clone()).enumerate().collect();
    for (lane, name) in lanes {
        if name != "local_timer_entry" {
            let msg = Message::View(ViewMsg::ToggleLane(LaneId { source: source_id(h.state(), 0), lane }));
            h.state_mut().update(msg);
        }
    }
    h.state_mut().update(Message::View(ViewMsg::ShowRange(a - (b - a), b + (b - a))));
    h.step();
    let (left, top, vp) =
        (h.state().frame.layout.data_left, h.state().frame.layout.lanes_top, h.state().view.viewport);
    for _ in 0..3 {
        h.hover_at(egui::pos2(vp.x_of(left, (a + b) / 2.0), top + 10.0));
        h.step();
    }
    let _ = h.get_by_label(&label);
}

#[test]
fn live_statistics_grow_with_the_simulation_and_match_a_batch_analysis() {
    let mut h = harness(Options::default());
    // Slow enough that several snapshots are analysed before the end.
    h.state_mut().update(Message::Sim(SimMsg::Edit(SimEdit::MaxSpeed(false))));
    h.state_mut().update(Message::Sim(SimMsg::Edit(SimEdit::Speed(0.05))));
    h.state_mut().update(Message::Sim(SimMsg::Command(SimCommand::Start {
        scenario: "litesdcard".into(),
        sets: vec![],
        duration: Some(60_000_000_000),
    })));
    let sc = latscope_sim::prepare("litesdcard", &[], None, Some("60ms")).unwrap();
    let counts = |wb: &Workbench| wb.analysis.results.iter().map(|r| r.outcome.samples.len()).sum::<usize>();
    let mut seen: Vec<usize> = Vec::new();
    let mut checked_mid_run = false;
    for _ in 0..20_000 {
        h.step();
        let wb = h.state();
        if wb.sim.live.updates as usize > seen.len() {
            seen.push(counts(wb));
            // Each update equals a batch analysis of the snapshot it describes.
            let shown = wb.sim.live.shown.clone().unwrap();
            let batch = latscope_sim::scenarios::report(&sc, &shown.source).unwrap();
            let live: Vec<(String, usize)> = wb
                .analysis
                .results
                .iter()
                .map(|r| (r.outcome.name.clone(), r.outcome.samples.len()))
                .collect();
            let want: Vec<(String, usize)> =
                batch.outcomes.iter().map(|o| (o.name.clone(), o.samples.len())).collect();
            assert_eq!(live, want);
            checked_mid_run |= !wb.sim.finished && counts(wb) > 0;
        }
        if wb.sim.finished
            && wb.sim.live.shown.as_ref().is_some_and(|s| s.source.events.len() == wb.sim.events)
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    assert!(seen.len() >= 2, "live updates: {seen:?}");
    assert!(checked_mid_run, "no update while running: {seen:?}");
    assert!(seen.windows(2).all(|w| w[0] <= w[1]) && seen[0] < *seen.last().unwrap(), "{seen:?}");
    // The last update describes the whole run: the batch run's analyses.
    let full = latscope_sim::run(sc).unwrap();
    let last: Vec<usize> = h.state().analysis.results.iter().map(|r| r.outcome.samples.len()).collect();
    assert_eq!(last, full.report.outcomes.iter().map(|o| o.samples.len()).collect::<Vec<_>>());
}

/// Rules the user runs while the simulator is the source join its live answers: each
/// update holds the scenario's analyses and then the user's, a rule's count the whole
/// runner's over the snapshot the update describes, and the last update all its samples.
/// A rule the trace cannot answer is listed as not run, under the results, not raised at
/// every update; a restart keeps the rules. (Run over the trace as it was, the answer was
/// replaced by the next update's.)
#[test]
fn rules_the_user_runs_during_a_simulation_answer_live_beside_the_scenarios() {
    let mut h = harness(Options::default());
    h.state_mut().update(Message::Sim(SimMsg::Edit(SimEdit::MaxSpeed(false))));
    h.state_mut().update(Message::Sim(SimMsg::Edit(SimEdit::Speed(0.05))));
    let start =
        SimCommand::Start { scenario: "litesdcard".into(), sets: vec![], duration: Some(60_000_000_000) };
    h.state_mut().update(Message::Sim(SimMsg::Command(start.clone())));
    wait(&mut h, "a live update", |wb| wb.sim.live.updates > 0);
    let rules = ["loop=poll:sched_switch within 1ms min 3", "napi=poll:napi_poll within 1ms"];
    set_rules(&mut h, &rules);
    h.state_mut().update(Message::Analysis(AnalysisMsg::Run));
    let spec = latscope_analysis::spec::parse_spec(rules[0]).unwrap();
    let sc = latscope_sim::prepare("litesdcard", &[], None, Some("60ms")).unwrap();
    let (mut checked, mut mid_run, mut seen) = (0, false, h.state().sim.live.updates);
    for _ in 0..20_000 {
        h.step();
        let wb = h.state();
        if wb.sim.live.updates > seen && wb.analysis.results.iter().any(|r| r.outcome.name == "loop") {
            seen = wb.sim.live.updates;
            let shown = wb.sim.live.shown.clone().unwrap();
            let batch = latscope_sim::scenarios::report(&sc, &shown.source).unwrap();
            let mut want: Vec<&str> = batch.outcomes.iter().map(|o| o.name.as_str()).collect();
            want.push("loop");
            let names: Vec<&str> = wb.analysis.results.iter().map(|r| r.outcome.name.as_str()).collect();
            assert_eq!(names, want);
            let whole = latscope_analysis::runner::run_spec(
                &spec,
                &[latscope_model::Placed::unaligned(&shown.source)],
            )
            .unwrap()
            .remove(0);
            let got = wb.analysis.results.last().unwrap();
            assert_eq!(got.summary.as_ref().map(|s| s.count), Some(whole.samples.len() as u64));
            if wb.sim.finished {
                assert_eq!(got.outcome, whole, "the last update holds every sample");
            }
            checked += 1;
            mid_run |= !wb.sim.finished && !whole.samples.is_empty();
        }
        if wb.sim.finished
            && wb.sim.live.shown.as_ref().is_some_and(|s| s.source.events.len() == wb.sim.events)
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    assert!(checked >= 2 && mid_run, "{checked} updates with the rule, one while running: {mid_run}");
    let missing = &h.state().analysis.missing;
    assert!(missing.len() == 1 && missing[0].contains("napi_poll"), "{missing:?}");
    assert_eq!(take_errors(&mut h), Vec::<String>::new());
    // A restart keeps the rules.
    h.state_mut().update(Message::Sim(SimMsg::Command(start)));
    wait(&mut h, "the rule after a restart", |wb| {
        wb.sim.live.updates > 0 && wb.analysis.results.iter().any(|r| r.outcome.name == "loop")
    });
}

/// While the simulator runs, each snapshot asks the table's question again: the rows of
/// what is new are appended to the earlier answer, in place, and every answer equals the
/// whole query over the snapshot it read.
#[test]
fn the_event_table_follows_a_live_simulation_by_appending_what_is_new() {
    let mut h = harness(Options::default());
    h.state_mut().update(Message::Sim(SimMsg::Edit(SimEdit::MaxSpeed(false))));
    h.state_mut().update(Message::Sim(SimMsg::Edit(SimEdit::Speed(0.05))));
    h.state_mut().update(Message::Table(TableMsg::SetFilter("irq_handler_entry".into())));
    h.state_mut().update(Message::Sim(SimMsg::Command(SimCommand::Start {
        scenario: "litesdcard".into(),
        sets: vec![],
        duration: Some(60_000_000_000),
    })));
    let whole_query = |wb: &Workbench| {
        let sources: Vec<latscope::gui::workers::TableSource> = wb
            .table
            .rows
            .sources
            .iter()
            .filter_map(|&id| wb.doc.get(id).map(|s| (id, s.prepared.clone(), s.placement)))
            .collect();
        let filter = latscope_model::Filter::parse("irq_handler_entry").unwrap();
        let ctl = latscope_importers::LoadControl::default();
        let sort = latscope::gui::table::TableSort::Time;
        let listed = latscope::gui::workers::table_rows(&sources, &filter, sort, false, &ctl, None).unwrap();
        listed.rows.to_vec()
    };
    let mut answers: Vec<latscope_shared::SharedVec<latscope::gui::table::Row>> = Vec::new();
    for _ in 0..20_000 {
        h.step();
        let wb = h.state();
        let rows = &wb.table.rows.rows;
        let new = answers.last().is_none_or(|a| a.len() != rows.len() || a.as_ptr() != rows.as_ptr());
        if !wb.table_pending() && !rows.is_empty() && new {
            // The answer is the whole query over the events it read.
            let read = wb.table.rows.read.first().map_or(0, |t| t.len());
            let sim = wb.sim.source.unwrap();
            let now = wb.doc.get(sim).unwrap().prepared.source.events.len();
            if read == now {
                assert_eq!(rows.to_vec(), whole_query(wb), "answer {}", answers.len());
            }
            answers.push(rows.clone());
        }
        if wb.sim.finished
            && !wb.table_pending()
            && wb.table.rows.read.first().is_some_and(|t| t.len() == wb.sim.events)
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let wb = h.state();
    assert!(wb.sim.finished);
    assert_eq!(wb.table.rows.rows.to_vec(), whole_query(wb), "the last answer");
    assert!(answers.len() >= 3, "answers as the simulation ran: {}", answers.len());
    let appended =
        answers.windows(2).filter(|w| w[1].len() > w[0].len() && w[1].shares_memory_with(&w[0])).count();
    assert!(appended >= 1, "some answers appended in place to the one before ({} answers)", answers.len());
}

/// Rising and falling edges of a Schmitt trigger over `v`, counted here independently of the
/// analysis crate: high from `level + h/2`, low below `level - h/2`.
fn schmitt_edges(v: &[f32], level: f64, h: f64) -> (usize, usize) {
    let mut state = v.first().map(|&x| f64::from(x) >= level);
    let (mut rises, mut falls) = (0, 0);
    for &x in v {
        let x = f64::from(x);
        match state {
            Some(false) if x >= level + h / 2.0 => {
                state = Some(true);
                rises += 1;
            }
            Some(true) if x < level - h / 2.0 => {
                state = Some(false);
                falls += 1;
            }
            _ => {}
        }
    }
    (rises, falls)
}

#[test]
fn an_analog_lane_derives_a_digital_lane_from_its_threshold() {
    let file = latscope_testkit::corpus("scope_csv/agilent_mso7034a_scope_4.csv");
    let mut h = harness(Options { files: vec![file], ..Options::default() });
    wait(&mut h, "loading", |wb| wb.doc.sources.len() == 1 && wb.loads().is_empty());
    h.step();
    let sv = h.state().view.shown(&h.state().doc)[0];
    let lane =
        sv.lanes.iter().position(|l| sv.prepared.lanes[l.lane].kind.class() == LaneClass::Analog).unwrap();
    let analog = sv.source().analog[0].clone();
    let digital_before = sv.source().digital.len();

    // The context action opens the dialog with the automatic threshold: midway between the
    // 5th and 95th percentile.
    let msg = Message::Derive(DeriveMsg::Open(LaneId { source: source_id(h.state(), 0), lane }));
    h.state_mut().update(msg);
    let d = h.state().dialogs.derive.clone();
    assert!(d.open && d.auto);
    let mut v: Vec<f64> = analog.samples.iter().filter(|x| x.is_finite()).map(|&x| f64::from(x)).collect();
    v.sort_by(f64::total_cmp);
    let pct = |p: f64| {
        let pos = p * (v.len() - 1) as f64;
        let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
        v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
    };
    assert!((d.level - (pct(0.05) + pct(0.95)) / 2.0).abs() < 1e-9, "{}", d.level);
    h.step();
    h.step();
    let _ = h.get_by_label("Add digital lane");

    for threshold in [None, Some((d.level, 0.0))] {
        let msg = Message::Derive(DeriveMsg::Derive { source: source_id(h.state(), 0), track: 0, threshold });
        h.state_mut().update(msg);
        wait(&mut h, "the derived lane", |wb| {
            wb.view.shown(&wb.doc)[0].source().digital.len() == digital_before + 1
                && wb.view.shown(&wb.doc)[0].source().digital.last().unwrap().transitions() == {
                    let (level, hyst) = threshold.unwrap_or((d.level, d.hysteresis));
                    let (r, f) = schmitt_edges(&analog.samples, level, hyst);
                    r + f
                }
        });
        let wb = h.state();
        let src = wb.view.shown(&wb.doc)[0].source();
        let derived = src.digital.last().unwrap();
        assert_eq!(derived.name, format!("{}_digital", analog.name));
        assert!(derived.transitions() >= 2, "a square wave has edges: {}", derived.transitions());
        // It is a lane of that source, and the analog lane is still there.
        assert!(wb.view.shown(&wb.doc)[0].lanes.iter().any(|l| l.name == derived.name));
        // Rules see it: its high pulses, each a rising edge closed by the next falling one.
        let rises = (0..derived.transitions()).filter(|&i| derived.level(i) == 1).count();
        let closed = (0..derived.transitions())
            .filter(|&i| derived.level(i) == 1 && derived.levels().get(i + 1) == Some(&0))
            .count();
        let expect = (closed, rises - closed);
        assert!(
            wb.view.shown(&wb.doc)[0].lanes.iter().any(|l| l.name.starts_with(&format!("{} [", analog.name)))
        );
        let rule = format!("pulse:{}", derived.name);
        set_rules(&mut h, &[&rule]);
        run_analysis(&mut h);
        assert!(h.state().errors.is_empty(), "{:?}", h.state().errors);
        let r = &h.state().analysis.results[0];
        assert_eq!((r.outcome.samples.len(), r.outcome.unmatched_start as usize), expect);
    }
}

#[test]
fn a_rule_across_an_aligned_trace_and_vcd_counts_like_report_align() {
    // One simulated run written twice: the kernel's view (ftrace text, clock at 100 s) and
    // the logic analyser's (VCD from 0). Commands start in the text; IRQ lines are in the VCD.
    let dir = std::env::temp_dir().join(format!("latscope-gui-xsrc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (txt, vcd) = (dir.join("sd.txt"), dir.join("sd.vcd"));
    for out in [&txt, &vcd] {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_latscope"))
            .args(["sim", "litesdcard", "--set", "file_mib=1", "--trace-out", out.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let rule = "x=mmc_request_start -> litesdcard.IRQ:rise policy next";
    let spec = "match mmc_request_start -> litesdcard.CMD:rise";
    let mut h = harness(Options { files: vec![txt.clone(), vcd.clone()], ..Options::default() });
    wait(&mut h, "loading", |wb| wb.doc.sources.len() == 2 && wb.loads().is_empty());
    let index = |h: &Harness<'static, Workbench>, name: &str| {
        h.state().view.shown(&h.state().doc).iter().position(|s| s.source().name == name).unwrap()
    };
    let (ti, vi) = (index(&h, "sd.txt"), index(&h, "sd.vcd"));

    // Not aligned: each source alone, and neither has both ends.
    set_rules(&mut h, &[rule]);
    run_analysis(&mut h);
    assert!(h.state().analysis.results.is_empty());
    assert!(
        h.state().errors.iter().any(|e| e.contains("applies to no open source")),
        "{:?}",
        h.state().errors
    );
    take_errors(&mut h);

    let (reference, other) = (source_id(h.state(), ti), source_id(h.state(), vi));
    h.state_mut().update(Message::Align(AlignMsg::Align { reference, other, spec: align_spec(spec) }));
    wait(&mut h, "the alignment", |wb| !wb.aligning());
    assert!(h.state().errors.is_empty(), "{:?}", h.state().errors);
    run_analysis(&mut h);
    let wb = h.state();
    assert!(wb.errors.is_empty(), "{:?}", wb.errors);
    assert_eq!(wb.analysis.results.len(), 1);
    let r = &wb.analysis.results[0];

    let align = format!("1:{spec}");
    let j = cli_json(&[
        "report",
        txt.to_str().unwrap(),
        vcd.to_str().unwrap(),
        "--align",
        &align,
        "--rule",
        rule,
        "--format",
        "json",
    ]);
    let a = &j["analyses"][0];
    assert_eq!(a["count"].as_u64(), Some(r.outcome.samples.len() as u64));
    assert!(r.outcome.samples.len() > 100, "{} pairs", r.outcome.samples.len());
    assert_eq!(a["unmatched_start"].as_u64(), Some(r.outcome.unmatched_start));
    assert_eq!(a["unmatched_end"].as_u64(), Some(r.outcome.unmatched_end));
    let (cli_p50, gui_p50) =
        (a["stats_ns"]["p50"].as_f64().unwrap(), r.summary.as_ref().unwrap().stats_ns.p50.unwrap());
    assert!((cli_p50 - gui_p50).abs() < 1e-3, "{cli_p50} vs {gui_p50}");
    let fitted = wb.doc.alignment.as_ref().unwrap();
    assert!(j["align"].as_str().unwrap().contains(&format!("{} matched", fitted.matched)));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_align_dialog_applies_a_hand_offset_and_drift_and_removes_it() {
    let mut h = open(&["ftrace/blk_read.txt", "ftrace/markers_around_requests.txt"]);
    let before = h.state().time_range().unwrap();
    // Aligning moves a source without touching its data: the same shared `Prepared` (no copy,
    // no rebuilt lanes) and the same data generation (jobs that read it stay current).
    let data: Vec<_> = h
        .state()
        .view
        .shown(&h.state().doc)
        .iter()
        .map(|sv| (sv.prepared.clone(), sv.data_generation))
        .collect();
    h.state_mut().update(Message::Align(AlignMsg::Open));
    h.step();
    h.step();
    // What the user types in the dialog.
    let mut d = h.state().dialogs.align.clone();
    d.by_hand = true;
    d.offset = "+1ms".into();
    d.drift_ppm = 20.0;
    h.state_mut().update(Message::Align(AlignMsg::Edit(d)));
    h.step();
    let _ = h.get_by_label("same as: latscope report … --align '1:+1ms:+20ppm'");
    h.get_by_label("Align").click();
    h.step();
    wait(&mut h, "the alignment", |wb| !wb.aligning() && wb.doc.alignment.is_some());
    let wb = h.state();
    let other = wb.doc.alignment.as_ref().unwrap().source;
    let p = wb.view.shown(&wb.doc)[other].placement;
    // Both are traces of one kernel clock: the hand offset moves the second from where its
    // clock put it (its origin's distance from the first's).
    let by_clock = clock_offset(wb, other);
    assert_eq!((p.offset, p.drift_ppm), (by_clock + 1_000_000_000, 20.0));
    // Its lanes moved: source time t is drawn at t + offset + t * 20e-6.
    let t = 2_000_000_000_000;
    assert_eq!(
        wb.view.shown(&wb.doc)[other].to_common(t),
        (t + by_clock + 1_000_000_000 + 40_000_000) as f64
    );
    assert_ne!(wb.time_range().unwrap(), before);
    assert!(!wb.dialogs.align.open, "the dialog closes once applied");
    for (sv, (prepared, data_generation)) in wb.view.shown(&wb.doc).iter().zip(&data) {
        assert!(
            std::sync::Arc::ptr_eq(sv.prepared, prepared),
            "{}: the source was replaced",
            sv.source().name
        );
        assert_eq!(sv.data_generation, *data_generation, "{}", sv.source().name);
    }

    h.state_mut().update(Message::Align(AlignMsg::Open));
    h.step();
    h.step();
    h.get_by_label("Remove alignment").click();
    h.step();
    wait(&mut h, "the reset", |wb| !wb.aligning());
    let wb = h.state();
    assert!(wb.doc.alignment.is_none());
    let p = wb.view.shown(&wb.doc)[other].placement;
    assert_eq!((p.offset, p.drift_ppm), (clock_offset(wb, other), 0.0), "back where its clock puts it");
    assert_eq!(wb.time_range().unwrap(), before);
}

/// How far source `si`'s clock origin lies after source 0's, ps (read from the origins).
fn clock_offset(wb: &Workbench, si: usize) -> i64 {
    let (a, b) = (wb.view.shown(&wb.doc)[0].source().origin, wb.view.shown(&wb.doc)[si].source().origin);
    (b.secs - a.secs) * latscope_model::PS_PER_S + (b.ps - a.ps)
}

/// The index of the first analog lane of source `si` in its track list.
fn analog_lane(wb: &Workbench, si: usize) -> LaneId {
    let sv = wb.view.shown(&wb.doc)[si];
    let lane =
        sv.lanes.iter().position(|l| matches!(sv.prepared.lanes[l.lane].kind, LaneKind::Analog { .. }));
    LaneId { source: sv.id, lane: lane.expect("an analog lane") }
}

#[test]
fn a_derive_that_finishes_after_close_all_does_not_replace_what_is_open_next() {
    let mut h = open(&["sigrok/mixed_100khz_2logic_1analog.sr"]);
    let id = analog_lane(h.state(), 0);
    h.state_mut().update(Message::Derive(DeriveMsg::Open(id)));
    let next = sample("sigrok/demo_4ch_1mhz.sr");
    let next = latscope_importers::open(&next, &latscope_importers::LoadControl::new()).unwrap();
    // Derive, Close all and open another capture before the next frame can deliver the
    // derive worker's answer: it answers about a source that is no longer open.
    let msg =
        Message::Derive(DeriveMsg::Derive { source: source_id(h.state(), 0), track: 0, threshold: None });
    h.state_mut().update(msg);
    h.state_mut().update(Message::Files(FileMsg::CloseAll));
    h.state_mut().add_prepared(latscope::gui::prepare::prepare(next));
    // Give the worker every chance to answer (deriving one small track takes microseconds).
    for _ in 0..200 {
        h.step();
        std::thread::sleep(Duration::from_millis(5));
    }
    let wb = h.state();
    let names: Vec<String> = wb.view.shown(&wb.doc).iter().map(|s| s.source().name.clone()).collect();
    assert_eq!(names, ["demo_4ch_1mhz.sr"], "a stale derived copy replaced what was opened after Close all");
    assert!(wb.view.shown(&wb.doc)[0].source().digital.iter().all(|d| !d.name.ends_with("_digital")));
}

#[test]
fn menus_show_the_keymaps_shortcut_for_every_entry_that_has_one() {
    use latscope::gui::keymap;
    let mut h = harness(Options::default());
    h.step();
    let mut shown = 0;
    for (title, _) in keymap::MENUS {
        h.get_by_label(title).click();
        h.step();
        h.step();
        for id in keymap::menu_actions(title) {
            let a = keymap::get(id);
            if a.shortcut.is_some() {
                // The entry's label carries the very shortcut the keyboard acts on.
                let _ = h.get_by_label(&a.menu_text());
                shown += 1;
            }
        }
        h.get_by_label(title).click();
        h.step();
    }
    // Open…, Fit all, Zoom in, Zoom out, Command palette.
    assert_eq!(shown, 5);
}

#[test]
fn ctrl_f_shows_the_table_and_puts_the_keyboard_in_its_filter() {
    let mut h = open(&["ftrace/virtio_blk_direct_read.txt"]);
    h.state_mut().update(Message::View(ViewMsg::TogglePanel(latscope::gui::view::PanelId::Table)));
    h.step();
    assert!(!h.state().view.panels.table);
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::F);
    h.step();
    h.step();
    assert!(h.state().view.panels.table);
    assert!(!h.state().table.focus_filter, "the request is done once the table drew");
    // Typed letters go to the filter, not to the timeline's shortcuts.
    let before = h.state().view.viewport;
    // "w" and "s" would zoom the timeline if the keyboard were not in the filter.
    h.event(egui::Event::Text("wsirq".into()));
    for key in [egui::Key::W, egui::Key::S] {
        h.key_press(key);
    }
    h.step();
    wait(&mut h, "the filtered rows", |wb| !wb.table_pending() && wb.table.filter == "wsirq");
    assert_eq!(h.state().view.viewport, before, "typing did not zoom or pan");
}

#[test]
fn deriving_a_digital_lane_adds_it_to_the_source_in_place_without_a_copy() {
    let mut h = open(&["sigrok/mixed_100khz_2logic_1analog.sr"]);
    wait(&mut h, "the table", |wb| !wb.table_pending());
    let id = analog_lane(h.state(), 0);
    let before = source_addresses(h.state());
    let digital_before = h.state().view.shown(&h.state().doc)[0].source().digital.len();
    h.state_mut().update(Message::Derive(DeriveMsg::Open(id)));
    let msg =
        Message::Derive(DeriveMsg::Derive { source: source_id(h.state(), 0), track: 0, threshold: None });
    h.state_mut().update(msg);
    wait(&mut h, "the derived lane", |wb| {
        wb.view.shown(&wb.doc)[0].source().digital.len() == digital_before + 1
    });
    let wb = h.state();
    // The same source, its sample and edge columns where they were: nothing was copied.
    assert_eq!(source_addresses(wb), before);
    let sv = wb.view.shown(&wb.doc)[0];
    let derived = sv.source().digital.last().unwrap();
    assert!(derived.name.ends_with("_digital") && derived.transitions() > 0);
    // Its lane sits after the other digital lanes, before the analog one, as a fresh load
    // of the same data would place it.
    let kinds: Vec<LaneClass> = sv.prepared.lanes.iter().map(|l| l.kind.class()).collect();
    let last_digital = kinds.iter().rposition(|k| *k == LaneClass::Digital).unwrap();
    assert_eq!(sv.prepared.lanes[last_digital].name, derived.name);
    assert_eq!(kinds[last_digital + 1], LaneClass::Analog);
    assert!(sv.lanes.iter().any(|v| v.name == derived.name), "the track list shows it");
}

/// Where source 0's allocation and its heaviest columns live: equal before and after a
/// change means nothing was copied.
fn source_addresses(wb: &Workbench) -> (usize, usize, usize) {
    let sv = wb.view.shown(&wb.doc)[0];
    let src = sv.source();
    (
        std::sync::Arc::as_ptr(sv.prepared) as usize,
        src.analog[0].samples.as_ptr() as usize,
        src.digital[0].levels().as_ptr() as usize,
    )
}

#[test]
fn deriving_a_lane_while_analysis_results_share_the_source_copies_nothing() {
    let mut h = open(&["sigrok/mixed_100khz_2logic_1analog.sr"]);
    wait(&mut h, "the table", |wb| !wb.table_pending());
    let pulse = format!("pulse:{}", h.state().view.shown(&h.state().doc)[0].source().digital[0].name);
    set_rules(&mut h, &[&pulse]);
    run_analysis(&mut h);
    let pulses =
        h.state().analysis.results.iter().find(|r| r.outcome.name == pulse).map(|r| r.outcome.samples.len());
    assert!(pulses.is_some_and(|n| n > 0), "{pulse} has results: {:?}", h.state().errors);
    // The results keep the source they were computed from: the allocation is shared.
    assert!(std::sync::Arc::ptr_eq(
        &h.state().analysis.inputs[0],
        h.state().view.shown(&h.state().doc)[0].prepared
    ));

    let before = source_addresses(h.state());
    let digital_before = h.state().view.shown(&h.state().doc)[0].source().digital.len();
    let id = analog_lane(h.state(), 0);
    h.state_mut().update(Message::Derive(DeriveMsg::Open(id)));
    let msg =
        Message::Derive(DeriveMsg::Derive { source: source_id(h.state(), 0), track: 0, threshold: None });
    h.state_mut().update(msg);
    wait(&mut h, "the derived lane", |wb| {
        wb.view.shown(&wb.doc)[0].source().digital.len() == digital_before + 1
    });
    let wb = h.state();
    assert_eq!(source_addresses(wb), before, "the source was copied to add the derived track");
    // The results still describe the same, now extended, source; nothing was dropped.
    assert!(std::sync::Arc::ptr_eq(&wb.analysis.inputs[0], wb.view.shown(&wb.doc)[0].prepared));
    let after = wb.analysis.results.iter().find(|r| r.outcome.name == pulse).map(|r| r.outcome.samples.len());
    assert_eq!(after, pulses);
}

#[test]
fn a_derived_lane_waits_for_a_job_reading_the_source_and_is_then_added_in_place() {
    let mut h = open(&["sigrok/mixed_100khz_2logic_1analog.sr"]);
    wait(&mut h, "the table", |wb| !wb.table_pending());
    let before = source_addresses(h.state());
    let digital_before = h.state().view.shown(&h.state().doc)[0].source().digital.len();
    // A reader that is not the workbench's: what a running export or filter job holds.
    let reader = h.state().view.shown(&h.state().doc)[0].prepared.clone();
    let id = analog_lane(h.state(), 0);
    h.state_mut().update(Message::Derive(DeriveMsg::Open(id)));
    let msg =
        Message::Derive(DeriveMsg::Derive { source: source_id(h.state(), 0), track: 0, threshold: None });
    h.state_mut().update(msg);
    wait(&mut h, "the derived track to wait", |wb| !wb.pending_derived_is_empty());
    for _ in 0..20 {
        h.step();
    }
    assert_eq!(
        h.state().view.shown(&h.state().doc)[0].source().digital.len(),
        digital_before,
        "added while a reader holds it"
    );
    assert_eq!(reader.source.digital.len(), digital_before, "the reader's data changed under it");
    // The reader stands for a job: it lets go, and its thread says it ended.
    drop(reader);
    let ended = latscope::gui::jobs::Ticket { id: u64::MAX, kind: latscope::gui::jobs::JobKind::Save };
    h.state_mut().update(Message::JobEnded(ended));
    wait(&mut h, "the derived lane", |wb| {
        wb.view.shown(&wb.doc)[0].source().digital.len() == digital_before + 1
    });
    assert_eq!(source_addresses(h.state()), before, "the source was copied to add the derived track");
    assert!(h.state().pending_derived_is_empty());
}

/// The clock value a text trace prints for its first event (`474.884048`), and that
/// event's name: read from the file, not through latscope.
fn first_event_printed(path: &std::path::Path) -> (String, String) {
    let text = std::fs::read_to_string(path).unwrap();
    let line = text.lines().find(|l| !l.starts_with('#')).unwrap();
    let (head, rest) = line.split_once(": ").unwrap();
    let time = head.split_whitespace().last().unwrap().to_owned();
    (time, rest.split(':').next().unwrap().to_owned())
}

/// The screen position of event `index` of source `si` on its lane named `lane`.
fn event_pos(wb: &Workbench, si: usize, lane: &str, index: usize) -> egui::Pos2 {
    let sv = wb.view.shown(&wb.doc)[si];
    let li = sv.lanes.iter().position(|l| l.name == lane).unwrap();
    let rect =
        wb.frame.layout.rows.iter().find(|(id, _)| *id == LaneId { source: sv.id, lane: li }).unwrap().1;
    let t = sv.to_common(sv.source().events.ts[index]);
    let x = wb.view.viewport.x_of(wb.frame.layout.data_left, t);
    // A CPU lane draws its events' ticks below the task and IRQ rows.
    let y = if lane.starts_with("CPU ") { rect.top() + 39.0 } else { rect.center().y };
    egui::pos2(x, y)
}

#[test]
fn two_traces_of_one_kernel_clock_are_placed_by_their_clock_values() {
    let files = ["ftrace/virtio_blk_direct_read.txt", "ftrace/markers_around_requests.txt"];
    let mut h = open(&files);
    let (printed, name) = first_event_printed(&sample(files[1]));
    assert_eq!((printed.as_str(), name.as_str()), ("474.884048", "irq_handler_entry"));
    // The second file starts 4 s after the first one's origin on the same clock.
    let p = h.state().view.shown(&h.state().doc)[1].placement;
    assert_eq!((p.offset, p.drift_ppm), (4 * latscope_model::PS_PER_S, 0.0));
    // The track list says where each source sits.
    let _ = h.get_by_label_contains("offset +4.000000 s · drift +0.000 ppm · by clock value");
    // Click the first event of the second file on the timeline.
    let t = h.state().view.shown(&h.state().doc)[1].to_common(0);
    h.state_mut().update(Message::View(ViewMsg::ShowRange(t + 0.8e12, t + 0.9e12)));
    h.step();
    h.step();
    let pos = event_pos(h.state(), 1, "irq_handler_entry", 0);
    click_at(&mut h, pos);
    let wb = h.state();
    assert_eq!(
        wb.view.overlay.selected,
        Some(latscope::gui::view::EventSel { source: source_id(wb, 1), index: 0 })
    );
    // Cursor A (the status bar, in the ruler's clock), the inspector, the table and the
    // file all read the same clock value.
    let _ = h.get_by_label(&format!("A {printed}000 s"));
    assert!(h.query_all_by_label(&format!("{printed}000 s")).count() >= 1, "the inspector's time");
    let ruler_at_cursor = {
        let sv0 = wb.view.shown(&wb.doc)[0];
        sv0.source().origin.to_source_seconds(sv0.to_source(wb.view.overlay.cursor_a.unwrap()).round() as i64)
    };
    assert_eq!(format!("{ruler_at_cursor:.6}"), printed, "the ruler reads the first source's clock");
}

/// Steps until the workbench has settled, then until a scroll animation (the table
/// scrolling to a row) has ended.
fn settle(h: &mut Harness<'static, Workbench>) {
    wait(h, "the workbench to settle", |wb| wb.settled());
    for _ in 0..60 {
        h.step();
    }
}

/// Lines of a text trace (not comments) containing every one of `words`: grep's count.
fn grep_count(path: &std::path::Path, words: &[&str]) -> usize {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines().filter(|l| !l.starts_with('#') && words.iter().all(|w| l.contains(w))).count()
}

#[test]
fn the_event_table_and_search_cover_every_source() {
    let files = ["ftrace/virtio_blk_direct_read.txt", "ftrace/markers_around_requests.txt"];
    let mut h = open(&files);
    let marks = grep_count(&sample(files[1]), &["tracing_mark_write: ", "req_start"]);
    assert_eq!(marks, 300);
    assert_eq!(grep_count(&sample(files[0]), &["req_start"]), 0);
    h.state_mut().update(Message::Table(TableMsg::SetFilter("req_start".into())));
    wait(&mut h, "the filter", |wb| !wb.table_pending());
    h.step();
    // All sources by default: the second file's 300 markers, of both files' events.
    let total: usize = h.state().view.shown(&h.state().doc).iter().map(|s| s.source().events.len()).sum();
    assert_eq!(h.state().table.rows.rows.len(), marks);
    assert!(h.state().table.rows.rows.iter().all(|r| r.source == source_id(h.state(), 1)));
    let _ = h.get_by_label(&format!("{marks} of {total} events"));
    // A source column names them.
    assert!(h.query_all_by_label("markers_around_requests.txt").count() >= 2);
    // Search steps through them on the common timeline, from the left.
    h.state_mut().update(Message::View(ViewMsg::ClearCursors));
    h.state_mut().update(Message::View(ViewMsg::FitAll));
    h.state_mut().update(Message::Table(TableMsg::SearchStep(true)));
    let first = h.state().view.overlay.selected.unwrap();
    assert_eq!(
        (first.source, first.index),
        (source_id(h.state(), 1), h.state().table.rows.rows[0].index as usize)
    );
    h.state_mut().update(Message::Table(TableMsg::SearchStep(true)));
    assert_eq!(h.state().view.overlay.selected.unwrap(), h.state().table.rows.rows[1].sel());
    // The source filter narrows the table and the search to one source.
    let msg = Message::Table(TableMsg::SetSource(Some(source_id(h.state(), 0))));
    h.state_mut().update(msg);
    wait(&mut h, "the source filter", |wb| !wb.table_pending());
    assert!(h.state().table.rows.rows.is_empty());
    h.state_mut().update(Message::Table(TableMsg::SetSource(None)));
    wait(&mut h, "all sources", |wb| !wb.table_pending());
    assert_eq!(h.state().table.rows.rows.len(), marks);

    // Selecting an event on the timeline scrolls the table to it: the last marker's row,
    // far below the first rows, is drawn once it is selected.
    h.state_mut().update(Message::Table(TableMsg::SetFilter(String::new())));
    wait(&mut h, "every event", |wb| !wb.table_pending());
    h.step();
    assert_eq!(h.state().table.rows.rows.len(), total);
    let last = h.state().view.shown(&h.state().doc)[1].source().events.len() - 1;
    let time_text = |wb: &Workbench, si: usize, i: usize| {
        let src = wb.view.shown(&wb.doc)[si].source();
        format!("{:.6}", src.origin.to_source_seconds(src.events.ts[i]))
    };
    let text = time_text(h.state(), 1, last);
    assert_eq!(h.query_all_by_label(&text).count(), 0, "not drawn before");
    let t = h.state().view.shown(&h.state().doc)[1]
        .to_common(h.state().view.shown(&h.state().doc)[1].source().events.ts[last]);
    h.state_mut().update(Message::View(ViewMsg::ShowRange(t - 2e9, t + 2e9)));
    h.step();
    h.step();
    // Its CPU lane, near the top of the second source's lanes (on screen).
    let lane = format!("CPU {}", h.state().view.shown(&h.state().doc)[1].source().events.cpu[last]);
    let pos = event_pos(h.state(), 1, &lane, last);
    click_at(&mut h, pos);
    assert_eq!(
        h.state().view.overlay.selected,
        Some(latscope::gui::view::EventSel { source: source_id(h.state(), 1), index: last })
    );
    settle(&mut h);
    assert!(h.query_all_by_label(&text).count() >= 1, "the table scrolled to {text}");

    // A worst case shown from the analysis panel selects its start event, and the table
    // scrolls there too.
    set_rules(&mut h, &["block"]);
    run_analysis(&mut h);
    let (ri, si, worst) = {
        let r = h.state().analysis.results.iter().enumerate().find(|(_, r)| r.outcome.source == 0).unwrap();
        (r.0, r.1.outcome.source, r.1.worst[0])
    };
    let start = h.state().analysis.results[ri].outcome.samples[worst].start;
    h.state_mut().update(Message::Analysis(AnalysisMsg::ShowSample { outcome: ri, sample: worst }));
    settle(&mut h);
    let sel = h.state().view.overlay.selected.unwrap();
    assert_eq!(sel.source, source_id(h.state(), si));
    let src = h.state().view.shown(&h.state().doc)[si].source();
    assert_eq!(src.events.ts[sel.index], start);
    assert_eq!(src.strings.resolve(src.events.get(sel.index).unwrap().name()), "block_rq_issue");
    let text = time_text(h.state(), si, sel.index);
    assert!(h.query_all_by_label(&text).count() >= 1, "the table scrolled to the worst case at {text}");
}

/// Lines of a text trace (not comments) with every one of `words` and none of `not`.
fn grep_count_without(path: &std::path::Path, words: &[&str], not: &[&str]) -> usize {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .filter(|l| {
            !l.starts_with('#') && words.iter().all(|w| l.contains(w)) && !not.iter().any(|w| l.contains(w))
        })
        .count()
}

fn filtered(h: &mut Harness<'static, Workbench>, filter: &str) -> usize {
    h.state_mut().update(Message::Table(TableMsg::SetFilter(filter.into())));
    wait(h, "the filter", |wb| !wb.table_pending());
    assert_eq!(h.state().table.error, None, "{filter}");
    h.state().table.rows.rows.len()
}

#[test]
fn filter_terms_combine_and_enter_steps_through_the_matches() {
    let file = "ftrace/virtio_blk_direct_read.txt";
    let path = sample(file);
    let mut h = open(&[file]);
    // Each term matches alone; together they are ANDed (grep counts the same lines).
    let both = grep_count(&path, &["dd-", " 23942400 "]);
    assert_eq!(both, 2);
    assert!(filtered(&mut h, "dd") > both);
    assert!(filtered(&mut h, "sector=23942400") > both);
    assert_eq!(filtered(&mut h, "dd sector=23942400"), both);
    // A quoted phrase (in the payload as the trace prints it), field~text, -term.
    assert_eq!(filtered(&mut h, "\"254,0 RS\""), grep_count(&path, &["254,0 RS"]));
    assert_eq!(filtered(&mut h, "name~virtio1"), grep_count(&path, &["name=virtio1"]));
    assert_eq!(
        filtered(&mut h, "block_rq -insert"),
        grep_count_without(&path, &["block_rq_"], &["block_rq_insert"])
    );
    // A filter that does not parse says why beside it.
    h.state_mut().update(Message::Table(TableMsg::SetFilter("\"unclosed".into())));
    h.step();
    assert!(h.state().table.error.as_deref().is_some_and(|e| e.contains("unclosed quote")));

    // The list opens at its first match, wherever the last list was scrolled to: scroll to
    // the last event first.
    assert_eq!(filtered(&mut h, ""), h.state().view.shown(&h.state().doc)[0].source().events.len());
    let last = h.state().view.shown(&h.state().doc)[0].source().events.len() - 1;
    let msg = Message::View(ViewMsg::SelectEvent(latscope::gui::view::EventSel {
        source: source_id(h.state(), 0),
        index: last,
    }));
    h.state_mut().update(msg);
    settle(&mut h);
    let time_text = |wb: &Workbench, i: usize| {
        let src = wb.view.shown(&wb.doc)[0].source();
        format!("{:.6}", src.origin.to_source_seconds(src.events.ts[i]))
    };
    assert!(h.query_all_by_label(&time_text(h.state(), last)).count() >= 1);
    let n = filtered(&mut h, "block_rq_issue");
    settle(&mut h);
    let first = h.state().table.rows.rows[0].index as usize;
    assert!(h.query_all_by_label(&time_text(h.state(), first)).count() >= 1, "opens at the first match");
    assert_eq!(
        h.query_all_by_label(&time_text(h.state(), h.state().table.rows.rows[n - 1].index as usize)).count(),
        0
    );

    // Enter in the filter steps like F3 (from cursor A), again and again; Shift+Enter back.
    let t = {
        let sv = h.state().view.shown(&h.state().doc)[0];
        sv.to_common(sv.source().events.ts[first]) - 1.0
    };
    h.state_mut().update(Message::View(ViewMsg::SetCursor(latscope::gui::view::CursorId::A, t)));
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::F);
    h.step();
    h.step();
    let row = |h: &Harness<'static, Workbench>, k: usize| h.state().table.rows.rows[k].sel();
    for k in 0..3 {
        h.key_press(egui::Key::Enter);
        h.step();
        assert_eq!(h.state().view.overlay.selected, Some(row(&h, k)), "Enter {}", k + 1);
    }
    h.key_press_modifiers(egui::Modifiers::SHIFT, egui::Key::Enter);
    h.step();
    assert_eq!(h.state().view.overlay.selected, Some(row(&h, 1)), "Shift+Enter");
}

/// `trace-cmd report`'s payload (the text after `EVENT:`) of each `event` line.
fn trace_cmd_payloads(path: &std::path::Path, event: &str) -> Vec<String> {
    let out = latscope_testkit::Need::TraceCmd
        .output(std::process::Command::new("trace-cmd").arg("report").arg(path));
    assert!(
        out.status.success(),
        "trace-cmd report {}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let tag = format!(" {event}: ");
    text.lines().filter_map(|l| l.split_once(&tag)).map(|(_, p)| p.trim().to_owned()).collect()
}

/// What the workbench shows of a trace.dat event (`render_event`, asserted on screen below)
/// is what `trace-cmd report` prints.
#[test]
#[cfg_attr(not(have_trace_cmd), ignore = "needs trace-cmd: apt-get install trace-cmd")]
fn trace_dat_events_render_as_trace_cmd_prints_them() {
    let path = sample("ftrace/virtio_blk_direct_read.dat");
    let src = latscope_importers::open(&path, &latscope_importers::LoadControl::new()).unwrap();
    let name = |i: usize| src.strings.resolve(src.events.get(i).unwrap().name()).into_owned();
    let shown: Vec<String> = (0..src.events.len())
        .filter(|&i| name(i) == "block_rq_issue")
        .map(|i| latscope_model::render_event(&src, i))
        .collect();
    assert_eq!(shown.len(), 400);
    assert_eq!(shown, trace_cmd_payloads(&path, "block_rq_issue"), "as trace-cmd report prints them");
}

#[test]
fn trace_dat_events_read_as_trace_cmd_prints_them_in_the_table_tooltip_and_inspector() {
    let file = "ftrace/virtio_blk_direct_read.dat";
    let mut h = open(&[file]);
    // The presets that ran on open key their worst cases by the stored values
    // (`dev=266338304`): this test is about the events' text, so their panel is closed.
    h.state_mut().update(Message::View(ViewMsg::TogglePanel(latscope::gui::view::PanelId::Analysis)));
    let (index, issues) = {
        let src = h.state().view.shown(&h.state().doc)[0].source();
        let name = |i: usize| src.strings.resolve(src.events.get(i).unwrap().name()).into_owned();
        let all: Vec<usize> = (0..src.events.len()).filter(|&i| name(i) == "block_rq_issue").collect();
        (all[0], all.len())
    };
    // What trace-cmd prints: trace_dat_events_render_as_trace_cmd_prints_them.
    let shown = latscope_model::render_event(h.state().view.shown(&h.state().doc)[0].source(), index);
    assert!(shown.starts_with("254,0 R"), "{shown}");
    // The table shows the rendered payload, not the stored dev number.
    assert_eq!(filtered(&mut h, "block_rq_issue"), issues);
    settle(&mut h);
    let _ = h.get_by_label(&shown);
    assert_eq!(h.query_all_by_label_contains("dev=266338304").count(), 0);
    // Filters (and rules) still match the stored values.
    assert_eq!(filtered(&mut h, "block_rq_issue dev=266338304"), issues);
    assert_eq!(filtered(&mut h, "\"254,0 R\" block_rq_issue"), issues, "and the printed form");
    // The inspector shows it too, and the stored value beside it.
    let msg = Message::View(ViewMsg::SelectEvent(latscope::gui::view::EventSel {
        source: source_id(h.state(), 0),
        index,
    }));
    h.state_mut().update(msg);
    settle(&mut h);
    assert!(h.query_all_by_label(&shown).count() >= 2, "table and inspector");
    // The inspector's fields read as the payload does, the stored value beside them.
    let _ = h.get_by_label("(266338304)");
    assert!(h.query_all_by_label("254,0").count() >= 1);
    // The timeline's tooltip on the event.
    let t = h.state().view.shown(&h.state().doc)[0]
        .to_common(h.state().view.shown(&h.state().doc)[0].source().events.ts[index]);
    h.state_mut().update(Message::View(ViewMsg::ShowRange(t - 2e7, t + 2e7)));
    h.step();
    h.step();
    let before = h.query_all_by_label(&shown).count();
    h.hover_at(event_pos(h.state(), 0, "block_rq_issue", index));
    settle(&mut h);
    assert!(h.query_all_by_label(&shown).count() > before, "the tooltip shows the payload");
}

// --- The first hour (issue 18): answers on open, a layout that holds still, typed settings.

/// The dropdown showing `text`.
fn combo<'a>(h: &'a Harness<'static, Workbench>, text: &str) -> egui_kittest::Node<'a> {
    let all: Vec<_> = h.get_all_by_role(egui::accesskit::Role::ComboBox).collect();
    let values: Vec<Option<String>> = all.iter().map(|n| n.value()).collect();
    all.into_iter()
        .find(|n| n.value().as_deref() == Some(text) || n.accesskit_node().label().as_deref() == Some(text))
        .unwrap_or_else(|| panic!("no dropdown showing {text}: {values:?}"))
}

#[test]
fn no_rule_is_added_behind_the_users_back_and_a_capture_opens_without_an_error() {
    let mut h = open(&["sigrok/demo_4ch_1mhz.sr"]);
    settle(&mut h);
    assert!(h.state().errors.is_empty(), "{:?}", h.state().errors);
    assert!(
        !h.state().analysis.rules.specs.iter().any(|s| s == "irq-handler"),
        "a rule the user never added: {:?}",
        h.state().analysis.rules.specs
    );
    // A logic capture holds no event any preset reads: nothing ran, nothing failed, and
    // the panel says how to measure its channels.
    assert!(h.state().analysis.results.is_empty());
    let missing = &h.state().analysis.missing;
    assert!(missing.iter().any(|m| m.starts_with("pulse:CH needs a channel name: pulse:")), "{missing:?}");
    // Running what the panel lists fails on nothing (the phantom rule failed here, in red).
    h.state_mut().update(Message::Analysis(AnalysisMsg::Run));
    settle(&mut h);
    assert!(h.state().errors.is_empty(), "{:?}", h.state().errors);
}

/// `latscope report FILE --format json` without `--preset`: its analyses' names and
/// counts, and the presets its stderr says it did not run.
fn report_defaults(file: &str) -> (Vec<(String, u64)>, Vec<String>) {
    let path = sample(file);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_latscope"))
        .args(["report", path.to_str().unwrap(), "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let analyses = v["analyses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["name"].as_str().unwrap().to_owned(), a["count"].as_u64().unwrap()))
        .collect();
    let missing = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter_map(|l| l.strip_prefix("latscope: not run: ").map(str::to_owned))
        .collect();
    (analyses, missing)
}

/// A latency as the summary writes it: `482 us`, `3.821 ms`.
fn short(ps: i64) -> String {
    let (v, unit) = match ps {
        p if p >= 1_000_000_000_000 => (p as f64 / 1e12, "s"),
        p if p >= 1_000_000_000 => (p as f64 / 1e9, "ms"),
        p if p >= 1_000_000 => (p as f64 / 1e6, "us"),
        p => (p as f64 / 1e3, "ns"),
    };
    let text = format!("{v:.3}");
    format!("{} {unit}", text.trim_end_matches('0').trim_end_matches('.'))
}

#[test]
fn opening_a_trace_runs_the_presets_it_holds_and_the_worst_case_link_shows_the_pair() {
    let mut h = open(&["ftrace/virtio_blk_direct_read.txt"]);
    wait(&mut h, "the answers", |wb| !wb.analysis.results.is_empty() && wb.settled());
    h.step();
    let (want, want_missing) = report_defaults("ftrace/virtio_blk_direct_read.txt");
    let wb = h.state();
    assert!(wb.errors.is_empty(), "{:?}", wb.errors);
    assert!(wb.view.panels.analysis, "the panel opens with the answers");
    // The same presets as `latscope report` without --preset, with the same counts.
    let got: Vec<(String, u64)> = wb
        .analysis
        .results
        .iter()
        .map(|r| (r.outcome.name.clone(), r.outcome.samples.len() as u64))
        .collect();
    assert_eq!(got, want);
    assert!(got.iter().any(|(n, _)| n == "block") && got.iter().any(|(n, _)| n == "wakeup"), "{got:?}");
    let names: Vec<String> = got.iter().map(|(n, _)| n.clone()).collect();
    assert_eq!(wb.analysis.rules.specs, names, "Run repeats what ran");
    // What could not run says what is missing, as the report says it.
    assert_eq!(wb.analysis.missing, want_missing);
    assert!(
        want_missing.iter().any(|m| m
            == "irqs-off needs irq_disable and irq_enable: `trace-cmd record -e irq_disable -e irq_enable`"),
        "{want_missing:?}"
    );
    for m in &want_missing {
        let _ = h.get_by_label(m);
    }
    // The summary: one row per analysis with count, p50, p99 and max; the worst case is a
    // link that puts the cursors on that pair.
    for column in ["analysis", "count", "p50", "p99", "max", "worst"] {
        assert!(h.query_all_by_label(column).count() >= 1, "no {column} column");
    }
    let block = wb.analysis.results.iter().position(|r| r.outcome.name == "block").unwrap();
    let r = &wb.analysis.results[block];
    let worst = r.outcome.samples[r.worst[0]].clone();
    let text = short(worst.latency());
    // (The max column shows the same text, as a label; the worst column is the link.)
    let links: Vec<_> = h.query_all_by_role_and_label(egui::accesskit::Role::Link, &text).collect();
    assert!(!links.is_empty(), "no link {text}");
    links[0].click();
    h.step();
    h.step();
    let o = &h.state().view.overlay;
    let sv = h.state().view.shown(&h.state().doc)[0];
    // Several analyses may share a worst latency; the link shown first is the first row's.
    let first = h
        .state()
        .analysis
        .results
        .iter()
        .find(|r| r.worst.first().is_some_and(|&i| short(r.outcome.samples[i].latency()) == text));
    let pair = first.map(|r| r.outcome.samples[r.worst[0]].clone()).unwrap();
    assert_eq!(o.cursor_a, Some(sv.to_common(pair.start)));
    assert_eq!(o.cursor_b, Some(sv.to_common(pair.end)));
}

#[test]
fn the_preset_menu_reaches_every_preset() {
    let mut h = open(&["ftrace/virtio_blk_direct_read.txt"]);
    settle(&mut h);
    // The last presets of the list were scrolled out of a short menu: a click there
    // missed them. Clicking `pulse:CH` puts `pulse:` in the editor for the channel name.
    combo(&h, "Add a preset").click();
    h.step();
    h.step();
    // Every preset of the registry: the decoders' (`sd-cmd-resp` …) too, which the command
    // line took and the menu did not.
    let registry = h.state().registry.clone();
    assert!(registry.presets().iter().any(|p| p.name == "sd-cmd-resp"));
    let window = h.ctx.content_rect();
    for p in registry.presets() {
        let name = p.name.as_str();
        assert!(h.query_all_by_label(name).count() >= 1, "{name} not in the menu");
    }
    // The menu's last entries (the results table repeats the kernel presets' names).
    for name in ["pulse:CH", "sd-write-busy"] {
        let item = h.get_all_by_label(name).last().unwrap().rect();
        assert!(window.contains_rect(item), "{name} at {item:?} is off the window {window:?}");
    }
    h.get_all_by_label("pulse:CH").last().unwrap().click();
    h.step();
    h.step();
    assert_eq!(h.state().analysis.rules.draft, "pulse:");
}

#[test]
fn the_simulator_panel_leaves_the_analysis_most_of_the_height() {
    let wb = Workbench::new(Options::default(), Box::new(NoPicker), Vec::new());
    let mut h = Harness::builder()
        .with_size(egui::vec2(1400.0, 760.0))
        .with_accessibility_check(false)
        .build_ui_state(|ui, wb: &mut Workbench| wb.ui(ui), wb);
    h.state_mut().update(Message::View(ViewMsg::TogglePanel(latscope::gui::view::PanelId::Simulator)));
    h.state_mut().update(Message::Sim(SimMsg::Edit(SimEdit::MaxSpeed(true))));
    h.state_mut().update(Message::Sim(SimMsg::Command(SimCommand::Start {
        scenario: "litesdcard".into(),
        sets: vec![],
        duration: Some(20_000_000_000),
    })));
    wait(&mut h, "the live statistics", |wb| {
        wb.sim.finished && !wb.analysis.results.is_empty() && !wb.sim.metrics.is_empty()
    });
    for _ in 0..4 {
        h.step();
    }
    assert!(h.state().view.panels.analysis, "results open the panel");
    // The panel's heading, below the menu of the same name.
    let heading =
        h.get_all_by_label("Analysis").map(|n| n.rect()).max_by(|a, b| a.top().total_cmp(&b.top())).unwrap();
    let window = h.ctx.content_rect();
    // The analysis starts in the upper half of the window: at least half the side panel.
    assert!(
        heading.top() < window.height() * 0.5,
        "the analysis starts at {} of {}",
        heading.top(),
        window.height()
    );
}

/// A file of pseudo-random bytes (a fixed LCG: the same bytes every run).
fn garbage_file(dir: &std::path::Path, len: usize) -> PathBuf {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let bytes: Vec<u8> = (0..len)
        .map(|_| {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (x >> 56) as u8
        })
        .collect();
    let path = dir.join("g.dat");
    std::fs::write(&path, bytes).unwrap();
    path
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("latscope-gui-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn the_error_banner_wraps_closes_and_never_widens_the_timeline() {
    let dir = temp_dir("banner");
    let garbage = garbage_file(&dir, 200_000);
    let mut h = harness(Options { files: vec![garbage.clone()], ..Options::default() });
    wait(&mut h, "the error", |wb| !wb.errors.is_empty());
    let error = h.state().errors[0].clone();
    assert!(error.contains("g.dat"), "{error}");
    // A good file after it: the banner about the bad one goes, the log keeps it.
    h.state_mut().update(Message::Files(FileMsg::Open(vec![sample("ftrace/virtio_blk_direct_read.txt")])));
    settle(&mut h);
    assert!(h.state().errors.is_empty(), "{:?}", h.state().errors);
    assert!(h.state().errors.log().contains(&error), "{:?}", h.state().errors.log());
    let window = h.ctx.content_rect();
    let (left, width) = (h.state().frame.layout.data_left, h.state().frame.layout.data_width);
    assert!(left + width <= window.right(), "the timeline ends at {} past {}", left + width, window.right());

    // A long error: it wraps in the banner and the timeline keeps its width.
    let long = format!(
        "{}: {}",
        garbage.display(),
        "unknown format: the first bytes are no trace we know ".repeat(12)
    );
    h.state_mut().update(Message::Shell(ShellMsg::Error(anyhow::anyhow!(long.clone()))));
    for _ in 0..3 {
        h.step();
    }
    assert_eq!(h.state().frame.layout.data_width, width, "the banner widened the timeline");
    assert_eq!(h.state().frame.layout.data_left, left);
    let banner = h.get_by_label_contains("unknown format: the first bytes").rect();
    assert!(banner.right() <= window.right() && banner.height() > 20.0, "not wrapped: {banner:?}");
    // The close button is on screen and closes it.
    let close = h.get_by_label("Close").rect();
    assert!(window.contains_rect(close), "the close button at {close:?} is off the window");
    h.get_by_label("Close").click();
    h.step();
    h.step();
    assert!(h.state().errors.is_empty());
    // Esc closes the banner, and only then clears the cursors.
    h.state_mut().update(Message::View(ViewMsg::SetCursor(latscope::gui::view::CursorId::A, 1.0)));
    h.state_mut().update(Message::Shell(ShellMsg::Error(anyhow::anyhow!("two"))));
    h.state_mut().update(Message::Shell(ShellMsg::Error(anyhow::anyhow!("three"))));
    h.step();
    h.key_press(egui::Key::Escape);
    h.step();
    assert!(h.state().errors.is_empty());
    assert_eq!(h.state().view.overlay.cursor_a, Some(1.0));
    h.key_press(egui::Key::Escape);
    h.step();
    assert_eq!(h.state().view.overlay.cursor_a, None);
    // Every error is in the log panel.
    h.state_mut().update(Message::View(ViewMsg::TogglePanel(latscope::gui::view::PanelId::Log)));
    h.step();
    h.step();
    for e in [&error, "two", "three"] {
        assert!(h.query_all_by_label(e).count() >= 1, "{e} not in the log panel");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn selecting_a_lane_keeps_the_time_axis_where_it_was() {
    let mut h = open(&["ftrace/virtio_blk_direct_read.txt"]);
    settle(&mut h);
    let before =
        (h.state().frame.layout.data_left, h.state().frame.layout.data_width, h.state().view.viewport);
    for name in ["irq_handler_entry", "block_rq_complete", "CPU 0"] {
        h.get_by_label(name).click();
        for _ in 0..3 {
            h.step();
        }
        let focused = h.state().view.overlay.focused.expect("a lane is focused");
        assert_eq!(h.state().view.shown(&h.state().doc)[0].lanes[focused.lane].name, name);
        let after =
            (h.state().frame.layout.data_left, h.state().frame.layout.data_width, h.state().view.viewport);
        assert_eq!(after, before, "selecting {name} moved the time axis");
    }
    // The user sets the list's width by dragging its edge; the timeline follows that only.
    let y = 500.0;
    let mut edge = None;
    for x in 150..420 {
        h.hover_at(egui::pos2(x as f32, y));
        h.step();
        let icon = h.output().platform_output.cursor_icon;
        if matches!(
            icon,
            egui::CursorIcon::ResizeHorizontal
                | egui::CursorIcon::ResizeEast
                | egui::CursorIcon::ResizeColumn
        ) {
            edge = Some(x as f32);
            break;
        }
    }
    let edge = edge.expect("the track list's edge can be dragged");
    h.drag_at(egui::pos2(edge, y));
    h.step();
    let by = 80.0;
    for k in 1..=8 {
        h.hover_at(egui::pos2(edge + by * k as f32 / 8.0, y));
        h.step();
    }
    h.drop_at(egui::pos2(edge + by, y));
    for _ in 0..3 {
        h.step();
    }
    let moved = h.state().frame.layout.data_left - before.0;
    // egui puts the edge under the pointer, and its handle reaches a few points into the panel.
    assert!((moved - by).abs() < 10.0, "dragged {by} px, the timeline moved {moved} px");
}

fn sim_harness() -> Harness<'static, Workbench> {
    let mut h = harness(Options::default());
    h.state_mut().update(Message::View(ViewMsg::TogglePanel(latscope::gui::view::PanelId::Simulator)));
    h.step();
    h.step();
    h
}

#[test]
fn simulator_settings_are_typed_and_a_change_says_that_restart_applies_it() {
    let mut h = sim_harness();
    // A word setting is a dropdown of the values the model accepts.
    combo(&h, "cmd-irq").click();
    h.step();
    h.step();
    for mode in ["dma-irq", "all-irq", "poll-5us", "poll-0us"] {
        assert!(h.query_all_by_label(mode).count() >= 1, "{mode} not offered");
    }
    h.get_by_label("poll-5us").click();
    h.step();
    h.step();
    assert!(h.state().sim.sets().contains(&"mode=poll-5us".to_owned()), "{:?}", h.state().sim.sets());
    // The CPU names the scenario's calibrated CPUs.
    combo(&h, "rocket-50mhz").click();
    h.step();
    h.step();
    assert!(h.query_all_by_label("microwatt-100mhz").count() >= 1);
    h.key_press(egui::Key::Escape);
    h.step();
    // Numbers are drag values with their unit.
    let numbers: Vec<String> = h
        .get_all_by_role(egui::accesskit::Role::SpinButton)
        .map(|n| {
            format!("{} {}", n.accesskit_node().label().unwrap_or_default(), n.value().unwrap_or_default())
        })
        .collect();
    assert!(
        numbers.iter().any(|n| n.contains("5.00 µs")),
        "sd_sleep_us is not shown with its unit: {numbers:?}"
    );
    assert!(
        numbers.iter().any(|n| n.contains("4 KiB")),
        "request_kib is not shown with its unit: {numbers:?}"
    );

    // A run going on; a changed setting says Restart applies it, and Restart does.
    h.state_mut().update(Message::Sim(SimMsg::Edit(SimEdit::MaxSpeed(true))));
    let start = h.state().sim.start_command();
    h.state_mut().update(Message::Sim(SimMsg::Command(start)));
    h.step();
    assert!(h.query_by_label_contains("Restart applies").is_none());
    combo(&h, "poll-5us").click();
    h.step();
    h.step();
    h.get_by_label("cmd-irq").click();
    h.step();
    h.step();
    let _ = h.get_by_label_contains("Settings changed: Restart applies them");
    h.get_by_label("Restart to apply").click();
    h.step();
    h.step();
    assert!(h.query_by_label_contains("Restart applies").is_none());
    assert!(h.state().sim.sets().contains(&"mode=cmd-irq".to_owned()));
}

/// A number typed into a setting while a run goes on, a key a frame as a user types: the
/// first key brings "Settings changed" above the settings, and the field keeps the focus
/// and the keys after it (they went to the shortcuts when its id moved with that line).
#[test]
fn a_setting_typed_while_a_run_goes_on_keeps_every_key() {
    let mut h = sim_harness();
    h.state_mut().update(Message::Sim(SimMsg::Edit(SimEdit::MaxSpeed(true))));
    let start = h.state().sim.start_command();
    h.state_mut().update(Message::Sim(SimMsg::Command(start)));
    h.step();
    assert!(h.query_by_label_contains("Restart applies").is_none());
    h.get_all_by_role(egui::accesskit::Role::SpinButton)
        .find(|n| n.value().unwrap_or_default().contains("MiB"))
        .expect("file_mib's field")
        .focus();
    h.step();
    h.step();
    for key in ["4", "0", "9", "6"] {
        // Keys go where the focus is, whichever node queues them.
        h.get_by_label("timeline follows the simulation").type_text(key);
        h.step();
        h.step();
    }
    h.key_press(egui::Key::Enter);
    h.step();
    let _ = h.get_by_label_contains("Settings changed: Restart applies them");
    assert!(h.state().sim.sets().contains(&"file_mib=4096".to_owned()), "{:?}", h.state().sim.sets());
}

/// `12.345 ms` (as the panel writes a time) in picoseconds.
fn ps_of(text: &str) -> i64 {
    latscope_sim::parse_duration(&text.replace('µ', "u").replace(' ', "")).unwrap_or_else(|| panic!("{text}"))
}

#[test]
fn the_live_analyses_never_run_ahead_of_the_simulated_time() {
    let mut h = sim_harness();
    h.state_mut().update(Message::Sim(SimMsg::Edit(SimEdit::MaxSpeed(false))));
    h.state_mut().update(Message::Sim(SimMsg::Edit(SimEdit::Speed(0.05))));
    h.state_mut().update(Message::Sim(SimMsg::Command(SimCommand::Start {
        scenario: "litesdcard".into(),
        sets: vec![],
        duration: Some(200_000_000_000),
    })));
    // The simulator emits some records ahead of its clock (a transfer's end when it
    // starts); a snapshot holds only what its clock has passed, so none of its records is
    // past the simulated time, and neither are the analyses of it.
    let (mut seen, mut ahead) = (0, 0);
    let mut last = 0;
    for _ in 0..40_000 {
        h.step();
        let (updates, finished) = (h.state().sim.live.updates, h.state().sim.finished);
        if finished {
            break;
        }
        if updates != last {
            last = updates;
            h.step();
            let now = h.state().sim.now;
            let shown = h.state().sim.live.shown.clone().unwrap();
            ahead += usize::from(shown.source.time_range().unwrap().1 > now);
            let node = h.get_by_label_contains("analyses up to t = ");
            let label = node.accesskit_node().label().or_else(|| node.value()).unwrap_or_default();
            // `t = 20.242 ms (100.020242259 s on the timeline)`: the simulated time first.
            let t = ps_of(label.rsplit("t = ").next().unwrap().split(" (").next().unwrap());
            // The label rounds to the microsecond.
            assert!(t <= now + 1_000_000, "{label:?} while the simulation is at {now} ps");
            seen += 1;
            if seen >= 5 {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(seen >= 5 && ahead == 0, "{seen} live updates seen, {ahead} with records ahead of the clock");
}

/// The texts painted last frame, with where.
fn painted_texts(h: &Harness<'static, Workbench>) -> Vec<(egui::Pos2, String)> {
    fn walk(shape: &egui::Shape, out: &mut Vec<(egui::Pos2, String)>) {
        match shape {
            egui::Shape::Text(t) => out.push((t.pos, t.galley.text().to_owned())),
            egui::Shape::Vec(v) => v.iter().for_each(|s| walk(s, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for cs in &h.output().shapes {
        walk(&cs.shape, &mut out);
    }
    out
}

#[test]
fn histograms_keep_their_axis_labels_in_log_mode() {
    // softirq entry and exit in one microsecond of the text trace: zero latencies, which
    // the log axis once stretched to 1 ps, squeezing every label away.
    // A tall window: every histogram of the panel is on screen (off-screen ones are not painted).
    let files = vec![sample("ftrace/timer_wakeups_under_load.txt")];
    let wb = Workbench::new(Options { files, ..Options::default() }, Box::new(NoPicker), Vec::new());
    let mut h = Harness::builder()
        .with_size(egui::vec2(1200.0, 3000.0))
        .with_accessibility_check(false)
        .build_ui_state(|ui, wb: &mut Workbench| wb.ui(ui), wb);
    wait(&mut h, "the answers", |wb| wb.settled() && !wb.analysis.results.is_empty());
    let ri =
        h.state().analysis.results.iter().position(|r| r.outcome.name == "softirq").expect("softirq ran");
    let min = h.state().analysis.results[ri].summary.as_ref().unwrap().stats_ns.min;
    assert_eq!(min, Some(0.0), "the sample has zero-latency softirqs");
    for log_x in [false, true] {
        h.state_mut().update(Message::Analysis(AnalysisMsg::SetPlot { plot: PlotKind::Histogram, log_x }));
        for _ in 0..3 {
            h.step();
        }
        let frame = *h
            .state()
            .frame
            .plots
            .iter()
            .find(|d| d.result == ri && d.kind == PlotKind::Histogram)
            .expect("the histogram is drawn")
            .transform
            .frame();
        let ticks: Vec<String> = painted_texts(&h)
            .into_iter()
            .filter(|(p, _)| p.y >= frame.bottom() - 2.0 && p.y <= frame.bottom() + 30.0)
            .filter(|(p, _)| p.x >= frame.left() - 40.0 && p.x <= frame.right() + 40.0)
            .map(|(_, t)| t)
            .filter(|t| t.ends_with(" ns") || t.ends_with(" us") || t.ends_with(" ms") || t.ends_with(" s"))
            .collect();
        assert!(ticks.len() >= 2, "log {log_x}: the latency axis has the labels {ticks:?}");
    }
}

#[test]
fn the_workbench_names_sources_as_the_reports_do() {
    let files = ["ftrace/virtio_blk_direct_read.txt", "ftrace/blk_read.txt"];
    let mut h = open(&files);
    set_rules(&mut h, &["block"]);
    run_analysis(&mut h);
    // By name, as `report`'s text does (no "source 1", no "input 0").
    let _ = h.get_by_label("block (virtio_blk_direct_read.txt)");
    let _ = h.get_by_label("block (blk_read.txt)");
    assert_eq!(h.query_all_by_label_contains("source 1").count(), 0);
    // What an alignment did names the source.
    let (reference, other) = (source_id(h.state(), 0), source_id(h.state(), 1));
    h.state_mut().update(Message::Align(AlignMsg::Align { reference, other, spec: align_spec("+1ms") }));
    wait(&mut h, "the alignment", |wb| !wb.aligning() && wb.doc.alignment.is_some());
    let said = h.state().analysis.panel.aligned.clone().unwrap();
    assert!(said.starts_with("blk_read.txt: offset "), "{said}");
    // The same file twice: numbered, as the reports number them.
    let h = open(&[files[0], files[0]]);
    let labels = h.state().doc.labels();
    let path = sample(files[0]).display().to_string();
    assert_eq!(labels, [format!("{path} (input 0)"), format!("{path} (input 1)")]);
}

#[test]
fn the_workbench_resolves_track_names_as_typed_in_rules_and_the_align_dialog() {
    let mut h = open(&["ghw/counter.vcd", "ghw/counter.ghw"]);
    set_rules(&mut h, &["pulse:dut.clk", "pulse:clk"]);
    run_analysis(&mut h);
    let wb = h.state();
    // `dut.clk` is counter_tb.dut.clk in both sources (50 pulses each).
    let counts: Vec<usize> = wb
        .analysis
        .results
        .iter()
        .filter(|r| r.outcome.name == "pulse:dut.clk")
        .map(|r| r.outcome.samples.len())
        .collect();
    assert_eq!(counts, [50, 50]);
    // `clk` is ambiguous: said in the window with the candidates.
    assert!(
        wb.errors
            .iter()
            .any(|e| e.contains("\"clk\" is ambiguous: it could be counter_tb.clk, counter_tb.dut.clk")),
        "{:?}",
        wb.errors
    );
    // The Align dialog matches edges named by their suffixes.
    let (reference, other) = (source_id(h.state(), 0), source_id(h.state(), 1));
    let spec = align_spec("match dut.en:rise -> dut.en:rise");
    h.state_mut().update(Message::Align(AlignMsg::Align { reference, other, spec }));
    wait(&mut h, "the alignment", |wb| !wb.aligning());
    let a = h.state().doc.alignment.clone().expect("aligned");
    assert_eq!(a.matched, 1);
}

/// The CPU a text trace prints for the `event` line at clock value `time` (`470.346097`).
fn printed_cpu(path: &std::path::Path, time: &str, event: &str) -> u16 {
    let text = std::fs::read_to_string(path).unwrap();
    let tag = format!("{time}: {event}:");
    let line = text.lines().find(|l| l.contains(&tag)).unwrap_or_else(|| panic!("no line {tag}"));
    let cpu = line.split('[').nth(1).unwrap().split(']').next().unwrap();
    cpu.parse().unwrap()
}

/// The row of lane `name` of source `si` as drawn last frame.
fn row_of(wb: &Workbench, si: usize, name: &str) -> egui::Rect {
    let sv = wb.view.shown(&wb.doc)[si];
    let li = sv.lanes.iter().position(|l| l.name == name).unwrap();
    wb.frame.layout.rows.iter().find(|(id, _)| *id == LaneId { source: sv.id, lane: li }).unwrap().1
}

#[test]
fn the_worst_case_arrow_is_drawn_on_its_events_lanes_and_goes_when_the_cursors_leave() {
    let file = "ftrace/virtio_blk_direct_read.txt";
    let mut h = open(&[file]);
    set_rules(&mut h, &["irq-handler", "block"]);
    run_analysis(&mut h);
    for (name, start_event, end_event) in [
        ("irq-handler", "irq_handler_entry", "irq_handler_exit"),
        ("block", "block_rq_issue", "block_rq_complete"),
    ] {
        let (ri, worst) = {
            let r = h.state().analysis.results.iter().position(|r| r.outcome.name == name).unwrap();
            (r, h.state().analysis.results[r].worst[0])
        };
        let s = h.state().analysis.results[ri].outcome.samples[worst].clone();
        h.state_mut().update(Message::Analysis(AnalysisMsg::ShowSample { outcome: ri, sample: worst }));
        h.step();
        h.step();
        // The CPUs the trace prints for the pair's two events.
        let src = h.state().view.shown(&h.state().doc)[0].source();
        let at = |t: i64| format!("{:.6}", src.origin.to_source_seconds(t));
        let (cpu_a, cpu_b) = (
            printed_cpu(&sample(file), &at(s.start), start_event),
            printed_cpu(&sample(file), &at(s.end), end_event),
        );
        let (pa, pb) = h.state().frame.layout.arrow.expect("the arrow is drawn");
        let (ra, rb) =
            (row_of(h.state(), 0, &format!("CPU {cpu_a}")), row_of(h.state(), 0, &format!("CPU {cpu_b}")));
        assert!(ra.y_range().contains(pa.y), "{name}: starts on CPU {cpu_a} ({ra:?}), drawn at {pa:?}");
        assert!(rb.y_range().contains(pb.y), "{name}: ends on CPU {cpu_b} ({rb:?}), drawn at {pb:?}");
        let vp = h.state().view.viewport;
        let left = h.state().frame.layout.data_left;
        assert!(
            (pa.x - vp.x_of(left, s.start as f64)).abs() < 1.0
                && (pb.x - vp.x_of(left, s.end as f64)).abs() < 1.0
        );
    }
    // With the CPU lane hidden, the start is drawn on its event's own lane.
    let (cpu, lane) = {
        let wb = h.state();
        let ar = wb.view.overlay.arrow.unwrap();
        let sv = wb.view.shown(&wb.doc)[0];
        let cpu = sv.source().events.cpu[ar.start.event.unwrap().index];
        (cpu, sv.lanes.iter().position(|l| l.name == format!("CPU {cpu}")).unwrap())
    };
    let msg = Message::View(ViewMsg::ToggleLane(LaneId { source: source_id(h.state(), 0), lane }));
    h.state_mut().update(msg);
    h.step();
    h.step();
    let (pa, _) = h.state().frame.layout.arrow.unwrap();
    assert!(row_of(h.state(), 0, "block_rq_issue").y_range().contains(pa.y), "CPU {cpu} hidden: {pa:?}");
    // Moving a cursor off the pair takes the arrow away.
    let b = h.state().view.overlay.cursor_b.unwrap();
    h.state_mut().update(Message::View(ViewMsg::SetCursor(latscope::gui::view::CursorId::B, b + 1e6)));
    h.step();
    assert!(h.state().view.overlay.arrow.is_none());
    assert!(h.state().frame.layout.arrow.is_none(), "not drawn any more");
}

#[test]
fn rules_the_user_sets_while_the_presets_run_on_open_stay_the_users() {
    let mut h =
        harness(Options { files: vec![sample("ftrace/virtio_blk_direct_read.txt")], ..Options::default() });
    wait(&mut h, "the presets run on open", |wb| wb.analysis_running());
    let rules =
        latscope::gui::analysis::RuleEditor { specs: vec!["irq-handler".into()], ..Default::default() };
    h.state_mut().update(Message::Analysis(AnalysisMsg::EditRules(rules)));
    wait(&mut h, "their answer", |wb| !wb.analysis_running());
    assert_eq!(h.state().analysis.rules.specs, ["irq-handler"], "a late answer does not replace them");
}

#[test]
#[cfg_attr(not(have_python3), ignore = "needs python3")]
fn a_capture_previewed_while_it_loads_ends_as_its_loaded_source_alone() {
    // Eight chunks: the importer sends a preview after the first (`LoadControl::with_preview`),
    // which the window shows until the load ends and the loaded source takes its place.
    let dir = std::env::temp_dir().join(format!("latscope-gui-preview-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("chunks.sr");
    let script = "import sys, zipfile\n\
        meta = '[device 1]\\ncapturefile=logic-1\\ntotal probes=8\\nsamplerate=1 MHz\\nprobe1=D0\\nprobe2=D1\\nunitsize=1\\n'\n\
        with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED) as z:\n\
        \x20   z.writestr('version', '2')\n\
        \x20   z.writestr('metadata', meta)\n\
        \x20   for k in range(8):\n\
        \x20       z.writestr(f'logic-1-{k + 1}', bytes((i // 3 + k) % 2 | ((k % 3 == 0) << 1) for i in range(4096)))\n";
    let out = latscope_testkit::Need::Python3
        .output(std::process::Command::new("python3").arg("-c").arg(script).arg(&path));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut h = harness(Options { files: vec![path.clone()], ..Options::default() });
    wait(&mut h, "loading", |wb| wb.doc.sources.len() == 1 && wb.loads().is_empty() && wb.settled());
    h.step();
    let wb = h.state();
    assert!(wb.errors.is_empty(), "{:?}", wb.errors);
    assert_eq!(wb.doc.sources.len(), 1, "the preview was replaced, not kept beside the source");
    let loaded = latscope_importers::open(&path, &latscope_importers::LoadControl::new()).unwrap();
    let shown = wb.doc.sources[0].source();
    assert_eq!(wb.previews_shown(), 0);
    assert_eq!(shown.digital.len(), loaded.digital.len());
    for (a, b) in shown.digital.iter().zip(loaded.digital.iter()) {
        assert!(!a.levels().contains(&2), "{}: no unknown stretch of a preview is left", a.name);
        assert_eq!((&a.name, a.initial, a.levels()), (&b.name, b.initial, b.levels()));
        assert!(a.times().eq(b.times()), "{}", a.name);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The Align dialog's alignment of the second source of a pair, from its text.
fn align_spec(text: &str) -> latscope_analysis::align::AlignSpec {
    latscope_analysis::align::parse_align(&format!("1:{text}")).expect("the alignment parses")
}

/// Picks the analysis panel's plot, as its buttons do (the latency axis stays).
fn set_plot(h: &mut Harness<'static, Workbench>, plot: PlotKind) {
    let log_x = h.state().analysis.panel.log_x;
    h.state_mut().update(Message::Analysis(AnalysisMsg::SetPlot { plot, log_x }));
}

/// The query window runs SQL as a job, its counts are `latscope query`'s on the same file,
/// and a row's click selects the event at the row's time and centres the view on it; bad
/// SQL is an error in the window that keeps the last result.
#[test]
fn the_query_window_answers_as_the_command_does_and_a_row_goes_to_its_event() {
    use latscope::gui::message::QueryMsg;
    let file = "ftrace/virtio_blk_direct_read.txt";
    let mut h = open(&[file]);
    h.state_mut().update(Message::Query(QueryMsg::Show));
    let sql = "SELECT name, count(*) AS n FROM events GROUP BY name ORDER BY name";
    h.state_mut().update(Message::Query(QueryMsg::Edit(sql.into())));
    h.state_mut().update(Message::Query(QueryMsg::Run));
    wait(&mut h, "the query", |wb| !wb.query_pending() && wb.query.result.is_some());
    let path = sample(file);
    let cli = cli_json(&["query", path.to_str().unwrap(), "--sql", sql, "--format", "json"]);
    let cli = cli.as_array().unwrap();
    let r = h.state().query.result.clone().unwrap();
    assert_eq!(r.columns, ["name", "n"]);
    assert_eq!(r.rows.len(), cli.len());
    for (row, c) in r.rows.iter().zip(cli) {
        assert_eq!(row[0], c["name"].as_str().unwrap());
        assert_eq!(row[1], c["n"].to_string());
    }
    // A row holding a time goes to its event.
    let sql = "SELECT time_ps, comm, sector FROM block_rq_issue ORDER BY time_ps LIMIT 5 OFFSET 3";
    h.state_mut().update(Message::Query(QueryMsg::Edit(sql.into())));
    h.state_mut().update(Message::Query(QueryMsg::Run));
    wait(&mut h, "the second query", |wb| {
        !wb.query_pending() && wb.query.result.as_ref().is_some_and(|r| r.sql == sql)
    });
    h.step();
    let wb = h.state();
    let r = wb.query.result.as_ref().unwrap();
    assert_eq!(r.rows.len(), 5);
    assert!(r.targets.iter().all(Option::is_some), "{:?}", r.targets);
    let t: f64 = r.rows[1][0].parse().unwrap();
    h.state_mut().update(Message::Query(QueryMsg::Row(1)));
    h.step();
    let wb = h.state();
    let sel = wb.view.overlay.selected.expect("the row's event is selected");
    let src = wb.view.shown(&wb.doc)[0].source();
    let ev = src.events.get(sel.index).unwrap();
    assert_eq!(src.strings.resolve(ev.name()), "block_rq_issue");
    assert_eq!(wb.doc.sources[0].to_common(src.events.ts[sel.index]), t);
    let v = wb.view.viewport;
    let centre = v.start + v.ps_per_px * wb.view.data_width() / 2.0;
    assert!((centre - t).abs() <= v.ps_per_px, "centred at {centre}, the row's time is {t}");
    // Bad SQL: the window says why, naming the column, and keeps the last result.
    h.state_mut().update(Message::Query(QueryMsg::Edit("SELECT sectr FROM block_rq_issue".into())));
    h.state_mut().update(Message::Query(QueryMsg::Run));
    wait(&mut h, "the bad query", |wb| !wb.query_pending() && wb.query.error.is_some());
    let wb = h.state();
    let e = wb.query.error.as_ref().unwrap();
    assert!(e.contains("sectr") && e.contains("block_rq_issue"), "{e}");
    assert_eq!(wb.query.result.as_ref().unwrap().sql, sql);
    h.step();
}

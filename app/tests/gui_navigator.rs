#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The navigator, driven headless as a user drives it: from a table row to its event on the
//! timeline and back, one clock everywhere, and a search that says where it is.

mod workbench_harness;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;
use latscope::gui::message::{AlignMsg, AnalysisMsg, Message, TableMsg, ViewMsg};
use latscope::gui::picker::NoPicker;
use latscope::gui::table::SearchState;
use latscope::gui::view::{CursorId, EventSel};
use latscope::gui::{Options, Workbench};
use std::path::PathBuf;
use workbench_harness::{source_id, wait};

fn sample(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join("samples").join(rel)
}

fn open_paths(files: Vec<PathBuf>) -> Harness<'static, Workbench> {
    let n = files.len();
    let wb = Workbench::new(Options { files, ..Options::default() }, Box::new(NoPicker), Vec::new());
    let mut h = workbench_harness::harness(wb, egui::vec2(1400.0, 900.0));
    wait(&mut h, "loading", |wb| wb.doc.sources.len() == n && wb.loads().is_empty() && wb.settled());
    h.step();
    h
}

fn settle(h: &mut Harness<'static, Workbench>) {
    wait(h, "the workbench to settle", |wb| wb.settled());
    for _ in 0..30 {
        h.step();
    }
}

fn filter(h: &mut Harness<'static, Workbench>, text: &str) -> usize {
    h.state_mut().update(Message::Table(TableMsg::SetFilter(text.into())));
    wait(h, "the filter", |wb| !wb.table_pending());
    settle(h);
    h.state().table.rows.rows.len()
}

/// The common time (ps) of the event `sel`.
fn common(wb: &Workbench, sel: EventSel) -> f64 {
    let sv = wb.view.shown(&wb.doc).into_iter().find(|s| s.id == sel.source).unwrap();
    sv.to_common(sv.source().events.ts[sel.index])
}

/// The text of the table's time column for `sel`: the first source's clock, as the ruler.
fn time_cell(wb: &Workbench, sel: EventSel) -> String {
    let shown = wb.view.shown(&wb.doc);
    format!("{:.6}", latscope::gui::views::timeline::common_seconds(&shown, common(wb, sel)))
}

/// Lines of a text trace (not comments) containing `word`: grep's count.
fn grep_count(path: &std::path::Path, word: &str) -> usize {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines().filter(|l| !l.starts_with('#') && l.contains(word)).count()
}

#[test]
fn a_click_on_a_table_row_selects_its_event_and_centres_the_timeline_on_it() {
    let file = sample("ftrace/virtio_blk_direct_read.txt");
    let mut h = open_paths(vec![file.clone()]);
    if !h.state().view.panels.table {
        h.state_mut().update(Message::View(ViewMsg::TogglePanel(latscope::gui::view::PanelId::Table)));
    }
    let n = filter(&mut h, "block_rq_complete");
    assert_eq!(n, grep_count(&file, "block_rq_complete:"));
    // Zoomed in far from the row's event, so centring is visible.
    h.state_mut().update(Message::View(ViewMsg::FitAll));
    let at = h.state().view.viewport.start;
    h.state_mut().update(Message::View(ViewMsg::Zoom { factor: 1e-3, at }));
    settle(&mut h);
    let row = h.state().table.rows.rows[3].sel();
    let text = time_cell(h.state(), row);
    // The row's time cell, clicked as a mouse clicks it (not a text selection).
    h.get_by_label(&text).click();
    settle(&mut h);
    assert_eq!(h.state().view.overlay.selected, Some(row));
    let (t, centre) = (common(h.state(), row), h.state().view.view_centre());
    let width = h.state().view.viewport.ps_per_px * h.state().view.data_width();
    assert!((centre - t).abs() < width * 0.01, "centred on {t}, view centre {centre}");

    // Down and Up select the next and previous rows, keeping them in view.
    h.key_press(egui::Key::ArrowDown);
    h.step();
    assert_eq!(h.state().view.overlay.selected, Some(h.state().table.rows.rows[4].sel()));
    h.key_press(egui::Key::ArrowUp);
    h.key_press(egui::Key::ArrowUp);
    h.step();
    assert_eq!(h.state().view.overlay.selected, Some(h.state().table.rows.rows[2].sel()));
}

#[test]
fn search_wraps_around_says_where_it_is_and_never_moves_a_cursor() {
    let file = sample("ftrace/virtio_blk_direct_read.txt");
    let mut h = open_paths(vec![file.clone()]);
    let n = filter(&mut h, "block_rq_issue");
    assert_eq!(n, grep_count(&file, "block_rq_issue:"));
    assert!(n > 3);
    let rows = h.state().table.rows.rows.clone();
    // Cursor A sits after the last match: the next step wraps to the first and says so.
    let after_last = common(h.state(), rows[n - 1].sel()) + 1.0;
    h.state_mut().update(Message::View(ViewMsg::SetCursor(CursorId::A, after_last)));
    h.state_mut().update(Message::Table(TableMsg::SearchStep(true)));
    assert_eq!(h.state().view.overlay.selected, Some(rows[0].sel()));
    assert_eq!(h.state().table.search, Some(SearchState::At { at: 1, wrapped: true }));
    h.step();
    let _ = h.get_by_label(&format!("match 1 of {n} (wrapped around)"));
    // On from the selection, then back past the first: the last, wrapped.
    h.state_mut().update(Message::Table(TableMsg::SearchStep(true)));
    assert_eq!(h.state().view.overlay.selected, Some(rows[1].sel()));
    assert_eq!(h.state().table.search, Some(SearchState::At { at: 2, wrapped: false }));
    h.state_mut().update(Message::Table(TableMsg::SearchStep(false)));
    h.state_mut().update(Message::Table(TableMsg::SearchStep(false)));
    assert_eq!(h.state().view.overlay.selected, Some(rows[n - 1].sel()));
    assert_eq!(h.state().table.search, Some(SearchState::At { at: n, wrapped: true }));
    // Shift+F3 and F3 leave the cursors where the user put them.
    h.key_press_modifiers(egui::Modifiers::SHIFT, egui::Key::F3);
    h.key_press(egui::Key::F3);
    h.step();
    assert_eq!(h.state().view.overlay.cursor_a, Some(after_last));
    // A filter nothing matches says so, in the window.
    assert_eq!(filter(&mut h, "no_such_event_anywhere"), 0);
    h.state_mut().update(Message::Table(TableMsg::SearchStep(true)));
    assert_eq!(h.state().table.search, Some(SearchState::None));
    h.step();
    let _ = h.get_by_label("no event matches");
}

#[test]
fn a_trace_and_a_capture_read_one_clock_in_the_table() {
    // A kernel trace (its clock near 500 s) and a logic capture (its clock from 0), decoded:
    // placed on one timeline, the table reads the timeline's clock for both.
    let files = vec![sample("ftrace/virtio_blk_direct_read.txt"), sample("sigrok/sd_mode_imx6_snippet.sr")];
    let mut h = open_paths(files);
    workbench_harness::decode(&mut h, 1, "sd:clk=CLK,cmd=CMD");
    wait(&mut h, "the decode", |wb| wb.settled() && !wb.view.shown(&wb.doc)[1].source().events.is_empty());
    assert!(filter(&mut h, "") > 0);
    let (trace, capture) = (source_id(h.state(), 0), source_id(h.state(), 1));
    let rows = h.state().table.rows.rows.clone();
    let first_of = |id| rows.iter().find(|r| r.source == id).unwrap().sel();
    let (a, b) = (first_of(trace), first_of(capture));
    let own = |wb: &Workbench, sel: EventSel| {
        let shown = wb.view.shown(&wb.doc);
        let sv = shown.iter().find(|s| s.id == sel.source).unwrap();
        sv.source().origin.to_source_seconds(sv.source().events.ts[sel.index])
    };
    let (own_a, own_b) = (own(h.state(), a), own(h.state(), b));
    // Their own clocks are far apart; the table's column is on the trace's clock for both.
    assert!(own_a > 50.0 && own_b < 50.0, "own clocks {own_a} and {own_b}");
    let (ta, tb) = (time_cell(h.state(), a), time_cell(h.state(), b));
    let secs = |s: &str| s.parse::<f64>().unwrap();
    assert!((secs(&ta) - secs(&tb)).abs() < 50.0, "one clock: {ta} and {tb}");
    // The capture's row, selected, is drawn with that time.
    h.state_mut().update(Message::Table(TableMsg::Select(b)));
    settle(&mut h);
    assert!(h.query_all_by_label(&tb).count() >= 1, "{tb} drawn");
    assert_eq!(h.query_all_by_label(&format!("{own_b:.6}")).count(), 0, "its own clock is not the column");
    // The own-clock column gives each source's clock beside it.
    h.state_mut().update(Message::Table(TableMsg::SetOwnClock(true)));
    settle(&mut h);
    assert!(h.query_all_by_label(&format!("{own_b:.6}")).count() >= 1);
}

#[test]
fn aligning_reruns_the_analyses_and_each_result_says_where_its_sources_sat() {
    let files = vec![sample("ftrace/blk_read.txt"), sample("ftrace/markers_around_requests.txt")];
    let mut h = open_paths(files);
    workbench_harness::set_rules(&mut h, &["block"]);
    h.state_mut().update(Message::Analysis(AnalysisMsg::Run));
    wait(&mut h, "the analysis", |wb| wb.settled() && !wb.analysis.results.is_empty());
    let before = h.state().analysis.results.len();
    assert!(h.state().analysis.placement_used.contains("each source on its own clock"));

    // A hand offset, applied as the dialog applies it: the results come back without Run,
    // and say the offset was set by hand (not "0 matched, rms 0").
    h.state_mut().update(Message::Align(AlignMsg::Open));
    h.step();
    let mut d = h.state().dialogs.align.clone();
    d.by_hand = true;
    d.offset = "+1ms".into();
    h.state_mut().update(Message::Align(AlignMsg::Edit(d)));
    h.step();
    // The dialog says what the offset is relative to.
    assert!(h.query_all_by_label_contains("own time zero falls on").count() >= 1);
    h.get_by_label("Align").click();
    wait(&mut h, "the alignment and the rerun", |wb| {
        wb.doc.alignment.is_some() && wb.settled() && !wb.analysis.results.is_empty()
    });
    settle(&mut h);
    let used = h.state().analysis.placement_used.clone();
    assert!(used.starts_with("placement: aligned") && used.contains("set by hand"), "{used}");
    assert!(!used.contains("matched"), "{used}");
    assert_eq!(h.state().analysis.results.len(), before, "the same rules, run again");
    assert!(h.query_all_by_label(&used).count() >= 1, "each result shows {used}");
}

#[test]
fn the_align_dialog_warns_when_the_match_absorbs_the_latency_under_study() {
    let files = vec![sample("ftrace/blk_read.txt"), sample("ftrace/markers_around_requests.txt")];
    let mut h = open_paths(files);
    workbench_harness::set_rules(&mut h, &["io=block_rq_issue -> tracing_mark_write policy next"]);
    h.state_mut().update(Message::Align(AlignMsg::Open));
    h.step();
    let mut d = h.state().dialogs.align.clone();
    d.matching = "block_rq_issue -> tracing_mark_write".into();
    h.state_mut().update(Message::Align(AlignMsg::Edit(d.clone())));
    h.step();
    assert!(h.query_all_by_label_contains("makes the rule io read zero").count() >= 1);
    // An instant both sides see (the same event in both traces): no warning.
    d.matching = "tracing_mark_write -> tracing_mark_write".into();
    h.state_mut().update(Message::Align(AlignMsg::Edit(d)));
    h.step();
    assert_eq!(h.query_all_by_label_contains("read zero").count(), 0);
}

#[test]
fn a_decode_is_quiet_one_row_per_annotation_and_its_lanes_under_the_decoder() {
    let mut h = open_paths(vec![sample("sigrok/sd_mode_imx6_snippet.sr")]);
    workbench_harness::decode(&mut h, 0, "sd:clk=CLK,cmd=CMD");
    wait(&mut h, "the decode", |wb| wb.settled() && !wb.view.shown(&wb.doc)[0].source().events.is_empty());
    let rows = filter(&mut h, "");
    let (starts, ends) = {
        let shown = h.state().view.shown(&h.state().doc);
        let src = shown[0].source();
        let names: Vec<String> =
            src.events.iter().map(|e| src.strings.resolve(e.name()).into_owned()).collect();
        (
            names.iter().filter(|n| !n.ends_with("_end")).count(),
            names.iter().filter(|n| n.ends_with("_end")).count(),
        )
    };
    // A decode adds an event at each annotation's start and one at its end; the table lists
    // the annotation once.
    assert!(starts > 0 && starts == ends, "{starts} starts, {ends} ends");
    assert_eq!(rows, starts);
    // A filter naming the end events lists them.
    assert_eq!(filter(&mut h, "sd_cmd_end"), filter(&mut h, "sd_cmd -sd_cmd_end"));
    // The track list: the decoder's rows under it, the event lanes it added closed beneath.
    let _ = h.get_by_label("sd (decoded)");
    assert!(h.query_all_by_label_contains("its events (").count() == 1);
    assert_eq!(h.query_all_by_label("sd_cmd_end").count(), 0, "closed until opened");
}

#[test]
fn warnings_look_unlike_errors() {
    // A file that loads with warnings (its header is cut short), then one that fails.
    let mut h = open_paths(vec![sample("corpus/vcd/wellen_vcd_with_errors.vcd")]);
    assert!(!h.state().errors.is_empty());
    assert!((0..h.state().errors.len()).all(|i| h.state().errors.is_warning(i)), "{:?}", h.state().errors);
    h.step();
    assert!(h.query_all_by_label("Warning").count() >= 1);
    assert_eq!(h.query_all_by_label("Error").count(), 0);
    let missing = std::env::temp_dir().join("latscope-no-such-file.txt");
    h.state_mut().update(Message::Files(latscope::gui::message::FileMsg::Open(vec![missing])));
    wait(&mut h, "the failed load", |wb| {
        wb.loads().is_empty() && (0..wb.errors.len()).any(|i| !wb.errors.is_warning(i))
    });
    h.step();
    assert!(h.query_all_by_label("Error").count() >= 1);
}

#[test]
fn a_selected_event_shows_its_pairs_and_goes_to_their_other_ends() {
    let file = sample("ftrace/virtio_blk_direct_read.txt");
    let mut h = open_paths(vec![file.clone()]);
    wait(&mut h, "the presets", |wb| {
        wb.settled() && wb.analysis.results.iter().any(|r| r.outcome.name == "block")
    });
    // The 10th request issued, as the trace prints it; its completion is the next
    // block_rq_complete of the same sector (a small script's answer, independent of ours).
    let text = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    let issue_line = lines.iter().filter(|l| l.contains("block_rq_issue:")).nth(9).unwrap();
    let secs = |l: &str| -> f64 {
        let before = l.split(": block_rq_").next().unwrap();
        before.rsplit(' ').next().unwrap().parse().unwrap()
    };
    let sector = |l: &str| -> String {
        let after = l.split(") ").nth(1).unwrap();
        after.split(' ').next().unwrap().to_owned()
    };
    let (t_issue, s) = (secs(issue_line), sector(issue_line));
    let complete_line = lines
        .iter()
        .find(|l| l.contains("block_rq_complete:") && sector(l) == s && secs(l) > t_issue)
        .unwrap();
    let want_ps = ((secs(complete_line) - t_issue) * 1e12).round() as i64;

    assert_eq!(
        filter(&mut h, "block_rq_issue"),
        lines.iter().filter(|l| l.contains("block_rq_issue:")).count()
    );
    let issue = h.state().table.rows.rows[9].sel();
    h.state_mut().update(Message::Table(TableMsg::Select(issue)));
    settle(&mut h);
    let related = h.state().view.overlay.related.clone();
    let block = related.iter().find(|r| r.analysis == "block").expect("the block pair of the issue");
    assert_eq!(block.latency_ps, want_ps, "{issue_line}\n{complete_line}");
    assert_eq!(block.arrow.start.event, Some(issue));
    // The inspector's link goes to the other end: the completion, as the trace prints it.
    let link = latscope_model::format_seconds(want_ps) + " to its end";
    h.get_by_label(&link).click();
    settle(&mut h);
    let sel = h.state().view.overlay.selected.unwrap();
    assert_eq!(Some(sel), block.arrow.end.event);
    assert_eq!(format!("{:.6}", secs(complete_line)), time_cell(h.state(), sel));
    // From the completion, the same pair leads back.
    assert!(
        h.state()
            .view
            .overlay
            .related
            .iter()
            .any(|r| r.analysis == "block" && r.arrow.start.event == Some(issue))
    );
}

#[test]
fn a_pinned_lane_stays_at_the_top_while_the_others_scroll() {
    let mut h = open_paths(vec![sample("ftrace/timer_wakeups_under_load.txt")]);
    let source = source_id(h.state(), 0);
    let lanes = h.state().view.lanes_of(source).len();
    let last = latscope::gui::view::LaneId { source, lane: lanes - 1 };
    h.state_mut().update(Message::View(ViewMsg::PinLane(last)));
    h.state_mut().update(Message::View(ViewMsg::ScrollLanes(10_000.0)));
    settle(&mut h);
    let layout = &h.state().frame.layout;
    let (first, rect) = layout.rows[0];
    assert_eq!(first, last, "the pinned lane comes first");
    assert_eq!(rect.top(), layout.lanes_top, "right below the ruler, however far the lanes scrolled");
    // The lanes after it scrolled: the first unpinned lane is off the top.
    let (_, second) = layout.rows[1];
    assert!(second.top() < rect.bottom(), "{second:?} scrolled under the pinned {rect:?}");
    h.state_mut().update(Message::View(ViewMsg::PinLane(last)));
    settle(&mut h);
    assert_ne!(h.state().frame.layout.rows[0].0, last, "unpinned, it goes back to its place");
}

#[test]
fn a_rows_menu_narrows_the_table_to_a_task_or_a_cpu_and_hides_one() {
    let file = sample("ftrace/virtio_blk_direct_read.txt");
    let mut h = open_paths(vec![file.clone()]);
    let text = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()).collect();
    // The task column (`comm-pid`) and the CPU column (`[001]`), as a script reads them.
    let task_of = |l: &str| l.split('[').next().unwrap().trim().to_owned();
    let cpu_of = |l: &str| l.split('[').nth(1).unwrap().split(']').next().unwrap().parse::<u32>().unwrap();
    let dd = lines.iter().filter(|l| task_of(l).ends_with("-10354")).count();
    let cpu1 = lines.iter().filter(|l| cpu_of(l) == 1).count();
    assert!(dd > 0 && cpu1 > 0);
    assert_eq!(filter(&mut h, ""), lines.len());
    h.state_mut().update(Message::Table(TableMsg::AddTerm("common_pid=10354".into())));
    wait(&mut h, "the filter", |wb| !wb.table_pending());
    assert_eq!(h.state().table.rows.rows.len(), dd);
    h.state_mut().update(Message::Table(TableMsg::AddTerm("-common_cpu=1".into())));
    wait(&mut h, "the filter", |wb| !wb.table_pending());
    let dd_not_cpu1 = lines.iter().filter(|l| task_of(l).ends_with("-10354") && cpu_of(l) != 1).count();
    assert_eq!(h.state().table.rows.rows.len(), dd_not_cpu1);
    assert_eq!(h.state().table.filter, "common_pid=10354 -common_cpu=1");
    // From the row's own menu, as a user narrows it.
    assert_eq!(filter(&mut h, ""), lines.len());
    settle(&mut h);
    let first = h.state().table.rows.rows[0].sel();
    let cell = time_cell(h.state(), first);
    let at = h.get_by_label(&cell).rect().center();
    h.hover_at(at);
    h.step();
    h.event(egui::Event::PointerButton {
        pos: at,
        button: egui::PointerButton::Secondary,
        pressed: true,
        modifiers: egui::Modifiers::NONE,
    });
    h.step();
    h.event(egui::Event::PointerButton {
        pos: at,
        button: egui::PointerButton::Secondary,
        pressed: false,
        modifiers: egui::Modifiers::NONE,
    });
    h.step();
    h.step();
    let cpu = {
        let shown = h.state().view.shown(&h.state().doc);
        shown[0].source().events.cpu[first.index]
    };
    h.get_by_label(&format!("Only CPU {cpu}")).click();
    wait(&mut h, "the filter", |wb| !wb.table_pending());
    assert_eq!(h.state().table.rows.rows.len(), lines.iter().filter(|l| cpu_of(l) == u32::from(cpu)).count());
}

#[test]
fn the_status_bar_counts_the_samples_between_the_cursors() {
    let mut h = open_paths(vec![sample("sigrok/sd_mode_imx6_snippet.sr")]);
    // The capture's rate, as sigrok writes it in the archive's metadata.
    let rate = {
        let shown = h.state().view.shown(&h.state().doc);
        let m = &shown[0].source().metadata;
        m.iter().find(|(k, _)| k == "samplerate").unwrap().1.clone()
    };
    let hz = latscope_importers::sigrok::parse_samplerate(&rate).unwrap();
    let a = h.state().view.shown(&h.state().doc)[0].to_common(1_000_000_000);
    h.state_mut().update(Message::View(ViewMsg::SetCursor(CursorId::A, a)));
    h.state_mut().update(Message::View(ViewMsg::SetCursor(CursorId::B, a + 250_000_000.0)));
    h.step();
    h.step();
    // 250 us at the capture's rate.
    let n = (250e-6 * hz as f64).round() as u64;
    let _ = h.get_by_label(&format!("{n} samples"));
}

#[test]
fn the_chain_stage_table_fits_the_panel() {
    let mut h = open_paths(vec![sample("ftrace/virtio_blk_direct_read.txt")]);
    workbench_harness::set_rules(&mut h, &["chain"]);
    h.state_mut().update(Message::Analysis(AnalysisMsg::Run));
    wait(&mut h, "the chain", |wb| wb.settled() && wb.analysis.results.iter().any(|r| !r.stages.is_empty()));
    settle(&mut h);
    let stages = h.state().analysis.results.iter().find(|r| !r.stages.is_empty()).unwrap().stages.clone();
    let width = 1400.0;
    let _ = h.get_by_label("stage");
    for (name, _, st) in &stages {
        let label = h.get_by_label(name);
        assert!(label.rect().right() <= width, "{name} ends at {}", label.rect().right());
        // The p99 cell is drawn inside the window, not cut off beyond it.
        if let Some(p99) = st.p99 {
            let text = latscope_model::format_seconds((p99 * 1e3).round() as i64);
            let right = h.query_all_by_label(&text).map(|n| n.rect().right()).fold(0.0f32, f32::max);
            assert!(right > 0.0 && right <= width, "p99 {text} of {name} ends at {right}");
        }
    }
}

#[test]
fn live_results_say_they_are_the_scenarios_own_not_that_there_is_no_rule() {
    use latscope::gui::message::SimMsg;
    use latscope::gui::sim::{SimCommand, SimEdit};
    let wb = Workbench::new(Options::default(), Box::new(NoPicker), Vec::new());
    let mut h = workbench_harness::harness(wb, egui::vec2(1400.0, 900.0));
    h.state_mut().update(Message::View(ViewMsg::TogglePanel(latscope::gui::view::PanelId::Simulator)));
    h.state_mut().update(Message::Sim(SimMsg::Edit(SimEdit::MaxSpeed(true))));
    h.state_mut().update(Message::Sim(SimMsg::Command(SimCommand::Start {
        scenario: "litesdcard".into(),
        sets: vec![],
        duration: Some(20_000_000_000),
    })));
    wait(&mut h, "the simulation's analyses", |wb| {
        wb.sim.finished && !wb.analysis.results.is_empty() && wb.sim.live.shown_now == wb.sim.now
    });
    settle(&mut h);
    assert!(h.state().analysis.rules.specs.is_empty());
    assert_eq!(h.query_all_by_label("No rule yet.").count(), 0);
    let _ = h.get_by_label_contains("the scenario's own analyses");
    assert_eq!(h.state().analysis.placement_used, "placement: the simulator's clock");
}

#[test]
fn the_ab_block_shows_the_reports_intervals_and_verdicts() {
    let files = ["ftrace/virtio_blk_direct_read.txt", "ftrace/blk_read.txt"];
    let mut h = open_paths(files.iter().map(|f| sample(f)).collect());
    workbench_harness::set_rules(&mut h, &["block"]);
    h.state_mut().update(Message::Analysis(AnalysisMsg::Run));
    wait(&mut h, "the A/B", |wb| wb.settled() && wb.analysis.results.iter().any(|r| r.comparison.is_some()));
    settle(&mut h);
    // What `latscope report A B --preset block --format json` says of the change of p50.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_latscope"))
        .args(["report", sample(files[0]).to_str().unwrap(), sample(files[1]).to_str().unwrap()])
        .args(["--preset", "block", "--format", "json"])
        .output()
        .unwrap();
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let c = &j["comparison"][0];
    let [lo, hi] = [c["ci95_ns"]["p50"][0].as_f64().unwrap(), c["ci95_ns"]["p50"][1].as_f64().unwrap()];
    let signed = |ns: f64| {
        let sign = if ns < 0.0 { "-" } else { "+" };
        format!("{sign}{}", latscope_model::format_seconds((ns.abs() * 1e3).round() as i64))
    };
    let _ = h.get_by_label(&format!("[{}, {}]", signed(lo), signed(hi)));
    let verdict = c["verdict"]["p50"].as_str().unwrap();
    assert!(h.query_all_by_label_contains(verdict).count() >= 1, "{verdict}");
    let _ = h.get_by_label("95% interval of B − A");
}

#[test]
fn the_simulator_panel_says_which_question_a_scenario_answers_and_what_settings_change() {
    use latscope::gui::message::SimMsg;
    use latscope::gui::sim::SimEdit;
    let wb = Workbench::new(Options::default(), Box::new(NoPicker), Vec::new());
    let mut h = workbench_harness::harness(wb, egui::vec2(1400.0, 900.0));
    h.state_mut().update(Message::View(ViewMsg::TogglePanel(latscope::gui::view::PanelId::Simulator)));
    for scenario in ["litesdcard", "imx8mq-cpuidle"] {
        h.state_mut().update(Message::Sim(SimMsg::Edit(SimEdit::Scenario(scenario.into()))));
        h.step();
        h.step();
        // The scenario file's own words (samples/scenarios/*.toml), read here independently.
        let path = sample(&format!("scenarios/{scenario}.toml"));
        let file: toml::Table = std::fs::read_to_string(&path).unwrap().parse().unwrap();
        let question = file["question"].as_str().unwrap();
        let _ = h.get_by_label(question);
        let help = file["help"].as_table().unwrap();
        assert!(!help.is_empty());
        for key in help.keys() {
            let _ = h.get_by_label(&format!("{key} ?"));
        }
    }
}

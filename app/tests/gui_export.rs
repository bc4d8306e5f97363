#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Export, sessions, the light theme, lane names and colours, and the in-window file
//! browser, driven headless through egui_kittest on the sample captures.

mod common;
mod workbench_harness;

use common::Scratch;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;
use latscope::cli::report::{self as report_cmd, ReportArgs, ReportFormat};
use latscope::gui::export::{REPORT_FORMATS, SaveWhat, crop, save_cropped_png};
use latscope::gui::file_browser::{BrowsePurpose, BrowserAnswer, FileBrowser};
use latscope::gui::message::{AlignMsg, AnalysisMsg, FileMsg, Message, SaveMsg, ShellMsg, ViewMsg};
use latscope::gui::picker::PresetPicker;
use latscope::gui::theme::{self, ThemeKind};
use latscope::gui::view::{CursorId, LaneId};
use latscope::gui::{Options, Workbench};
use latscope_analysis::report::Format;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use workbench_harness::{set_rules, source_id, take_errors, wait};

fn sample(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join("samples").join(rel)
}

fn tempdir(tag: &str) -> Scratch {
    Scratch::new(&format!("gui-export-{tag}"))
}

/// Reports state their date: `SOURCE_DATE_EPOCH` fixes it, so a report exported here and
/// the one `latscope report` writes a moment later can be equal byte for byte. Set once,
/// before this binary's tests start their workbenches and reports (Rust's own reads of the
/// environment are locked against the write).
fn fixed_report_date() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    // SAFETY: every test here reaches this before it starts threads of its own, and the
    // others wait on the `Once` until the variable is set.
    #[allow(unsafe_code)]
    ONCE.call_once(|| unsafe { std::env::set_var("SOURCE_DATE_EPOCH", "1764900000") });
}

/// A workbench whose save dialog answers `dir/<default name>` at once.
fn harness(files: Vec<PathBuf>, dir: &Path) -> Harness<'static, Workbench> {
    fixed_report_date();
    let picker = PresetPicker { dir: dir.to_owned(), open: Vec::new() };
    let wb = Workbench::new(Options { files, ..Options::default() }, Box::new(picker), Vec::new());
    workbench_harness::harness(wb, egui::vec2(1400.0, 900.0))
}

fn open(files: &[PathBuf], dir: &Path) -> Harness<'static, Workbench> {
    let mut h = harness(files.to_vec(), dir);
    let n = files.len();
    wait(&mut h, "loading", |wb| wb.doc.sources.len() == n && wb.loads().is_empty() && !wb.table_pending());
    h.step();
    h
}

/// Saves `what` where the picker answers (`dir/<default name>`) and waits for the notice
/// that names the file written.
fn save(h: &mut Harness<'static, Workbench>, dir: &Path, what: SaveWhat) {
    let path = dir.join(what.default_name());
    // Gone first, so that its being there again means this save wrote it.
    std::fs::remove_file(&path).ok();
    h.state_mut().update(Message::Save(SaveMsg::Export(what)));
    let said = format!("saved {}", path.display());
    wait(h, "the save", |wb| {
        (path.exists() && wb.saves_running() == 0 && wb.notice.as_deref() == Some(said.as_str()))
            || !wb.errors.is_empty()
    });
    assert!(h.state().errors.is_empty(), "{:?}", h.state().errors);
}

fn cli_format(f: Format) -> ReportFormat {
    match f {
        Format::Json => ReportFormat::Json,
        Format::Md => ReportFormat::Md,
        Format::Html => ReportFormat::Html,
        Format::Csv => ReportFormat::Csv,
        Format::Parquet => ReportFormat::Parquet,
    }
}

/// What `latscope report FILES --preset P... --format F -o DIR/cli.EXT` writes.
fn cli_report(files: &[PathBuf], presets: &[&str], f: Format, dir: &Path) -> Vec<u8> {
    cli_report_rules(files, presets, &[], f, dir)
}

/// The same with `--rule R...` after the presets.
fn cli_report_rules(files: &[PathBuf], presets: &[&str], rules: &[&str], f: Format, dir: &Path) -> Vec<u8> {
    fixed_report_date();
    let out = dir.join(format!("cli.{}", SaveWhat::Report(f).extension()));
    let args = ReportArgs {
        files: files.to_vec(),
        presets: presets.iter().map(|p| p.to_string()).collect(),
        rules: rules.iter().map(|r| r.to_string()).collect(),
        align: None,
        fail_if: Vec::new(),
        baseline: None,
        format: Some(cli_format(f)),
        output: Some(out.clone()),
        decoders: Vec::new(),
        include_errors: false,
        labels: Vec::new(),
        dataset: None,
    };
    report_cmd::run(&args).unwrap();
    std::fs::read(&out).unwrap()
}

#[test]
fn exported_reports_are_byte_for_byte_what_latscope_report_writes() {
    let dir = tempdir("bytes");
    let file = sample("ftrace/virtio_blk_direct_read.dat");
    let mut h = open(std::slice::from_ref(&file), &dir);
    set_rules(&mut h, &["irq-handler", "block"]);
    h.state_mut().update(Message::Analysis(AnalysisMsg::Run));
    wait(&mut h, "the analysis", |wb| !wb.analysis_running());
    assert_eq!(h.state().analysis.results.len(), 2, "{:?}", h.state().errors);
    assert!(h.state().analysis.results.iter().all(|r| !r.outcome.samples.is_empty()));
    // The export job shares the panel's results with its worker instead of copying them
    // on the UI thread.
    let job = h.state().report_job().unwrap();
    assert!(Arc::ptr_eq(&job.results, &h.state().analysis.results));
    for f in REPORT_FORMATS {
        let what = SaveWhat::Report(f);
        save(&mut h, &dir, what);
        let gui = std::fs::read(dir.join(what.default_name())).unwrap();
        let cli = cli_report(std::slice::from_ref(&file), &["irq-handler", "block"], f, &dir);
        assert!(!gui.is_empty());
        assert!(gui == cli, "{f:?}: the GUI's export differs from `latscope report`");
    }
    // The JSON names the input as opened and holds both analyses.
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(json["inputs"][0]["path"], file.display().to_string());
    assert_eq!(json["analyses"].as_array().unwrap().len(), 2);
    // Both say what made them: the same command line, the date of SOURCE_DATE_EPOCH.
    let command = format!("latscope report {} --preset irq-handler --preset block", file.display());
    assert_eq!(json["command"], command.as_str());
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(md.contains("- date: 2025-12-05T02:00:00Z\n"), "{md}");
    assert!(md.contains(&format!("- command: `{command}`")), "{md}");
}

/// A rule of the user's own is exported as its whole text: the command line a report
/// prints makes the same report again.
#[test]
fn an_exported_custom_rule_reads_as_its_whole_text_on_the_command_line() {
    let dir = tempdir("rule");
    let file = sample("ftrace/virtio_blk_direct_read.dat");
    let rule = "io=block_rq_issue -> block_rq_complete by sector";
    let mut h = open(std::slice::from_ref(&file), &dir);
    set_rules(&mut h, &["block", rule]);
    h.state_mut().update(Message::Analysis(AnalysisMsg::Run));
    wait(&mut h, "the analysis", |wb| !wb.analysis_running());
    assert_eq!(h.state().analysis.results.len(), 2, "{:?}", h.state().errors);
    for f in [Format::Json, Format::Md] {
        let what = SaveWhat::Report(f);
        save(&mut h, &dir, what);
        let gui = std::fs::read(dir.join(what.default_name())).unwrap();
        let cli = cli_report_rules(std::slice::from_ref(&file), &["block"], &[rule], f, &dir);
        assert!(gui == cli, "{f:?}: the GUI's export differs from `latscope report`");
    }
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    let command = format!("latscope report {} --preset block --rule '{rule}'", file.display());
    assert_eq!(json["command"], command.as_str());
}

/// File > Export trace for Perfetto, clicked in the menu: the worker writes what `latscope
/// report --format perfetto` writes for the same file and presets, and the file read back
/// holds every pair of the panel's results as a slice, to the nanosecond.
#[test]
fn the_perfetto_export_from_the_file_menu_is_what_latscope_report_writes() {
    let dir = tempdir("perfetto");
    let file = sample("perfetto/synthetic_sched_irq.pftrace");
    let presets = ["irq-handler", "softirq", "wakeup"];
    let mut h = open(std::slice::from_ref(&file), &dir);
    set_rules(&mut h, &presets);
    h.state_mut().update(Message::Analysis(AnalysisMsg::Run));
    wait(&mut h, "the analysis", |wb| !wb.analysis_running());
    assert_eq!(h.state().analysis.results.len(), 3, "{:?}", h.state().errors);
    // The sample's own load warnings (unbalanced atrace markers) are in the window: only
    // what the export says matters below.
    let warnings = take_errors(&mut h);
    assert!(warnings.iter().all(|w| w.contains("slice")), "{warnings:?}");
    let path = dir.join(SaveWhat::PerfettoTrace.default_name());
    let said = format!("saved {}", path.display());

    h.get_by_label("File").click();
    h.step();
    h.step();
    h.get_by_label("Export trace for Perfetto (ui.perfetto.dev)…").click();
    wait(&mut h, "the save", |wb| {
        (wb.saves_running() == 0 && wb.notice.as_deref() == Some(said.as_str())) || !wb.errors.is_empty()
    });
    assert!(h.state().errors.is_empty(), "{:?}", h.state().errors);

    let gui = std::fs::read(&path).unwrap();
    let cli_out = dir.join("cli-perfetto.json");
    let args = ReportArgs {
        files: vec![file.clone()],
        presets: presets.map(String::from).to_vec(),
        rules: Vec::new(),
        align: None,
        fail_if: Vec::new(),
        baseline: None,
        format: Some(ReportFormat::Perfetto),
        output: Some(cli_out.clone()),
        decoders: Vec::new(),
        include_errors: false,
        labels: Vec::new(),
        dataset: None,
    };
    report_cmd::run(&args).unwrap();
    assert!(
        gui == std::fs::read(&cli_out).unwrap(),
        "the GUI's Perfetto trace differs from `latscope report`"
    );

    // Read back: one `pair` slice per sample, named by its analysis, same start and end.
    let v: serde_json::Value = serde_json::from_slice(&gui).unwrap();
    let ns = |x: &serde_json::Value| (x.as_f64().unwrap() * 1000.0).round() as i64;
    let events = v["traceEvents"].as_array().unwrap();
    let wb = h.state();
    let origin = wb.analysis.inputs[0].source.origin;
    let origin_s = v["otherData"]["origin_s"].as_str().unwrap();
    assert!(origin_s.starts_with(&format!("{}.", origin.secs)), "{origin_s}");
    for r in wb.analysis.results.iter() {
        let o = &r.outcome;
        assert!(!o.samples.is_empty(), "{}: the sample has pairs", o.name);
        let mut want: Vec<(i64, i64)> =
            o.samples.iter().map(|s| (s.start.div_euclid(1000), s.end.div_euclid(1000))).collect();
        let mut got: Vec<(i64, i64)> = events
            .iter()
            .filter(|e| e["cat"] == "pair" && e["name"] == o.name.as_str())
            .map(|e| (ns(&e["ts"]), ns(&e["ts"]) + ns(&e["dur"])))
            .collect();
        want.sort_unstable();
        got.sort_unstable();
        assert_eq!(got, want, "{}: the slices are the panel's pairs", o.name);
    }
}

#[test]
fn export_never_replaces_an_input_and_needs_an_analysis() {
    let dir = tempdir("refuse");
    let input = dir.join("capture.txt");
    std::fs::copy(sample("ftrace/virtio_blk_direct_read.txt"), &input).unwrap();
    let before = std::fs::read(&input).unwrap();
    let mut h = open(std::slice::from_ref(&input), &dir);
    // The presets the file holds ran on open; without results there is nothing to export.
    wait(&mut h, "the presets chosen on open", |wb| wb.settled());
    // No rule at all: a run with nothing to run leaves nothing to export.
    set_rules(&mut h, &[]);
    h.state_mut().update(Message::Analysis(AnalysisMsg::Run));
    wait(&mut h, "the empty run", |wb| !wb.analysis_running());
    assert!(h.state().analysis.results.is_empty());
    for what in [SaveWhat::Report(Format::Md), SaveWhat::PerfettoTrace] {
        h.state_mut().update(Message::Save(SaveMsg::Export(what)));
        h.step();
        let errors = take_errors(&mut h);
        assert!(errors.iter().any(|e| e.contains("run an analysis first")), "{what:?}: {errors:?}");
    }

    set_rules(&mut h, &["irq-handler"]);
    h.state_mut().update(Message::Analysis(AnalysisMsg::Run));
    wait(&mut h, "the analysis", |wb| !wb.analysis_running());
    for what in
        [SaveWhat::Report(Format::Md), SaveWhat::PerfettoTrace, SaveWhat::Session, SaveWhat::TimelinePng]
    {
        h.state_mut().update(Message::Save(SaveMsg::SaveTo(what, input.clone())));
        h.step();
        let errors = take_errors(&mut h);
        assert!(errors.iter().any(|e| e.contains("refusing to overwrite an input")), "{what:?}: {errors:?}");
    }
    // Through another name of the same file, too.
    let link = dir.join("link.md");
    std::fs::hard_link(&input, &link).unwrap();
    h.state_mut().update(Message::Save(SaveMsg::SaveTo(SaveWhat::Report(Format::Md), link)));
    h.step();
    assert!(h.state().errors.iter().any(|e| e.contains("refusing")), "{:?}", h.state().errors);
    assert_eq!(std::fs::read(&input).unwrap(), before);
    assert_eq!(h.state().saves_running(), 0);
}

/// Sets up everything a session keeps on a workbench with two captures.
fn arrange(h: &mut Harness<'static, Workbench>) {
    let wb = h.state_mut();
    // As the user sets them: the rule list is theirs from now on, whenever the presets run on
    // open answer.
    let rules = latscope::gui::analysis::RuleEditor {
        specs: vec!["irq-handler".into(), "block".into()],
        ..Default::default()
    };
    wb.update(Message::Analysis(AnalysisMsg::EditRules(rules)));
    let (lo, hi) = wb.time_range().unwrap();
    wb.update(Message::View(ViewMsg::SetCursor(CursorId::A, lo + (hi - lo) * 0.25)));
    wb.update(Message::View(ViewMsg::AddMarker));
    wb.update(Message::View(ViewMsg::RenameMarker(0, "first request".into())));
    wb.update(Message::View(ViewMsg::SetCursor(CursorId::B, lo + (hi - lo) * 0.5)));
    wb.update(Message::View(ViewMsg::ShowRange(lo + (hi - lo) * 0.1, lo + (hi - lo) * 0.6)));
    let (s0, s1) = (source_id(wb, 0), source_id(wb, 1));
    let lane = LaneId { source: s0, lane: 2 };
    wb.update(Message::View(ViewMsg::MoveLane(lane, -2)));
    wb.update(Message::View(ViewMsg::ToggleLane(LaneId { source: s0, lane: 1 })));
    wb.update(Message::View(ViewMsg::RenameLane(LaneId { source: s1, lane: 0 }, "clock line".into())));
    wb.update(Message::View(ViewMsg::SetLaneColor(
        LaneId { source: s1, lane: 1 },
        egui::Color32::from_rgb(0x12, 0x34, 0x56),
    )));
    wb.update(Message::Shell(ShellMsg::SetTheme(ThemeKind::Light)));
}

#[test]
fn a_saved_session_restores_everything_in_a_fresh_workbench() {
    let dir = tempdir("session");
    let files = [sample("ftrace/virtio_blk_direct_read.txt"), sample("sigrok/demo_4ch_1mhz.sr")];
    let mut h = open(&files, &dir);
    arrange(&mut h);
    // An alignment by hand (the Align dialog's) of the second source: its own clock has
    // nothing in common with the trace's, so this is its placement.
    let offset = 1_234_567;
    let (reference, other) = (source_id(h.state(), 0), source_id(h.state(), 1));
    let spec = latscope_analysis::align::AlignSpec::Manual { source: 1, offset, drift_ppm: 12.5 };
    h.state_mut().update(Message::Align(AlignMsg::Align { reference, other, spec }));
    wait(&mut h, "the alignment", |wb| !wb.aligning());
    let saved = h.state().session();
    assert_eq!(saved.files.len(), 2);
    assert_eq!(saved.files[1].offset_ps, offset, "the offset was not set");
    assert_eq!(saved.theme, ThemeKind::Light);
    save(&mut h, &dir, SaveWhat::Session);
    let path = dir.join("workbench.latscope.json");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("\"latscope_session\": 1") && text.contains("clock line"), "{text}");

    let mut fresh = harness(Vec::new(), &dir);
    fresh.step();
    fresh.state_mut().update(Message::Files(FileMsg::Open(vec![path])));
    wait(&mut fresh, "the session", |wb| wb.doc.sources.len() == 2 && !wb.session_pending());
    fresh.step();
    let wb = fresh.state();
    assert!(wb.errors.is_empty(), "{:?}", wb.errors);
    assert_eq!(wb.session(), saved);
    // And the restored state is what the workbench uses, not only what it would save.
    assert_eq!(wb.theme, ThemeKind::Light);
    assert_eq!(theme::current(), ThemeKind::Light);
    assert!(!fresh.ctx.global_style().visuals.dark_mode);
    assert_eq!(wb.doc.sources[1].placement, latscope_model::Placement::new(offset, 12.5));
    assert_eq!(wb.view.lanes_of(source_id(wb, 1))[0].name, "clock line");
    assert_eq!(wb.view.overlay.markers[0].0, "first request");
    assert_eq!(wb.analysis.rules.specs, ["irq-handler", "block"]);
    let _ = fresh.get_by_label("clock line");
    // The session's rules run again on the restored sources.
    wait(&mut fresh, "the analysis", |wb| !wb.analysis_running() && !wb.analysis.results.is_empty());
    let wb = fresh.state();
    assert!(wb.errors.is_empty(), "{:?}", wb.errors);
    let src = wb.doc.sources[0].source();
    let entries = src.events.iter().filter(|e| src.strings.resolve(e.name()) == "irq_handler_entry");
    let irq = wb.analysis.results.iter().find(|r| r.outcome.name == "irq-handler").expect("irq-handler ran");
    assert_eq!(irq.outcome.samples.len() as u64 + irq.outcome.unmatched_start, entries.count() as u64);
}

#[test]
fn a_session_with_a_missing_file_says_so_and_restores_the_rest() {
    let dir = tempdir("missing");
    let present = sample("ftrace/virtio_blk_direct_read.txt");
    let gone = dir.join("gone.dat");
    let session = format!(
        r##"{{"latscope_session": 1,
            "files": [{{"path": {gone:?}}}, {{"path": {present:?}, "lanes": [{{"lane": "CPU 0", "name": "boot cpu", "visible": true, "color": "#ff0000"}}]}}],
            "rules": ["block"],
            "markers": [{{"name": "here", "t_ps": 5.0e9}}],
            "cursor_a": 4.0e9,
            "view": {{"start_ps": 1.0e9, "ps_per_px": 2.0e6}},
            "theme": "dark"}}"##
    );
    let path = dir.join("broken.latscope.json");
    std::fs::write(&path, session).unwrap();
    let mut h = harness(Vec::new(), &dir);
    h.step();
    h.state_mut().update(Message::Files(FileMsg::Open(vec![path])));
    wait(&mut h, "the session", |wb| wb.doc.sources.len() == 1 && !wb.session_pending());
    h.step();
    let wb = h.state();
    assert_eq!(wb.errors.len(), 1, "{:?}", wb.errors);
    assert!(wb.errors[0].contains("gone.dat is missing"), "{:?}", wb.errors);
    assert_eq!(wb.analysis.rules.specs, ["block"]);
    assert_eq!(wb.view.overlay.markers, [("here".to_owned(), 5.0e9)]);
    assert_eq!(wb.view.overlay.cursor_a, Some(4.0e9));
    assert_eq!((wb.view.viewport.start, wb.view.viewport.ps_per_px), (1.0e9, 2.0e6));
    let cpu0 = &wb.view.lanes_of(source_id(wb, 0))[0];
    assert_eq!((cpu0.name.as_str(), cpu0.color), ("boot cpu", egui::Color32::RED));
}

/// A session without a view of its own shows every file where it places it: a logic
/// capture a recording placed by the host's clocks, 1000 s after the trace's time zero, is
/// in view once the session is restored, not where it sat before it was placed.
#[test]
fn a_session_without_a_view_fits_the_files_where_it_places_them() {
    let dir = tempdir("placed-fit");
    let trace = sample("ftrace/virtio_blk_direct_read.txt");
    let logic = sample("corpus/sigrok/lazysig_spi_24mhz.sr");
    let offset: i64 = 1_000_000_000_000_000;
    let session = format!(
        r##"{{"latscope_session": 1,
            "files": [{{"path": {trace:?}}}, {{"path": {logic:?}, "offset_ps": {offset}, "placed_by": "host clocks (±1 ms)"}}]}}"##
    );
    let path = dir.join("placed.latscope.json");
    std::fs::write(&path, session).unwrap();
    let mut h = harness(Vec::new(), &dir);
    h.step();
    h.state_mut().update(Message::Files(FileMsg::Open(vec![path])));
    wait(&mut h, "the session", |wb| wb.doc.sources.len() == 2 && !wb.session_pending());
    h.step();
    let wb = h.state();
    let placed = &wb.doc.sources[1];
    let (a, b) = placed.source().time_range().unwrap();
    let (a, b) = (placed.to_common(a), placed.to_common(b));
    assert!(a >= offset as f64, "the capture is placed: {a}");
    let v = &wb.view.viewport;
    let shown = (v.start, v.start + wb.view.width as f64 * v.ps_per_px);
    assert!(shown.0 <= a && shown.1 >= b, "the view {shown:?} holds the placed capture {:?}", (a, b));
}

/// A session whose rules read decoded events runs them once its decoders are done (they
/// ran before and found nothing), and finds what `latscope report` finds in the file.
#[test]
fn a_sessions_rules_over_decoded_events_run_after_its_decoders() {
    let dir = tempdir("decoded-rules");
    let sr = sample("corpus/sigrok/sd_imx6_working_snippet.sr");
    let session = format!(
        r##"{{"latscope_session": 1,
            "files": [{{"path": {sr:?}, "decoders": ["sd:clk=CLK,cmd=CMD"]}}],
            "rules": ["sd-cmd-resp"]}}"##
    );
    let path = dir.join("decoded.latscope.json");
    std::fs::write(&path, session).unwrap();
    let mut h = harness(Vec::new(), &dir);
    h.step();
    h.state_mut().update(Message::Files(FileMsg::Open(vec![path])));
    wait(&mut h, "the session and its analysis", |wb| {
        !wb.session_pending() && !wb.analysis_running() && !wb.analysis.results.is_empty()
    });
    let wb = h.state();
    assert!(wb.errors.is_empty(), "{:?}", wb.errors);
    let ran = wb.analysis.results.iter().find(|r| r.outcome.name == "sd-cmd-resp").expect("sd-cmd-resp ran");
    let report = std::process::Command::new(env!("CARGO_BIN_EXE_latscope"))
        .arg("report")
        .arg(&sr)
        .args(["--decoder", "sd:clk=CLK,cmd=CMD", "--preset", "sd-cmd-resp", "--format", "json"])
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
    let count = report["analyses"][0]["count"].as_u64().unwrap();
    assert!(count > 0, "{report}");
    let kept = ran.outcome.samples.len() as u64;
    assert_eq!(kept, count);
}

#[test]
fn a_malformed_session_is_an_error_naming_file_line_and_column() {
    let dir = tempdir("malformed");
    let path = dir.join("bad.latscope.json");
    std::fs::write(&path, "{\"latscope_session\": 1,\n  \"files\": [}").unwrap();
    let mut h = harness(Vec::new(), &dir);
    h.state_mut().update(Message::Files(FileMsg::Open(vec![path])));
    wait(&mut h, "the error", |wb| !wb.errors.is_empty());
    let e = &h.state().errors[0];
    assert!(e.contains("bad.latscope.json") && e.contains("line 2"), "{e}");
}

#[test]
fn timeline_png_is_the_crop_of_the_screenshot() {
    let dir = tempdir("png");
    let (w, h) = (40, 30);
    let pixels = (0..w * h).map(|i| egui::Color32::from_rgb((i % w) as u8, (i / w) as u8, 7)).collect();
    let image = egui::ColorImage::new([w, h], pixels);
    let rect = egui::Rect::from_min_max(egui::pos2(5.0, 10.0), egui::pos2(25.0, 40.0));
    let c = crop(&image, rect).unwrap();
    assert_eq!(c.size, [20, 20], "clipped to the image");
    assert_eq!(c.pixels[0], egui::Color32::from_rgb(5, 10, 7));
    assert_eq!(c.pixels[20 * 19 + 19], egui::Color32::from_rgb(24, 29, 7));
    assert!(crop(&image, egui::Rect::from_min_max(egui::pos2(50.0, 0.0), egui::pos2(60.0, 5.0))).is_none());

    let out = dir.join("timeline.png");
    save_cropped_png(&image, rect, &out, &[]).unwrap();
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&out).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (20, 20));
    assert_eq!(&buf[..4], &[5, 10, 7, 255]);
    // Never over an input.
    let input = dir.join("input.png");
    std::fs::write(&input, b"keep").unwrap();
    assert!(save_cropped_png(&image, rect, &input, std::slice::from_ref(&input)).is_err());
    assert_eq!(std::fs::read(&input).unwrap(), b"keep");
}

#[test]
fn light_theme_darkens_default_lane_colours_and_keeps_chosen_ones() {
    let dir = tempdir("theme");
    let mut h = open(&[sample("sigrok/demo_4ch_1mhz.sr")], &dir);
    let s0 = source_id(h.state(), 0);
    let defaults: Vec<egui::Color32> = h.state().view.lanes_of(s0).iter().map(|v| v.color).collect();
    let chosen = egui::Color32::from_rgb(0x12, 0x34, 0x56);
    h.state_mut().update(Message::View(ViewMsg::SetLaneColor(LaneId { source: s0, lane: 0 }, chosen)));
    h.state_mut().update(Message::Shell(ShellMsg::ToggleTheme));
    h.step();
    assert_eq!(theme::current(), ThemeKind::Light);
    assert!(!h.ctx.global_style().visuals.dark_mode);
    let lanes = h.state().view.lanes_of(s0);
    assert_eq!(lanes[0].color, chosen);
    for (v, d) in lanes.iter().zip(&defaults).skip(1) {
        assert_eq!(v.color, theme::on_light(*d));
        // Readable on the light background: clearly darker than it.
        let luma =
            |c: egui::Color32| 0.299 * f32::from(c.r()) + 0.587 * f32::from(c.g()) + 0.114 * f32::from(c.b());
        assert!(luma(theme::BG.light) - luma(v.color) > 60.0, "{:?} too light", v.color);
    }
    h.state_mut().update(Message::Shell(ShellMsg::ToggleTheme));
    h.step();
    let now: Vec<egui::Color32> = h.state().view.lanes_of(s0).iter().map(|v| v.color).collect();
    assert_eq!(now[0], chosen);
    assert_eq!(now[1..], defaults[1..]);
    assert!(h.ctx.global_style().visuals.dark_mode);
}

#[test]
fn palette_offers_every_export() {
    let names: Vec<&str> = latscope::gui::views::palette::matching("export").iter().map(|a| a.name).collect();
    assert_eq!(names.len(), 6, "{names:?}");
    assert!(names.contains(&"Export trace for Perfetto (ui.perfetto.dev)…"), "{names:?}");
    assert_eq!(latscope::gui::views::palette::matching("session").len(), 2);
    assert_eq!(latscope::gui::views::palette::matching("theme").len(), 1);
}

#[test]
fn in_window_browser_opens_a_capture_from_a_directory() {
    let dir = tempdir("browser");
    std::fs::create_dir_all(dir.join("captures")).unwrap();
    std::fs::copy(sample("ftrace/virtio_blk_direct_read.txt"), dir.join("captures/read.txt")).unwrap();
    std::fs::write(dir.join("notes.md"), "x").unwrap();
    // The browser starts where the last file opened was.
    let picker = PresetPicker { dir: dir.to_path_buf(), open: Vec::new() };
    let recent = vec![dir.join("notes.md")];
    let wb = Workbench::new(Options::default(), Box::new(picker), recent);
    let mut h = workbench_harness::harness(wb, egui::vec2(1400.0, 900.0));
    h.state_mut().update(Message::Save(SaveMsg::BrowseFiles(BrowsePurpose::Open)));
    h.run_steps(2);
    let names: Vec<&str> =
        h.state().dialogs.browser.as_ref().unwrap().entries.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["captures", "notes.md"], "directories first");
    h.get_by_label("captures/").click();
    h.run_steps(2);
    assert_eq!(h.state().dialogs.browser.as_ref().unwrap().dir, dir.join("captures"));
    // The window takes a few frames to settle its size around the new listing.
    h.run_steps(4);
    h.get_by_label("read.txt").click();
    h.run_steps(2);
    assert_eq!(h.state().dialogs.browser.as_ref().unwrap().file, "read.txt");
    h.get_by_label("Open").click();
    h.run_steps(2);
    assert!(
        h.state().dialogs.browser.is_none(),
        "the browser closes once it answered: {:?}",
        h.state().dialogs.browser
    );
    wait(&mut h, "loading", |wb| wb.doc.sources.len() == 1 && wb.loads().is_empty());
    assert_eq!(
        h.state().doc.sources[0].source().path.as_deref(),
        Some(dir.join("captures/read.txt").as_path())
    );

    // Saving: the typed name in the listed directory.
    let mut b = FileBrowser::new(BrowsePurpose::Save(SaveWhat::Session), dir.to_path_buf());
    assert_eq!(b.file, "workbench.latscope.json");
    match b.confirm() {
        Some(BrowserAnswer::SaveTo(SaveWhat::Session, p)) => {
            assert_eq!(p, dir.join("workbench.latscope.json"))
        }
        other => panic!("{other:?}"),
    }
    let mut b = FileBrowser::new(BrowsePurpose::Open, dir.to_path_buf());
    b.file = "missing.dat".into();
    assert!(b.confirm().is_none());
    assert!(b.error.as_deref().unwrap().contains("no such file"));
}

#[test]
fn lanes_are_renamed_and_recoloured_from_the_track_list() {
    let dir = tempdir("lanes");
    let mut h = open(&[sample("sigrok/demo_4ch_1mhz.sr")], &dir);
    let s0 = source_id(h.state(), 0);
    let d1 = h.state().view.lanes_of(s0).iter().position(|v| v.name == "D1").unwrap();
    h.get_by_label("D1").click_secondary();
    h.run_steps(2);
    let _ = h.get_by_label("Colour");
    let _ = h.get_by_label("Name");
    let id = LaneId { source: s0, lane: d1 };
    h.state_mut().update(Message::View(ViewMsg::RenameLane(id, "SD clock".into())));
    h.state_mut().update(Message::View(ViewMsg::SetLaneColor(id, egui::Color32::from_rgb(200, 30, 30))));
    h.key_press(egui::Key::Escape);
    h.run_steps(3);
    let v = &h.state().view.lanes_of(s0)[d1];
    assert_eq!((v.name.as_str(), v.color), ("SD clock", egui::Color32::from_rgb(200, 30, 30)));
    // The data lane keeps its own name; the track list shows the new one.
    assert_eq!(h.state().doc.sources[0].prepared.lanes[v.lane].name, "D1");
    assert!(h.query_by_label("SD clock").is_some());
    assert!(h.query_by_label("D1").is_none());
}

#[test]
fn an_ab_export_compares_the_sources_in_timeline_order_like_the_command_line() {
    let dir = tempdir("ab");
    let files = [sample("ftrace/virtio_blk_direct_read.dat"), sample("ftrace/blk_read_v6.dat")];
    let mut h = open(&files, &dir);
    set_rules(&mut h, &["block"]);
    h.state_mut().update(Message::Analysis(AnalysisMsg::Run));
    wait(&mut h, "the analysis", |wb| !wb.analysis_running());
    assert_eq!(h.state().analysis.results.len(), 2, "{:?}", h.state().errors);
    // Loads finish in any order; the report follows the timeline's.
    let order: Vec<PathBuf> =
        h.state().doc.sources.iter().map(|s| s.source().path.clone().unwrap()).collect();
    for f in [Format::Json, Format::Md] {
        let what = SaveWhat::Report(f);
        save(&mut h, &dir, what);
        let cli = cli_report(&order, &["block"], f, &dir);
        let gui = std::fs::read(dir.join(what.default_name())).unwrap();
        assert!(gui == cli, "{f:?} differs");
    }
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(json["comparison"].as_array().unwrap().len(), 1, "A/B comparison of `block`");
}

#[test]
fn a_timeline_png_needs_a_timeline() {
    let dir = tempdir("nopng");
    let mut h = harness(Vec::new(), &dir);
    h.step();
    h.state_mut().update(Message::Save(SaveMsg::Export(SaveWhat::TimelinePng)));
    h.step();
    assert!(h.state().errors.iter().any(|e| e.contains("nothing on the timeline")), "{:?}", h.state().errors);
    assert_eq!(h.state().saves_running(), 0);
}

/// eframe's storage as a map, as the native window keeps it in a file.
#[derive(Default)]
struct MemoryStorage(std::collections::HashMap<String, String>);

impl eframe::Storage for MemoryStorage {
    fn get_string(&self, key: &str) -> Option<String> {
        self.0.get(key).cloned()
    }
    fn set_string(&mut self, key: &str, value: String) {
        self.0.insert(key.to_owned(), value);
    }
    fn remove_string(&mut self, key: &str) {
        self.0.remove(key);
    }
    fn flush(&mut self) {}
}

#[test]
fn the_theme_is_kept_in_eframe_storage_across_runs() {
    let dir = tempdir("storage");
    let mut h = harness(Vec::new(), &dir);
    h.state_mut().update(Message::Shell(ShellMsg::ToggleTheme));
    h.step();
    let mut storage = MemoryStorage::default();
    eframe::App::save(h.state_mut(), &mut storage);
    let mut next = Workbench::new(Options::default(), Box::new(PresetPicker::default()), Vec::new());
    assert_eq!(next.theme, ThemeKind::Dark);
    next.restore_look(&storage);
    assert_eq!(next.theme, ThemeKind::Light);
}

#[test]
fn screenshot_png_is_encoded_and_written_by_a_worker() {
    let dir = tempdir("shot");
    let out = dir.join("shot.png");
    let picker = PresetPicker { dir: dir.to_path_buf(), open: Vec::new() };
    let options = Options { screenshot: Some(out.clone()), ..Options::default() };
    let wb = Workbench::new(options, Box::new(picker), Vec::new());
    let mut h = Harness::builder()
        .with_size(egui::vec2(600.0, 400.0))
        .with_accessibility_check(false)
        .build_ui_state(|ui, wb: &mut Workbench| wb.ui(ui), wb);
    h.step();
    let (w, ht) = (40, 30);
    let pixels = (0..w * ht).map(|i| egui::Color32::from_rgb((i % w) as u8, (i / w) as u8, 9)).collect();
    h.state_mut()
        .update(Message::Save(SaveMsg::ScreenshotTaken(Arc::new(egui::ColorImage::new([w, ht], pixels)))));
    // The UI thread only hands the image over: the file is reported by the worker's message,
    // which a frame receives.
    assert!(h.state().screenshot_saved.is_none());
    wait(&mut h, "the screenshot", |wb| wb.screenshot_saved.is_some() || !wb.errors.is_empty());
    assert!(h.state().errors.is_empty(), "{:?}", h.state().errors);
    assert_eq!(h.state().screenshot_saved.as_deref(), Some(out.as_path()));
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&out).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (40, 30));
    assert_eq!(&buf[(29 * 40 + 39) * 4..][..4], &[39, 29, 9, 255]);
}

#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Image snapshots of the workbench as it is really drawn: egui_kittest renders each scene
//! with wgpu on a software renderer (Mesa's lavapipe Vulkan driver, Debian's
//! `mesa-vulkan-drivers`; no GPU or display needed) and compares it with the PNG committed
//! in `app/tests/snapshots/`.
//!
//! - A mismatch fails the test and leaves `NAME.new.png` (what was drawn) and
//!   `NAME.diff.png` (the differing pixels) beside `NAME.png` for the developer.
//! - After a deliberate change of the look: `UPDATE_SNAPSHOTS=1 cargo test --workspace --test
//!   gui_snapshots`, look at every changed PNG, and commit them (`optipng -o2` first halves
//!   their size; the comparison is by pixels, so that changes nothing).
//!
//! The scenes are deterministic: a fixed window size and scale, egui's built-in fonts,
//! no pointer, kittest's settings (no animation, no blinking cursor), the simulator's fixed
//! seed, and nothing that shows the wall clock.

use egui_kittest::Harness;
use latscope::gui::message::{DecoderMsg, FileMsg, Message, ShellMsg, SimMsg, ViewMsg};
use latscope::gui::picker::NoPicker;
use latscope::gui::sim::{SimCommand, SimEdit};
use latscope::gui::view::PanelId;
use latscope::gui::{Options, Workbench};
use std::path::PathBuf;
use std::time::Duration;

/// Small enough to keep the PNGs small, large enough for every panel.
const SIZE: egui::Vec2 = egui::vec2(1200.0, 760.0);

fn sample(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join("samples").join(rel)
}

fn harness(options: Options) -> Harness<'static, Workbench> {
    let wb = Workbench::new(options, Box::new(NoPicker), Vec::new());
    Harness::builder()
        .with_size(SIZE)
        .with_pixels_per_point(1.0)
        .with_accessibility_check(false)
        .build_ui_state(|ui, wb: &mut Workbench| wb.ui(ui), wb)
}

/// Steps frames until `done` holds and the workbench has settled (workers answer
/// asynchronously), then a few more so layout and meshes are final.
fn settle(h: &mut Harness<'static, Workbench>, what: &str, done: impl Fn(&Workbench) -> bool) {
    for _ in 0..6000 {
        h.step();
        if done(h.state()) && h.state().settled() {
            for _ in 0..6 {
                h.step();
            }
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    panic!("timed out waiting for {what}: {:?}", h.state());
}

fn open(files: &[&str]) -> Harness<'static, Workbench> {
    let n = files.len();
    let mut h = harness(Options { files: files.iter().map(|f| sample(f)).collect(), ..Options::default() });
    settle(&mut h, "loading", |wb| wb.doc.sources.len() == n);
    h
}

#[test]
fn ftrace_workbench_with_answers_on_open() {
    let mut h = open(&["ftrace/virtio_blk_direct_read.txt"]);
    assert!(!h.state().analysis.results.is_empty(), "the presets ran on open");
    h.snapshot("ftrace_answers_on_open");
}

#[test]
fn two_sources_on_one_clock() {
    let mut h = open(&["ftrace/virtio_blk_direct_read.txt", "ftrace/markers_around_requests.txt"]);
    h.snapshot("two_sources_one_clock");
}

#[test]
fn sigrok_capture() {
    let mut h = open(&["sigrok/mixed_100khz_2logic_1analog.sr"]);
    assert!(h.state().errors.is_empty(), "{:?}", h.state().errors);
    h.snapshot("sigrok_capture");
}

#[test]
fn sd_capture_decoded_with_the_add_decoder_dialog() {
    let spec = "sd:clk=CLK,cmd=CMD,dat0=DAT0,dat1=DAT1,dat2=DAT2,dat3=DAT3";
    let mut h = harness(Options {
        files: vec![sample("sigrok/sd_mode_imx6_snippet.sr")],
        decoders: vec![spec.into()],
        ..Options::default()
    });
    let decoded = |wb: &Workbench| wb.doc.sources.first().is_some_and(|s| !s.source().spans.is_empty());
    settle(&mut h, "the decode", decoded);
    assert!(h.state().errors.is_empty(), "{:?}", h.state().errors);
    // Zoomed onto the first commands and answers (CMD0, CMD8 and its R7), so their text is
    // readable, with the dialog open as it guesses the same bus (already decoded: refused).
    let sv = &h.state().doc.sources[0];
    let (a, b, id) = (sv.to_common(11_300_000_000), sv.to_common(12_000_000_000), sv.id);
    h.state_mut().update(Message::View(ViewMsg::ShowRange(a, b)));
    h.state_mut().update(Message::Decoder(DecoderMsg::Open(Some(id))));
    settle(&mut h, "the dialog", |wb| wb.dialogs.decoder.open);
    assert_eq!(h.state().dialogs.decoder.spec, spec);
    assert!(h.state().dialogs.decoder.problem.as_deref().is_some_and(|p| p.contains("already decoded")));
    h.snapshot("sd_decoded_add_decoder");
}

#[test]
fn simulator_panel() {
    let mut h = harness(Options::default());
    h.state_mut().update(Message::View(ViewMsg::TogglePanel(PanelId::Simulator)));
    h.state_mut().update(Message::Sim(SimMsg::Edit(SimEdit::MaxSpeed(true))));
    h.state_mut().update(Message::Sim(SimMsg::Command(SimCommand::Start {
        scenario: "litesdcard".into(),
        sets: vec![],
        duration: Some(20_000_000_000),
    })));
    settle(&mut h, "the simulation", |wb| {
        wb.sim.finished && !wb.sim.metrics.is_empty() && wb.sim.live.shown_now == wb.sim.now
    });
    // Where the followed view ends up depends on how many snapshots the run took (wall
    // clock); the whole run fitted does not.
    h.state_mut().update(Message::View(ViewMsg::FitAll));
    for _ in 0..4 {
        h.step();
    }
    h.snapshot("simulator_panel");
}

#[test]
fn error_banner_with_a_long_message() {
    // `head -c 200000 /dev/urandom > g.dat; latscope g.dat`, with fixed bytes at a fixed
    // path (the message names it), then a real trace.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let bytes: Vec<u8> = (0..200_000)
        .map(|_| {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (x >> 56) as u8
        })
        .collect();
    let garbage = PathBuf::from("/tmp/latscope-snapshot-g.dat");
    std::fs::write(&garbage, bytes).unwrap();
    let mut h = harness(Options { files: vec![garbage.clone()], ..Options::default() });
    settle(&mut h, "the error", |wb| !wb.errors.is_empty());
    h.state_mut().update(Message::Files(FileMsg::Open(vec![sample("ftrace/virtio_blk_direct_read.txt")])));
    settle(&mut h, "the trace", |wb| wb.doc.sources.len() == 1 && !wb.analysis.results.is_empty());
    let long = format!(
        "{}: {}",
        garbage.display(),
        "this message is long on purpose, to show that the banner wraps it inside the window \
         and keeps its close button in view. "
            .repeat(5)
    );
    h.state_mut().update(Message::Shell(ShellMsg::Error(anyhow::anyhow!(long))));
    h.state_mut().update(Message::View(ViewMsg::TogglePanel(PanelId::Log)));
    for _ in 0..6 {
        h.step();
    }
    h.snapshot("error_banner_long_message");
    std::fs::remove_file(&garbage).ok();
}

/// The navigator's scenes (issue 29): a table row selected and centred, the search's
/// matches marked in their lanes and on the overview strip, one clock for a trace and a
/// decoded capture, and a long-tailed histogram in log bins with its marks.
#[test]
fn navigator_table_selection_and_search_marks() {
    use latscope::gui::message::TableMsg;
    let mut h = open(&["ftrace/virtio_blk_direct_read.txt"]);
    h.state_mut().update(Message::Table(TableMsg::SetFilter("block_rq_complete".into())));
    settle(&mut h, "the filter", |wb| !wb.table_pending() && !wb.table.rows.rows.is_empty());
    let row = h.state().table.rows.rows[40].sel();
    h.state_mut().update(Message::Table(TableMsg::Select(row)));
    let t = h.state().view.view_centre();
    h.state_mut().update(Message::View(ViewMsg::ShowRange(t - 5e9, t + 5e9)));
    settle(&mut h, "the selection", |_| true);
    h.snapshot("navigator_selection_search_marks");
}

#[test]
fn navigator_one_clock_for_a_trace_and_a_decoded_capture() {
    let mut h = harness(Options {
        files: vec![sample("ftrace/virtio_blk_direct_read.txt"), sample("sigrok/sd_mode_imx6_snippet.sr")],
        decoders: vec!["sd:clk=CLK,cmd=CMD".into()],
        ..Options::default()
    });
    settle(&mut h, "the decode", |wb| {
        wb.doc.sources.len() == 2 && wb.doc.sources.iter().any(|s| !s.source().spans.is_empty())
    });
    h.state_mut().update(Message::Table(latscope::gui::message::TableMsg::SetOwnClock(true)));
    settle(&mut h, "the table", |wb| !wb.table_pending());
    h.snapshot("navigator_one_clock_trace_and_capture");
}

#[test]
fn navigator_histogram_of_a_long_tail() {
    use latscope::gui::message::AnalysisMsg;
    let mut h = open(&["ftrace/timer_wakeups_under_load.txt"]);
    h.state_mut().update(Message::View(ViewMsg::TogglePanel(PanelId::Table)));
    // Wakeups under load: a median of microseconds, a tail of milliseconds.
    let mut rules = h.state().analysis.rules.clone();
    rules.specs = vec!["wakeup".into()];
    h.state_mut().update(Message::Analysis(AnalysisMsg::EditRules(rules)));
    h.state_mut().update(Message::Analysis(AnalysisMsg::Run));
    settle(&mut h, "the analysis", |wb| wb.analysis.results.len() == 1);
    assert!(latscope::gui::views::analysis_panel::long_tail(&h.state().analysis.results[0]));
    h.snapshot("navigator_histogram");
}

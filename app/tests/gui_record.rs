//! The workbench's *File > Record…* (issue 30), driven through messages: a real recording
//! of this machine's kernel (under the tracefs lock the recorder's tests take) that shows
//! live lines while `dd` runs, grows a source on the timeline and stops on a message; what
//! it saved reads back in `trace-cmd report` with the events the workbench showed, and its
//! last live line equals `latscope report` on that file. The analysis panel's *Record
//! these* opens the window with the preset whose events a file lacks.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod workbench_harness;

use common::Scratch;
use egui_kittest::kittest::Queryable as _;
use latscope::gui::export::SaveWhat;
use latscope::gui::message::{FileMsg, Message, RecordMsg, SaveMsg};
use latscope::gui::picker::NoPicker;
use latscope::gui::record::{Machine, RecordForm};
use latscope::gui::{Options, Workbench};
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;
use workbench_harness::wait;

fn harness(options: Options) -> egui_kittest::Harness<'static, Workbench> {
    workbench_harness::harness(
        Workbench::new(options, Box::new(NoPicker), Vec::new()),
        egui::vec2(1400.0, 900.0),
    )
}

fn send(h: &mut egui_kittest::Harness<'static, Workbench>, m: RecordMsg) {
    h.state_mut().update(Message::Record(m));
    h.step();
}

/// Records what `form` asks until the recording ends by itself (its duration), and checks
/// that it started and ended without an error.
fn record_until_it_ends(h: &mut egui_kittest::Harness<'static, Workbench>, form: RecordForm) {
    send(h, RecordMsg::Edit(form));
    send(h, RecordMsg::Start);
    assert!(h.state().record.running(), "{:?}", h.state().record.error);
    wait(h, "the logic recording to end", |wb| !wb.record.running());
    assert!(h.state().record.error.is_none(), "{:?}", h.state().record.error);
}

#[test]
#[cfg_attr(
    not(all(have_tracefs, have_trace_cmd)),
    ignore = "needs root and tracefs: run as root where /sys/kernel/tracing is mounted; needs trace-cmd: apt-get install trace-cmd"
)]
fn the_record_window_records_dd_live_grows_its_source_and_stops_on_a_message() {
    let _lock = latscope_testkit::tracefs_lock();
    let before = latscope_testkit::tracefs_state();
    let dir = Scratch::new("gui-record");
    std::fs::write(dir.join("data.bin"), vec![0x5a; 8 << 20]).unwrap();
    let saved = dir.join("run.dat");
    let mut h = harness(Options::default());
    send(&mut h, RecordMsg::Show);
    let form = RecordForm {
        machine: Machine::Local,
        presets: vec!["block".into()],
        output: saved.display().to_string(),
        ..RecordForm::default()
    };
    send(&mut h, RecordMsg::Edit(form));
    // The window says what will be enabled before anything starts.
    let _ = h.get_by_label(
        "Events enabled: block:block_rq_issue, block:block_rq_complete (and trace_marker writes)",
    );
    send(&mut h, RecordMsg::Start);
    assert!(h.state().record.running(), "{:?}", h.state().record.error);
    wait(&mut h, "the first live line", |wb| wb.record.line.is_some());
    let dd = Command::new("dd")
        .current_dir(&*dir)
        .args(["if=data.bin", "of=/dev/null", "bs=4k", "count=2000", "iflag=direct"])
        .output()
        .unwrap();
    assert!(dd.status.success(), "{}", String::from_utf8_lossy(&dd.stderr));
    // The live lines count dd's requests as they arrive, and the source on the timeline
    // grows with them, while the recording goes on.
    wait(&mut h, "the live line to count dd's 2000 requests", |wb| {
        wb.record.line.as_ref().is_some_and(|l| l.analyses.first().is_some_and(|a| a.count >= 2000))
    });
    wait(&mut h, "the growing source to hold them", |wb| {
        wb.record.source.and_then(|id| wb.doc.get(id)).is_some_and(|s| {
            let src = s.source();
            let issue = src.strings.lookup(b"block_rq_issue");
            s.growing && issue.is_some_and(|n| src.events.iter().filter(|e| e.name() == n).count() >= 2000)
        })
    });
    assert!(h.state().record.snapshots >= 1);
    let _ = h.get_by_label("Stop");
    send(&mut h, RecordMsg::Stop);
    wait(&mut h, "the recording to end", |wb| !wb.record.running());
    wait(&mut h, "the presets to run on the recording", |wb| wb.settled());
    let wb = h.state();
    assert!(wb.record.error.is_none(), "{:?}", wb.record.error);
    let end = wb.record.ended.clone().unwrap();
    assert_eq!(end.how, "stopped");
    assert_eq!(end.lost, 0);
    assert_eq!(end.saved, std::slice::from_ref(&saved));
    assert_eq!(latscope_testkit::tracefs_state(), before, "tracefs is left as found");
    let line = wb.record.line.clone().unwrap();
    assert!(line.last, "the last line is the final one");
    let src = wb.doc.get(wb.record.source.unwrap()).unwrap();
    assert!(!src.growing, "a stopped recording no longer grows");
    // trace-cmd reads the saved file with the events the workbench shows.
    let tc = Command::new("trace-cmd").args(["report", "-i"]).arg(&saved).output().unwrap();
    assert!(tc.status.success(), "{}", String::from_utf8_lossy(&tc.stderr));
    let tc = String::from_utf8_lossy(&tc.stdout);
    let records: Vec<&str> = tc
        .lines()
        .filter(|l| l.contains(" block_rq_issue: ") || l.contains(" block_rq_complete: "))
        .collect();
    let ours = src.source().events.len();
    assert_eq!(records.len(), ours, "trace-cmd's block events and the workbench's source");
    assert_eq!(line.events as usize, ours);
    // dd's 2000 requests; under load the block layer hands some to kblockd, whose worker
    // then issues them, so not every issue line names dd.
    let issues: Vec<&&str> = records.iter().filter(|l| l.contains(" block_rq_issue: ")).collect();
    let by_dd = issues.iter().filter(|l| l.contains("dd-")).count();
    assert!(issues.len() >= 2000 && by_dd >= 1000, "{} issues, {by_dd} by dd", issues.len());
    // The final live line is `latscope report`'s on the saved file.
    let report = common::ok(&["report", saved.to_str().unwrap(), "--preset", "block", "--format", "json"]);
    let report: Value = serde_json::from_slice(&report.stdout).unwrap();
    let block = &report["analyses"][0];
    let live = &line.analyses[0];
    assert_eq!(live.analysis, "block");
    assert_eq!(Value::from(live.count), block["count"]);
    assert_eq!(live.p50_ns.map(Value::from).unwrap_or(Value::Null), block["stats_ns"]["p50"]);
    assert_eq!(live.p99_ns.map(Value::from).unwrap_or(Value::Null), block["stats_ns"]["p99"]);
    assert_eq!(live.max_ns.map(Value::from).unwrap_or(Value::Null), block["stats_ns"]["max"]);
    // The recording is a capture like any opened: its presets ran in the panel.
    assert!(wb.analysis.results.iter().any(|r| r.outcome.name == "block"), "the panel ran block");
}

#[test]
#[cfg_attr(
    not(all(have_tracefs, have_trace_cmd)),
    ignore = "needs root and tracefs: run as root where /sys/kernel/tracing is mounted; needs trace-cmd: apt-get install trace-cmd"
)]
fn closing_the_workbench_while_it_records_saves_and_puts_tracefs_back() {
    let _lock = latscope_testkit::tracefs_lock();
    let before = latscope_testkit::tracefs_state();
    let dir = Scratch::new("gui-record-close");
    let saved = dir.join("run.dat");
    let mut h = harness(Options::default());
    let form = RecordForm {
        presets: vec!["irq-handler".into()],
        output: saved.display().to_string(),
        ..RecordForm::default()
    };
    send(&mut h, RecordMsg::Edit(form));
    send(&mut h, RecordMsg::Start);
    wait(&mut h, "the first live line", |wb| wb.record.line.is_some());
    assert_ne!(
        latscope_testkit::tracefs_state(),
        before,
        "recording changes tracefs (events enabled, the mono clock)"
    );
    // The window closes with the recording going on: the workbench is dropped.
    drop(h);
    assert_eq!(latscope_testkit::tracefs_state(), before, "tracefs is put back before the workbench is gone");
    let tc = Command::new("trace-cmd").args(["report", "-i"]).arg(&saved).output().unwrap();
    assert!(tc.status.success(), "what was recorded is saved: {}", String::from_utf8_lossy(&tc.stderr));
}

#[test]
fn record_these_opens_the_window_with_the_preset_a_file_lacks_events_for() {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../samples/ftrace/blk_read.txt");
    let mut h = harness(Options { files: vec![file], ..Options::default() });
    wait(&mut h, "loading", |wb| wb.doc.sources.len() == 1 && wb.loads().is_empty() && wb.settled());
    let missing = h.state().analysis.missing.clone();
    let mmc = missing.iter().find(|m| m.starts_with("mmc needs ")).expect("mmc is not run on a block trace");
    assert_eq!(latscope::gui::record::recordable(mmc), Some("mmc"));
    assert!(
        missing.iter().all(|m| !m.starts_with("pulse") || latscope::gui::record::recordable(m).is_none())
    );
    h.state_mut().update(Message::View(latscope::gui::message::ViewMsg::TogglePanel(
        latscope::gui::view::PanelId::Analysis,
    )));
    for _ in 0..4 {
        h.step();
    }
    if !h.state().view.panels.analysis {
        h.state_mut().update(Message::View(latscope::gui::message::ViewMsg::TogglePanel(
            latscope::gui::view::PanelId::Analysis,
        )));
        h.step();
    }
    // The "Not run" list offers one button per preset a recording can serve; the first is
    // mmc's or another kernel preset's: each opens the window with its own preset.
    let buttons = h.get_all_by_label("Record these").count();
    let recordable = missing.iter().filter(|m| latscope::gui::record::recordable(m).is_some()).count();
    assert_eq!(buttons, recordable, "{missing:?}");
    send(&mut h, RecordMsg::RecordPresets(vec!["mmc".into()]));
    let wb = h.state();
    assert!(wb.record.open);
    assert_eq!(wb.record.form.presets, ["mmc"]);
    let events = wb.record.form.events_enabled(&wb.registry);
    assert_eq!(events, ["mmc_request_start", "mmc_request_done"]);
    h.step();
    let _ = h.get_by_label("Events enabled: mmc_request_start, mmc_request_done (and trace_marker writes)");
}

#[test]
fn a_form_that_cannot_record_says_why_and_starts_nothing() {
    let mut h = harness(Options::default());
    send(&mut h, RecordMsg::Show);
    let board = RecordForm {
        machine: Machine::Ssh,
        ssh_host: "root@board".into(),
        presets: vec!["block".into()],
        sigrok: "demo".into(),
        ..RecordForm::default()
    };
    send(&mut h, RecordMsg::Edit(board));
    send(&mut h, RecordMsg::Start);
    assert!(!h.state().record.running());
    let e = h.state().record.error.clone().unwrap();
    assert!(e.contains("do not share a clock"), "{e}");
    let nothing = RecordForm { machine: Machine::None, ..RecordForm::default() };
    send(&mut h, RecordMsg::Edit(nothing));
    send(&mut h, RecordMsg::Start);
    assert!(h.state().record.error.clone().unwrap().contains("nothing to record"));
    let bad = RecordForm { rules: "a -> ".into(), ..RecordForm::default() };
    send(&mut h, RecordMsg::Edit(bad));
    send(&mut h, RecordMsg::Start);
    assert!(!h.state().record.running());
    assert!(h.state().record.error.is_some());
    // The error is shown in the window.
    let shown = h.state().record.error.clone().unwrap();
    let _ = h.get_by_label(&shown);
    // The fields are typed into like any: the sigrok device typed reaches the form, and an
    // edit clears the last error.
    let hint = "demo:samplerate=100k  (sigrok driver; empty: none)";
    let field = h.get_by(|n| n.placeholder() == Some(hint));
    field.focus();
    field.type_text("demo:samplerate=1M");
    h.step();
    h.step();
    assert_eq!(h.state().record.form.sigrok, "demo:samplerate=1M");
    assert!(h.state().record.error.is_none());
    // Typed a key a frame, as a user types: the first key clears the error, the line it
    // took goes, and the field keeps the focus and the keys after it.
    send(&mut h, RecordMsg::Edit(RecordForm { rules: "a -> ".into(), ..RecordForm::default() }));
    send(&mut h, RecordMsg::Start);
    assert!(h.state().record.error.is_some());
    h.get_by(|n| n.placeholder() == Some(hint)).focus();
    h.step();
    for key in ["d", "e", "m", "o"] {
        // Keys go where the focus is, whichever node queues them.
        h.get_by_label("Duration").type_text(key);
        h.step();
        h.step();
    }
    assert_eq!(h.state().record.form.sigrok, "demo", "every key reaches the field");
    assert!(h.state().record.error.is_none());
    // With no kernel and no decoder, rules over the device's channels are typed all the same.
    send(
        &mut h,
        RecordMsg::Edit(RecordForm {
            machine: Machine::None,
            sigrok: "demo".into(),
            ..RecordForm::default()
        }),
    );
    let rules = h.get_by(|n| n.placeholder() == Some("pulse:D0  or  word=spi_mosi -> spi_mosi_end"));
    rules.focus();
    rules.type_text("pulse:D2");
    h.step();
    h.step();
    assert_eq!(h.state().record.form.rules, "pulse:D2");
}

/// The window splits the analyses as `latscope record` does: beside a kernel, the decoders'
/// presets and the rules over their events read the logic analyzer's decode, the rest the
/// kernel (whose events are the ones enabled); alone, everything reads the decode.
#[test]
fn the_window_splits_kernel_and_decoded_logic_analyses_as_the_command_line() {
    let registry = latscope_engine::Registry::native();
    let mut form = RecordForm {
        machine: Machine::Local,
        sigrok: "demo:samplerate=1M".into(),
        decoders: "sd:clk=D0,cmd=D1".into(),
        presets: vec!["wakeup".into(), "sd-cmd-resp".into()],
        rules: "cr=sd_cmd -> sd_resp by seq\nio=block_rq_issue -> block_rq_complete".into(),
        ..RecordForm::default()
    };
    let names = |specs: &[latscope_analysis::spec::Spec]| {
        specs.iter().map(|s| s.name().to_owned()).collect::<Vec<_>>()
    };
    let asked = form.request(&registry).unwrap();
    assert_eq!(names(&asked.request.specs), ["wakeup", "io"]);
    assert_eq!(names(&asked.request.logic_specs), ["sd-cmd-resp", "cr"]);
    let enabled = form.events_enabled(&registry);
    assert!(enabled.iter().all(|e| !e.starts_with("sd_")), "{enabled:?}");
    form.machine = Machine::None;
    let asked = form.request(&registry).unwrap();
    assert_eq!(names(&asked.request.specs), ["wakeup", "sd-cmd-resp", "cr", "io"]);
    assert!(asked.request.logic_specs.is_empty());
}

#[test]
#[cfg_attr(not(have_sigrok_cli), ignore = "needs sigrok-cli: apt-get install sigrok-cli")]
fn a_logic_analyzer_alone_is_recorded_until_stop_and_opened_as_sigrok_cli_reads_it() {
    let dir = Scratch::new("gui-record-sigrok");
    let saved = dir.join("cap.sr");
    let mut h = harness(Options::default());
    let form = RecordForm {
        machine: Machine::None,
        sigrok: "demo:analog_channels=0:samplerate=100k".into(),
        rules: "pulse:D2".into(),
        output: saved.display().to_string(),
        ..RecordForm::default()
    };
    send(&mut h, RecordMsg::Edit(form));
    send(&mut h, RecordMsg::Start);
    assert!(h.state().record.running(), "{:?}", h.state().record.error);
    // While it records, its channels grow on the timeline, and the rule over one of them
    // answers in the live lines.
    let d0_so_far = |wb: &Workbench| {
        let s = wb.doc.get(wb.record.source?)?;
        let d0 = s.source().digital.iter().find(|d| d.name == "D0")?;
        (wb.record.running() && s.growing && s.source().digital.len() == 8).then(|| d0.transitions())
    };
    wait(&mut h, "the channels on the timeline while recording", |wb| d0_so_far(wb).is_some_and(|n| n > 0));
    let first = d0_so_far(h.state()).unwrap();
    wait(&mut h, "them to grow", |wb| d0_so_far(wb).is_some_and(|n| n > first));
    let line = h.state().record.line.clone().unwrap();
    assert!(!line.last && line.analyses[0].analysis == "pulse:D2" && line.analyses[0].count > 0, "{line:?}");
    send(&mut h, RecordMsg::Stop);
    wait(&mut h, "the logic recording to end", |wb| !wb.record.running());
    let wb = h.state();
    assert!(wb.record.error.is_none(), "{:?}", wb.record.error);
    let end = wb.record.ended.clone().unwrap();
    assert_eq!(end.how, "stopped");
    assert_eq!(end.saved, std::slice::from_ref(&saved));
    // sigrok-cli reads the saved session with the samples the recording counted.
    let binary = latscope_testkit::Need::SigrokCli
        .output(Command::new("sigrok-cli").arg("-i").arg(&saved).args(["-O", "binary"]));
    assert!(binary.status.success(), "{}", String::from_utf8_lossy(&binary.stderr));
    assert!(end.events > 1000, "{end:?}");
    assert_eq!(binary.stdout.len() as u64, end.events, "one byte a sample for 8 channels");
    // The source opened on the timeline holds D0's transitions as sigrok-cli gives them.
    let src = wb.doc.get(wb.record.source.unwrap()).unwrap().source();
    assert_eq!(src.digital.len(), 8);
    let d0 = src.digital.iter().find(|d| d.name == "D0").unwrap();
    let flips = binary.stdout.windows(2).filter(|w| (w[0] ^ w[1]) & 1 != 0).count();
    assert_eq!(d0.transitions(), flips, "D0 changes level as often in both");
    assert!(!wb.doc.get(wb.record.source.unwrap()).unwrap().growing);
    assert_eq!(wb.doc.sources.len(), 1, "the capture took the growing channels' place");
}

/// Recorded with no path, a logic analyzer's capture is opened from a temporary file: the
/// source names it while the workbench runs, and the workbench removes it when it exits. A
/// session saved meanwhile keeps a copy beside it, and reopens from that.
#[test]
#[cfg_attr(not(have_sigrok_cli), ignore = "needs sigrok-cli: apt-get install sigrok-cli")]
fn a_logic_recording_without_a_path_opens_from_a_temporary_file_removed_on_exit_and_kept_by_a_session() {
    let mut h = harness(Options::default());
    let form = RecordForm {
        machine: Machine::None,
        sigrok: "demo:analog_channels=0:samplerate=100k".into(),
        duration: "300ms".into(),
        ..RecordForm::default()
    };
    record_until_it_ends(&mut h, form);
    let wb = h.state();
    assert!(wb.record.ended.as_ref().unwrap().saved.is_empty(), "nothing was asked to be saved");
    let src = wb.doc.get(wb.record.source.unwrap()).unwrap().source();
    let path = src.path.clone().unwrap();
    assert!(path.starts_with(std::env::temp_dir()) && path.exists(), "{}", path.display());
    assert_eq!(wb.record.temporary.paths(), std::slice::from_ref(&path));
    assert_eq!(src.digital.len(), 8);
    // A session saved now keeps the capture beside it, since the temporary one goes.
    let dir = Scratch::new("gui-record-temporary");
    let session = dir.join("bench.latscope.json");
    h.state_mut().update(Message::Save(SaveMsg::SaveTo(SaveWhat::Session, session.clone())));
    wait(&mut h, "the session to be saved", |wb| wb.saves_running() == 0 && session.exists());
    assert!(h.state().errors.is_empty(), "{:?}", h.state().errors);
    let kept = dir.join("bench-logic.sr");
    assert_eq!(std::fs::read(&kept).unwrap(), std::fs::read(&path).unwrap(), "the capture is kept as it was");
    let text = std::fs::read_to_string(&session).unwrap();
    assert!(text.contains("\"bench-logic.sr\"") && !text.contains(&*path.to_string_lossy()), "{text}");
    drop(h);
    assert!(!path.exists(), "{} is left behind", path.display());
    let mut reopened = harness(Options::default());
    reopened.state_mut().update(Message::Files(FileMsg::Open(vec![session])));
    wait(&mut reopened, "the session", |wb| wb.doc.sources.len() == 1 && !wb.session_pending());
    let wb = reopened.state();
    assert!(wb.errors.is_empty(), "{:?}", wb.errors);
    let src = wb.doc.sources[0].source();
    assert_eq!(src.path.as_deref(), Some(kept.as_path()));
    assert_eq!(src.digital.len(), 8);
}

/// sigrok's demo device alone, its pattern decoded as SPI (D0 clocks D1), a rule over the
/// words, saved at `output`.
fn demo_spi_form(output: &std::path::Path) -> RecordForm {
    RecordForm {
        machine: Machine::None,
        sigrok: "demo:analog_channels=0:samplerate=100k".into(),
        decoders: "spi:clk=D0,mosi=D1".into(),
        rules: "word=spi_mosi -> spi_mosi_end".into(),
        output: output.display().to_string(),
        ..RecordForm::default()
    }
}

/// The window's flight recorder on a logic analyzer alone: triggers on a rule over the
/// decoded words save windows into the folder, as `latscope record` does, and every crossing
/// is counted.
#[test]
#[cfg_attr(not(have_sigrok_cli), ignore = "needs sigrok-cli: apt-get install sigrok-cli")]
fn the_record_windows_flight_recorder_saves_windows_of_decoded_logic() {
    let dir = Scratch::new("gui-record-sigrok-trigger");
    let windows = dir.join("windows");
    let mut h = harness(Options::default());
    let form = RecordForm {
        triggers: "word>600us".into(),
        keep: "1ms".into(),
        max_saves: "1".into(),
        duration: "1500ms".into(),
        ..demo_spi_form(&windows)
    };
    record_until_it_ends(&mut h, form);
    let wb = h.state();
    let end = wb.record.ended.clone().unwrap();
    assert_eq!(end.saved.len(), 1, "{end:?}");
    assert!(end.saved[0].starts_with(&windows) && end.saved[0].join("logic.sr").exists(), "{end:?}");
    assert!(end.saved[0].join("session.latscope.json").exists(), "{end:?}");
    // A word every 64 samples or so, each over 600 us: far more crossings than saves.
    assert!(end.crossings > 100, "{end:?}");
}

/// Decoders typed in the window run on the stream: its live lines count what they found,
/// and the capture opens with their lanes and events, as many SPI words as sigrok-cli's
/// SPI decoder finds in the saved file.
#[test]
#[cfg_attr(not(have_sigrok_cli), ignore = "needs sigrok-cli: apt-get install sigrok-cli")]
fn decoders_typed_in_the_record_window_run_live_and_open_with_the_capture() {
    let dir = Scratch::new("gui-record-sigrok-decode");
    let saved = dir.join("cap.sr");
    let mut h = harness(Options::default());
    let form = demo_spi_form(&saved);
    send(&mut h, RecordMsg::Edit(form));
    send(&mut h, RecordMsg::Start);
    assert!(h.state().record.running(), "{:?}", h.state().record.error);
    wait(&mut h, "a live line with the decoder's count", |wb| {
        wb.record
            .line
            .as_ref()
            .and_then(|l| l.logic.as_ref())
            .is_some_and(|l| l.decoders.first().is_some_and(|d| d.annotations > 0))
    });
    send(&mut h, RecordMsg::Stop);
    wait(&mut h, "the logic recording to end", |wb| !wb.record.running());
    let wb = h.state();
    assert!(wb.record.error.is_none(), "{:?}", wb.record.error);
    let src = wb.doc.get(wb.record.source.unwrap()).unwrap().source();
    let oracle =
        latscope_testkit::Need::SigrokCli.output(Command::new("sigrok-cli").arg("-i").arg(&saved).args([
            "-P",
            "spi:clk=D0:mosi=D1",
            "-A",
            "spi=mosi-data",
        ]));
    let words = String::from_utf8_lossy(&oracle.stdout).lines().count();
    assert!(words > 10, "{words}");
    let lane = src.spans.iter().find(|s| s.name == "spi.mosi").unwrap_or_else(|| panic!("no spi.mosi lane"));
    assert_eq!(lane.start.len(), words);
    let last = wb.record.line.as_ref().unwrap();
    assert!(last.last, "the last line is over the whole capture: {last:?}");
    assert_eq!(last.analyses[0].count as usize, words, "{last:?}");
}

#[test]
#[cfg_attr(
    not(all(have_tracefs, have_sigrok_cli)),
    ignore = "needs root and tracefs: run as root where /sys/kernel/tracing is mounted; needs sigrok-cli: apt-get install sigrok-cli"
)]
fn the_kernel_and_a_logic_analyzer_recorded_together_open_on_one_timeline() {
    let _lock = latscope_testkit::tracefs_lock();
    let before = latscope_testkit::tracefs_state();
    let dir = Scratch::new("gui-record-both");
    let mut h = harness(Options::default());
    // A rule from a demo channel's edge to a kernel event reads both.
    let form = RecordForm {
        events: "sched:sched_process_exec".into(),
        rules: "j=D0:rise -> sched_switch".into(),
        sigrok: "demo:analog_channels=0:samplerate=100k".into(),
        output: dir.join("both").display().to_string(),
        ..RecordForm::default()
    };
    send(&mut h, RecordMsg::Edit(form));
    send(&mut h, RecordMsg::Start);
    wait(&mut h, "the logic's samples in a live line", |wb| {
        wb.record.line.as_ref().and_then(|l| l.logic.as_ref()).is_some_and(|l| l.samples > 0)
    });
    wait(&mut h, "the joint rule's pairs in a live line", |wb| {
        wb.record.line.as_ref().is_some_and(|l| l.analyses.iter().any(|a| a.analysis == "j" && a.count > 0))
    });
    // The logic's channels join the timeline while it records, where the host clock puts
    // them, and grow.
    let growing_logic = |wb: &Workbench| {
        let s = wb.doc.get(wb.record.logic_source?)?;
        Some((s.growing, s.source().digital.len(), s.source().digital[0].end))
    };
    wait(&mut h, "the logic on the timeline while it records", |wb| {
        growing_logic(wb).is_some_and(|(growing, n, _)| growing && n == 8)
    });
    let was = growing_logic(h.state()).unwrap().2;
    wait(&mut h, "the logic to grow", |wb| growing_logic(wb).is_some_and(|(_, _, end)| end > was));
    assert!(h.state().record.running(), "it grew while it recorded");
    let live_id = h.state().record.logic_source;
    let line = h.state().record.line.clone().unwrap();
    let (start_s, u_ns) = {
        let l = line.logic.as_ref().unwrap();
        (l.start_s.unwrap(), l.uncertainty_ns.unwrap())
    };
    // The window says the placement and its uncertainty while it records.
    let said = format!(
        "placed on the kernel's timeline by host clocks, ± {} (align on a shared marker to fit it)",
        latscope_record::stats::human_ns(Some(u_ns as f64))
    );
    assert!(h.get_all_by_label_contains(&said).next().is_some(), "{said}");
    send(&mut h, RecordMsg::Stop);
    wait(&mut h, "the recording to end", |wb| !wb.record.running());
    wait(&mut h, "the recording's analyses to run in the panel", |wb| wb.settled());
    let wb = h.state();
    assert!(wb.record.error.is_none(), "{:?}", wb.record.error);
    assert_eq!(latscope_testkit::tracefs_state(), before);
    assert!(wb.record.logic_placed.as_deref().is_some_and(|p| p.starts_with("host clocks (±")));
    // The panel runs the rule the recording was asked for, over the two sources as the
    // document places them: the recorder's last line is its answer.
    let last = wb.record.line.clone().unwrap();
    let live = last.analyses.iter().find(|a| a.analysis == "j").unwrap();
    let panel = wb.analysis.results.iter().find(|r| r.outcome.name == "j").expect("the panel ran j");
    let stats = panel.summary.as_ref().unwrap();
    assert!(live.count > 0 && last.last);
    assert_eq!((stats.count, stats.stats_ns.p50, stats.stats_ns.max), (live.count, live.p50_ns, live.max_ns));
    // The panel says where the run put them: as placed, by host clocks, not each alone.
    let used = &wb.analysis.placement_used;
    assert!(used.starts_with("placement: as the sources are placed (by host clocks (±"), "{used}");
    let kernel = wb.doc.get(wb.record.source.unwrap()).unwrap();
    // The saved capture replaces what was shown of it while it recorded.
    assert_eq!(wb.record.logic_source, live_id);
    assert_eq!(wb.doc.sources.len(), 2, "the kernel's and the logic's");
    let logic = wb.doc.get(wb.record.logic_source.unwrap()).unwrap();
    assert!(!logic.growing);
    assert_eq!(logic.source().digital.len(), 8);
    // The logic's first sample sits on the common timeline where the host clock said, on the
    // kernel source's clock (its time zero is the whole second of its first page).
    let kernel_zero_s = kernel.source().origin.secs as f64 + kernel.source().origin.ps as f64 / 1e12;
    let logic_start_s = kernel_zero_s + (logic.to_common(0) - kernel.to_common(0)) / 1e12;
    assert!((logic_start_s - start_s).abs() < 2e-3, "{logic_start_s} vs {start_s} (±{u_ns} ns)");
    assert!(dir.join("both/logic.sr").exists() && dir.join("both/kernel.dat").exists());
    // Where the placement is said, it says how: by host clocks, with the uncertainty.
    assert_eq!(logic.placed_by.as_deref(), wb.record.logic_placed.as_deref());
    let _ = h.get_by_label_contains("· by host clocks (±");
    // The saved session reopens the two on one timeline, placed as they were and saying so.
    h.state_mut().update(Message::Files(latscope::gui::message::FileMsg::Open(vec![
        dir.join("both/session.latscope.json"),
    ])));
    wait(&mut h, "the session", |wb| {
        wb.doc.sources.len() == 2 && !wb.session_busy() && wb.loads().is_empty()
    });
    let wb = h.state();
    let logic = wb.doc.sources.iter().find(|s| s.source().digital.len() == 8).unwrap();
    let kernel = wb.doc.sources.iter().find(|s| s.source().digital.is_empty()).unwrap();
    assert!(
        logic.placed_by.as_deref().is_some_and(|p| p.starts_with("host clocks (±")),
        "{:?}",
        logic.placed_by
    );
    let kernel_zero_s = kernel.source().origin.secs as f64 + kernel.source().origin.ps as f64 / 1e12;
    let reopened_s = kernel_zero_s + (logic.to_common(0) - kernel.to_common(0)) / 1e12;
    assert!((reopened_s - start_s).abs() < 2e-3, "{reopened_s} vs {start_s}");
}

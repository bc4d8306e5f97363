#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Protocol decoders in the workbench, driven headless through egui_kittest on a real SD
//! capture: the "Add decoder…" dialog from the menu and the palette with its channels
//! guessed and its options checked as they change, the decode as a background job whose
//! annotation rows land under the bus's lanes and link to their events, the decoded events in
//! the table and search, and the decoder kept in a saved session.

mod common;
mod workbench_harness;

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;
use latscope::gui::decoder_dialog::{self, DecoderDialog};
use latscope::gui::message::{DecoderMsg, FileMsg, Message, ShellMsg, TableMsg, ViewMsg};
use latscope::gui::picker::NoPicker;
use latscope::gui::prepare::LaneKind;
use latscope::gui::view::{EventSel, LaneId};
use latscope::gui::{Options, Workbench};
use latscope_engine::channels::{self, Guess};
use std::path::PathBuf;
use std::process::Command;
use workbench_harness::{click_at, decode, source_id, wait};

fn sample(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join("samples").join(rel)
}

fn harness(files: Vec<PathBuf>) -> Harness<'static, Workbench> {
    let wb = Workbench::new(Options { files, ..Options::default() }, Box::new(NoPicker), Vec::new());
    workbench_harness::harness(wb, egui::vec2(1400.0, 900.0))
}

const SD: &str = "sigrok/sd_mode_imx6_snippet.sr";
const SPEC: &str = "sd:clk=CLK,cmd=CMD,dat0=DAT0,dat1=DAT1,dat2=DAT2,dat3=DAT3";

fn open_sd() -> Harness<'static, Workbench> {
    let mut h = harness(vec![sample(SD)]);
    wait(&mut h, "loading", |wb| wb.doc.sources.len() == 1 && wb.loads().is_empty());
    h.step();
    h
}

fn decoded(wb: &Workbench) -> bool {
    wb.view.shown(&wb.doc).first().is_some_and(|sv| !sv.source().spans.is_empty())
}

#[test]
fn the_menu_opens_the_dialog_with_the_sd_bus_guessed_and_options_checked() {
    let mut h = open_sd();
    h.get_by_label("Analysis").click();
    h.step();
    h.step();
    h.get_by_label("Add decoder…").click();
    h.run_steps(8);
    let d = h.state().dialogs.decoder.clone();
    assert!(d.open);
    // CLK, CMD and DAT0..DAT3 name an SD bus: every channel is mapped by its name.
    assert_eq!(d.decoder, "sd");
    let registry = h.state().registry.clone();
    assert_eq!(d.spec, SPEC);
    assert_eq!(d.problem, None);
    let _ = h.get_by_label(SPEC);
    // A bad option is reported as it is typed, with what the decoder expects.
    let mut bad = d.clone();
    bad.options[0].1 = "width=3".into();
    bad.check(&registry);
    let problem = bad.problem.clone().unwrap_or_default();
    assert!(problem.ends_with("sd: `width=3`: expected 1 or 4"), "{problem}");
    let mut unknown = d.clone();
    unknown.channels[1].1 = "CMDX".into();
    unknown.check(&registry);
    let p = unknown.problem.clone().unwrap_or_default();
    assert!(p.contains("no channel `CMDX`") && p.contains("DAT3"), "{p}");
    // The window shows it, and its Decode button does nothing until it is fixed.
    h.state_mut().update(Message::Decoder(DecoderMsg::Edit(bad)));
    h.run_steps(8);
    let _ = h.get_by_label(&problem);
    h.get_by_label("Decode").click();
    h.run_steps(8);
    assert!(h.state().dialogs.decoder.open);
    assert!(h.state().view.shown(&h.state().doc)[0].source().spans.is_empty());
}

#[test]
fn the_palette_adds_a_decoder_whose_rows_sit_under_the_bus_and_link_to_events() {
    let mut h = open_sd();
    h.key_press_modifiers(egui::Modifiers::COMMAND | egui::Modifiers::SHIFT, egui::Key::P);
    h.step();
    h.step();
    h.state_mut().update(Message::Shell(ShellMsg::PaletteQuery("decoder".into())));
    // The palette sizes itself to the filtered list over a few frames (and the presets run
    // on open may answer meanwhile): click where the row is once it has settled.
    h.run_steps(8);
    h.get_by_label("Add decoder…").click();
    h.run_steps(8);
    assert!(h.state().dialogs.decoder.open);
    h.get_by_label("Decode").click();
    wait(&mut h, "the decode", decoded);
    h.step();
    let wb = h.state();
    assert!(wb.errors.is_empty(), "{:?}", wb.errors);
    assert!(!wb.dialogs.decoder.open);
    let sv = wb.view.shown(&wb.doc)[0];
    let src = sv.source();
    // The same annotations `latscope decode` gives: five commands and three responses.
    let lane = |name: &str| sv.prepared.lanes.iter().position(|l| l.name == name);
    let (cmd, resp) = (lane("sd.cmd").unwrap(), lane("sd.response").unwrap());
    let rows = |i: usize| match &sv.prepared.lanes[i].kind {
        LaneKind::Spans { rows, .. } => rows.clone(),
        _ => panic!("not a span lane"),
    };
    assert_eq!(rows(cmd)[0].len(), 5);
    assert_eq!(rows(resp)[0].len(), 3);
    // Right under the bus: after the last channel the decoder reads (DAT3), before the
    // capture's unused channels.
    let dat3 = lane("DAT3").unwrap();
    assert!(cmd > dat3 && resp > dat3 && cmd <= dat3 + 4, "DAT3 {dat3}, sd.cmd {cmd}");
    assert!(lane("6").unwrap() > resp);
    // Each slice is linked to the event that starts it: a click selects the command.
    let r = &rows(cmd)[0];
    for k in 0..r.len() {
        let e = src.events.get(r.event[k] as usize).unwrap();
        assert_eq!(src.strings.resolve(e.name()), "sd_cmd");
        assert_eq!(e.ts(), r.start[k]);
    }
    let first = src.events.get(r.event[0] as usize).unwrap();
    let index = first.fields().find(|(n, _)| src.strings.resolve(*n) == "index").map(|(_, v)| v.as_i64());
    assert_eq!(index, Some(Some(0)), "CMD0 first");
    // The event lanes start hidden (the rows show them) and come last, after the capture's
    // channels; the metadata records the spec.
    assert!(sv.lanes.iter().filter(|v| v.name.starts_with("sd_")).all(|v| !v.visible));
    let first_event = sv.prepared.lanes.iter().position(|l| l.name.starts_with("sd_")).unwrap();
    assert!(first_event > lane("15").unwrap(), "event lanes start at {first_event}");
    assert_eq!(decoder_dialog::specs_of(src), [SPEC]);
    // The decoded events are in the table and in search.
    h.state_mut().update(Message::Table(TableMsg::SetFilter("sd_cmd".into())));
    wait(&mut h, "the filter", |wb| !wb.table_pending());
    let wb = h.state();
    let src = wb.view.shown(&wb.doc)[0].source();
    let names: Vec<String> = wb
        .table
        .rows
        .rows
        .iter()
        .map(|r| src.strings.resolve(src.events.get(r.index as usize).unwrap().name()).into_owned())
        .collect();
    assert_eq!(names.iter().filter(|n| *n == "sd_cmd").count(), 5, "{names:?}");
    h.state_mut().update(Message::Table(TableMsg::SearchStep(true)));
    let sel = h.state().view.overlay.selected.unwrap();
    assert_eq!(sel.index, r.event[0] as usize);
    // Decoding the same stack again is refused, not doubled: the dialog says so before, the
    // job if asked anyway.
    let first = source_id(h.state(), 0);
    h.state_mut().update(Message::Decoder(DecoderMsg::Open(Some(first))));
    h.step();
    let again = h.state().dialogs.decoder.clone();
    assert_eq!(again.spec, SPEC);
    assert!(again.problem.as_deref().is_some_and(|p| p.contains("already decoded")), "{again:?}");
    decode(&mut h, 0, SPEC);
    wait(&mut h, "the refusal", |wb| !wb.errors.is_empty());
    assert!(h.state().errors[0].contains("already decoded"), "{:?}", h.state().errors);
}

#[test]
fn a_session_keeps_the_decoder_and_decodes_again_when_opened() {
    let dir = common::Scratch::new("gui-decoders-session");
    let mut h = open_sd();
    // Only the decoder: the default rules have nothing to measure on a bare SD bus.
    workbench_harness::set_rules(&mut h, &[]);
    decode(&mut h, 0, SPEC);
    wait(&mut h, "the decode", decoded);
    let saved = h.state().session();
    assert_eq!(saved.files[0].decoders, [SPEC]);
    let path = dir.join("sd.latscope.json");
    saved.write(&path, &[]).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("\"decoders\"") && text.contains(SPEC), "{text}");

    let mut fresh = harness(Vec::new());
    fresh.step();
    fresh.state_mut().update(Message::Files(FileMsg::Open(vec![path])));
    wait(&mut fresh, "the session and its decode", |wb| !wb.session_pending() && decoded(wb));
    let wb = fresh.state();
    assert!(wb.errors.is_empty(), "{:?}", wb.errors);
    let src = wb.view.shown(&wb.doc)[0].source();
    assert_eq!(decoder_dialog::specs_of(src), [SPEC]);
    assert!(src.spans.iter().any(|s| s.name == "sd.cmd" && s.len() == 5));
    // Saved again, it is the same session.
    assert_eq!(wb.session().files[0].decoders, [SPEC]);
}

#[test]
fn channels_are_guessed_from_their_usual_names_by_the_one_resolver() {
    let registry = latscope_engine::Registry::native();
    let role = |decoder: &str, key: &str| {
        let d = registry.decoder(decoder).unwrap();
        d.channels.iter().find(|c| c.key == key).unwrap().clone()
    };
    let guess = |decoder: &str, key: &str, names: &[&str]| channels::guess(&role(decoder, key), names, &[]);
    let one = |s: &str| Guess::One(s.to_owned());
    let spi = ["spi.SCK", "spi.MOSI", "spi.MISO", "spi.nCS", "GPIO"];
    assert_eq!(guess("spi", "clk", &spi), one("spi.SCK"));
    assert_eq!(guess("spi", "cs", &spi), one("spi.nCS"));
    assert_eq!(guess("spi", "miso", &spi), one("spi.MISO"));
    // The simulator's SD host: `CMD` is the model's command phase, `SD_CMD` the bus line the
    // decoder reads (decoding `CMD` gave one garbage command and a lane of CRC warnings).
    let sim = ["CMD", "DMA", "IRQ", "SD_CLK", "SD_CMD", "SD_DAT0", "SD_DAT1", "SD_DAT2", "SD_DAT3"];
    assert_eq!(guess("sd", "cmd", &sim), one("SD_CMD"));
    assert_eq!(guess("sd", "clk", &sim), one("SD_CLK"));
    assert_eq!(guess("sd", "dat2", &sim), one("SD_DAT2"));
    // The same lines scoped in the simulator's VCD: still the bus, never `litesdcard.CMD`.
    let vcd = ["litesdcard.CMD", "litesdcard.DMA", "litesdcard.SD_CLK", "litesdcard.SD_CMD"];
    assert_eq!(guess("sd", "cmd", &vcd), one("litesdcard.SD_CMD"));
    assert_eq!(guess("i2c", "sda", &["SCL", "SDA"]), one("SDA"));
    assert_eq!(guess("uart", "rx", &["uart.TXD", "uart.RXD"]), one("uart.RXD"));
    // Two equally good names are no guess: the dialog says they are ambiguous, as
    // `--decoder sd:cmd=CMD` would.
    assert_eq!(
        guess("sd", "cmd", &["a.CMD", "b.CMD"]),
        Guess::Ambiguous { alias: "CMD".into(), candidates: vec!["a.CMD".into(), "b.CMD".into()] }
    );
    assert_eq!(guess("spi", "clk", &["D0", "D1"]), Guess::None);
    // A dialog on a capture with SCK/MOSI/MISO/CS picks SPI and maps all four.
    let mut src = latscope_model::Source::new("spi", "sigrok-sr", latscope_model::SourceKind::File);
    for n in ["CS", "SCK", "MOSI", "MISO"] {
        src.digital.push(latscope_model::DigitalTrack::new(n, 0));
    }
    let d = DecoderDialog::open_on(&registry, &src, latscope::gui::document::SourceId(1));
    assert_eq!(d.spec, "spi:clk=SCK,mosi=MOSI,miso=MISO,cs=CS");
    assert_eq!(d.problem, None);
    // Silent channels are said to never toggle, as `latscope decode` says on stderr.
    assert!(d.notes.iter().any(|n| n.contains("clk `SCK`") && n.contains("never toggle")), "{:?}", d.notes);
    // Two CMD lines: the role stays empty and the dialog says why.
    let mut two = latscope_model::Source::new("sd", "vcd", latscope_model::SourceKind::File);
    for n in ["a.CLK", "a.CMD", "b.CMD"] {
        two.digital.push(latscope_model::DigitalTrack::new(n, 0));
    }
    let mut d = DecoderDialog::open_on(&registry, &two, latscope::gui::document::SourceId(2));
    d.set_decoder(&registry, "sd");
    assert_eq!(d.channels[1], ("cmd".to_owned(), String::new()));
    assert!(d.unguessed.iter().any(|n| n.contains("a.CMD, b.CMD")), "{:?}", d.unguessed);
    // SD over SPI offers both stages' options, with the decoder table's hints.
    d.set_decoder(&registry, "sd-spi");
    assert_eq!(d.options.iter().map(|o| o.0.as_str()).collect::<Vec<_>>(), ["spi", "sd-spi"]);
}

#[test]
fn clicking_an_annotation_on_its_row_inspects_its_fields() {
    let mut h = open_sd();
    decode(&mut h, 0, SPEC);
    wait(&mut h, "the decode", decoded);
    // The second command (CMD8, SEND_IF_COND) in the middle of the view.
    let (lane, start, end, event) = {
        let sv = h.state().view.shown(&h.state().doc)[0];
        let lane = sv.prepared.lanes.iter().position(|l| l.name == "sd.cmd").unwrap();
        let LaneKind::Spans { rows, .. } = &sv.prepared.lanes[lane].kind else { panic!("not a span lane") };
        let r = &rows[0];
        (lane, sv.to_common(r.start[1]), sv.to_common(r.end[1]), r.event[1] as usize)
    };
    let width = end - start;
    h.state_mut().update(Message::View(ViewMsg::ShowRange(start - width, end + width)));
    h.run_steps(4);
    let pos = {
        let wb = h.state();
        let id = LaneId { source: source_id(wb, 0), lane };
        let rect = wb.frame.layout.rows.iter().find(|(i, _)| *i == id).expect("sd.cmd is laid out").1;
        let x = wb.view.viewport.x_of(wb.frame.layout.data_left, (start + end) / 2.0);
        egui::pos2(x, rect.top() + 10.0)
    };
    assert_eq!(h.state().view.overlay.selected, None);
    click_at(&mut h, pos);
    let wb = h.state();
    assert_eq!(wb.view.overlay.selected, Some(EventSel { source: source_id(wb, 0), index: event }));
    let src = wb.view.shown(&wb.doc)[0].source();
    let e = src.events.get(event).unwrap();
    assert_eq!(src.strings.resolve(e.name()), "sd_cmd");
    // The inspector lists the command's typed fields as engineers read them: CMD8's
    // argument is 0x1AA (stored as 426, which rules match too), its latency has a unit.
    let _ = h.get_by_label(&format!("{} · event #{event}", src.name));
    let fields = latscope::gui::views::timeline::fields_read(src, event);
    let field = |k: &str| fields.iter().find(|(n, _, _)| n == k).map(|(_, v, raw)| (v.clone(), raw.clone()));
    assert_eq!(field("index"), Some(("8".into(), None)), "{fields:?}");
    assert_eq!(field("arg"), Some(("0x1AA".into(), Some("426".into()))), "{fields:?}");
    assert_eq!(field("crc_ok"), Some(("1".into(), None)), "{fields:?}");
    assert_eq!(field("name"), Some(("SEND_IF_COND".into(), None)), "{fields:?}");
    let _ = h.get_by_label("0x1AA");
    let _ = h.get_by_label("(426)");
}

/// On a simulated SD host's trace and its VCD, the dialog maps `cmd` to the bus line
/// `litesdcard.SD_CMD`, not to `litesdcard.CMD` (the model's command phase, where
/// `--decoder sd:cmd=CMD` is ambiguous): decoding then reads every command the host sent,
/// without one CRC warning. It used to pick the phase line and decode one garbage command.
#[test]
fn on_a_simulated_trace_and_its_vcd_the_dialog_maps_the_bus_and_decodes_it_cleanly() {
    let dir = common::Scratch::new("gui-sim-pair");
    let scenario =
        latscope_sim::prepare("litesdcard", &["sd_bus=true".into()], Some(3), Some("20ms")).unwrap();
    let sim = latscope_sim::run(scenario).unwrap();
    let (trace, vcd) = (dir.join("sim.txt"), dir.join("sim.vcd"));
    latscope_engine::sim::write_trace(&sim.source, &trace, &[]).unwrap();
    latscope_engine::sim::write_trace(&sim.source, &vcd, &[]).unwrap();
    let mut h = harness(vec![trace, vcd]);
    wait(&mut h, "loading", |wb| wb.doc.sources.len() == 2 && wb.loads().is_empty());
    let second = source_id(h.state(), 1);
    h.state_mut().update(Message::Decoder(DecoderMsg::Open(Some(second))));
    let d = h.state().dialogs.decoder.clone();
    assert_eq!(d.decoder, "sd");
    let channel = |role: &str| d.channels.iter().find(|c| c.0 == role).map(|c| c.1.clone());
    assert_eq!(channel("cmd").as_deref(), Some("litesdcard.SD_CMD"), "{:?}", d.channels);
    assert_eq!(channel("clk").as_deref(), Some("litesdcard.SD_CLK"), "{:?}", d.channels);
    assert_eq!(d.problem, None);
    // The phase line, typed as a user might: ambiguous, as on the command line.
    let registry = h.state().registry.clone();
    let cli = latscope_engine::decode::check(&registry, "sd:clk=SD_CLK,cmd=CMD", &d.names);
    assert!(cli.is_err_and(|e| e.to_string().contains("ambiguous")), "as `decode` says");
    decode(&mut h, 1, &d.spec);
    wait(&mut h, "the decode", |wb| {
        wb.view.shown(&wb.doc).get(1).is_some_and(|sv| !sv.source().spans.is_empty())
    });
    let wb = h.state();
    assert!(wb.errors.is_empty(), "{:?}", wb.errors);
    let src = wb.view.shown(&wb.doc)[1].source();
    let commands = src.spans.iter().find(|s| s.name == "sd.cmd").map_or(0, |s| s.len());
    let sent = sim
        .source
        .events
        .iter()
        .filter(|e| sim.source.strings.resolve(e.name()) == "mmc_request_start")
        .count();
    assert!(commands >= sent && sent > 0, "{commands} commands decoded for {sent} requests");
    assert!(!src.spans.iter().any(|s| s.name == "sd.warnings"), "no decode warnings");
}

/// The Add decoder dialog lists sigrok-cli's decoders once it has read them; a JTAG VCD
/// gets `sigrok:jtag` with its channels guessed, and decoding adds sigrok-cli's annotations
/// as rows of the source.
#[test]
#[cfg_attr(not(have_sigrok_cli), ignore = "needs sigrok-cli: apt-get install sigrok-cli")]
fn the_dialog_lists_sigrok_decoders_and_a_jtag_vcd_decodes_through_sigrok_cli() {
    use latscope::gui::message::DecoderMsg;
    let vcd = latscope_testkit::corpus("vcd/wellen_atxmega_bmda_jtag.vcd");
    let mut h = harness(vec![vcd.clone()]);
    wait(&mut h, "loading", |wb| wb.doc.sources.len() == 1 && wb.loads().is_empty());
    h.state_mut().update(DecoderMsg::Open(None).into());
    wait(&mut h, "sigrok's decoders", |wb| wb.registry.decoder("sigrok:jtag").is_some());
    let (registry, mut dialog) = (h.state().registry.clone(), h.state().dialogs.decoder.clone());
    dialog.set_decoder(&registry, "sigrok:jtag");
    let spec = dialog.assemble();
    assert_eq!(spec, "sigrok:jtag:tdi=tdi,tdo=tdo,tck=tck,tms=tms,srst=srst", "{:?}", dialog.channels);
    let source = h.state().doc.sources[0].id;
    let stack = latscope_decoders::spec::Stack::parse(&spec).unwrap();
    h.state_mut().update(DecoderMsg::Add { source, stacks: vec![stack] }.into());
    wait(&mut h, "the decode", |wb| {
        wb.doc.sources[0].source().spans.iter().any(|s| s.name.starts_with("sigrok:jtag."))
    });
    let n: usize = h.state().doc.sources[0]
        .source()
        .spans
        .iter()
        .filter(|s| s.name.starts_with("sigrok:jtag."))
        .map(|s| s.len())
        .sum();
    let out = Command::new("sigrok-cli")
        .args([
            "-I",
            "vcd",
            "-i",
            vcd.to_str().unwrap(),
            "-P",
            "jtag:tck=tck:tms=tms:tdi=tdi:tdo=tdo",
            "-A",
            "jtag",
        ])
        .output()
        .unwrap();
    assert_eq!(n, String::from_utf8_lossy(&out.stdout).lines().count());
}

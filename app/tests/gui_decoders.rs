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
use latscope::gui::message::Message;
use latscope::gui::picker::NoPicker;
use latscope::gui::prepare::LaneKind;
use latscope::gui::session::Session;
use latscope::gui::{Options, Workbench};
use std::path::PathBuf;
use workbench_harness::{click_at, wait};

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
    wait(&mut h, "loading", |wb| wb.view.sources.len() == 1 && wb.loads().is_empty());
    h.step();
    h
}

fn decoded(wb: &Workbench) -> bool {
    wb.view.sources.first().is_some_and(|sv| !sv.source().spans.is_empty())
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
    assert_eq!(decoder_dialog::CHOICES[d.choice].1, "sd");
    assert_eq!(d.spec, SPEC);
    assert_eq!(d.problem, None);
    let _ = h.get_by_label(SPEC);
    // A bad option is reported as it is typed, with what the decoder expects.
    let mut bad = d.clone();
    bad.options = "width=3".into();
    bad.check();
    let problem = bad.problem.clone().unwrap_or_default();
    assert!(problem.ends_with("sd: `width=3`: expected 1 or 4"), "{problem}");
    let mut unknown = d.clone();
    unknown.channels[1].1 = "CMDX".into();
    unknown.check();
    let p = unknown.problem.clone().unwrap_or_default();
    assert!(p.contains("no channel `CMDX`") && p.contains("DAT3"), "{p}");
    // The window shows it, and its Decode button does nothing until it is fixed.
    h.state_mut().update(Message::EditDecoder(bad));
    h.run_steps(8);
    let _ = h.get_by_label(&problem);
    h.get_by_label("Decode").click();
    h.run_steps(8);
    assert!(h.state().dialogs.decoder.open);
    assert!(h.state().view.sources[0].source().spans.is_empty());
}

#[test]
fn the_palette_adds_a_decoder_whose_rows_sit_under_the_bus_and_link_to_events() {
    let mut h = open_sd();
    h.key_press_modifiers(egui::Modifiers::COMMAND | egui::Modifiers::SHIFT, egui::Key::P);
    h.step();
    h.step();
    h.state_mut().update(Message::PaletteQuery("decoder".into()));
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
    let sv = &wb.view.sources[0];
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
    h.state_mut().update(Message::SetFilter("sd_cmd".into()));
    wait(&mut h, "the filter", |wb| !wb.table_pending());
    let wb = h.state();
    let src = wb.view.sources[0].source();
    let names: Vec<String> = wb
        .table
        .rows
        .rows
        .iter()
        .map(|r| src.strings.resolve(src.events.get(r.index as usize).unwrap().name()).into_owned())
        .collect();
    assert_eq!(names.iter().filter(|n| *n == "sd_cmd").count(), 5, "{names:?}");
    h.state_mut().update(Message::SearchStep(true));
    let sel = h.state().view.overlay.selected.unwrap();
    assert_eq!(sel.index, r.event[0] as usize);
    // Decoding the same stack again is refused, not doubled: the dialog says so before, the
    // job if asked anyway.
    h.state_mut().update(Message::OpenDecoder(Some(0)));
    h.step();
    let again = h.state().dialogs.decoder.clone();
    assert_eq!(again.spec, SPEC);
    assert!(again.problem.as_deref().is_some_and(|p| p.contains("already decoded")), "{again:?}");
    h.state_mut().update(Message::AddDecoder { source: 0, specs: vec![SPEC.into()] });
    wait(&mut h, "the refusal", |wb| !wb.errors.is_empty());
    assert!(h.state().errors[0].contains("already decoded"), "{:?}", h.state().errors);
}

#[test]
fn a_session_keeps_the_decoder_and_decodes_again_when_opened() {
    let dir = common::Scratch::new("gui-decoders-session");
    let mut h = open_sd();
    // Only the decoder: the default rules have nothing to measure on a bare SD bus.
    h.state_mut().analysis.rules.specs.clear();
    h.state_mut().update(Message::AddDecoder { source: 0, specs: vec![SPEC.into()] });
    wait(&mut h, "the decode", decoded);
    let saved = Session::capture(h.state());
    assert_eq!(saved.files[0].decoders, [SPEC]);
    let path = dir.join("sd.latscope.json");
    saved.write(&path, &[]).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("\"decoders\"") && text.contains(SPEC), "{text}");

    let mut fresh = harness(Vec::new());
    fresh.step();
    fresh.state_mut().update(Message::OpenFiles(vec![path]));
    wait(&mut fresh, "the session and its decode", |wb| !wb.session_pending() && decoded(wb));
    let wb = fresh.state();
    assert!(wb.errors.is_empty(), "{:?}", wb.errors);
    let src = wb.view.sources[0].source();
    assert_eq!(decoder_dialog::specs_of(src), [SPEC]);
    assert!(src.spans.iter().any(|s| s.name == "sd.cmd" && s.len() == 5));
    // Saved again, it is the same session.
    assert_eq!(Session::capture(wb).files[0].decoders, [SPEC]);
}

#[test]
fn channels_are_guessed_from_their_usual_names() {
    let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let spi = names(&["spi.SCK", "spi.MOSI", "spi.MISO", "spi.nCS", "GPIO"]);
    assert_eq!(decoder_dialog::guess("clk", &spi, &[]).as_deref(), Some("spi.SCK"));
    assert_eq!(decoder_dialog::guess("cs", &spi, &[]).as_deref(), Some("spi.nCS"));
    assert_eq!(decoder_dialog::guess("miso", &spi, &[]).as_deref(), Some("spi.MISO"));
    let sim = names(&["CMD", "DMA", "IRQ", "SD_CLK", "SD_CMD", "SD_DAT0", "SD_DAT1", "SD_DAT2", "SD_DAT3"]);
    // An exact name wins over a suffix: CMD is the model's phase line, SD_CMD the bus.
    assert_eq!(decoder_dialog::guess("cmd", &sim, &[]).as_deref(), Some("CMD"));
    assert_eq!(decoder_dialog::guess("clk", &sim, &[]).as_deref(), Some("SD_CLK"));
    assert_eq!(decoder_dialog::guess("dat2", &sim, &[]).as_deref(), Some("SD_DAT2"));
    let i2c = names(&["SCL", "SDA"]);
    assert_eq!(decoder_dialog::guess("sda", &i2c, &[]).as_deref(), Some("SDA"));
    let uart = names(&["uart.TXD", "uart.RXD"]);
    assert_eq!(decoder_dialog::guess("rx", &uart, &[]).as_deref(), Some("uart.RXD"));
    // Two equally good names are no guess.
    assert_eq!(decoder_dialog::guess("clk", &names(&["a.CLK", "b.CLK"]), &[]), None);
    assert_eq!(decoder_dialog::guess("clk", &names(&["D0", "D1"]), &[]), None);
    // A dialog on a capture with SCK/MOSI/MISO/CS picks SPI and maps all four.
    let mut src = latscope_model::Source::new("spi", "sigrok-sr", latscope_model::SourceKind::File);
    for n in ["CS", "SCK", "MOSI", "MISO"] {
        src.digital.push(latscope_model::DigitalTrack::new(n, 0));
    }
    let d = DecoderDialog::open_on(&src, 0);
    assert_eq!(d.spec, "spi:clk=SCK,mosi=MOSI,miso=MISO,cs=CS");
    assert_eq!(d.problem, None);
}

#[test]
fn clicking_an_annotation_on_its_row_inspects_its_fields() {
    let mut h = open_sd();
    h.state_mut().update(Message::AddDecoder { source: 0, specs: vec![SPEC.into()] });
    wait(&mut h, "the decode", decoded);
    // The second command (CMD8, SEND_IF_COND) in the middle of the view.
    let (lane, start, end, event) = {
        let sv = &h.state().view.sources[0];
        let lane = sv.prepared.lanes.iter().position(|l| l.name == "sd.cmd").unwrap();
        let LaneKind::Spans { rows, .. } = &sv.prepared.lanes[lane].kind else { panic!("not a span lane") };
        let r = &rows[0];
        (lane, sv.to_common(r.start[1]), sv.to_common(r.end[1]), r.event[1] as usize)
    };
    let width = end - start;
    h.state_mut().update(Message::ShowRange(start - width, end + width));
    h.run_steps(4);
    let pos = {
        let wb = h.state();
        let id = latscope::gui::message::LaneId { source: 0, lane };
        let rect = wb.view.layout.rows.iter().find(|(i, _)| *i == id).expect("sd.cmd is laid out").1;
        let x = wb.view.viewport.x_of(wb.view.layout.data_left, (start + end) / 2.0);
        egui::pos2(x, rect.top() + 10.0)
    };
    assert_eq!(h.state().view.overlay.selected, None);
    click_at(&mut h, pos);
    let wb = h.state();
    assert_eq!(wb.view.overlay.selected, Some(latscope::gui::message::EventSel { source: 0, index: event }));
    let src = wb.view.sources[0].source();
    let e = src.events.get(event).unwrap();
    assert_eq!(src.strings.resolve(e.name()), "sd_cmd");
    // The inspector lists the command's typed fields: CMD8's argument 0x1AA is 426.
    let _ = h.get_by_label(&format!("{} · event #{event}", src.name));
    let fields = latscope::gui::timeline::raw_fields(src, event);
    let field = |k: &str| fields.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    assert_eq!(field("index").as_deref(), Some("8"), "{fields:?}");
    assert_eq!(field("arg").as_deref(), Some("426"), "{fields:?}");
    assert_eq!(field("crc_ok").as_deref(), Some("1"), "{fields:?}");
    assert_eq!(field("name").as_deref(), Some("SEND_IF_COND"), "{fields:?}");
    let _ = h.get_by_label("426");
}

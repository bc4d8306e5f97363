//! Helpers shared by the workbench's kittest tests: a harness around a `Workbench`, and a
//! wait for its workers' answers, a click as a mouse makes it (each test crate uses some).
#![allow(dead_code)]

use egui_kittest::Harness;
use latscope::gui::Workbench;
use std::time::Duration;

/// A harness drawing `wb` in a window of `size` points (accessibility checks off: the
/// timeline is painted, not made of widgets).
pub fn harness(wb: Workbench, size: egui::Vec2) -> Harness<'static, Workbench> {
    Harness::builder()
        .with_size(size)
        .with_accessibility_check(false)
        .build_ui_state(|ui, wb: &mut Workbench| wb.ui(ui), wb)
}

/// Steps frames until `done` holds (workers answer asynchronously), for at most about 30 s.
pub fn wait(h: &mut Harness<'static, Workbench>, what: &str, done: impl Fn(&Workbench) -> bool) {
    for _ in 0..6000 {
        h.step();
        if done(h.state()) {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    panic!("timed out waiting for {what}: errors {:?}", h.state().errors);
}

/// Clicks at `pos` (press and release in separate frames, as a mouse does).
pub fn click_at(h: &mut Harness<'static, Workbench>, pos: egui::Pos2) {
    h.hover_at(pos);
    h.step();
    h.drag_at(pos);
    h.step();
    h.drop_at(pos);
    h.step();
    h.step();
}

/// Sets the analysis panel's rules as the panel does when the user edits them.
pub fn set_rules(h: &mut Harness<'static, Workbench>, specs: &[&str]) {
    use latscope::gui::message::{AnalysisMsg, Message};
    let mut rules = h.state().analysis.rules.clone();
    rules.specs = specs.iter().map(|s| s.to_string()).collect();
    h.state_mut().update(Message::Analysis(AnalysisMsg::EditRules(rules)));
}

/// The id of the `index`-th source on the timeline.
pub fn source_id(wb: &Workbench, index: usize) -> latscope::gui::document::SourceId {
    wb.doc.sources[index].id
}

/// The errors in the banner, which then closes (Esc does the same): what a test reads and
/// clears before what it checks next.
pub fn take_errors(h: &mut Harness<'static, Workbench>) -> Vec<String> {
    use latscope::gui::message::{Message, ShellMsg};
    let errors = h.state().errors.to_vec();
    h.state_mut().update(Message::Shell(ShellMsg::DismissErrors));
    errors
}

/// Decodes the `index`-th source with `spec`, as the Add decoder dialog's Decode does.
pub fn decode(h: &mut Harness<'static, Workbench>, index: usize, spec: &str) {
    use latscope::gui::message::{DecoderMsg, Message};
    let stack = latscope_decoders::spec::Stack::parse(spec).expect("the spec parses");
    let source = source_id(h.state(), index);
    h.state_mut().update(Message::Decoder(DecoderMsg::Add { source, stacks: vec![stack] }));
}

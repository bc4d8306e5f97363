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

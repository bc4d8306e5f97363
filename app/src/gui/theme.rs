//! The workbench's look: a dark theme tuned for long sessions over dense data, and the lane
//! colours (stable per name, so a track keeps its colour across runs).

use egui::{Color32, CornerRadius, Stroke, Visuals};

pub const BG: Color32 = Color32::from_rgb(0x16, 0x18, 0x1d);
pub const PANEL: Color32 = Color32::from_rgb(0x1d, 0x20, 0x26);
pub const LANE_ALT: Color32 = Color32::from_rgb(0x1a, 0x1c, 0x22);
pub const GRID: Color32 = Color32::from_rgb(0x2a, 0x2e, 0x36);
pub const TEXT_DIM: Color32 = Color32::from_rgb(0x8a, 0x92, 0xa0);
pub const TEXT: Color32 = Color32::from_rgb(0xd6, 0xdb, 0xe3);
pub const ACCENT: Color32 = Color32::from_rgb(0x4d, 0xa3, 0xff);
pub const CPU: Color32 = Color32::from_rgb(0x7a, 0x8c, 0xa8);
pub const DIGITAL: Color32 = Color32::from_rgb(0x5f, 0xd3, 0x8a);
pub const ANALOG: Color32 = Color32::from_rgb(0xf2, 0xc1, 0x4e);
pub const IRQ: Color32 = Color32::from_rgb(0xef, 0x6b, 0x5b);
pub const SOFTIRQ: Color32 = Color32::from_rgb(0xb3, 0x7d, 0xf0);
pub const CURSOR_A: Color32 = Color32::from_rgb(0xff, 0xd1, 0x4a);
pub const CURSOR_B: Color32 = Color32::from_rgb(0x4a, 0xd8, 0xff);
pub const MARKER: Color32 = Color32::from_rgb(0xff, 0x7a, 0xc6);
pub const SELECTED: Color32 = Color32::WHITE;

/// Saturated, distinguishable colours on a dark background.
const PALETTE: [Color32; 12] = [
    Color32::from_rgb(0x4d, 0xa3, 0xff),
    Color32::from_rgb(0x5f, 0xd3, 0x8a),
    Color32::from_rgb(0xf2, 0xc1, 0x4e),
    Color32::from_rgb(0xef, 0x6b, 0x5b),
    Color32::from_rgb(0xb3, 0x7d, 0xf0),
    Color32::from_rgb(0x4e, 0xd4, 0xd4),
    Color32::from_rgb(0xf0, 0x8c, 0x3c),
    Color32::from_rgb(0x9c, 0xcc, 0x5a),
    Color32::from_rgb(0xe8, 0x76, 0xb8),
    Color32::from_rgb(0x6f, 0x8c, 0xf5),
    Color32::from_rgb(0xd9, 0xa0, 0x6a),
    Color32::from_rgb(0x6a, 0xc5, 0xa0),
];

/// A stable colour for a name (FNV-1a; `std`'s hasher is randomly seeded).
pub fn color_for(name: &str) -> Color32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in name.bytes() {
        h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    PALETTE[(h as usize) % PALETTE.len()]
}

/// A muted fill for task slices, keyed by label index.
pub fn task_color(label: u32) -> Color32 {
    let c = PALETTE[(label as usize * 7 + 3) % PALETTE.len()];
    c.gamma_multiply(0.55)
}

pub fn apply(ctx: &egui::Context) {
    let mut v = Visuals::dark();
    v.panel_fill = PANEL;
    v.window_fill = PANEL;
    v.extreme_bg_color = BG;
    v.faint_bg_color = LANE_ALT;
    v.override_text_color = Some(TEXT);
    v.selection.bg_fill = ACCENT.gamma_multiply(0.45);
    v.selection.stroke = Stroke::new(1.0, ACCENT);
    v.hyperlink_color = ACCENT;
    v.window_corner_radius = CornerRadius::same(6);
    v.widgets.noninteractive.bg_stroke = Stroke::new(1.0, GRID);
    v.widgets.inactive.corner_radius = CornerRadius::same(3);
    v.widgets.hovered.corner_radius = CornerRadius::same(3);
    v.widgets.active.corner_radius = CornerRadius::same(3);
    ctx.set_visuals(v);
    ctx.global_style_mut(|s| {
        s.spacing.item_spacing = egui::vec2(6.0, 4.0);
        s.spacing.button_padding = egui::vec2(6.0, 2.0);
    });
}

//! The workbench's look: a dark theme tuned for long sessions over dense data, a light theme
//! for daylight and printouts, and the lane colours (stable per name, so a track keeps its
//! colour across runs; darkened on the light theme).

use egui::{Color32, CornerRadius, Stroke, Visuals};

/// The two looks; dark is the default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThemeKind {
    #[default]
    Dark,
    Light,
}

impl ThemeKind {
    pub fn other(self) -> Self {
        match self {
            Self::Dark => Self::Light,
            Self::Light => Self::Dark,
        }
    }
}

thread_local! {
    /// The theme the UI thread draws with (set by [`apply_kind`]); per thread so that
    /// headless tests running side by side do not see each other's theme.
    static CURRENT: std::cell::Cell<ThemeKind> = const { std::cell::Cell::new(ThemeKind::Dark) };
}

/// The theme the current thread draws with.
pub fn current() -> ThemeKind {
    CURRENT.with(std::cell::Cell::get)
}

/// A surface or overlay colour that depends on the theme: it resolves to the current
/// theme's [`Color32`] where it is used, so drawing code names `theme::BG` whatever the theme.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Themed {
    pub dark: Color32,
    pub light: Color32,
}

impl Themed {
    pub fn get(self) -> Color32 {
        match current() {
            ThemeKind::Dark => self.dark,
            ThemeKind::Light => self.light,
        }
    }
    pub fn gamma_multiply(self, factor: f32) -> Color32 {
        self.get().gamma_multiply(factor)
    }
}

impl From<Themed> for Color32 {
    fn from(t: Themed) -> Self {
        t.get()
    }
}

const fn themed(dark: Color32, light: Color32) -> Themed {
    Themed { dark, light }
}

pub const BG: Themed = themed(Color32::from_rgb(0x16, 0x18, 0x1d), Color32::from_rgb(0xfa, 0xfa, 0xf7));
pub const PANEL: Themed = themed(Color32::from_rgb(0x1d, 0x20, 0x26), Color32::from_rgb(0xec, 0xed, 0xea));
pub const LANE_ALT: Themed = themed(Color32::from_rgb(0x1a, 0x1c, 0x22), Color32::from_rgb(0xf1, 0xf2, 0xee));
pub const GRID: Themed = themed(Color32::from_rgb(0x2a, 0x2e, 0x36), Color32::from_rgb(0xc8, 0xcc, 0xd2));
pub const TEXT_DIM: Themed = themed(Color32::from_rgb(0x8a, 0x92, 0xa0), Color32::from_rgb(0x5c, 0x64, 0x70));
pub const TEXT: Themed = themed(Color32::from_rgb(0xd6, 0xdb, 0xe3), Color32::from_rgb(0x1c, 0x20, 0x26));
pub const ACCENT: Themed = themed(Color32::from_rgb(0x4d, 0xa3, 0xff), Color32::from_rgb(0x1a, 0x66, 0xc9));
pub const CURSOR_A: Themed = themed(Color32::from_rgb(0xff, 0xd1, 0x4a), Color32::from_rgb(0xb0, 0x6a, 0x00));
pub const CURSOR_B: Themed = themed(Color32::from_rgb(0x4a, 0xd8, 0xff), Color32::from_rgb(0x00, 0x7c, 0xa8));
pub const MARKER: Themed = themed(Color32::from_rgb(0xff, 0x7a, 0xc6), Color32::from_rgb(0xc2, 0x18, 0x7a));
pub const SELECTED: Themed = themed(Color32::WHITE, Color32::BLACK);
/// Warnings (recovered input, nothing found): amber, unlike an error's red.
pub const WARNING: Themed = themed(Color32::from_rgb(0xf0, 0xb4, 0x3c), Color32::from_rgb(0x8a, 0x5a, 0x00));
/// Search matches marked on the lanes and the overview strip.
pub const MATCH: Themed = themed(Color32::from_rgb(0xff, 0x9e, 0x3d), Color32::from_rgb(0xc4, 0x5c, 0x00));
/// Labels drawn over slice fills: the fills are translucent, so on the light background
/// they come out pale and need dark text.
pub const SLICE_TEXT: Themed = themed(Color32::from_gray(235), Color32::from_gray(25));

/// A lane's default (dark-theme) colour as the light theme shows it: darker, so that the
/// saturated yellows and greens stay readable on a light background.
pub fn on_light(c: Color32) -> Color32 {
    let f = |v: u8| (f32::from(v) * 0.72).round() as u8;
    Color32::from_rgb(f(c.r()), f(c.g()), f(c.b()))
}

/// A lane's default colour in `kind`.
pub fn lane_default(dark: Color32, kind: ThemeKind) -> Color32 {
    match kind {
        ThemeKind::Dark => dark,
        ThemeKind::Light => on_light(dark),
    }
}

/// A palette colour as the current theme should show it (text and marks drawn on the UI
/// thread; lanes are built on workers and follow the theme in the workbench instead).
pub fn readable(c: Color32) -> Color32 {
    lane_default(c, current())
}

/// `#rrggbb`, as sessions store colours.
pub fn to_hex(c: Color32) -> String {
    format!("#{:02x}{:02x}{:02x}", c.r(), c.g(), c.b())
}

/// Parses `#rrggbb`.
pub fn from_hex(text: &str) -> Option<Color32> {
    let hex = text.strip_prefix('#')?;
    if hex.len() != 6 || !hex.is_ascii() {
        return None;
    }
    let byte = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).ok();
    Some(Color32::from_rgb(byte(0)?, byte(2)?, byte(4)?))
}

pub const CPU: Color32 = Color32::from_rgb(0x7a, 0x8c, 0xa8);
pub const DIGITAL: Color32 = Color32::from_rgb(0x5f, 0xd3, 0x8a);
pub const ANALOG: Color32 = Color32::from_rgb(0xf2, 0xc1, 0x4e);
pub const IRQ: Color32 = Color32::from_rgb(0xef, 0x6b, 0x5b);
pub const SOFTIRQ: Color32 = Color32::from_rgb(0xb3, 0x7d, 0xf0);

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

/// The colour of the `i`-th of a few series drawn together (a plot's lines): distinct for
/// the first dozen, where names hashed by `color_for` may share one.
pub fn series_color(i: usize) -> Color32 {
    PALETTE[i % PALETTE.len()]
}

/// A muted fill for a task's slices, keyed by its name (`comm-pid`): the same task has the
/// same colour on every CPU and in every source, as in KernelShark.
pub fn task_color(task: &str) -> Color32 {
    // FNV-1a: stable across runs and platforms (a std hasher is seeded).
    let hash = task
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    let c = PALETTE[(hash % PALETTE.len() as u64) as usize];
    c.gamma_multiply(0.55)
}

pub fn apply(ctx: &egui::Context) {
    apply_kind(ctx, ThemeKind::Dark);
}

/// Sets egui's visuals for `kind` and makes it the theme this thread draws with.
pub fn apply_kind(ctx: &egui::Context, kind: ThemeKind) {
    CURRENT.with(|c| c.set(kind));
    let mut v = match kind {
        ThemeKind::Dark => Visuals::dark(),
        ThemeKind::Light => Visuals::light(),
    };
    v.panel_fill = PANEL.get();
    v.window_fill = PANEL.get();
    v.extreme_bg_color = BG.get();
    v.faint_bg_color = LANE_ALT.get();
    v.override_text_color = Some(TEXT.get());
    v.selection.bg_fill = ACCENT.gamma_multiply(0.45);
    v.selection.stroke = Stroke::new(1.0, ACCENT);
    v.hyperlink_color = ACCENT.get();
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

#[cfg(test)]
mod tests {
    use super::*;

    /// WCAG relative luminance of an opaque colour.
    fn luminance(c: Color32) -> f32 {
        let lin = |v: u8| {
            let s = f32::from(v) / 255.0;
            if s <= 0.04045 { s / 12.92 } else { ((s + 0.055) / 1.055).powf(2.4) }
        };
        0.2126 * lin(c.r()) + 0.7152 * lin(c.g()) + 0.0722 * lin(c.b())
    }

    /// A premultiplied fill over an opaque background, as the painter blends it.
    fn over(fill: Color32, bg: Color32) -> Color32 {
        let keep = 1.0 - f32::from(fill.a()) / 255.0;
        let ch = |f: u8, b: u8| (f32::from(f) + f32::from(b) * keep).round().min(255.0) as u8;
        Color32::from_rgb(ch(fill.r(), bg.r()), ch(fill.g(), bg.g()), ch(fill.b(), bg.b()))
    }

    fn contrast(a: Color32, b: Color32) -> f32 {
        let (x, y) = (luminance(a), luminance(b));
        (x.max(y) + 0.05) / (x.min(y) + 0.05)
    }

    #[test]
    fn a_task_has_one_colour_wherever_it_runs_and_tasks_spread_over_the_palette() {
        assert_eq!(task_color("sh-12315"), task_color("sh-12315"));
        let colours: std::collections::HashSet<_> =
            (0..64).map(|pid| task_color(&format!("kworker/0:1-{pid}"))).collect();
        assert!(colours.len() >= PALETTE.len() / 2, "{} colours for 64 tasks", colours.len());
        assert!(PALETTE.iter().any(|c| c.gamma_multiply(0.55) == task_color("dd-10354")));
    }

    #[test]
    fn slice_labels_are_readable_on_the_light_theme() {
        let (bg, text) = (BG.light, SLICE_TEXT.light);
        // Task slices (every palette entry), IRQ and softirq slices, as drawn on the light
        // background; WCAG's 4.5:1 for normal text.
        let fills = PALETTE.iter().map(|c| c.gamma_multiply(0.55)).chain([IRQ, SOFTIRQ]);
        for fill in fills {
            let shown = over(fill, bg);
            assert!(contrast(shown, text) >= 4.5, "{fill:?} on the light theme: {}", contrast(shown, text));
        }
    }
}

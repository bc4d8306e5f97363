//! The time ruler: steps and units that read at every scale.

use crate::gui::theme;
use crate::gui::view::{SourceView, Viewport};
use egui::{Align2, FontId, Rect, Stroke, pos2};
use latscope_model::Ps;

/// A "nice" ruler step (1, 2 or 5 x 10^k ps) at least `min` ps.
pub fn nice_step(min: f64) -> f64 {
    let min = min.max(1e-3);
    let p = 10f64.powf(min.log10().floor());
    for m in [1.0, 2.0, 5.0, 10.0] {
        if p * m >= min {
            return p * m;
        }
    }
    p * 10.0
}

pub(super) fn ruler(painter: &egui::Painter, rect: Rect, vp: &Viewport, clock: Option<&SourceView<'_>>) {
    painter.rect_filled(rect, 0.0, theme::BG);
    let step = nice_step(vp.ps_per_px * 110.0);
    let first = (vp.start / step).floor() * step;
    let mut t = first;
    let end = vp.start + vp.ps_per_px * f64::from(rect.width());
    let font = FontId::monospace(11.0);
    let seconds_at = |t: f64| match clock {
        Some(src) => src.source().origin.to_source_seconds(src.to_source(t).round() as Ps),
        None => t / 1e12,
    };
    let units = RulerUnits::for_view(step, seconds_at(first).abs().max(seconds_at(end).abs()));
    while t <= end {
        let x = vp.x_of(rect.left(), t);
        if x >= rect.left() {
            painter.line_segment(
                [pos2(x, rect.bottom() - 7.0), pos2(x, rect.bottom())],
                Stroke::new(1.0, theme::TEXT_DIM),
            );
            let label = units.label(seconds_at(t));
            painter.text(
                pos2(x + 3.0, rect.top() + 4.0),
                Align2::LEFT_TOP,
                label,
                font.clone(),
                theme::TEXT_DIM.get(),
            );
        }
        for k in 1..5 {
            let xm = vp.x_of(rect.left(), t + step * f64::from(k) / 5.0);
            if xm >= rect.left() && xm <= rect.right() {
                painter.line_segment(
                    [pos2(xm, rect.bottom() - 3.0), pos2(xm, rect.bottom())],
                    Stroke::new(1.0, theme::GRID),
                );
            }
        }
        t += step;
    }
    painter.line_segment([rect.left_bottom(), rect.right_bottom()], Stroke::new(1.0, theme::GRID));
}

/// An analog lane's value range: whole numbers as such (an enum state `0..3`, a counter),
/// measured values with three decimals (`-2.734..1.953`).
pub fn analog_range_label(lo: f64, hi: f64) -> String {
    let whole = |v: f64| v.fract() == 0.0 && v.abs() < 1e15;
    if whole(lo) && whole(hi) { format!("{lo:.0}..{hi:.0}") } else { format!("{lo:.3}..{hi:.3}") }
}

/// How the ruler writes its tick times: always with a unit, the largest unit the times on
/// screen reach (`533.891480 s` on an uptime clock, `38.856 ms` into a simulation, `50 ns`
/// into a waveform), with the decimals the tick step needs, so a label never reads as a
/// bare number or as thousands of a smaller unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RulerUnits {
    /// Picoseconds per unit (1e12 for seconds).
    unit_ps: f64,
    suffix: &'static str,
    decimals: usize,
}

impl RulerUnits {
    /// Units for ticks `step_ps` apart in a view whose times reach `max_abs_s` seconds.
    pub fn for_view(step_ps: f64, max_abs_s: f64) -> RulerUnits {
        let max_ps = max_abs_s * 1e12;
        let (unit_ps, suffix) = [(1e12, " s"), (1e9, " ms"), (1e6, " us"), (1e3, " ns")]
            .into_iter()
            .find(|&(u, _)| max_ps >= u)
            .unwrap_or((1.0, " ps"));
        let decimals = (-(step_ps / unit_ps).log10().floor()).clamp(0.0, 12.0) as usize;
        RulerUnits { unit_ps, suffix, decimals }
    }

    pub fn label(self, seconds: f64) -> String {
        let v = seconds * 1e12 / self.unit_ps;
        // `-0` reads oddly on a ruler.
        let v = if v.abs() < 0.5 * 10f64.powi(-(self.decimals as i32)) { 0.0 } else { v };
        format!("{v:.*}{}", self.decimals, self.suffix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(step_ps: f64, max_abs_s: f64, times_s: &[f64]) -> Vec<String> {
        let u = RulerUnits::for_view(step_ps, max_abs_s);
        times_s.iter().map(|&t| u.label(t)).collect()
    }

    #[test]
    fn ruler_labels_use_the_largest_unit_the_view_reaches_and_always_say_it() {
        // A GHDL waveform: 50 ns ticks over 400 ns.
        assert_eq!(labels(50e3, 400e-9, &[0.0, 50e-9, 100e-9]), ["0 ns", "50 ns", "100 ns"]);
        // 2 us ticks 38 ms into a run: milliseconds with the step's decimals, never "38856 us".
        assert_eq!(labels(2e6, 0.04, &[0.0, 38.856e-3]), ["0.000 ms", "38.856 ms"]);
        assert_eq!(labels(500e3, 0.04, &[0.0, 1.5e-6]), ["0.0000 ms", "0.0015 ms"]);
        assert_eq!(labels(100e6, 0.9003, &[0.9003]), ["900.3 ms"], "not 900300 us");
        assert_eq!(labels(5e9, 0.04, &[0.0, 0.035]), ["0 ms", "35 ms"]);
        assert_eq!(labels(200.0, 1e-9, &[0.0, 6e-10]), ["0.0 ns", "0.6 ns"]);
        assert_eq!(labels(50e3, 400e-9, &[-1e-15]), ["0 ns"], "no -0");
        // Whole seconds on a 14 s capture read with their unit.
        assert_eq!(labels(2e12, 14.0, &[0.0, 2.0, 14.0]), ["0 s", "2 s", "14 s"]);
    }

    #[test]
    fn analog_ranges_print_whole_numbers_without_decimals() {
        assert_eq!(analog_range_label(0.0, 3.0), "0..3");
        assert_eq!(analog_range_label(-8.0, 4294967288.0), "-8..4294967288");
        assert_eq!(analog_range_label(-2.734, 1.953), "-2.734..1.953");
        assert_eq!(analog_range_label(0.0, 2.5), "0.000..2.500");
    }

    #[test]
    fn ruler_labels_stay_in_seconds_on_uptime_clocks() {
        // ftrace at 533 s: 0.2 s ticks, then 1 us ticks zoomed in.
        assert_eq!(labels(0.2e12, 534.3, &[533.0, 533.2]), ["533.0 s", "533.2 s"]);
        assert_eq!(labels(1e6, 533.9, &[533.891480]), ["533.891480 s"]);
    }
}

//! How times, events and placements read in tooltips, the inspector and the track list.

use crate::gui::document::SourceId;
use crate::gui::theme;
use crate::gui::view::SourceView;
use crate::gui::view::find;
use latscope_model::{Placed, Placement, Ps, Source, format_seconds, render_event, value_text};

use super::hit::Hit;

/// The source-clock time of `t` (source-relative ps) as the tracer prints it.
pub fn clock_text(src: &Source, t: Ps) -> String {
    format!("{:.9} s", src.origin.to_source_seconds(t))
}

/// Common time `t` (ps) as the timeline's clock reads it, in seconds: the first source's
/// clock, which the ruler, the table, the hover and the status bar all show. Every source's
/// own clock is in the inspector.
pub fn common_seconds(sources: &[SourceView<'_>], t: f64) -> f64 {
    match sources.first() {
        Some(sv) => sv.source().origin.to_source_seconds(sv.to_source(t).round() as Ps),
        None => t / 1e12,
    }
}

/// [`common_seconds`] as text, to the nanosecond.
pub fn common_text(sources: &[SourceView<'_>], t: f64) -> String {
    format!("{:.9} s", common_seconds(sources, t))
}

/// An event's columns as `(name, value)` text pairs, then its payload as the tracer prints
/// it (trace.dat: the event format's print fmt, `254,0 RS …`; [`render_event`]).
pub fn event_fields(src: &Source, index: usize) -> Vec<(String, String)> {
    let Some(e) = src.events.get(index) else { return Vec::new() };
    let s = &src.strings;
    let mut out = vec![
        ("event".to_owned(), s.resolve(e.name()).into_owned()),
        ("time".to_owned(), clock_text(src, e.ts())),
        ("cpu".to_owned(), e.cpu().to_string()),
        ("task".to_owned(), format!("{}-{}", s.resolve(e.comm()), e.pid())),
    ];
    if e.flags().is_present() {
        out.push(("flags".to_owned(), e.flags().render()));
    }
    out.push(("payload".to_owned(), render_event(src, index)));
    out
}

/// An event's fields as people read them (`dev=254,0`, `arg=0x1AA`), each with its stored
/// value where that differs (`266338304`): rules and filters match either.
pub fn fields_read(src: &Source, index: usize) -> Vec<(String, String, Option<String>)> {
    let Some(e) = src.events.get(index) else { return Vec::new() };
    let s = &src.strings;
    e.fields()
        .zip(&e.layout().fields)
        .map(|((name, v), &(_, kind))| {
            let name = s.resolve(name).into_owned();
            let mut stored = String::new();
            value_text(src, v, &mut stored);
            match latscope_model::display::readable(&name, kind, v) {
                Some(shown) => (name, shown, Some(stored)),
                None => (name, stored, None),
            }
        })
        .collect()
}

pub(super) fn tooltip(ui: &mut egui::Ui, sources: &[SourceView<'_>], hit: &Hit) {
    // Times on the timeline's clock, as the ruler reads them; the source's own clock beside
    // them when it reads otherwise.
    let when = |ui: &mut egui::Ui, label: &str, sv: &SourceView<'_>, t: Ps| {
        let common = common_text(sources, sv.to_common(t));
        let own = clock_text(sv.source(), t);
        ui.monospace(if own == common {
            format!("{label}{common}")
        } else {
            format!("{label}{common} (own clock {own})")
        });
    };
    match hit {
        Hit::Event(sel) => {
            if let Some(sv) = find(sources, sel.source) {
                egui::Grid::new("tip").num_columns(2).show(ui, |ui| {
                    for (k, v) in event_fields(sv.source(), sel.index) {
                        let is_time = k == "time";
                        ui.label(egui::RichText::new(k).color(theme::TEXT_DIM));
                        match sv.source().events.ts.get(sel.index) {
                            Some(&t) if is_time => when(ui, "", &sv, t),
                            _ => {
                                ui.monospace(v);
                            }
                        }
                        ui.end_row();
                    }
                });
            }
        }
        Hit::Slice { text, start, end, source, .. } => {
            ui.strong(text);
            if let Some(sv) = find(sources, *source) {
                when(ui, "start ", &sv, *start);
            }
            ui.monospace(format!("duration {}", format_seconds(end - start)));
        }
        Hit::Level { name, level, t, source } => {
            let text = match level {
                0 | 1 => level.to_string(),
                2 => "X".to_owned(),
                _ => "Z".to_owned(),
            };
            ui.strong(format!("{name} = {text}"));
            if let Some(sv) = find(sources, *source) {
                when(ui, "", &sv, *t);
            }
        }
        Hit::Value { name, value, unit, t, source } => {
            ui.strong(format!("{name} = {value:.4} {unit}"));
            if let Some(sv) = find(sources, *source) {
                when(ui, "", &sv, *t);
            }
        }
    }
}

/// How source `id` is placed on the common timeline (the first source's clock):
/// `offset +4.000000 s · drift +0.000 ppm · by clock value`. The offset is where its time
/// zero lies; "by clock value" when its clock is of the same kind as an earlier source's,
/// "aligned" when the user moved it, "by host clocks (±U): …" for a logic analyzer the
/// recorder placed beside the kernel, "own origin" when nothing relates its clock to the
/// others, "reference" for the first source.
pub fn placement_text(sources: &[SourceView<'_>], id: SourceId) -> String {
    let Some(index) = sources.iter().position(|s| s.id == id) else { return String::new() };
    let sv = sources[index];
    let earlier: Vec<Placed<'_>> =
        sources[..index].iter().map(|s| Placed::new(s.source(), s.placement)).collect();
    let p = sv.placement;
    let how = if let Some(how) = sv.placed_by {
        format!("by {how}")
    } else if p != Placement::by_clock(&earlier, sv.source()) {
        "aligned".to_owned()
    } else if let Some(e) = earlier.iter().find(|e| e.source.origin.offset_to(sv.source().origin).is_some()) {
        format!("by clock value, as {}", e.source.name)
    } else if index == 0 {
        "reference".to_owned()
    } else {
        "own origin".to_owned()
    };
    let sign = if p.offset < 0 { "-" } else { "+" };
    format!("offset {sign}{} · drift {:+.3} ppm · {how}", format_seconds(p.offset.abs()), p.drift_ppm)
}

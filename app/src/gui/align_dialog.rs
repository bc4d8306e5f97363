//! Alignment from the UI: the Align dialog — a reference and another source,
//! and either matched events (`match REF_ENDPOINT -> ENDPOINT [drift]`, the `--align`
//! grammar, checked as the user types) or an offset and drift typed by hand — and the
//! worker that fits it with the analysis crate's `align` module: the result is the aligned
//! source's placement (its lanes and data are untouched). Once sources are aligned, rules
//! run across them together, as `latscope report --align` does.

use super::message::Message;
use super::prepare::Prepared;
use latscope_analysis::align::{Alignment, apply_align, parse_align};
use latscope_model::Placement;

/// What the dialog holds between frames.
#[derive(Debug, Clone, PartialEq)]
pub struct AlignDialog {
    pub open: bool,
    pub reference: usize,
    pub other: usize,
    /// By hand (offset and drift) rather than by matched events.
    pub by_hand: bool,
    /// `REF_ENDPOINT -> ENDPOINT [drift]`.
    pub matching: String,
    /// A signed duration, e.g. `+12.5us`.
    pub offset: String,
    pub drift_ppm: f64,
}

impl Default for AlignDialog {
    fn default() -> Self {
        Self {
            open: false,
            reference: 0,
            other: 1,
            by_hand: false,
            matching: String::new(),
            offset: "+0us".into(),
            drift_ppm: 0.0,
        }
    }
}

impl AlignDialog {
    /// The `--align` text after `N:` the dialog describes.
    pub fn spec_suffix(&self) -> String {
        if self.by_hand {
            let drift =
                if self.drift_ppm == 0.0 { String::new() } else { format!(":{:+}ppm", self.drift_ppm) };
            format!("{}{drift}", self.offset.trim())
        } else {
            format!("match {}", self.matching.trim())
        }
    }

    /// The equivalent command-line argument (the reference must be input 0 there).
    pub fn cli_text(&self) -> Option<String> {
        (self.reference == 0).then(|| format!("--align '{}:{}'", self.other, self.spec_suffix()))
    }

    /// Whether the dialog's text parses, with the parser's message (columns count from the
    /// start of the field the user types in).
    pub fn check(&self) -> Result<(), String> {
        if self.reference == self.other {
            return Err("pick two different sources".into());
        }
        check_suffix(&self.spec_suffix(), if self.by_hand { 0 } else { "match ".len() })
    }
}

/// Parses `suffix` as the part of an `--align` after `N:`; `typed_at` is where the user's
/// own text starts in it, so error columns point into what they typed.
fn check_suffix(suffix: &str, typed_at: usize) -> Result<(), String> {
    let prefix = "1:";
    parse_align(&format!("{prefix}{suffix}")).map(|_| ()).map_err(|e| {
        let column = e.column.saturating_sub(prefix.len() + typed_at);
        format!("column {column}: {}", e.message)
    })
}

/// Aligns `other` onto `reference` (placed at `reference_at`) by `suffix` (the `--align`
/// text after `N:`): the placement fitted for `other`. Both sources are only read.
pub fn align_pair(
    reference: &Prepared,
    reference_at: Placement,
    other: &Prepared,
    suffix: &str,
) -> Result<Alignment, String> {
    let spec = parse_align(&format!("1:{suffix}")).map_err(|e| e.to_string())?;
    let mut placements = [reference_at, Placement::IDENTITY];
    apply_align(&spec, &[&reference.source, &other.source], &mut placements).map_err(|e| e.to_string())
}

/// How an alignment reads in the panel and status (the CLI's report prints the same);
/// `labels` name the sources ([`super::rooms::ViewState::labels`]).
pub fn describe(a: &Alignment, labels: &[String]) -> String {
    format!(
        "{}: offset {:.3} ns, drift {:.3} ppm, {} matched, rms {:.3} ns",
        labels.get(a.source).map_or("?", String::as_str),
        a.placement.offset as f64 / 1e3,
        a.placement.drift_ppm,
        a.matched,
        a.residual_rms_ps / 1e3
    )
}

/// The dialog window; returns the alignment to apply, or a reset, and the dialog as edited.
pub fn show(ctx: &egui::Context, dialog: &AlignDialog, names: &[String], busy: bool) -> Vec<Message> {
    let mut msgs = Vec::new();
    let mut edited = dialog.clone();
    let d = &mut edited;
    let mut open = d.open;
    let window = egui::Window::new("Align sources")
        .open(&mut open)
        .resizable(false)
        .collapsible(false)
        .pivot(egui::Align2::CENTER_TOP)
        .default_pos(ctx.content_rect().center_top() + egui::vec2(0.0, 80.0));
    window.show(ctx, |ui| {
        if names.len() < 2 {
            ui.label("Open two sources (a scope capture and a kernel trace) to align them.");
            return;
        }
        let pick = |ui: &mut egui::Ui, label: &str, value: &mut usize| {
            egui::ComboBox::from_label(label)
                .selected_text(names.get(*value).map_or("?", String::as_str))
                .show_ui(ui, |ui| {
                    for (i, n) in names.iter().enumerate() {
                        ui.selectable_value(value, i, n);
                    }
                });
        };
        pick(ui, "reference (kept)", &mut d.reference);
        pick(ui, "aligned onto it", &mut d.other);
        ui.horizontal(|ui| {
            ui.radio_value(&mut d.by_hand, false, "Match events");
            ui.radio_value(&mut d.by_hand, true, "By hand");
        });
        if d.by_hand {
            ui.horizontal(|ui| {
                ui.label("offset");
                ui.add(egui::TextEdit::singleline(&mut d.offset).desired_width(120.0).hint_text("+12.5us"));
                ui.label("drift");
                ui.add(egui::DragValue::new(&mut d.drift_ppm).speed(0.1).suffix(" ppm"));
            });
        } else {
            ui.add(
                egui::TextEdit::singleline(&mut d.matching)
                    .desired_width(360.0)
                    .font(egui::TextStyle::Monospace)
                    .hint_text("tracing_mark_write[buf~gpio] -> D0:rise drift"),
            );
            ui.weak("REFERENCE_ENDPOINT -> ENDPOINT [drift]: the k-th match pairs with the k-th");
        }
        let verdict = d.check();
        let typed = if d.by_hand { &d.offset } else { &d.matching };
        match &verdict {
            // Nothing typed yet: the hint says what to type, not an error.
            Err(_) if typed.trim().is_empty() => {}
            Ok(()) => {
                if let Some(cli) = d.cli_text() {
                    ui.weak(format!("same as: latscope report … {cli}"));
                }
            }
            Err(e) => {
                ui.colored_label(ui.visuals().error_fg_color, e);
            }
        }
        ui.horizontal(|ui| {
            if ui.add_enabled(verdict.is_ok() && !busy, egui::Button::new("Align")).clicked() {
                msgs.push(Message::Align { reference: d.reference, other: d.other, spec: d.spec_suffix() });
            }
            if busy {
                ui.spinner();
            }
            if ui.button("Remove alignment").on_hover_text("Put every source back on its own clock").clicked()
            {
                msgs.push(Message::ResetAlign);
            }
        });
    });
    d.open = open;
    if edited != *dialog {
        msgs.push(Message::EditAlign(edited));
    }
    msgs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dialog_composes_the_cli_grammar_and_points_errors_into_the_field() {
        let mut d =
            AlignDialog { matching: "block_rq_issue -> block_rq_issue".into(), ..AlignDialog::default() };
        assert_eq!(d.check(), Ok(()));
        assert_eq!(d.cli_text().as_deref(), Some("--align '1:match block_rq_issue -> block_rq_issue'"));
        d.matching = "block_rq_issue block_rq_issue".into();
        let e = d.check().unwrap_err();
        assert!(e.starts_with("column 15:") && e.contains("->"), "{e}");
        d.by_hand = true;
        d.offset = "-3ms".into();
        d.drift_ppm = 20.0;
        assert_eq!(d.spec_suffix(), "-3ms:+20ppm");
        assert_eq!(d.check(), Ok(()));
        d.offset = "3".into();
        assert!(d.check().unwrap_err().starts_with("column 1:"), "{:?}", d.check());
        d.other = 0;
        assert!(d.check().is_err());
    }
}

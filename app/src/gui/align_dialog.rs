//! Alignment from the UI: the Align dialog — a reference and another source,
//! and either matched events (`match REF_ENDPOINT -> ENDPOINT [drift]`, the `--align`
//! grammar, checked as the user types) or an offset and drift typed by hand — and the
//! worker's fit with the analysis crate's `align` module: the result is the aligned
//! source's placement (its lanes and data are untouched). Once sources are aligned, rules
//! run across them together, as `latscope report --align` does.

use super::document::SourceId;
use super::prepare::Prepared;
use latscope_analysis::align::{AlignSpec, Alignment, apply_align, parse_align};
use latscope_model::Placement;

/// What the dialog holds between frames.
#[derive(Debug, Clone, PartialEq)]
pub struct AlignDialog {
    pub open: bool,
    /// The sources picked (the document's first two when it opens).
    pub reference: Option<SourceId>,
    pub other: Option<SourceId>,
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
            reference: None,
            other: None,
            by_hand: false,
            matching: String::new(),
            offset: "+0us".into(),
            drift_ppm: 0.0,
        }
    }
}

/// What is wrong with the dialog's text: said under the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AlignProblem {
    #[error("pick two different sources")]
    SameSource,
    /// Columns count from the start of the field the user types in.
    #[error("column {column}: {message}")]
    Text { column: usize, message: String },
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

    /// The equivalent command-line argument, given the places of the two sources among the
    /// open ones (the reference must be input 0 there).
    pub fn cli_text(&self, reference_at: usize, other_at: usize) -> Option<String> {
        (reference_at == 0).then(|| format!("--align '{other_at}:{}'", self.spec_suffix()))
    }

    /// The alignment the dialog describes (of source 1 onto source 0), or what is wrong
    /// with it.
    pub fn spec(&self) -> Result<AlignSpec, AlignProblem> {
        if self.reference == self.other {
            return Err(AlignProblem::SameSource);
        }
        let typed_at = if self.by_hand { 0 } else { "match ".len() };
        let prefix = "1:";
        parse_align(&format!("{prefix}{}", self.spec_suffix())).map_err(|e| AlignProblem::Text {
            column: e.column.saturating_sub(prefix.len() + typed_at),
            message: e.message,
        })
    }
}

/// Aligns `other` onto `reference` (placed at `reference_at`) by `spec`: the placement
/// fitted for `other`. Both sources are only read.
pub fn align_pair(
    reference: &Prepared,
    reference_at: Placement,
    other: &Prepared,
    spec: &AlignSpec,
) -> anyhow::Result<Alignment> {
    // The pair is numbered 0 and 1, whatever the two were among the open sources.
    let spec = spec.clone().of_source(1);
    let mut placements = [reference_at, Placement::IDENTITY];
    Ok(apply_align(&spec, &[&reference.source, &other.source], &mut placements)?)
}

/// How an alignment of source `label` reads in the panel and status (the CLI's report
/// prints the same numbers). An offset typed by hand says so, rather than a fit of nothing
/// ("0 matched, rms 0").
pub fn describe(a: &Alignment, label: &str) -> String {
    let offset = a.placement.offset as f64 / 1e3;
    let drift = a.placement.drift_ppm;
    if a.matched == 0 {
        return format!("{label}: offset {offset:.3} ns, drift {drift:.3} ppm, set by hand");
    }
    format!(
        "{label}: offset {offset:.3} ns, drift {drift:.3} ppm, fitted on {} matched pairs, rms {:.3} ns",
        a.matched,
        a.residual_rms_ps / 1e3
    )
}

/// What the offset is relative to, said in the dialog: the aligned source's time zero on
/// the reference's clock.
pub fn reference_text(reference: &str, other: &str) -> String {
    format!(
        "The offset is where {other}'s own time zero falls on {reference}'s clock \
         (+0: both clocks read the same); drift stretches {other}'s clock. {reference} stays where it is."
    )
}

/// A warning when aligning by `spec` would absorb a latency under study into the offset:
/// matching the two ends of an analysis (`rules`: rule texts or preset names, as the rule
/// box holds them), or a handler event to an IRQ line (the line rises before the handler
/// runs, so the fit makes that delay zero on average).
pub fn absorbed_latency(
    spec: &AlignSpec,
    rules: &[String],
    registry: &latscope_engine::Registry,
) -> Option<String> {
    let AlignSpec::Match { reference, other, .. } = spec else { return None };
    let (a, b) = (reference.target(), other.target());
    let same = |x: &str, y: &str| (x == a && y == b) || (x == b && y == a);
    for text in rules {
        if let Ok(latscope_analysis::spec::Spec::Pair(r)) = registry.rule(text)
            && same(r.start.target(), r.end.target())
        {
            return Some(format!(
                "Matching {a} to {b} makes the rule {} read zero on average: the fit puts its latency \
                 into the offset. Match an instant both sources see at once (a marker and the GPIO it \
                 toggles) to measure it.",
                r.name
            ));
        }
    }
    let irq_line = |t: &str| t.to_ascii_lowercase().contains("irq");
    let handler = |t: &str| t.starts_with("irq_handler") || t.contains("handler");
    if (handler(a) && irq_line(b) && !handler(b)) || (handler(b) && irq_line(a) && !handler(a)) {
        return Some(format!(
            "Matching {a} to {b} puts the IRQ latency (line to handler) into the offset: after it, \
             that latency reads zero on average. Match an instant both sources see at once (a \
             marker and the GPIO it toggles) to measure it."
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dialog_composes_the_cli_grammar_and_points_errors_into_the_field() {
        let mut d = AlignDialog {
            reference: Some(SourceId(1)),
            other: Some(SourceId(2)),
            matching: "block_rq_issue -> block_rq_issue".into(),
            ..AlignDialog::default()
        };
        assert!(matches!(d.spec(), Ok(AlignSpec::Match { source: 1, drift: false, .. })), "{:?}", d.spec());
        assert_eq!(d.cli_text(0, 1).as_deref(), Some("--align '1:match block_rq_issue -> block_rq_issue'"));
        assert_eq!(d.cli_text(1, 0), None, "the command line aligns onto input 0");
        d.matching = "block_rq_issue block_rq_issue".into();
        let e = d.spec().unwrap_err().to_string();
        assert!(e.starts_with("column 15:") && e.contains("->"), "{e}");
        d.by_hand = true;
        d.offset = "-3ms".into();
        d.drift_ppm = 20.0;
        assert_eq!(d.spec_suffix(), "-3ms:+20ppm");
        assert_eq!(d.spec(), Ok(AlignSpec::Manual { source: 1, offset: -3_000_000_000, drift_ppm: 20.0 }));
        d.offset = "3".into();
        assert!(d.spec().unwrap_err().to_string().starts_with("column 1:"), "{:?}", d.spec());
        d.other = d.reference;
        assert_eq!(d.spec(), Err(AlignProblem::SameSource));
    }

    #[test]
    fn matching_the_two_ends_of_a_measured_latency_is_warned_about() {
        let registry = latscope_engine::Registry::native();
        let spec = |text: &str| parse_align(&format!("1:match {text}")).unwrap();
        let rules = vec!["irq=irq_handler_entry -> litesdcard.IRQ:rise policy next".to_owned()];
        // The rule's two ends, either way round: the fit would make it read zero.
        let w = absorbed_latency(&spec("litesdcard.IRQ:rise -> irq_handler_entry"), &rules, &registry);
        assert!(w.as_deref().is_some_and(|w| w.contains("rule irq")), "{w:?}");
        // A handler to an IRQ line, with no rule yet: the IRQ latency goes into the offset.
        let w = absorbed_latency(&spec("irq_handler_entry -> litesdcard.IRQ:rise"), &[], &registry);
        assert!(w.as_deref().is_some_and(|w| w.contains("IRQ latency")), "{w:?}");
        // A marker and the GPIO it toggles: one instant, nothing absorbed.
        let w = absorbed_latency(&spec("tracing_mark_write -> D0:rise"), &rules, &registry);
        assert_eq!(w, None);
        let manual = parse_align("1:+3us").unwrap();
        assert_eq!(absorbed_latency(&manual, &rules, &registry), None);
    }

    #[test]
    fn a_hand_offset_reads_as_set_by_hand() {
        let hand = Alignment {
            source: 1,
            placement: Placement::new(3_000_000, 0.0),
            matched: 0,
            residual_rms_ps: 0.0,
        };
        assert_eq!(describe(&hand, "sd.vcd"), "sd.vcd: offset 3000.000 ns, drift 0.000 ppm, set by hand");
        let fit = Alignment { matched: 12, residual_rms_ps: 1500.0, ..hand };
        assert!(describe(&fit, "sd.vcd").contains("fitted on 12 matched pairs, rms 1.500 ns"));
    }
}

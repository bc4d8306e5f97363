// TEMPORARY: replaced by the rules branch at merge
//! A stand-in for the rule-spec module with the agreed signatures: only the presets
//! `irq-handler` and `block`, no rule-spec grammar.

use crate::model::Source;
use crate::outcome::{AnalysisKind, Outcome, Sample};
use crate::pairing::{self, Endpoint, KeyVal, PairError, PairRule, Policy};

/// A parsed rule or preset.
#[derive(Debug, Clone, PartialEq)]
pub enum Spec {
    Pair(PairRule),
}

impl Spec {
    pub fn name(&self) -> &str {
        match self {
            Spec::Pair(r) => &r.name,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("column {column}: {message}")]
pub struct SpecError {
    pub column: usize,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnalysisError {
    #[error(transparent)]
    Pair(#[from] PairError),
}

pub const PRESETS: &[(&str, &str)] = &[
    ("irq-handler", "irq_handler_entry -> irq_handler_exit by cpu,irq policy lifo"),
    ("block", "block_rq_issue -> block_rq_complete by dev,sector policy fifo"),
];

pub fn parse_spec(text: &str) -> Result<Spec, SpecError> {
    Err(SpecError { column: 1, message: format!("rule specs are not supported yet: {text:?}") })
}

pub fn preset_spec(name: &str) -> Result<Spec, SpecError> {
    let rule = match name {
        "irq-handler" => PairRule::new(
            name,
            Endpoint::event("irq_handler_entry"),
            Endpoint::event("irq_handler_exit"),
            Policy::Lifo,
        )
        .by("cpu")
        .by("irq"),
        "block" => PairRule::new(
            name,
            Endpoint::event("block_rq_issue"),
            Endpoint::event("block_rq_complete"),
            Policy::Fifo,
        )
        .by("dev")
        .by("sector"),
        _ => return Err(SpecError { column: 1, message: format!("unknown preset {name:?}") }),
    };
    Ok(Spec::Pair(rule))
}

pub fn run_spec(spec: &Spec, sources: &[Source]) -> Result<Vec<Outcome>, AnalysisError> {
    let Spec::Pair(rule) = spec;
    let mut out = Vec::new();
    for (index, src) in sources.iter().enumerate() {
        let r = pairing::pair(src, rule)?;
        let mut o = Outcome::new(rule.name.clone(), AnalysisKind::Pair, index);
        o.unmatched_start = r.unmatched_start;
        o.unmatched_end = r.unmatched_end;
        o.samples = r
            .pairs
            .iter()
            .map(|p| {
                let key = rule
                    .by
                    .iter()
                    .zip(&p.key)
                    .map(|((_, field), v)| match v {
                        KeyVal::Int(i) => format!("{field}={i}"),
                        KeyVal::Str(s) => format!("{field}={}", src.strings.resolve(*s)),
                        KeyVal::Missing => format!("{field}=?"),
                    })
                    .collect::<Vec<_>>()
                    .join(" ");
                Sample { start: p.start, end: p.end, key }
            })
            .collect();
        o.samples.sort_by_key(|s| (s.start, s.end));
        out.push(o);
    }
    Ok(out)
}

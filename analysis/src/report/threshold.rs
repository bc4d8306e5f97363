//! `--fail-if ANALYSIS.STAT>DURATION` (or `<`): thresholds that turn a report into a CI
//! gate. STAT is one of `count min mean stddev p50 p90 p99 p999 max`;
//! DURATION takes a unit (`ps ns us ms s`), except for `count`, which takes a plain number.

use super::{Analysis, Report};
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    Greater,
    Less,
}

/// A parsed `--fail-if` expression.
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    pub text: String,
    pub analysis: String,
    pub stat: String,
    pub cmp: Cmp,
    /// Nanoseconds, or a count for `count`.
    pub limit: f64,
}

/// A malformed expression; `column` is 1-based in the expression text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--fail-if {text:?}, column {column}: {message}")]
pub struct ThresholdError {
    pub text: String,
    pub column: usize,
    pub message: String,
}

const STATS: [&str; 9] = ["count", "min", "mean", "stddev", "p50", "p90", "p99", "p999", "max"];

/// Parses a duration with a unit into nanoseconds (`2ms`, `500 us`, `1.5e3ns`).
pub fn parse_duration_ns(text: &str) -> Option<f64> {
    let t = text.trim();
    let split = t.find(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E').unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num.trim().parse().ok()?;
    let scale = match unit.trim() {
        "ps" => 1e-3,
        "ns" => 1.0,
        "us" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "" if value == 0.0 => 1.0,
        _ => return None,
    };
    (value.is_finite() && value >= 0.0).then_some(value * scale)
}

impl Threshold {
    pub fn parse(text: &str) -> Result<Threshold, ThresholdError> {
        let err = |column: usize, message: String| ThresholdError { text: text.to_owned(), column, message };
        let op_at = text
            .find(['>', '<'])
            .ok_or_else(|| err(1, "expected ANALYSIS.STAT>LIMIT or ANALYSIS.STAT<LIMIT".into()))?;
        let cmp = if text[op_at..].starts_with('>') { Cmp::Greater } else { Cmp::Less };
        let lhs = text[..op_at].trim();
        // The analysis name may hold dots (`pulse:D1.x`): the statistic follows the last one.
        let dot =
            lhs.rfind('.').ok_or_else(|| err(1, "expected ANALYSIS.STAT before the comparison".into()))?;
        let (analysis, stat) = (lhs[..dot].trim(), lhs[dot + 1..].trim());
        if analysis.is_empty() {
            return Err(err(1, "missing analysis name".into()));
        }
        if !STATS.contains(&stat) {
            return Err(err(
                dot + 2,
                format!("unknown statistic {stat:?}; expected one of {}", STATS.join(" ")),
            ));
        }
        let rhs = &text[op_at + 1..];
        let limit = if stat == "count" {
            rhs.trim().parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0)
        } else {
            parse_duration_ns(rhs)
        };
        let limit = limit.ok_or_else(|| {
            let want = if stat == "count" { "a number" } else { "a duration with a unit (ps ns us ms s)" };
            err(op_at + 2, format!("expected {want}, found {:?}", rhs.trim()))
        })?;
        Ok(Threshold {
            text: text.to_owned(),
            analysis: analysis.to_owned(),
            stat: stat.to_owned(),
            cmp,
            limit,
        })
    }

    fn value_of(&self, a: &Analysis) -> Option<f64> {
        if self.stat == "count" {
            return Some(a.count as f64);
        }
        a.stats_ns.get(&self.stat).flatten()
    }

    /// The crossings of this threshold in `report` (one per input that has the analysis).
    /// `Err` when no analysis has that name: a gate on nothing must not pass silently.
    pub fn check(&self, report: &Report) -> Result<Vec<Crossing>, String> {
        let matching: Vec<&Analysis> = report.analyses.iter().filter(|a| a.name == self.analysis).collect();
        if matching.is_empty() {
            let names: Vec<&str> = report.analyses.iter().map(|a| a.name.as_str()).collect();
            return Err(format!(
                "--fail-if {:?}: the report has no analysis named {:?} (it has: {})",
                self.text,
                self.analysis,
                if names.is_empty() { "none".to_owned() } else { names.join(", ") }
            ));
        }
        Ok(matching
            .into_iter()
            .filter_map(|a| {
                let v = self.value_of(a)?;
                let crossed = match self.cmp {
                    Cmp::Greater => v > self.limit,
                    Cmp::Less => v < self.limit,
                };
                crossed.then(|| Crossing {
                    threshold: self.clone(),
                    input: a.input,
                    label: report.input_label(a.input),
                    value: v,
                })
            })
            .collect())
    }
}

/// A threshold that a report crossed.
#[derive(Debug, Clone, PartialEq)]
pub struct Crossing {
    pub threshold: Threshold,
    pub input: usize,
    /// What the input is called in messages (its name; see `Report::input_labels`).
    pub label: String,
    pub value: f64,
}

impl fmt::Display for Crossing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = &self.threshold;
        let show = |v: f64| if t.stat == "count" { format!("{v}") } else { super::human_ns(v) };
        let op = if t.cmp == Cmp::Greater { ">" } else { "<" };
        write!(
            f,
            "threshold crossed: {}.{} = {} {op} {} (--fail-if {}, {})",
            t.analysis,
            t.stat,
            show(self.value),
            show(t.limit),
            t.text,
            self.label
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::sample_report;

    #[test]
    fn parses_the_design_examples() {
        let t = Threshold::parse("block.p99>2ms").unwrap();
        assert_eq!(
            (t.analysis.as_str(), t.stat.as_str(), t.cmp, t.limit),
            ("block", "p99", Cmp::Greater, 2e6)
        );
        let t = Threshold::parse("wakeup.max>500us").unwrap();
        assert_eq!(t.limit, 500_000.0);
        let t = Threshold::parse("pulse:D1.mean < 1.5 ns").unwrap();
        assert_eq!((t.analysis.as_str(), t.cmp, t.limit), ("pulse:D1", Cmp::Less, 1.5));
        assert_eq!(Threshold::parse("block.count<10").unwrap().limit, 10.0);
    }

    #[test]
    fn rejects_bad_expressions_with_a_column() {
        for (bad, col) in
            [("block.p99", 1), ("block.p98>1ms", 7), ("block.p99>2", 11), ("p99>1ms", 1), (".p99>1ms", 1)]
        {
            let e = Threshold::parse(bad).unwrap_err();
            assert_eq!(e.column, col, "{bad}: {e}");
        }
        assert!(Threshold::parse("block.count>lots").is_err());
        assert!(Threshold::parse("block.max>-1ms").is_err());
    }

    #[test]
    fn checks_against_a_report() {
        let r = sample_report();
        // Input 0 max 6 us, input 1 max 4 us.
        let c = Threshold::parse("irq-handler.max>5us").unwrap().check(&r).unwrap();
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].input, 0);
        assert!(c[0].to_string().contains("irq-handler.max = 6.000 us > 5.000 us"), "{}", c[0]);
        assert!(Threshold::parse("irq-handler.max>6us").unwrap().check(&r).unwrap().is_empty());
        assert_eq!(Threshold::parse("irq-handler.count<2").unwrap().check(&r).unwrap().len(), 1);
        assert!(Threshold::parse("block.p99>1ms").unwrap().check(&r).is_err());
    }
}

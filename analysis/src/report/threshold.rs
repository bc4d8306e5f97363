//! `--fail-if` expressions, which turn a report into a CI gate. Two forms:
//! * `ANALYSIS.STAT>DURATION` (or `<`): a fixed limit. STAT is one of
//!   `count min mean stddev p50 p90 p99 p999 max`; DURATION takes a unit (`ps ns us ms s`),
//!   except for `count`, which takes a plain number.
//! * `ANALYSIS.STAT regressed[(C%)] [by P%]`: the candidate is worse than the baseline with
//!   confidence C (default 95 %): the two-sided C interval of the change lies entirely above
//!   zero, or with `by P%` entirely above +P % of the baseline's value. STAT is one of
//!   `p50 p90 p99 mean`. Needs a baseline (`report --baseline`, `fleet --baseline`); an
//!   inconclusive result passes.

use super::{Analysis, Comparison, Report};
use crate::inference::{Inference, MAX_CONFIDENCE, Stat};
use crate::stats::StatsNs;
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    Greater,
    Less,
}

/// What a `--fail-if` expression tests.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Test {
    /// `>LIMIT` or `<LIMIT`: nanoseconds, or a count for `count`.
    Limit { cmp: Cmp, limit: f64 },
    /// `regressed[(C%)] [by P%]`: `confidence` and `by` as fractions (0.95, 0.10).
    Regressed { stat: Stat, confidence: f64, by: f64 },
}

/// A parsed `--fail-if` expression.
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    pub text: String,
    pub analysis: String,
    pub stat: String,
    pub test: Test,
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

/// The keyword of the regression form.
const REGRESSED: &str = "regressed";

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

/// `95%` as 0.95; `None` unless a finite number followed by `%`.
fn parse_percent(text: &str) -> Option<f64> {
    let v: f64 = text.trim().strip_suffix('%')?.trim().parse().ok()?;
    v.is_finite().then_some(v / 100.0)
}

/// Where the keyword `regressed` starts: its last occurrence that follows a blank.
fn regressed_at(text: &str) -> Option<usize> {
    text.match_indices(REGRESSED).map(|(i, _)| i).filter(|&i| text[..i].ends_with(char::is_whitespace)).last()
}

impl Threshold {
    pub fn parse(text: &str) -> Result<Threshold, ThresholdError> {
        let err = |column: usize, message: String| ThresholdError { text: text.to_owned(), column, message };
        // The limit's operator is the last `>` or `<`: analysis names may hold them (`a->b`).
        let (lhs_end, form) = match (text.rfind(['>', '<']), regressed_at(text)) {
            (Some(op), Some(r)) if r > op => (r, Some(r)),
            (Some(op), _) => (op, None),
            (None, Some(r)) => (r, Some(r)),
            (None, None) => {
                return Err(err(
                    1,
                    "expected ANALYSIS.STAT>LIMIT, ANALYSIS.STAT<LIMIT or ANALYSIS.STAT regressed".into(),
                ));
            }
        };
        let lhs = text[..lhs_end].trim();
        // The analysis name may hold dots (`pulse:D1.x`): the statistic follows the last one.
        let dot = lhs.rfind('.').ok_or_else(|| err(1, "expected ANALYSIS.STAT before the test".into()))?;
        let (analysis, stat) = (lhs[..dot].trim(), lhs[dot + 1..].trim());
        if analysis.is_empty() {
            return Err(err(1, "missing analysis name".into()));
        }
        let test = match form {
            None => Self::parse_limit(text, stat, lhs_end, dot, &err)?,
            Some(r) => Self::parse_regressed(text, stat, r, dot, &err)?,
        };
        Ok(Threshold { text: text.to_owned(), analysis: analysis.to_owned(), stat: stat.to_owned(), test })
    }

    fn parse_limit(
        text: &str,
        stat: &str,
        op_at: usize,
        dot: usize,
        err: &dyn Fn(usize, String) -> ThresholdError,
    ) -> Result<Test, ThresholdError> {
        if !STATS.contains(&stat) {
            return Err(err(
                dot + 2,
                format!("unknown statistic {stat:?}; expected one of {}", STATS.join(" ")),
            ));
        }
        let cmp = if text[op_at..].starts_with('>') { Cmp::Greater } else { Cmp::Less };
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
        Ok(Test::Limit { cmp, limit })
    }

    fn parse_regressed(
        text: &str,
        stat: &str,
        at: usize,
        dot: usize,
        err: &dyn Fn(usize, String) -> ThresholdError,
    ) -> Result<Test, ThresholdError> {
        let stat = Stat::parse(stat)
            .ok_or_else(|| err(dot + 2, format!("`regressed` tests p50, p90, p99 or mean, not {stat:?}")))?;
        let mut pos = at + REGRESSED.len();
        let mut confidence = 0.95;
        let rest = &text[pos..];
        if let Some(inner) = rest.strip_prefix('(') {
            let close =
                inner.find(')').ok_or_else(|| err(pos + 1, "expected (C%) with a closing )".into()))?;
            let c = parse_percent(&inner[..close])
                .filter(|c| (0.5..=MAX_CONFIDENCE).contains(c))
                .ok_or_else(|| {
                    err(
                        pos + 2,
                        format!(
                            "expected a confidence from 50% to {}%, found {:?}",
                            MAX_CONFIDENCE * 100.0,
                            &inner[..close]
                        ),
                    )
                })?;
            confidence = c;
            pos += close + 2;
        }
        let rest = &text[pos..];
        let mut by = 0.0;
        let trimmed = rest.trim_start();
        if !trimmed.is_empty() {
            let col = pos + (rest.len() - trimmed.len()) + 1;
            let amount = Some(trimmed)
                .filter(|_| rest.starts_with(char::is_whitespace))
                .and_then(|t| t.strip_prefix("by"))
                .filter(|a| a.starts_with(char::is_whitespace))
                .ok_or_else(|| err(col, format!("expected `by P%` or the end, found {trimmed:?}")))?;
            by = parse_percent(amount).filter(|p| *p >= 0.0).ok_or_else(|| {
                err(col + 3, format!("expected a percentage such as 10%, found {:?}", amount.trim()))
            })?;
        }
        Ok(Test::Regressed { stat, confidence, by })
    }

    /// Whether this is the `regressed` form, which needs a baseline.
    pub fn needs_baseline(&self) -> bool {
        matches!(self.test, Test::Regressed { .. })
    }

    /// The crossings of this threshold in `report`: for a limit, one per input that has the
    /// analysis and crosses it; for `regressed`, one per comparison with the baseline that
    /// shows the regression. `Err` when no analysis (or comparison) has that name, or
    /// `regressed` has no baseline: a gate on nothing must not pass silently.
    pub fn check(&self, report: &Report) -> Result<Vec<Crossing>, String> {
        if let Test::Regressed { .. } = self.test {
            return self.check_regressed(report);
        }
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
                let v = self.crossed_by(a.count, &a.stats_ns)?;
                Some(Crossing {
                    threshold: self.clone(),
                    input: a.input,
                    label: report.input_label(a.input),
                    value: v,
                    regression: None,
                })
            })
            .collect())
    }

    fn check_regressed(&self, report: &Report) -> Result<Vec<Crossing>, String> {
        let Some(base) = report.baseline else {
            return Err(format!(
                "--fail-if {:?}: `regressed` compares with a baseline: give --baseline BASELINE",
                self.text
            ));
        };
        let matching: Vec<&Comparison> =
            report.comparison.iter().filter(|c| c.analysis == self.analysis).collect();
        if matching.is_empty() {
            let names: Vec<&str> = report.comparison.iter().map(|c| c.analysis.as_str()).collect();
            return Err(format!(
                "--fail-if {:?}: no analysis named {:?} is in both the baseline and a candidate (compared: {})",
                self.text,
                self.analysis,
                if names.is_empty() { "none".to_owned() } else { names.join(", ") }
            ));
        }
        Ok(matching
            .into_iter()
            .filter_map(|c| {
                let mut found = self.regression_in(&c.inference, &c.a.stats_ns, &c.b.stats_ns)?;
                found.baseline = report.input_label(base);
                Some(Crossing {
                    threshold: self.clone(),
                    input: c.b.input,
                    label: report.input_label(c.b.input),
                    value: found.change,
                    regression: Some(found),
                })
            })
            .collect())
    }

    /// For a `regressed` gate, a line per comparison it passed, saying why: the interval
    /// that holds the limit, or why there is none. Empty for a limit.
    pub fn passed(&self, report: &Report) -> Vec<String> {
        let Test::Regressed { stat, confidence, by } = self.test else { return Vec::new() };
        let base = report.baseline.map(|b| report.input_label(b)).unwrap_or_default();
        report
            .comparison
            .iter()
            .filter(|c| c.analysis == self.analysis)
            .filter(|c| self.regression_in(&c.inference, &c.a.stats_ns, &c.b.stats_ns).is_none())
            .map(|c| {
                let why = match (c.inference.interval(stat, confidence, true), c.ratio_of(stat)) {
                    (Some([lo, hi]), Some(r)) => format!(
                        "no regression shown{}: {} [{}, {}] ({}% interval)",
                        if by > 0.0 { format!(" by {}", super::pct(by)) } else { String::new() },
                        super::pct(r - 1.0),
                        super::pct(lo),
                        super::pct(hi),
                        confidence * 100.0
                    ),
                    _ => format!(
                        "no interval: {}",
                        c.inference.method.note.as_deref().unwrap_or("a side has no value")
                    ),
                };
                format!(
                    "--fail-if {:?}: passed for {} against {base}: {why}",
                    self.text,
                    report.input_label(c.b.input)
                )
            })
            .collect()
    }

    /// The regression this `regressed` threshold finds in a comparison's inference, with the
    /// baseline's and candidate's statistics; `None` when it finds none (inconclusive, no
    /// interval) or this is a limit. Fleets gate their comparisons with this.
    pub fn regression_in(&self, inference: &Inference, a: &StatsNs, b: &StatsNs) -> Option<Regression> {
        let Test::Regressed { stat, confidence, by } = self.test else { return None };
        let absolute = inference.interval(stat, confidence, false)?;
        let relative = inference.interval(stat, confidence, true)?;
        let regressed = if by > 0.0 { relative[0] > by } else { absolute[0] > 0.0 };
        if !regressed {
            return None;
        }
        let (x, y) = (a.get(stat.name()).flatten()?, b.get(stat.name()).flatten()?);
        Some(Regression {
            change: if x != 0.0 { y / x - 1.0 } else { f64::INFINITY },
            interval: relative,
            interval_ns: absolute,
            confidence,
            p_value: *inference.p_value.get(stat),
            baseline: String::new(),
        })
    }

    /// The value of this threshold's statistic when `count` and `stats` cross it; `None` when
    /// they do not (or the statistic has no value: no samples, or this is `regressed`). Any
    /// group of samples, such as a fleet's, is gated with this.
    pub fn crossed_by(&self, count: u64, stats: &StatsNs) -> Option<f64> {
        let Test::Limit { cmp, limit } = self.test else { return None };
        let v = if self.stat == "count" { count as f64 } else { stats.get(&self.stat).flatten()? };
        let crossed = match cmp {
            Cmp::Greater => v > limit,
            Cmp::Less => v < limit,
        };
        crossed.then_some(v)
    }
}

/// What a `regressed` gate found: the relative change and its interval at the gate's
/// confidence.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Regression {
    /// Candidate / baseline − 1 of the statistic.
    pub change: f64,
    /// The interval of the relative change at `confidence`.
    pub interval: [f64; 2],
    /// The interval of the change in ns.
    pub interval_ns: [f64; 2],
    pub confidence: f64,
    pub p_value: Option<f64>,
    /// What the baseline is called in messages.
    pub baseline: String,
}

impl Regression {
    /// `+7.4% [+3.1%, +11.9%] (95% interval), p=0.002`.
    pub fn summary(&self) -> String {
        let pct = |x: f64| format!("{:+.1}%", x * 100.0);
        let p = self.p_value.map(|p| format!(", p={}", p_text(p))).unwrap_or_default();
        format!(
            "{} [{}, {}] ({}% interval){p}",
            pct(self.change),
            pct(self.interval[0]),
            pct(self.interval[1]),
            self.confidence * 100.0
        )
    }
}

/// A p-value for people: three significant digits, small ones in scientific notation.
pub fn p_text(p: f64) -> String {
    if p >= 0.001 { format!("{:.3}", p) } else { format!("{p:.1e}") }
}

/// A threshold that a report crossed.
#[derive(Debug, Clone, PartialEq)]
pub struct Crossing {
    pub threshold: Threshold,
    pub input: usize,
    /// What the input is called in messages (its name; see `Report::input_labels`).
    pub label: String,
    /// The statistic's value (a limit), or the relative change (`regressed`).
    pub value: f64,
    /// For `regressed`: the change found, with its interval.
    pub regression: Option<Regression>,
}

impl fmt::Display for Crossing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = &self.threshold;
        if let Some(r) = &self.regression {
            return write!(
                f,
                "regression: {}.{} {}: {} against {} (--fail-if {})",
                t.analysis,
                t.stat,
                r.summary(),
                self.label,
                r.baseline,
                t.text
            );
        }
        let Test::Limit { cmp, limit } = t.test else { return Ok(()) };
        let show = |v: f64| if t.stat == "count" { format!("{v}") } else { super::human_ns(v) };
        let op = if cmp == Cmp::Greater { ">" } else { "<" };
        write!(
            f,
            "threshold crossed: {}.{} = {} {op} {} (--fail-if {}, {})",
            t.analysis,
            t.stat,
            show(self.value),
            show(limit),
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
            (t.analysis.as_str(), t.stat.as_str(), t.test),
            ("block", "p99", Test::Limit { cmp: Cmp::Greater, limit: 2e6 })
        );
        let t = Threshold::parse("wakeup.max>500us").unwrap();
        assert_eq!(t.test, Test::Limit { cmp: Cmp::Greater, limit: 500_000.0 });
        let t = Threshold::parse("pulse:D1.mean < 1.5 ns").unwrap();
        assert_eq!((t.analysis.as_str(), t.test), ("pulse:D1", Test::Limit { cmp: Cmp::Less, limit: 1.5 }));
        assert_eq!(
            Threshold::parse("block.count<10").unwrap().test,
            Test::Limit { cmp: Cmp::Less, limit: 10.0 }
        );
        // A rule named by its endpoints holds `->`: the limit's operator is the last one.
        let t = Threshold::parse("a->b.p99>1ms").unwrap();
        assert_eq!((t.analysis.as_str(), t.stat.as_str()), ("a->b", "p99"));
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
    fn parses_the_regression_grammar() {
        let r = |stat, confidence, by| Test::Regressed { stat, confidence, by };
        for (text, analysis, test) in [
            ("block.p99 regressed", "block", r(Stat::P99, 0.95, 0.0)),
            ("block.p50 regressed(99%)", "block", r(Stat::P50, 0.99, 0.0)),
            ("block.mean regressed by 10%", "block", r(Stat::Mean, 0.95, 0.10)),
            ("block.p90 regressed( 90 % ) by 2.5 %", "block", r(Stat::P90, 0.90, 0.025)),
            // Analysis names with blanks, dots and `->` (a detector, a rule by endpoints).
            ("stall:DMA:rise factor 1.5.p99 regressed", "stall:DMA:rise factor 1.5", r(Stat::P99, 0.95, 0.0)),
            ("a->b.p99 regressed by 0%", "a->b", r(Stat::P99, 0.95, 0.0)),
        ] {
            let t = Threshold::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!((t.analysis.as_str(), t.test), (analysis, test), "{text}");
            assert!(t.needs_baseline());
        }
        for (bad, col) in [
            ("block.max regressed", 7),
            ("block.count regressed", 7),
            ("block.p99 regressed(100%)", 21),
            ("block.p99 regressed(40%)", 21),
            ("block.p99 regressed(95)", 21),
            ("block.p99 regressed(95%", 20),
            ("block.p99 regressed by", 21),
            ("block.p99 regressed by ten%", 24),
            ("block.p99 regressed by -3%", 24),
            ("block.p99 regressed lots", 21),
            ("block.p99 regressedby 3%", 20),
            ("regressed", 1),
        ] {
            let e = Threshold::parse(bad).expect_err(bad);
            assert_eq!(e.column, col, "{bad}: {e}");
        }
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
        // `regressed` needs a report with a baseline.
        let e = Threshold::parse("irq-handler.p99 regressed").unwrap().check(&r).unwrap_err();
        assert!(e.contains("--baseline"), "{e}");
    }
}

//! What an importer skipped or noticed: malformed records (counted, the first few kept with
//! their position), lost-event gaps and free-form warnings. [`Diagnostics::findings`] gives
//! each as a line with its [`Severity`], so a front end can tell errors from warnings.

/// How many malformed records are kept with their position; the rest are only counted.
pub const MAX_KEPT_DIAGNOSTICS: usize = 20;

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Diagnostic {
    /// 1-based line number for text formats, `None` for binary ones.
    pub line: Option<u64>,
    /// Byte offset in the file.
    pub offset: u64,
    pub message: String,
}

/// Events the tracer dropped on one CPU before the event at `ts` (relative ps).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Gap {
    pub cpu: u16,
    pub ts: super::Ps,
    /// `None` when the tracer said only that some were lost.
    pub lost: Option<u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Diagnostics {
    pub malformed: u64,
    pub first_malformed: Vec<Diagnostic>,
    pub gaps: Vec<Gap>,
    pub warnings: Vec<String>,
}

impl Diagnostics {
    pub fn malformed(&mut self, line: Option<u64>, offset: u64, message: impl Into<String>) {
        self.malformed += 1;
        if self.first_malformed.len() < MAX_KEPT_DIAGNOSTICS {
            self.first_malformed.push(Diagnostic { line, offset, message: message.into() });
        }
    }

    pub fn warn(&mut self, message: impl Into<String>) {
        self.warnings.push(message.into());
    }

    /// Appends `other` (a later part of the same file).
    pub fn extend(&mut self, other: Diagnostics) {
        self.malformed += other.malformed;
        let room = MAX_KEPT_DIAGNOSTICS.saturating_sub(self.first_malformed.len());
        self.first_malformed.extend(other.first_malformed.into_iter().take(room));
        self.gaps.extend(other.gaps);
        self.warnings.extend(other.warnings);
    }

    /// Human-readable lines for `info` and the GUI, in a fixed order: the text of
    /// [`Diagnostics::findings`].
    pub fn summary(&self) -> Vec<String> {
        self.findings().into_iter().map(|f| f.text).collect()
    }

    /// Each line of [`Diagnostics::summary`] with its severity: malformed records (the
    /// count, then each kept one) are errors; lost-event gaps, which the tracer reported,
    /// and the importers' warnings (types not read, slices repaired) are warnings.
    pub fn findings(&self) -> Vec<Finding> {
        let mut out = Vec::new();
        let error = |text| Finding { severity: Severity::Error, text };
        let warning = |text| Finding { severity: Severity::Warning, text };
        if self.malformed > 0 {
            out.push(error(format!("{} malformed record(s) skipped", self.malformed)));
            for d in &self.first_malformed {
                match d.line {
                    Some(line) => out.push(error(format!("line {line}: {}", d.message))),
                    None => out.push(error(format!("byte {}: {}", d.offset, d.message))),
                }
            }
        }
        if !self.gaps.is_empty() {
            let known: u64 = self.gaps.iter().filter_map(|g| g.lost).sum();
            let unknown = self.gaps.iter().filter(|g| g.lost.is_none()).count();
            let mut s = format!("{} lost-event gap(s), {known} event(s) lost", self.gaps.len());
            if unknown > 0 {
                s.push_str(&format!(" plus {unknown} gap(s) of unknown size"));
            }
            out.push(warning(s));
        }
        out.extend(self.warnings.iter().cloned().map(warning));
        out
    }

    /// Whether any finding is an error.
    pub fn has_errors(&self) -> bool {
        self.malformed > 0
    }
}

/// How much a finding matters: an error is data the file should have held and did not
/// (a malformed record, skipped); a warning says what was recovered or left aside.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// One line of what an importer found, with its severity.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Finding {
    pub severity: Severity,
    pub text: String,
}

#[cfg(test)]
mod severity_tests {
    use super::*;

    #[test]
    fn malformed_records_are_errors_and_the_rest_warnings() {
        let mut d = Diagnostics::default();
        d.warn("3 packet(s) of types latscope does not read, skipped: trace_config ×3");
        assert!(!d.has_errors());
        d.malformed(None, 12, "bad varint");
        d.gaps.push(Gap { cpu: 1, ts: 5, lost: Some(4) });
        let f = d.findings();
        let sev: Vec<Severity> = f.iter().map(|f| f.severity).collect();
        assert_eq!(sev, [Severity::Error, Severity::Error, Severity::Warning, Severity::Warning]);
        assert_eq!(f[1].text, "byte 12: bad varint");
        assert!(f[3].text.contains("trace_config"));
        assert_eq!(d.summary(), f.into_iter().map(|f| f.text).collect::<Vec<_>>());
        assert!(d.has_errors());
    }
}

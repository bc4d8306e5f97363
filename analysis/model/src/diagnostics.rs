//! What an importer skipped or noticed: malformed records (counted, the first few kept with
//! their position), lost-event gaps and free-form warnings.

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

    /// Human-readable warnings for `info` and the GUI, in a fixed order.
    pub fn summary(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.malformed > 0 {
            out.push(format!("{} malformed record(s) skipped", self.malformed));
            for d in &self.first_malformed {
                match d.line {
                    Some(line) => out.push(format!("line {line}: {}", d.message)),
                    None => out.push(format!("byte {}: {}", d.offset, d.message)),
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
            out.push(s);
        }
        out.extend(self.warnings.iter().cloned());
        out
    }
}

//! What a Python `Capture` is, in plain Rust: an engine [`Capture`] with the registry its
//! names resolve in, and each of the Python methods as one call into the engine. Every table
//! comes from the engine's `query` module, so a method gives exactly what `latscope query`
//! prints for the same files (`.events()` is `SELECT * FROM events`). Nothing here needs
//! Python: the workspace's tests and clippy cover it on a machine without it.

use latscope_engine::analyse::{Options, Which};
use latscope_engine::query::run_capture;
use latscope_engine::{Capture, EngineError, Registry};
use latscope_importers::LoadControl;
use polars::prelude::DataFrame;
use std::path::PathBuf;

/// A capture opened from files or simulated, as the Python API holds it.
#[derive(Debug)]
pub struct Session {
    capture: Capture,
    registry: Registry,
    /// The analyses `.pairs()` runs when none is named: a simulated run's own (what
    /// `latscope sim` reports); empty for files, where the presets that find events run.
    own: Vec<String>,
}

impl Session {
    /// Opens capture files (`latscope.open`); with `align`, onto input 0's timeline as
    /// `--align` does.
    pub fn open(paths: &[PathBuf], align: Option<&str>) -> Result<Self, EngineError> {
        if paths.is_empty() {
            return Err(EngineError::Usage("open: give at least one capture file".into()));
        }
        let mut capture = Capture::open(paths, &LoadControl::new())?;
        if let Some(text) = align {
            capture.align(text)?;
        }
        Ok(Session { capture, registry: Registry::native(), own: Vec::new() })
    }

    /// Runs a simulator scenario (`latscope.sim`): `sets` are `KEY=VALUE` overrides as
    /// `latscope sim --set` takes them, in order. The capture holds the simulated trace, named
    /// as `latscope sim`'s report names it, and the scenario's own analyses.
    pub fn sim(
        scenario: &str,
        sets: &[String],
        seed: Option<u64>,
        duration: Option<&str>,
    ) -> Result<Self, EngineError> {
        let scenario = latscope_sim::prepare(scenario, sets, seed, duration)?;
        let own = latscope_sim::scenarios::rules(&scenario)?;
        let out = latscope_sim::run(scenario)?;
        let capture = Capture::of(vec![PathBuf::from(&out.report.path)], vec![out.source]);
        Ok(Session { capture, registry: Registry::native(), own })
    }

    /// The engine's capture (its sources and placements).
    pub fn capture(&self) -> &Capture {
        &self.capture
    }

    /// The analyses `.pairs()` runs when none is named (a simulated run's own).
    pub fn own_analyses(&self) -> &[String] {
        &self.own
    }

    /// Every table a query may name: the fixed ones, then one per event name.
    pub fn table_names(&self) -> Vec<String> {
        let placed = self.capture.placed();
        let tables = latscope_engine::query::Tables {
            names: self.capture.path_names(),
            placed,
            report: None,
            capture: String::new(),
        };
        tables.table_names()
    }

    /// `events`: every event of every source.
    pub fn events(&self) -> Result<DataFrame, EngineError> {
        self.query("SELECT * FROM events", &[], false)
    }

    /// One table whole (`block_rq_issue`, `annotations`, `tracks`, …), as
    /// `SELECT * FROM "name"` gives it.
    pub fn table(&self, name: &str) -> Result<DataFrame, EngineError> {
        self.query(&format!("SELECT * FROM {}", quoted(name)), &[], false)
    }

    /// `pairs` of the analyses named (presets or rule specs); none named: a simulated run's
    /// own analyses, else every preset that finds events.
    pub fn pairs(&self, analyses: &[String], include_errors: bool) -> Result<DataFrame, EngineError> {
        let named: &[String] = if analyses.is_empty() { &self.own } else { analyses };
        self.query("SELECT * FROM pairs", named, include_errors)
    }

    /// Decodes every input that has the stack's channels (as `--decoder` does), so its events
    /// join the other tables, and returns the capture's `annotations`.
    pub fn decode(&mut self, spec: &str) -> Result<DataFrame, EngineError> {
        self.capture.decode(&self.registry, &[spec.to_owned()])?;
        self.table("annotations")
    }

    /// Runs `sql` as `latscope query --sql` does; `pairs` and `windows` hold the analyses
    /// named (presets or rule specs), else every preset that finds events.
    pub fn query(
        &self,
        sql: &str,
        analyses: &[String],
        include_errors: bool,
    ) -> Result<DataFrame, EngineError> {
        let which = self.which(analyses)?;
        run_capture(&self.capture, &self.registry, &which, Options { include_errors }, sql)
    }

    /// Presets and rule specs as the workbench's rule box takes them (`Registry::rule`): a
    /// preset's name (with its options, `chain:irq=5`), a decoder's preset, or a rule.
    fn which(&self, analyses: &[String]) -> Result<Which, EngineError> {
        if analyses.is_empty() {
            return Ok(Which::Defaults);
        }
        let spec = |text: &String| {
            self.registry.rule(text).map_err(|e| match self.registry.preset(text) {
                // A bare word is a preset's name: its error lists the presets.
                Err(preset) if is_word(text) => preset,
                _ => e,
            })
        };
        let specs = analyses.iter().map(spec).collect::<Result<Vec<_>, _>>()?;
        Ok(Which::Specs(specs))
    }
}

/// Whether `text` is one word (letters, digits, `-`, `_`), as a preset's name is.
fn is_word(text: &str) -> bool {
    let text = text.trim();
    !text.is_empty() && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// `name` as a SQL identifier: double quotes, a quote inside doubled.
fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(name: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../samples").join(name)
    }

    #[test]
    fn a_bare_unknown_word_gets_the_preset_error_and_a_bad_rule_its_own() {
        let s = Session::open(&[sample("ftrace/virtio_blk_direct_read.dat")], None).unwrap();
        let e = s.pairs(&["nosuch".into()], false).unwrap_err().to_string();
        assert!(e.contains("unknown preset \"nosuch\"") && e.contains("block"), "{e}");
        let e = s.pairs(&["a -> ".into()], false).unwrap_err().to_string();
        assert!(e.starts_with("rule \"a ->\": column 4"), "{e}");
        // A preset and a rule together: 400 requests each.
        let pairs =
            s.pairs(&["irq-handler".into(), "rq=block_rq_issue -> block_rq_complete".into()], false).unwrap();
        let names: std::collections::BTreeSet<&str> =
            pairs.column("analysis").unwrap().str().unwrap().iter().flatten().collect();
        assert_eq!(names.into_iter().collect::<Vec<_>>(), ["irq-handler", "rq"]);
        assert_eq!(pairs.height(), 800);
    }

    #[test]
    fn an_event_name_that_is_not_an_identifier_is_still_a_table() {
        assert_eq!(quoted("my-event"), "\"my-event\"");
        assert_eq!(quoted("a\"b"), "\"a\"\"b\"");
        let s = Session::open(&[sample("ftrace/virtio_blk_direct_read.dat")], None).unwrap();
        let issues = s.table("block_rq_issue").unwrap();
        assert_eq!(issues.height(), 400);
        let e = s.table("no\"such").unwrap_err().to_string();
        assert!(e.contains("unknown table \"no\\\"such\""), "{e}");
    }

    #[test]
    fn a_set_changes_a_simulated_run_and_its_own_analyses_run_by_default() {
        let run = |sets: &[String]| {
            let s = Session::sim("imx8mq-cpuidle", sets, None, Some("200ms")).unwrap();
            assert!(!s.own_analyses().is_empty());
            let pairs = s.pairs(&[], false).unwrap();
            let analysis = pairs.column("analysis").unwrap().str().unwrap();
            let latency = pairs.column("latency_ns").unwrap().f64().unwrap();
            // The longest idle exit.
            analysis
                .iter()
                .zip(latency.iter())
                .filter(|(a, _)| *a == Some("idle-exit"))
                .filter_map(|(_, l)| l)
                .fold(f64::MIN, f64::max)
        };
        assert_eq!(run(&[]), 500_000.0);
        assert_eq!(run(&["socs.imx8mq.deep_exit_us=80".into()]), 80_000.0);
        let e = Session::sim("imx8mq-cpuidle", &["socs.imx8mq.nope=1".into()], None, None).unwrap_err();
        assert!(e.to_string().contains("socs.imx8mq.deep_exit_us"), "{e}");
    }

    #[test]
    fn no_path_is_a_usage_error() {
        let e = Session::open(&[], None).unwrap_err().to_string();
        assert!(e.contains("at least one capture file"), "{e}");
    }
}

//! Running analyses on placed sources, by the analysis crate's runner and its each-or-together
//! rule: the presets that find events (when nothing was asked), or the specs asked for. A
//! spec that cannot run becomes one [`EngineError::Analysis`] carrying what to record or
//! decode when a preset lacks its events; the other specs still run. Both front ends show
//! these, the command line on stderr and the workbench in its panel.

use crate::error::EngineError;
use crate::registry::Registry;
use latscope_analysis::outcome::Outcome;
use latscope_analysis::runner::{self, Scope};
use latscope_analysis::spec::Spec;
use latscope_model::{Placed, Source};

/// What to run.
#[derive(Debug, Clone, PartialEq)]
pub enum Which {
    /// Every preset whose events the sources hold.
    Defaults,
    /// These specs, in order.
    Specs(Vec<Spec>),
}

/// How to run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    /// Keep pairs that end at a failed decode (a CRC error, a frame cut by a stopped
    /// clock) in the statistics; by default they are left out and counted
    /// (`excluded_errors`).
    pub include_errors: bool,
}

/// A spec that ran on some inputs and not on others.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub analysis: String,
    pub input: usize,
    pub why: String,
}

/// What a run produced.
#[derive(Debug, Default)]
pub struct Analysed {
    pub outcomes: Vec<Outcome>,
    /// The specs that could not run, each with why (and what to record).
    pub failures: Vec<EngineError>,
    /// Inputs a spec was not run on while it ran on others.
    pub skipped: Vec<Skipped>,
    /// With [`Which::Defaults`]: the presets that ran.
    pub chosen: Option<Vec<String>>,
    /// With [`Which::Defaults`]: the presets that cannot run, what each lacks and how to
    /// record it.
    pub missing: Vec<String>,
}

/// Runs `spec`; a failure carries the registry's hint of what is missing.
pub fn run_spec(
    registry: &Registry,
    spec: &Spec,
    sources: &[Placed<'_>],
    scope: Scope,
) -> Result<runner::Ran, EngineError> {
    runner::run(spec, sources, scope).map_err(|error| {
        let plain: Vec<&Source> = sources.iter().map(|p| p.source).collect();
        EngineError::Analysis {
            name: spec.name().to_owned(),
            hint: registry.missing_events(spec.name(), &plain),
            error: Box::new(error),
        }
    })
}

/// Runs `which` on `sources` (each alone, or together: `scope`).
pub fn analyse(
    registry: &Registry,
    which: &Which,
    sources: &[Placed<'_>],
    scope: Scope,
    options: Options,
) -> Analysed {
    let mut out = run(registry, which, sources, scope);
    if options.include_errors {
        out.outcomes.iter_mut().for_each(Outcome::include_errors);
    }
    out
}

fn run(registry: &Registry, which: &Which, sources: &[Placed<'_>], scope: Scope) -> Analysed {
    let specs = match which {
        Which::Defaults => {
            let found = registry.default_presets(sources, scope);
            return Analysed {
                outcomes: found.outcomes,
                chosen: Some(found.names),
                missing: found.missing,
                ..Analysed::default()
            };
        }
        Which::Specs(specs) => specs,
    };
    let mut out = Analysed::default();
    for spec in specs {
        match run_spec(registry, spec, sources, scope) {
            Ok(ran) => {
                out.skipped.extend(ran.skipped.into_iter().map(|(input, why)| Skipped {
                    analysis: spec.name().to_owned(),
                    input,
                    why: why.to_string(),
                }));
                out.outcomes.extend(ran.outcomes);
            }
            Err(e) => out.failures.push(e),
        }
    }
    out
}

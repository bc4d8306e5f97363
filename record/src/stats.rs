//! The live statistics: the analyses run over what has been recorded, with the numbers
//! `latscope report` gives, so the last line equals the report of the saved file.
//!
//! While recording, a tick reads what is new: the events the growing source appended
//! (`growing`), through live analyses that keep their pairing state and their running
//! quantiles between ticks ([`lines_of`]). The last line reads the growing source to its
//! end, or, when it does not hold exactly the kept pages, the pages decoded again, run
//! whole ([`run`]).

use latscope_analysis::live::Standing;
use latscope_analysis::measure::AnalysisError;
use latscope_analysis::outcome::Outcome;
use latscope_analysis::runner::{self, Scope};
use latscope_analysis::spec::Spec;
use latscope_analysis::stats::{StatsOptions, summarize};
use latscope_model::{Placed, Placement, Source};

/// One analysis's statistics at one moment (nanoseconds).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LiveStat {
    pub analysis: String,
    pub count: u64,
    pub p50_ns: Option<f64>,
    pub p99_ns: Option<f64>,
    pub max_ns: Option<f64>,
    /// Why the analysis has no statistics yet (its events not seen), if so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Runs `specs` on `source` alone, whole: each outcome's standing (for triggers) and a
/// line each, with the statistics `latscope report` gives. The specs run side by side
/// (the last line of a recording whose ring dropped pages reads millions of events).
pub fn run(specs: &[Spec], source: &Source) -> (Vec<Standing>, Vec<LiveStat>) {
    let placed = [Placed::new(source, Placement::default())];
    let (standings, lines) = run_placed(specs, &placed, Scope::Each);
    (standings.into_iter().map(|(_, s)| s).collect(), lines)
}

/// [`run`] over placed sources, by `scope` as `latscope report` runs them: each standing
/// comes with the index of the source its times belong to.
pub fn run_placed(
    specs: &[Spec],
    sources: &[Placed<'_>],
    scope: Scope,
) -> (Vec<(usize, Standing)>, Vec<LiveStat>) {
    use rayon::prelude::*;
    let ran: Vec<_> = specs.par_iter().map(|spec| (spec, runner::run(spec, sources, scope))).collect();
    let mut standings = Vec::new();
    let mut lines = Vec::new();
    for (spec, ran) in ran {
        match ran {
            Ok(ran) => {
                for o in ran.outcomes {
                    let line = line_of(&o);
                    standings.push((
                        o.source,
                        Standing {
                            name: o.name,
                            added: o.samples,
                            open: Vec::new(),
                            anew: true,
                            count: line.count,
                            p50_ns: line.p50_ns,
                            p99_ns: line.p99_ns,
                            max_ns: line.max_ns,
                        },
                    ));
                    lines.push(line);
                }
            }
            Err(e) => lines.push(not_run(spec, &e)),
        }
    }
    (standings, lines)
}

/// The standings and a line each of `answers`, one per spec of `specs` (as a live
/// analysis gives them).
pub fn lines_of(
    specs: &[Spec],
    answers: Vec<Result<Vec<Standing>, AnalysisError>>,
) -> (Vec<Standing>, Vec<LiveStat>) {
    let mut standings = Vec::new();
    let mut lines = Vec::new();
    for (spec, answer) in specs.iter().zip(answers) {
        match answer {
            Ok(found) => {
                for s in found {
                    lines.push(LiveStat {
                        analysis: s.name.clone(),
                        count: s.count,
                        p50_ns: s.p50_ns,
                        p99_ns: s.p99_ns,
                        max_ns: s.max_ns,
                        note: None,
                    });
                    standings.push(s);
                }
            }
            Err(e) => lines.push(not_run(spec, &e)),
        }
    }
    (standings, lines)
}

/// The line of an analysis that could not run (its events not seen yet).
impl LiveStat {
    /// A line without statistics, saying why.
    pub(crate) fn unanswered(analysis: impl Into<String>, why: impl ToString) -> LiveStat {
        LiveStat {
            analysis: analysis.into(),
            count: 0,
            p50_ns: None,
            p99_ns: None,
            max_ns: None,
            note: Some(why.to_string()),
        }
    }
}

fn not_run(spec: &Spec, e: &AnalysisError) -> LiveStat {
    LiveStat::unanswered(spec.name(), e)
}

fn line_of(o: &Outcome) -> LiveStat {
    match summarize(o, &StatsOptions { worst: 1, linear_buckets: 1, max_groups: 0 }) {
        Ok(s) => LiveStat {
            analysis: o.name.clone(),
            count: s.count,
            p50_ns: s.stats_ns.p50,
            p99_ns: s.stats_ns.p99,
            max_ns: s.stats_ns.max,
            note: None,
        },
        Err(e) => LiveStat {
            analysis: o.name.clone(),
            count: o.samples.len() as u64,
            p50_ns: None,
            p99_ns: None,
            max_ns: None,
            note: Some(e.to_string()),
        },
    }
}

/// `1.234 ms`-style text of nanoseconds, as reports write them; `-` for none.
pub fn human_ns(ns: Option<f64>) -> String {
    ns.map_or_else(|| "-".to_owned(), latscope_analysis::units::human_ns)
}

/// The kernel events `specs` read: a preset's (the first of each set of alternatives),
/// else the events a rule names. Presets over decoded logic name none.
pub fn events_for(specs: &[Spec]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for spec in specs {
        let names: Vec<String> =
            match (latscope_analysis::presets::kernel_events(spec.name()), spec.named_tracks()) {
                (_, Some(tracks)) => tracks.into_iter().map(str::to_owned).collect(),
                (Some(sets), None) => sets
                    .iter()
                    .filter_map(|alts| alts.first())
                    .map(|e| format!("{}:{}", e.system, e.name))
                    .collect(),
                (None, None) => Vec::new(),
            };
        for n in names {
            if !out.contains(&n) {
                out.push(n);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use latscope_analysis::spec::{parse_spec, preset_spec};

    #[test]
    fn the_events_a_preset_or_rule_reads_are_the_ones_recorded() {
        let specs = [
            preset_spec("block").unwrap(),
            preset_spec("irq-handler").unwrap(),
            parse_spec("req=print[text~start] -> sched_switch[next_pid=1]").unwrap(),
            preset_spec("wakeup").unwrap(),
        ];
        assert_eq!(
            events_for(&specs),
            [
                "block:block_rq_issue",
                "block:block_rq_complete",
                "irq_handler_entry",
                "irq_handler_exit",
                "print",
                "sched_switch",
                "sched:sched_wakeup",
                "sched:sched_switch",
            ]
        );
    }
}

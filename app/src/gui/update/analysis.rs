//! The analysis' messages: running the rules (or, when files open, the presets they hold),
//! their results and the bands they shade, the panel's plot, and showing a pair of a result
//! on the timeline.

use crate::gui::analysis::{self, AnalysisResult, Which};
use crate::gui::app::Workbench;
use crate::gui::document::{Document, SourceId};
use crate::gui::jobs::JobKind;
use crate::gui::message::AnalysisMsg;
use crate::gui::view::{Arrow, ArrowEnd, EventSel, Related};
use latscope_analysis::outcome::{EventAt, Outcome};
use latscope_analysis::runner::Scope;
use latscope_model::{Filter, Placed, Ps, Source};
use std::sync::Arc;

impl Workbench {
    pub(super) fn update_analysis(&mut self, msg: AnalysisMsg) {
        match msg {
            AnalysisMsg::Run => {
                let rules = self.analysis.rules.specs.clone();
                if self.simulator_alone() {
                    self.run_live_rules(&rules);
                } else {
                    self.run_analysis(Which::Rules(rules));
                }
            }
            AnalysisMsg::RunPresets => self.run_analysis(Which::Presets),
            AnalysisMsg::Done { ticket, results, errors, chosen, missing } => {
                if self.jobs.accept(ticket, |_| true) {
                    // The presets the files hold become the rule list (Run repeats them),
                    // unless the user (or a session) set the rules while they ran.
                    if let Some(names) = chosen {
                        // The presets the files hold are what ran.
                        self.analysis.ran_with = names.clone();
                        if self.analysis.chosen_by_files {
                            self.analysis.rules.specs = names;
                        }
                    }
                    // What the presets chosen on open lack; a run of the user's rules says
                    // its own in its errors, and the list goes.
                    self.analysis.missing = missing;
                    if results.is_empty() {
                        // Nothing to export: the sources need not be kept for it.
                        self.analysis.inputs.clear();
                    }
                    self.show_results(results);
                    self.errors.extend(errors);
                }
            }
            AnalysisMsg::EditRules(rules) => {
                // The user's rules from now on: opening files no longer chooses them.
                self.analysis.chosen_by_files = false;
                self.analysis.rules = rules;
            }
            AnalysisMsg::SetPlot { plot, log_x } => {
                self.analysis.panel.plot = plot;
                self.analysis.panel.log_x = log_x;
            }
            AnalysisMsg::ShowSample { outcome, sample } => self.show_sample(outcome, sample),
            AnalysisMsg::ShowLatencyRange { outcome, lo_ns, hi_ns } => {
                self.show_latency_range(outcome, lo_ns, hi_ns)
            }
            AnalysisMsg::LiveDone { ticket, results, errors } => {
                if self.jobs.accept(ticket, |_| true) {
                    // What the user's rules cannot answer on this snapshot (an event not
                    // emitted yet, or never): listed under the results, not raised.
                    self.analysis.missing = errors;
                    let live = &mut self.sim.live;
                    live.shown = live.asked.clone();
                    live.shown_now = live.asked_now;
                    live.updates += 1;
                    // The results describe the snapshot they were computed on.
                    self.analysis.inputs = live.shown.iter().cloned().collect();
                    self.analysis.input_ids = self.sim.source.into_iter().collect();
                    let at = self.sim.source.and_then(|id| self.doc.get(id)).map(|s| s.placement);
                    self.analysis.placements = at.into_iter().collect();
                    self.analysis.placement_used = "placement: the simulator's clock".to_owned();
                    self.analysis.ran_with.clear();
                    self.show_results(results);
                }
            }
        }
    }

    /// New results replace the old; the panel opens when there are results where there
    /// were none (the user may close it again).
    fn show_results(&mut self, results: Vec<AnalysisResult>) {
        if self.analysis.results.is_empty() && !results.is_empty() && !self.view.panels.analysis {
            // The timeline gets narrower; a view as fitted, or showing a pair, keeps showing it.
            self.view.panels.analysis = true;
        }
        self.analysis.results = Arc::new(results);
        self.refresh_bands();
        if let Some(sel) = self.view.overlay.selected {
            self.view.overlay.related = self.related_pairs(sel);
        }
    }

    /// Shades the analyses' stall windows and polling loops over their sources' lanes.
    pub(super) fn refresh_bands(&mut self) {
        let (doc, a) = (&self.doc, &self.analysis);
        self.view.overlay.bands = analysis::bands(&a.results, |input, t| {
            let s = doc.get(a.source_of(input)?)?;
            Some((s.id, s.to_common(t)))
        });
    }

    /// Forgets the results of a run that no longer describes what a run gives (the sources
    /// moved).
    pub(super) fn drop_results(&mut self) {
        self.analysis.results = Arc::default();
        self.view.overlay.bands.clear();
        self.view.overlay.related.clear();
    }

    /// What the panel says of where the run put its sources: the runner's each-or-together
    /// rule decides it, so the words follow that rule, not the Align dialog alone.
    fn placement_text(&self, aligned: bool) -> String {
        let sources = &self.doc.sources;
        let placed: Vec<Placed<'_>> = sources.iter().map(|s| Placed::new(s.source(), s.placement)).collect();
        match &self.analysis.panel.aligned {
            Some(a) if aligned => return format!("placement: aligned, {a}"),
            _ if sources.len() == 1 => return "placement: the source's own clock".to_owned(),
            _ => {}
        }
        if Scope::of(aligned, &placed) == Scope::Each {
            return "placement: each source on its own clock (not aligned)".to_owned();
        }
        // Placed elsewhere than their clocks put them (a recording's host clocks, a
        // session's placements): the rules ran across them, where they sit.
        // How, without the advice after it ("…: align on a shared marker"), which the
        // track list gives: the panel is narrow.
        let hows: Vec<&str> = sources
            .iter()
            .filter_map(|s| s.placed_by.as_deref())
            .filter_map(|h| h.split(": ").next())
            .collect();
        if hows.is_empty() {
            "placement: as the sources are placed, analysed together".to_owned()
        } else {
            format!("placement: as the sources are placed (by {}), analysed together", hows.join("; by "))
        }
    }

    /// Whether the document holds the simulator's live trace alone: then the analysis
    /// panel shows its live answers.
    fn simulator_alone(&self) -> bool {
        self.doc.sources.len() == 1 && self.sim.source.is_some_and(|id| self.doc.get(id).is_some())
    }

    pub(super) fn run_analysis(&mut self, which: Which) {
        if self.doc.sources.is_empty() {
            return;
        }
        if let Which::Rules(rules) = &which {
            self.view.panels.analysis = true;
            self.analysis.ran_with = rules.clone();
        }
        let sources: Vec<_> = self.doc.sources.iter().map(|s| s.prepared.clone()).collect();
        let placements: Vec<_> = self.doc.sources.iter().map(|s| s.placement).collect();
        self.analysis.inputs = sources.clone();
        self.analysis.input_ids = self.doc.ids();
        self.analysis.placements = placements.clone();
        // Sources aligned (the Align dialog) are one trace, as with `report --align`; so are
        // sources placed elsewhere than their clocks put them (a session's placements): the
        // runner's each-or-together rule decides that.
        let together = self.doc.alignment.is_some();
        self.analysis.placement_used = self.placement_text(together);
        let registry = self.registry.clone();
        let options =
            latscope_engine::analyse::Options { include_errors: self.analysis.rules.include_errors };
        self.jobs.spawn(JobKind::Analysis, None, move |cx| {
            // The worker borrows the shared sources with their placements: no copy.
            let (results, ran) =
                analysis::analyse(&registry, &sources, &placements, &which, together, options);
            if !cx.cancelled() {
                let analysis::Ran { errors, chosen, missing, .. } = ran;
                cx.send(AnalysisMsg::Done { ticket: cx.ticket, results, errors, chosen, missing });
            }
        });
    }

    /// Once the loads are done: every preset the newly opened sources hold, unless the rules
    /// are the user's (a session's, the command line's). Whether it started a run.
    pub(super) fn presets_step(&mut self) -> bool {
        let busy = self.jobs.busy(JobKind::Load) || self.aligning() || self.pending.startup.is_some();
        if !self.analysis.presets_due || busy || self.session_busy() || self.doc.sources.is_empty() {
            return false;
        }
        self.analysis.presets_due = false;
        if self.analysis.chosen_by_files {
            self.update(AnalysisMsg::RunPresets.into());
        }
        true
    }

    /// Shows a sample of an analysis (a worst case, a plot point): cursors and arrow on the
    /// pair, its start event selected (the table scrolls to it).
    fn show_sample(&mut self, outcome: usize, sample: usize) {
        let Some(r) = self.analysis.results.get(outcome) else { return };
        let a = &self.analysis;
        let Some(arrow) =
            arrow_of(&self.doc, &a.input_ids, a.source_of(r.outcome.source), &r.outcome, sample)
        else {
            return;
        };
        self.view.show_pair(arrow);
        if let Some(sel) = arrow.start.event {
            self.select(sel);
        }
    }

    /// Shows the samples of analysis `outcome` with latency in `[lo_ns, hi_ns]` (a histogram
    /// bar): one is shown as a pair (cursors and arrow), several by the range they span.
    fn show_latency_range(&mut self, outcome: usize, lo_ns: f64, hi_ns: f64) {
        let Some(r) = self.analysis.results.get(outcome) else { return };
        let id = self.analysis.source_of(r.outcome.source);
        let Some(s) = id.and_then(|id| self.doc.get(id)) else { return };
        let found = analysis::samples_in_latency(&r.outcome, lo_ns, hi_ns);
        let spans: Vec<(f64, f64)> = found
            .iter()
            .filter_map(|&i| r.outcome.samples.get(i))
            .map(|x| (s.to_common(x.start), s.to_common(x.end)))
            .collect();
        match (&spans[..], &found[..]) {
            ([], _) => {}
            ([_], [i]) => {
                if let Some(arrow) = arrow_of(&self.doc, &self.analysis.input_ids, id, &r.outcome, *i) {
                    self.view.show_pair(arrow);
                }
            }
            _ => {
                let a = spans.iter().map(|s| s.0).fold(f64::INFINITY, f64::min);
                let b = spans.iter().map(|s| s.1).fold(f64::NEG_INFINITY, f64::max);
                let pad = (b - a).max(1000.0) * 0.02;
                self.view.show_range(a - pad, b + pad);
                self.view.overlay.arrow = None;
            }
        }
    }
}

/// The event a pair's end at `t` (source-relative) is: the event at that time, the one
/// whose fields match the pair's stored key (`dev=… sector=…`) when several share the time.
fn pair_event(src: &Source, t: Ps, key: &str) -> Option<usize> {
    let ts = &src.events.ts;
    let lo = ts.partition_point(|&x| x < t);
    let hi = ts.partition_point(|&x| x <= t);
    // The key reads `field=value …`, `-` for a field the event lacked: the filter grammar's
    // `field=value` terms, which match an event's stored values.
    let terms: Vec<&str> = key.split_whitespace().filter(|w| !w.ends_with("=-")).collect();
    let filter = Filter::parse(&terms.join(" ")).ok().filter(|f| !f.is_empty());
    let matching = filter.and_then(|f| (lo..hi).find(|&i| f.matches(src, i)));
    matching.or((lo < hi).then_some(lo))
}

/// The arrow of sample `sample` of `outcome` (computed on source `home`; `inputs` map its
/// input numbers to sources): its ends on the common timeline and the events they are.
/// Most pairs listed as related to one event (an event in thousands of pairs is rare: a
/// flush, a shared IRQ).
const MAX_RELATED: usize = 16;

impl Workbench {
    /// The pairs of the current results that start or end at event `sel`.
    pub(super) fn related_pairs(&self, sel: EventSel) -> Vec<Related> {
        let a = &self.analysis;
        let Some(input) = a.input_ids.iter().position(|&id| id == sel.source) else { return Vec::new() };
        let at = EventAt { source: input as u32, index: sel.index as u32 };
        let mut out = Vec::new();
        for r in a.results.iter() {
            let o = &r.outcome;
            for (k, x) in o.samples.iter().enumerate() {
                if x.start_event != Some(at) && x.end_event != Some(at) {
                    continue;
                }
                if let Some(arrow) = arrow_of(&self.doc, &a.input_ids, a.source_of(o.source), o, k) {
                    out.push(Related { analysis: o.name.clone(), latency_ps: x.end - x.start, arrow });
                }
                if out.len() >= MAX_RELATED {
                    return out;
                }
            }
        }
        out
    }
}

fn arrow_of(
    doc: &Document,
    inputs: &[SourceId],
    home: Option<SourceId>,
    outcome: &Outcome,
    sample: usize,
) -> Option<Arrow> {
    let x = outcome.samples.get(sample)?;
    let s = doc.get(home?)?;
    // A pair names its events; other measures (chain stages, detector windows) are found by
    // time and the stored key (`pid=1234`), which filters match.
    let key = outcome.raw_key(&x.key);
    let end = |t: Ps, at: Option<EventAt>| {
        let named = at.and_then(|a| {
            let source = *inputs.get(a.source as usize)?;
            Some(EventSel { source, index: a.index as usize })
        });
        let found = || pair_event(s.source(), t, key).map(|index| EventSel { source: s.id, index });
        ArrowEnd { t, event: named.or_else(found) }
    };
    Some(Arrow {
        source: s.id,
        a: s.to_common(x.start),
        b: s.to_common(x.end),
        start: end(x.start, x.start_event),
        end: end(x.end, x.end_event),
    })
}

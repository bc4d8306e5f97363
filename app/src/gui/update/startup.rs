//! How the workbench starts (`latscope [FILE…] [--rule …] [--align …] [--decoder …]`,
//! `--dataset`, the simulator demo), and the command line's steps once its files have
//! loaded: its decoders, then its alignment, then its rules. Each step names files by the ids
//! their loads took.

use crate::gui::app::{Options, Startup, Workbench};
use crate::gui::jobs::JobKind;
use crate::gui::message::{AlignMsg, AnalysisMsg, DecoderMsg, SimMsg};
use latscope_decoders::spec::Stack;
use latscope_engine::channels::{ChannelName, channels_of};

impl Workbench {
    /// Does what `options` ask at start, through messages.
    pub(crate) fn start(&mut self, options: Options) {
        if !options.rules.is_empty() {
            self.analysis.chosen_by_files = false;
            self.analysis.rules.specs = options.rules.clone();
            self.view.panels.analysis = true;
        }
        if let Some(dir) = &options.dataset {
            super::fleet::start(self, dir, &options.group_by, options.trend.as_deref());
        }
        // What the command line says is parsed now: a mistake is said at once.
        let align = options.align.as_deref().and_then(|text| {
            latscope_analysis::align::parse_align(text)
                .map_err(|e| self.errors.push(anyhow::Error::new(e).context(format!("--align {text:?}"))))
                .ok()
        });
        let mut decoders = Vec::new();
        for text in &options.decoders {
            match Stack::parse(text) {
                Ok(stack) => decoders.push(stack),
                Err(e) => self.errors.push(anyhow::Error::new(e).context(format!("--decoder {text:?}"))),
            }
        }
        let wants_steps = align.is_some() || !options.rules.is_empty() || !decoders.is_empty();
        if !options.files.is_empty() {
            let files = self.open_files(options.files);
            if wants_steps {
                self.pending.startup =
                    Some(Startup { files, align, run: !options.rules.is_empty(), decoders });
            }
        } else if options.demo {
            self.view.panels.simulator = true;
            if self.screenshot.is_some() {
                // A screenshot wants a finished, deterministic picture: run 40 ms flat out.
                self.sim.max_speed = true;
                self.sim.duration = Some(40_000_000_000);
            }
            let start = self.sim.start_command();
            self.update(SimMsg::Command(start).into());
        }
    }

    /// Once the files are loaded: the command line's decoders, its alignment, then its
    /// rules. Whether it took a step.
    pub(super) fn startup_step(&mut self) -> bool {
        let loading = self.jobs.busy(JobKind::Load) || !self.pending.loads.is_empty();
        if self.pending.startup.is_none() || loading || self.aligning() || self.doc.sources.is_empty() {
            return false;
        }
        let Some(mut startup) = self.pending.startup.take() else { return false };
        if !startup.decoders.is_empty() {
            self.startup_decoders(std::mem::take(&mut startup.decoders));
            self.pending.startup = Some(startup);
            return true;
        }
        if self.jobs.busy(JobKind::Decode) {
            // The alignment and the rules read the decoded sources.
            self.pending.startup = Some(startup);
            return false;
        }
        if let Some(spec) = startup.align.take() {
            // `N` counts the files as given; loads finish in any order.
            let n = spec.source();
            let file =
                |k: usize| startup.files.get(k).copied().flatten().filter(|&id| self.doc.get(id).is_some());
            match (file(0), file(n)) {
                (Some(reference), Some(other)) => {
                    self.update(AlignMsg::Align { reference, other, spec }.into())
                }
                _ => self.errors.push(anyhow::anyhow!("--align: no file {n} among the loaded ones")),
            }
            // The rules wait for the alignment.
            self.pending.startup = Some(startup);
            return true;
        }
        if startup.run {
            self.update(AnalysisMsg::Run.into());
        }
        true
    }

    /// The command line's `--decoder`s: each on every source it applies to, by the engine's
    /// rule (`latscope report --decoder`'s); one that fits no source is an error.
    fn startup_decoders(&mut self, stacks: Vec<Stack>) {
        let inputs: Vec<(&str, Vec<ChannelName>)> =
            self.doc.sources.iter().map(|s| (s.source().name.as_str(), channels_of(s.source()))).collect();
        let mut per_source: Vec<Vec<Stack>> = vec![Vec::new(); inputs.len()];
        let mut errors = Vec::new();
        for stack in stacks {
            match latscope_engine::decode::applies_to(&self.registry, &stack.text, &inputs) {
                Ok(on) => on.into_iter().for_each(|i| per_source[i].push(stack.clone())),
                Err(e) => errors.push(anyhow::Error::new(e).context("--decoder")),
            }
        }
        drop(inputs);
        self.errors.extend(errors);
        let ids = self.doc.ids();
        for (id, stacks) in ids.into_iter().zip(per_source) {
            if !stacks.is_empty() {
                self.update(DecoderMsg::Add { source: id, stacks }.into());
            }
        }
    }
}

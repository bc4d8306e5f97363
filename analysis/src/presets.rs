//! The presets whose semantics a plain pair rule cannot express, run: `block`
//! with its flush keys, `wakeup` with its "task seen running" rule, and `cmd-irq` with its
//! "the IRQ that most often follows" end (`chain` builds on its plan). What the presets
//! are and how they are written is `spec`'s; the pair-rule presets run as pair rules.
//!
//! Preset details (also in docs/ARCHITECTURE.md):
//! - `block`: `block_rq_issue -> block_rq_complete`, fifo, key `dev,sector`. A request is a
//!   flush (key `dev` only) when its `rwbs` contains `F`, its `nr_sector` is 0 or absent, or
//!   its sector is absent or `18446744073709551615` (flushes print `0 + 0`, or complete with
//!   that sector). Notes: double completions (an end for a key whose start was already
//!   closed), completions with no issue, issues never completed.
//! - `wakeup`: `sched_wakeup -> sched_switch` by `pid:next_pid`, policy `first`; a task
//!   seen running (an event it executes) before a switch-in drops its open wakeups, noted
//!   (the switch-in went unrecorded). A source with no `sched_wakeup` but `sched_waking`
//!   is paired from `sched_waking` instead, noted ([`WAKING_NOTE`]).
//! - `cmd-irq[:irq=N|irq=ENDPOINT][,cmd=ENDPOINT]`: see [`CmdIrq`]; `chain[:…]` the same
//!   options, see `chain`.

use crate::endpoint::{self, Endpoint, FieldSel};
use crate::measure::{AnalysisError, add_repeat_note, missing_error, outcome_of};
use crate::outcome::{AnalysisKind, EventAt, Note, Outcome};
use crate::pairing::{
    self, KeyVal, PairResult, PairRule, Policy, StreamPairer, custom_occurrence, key_of_value,
    pair_occurrences,
};
use crate::spec::{CmdIrq, IrqSel};
use latscope_model::kernel::{self, KernelEvent};
use latscope_model::{FieldValue, Placed, Ps, Source, Sym};

/// The `wakeup` rule.
pub fn wakeup_rule() -> PairRule {
    wakeup_rule_from(WAKEUP)
}

const WAKEUP: &str = kernel::SCHED_WAKEUP.name;
const WAKING: &str = kernel::SCHED_WAKING.name;

/// The note of a source paired from `sched_waking`; its count is the `sched_waking` events.
pub const WAKING_NOTE: &str = "paired from sched_waking (the trace has no sched_wakeup); sched_waking events";

/// The `wakeup` rule with `start` (`sched_wakeup`, or `sched_waking` in its place).
fn wakeup_rule_from(start: &str) -> PairRule {
    PairRule::new("wakeup", Endpoint::event(start), Endpoint::event(kernel::SCHED_SWITCH.name), Policy::First)
        .by_mapped("pid", "next_pid")
}

pub(crate) fn run_wakeup(sources: &[Placed<'_>]) -> Result<Vec<Outcome>, AnalysisError> {
    let mut out = Vec::new();
    for (i, src) in sources.iter().enumerate() {
        let Some(from_waking) = wakeup_start(src) else { continue };
        let mut pairer = WakeupPairer::new(from_waking);
        pairer.feed(src);
        let pairs = pairer.take_pairs();
        let res = pairer.counts_with(pairs);
        let mut o = outcome_of("wakeup", AnalysisKind::Pair, i, &pairer.rule(), &res, src);
        pairer.add_notes(&mut o);
        out.push(o);
    }
    if out.is_empty() {
        return Err(missing_error("wakeup", &wakeup_rule().start));
    }
    Ok(out)
}

/// Which event `wakeup` pairs from in `src`: `Some(false)` for `sched_wakeup`,
/// `Some(true)` for `sched_waking` in its place; `None` when `src` holds no switch-in or
/// neither. Recorders that trace only `sched_waking` (systing, Android's default config)
/// would otherwise get no wakeup latency at all. `sched_waking` fires when the wakeup
/// starts, on the waker's CPU, a little before `sched_wakeup` would: the latencies include
/// that part, so the outcome says which event it paired.
pub(crate) fn wakeup_start(src: &Source) -> Option<bool> {
    let wakeup = wakeup_rule();
    if !wakeup.end.present_in(src) {
        return None;
    }
    if wakeup.start.present_in(src) {
        Some(false)
    } else if wakeup_rule_from(WAKING).start.present_in(src) {
        Some(true)
    } else {
        None
    }
}

/// `wakeup` pairing: a switch-in of task P closes P's oldest open wakeup and drops the
/// others (policy first). A task seen running — any event executed by P — before a
/// switch-in drops its open wakeups too: the kernel did not record that switch-in (often
/// out of idle), and a later switch-in would be another scheduling. Fed a source that
/// grows, it reads only the events past the last feed.
#[derive(Debug)]
pub(crate) struct WakeupPairer {
    from_waking: bool,
    /// Per woken pid: each open wakeup's time and event.
    open: rustc_hash::FxHashMap<i64, Vec<(Ps, u32)>>,
    res: PairResult,
    /// Wakeups dropped because their task ran with no recorded switch-in.
    ran: u64,
    /// Start events read.
    wakes: u64,
    read: usize,
}

impl WakeupPairer {
    pub(crate) fn new(from_waking: bool) -> Self {
        WakeupPairer {
            from_waking,
            open: Default::default(),
            res: PairResult::default(),
            ran: 0,
            wakes: 0,
            read: 0,
        }
    }

    pub(crate) fn pairs_waking(&self) -> bool {
        self.from_waking
    }

    /// The events read so far.
    pub(crate) fn read(&self) -> usize {
        self.read
    }

    pub(crate) fn rule(&self) -> PairRule {
        wakeup_rule_from(if self.from_waking { WAKING } else { WAKEUP })
    }

    /// Pairs the events of `src` past those read (`src` extends what was fed before).
    pub(crate) fn feed(&mut self, src: &Source) {
        let start: &[u8] = if self.from_waking { WAKING.as_bytes() } else { WAKEUP.as_bytes() };
        let from = self.read.min(src.events.len());
        self.read = src.events.len();
        let (Some(wake), Some(switch)) =
            (src.strings.lookup(start), src.strings.lookup(kernel::SCHED_SWITCH.name.as_bytes()))
        else {
            return;
        };
        let pid = FieldSel::new(src, "pid");
        let next_pid = FieldSel::new(src, "next_pid");
        let (open, res) = (&mut self.open, &mut self.res);
        for ev in (from..src.events.len()).filter_map(|i| src.events.get(i)) {
            if !open.is_empty()
                && let Some(v) = open.remove(&i64::from(ev.pid()))
            {
                res.unmatched_start += v.len() as u64;
                self.ran += v.len() as u64;
            }
            let n = ev.name();
            if n == switch {
                let Some(p) = next_pid.get(&ev).and_then(|v| v.as_i64()) else { continue };
                match open.remove(&p).filter(|v| !v.is_empty()) {
                    Some(v) => {
                        res.pairs.push(pairing::Pair {
                            start: v[0].0,
                            end: ev.ts(),
                            key: vec![KeyVal::Int(p)],
                            flagged: false,
                            start_event: Some(EventAt { source: 0, index: v[0].1 }),
                            end_event: Some(EventAt { source: 0, index: ev.index as u32 }),
                        });
                        res.unmatched_start += v.len() as u64 - 1;
                    }
                    // A task switched in after a preemption: no wakeup precedes it.
                    None => res.unmatched_end += 1,
                }
            } else if n == wake
                && let Some(p) = pid.get(&ev).and_then(|v| v.as_i64())
            {
                self.wakes += 1;
                open.entry(p).or_default().push((ev.ts(), ev.index as u32));
            }
        }
    }

    /// The pairs closed since the last call.
    pub(crate) fn take_pairs(&mut self) -> Vec<pairing::Pair> {
        std::mem::take(&mut self.res.pairs)
    }

    /// `pairs` with the counts so far: the wakeups still open count as unmatched, as at
    /// the end of a file.
    pub(crate) fn counts_with(&self, pairs: Vec<pairing::Pair>) -> PairResult {
        PairResult {
            pairs,
            unmatched_start: self.res.unmatched_start
                + self.open.values().map(|v| v.len() as u64).sum::<u64>(),
            unmatched_end: self.res.unmatched_end,
            repeated_end: self.res.repeated_end,
        }
    }

    /// The notes `wakeup` adds to its outcome.
    pub(crate) fn add_notes(&self, o: &mut Outcome) {
        if self.from_waking {
            o.notes.push(Note { what: WAKING_NOTE.into(), count: self.wakes });
        }
        if self.ran > 0 {
            o.notes.push(Note {
                what: "wakeups whose task ran with no recorded switch-in".into(),
                count: self.ran,
            });
        }
    }
}

/// Whether a block event is a flush-like request (keyed by `dev` only).
fn is_flush(
    rwbs: Option<FieldValue>,
    sector: Option<FieldValue>,
    nr: Option<FieldValue>,
    src: &Source,
) -> bool {
    let rwbs_f = matches!(rwbs, Some(FieldValue::Str(s)) if src.strings.bytes_of(s).contains(&b'F'));
    let no_sector = match sector {
        None => true,
        Some(FieldValue::UInt(u)) => u == u64::MAX,
        Some(FieldValue::Int(i)) => i == -1,
        Some(FieldValue::Str(_)) => false,
    };
    let empty = match nr {
        None => true,
        Some(v) => v.as_i64() == Some(0),
    };
    rwbs_f || no_sector || empty
}

pub(crate) fn run_block(sources: &[Placed<'_>]) -> Result<Vec<Outcome>, AnalysisError> {
    let mut out = Vec::new();
    for (i, src) in sources.iter().enumerate() {
        let Some(names) = block_names(src) else { continue };
        let mut pairer = BlockPairer::new();
        pairer.feed(src, names);
        let res = PairResult { pairs: pairer.take_pairs(), ..pairer.counts() };
        let mut o = outcome_of("block", AnalysisKind::Pair, i, &pairer.rule, &res, src);
        pairer.add_notes(&mut o, &res);
        out.push(o);
    }
    if out.is_empty() {
        return Err(missing_error("block", &Endpoint::event(kernel::BLOCK_RQ_ISSUE.name)));
    }
    Ok(out)
}

/// The symbols of `block_rq_issue` and `block_rq_complete` in `src`, when it holds block
/// requests to pair.
pub(crate) fn block_names(src: &Source) -> Option<(Sym, Option<Sym>)> {
    let issue = Endpoint::event(kernel::BLOCK_RQ_ISSUE.name);
    let complete = Endpoint::event(kernel::BLOCK_RQ_COMPLETE.name);
    if !issue.present_in(src) && !complete.present_in(src) {
        return None;
    }
    let iss = src.strings.lookup(kernel::BLOCK_RQ_ISSUE.name.as_bytes())?;
    Some((iss, src.strings.lookup(kernel::BLOCK_RQ_COMPLETE.name.as_bytes())))
}

/// `block` pairing, fed a source that grows: each feed reads only the events past the
/// last one.
#[derive(Debug)]
pub(crate) struct BlockPairer {
    rule: PairRule,
    pairer: StreamPairer,
    flushes: u64,
    read: usize,
}

impl BlockPairer {
    pub(crate) fn new() -> Self {
        let issue = Endpoint::event(kernel::BLOCK_RQ_ISSUE.name);
        let complete = Endpoint::event(kernel::BLOCK_RQ_COMPLETE.name);
        let rule = PairRule::new("block", issue, complete, Policy::Fifo).by("dev").by("sector");
        let pairer = StreamPairer::new(&rule);
        BlockPairer { rule, pairer, flushes: 0, read: 0 }
    }

    pub(crate) fn rule(&self) -> &PairRule {
        &self.rule
    }

    /// The events read so far.
    pub(crate) fn read(&self) -> usize {
        self.read
    }

    /// Pairs the block events of `src` past those read; `names` are [`block_names`]'s.
    pub(crate) fn feed(&mut self, src: &Source, (iss, comp): (Sym, Option<Sym>)) {
        let from = self.read.min(src.events.len());
        self.read = src.events.len();
        let dev = FieldSel::new(src, "dev");
        let rwbs = FieldSel::new(src, "rwbs");
        let sector = FieldSel::new(src, "sector");
        let nr = FieldSel::new(src, "nr_sector");
        // The four fields by symbol, decoded in one pass over each block event's fields
        // (each `FieldSel::get` decodes the fields before its own).
        let plain = [&dev, &rwbs, &sector, &nr].map(FieldSel::plain_sym);
        let mask: Vec<bool> = endpoint::layout_mask(src, Some(iss))
            .iter()
            .zip(endpoint::layout_mask(src, comp))
            .map(|(&a, b)| a || b)
            .collect();
        for ev in endpoint::candidates_from(src, &mask, from) {
            let is_start = ev.name() == iss;
            let [d, r, s, n] = match plain {
                [Some(a), Some(b), Some(c), Some(d)] => {
                    let mut got = [None; 4];
                    for (name, v) in ev.fields() {
                        for (slot, want) in got.iter_mut().zip([a, b, c, d]) {
                            if slot.is_none() && want == Some(name) {
                                *slot = Some(v);
                            }
                        }
                    }
                    got
                }
                _ => [dev.get(&ev), rwbs.get(&ev), sector.get(&ev), nr.get(&ev)],
            };
            let flush = is_flush(r, s, n, src);
            self.flushes += u64::from(flush && is_start);
            let key = [key_of_value(d), if flush { KeyVal::Missing } else { key_of_value(s) }];
            self.pairer.feed(custom_occurrence(ev.ts(), ev.index as u64, is_start, !is_start, &key));
        }
    }

    /// The pairs closed since the last call.
    pub(crate) fn take_pairs(&mut self) -> Vec<pairing::Pair> {
        self.pairer.take_pairs()
    }

    /// What the pairing counts so far (no pairs).
    pub(crate) fn counts(&self) -> PairResult {
        self.pairer.counts()
    }

    /// The notes `block` adds to its outcome.
    pub(crate) fn add_notes(&self, o: &mut Outcome, res: &PairResult) {
        add_repeat_note(o, res, "double completion");
        if self.flushes > 0 {
            o.notes.push(Note { what: "flush requests (paired by dev)".into(), count: self.flushes });
        }
    }
}

/// A command: (time, event index or edge rank, issuing pid where the command is an event).
pub(crate) type Command = (Ps, u64, Option<i32>);

/// An IRQ occurrence: (time, order, event index when it is an `irq_handler_entry`).
pub(crate) type IrqAt = (Ps, u64, Option<usize>);

/// Command times and the `irq_handler_entry` IRQ chosen for them in one source.
pub(crate) struct CmdIrqPlan {
    pub commands: Vec<Command>,
    pub irqs: Vec<IrqAt>,
    pub notes: Vec<Note>,
}

fn default_commands() -> [Endpoint; 2] {
    [Endpoint::event(kernel::BLOCK_RQ_ISSUE.name), Endpoint::event(kernel::MMC_REQUEST_START.name)]
}

/// Finds the commands and IRQs of `opts` in `src`; `None` when `src` has no command.
pub(crate) fn plan_cmd_irq(
    name: &str,
    opts: &CmdIrq,
    src: &Source,
) -> Result<Option<CmdIrqPlan>, AnalysisError> {
    let Some(commands) = commands_in(name, opts, src)? else { return Ok(None) };
    if let Some(IrqSel::Endpoint(ep)) = &opts.irq
        && !ep.present_in(src)
    {
        return Err(missing_error(name, ep));
    }
    let candidates = irq_candidates(name, opts, &Placed::unaligned(src))?;
    let (irqs, notes) = choose_irqs(opts, &commands, candidates);
    Ok(Some(CmdIrqPlan { commands, irqs, notes }))
}

/// The command endpoints `opts` names, or by default the command closest to the hardware:
/// an eMMC/SD trace has both events for one I/O (`block_rq_issue`, then
/// `mmc_request_start`), and only the second precedes the IRQ.
fn command_endpoints(opts: &CmdIrq, src: &Source) -> Vec<Endpoint> {
    match &opts.cmd {
        Some(c) => vec![c.clone()],
        None => {
            let [block, mmc] = default_commands();
            vec![if mmc.present_in(src) { mmc } else { block }]
        }
    }
}

/// `src`'s commands, sorted: (time, event index or edge rank, issuing pid where the
/// command is an event); `None` when `src` has none.
fn commands_in(name: &str, opts: &CmdIrq, src: &Source) -> Result<Option<Vec<Command>>, AnalysisError> {
    let cmds = command_endpoints(opts, src);
    if !cmds.iter().any(|c| c.present_in(src)) {
        return Ok(None);
    }
    let mut commands: Vec<Command> = Vec::new();
    for c in cmds.iter().filter(|c| c.present_in(src)) {
        commands.extend(occurrences_from(name, c, src, 0, 0)?.0);
    }
    commands.sort_unstable();
    Ok(Some(commands))
}

/// The occurrences of endpoint `cmd` (which `src` has; a command's, a detector's selector)
/// from event `events` on, or from its track's change `changes` on (a growing source's new
/// ones), in time order as [`Command`]s, and how many of the track's changes that has read.
pub(crate) fn occurrences_from(
    name: &str,
    cmd: &Endpoint,
    src: &Source,
    events: usize,
    changes: usize,
) -> Result<(Vec<Command>, usize), AnalysisError> {
    Ok(match cmd {
        Endpoint::Event { .. } => {
            let Some(r) = endpoint::resolved(src, cmd) else { return Ok((Vec::new(), changes)) };
            let mask = endpoint::layout_mask(src, r.name);
            let found = endpoint::candidates_from(src, &mask, events)
                .filter(|ev| endpoint::matches(src, ev, &r))
                .map(|ev| (ev.ts(), ev.index as u64, Some(ev.pid())));
            (found.collect(), changes)
        }
        Endpoint::Edge { edge, .. } | Endpoint::Crossing { edge, .. } => {
            let (_, d) = endpoint::digital_of(src, name, cmd).map_err(AnalysisError::Pair)?;
            let times = endpoint::edge_times_from(&d, *edge, changes);
            (times.into_iter().map(|t| (t, 1 << 40, None)).collect(), d.transitions())
        }
    })
}

/// `src`'s `irq_handler_entry` events from index `from` on: (time, event index, IRQ number).
pub(crate) fn irq_entries_from(src: &Source, from: usize) -> Vec<(Ps, usize, i64)> {
    let entry = Endpoint::event(kernel::IRQ_HANDLER_ENTRY.name);
    let Some(r) = endpoint::resolved(src, &entry) else { return Vec::new() };
    let irq = FieldSel::new(src, "irq");
    let mask = endpoint::layout_mask(src, r.name);
    endpoint::candidates_from(src, &mask, from)
        .filter(|ev| endpoint::matches(src, ev, &r))
        .filter_map(|ev| Some((ev.ts(), ev.index, irq.get(&ev)?.as_i64()?)))
        .collect()
}

/// The IRQ number most often first after a command, of how many commands each came first
/// after (the smallest number on a tie), and its count.
pub(crate) fn most_often_first(firsts: &std::collections::BTreeMap<i64, u64>) -> Option<(i64, u64)> {
    firsts.iter().max_by_key(|&(n, c)| (*c, std::cmp::Reverse(*n))).map(|(&n, &c)| (n, c))
}

/// Where the IRQs of a `cmd-irq` may come from, on the common timeline.
enum IrqCandidates {
    /// The times of the IRQ endpoint given (a GPIO edge).
    Times(Vec<Ps>),
    /// Every `irq_handler_entry`: (time, event index, IRQ number).
    Entries(Vec<(Ps, usize, i64)>),
}

impl IrqCandidates {
    fn is_empty(&self) -> bool {
        match self {
            IrqCandidates::Times(t) => t.is_empty(),
            IrqCandidates::Entries(e) => e.is_empty(),
        }
    }
}

fn irq_candidates(name: &str, opts: &CmdIrq, src: &Placed<'_>) -> Result<IrqCandidates, AnalysisError> {
    Ok(match &opts.irq {
        Some(IrqSel::Endpoint(ep)) if !ep.present_in(src) => IrqCandidates::Times(Vec::new()),
        Some(IrqSel::Endpoint(ep)) => IrqCandidates::Times(
            endpoint::endpoint_times(src, name, ep)?.into_iter().map(|t| src.to_common(t)).collect(),
        ),
        _ => IrqCandidates::Entries(
            irq_entries_from(src, 0).into_iter().map(|(t, i, n)| (src.to_common(t), i, n)).collect(),
        ),
    })
}

/// The IRQ occurrences (time, order, event index) of `candidates` that `opts` chooses for
/// `commands` (on the same timeline), and the note of an IRQ number chosen.
fn choose_irqs(opts: &CmdIrq, commands: &[Command], candidates: IrqCandidates) -> (Vec<IrqAt>, Vec<Note>) {
    let mut notes = Vec::new();
    let all = match candidates {
        IrqCandidates::Times(times) => {
            return (times.into_iter().map(|t| (t, 1 << 41, None)).collect(), notes);
        }
        IrqCandidates::Entries(all) => all,
    };
    let number = match &opts.irq {
        Some(IrqSel::Number(n)) => Some(*n),
        _ => {
            // The IRQ that is most often the first one after a command.
            let mut counts: std::collections::BTreeMap<i64, u64> = Default::default();
            for &(t, order, _) in commands {
                let k = all.partition_point(|&(ti, i, _)| (ti, i as u64) <= (t, order));
                if let Some(&(_, _, n)) = all.get(k) {
                    *counts.entry(n).or_default() += 1;
                }
            }
            let best = most_often_first(&counts);
            if let Some((n, c)) = best {
                notes.push(Note {
                    what: format!("irq {n} chosen: the first IRQ after {c} of {} commands", commands.len()),
                    count: c,
                });
            }
            best.map(|(n, _)| n)
        }
    };
    let irqs = match number {
        Some(n) => all.iter().filter(|a| a.2 == n).map(|&(t, i, _)| (t, i as u64, Some(i))).collect(),
        None => Vec::new(),
    };
    (irqs, notes)
}

/// Pairs each command with the first IRQ after it (policy next): the outcome of source
/// `home`, whose times `commands` and `irqs` are in.
fn pair_cmd_irq(
    name: &str,
    home: usize,
    src: &Source,
    commands: &[Command],
    irqs: &[IrqAt],
    notes: Vec<Note>,
) -> Outcome {
    let rule = PairRule::new(name, Endpoint::event("command"), Endpoint::event("irq"), Policy::Next);
    let mut occ: Vec<_> =
        commands.iter().map(|&(t, order, _)| custom_occurrence(t, order, true, false, &[])).collect();
    occ.extend(irqs.iter().map(|&(t, order, _)| custom_occurrence(t, order, false, true, &[])));
    let res = pair_occurrences(occ, &rule);
    let mut o = outcome_of(name, AnalysisKind::Pair, home, &rule, &res, src);
    o.notes = notes;
    if res.unmatched_end > 0 {
        o.notes.push(Note { what: "irq without command".into(), count: res.unmatched_end });
    }
    o
}

/// The pair rule a `cmd-irq` whose command and IRQ are both given is: each command to the
/// first IRQ after it, policy next, as [`run_cmd_irq`] pairs them (its notes aside), so it
/// can be paired as its sources grow (`live::AcrossStanding`). `None` when the data chooses
/// either: the default command, or the IRQ number most often first after a command.
pub fn cmd_irq_rule(name: &str, opts: &CmdIrq) -> Option<PairRule> {
    let cmd = opts.cmd.clone()?;
    let irq = match opts.irq.as_ref()? {
        IrqSel::Endpoint(ep) => ep.clone(),
        IrqSel::Number(n) => Endpoint::event_where(
            kernel::IRQ_HANDLER_ENTRY.name,
            vec![crate::endpoint::Pred::new("irq", crate::endpoint::PredOp::Eq, n.to_string())],
        ),
    };
    Some(PairRule::new(name, cmd, irq, Policy::Next))
}

/// Runs `cmd-irq` over `sources`: on each source that holds commands, with its own IRQs;
/// but when no source holds both the commands and the IRQs (a GPIO edge captured by a
/// logic analyzer, the IRQs in the kernel's trace), across them on the common timeline,
/// times in the first command source's own time, as a pair rule across sources runs.
pub(crate) fn run_cmd_irq(
    name: &str,
    opts: &CmdIrq,
    sources: &[Placed<'_>],
) -> Result<Vec<Outcome>, AnalysisError> {
    let mut planned = Vec::new();
    let mut irq_sources = Vec::new();
    for (i, src) in sources.iter().enumerate() {
        let commands = commands_in(name, opts, src)?;
        let candidates = irq_candidates(name, opts, &Placed::unaligned(src))?;
        if !candidates.is_empty() {
            irq_sources.push(i);
        }
        if let Some(commands) = commands {
            planned.push((i, commands, candidates));
        }
    }
    let Some(&(home, ..)) = planned.first() else {
        let cmd = opts.cmd.clone().unwrap_or_else(|| Endpoint::event(kernel::BLOCK_RQ_ISSUE.name));
        return Err(missing_error(name, &cmd));
    };
    if let (Some(IrqSel::Endpoint(ep)), true) = (&opts.irq, irq_sources.is_empty()) {
        return Err(missing_error(name, ep));
    }
    let across = !irq_sources.is_empty() && planned.iter().all(|(i, ..)| !irq_sources.contains(i));
    if !across {
        return Ok(planned
            .into_iter()
            .map(|(i, commands, candidates)| {
                let (irqs, notes) = choose_irqs(opts, &commands, candidates);
                pair_cmd_irq(name, i, &sources[i], &commands, &irqs, notes)
            })
            .collect());
    }
    // On the common timeline: the commands of every source that has them, the IRQs of
    // every source that has them.
    let mut commands: Vec<Command> = planned
        .iter()
        .flat_map(|(i, commands, _)| commands.iter().map(|&(t, o, pid)| (sources[*i].to_common(t), o, pid)))
        .collect();
    commands.sort_unstable();
    let mut candidates = irq_candidates(name, opts, &sources[irq_sources[0]])?;
    for &i in &irq_sources[1..] {
        match (&mut candidates, irq_candidates(name, opts, &sources[i])?) {
            (IrqCandidates::Times(all), IrqCandidates::Times(more)) => all.extend(more),
            (IrqCandidates::Entries(all), IrqCandidates::Entries(more)) => all.extend(more),
            _ => {}
        }
    }
    match &mut candidates {
        IrqCandidates::Times(all) => all.sort_unstable(),
        IrqCandidates::Entries(all) => all.sort_unstable(),
    }
    let (mut irqs, mut notes) = choose_irqs(opts, &commands, candidates);
    let src = &sources[home];
    for c in &mut commands {
        c.0 = src.from_common(c.0);
    }
    for irq in &mut irqs {
        irq.0 = src.from_common(irq.0);
        // An event index of another source names nothing here.
        irq.2 = None;
    }
    let mut idx: Vec<usize> = planned.iter().map(|(i, ..)| *i).chain(irq_sources).collect();
    idx.sort_unstable();
    idx.dedup();
    notes.push(Note {
        what: format!("across sources {idx:?} on the common timeline"),
        count: idx.len() as u64,
    });
    Ok(vec![pair_cmd_irq(name, home, src, &commands, &irqs, notes)])
}

/// The trace events each preset reads, for saying what a trace lacks and how to record
/// it. Each entry is a list of alternatives (`cmd-irq` takes `mmc_request_start` where
/// there is no `block_rq_issue`); the first is the one to record.
/// The kernel events each preset reads; an inner list holds alternatives (a chain's command
/// is either event). The hint of what to record, and a recorder's events to enable, come
/// from here.
pub const PRESET_EVENTS: &[(&str, &[&[KernelEvent]])] = &[
    ("block", &[&[kernel::BLOCK_RQ_ISSUE], &[kernel::BLOCK_RQ_COMPLETE]]),
    ("irq-handler", &[&[kernel::IRQ_HANDLER_ENTRY], &[kernel::IRQ_HANDLER_EXIT]]),
    ("softirq", &[&[kernel::SOFTIRQ_ENTRY], &[kernel::SOFTIRQ_EXIT]]),
    ("wakeup", &[&[kernel::SCHED_WAKEUP], &[kernel::SCHED_SWITCH]]),
    ("idle", &[&[kernel::CPU_IDLE]]),
    ("irqs-off", &[&[kernel::IRQ_DISABLE], &[kernel::IRQ_ENABLE]]),
    ("mmc", &[&[kernel::MMC_REQUEST_START], &[kernel::MMC_REQUEST_DONE]]),
    ("cmd-irq", &[&[kernel::BLOCK_RQ_ISSUE, kernel::MMC_REQUEST_START], &[kernel::IRQ_HANDLER_ENTRY]]),
    (
        "chain",
        &[
            &[kernel::BLOCK_RQ_ISSUE, kernel::MMC_REQUEST_START],
            &[kernel::IRQ_HANDLER_ENTRY],
            &[kernel::IRQ_HANDLER_EXIT],
            &[kernel::SCHED_WAKEUP],
            &[kernel::SCHED_SWITCH],
        ],
    ),
];

/// The kernel events preset `name` (options allowed: `chain:irq=5`) reads.
pub fn kernel_events(name: &str) -> Option<&'static [&'static [KernelEvent]]> {
    let base = name.split(':').next().unwrap_or(name);
    PRESET_EVENTS.iter().find(|(n, _)| *n == base).map(|(_, e)| *e)
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// What a preset needs that none of `sources` has, and how to record it:
/// ``wakeup needs sched_wakeup and sched_switch: `trace-cmd record -e sched_wakeup -e
/// sched_switch` `` (with `, missing here: …` when some of them are there). `None` when
/// the sources hold every event the preset reads, or the name (with its options, such as
/// `cmd-irq:irq=5`) is not an event preset. `pulse:CH` says it needs a channel.
pub fn missing_events(preset: &str, sources: &[&Source]) -> Option<String> {
    let base = preset.split(':').next().unwrap_or(preset);
    if base == "pulse" {
        let channels: Vec<&str> = sources
            .iter()
            .flat_map(|s| {
                s.digital.iter().map(|d| d.name.as_str()).chain(s.analog.iter().map(|a| a.name.as_str()))
            })
            .collect();
        let channel = preset.split(':').nth(1).filter(|c| *c != "CH");
        if channel.is_some_and(|ch| channels.contains(&ch)) {
            return None;
        }
        let shown: Vec<&str> = channels.iter().copied().take(8).collect();
        let more = if channels.len() > shown.len() { ", …" } else { "" };
        return Some(match (channel, shown.first()) {
            (_, None) => {
                "pulse:CH needs a digital or analog channel CH (a logic-analyzer or scope capture)".to_owned()
            }
            (Some(ch), Some(_)) => {
                format!("pulse:{ch} needs a channel {ch:?}; channels here: {}{more}", shown.join(", "))
            }
            (None, Some(first)) => {
                format!(
                    "pulse:CH needs a channel name: pulse:{first} (channels here: {}{more})",
                    shown.join(", ")
                )
            }
        });
    }
    let needs = kernel_events(base)?;
    let names = |alts: &[KernelEvent]| alts.iter().map(|e| e.name).collect::<Vec<_>>();
    let present = |event: &KernelEvent| sources.iter().any(|s| Endpoint::event(event.name).present_in(s));
    let missing: Vec<String> =
        needs.iter().filter(|alts| !alts.iter().any(present)).map(|alts| names(alts).join(" or ")).collect();
    if missing.is_empty() {
        return None;
    }
    let wanted: Vec<String> = needs
        .iter()
        .map(|alts| match names(alts)[..] {
            [one] => one.to_owned(),
            [first, ref rest @ ..] => format!("{first} (or {})", rest.join(", ")),
            [] => String::new(),
        })
        .collect();
    let record: Vec<String> =
        needs.iter().filter_map(|alts| alts.first()).map(|e| format!("-e {}", e.name)).collect();
    let mut text = format!("{base} needs {}: `trace-cmd record {}`", and_list(&wanted), record.join(" "));
    if missing.len() < needs.len() {
        text.push_str(&format!(", missing here: {}", and_list(&missing)));
    }
    Some(text)
}

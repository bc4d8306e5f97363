//! Chains: command -> IRQ entry -> handler exit -> wakeup of the issuing task
//! -> switch-in of that task. Each stage is an [`Outcome`] in `stages`; the chain outcome's
//! samples are the totals, so a user sees where the time goes.
//!
//! The chain follows the task that waits for the command. For block I/O that is the task
//! the request's completion wakes, which need not be the issuer: a request that waited in
//! the I/O scheduler is issued by kblockd (`kworker/N:1H`) or by another task, while its
//! own reader sleeps on it. So, when the trace has `block_rq_complete`, per
//! `block_rq_issue`: its completion is the first later `block_rq_complete` of the same
//! device and sector; the IRQ entry is the last entry of the chosen IRQ on the completion's
//! CPU after the issue and at or before the completion (the IRQ that completed it); the
//! waiter is the task of the first `sched_wakeup` or `sched_waking` on that CPU after the
//! completion and before the completing context ends there (the CPU's next
//! `block_rq_complete`, IRQ or softirq entry or exit, or `sched_switch`); its wakeup is that
//! `sched_wakeup`, or after a `sched_waking` the task's next `sched_wakeup` (a remote
//! wakeup is queued to the woken task's CPU and recorded there). A completion that wakes no
//! task (readahead nobody waits for yet) breaks the chain, with a note.
//!
//! Otherwise (`mmc_request_start`, a `cmd=` endpoint, a trace without completions), per
//! command issued by task P: the IRQ is the first `irq_handler_entry` of the chosen IRQ
//! number after it and before the next command (the `cmd-irq` rule, policy next), and the
//! wakeup is the first `sched_wakeup` of P after the IRQ entry and before P's next command.
//!
//! Either way the handler exit is the first `irq_handler_exit` of that IRQ on the entry's
//! CPU, and the switch-in is the first `sched_switch` with `next_pid` the woken task after
//! the wakeup — or, when that task is seen running (an event with its pid) before any such
//! switch, that first event, noted as "switch-in not recorded" (kernels lose or never emit
//! some switches out of idle). A wakeup inside the handler (before its exit) counts from
//! the exit (its stage is 0) and is noted. Only complete chains give samples, in every
//! stage alike, so stages sum to the total for each sample; a chain that breaks is counted
//! in `unmatched_start` with a note naming the stage.

use crate::endpoint::{Endpoint, FieldSel};
use crate::measure::{AnalysisError, TaskNames};
use crate::outcome::{AnalysisKind, Note, Outcome, Sample};
use crate::presets::{CmdIrqPlan, plan_cmd_irq};
use crate::spec::{CmdIrq, IrqSel};
use latscope_model::kernel;
use latscope_model::{FieldValue, Placed, Ps, Source};
use rustc_hash::FxHashMap;

/// Stage names, in order.
pub const STAGES: [&str; 4] = ["cmd->irq", "irq handler", "exit->wakeup", "wakeup->switch-in"];

/// Sorted (time, event index) of the events selected by `ep`, grouped by `key`.
fn by_key(src: &Source, ep: &Endpoint, key: &FieldSel) -> FxHashMap<i64, Vec<(Ps, usize)>> {
    let mut m: FxHashMap<i64, Vec<(Ps, usize)>> = FxHashMap::default();
    for i in crate::endpoint::endpoint_events(src, ep) {
        if let Some(ev) = src.events.get(i)
            && let Some(k) = key.get(&ev).and_then(|v| v.as_i64())
        {
            m.entry(k).or_default().push((ev.ts(), i));
        }
    }
    m
}

/// The first entry strictly after `(t, index)` and, when given, before `limit`.
fn first_after(
    list: Option<&Vec<(Ps, usize)>>,
    t: Ps,
    index: usize,
    limit: Option<(Ps, usize)>,
) -> Option<(Ps, usize)> {
    let list = list?;
    let k = list.partition_point(|&x| x <= (t, index));
    list.get(k).copied().filter(|&x| limit.is_none_or(|l| x < l))
}

pub(crate) fn run_chain(
    name: &str,
    opts: &CmdIrq,
    line: Option<&Endpoint>,
    sources: &[Placed<'_>],
) -> Result<Vec<Outcome>, AnalysisError> {
    if let Some(IrqSel::Endpoint(ep)) = &opts.irq {
        return Err(AnalysisError::Missing {
            rule: name.to_owned(),
            what: format!("irq_handler_entry events for {}: a chain needs irq=N, not an edge", ep.target()),
        });
    }
    let mut out = Vec::new();
    for (si, src) in sources.iter().enumerate() {
        let Some(plan) = plan_cmd_irq(name, opts, src)? else { continue };
        let requests = matches!(&opts.cmd, None | Some(Endpoint::Event { .. }))
            && opts.cmd.as_ref().is_none_or(|c| c.target() == MMC_START)
            && Endpoint::event(MMC_START).present_in(src);
        let bus = if requests { Bus::find(name, sources, src, line)? } else { None };
        out.push(match bus {
            Some(bus) => chain_through_bus(name, si, src, plan, &bus),
            None => {
                // Block requests are followed to the task their completion wakes.
                let block = matches!(&opts.cmd, None | Some(Endpoint::Event { .. }))
                    && opts.cmd.as_ref().is_none_or(|c| c.target() == kernel::BLOCK_RQ_ISSUE.name)
                    && !requests
                    && Endpoint::event(kernel::BLOCK_RQ_COMPLETE.name).present_in(src);
                chain_in(name, si, src, plan, block)
            }
        });
    }
    if out.is_empty() {
        return Err(AnalysisError::Missing {
            rule: name.to_owned(),
            what: "a command event (block_rq_issue, mmc_request_start or the cmd= given)".into(),
        });
    }
    if line.is_some() && out.iter().all(|o| o.stages.len() == STAGES.len()) {
        return Err(AnalysisError::Missing {
            rule: name.to_owned(),
            what: "a decoded SD bus (sd_cmd events) beside mmc_request_start, for line=".into(),
        });
    }
    Ok(out)
}

/// The kernel side of a chain after the IRQ entry: the handler's exit, the waiter's wakeup
/// and its switch-in (or its first own event).
struct Kernel<'a> {
    src: &'a Source,
    exits: FxHashMap<i64, Vec<(Ps, usize)>>,
    wakeups: FxHashMap<i64, Vec<(Ps, usize)>>,
    switches: FxHashMap<i64, Vec<(Ps, usize)>>,
    ran: FxHashMap<i64, Vec<(Ps, usize)>>,
    irq_field: FieldSel,
    /// Each command's next command of the same pid, for the wakeup limit.
    next_same_pid: Vec<Option<(Ps, usize)>>,
    /// The names of the tasks a chain may follow, for its keys.
    tasks: TaskNames,
}

/// What follows an IRQ entry: exit, wakeup (the exit when it came inside the handler),
/// running; or the stage (0 exit, 1 wakeup, 2 switch-in) that is missing.
struct Tail {
    /// The task followed.
    pid: i32,
    exit: Ps,
    wakeup: Ps,
    running: Ps,
    inside_handler: bool,
    ran_first: bool,
}

impl<'a> Kernel<'a> {
    fn new(src: &'a Source, plan: &CmdIrqPlan, waiters: &Waiters) -> Self {
        let exits = by_key(src, &Endpoint::event(kernel::IRQ_HANDLER_EXIT.name), &FieldSel::new(src, "irq"));
        let wakeups = by_key(src, &Endpoint::event(kernel::SCHED_WAKEUP.name), &FieldSel::new(src, "pid"));
        let switches =
            by_key(src, &Endpoint::event(kernel::SCHED_SWITCH.name), &FieldSel::new(src, "next_pid"));
        // Events each task the chain may follow ran, to see it running when its switch-in
        // was not recorded.
        let mut followed: rustc_hash::FxHashSet<i32> = plan.commands.iter().filter_map(|c| c.2).collect();
        followed.extend(waiters.of.values().filter_map(|w| w.map(|w| w.pid)));
        let mut ran: FxHashMap<i64, Vec<(Ps, usize)>> = FxHashMap::default();
        for (i, (&pid, &t)) in src.events.pid.iter().zip(&src.events.ts).enumerate() {
            if followed.contains(&pid) {
                ran.entry(i64::from(pid)).or_default().push((t, i));
            }
        }
        let cmds = &plan.commands;
        let mut next_same_pid: Vec<Option<(Ps, usize)>> = vec![None; cmds.len()];
        let mut last_of_pid: FxHashMap<i32, usize> = FxHashMap::default();
        for (k, &(_, _, pid)) in cmds.iter().enumerate().rev() {
            if let Some(p) = pid {
                next_same_pid[k] = last_of_pid.get(&p).map(|&j| (cmds[j].0, cmds[j].1 as usize));
                last_of_pid.insert(p, k);
            }
        }
        let tasks = TaskNames::of(src, followed.iter().copied());
        Self {
            src,
            exits,
            wakeups,
            switches,
            ran,
            irq_field: FieldSel::new(src, "irq"),
            next_same_pid,
            tasks,
        }
    }

    /// A chain's key, `pid=1234 (dd) irq=36 …`, with its stored form `pid=1234 irq=36 …`
    /// kept in the outcome and its stages.
    fn key(&self, pid: i32, rest: &str, total: &mut Outcome, stages: &mut [Outcome]) -> String {
        let key = format!("pid={} {rest}", self.tasks.label(self.src, pid.into()));
        let raw = format!("pid={pid} {rest}");
        if key != raw && !total.raw_keys.contains_key(&key) {
            for o in std::iter::once(total).chain(stages.iter_mut()) {
                o.raw_keys.insert(key.clone(), raw.clone());
            }
        }
        key
    }

    /// The IRQ number of an entry event.
    fn irq_of(&self, entry_idx: usize) -> Option<(i64, u16)> {
        let entry = self.src.events.get(entry_idx)?;
        Some((self.irq_field.get(&entry).and_then(|v| v.as_i64()).unwrap_or_default(), entry.cpu()))
    }

    /// The rest of command `k`'s chain after its IRQ entry at `t1`: the wakeup of `wake`'s
    /// task, then its switch-in.
    fn tail(&self, k: usize, wake: Wake, t1: Ps, entry_idx: usize) -> Result<Tail, usize> {
        let (irq_no, cpu) = self.irq_of(entry_idx).ok_or(0usize)?;
        // That IRQ's exit on the same CPU.
        let exit = self.exits.get(&irq_no).and_then(|list| {
            let k = list.partition_point(|&x| x <= (t1, entry_idx));
            list[k..].iter().copied().find(|&(_, i)| self.src.events.get(i).is_some_and(|e| e.cpu() == cpu))
        });
        let Some((t2, _)) = exit else { return Err(0) };
        let (pid, (t3, wake_idx)) = match wake {
            // The wakeup the command's completion made: its `sched_wakeup`, or the first one
            // of that task after the `sched_waking` its completion emitted.
            Wake::By(w) if !w.waking => (w.pid, w.at),
            Wake::By(w) => match first_after(self.wakeups.get(&i64::from(w.pid)), w.at.0, w.at.1, None) {
                Some(at) => (w.pid, at),
                None => return Err(1),
            },
            // The issuer's wakeup after the IRQ entry, before its next command.
            Wake::OfIssuer(pid) => {
                match first_after(self.wakeups.get(&i64::from(pid)), t1, entry_idx, self.next_same_pid[k]) {
                    Some(at) => (pid, at),
                    None => return Err(1),
                }
            }
        };
        // The issuer's switch-in after the wakeup, or its first own event when that comes
        // first (the switch-in was not recorded).
        let switch = first_after(self.switches.get(&i64::from(pid)), t3, wake_idx, None);
        let own = first_after(self.ran.get(&i64::from(pid)), t3, wake_idx, None);
        let (running, ran_first) = match (switch, own) {
            (Some(s), Some(o)) if o < s => (o.0, true),
            (Some(s), _) => (s.0, false),
            (None, Some(o)) => (o.0, true),
            (None, None) => return Err(2),
        };
        Ok(Tail { pid, exit: t2, wakeup: t3.max(t2), running, inside_handler: t3 < t2, ran_first })
    }
}

/// Notes and counts shared by both kinds of chain.
#[derive(Default)]
struct Tally {
    inside_handler: u64,
    no_pid: u64,
    ran_first: u64,
}

impl Tally {
    fn count(&mut self, t: &Tail) {
        self.inside_handler += u64::from(t.inside_handler);
        self.ran_first += u64::from(t.ran_first);
    }

    /// Puts the stages' breakage and the tally's notes on `total`.
    fn finish(&self, total: &mut Outcome, mut stages: Vec<Outcome>, broken: &[u64], why: &[&str]) {
        for (k, st) in stages.iter_mut().enumerate() {
            st.unmatched_start = broken[k];
            if broken[k] > 0 {
                st.notes.push(Note { what: why[k].into(), count: broken[k] });
                total.notes.push(Note { what: why[k].into(), count: broken[k] });
            }
        }
        if self.inside_handler > 0 {
            total.notes.push(Note {
                what: "wakeup inside the IRQ handler (counted from its exit)".into(),
                count: self.inside_handler,
            });
        }
        if self.ran_first > 0 {
            total.notes.push(Note {
                what: "switch-in not recorded: the task's first event after the wakeup ends the chain".into(),
                count: self.ran_first,
            });
        }
        if self.no_pid > 0 {
            total.notes.push(Note {
                what: "command without a task (an edge): no wakeup to follow".into(),
                count: self.no_pid,
            });
        }
        total.unmatched_start = broken.iter().sum::<u64>() + self.no_pid;
        total.stages = stages;
    }
}

const TAIL_WHY: [&str; 3] = [
    "IRQ entry with no handler exit on its CPU",
    "no wakeup of the issuing task before its next command",
    "wakeup with no switch-in or later event of the task",
];

/// A wakeup the chain follows: the task woken, and the event (time, index) in the waker's
/// context that names it: a `sched_wakeup`, or a `sched_waking` whose `sched_wakeup` came
/// later on the woken task's CPU (a remote wakeup, queued to that CPU).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Woken {
    pid: i32,
    at: (Ps, usize),
    waking: bool,
}

/// Whose wakeup a command's chain follows.
#[derive(Debug, Clone, Copy)]
enum Wake {
    /// The task its completion woke.
    By(Woken),
    /// The issuer's next wakeup after the IRQ.
    OfIssuer(i32),
}

/// Per block command (by event index): its completion (time, index, CPU), and the task the
/// completion woke, if it woke one. Empty when the source has no `block_rq_complete`.
#[derive(Debug, Default)]
struct Waiters {
    completion: FxHashMap<usize, (Ps, usize, u16)>,
    of: FxHashMap<usize, Option<Woken>>,
}

/// What an event means to the search for waiters.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Other,
    Issue,
    Complete,
    Wakeup,
    Waking,
    /// Ends a completing context on its CPU: an IRQ or softirq entry or exit, a switch.
    ContextEnd,
}

impl Waiters {
    /// Matches each `block_rq_issue` with its completion (the first later `block_rq_complete`
    /// of its device and sector), and each completion with the first wakeup (or waking) on
    /// its CPU before the completing context ends there.
    fn find(src: &Source) -> Self {
        let lookup = |e: kernel::KernelEvent| src.strings.lookup(e.name.as_bytes());
        let Some(complete) = lookup(kernel::BLOCK_RQ_COMPLETE) else { return Waiters::default() };
        let named = |sym: Option<latscope_model::Sym>, role| (sym, role);
        let roles = [
            named(lookup(kernel::BLOCK_RQ_ISSUE), Role::Issue),
            named(Some(complete), Role::Complete),
            named(lookup(kernel::SCHED_WAKEUP), Role::Wakeup),
            named(lookup(kernel::SCHED_WAKING), Role::Waking),
            named(lookup(kernel::IRQ_HANDLER_ENTRY), Role::ContextEnd),
            named(lookup(kernel::IRQ_HANDLER_EXIT), Role::ContextEnd),
            named(lookup(kernel::SOFTIRQ_ENTRY), Role::ContextEnd),
            named(lookup(kernel::SOFTIRQ_EXIT), Role::ContextEnd),
            named(lookup(kernel::SCHED_SWITCH), Role::ContextEnd),
        ];
        let role_of: Vec<Role> = src
            .events
            .layouts()
            .iter()
            .map(|l| roles.iter().find(|(s, _)| *s == Some(l.event)).map_or(Role::Other, |r| r.1))
            .collect();
        let role = |i: usize| role_of.get(src.events.layout[i].0 as usize).copied().unwrap_or(Role::Other);
        let (dev, sector, pid) =
            (FieldSel::new(src, "dev"), FieldSel::new(src, "sector"), FieldSel::new(src, "pid"));
        let n = src.events.len();
        // Each completion's first wakeup before the CPU's next context end: found in one
        // pass backwards, keeping per CPU the nearest later wakeup and context end.
        let mut woke: FxHashMap<usize, Option<Woken>> = FxHashMap::default();
        let mut next_wakeup: FxHashMap<u16, usize> = FxHashMap::default();
        let mut next_end: FxHashMap<u16, usize> = FxHashMap::default();
        for i in (0..n).rev() {
            let cpu = src.events.cpu[i];
            match role(i) {
                Role::Wakeup | Role::Waking => {
                    next_wakeup.insert(cpu, i);
                }
                Role::ContextEnd => {
                    next_end.insert(cpu, i);
                }
                Role::Complete => {
                    let w =
                        next_wakeup.get(&cpu).copied().filter(|&w| next_end.get(&cpu).is_none_or(|&e| w < e));
                    let woken = w.and_then(|w| {
                        let ev = src.events.get(w)?;
                        let pid = i32::try_from(pid.get(&ev)?.as_i64()?).ok()?;
                        Some(Woken { pid, at: (ev.ts(), w), waking: role(w) == Role::Waking })
                    });
                    woke.insert(i, woken);
                    next_end.insert(cpu, i);
                }
                Role::Issue | Role::Other => {}
            }
        }
        // Issues to completions, first in first out per device and sector.
        let mut open: FxHashMap<(Option<FieldValue>, Option<FieldValue>), std::collections::VecDeque<usize>> =
            FxHashMap::default();
        let mut out = Waiters::default();
        for i in 0..n {
            let r = role(i);
            if !matches!(r, Role::Issue | Role::Complete) {
                continue;
            }
            let Some(ev) = src.events.get(i) else { continue };
            let key = (dev.get(&ev), sector.get(&ev));
            if r == Role::Issue {
                open.entry(key).or_default().push_back(i);
            } else if let Some(issue) = open.get_mut(&key).and_then(|q| q.pop_front()) {
                out.completion.insert(issue, (ev.ts(), i, ev.cpu()));
                out.of.insert(issue, woke.get(&i).copied().flatten());
            }
        }
        out
    }
}

fn chain_in(name: &str, si: usize, src: &Source, plan: CmdIrqPlan, by_completion: bool) -> Outcome {
    let waiters = if by_completion { Waiters::find(src) } else { Waiters::default() };
    let kernel = Kernel::new(src, &plan, &waiters);
    let mut total = Outcome::new(name, AnalysisKind::Chain, si);
    total.notes = plan.notes;
    let mut stages: Vec<Outcome> =
        STAGES.iter().map(|s| Outcome::new(format!("{name}/{s}"), AnalysisKind::Pair, si)).collect();
    let mut broken = [0u64; 4];
    let mut tally = Tally::default();
    // The chosen IRQ's entries on each CPU, for the IRQ that completed a request.
    let mut entries_on: FxHashMap<u16, Vec<(Ps, usize)>> = FxHashMap::default();
    for &(t, _, idx) in &plan.irqs {
        if let Some(idx) = idx
            && let Some(ev) = src.events.get(idx)
        {
            entries_on.entry(ev.cpu()).or_default().push((t, idx));
        }
    }
    let (mut no_completion, mut other_task) = (0u64, 0u64);
    let cmds = &plan.commands;
    for (k, &(t0, order, pid)) in cmds.iter().enumerate() {
        let Some(pid) = pid else {
            tally.no_pid += 1;
            continue;
        };
        let next_cmd = cmds.get(k + 1).map(|c| (c.0, c.1 as usize));
        let (entry, wake) = if by_completion {
            // The IRQ that completed the request: its last entry on the completion's CPU
            // after the issue.
            let Some(&(tc, ic, cpu)) = waiters.completion.get(&(order as usize)) else {
                no_completion += 1;
                broken[0] += 1;
                continue;
            };
            let on = entries_on.get(&cpu).map(Vec::as_slice).unwrap_or_default();
            let k = on.partition_point(|&x| x <= (tc, ic));
            let entry =
                k.checked_sub(1).and_then(|k| on.get(k)).copied().filter(|&x| x > (t0, order as usize));
            let woken = waiters.of.get(&(order as usize)).copied().flatten();
            match (entry, woken) {
                (Some(e), Some(w)) => (e, Wake::By(w)),
                (None, _) => {
                    broken[0] += 1;
                    continue;
                }
                (Some(_), None) => {
                    broken[2] += 1;
                    continue;
                }
            }
        } else {
            // The first chosen IRQ after the command, before the next command.
            let irq_pos = plan.irqs.partition_point(|&(t, o, _)| (t, o) <= (t0, order));
            let Some(&(t1, _, Some(entry_idx))) =
                plan.irqs.get(irq_pos).filter(|x| next_cmd.is_none_or(|n| (x.0, x.1 as usize) < n))
            else {
                broken[0] += 1;
                continue;
            };
            ((t1, entry_idx), Wake::OfIssuer(pid))
        };
        let (t1, entry_idx) = entry;
        let tail = match kernel.tail(k, wake, t1, entry_idx) {
            Ok(t) => t,
            Err(stage) => {
                broken[1 + stage] += 1;
                continue;
            }
        };
        tally.count(&tail);
        other_task += u64::from(tail.pid != pid);
        let irq_no = kernel.irq_of(entry_idx).map_or(0, |x| x.0);
        let key = kernel.key(tail.pid, &format!("irq={irq_no}"), &mut total, &mut stages);
        let bounds = [(t0, t1), (t1, tail.exit), (tail.exit, tail.wakeup), (tail.wakeup, tail.running)];
        for (st, (a, b)) in stages.iter_mut().zip(bounds) {
            st.samples.push(Sample::new(a, b, key.clone()));
        }
        total.samples.push(Sample::new(t0, tail.running, key));
    }
    let why = if by_completion {
        [
            "command with no IRQ of its own between its issue and its completion",
            TAIL_WHY[0],
            "completion that woke no task (nobody waited for the request)",
            TAIL_WHY[2],
        ]
    } else {
        ["command with no IRQ before the next command", TAIL_WHY[0], TAIL_WHY[1], TAIL_WHY[2]]
    };
    if by_completion {
        total.notes.push(Note {
            what: "followed the task each request's completion woke (block_rq_complete)".into(),
            count: total.samples.len() as u64,
        });
        for (what, count) in [
            ("woken task other than the issuer (asynchronous dispatch)", other_task),
            ("command never completed in the trace", no_completion),
        ] {
            if count > 0 {
                total.notes.push(Note { what: what.into(), count });
            }
        }
    }
    tally.finish(&mut total, stages, &broken, &why);
    total
}

/// The `mmc_request_start` event name: chains through the SD bus start at it.
const MMC_START: &str = kernel::MMC_REQUEST_START.name;

/// Stage names of a chain through a decoded SD bus, with an IRQ line and without.
pub const BUS_STAGES: [&str; 8] = [
    "request->bus cmd",
    "bus cmd->response",
    "response->data done",
    "data done->irq line",
    "irq line->handler",
    "irq handler",
    "exit->wakeup",
    "wakeup->switch-in",
];
pub const BUS_STAGES_NO_LINE: [&str; 7] = [
    "request->bus cmd",
    "bus cmd->response",
    "response->data done",
    "data done->handler",
    "irq handler",
    "exit->wakeup",
    "wakeup->switch-in",
];

/// A bus command: (time, index, argument, (source, seq) of its annotations).
type BusCmd = (Ps, i64, Option<i64>, (usize, i64));

/// A decoded SD bus (the `sd_cmd`, `sd_resp`, `sd_data`, `sd_busy` events the SD decoder
/// adds) and the IRQ line, in the time of the source whose chain it joins.
struct Bus {
    cmds: Vec<BusCmd>,
    /// Each command's response start.
    resp: FxHashMap<(usize, i64), Ps>,
    /// The end of each command's last bus activity: its response, last data block or busy.
    done: FxHashMap<(usize, i64), Ps>,
    /// Rising edges of the IRQ line, sorted; `None` when there is no line.
    line: Option<Vec<Ps>>,
}

impl Bus {
    /// The bus decoded in any of `sources`, on `home`'s clock; `None` when none has one.
    fn find(
        name: &str,
        sources: &[Placed<'_>],
        home: &Placed<'_>,
        line: Option<&Endpoint>,
    ) -> Result<Option<Bus>, AnalysisError> {
        let mut bus =
            Bus { cmds: Vec::new(), resp: FxHashMap::default(), done: FxHashMap::default(), line: None };
        let to_home = |p: &Placed<'_>, t: Ps| home.from_common(p.to_common(t));
        for (si, p) in sources.iter().enumerate() {
            if !Endpoint::event("sd_cmd").present_in(p) {
                continue;
            }
            let (index, arg, seq) =
                (FieldSel::new(p, "index"), FieldSel::new(p, "arg"), FieldSel::new(p, "seq"));
            let num =
                |sel: &FieldSel, ev: &latscope_model::EventRef<'_>| sel.get(ev).and_then(|v| v.as_i64());
            for i in crate::endpoint::endpoint_events(p, &Endpoint::event("sd_cmd")) {
                let Some(ev) = p.events.get(i) else { continue };
                let (Some(ix), Some(s)) = (num(&index, &ev), num(&seq, &ev)) else { continue };
                bus.cmds.push((to_home(p, ev.ts()), ix, num(&arg, &ev), (si, s)));
            }
            for i in crate::endpoint::endpoint_events(p, &Endpoint::event("sd_resp")) {
                let Some(ev) = p.events.get(i) else { continue };
                let Some(s) = num(&seq, &ev) else { continue };
                bus.resp.entry((si, s)).or_insert(to_home(p, ev.ts()));
            }
            for end in ["sd_resp_end", "sd_data_end", "sd_busy_end"] {
                for i in crate::endpoint::endpoint_events(p, &Endpoint::event(end)) {
                    let Some(ev) = p.events.get(i) else { continue };
                    let Some(s) = num(&seq, &ev) else { continue };
                    let t = to_home(p, ev.ts());
                    bus.done.entry((si, s)).and_modify(|d| *d = (*d).max(t)).or_insert(t);
                }
            }
        }
        if bus.cmds.is_empty() {
            return Ok(None);
        }
        bus.cmds.sort_unstable_by_key(|c| (c.0, c.3));
        // The IRQ line: the one given (a bare name is its rising edges), or a digital track
        // named IRQ (`SCOPE.IRQ` in a VCD), rising.
        let wanted = match line {
            Some(Endpoint::Event { name: track, preds }) if preds.is_empty() => {
                Some(Endpoint::edge(track.clone(), crate::endpoint::Edge::Rise))
            }
            Some(ep) => Some(ep.clone()),
            None => None,
        };
        for p in sources {
            let ep = match &wanted {
                Some(ep) => ep.clone(),
                None => {
                    let named = p.digital.iter().find(|d| d.name == "IRQ" || d.name.ends_with(".IRQ"));
                    let Some(d) = named else { continue };
                    Endpoint::edge(d.name.clone(), crate::endpoint::Edge::Rise)
                }
            };
            if !ep.present_in(p) {
                continue;
            }
            let times = crate::endpoint::endpoint_times(p, name, &ep).map_err(AnalysisError::from)?;
            let list = bus.line.get_or_insert_with(Vec::new);
            list.extend(times.into_iter().map(|t| to_home(p, t)));
        }
        if let Some(list) = bus.line.as_mut() {
            list.sort_unstable();
        } else if let Some(ep) = wanted {
            return Err(AnalysisError::Missing {
                rule: name.to_owned(),
                what: format!("the IRQ line {}", ep.target()),
            });
        }
        Ok(Some(bus))
    }
}

/// First time in sorted `list` at or after `t` and before `limit`.
fn at_or_after(list: &[Ps], t: Ps, limit: Option<Ps>) -> Option<Ps> {
    let k = list.partition_point(|&x| x < t);
    list.get(k).copied().filter(|&x| limit.is_none_or(|l| x < l))
}

/// A chain per `mmc_request_start` through the decoded bus: the request's command on the
/// bus (the first with its opcode, and its argument where both have one, before the next
/// request), its response, the end of its bus activity (response, last data block or busy),
/// the IRQ line's next rise, the chosen IRQ's next entry, then as [`chain_in`].
fn chain_through_bus(name: &str, si: usize, src: &Source, plan: CmdIrqPlan, bus: &Bus) -> Outcome {
    let kernel = Kernel::new(src, &plan, &Waiters::default());
    let names: &[&str] = if bus.line.is_some() { &BUS_STAGES } else { &BUS_STAGES_NO_LINE };
    let n = names.len();
    let mut total = Outcome::new(name, AnalysisKind::Chain, si);
    total.notes = plan.notes;
    total.notes.push(Note {
        what: "through the decoded SD bus: sd_cmd events".into(),
        count: bus.cmds.len() as u64,
    });
    let mut stages: Vec<Outcome> =
        names.iter().map(|s| Outcome::new(format!("{name}/{s}"), AnalysisKind::Pair, si)).collect();
    let mut broken = vec![0u64; n];
    let mut tally = Tally::default();
    let (opcode, arg) = (FieldSel::new(src, "cmd_opcode"), FieldSel::new(src, "cmd_arg"));
    let cmds = &plan.commands;
    for (k, &(t0, order, pid)) in cmds.iter().enumerate() {
        let Some(pid) = pid else {
            tally.no_pid += 1;
            continue;
        };
        let Some(ev) = src.events.get(order as usize) else { continue };
        let op = opcode.get(&ev).and_then(|v| v.as_i64());
        let want_arg = arg.get(&ev).and_then(|v| v.as_i64());
        let next = cmds.get(k + 1).map(|c| c.0);
        // The request's command on the bus.
        let from = bus.cmds.partition_point(|c| c.0 < t0);
        let found = bus.cmds[from..]
            .iter()
            .take_while(|c| next.is_none_or(|l| c.0 < l))
            .find(|c| Some(c.1) == op && (want_arg.is_none() || c.2.is_none() || c.2 == want_arg));
        let Some(&(tb, index, _, key)) = found else {
            broken[0] += 1;
            continue;
        };
        let Some(&tr) = bus.resp.get(&key).filter(|&&t| t >= tb) else {
            broken[1] += 1;
            continue;
        };
        let td = bus.done.get(&key).copied().unwrap_or(tr).max(tr);
        let mut points = vec![t0, tb, tr, td];
        let mut stage = 3;
        if let Some(line) = &bus.line {
            let Some(tl) = at_or_after(line, td, next) else {
                broken[stage] += 1;
                continue;
            };
            points.push(tl);
            stage += 1;
        }
        // The chosen IRQ's next entry.
        let last = points[points.len() - 1];
        let pos = plan.irqs.partition_point(|x| x.0 < last);
        let Some(&(t1, _, Some(entry_idx))) = plan.irqs.get(pos).filter(|x| next.is_none_or(|l| x.0 < l))
        else {
            broken[stage] += 1;
            continue;
        };
        let tail = match kernel.tail(k, Wake::OfIssuer(pid), t1, entry_idx) {
            Ok(t) => t,
            Err(s) => {
                broken[stage + 1 + s] += 1;
                continue;
            }
        };
        tally.count(&tail);
        points.extend([t1, tail.exit, tail.wakeup, tail.running]);
        let irq_no = kernel.irq_of(entry_idx).map_or(0, |x| x.0);
        let key = kernel.key(pid, &format!("irq={irq_no} cmd={index}"), &mut total, &mut stages);
        for (st, w) in stages.iter_mut().zip(points.windows(2)) {
            st.samples.push(Sample::new(w[0], w[1], key.clone()));
        }
        total.samples.push(Sample::new(t0, tail.running, key));
    }
    let mut why = vec![
        "request with no command of its opcode on the bus before the next request",
        "bus command with no response",
    ];
    if bus.line.is_some() {
        why.push("bus command with no IRQ line rise after it before the next request");
    }
    why.push("no IRQ entry after the bus command before the next request");
    why.extend(TAIL_WHY);
    // Stage 2 (response -> data done) cannot break: `why` has no entry of its own for it.
    why.insert(2, "");
    tally.finish(&mut total, stages, &broken, &why);
    total
}

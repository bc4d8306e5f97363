//! Chains: command -> IRQ entry -> handler exit -> wakeup of the issuing task
//! -> switch-in of that task. Each stage is an [`Outcome`] in `stages`; the chain outcome's
//! samples are the totals, so a user sees where the time goes.
//!
//! Per command (an event, by default `block_rq_issue` or `mmc_request_start`; issued by
//! task P): the IRQ is the first `irq_handler_entry` of the chosen IRQ number after it and
//! before the next command (the `cmd-irq` rule, policy next); the handler exit is the
//! first `irq_handler_exit` of that IRQ on the entry's CPU; the wakeup is the first
//! `sched_wakeup` of P after the IRQ entry and before P's next command; the switch-in is
//! the first `sched_switch` with `next_pid` P after the wakeup — or, when P is seen running
//! (an event with pid P) before any such switch, that first event, noted as "switch-in not
//! recorded" (kernels lose or never emit some switches out of idle). A wakeup inside the
//! handler (before its exit) counts from the exit (its stage is 0) and is noted. Only
//! complete chains give samples, in every stage alike, so stages sum to the total for each
//! sample; a chain that breaks is counted in `unmatched_start` with a note naming the stage.

use crate::endpoint::{Endpoint, FieldSel};
use crate::measure::AnalysisError;
use crate::outcome::{AnalysisKind, Note, Outcome, Sample};
use crate::presets::{CmdIrqPlan, plan_cmd_irq};
use crate::spec::{CmdIrq, IrqSel};
use latscope_model::{Placed, Ps, Source};
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
        out.push(chain_in(name, si, src, plan));
    }
    if out.is_empty() {
        return Err(AnalysisError::Missing {
            rule: name.to_owned(),
            what: "a command event (block_rq_issue, mmc_request_start or the cmd= given)".into(),
        });
    }
    Ok(out)
}

fn chain_in(name: &str, si: usize, src: &Source, plan: CmdIrqPlan) -> Outcome {
    let exits = by_key(src, &Endpoint::event("irq_handler_exit"), &FieldSel::new(src, "irq"));
    let wakeups = by_key(src, &Endpoint::event("sched_wakeup"), &FieldSel::new(src, "pid"));
    let switches = by_key(src, &Endpoint::event("sched_switch"), &FieldSel::new(src, "next_pid"));
    let irq_field = FieldSel::new(src, "irq");
    // Events each issuing task ran, to see it running when its switch-in was not recorded.
    let issuers: rustc_hash::FxHashSet<i32> = plan.commands.iter().filter_map(|c| c.2).collect();
    let mut ran: FxHashMap<i64, Vec<(Ps, usize)>> = FxHashMap::default();
    for (i, (&pid, &t)) in src.events.pid.iter().zip(&src.events.ts).enumerate() {
        if issuers.contains(&pid) {
            ran.entry(i64::from(pid)).or_default().push((t, i));
        }
    }
    let mut total = Outcome::new(name, AnalysisKind::Chain, si);
    total.notes = plan.notes;
    let mut stages: Vec<Outcome> =
        STAGES.iter().map(|s| Outcome::new(format!("{name}/{s}"), AnalysisKind::Pair, si)).collect();
    let mut broken = [0u64; 4];
    let mut inside_handler = 0u64;
    let mut no_pid = 0u64;
    let mut ran_first = 0u64;
    let cmds = &plan.commands;
    // Each command's next command of the same pid, for the wakeup limit.
    let mut next_same_pid: Vec<Option<(Ps, usize)>> = vec![None; cmds.len()];
    let mut last_of_pid: FxHashMap<i32, usize> = FxHashMap::default();
    for (k, &(_, _, pid)) in cmds.iter().enumerate().rev() {
        if let Some(p) = pid {
            next_same_pid[k] = last_of_pid.get(&p).map(|&j| (cmds[j].0, cmds[j].1 as usize));
            last_of_pid.insert(p, k);
        }
    }
    for (k, &(t0, order, pid)) in cmds.iter().enumerate() {
        let Some(pid) = pid else {
            no_pid += 1;
            continue;
        };
        let next_cmd = cmds.get(k + 1).map(|c| (c.0, c.1 as usize));
        // Stage 1: the first chosen IRQ after the command, before the next command.
        let irq_pos = plan.irqs.partition_point(|&(t, o, _)| (t, o) <= (t0, order));
        let Some(&(t1, _, Some(entry_idx))) =
            plan.irqs.get(irq_pos).filter(|x| next_cmd.is_none_or(|n| (x.0, x.1 as usize) < n))
        else {
            broken[0] += 1;
            continue;
        };
        let Some(entry) = src.events.get(entry_idx) else { continue };
        let irq_no = irq_field.get(&entry).and_then(|v| v.as_i64()).unwrap_or_default();
        // Stage 2: that IRQ's exit on the same CPU.
        let cpu = entry.cpu();
        let exit = exits.get(&irq_no).and_then(|list| {
            let k = list.partition_point(|&x| x <= (t1, entry_idx));
            list[k..].iter().copied().find(|&(_, i)| src.events.get(i).is_some_and(|e| e.cpu() == cpu))
        });
        let Some((t2, _)) = exit else {
            broken[1] += 1;
            continue;
        };
        // Stage 3: the issuer's wakeup after the IRQ entry, before its next command.
        let Some((t3, wake_idx)) = first_after(wakeups.get(&i64::from(pid)), t1, entry_idx, next_same_pid[k])
        else {
            broken[2] += 1;
            continue;
        };
        // Stage 4: the issuer's switch-in after the wakeup, or its first own event when
        // that comes first (the switch-in was not recorded).
        let switch = first_after(switches.get(&i64::from(pid)), t3, wake_idx, None);
        let own = first_after(ran.get(&i64::from(pid)), t3, wake_idx, None);
        let t4 = match (switch, own) {
            (Some(s), Some(o)) if o < s => {
                ran_first += 1;
                o.0
            }
            (Some(s), _) => s.0,
            (None, Some(o)) => {
                ran_first += 1;
                o.0
            }
            (None, None) => {
                broken[3] += 1;
                continue;
            }
        };
        let t3c = if t3 < t2 {
            inside_handler += 1;
            t2
        } else {
            t3
        };
        let key = format!("pid={pid} irq={irq_no}");
        for (st, (a, b)) in stages.iter_mut().zip([(t0, t1), (t1, t2), (t2, t3c), (t3c, t4)]) {
            st.samples.push(Sample { start: a, end: b, key: key.clone() });
        }
        total.samples.push(Sample { start: t0, end: t4, key });
    }
    let why = [
        "command with no IRQ before the next command",
        "IRQ entry with no handler exit on its CPU",
        "no wakeup of the issuing task before its next command",
        "wakeup with no switch-in or later event of the task",
    ];
    for (k, st) in stages.iter_mut().enumerate() {
        st.unmatched_start = broken[k];
        if broken[k] > 0 {
            st.notes.push(Note { what: why[k].into(), count: broken[k] });
            total.notes.push(Note { what: why[k].into(), count: broken[k] });
        }
    }
    if inside_handler > 0 {
        total.notes.push(Note {
            what: "wakeup inside the IRQ handler (counted from its exit)".into(),
            count: inside_handler,
        });
    }
    if ran_first > 0 {
        total.notes.push(Note {
            what: "switch-in not recorded: the task's first event after the wakeup ends the chain".into(),
            count: ran_first,
        });
    }
    if no_pid > 0 {
        total.notes.push(Note {
            what: "command without a task (an edge): no wakeup to follow".into(),
            count: no_pid,
        });
    }
    total.unmatched_start = broken.iter().sum::<u64>() + no_pid;
    total.stages = stages;
    total
}

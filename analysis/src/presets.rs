//! The DESIGN §4.3 presets: what each one selects and how it pairs, and the presets whose
//! semantics a plain pair rule cannot express (`block` with its flush keys, `cmd-irq` with
//! its "the IRQ that most often follows" end, `chain`). Also the shared step that runs a
//! pair rule over the sources and turns the result into an [`Outcome`].
//!
//! Preset details (also in docs/ARCHITECTURE.md):
//! - `block`: `block_rq_issue -> block_rq_complete`, fifo, key `dev,sector`. A request is a
//!   flush (key `dev` only) when its `rwbs` contains `F`, its `nr_sector` is 0 or absent, or
//!   its sector is absent or `18446744073709551615` (flushes print `0 + 0`, or complete with
//!   that sector). Notes: double completions (an end for a key whose start was already
//!   closed), completions with no issue, issues never completed.
//! - `wakeup`: `sched_wakeup -> sched_switch` by `pid:next_pid`, policy `first`; a task
//!   seen running (an event it executes) before a switch-in drops its open wakeups, noted
//!   (the switch-in went unrecorded).
//! - `idle`: `cpu_idle[state!=4294967295] -> cpu_idle[state=4294967295]` by cpu, next; a
//!   kernel printing `state=-1` matches too (integers compare modulo 2^32 and 2^64).
//! - `cmd-irq[:irq=N|irq=ENDPOINT][,cmd=ENDPOINT]`: see [`CmdIrq`]; `chain[:…]` the same
//!   options, see `chain`.
//!
//! Outcomes of sources with lost-event gaps carry notes counting the gaps and the samples
//! that span one.

use crate::outcome::{AnalysisKind, Note, Outcome, Sample};
use crate::pairing::{
    self, Endpoint, FieldSel, KeyVal, PairResult, PairRule, Policy, Pred, PredOp, StreamPairer,
    custom_occurrence, key_of_value, pair_occurrences, render_key,
};
use crate::spec::{AnalysisError, Cursor, Spec, SpecError, parse_endpoint};
use latscope_model::{FieldValue, Interner, Placed, Ps, Source};

/// Preset names and one-line descriptions, for `--help` and the GUI.
pub const PRESETS: &[(&str, &str)] = &[
    ("block", "block_rq_issue -> block_rq_complete by dev,sector (flushes by dev), fifo"),
    ("irq-handler", "irq_handler_entry -> irq_handler_exit by cpu,irq, lifo (nesting)"),
    ("softirq", "softirq_entry -> softirq_exit by cpu,vec, lifo"),
    ("wakeup", "sched_wakeup -> sched_switch in of that pid; the oldest pending wakeup"),
    ("idle", "cpu_idle state!=4294967295 -> state=4294967295 by cpu, next"),
    ("irqs-off", "irq_disable -> irq_enable by cpu, next"),
    ("mmc", "mmc_request_start -> mmc_request_done by host,cmd_opcode, fifo"),
    ("cmd-irq", "command -> first IRQ after it (cmd-irq:irq=N,cmd=ENDPOINT to choose), next"),
    ("chain", "command -> IRQ entry -> handler exit -> wakeup -> switch-in of the issuer"),
    ("pulse:CH", "widths of the high pulses of channel CH (pulse:CH:low for low ones)"),
];

/// `cmd-irq` and `chain` options: the command endpoints and the IRQ.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CmdIrq {
    /// The command; `None` means `mmc_request_start` where the source has it, else
    /// `block_rq_issue`.
    pub cmd: Option<Endpoint>,
    /// The IRQ: an `irq_handler_entry` IRQ number, or any endpoint (a GPIO edge); `None`
    /// means the IRQ number that most often is the first `irq_handler_entry` after a command.
    pub irq: Option<IrqSel>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IrqSel {
    Number(i64),
    Endpoint(Endpoint),
}

/// Presets that are more than a pair rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Preset {
    Block,
    /// `sched_wakeup -> sched_switch` by `pid:next_pid`, policy first; a task seen running
    /// drops its open wakeups (their switch-in was not recorded), and they are noted.
    Wakeup,
    CmdIrq {
        name: String,
        opts: CmdIrq,
    },
    Chain {
        name: String,
        opts: CmdIrq,
    },
}

impl Preset {
    pub fn name(&self) -> &str {
        match self {
            Preset::Block => "block",
            Preset::Wakeup => "wakeup",
            Preset::CmdIrq { name, .. } | Preset::Chain { name, .. } => name,
        }
    }
}

fn simple(name: &str, start: Endpoint, end: Endpoint, by: &[(&str, &str)], policy: Policy) -> Spec {
    let mut r = PairRule::new(name, start, end, policy);
    for (a, b) in by {
        r = r.by_mapped(a, b);
    }
    Spec::Pair(r)
}

fn state_pred(op: PredOp) -> Endpoint {
    Endpoint::event_where("cpu_idle", vec![Pred::new("state", op, "4294967295")])
}

/// The spec of a preset name (with options for `cmd-irq` and `chain`); `None` when `text`
/// names no preset.
pub(crate) fn parse_preset(text: &str) -> Result<Option<Spec>, SpecError> {
    let t = text.trim();
    let lead = text.len() - text.trim_start().len();
    Ok(Some(match t {
        "block" => Spec::Preset(Preset::Block),
        "irq-handler" => simple(
            "irq-handler",
            Endpoint::event("irq_handler_entry"),
            Endpoint::event("irq_handler_exit"),
            &[("cpu", "cpu"), ("irq", "irq")],
            Policy::Lifo,
        ),
        "softirq" => simple(
            "softirq",
            Endpoint::event("softirq_entry"),
            Endpoint::event("softirq_exit"),
            &[("cpu", "cpu"), ("vec", "vec")],
            Policy::Lifo,
        ),
        "wakeup" => Spec::Preset(Preset::Wakeup),
        "idle" => {
            simple("idle", state_pred(PredOp::Ne), state_pred(PredOp::Eq), &[("cpu", "cpu")], Policy::Next)
        }
        "irqs-off" => simple(
            "irqs-off",
            Endpoint::event("irq_disable"),
            Endpoint::event("irq_enable"),
            &[("cpu", "cpu")],
            Policy::Next,
        ),
        "mmc" => simple(
            "mmc",
            Endpoint::event("mmc_request_start"),
            Endpoint::event("mmc_request_done"),
            &[("host", "host"), ("cmd_opcode", "cmd_opcode")],
            Policy::Fifo,
        ),
        _ => {
            let mut c = Cursor::new(text);
            if c.eat("pulse:") {
                return crate::spec::parse_pulse(&mut c).map(Some);
            }
            let chain = if c.eat_word("cmd-irq") {
                false
            } else if c.eat_word("chain") {
                true
            } else {
                return Ok(None);
            };
            let opts = if c.eat(":") { parse_cmd_irq_opts(&mut c)? } else { CmdIrq::default() };
            if !c.at_end() {
                return Err(SpecError {
                    column: c.pos,
                    message: "expected ':' and options, or the end".into(),
                });
            }
            let name = text[lead..].trim_end().to_owned();
            if chain {
                Spec::Preset(Preset::Chain { name, opts })
            } else {
                Spec::Preset(Preset::CmdIrq { name, opts })
            }
        }
    }))
}

/// `irq=N|irq=ENDPOINT` and `cmd=ENDPOINT`, separated by commas.
fn parse_cmd_irq_opts(c: &mut Cursor<'_>) -> Result<CmdIrq, SpecError> {
    let mut o = CmdIrq::default();
    loop {
        if c.eat("irq=") {
            let save = c.pos;
            o.irq = Some(match c.number("an IRQ number") {
                Ok((n, at)) if !c.rest().starts_with(':') && !c.rest().starts_with('[') => {
                    IrqSel::Number(n.parse().map_err(|_| SpecError {
                        column: at,
                        message: "expected a whole IRQ number".into(),
                    })?)
                }
                _ => {
                    c.pos = save;
                    IrqSel::Endpoint(parse_endpoint(c, "the IRQ endpoint after 'irq='")?)
                }
            });
        } else if c.eat("cmd=") {
            o.cmd = Some(parse_endpoint(c, "the command endpoint after 'cmd='")?);
        } else {
            c.skip_ws();
            return Err(SpecError {
                column: c.pos,
                message: "expected irq=N, irq=ENDPOINT or cmd=ENDPOINT".into(),
            });
        }
        if !c.eat(",") {
            return Ok(o);
        }
    }
}

/// A [`PairResult`] as an outcome: samples by start with rendered keys.
pub(crate) fn outcome_of(
    name: &str,
    kind: AnalysisKind,
    source: usize,
    rule: &PairRule,
    res: &PairResult,
    src: &Source,
) -> Outcome {
    outcome_keyed(name, kind, source, rule, res, src, &src.strings)
}

/// [`outcome_of`] with the interner that `res`'s string keys refer to.
fn outcome_keyed(
    name: &str,
    kind: AnalysisKind,
    source: usize,
    rule: &PairRule,
    res: &PairResult,
    src: &Source,
    strings: &Interner,
) -> Outcome {
    let mut o = Outcome::new(name, kind, source);
    // Few distinct keys, many pairs: render each key once. Pairs of a rule without keys
    // (pulses, edges) all share the rendering of no key, which needs no lookup.
    let mut rendered: rustc_hash::FxHashMap<&[KeyVal], String> = Default::default();
    let no_key = render_key(rule, &[], strings);
    o.samples = res
        .pairs
        .iter()
        .map(|p| {
            let key = if p.key.is_empty() {
                no_key.clone()
            } else {
                rendered.entry(&p.key[..]).or_insert_with(|| render_key(rule, &p.key, strings)).clone()
            };
            Sample { start: p.start, end: p.end, key }
        })
        .collect();
    o.samples.sort_by_key(|s| (s.start, s.end));
    o.unmatched_start = res.unmatched_start;
    o.unmatched_end = res.unmatched_end;
    note_lost_events(&mut o, src);
    o
}

/// Notes the samples that span a lost-event gap of the tracer: an end or a start inside
/// may be missing, so the pair may be wrong.
pub(crate) fn note_lost_events(o: &mut Outcome, src: &Source) {
    let gaps = &src.diagnostics.gaps;
    if gaps.is_empty() {
        return;
    }
    let mut at: Vec<Ps> = gaps.iter().map(|g| g.ts).collect();
    at.sort_unstable();
    let spanning = o
        .samples
        .iter()
        .filter(|s| at.partition_point(|&t| t < s.start) < at.partition_point(|&t| t <= s.end))
        .count();
    o.notes.push(Note { what: "lost-event gaps in the source".into(), count: gaps.len() as u64 });
    if spanning > 0 {
        o.notes.push(Note { what: "samples spanning lost events".into(), count: spanning as u64 });
    }
}

fn missing_error(rule: &str, ep: &Endpoint) -> AnalysisError {
    let what = match ep {
        Endpoint::Event { name, .. } => format!("an event {name:?}"),
        Endpoint::Edge { track, .. } => format!("a digital or analog track {track:?}"),
        Endpoint::Crossing { track, .. } => format!("an analog track {track:?}"),
    };
    AnalysisError::Missing { rule: rule.to_owned(), what }
}

/// Runs a pair rule: per source holding both endpoints; else across the sources holding
/// the start and those holding the end, on the common timeline (times reported in the
/// first start source's own time).
pub(crate) fn run_pair_rule(rule: &PairRule, sources: &[Placed<'_>]) -> Result<Vec<Outcome>, AnalysisError> {
    let has_start: Vec<usize> = (0..sources.len()).filter(|&i| rule.start.present_in(&sources[i])).collect();
    let has_end: Vec<usize> = (0..sources.len()).filter(|&i| rule.end.present_in(&sources[i])).collect();
    let both: Vec<usize> = has_start.iter().copied().filter(|i| has_end.contains(i)).collect();
    if !both.is_empty() {
        let mut out = Vec::new();
        for i in both {
            let res = pairing::pair(&sources[i], rule)?;
            let mut o = outcome_of(&rule.name, AnalysisKind::Pair, i, rule, &res, &sources[i]);
            add_repeat_note(&mut o, &res, "end with no new start after its key closed a pair");
            out.push(o);
        }
        return Ok(out);
    }
    let Some(&home) = has_start.first() else { return Err(missing_error(&rule.name, &rule.start)) };
    if has_end.is_empty() {
        return Err(missing_error(&rule.name, &rule.end));
    }
    let mut idx: Vec<usize> = has_start.iter().chain(&has_end).copied().collect();
    idx.sort_unstable();
    idx.dedup();
    let placed: Vec<Placed<'_>> = idx.iter().map(|&i| sources[i]).collect();
    let (mut res, shared) = pairing::pair_across_keyed(&placed, rule)?;
    let src = &sources[home];
    for p in &mut res.pairs {
        p.start = src.from_common(p.start);
        p.end = src.from_common(p.end);
    }
    // String keys were re-interned across sources: render them with that interner.
    let mut o = outcome_keyed(&rule.name, AnalysisKind::Pair, home, rule, &res, src, &shared);
    o.notes.push(Note {
        what: format!("across sources {idx:?} on the common timeline"),
        count: idx.len() as u64,
    });
    Ok(vec![o])
}

fn add_repeat_note(o: &mut Outcome, res: &PairResult, what: &str) {
    if res.repeated_end > 0 {
        o.notes.push(Note { what: what.to_owned(), count: res.repeated_end });
    }
}

pub(crate) fn run_preset(p: &Preset, sources: &[Placed<'_>]) -> Result<Vec<Outcome>, AnalysisError> {
    match p {
        Preset::Block => run_block(sources),
        Preset::Wakeup => run_wakeup(sources),
        Preset::CmdIrq { name, opts } => run_cmd_irq(name, opts, sources),
        Preset::Chain { name, opts } => crate::chain::run_chain(name, opts, sources),
    }
}

/// The `wakeup` rule.
pub fn wakeup_rule() -> PairRule {
    PairRule::new("wakeup", Endpoint::event("sched_wakeup"), Endpoint::event("sched_switch"), Policy::First)
        .by_mapped("pid", "next_pid")
}

fn run_wakeup(sources: &[Placed<'_>]) -> Result<Vec<Outcome>, AnalysisError> {
    let rule = wakeup_rule();
    let mut out = Vec::new();
    for (i, src) in sources.iter().enumerate() {
        if !rule.start.present_in(src) || !rule.end.present_in(src) {
            continue;
        }
        let (res, ran) = pair_wakeups(src);
        let mut o = outcome_of("wakeup", AnalysisKind::Pair, i, &rule, &res, src);
        if ran > 0 {
            o.notes
                .push(Note { what: "wakeups whose task ran with no recorded switch-in".into(), count: ran });
        }
        out.push(o);
    }
    if out.is_empty() {
        return Err(missing_error("wakeup", &rule.start));
    }
    Ok(out)
}

/// `wakeup` pairing: a switch-in of task P closes P's oldest open wakeup and drops the
/// others (policy first). A task seen running — any event executed by P — before a switch-in
/// drops its open wakeups too: the kernel did not record that switch-in (often out of idle),
/// and a later switch-in would be another scheduling. Returns the pairs and that count.
fn pair_wakeups(src: &Source) -> (PairResult, u64) {
    let mut res = PairResult::default();
    let mut ran = 0u64;
    let (Some(wake), Some(switch)) =
        (src.strings.lookup(b"sched_wakeup"), src.strings.lookup(b"sched_switch"))
    else {
        return (res, ran);
    };
    let pid = FieldSel::new(src, "pid");
    let next_pid = FieldSel::new(src, "next_pid");
    let mut open: rustc_hash::FxHashMap<i64, Vec<Ps>> = Default::default();
    for ev in src.events.iter() {
        if !open.is_empty()
            && let Some(v) = open.remove(&i64::from(ev.pid()))
        {
            res.unmatched_start += v.len() as u64;
            ran += v.len() as u64;
        }
        let n = ev.name();
        if n == switch {
            let Some(p) = next_pid.get(&ev).and_then(|v| v.as_i64()) else { continue };
            match open.remove(&p).filter(|v| !v.is_empty()) {
                Some(v) => {
                    res.pairs.push(crate::pairing::Pair {
                        start: v[0],
                        end: ev.ts(),
                        key: vec![KeyVal::Int(p)],
                    });
                    res.unmatched_start += v.len() as u64 - 1;
                }
                // A task switched in after a preemption: no wakeup precedes it.
                None => res.unmatched_end += 1,
            }
        } else if n == wake
            && let Some(p) = pid.get(&ev).and_then(|v| v.as_i64())
        {
            open.entry(p).or_default().push(ev.ts());
        }
    }
    res.unmatched_start += open.values().map(|v| v.len() as u64).sum::<u64>();
    (res, ran)
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

fn run_block(sources: &[Placed<'_>]) -> Result<Vec<Outcome>, AnalysisError> {
    let issue = Endpoint::event("block_rq_issue");
    let complete = Endpoint::event("block_rq_complete");
    let rule = PairRule::new("block", issue.clone(), complete.clone(), Policy::Fifo).by("dev").by("sector");
    let mut out = Vec::new();
    for (i, src) in sources.iter().enumerate() {
        if !issue.present_in(src) && !complete.present_in(src) {
            continue;
        }
        let (Some(iss), comp) =
            (src.strings.lookup(b"block_rq_issue"), src.strings.lookup(b"block_rq_complete"))
        else {
            continue;
        };
        let dev = FieldSel::new(src, "dev");
        let rwbs = FieldSel::new(src, "rwbs");
        let sector = FieldSel::new(src, "sector");
        let nr = FieldSel::new(src, "nr_sector");
        // The four fields by symbol, decoded in one pass over each block event's fields
        // (each `FieldSel::get` decodes the fields before its own).
        let plain = [&dev, &rwbs, &sector, &nr].map(FieldSel::plain_sym);
        let mut pairer = StreamPairer::new(&rule);
        let mut flushes = 0u64;
        let mask: Vec<bool> = pairing::layout_mask(src, Some(iss))
            .iter()
            .zip(pairing::layout_mask(src, comp))
            .map(|(&a, b)| a || b)
            .collect();
        for ev in pairing::candidates(src, &mask) {
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
            flushes += u64::from(flush && is_start);
            let key = [key_of_value(d), if flush { KeyVal::Missing } else { key_of_value(s) }];
            pairer.feed(custom_occurrence(ev.ts(), ev.index as u64, is_start, !is_start, &key));
        }
        let res = pairer.finish();
        let mut o = outcome_of("block", AnalysisKind::Pair, i, &rule, &res, src);
        add_repeat_note(&mut o, &res, "double completion");
        if flushes > 0 {
            o.notes.push(Note { what: "flush requests (paired by dev)".into(), count: flushes });
        }
        out.push(o);
    }
    if out.is_empty() {
        return Err(missing_error("block", &issue));
    }
    Ok(out)
}

/// Command times and the `irq_handler_entry` IRQ chosen for them in one source.
pub(crate) struct CmdIrqPlan {
    /// (time, event index or edge rank, issuing pid where the command is an event).
    pub commands: Vec<(Ps, u64, Option<i32>)>,
    /// IRQ occurrences: (time, order, event index when it is an `irq_handler_entry`).
    pub irqs: Vec<(Ps, u64, Option<usize>)>,
    pub notes: Vec<Note>,
}

fn default_commands() -> [Endpoint; 2] {
    [Endpoint::event("block_rq_issue"), Endpoint::event("mmc_request_start")]
}

/// Finds the commands and IRQs of `opts` in `src`; `None` when `src` has no command.
pub(crate) fn plan_cmd_irq(
    name: &str,
    opts: &CmdIrq,
    src: &Source,
) -> Result<Option<CmdIrqPlan>, AnalysisError> {
    // By default the command closest to the hardware: an eMMC/SD trace has both events for
    // one I/O (`block_rq_issue`, then `mmc_request_start`), and only the second precedes the IRQ.
    let cmds: Vec<Endpoint> = match &opts.cmd {
        Some(c) => vec![c.clone()],
        None => {
            let [block, mmc] = default_commands();
            vec![if mmc.present_in(src) { mmc } else { block }]
        }
    };
    if !cmds.iter().any(|c| c.present_in(src)) {
        return Ok(None);
    }
    let mut commands: Vec<(Ps, u64, Option<i32>)> = Vec::new();
    for c in &cmds {
        match c {
            Endpoint::Event { .. } => {
                for i in pairing::endpoint_events(src, c) {
                    if let Some(ev) = src.events.get(i) {
                        commands.push((ev.ts(), i as u64, Some(ev.pid())));
                    }
                }
            }
            _ => {
                for t in pairing::endpoint_times(src, name, c)? {
                    commands.push((t, 1 << 40, None));
                }
            }
        }
    }
    commands.sort_unstable();
    let mut notes = Vec::new();
    let irqs: Vec<(Ps, u64, Option<usize>)> = match &opts.irq {
        Some(IrqSel::Endpoint(ep)) => {
            pairing::endpoint_times(src, name, ep)?.into_iter().map(|t| (t, 1 << 41, None)).collect()
        }
        sel => {
            let entry = Endpoint::event("irq_handler_entry");
            let irq = FieldSel::new(src, "irq");
            let all: Vec<(Ps, usize, i64)> = pairing::endpoint_events(src, &entry)
                .into_iter()
                .filter_map(|i| {
                    let ev = src.events.get(i)?;
                    Some((ev.ts(), i, irq.get(&ev)?.as_i64()?))
                })
                .collect();
            let number = match sel {
                Some(IrqSel::Number(n)) => Some(*n),
                _ => {
                    // The IRQ that is most often the first one after a command.
                    let mut counts: std::collections::BTreeMap<i64, u64> = Default::default();
                    for &(t, order, _) in &commands {
                        let k = all.partition_point(|&(ti, i, _)| (ti, i as u64) <= (t, order));
                        if let Some(&(_, _, n)) = all.get(k) {
                            *counts.entry(n).or_default() += 1;
                        }
                    }
                    let best = counts.iter().max_by_key(|&(n, c)| (*c, std::cmp::Reverse(*n)));
                    if let Some((&n, &c)) = best {
                        notes.push(Note {
                            what: format!(
                                "irq {n} chosen: the first IRQ after {c} of {} commands",
                                commands.len()
                            ),
                            count: c,
                        });
                    }
                    best.map(|(&n, _)| n)
                }
            };
            match number {
                Some(n) => all.iter().filter(|a| a.2 == n).map(|&(t, i, _)| (t, i as u64, Some(i))).collect(),
                None => Vec::new(),
            }
        }
    };
    Ok(Some(CmdIrqPlan { commands, irqs, notes }))
}

fn run_cmd_irq(name: &str, opts: &CmdIrq, sources: &[Placed<'_>]) -> Result<Vec<Outcome>, AnalysisError> {
    let rule = PairRule::new(name, Endpoint::event("command"), Endpoint::event("irq"), Policy::Next);
    let mut out = Vec::new();
    for (i, src) in sources.iter().enumerate() {
        let Some(plan) = plan_cmd_irq(name, opts, src)? else { continue };
        let mut occ: Vec<_> = plan
            .commands
            .iter()
            .map(|&(t, order, _)| custom_occurrence(t, order, true, false, &[]))
            .collect();
        occ.extend(plan.irqs.iter().map(|&(t, order, _)| custom_occurrence(t, order, false, true, &[])));
        let res = pair_occurrences(occ, &rule);
        let mut o = outcome_of(name, AnalysisKind::Pair, i, &rule, &res, src);
        o.notes = plan.notes;
        if res.unmatched_end > 0 {
            o.notes.push(Note { what: "irq without command".into(), count: res.unmatched_end });
        }
        out.push(o);
    }
    if out.is_empty() {
        let cmd = opts.cmd.clone().unwrap_or_else(|| Endpoint::event("block_rq_issue"));
        return Err(missing_error(name, &cmd));
    }
    Ok(out)
}

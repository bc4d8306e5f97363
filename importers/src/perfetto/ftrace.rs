//! Ftrace event bundles → model events, one worker per CPU.
//!
//! Each CPU's bundles are decoded in file order by one worker, so the compact sched
//! encoding, whose switch records leave the previous task implicit (it is the task the
//! CPU's previous switch put on it), is resolved without looking at other CPUs. Field names
//! are the kernel's ftrace field names, as the ftrace text and trace.dat importers name
//! them, so the presets run unchanged on a Perfetto trace.

use super::clocks::{BOOTTIME, Clocks, MONOTONIC_RAW};
use super::protos;
use super::wire::{Field, Fields, Value};
use crate::marker::push_token_fields;
use latscope_model::{
    Diagnostics, EventTableBuilder, FieldKind, FieldValue, Gap, IrqFlags, LayoutId, PS_PER_NS, Ps, Sym,
};
use prost::Message;
use rustc_hash::FxHashMap;

/// The kernel's softirq names (`softirq_to_name`), which ftrace prints as `action=`.
const SOFTIRQ_NAMES: [&str; 10] =
    ["HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU"];

/// What trace-cmd prints for a task whose name it does not know.
pub(crate) const UNKNOWN_COMM: &[u8] = b"<...>";

/// `FtraceEventBundle.ftrace_clock` values.
const FTRACE_CLOCK_GLOBAL: u64 = 2;
const FTRACE_CLOCK_LOCAL: u64 = 3;
const FTRACE_CLOCK_MONO_RAW: u64 = 4;

/// FtraceEvent oneof field numbers of the events latscope has a schema for.
mod tag {
    pub const PRINT: u32 = 3;
    pub const SCHED_SWITCH: u32 = 4;
    pub const CPU_FREQUENCY: u32 = 11;
    pub const CPU_IDLE: u32 = 13;
    pub const SCHED_WAKEUP: u32 = 17;
    pub const SCHED_WAKING: u32 = 20;
    pub const SOFTIRQ_ENTRY: u32 = 24;
    pub const SOFTIRQ_EXIT: u32 = 25;
    pub const SOFTIRQ_RAISE: u32 = 26;
    pub const IRQ_HANDLER_ENTRY: u32 = 36;
    pub const IRQ_HANDLER_EXIT: u32 = 37;
    pub const BLOCK_RQ_ISSUE: u32 = 45;
    pub const SCHED_WAKEUP_NEW: u32 = 114;
    pub const BLOCK_RQ_COMPLETE: u32 = 125;
    pub const BLOCK_RQ_INSERT: u32 = 126;
    pub const TASK_NEWTASK: u32 = 235;
    pub const TASK_RENAME: u32 = 236;
    pub const SCHED_PROCESS_EXIT: u32 = 238;
    pub const SCHED_PROCESS_FORK: u32 = 239;
    pub const SCHED_PROCESS_FREE: u32 = 240;
    pub const GENERIC: u32 = 327;
}

use FieldKind::{Int as I, Str as S, UInt as U};

/// Events with a fixed layout: name and fields in ftrace's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Kind {
    SchedSwitch,
    SchedWakeup,
    SchedWaking,
    SchedWakeupNew,
    CpuIdle,
    CpuFrequency,
    IrqEntry,
    IrqExit,
    SoftirqEntry,
    SoftirqExit,
    SoftirqRaise,
    BlockIssue,
    BlockInsert,
    BlockComplete,
    TaskNewtask,
    TaskRename,
    ProcessExit,
    ProcessFree,
    ProcessFork,
}

const KINDS: usize = Kind::ProcessFork as usize + 1;

const WAKE_FIELDS: &[(&str, FieldKind)] = &[("comm", S), ("pid", I), ("prio", I), ("target_cpu", I)];
const SOFTIRQ_FIELDS: &[(&str, FieldKind)] = &[("vec", I), ("action", S)];
const BLOCK_FIELDS: &[(&str, FieldKind)] =
    &[("dev", S), ("sector", U), ("nr_sector", U), ("bytes", U), ("rwbs", S), ("comm", S)];
const PROCESS_FIELDS: &[(&str, FieldKind)] = &[("comm", S), ("pid", I), ("prio", I)];

impl Kind {
    fn schema(self) -> (&'static str, &'static [(&'static str, FieldKind)]) {
        match self {
            Kind::SchedSwitch => (
                "sched_switch",
                &[
                    ("prev_comm", S),
                    ("prev_pid", I),
                    ("prev_prio", I),
                    ("prev_state", I),
                    ("next_comm", S),
                    ("next_pid", I),
                    ("next_prio", I),
                ],
            ),
            Kind::SchedWakeup => ("sched_wakeup", WAKE_FIELDS),
            Kind::SchedWaking => ("sched_waking", WAKE_FIELDS),
            Kind::SchedWakeupNew => ("sched_wakeup_new", WAKE_FIELDS),
            Kind::CpuIdle => ("cpu_idle", &[("state", I), ("cpu_id", I)]),
            Kind::CpuFrequency => ("cpu_frequency", &[("state", I), ("cpu_id", I)]),
            Kind::IrqEntry => ("irq_handler_entry", &[("irq", I), ("name", S)]),
            Kind::IrqExit => ("irq_handler_exit", &[("irq", I), ("ret", I)]),
            Kind::SoftirqEntry => ("softirq_entry", SOFTIRQ_FIELDS),
            Kind::SoftirqExit => ("softirq_exit", SOFTIRQ_FIELDS),
            Kind::SoftirqRaise => ("softirq_raise", SOFTIRQ_FIELDS),
            Kind::BlockIssue => ("block_rq_issue", BLOCK_FIELDS),
            Kind::BlockInsert => ("block_rq_insert", BLOCK_FIELDS),
            Kind::BlockComplete => (
                "block_rq_complete",
                &[("dev", S), ("sector", U), ("nr_sector", U), ("rwbs", S), ("error", I)],
            ),
            Kind::TaskNewtask => {
                ("task_newtask", &[("pid", I), ("comm", S), ("clone_flags", U), ("oom_score_adj", I)])
            }
            Kind::TaskRename => {
                ("task_rename", &[("pid", I), ("oldcomm", S), ("newcomm", S), ("oom_score_adj", I)])
            }
            Kind::ProcessExit => ("sched_process_exit", PROCESS_FIELDS),
            Kind::ProcessFree => ("sched_process_free", PROCESS_FIELDS),
            Kind::ProcessFork => {
                ("sched_process_fork", &[("comm", S), ("pid", I), ("child_comm", S), ("child_pid", I)])
            }
        }
    }
}

/// One bundle: its bytes and its file offset (for a bundle inside a compressed packet, the
/// offset of that packet, and `inner` is set).
#[derive(Debug, Clone, Copy)]
pub(crate) struct BundleRef<'a> {
    pub data: &'a [u8],
    pub at: u64,
}

/// An atrace marker (`B|`, `E`, `C|`, `S|`, `F|`) written through `print`, to become spans
/// and counters once every CPU's markers are merged in time order.
#[derive(Debug, Clone)]
pub(crate) struct AtraceRec {
    pub ts: Ps,
    pub tid: i32,
    pub cpu: u16,
    pub text: Box<[u8]>,
}

/// What a worker hands back.
#[derive(Debug)]
pub(crate) struct CpuOutput {
    pub builder: EventTableBuilder,
    pub diags: Diagnostics,
    pub atrace: Vec<AtraceRec>,
    /// Task names learnt from this CPU's events (last one per pid).
    pub names: FxHashMap<i32, Vec<u8>>,
    /// Events of types latscope has no schema for, by FtraceEvent field number.
    pub unknown: FxHashMap<u32, u64>,
    /// Bundles whose clock could not be mapped to the trace's clock.
    pub unmapped_clock: u64,
}

/// What every worker reads.
#[derive(Debug)]
pub(crate) struct Shared<'a> {
    pub clocks: &'a Clocks,
    pub origin_ns: i64,
    /// Thread names from process trees and track descriptors.
    pub names: &'a FxHashMap<i32, Vec<u8>>,
}

/// Field-name symbols, interned once per worker.
#[derive(Debug, Clone, Copy)]
struct Keys {
    ip: Sym,
    text: Sym,
    unknown_comm: Sym,
}

#[derive(Debug)]
pub(crate) struct CpuWorker<'s> {
    shared: &'s Shared<'s>,
    cpu: u16,
    b: EventTableBuilder,
    keys: Keys,
    layouts: [Option<LayoutId>; KINDS],
    values: Vec<FieldValue>,
    fields: Vec<(Sym, FieldKind)>,
    /// The task the CPU's latest switch put on it: (pid, comm, prio).
    running: Option<(i32, Sym, i32)>,
    /// Names seen so far on this CPU, as symbols of `b`.
    comms: FxHashMap<i32, Sym>,
    out_names: FxHashMap<i32, Vec<u8>>,
    atrace: Vec<AtraceRec>,
    diags: Diagnostics,
    unknown: FxHashMap<u32, u64>,
    unknown_layouts: FxHashMap<u32, LayoutId>,
    unmapped_clock: u64,
}

/// Why an event could not be stored.
type Skip = String;

impl<'s> CpuWorker<'s> {
    pub(crate) fn new(shared: &'s Shared<'s>, cpu: u16) -> Self {
        let mut b = EventTableBuilder::new();
        let keys =
            Keys { ip: b.intern(b"ip"), text: b.intern(b"text"), unknown_comm: b.intern(UNKNOWN_COMM) };
        CpuWorker {
            shared,
            cpu,
            b,
            keys,
            layouts: [None; KINDS],
            values: Vec::with_capacity(16),
            fields: Vec::with_capacity(16),
            running: None,
            comms: FxHashMap::default(),
            out_names: FxHashMap::default(),
            atrace: Vec::new(),
            diags: Diagnostics::default(),
            unknown: FxHashMap::default(),
            unknown_layouts: FxHashMap::default(),
            unmapped_clock: 0,
        }
    }

    pub(crate) fn finish(self) -> CpuOutput {
        CpuOutput {
            builder: self.b,
            diags: self.diags,
            atrace: self.atrace,
            names: self.out_names,
            unknown: self.unknown,
            unmapped_clock: self.unmapped_clock,
        }
    }

    fn layout(&mut self, kind: Kind) -> LayoutId {
        if let Some(id) = self.layouts[kind as usize] {
            return id;
        }
        let (name, fields) = kind.schema();
        let event = self.b.intern(name.as_bytes());
        let fields: Vec<(Sym, FieldKind)> =
            fields.iter().map(|&(n, k)| (self.b.intern(n.as_bytes()), k)).collect();
        let id = self.b.layout(event, &fields);
        self.layouts[kind as usize] = Some(id);
        id
    }

    /// Remembers `comm` as the name of `pid` on this CPU.
    fn learn(&mut self, pid: i32, comm: &[u8]) -> Sym {
        let sym = self.b.intern(comm);
        if self.comms.insert(pid, sym) != Some(sym) {
            self.out_names.insert(pid, comm.to_vec());
        }
        sym
    }

    fn comm_of(&mut self, pid: i32) -> Sym {
        if let Some(&s) = self.comms.get(&pid) {
            return s;
        }
        let sym = match self.shared.names.get(&pid) {
            Some(n) => self.b.intern(n),
            None => self.keys.unknown_comm,
        };
        self.comms.insert(pid, sym);
        sym
    }

    fn push(&mut self, ts: Ps, pid: i32, flags: IrqFlags, layout: LayoutId) {
        let comm = self.comm_of(pid);
        self.b.push(ts, self.cpu, pid, comm, flags, layout, &self.values);
    }

    /// Decodes one bundle of this CPU.
    pub(crate) fn bundle(&mut self, bundle: BundleRef<'_>) {
        let mut compact: Option<Field<'_>> = None;
        let (mut clock, mut ftrace_ts, mut boot_ts, mut lost) = (0u64, None, None, false);
        for f in Fields::new(bundle.data, bundle.at) {
            let f = match f {
                Ok(f) => f,
                Err(e) => {
                    self.diags.malformed(None, e.at, format!("ftrace bundle: {}", e.what));
                    break;
                }
            };
            match (f.number, f.value) {
                (3, Value::Varint(v)) => lost = v != 0,
                (4, Value::Bytes(_)) => compact = Some(f),
                (5, Value::Varint(v)) => clock = v,
                (6, v) => ftrace_ts = v.as_u64().map(|v| v as i64),
                (7, v) => boot_ts = v.as_u64().map(|v| v as i64),
                _ => {}
            }
        }
        let Some(first) = first_timestamp(bundle) else { return };
        // Offset from the bundle's clock to the trace's: ftrace's clock is BOOTTIME unless
        // the bundle names another (then it carries a reading of both, or MONO_RAW maps
        // through the snapshots).
        let to_boot = match clock {
            FTRACE_CLOCK_GLOBAL | FTRACE_CLOCK_LOCAL => match (ftrace_ts, boot_ts) {
                (Some(f), Some(b)) => Some(b.wrapping_sub(f)),
                _ => None,
            },
            FTRACE_CLOCK_MONO_RAW => {
                self.shared.clocks.to_primary(MONOTONIC_RAW, first).map(|p| p.wrapping_sub(first))
            }
            _ => Some(0),
        };
        let offset = match to_boot {
            Some(o) if clock == FTRACE_CLOCK_MONO_RAW => Some(o),
            Some(o) => {
                let boot = first.wrapping_add(o);
                self.shared.clocks.to_primary(BOOTTIME, boot).map(|p| p.wrapping_sub(first))
            }
            None => None,
        };
        let offset = offset.unwrap_or_else(|| {
            self.unmapped_clock += 1;
            0
        });
        let time = Time { offset, origin_ns: self.shared.origin_ns };
        if lost && let Some(ts) = time.ps(first as u64) {
            self.diags.gaps.push(Gap { cpu: self.cpu, ts, lost: None });
        }
        if let Some(f) = compact
            && let Value::Bytes(b) = f.value
        {
            self.compact(b, f.value_at, time);
        }
        for f in Fields::new(bundle.data, bundle.at) {
            let Ok(f) = f else { break };
            if let (2, Value::Bytes(ev)) = (f.number, f.value) {
                self.event(ev, f.value_at, time);
            }
        }
    }

    /// The compact sched columns: switches and wakings merged in time order, so each
    /// waking is attributed to the task then running on the CPU.
    fn compact(&mut self, data: &[u8], at: u64, time: Time) {
        let c = match protos::CompactSched::decode(data) {
            Ok(c) => c,
            Err(e) => {
                self.diags.malformed(None, at, format!("compact_sched: {e}"));
                return;
            }
        };
        let n_switch = c.switch_timestamp.len();
        let switches = n_switch
            .min(c.switch_prev_state.len())
            .min(c.switch_next_pid.len())
            .min(c.switch_next_prio.len())
            .min(c.switch_next_comm_index.len());
        let n_waking = c.waking_timestamp.len();
        let wakings = n_waking
            .min(c.waking_pid.len())
            .min(c.waking_target_cpu.len())
            .min(c.waking_prio.len())
            .min(c.waking_comm_index.len());
        if switches < n_switch || wakings < n_waking {
            self.diags.malformed(
                None,
                at,
                format!(
                    "compact_sched: columns of unequal length ({} of {n_switch} switches, {} of {n_waking} wakings read)",
                    switches, wakings
                ),
            );
        }
        let comms: Vec<Sym> = c.intern_table.iter().map(|s| self.b.intern(s)).collect();
        let comm = |i: u32| comms.get(i as usize).copied();
        let (mut si, mut wi) = (0usize, 0usize);
        let (mut st, mut wt) = (0u64, 0u64);
        let mut bad_index = 0u64;
        let switch_layout = self.layout(Kind::SchedSwitch);
        let waking_layout = self.layout(Kind::SchedWaking);
        let (text_unknown, unknown) = (self.keys.unknown_comm, self.keys.unknown_comm);
        loop {
            let next_s = (si < switches).then(|| st.wrapping_add(c.switch_timestamp[si]));
            let next_w = (wi < wakings).then(|| wt.wrapping_add(c.waking_timestamp[wi]));
            let take_switch = match (next_s, next_w) {
                (Some(s), Some(w)) => s <= w,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => break,
            };
            if take_switch {
                let ts = next_s.unwrap_or(0);
                st = ts;
                let next_pid = c.switch_next_pid[si];
                let next_prio = c.switch_next_prio[si];
                let next_comm = comm(c.switch_next_comm_index[si]).unwrap_or_else(|| {
                    bad_index += 1;
                    unknown
                });
                let state = c.switch_prev_state[si];
                si += 1;
                let (prev_pid, prev_comm, prev_prio) = self.running.unwrap_or((-1, text_unknown, -1));
                let Some(ps) = time.ps(ts) else {
                    self.diags.malformed(
                        None,
                        at,
                        format!("compact_sched: switch time {ts} ns out of range"),
                    );
                    continue;
                };
                self.values.clear();
                self.values.extend([
                    FieldValue::Str(prev_comm),
                    FieldValue::Int(prev_pid.into()),
                    FieldValue::Int(prev_prio.into()),
                    FieldValue::Int(state),
                    FieldValue::Str(next_comm),
                    FieldValue::Int(next_pid.into()),
                    FieldValue::Int(next_prio.into()),
                ]);
                if prev_pid >= 0 {
                    self.comms.insert(prev_pid, prev_comm);
                }
                self.b.push(ps, self.cpu, prev_pid, prev_comm, IrqFlags::NONE, switch_layout, &self.values);
                if next_comm != unknown && self.comms.insert(next_pid, next_comm) != Some(next_comm) {
                    self.out_names.insert(next_pid, self.b.interner.bytes_of(next_comm).to_vec());
                }
                self.running = Some((next_pid, next_comm, next_prio));
            } else {
                let ts = next_w.unwrap_or(0);
                wt = ts;
                let pid = c.waking_pid[wi];
                let target = c.waking_target_cpu[wi];
                let prio = c.waking_prio[wi];
                let wcomm = comm(c.waking_comm_index[wi]).unwrap_or_else(|| {
                    bad_index += 1;
                    unknown
                });
                let flags = c
                    .waking_common_flags
                    .get(wi)
                    .map_or(IrqFlags::NONE, |&f| crate::tracedat::irq_flags((f & 0xff) as u8, 0));
                wi += 1;
                let Some(ps) = time.ps(ts) else {
                    self.diags.malformed(
                        None,
                        at,
                        format!("compact_sched: waking time {ts} ns out of range"),
                    );
                    continue;
                };
                self.values.clear();
                self.values.extend([
                    FieldValue::Str(wcomm),
                    FieldValue::Int(pid.into()),
                    FieldValue::Int(prio.into()),
                    FieldValue::Int(target.into()),
                ]);
                if wcomm != unknown && self.comms.insert(pid, wcomm) != Some(wcomm) {
                    self.out_names.insert(pid, self.b.interner.bytes_of(wcomm).to_vec());
                }
                let (waker, waker_comm) = self.running.map_or((-1, unknown), |r| (r.0, r.1));
                self.b.push(ps, self.cpu, waker, waker_comm, flags, waking_layout, &self.values);
            }
        }
        if bad_index > 0 {
            self.diags.malformed(
                None,
                at,
                format!("compact_sched: {bad_index} comm index(es) past the intern table; named {}", "<...>"),
            );
        }
    }

    /// One `FtraceEvent`.
    fn event(&mut self, data: &[u8], at: u64, time: Time) {
        let (mut ts, mut pid, mut flags) = (None, 0i32, IrqFlags::NONE);
        let mut payload: Option<Field<'_>> = None;
        for f in Fields::new(data, at) {
            let f = match f {
                Ok(f) => f,
                Err(e) => {
                    self.diags.malformed(None, e.at, format!("ftrace event: {}", e.what));
                    return;
                }
            };
            match (f.number, f.value) {
                (1, Value::Varint(v)) => ts = Some(v),
                (2, Value::Varint(v)) => pid = v as u32 as i32,
                (5, Value::Varint(v)) => flags = crate::tracedat::irq_flags((v & 0xff) as u8, 0),
                (n, _) if n > 2 && n != 5 => payload = Some(f),
                _ => {
                    self.diags.malformed(
                        None,
                        f.at,
                        format!("ftrace event: field {} has the wrong wire type", f.number),
                    );
                    return;
                }
            }
        }
        let Some(ts) = ts else {
            self.diags.malformed(None, at, "ftrace event without a timestamp");
            return;
        };
        let Some(ps) = time.ps(ts) else {
            self.diags.malformed(None, at, format!("ftrace event time {ts} ns out of range"));
            return;
        };
        let Some(payload) = payload else {
            self.diags.malformed(None, at, "ftrace event without an event field");
            return;
        };
        let Value::Bytes(p) = payload.value else {
            self.diags.malformed(
                None,
                payload.at,
                format!("ftrace event field {} is not a message", payload.number),
            );
            return;
        };
        if let Err(why) = self.payload(payload.number, p, ps, pid, flags) {
            self.diags.malformed(
                None,
                payload.value_at,
                format!("ftrace event field {}: {why}", payload.number),
            );
        }
    }

    fn payload(&mut self, number: u32, p: &[u8], ts: Ps, pid: i32, flags: IrqFlags) -> Result<(), Skip> {
        let err = |e: prost::DecodeError| e.to_string();
        self.values.clear();
        let kind = match number {
            tag::PRINT => {
                let e = protos::Print::decode(p).map_err(err)?;
                self.print(e, ts, pid, flags);
                return Ok(());
            }
            tag::SCHED_SWITCH => {
                let e = protos::SchedSwitch::decode(p).map_err(err)?;
                let prev = self.learn(e.prev_pid, &e.prev_comm);
                let next = self.learn(e.next_pid, &e.next_comm);
                self.running = Some((e.next_pid, next, e.next_prio));
                self.values.extend([
                    FieldValue::Str(prev),
                    FieldValue::Int(e.prev_pid.into()),
                    FieldValue::Int(e.prev_prio.into()),
                    FieldValue::Int(e.prev_state),
                    FieldValue::Str(next),
                    FieldValue::Int(e.next_pid.into()),
                    FieldValue::Int(e.next_prio.into()),
                ]);
                Kind::SchedSwitch
            }
            tag::SCHED_WAKEUP | tag::SCHED_WAKING | tag::SCHED_WAKEUP_NEW => {
                let e = protos::SchedWakeup::decode(p).map_err(err)?;
                let comm = self.learn(e.pid, &e.comm);
                self.values.extend([
                    FieldValue::Str(comm),
                    FieldValue::Int(e.pid.into()),
                    FieldValue::Int(e.prio.into()),
                    FieldValue::Int(e.target_cpu.into()),
                ]);
                match number {
                    tag::SCHED_WAKEUP => Kind::SchedWakeup,
                    tag::SCHED_WAKING => Kind::SchedWaking,
                    _ => Kind::SchedWakeupNew,
                }
            }
            tag::CPU_IDLE | tag::CPU_FREQUENCY => {
                let e = protos::CpuState::decode(p).map_err(err)?;
                self.values.extend([FieldValue::Int(e.state.into()), FieldValue::Int(e.cpu_id.into())]);
                if number == tag::CPU_IDLE { Kind::CpuIdle } else { Kind::CpuFrequency }
            }
            tag::IRQ_HANDLER_ENTRY => {
                let e = protos::IrqHandlerEntry::decode(p).map_err(err)?;
                let name = self.b.intern(&e.name);
                self.values.extend([FieldValue::Int(e.irq.into()), FieldValue::Str(name)]);
                Kind::IrqEntry
            }
            tag::IRQ_HANDLER_EXIT => {
                let e = protos::IrqHandlerExit::decode(p).map_err(err)?;
                self.values.extend([FieldValue::Int(e.irq.into()), FieldValue::Int(e.ret.into())]);
                Kind::IrqExit
            }
            tag::SOFTIRQ_ENTRY | tag::SOFTIRQ_EXIT | tag::SOFTIRQ_RAISE => {
                let e = protos::Softirq::decode(p).map_err(err)?;
                let name = SOFTIRQ_NAMES.get(e.vec as usize).copied().unwrap_or("UNKNOWN");
                let action = self.b.intern(name.as_bytes());
                self.values.extend([FieldValue::Int(e.vec.into()), FieldValue::Str(action)]);
                match number {
                    tag::SOFTIRQ_ENTRY => Kind::SoftirqEntry,
                    tag::SOFTIRQ_EXIT => Kind::SoftirqExit,
                    _ => Kind::SoftirqRaise,
                }
            }
            tag::BLOCK_RQ_ISSUE | tag::BLOCK_RQ_INSERT => {
                let e = protos::BlockRqIssue::decode(p).map_err(err)?;
                let dev = self.b.intern(dev_name(e.dev).as_bytes());
                let rwbs = self.b.intern(&e.rwbs);
                let comm = self.b.intern(&e.comm);
                self.values.extend([
                    FieldValue::Str(dev),
                    FieldValue::UInt(e.sector),
                    FieldValue::UInt(e.nr_sector.into()),
                    FieldValue::UInt(e.bytes.into()),
                    FieldValue::Str(rwbs),
                    FieldValue::Str(comm),
                ]);
                if number == tag::BLOCK_RQ_ISSUE { Kind::BlockIssue } else { Kind::BlockInsert }
            }
            tag::BLOCK_RQ_COMPLETE => {
                let e = protos::BlockRqComplete::decode(p).map_err(err)?;
                let dev = self.b.intern(dev_name(e.dev).as_bytes());
                let rwbs = self.b.intern(&e.rwbs);
                self.values.extend([
                    FieldValue::Str(dev),
                    FieldValue::UInt(e.sector),
                    FieldValue::UInt(e.nr_sector.into()),
                    FieldValue::Str(rwbs),
                    FieldValue::Int(e.error.unwrap_or(e.errors).into()),
                ]);
                Kind::BlockComplete
            }
            tag::TASK_NEWTASK => {
                let e = protos::TaskNewtask::decode(p).map_err(err)?;
                let comm = self.learn(e.pid, &e.comm);
                self.values.extend([
                    FieldValue::Int(e.pid.into()),
                    FieldValue::Str(comm),
                    FieldValue::UInt(e.clone_flags),
                    FieldValue::Int(e.oom_score_adj.into()),
                ]);
                Kind::TaskNewtask
            }
            tag::TASK_RENAME => {
                let e = protos::TaskRename::decode(p).map_err(err)?;
                let old = self.b.intern(&e.oldcomm);
                let new = self.learn(e.pid, &e.newcomm);
                self.values.extend([
                    FieldValue::Int(e.pid.into()),
                    FieldValue::Str(old),
                    FieldValue::Str(new),
                    FieldValue::Int(e.oom_score_adj.into()),
                ]);
                Kind::TaskRename
            }
            tag::SCHED_PROCESS_EXIT | tag::SCHED_PROCESS_FREE => {
                let e = protos::SchedProcess::decode(p).map_err(err)?;
                let comm = self.b.intern(&e.comm);
                // exit: 3 tgid, 4 prio; free: 3 prio.
                let prio = if number == tag::SCHED_PROCESS_EXIT { e.field4 } else { e.field3 };
                self.values.extend([
                    FieldValue::Str(comm),
                    FieldValue::Int(e.pid.into()),
                    FieldValue::Int(prio.into()),
                ]);
                if number == tag::SCHED_PROCESS_EXIT { Kind::ProcessExit } else { Kind::ProcessFree }
            }
            tag::SCHED_PROCESS_FORK => {
                let e = protos::SchedProcessFork::decode(p).map_err(err)?;
                let parent = self.learn(e.parent_pid, &e.parent_comm);
                let child = self.learn(e.child_pid, &e.child_comm);
                self.values.extend([
                    FieldValue::Str(parent),
                    FieldValue::Int(e.parent_pid.into()),
                    FieldValue::Str(child),
                    FieldValue::Int(e.child_pid.into()),
                ]);
                Kind::ProcessFork
            }
            tag::GENERIC => {
                let e = protos::GenericFtraceEvent::decode(p).map_err(err)?;
                self.generic(e, ts, pid, flags);
                return Ok(());
            }
            _ => {
                self.unknown_event(number, p, ts, pid, flags);
                return Ok(());
            }
        };
        let layout = self.layout(kind);
        self.push(ts, pid, flags, layout);
        Ok(())
    }

    /// `print`: `ip`, `text` (the message without its trailing newline) and each
    /// `key=value` token, as the trace.dat importer reads markers; atrace markers are also
    /// kept aside for spans and counters.
    fn print(&mut self, e: protos::Print, ts: Ps, pid: i32, flags: IrqFlags) {
        let mut text: &[u8] = &e.buf;
        while let Some(t) = text.strip_suffix(b"\n") {
            text = t;
        }
        let text_sym = self.b.intern(text);
        self.fields.clear();
        self.fields.push((self.keys.ip, FieldKind::UInt));
        self.values.push(FieldValue::UInt(e.ip));
        self.fields.push((self.keys.text, FieldKind::Str));
        self.values.push(FieldValue::Str(text_sym));
        let b = &mut self.b;
        push_token_fields(text, &mut |s| b.intern(s), &mut self.fields, &mut self.values);
        let event = self.b.intern(b"print");
        let layout = self.b.layout(event, &self.fields);
        self.push(ts, pid, flags, layout);
        if is_atrace(text) {
            self.atrace.push(AtraceRec { ts, tid: pid, cpu: self.cpu, text: text.into() });
        }
    }

    /// `generic`: the event's own name and named fields.
    fn generic(&mut self, e: protos::GenericFtraceEvent, ts: Ps, pid: i32, flags: IrqFlags) {
        self.fields.clear();
        for f in &e.field {
            let key = self.b.intern(&f.name);
            if self.fields.iter().any(|x| x.0 == key) {
                continue;
            }
            let v = match &f.value {
                Some(protos::GenericValue::Str(s)) => FieldValue::Str(self.b.intern(s)),
                Some(protos::GenericValue::Int(i)) => FieldValue::Int(*i),
                Some(protos::GenericValue::UInt(u)) => FieldValue::UInt(*u),
                None => FieldValue::Int(0),
            };
            self.fields.push((key, v.kind()));
            self.values.push(v);
        }
        let event = self.b.intern(&e.event_name);
        let layout = self.b.layout(event, &self.fields);
        self.push(ts, pid, flags, layout);
    }

    /// An event type latscope has no schema for: kept as `ftrace_event_N` with its
    /// top-level fields named `fK` by field number (scalars as integers, UTF-8 strings as
    /// text, other bytes as their length), and counted.
    fn unknown_event(&mut self, number: u32, p: &[u8], ts: Ps, pid: i32, flags: IrqFlags) {
        *self.unknown.entry(number).or_default() += 1;
        self.fields.clear();
        for f in Fields::new(p, 0) {
            let Ok(f) = f else { break };
            let key = self.b.intern(format!("f{}", f.number).as_bytes());
            if self.fields.iter().any(|x| x.0 == key) {
                continue;
            }
            let v = match f.value {
                Value::Varint(v) | Value::Fixed64(v) => FieldValue::UInt(v),
                Value::Fixed32(v) => FieldValue::UInt(v.into()),
                Value::Bytes(b) => match std::str::from_utf8(b) {
                    Ok(s) if s.len() <= 256 && !s.chars().any(char::is_control) => {
                        FieldValue::Str(self.b.intern(b))
                    }
                    _ => FieldValue::Str(self.b.intern(format!("<{} bytes>", b.len()).as_bytes())),
                },
            };
            self.fields.push((key, v.kind()));
            self.values.push(v);
        }
        let layout = match self.unknown_layouts.get(&number) {
            Some(&id) if self.b.layout_def(id).is_some_and(|l| l.fields == self.fields) => id,
            _ => {
                let event = self.b.intern(format!("ftrace_event_{number}").as_bytes());
                let id = self.b.layout(event, &self.fields);
                self.unknown_layouts.insert(number, id);
                id
            }
        };
        self.push(ts, pid, flags, layout);
    }
}

/// A kernel `dev_t` as ftrace prints it: `MAJOR,MINOR` (20-bit minor).
fn dev_name(dev: u64) -> String {
    format!("{},{}", dev >> 20, dev & 0xfffff)
}

/// Atrace markers latscope turns into spans and counters.
pub(crate) fn is_atrace(text: &[u8]) -> bool {
    matches!(text, [b'B' | b'C' | b'S' | b'F', b'|', ..] | [b'E'] | [b'E', b'|', ..])
}

/// A bundle's clock offset and the trace's origin.
#[derive(Debug, Clone, Copy)]
struct Time {
    offset: i64,
    origin_ns: i64,
}

impl Time {
    /// Picoseconds after the origin, `None` when the value leaves the model's range.
    #[inline]
    fn ps(self, ts: u64) -> Option<Ps> {
        let ns = i64::try_from(ts).ok()?.checked_add(self.offset)?.checked_sub(self.origin_ns)?;
        ns.checked_mul(PS_PER_NS)
    }
}

/// The first timestamp in a bundle (the first event's, or the first compact switch or
/// waking), to choose the bundle's clock mapping and the trace's origin.
pub(crate) fn first_timestamp(bundle: BundleRef<'_>) -> Option<i64> {
    let mut first: Option<u64> = None;
    for f in Fields::new(bundle.data, bundle.at) {
        let Ok(f) = f else { break };
        let Value::Bytes(b) = f.value else { continue };
        let found = match f.number {
            2 => Fields::new(b, 0).find_map(|g| match g {
                Ok(Field { number: 1, value: Value::Varint(v), .. }) => Some(v),
                _ => None,
            }),
            4 => Fields::new(b, 0).filter_map(Result::ok).find_map(|g| match (g.number, g.value) {
                (1 | 7, Value::Bytes(packed)) => {
                    let mut pos = 0;
                    super::wire::varint(packed, &mut pos).ok()
                }
                (1 | 7, Value::Varint(v)) => Some(v),
                _ => None,
            }),
            _ => None,
        };
        if let Some(v) = found {
            first = Some(first.map_or(v, |x| x.min(v)));
            if f.number == 2 {
                break;
            }
        }
    }
    first.and_then(|v| i64::try_from(v).ok())
}

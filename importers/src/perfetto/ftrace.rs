//! Ftrace event bundles → model events, one worker per CPU.
//!
//! Each CPU's bundles are decoded in file order by one worker, so the compact sched
//! encoding, whose switch records leave the previous task implicit (it is the task the
//! CPU's previous switch put on it), is resolved without looking at other CPUs. Field names
//! are the kernel's ftrace field names, as the ftrace text and trace.dat importers name
//! them, so the presets run unchanged on a Perfetto trace.

use super::clocks::{BOOTTIME, Clocks, MONOTONIC_RAW};
use super::protos;
use super::wire::{Field, Fields, Leaf, Value, varint};
use crate::marker::push_token_fields;
use latscope_model::{
    Diagnostics, EventTableBuilder, FieldKind, FieldValue, Gap, IrqFlags, LayoutId, PS_PER_NS, Ps, Sym,
};
use prost::Message;
use rustc_hash::FxHashMap;
use std::collections::hash_map::Entry;

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
    &[("dev", U), ("sector", U), ("nr_sector", U), ("bytes", U), ("rwbs", S), ("comm", S)];
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
                &[("dev", U), ("sector", U), ("nr_sector", U), ("rwbs", S), ("error", I)],
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

/// One bundle: its bytes and their offset (for a bundle inside a compressed packet, the
/// offset within the inflated packets).
#[derive(Debug, Clone, Copy)]
pub(crate) struct BundleRef<'a> {
    pub data: &'a [u8],
    pub at: u64,
    /// Where the bundle lies in the file: `at`, or the compressed packet's offset.
    pub file_at: u64,
}

/// An atrace marker (`B|`, `E`, `C|`, `S|`, `F|`) written through `print`, to become spans
/// and counters once every CPU's markers are merged in time order. Its text lies in the
/// markers' shared byte arena (one allocation for all, not one per marker).
#[derive(Debug, Clone)]
pub(crate) struct AtraceRec {
    pub ts: Ps,
    pub tid: i32,
    pub cpu: u16,
    /// `text[0]..text[1]` of the arena.
    pub text: [usize; 2],
}

/// Atrace markers and the bytes of their texts.
#[derive(Debug, Default)]
pub(crate) struct Atrace {
    pub recs: Vec<AtraceRec>,
    pub text: Vec<u8>,
}

impl Atrace {
    fn push(&mut self, ts: Ps, tid: i32, cpu: u16, text: &[u8]) {
        let from = self.text.len();
        self.text.extend_from_slice(text);
        self.recs.push(AtraceRec { ts, tid, cpu, text: [from, self.text.len()] });
    }

    /// Appends `other`'s markers (their texts moved into this arena).
    pub(crate) fn append(&mut self, other: Atrace) {
        let shift = self.text.len();
        self.text.extend_from_slice(&other.text);
        self.recs.extend(other.recs.into_iter().map(|r| AtraceRec { text: r.text.map(|x| x + shift), ..r }));
    }

    /// A marker's text.
    pub(crate) fn text_of(&self, r: &AtraceRec) -> &[u8] {
        self.text.get(r.text[0]..r.text[1]).unwrap_or_default()
    }
}

/// What a worker hands back.
#[derive(Debug)]
pub(crate) struct CpuOutput {
    pub builder: EventTableBuilder,
    pub diags: Diagnostics,
    pub atrace: Atrace,
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
    print: Sym,
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
    /// A bundle's compact sched records, decoded (so the task running is known for each)
    /// and waiting to be pushed in time order among its plain events: each CPU's events
    /// then come sorted, and the merge of the CPUs needs no sort of its own.
    compact_rows: Vec<CompactRow>,
    /// The last bundle's compact sched message, its room reused by the next.
    compact_msg: protos::CompactSched,
    compact_next: usize,
    /// Where the current bundle's events lie in it (byte ranges).
    event_ranges: Vec<(usize, usize)>,
    /// The task the CPU's latest switch put on it: (pid, comm, prio).
    running: Option<(i32, Sym, i32)>,
    /// Names seen so far on this CPU, as symbols of `b`.
    comms: FxHashMap<i32, Known>,
    /// The last task [`Self::comm_of`] named, and its name: a CPU's events come in runs of
    /// one task, so most look-ups end here.
    last_comm: Option<(i32, Sym)>,
    /// Short strings of event values (marker texts, `rwbs`, ...) interned so far, by their
    /// [`ShortKey`]: found without hashing the bytes or comparing them through a pointer.
    short_strings: FxHashMap<ShortKey, Sym>,
    out_names: FxHashMap<i32, Vec<u8>>,
    atrace: Atrace,
    diags: Diagnostics,
    unknown: FxHashMap<u32, u64>,
    unknown_layouts: FxHashMap<u32, LayoutId>,
    /// Each IRQ's handler name, as interned last.
    irq_names: FxHashMap<i32, Sym>,
    /// `print` layouts by their field list.
    print_layouts: FxHashMap<Vec<(Sym, FieldKind)>, LayoutId>,
    /// The layout of a `print` with no `key=value` token (`ip`, `text`).
    plain_print: Option<LayoutId>,
    /// The softirq names of `SOFTIRQ_NAMES` (and then `UNKNOWN`), interned when first seen.
    softirq_actions: [Option<Sym>; SOFTIRQ_NAMES.len() + 1],
    unmapped_clock: u64,
}

/// A task's name on a CPU: its symbol and, for a name of at most 16 bytes (every kernel
/// comm), its bytes as a [`ShortKey`], compared without a call.
#[derive(Debug, Clone, Copy)]
struct Known {
    sym: Sym,
    key: Option<ShortKey>,
}

/// Up to 16 bytes as their length and two words, which together determine them: the words
/// are the first and last eight bytes (overlapping when shorter), and below eight bytes
/// the first and last four, or the first, middle and last byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct ShortKey(u8, u64, u64);

impl ShortKey {
    #[inline]
    fn of(s: &[u8]) -> Option<Self> {
        let n = s.len();
        let word =
            |at: usize| s.get(at..at + 8).map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])));
        let half = |at: usize| {
            s.get(at..at + 4).map_or(0, |b| u64::from(u32::from_le_bytes(b.try_into().unwrap_or([0; 4]))))
        };
        let byte = |at: usize| s.get(at).map_or(0, |&b| u64::from(b));
        match n {
            0 => Some(ShortKey(0, 0, 0)),
            1..=3 => Some(ShortKey(n as u8, byte(0) | byte(n / 2) << 8 | byte(n - 1) << 16, 0)),
            4..=7 => Some(ShortKey(n as u8, half(0), half(n - 4))),
            8..=16 => Some(ShortKey(n as u8, word(0), word(n - 8))),
            _ => None,
        }
    }
}

/// A compact sched record ready to push: a `sched_switch` (7 values) or `sched_waking` (4).
#[derive(Debug, Clone, Copy)]
struct CompactRow {
    ts: Ps,
    pid: i32,
    comm: Sym,
    flags: IrqFlags,
    layout: LayoutId,
    values: [FieldValue; 7],
    n: u8,
}

/// Why an event could not be stored.
type Skip = String;

/// An `FtraceEvent` laid out as Perfetto writes one: `timestamp` (1), `pid` (2), perhaps
/// `common_flags` (5), then its one payload, which ends the message. Read straight, without
/// the general field walk (that walk reads every other layout, the same way).
#[derive(Debug, Clone, Copy)]
struct CommonEvent<'a> {
    ts: u64,
    pid: i32,
    flags: IrqFlags,
    number: u32,
    payload: &'a [u8],
    /// Where the payload starts in the event.
    payload_at: usize,
}

impl<'a> CommonEvent<'a> {
    #[inline(always)]
    fn read(data: &'a [u8]) -> Option<Self> {
        let mut pos = 0;
        let key = |want: Option<u8>, pos: &mut usize| -> Option<u64> {
            let k = varint(data, pos).ok()?;
            want.is_none_or(|w| k == u64::from(w)).then_some(k)
        };
        key(Some(0x08), &mut pos)?;
        let ts = varint(data, &mut pos).ok()?;
        key(Some(0x10), &mut pos)?;
        let pid = varint(data, &mut pos).ok()? as u32 as i32;
        let mut flags = IrqFlags::NONE;
        let mut k = key(None, &mut pos)?;
        if k == 0x28 {
            flags = crate::tracedat::irq_flags((varint(data, &mut pos).ok()? & 0xff) as u8, 0);
            k = key(None, &mut pos)?;
        }
        let number = k >> 3;
        if k & 7 != 2 || number <= 2 || number == 5 || number > u64::from(u32::MAX >> 3) {
            return None;
        }
        let len = varint(data, &mut pos).ok()?;
        if len != (data.len() - pos) as u64 {
            return None;
        }
        Some(CommonEvent { ts, pid, flags, number: number as u32, payload: &data[pos..], payload_at: pos })
    }
}

impl<'s> CpuWorker<'s> {
    pub(crate) fn new(shared: &'s Shared<'s>, cpu: u16) -> Self {
        let mut b = EventTableBuilder::new();
        let keys = Keys {
            ip: b.intern(b"ip"),
            text: b.intern(b"text"),
            print: b.intern(b"print"),
            unknown_comm: b.intern(UNKNOWN_COMM),
        };
        CpuWorker {
            shared,
            cpu,
            b,
            keys,
            layouts: [None; KINDS],
            values: Vec::with_capacity(16),
            fields: Vec::with_capacity(16),
            compact_rows: Vec::new(),
            compact_msg: protos::CompactSched::default(),
            compact_next: 0,
            event_ranges: Vec::new(),
            running: None,
            comms: FxHashMap::default(),
            last_comm: None,
            short_strings: FxHashMap::default(),
            out_names: FxHashMap::default(),
            atrace: Atrace::default(),
            diags: Diagnostics::default(),
            unknown: FxHashMap::default(),
            unknown_layouts: FxHashMap::default(),
            irq_names: FxHashMap::default(),
            print_layouts: FxHashMap::default(),
            plain_print: None,
            softirq_actions: [None; SOFTIRQ_NAMES.len() + 1],
            unmapped_clock: 0,
        }
    }

    /// Room for the events of `bytes` of this CPU's bundles, so the columns are not
    /// copied as they grow: events take 20–30 bytes each in a plain bundle and fewer in
    /// compact sched, and the estimate errs high (room not written to stays unmapped).
    /// Capped, so gigabytes of inflated junk do not ask for room up front.
    pub(crate) fn reserve(&mut self, bytes: usize) {
        const MAX_EVENTS: usize = 1 << 24;
        self.b.reserve((bytes / 12).min(MAX_EVENTS), (bytes / 2).min(MAX_EVENTS * 16));
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

    /// The `action` of softirq `vec`, as the kernel's `softirq_to_name` names it.
    fn softirq_action(&mut self, vec: u32) -> Sym {
        let i = (vec as usize).min(SOFTIRQ_NAMES.len());
        if let Some(Some(sym)) = self.softirq_actions.get(i) {
            return *sym;
        }
        let name = SOFTIRQ_NAMES.get(i).copied().unwrap_or("UNKNOWN");
        let sym = self.b.intern(name.as_bytes());
        if let Some(slot) = self.softirq_actions.get_mut(i) {
            *slot = Some(sym);
        }
        sym
    }

    /// IRQ `irq`'s handler name `name`, interned (once while it keeps that name).
    fn irq_name(&mut self, irq: i32, name: &[u8]) -> Sym {
        if let Some(&known) = self.irq_names.get(&irq)
            && self.b.interner.bytes_of(known) == name
        {
            return known;
        }
        let sym = self.b.intern(name);
        self.irq_names.insert(irq, sym);
        sym
    }

    /// `s` interned: a string of at most 16 bytes (most values that repeat) through
    /// `short_strings`, the same symbol `b.intern` gives.
    #[inline]
    fn intern_value(&mut self, s: &[u8]) -> Sym {
        let Some(key) = ShortKey::of(s) else { return self.b.intern(s) };
        if let Some(&sym) = self.short_strings.get(&key) {
            return sym;
        }
        let sym = self.b.intern(s);
        self.short_strings.insert(key, sym);
        sym
    }

    /// Remembers `comm` as the name of `pid` on this CPU.
    #[inline]
    fn learn(&mut self, pid: i32, comm: &[u8]) -> Sym {
        // Most events name a task by the name it already has here: compare, do not intern.
        let key = ShortKey::of(comm);
        if let Some(known) = self.comms.get(&pid)
            && match key {
                Some(k) => known.key == Some(k),
                None => self.b.interner.bytes_of(known.sym) == comm,
            }
        {
            return known.sym;
        }
        let sym = self.b.intern(comm);
        if self.set_comm(pid, sym) {
            self.out_names.insert(pid, comm.to_vec());
        }
        sym
    }

    /// Names `pid` `sym` on this CPU; whether that changed its name.
    fn set_comm(&mut self, pid: i32, sym: Sym) -> bool {
        if self.last_comm.is_some_and(|(p, _)| p == pid) {
            self.last_comm = Some((pid, sym));
        }
        // Mostly the name it already has (compact sched names both tasks of every switch).
        let key = || ShortKey::of(self.b.interner.bytes_of(sym));
        match self.comms.entry(pid) {
            Entry::Occupied(e) if e.get().sym == sym => false,
            Entry::Occupied(mut e) => {
                e.insert(Known { sym, key: key() });
                true
            }
            Entry::Vacant(e) => {
                e.insert(Known { sym, key: key() });
                true
            }
        }
    }

    fn comm_of(&mut self, pid: i32) -> Sym {
        if let Some((p, sym)) = self.last_comm
            && p == pid
        {
            return sym;
        }
        let sym = match self.comms.get(&pid) {
            Some(k) => k.sym,
            None => {
                let sym = match self.shared.names.get(&pid) {
                    Some(n) => self.b.intern(n),
                    None => self.keys.unknown_comm,
                };
                self.set_comm(pid, sym);
                sym
            }
        };
        self.last_comm = Some((pid, sym));
        sym
    }

    /// Pushes a plain event (its field values in `values`), after the compact records of
    /// its bundle that are not later than it.
    fn push(&mut self, ts: Ps, pid: i32, flags: IrqFlags, layout: LayoutId) {
        self.flush_compact(ts);
        let comm = self.comm_of(pid);
        self.b.push(ts, self.cpu, pid, comm, flags, layout, &self.values);
    }

    /// Pushes the waiting compact records up to time `until`.
    fn flush_compact(&mut self, until: Ps) {
        while let Some(r) = self.compact_rows.get(self.compact_next).filter(|r| r.ts <= until) {
            let values = r.values.get(..usize::from(r.n)).unwrap_or_default();
            self.b.push(r.ts, self.cpu, r.pid, r.comm, r.flags, r.layout, values);
            self.compact_next += 1;
        }
    }

    /// Decodes one bundle of this CPU.
    pub(crate) fn bundle(&mut self, bundle: BundleRef<'_>) {
        let mut compact: Option<Field<'_>> = None;
        let (mut clock, mut ftrace_ts, mut boot_ts, mut lost) = (0u64, None, None, false);
        // The bundle's own fields usually follow its events: find them first, and where
        // each event lies, so the events are walked once.
        self.event_ranges.clear();
        for f in Fields::new(bundle.data, bundle.at) {
            let f = match f {
                Ok(f) => f,
                Err(e) => {
                    self.diags.malformed(None, e.at, format!("ftrace bundle: {}", e.what));
                    break;
                }
            };
            match (f.number, f.value) {
                (2, Value::Bytes(ev)) => {
                    let start = (f.value_at - bundle.at) as usize;
                    self.event_ranges.push((start, start + ev.len()));
                }
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
        let ranges = std::mem::take(&mut self.event_ranges);
        for &(start, end) in &ranges {
            if let Some(ev) = bundle.data.get(start..end) {
                self.event(ev, bundle.at + start as u64, time);
            }
        }
        self.event_ranges = ranges;
        self.flush_compact(Ps::MAX);
        self.compact_rows.clear();
        self.compact_next = 0;
    }

    /// The compact sched columns: switches and wakings merged in time order, so each
    /// waking is attributed to the task then running on the CPU.
    fn compact(&mut self, data: &[u8], at: u64, time: Time) {
        // Decoded into the last bundle's message, so its columns keep their room, from one
        // shared copy of the bytes, so the intern table's strings are slices of it rather
        // than an allocation each.
        let mut c = std::mem::take(&mut self.compact_msg);
        c.clear();
        match c.merge(prost::bytes::Bytes::copy_from_slice(data)) {
            Ok(()) => self.compact_rows_of(&c, at, time),
            Err(e) => self.diags.malformed(None, at, format!("compact_sched: {e}")),
        }
        self.compact_msg = c;
    }

    /// [`Self::compact`] of the decoded message.
    fn compact_rows_of(&mut self, c: &protos::CompactSched, at: u64, time: Time) {
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
        let comms: Vec<Sym> = c.intern_table.iter().map(|s| self.intern_value(s)).collect();
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
                let values = [
                    FieldValue::Str(prev_comm),
                    FieldValue::Int(prev_pid.into()),
                    FieldValue::Int(prev_prio.into()),
                    FieldValue::Int(state),
                    FieldValue::Str(next_comm),
                    FieldValue::Int(next_pid.into()),
                    FieldValue::Int(next_prio.into()),
                ];
                if prev_pid >= 0 {
                    self.set_comm(prev_pid, prev_comm);
                }
                self.compact_rows.push(CompactRow {
                    ts: ps,
                    pid: prev_pid,
                    comm: prev_comm,
                    flags: IrqFlags::NONE,
                    layout: switch_layout,
                    values,
                    n: 7,
                });
                if next_comm != unknown && self.set_comm(next_pid, next_comm) {
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
                let none = FieldValue::Int(0);
                let values = [
                    FieldValue::Str(wcomm),
                    FieldValue::Int(pid.into()),
                    FieldValue::Int(prio.into()),
                    FieldValue::Int(target.into()),
                    none,
                    none,
                    none,
                ];
                if wcomm != unknown && self.set_comm(pid, wcomm) {
                    self.out_names.insert(pid, self.b.interner.bytes_of(wcomm).to_vec());
                }
                let (waker, waker_comm) = self.running.map_or((-1, unknown), |r| (r.0, r.1));
                self.compact_rows.push(CompactRow {
                    ts: ps,
                    pid: waker,
                    comm: waker_comm,
                    flags,
                    layout: waking_layout,
                    values,
                    n: 4,
                });
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
        if let Some(e) = CommonEvent::read(data) {
            let Some(ps) = time.ps(e.ts) else {
                self.diags.malformed(None, at, format!("ftrace event time {} ns out of range", e.ts));
                return;
            };
            if let Err(why) = self.payload(e.number, e.payload, ps, e.pid, e.flags) {
                self.diags.malformed(
                    None,
                    at + e.payload_at as u64,
                    format!("ftrace event field {}: {why}", e.number),
                );
            }
            return;
        }
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

    /// One event's payload (FtraceEvent field `number`). The flat event messages are read
    /// with [`Leaf`], their field numbers as in Perfetto's protos (`protos::leaf` holds them
    /// as prost messages for the tests); `generic` with prost.
    fn payload(&mut self, number: u32, p: &[u8], ts: Ps, pid: i32, flags: IrqFlags) -> Result<(), Skip> {
        self.values.clear();
        let kind = match number {
            tag::PRINT => {
                // Print { ip = 1, buf = 2 }
                let e = Leaf::<3>::read(p)?;
                self.print(e.u64(1)?, e.bytes(2)?, ts, pid, flags);
                return Ok(());
            }
            tag::SCHED_SWITCH => {
                // SchedSwitch { prev_comm = 1, prev_pid = 2, prev_prio = 3, prev_state = 4,
                // next_comm = 5, next_pid = 6, next_prio = 7 }
                let e = Leaf::<8>::read(p)?;
                let (prev_pid, next_pid, next_prio) = (e.i32(2)?, e.i32(6)?, e.i32(7)?);
                let prev = self.learn(prev_pid, e.bytes(1)?);
                let next = self.learn(next_pid, e.bytes(5)?);
                self.running = Some((next_pid, next, next_prio));
                self.values.extend([
                    FieldValue::Str(prev),
                    FieldValue::Int(prev_pid.into()),
                    FieldValue::Int(e.i32(3)?.into()),
                    FieldValue::Int(e.i64(4)?),
                    FieldValue::Str(next),
                    FieldValue::Int(next_pid.into()),
                    FieldValue::Int(next_prio.into()),
                ]);
                Kind::SchedSwitch
            }
            tag::SCHED_WAKEUP | tag::SCHED_WAKING | tag::SCHED_WAKEUP_NEW => {
                // SchedWakeup { comm = 1, pid = 2, prio = 3, success = 4, target_cpu = 5 }
                let e = Leaf::<6>::read(p)?;
                let wakee = e.i32(2)?;
                let comm = self.learn(wakee, e.bytes(1)?);
                self.values.extend([
                    FieldValue::Str(comm),
                    FieldValue::Int(wakee.into()),
                    FieldValue::Int(e.i32(3)?.into()),
                    FieldValue::Int(e.i32(5)?.into()),
                ]);
                match number {
                    tag::SCHED_WAKEUP => Kind::SchedWakeup,
                    tag::SCHED_WAKING => Kind::SchedWaking,
                    _ => Kind::SchedWakeupNew,
                }
            }
            tag::CPU_IDLE | tag::CPU_FREQUENCY => {
                // CpuIdle / CpuFrequency { state = 1, cpu_id = 2 } (uint32)
                let e = Leaf::<3>::read(p)?;
                self.values.extend([FieldValue::Int(e.u32(1)?.into()), FieldValue::Int(e.u32(2)?.into())]);
                if number == tag::CPU_IDLE { Kind::CpuIdle } else { Kind::CpuFrequency }
            }
            tag::IRQ_HANDLER_ENTRY => {
                // IrqHandlerEntry { irq = 1, name = 2, handler = 3 }
                let e = Leaf::<3>::read(p)?;
                let irq = e.i32(1)?;
                let name = self.irq_name(irq, e.bytes(2)?);
                self.values.extend([FieldValue::Int(irq.into()), FieldValue::Str(name)]);
                Kind::IrqEntry
            }
            tag::IRQ_HANDLER_EXIT => {
                // IrqHandlerExit { irq = 1, ret = 2 }
                let e = Leaf::<3>::read(p)?;
                self.values.extend([FieldValue::Int(e.i32(1)?.into()), FieldValue::Int(e.i32(2)?.into())]);
                Kind::IrqExit
            }
            tag::SOFTIRQ_ENTRY | tag::SOFTIRQ_EXIT | tag::SOFTIRQ_RAISE => {
                // SoftirqEntry / Exit / Raise { vec = 1 } (uint32)
                let vec = Leaf::<2>::read(p)?.u32(1)?;
                let action = self.softirq_action(vec);
                self.values.extend([FieldValue::Int(vec.into()), FieldValue::Str(action)]);
                match number {
                    tag::SOFTIRQ_ENTRY => Kind::SoftirqEntry,
                    tag::SOFTIRQ_EXIT => Kind::SoftirqExit,
                    _ => Kind::SoftirqRaise,
                }
            }
            tag::BLOCK_RQ_ISSUE | tag::BLOCK_RQ_INSERT => {
                // BlockRqIssue / Insert { dev = 1, sector = 2, nr_sector = 3, bytes = 4,
                // rwbs = 5, comm = 6, cmd = 7 }
                let e = Leaf::<7>::read(p)?;
                // The kernel's `dev_t`, as trace.dat stores it (shown `MAJ,MIN`).
                let dev = e.u64(1)?;
                let rwbs = self.intern_value(e.bytes(5)?);
                let comm = self.intern_value(e.bytes(6)?);
                self.values.extend([
                    FieldValue::UInt(dev),
                    FieldValue::UInt(e.u64(2)?),
                    FieldValue::UInt(e.u32(3)?.into()),
                    FieldValue::UInt(e.u32(4)?.into()),
                    FieldValue::Str(rwbs),
                    FieldValue::Str(comm),
                ]);
                if number == tag::BLOCK_RQ_ISSUE { Kind::BlockIssue } else { Kind::BlockInsert }
            }
            tag::BLOCK_RQ_COMPLETE => {
                // BlockRqComplete { dev = 1, sector = 2, nr_sector = 3, errors = 4, rwbs = 5,
                // cmd = 6, optional error = 7 }
                let e = Leaf::<8>::read(p)?;
                let dev = e.u64(1)?;
                let rwbs = self.intern_value(e.bytes(5)?);
                let error = match e.i32_opt(7)? {
                    Some(v) => v,
                    None => e.i32(4)?,
                };
                self.values.extend([
                    FieldValue::UInt(dev),
                    FieldValue::UInt(e.u64(2)?),
                    FieldValue::UInt(e.u32(3)?.into()),
                    FieldValue::Str(rwbs),
                    FieldValue::Int(error.into()),
                ]);
                Kind::BlockComplete
            }
            tag::TASK_NEWTASK => {
                // TaskNewtask { pid = 1, comm = 2, clone_flags = 3, oom_score_adj = 4 }
                let e = Leaf::<5>::read(p)?;
                let task = e.i32(1)?;
                let comm = self.learn(task, e.bytes(2)?);
                self.values.extend([
                    FieldValue::Int(task.into()),
                    FieldValue::Str(comm),
                    FieldValue::UInt(e.u64(3)?),
                    FieldValue::Int(e.i32(4)?.into()),
                ]);
                Kind::TaskNewtask
            }
            tag::TASK_RENAME => {
                // TaskRename { pid = 1, oldcomm = 2, newcomm = 3, oom_score_adj = 4 }
                let e = Leaf::<5>::read(p)?;
                let task = e.i32(1)?;
                let old = self.b.intern(e.bytes(2)?);
                let new = self.learn(task, e.bytes(3)?);
                self.values.extend([
                    FieldValue::Int(task.into()),
                    FieldValue::Str(old),
                    FieldValue::Str(new),
                    FieldValue::Int(e.i32(4)?.into()),
                ]);
                Kind::TaskRename
            }
            tag::SCHED_PROCESS_EXIT | tag::SCHED_PROCESS_FREE => {
                // SchedProcessExit { comm = 1, pid = 2, tgid = 3, prio = 4 };
                // SchedProcessFree { comm = 1, pid = 2, prio = 3 }
                let e = Leaf::<5>::read(p)?;
                let comm = self.intern_value(e.bytes(1)?);
                let prio = if number == tag::SCHED_PROCESS_EXIT { e.i32(4)? } else { e.i32(3)? };
                self.values.extend([
                    FieldValue::Str(comm),
                    FieldValue::Int(e.i32(2)?.into()),
                    FieldValue::Int(prio.into()),
                ]);
                if number == tag::SCHED_PROCESS_EXIT { Kind::ProcessExit } else { Kind::ProcessFree }
            }
            tag::SCHED_PROCESS_FORK => {
                // SchedProcessFork { parent_comm = 1, parent_pid = 2, child_comm = 3,
                // child_pid = 4 }
                let e = Leaf::<5>::read(p)?;
                let (parent_pid, child_pid) = (e.i32(2)?, e.i32(4)?);
                let parent = self.learn(parent_pid, e.bytes(1)?);
                let child = self.learn(child_pid, e.bytes(3)?);
                self.values.extend([
                    FieldValue::Str(parent),
                    FieldValue::Int(parent_pid.into()),
                    FieldValue::Str(child),
                    FieldValue::Int(child_pid.into()),
                ]);
                Kind::ProcessFork
            }
            tag::GENERIC => {
                let e = protos::GenericFtraceEvent::decode(p).map_err(|e| e.to_string())?;
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
    fn print(&mut self, ip: u64, buf: &[u8], ts: Ps, pid: i32, flags: IrqFlags) {
        let mut text = buf;
        while let Some(t) = text.strip_suffix(b"\n") {
            text = t;
        }
        let text_sym = self.intern_value(text);
        self.fields.clear();
        self.fields.push((self.keys.ip, FieldKind::UInt));
        self.values.push(FieldValue::UInt(ip));
        self.fields.push((self.keys.text, FieldKind::Str));
        self.values.push(FieldValue::Str(text_sym));
        let b = &mut self.b;
        push_token_fields(text, &mut |s| b.intern(s), &mut self.fields, &mut self.values);
        // Markers share a handful of field lists: look them up without building a key
        // (and the list of a marker without tokens, the most common, without hashing).
        let plain = self.fields.len() == 2;
        let known =
            if plain { self.plain_print } else { self.print_layouts.get(self.fields.as_slice()).copied() };
        let layout = match known {
            Some(id) => id,
            None => {
                let id = self.b.layout(self.keys.print, &self.fields);
                if plain {
                    self.plain_print = Some(id);
                } else {
                    self.print_layouts.insert(self.fields.clone(), id);
                }
                id
            }
        };
        self.push(ts, pid, flags, layout);
        if is_atrace(text) {
            self.atrace.push(ts, pid, self.cpu, text);
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::super::protos::leaf as pb;
    use super::*;
    use latscope_model::{EventTable, Interner};

    fn key(n: u32, wire: u64, out: &mut Vec<u8>) {
        prost::encoding::encode_varint((u64::from(n) << 3) | wire, out);
    }

    /// A bundle of CPU 0 holding one FtraceEvent per `(oneof field, payload)`, at times
    /// 1000, 2000, … ns, pid 7.
    fn bundle(events: &[(u32, Vec<u8>)]) -> Vec<u8> {
        let mut out = Vec::new();
        for (i, (field, payload)) in events.iter().enumerate() {
            let mut ev = Vec::new();
            key(1, 0, &mut ev);
            prost::encoding::encode_varint(1000 * (i as u64 + 1), &mut ev);
            key(2, 0, &mut ev);
            prost::encoding::encode_varint(7, &mut ev);
            key(*field, 2, &mut ev);
            prost::encoding::encode_varint(payload.len() as u64, &mut ev);
            ev.extend_from_slice(payload);
            key(2, 2, &mut out);
            prost::encoding::encode_varint(ev.len() as u64, &mut out);
            out.extend(ev);
        }
        out
    }

    fn decode(events: &[(u32, Vec<u8>)]) -> (EventTable, Interner, Diagnostics) {
        let clocks = Clocks::default();
        let names = FxHashMap::default();
        let shared = Shared { clocks: &clocks, origin_ns: 0, names: &names };
        let mut w = CpuWorker::new(&shared, 0);
        let data = bundle(events);
        w.bundle(BundleRef { data: &data, at: 0, file_at: 0 });
        let out = w.finish();
        let (t, s) = out.builder.finish().unwrap();
        (t, s, out.diags)
    }

    /// Every field of event `i` as text (strings resolved).
    fn fields(t: &EventTable, s: &Interner, i: usize) -> Vec<(String, String)> {
        t.get(i)
            .unwrap()
            .fields()
            .map(|(n, v)| {
                let name = s.resolve(n).into_owned();
                let v = match v {
                    FieldValue::Str(x) => String::from_utf8_lossy(s.bytes_of(x)).into_owned(),
                    FieldValue::Int(i) => i.to_string(),
                    // A device as it prints (`8,16`): stored as the kernel's `dev_t`.
                    FieldValue::UInt(u) if name == "dev" => latscope_model::kernel::dev_text(u),
                    FieldValue::UInt(u) => u.to_string(),
                };
                (name, v)
            })
            .collect()
    }

    fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
        p.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect()
    }

    #[test]
    fn flat_events_read_as_prost_reads_them() {
        let switch = pb::SchedSwitch {
            prev_comm: b"kworker/0:1".to_vec(),
            prev_pid: 12,
            prev_prio: -2,
            prev_state: 1 << 40,
            next_comm: vec![0xff, b'x'],
            next_pid: 2000,
            next_prio: 120,
        };
        let wake = pb::SchedWakeup { comm: b"app".to_vec(), pid: 2000, prio: 98, success: 1, target_cpu: 3 };
        let complete = pb::BlockRqComplete {
            dev: (8 << 20) | 16,
            sector: u64::MAX,
            nr_sector: 8,
            errors: -5,
            rwbs: b"WS".to_vec(),
            cmd: Vec::new(),
            error: None,
        };
        let events = [
            (tag::SCHED_SWITCH, switch.encode_to_vec()),
            (tag::SCHED_WAKING, wake.encode_to_vec()),
            (
                tag::IRQ_HANDLER_ENTRY,
                pb::IrqHandlerEntry { irq: -1, name: b"eth0".to_vec(), handler: 9 }.encode_to_vec(),
            ),
            (tag::IRQ_HANDLER_EXIT, pb::IrqHandlerExit { irq: 36, ret: 1 }.encode_to_vec()),
            (tag::SOFTIRQ_ENTRY, pb::Softirq { vec: 3 }.encode_to_vec()),
            (tag::SOFTIRQ_EXIT, pb::Softirq { vec: 77 }.encode_to_vec()),
            (tag::CPU_IDLE, pb::CpuState { state: u32::MAX, cpu_id: 1 }.encode_to_vec()),
            (tag::BLOCK_RQ_COMPLETE, complete.encode_to_vec()),
            (
                tag::BLOCK_RQ_COMPLETE,
                pb::BlockRqComplete { error: Some(-11), ..complete.clone() }.encode_to_vec(),
            ),
            (
                tag::PRINT,
                pb::Print { ip: 0xffff_0000_1234, buf: b"B|2000|frame 3\n".to_vec() }.encode_to_vec(),
            ),
            (
                tag::BLOCK_RQ_ISSUE,
                pb::BlockRqIssue {
                    dev: 259 << 20,
                    sector: 2048,
                    nr_sector: 8,
                    bytes: 4096,
                    rwbs: b"R".to_vec(),
                    comm: b"dd".to_vec(),
                    cmd: Vec::new(),
                }
                .encode_to_vec(),
            ),
            (
                tag::TASK_NEWTASK,
                pb::TaskNewtask {
                    pid: 77,
                    comm: b"bash".to_vec(),
                    clone_flags: 0x1200011,
                    oom_score_adj: -1000,
                }
                .encode_to_vec(),
            ),
            (
                tag::TASK_RENAME,
                pb::TaskRename {
                    pid: 77,
                    oldcomm: b"bash".to_vec(),
                    newcomm: b"make".to_vec(),
                    oom_score_adj: 0,
                }
                .encode_to_vec(),
            ),
            (
                tag::SCHED_PROCESS_EXIT,
                pb::SchedProcess { comm: b"make".to_vec(), pid: 77, field3: 70, field4: 120 }.encode_to_vec(),
            ),
            (
                tag::SCHED_PROCESS_FREE,
                pb::SchedProcess { comm: b"make".to_vec(), pid: 77, field3: 120, field4: 0 }.encode_to_vec(),
            ),
            (
                tag::SCHED_PROCESS_FORK,
                pb::SchedProcessFork {
                    parent_comm: b"sh".to_vec(),
                    parent_pid: 1,
                    child_comm: b"ls".to_vec(),
                    child_pid: 99,
                }
                .encode_to_vec(),
            ),
        ];
        let (t, s, diags) = decode(&events);
        assert_eq!(diags.malformed, 0, "{:?}", diags.summary());
        assert_eq!(t.len(), events.len());
        let want = [
            pairs(&[
                ("prev_comm", "kworker/0:1"),
                ("prev_pid", "12"),
                ("prev_prio", "-2"),
                ("prev_state", "1099511627776"),
                ("next_comm", "\u{fffd}x"),
                ("next_pid", "2000"),
                ("next_prio", "120"),
            ]),
            pairs(&[("comm", "app"), ("pid", "2000"), ("prio", "98"), ("target_cpu", "3")]),
            pairs(&[("irq", "-1"), ("name", "eth0")]),
            pairs(&[("irq", "36"), ("ret", "1")]),
            pairs(&[("vec", "3"), ("action", "NET_RX")]),
            pairs(&[("vec", "77"), ("action", "UNKNOWN")]),
            pairs(&[("state", "4294967295"), ("cpu_id", "1")]),
            pairs(&[
                ("dev", "8,16"),
                ("sector", "18446744073709551615"),
                ("nr_sector", "8"),
                ("rwbs", "WS"),
                ("error", "-5"),
            ]),
            pairs(&[
                ("dev", "8,16"),
                ("sector", "18446744073709551615"),
                ("nr_sector", "8"),
                ("rwbs", "WS"),
                ("error", "-11"),
            ]),
            pairs(&[("ip", "281470681748020"), ("text", "B|2000|frame 3")]),
            pairs(&[
                ("dev", "259,0"),
                ("sector", "2048"),
                ("nr_sector", "8"),
                ("bytes", "4096"),
                ("rwbs", "R"),
                ("comm", "dd"),
            ]),
            pairs(&[
                ("pid", "77"),
                ("comm", "bash"),
                ("clone_flags", "18874385"),
                ("oom_score_adj", "-1000"),
            ]),
            pairs(&[("pid", "77"), ("oldcomm", "bash"), ("newcomm", "make"), ("oom_score_adj", "0")]),
            pairs(&[("comm", "make"), ("pid", "77"), ("prio", "120")]),
            pairs(&[("comm", "make"), ("pid", "77"), ("prio", "120")]),
            pairs(&[("comm", "sh"), ("pid", "1"), ("child_comm", "ls"), ("child_pid", "99")]),
        ];
        for (i, w) in want.iter().enumerate() {
            assert_eq!(&fields(&t, &s, i), w, "event {i}");
        }
    }

    #[test]
    fn a_repeated_field_keeps_its_last_value_and_a_wrong_wire_type_skips_the_event() {
        // Two encodings back to back are one message whose later fields win (protobuf's
        // merge), as prost reads it.
        let mut twice = pb::IrqHandlerExit { irq: 1, ret: 0 }.encode_to_vec();
        twice.extend(pb::IrqHandlerExit { irq: 2, ret: 1 }.encode_to_vec());
        let merged = pb::IrqHandlerExit::decode(twice.as_slice()).unwrap();
        // irq written as a string.
        let mut wrong = Vec::new();
        key(1, 2, &mut wrong);
        wrong.extend([1, b'x']);
        assert!(pb::IrqHandlerExit::decode(wrong.as_slice()).is_err());
        let (t, s, diags) = decode(&[(tag::IRQ_HANDLER_EXIT, twice), (tag::IRQ_HANDLER_EXIT, wrong)]);
        assert_eq!(t.len(), 1);
        let want = [("irq", merged.irq.to_string()), ("ret", merged.ret.to_string())];
        assert_eq!(fields(&t, &s, 0), want.map(|(a, b)| (a.to_owned(), b)));
        assert_eq!(diags.malformed, 1);
        assert!(diags.first_malformed[0].message.contains("field 37"), "{:?}", diags.first_malformed);
    }

    #[test]
    fn the_common_event_layout_reads_as_the_field_walk_reads_it() {
        // (field number, wire type, value bytes already encoded)
        type Raw = (u32, u64, Vec<u8>);
        let var = |v: u64| {
            let mut b = Vec::new();
            prost::encoding::encode_varint(v, &mut b);
            b
        };
        let msg = |b: &[u8]| {
            let mut out = var(b.len() as u64);
            out.extend_from_slice(b);
            out
        };
        let encode = |fields: &[Raw]| {
            let mut out = Vec::new();
            for (n, wire, v) in fields {
                key(*n, *wire, &mut out);
                out.extend_from_slice(v);
            }
            out
        };
        // What the general walk in `event` makes of a message.
        let walk = |data: &[u8]| -> Option<(u64, i32, IrqFlags, u32, Vec<u8>)> {
            let (mut ts, mut pid, mut flags, mut payload) = (None, 0, IrqFlags::NONE, None);
            for f in Fields::new(data, 0) {
                match f.ok()? {
                    Field { number: 1, value: Value::Varint(v), .. } => ts = Some(v),
                    Field { number: 2, value: Value::Varint(v), .. } => pid = v as u32 as i32,
                    Field { number: 5, value: Value::Varint(v), .. } => {
                        flags = crate::tracedat::irq_flags((v & 0xff) as u8, 0)
                    }
                    f if f.number > 2 && f.number != 5 => payload = Some(f),
                    _ => return None,
                }
            }
            let p = payload?;
            let Value::Bytes(b) = p.value else { return None };
            Some((ts?, pid, flags, p.number, b.to_vec()))
        };
        let body = msg(b"\x08\x01\x10\x02");
        let ts = var(703_770_000_123_456);
        let cases: Vec<(Vec<Raw>, bool)> = vec![
            (vec![(1, 0, ts.clone()), (2, 0, var(42)), (4, 2, body.clone())], true),
            (vec![(1, 0, ts.clone()), (2, 0, var(u64::from(u32::MAX))), (456, 2, body.clone())], true),
            (vec![(1, 0, ts.clone()), (2, 0, var(42)), (5, 0, var(0x0d)), (4, 2, body.clone())], true),
            (vec![(1, 0, ts.clone()), (2, 0, var(42)), (4, 2, msg(b""))], true),
            // Other layouts: the walk reads them (or rejects them) on its own.
            (vec![(2, 0, var(42)), (1, 0, ts.clone()), (4, 2, body.clone())], false),
            (vec![(1, 0, ts.clone()), (4, 2, body.clone())], false),
            (vec![(1, 0, ts.clone()), (2, 0, var(42)), (4, 2, body.clone()), (5, 0, var(1))], false),
            (vec![(1, 0, ts.clone()), (2, 0, var(42)), (4, 2, body.clone()), (4, 2, msg(b""))], false),
            (vec![(1, 0, ts.clone()), (2, 0, var(42)), (4, 0, var(3))], false),
            (vec![(1, 0, ts.clone()), (2, 0, var(42)), (5, 2, body.clone())], false),
            (vec![(1, 0, ts.clone()), (2, 0, var(42)), (1, 2, body.clone())], false),
        ];
        for (fields, common) in &cases {
            let data = encode(fields);
            let fast = CommonEvent::read(&data);
            assert_eq!(fast.is_some(), *common, "{fields:?}");
            if let Some(e) = fast {
                let read = (e.ts, e.pid, e.flags, e.number, e.payload.to_vec());
                assert_eq!(Some(read), walk(&data), "{fields:?}");
                assert_eq!(&data[e.payload_at..], e.payload);
            }
        }
        // Cut anywhere, a common event is no longer read straight.
        let data = encode(&cases[2].0);
        for cut in 0..data.len() {
            assert!(CommonEvent::read(&data[..cut]).is_none(), "cut at {cut}");
        }
    }

    #[test]
    fn short_keys_are_equal_exactly_when_the_names_are() {
        let mut x = 99u64;
        let mut names: Vec<Vec<u8>> = Vec::new();
        for len in 0..=16 {
            for _ in 0..60 {
                names.push(
                    (0..len)
                        .map(|_| {
                            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                            b"ab\x00"[(x >> 60) as usize % 3]
                        })
                        .collect(),
                );
            }
        }
        for a in &names {
            for b in &names {
                assert_eq!(ShortKey::of(a) == ShortKey::of(b), a == b, "{a:?} {b:?}");
            }
        }
        assert_eq!(ShortKey::of(&[b'x'; 17]), None);
    }
}

//! What the models write: ftrace-like events into an [`EventTableBuilder`] and edges on
//! digital lines, finished into a [`Source`] of kind Simulator. Field names and kinds follow
//! the kernel's TP_printk formats so that the ftrace text writer
//! can print them back exactly and analyses select them by the names users know.

use latscope_model::{
    ClockOrigin, DigitalTrack, EventTableBuilder, FieldKind, FieldValue, IrqFlags, LayoutId, Ps, Source,
    SourceKind, Sym,
};
use rustc_hash::FxHashMap;

pub use latscope_model::kernel::CPU_IDLE_EXIT_STATE as IDLE_EXIT;

/// Execution context of an event, rendered in the flags column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ctx {
    Task,
    HardIrq,
    SoftIrq,
    Idle,
}

/// A digital line, by index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line(pub u16);

#[derive(Debug)]
struct Layouts {
    irq_entry: LayoutId,
    irq_exit: LayoutId,
    softirq_entry: LayoutId,
    softirq_exit: LayoutId,
    softirq_raise: LayoutId,
    wakeup: LayoutId,
    switch: LayoutId,
    cpu_idle: LayoutId,
    irq_disable: LayoutId,
    irq_enable: LayoutId,
    rq_issue: LayoutId,
    rq_complete: LayoutId,
    mmc_start: LayoutId,
    mmc_done: LayoutId,
    xmit: LayoutId,
    napi: LayoutId,
}

/// Strings every model uses, interned once.
#[derive(Debug, Clone, Copy)]
pub struct Common {
    pub swapper: Sym,
    pub handled: Sym,
    pub empty: Sym,
    pub text: Sym,
    pub marker: Sym,
}

#[derive(Debug)]
pub struct Emitter {
    pub b: EventTableBuilder,
    l: Layouts,
    pub c: Common,
    flags: [IrqFlags; 4],
    marker_layouts: FxHashMap<Vec<Sym>, LayoutId>,
    lines: Vec<DigitalTrack>,
    /// Edges as emitted (models may emit slightly ahead of the clock); sorted at finish.
    edges: Vec<(Ps, u32, u16, u8)>,
    scratch: Vec<FieldValue>,
}

impl Default for Emitter {
    fn default() -> Self {
        Self::new()
    }
}

fn flags(columns: &[u8; 5]) -> IrqFlags {
    IrqFlags::from_columns(*columns).unwrap_or(IrqFlags::NONE)
}

impl Emitter {
    pub fn new() -> Self {
        use FieldKind::{Int, Str, UInt};
        let mut b = EventTableBuilder::new();
        let lay = |b: &mut EventTableBuilder, name: &str, fields: &[(&str, FieldKind)]| {
            let n = b.intern(name.as_bytes());
            let f: Vec<(Sym, FieldKind)> = fields.iter().map(|&(f, k)| (b.intern(f.as_bytes()), k)).collect();
            b.layout(n, &f)
        };
        let l = Layouts {
            irq_entry: lay(&mut b, "irq_handler_entry", &[("irq", Int), ("name", Str)]),
            irq_exit: lay(&mut b, "irq_handler_exit", &[("irq", Int), ("ret", Str)]),
            softirq_entry: lay(&mut b, "softirq_entry", &[("vec", UInt)]),
            softirq_exit: lay(&mut b, "softirq_exit", &[("vec", UInt)]),
            softirq_raise: lay(&mut b, "softirq_raise", &[("vec", UInt)]),
            wakeup: lay(
                &mut b,
                "sched_wakeup",
                &[("comm", Str), ("pid", Int), ("prio", Int), ("target_cpu", Int)],
            ),
            switch: lay(
                &mut b,
                "sched_switch",
                &[
                    ("prev_comm", Str),
                    ("prev_pid", Int),
                    ("prev_prio", Int),
                    ("prev_state", Str),
                    ("next_comm", Str),
                    ("next_pid", Int),
                    ("next_prio", Int),
                ],
            ),
            cpu_idle: lay(&mut b, "cpu_idle", &[("state", UInt), ("cpu_id", UInt)]),
            irq_disable: lay(&mut b, "irq_disable", &[("caller", Str), ("parent", Str)]),
            irq_enable: lay(&mut b, "irq_enable", &[("caller", Str), ("parent", Str)]),
            rq_issue: lay(
                &mut b,
                "block_rq_issue",
                &[
                    ("dev", Str),
                    ("rwbs", Str),
                    ("bytes", UInt),
                    ("cmd", Str),
                    ("sector", UInt),
                    ("nr_sector", UInt),
                    ("comm", Str),
                ],
            ),
            rq_complete: lay(
                &mut b,
                "block_rq_complete",
                &[
                    ("dev", Str),
                    ("rwbs", Str),
                    ("cmd", Str),
                    ("sector", UInt),
                    ("nr_sector", UInt),
                    ("error", Int),
                ],
            ),
            mmc_start: lay(
                &mut b,
                "mmc_request_start",
                &[
                    ("host", Str),
                    ("mrq", UInt),
                    ("cmd_opcode", UInt),
                    ("cmd_arg", UInt),
                    ("cmd_retries", UInt),
                    ("blocks", UInt),
                    ("block_size", UInt),
                    ("blk_addr", UInt),
                ],
            ),
            mmc_done: lay(
                &mut b,
                "mmc_request_done",
                &[
                    ("host", Str),
                    ("mrq", UInt),
                    ("cmd_opcode", UInt),
                    ("cmd_err", Int),
                    ("cmd_retries", UInt),
                    ("bytes_xfered", UInt),
                    ("data_err", Int),
                ],
            ),
            xmit: lay(&mut b, "net_dev_xmit", &[("dev", Str), ("skbaddr", UInt), ("len", UInt), ("rc", Int)]),
            napi: lay(
                &mut b,
                "napi_poll",
                &[("napi", UInt), ("dev_name", Str), ("work", Int), ("budget", Int)],
            ),
        };
        let c = Common {
            swapper: b.intern(b"swapper"),
            handled: b.intern(b"handled"),
            empty: b.intern(b""),
            text: b.intern(b"text"),
            marker: b.intern(b"tracing_mark_write"),
        };
        Self {
            b,
            l,
            c,
            flags: [flags(b"....."), flags(b"d.h1."), flags(b"..s1."), flags(b"d..1.")],
            marker_layouts: FxHashMap::default(),
            lines: Vec::new(),
            edges: Vec::new(),
            scratch: Vec::with_capacity(8),
        }
    }

    pub fn sym(&mut self, s: &str) -> Sym {
        self.b.intern(s.as_bytes())
    }

    /// Declares a digital line with its initial level.
    pub fn line(&mut self, name: &str, initial: u8) -> Line {
        self.lines.push(DigitalTrack::new(name, initial));
        Line((self.lines.len() - 1) as u16)
    }

    pub fn edge(&mut self, t: Ps, line: Line, level: u8) {
        self.edges.push((t, self.edges.len() as u32, line.0, level));
    }

    /// A high pulse on `line` over [from, to).
    pub fn pulse(&mut self, line: Line, from: Ps, to: Ps) {
        self.edge(from, line, 1);
        self.edge(to, line, 0);
    }

    /// Room for `events` more events (about six bytes of field values each).
    pub fn reserve(&mut self, events: usize) {
        self.b.reserve(events, events.saturating_mul(6));
    }
    pub fn events(&self) -> usize {
        self.b.len()
    }
    pub fn edges_emitted(&self) -> usize {
        self.edges.len()
    }
    pub fn edge_at(&self, i: usize) -> Option<(Ps, u16, u8)> {
        self.edges.get(i).map(|e| (e.0, e.2, e.3))
    }
    pub fn line_names(&self) -> Vec<String> {
        self.lines.iter().map(|l| l.name.clone()).collect()
    }

    fn push(&mut self, t: Ps, cpu: u16, pid: i32, comm: Sym, ctx: Ctx, layout: LayoutId) {
        let f = self.flags[ctx as usize];
        self.b.push(t, cpu, pid, comm, f, layout, &self.scratch);
        self.scratch.clear();
    }

    fn vals(&mut self, v: &[FieldValue]) -> &mut Self {
        self.scratch.clear();
        self.scratch.extend_from_slice(v);
        self
    }

    pub fn irq_entry(&mut self, t: Ps, cpu: u16, irq: i64, name: Sym) {
        self.vals(&[FieldValue::Int(irq), FieldValue::Str(name)]);
        let (c, l) = (self.c.swapper, self.l.irq_entry);
        self.push(t, cpu, 0, c, Ctx::HardIrq, l);
    }

    pub fn irq_exit(&mut self, t: Ps, cpu: u16, irq: i64) {
        self.vals(&[FieldValue::Int(irq), FieldValue::Str(self.c.handled)]);
        let (c, l) = (self.c.swapper, self.l.irq_exit);
        self.push(t, cpu, 0, c, Ctx::HardIrq, l);
    }

    /// `irq_disable`/`irq_enable` (preemptirq tracepoints) around an irqs-off section.
    pub fn irqs_off(&mut self, from: Ps, to: Ps, cpu: u16, caller: Sym) {
        let parent = self.c.empty;
        self.vals(&[FieldValue::Str(caller), FieldValue::Str(parent)]);
        let (c, l) = (self.c.swapper, self.l.irq_disable);
        self.push(from, cpu, 0, c, Ctx::HardIrq, l);
        self.vals(&[FieldValue::Str(caller), FieldValue::Str(parent)]);
        let l = self.l.irq_enable;
        self.push(to, cpu, 0, c, Ctx::HardIrq, l);
    }

    pub fn softirq_raise(&mut self, t: Ps, cpu: u16, vec: u64) {
        self.vals(&[FieldValue::UInt(vec)]);
        let (c, l) = (self.c.swapper, self.l.softirq_raise);
        self.push(t, cpu, 0, c, Ctx::HardIrq, l);
    }

    pub fn softirq(&mut self, from: Ps, to: Ps, cpu: u16, vec: u64) {
        let c = self.c.swapper;
        self.vals(&[FieldValue::UInt(vec)]);
        let l = self.l.softirq_entry;
        self.push(from, cpu, 0, c, Ctx::SoftIrq, l);
        self.vals(&[FieldValue::UInt(vec)]);
        let l = self.l.softirq_exit;
        self.push(to, cpu, 0, c, Ctx::SoftIrq, l);
    }

    /// `sched_wakeup` of `task` (comm, pid), emitted from hard-IRQ context on `cpu`.
    pub fn wakeup(&mut self, t: Ps, cpu: u16, task: (Sym, i32), target: u16) {
        self.vals(&[
            FieldValue::Str(task.0),
            FieldValue::Int(i64::from(task.1)),
            FieldValue::Int(120),
            FieldValue::Int(i64::from(target)),
        ]);
        let (c, l) = (self.c.swapper, self.l.wakeup);
        self.push(t, cpu, 0, c, Ctx::HardIrq, l);
    }

    /// `sched_switch` from `prev` (leaving in `state`) to `next`.
    pub fn switch(&mut self, t: Ps, cpu: u16, prev: (Sym, i32), state: Sym, next: (Sym, i32)) {
        self.vals(&[
            FieldValue::Str(prev.0),
            FieldValue::Int(i64::from(prev.1)),
            FieldValue::Int(120),
            FieldValue::Str(state),
            FieldValue::Str(next.0),
            FieldValue::Int(i64::from(next.1)),
            FieldValue::Int(120),
        ]);
        let l = self.l.switch;
        self.push(t, cpu, prev.1, prev.0, Ctx::Idle, l);
    }

    pub fn cpu_idle(&mut self, t: Ps, cpu: u16, state: u64) {
        self.vals(&[FieldValue::UInt(state), FieldValue::UInt(u64::from(cpu))]);
        let (c, l) = (self.c.swapper, self.l.cpu_idle);
        self.push(t, cpu, 0, c, Ctx::Idle, l);
    }

    #[allow(clippy::too_many_arguments)]
    pub fn rq_issue(&mut self, t: Ps, cpu: u16, task: (Sym, i32), dev: Sym, rwbs: Sym, sector: u64, nr: u64) {
        let empty = self.c.empty;
        self.vals(&[
            FieldValue::Str(dev),
            FieldValue::Str(rwbs),
            FieldValue::UInt(nr * 512),
            FieldValue::Str(empty),
            FieldValue::UInt(sector),
            FieldValue::UInt(nr),
            FieldValue::Str(task.0),
        ]);
        let l = self.l.rq_issue;
        self.push(t, cpu, task.1, task.0, Ctx::Task, l);
    }

    #[allow(clippy::too_many_arguments)]
    pub fn rq_complete(
        &mut self,
        t: Ps,
        cpu: u16,
        task: (Sym, i32),
        ctx: Ctx,
        dev: Sym,
        rwbs: Sym,
        sector: u64,
        nr: u64,
    ) {
        let empty = self.c.empty;
        self.vals(&[
            FieldValue::Str(dev),
            FieldValue::Str(rwbs),
            FieldValue::Str(empty),
            FieldValue::UInt(sector),
            FieldValue::UInt(nr),
            FieldValue::Int(0),
        ]);
        let l = self.l.rq_complete;
        self.push(t, cpu, task.1, task.0, ctx, l);
    }

    /// `mmc_request_start` of one attempt at a command (`blocks` 0 for no data).
    #[allow(clippy::too_many_arguments)]
    pub fn mmc_start(
        &mut self,
        t: Ps,
        task: (Sym, i32),
        host: Sym,
        mrq: u64,
        op: u64,
        arg: u64,
        retries: u64,
        blocks: u64,
    ) {
        self.vals(&[
            FieldValue::Str(host),
            FieldValue::UInt(mrq),
            FieldValue::UInt(op),
            FieldValue::UInt(arg),
            FieldValue::UInt(retries),
            FieldValue::UInt(blocks),
            FieldValue::UInt(if blocks > 0 { 512 } else { 0 }),
            FieldValue::UInt(if blocks > 0 { arg } else { 0 }),
        ]);
        let l = self.l.mmc_start;
        self.push(t, 0, task.1, task.0, Ctx::Task, l);
    }

    #[allow(clippy::too_many_arguments)]
    pub fn mmc_done(
        &mut self,
        t: Ps,
        task: (Sym, i32),
        host: Sym,
        mrq: u64,
        op: u64,
        err: i64,
        retries: u64,
        bytes: u64,
    ) {
        self.vals(&[
            FieldValue::Str(host),
            FieldValue::UInt(mrq),
            FieldValue::UInt(op),
            FieldValue::Int(err),
            FieldValue::UInt(retries),
            FieldValue::UInt(bytes),
            FieldValue::Int(0),
        ]);
        let l = self.l.mmc_done;
        self.push(t, 0, task.1, task.0, Ctx::Task, l);
    }

    pub fn xmit(&mut self, t: Ps, cpu: u16, ctx: Ctx, dev: Sym, skb: u64, len: u64) {
        self.vals(&[FieldValue::Str(dev), FieldValue::UInt(skb), FieldValue::UInt(len), FieldValue::Int(0)]);
        let (c, l) = (self.c.swapper, self.l.xmit);
        self.push(t, cpu, 0, c, ctx, l);
    }

    pub fn napi_poll(&mut self, t: Ps, cpu: u16, napi: u64, dev: Sym, work: i64, budget: i64) {
        self.vals(&[
            FieldValue::UInt(napi),
            FieldValue::Str(dev),
            FieldValue::Int(work),
            FieldValue::Int(budget),
        ]);
        let (c, l) = (self.c.swapper, self.l.napi);
        self.push(t, cpu, 0, c, Ctx::SoftIrq, l);
    }

    /// A `tracing_mark_write` marker: `text` is printed as written, and each `key=value`
    /// is also a field, as latscope's importers expose them.
    pub fn marker(&mut self, t: Ps, cpu: u16, task: (Sym, i32), text: &str, kv: &[(Sym, i64)]) {
        let text = self.b.intern(text.as_bytes());
        self.marker_sym(t, cpu, task, text, kv);
    }

    /// [`Emitter::marker`] with the text already interned (hot paths cache it).
    pub fn marker_sym(&mut self, t: Ps, cpu: u16, task: (Sym, i32), text: Sym, kv: &[(Sym, i64)]) {
        // The layout key without allocating: markers carry at most a few fields.
        let mut key = [Sym::default(); 8];
        let n = kv.len().min(key.len());
        for (k, v) in key.iter_mut().zip(kv) {
            *k = v.0;
        }
        let layout = match self.marker_layouts.get(&key[..n]) {
            Some(&l) => l,
            None => {
                let mut f = vec![(self.c.text, FieldKind::Str)];
                f.extend(kv.iter().take(n).map(|k| (k.0, FieldKind::Int)));
                let l = self.b.layout(self.c.marker, &f);
                self.marker_layouts.insert(key[..n].to_vec(), l);
                l
            }
        };
        self.scratch.clear();
        self.scratch.push(FieldValue::Str(text));
        self.scratch.extend(kv.iter().take(n).map(|k| FieldValue::Int(k.1)));
        self.push(t, cpu, task.1, task.0, Ctx::Task, layout);
    }

    /// The finished source: events sorted by time, digital lines from the sorted edges.
    pub fn finish(self, name: &str) -> Source {
        let mut lines = self.lines;
        let mut edges = self.edges;
        edges.sort_unstable_by_key(|e| (e.0, e.1));
        let end = edges.last().map_or(0, |e| e.0);
        for (t, _, line, level) in edges {
            if let Some(l) = lines.get_mut(usize::from(line)) {
                l.push(t, level);
            }
        }
        let mut src = Source::new(name, "simulator", SourceKind::Simulator);
        // The ftrace-like clock starts at 100 s so timestamps look like a running system's.
        src.origin = ClockOrigin::from_secs_ps(100, 0);
        match self.b.finish() {
            Ok((events, strings)) => {
                let last = events.ts.last().copied().unwrap_or(0);
                src.events = events;
                src.strings = strings;
                for l in &mut lines {
                    l.end = l.end.max(last).max(end);
                }
            }
            Err(e) => src.diagnostics.warn(format!("simulator output incomplete: {e}")),
        }
        src.digital = lines.into();
        src
    }
}

//! Turning a loaded [`Source`] into timeline lanes, on a worker thread, once per load: the
//! per-CPU and per-event index lists, task/IRQ/softirq slices reconstructed from
//! `sched_switch`, `irq_handler_*` and `softirq_*`, digital level pyramids and span rows.
//! Drawing then only reads these.

use super::lod::{self, MinMaxPyramid, SliceRow, Slices, TimeIndex};
use super::theme;
use egui::Color32;
use latscope_model::kernel;
use latscope_model::{DigitalTrack, EventTable, FieldValue, Ps, Source, SourceKind, Sym};
use latscope_shared::SharedVec;
use rustc_hash::FxHashMap;

/// A source and the lanes built from it.
#[derive(Debug)]
pub struct Prepared {
    pub source: Source,
    pub lanes: Vec<Lane>,
}

/// Records (events, edges, samples) from which a source is freed on a thread of its own.
const FREE_ELSEWHERE_FROM: usize = 1 << 20;

/// A large source is freed on a thread of its own, wherever its last holder lets it go:
/// unmapping the pages of a live snapshot of 10 M events took 19 ms (docs/PERFORMANCE.md),
/// more than a frame, and the window lets a live source's previous snapshot go five times
/// a second, on its UI thread.
impl Drop for Prepared {
    fn drop(&mut self) {
        let src = &self.source;
        let digital: usize = src.digital.iter().map(|d| d.changes().len()).sum();
        let analog: usize = src.analog.iter().map(|a| a.samples.len()).sum();
        if src.events.len() + digital + analog < FREE_ELSEWHERE_FROM {
            return;
        }
        let source = std::mem::replace(&mut self.source, Source::new("", "", SourceKind::File));
        let lanes = std::mem::take(&mut self.lanes);
        // Should no thread start, the closure and what it holds are freed here instead.
        let _ = std::thread::Builder::new().name("free source".into()).spawn(move || drop((source, lanes)));
    }
}

/// The lane of digital track `track`, `d`.
pub fn digital_lane(track: usize, d: &DigitalTrack) -> Lane {
    digital_lane_with(track, d, MinMaxPyramid::new(d.levels()))
}

/// The lane of digital track `track`, `d`, whose level pyramid is built already.
fn digital_lane_with(track: usize, d: &DigitalTrack, pyramid: MinMaxPyramid) -> Lane {
    Lane { name: d.name.clone(), kind: LaneKind::Digital { track, pyramid }, color: theme::DIGITAL }
}

impl Prepared {
    /// Adds digital track `d` with its lane (built by [`digital_lane`]), in place: a track of
    /// the same name is replaced where it is, a new one goes after the other digital tracks,
    /// its lane after theirs, as [`prepare`] would place it. Nothing else is touched.
    pub fn add_digital(&mut self, d: DigitalTrack, mut lane: Lane) {
        let digital = &mut self.source.digital;
        let same_name = digital.iter().position(|t| t.name == d.name);
        let track = match same_name {
            Some(k) => {
                digital.set(k, d);
                k
            }
            None => {
                digital.push(d);
                digital.len() - 1
            }
        };
        if let LaneKind::Digital { track: t, .. } = &mut lane.kind {
            *t = track;
        }
        let same = |l: &Lane| matches!(l.kind, LaneKind::Digital { track: t, .. } if t == track);
        if let Some(old) = self.lanes.iter_mut().find(|l| same(l)) {
            *old = lane;
            return;
        }
        // After the last digital lane; with none, before the analog and span lanes.
        let at = match self.lanes.iter().rposition(|l| l.kind.class() == LaneClass::Digital) {
            Some(i) => i + 1,
            None => self
                .lanes
                .iter()
                .position(|l| matches!(l.kind.class(), LaneClass::Analog | LaneClass::Spans))
                .unwrap_or(self.lanes.len()),
        };
        self.lanes.insert(at, lane);
    }
}

/// One row of the timeline: its data (read-only once built) and its default look; what the
/// user changes (visibility, order, colour) lives in the workbench's lane views.
#[derive(Debug)]
pub struct Lane {
    pub name: String,
    pub kind: LaneKind,
    pub color: Color32,
}

impl Lane {
    pub fn height(&self) -> f32 {
        match &self.kind {
            LaneKind::Cpu(_) => 46.0,
            LaneKind::Analog { .. } => 56.0,
            LaneKind::Spans { rows, .. } => 18.0 * rows.len().clamp(1, 6) as f32 + 4.0,
            LaneKind::Events(_) | LaneKind::Digital { .. } => 24.0,
        }
    }
}

/// What kind of lane, without its data: what code compares and the track list names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LaneClass {
    Cpu,
    Events,
    Digital,
    Analog,
    Spans,
}

impl LaneClass {
    /// How the track list names it (its hover text).
    pub fn name(self) -> &'static str {
        match self {
            LaneClass::Cpu => "cpu",
            LaneClass::Events => "events",
            LaneClass::Digital => "digital",
            LaneClass::Analog => "analog",
            LaneClass::Spans => "spans",
        }
    }
}

#[derive(Debug)]
pub enum LaneKind {
    /// All events of one CPU, with the slices running on it.
    Cpu(CpuLane),
    /// All events of one name.
    Events(EventLane),
    Digital {
        track: usize,
        pyramid: MinMaxPyramid,
    },
    Analog {
        track: usize,
        lo: f32,
        hi: f32,
    },
    Spans {
        track: usize,
        rows: Vec<SliceRow>,
        labels: Vec<String>,
    },
}

impl LaneKind {
    pub fn class(&self) -> LaneClass {
        match self {
            LaneKind::Cpu(_) => LaneClass::Cpu,
            LaneKind::Events(_) => LaneClass::Events,
            LaneKind::Digital { .. } => LaneClass::Digital,
            LaneKind::Analog { .. } => LaneClass::Analog,
            LaneKind::Spans { .. } => LaneClass::Spans,
        }
    }
}

/// A lane's lists are shared with the lanes of a live source's later snapshots, which only
/// append to them (`SharedVec`): a clone costs nothing.
#[derive(Debug, Default, Clone)]
pub struct EventLane {
    /// Indices into the source's event table, in time order.
    pub events: SharedVec<u32>,
    /// Bucket starts over `events`' times, for per-column counts.
    pub index: TimeIndex,
}

/// Extends `index` over a lane's `events` (indices into `ev`) pushed since the last call.
fn index_new(index: &mut TimeIndex, events: &[u32], ev: &EventTable) {
    index.extend(events.len(), |i| ev.ts[events[i] as usize]);
}

#[derive(Debug, Default, Clone)]
pub struct CpuLane {
    pub cpu: u16,
    pub events: SharedVec<u32>,
    /// Bucket starts over `events`' times, for per-column counts.
    pub index: TimeIndex,
    /// Tasks running on the CPU between `sched_switch`es (idle left empty).
    pub tasks: SliceRow,
    /// Hard IRQ handlers and softirqs, one row.
    pub irqs: SliceRow,
    /// What is not final at the lane's last event, drawn in the rows above: the task still
    /// running and the handlers still open (drawn to that event), and handlers that closed
    /// inside one still open. Kept apart because `tasks` and `irqs` only ever append.
    pub open_tasks: SliceRow,
    pub open_irqs: SliceRow,
    /// Labels of the slices; also keys their colours.
    pub labels: Vec<String>,
}

impl CpuLane {
    /// The tasks row as drawn: the final slices, then the task still running.
    pub fn task_slices(&self) -> Slices<'_> {
        Slices { done: &self.tasks, open: Some(&self.open_tasks) }
    }

    /// The IRQ row as drawn: the final slices, then those still open or closed inside one.
    pub fn irq_slices(&self) -> Slices<'_> {
        Slices { done: &self.irqs, open: Some(&self.open_irqs) }
    }
}

/// Symbols of the event and field names the slice reconstruction reads.
struct Names {
    switch: Option<Sym>,
    irq_entry: Option<Sym>,
    irq_exit: Option<Sym>,
    soft_entry: Option<Sym>,
    soft_exit: Option<Sym>,
    next_pid: Option<Sym>,
    next_comm: Option<Sym>,
    irq: Option<Sym>,
    name: Option<Sym>,
    vec: Option<Sym>,
}

impl Names {
    fn of(src: &Source) -> Self {
        let s = |n: &str| src.strings.lookup(n.as_bytes());
        Self {
            switch: s(kernel::SCHED_SWITCH.name),
            irq_entry: s(kernel::IRQ_HANDLER_ENTRY.name),
            irq_exit: s(kernel::IRQ_HANDLER_EXIT.name),
            soft_entry: s(kernel::SOFTIRQ_ENTRY.name),
            soft_exit: s(kernel::SOFTIRQ_EXIT.name),
            next_pid: s("next_pid"),
            next_comm: s("next_comm"),
            irq: s("irq"),
            name: s("name"),
            vec: s("vec"),
        }
    }
}

/// Builds labels once: one index per distinct text.
#[derive(Debug, Default)]
struct Labels {
    index: FxHashMap<String, u32>,
    list: Vec<String>,
}

impl Labels {
    fn get(&mut self, s: String) -> u32 {
        if let Some(&i) = self.index.get(&s) {
            return i;
        }
        let i = self.list.len() as u32;
        self.list.push(s.clone());
        self.index.insert(s, i);
        i
    }
}

/// Per-CPU state while walking the events.
#[derive(Debug, Default)]
struct CpuState {
    /// The lane's final part: its events and the slices that are closed for good.
    lane: CpuLane,
    /// The running task: (since, label, event).
    task: Option<(Ps, u32, u32)>,
    /// Open IRQ / softirq handlers: (since, label, event).
    irq_stack: Vec<(Ps, u32, u32)>,
    /// Handlers closed inside one still open: (since, until, label, event). They become
    /// final, in order of start, when the outermost one closes (it started before them).
    irq_nested: Vec<(Ps, Ps, u32, u32)>,
    labels: Labels,
}

impl CpuState {
    /// The lane as it stands at `end`: its final part shared, and what is still open drawn
    /// to `end`.
    fn lane(&self, end: Ps) -> Lane {
        let mut lane = self.lane.clone();
        if let Some((since, label, at)) = self.task {
            lane.open_tasks.push(since, end, label, at);
        }
        for &(since, until, label, at) in &self.irq_nested {
            lane.open_irqs.push(since, until, label, at);
        }
        for &(since, label, at) in &self.irq_stack {
            lane.open_irqs.push(since, end, label, at);
        }
        lane.open_tasks.finish();
        lane.open_irqs.finish();
        lane.labels = self.labels.list.clone();
        let cpu = lane.cpu;
        Lane { name: format!("CPU {cpu}"), kind: LaneKind::Cpu(lane), color: theme::CPU }
    }

    /// An IRQ or softirq handler ended at `t`.
    fn irq_exit(&mut self, t: Ps) {
        let Some((since, label, at)) = self.irq_stack.pop() else { return };
        self.irq_nested.push((since, t, label, at));
        if self.irq_stack.is_empty() {
            self.irq_nested.sort_by_key(|s| s.0);
            for (since, until, label, at) in self.irq_nested.drain(..) {
                self.lane.irqs.push(since, until, label, at);
            }
        }
    }
}

fn value_text(src: &Source, v: Option<FieldValue>) -> Option<String> {
    match v? {
        FieldValue::Int(i) => Some(i.to_string()),
        FieldValue::UInt(u) => Some(u.to_string()),
        FieldValue::Str(s) => Some(src.strings.resolve(s).into_owned()),
    }
}

/// The event lanes (per CPU, then per event name) of a source whose events only ever grow at
/// the end, in time order: each [`EventLanes::feed`] walks only the events added since the
/// last and indexes only what it appended, and [`EventLanes::lanes`] shares the lists, so a
/// live source's lanes cost what is new. [`prepare`] feeds a loaded source once.
#[derive(Debug, Default)]
pub struct EventLanes {
    cpus: FxHashMap<u16, CpuState>,
    by_name: FxHashMap<Sym, EventLane>,
    name_order: Vec<Sym>,
    /// Events walked so far.
    fed: usize,
}

impl EventLanes {
    /// Walks `source`'s events from the first not yet walked to its last. The events
    /// already walked must be unchanged and the new ones at or after them in time.
    pub fn feed(&mut self, source: &Source) {
        let ev = &source.events;
        if self.fed >= ev.len() {
            return;
        }
        // Looked up again each time: a growing source may intern `sched_switch` late.
        let names = Names::of(source);
        let sym_of = |n: Option<Sym>| n.unwrap_or(Sym(u32::MAX));
        for idx in self.fed..ev.len() {
            let Some(e) = ev.get(idx) else { break };
            let idx = idx as u32;
            let t = e.ts();
            let name = e.name();
            let name_order = &mut self.name_order;
            self.by_name
                .entry(name)
                .or_insert_with(|| {
                    name_order.push(name);
                    EventLane::default()
                })
                .events
                .push(idx);
            let st = self.cpus.entry(e.cpu()).or_insert_with(|| CpuState {
                lane: CpuLane { cpu: e.cpu(), ..CpuLane::default() },
                ..CpuState::default()
            });
            st.lane.events.push(idx);
            if Some(name) == names.switch {
                let pid = e.field(sym_of(names.next_pid)).and_then(FieldValue::as_i64).unwrap_or(0);
                let comm = value_text(source, e.field(sym_of(names.next_comm))).unwrap_or_default();
                if let Some((since, label, at)) = st.task.take() {
                    st.lane.tasks.push(since, t, label, at);
                }
                if pid != 0 {
                    let label = st.labels.get(format!("{comm}-{pid}"));
                    st.task = Some((t, label, idx));
                }
            } else if Some(name) == names.irq_entry {
                let irq = value_text(source, e.field(sym_of(names.irq))).unwrap_or_default();
                let text = match value_text(source, e.field(sym_of(names.name))) {
                    Some(n) => format!("irq {irq} {n}"),
                    None => format!("irq {irq}"),
                };
                let label = st.labels.get(text);
                st.irq_stack.push((t, label, idx));
            } else if Some(name) == names.soft_entry {
                let vec = e.field(sym_of(names.vec)).and_then(FieldValue::as_i64).unwrap_or(-1);
                let text = match latscope_model::kernel::softirq_name(vec as u64) {
                    Some(n) => format!("softirq {n}"),
                    None => format!("softirq {vec}"),
                };
                let label = st.labels.get(text);
                st.irq_stack.push((t, label, idx));
            } else if Some(name) == names.irq_exit || Some(name) == names.soft_exit {
                st.irq_exit(t);
            }
        }
        self.fed = ev.len();
        for st in self.cpus.values_mut() {
            st.lane.tasks.finish();
            st.lane.irqs.finish();
            index_new(&mut st.lane.index, &st.lane.events, ev);
        }
        for lane in self.by_name.values_mut() {
            index_new(&mut lane.index, &lane.events, ev);
        }
    }

    /// The lanes of the events walked so far: per CPU, then per event name. Their lists are
    /// shared with this walk, which goes on appending past them.
    pub fn lanes(&self, source: &Source) -> Vec<Lane> {
        let ev = &source.events;
        // Still running at the last event walked: drawn to it.
        let end = self.fed.checked_sub(1).and_then(|i| ev.ts.get(i)).copied().unwrap_or(0);
        let mut cpus: Vec<&CpuState> = self.cpus.values().collect();
        cpus.sort_by_key(|s| s.lane.cpu);
        let mut lanes: Vec<Lane> = cpus.into_iter().map(|st| st.lane(end)).collect();
        for name in &self.name_order {
            let Some(lane) = self.by_name.get(name) else { continue };
            let text = source.strings.resolve(*name).into_owned();
            lanes.push(Lane {
                color: theme::color_for(&text),
                name: text,
                kind: LaneKind::Events(lane.clone()),
            });
        }
        lanes
    }
}

/// Builds every lane of `source`. Event lanes come first (per CPU, then per event name), then
/// digital, analog and span tracks, in the source's order.
pub fn prepare(source: Source) -> Prepared {
    let mut events = EventLanes::default();
    events.feed(&source);
    let lanes = events.lanes(&source);
    with_track_lanes(source, lanes)
}

/// `source` with `lanes` (its event lanes, from [`EventLanes`]) and the lanes of its digital,
/// analog and span tracks after them.
pub fn with_track_lanes(source: Source, lanes: Vec<Lane>) -> Prepared {
    let pyramids = source.digital.iter().map(|d| MinMaxPyramid::new(d.levels())).collect();
    with_pyramids(source, lanes, pyramids)
}

/// [`with_track_lanes`], given the level pyramid of each digital track (a live source grows
/// them as its tracks grow).
pub fn with_pyramids(source: Source, mut lanes: Vec<Lane>, pyramids: Vec<MinMaxPyramid>) -> Prepared {
    for (track, (d, pyramid)) in source.digital.iter().zip(pyramids).enumerate() {
        lanes.push(digital_lane_with(track, d, pyramid));
    }
    for (i, a) in source.analog.iter().enumerate() {
        let (lo, hi) = a.min_max(0, a.samples.len()).unwrap_or((0.0, 1.0));
        lanes.push(Lane {
            name: if a.unit.is_empty() { a.name.clone() } else { format!("{} [{}]", a.name, a.unit) },
            kind: LaneKind::Analog { track: i, lo, hi },
            color: theme::ANALOG,
        });
    }
    for (i, s) in source.spans.iter().enumerate() {
        let mut labels = Labels::default();
        let mut rows: Vec<SliceRow> = Vec::new();
        for k in 0..s.len() {
            let depth = usize::from(s.depth[k]);
            if rows.len() <= depth {
                rows.resize_with(depth + 1, SliceRow::default);
            }
            let label = labels.get(source.strings.resolve(s.label[k]).into_owned());
            rows[depth].push(s.start[k], s.end[k], label, u32::MAX);
        }
        rows.iter_mut().for_each(SliceRow::finish);
        lanes.push(Lane {
            color: theme::color_for(&s.name),
            name: s.name.clone(),
            kind: LaneKind::Spans { track: i, rows, labels: labels.list },
        });
    }
    Prepared { source, lanes }
}

/// Where the next (`forward`) or previous edge/event of a lane is, after/before `t`
/// (source-relative ps).
pub fn step_edge(lane: &Lane, src: &Source, t: Ps, forward: bool) -> Option<(Ps, Option<usize>)> {
    let pick = |times: &[Ps]| -> Option<usize> {
        if forward {
            let i = times.partition_point(|&x| x <= t);
            (i < times.len()).then_some(i)
        } else {
            times.partition_point(|&x| x < t).checked_sub(1)
        }
    };
    let events = |ev: &[u32]| -> Option<(Ps, Option<usize>)> {
        let ts = &src.events.ts;
        let i = if forward {
            lod::lower_bound(ev.len(), |i| ts[ev[i] as usize] <= t)
        } else {
            lod::lower_bound(ev.len(), |i| ts[ev[i] as usize] < t).checked_sub(1)?
        };
        let e = *ev.get(i)? as usize;
        Some((ts[e], Some(e)))
    };
    match &lane.kind {
        LaneKind::Cpu(c) => events(&c.events),
        LaneKind::Events(e) => events(&e.events),
        LaneKind::Digital { track, .. } => {
            let d = src.digital.get(*track)?;
            let i = if forward {
                Some(d.changes_until(t)).filter(|&i| i < d.transitions())
            } else {
                d.changes_before(t).checked_sub(1)
            };
            i.map(|i| (d.time(i), None))
        }
        LaneKind::Spans { rows, .. } => {
            let mut best: Option<Ps> = None;
            for r in rows {
                if let Some(i) = pick(&r.start) {
                    let s = r.start[i];
                    best = Some(match best {
                        Some(b) if forward => b.min(s),
                        Some(b) => b.max(s),
                        None => s,
                    });
                }
            }
            best.map(|b| (b, None))
        }
        LaneKind::Analog { .. } => None,
    }
}

//! The work of the longer background jobs: loading a file, filtering the event table, the
//! live simulator and a recording. The job runner ([`super::jobs`]) starts them on their threads and
//! judges their answers; the UI thread never waits on any of them.

use super::document::SourceId;
use super::jobs::{JobContext, JobKind, JobRunner, Ticket};
use super::lod::MinMaxPyramid;
use super::message::{FileMsg, JobResult, Message, RecordMsg, SimMsg};
use super::prepare::{EventLanes, Prepared, prepare, with_pyramids, with_track_lanes};
use super::record::{Asked, RecordEnd};
use super::sim::{SimCommand, SimHandle};
use super::table::{Row, TableSort};
use latscope_importers::LoadControl;
use latscope_model::{
    ClockOrigin, DigitalTrack, EventTable, EventTableBuilder, FieldKind, FieldValue, Filter, Placement, Ps,
    Source, SourceKind, Sym,
};
use latscope_record::Live;
use latscope_shared::SharedVec;
use latscope_sim::simulation::BatchEvent;
use latscope_sim::{Batch, Simulation, Speed};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{TryRecvError, channel};
use std::time::{Duration, Instant};

/// Imports `path` and builds its lanes (the load job's work).
pub fn load(path: &Path, ctl: &LoadControl) -> JobResult<Arc<Prepared>> {
    Ok(latscope_engine::open(path, ctl).map(|source| Arc::new(prepare(source)))?)
}

/// Where the importer's previews of `path` (source `id`) go while it loads: prepared here,
/// on the load's thread, and sent to the window (`FileMsg::Preview`).
pub fn preview_sink(cx: &JobContext<Message>, id: SourceId, path: &Path) -> latscope_importers::PreviewSink {
    let (outbox, ticket) = (cx.outbox.clone(), cx.ticket);
    let name =
        path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
    let path = path.to_owned();
    Arc::new(move |mut source: Source| {
        source.name = name.clone();
        source.path = Some(path.clone());
        outbox.send(FileMsg::Preview { ticket, id, prepared: Arc::new(prepare(source)) }.into());
    })
}

/// A source the table lists: its id, its data and placement.
pub type TableSource = (SourceId, Arc<Prepared>, Placement);

/// What an earlier answer to the same question (same sources, filter and time order) lets
/// a query skip: its rows, as the handle that may append to them in place, and each
/// source's events as that answer read them.
#[derive(Debug)]
pub struct Earlier {
    pub rows: SharedVec<Row>,
    pub read: Vec<EventTable>,
}

/// A table query's answer: the rows, and each source's events as it read them (clones that
/// share the columns' memory, so a later query can tell whether the sources only grew).
#[derive(Debug)]
pub struct Listed {
    pub rows: SharedVec<Row>,
    pub read: Vec<EventTable>,
}

/// Filters and sorts the events of `sources` for the table (and search): the rows, in
/// common-timeline order (then by the sort's column), or `None` when the job was cancelled
/// (a newer query supersedes it). The filter is the model's: terms ANDed, `field=value`,
/// `field~text`, quoted phrases, `-term` (see [`Filter`]).
///
/// A decoded annotation is one row, at its start: the `…_end` event a decode adds at its
/// end is listed only when `annotation_ends` (the filter names such an event).
///
/// A live source grows at every snapshot. When `earlier` answered the same question in
/// time order and every source only grew since ([`EventTable::extends`]), only the new
/// events are read and their rows appended, in place: a snapshot's query then costs what
/// is new. Rows that would land before the earlier ones on the common timeline (another
/// source placed later) make it list everything again.
pub fn table_rows(
    sources: &[TableSource],
    filter: &Filter,
    sort: TableSort,
    annotation_ends: bool,
    ctl: &LoadControl,
    earlier: Option<Earlier>,
) -> Option<Listed> {
    let read: Vec<EventTable> = sources.iter().map(|(_, p, _)| p.source.events.clone()).collect();
    if let Some(e) = earlier
        && sort == TableSort::Time
        && e.read.len() == sources.len()
        && sources.iter().zip(&e.read).all(|((_, p, _), r)| p.source.events.extends(r))
    {
        let mut new = Vec::new();
        for (s, r) in sources.iter().zip(&e.read) {
            list_rows(s, r.len(), filter, annotation_ends, ctl, &mut new)?;
        }
        in_time_order(sources, &mut new, ctl)?;
        let key = |r: &Row| (row_time(sources, r), sources.iter().position(|s| s.0 == r.source));
        let follows = match (e.rows.last(), new.first()) {
            (Some(l), Some(f)) => {
                let (l, f) = (key(l), key(f));
                l.0.total_cmp(&f.0).then(l.1.cmp(&f.1)).is_le()
            }
            _ => true,
        };
        if follows {
            let mut rows = e.rows;
            rows.extend_from_slice(&new);
            return Some(Listed { rows, read });
        }
    }
    let mut rows: Vec<Row> = Vec::new();
    for s in sources {
        list_rows(s, 0, filter, annotation_ends, ctl, &mut rows)?;
    }
    in_time_order(sources, &mut rows, ctl)?;
    let of = |r: &Row| sources.iter().find(|s| s.0 == r.source);
    let event = |r: &Row| of(r).and_then(|(_, p, _)| p.source.events.get(r.index as usize).map(|e| (p, e)));
    let name = |r: &Row| event(r).map(|(p, e)| p.source.strings.resolve(e.name()).into_owned());
    let task = |r: &Row| event(r).map(|(p, e)| p.source.strings.resolve(e.comm()).into_owned());
    match sort {
        TableSort::Time => {}
        TableSort::Cpu => rows.sort_by_key(|r| event(r).map(|(_, e)| e.cpu())),
        TableSort::Name => rows.sort_by_cached_key(name),
        TableSort::Task => rows.sort_by_cached_key(task),
    }
    Some(Listed { rows: rows.into(), read })
}

/// The rows of source `s`'s events from `from` on that `filter` lists, appended to `rows`
/// in the source's order; `None` when cancelled.
fn list_rows(
    s: &TableSource,
    from: usize,
    filter: &Filter,
    annotation_ends: bool,
    ctl: &LoadControl,
    rows: &mut Vec<Row>,
) -> Option<()> {
    let (si, prepared, _) = s;
    let src = &prepared.source;
    let n = src.events.len();
    let ends: Vec<latscope_model::Sym> = if annotation_ends {
        Vec::new()
    } else {
        crate::gui::decoder_dialog::decoded_event_lanes(prepared)
            .iter()
            .filter(|name| name.ends_with("_end"))
            .filter_map(|name| src.strings.lookup(name.as_bytes()))
            .collect()
    };
    rows.reserve(if filter.is_empty() { n.saturating_sub(from) } else { 0 });
    for i in from..n {
        if i % 65_536 == 0 && ctl.is_cancelled() {
            return None;
        }
        if !ends.is_empty() && src.events.get(i).is_some_and(|e| ends.contains(&e.name())) {
            continue;
        }
        if filter.is_empty() || filter.matches(src, i) {
            rows.push(Row { source: *si, index: i as u32 });
        }
    }
    Some(())
}

/// Row `r`'s time on the common timeline (`f64::MAX` for a row of no listed source).
fn row_time(sources: &[TableSource], r: &Row) -> f64 {
    sources
        .iter()
        .find(|s| s.0 == r.source)
        .and_then(|(_, p, at)| p.source.events.ts.get(r.index as usize).map(|&t| at.to_common_f64(t)))
        .unwrap_or(f64::MAX)
}

/// Puts rows listed source by source in common-timeline order: each source's rows are in
/// time order, and together they interleave (ties: the source listed first). `None` when
/// cancelled.
fn in_time_order(sources: &[TableSource], rows: &mut Vec<Row>, ctl: &LoadControl) -> Option<()> {
    if sources.len() <= 1 {
        return Some(());
    }
    let mut keyed: Vec<(f64, Row)> = rows.iter().map(|r| (row_time(sources, r), *r)).collect();
    if ctl.is_cancelled() {
        return None;
    }
    keyed.sort_by(|a, b| a.0.total_cmp(&b.0));
    *rows = keyed.into_iter().map(|k| k.1).collect();
    Some(())
}

/// Keeps a growing source from the simulator's batches, in time order, and its event lanes.
///
/// Events arrive in emission order, and a model may emit a little ahead of its clock, so an
/// event becomes final only once the clock has passed it: it is then appended in time order
/// and walked into the lanes ([`EventLanes`]) once. A snapshot shares the table's columns,
/// the lane lists, the digital tracks and their indexes, which only ever append past what
/// it reads (`SharedVec`): it costs what is new (measured by `examples/live_snapshot.rs`).
/// An event that arrives behind one already final is placed by sorting the table again and
/// walking it anew, and counted in [`Accumulator::reorders`].
#[derive(Debug, Default)]
pub struct Accumulator {
    /// Final events, in time order (stable: equal times keep their arrival order).
    b: EventTableBuilder,
    /// Simulator symbol -> ours (the same string table, rebuilt on this side).
    syms: Vec<Sym>,
    /// Events not final yet (at or after the clock), symbols mapped, in arrival order.
    pending: Vec<BatchEvent>,
    lanes: EventLanes,
    /// Final edges, sorted by (time, line), and the not-yet-final ones.
    edges: Vec<(Ps, u16, u8)>,
    pending_edges: Vec<(Ps, u16, u8)>,
    /// The digital tracks of the final edges (the first `edges_in_tracks`), with their
    /// level pyramids: snapshots share them.
    tracks: Vec<(DigitalTrack, MinMaxPyramid)>,
    edges_in_tracks: usize,
    /// The simulator's clock: what is before it is final.
    now: Ps,
    events: usize,
    reorders: usize,
}

impl Accumulator {
    /// Events received so far.
    pub fn events(&self) -> usize {
        self.events
    }

    /// Events that arrived behind a final one, so the table was sorted and walked again.
    pub fn reorders(&self) -> usize {
        self.reorders
    }

    pub fn add(&mut self, batch: Batch) {
        let first = batch.first_sym as usize;
        if self.syms.len() < first {
            self.syms.resize(first, Sym(0));
        }
        self.syms.truncate(first);
        for s in &batch.strings {
            let sym = self.b.intern(s.as_bytes());
            self.syms.push(sym);
        }
        let syms = &self.syms;
        let map = |s: Sym| syms.get(s.0 as usize).copied().unwrap_or(s);
        self.events += batch.events.len();
        self.pending.extend(batch.events.into_iter().map(|mut e| {
            e.name = map(e.name);
            e.comm = map(e.comm);
            for (n, v) in &mut e.fields {
                *n = map(*n);
                if let FieldValue::Str(s) = v {
                    *s = map(*s);
                }
            }
            e
        }));
        self.pending_edges.extend(batch.edges);
        self.now = self.now.max(batch.now);
        self.place(Some(self.now));
    }

    /// Appends the pending events and edges before `upto` (all with `None`) in time order.
    fn place(&mut self, upto: Option<Ps>) {
        let before = |t: Ps| upto.is_none_or(|u| t < u);
        let last = self.b.table().ts.last().copied();
        let (ready, late) = take_final(&mut self.pending, |e| e.ts, |e| before(e.ts), last);
        let mut kinds: Vec<(Sym, FieldKind)> = Vec::new();
        let mut values: Vec<FieldValue> = Vec::new();
        for e in ready {
            kinds.clear();
            values.clear();
            for (n, v) in e.fields {
                kinds.push((n, v.kind()));
                values.push(v);
            }
            let layout = self.b.layout(e.name, &kinds);
            self.b.push(e.ts, e.cpu, e.pid, e.comm, e.flags, layout, &values);
        }
        if late {
            self.reorders += 1;
            let mut table = self.b.table().clone();
            table.sort_by_time();
            self.b = EventTableBuilder::from_table(table, self.b.interner.clone());
            self.lanes = EventLanes::default();
        }
        let last = self.edges.last().map(|e| (e.0, e.1));
        let (ready, late) = take_final(&mut self.pending_edges, |e| (e.0, e.1), |e| before(e.0), last);
        self.edges.extend(ready);
        if late {
            self.edges.sort_by_key(|e| (e.0, e.1));
            self.tracks.clear();
            self.edges_in_tracks = 0;
        }
    }

    /// At the end of a run: every event is final, and the trace ends where its last record
    /// does. A pulse begun before the simulator's clock stopped ends after it (a command
    /// issued at 38.9 ms completes at 42.3 ms), and the panel's time and the analysed range
    /// must name the same end.
    fn settle(&mut self) {
        self.place(None);
        let last_edge = self.edges.last().map(|e| e.0);
        let last_event = self.b.table().ts.last().copied();
        self.now = self.now.max(last_edge.unwrap_or(Ps::MIN)).max(last_event.unwrap_or(Ps::MIN));
    }

    /// The source so far, with its lanes: the final events and edges (before the clock).
    pub fn snapshot(&mut self, name: &str, lines: &[String]) -> Prepared {
        let mut src = Source::new(name, "simulator", SourceKind::Simulator);
        // Same clock as `latscope sim` writes: the trace starts at 100 s.
        src.origin = ClockOrigin::from_secs_ps(100, 0);
        // Shared, not copied: the builder appends past what the snapshot reads.
        src.events = self.b.table().clone();
        src.strings = self.b.interner.clone();
        if self.tracks.len() != lines.len() {
            self.tracks =
                lines.iter().map(|n| (DigitalTrack::new(n.clone(), 0), MinMaxPyramid::default())).collect();
            self.edges_in_tracks = 0;
        }
        for &(t, line, level) in &self.edges[self.edges_in_tracks..] {
            if let Some((d, _)) = self.tracks.get_mut(usize::from(line)) {
                d.push(t, level);
            }
        }
        self.edges_in_tracks = self.edges.len();
        let mut pyramids = Vec::with_capacity(self.tracks.len());
        let mut tracks = Vec::with_capacity(self.tracks.len());
        for (d, pyramid) in &mut self.tracks {
            pyramid.extend(d.levels());
            pyramids.push(pyramid.clone());
            let mut d = d.clone();
            d.end = d.end.max(self.now);
            tracks.push(d);
        }
        src.digital = tracks.into();
        self.lanes.feed(&src);
        let lanes = self.lanes.lanes(&src);
        with_pyramids(src, lanes, pyramids)
    }
}

/// Sorts `pending` stably by `key` (nearly sorted already: one merge pass) and takes out
/// its items that are final (`is_final`: a prefix, once sorted), with whether the first of
/// them sorts before `last`, the last item already final: the final list must then be
/// sorted again.
fn take_final<T, K: Ord>(
    pending: &mut Vec<T>,
    key: impl Fn(&T) -> K,
    is_final: impl Fn(&T) -> bool,
    last: Option<K>,
) -> (std::vec::Drain<'_, T>, bool) {
    pending.sort_by_key(&key);
    let ready = pending.partition_point(is_final);
    let late = ready > 0 && last.is_some_and(|l| key(&pending[0]) < l);
    (pending.drain(..ready), late)
}

/// How often the live view gets a new snapshot of the growing trace.
const SNAPSHOT_EVERY: Duration = Duration::from_millis(200);

/// Starts a live simulator run as a job; snapshots arrive as `Message::Sim(SimMsg::Snapshot)`.
pub fn simulate(
    jobs: &mut JobRunner<Message>,
    scenario: latscope_sim::Scenario,
    speed: Option<f64>,
) -> Option<SimHandle> {
    let (tx, rx) = channel::<SimCommand>();
    let name = scenario.name.clone();
    let mut sim = match Simulation::new(scenario) {
        Ok(s) => s,
        Err(e) => {
            jobs.outbox().send(Message::Sim(SimMsg::Failed(e.into())));
            return None;
        }
    };
    let (btx, brx) = channel::<Batch>();
    sim.attach(btx);
    sim.set_speed(speed.map_or(Speed::Max, Speed::RealTime));
    let ticket = jobs.spawn(JobKind::Simulator, None, move |cx: JobContext<Message>| {
        let run = cx.ticket;
        let mut acc = Accumulator::default();
        let mut last = Instant::now() - SNAPSHOT_EVERY;
        let mut dirty = true;
        loop {
            let finished = sim.is_finished();
            // Commands: poll while running, block when there is nothing else to do.
            let cmd = if finished && !dirty {
                rx.recv().map_err(|_| TryRecvError::Disconnected)
            } else {
                rx.try_recv()
            };
            match cmd {
                Ok(SimCommand::Play) => sim.resume(),
                Ok(SimCommand::Pause) => sim.pause(),
                Ok(SimCommand::Step) => {
                    sim.step();
                }
                Ok(SimCommand::Speed(s)) => sim.set_speed(s.map_or(Speed::Max, Speed::RealTime)),
                Ok(SimCommand::Stop | SimCommand::Start { .. }) | Err(TryRecvError::Disconnected) => {
                    return;
                }
                Err(TryRecvError::Empty) => {}
            }
            let worked = if finished { 0 } else { sim.tick(50_000) };
            while let Ok(batch) = brx.try_recv() {
                dirty |= !batch.events.is_empty() || !batch.edges.is_empty() || batch.now != acc.now;
                acc.add(batch);
            }
            let finished = sim.is_finished();
            if dirty && (finished || last.elapsed() >= SNAPSHOT_EVERY) {
                if finished {
                    acc.settle();
                }
                let prepared = acc.snapshot(&name, &sim.line_names());
                // The snapshot's count, as its table lists them: events ahead of the clock
                // are not in it yet.
                let events = prepared.source.events.len();
                cx.send(Message::Sim(SimMsg::Snapshot {
                    ticket: run,
                    prepared: Arc::new(prepared),
                    now: acc.now,
                    events,
                    finished,
                    reorders: acc.reorders(),
                }));
                last = Instant::now();
                dirty = false;
                if finished {
                    // The run is over: measure it (this consumes the simulation; later
                    // commands find the worker gone, which is what a finished run means).
                    let metrics = sim.finish().map(|o| o.report.metrics.0).map_err(anyhow::Error::from);
                    cx.send(Message::Sim(SimMsg::Metrics { ticket: run, metrics }));
                    return;
                }
            }
            if worked == 0 && !finished {
                std::thread::sleep(sim.idle_hint().max(Duration::from_millis(5)));
            }
        }
    });
    Some(SimHandle { ticket, commands: tx })
}

/// Starts a recording (`asked`, checked by the recorder's plan) as a job: its live lines
/// and crossings arrive as `RecordMsg::Live`, what it has recorded as `RecordMsg::Snapshot`
/// once a tick (the kernel's events final so far, their lanes walked here where the last
/// walk stopped, off the UI thread), and its
/// end as `RecordMsg::Ended`. `stop` ends it as Ctrl-C ends `latscope record`.
///
/// The receiver hangs up once the work has returned (tracefs put back), so a window that
/// closes can wait for it.
pub fn record(
    jobs: &mut JobRunner<Message>,
    asked: Asked,
    stop: Arc<AtomicBool>,
) -> (Ticket, std::sync::mpsc::Receiver<()>) {
    let (done, finished) = channel::<()>();
    let ticket = jobs.spawn(JobKind::Record, None, move |cx: JobContext<Message>| {
        let _done = done;
        let ticket = cx.ticket;
        let result = record_work(&cx, asked, stop);
        cx.send(RecordMsg::Ended { ticket, result });
    });
    (ticket, finished)
}

fn record_work(cx: &JobContext<Message>, asked: Asked, stop: Arc<AtomicBool>) -> JobResult<RecordEnd> {
    let ticket = cx.ticket;
    let Asked { request, sigrok, kernel } = asked;
    if !kernel && let Some(spec) = sigrok {
        return record_logic_work(cx, spec, &request, stop);
    }
    let mut opts = latscope_record::plan(&request)?;
    opts.stop = Some(stop);
    // A logic analyzer beside the kernel joins the timeline as it records.
    opts.show_logic = true;
    let name = match &opts.ssh {
        Some(host) => format!("kernel of {host} (recording)"),
        None => "kernel (recording)".to_owned(),
    };
    let mut live = |l: &Live| cx.send(RecordMsg::Live { ticket, live: l.clone() });
    // The recorder's growing source appends: its lanes walk only what each tick adds,
    // and are walked anew when the source starts again (a ring) or at the end.
    let mut lanes = EventLanes::default();
    let mut logic = LogicGrowth::default();
    let mut snapshot = |snap: latscope_record::Snapshot| match snap {
        latscope_record::Snapshot::Kernel(mut source, continues) => {
            source.name = name.clone();
            if !continues {
                lanes = EventLanes::default();
            }
            lanes.feed(&source);
            let walked = lanes.lanes(&source);
            cx.send(RecordMsg::Snapshot { ticket, prepared: Arc::new(with_track_lanes(source, walked)) });
        }
        latscope_record::Snapshot::Logic { mut source, offset_ps, placed_by, generation } => {
            source.name = "logic (recording)".to_owned();
            let prepared = Arc::new(logic.prepare(source, generation));
            cx.send(RecordMsg::LogicSnapshot { ticket, prepared, offset_ps, placed_by });
        }
    };
    let rec = latscope_record::record_with(&opts, &mut live, &mut snapshot)?;
    let mut saved: Vec<PathBuf> = rec.saved.iter().map(|s| s.dir.clone()).collect();
    if opts.windows_dir.is_none()
        && let Some(out) = &request.output
    {
        rec.save(out, &opts.spec_texts)?;
        saved.push(out.clone());
    }
    let mut logic_placed = None;
    let mut warnings = rec.notes.clone();
    if let Some(logic) = &rec.logic
        && let Some((offset_ps, placed_by)) = rec.logic_offset()?
    {
        // The logic capture joins the timeline where the host's clock puts it beside the
        // kernel: saved in the folder, else in the temporary directory, and opened from there.
        let path = match (&request.output, opts.windows_dir.is_none()) {
            (Some(out), true) => out.join("logic.sr"),
            _ => {
                let tmp = temporary_logic_path(ticket);
                cx.send(RecordMsg::Temporary(tmp.clone()));
                logic.save(&tmp)?;
                tmp
            }
        };
        let mut source = latscope_engine::open(&path, &cx.control)?;
        warnings.extend(importer_warnings(&path, &source));
        source.name = "logic (recording)".to_owned();
        source.path = Some(path);
        attach_stream_decode(&mut source, logic)?;
        cx.send(RecordMsg::Logic {
            ticket,
            prepared: Arc::new(prepare(source)),
            offset_ps,
            placed_by: placed_by.clone(),
        });
        logic_placed = Some(placed_by);
    }
    if let latscope_record::Stopped::Failed(why) = &rec.stopped {
        anyhow::bail!("the recording stopped early: {why} (what arrived before was kept)");
    }
    Ok(RecordEnd {
        how: rec.stopped.describe(),
        events: rec.events,
        counted: "events",
        lost: rec.lost,
        saved,
        crossings: rec.crossings,
        unrestored: rec.unrestored,
        logic_placed,
        warnings,
    })
}

/// A recording's logic channels as they grow: each track's level pyramid grows with it;
/// tracks that forgot their oldest changes (a ring) are summed up anew.
#[derive(Default)]
struct LogicGrowth {
    pyramids: Vec<MinMaxPyramid>,
    generation: Option<u64>,
}

impl LogicGrowth {
    /// `source` (the tracks so far, of `generation`) prepared to be drawn.
    fn prepare(&mut self, source: Source, generation: u64) -> Prepared {
        if self.generation != Some(generation) || self.pyramids.len() != source.digital.len() {
            self.pyramids = vec![MinMaxPyramid::default(); source.digital.len()];
            self.generation = Some(generation);
        }
        for (d, pyramid) in source.digital.iter().zip(&mut self.pyramids) {
            pyramid.extend(d.levels());
        }
        with_pyramids(source, Vec::new(), self.pyramids.clone())
    }
}

/// Where recording `ticket` writes its logic capture when no path was given: the workbench
/// is told before it is written (`RecordMsg::Temporary`) and removes it on exit.
fn temporary_logic_path(ticket: Ticket) -> PathBuf {
    std::env::temp_dir().join(format!("latscope-logic-{}-{}.sr", std::process::id(), ticket.id))
}

/// The importer's warnings about the capture at `path`, each naming it.
fn importer_warnings(path: &Path, source: &Source) -> Vec<String> {
    source.diagnostics.warnings.iter().map(|w| format!("{}: {w}", path.display())).collect()
}

/// Adds the decode a recording made of its logic analyzer's stream to `source`, the saved
/// capture opened: as it was made, so the file is not decoded again, unless a ring kept the
/// end only (the stream's annotations count from the recording's start, the file's from its
/// first sample kept): then the file is decoded.
fn attach_stream_decode(source: &mut Source, logic: &latscope_record::sigrok::Logic) -> anyhow::Result<()> {
    if logic.decoded.is_empty() {
        return Ok(());
    }
    let specs: Vec<String> = logic.decoded.iter().map(|(s, _)| s.clone()).collect();
    if logic.first_sample == 0 {
        let decoded = latscope_engine::decode::merged(logic.decoded.iter().map(|(_, d)| d.clone()).collect());
        latscope_engine::decode::attach(source, &decoded, &specs)?;
    } else {
        latscope_engine::decode::decode_into(&latscope_engine::Registry::native(), source, &specs)?;
    }
    Ok(())
}

/// A logic analyzer alone: recorded until Stop or the duration, saved as a sigrok session
/// (at the form's path, else in the temporary directory) and opened from it.
fn record_logic_work(
    cx: &JobContext<Message>,
    spec: latscope_record::sigrok::SigrokSpec,
    request: &latscope_record::Request,
    stop: Arc<AtomicBool>,
) -> JobResult<RecordEnd> {
    let ticket = cx.ticket;
    // Alone, the presets and rules read what the decoders find on the stream; the flight
    // recorder saves windows of samples. Checked as `latscope record` checks them.
    let mut opts = latscope_record::plan::plan_logic(request)?;
    opts.stop = Some(stop);
    let windows = opts.windows_dir.is_some();
    let decoders = spec.decoders.clone();
    // Its channels grow on the timeline once a line, as the recording's source.
    opts.show_logic = true;
    let mut live = |l: &Live| cx.send(RecordMsg::Live { ticket, live: l.clone() });
    let mut growth = LogicGrowth::default();
    let mut snapshot = |snap: latscope_record::Snapshot| {
        if let latscope_record::Snapshot::Logic { mut source, generation, .. } = snap {
            source.name = "logic (recording)".to_owned();
            cx.send(RecordMsg::Snapshot { ticket, prepared: Arc::new(growth.prepare(source, generation)) });
        }
    };
    let (logic, end) = latscope_record::sigrok::record_logic_with(spec, &opts, &mut live, &mut snapshot)?;
    let stopped = end.stopped;
    // What is opened: the capture saved, or the samples kept (in the temporary directory).
    let (out, mut saved) = match &request.output {
        Some(o) if !windows && o.extension().is_some_and(|e| e == "sr") => {
            logic.save(o)?;
            (o.clone(), vec![o.clone()])
        }
        Some(o) if !windows => {
            logic.save_folder(o, &decoders, &request.spec_texts, None)?;
            (o.join("logic.sr"), vec![o.clone()])
        }
        _ => {
            let tmp = temporary_logic_path(ticket);
            cx.send(RecordMsg::Temporary(tmp.clone()));
            logic.save(&tmp)?;
            (tmp, Vec::new())
        }
    };
    saved.extend(end.saved.iter().map(|s| s.dir.clone()));
    let mut source = latscope_engine::open(&out, &cx.control)?;
    let warnings = importer_warnings(&out, &source);
    source.name = out.file_name().map_or_else(|| "logic".to_owned(), |n| n.to_string_lossy().into_owned());
    source.path = Some(out.clone());
    attach_stream_decode(&mut source, &logic)?;
    cx.send(RecordMsg::Snapshot { ticket, prepared: Arc::new(prepare(source)) });
    if let latscope_record::Stopped::Failed(why) = &stopped {
        anyhow::bail!(
            "the recording stopped early: {why} (what arrived before was kept in {})",
            out.display()
        );
    }
    Ok(RecordEnd {
        how: stopped.describe(),
        events: logic.first_sample + logic.samples() as u64,
        counted: "samples",
        lost: 0,
        saved,
        crossings: end.crossings,
        unrestored: None,
        logic_placed: None,
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gui::prepare::LaneKind;
    use latscope_sim::Simulation;

    /// Each event as text, its symbols resolved: two tables with their own interners compare.
    fn rows(src: &Source) -> Vec<String> {
        let text = |s: Sym| src.strings.resolve(s).into_owned();
        src.events
            .iter()
            .map(|e| {
                let fields: Vec<String> = e
                    .fields()
                    .map(|(n, v)| match v {
                        FieldValue::Str(s) => format!("{}={}", text(n), text(s)),
                        other => format!("{}={other:?}", text(n)),
                    })
                    .collect();
                format!("{} {} {} {} {} {fields:?}", e.ts(), e.cpu(), e.pid(), text(e.comm()), text(e.name()))
            })
            .collect()
    }

    /// Every event lane's time index answers as a binary search over the lane's times.
    fn assert_lane_indexes_answer(p: &Prepared) {
        let ts = &p.source.events.ts;
        for lane in &p.lanes {
            let (events, index) = match &lane.kind {
                LaneKind::Cpu(c) => (&c.events, &c.index),
                LaneKind::Events(e) => (&e.events, &e.index),
                _ => continue,
            };
            let time = |i: usize| ts[events[i] as usize];
            let n = events.len();
            for i in (0..n).step_by((n / 100).max(1)) {
                for t in [time(i) - 1, time(i), time(i) + 1] {
                    let plain = crate::gui::lod::lower_bound(n, |k| time(k) < t);
                    assert_eq!(index.lower_bound(n, time, t), plain, "lane {} at {t}", lane.name);
                }
            }
        }
    }

    /// A run fed to the accumulator batch by batch, as the window's job feeds it: every
    /// snapshot holds exactly the finished run's events before the clock, in its order, and
    /// its lanes are what a whole `prepare` of those events builds; the settled snapshot holds
    /// all of them. Nothing arrived behind a final event, so nothing was sorted again.
    #[test]
    fn snapshots_grow_in_order_and_equal_a_whole_prepare() {
        for scenario in ["litesdcard", "axienet-napi"] {
            let sc = latscope_sim::prepare(scenario, &[], None, Some("1s")).expect("a built-in scenario");
            let whole = latscope_sim::run(sc.clone()).expect("the run").source;
            let whole_rows = rows(&whole);
            let mut sim = Simulation::new(sc).expect("the simulation");
            let (tx, rx) = channel::<Batch>();
            sim.attach(tx);
            sim.set_speed(Speed::Max);
            let lines = sim.line_names();
            let mut acc = Accumulator::default();
            let mut snapshots = 0;
            let check = |acc: &mut Accumulator, settled: bool| {
                let snap = acc.snapshot(scenario, &lines);
                let got = rows(&snap.source);
                let expect: Vec<&String> = if settled {
                    whole_rows.iter().collect()
                } else {
                    let before = whole.events.lower_bound(acc.now);
                    whole_rows[..before].iter().collect()
                };
                assert_eq!(got.iter().collect::<Vec<_>>(), expect, "{scenario} at {} ps", acc.now);
                let again = prepare(snap.source.clone());
                assert_eq!(
                    format!("{:?}", snap.lanes),
                    format!("{:?}", again.lanes),
                    "{scenario} at {} ps",
                    acc.now
                );
                assert_lane_indexes_answer(&snap);
                // Nothing was copied: the snapshot reads the accumulator's own columns.
                assert!(snap.source.events.shares_memory_with(acc.b.table()));
                (got, snap)
            };
            let mut shown = Vec::new();
            // Earlier snapshots, still held (as the window and its jobs hold them) while the
            // accumulator appends to the memory they share.
            let mut held = Vec::new();
            while !sim.is_finished() {
                sim.tick(40);
                while let Ok(b) = rx.try_recv() {
                    acc.add(b);
                }
                snapshots += 1;
                if snapshots % 4 == 1 {
                    let (got, snap) = check(&mut acc, false);
                    shown.push(got.len());
                    held.push((got, format!("{:?}", snap.lanes), snap));
                }
            }
            while let Ok(b) = rx.try_recv() {
                acc.add(b);
            }
            acc.settle();
            shown.push(check(&mut acc, true).0.len());
            for (got, lanes, snap) in &held {
                assert_eq!(&rows(&snap.source), got, "{scenario}: a held snapshot changed");
                assert_eq!(
                    &format!("{:?}", snap.lanes),
                    lanes,
                    "{scenario}: a held snapshot's lanes changed"
                );
                assert_lane_indexes_answer(snap);
            }
            assert_eq!(acc.reorders(), 0, "{scenario}");
            assert!(shown.len() > 3 && shown.windows(2).all(|w| w[0] <= w[1]), "{scenario}: {shown:?}");
            assert_eq!(shown.last(), Some(&whole_rows.len()), "{scenario}");
        }
    }

    /// The live statistics as the window computes them: one `LiveReport` follows the run's
    /// snapshots and reads only what each adds. At every snapshot its report (outcomes and
    /// metrics) equals the scenario's whole report on that snapshot, for every built-in
    /// scenario, and the settled one equals the finished run's.
    #[test]
    fn live_reports_read_what_is_new_and_equal_the_whole_report() {
        for scenario in ["e1000e-mta", "litesdcard", "imx8mq-cpuidle", "axienet-napi"] {
            let sc = latscope_sim::prepare(scenario, &[], None, Some("1s")).expect("a built-in scenario");
            let whole = latscope_sim::run(sc.clone()).expect("the run");
            let mut live = latscope_sim::scenarios::LiveReport::new(&sc).expect("the scenario's rules");
            let mut sim = Simulation::new(sc.clone()).expect("the simulation");
            let (tx, rx) = channel::<Batch>();
            sim.attach(tx);
            sim.set_speed(Speed::Max);
            let lines = sim.line_names();
            let mut acc = Accumulator::default();
            let (mut ticks, mut compared, mut samples) = (0, 0, 0);
            let report = |r: Result<latscope_sim::report::Report, latscope_sim::ScenarioError>| {
                r.map(|r| (r.outcomes, r.metrics)).map_err(|e| e.to_string())
            };
            loop {
                let finished = sim.is_finished();
                if !finished {
                    sim.tick(40);
                }
                while let Ok(b) = rx.try_recv() {
                    acc.add(b);
                }
                if finished {
                    acc.settle();
                }
                ticks += 1;
                if ticks % 3 == 1 || finished {
                    let snap = acc.snapshot(scenario, &lines);
                    let got = report(live.update(&snap.source).and_then(|o| live.report(o)));
                    let want = report(latscope_sim::scenarios::report(&sc, &snap.source));
                    assert_eq!(got, want, "{scenario} at {} ps", acc.now);
                    compared += 1;
                    samples = got.map_or(0, |(o, _)| o.iter().map(|o| o.samples.len()).sum());
                }
                if finished {
                    break;
                }
            }
            let settled =
                report(live.update(&acc.snapshot(scenario, &lines).source).and_then(|o| live.report(o)));
            assert_eq!(settled, Ok((whole.report.outcomes, whole.report.metrics)), "{scenario}: settled");
            assert!(compared > 3 && samples > 0, "{scenario}: {compared} snapshots, {samples} samples");
        }
    }

    /// The panel's results while a run goes on: each rule that grows answers with the
    /// statistics it kept as its samples arrived and a spread of them. At every snapshot
    /// of every built-in scenario, each result counts every sample of the scenario's whole
    /// report on that snapshot and shows its statistics, histograms and worst pairs (the
    /// links lead to the same pairs), its CDF ends at the maximum, and its scatter shows
    /// samples of the run.
    #[test]
    fn live_panel_results_keep_the_statistics_of_every_sample() {
        use crate::gui::analysis::{self, AnalysisResult};
        use latscope_analysis::live::Glance;
        const KEEP: usize = 300;
        let mut spread = 0;
        for scenario in ["e1000e-mta", "litesdcard", "imx8mq-cpuidle", "axienet-napi"] {
            let sc = latscope_sim::prepare(scenario, &[], None, Some("1s")).expect("a built-in scenario");
            let mut live = latscope_sim::scenarios::LiveReport::new(&sc).expect("the scenario's rules");
            let mut sim = Simulation::new(sc.clone()).expect("the simulation");
            let (tx, rx) = channel::<Batch>();
            sim.attach(tx);
            sim.set_speed(Speed::Max);
            let lines = sim.line_names();
            let mut acc = Accumulator::default();
            let mut ticks = 0;
            while !sim.is_finished() {
                sim.tick(40);
                while let Ok(b) = rx.try_recv() {
                    acc.add(b);
                }
                ticks += 1;
                if ticks % 3 != 1 {
                    continue;
                }
                let snap = acc.snapshot(scenario, &lines);
                let opts = analysis::panel_stats_options();
                let glances = live.glance(&snap.source, opts, KEEP, analysis::MAX_CDF_POINTS);
                let whole = latscope_sim::scenarios::report(&sc, &snap.source);
                let (glances, whole) = match (glances, whole) {
                    (Ok(g), Ok(w)) => (g, w.outcomes),
                    (Err(g), Err(w)) => {
                        assert_eq!(g.to_string(), w.to_string(), "{scenario} at {} ps", acc.now);
                        continue;
                    }
                    (g, w) => panic!("{scenario} at {} ps: {g:?} against {w:?}", acc.now),
                };
                let results: Vec<AnalysisResult> = glances
                    .into_iter()
                    .flat_map(|g| match g {
                        Glance::Whole(outcomes) => outcomes.into_iter().map(analysis::summarize).collect(),
                        Glance::Grown(g) => vec![analysis::of_glanced(*g)],
                    })
                    .collect();
                assert_eq!(results.len(), whole.len(), "{scenario}");
                for (r, w) in results.iter().zip(whole) {
                    let at = format!("{scenario}: {} at {} ps", w.name, acc.now);
                    let all = analysis::summarize(w);
                    let (got, want) =
                        (r.summary.clone().expect("statistics"), all.summary.clone().expect("statistics"));
                    assert_eq!(r.outcome.name, all.outcome.name, "{at}");
                    assert_eq!(r.count(), all.outcome.samples.len() as u64, "{at}");
                    let pick =
                        |s: &latscope_analysis::stats::StatsNs| [s.min, s.p50, s.p90, s.p99, s.p999, s.max];
                    assert_eq!(pick(&got.stats_ns), pick(&want.stats_ns), "{at}");
                    assert_eq!(got.histogram_log, want.histogram_log, "{at}");
                    assert_eq!(got.histogram_linear, want.histogram_linear, "{at}");
                    let linked = |r: &AnalysisResult| -> Vec<latscope_analysis::outcome::Sample> {
                        r.worst.iter().map(|&i| r.outcome.samples[i].clone()).collect()
                    };
                    assert_eq!(linked(r), linked(&all), "{at}: the worst links");
                    assert_eq!(r.cdf.first(), all.cdf.first(), "{at}: the CDF starts at the minimum");
                    assert_eq!(r.cdf.last(), all.cdf.last(), "{at}: the CDF ends at the maximum");
                    let of_the_run = |i: &usize| {
                        latscope_analysis::live::index_of(&all.outcome.samples, &r.outcome.samples[*i])
                            .is_some()
                    };
                    assert!(r.scatter.iter().all(of_the_run), "{at}");
                    if r.spread_of.is_some() {
                        assert!(r.outcome.samples.len() <= KEEP + 10, "{at}");
                        spread += 1;
                    } else {
                        assert_eq!(r.outcome.samples, all.outcome.samples, "{at}");
                    }
                }
            }
        }
        assert!(spread > 0, "no result was spread: the check would prove nothing");
    }
}

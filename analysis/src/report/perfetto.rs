//! The Perfetto export: the sources and the analyses' findings as Trace Event Format JSON
//! (the "JSON trace" format that ui.perfetto.dev and `chrome://tracing` open). The format's
//! facts, and why JSON rather than Perfetto's protobuf, are in docs/PERFETTO.md.
//!
//! Layout of the written trace:
//! - one process per source (`pid` = 1 + source index): its events as thread-scoped instants
//!   on a thread per CPU (`tid` = 1 + cpu), named `CPU n`; its span tracks as complete
//!   (`X`) slices on a thread per track and lane; its digital and analog tracks as counters
//!   (analog decimated to at most [`MAX_ANALOG_SAMPLES`] per track, noted in `otherData`);
//! - one process `latscope analyses`: per analysis, its samples (pairs, pulses, chain totals,
//!   polling runs) as `X` slices named by the analysis on as many threads as needed so that
//!   slices on one thread never overlap, each with `start` and `end` child markers joined by
//!   a flow arrow (flow v2: `bind_id`, `flow_out`, `flow_in`) and its latency and key in
//!   `args`; stall windows as slices on the analysis's `windows` thread; and a counter track
//!   `NAME latency` with each sample's latency (ns) at its start.
//!
//! Times: `ts` and `dur` are microseconds written as decimals with exactly three fraction
//! digits, i.e. whole nanoseconds, relative to the first source's origin (the whole second
//! before its first event; its clock value is `otherData.origin_s`). Small relative values
//! keep every nanosecond exact through a reader's `f64`. Sources are where their placements
//! put them on the first source's timeline (by their clocks, or as aligned). Strings from traces are JSON-escaped by serde_json.

use crate::outcome::{AnalysisKind, Outcome};
use latscope_model::{FieldValue, PS_PER_NS, Placement, Ps, Source};
use std::io::{self, Write};

/// Analog samples written per track at most (a scope capture can hold hundreds of millions).
pub const MAX_ANALOG_SAMPLES: usize = 100_000;

/// The process id of the analyses.
const ANALYSES_PID: u64 = 1_000_000;
/// Thread ids of a source's span tracks start here (CPU threads are below).
const SPAN_TID_BASE: u64 = 100_000;

/// A source to export and the name it is shown under (the path the user gave).
#[derive(Debug, Clone, Copy)]
pub struct ExportSource<'a> {
    pub name: &'a str,
    pub source: &'a Source,
    /// Where the source sits on the common timeline.
    pub placement: Placement,
}

/// Writes the Trace Event JSON of `sources` and `outcomes` (whose `source` fields index
/// `sources`) to `out`. This is the whole export: `latscope report --format perfetto`
/// and the workbench's File > Export call it.
pub fn write_trace_events(
    sources: &[ExportSource<'_>],
    outcomes: &[Outcome],
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut w = Writer { out, first: true, next_id: 1 };
    let origin = sources.first().map_or((0, 0), |s| (s.source.origin.secs, s.source.origin.ps));
    let mut decimated = Vec::new();
    w.raw("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n")?;
    for (si, s) in sources.iter().enumerate() {
        let pid = si as u64 + 1;
        let src = s.source;
        let placement = s.placement;
        let at = |t: Ps| i128::from(placement.to_common(t));
        w.meta("process_name", pid, 0, s.name)?;
        w.meta_sort("process_sort_index", pid, 0, si as i64)?;
        // Events: one thread per CPU.
        let mut cpus: Vec<u16> = src.events.cpu.to_vec();
        cpus.sort_unstable();
        cpus.dedup();
        for &cpu in &cpus {
            w.meta("thread_name", pid, u64::from(cpu) + 1, &format!("CPU {cpu}"))?;
        }
        for ev in src.events.iter() {
            w.begin()?;
            w.raw("{\"ph\":\"i\",\"s\":\"t\",\"name\":")?;
            w.string(&src.strings.resolve(ev.name()))?;
            write!(w.out, ",\"pid\":{pid},\"tid\":{},\"ts\":", u64::from(ev.cpu()) + 1)?;
            w.time(at(ev.ts()))?;
            w.raw(",\"args\":{\"comm\":")?;
            w.string(&src.strings.resolve(ev.comm()))?;
            write!(w.out, ",\"pid\":{}", ev.pid())?;
            for (name, value) in ev.fields() {
                w.raw(",")?;
                // A field named like one of the two above keeps both: prefix it.
                let key = src.strings.resolve(name);
                if key == "comm" || key == "pid" {
                    w.string(&format!("field.{key}"))?;
                } else {
                    w.string(&key)?;
                }
                w.raw(":")?;
                match value {
                    FieldValue::Int(i) => write!(w.out, "{i}")?,
                    FieldValue::UInt(u) => write!(w.out, "{u}")?,
                    FieldValue::Str(sym) => w.string(&src.strings.resolve(sym))?,
                }
            }
            w.raw("}}")?;
        }
        // Span tracks: a thread per (track, lane); spans of one lane nest by construction.
        let mut tid = SPAN_TID_BASE;
        for track in &src.spans {
            let mut lanes: Vec<u16> = track.lane.clone();
            lanes.sort_unstable();
            lanes.dedup();
            for &lane in &lanes {
                tid += 1;
                let name =
                    if lanes.len() > 1 { format!("{} [{lane}]", track.name) } else { track.name.clone() };
                w.meta("thread_name", pid, tid, &name)?;
                for i in (0..track.len()).filter(|&i| track.lane[i] == lane) {
                    let label = src.strings.resolve(track.label[i]);
                    w.slice(&label, "span", pid, tid, at(track.start[i]), at(track.end[i]), &[], None)?;
                }
            }
        }
        for d in &src.digital {
            let name = format!("{} (level)", d.name);
            w.counter(&name, pid, at(0), f64::from(d.initial))?;
            for (t, l) in d.changes() {
                w.counter(&name, pid, at(t), f64::from(l))?;
            }
        }
        for a in &src.analog {
            let n = a.samples.len();
            let step = n.div_ceil(MAX_ANALOG_SAMPLES).max(1);
            if step > 1 {
                decimated.push(format!("{}: every {step}th of {n} samples", a.name));
            }
            let name = if a.unit.is_empty() { a.name.clone() } else { format!("{} ({})", a.name, a.unit) };
            for i in (0..n).step_by(step) {
                let t =
                    if a.times.is_empty() { a.t0 + (i as f64 * a.dt_ps).round() as Ps } else { a.times[i] };
                w.counter(&name, pid, at(t), f64::from(a.samples[i]))?;
            }
        }
    }
    // Analyses.
    if !outcomes.is_empty() {
        w.meta("process_name", ANALYSES_PID, 0, "latscope analyses")?;
        let mut tid = 0u64;
        for o in outcomes {
            write_outcome(&mut w, o, &o.name, sources, &mut tid)?;
        }
    }
    w.raw("\n],\"otherData\":{\"generator\":\"latscope\",\"origin_s\":")?;
    w.string(&format!("{}.{:012}", origin.0, origin.1))?;
    w.raw(",\"decimated\":")?;
    w.string(&decimated.join("; "))?;
    w.raw("}}\n")?;
    Ok(())
}

/// One analysis (and a chain's stages, as `CHAIN/STAGE`).
fn write_outcome(
    w: &mut Writer<'_>,
    o: &Outcome,
    name: &str,
    sources: &[ExportSource<'_>],
    tid: &mut u64,
) -> io::Result<()> {
    let Some(src) = sources.get(o.source) else { return Ok(()) };
    let at = |t: Ps| i128::from(src.placement.to_common(t));
    let pid = ANALYSES_PID;
    let first_tid = *tid + 1;
    if o.kind != AnalysisKind::Stall {
        // Greedy interval partitioning: a sample goes on the first lane free at its start.
        let mut order: Vec<usize> = (0..o.samples.len()).collect();
        order.sort_by_key(|&i| (o.samples[i].start, o.samples[i].end));
        let mut lane_end: Vec<i128> = Vec::new();
        for &i in &order {
            let s = &o.samples[i];
            let (start, end) = (at(s.start), at(s.end).max(at(s.start)));
            let lane = match lane_end.iter().position(|&e| e <= start) {
                Some(l) => l,
                None => {
                    lane_end.push(i128::MIN);
                    let l = lane_end.len() - 1;
                    w.meta("thread_name", pid, first_tid + l as u64, &format!("{name} #{}", l + 1))?;
                    l
                }
            };
            lane_end[lane] = end;
            let t = first_tid + lane as u64;
            let flow = w.next_id;
            w.next_id += 1;
            let latency_ns = (s.end - s.start) as f64 / PS_PER_NS as f64;
            let start_s = src.source.origin.to_source_seconds(s.start);
            let end_s = src.source.origin.to_source_seconds(s.end);
            let args: [(&str, Arg<'_>); 5] = [
                ("latency_ns", Arg::Num(latency_ns)),
                ("key", Arg::Str(&s.key)),
                ("start_s", Arg::Num(start_s)),
                ("end_s", Arg::Num(end_s)),
                ("analysis", Arg::Str(name)),
            ];
            w.slice(name, "pair", pid, t, start, end, &args, None)?;
            w.slice("start", "pair.endpoint", pid, t, start, start, &[], Some((flow, true)))?;
            w.slice("end", "pair.endpoint", pid, t, end, end, &[], Some((flow, false)))?;
        }
        *tid += lane_end.len() as u64;
    }
    if !o.windows.is_empty() {
        *tid += 1;
        let t = *tid;
        w.meta("thread_name", pid, t, &format!("{name} windows"))?;
        for win in &o.windows {
            let args: [(&str, Arg<'_>); 3] = [
                ("duration_ns", Arg::Num((win.end - win.start) as f64 / PS_PER_NS as f64)),
                ("excess_ns", Arg::Num(win.excess as f64 / PS_PER_NS as f64)),
                ("analysis", Arg::Str(name)),
            ];
            w.slice(name, "window", pid, t, at(win.start), at(win.end), &args, None)?;
        }
    }
    let counter = format!("{name} latency");
    let mut samples: Vec<_> = o.samples.iter().collect();
    samples.sort_by_key(|s| s.start);
    for s in samples {
        w.counter_ns(&counter, pid, at(s.start), (s.end - s.start) as f64 / PS_PER_NS as f64)?;
    }
    for stage in &o.stages {
        write_outcome(w, stage, &format!("{name}/{}", stage.name), sources, tid)?;
    }
    Ok(())
}

#[derive(Debug, Clone, Copy)]
enum Arg<'a> {
    Num(f64),
    Str(&'a str),
}

struct Writer<'a> {
    out: &'a mut dyn Write,
    first: bool,
    next_id: u64,
}

impl Writer<'_> {
    fn raw(&mut self, s: &str) -> io::Result<()> {
        self.out.write_all(s.as_bytes())
    }

    /// Starts an array element.
    fn begin(&mut self) -> io::Result<()> {
        if !self.first {
            self.raw(",\n")?;
        }
        self.first = false;
        Ok(())
    }

    fn string(&mut self, s: &str) -> io::Result<()> {
        serde_json::to_writer(&mut *self.out, s).map_err(io::Error::other)
    }

    fn number(&mut self, v: f64) -> io::Result<()> {
        if v.is_finite() { write!(self.out, "{v}") } else { self.raw("null") }
    }

    /// A time (ps on the export's timeline) as microseconds with three decimals (whole ns).
    fn time(&mut self, ps: i128) -> io::Result<()> {
        let ns = ps.div_euclid(i128::from(PS_PER_NS));
        let sign = if ns < 0 { "-" } else { "" };
        let a = ns.unsigned_abs();
        write!(self.out, "{sign}{}.{:03}", a / 1000, a % 1000)
    }

    fn meta(&mut self, what: &str, pid: u64, tid: u64, name: &str) -> io::Result<()> {
        self.begin()?;
        write!(
            self.out,
            "{{\"ph\":\"M\",\"name\":\"{what}\",\"pid\":{pid},\"tid\":{tid},\"args\":{{\"name\":"
        )?;
        self.string(name)?;
        self.raw("}}")
    }

    fn meta_sort(&mut self, what: &str, pid: u64, tid: u64, index: i64) -> io::Result<()> {
        self.begin()?;
        write!(
            self.out,
            "{{\"ph\":\"M\",\"name\":\"{what}\",\"pid\":{pid},\"tid\":{tid},\"args\":{{\"sort_index\":{index}}}}}"
        )
    }

    /// A complete (`X`) slice; `flow` = (id, out?) binds a flow v2 arrow end to it.
    #[allow(clippy::too_many_arguments)]
    fn slice(
        &mut self,
        name: &str,
        cat: &str,
        pid: u64,
        tid: u64,
        start: i128,
        end: i128,
        args: &[(&str, Arg<'_>)],
        flow: Option<(u64, bool)>,
    ) -> io::Result<()> {
        self.begin()?;
        self.raw("{\"ph\":\"X\",\"name\":")?;
        self.string(name)?;
        write!(self.out, ",\"cat\":\"{cat}\",\"pid\":{pid},\"tid\":{tid},\"ts\":")?;
        self.time(start)?;
        self.raw(",\"dur\":")?;
        self.time((end - start).max(0))?;
        if let Some((id, out)) = flow {
            let dir = if out { "flow_out" } else { "flow_in" };
            write!(self.out, ",\"bind_id\":\"0x{id:x}\",\"{dir}\":true")?;
        }
        if !args.is_empty() {
            self.raw(",\"args\":{")?;
            for (i, (k, v)) in args.iter().enumerate() {
                if i > 0 {
                    self.raw(",")?;
                }
                self.string(k)?;
                self.raw(":")?;
                match v {
                    Arg::Num(n) => self.number(*n)?,
                    Arg::Str(s) => self.string(s)?,
                }
            }
            self.raw("}")?;
        }
        self.raw("}")
    }

    fn counter(&mut self, name: &str, pid: u64, at: i128, value: f64) -> io::Result<()> {
        self.counter_arg(name, pid, at, "value", value)
    }

    fn counter_ns(&mut self, name: &str, pid: u64, at: i128, value: f64) -> io::Result<()> {
        self.counter_arg(name, pid, at, "ns", value)
    }

    fn counter_arg(&mut self, name: &str, pid: u64, at: i128, arg: &str, value: f64) -> io::Result<()> {
        self.begin()?;
        self.raw("{\"ph\":\"C\",\"name\":")?;
        self.string(name)?;
        write!(self.out, ",\"pid\":{pid},\"tid\":0,\"ts\":")?;
        self.time(at)?;
        write!(self.out, ",\"args\":{{\"{arg}\":")?;
        self.number(value)?;
        self.raw("}}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::Sample;
    use latscope_model::{EventTableBuilder, FieldKind, IrqFlags, SourceKind};

    fn source() -> Source {
        let mut b = EventTableBuilder::new();
        let name = b.intern(b"irq_handler_entry");
        let irq = b.intern(b"irq");
        let text = b.intern(b"name");
        let comm = b.intern(b"a\"b\\c\n<script>");
        let l = b.layout(name, &[(irq, FieldKind::Int), (text, FieldKind::Str)]);
        b.push(1_500, 2, 7, comm, IrqFlags::NONE, l, &[FieldValue::Int(36), FieldValue::Str(comm)]);
        let mut s = Source::new("t", "ftrace-text", SourceKind::File);
        (s.events, s.strings) = b.finish().unwrap_or_default();
        s.origin = latscope_model::ClockOrigin::from_secs_ps(100, 0);
        s
    }

    #[test]
    fn writes_valid_json_with_exact_times_and_escaped_strings() {
        let s = source();
        let mut o = Outcome::new("irq-handler", AnalysisKind::Pair, 0);
        o.samples.push(Sample::new(1_000_000, 3_456_789, "cpu=2 irq=36"));
        o.samples.push(Sample::new(2_000_000, 2_500_000, "cpu=1 irq=36"));
        let mut out = Vec::new();
        write_trace_events(
            &[ExportSource { name: "t", source: &s, placement: Placement::IDENTITY }],
            &[o],
            &mut out,
        )
        .unwrap_or_default();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap_or_default();
        let events = v["traceEvents"].as_array().cloned().unwrap_or_default();
        let inst = events.iter().find(|e| e["ph"] == "i").cloned().unwrap_or_default();
        assert_eq!(inst["args"]["comm"], "a\"b\\c\n<script>");
        assert_eq!(inst["ts"].as_f64(), Some(0.001), "1500 ps is 1 ns: whole ns, floored");
        let pairs: Vec<_> = events.iter().filter(|e| e["cat"] == "pair").collect();
        assert_eq!(pairs.len(), 2);
        assert_eq!(pairs[0]["dur"].as_f64(), Some(2.456));
        assert_ne!(pairs[0]["tid"], pairs[1]["tid"], "overlapping pairs go on separate lanes");
        let flows: Vec<_> = events.iter().filter(|e| e.get("bind_id").is_some()).collect();
        assert_eq!(flows.len(), 4);
        assert_eq!(flows[0]["bind_id"], flows[1]["bind_id"]);
        assert_eq!(v["otherData"]["origin_s"], "100.000000000000");
    }
}

//! The sequential parser of one chunk of lines: dispatches each line (header, event line,
//! latency line, function_graph line, stack frame, annotation, continuation), keeps the
//! state that spans lines (stack traces, hard-wrapped payloads, graph call stacks,
//! lost-event notes waiting for their CPU's next event) and fills one event builder.
//! Line numbers it records are relative to the chunk; the driver rebases them.

use super::graph::{GraphKind, GraphLine, GraphState, GraphText, classify_text, parse_graph_line};
use super::line::{
    Prefix, Ts, find, fixed_width_prefix, padded_word, parse_event_prefix, parse_latency_prefix, parse_u64,
    split_digits, trim, trim_start, word_at,
};
use super::payload::{Handler, STR_CACHE_BYTES, Sink, name_token, str_key};
use crate::assemble::{ColumnWindow, WindowedPart};
use crate::{LoadControl, ParseFailure};
use latscope_model::{
    Diagnostics, EventTableBuilder, FieldKind, Gap, IrqFlags, LayoutId, Ps, SpanTrack, Sym,
};
use memchr::memchr;
use rustc_hash::FxHashMap;

/// Lines longer than this are counted malformed and skipped (bounds memory on hostile input).
/// Real lines stay under a few KiB (the kernel's trace_seq page is 4 KiB-8 KiB);
/// 1 MiB leaves room for wrapped `trace-cmd report` payloads.
pub(crate) const MAX_LINE: usize = 1 << 20;
/// The diagnostic for a line over [`MAX_LINE`]; `assemble` recognises it to say why nothing loaded.
pub(crate) const OVERLONG_LINE: &str = "line longer than 1048576 bytes skipped";
const COMM_CACHE_SLOTS: usize = 64;
const COMM_CACHE_BYTES: usize = 32;
const NAME_CACHE_SLOTS: usize = 64;
/// Slots of the cache of event names by the first 16 bytes of their body.
const NAME_HIT_SLOTS: usize = 64;
/// The longest name that cache holds.
const NAME_HIT_BYTES: usize = 24;
/// Progress and cancel are checked every this many lines.
const REPORT_EVERY: u64 = 4096;

#[derive(Debug)]
struct NameInfo {
    sym: Sym,
    handler: Handler,
    /// Layouts seen with this name (field names and kinds), most events hit the first.
    layouts: Vec<(Vec<(Sym, FieldKind)>, LayoutId)>,
}

/// The record that `=>` stack frames follow. Only frames right after an event (or after its
/// `<stack trace>` record) attach to it; decided line by line, so that a chunk starting at
/// an event line sees the same state as a sequential parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StackTarget {
    Event,
    /// A malformed record: its frames are dropped with it.
    Skipped,
    Nothing,
}

/// An event whose payload continues on the following lines (mail-wrapped mmc events).
#[derive(Debug)]
struct Pending {
    ts: Ps,
    cpu: u16,
    pid: i32,
    comm: Sym,
    flags: IrqFlags,
    name: usize,
    payload: Vec<u8>,
}

/// A function_graph line whose text was wrapped onto the next line.
#[derive(Debug)]
struct PendingGraph {
    abs: Option<Ps>,
    cpu: u16,
    task: Option<(Sym, i32)>,
    duration: Option<Ps>,
    text: Vec<u8>,
    line: u64,
    offset: u64,
}

/// What a chunk produced.
#[derive(Debug)]
pub(crate) struct ChunkOut {
    /// The events went into the chunk's window; strings and field values are here.
    pub events: WindowedPart,
    pub diag: Diagnostics,
    /// Span labels are symbols of `events`' interner.
    pub spans: SpanTrack,
    pub metadata: Vec<(String, String)>,
    /// `##### CPU n buffer started ####` notes: (chunk line, cpu).
    pub buffer_started: Vec<(u64, u64)>,
    pub records: u64,
    pub saw_cpu_column: bool,
    pub lines: u64,
    /// Lost-event notes whose CPU had no later event in this chunk (ts not yet known).
    pub open_gaps: Vec<Gap>,
    /// The first event time of each CPU in this chunk.
    pub first_ts: Vec<(u16, Ps)>,
    pub unmatched_exits: u64,
}

#[derive(Debug)]
pub(crate) struct ChunkParser<'a> {
    sink: Sink<'a>,
    diag: Diagnostics,
    origin: i64,
    names: FxHashMap<Box<[u8]>, usize>,
    /// Direct-mapped cache in front of `names`: (length, zero-padded name, index).
    name_cache: Vec<(u8, [u64; 3], usize)>,
    /// Event names seen at the start of a body, by the body's first 16 bytes: (those bytes,
    /// name length, name bytes 16..24 zero-padded, name index). Most lines start with a
    /// recent name, and a hit here replaces both the name scan and the name lookup. 16
    /// bytes tell apart names that share a prefix (`sched_waking`/`sched_wakeup`).
    name_hits: Vec<([u64; 2], u8, u64, usize)>,
    infos: Vec<NameInfo>,
    name_buf: Vec<u8>,
    empty: Sym,
    /// Per CPU slot: (length, bytes, symbol) of the last comm seen.
    comm_cache: Vec<(u8, [u8; COMM_CACHE_BYTES], Sym)>,
    frames: Option<Vec<u8>>,
    /// What `=>` stack frames would belong to: the record right before them.
    stack_target: StackTarget,
    pending: Option<Pending>,
    pending_graph: Option<PendingGraph>,
    graph: GraphState,
    open_gaps: Vec<Gap>,
    first_ts: Vec<Ps>,
    metadata: Vec<(String, String)>,
    buffer_started: Vec<(u64, u64)>,
    records: u64,
    saw_cpu: bool,
    last_ts: Ps,
    line: u64,
    offset: u64,
}

impl<'a> ChunkParser<'a> {
    /// A parser writing its events into `window`, which must hold one slot per line.
    pub fn new(origin_secs: i64, window: ColumnWindow<'a>) -> ChunkParser<'a> {
        let mut sink = Sink::new(EventTableBuilder::with_sink(window));
        let empty = sink.b.intern(b"");
        ChunkParser {
            sink,
            diag: Diagnostics::default(),
            origin: origin_secs,
            names: FxHashMap::default(),
            // Length u8::MAX marks a free slot.
            name_cache: vec![(u8::MAX, [0; 3], 0); NAME_CACHE_SLOTS],
            name_hits: vec![([0; 2], u8::MAX, 0, 0); NAME_HIT_SLOTS],
            infos: Vec::new(),
            name_buf: Vec::new(),
            empty,
            comm_cache: vec![(0, [0; COMM_CACHE_BYTES], empty); COMM_CACHE_SLOTS],
            frames: None,
            stack_target: StackTarget::Nothing,
            pending: None,
            pending_graph: None,
            graph: GraphState::default(),
            open_gaps: Vec::new(),
            first_ts: Vec::new(),
            metadata: Vec::new(),
            buffer_started: Vec::new(),
            records: 0,
            saw_cpu: false,
            last_ts: 0,
            line: 0,
            offset: 0,
        }
    }

    /// Parses `data` (whole lines); `base` is its byte offset in the file.
    pub fn run(mut self, data: &[u8], base: u64, ctl: &LoadControl) -> Result<ChunkOut, ParseFailure> {
        // Real event lines average 100-130 bytes and 10-15 bytes of field values.
        self.sink.b.reserve(data.len() / 96, data.len() / 8);
        let mut pos = 0usize;
        let mut reported = 0usize;
        while pos < data.len() {
            let end = memchr(b'\n', &data[pos..]).map_or(data.len(), |i| pos + i);
            let mut line = &data[pos..end];
            self.line += 1;
            self.offset = base + pos as u64;
            pos = end + 1;
            if let Some(l) = line.strip_suffix(b"\r") {
                line = l;
            }
            if self.line.is_multiple_of(REPORT_EVERY) {
                let done = pos.min(data.len());
                ctl.advance((done - reported) as u64);
                reported = done;
                if ctl.is_cancelled() {
                    return Err(ParseFailure::Cancelled);
                }
            }
            if line.len() > MAX_LINE {
                self.end_record();
                self.malformed(OVERLONG_LINE);
                continue;
            }
            self.parse_line(line);
        }
        ctl.advance((data.len() - reported) as u64);
        self.end_record();
        Ok(self.finish())
    }

    fn malformed(&mut self, msg: impl Into<String>) {
        // Stack frames that follow belong to the skipped record, not to the event before it.
        self.stack_target = StackTarget::Skipped;
        self.diag.malformed(Some(self.line), self.offset, msg);
    }

    /// Ends whatever multi-line record is open (stack, wrapped payload, wrapped graph line).
    #[inline]
    fn end_record(&mut self) {
        // Nearly always nothing is open: skip the moves out of the three options.
        if self.frames.is_none() && self.pending.is_none() && self.pending_graph.is_none() {
            return;
        }
        self.finish_stack();
        self.flush_pending();
        if let Some(pg) = self.pending_graph.take() {
            self.diag.malformed(Some(pg.line), pg.offset, "incomplete function_graph line");
        }
    }

    fn parse_line(&mut self, line: &[u8]) {
        // Most lines are events in tracefs' fixed-width form: read them before the blank,
        // stack-frame and header tests, which they cannot match (a line starting with `#`
        // or whose comm starts with `=>` still takes the general order below).
        if line.first() != Some(&b'#')
            && let Some(p) = fixed_width_prefix(line)
            && !p.comm.starts_with(b"=>")
        {
            self.event_line(p);
            return;
        }
        let t = trim_start(line);
        if t.is_empty() {
            self.end_record();
            self.stack_target = StackTarget::Nothing;
            return;
        }
        if let Some(frame) = t.strip_prefix(b"=>") {
            // The frames belong to the event just read, even one whose payload was wrapped.
            self.flush_pending();
            let frames = self.frames.get_or_insert_with(Vec::new);
            if !frames.is_empty() {
                frames.push(b'\n');
            }
            frames.extend_from_slice(trim(frame));
            return;
        }
        self.finish_stack();
        if line[0] == b'#' {
            self.end_record();
            self.stack_target = StackTarget::Nothing;
            self.header(line);
            return;
        }
        if let Some(p) = parse_event_prefix(line) {
            self.event_line(p);
            return;
        }
        if let Some(g) = parse_graph_line(line) {
            self.end_record();
            self.stack_target = StackTarget::Nothing;
            self.graph_line(g);
            return;
        }
        if let Some(p) = parse_latency_prefix(line) {
            self.end_record();
            if !is_stack_record(p.body) {
                self.stack_target = StackTarget::Nothing;
            }
            self.prefixed(p);
            return;
        }
        if self.annotation(trim(t)) {
            self.end_record();
            self.stack_target = StackTarget::Nothing;
            return;
        }
        if let Some(p) = self.pending.as_mut() {
            if p.payload.len() + t.len() < MAX_LINE {
                if !p.payload.is_empty() {
                    p.payload.push(b' ');
                }
                p.payload.extend_from_slice(trim(t));
            }
            return;
        }
        if let Some(mut pg) = self.pending_graph.take() {
            if pg.text.len() + t.len() < MAX_LINE {
                pg.text.push(b' ');
                pg.text.extend_from_slice(trim(t));
            }
            self.stack_target = StackTarget::Nothing;
            self.graph_text(pg);
            return;
        }
        self.malformed("unrecognised line");
    }

    /// A line with the `comm-pid [cpu] flags ts:` context.
    fn event_line(&mut self, p: Prefix<'_>) {
        self.end_record();
        // A chunk may start at such a line: nothing before it may change what follows.
        if !is_stack_record(p.body) {
            self.stack_target = StackTarget::Nothing;
        }
        self.saw_cpu = true;
        self.prefixed(p);
    }

    fn finish_stack(&mut self) {
        let Some(frames) = self.frames.take() else { return };
        if frames.is_empty() {
            return;
        }
        match self.stack_target {
            StackTarget::Event => {
                let sym = self.sink.b.intern(&frames);
                if !self.sink.b.attach_stack_to_last(sym) {
                    self.malformed("stack trace without its event");
                }
            }
            // Dropped with the record it belonged to (already counted).
            StackTarget::Skipped => {}
            StackTarget::Nothing => self.malformed("stack trace without its event"),
        }
    }

    fn flush_pending(&mut self) {
        if let Some(p) = self.pending.take() {
            let handler = self.infos[p.name].handler;
            self.sink.parse(handler, &p.payload);
            self.push(p.name, p.ts, p.cpu, p.pid, p.comm, p.flags);
        }
    }

    fn rel(&mut self, ts: Ts) -> Option<Ps> {
        let r = ts.relative(self.origin);
        if r.is_none() {
            self.malformed("timestamp out of range");
        }
        r
    }

    /// The comm's symbol. Consecutive lines of a CPU mostly share their task, so a one-entry
    /// cache per CPU slot saves most interner lookups on the hot path.
    fn comm_sym(&mut self, comm: &[u8], cpu: u16) -> Sym {
        if comm.is_empty() {
            return self.empty;
        }
        if comm.len() > COMM_CACHE_BYTES {
            return self.sink.b.intern(comm);
        }
        let slot = &mut self.comm_cache[usize::from(cpu) % COMM_CACHE_SLOTS];
        if usize::from(slot.0) == comm.len() && &slot.1[..comm.len()] == comm {
            return slot.2;
        }
        let sym = self.sink.b.intern(comm);
        slot.0 = comm.len() as u8;
        slot.1[..comm.len()].copy_from_slice(comm);
        slot.2 = sym;
        sym
    }

    fn name_index(&mut self, name: &[u8]) -> usize {
        // A few dozen names make up a trace: a compare in a small table before the map.
        let cached = (name.len() <= STR_CACHE_BYTES).then(|| str_key(name));
        if let Some((key, slot)) = cached {
            let c = &self.name_cache[slot % NAME_CACHE_SLOTS];
            if usize::from(c.0) == name.len() && c.1 == key {
                return c.2;
            }
        }
        let i = self.name_index_slow(name);
        if let Some((key, slot)) = cached {
            self.name_cache[slot % NAME_CACHE_SLOTS] = (name.len() as u8, key, i);
        }
        i
    }

    /// [`name_token`] with the name's index: `name: payload` at the start of an event body.
    fn event_name<'b>(&mut self, body: &'b [u8]) -> Option<(usize, &'b [u8])> {
        let first = word_at(body, 0).zip(word_at(body, 8)).map(|(a, b)| [a, b]);
        let slot = first.map(|[a, b]| {
            ((a ^ b.rotate_left(29)).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 58) as usize % NAME_HIT_SLOTS
        });
        if let (Some(key), Some(slot)) = (first, slot)
            && let Some(hit) = self.recent_name(body, key, slot)
        {
            return Some(hit);
        }
        let (name, payload) = name_token(body)?;
        let idx = self.name_index(name);
        let n = name.len();
        if let (Some(key), Some(slot)) = (first, slot)
            && n <= NAME_HIT_BYTES
        {
            self.name_hits[slot] = (key, n as u8, padded_word(name, 16), idx);
        }
        Some((idx, payload))
    }

    /// The cached name `body` starts with (first 16 bytes `key`), checked as [`name_token`]
    /// would read it: the same bytes, then `:` and a blank or the end.
    #[inline]
    fn recent_name<'b>(&self, body: &'b [u8], key: [u64; 2], slot: usize) -> Option<(usize, &'b [u8])> {
        let (k, n, tail, idx) = self.name_hits[slot];
        if k != key || n == u8::MAX {
            return None;
        }
        let n = usize::from(n);
        if n > 16 && padded_word(body.get(..n)?, 16) != tail {
            return None;
        }
        if body.get(n) != Some(&b':') {
            return None;
        }
        match body.get(n + 1) {
            None => Some((idx, &[])),
            Some(&c) if c == b' ' || c == b'\t' => Some((idx, trim_start(&body[n + 1..]))),
            Some(_) => None,
        }
    }

    fn name_index_slow(&mut self, name: &[u8]) -> usize {
        if let Some(&i) = self.names.get(name) {
            return i;
        }
        let i = self.infos.len();
        let sym = self.sink.b.intern(name);
        self.infos.push(NameInfo { sym, handler: Handler::for_name(name), layouts: Vec::new() });
        self.names.insert(name.into(), i);
        i
    }

    /// Pushes the event whose fields are in the sink.
    fn push(&mut self, name: usize, ts: Ps, cpu: u16, pid: i32, comm: Sym, flags: IrqFlags) {
        let info = &mut self.infos[name];
        let layout = match info.layouts.iter().find(|(f, _)| *f == self.sink.fields) {
            Some(&(_, id)) => id,
            None => {
                let id = self.sink.b.layout(info.sym, &self.sink.fields);
                if info.layouts.len() < 64 {
                    info.layouts.push((self.sink.fields.clone(), id));
                }
                id
            }
        };
        self.sink.b.push(ts, cpu, pid, comm, flags, layout, &self.sink.values);
        self.stack_target = StackTarget::Event;
        self.records += 1;
        self.last_ts = ts;
        let c = usize::from(cpu);
        if c >= self.first_ts.len() {
            self.first_ts.resize(c + 1, Ps::MIN);
        }
        if self.first_ts[c] == Ps::MIN {
            self.first_ts[c] = ts;
        }
        if !self.open_gaps.is_empty() {
            let diag = &mut self.diag;
            self.open_gaps.retain(|g| {
                if g.cpu == cpu {
                    diag.gaps.push(Gap { ts, ..*g });
                    false
                } else {
                    true
                }
            });
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn emit(&mut self, name: &[u8], payload: &[u8], ts: Ps, cpu: u16, pid: i32, comm: Sym, flags: IrqFlags) {
        let idx = self.name_index(name);
        self.emit_at(idx, payload, ts, cpu, pid, comm, flags);
    }

    #[allow(clippy::too_many_arguments)]
    fn emit_at(
        &mut self,
        idx: usize,
        payload: &[u8],
        ts: Ps,
        cpu: u16,
        pid: i32,
        comm: Sym,
        flags: IrqFlags,
    ) {
        self.sink.parse(self.infos[idx].handler, payload);
        self.push(idx, ts, cpu, pid, comm, flags);
    }

    /// An event line with its context parsed.
    fn prefixed(&mut self, p: Prefix<'_>) {
        let Some(ts) = self.rel(p.ts) else { return };
        let comm = self.comm_sym(p.comm, p.cpu);
        let body = p.body;
        if is_stack_record(body) {
            // A separate kernel record; its frames go to the event before it.
            self.records += 1;
            self.frames = Some(Vec::new());
            return;
        }
        self.body(body, ts, p.cpu, p.pid, comm, p.flags, true);
    }

    /// Dispatches an event body (also the content of a graph `/* */` comment).
    #[allow(clippy::too_many_arguments)]
    fn body(&mut self, body: &[u8], ts: Ps, cpu: u16, pid: i32, comm: Sym, flags: IrqFlags, may_wrap: bool) {
        if let Some((name, payload)) = self.event_name(body) {
            if payload.is_empty() && may_wrap {
                self.pending = Some(Pending { ts, cpu, pid, comm, flags, name, payload: Vec::new() });
            } else {
                self.emit_at(name, payload, ts, cpu, pid, comm, flags);
            }
            return;
        }
        if body.first() == Some(&b'#') {
            self.tracer_line(body, ts, cpu, pid, comm, flags);
            return;
        }
        if find(body, b" <-").is_some() {
            self.emit(b"function", body, ts, cpu, pid, comm, flags);
            return;
        }
        if self.syscall(body, ts, cpu, pid, comm, flags) || self.ctx_wake(body, ts, cpu, pid, comm, flags) {
            return;
        }
        if !body.is_empty() && !body.iter().any(|&c| c == b' ' || c == b'\t') {
            self.emit(b"function", body, ts, cpu, pid, comm, flags);
            return;
        }
        if !may_wrap {
            // A trace_printk inside a function_graph trace prints as a bare comment.
            self.emit(b"bprint", body, ts, cpu, pid, comm, flags);
            return;
        }
        self.malformed("unrecognised event body");
    }

    /// The syscall tracer: `sys_read(fd: 3, buf: …)` and `sys_read -> 0x24`.
    #[allow(clippy::too_many_arguments)]
    fn syscall(&mut self, body: &[u8], ts: Ps, cpu: u16, pid: i32, comm: Sym, flags: IrqFlags) -> bool {
        let n = body.iter().take_while(|c| c.is_ascii_alphanumeric() || **c == b'_').count();
        if n == 0 {
            return false;
        }
        let (call, rest) = body.split_at(n);
        let call = call.strip_prefix(b"sys_").unwrap_or(call);
        if let Some(args) = rest.strip_prefix(b"(").and_then(|r| r.strip_suffix(b")")) {
            self.sink.clear();
            for arg in args.split(|&c| c == b',') {
                let arg = trim(arg);
                let Some(colon) = memchr(b':', arg) else { continue };
                let key = self.sink.b.intern(trim(&arg[..colon]));
                let v = trim(&arg[colon + 1..]);
                // Arguments print as `%lx`.
                match super::line::parse_hex(v) {
                    Some(x) => self.sink.uint(key, x),
                    None => self.sink.str(key, v),
                }
            }
            self.name_buf.clear();
            self.name_buf.extend_from_slice(b"sys_enter_");
        } else if let Some(ret) = rest.strip_prefix(b" -> ") {
            self.sink.clear();
            let key = self.sink.keys.ret;
            self.sink.auto(key, trim(ret));
            self.name_buf.clear();
            self.name_buf.extend_from_slice(b"sys_exit_");
        } else {
            return false;
        }
        self.name_buf.extend_from_slice(call);
        let name = std::mem::take(&mut self.name_buf);
        let idx = self.name_index(&name);
        self.name_buf = name;
        self.push(idx, ts, cpu, pid, comm, flags);
        true
    }

    /// Wakeup-tracer context lines (`trace_ctxwake_print`): `pid:prio:S ==> [cpu]
    /// pid:prio:S comm` for a switch, `  +` instead of `==>` for a wakeup.
    #[allow(clippy::too_many_arguments)]
    fn ctx_wake(&mut self, body: &[u8], ts: Ps, cpu: u16, pid: i32, comm: Sym, flags: IrqFlags) -> bool {
        fn task(t: &[u8]) -> Option<(i64, i64, &[u8])> {
            let mut it = t.splitn(3, |&c| c == b':');
            let pid = super::line::parse_i64(it.next()?)?;
            let prio = super::line::parse_i64(trim_start(it.next()?))?;
            Some((pid, prio, it.next()?))
        }
        let mut tok = body.split(|&c| c == b' ' || c == b'\t').filter(|t| !t.is_empty());
        let (Some(a), Some(delim), Some(target), Some(b)) = (tok.next(), tok.next(), tok.next(), tok.next())
        else {
            return false;
        };
        let (Some((ppid, pprio, pstate)), Some((npid, nprio, nstate))) = (task(a), task(b)) else {
            return false;
        };
        let Some(tcpu) = target.strip_prefix(b"[").and_then(|t| t.strip_suffix(b"]")).and_then(parse_u64)
        else {
            return false;
        };
        let Some(at) = find(body, b) else { return false };
        let next_comm = trim(&body[at + b.len()..]);
        self.sink.clear();
        let k = self.sink.keys;
        let name: &[u8] = match delim {
            b"==>" => {
                self.sink.int(k.prev_pid, ppid);
                self.sink.int(k.prev_prio, pprio);
                self.sink.str(k.prev_state, pstate);
                self.sink.str(k.next_comm, next_comm);
                self.sink.int(k.next_pid, npid);
                self.sink.int(k.next_prio, nprio);
                b"sched_switch"
            }
            b"+" => {
                let _ = nstate;
                self.sink.str(k.comm, next_comm);
                self.sink.int(k.pid, npid);
                self.sink.int(k.prio, nprio);
                self.sink.uint(k.target_cpu, tcpu);
                b"sched_wakeup"
            }
            _ => return false,
        };
        let idx = self.name_index(name);
        self.push(idx, ts, cpu, pid, comm, flags);
        true
    }

    /// Tracer output lines that start with `#`: timerlat (`#1 context irq timer_latency
    /// 932 ns`) and hwlat (`#1 inner/outer(us): …`).
    #[allow(clippy::too_many_arguments)]
    fn tracer_line(&mut self, body: &[u8], ts: Ps, cpu: u16, pid: i32, comm: Sym, flags: IrqFlags) {
        let mut tok = body.split(|&c| c == b' ' || c == b'\t').filter(|t| !t.is_empty());
        let id = tok.next().and_then(|t| parse_u64(&t[1..]));
        if let (Some(id), Some(b"context"), Some(ctx), Some(b"timer_latency"), Some(lat)) =
            (id, tok.next(), tok.next(), tok.next(), tok.next())
            && let Some(lat) = super::line::parse_i64(lat)
        {
            self.sink.clear();
            let k = self.sink.keys;
            self.sink.uint(k.id, id);
            self.sink.str(k.context, ctx);
            self.sink.int(k.timer_latency, lat);
            let idx = self.name_index(b"timerlat");
            self.push(idx, ts, cpu, pid, comm, flags);
            return;
        }
        let name: &[u8] = if find(body, b"inner/outer").is_some() { b"hwlat" } else { b"tracer" };
        let idx = self.name_index(name);
        self.sink.clear();
        self.sink.marker(body);
        self.push(idx, ts, cpu, pid, comm, flags);
    }

    fn graph_line(&mut self, g: GraphLine<'_>) {
        let task = g.task.map(|(c, p)| (self.sink.b.intern(c), p));
        let abs = match g.abstime {
            Some(t) => match self.rel(t) {
                Some(r) => Some(r),
                None => return,
            },
            None => None,
        };
        match g.kind {
            GraphKind::IrqMarker => {}
            GraphKind::Banner(comm, pid) => {
                let comm = self.sink.b.intern(comm);
                self.graph.now(g.cpu, abs);
                self.graph.set_task(g.cpu, comm, pid);
            }
            GraphKind::Text(GraphText::Incomplete(text)) => {
                self.pending_graph = Some(PendingGraph {
                    abs,
                    cpu: g.cpu,
                    task,
                    duration: g.duration,
                    text: text.to_vec(),
                    line: self.line,
                    offset: self.offset,
                });
            }
            GraphKind::Text(text) => self.graph_event(abs, g.cpu, task, g.duration, text),
        }
    }

    /// A wrapped graph line after joining; still incomplete means wait for another line.
    fn graph_text(&mut self, pg: PendingGraph) {
        if matches!(classify_text(&pg.text), GraphText::Incomplete(_)) {
            self.pending_graph = Some(pg);
            return;
        }
        let text = classify_text(&pg.text);
        self.graph_event(pg.abs, pg.cpu, pg.task, pg.duration, text);
    }

    fn graph_event(
        &mut self,
        abs: Option<Ps>,
        cpu: u16,
        task: Option<(Sym, i32)>,
        duration: Option<Ps>,
        text: GraphText<'_>,
    ) {
        if let Some((comm, pid)) = task {
            self.graph.set_task(cpu, comm, pid);
        }
        let now = self.graph.now(cpu, abs);
        match text {
            GraphText::Entry(name) => {
                let label = self.sink.b.intern(name);
                self.graph.entry(cpu, now, label);
            }
            GraphText::Leaf(name) => {
                let label = self.sink.b.intern(name);
                self.graph.leaf(cpu, now, label, duration);
            }
            GraphText::Exit(name) => {
                let label = self.sink.b.intern(name.unwrap_or(b"?"));
                self.graph.exit(cpu, now, abs.is_some(), duration, label);
            }
            GraphText::Comment(body) => {
                let (comm, pid) = self.graph.task(cpu).unwrap_or((self.empty, -1));
                self.body(body, now, cpu, pid, comm, IrqFlags::NONE, false);
            }
            GraphText::Incomplete(_) => {}
        }
    }

    /// `#` lines: headers anywhere (concatenated captures), `##### CPU n buffer started ####`.
    fn header(&mut self, line: &[u8]) {
        let text = |s: &[u8]| String::from_utf8_lossy(trim(s)).into_owned();
        if let Some(rest) = line.strip_prefix(b"##### CPU ") {
            let (cpu, _) = split_digits(rest);
            if let Some(cpu) = parse_u64(cpu) {
                self.buffer_started.push((self.line, cpu));
            }
        } else if let Some(rest) = line.strip_prefix(b"# tracer:") {
            // A new capture starts (concatenated files): calls still open belong to the
            // previous one.
            self.graph.finish();
            self.metadata.push(("tracer".into(), text(rest)));
        } else if let Some(rest) = line.strip_prefix(b"# entries-in-buffer/entries-written:") {
            let rest = trim(rest);
            let (nums, cpus) = match find(rest, b"#P:") {
                Some(i) => (trim(&rest[..i]), Some(&rest[i + 3..])),
                None => (rest, None),
            };
            if let Some(slash) = memchr(b'/', nums) {
                self.metadata.push(("entries-in-buffer".into(), text(&nums[..slash])));
                self.metadata.push(("entries-written".into(), text(&nums[slash + 1..])));
            }
            if let Some(c) = cpus {
                self.metadata.push(("cpus".into(), text(c)));
            }
        } else if let Some(rest) = line.strip_prefix(b"# latency:") {
            self.metadata.push(("latency".into(), text(rest)));
        }
    }

    /// Lines that are neither events nor headers: lost-event notes and trace-cmd preamble.
    fn annotation(&mut self, t: &[u8]) -> bool {
        if let Some(rest) = t.strip_prefix(b"CPU:") {
            let (cpu, rest) = split_digits(rest);
            let Some(cpu) = parse_u64(cpu).and_then(|c| u16::try_from(c).ok()) else { return false };
            let Some(inner) = trim_start(rest).strip_prefix(b"[").and_then(|r| r.strip_suffix(b"]")) else {
                return false;
            };
            let lost = if inner == b"LOST EVENTS" || inner == b"EVENTS DROPPED" {
                Some(None)
            } else if let Some(n) = inner.strip_prefix(b"LOST ") {
                n.strip_suffix(b" EVENTS").map(parse_u64)
            } else {
                inner.strip_suffix(b" EVENTS DROPPED").map(parse_u64)
            };
            match lost {
                Some(lost) => {
                    self.open_gaps.push(Gap { cpu, ts: self.last_ts, lost });
                    return true;
                }
                None => return inner == b"SUBBUFFER START",
            }
        }
        if let Some(v) = t.strip_prefix(b"version = ") {
            self.metadata.push(("version".into(), String::from_utf8_lossy(v).into_owned()));
            return true;
        }
        if let Some(v) = t.strip_prefix(b"cpus=")
            && parse_u64(v).is_some()
        {
            self.metadata.push(("cpus".into(), String::from_utf8_lossy(v).into_owned()));
            return true;
        }
        if t.starts_with(b"CPU ") && t.ends_with(b" is empty") {
            return true;
        }
        // The function_graph context-switch banner's dash lines and overrun notes.
        if t.len() >= 8 && t.iter().all(|&c| c == b'-') {
            return true;
        }
        t.starts_with(b"(Overruns:")
    }

    fn finish(mut self) -> ChunkOut {
        self.graph.finish();
        if self.graph.too_deep > 0 {
            self.diag
                .warn(format!("{} function_graph calls nested too deep were dropped", self.graph.too_deep));
        }
        let first_ts = self
            .first_ts
            .iter()
            .enumerate()
            .filter(|(_, t)| **t != Ps::MIN)
            .map(|(c, &t)| (c as u16, t))
            .collect();
        ChunkOut {
            events: WindowedPart::new(self.sink.b),
            diag: self.diag,
            spans: std::mem::take(&mut self.graph.spans),
            metadata: self.metadata,
            buffer_started: self.buffer_started,
            records: self.records + self.graph.records,
            saw_cpu_column: self.saw_cpu,
            lines: self.line,
            open_gaps: self.open_gaps,
            first_ts,
            unmatched_exits: self.graph.unmatched_exits,
        }
    }
}

/// True if a chunk may start at this line: an event line that is not a stack-trace record
/// (whose frames belong to the event before it).
/// Mirrors the dispatch order of `parse_line`: a line it reads as a stack frame or a header
/// is never a cut point, even if an event prefix hides inside it.
pub(crate) fn is_cut_point(line: &[u8]) -> bool {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.len() > MAX_LINE || line.first() == Some(&b'#') || trim_start(line).starts_with(b"=>") {
        return false;
    }
    let p = match parse_event_prefix(line) {
        Some(p) => p,
        None => match parse_latency_prefix(line) {
            Some(p) => p,
            None => return false,
        },
    };
    !is_stack_record(p.body)
}

/// The body of a kernel stack record, whose `=>` frames follow on their own lines.
fn is_stack_record(body: &[u8]) -> bool {
    body == b"<stack trace>" || body == b"<user stack trace>"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assemble::SharedColumns;

    /// The name cache must read every body as `name_token` does, whatever came before.
    #[test]
    fn cached_event_names_read_as_the_name_scan() {
        let bodies: &[&[u8]] = &[
            b"sched_waking: comm=a pid=1",
            b"sched_wakeup: comm=a pid=1",
            // Same first 16 bytes, different names.
            b"hrtimer_expire_entry: hrtimer=1",
            b"hrtimer_expire_exit: hrtimer=1",
            b"hrtimer_expire_entry: hrtimer=2",
            // Same 16 bytes and length, different tail.
            b"hrtimer_expire_enrty: hrtimer=2",
            // 16, 24 and 25 characters, and one name ending exactly where the key does.
            b"abcdefghijklmnop: x=1",
            // Same 16 bytes as the name just cached: no blank after the colon, a longer name.
            b"abcdefghijklmnop:x=1",
            b"abcdefghijklmnopq: x=1",
            b"abcdefghijklmnop: x=1",
            b"abcdefghijklmnopq x=1",
            b"abcdefghijklmnopqrstuvwx: x=1",
            b"abcdefghijklmnopqrstuvwxy: x=1",
            b"abcdefghijklmnopqrstuvwxy: x=2",
            // Cached prefix, then not a name: no blank after the colon, or a longer name.
            b"sched_waking:comm=a pid=1",
            b"sched_waking_more: comm=a",
            b"hrtimer_expire_entry2: x",
            b"hrtimer_expire_entr: x",
            // Short names (payload in the key), short bodies, empty payloads, tabs.
            b"print: a",
            b"print: b",
            b"cpu_idle:",
            b"cpu_idle:\tstate=1",
            b"x: y",
            b"sched_waking: ",
            b"sched_waking: comm=a pid=1",
            b"not a name at all",
        ];
        let mut columns = SharedColumns::new(vec![0]);
        let Some(window) = columns.windows().into_iter().next() else { panic!("one window") };
        let mut p = ChunkParser::new(0, window);
        for round in 0..3 {
            for body in bodies {
                let expected = name_token(body).map(|(name, payload)| (p.name_index(name), payload));
                assert_eq!(p.event_name(body), expected, "round {round}: {}", String::from_utf8_lossy(body));
            }
        }
        // Right after a body is read, its name is in the cache (when it fits there).
        let mut cached = 0;
        for body in bodies {
            p.event_name(body);
            let fits = body.len() >= 16 && name_token(body).is_some_and(|(n, _)| n.len() <= NAME_HIT_BYTES);
            if fits {
                assert!(
                    p.name_hits
                        .iter()
                        .any(|h| h.0 == [word_at(body, 0).unwrap_or(0), word_at(body, 8).unwrap_or(0)])
                );
                cached += 1;
            }
        }
        assert!(cached >= 10, "{cached}");
    }
}

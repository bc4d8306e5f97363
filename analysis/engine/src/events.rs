//! Every event of a capture, one per line, as `latscope events` prints it. The text form
//! is `trace-cmd report`'s: a `cpus=N` line, then `COMM-PID [CPU] SECS.USECS: EVENT:
//! PAYLOAD` with trace-cmd's widths (comm right-aligned in 16, pid left-aligned in 5, cpu in
//! 3 digits, seconds in 5, microseconds rounded to the nearest, the event name and its colon
//! padded to 21), payloads rendered as trace-cmd renders them (see
//! `latscope_model::render_event`). csv gives one row per event with its fields as people
//! read them (`254,0`), json one object with its typed stored values.

use latscope_model::{FieldKind, FieldValue, Filter, PS_PER_S, Source, Sym, write_payload};
use rayon::prelude::*;
use std::fmt::Write as _;
use std::io::{self, Write};

/// The forms `latscope events` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventsFormat {
    Text,
    Csv,
    Json,
}

/// Writes the events of `source` that `filter` keeps, in `format`.
pub fn write_events(
    source: &Source,
    filter: &Filter,
    format: EventsFormat,
    w: &mut impl Write,
) -> io::Result<()> {
    match format {
        EventsFormat::Text => write_text(source, filter, w),
        EventsFormat::Csv => write_csv(source, filter, w),
        EventsFormat::Json => write_json(source, filter, w),
    }
}

/// Number of CPUs as trace-cmd's `cpus=` line gives it: the file's count where it has one.
fn cpu_count(source: &Source) -> u64 {
    source
        .metadata
        .iter()
        .find(|(k, _)| k == "cpus")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or_else(|| source.events.cpu.iter().copied().max().map_or(1, |c| u64::from(c) + 1))
}

/// Seconds and microseconds of a model time, rounded to the nearest microsecond as
/// libtraceevent prints `%6.1000d`.
fn secs_usecs(source: &Source, ts: i64) -> (i64, i64) {
    let ps =
        i128::from(source.origin.secs) * i128::from(PS_PER_S) + i128::from(source.origin.ps) + i128::from(ts);
    let ns = ps.div_euclid(1000);
    // Microseconds fit an i64 for 292,000 years; 64-bit division is what printing costs.
    let us = i64::try_from((ns + 500).div_euclid(1000)).unwrap_or(i64::MAX);
    (us.div_euclid(1_000_000), us.rem_euclid(1_000_000))
}

/// Appends the decimal digits of `v`, padded on the left with `fill` to `width`.
fn push_num(out: &mut Vec<u8>, v: u64, width: usize, fill: u8) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    let mut v = v;
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    let digits = buf.len() - i;
    out.extend(std::iter::repeat_n(fill, width.saturating_sub(digits)));
    out.extend_from_slice(&buf[i..]);
}

/// Writes one event as `trace-cmd report` prints it (`%16s-%-5d [%03d] %5llu.%06llu: `, the
/// name and colon padded to 21, a space, the payload), without the newline. Written by hand:
/// through `format!` the columns cost more than the payload.
pub fn write_report_line(source: &Source, index: usize, payload: &mut String, out: &mut Vec<u8>) {
    let Some(ev) = source.events.get(index) else { return };
    let s = &source.strings;
    let (secs, usecs) = secs_usecs(source, ev.ts());
    let comm = s.bytes_of(ev.comm());
    let comm = String::from_utf8_lossy(comm);
    out.extend(std::iter::repeat_n(b' ', 16usize.saturating_sub(comm.chars().count())));
    out.extend_from_slice(comm.as_bytes());
    out.push(b'-');
    let start = out.len();
    if ev.pid() < 0 {
        out.push(b'-');
    }
    push_num(out, u64::from(ev.pid().unsigned_abs()), 0, b' ');
    let pid_len = out.len() - start;
    out.extend(std::iter::repeat_n(b' ', 5usize.saturating_sub(pid_len)));
    out.extend_from_slice(b" [");
    push_num(out, u64::from(ev.cpu()), 3, b'0');
    out.extend_from_slice(b"] ");
    if secs < 0 {
        let _ = std::io::Write::write_fmt(out, format_args!("{secs:>5}"));
    } else {
        push_num(out, secs as u64, 5, b' ');
    }
    out.push(b'.');
    push_num(out, usecs as u64, 6, b'0');
    out.extend_from_slice(b": ");
    let name = s.resolve(ev.name());
    out.extend_from_slice(name.as_bytes());
    out.push(b':');
    out.extend(std::iter::repeat_n(b' ', 20usize.saturating_sub(name.chars().count()) + 1));
    payload.clear();
    write_payload(source, index, payload);
    out.extend_from_slice(payload.as_bytes());
}

/// Events per parallel batch: rendering is the work, so batches of events render on every
/// core into buffers that are written in order.
const BATCH: usize = 1 << 14;

/// Renders every event that passes `filter` with `line` (which appends one record to the
/// buffer, given a reusable payload string), in parallel batches, writing them in order.
fn for_each_event(
    source: &Source,
    filter: &Filter,
    w: &mut impl Write,
    line: impl Fn(usize, &mut String, &mut Vec<u8>) + Sync,
) -> io::Result<()> {
    let n = source.events.len();
    let starts: Vec<usize> = (0..n).step_by(BATCH).collect();
    let group = rayon::current_num_threads().max(1) * 2;
    for starts in starts.chunks(group) {
        let bufs: Vec<Vec<u8>> = starts
            .par_iter()
            .map(|&start| {
                let mut out = Vec::with_capacity(BATCH * 96);
                let mut payload = String::new();
                for i in start..(start + BATCH).min(n) {
                    if filter.is_empty() || filter.matches(source, i) {
                        line(i, &mut payload, &mut out);
                    }
                }
                out
            })
            .collect();
        for b in bufs {
            w.write_all(&b)?;
        }
    }
    Ok(())
}

fn write_text(source: &Source, filter: &Filter, w: &mut impl Write) -> io::Result<()> {
    writeln!(w, "cpus={}", cpu_count(source))?;
    for_each_event(source, filter, w, |i, payload, out| {
        write_report_line(source, i, payload, out);
        out.push(b'\n');
    })
}

fn csv_cell(s: &str, out: &mut String) {
    if s.contains([',', '"', '\n', '\r']) {
        out.push('"');
        out.push_str(&s.replace('"', "\"\""));
        out.push('"');
    } else {
        out.push_str(s);
    }
}

/// A CSV cell of field `name`, as people read it (`254,0`, `0x1AA`; JSON keeps the stored
/// numbers).
fn value_cell(source: &Source, name: Sym, kind: FieldKind, v: FieldValue, out: &mut String) {
    if let Some(text) = latscope_model::display::readable(&source.strings.resolve(name), kind, v) {
        return csv_cell(&text, out);
    }
    match v {
        FieldValue::Int(i) => out.push_str(&i.to_string()),
        FieldValue::UInt(u) => out.push_str(&u.to_string()),
        FieldValue::Str(s) => csv_cell(&source.strings.resolve(s), out),
    }
}

/// CSV: `time,cpu,comm,pid,event,payload`, then one column per field name (in order of
/// first appearance over the event layouts), empty where an event has no such field.
fn write_csv(source: &Source, filter: &Filter, w: &mut impl Write) -> io::Result<()> {
    let mut columns: Vec<Sym> = Vec::new();
    let layout_columns: Vec<Vec<usize>> = source
        .events
        .layouts()
        .iter()
        .map(|l| {
            l.fields
                .iter()
                .map(|&(name, _)| match columns.iter().position(|&c| c == name) {
                    Some(i) => i,
                    None => {
                        columns.push(name);
                        columns.len() - 1
                    }
                })
                .collect()
        })
        .collect();
    let mut head = String::from("time,cpu,comm,pid,event,payload");
    for &c in &columns {
        head.push(',');
        csv_cell(&source.strings.resolve(c), &mut head);
    }
    writeln!(w, "{head}")?;
    for_each_event(source, filter, w, |i, payload, out| {
        let Some(ev) = source.events.get(i) else { return };
        let s = &source.strings;
        let (secs, usecs) = secs_usecs(source, ev.ts());
        let mut row = format!("{secs}.{usecs:06},{},", ev.cpu());
        csv_cell(&s.resolve(ev.comm()), &mut row);
        let _ = write!(row, ",{},", ev.pid());
        csv_cell(&s.resolve(ev.name()), &mut row);
        row.push(',');
        payload.clear();
        write_payload(source, i, payload);
        csv_cell(payload, &mut row);
        let mut cells: Vec<String> = vec![String::new(); columns.len()];
        let cols = &layout_columns[source.events.layout[i].0 as usize];
        for (((name, v), &(_, kind)), &col) in ev.fields().zip(&ev.layout().fields).zip(cols) {
            value_cell(source, name, kind, v, &mut cells[col]);
        }
        for c in &cells {
            row.push(',');
            row.push_str(c);
        }
        row.push('\n');
        out.extend_from_slice(row.as_bytes());
    })
}

/// JSON: an array of `{"time", "cpu", "comm", "pid", "event", "payload", "fields": {…}}`
/// with integer fields as numbers and strings as strings.
fn write_json(source: &Source, filter: &Filter, w: &mut impl Write) -> io::Result<()> {
    w.write_all(b"[")?;
    // Every object is written after `,\n`; the first one's comma is dropped on the way out.
    let mut body = SkipFirst { inner: &mut *w, skip: 1 };
    for_each_event(source, filter, &mut body, |i, payload, out| {
        let Some(ev) = source.events.get(i) else { return };
        let s = &source.strings;
        let (secs, usecs) = secs_usecs(source, ev.ts());
        payload.clear();
        write_payload(source, i, payload);
        let mut fields = serde_json::Map::new();
        for (name, v) in ev.fields() {
            let value = match v {
                FieldValue::Int(x) => serde_json::Value::from(x),
                FieldValue::UInt(x) => serde_json::Value::from(x),
                FieldValue::Str(x) => serde_json::Value::from(s.resolve(x).into_owned()),
            };
            fields.insert(s.resolve(name).into_owned(), value);
        }
        let obj = serde_json::json!({
            "time": format!("{secs}.{usecs:06}"),
            "cpu": ev.cpu(),
            "comm": s.resolve(ev.comm()),
            "pid": ev.pid(),
            "event": s.resolve(ev.name()),
            "payload": payload,
            "fields": fields,
        });
        out.extend_from_slice(b",\n");
        let _ = serde_json::to_writer(&mut *out, &obj);
    })?;
    w.write_all(b"\n]\n")
}

/// A writer that drops the first `skip` bytes written through it.
struct SkipFirst<W> {
    inner: W,
    skip: usize,
}

impl<W: Write> Write for SkipFirst<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let drop = self.skip.min(buf.len());
        self.skip -= drop;
        if drop == buf.len() {
            return Ok(buf.len());
        }
        Ok(drop + self.inner.write(&buf[drop..])?)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

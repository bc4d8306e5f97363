//! `latscope events FILE [--filter TERMS] [--format text|csv|json]`: every event of a
//! capture, one per line. The text form is `trace-cmd report`'s: a `cpus=N` line, then
//! `COMM-PID [CPU] SECS.USECS: EVENT: PAYLOAD` with trace-cmd's widths (comm right-aligned
//! in 16, pid left-aligned in 5, cpu in 3 digits, seconds in 5, microseconds rounded to the
//! nearest, the event name and its colon padded to 21), payloads rendered as trace-cmd
//! renders them (see `latscope_model::render_event`). csv and json give one row or object
//! per event with its typed fields.

use anyhow::{Context, Result};
use latscope_importers::LoadControl;
use latscope_model::{FieldValue, Filter, PS_PER_S, Source, Sym, write_payload};
use std::io::{self, Write};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct EventsArgs {
    /// A capture in any format latscope reads (trace.dat, ftrace text, …).
    pub file: PathBuf,
    /// Only events matching every term: `word`, `"a phrase"`, `field=value`, `field~text`,
    /// `-term` (not); `event`, `comm`, `pid` and `cpu` name the columns.
    #[arg(long, value_name = "TERMS")]
    pub filter: Option<String>,
    /// Output: trace-cmd report's text, CSV (one column per field name), or a JSON array.
    #[arg(long, value_enum, default_value = "text")]
    pub format: EventsFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EventsFormat {
    Text,
    Csv,
    Json,
}

pub fn run(args: &EventsArgs) -> Result<()> {
    let filter = match &args.filter {
        Some(f) => Filter::parse(f).with_context(|| format!("--filter {f:?}"))?,
        None => Filter::default(),
    };
    let source = latscope_importers::open(&args.file, &LoadControl::new())?;
    let stdout = io::stdout();
    let mut w = io::BufWriter::with_capacity(1 << 20, stdout.lock());
    let written = match args.format {
        EventsFormat::Text => write_text(&source, &filter, &mut w),
        EventsFormat::Csv => write_csv(&source, &filter, &mut w),
        EventsFormat::Json => write_json(&source, &filter, &mut w),
    }
    .and_then(|()| w.flush());
    // The process ends right after printing; freeing a large trace piece by piece would
    // only delay the exit.
    std::mem::forget(source);
    match written {
        // `latscope events big.dat | head` is not an error.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        r => r.context("writing the events"),
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
fn secs_usecs(source: &Source, ts: i64) -> (i128, i128) {
    let ps =
        i128::from(source.origin.secs) * i128::from(PS_PER_S) + i128::from(source.origin.ps) + i128::from(ts);
    let ns = ps.div_euclid(1000);
    let us = (ns + 500).div_euclid(1000);
    (us.div_euclid(1_000_000), us.rem_euclid(1_000_000))
}

/// Writes one event as `trace-cmd report` prints it, without the newline.
pub fn write_report_line(source: &Source, index: usize, payload: &mut String, out: &mut Vec<u8>) {
    let Some(ev) = source.events.get(index) else { return };
    let s = &source.strings;
    let (secs, usecs) = secs_usecs(source, ev.ts());
    let name = s.resolve(ev.name());
    let pad = 20usize.saturating_sub(name.chars().count());
    payload.clear();
    write_payload(source, index, payload);
    let _ = write!(
        out,
        "{:>16}-{:<5} [{:03}] {secs:>5}.{usecs:06}: {name}:{:pad$} {payload}",
        s.resolve(ev.comm()),
        ev.pid(),
        ev.cpu(),
        ""
    );
}

fn write_text(source: &Source, filter: &Filter, w: &mut impl Write) -> io::Result<()> {
    writeln!(w, "cpus={}", cpu_count(source))?;
    let mut payload = String::new();
    let mut line = Vec::with_capacity(256);
    for i in 0..source.events.len() {
        if !filter.is_empty() && !filter.matches(source, i) {
            continue;
        }
        line.clear();
        write_report_line(source, i, &mut payload, &mut line);
        line.push(b'\n');
        w.write_all(&line)?;
    }
    Ok(())
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

fn value_cell(source: &Source, v: FieldValue, out: &mut String) {
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
    let mut payload = String::new();
    let mut cells: Vec<String> = vec![String::new(); columns.len()];
    let mut row = String::new();
    for i in 0..source.events.len() {
        if !filter.is_empty() && !filter.matches(source, i) {
            continue;
        }
        let Some(ev) = source.events.get(i) else { continue };
        let s = &source.strings;
        let (secs, usecs) = secs_usecs(source, ev.ts());
        row.clear();
        row.push_str(&format!("{secs}.{usecs:06},{},", ev.cpu()));
        csv_cell(&s.resolve(ev.comm()), &mut row);
        row.push_str(&format!(",{},", ev.pid()));
        csv_cell(&s.resolve(ev.name()), &mut row);
        row.push(',');
        payload.clear();
        write_payload(source, i, &mut payload);
        csv_cell(&payload, &mut row);
        for c in &mut cells {
            c.clear();
        }
        let cols = &layout_columns[source.events.layout[i].0 as usize];
        for ((_, v), &col) in ev.fields().zip(cols) {
            value_cell(source, v, &mut cells[col]);
        }
        for c in &cells {
            row.push(',');
            row.push_str(c);
        }
        row.push('\n');
        w.write_all(row.as_bytes())?;
    }
    Ok(())
}

/// JSON: an array of `{"time", "cpu", "comm", "pid", "event", "payload", "fields": {…}}`
/// with integer fields as numbers and strings as strings.
fn write_json(source: &Source, filter: &Filter, w: &mut impl Write) -> io::Result<()> {
    let mut payload = String::new();
    let mut first = true;
    w.write_all(b"[")?;
    for i in 0..source.events.len() {
        if !filter.is_empty() && !filter.matches(source, i) {
            continue;
        }
        let Some(ev) = source.events.get(i) else { continue };
        let s = &source.strings;
        let (secs, usecs) = secs_usecs(source, ev.ts());
        payload.clear();
        write_payload(source, i, &mut payload);
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
        w.write_all(if first { b"\n" } else { b",\n" })?;
        first = false;
        serde_json::to_writer(&mut *w, &obj)?;
    }
    w.write_all(b"\n]\n")?;
    Ok(())
}

//! Prints every event of captures opened as `latscope_importers::open` opens them — time,
//! cpu, pid, comm, flags, layout, name, fields (strings resolved) and stack — plus the
//! span and analog track counts, for checking that an importer change keeps its output:
//! `cargo run --release -p latscope-importers --example event_dump -- FILE... > dump.txt`

use latscope_importers::LoadControl;
use latscope_model::FieldValue;
use std::io::Write;

fn main() -> std::io::Result<()> {
    let out = std::io::stdout();
    let mut out = std::io::BufWriter::new(out.lock());
    for path in std::env::args().skip(1) {
        let src = match latscope_importers::open(std::path::Path::new(&path), &LoadControl::new()) {
            Err(e) => {
                writeln!(out, "{path}: error: {e}")?;
                continue;
            }
            Ok(src) => src,
        };
        let t = &src.events;
        let s = &src.strings;
        writeln!(
            out,
            "{path}: {} events, {} layouts, {} stacks, {} span tracks, {} analog tracks",
            t.len(),
            t.layouts().len(),
            t.stacks().len(),
            src.spans.len(),
            src.analog.len()
        )?;
        for e in t.iter() {
            write!(
                out,
                "{} {} {} {}:{} {:?} L{} {}",
                e.ts(),
                e.cpu(),
                e.pid(),
                e.comm().0,
                s.resolve(e.comm()),
                e.flags(),
                t.layout[e.index].0,
                s.resolve(e.name())
            )?;
            for (name, v) in e.fields() {
                match v {
                    FieldValue::Str(v) => write!(out, " {}={}:{:?}", s.resolve(name), v.0, s.resolve(v))?,
                    v => write!(out, " {}={:?}", s.resolve(name), v)?,
                }
            }
            if let Some(st) = e.stack() {
                write!(out, " stack={:?}", s.resolve(st))?;
            }
            writeln!(out)?;
        }
    }
    out.flush()
}

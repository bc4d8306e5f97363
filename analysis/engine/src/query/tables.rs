//! The tables a query reads, built from placed sources (and, for `pairs` and `windows`, a
//! report with its per-sample rows) as polars data frames. Each is built only when a query
//! names it.

use super::QueryError;
use crate::decode::DECODER_KEY;
use latscope_analysis::report::Report;
use latscope_model::{FieldKind, FieldValue, Placed, Source, Sym};
use polars::prelude::*;
use std::borrow::Cow;
use std::collections::BTreeMap;

/// The tables every capture has, with what a row is (`latscope query --help` lists them).
pub const FIXED: &[(&str, &str)] = &[
    ("events", "one row per event: source, time_s, time_ps, cpu, pid, comm, name"),
    ("pairs", "one row per measured pair of the analyses (the fleet dataset's pairs schema)"),
    ("windows", "one row per detector window (stall:, long:), the fleet dataset's windows schema"),
    ("annotations", "one row per decoded annotation: source, decoder, row, start_s, end_s, text, fields"),
    ("edges", "one row per level change of a digital track: source, track, time_s, time_ps, level"),
    ("tracks", "one row per track: source, name, kind, count, start_s, end_s"),
];

/// The columns of `events` (and the first ones of every per-event table but `name`).
pub const EVENT_COLUMNS: [&str; 7] = ["source", "time_s", "time_ps", "cpu", "pid", "comm", "name"];

/// What the tables are built from: the sources as placed on the common timeline, named as
/// the user gave them, and the report of their analyses (with its per-sample rows) when a
/// query reads `pairs` or `windows`.
#[derive(Debug, Clone)]
pub struct Tables<'a> {
    /// Each source's name in the `source` columns (the path as typed).
    pub names: Vec<String>,
    pub placed: Vec<Placed<'a>>,
    pub report: Option<&'a Report>,
    /// The capture's id in `pairs` and `windows` (the fleet dataset's content hash).
    pub capture: String,
}

/// A column of a per-event table: its name in the table, the field it holds and its type.
#[derive(Debug, Clone, PartialEq)]
struct FieldColumn {
    column: String,
    field: String,
    dtype: DataType,
}

impl<'a> Tables<'a> {
    /// Every event name of the sources, sorted: each is a table.
    pub fn event_names(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for p in &self.placed {
            for l in p.source.events.layouts() {
                let n = p.source.strings.resolve(l.event).into_owned();
                if !names.contains(&n) {
                    names.push(n);
                }
            }
        }
        names.sort();
        names
    }

    /// Every table a query may name: the fixed ones, then one per event name (a name equal
    /// to a fixed table's is that table).
    pub fn table_names(&self) -> Vec<String> {
        let mut out: Vec<String> = FIXED.iter().map(|(n, _)| (*n).to_owned()).collect();
        out.extend(self.event_names().into_iter().filter(|n| !FIXED.iter().any(|(f, _)| f == n)));
        out
    }

    /// The columns of table `name`, without building it.
    pub fn columns(&self, name: &str) -> Result<Vec<String>, QueryError> {
        let fixed: &[&str] = match name {
            "events" => &EVENT_COLUMNS,
            "pairs" | "windows" => {
                // Without a report (no analyses run yet) the columns are the dataset
                // schema's names, in the order its frames put them.
                let Some(r) = self.report else {
                    use latscope_fleet::schema::*;
                    let lead = [COL_VERSION, COL_CAPTURE, COL_ANALYSIS];
                    let rest: &[&str] = if name == "pairs" {
                        &[
                            COL_STAGE,
                            COL_KIND,
                            COL_SOURCE,
                            COL_INPUT,
                            COL_KEY,
                            COL_START,
                            COL_END,
                            COL_LATENCY,
                        ]
                    } else {
                        &[COL_SOURCE, COL_START, COL_END, COL_DURATION, COL_EXCESS]
                    };
                    return Ok(lead.iter().chain(rest).map(|c| (*c).to_owned()).collect());
                };
                let df = if name == "pairs" {
                    latscope_fleet::dataset::pairs_frame("", &Default::default(), r)
                } else {
                    latscope_fleet::dataset::windows_frame("", &Default::default(), r)
                }
                .map_err(|e| QueryError::Build { table: name.to_owned(), message: e.to_string() })?;
                return Ok(df.get_column_names().into_iter().map(|c| c.to_string()).collect());
            }
            "annotations" => &ANNOTATION_COLUMNS,
            "edges" => &EDGE_COLUMNS,
            "tracks" => &TRACK_COLUMNS,
            _ => {
                let fields = self.field_columns(name);
                if fields.is_none() {
                    return Err(self.unknown_table(name));
                }
                let mut cols: Vec<String> = base_columns(fields.as_deref().unwrap_or_default());
                cols.extend(fields.unwrap_or_default().into_iter().map(|f| f.column));
                return Ok(cols);
            }
        };
        Ok(fixed.iter().map(|c| (*c).to_owned()).collect())
    }

    pub(super) fn unknown_table(&self, name: &str) -> QueryError {
        QueryError::UnknownTable { table: name.to_owned(), known: self.table_names() }
    }

    /// Builds table `name`.
    pub fn frame(&self, name: &str) -> Result<DataFrame, QueryError> {
        let built = match name {
            "events" => self.events(),
            "pairs" | "windows" => {
                let Some(report) = self.report else {
                    return Err(QueryError::Build {
                        table: name.to_owned(),
                        message: "no analyses were run".into(),
                    });
                };
                let labels = Default::default();
                if name == "pairs" {
                    latscope_fleet::dataset::pairs_frame(&self.capture, &labels, report)
                } else {
                    latscope_fleet::dataset::windows_frame(&self.capture, &labels, report)
                }
            }
            "annotations" => self.annotations(),
            "edges" => self.edges(),
            "tracks" => self.tracks(),
            _ => match self.field_columns(name) {
                Some(fields) => self.event_table(name, &fields),
                None => return Err(self.unknown_table(name)),
            },
        };
        built.map_err(|e| QueryError::Build { table: name.to_owned(), message: e.to_string() })
    }

    /// The columns of the fields of events named `name` across every source (in order of
    /// first appearance), each typed by its kind; a field stored with different kinds in
    /// different layouts is text. `None` when no source has such events.
    fn field_columns(&self, name: &str) -> Option<Vec<FieldColumn>> {
        let mut found = false;
        let mut fields: Vec<(String, Option<FieldKind>)> = Vec::new();
        for p in &self.placed {
            let strings = &p.source.strings;
            for l in p.source.events.layouts() {
                if strings.resolve(l.event) != name {
                    continue;
                }
                found = true;
                for &(f, kind) in &l.fields {
                    let f = strings.resolve(f).into_owned();
                    let kind = if kind == FieldKind::Hex { FieldKind::UInt } else { kind };
                    match fields.iter_mut().find(|(n, _)| *n == f) {
                        Some((_, k)) if *k != Some(kind) => *k = None,
                        Some(_) => {}
                        None => fields.push((f, Some(kind))),
                    }
                }
            }
        }
        if !found {
            return None;
        }
        let taken: Vec<&str> = ["source", "time_s", "time_ps"].to_vec();
        Some(
            fields
                .into_iter()
                .map(|(field, kind)| FieldColumn {
                    // A field never hides the time or the source: it is renamed instead.
                    column: if taken.contains(&field.as_str()) {
                        format!("field_{field}")
                    } else {
                        field.clone()
                    },
                    field,
                    dtype: match kind {
                        Some(FieldKind::Int) => DataType::Int64,
                        Some(FieldKind::UInt | FieldKind::Hex) => DataType::UInt64,
                        Some(FieldKind::Str) | None => DataType::String,
                    },
                })
                .collect(),
        )
    }

    /// `events`: every event of every source.
    fn events(&self) -> PolarsResult<DataFrame> {
        let n: usize = self.placed.iter().map(|p| p.source.events.len()).sum();
        let mut cols = EventColumns::with_capacity(n);
        let mut names: Vec<Option<&str>> = Vec::with_capacity(n);
        let texts: Vec<SymTexts<'_>> = self.placed.iter().map(|p| SymTexts::new(p.source)).collect();
        for (i, p) in self.placed.iter().enumerate() {
            let t = &p.source.events;
            for k in 0..t.len() {
                cols.push(&self.names[i], p, k, &texts[i]);
                names.push(Some(texts[i].get(t.layouts()[t.layout[k].0 as usize].event)));
            }
        }
        let mut columns = cols.into_columns(&[]);
        columns.push(Column::new("name".into(), names));
        DataFrame::new(n, columns)
    }

    /// The table of events named `name`: the event columns (`cpu`, `pid`, `comm` named
    /// `common_…` where a field takes the name, as ftrace's formats call them) and a typed
    /// column per field.
    fn event_table(&self, name: &str, fields: &[FieldColumn]) -> PolarsResult<DataFrame> {
        let texts: Vec<SymTexts<'_>> = self.placed.iter().map(|p| SymTexts::new(p.source)).collect();
        let mut cols = EventColumns::with_capacity(0);
        let mut values: Vec<FieldValues> = fields.iter().map(|f| FieldValues::new(&f.dtype)).collect();
        let mut n = 0;
        for (i, p) in self.placed.iter().enumerate() {
            let src = p.source;
            let t = &src.events;
            // Per layout of this source: whether it is `name`, and where each field column's
            // value lies in it.
            let plan: Vec<Option<Vec<Option<usize>>>> = t
                .layouts()
                .iter()
                .map(|l| {
                    (src.strings.resolve(l.event) == name).then(|| {
                        fields
                            .iter()
                            .map(|f| {
                                src.strings.lookup(f.field.as_bytes()).and_then(|sym| l.field_index(sym))
                            })
                            .collect()
                    })
                })
                .collect();
            for k in 0..t.len() {
                let Some(Some(slots)) = plan.get(t.layout[k].0 as usize) else { continue };
                n += 1;
                cols.push(&self.names[i], p, k, &texts[i]);
                let Some(ev) = t.get(k) else { continue };
                let vals: Vec<FieldValue> = ev.fields().map(|(_, v)| v).collect();
                for (slot, out) in slots.iter().zip(values.iter_mut()) {
                    out.push(slot.and_then(|s| vals.get(s).copied()), src);
                }
            }
        }
        let mut columns = cols.into_columns(fields);
        for (f, v) in fields.iter().zip(values) {
            columns.push(v.into_column(&f.column));
        }
        DataFrame::new(n, columns)
    }

    /// `annotations`: every decoded annotation, read back from the span tracks and events
    /// a decode added to its source ([`latscope_decoders::Decoded::attach`]), so a capture
    /// decoded on the command line, in Python or in the workbench gives the same rows.
    fn annotations(&self) -> PolarsResult<DataFrame> {
        let mut rows = AnnotationRows::default();
        for (i, p) in self.placed.iter().enumerate() {
            annotations_of(&self.names[i], p, &mut rows);
        }
        rows.into_frame()
    }

    /// `edges`: every level change of every digital track.
    fn edges(&self) -> PolarsResult<DataFrame> {
        let (mut source, mut track, mut time_s, mut time_ps, mut level) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (i, p) in self.placed.iter().enumerate() {
            for d in &p.source.digital {
                for (t, l) in d.changes() {
                    source.push(self.names[i].as_str());
                    track.push(d.name.as_str());
                    time_s.push(p.source.origin.to_source_seconds(t));
                    time_ps.push(p.placement.to_common(t));
                    level.push(u32::from(l));
                }
            }
        }
        let n = source.len();
        DataFrame::new(
            n,
            vec![
                Column::new("source".into(), source),
                Column::new("track".into(), track),
                Column::new("time_s".into(), time_s),
                Column::new("time_ps".into(), time_ps),
                Column::new("level".into(), level),
            ],
        )
    }

    /// `tracks`: every track of every source, the events table counted as one.
    fn tracks(&self) -> PolarsResult<DataFrame> {
        let mut rows: Vec<TrackRow<'_>> = Vec::new();
        for (i, p) in self.placed.iter().enumerate() {
            let s = p.source;
            let secs = |t: Option<i64>| t.map(|t| s.origin.to_source_seconds(t));
            let name = self.names[i].as_str();
            if !s.events.is_empty() {
                let ts = &s.events.ts;
                rows.push((
                    name,
                    "events".into(),
                    "events",
                    ts.len() as u64,
                    secs(ts.first().copied()),
                    secs(ts.last().copied()),
                ));
            }
            for d in &s.digital {
                rows.push((
                    name,
                    d.name.clone(),
                    "digital",
                    d.transitions() as u64,
                    secs(Some(0)),
                    secs(Some(d.end)),
                ));
            }
            for a in &s.analog {
                let any = !a.samples.is_empty();
                rows.push((
                    name,
                    a.name.clone(),
                    "analog",
                    a.samples.len() as u64,
                    secs(any.then(|| a.time_of(0))),
                    secs(any.then(|| a.end())),
                ));
            }
            for sp in &s.spans {
                rows.push((
                    name,
                    sp.name.clone(),
                    "spans",
                    sp.len() as u64,
                    secs(sp.start.iter().copied().min()),
                    secs(sp.max_end()),
                ));
            }
        }
        let n = rows.len();
        DataFrame::new(
            n,
            vec![
                Column::new("source".into(), rows.iter().map(|r| r.0).collect::<Vec<_>>()),
                Column::new("name".into(), rows.iter().map(|r| r.1.as_str()).collect::<Vec<_>>()),
                Column::new("kind".into(), rows.iter().map(|r| r.2).collect::<Vec<_>>()),
                Column::new("count".into(), rows.iter().map(|r| r.3).collect::<Vec<_>>()),
                Column::new("start_s".into(), rows.iter().map(|r| r.4).collect::<Vec<_>>()),
                Column::new("end_s".into(), rows.iter().map(|r| r.5).collect::<Vec<_>>()),
            ],
        )
    }
}

/// A row of `tracks`: source, name, kind, count, start_s, end_s.
type TrackRow<'a> = (&'a str, String, &'a str, u64, Option<f64>, Option<f64>);

/// A decoder's row of annotations: decoder, row, and its spans (start, end, label).
type RowSpans<'a> = (&'a str, &'a str, Vec<(i64, i64, Sym)>);

pub const ANNOTATION_COLUMNS: [&str; 11] = [
    "source",
    "decoder",
    "row",
    "start_s",
    "end_s",
    "start_ps",
    "end_ps",
    "start_sample",
    "end_sample",
    "text",
    "fields",
];
pub const EDGE_COLUMNS: [&str; 5] = ["source", "track", "time_s", "time_ps", "level"];
pub const TRACK_COLUMNS: [&str; 6] = ["source", "name", "kind", "count", "start_s", "end_s"];

/// The event columns of a per-event table: `cpu`, `pid` and `comm` become `common_…` when a
/// field has that name.
fn base_columns(fields: &[FieldColumn]) -> Vec<String> {
    EVENT_COLUMNS[..6]
        .iter()
        .map(|c| {
            if ["cpu", "pid", "comm"].contains(c) && fields.iter().any(|f| f.column == *c) {
                format!("common_{c}")
            } else {
                (*c).to_owned()
            }
        })
        .collect()
}

/// Each interned string of a source as text, resolved once.
struct SymTexts<'a> {
    texts: Vec<Cow<'a, str>>,
}

impl<'a> SymTexts<'a> {
    fn new(source: &'a Source) -> Self {
        let s = &source.strings;
        SymTexts { texts: (0..s.len()).map(|i| s.resolve(Sym(i as u32))).collect() }
    }

    fn get(&self, sym: Sym) -> &str {
        self.texts.get(sym.0 as usize).map_or("", |c| c.as_ref())
    }
}

/// The columns every event row has, filled row by row.
struct EventColumns<'s> {
    source: Vec<&'s str>,
    time_s: Vec<f64>,
    time_ps: Vec<i64>,
    cpu: Vec<u32>,
    pid: Vec<i32>,
    comm: Vec<&'s str>,
}

impl<'s> EventColumns<'s> {
    fn with_capacity(n: usize) -> Self {
        EventColumns {
            source: Vec::with_capacity(n),
            time_s: Vec::with_capacity(n),
            time_ps: Vec::with_capacity(n),
            cpu: Vec::with_capacity(n),
            pid: Vec::with_capacity(n),
            comm: Vec::with_capacity(n),
        }
    }

    fn push(&mut self, name: &'s str, p: &Placed<'_>, k: usize, texts: &'s SymTexts<'_>) {
        let t = &p.source.events;
        let ts = t.ts[k];
        self.source.push(name);
        self.time_s.push(p.source.origin.to_source_seconds(ts));
        self.time_ps.push(p.placement.to_common(ts));
        self.cpu.push(u32::from(t.cpu[k]));
        self.pid.push(t.pid[k]);
        self.comm.push(texts.get(t.comm[k]));
    }

    fn into_columns(self, fields: &[FieldColumn]) -> Vec<Column> {
        let names = base_columns(fields);
        vec![
            Column::new(names[0].as_str().into(), self.source),
            Column::new(names[1].as_str().into(), self.time_s),
            Column::new(names[2].as_str().into(), self.time_ps),
            Column::new(names[3].as_str().into(), self.cpu),
            Column::new(names[4].as_str().into(), self.pid),
            Column::new(names[5].as_str().into(), self.comm),
        ]
    }
}

/// One field column's values, of its type.
enum FieldValues {
    Int(Vec<Option<i64>>),
    UInt(Vec<Option<u64>>),
    Text(Vec<Option<String>>),
}

impl FieldValues {
    fn new(dtype: &DataType) -> Self {
        match dtype {
            DataType::Int64 => FieldValues::Int(Vec::new()),
            DataType::UInt64 => FieldValues::UInt(Vec::new()),
            _ => FieldValues::Text(Vec::new()),
        }
    }

    fn push(&mut self, v: Option<FieldValue>, source: &Source) {
        match self {
            FieldValues::Int(out) => out.push(match v {
                Some(FieldValue::Int(i)) => Some(i),
                Some(FieldValue::UInt(u)) => i64::try_from(u).ok(),
                _ => None,
            }),
            FieldValues::UInt(out) => out.push(match v {
                Some(FieldValue::UInt(u)) => Some(u),
                Some(FieldValue::Int(i)) => u64::try_from(i).ok(),
                _ => None,
            }),
            FieldValues::Text(out) => out.push(v.map(|v| match v {
                FieldValue::Int(i) => i.to_string(),
                FieldValue::UInt(u) => u.to_string(),
                FieldValue::Str(s) => source.strings.resolve(s).into_owned(),
            })),
        }
    }

    fn into_column(self, name: &str) -> Column {
        match self {
            FieldValues::Int(v) => Column::new(name.into(), v),
            FieldValues::UInt(v) => Column::new(name.into(), v),
            FieldValues::Text(v) => Column::new(name.into(), v),
        }
    }
}

#[derive(Default)]
struct AnnotationRows {
    source: Vec<String>,
    decoder: Vec<String>,
    row: Vec<String>,
    start_s: Vec<f64>,
    end_s: Vec<f64>,
    start_ps: Vec<i64>,
    end_ps: Vec<i64>,
    start_sample: Vec<Option<i64>>,
    end_sample: Vec<Option<i64>>,
    text: Vec<String>,
    fields: Vec<Option<String>>,
}

impl AnnotationRows {
    fn into_frame(self) -> PolarsResult<DataFrame> {
        let n = self.source.len();
        DataFrame::new(
            n,
            vec![
                Column::new("source".into(), self.source),
                Column::new("decoder".into(), self.decoder),
                Column::new("row".into(), self.row),
                Column::new("start_s".into(), self.start_s),
                Column::new("end_s".into(), self.end_s),
                Column::new("start_ps".into(), self.start_ps),
                Column::new("end_ps".into(), self.end_ps),
                Column::new("start_sample".into(), self.start_sample),
                Column::new("end_sample".into(), self.end_sample),
                Column::new("text".into(), self.text),
                Column::new("fields".into(), self.fields),
            ],
        )
    }
}

/// The names of the decoders a source was decoded with (the first stage of each recorded
/// spec and every stage stacked on it), as their annotations name them.
fn decoder_names(source: &Source) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (_, spec) in source.metadata.iter().filter(|(k, _)| k == DECODER_KEY) {
        let Ok(stages) = latscope_decoders::spec::parse(spec) else { continue };
        for s in stages {
            let name = match &s.id {
                Some(id) => format!("{}:{id}", s.name),
                None => s.name.clone(),
            };
            if !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out
}

/// The annotations a decode added to `p`'s source: one per span of a `DECODER.ROW` track,
/// with the fields of the `DECODER_ROW` event at its start. A decode pushes the spans of
/// a row and their start events in the same order and both are sorted stably by start, so
/// the k-th span of a row is the k-th event of its name; where the counts differ (the
/// capture has events of that name itself) the fields are left empty.
fn annotations_of(name: &str, p: &Placed<'_>, rows: &mut AnnotationRows) {
    let src = p.source;
    let decoders = decoder_names(src);
    if decoders.is_empty() {
        return;
    }
    let sample = |key: Sym, ev: &latscope_model::EventRef<'_>| match ev.field(key) {
        Some(FieldValue::Int(i)) => Some(i),
        _ => None,
    };
    // Span tracks by name, in order: several decodes of one decoder add tracks of one name.
    let mut tracks: BTreeMap<&str, Vec<&latscope_model::SpanTrack>> = BTreeMap::new();
    let mut order: Vec<&str> = Vec::new();
    for sp in &src.spans {
        let Some((dec, _)) = sp.name.split_once('.') else { continue };
        if !decoders.iter().any(|d| d == dec) {
            continue;
        }
        if !tracks.contains_key(sp.name.as_str()) {
            order.push(sp.name.as_str());
        }
        tracks.entry(sp.name.as_str()).or_default().push(sp);
    }
    let start_key = src.strings.lookup(b"start_sample");
    let end_key = src.strings.lookup(b"end_sample");
    let mut spans_of: Vec<RowSpans<'_>> = Vec::new();
    for track in order {
        let Some((dec, row)) = track.split_once('.') else { continue };
        let mut spans: Vec<(i64, i64, Sym)> = Vec::new();
        for sp in &tracks[track] {
            spans.extend((0..sp.len()).map(|k| (sp.start[k], sp.end[k], sp.label[k])));
        }
        spans.sort_by_key(|s| s.0);
        spans_of.push((dec, row, spans));
    }
    // The start events of each row, in table order.
    let mut events_of: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    let wanted: Vec<String> = spans_of.iter().map(|(d, r, _)| latscope_decoders::event_name(d, r)).collect();
    let layouts_named: Vec<Option<usize>> = src
        .events
        .layouts()
        .iter()
        .map(|l| {
            let n = src.strings.resolve(l.event);
            wanted.iter().position(|w| *w == n)
        })
        .collect();
    for k in 0..src.events.len() {
        if let Some(Some(w)) = layouts_named.get(src.events.layout[k].0 as usize) {
            events_of.entry(wanted[*w].clone()).or_default().push(k);
        }
    }
    let skip: Vec<Option<Sym>> = vec![start_key, end_key];
    for ((dec, row, spans), event) in spans_of.into_iter().zip(&wanted) {
        let evs = events_of.get(event).filter(|e| e.len() == spans.len());
        for (j, (start, end, label)) in spans.into_iter().enumerate() {
            let ev = evs.and_then(|e| src.events.get(e[j]));
            rows.source.push(name.to_owned());
            rows.decoder.push(dec.to_owned());
            rows.row.push(row.to_owned());
            rows.start_s.push(src.origin.to_source_seconds(start));
            rows.end_s.push(src.origin.to_source_seconds(end));
            rows.start_ps.push(p.placement.to_common(start));
            rows.end_ps.push(p.placement.to_common(end));
            rows.start_sample.push(ev.as_ref().zip(start_key).and_then(|(e, k)| sample(k, e)));
            rows.end_sample.push(ev.as_ref().zip(end_key).and_then(|(e, k)| sample(k, e)));
            rows.text.push(src.strings.resolve(label).into_owned());
            rows.fields.push(ev.map(|e| {
                let mut map = serde_json::Map::new();
                for (k, v) in e.fields() {
                    if skip.contains(&Some(k)) {
                        continue;
                    }
                    let value = match v {
                        FieldValue::Int(i) => serde_json::Value::from(i),
                        FieldValue::UInt(u) => serde_json::Value::from(u),
                        FieldValue::Str(s) => serde_json::Value::from(src.strings.resolve(s).into_owned()),
                    };
                    map.insert(src.strings.resolve(k).into_owned(), value);
                }
                serde_json::Value::Object(map).to_string()
            }));
        }
    }
}

//! `latscope decode FILE --decoder SPEC [--format text|csv|json] [-o OUT]`: protocol
//! decoders over a capture's channels, annotations printed or written (atomically). Also
//! the `--decoder` step of `report` and `info`: decoded annotations become span tracks and
//! events of the capture's source.
//!
//! JSON (a contract: add fields, never rename):
//! `{ "latscope_decode": 1, "path", "annotations": [ { "decoder", "row", "start_s", "end_s",
//! "start_sample", "end_sample", "text", "fields": {…} } ], "errors": { "DECODER: KIND": N } }`.

use crate::atomic;
use anyhow::{Context, Result};
use latscope_decoders::{Annotation, Decoded, Inputs, Value};
use latscope_importers::LoadControl;
use latscope_model::Source;
use serde_json::{Map, Value as Json, json};
use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct DecodeArgs {
    /// A capture with digital (or analog) channels: .sr, VCD/FST, CSV.
    pub file: PathBuf,
    /// A decoder stack, e.g. `sd:clk=CLK,cmd=CMD,dat0=DAT0` or `spi:clk=SCK,mosi=MOSI,miso=MISO,cs=CS | sd-spi`;
    /// repeatable. Decoders: uart, spi, i2c, sd, sd-spi.
    #[arg(long = "decoder", value_name = "SPEC", required = true)]
    pub decoders: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: DecodeFormat,
    /// Write here (atomically; never over the input) instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DecodeFormat {
    Text,
    Csv,
    Json,
}

/// The sample rate of a sampled capture (its `samplerate` metadata), so annotations carry
/// sample numbers as sigrok-cli prints them.
pub fn sample_rate(source: &Source) -> Option<u64> {
    let (_, v) = source.metadata.iter().find(|(k, _)| k == "samplerate")?;
    latscope_importers::sigrok::parse_samplerate(v).ok()
}

/// Runs every decoder spec on `source`; one result with all annotations, sorted by start.
pub fn decode_all(source: &Source, specs: &[String]) -> Result<Decoded> {
    let inputs = Inputs::of_source(source, sample_rate(source));
    let mut all = Decoded::default();
    for spec in specs {
        let d = latscope_decoders::decode(spec, &inputs).with_context(|| format!("--decoder {spec:?}"))?;
        all.annotations.extend(d.annotations);
        for (k, n) in d.errors {
            *all.errors.entry(k).or_default() += n;
        }
        all.clock = d.clock;
    }
    all.annotations.sort_by_key(|a| a.start);
    Ok(all)
}

/// Decodes `specs` on `source` and adds the result to it as span tracks and events.
pub fn attach(source: &mut Source, specs: &[String]) -> Result<()> {
    if specs.is_empty() {
        return Ok(());
    }
    let decoded = decode_all(source, specs)?;
    decoded.attach(source).with_context(|| format!("{}: adding the decoded events", source.name))
}

/// Whether a decode failed only because the source lacks a channel the spec names.
fn lacks_channel(e: &anyhow::Error) -> bool {
    matches!(
        e.downcast_ref::<latscope_decoders::DecodeError>(),
        Some(latscope_decoders::DecodeError::UnknownChannel { .. })
    )
}

/// Decodes each spec on every input that has its channels (a kernel trace beside a logic
/// capture has none) and adds the results to them. A spec whose channels no input has is
/// the first input's error, which lists its channels. Returns, per spec, the inputs it ran on.
pub fn attach_where_present(sources: &mut [Source], specs: &[String]) -> Result<Vec<Vec<usize>>> {
    let mut per_source: Vec<Decoded> = sources.iter().map(|_| Decoded::default()).collect();
    let mut ran_on = Vec::with_capacity(specs.len());
    for spec in specs {
        let mut on = Vec::new();
        let mut first_error = None;
        for (i, source) in sources.iter().enumerate() {
            match decode_all(source, std::slice::from_ref(spec)) {
                Ok(d) => {
                    let all = &mut per_source[i];
                    all.annotations.extend(d.annotations);
                    for (k, n) in d.errors {
                        *all.errors.entry(k).or_default() += n;
                    }
                    all.clock = d.clock;
                    on.push(i);
                }
                Err(e) if lacks_channel(&e) && sources.len() > 1 => {
                    first_error.get_or_insert(e);
                }
                Err(e) => return Err(e.context(format!("input {i} ({})", source.name))),
            }
        }
        if on.is_empty()
            && let Some(e) = first_error
        {
            return Err(e.context("no input has the channels"));
        }
        ran_on.push(on);
    }
    for (source, mut d) in sources.iter_mut().zip(per_source) {
        if d.annotations.is_empty() && d.errors.is_empty() {
            continue;
        }
        d.annotations.sort_by_key(|a| a.start);
        d.attach(source).with_context(|| format!("{}: adding the decoded events", source.name))?;
    }
    Ok(ran_on)
}

fn field_json(v: &Value) -> Json {
    match v {
        Value::UInt(u) => json!(u),
        Value::Int(i) => json!(i),
        Value::Bool(b) => json!(b),
        Value::Str(s) => json!(s),
    }
}

fn annotation_json(source: &Source, a: &Annotation) -> Json {
    let fields: Map<String, Json> = a.fields.iter().map(|(k, v)| ((*k).to_owned(), field_json(v))).collect();
    json!({
        "decoder": a.decoder,
        "row": a.row,
        "start_s": source.origin.to_source_seconds(a.start),
        "end_s": source.origin.to_source_seconds(a.end),
        "start_sample": a.start_sample,
        "end_sample": a.end_sample,
        "text": a.text,
        "fields": fields,
    })
}

fn csv_cell(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_owned() }
}

fn field_text(v: &Value) -> String {
    match v {
        Value::UInt(u) => u.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Str(s) => s.clone(),
    }
}

/// The annotations in `format`.
pub fn render(path: &Path, source: &Source, d: &Decoded, format: DecodeFormat) -> Result<Vec<u8>> {
    let sample = |s: Option<i64>| s.map(|s| s.to_string()).unwrap_or_default();
    let mut out = String::new();
    match format {
        DecodeFormat::Json => {
            let doc = json!({
                "latscope_decode": 1,
                "path": path.display().to_string(),
                "annotations": d.annotations.iter().map(|a| annotation_json(source, a)).collect::<Vec<_>>(),
                "errors": d.errors,
            });
            out = serde_json::to_string_pretty(&doc)?;
            out.push('\n');
        }
        DecodeFormat::Csv => {
            out.push_str("decoder,row,start_s,end_s,start_sample,end_sample,text,fields\n");
            for a in &d.annotations {
                let fields: Vec<String> =
                    a.fields.iter().map(|(k, v)| format!("{k}={}", field_text(v))).collect();
                let _ = writeln!(
                    out,
                    "{},{},{:.12},{:.12},{},{},{},{}",
                    a.decoder,
                    a.row,
                    source.origin.to_source_seconds(a.start),
                    source.origin.to_source_seconds(a.end),
                    sample(a.start_sample),
                    sample(a.end_sample),
                    csv_cell(&a.text),
                    csv_cell(&fields.join(";"))
                );
            }
        }
        DecodeFormat::Text => {
            for a in &d.annotations {
                let samples = match (a.start_sample, a.end_sample) {
                    (Some(s), Some(e)) => format!(" [{s}-{e}]"),
                    _ => String::new(),
                };
                let _ = writeln!(
                    out,
                    "{:.9} {:.9}{samples} {}.{}: {}",
                    source.origin.to_source_seconds(a.start),
                    source.origin.to_source_seconds(a.end),
                    a.decoder,
                    a.row,
                    a.text
                );
            }
        }
    }
    Ok(out.into_bytes())
}

pub fn run(args: &DecodeArgs) -> Result<()> {
    if let Some(out) = &args.output {
        atomic::check_not_input(out, std::slice::from_ref(&args.file))?;
    }
    let source = latscope_importers::open(&args.file, &LoadControl::new())?;
    let decoded = decode_all(&source, &args.decoders)?;
    let bytes = render(&args.file, &source, &decoded, args.format)?;
    match &args.output {
        Some(path) => atomic::write_atomic(path, &bytes, std::slice::from_ref(&args.file))?,
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(&bytes).and_then(|()| out.flush()).context("writing the annotations to stdout")?;
        }
    }
    for (kind, n) in &decoded.errors {
        eprintln!("latscope: {}: {kind}: {n} error annotation(s)", args.file.display());
    }
    Ok(())
}

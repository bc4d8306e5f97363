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
use latscope_decoders::{Annotation, Clock, Decoded, Inputs, StreamDecoder, Value};
use latscope_importers::LoadControl;
use latscope_model::Source;
use serde_json::{Map, Value as Json, json};
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
    decode_inputs(&Inputs::of_source(source, sample_rate(source)), specs)
}

/// Decodes a `.sr` capture as it is read: the decoders are fed the flips of their channels
/// as each chunk is inflated and scanned, on the sample numbers sigrok-cli prints, and no
/// edge is stored or turned into a time and back. `None` when the file is not a `.sr` with a
/// sample rate and logic channels only (an analog channel is read through a threshold,
/// which needs the full load) or its samples are wider than 64 channels. The source returned
/// carries the capture's name and warnings.
fn decode_sampled(path: &Path, specs: &[String]) -> Result<Option<(Source, Decoded)>> {
    let input = latscope_importers::Input::open(path)?;
    let data = input.bytes();
    if latscope_importers::detect(data) != Some(latscope_importers::Format::SigrokSr) {
        return Ok(None);
    }
    let mut refused = None;
    let read = latscope_importers::sigrok::read_logic(data, &LoadControl::new(), |layout| {
        let (Some(rate), true) = (layout.samplerate, layout.analog.is_empty()) else { return None };
        let channels: Vec<(&str, u32)> = layout.channels.iter().map(|(n, b)| (n.as_str(), *b)).collect();
        let mut decoders = Vec::with_capacity(specs.len());
        for spec in specs {
            match StreamDecoder::new(spec, &channels, Clock::Samples(rate)) {
                Ok(d) => decoders.push(d),
                Err(e) => {
                    refused = Some(anyhow::Error::new(e).context(format!("--decoder {spec:?}")));
                    return None;
                }
            }
        }
        let wanted = decoders.iter().fold(0, |acc, d| acc | d.wanted());
        Some((Streamed(decoders), wanted))
    })
    .map_err(|f| f.at_path(path))?;
    if let Some(e) = refused {
        return Err(e);
    }
    let Some((Streamed(decoders), end, _)) = read else { return Ok(None) };
    let last = i64::try_from(end.samples.saturating_sub(1)).unwrap_or(i64::MAX);
    let mut all = Decoded::default();
    for (spec, d) in specs.iter().zip(decoders) {
        merge(&mut all, d.finish(last).with_context(|| format!("--decoder {spec:?}"))?);
    }
    if specs.len() > 1 {
        latscope_decoders::sort_by_start(&mut all.annotations);
    }
    let name =
        path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
    let mut source = Source::new(&name, "sigrok-sr", latscope_model::SourceKind::File);
    source.path = Some(path.to_owned());
    for w in end.warnings {
        source.diagnostics.warn(w);
    }
    Ok(Some((source, all)))
}

/// Decoder stacks fed as a capture is read.
struct Streamed(Vec<StreamDecoder>);

impl latscope_importers::sigrok::LogicVisitor for Streamed {
    fn first(&mut self, levels: u64) -> Result<(), latscope_importers::ParseFailure> {
        self.0.iter_mut().for_each(|d| d.start(levels));
        Ok(())
    }

    fn change(
        &mut self,
        sample: u64,
        changed: u64,
        levels: u64,
    ) -> Result<(), latscope_importers::ParseFailure> {
        // Sample numbers stay far below 2^63 (a chunk inflates to at most 4 GiB).
        let tick = sample as i64;
        self.0.iter_mut().for_each(|d| d.change(tick, changed, levels));
        Ok(())
    }
}

/// Adds one spec's result to `all`.
fn merge(all: &mut Decoded, d: Decoded) {
    if all.annotations.is_empty() {
        all.annotations = d.annotations;
    } else {
        all.annotations.extend(d.annotations);
    }
    for (k, n) in d.errors {
        *all.errors.entry(k).or_default() += n;
    }
    all.clock = d.clock;
}

/// Runs every decoder spec on `inputs`; one result with all annotations, sorted by start.
fn decode_inputs(inputs: &Inputs<'_>, specs: &[String]) -> Result<Decoded> {
    let mut all = Decoded::default();
    for spec in specs {
        let d = latscope_decoders::decode(spec, inputs).with_context(|| format!("--decoder {spec:?}"))?;
        merge(&mut all, d);
    }
    // One spec's annotations come sorted from `decode`.
    if specs.len() > 1 {
        latscope_decoders::sort_by_start(&mut all.annotations);
    }
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

/// Appends the source-clock time of `t` in seconds with `decimals` (at most 12) digits,
/// from the integer picoseconds (rounded half away from zero): what `{:.N}` of the `f64`
/// seconds prints, without the float formatting that dominated writing a large decode.
fn push_seconds(
    out: &mut Vec<u8>,
    origin: latscope_model::ClockOrigin,
    t: latscope_model::Ps,
    decimals: u32,
) {
    let extra = origin.ps + t;
    // The common case, a time at or after a non-negative origin in ns or ps, with constant
    // divisors (a division by a variable per line was a tenth of a large decode).
    if origin.secs >= 0 && extra >= 0 && matches!(decimals, 9 | 12) {
        const PS: u64 = 1_000_000_000_000;
        let extra = extra as u64;
        let mut whole = origin.secs as u64 + extra / PS;
        let ps = extra % PS;
        let frac = if decimals == 12 {
            ps
        } else {
            let ns = (ps + 500) / 1000;
            if ns == 1_000_000_000 {
                whole += 1;
                0
            } else {
                ns
            }
        };
        push_digits(out, whole, 1);
        out.push(b'.');
        push_digits(out, frac, decimals as usize);
        return;
    }
    push_seconds_exact(out, origin, t, decimals);
}

/// [`push_seconds`] for any origin, time and number of decimals, in 128-bit arithmetic.
fn push_seconds_exact(
    out: &mut Vec<u8>,
    origin: latscope_model::ClockOrigin,
    t: latscope_model::Ps,
    decimals: u32,
) {
    let ps_per_s = latscope_model::PS_PER_S;
    let extra = origin.ps + t;
    let secs = i128::from(origin.secs) + i128::from(extra.div_euclid(ps_per_s));
    let frac = extra.rem_euclid(ps_per_s) as u64;
    // |time| as whole seconds and picoseconds.
    let (neg, whole, ps) = if secs >= 0 {
        (false, secs.unsigned_abs(), frac)
    } else if frac == 0 {
        (true, secs.unsigned_abs(), 0)
    } else {
        (true, (secs + 1).unsigned_abs(), ps_per_s as u64 - frac)
    };
    let decimals = decimals.min(12);
    let unit = 10u64.pow(12 - decimals);
    let one = 10u64.pow(decimals);
    let scaled = (ps + unit / 2) / unit;
    let whole = whole + u128::from(scaled / one);
    let scaled = scaled % one;
    if neg && (whole != 0 || scaled != 0) {
        out.push(b'-');
    }
    push_digits(out, u64::try_from(whole).unwrap_or(u64::MAX), 1);
    out.push(b'.');
    push_digits(out, scaled, decimals as usize);
}

/// Appends `v` in decimal, zero-padded to `width` digits.
fn push_digits(out: &mut Vec<u8>, mut v: u64, width: usize) {
    // Two digits per step from a table: each line of a large decode prints four numbers.
    const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
        2021222324252627282930313233343536373839\
        4041424344454647484950515253545556575859\
        6061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899";
    // Written in place from the last digit back: a copy of a small buffer per number was
    // a library call each.
    let digits = v.checked_ilog10().map_or(1, |d| d as usize + 1);
    let start = out.len();
    out.resize(start + digits.max(width), b'0');
    let mut i = out.len();
    while v >= 100 {
        let pair = (v % 100) as usize * 2;
        v /= 100;
        out[i - 2] = PAIRS[pair];
        out[i - 1] = PAIRS[pair + 1];
        i -= 2;
    }
    if v >= 10 {
        let pair = v as usize * 2;
        out[i - 2] = PAIRS[pair];
        out[i - 1] = PAIRS[pair + 1];
    } else {
        out[i - 1] = b'0' + v as u8;
    }
}

/// Appends a signed integer in decimal.
fn push_int(out: &mut Vec<u8>, v: i64) {
    if v < 0 {
        out.push(b'-');
    }
    push_digits(out, v.unsigned_abs(), 1);
}

fn csv_cell(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_owned() }
}

fn field_text(v: &Value) -> String {
    match v {
        Value::UInt(u) => u.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Str(s) => s.to_string(),
    }
}

/// The JSON document, serialized as it is written: one annotation's object at a time
/// rather than a tree of all of them (its keys in the order `json!` sorts them).
struct JsonDoc<'a> {
    path: String,
    source: &'a Source,
    d: &'a Decoded,
}

struct JsonAnnotations<'a>(&'a JsonDoc<'a>);

impl serde::Serialize for JsonAnnotations<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(Some(self.0.d.annotations.len()))?;
        for a in &self.0.d.annotations {
            seq.serialize_element(&annotation_json(self.0.source, a))?;
        }
        seq.end()
    }
}

impl serde::Serialize for JsonDoc<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(4))?;
        m.serialize_entry("annotations", &JsonAnnotations(self))?;
        m.serialize_entry("errors", &self.d.errors)?;
        m.serialize_entry("latscope_decode", &1)?;
        m.serialize_entry("path", &self.path)?;
        m.end()
    }
}

/// Formats one line per annotation with `line`, in blocks formatted on all cores and
/// written in order: a decode of a large capture prints hundreds of thousands of lines, and
/// their formatting is as long as the decode. At most a few blocks are held at once.
fn write_lines_in_parallel(
    w: &mut dyn Write,
    annotations: &[Annotation],
    line: impl Fn(&mut Vec<u8>, &Annotation) + Sync,
) -> std::io::Result<()> {
    use rayon::prelude::*;
    const BLOCK: usize = 8192;
    let blocks = rayon::current_num_threads().max(1) * 2;
    // Reused from group to group: fresh buffers would fault in their pages every time.
    let mut buffers: Vec<Vec<u8>> = vec![Vec::new(); blocks];
    for group in annotations.chunks(BLOCK * blocks) {
        group.par_chunks(BLOCK).zip(buffers.par_iter_mut()).for_each(|(block, out)| {
            out.clear();
            for a in block {
                line(out, a);
            }
        });
        for b in buffers.iter().take(group.len().div_ceil(BLOCK)) {
            w.write_all(b)?;
        }
    }
    Ok(())
}

/// The annotations in `format`.
pub fn render(path: &Path, source: &Source, d: &Decoded, format: DecodeFormat) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    write_annotations(&mut out, path, source, d, format)?;
    Ok(out)
}

/// Writes the annotations in `format` to `w` as they are formatted (a 10M-sample capture's
/// hundreds of thousands of lines are never held as one text).
pub fn write_annotations(
    w: &mut dyn Write,
    path: &Path,
    source: &Source,
    d: &Decoded,
    format: DecodeFormat,
) -> Result<()> {
    let sample = |s: Option<i64>| s.map(|s| s.to_string()).unwrap_or_default();
    match format {
        DecodeFormat::Json => {
            let doc = JsonDoc { path: path.display().to_string(), source, d };
            serde_json::to_writer_pretty(&mut *w, &doc)?;
            w.write_all(b"\n")?;
        }
        DecodeFormat::Csv => {
            w.write_all(b"decoder,row,start_s,end_s,start_sample,end_sample,text,fields\n")?;
            write_lines_in_parallel(w, &d.annotations, |out, a| {
                let fields: Vec<String> =
                    a.fields.iter().map(|(k, v)| format!("{k}={}", field_text(v))).collect();
                let _ = write!(out, "{},{},", a.decoder, a.row);
                push_seconds(out, source.origin, a.start, 12);
                out.push(b',');
                push_seconds(out, source.origin, a.end, 12);
                let _ = writeln!(
                    out,
                    ",{},{},{},{}",
                    sample(a.start_sample),
                    sample(a.end_sample),
                    csv_cell(&a.text),
                    csv_cell(&fields.join(";"))
                );
            })?;
        }
        DecodeFormat::Text => {
            write_lines_in_parallel(w, &d.annotations, |out, a| {
                push_seconds(out, source.origin, a.start, 9);
                out.push(b' ');
                push_seconds(out, source.origin, a.end, 9);
                if let (Some(s), Some(e)) = (a.start_sample, a.end_sample) {
                    out.extend_from_slice(b" [");
                    push_int(out, s);
                    out.push(b'-');
                    push_int(out, e);
                    out.push(b']');
                }
                // Single bytes pushed, not copied: a copy call per piece of punctuation was a
                // tenth of printing a large decode.
                out.push(b' ');
                out.extend_from_slice(a.decoder.as_bytes());
                out.push(b'.');
                out.extend_from_slice(a.row.as_bytes());
                out.extend_from_slice(b": ");
                out.extend_from_slice(a.text.as_bytes());
                out.push(b'\n');
            })?;
        }
    }
    Ok(())
}

pub fn run(args: &DecodeArgs) -> Result<()> {
    if let Some(out) = &args.output {
        atomic::check_not_input(out, std::slice::from_ref(&args.file))?;
    }
    let (source, decoded) = match decode_sampled(&args.file, &args.decoders)? {
        Some(done) => done,
        None => {
            let source = latscope_importers::open(&args.file, &LoadControl::new())?;
            let decoded = decode_all(&source, &args.decoders)?;
            (source, decoded)
        }
    };
    for w in source.diagnostics.summary() {
        eprintln!("latscope: {}: warning: {w}", args.file.display());
    }
    match &args.output {
        Some(path) => {
            let bytes = render(&args.file, &source, &decoded, args.format)?;
            atomic::write_atomic(path, &bytes, std::slice::from_ref(&args.file))?
        }
        None => {
            let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
            write_annotations(&mut out, &args.file, &source, &decoded, args.format)
                .and_then(|()| out.flush().map_err(anyhow::Error::from))
                .context("writing the annotations to stdout")?;
        }
    }
    for (kind, n) in &decoded.errors {
        eprintln!("latscope: {}: {kind}: {n} error annotation(s)", args.file.display());
    }
    // The process ends after this command: freeing hundreds of thousands of annotations
    // and the capture's edge tracks one by one would only delay the exit.
    std::mem::forget(decoded);
    std::mem::forget(source);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use latscope_model::ClockOrigin;

    #[test]
    fn seconds_are_printed_from_integer_picoseconds_as_the_float_format_does() {
        let text = |origin: ClockOrigin, t: i64, d: u32| {
            let mut s = Vec::new();
            push_seconds(&mut s, origin, t, d);
            String::from_utf8(s).unwrap()
        };
        let zero = ClockOrigin::from_secs_ps(0, 0);
        for t in [
            0,
            1,
            499,
            500,
            2_540_000,
            11_365_975_000,
            999_999_999_999,
            1_000_000_000_000,
            123_456_789_012_345,
        ] {
            for d in [9, 12] {
                let want = format!("{:.*}", d as usize, zero.to_source_seconds(t));
                // Ties (exactly half a unit) round away from zero here; the float may go
                // either way, so they are left out of the comparison.
                if d == 9 && t % 1000 == 500 {
                    continue;
                }
                assert_eq!(text(zero, t, d), want, "{t} ps, {d} digits");
            }
        }
        // The simulator's clock starts at 100 s; negative times keep their sign.
        assert_eq!(text(ClockOrigin::from_secs_ps(100, 0), 1_500_000, 9), "100.000001500");
        assert_eq!(text(zero, -2_500_000_000, 9), "-0.002500000");
        assert_eq!(text(zero, -400, 9), "0.000000000");
        assert_eq!(text(zero, 500, 9), "0.000000001");
    }

    #[test]
    fn digits_are_what_the_formatter_prints() {
        for v in [0u64, 5, 9, 10, 42, 99, 100, 101, 999, 1000, 123_456_789, 999_999_999_999, u64::MAX] {
            for width in [1usize, 2, 9, 12, 20] {
                let mut out = Vec::new();
                push_digits(&mut out, v, width);
                assert_eq!(String::from_utf8(out).unwrap(), format!("{v:0width$}"), "{v} {width}");
            }
        }
    }

    #[test]
    fn the_fast_seconds_path_prints_what_the_exact_one_does() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let origin = ClockOrigin::from_secs_ps((x >> 40) as i64 % 5000, (x % 1_000_000_000_000) as i64);
            let t = (x >> 3) as i64 % 4_000_000_000_000_000 - 1_000_000;
            for d in [9, 12] {
                let (mut fast, mut exact) = (Vec::new(), Vec::new());
                push_seconds(&mut fast, origin, t, d);
                push_seconds_exact(&mut exact, origin, t, d);
                assert_eq!(fast, exact, "{origin:?} {t} {d}");
            }
            // Half a nanosecond either way of a whole second.
            let t = 1_000_000_000_000 * ((x >> 50) as i64) - 500 + (x % 3) as i64 * 500;
            let (mut fast, mut exact) = (Vec::new(), Vec::new());
            push_seconds(&mut fast, ClockOrigin::from_secs_ps(0, 0), t, 9);
            push_seconds_exact(&mut exact, ClockOrigin::from_secs_ps(0, 0), t, 9);
            assert_eq!(fast, exact, "{t}");
        }
    }
}

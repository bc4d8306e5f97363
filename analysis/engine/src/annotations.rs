//! Decoded annotations as `latscope decode` prints them: text, CSV or JSON, written as they
//! are formatted (a 10M-sample capture's hundreds of thousands of lines are never held as
//! one text).
//!
//! JSON (a contract: add fields, never rename):
//! `{ "latscope_decode": 1, "path", "annotations": [ { "decoder", "row", "start_s", "end_s",
//! "start_sample", "end_sample", "text", "fields": {…} } ], "errors": { "DECODER: KIND": N } }`.

use latscope_decoders::{Annotation, Decoded, Value};
use latscope_model::Source;
use serde_json::{Map, Value as Json, json};
use std::io::Write;
use std::path::Path;

/// The forms `latscope decode` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnnotationFormat {
    Text,
    Csv,
    Json,
}

fn field_json(v: &Value) -> Json {
    match v {
        Value::UInt(u) | Value::Hex(u) => json!(u),
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
        if decimals == 9 {
            push_nine_digits(out, frac);
        } else {
            push_digits(out, frac, 12);
        }
        return;
    }
    push_seconds_exact(out, origin, t, decimals);
}

/// The digits of 00 to 99, two bytes each.
const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
    2021222324252627282930313233343536373839\
    4041424344454647484950515253545556575859\
    6061626364656667686970717273747576777879\
    8081828384858687888990919293949596979899";

/// [`PAIRS`] as `u16`s whose bytes in memory order are the two digits: `PAIR_BYTES[n]` for
/// `n` below 100.
const PAIR_BYTES: [u16; 100] = {
    let mut t = [0u16; 100];
    let mut n = 0;
    while n < 100 {
        t[n] = u16::from_le_bytes([PAIRS[2 * n], PAIRS[2 * n + 1]]);
        n += 1;
    }
    t
};

/// Appends `v` (below 10^9) as nine digits, zero-padded: the nanoseconds of each time of
/// a text decode, two per line. The last eight digits are put together in a register and
/// appended at once, with no loop and no byte-by-byte stores read back.
fn push_nine_digits(out: &mut Vec<u8>, v: u64) {
    let (first, rest) = ((v / 100_000_000) % 10, (v % 100_000_000) as usize);
    let (hi, lo) = (rest / 10_000, rest % 10_000);
    // `% 100` again inside: no bounds check.
    let pair = |n: usize| u64::from(PAIR_BYTES[n % 100]);
    let eight = pair(hi / 100) | pair(hi % 100) << 16 | pair(lo / 100) << 32 | pair(lo % 100) << 48;
    out.push(b'0' + first as u8);
    out.extend_from_slice(&eight.to_le_bytes());
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
    // Two digits per step from [`PAIRS`]: each line of a large decode prints four numbers.
    // u64::MAX has 20 digits.
    const MOST: usize = 20;
    let digits = v.checked_ilog10().map_or(1, |d| d as usize + 1).max(width);
    if digits > MOST {
        out.resize(out.len() + digits - MOST, b'0');
        return push_digits(out, v, MOST);
    }
    // Zeros appended whole (a copy of known size from a constant, inlined), the digits
    // written over them from the last back, and cut to the number's length: a fill or a copy
    // of the number's own length was a library call per number, and digits written to a
    // buffer on the stack and copied at once were read back before their stores completed.
    const ZEROS: [u8; MOST] = [b'0'; MOST];
    let start = out.len();
    out.extend_from_slice(&ZEROS);
    if let Some(buf) = out.get_mut(start..start + MOST).and_then(|b| <&mut [u8; MOST]>::try_from(b).ok()) {
        // Four digits a step: the two pairs of a step do not wait for each other.
        let mut i = digits;
        while v >= 10_000 {
            let rem = (v % 10_000) as usize;
            v /= 10_000;
            let (hi, lo) = (rem / 100 * 2, rem % 100 * 2);
            buf[i - 4..i - 2].copy_from_slice(&PAIRS[hi..hi + 2]);
            buf[i - 2..i].copy_from_slice(&PAIRS[lo..lo + 2]);
            i -= 4;
        }
        let mut v = v as usize;
        if v >= 100 {
            let lo = v % 100 * 2;
            v /= 100;
            buf[i - 2..i].copy_from_slice(&PAIRS[lo..lo + 2]);
            i -= 2;
        }
        if v >= 10 {
            buf[i - 2..i].copy_from_slice(&PAIRS[v * 2..v * 2 + 2]);
        } else {
            buf[i - 1] = b'0' + v as u8;
        }
    }
    out.truncate(start + digits);
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
        // As in the JSON: the number (the annotation's text shows it in hex).
        Value::UInt(u) | Value::Hex(u) => u.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Str(s) => s.to_string(),
    }
}

/// Formats one line per annotation with `line`, in blocks formatted on all cores (unless not
/// `parallel`) and written in order: a decode of a large capture prints hundreds of thousands
/// of lines, and their formatting is as long as the decode. At most a few blocks are held at
/// once, in `buffers`.
fn write_lines_in_parallel(
    w: &mut dyn Write,
    buffers: &mut Vec<Vec<u8>>,
    parallel: bool,
    annotations: &[Annotation],
    line: impl Fn(&mut Vec<u8>, &Annotation) + Sync,
) -> std::io::Result<()> {
    use rayon::prelude::*;
    const BLOCK: usize = 8192;
    let blocks = if parallel { rayon::current_num_threads().max(1) * 2 } else { 1 };
    // Reused from group to group: fresh buffers would fault in their pages every time.
    buffers.resize_with(blocks, Vec::new);
    let format = |(block, out): (&[Annotation], &mut Vec<u8>)| {
        out.clear();
        for a in block {
            line(out, a);
        }
    };
    for group in annotations.chunks(BLOCK * blocks) {
        if parallel {
            group.par_chunks(BLOCK).zip(buffers.par_iter_mut()).for_each(format);
        } else {
            group.chunks(BLOCK).zip(buffers.iter_mut()).for_each(format);
        }
        for b in buffers.iter().take(group.len().div_ceil(BLOCK)) {
            w.write_all(b)?;
        }
    }
    Ok(())
}

/// Writes the annotations in `format` to `w` as they are formatted (a 10M-sample capture's
/// hundreds of thousands of lines are never held as one text).
pub fn write_annotations(
    w: &mut dyn Write,
    path: &Path,
    source: &Source,
    d: &Decoded,
    format: AnnotationFormat,
) -> std::io::Result<()> {
    let mut writer = AnnotationWriter::new(format);
    writer.write(w, source, &d.annotations)?;
    writer.finish(w, path, &d.errors)
}

/// Writes a decode's annotations in `format` batch by batch, as a stream decode hands them
/// on (`decode::decode_file_to`): the same bytes as [`write_annotations`] of them all. Nothing
/// is written before the first annotation or [`Self::finish`], so a decode refused at its
/// start leaves its output empty.
#[derive(Debug)]
pub struct AnnotationWriter {
    format: AnnotationFormat,
    /// Whatever comes before the first annotation is written.
    begun: bool,
    /// Annotations written so far.
    written: usize,
    /// Each block's lines, kept from batch to batch: fresh buffers would fault in their pages
    /// for every batch a stream decode hands on.
    buffers: Vec<Vec<u8>>,
    /// Lines formatted on all cores (else on the calling thread alone).
    parallel: bool,
}

impl AnnotationWriter {
    pub fn new(format: AnnotationFormat) -> Self {
        AnnotationWriter { format, begun: false, written: 0, buffers: Vec::new(), parallel: true }
    }

    /// Formats on the calling thread alone: for a writer that runs beside the decode, where
    /// the other cores are busy decoding and reading (formatting on all of them then only
    /// takes turns with that work, and costs their threads' hand-offs).
    pub fn on_this_thread(mut self) -> Self {
        self.parallel = false;
        self
    }

    fn begin(&mut self, w: &mut dyn Write) -> std::io::Result<()> {
        if !self.begun {
            self.begun = true;
            match self.format {
                AnnotationFormat::Json => w.write_all(b"{\n  \"annotations\": [")?,
                AnnotationFormat::Csv => {
                    w.write_all(b"decoder,row,start_s,end_s,start_sample,end_sample,text,fields\n")?
                }
                AnnotationFormat::Text => {}
            }
        }
        Ok(())
    }

    /// Writes `annotations` (of `source`, whose clock gives their seconds), after those
    /// written before.
    pub fn write(
        &mut self,
        w: &mut dyn Write,
        source: &Source,
        annotations: &[Annotation],
    ) -> std::io::Result<()> {
        if annotations.is_empty() {
            return Ok(());
        }
        self.begin(w)?;
        let sample = |s: Option<i64>| s.map(|s| s.to_string()).unwrap_or_default();
        match self.format {
            AnnotationFormat::Json => {
                // As serde_json's pretty printer writes the whole document: each object
                // indented two levels, after a comma from the second on.
                for a in annotations {
                    w.write_all(if self.written == 0 { b"\n    " } else { b",\n    " })?;
                    write_pretty_at(&mut *w, &annotation_json(source, a), 2)?;
                    self.written += 1;
                }
            }
            AnnotationFormat::Csv => {
                write_lines_in_parallel(w, &mut self.buffers, self.parallel, annotations, |out, a| {
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
                self.written += annotations.len();
            }
            AnnotationFormat::Text => {
                write_lines_in_parallel(w, &mut self.buffers, self.parallel, annotations, |out, a| {
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
                    // Single bytes pushed, not copied: a copy call per piece of punctuation
                    // was a tenth of printing a large decode.
                    out.push(b' ');
                    out.extend_from_slice(a.decoder.as_bytes());
                    out.push(b'.');
                    out.extend_from_slice(a.row.as_bytes());
                    out.extend_from_slice(b": ");
                    out.extend_from_slice(a.text.as_bytes());
                    out.push(b'\n');
                })?;
                self.written += annotations.len();
            }
        }
        Ok(())
    }

    /// Writes what follows the annotations: for JSON the error counts and the `path`.
    pub fn finish(
        &mut self,
        w: &mut dyn Write,
        path: &Path,
        errors: &std::collections::BTreeMap<String, u64>,
    ) -> std::io::Result<()> {
        self.begin(w)?;
        if self.format == AnnotationFormat::Json {
            w.write_all(if self.written == 0 { b"]," } else { b"\n  ]," })?;
            w.write_all(b"\n  \"errors\": ")?;
            write_pretty_at(&mut *w, errors, 1)?;
            w.write_all(b",\n  \"latscope_decode\": 1,\n  \"path\": ")?;
            serde_json::to_writer(&mut *w, &path.display().to_string())?;
            w.write_all(b"\n}\n")?;
        }
        Ok(())
    }
}

/// Writes `value` as serde_json's pretty printer writes it `depth` levels deep inside a
/// document (its lines indented two spaces a level): the printer is first walked `depth`
/// levels in, writing nothing.
fn write_pretty_at(w: &mut dyn Write, value: &impl serde::Serialize, depth: usize) -> std::io::Result<()> {
    use serde_json::ser::Formatter;
    let mut formatter = serde_json::ser::PrettyFormatter::new();
    for _ in 0..depth {
        formatter.begin_object(&mut std::io::sink())?;
    }
    value.serialize(&mut serde_json::Serializer::with_formatter(w, formatter))?;
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
            for width in [1usize, 2, 9, 12, 20, 23] {
                let mut out = Vec::new();
                push_digits(&mut out, v, width);
                assert_eq!(String::from_utf8(out).unwrap(), format!("{v:0width$}"), "{v} {width}");
            }
        }
    }

    #[test]
    fn nine_digits_are_what_the_formatter_prints() {
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let some = (0..100_000).map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % 1_000_000_000
        });
        let edges = [0, 1, 9, 10, 99, 100, 9_999, 10_000, 99_999_999, 100_000_000, 999_999_999];
        for v in edges.into_iter().chain(some) {
            let mut out = b"x".to_vec();
            push_nine_digits(&mut out, v);
            assert_eq!(String::from_utf8(out).unwrap(), format!("x{v:09}"), "{v}");
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

    fn annotation(k: i64) -> Annotation {
        Annotation {
            decoder: "i2c",
            row: if k % 3 == 0 { "address" } else { "data" },
            start: k * 2_500_000,
            end: k * 2_500_000 + 1_000_000,
            start_sample: Some(k * 10),
            end_sample: Some(k * 10 + 4),
            text: if k % 5 == 0 {
                format!("quote \" and line\nbreak {k}").into()
            } else {
                "Write: 5A".into()
            },
            fields: if k % 2 == 0 {
                vec![
                    ("value", Value::UInt(k as u64)),
                    ("rw", Value::Str("write".into())),
                    ("ack", Value::Bool(true)),
                ]
            } else {
                Vec::new()
            },
        }
    }

    /// What the whole document is, by serde_json's own pretty printer.
    fn whole_json(path: &Path, source: &Source, d: &Decoded) -> String {
        let doc = json!({
            "annotations": d.annotations.iter().map(|a| annotation_json(source, a)).collect::<Vec<_>>(),
            "errors": d.errors,
            "latscope_decode": 1,
            "path": path.display().to_string(),
        });
        serde_json::to_string_pretty(&doc).unwrap() + "\n"
    }

    #[test]
    fn annotations_written_in_batches_are_the_bytes_of_the_whole_document() {
        let source = Source::new("x.sr", "sigrok-sr", latscope_model::SourceKind::File);
        let path = Path::new("/tmp/a \"b\".sr");
        for n in [0i64, 1, 2, 7, 40] {
            for errors in [0u64, 3] {
                let mut d = Decoded { annotations: (0..n).map(annotation).collect(), ..Decoded::default() };
                if errors > 0 {
                    d.errors.insert("i2c: cut-byte".into(), errors);
                    d.errors.insert("i2c: nack".into(), 1);
                }
                for format in [AnnotationFormat::Json, AnnotationFormat::Csv, AnnotationFormat::Text] {
                    let mut whole = Vec::new();
                    write_annotations(&mut whole, path, &source, &d, format).unwrap();
                    if format == AnnotationFormat::Json {
                        assert_eq!(
                            String::from_utf8_lossy(&whole),
                            whole_json(path, &source, &d),
                            "{n} {errors}"
                        );
                    }
                    for split in [1usize, 3, 16] {
                        let (mut out, mut w) = (Vec::new(), AnnotationWriter::new(format));
                        for batch in d.annotations.chunks(split) {
                            w.write(&mut out, &source, batch).unwrap();
                        }
                        w.finish(&mut out, path, &d.errors).unwrap();
                        assert_eq!(
                            String::from_utf8_lossy(&out),
                            String::from_utf8_lossy(&whole),
                            "{format:?} {n} {split}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn nothing_is_written_before_the_first_annotation() {
        let source = Source::new("x.sr", "sigrok-sr", latscope_model::SourceKind::File);
        for format in [AnnotationFormat::Json, AnnotationFormat::Csv, AnnotationFormat::Text] {
            let (mut out, mut w) = (Vec::new(), AnnotationWriter::new(format));
            w.write(&mut out, &source, &[]).unwrap();
            assert!(out.is_empty(), "{format:?}");
        }
    }
}

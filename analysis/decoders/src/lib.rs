//! latscope's protocol decoders, in sigrok's style: a decoder declares its channels and
//! options, reads named digital tracks (from any source, or an analog track through a
//! threshold) and emits annotations — a span in time (and in samples on a sampled capture),
//! a row, a text and typed fields. Decoders stack: `spi:… | sd-spi` feeds SPI words to the
//! SD-over-SPI decoder.
//!
//! Each decoder has two layers. Its clocking or sampling step turns edges into bits or
//! words (UART samples mid-bit, SPI and SD on a clock edge, I2C on SCL rising); its frame
//! layer parses those with nom (SD tokens, SD data blocks, SD-over-SPI tokens). The spec
//! grammar (`NAME:key=value,… | NAME…`) is nom too.
//!
//! Every decoder is a machine fed with level changes in time order ([`StreamDecoder`]): a
//! capture is decoded as it is read, chunk by chunk, or as a logic analyzer streams it.
//! [`decode`] feeds the same machines from whole tracks ([`Inputs`]).
//!
//! [`Decoded::attach`] turns annotations into the trace model twice: span tracks (one
//! per decoder row, for drawing) and events with fields (`sd_cmd`, `sd_resp`, `uart_data`,
//! … and an `…_end` event at each annotation's end), so rules, presets and reports run on
//! decoded buses.

mod bits;
pub mod crc;
mod i2c;
pub mod names;
mod params;
pub mod presets;
pub mod registry;
pub mod sd;
mod sd_spi;
pub mod signal;
pub mod spec;
mod spi;
mod stream;
mod uart;

use latscope_model::{
    AnalogTrack, BuildError, DigitalTrack, EventTableBuilder, FieldKind, FieldValue, IrqFlags, Ps, Source,
    SpanTrack, Threshold,
};
pub use signal::{Clock, Line};
use std::borrow::Cow;
use std::collections::BTreeMap;
pub use stream::StreamDecoder;

/// A typed annotation field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    UInt(u64),
    /// Unsigned, read in hexadecimal: a command argument, a CRC (`arg=0x1AA`).
    Hex(u64),
    Int(i64),
    Bool(bool),
    /// Borrowed for names from a fixed set (`read`, `tx`, `R1`): no allocation per field.
    Str(Cow<'static, str>),
}

/// One decoded item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Annotation {
    /// The decoder that emitted it (`uart`, `sd`, `sd-spi`, …).
    pub decoder: &'static str,
    /// PulseView-style row: `data`, `cmd`, `response`, `warnings`, …
    pub row: &'static str,
    /// Span in the source's relative picoseconds.
    pub start: Ps,
    pub end: Ps,
    /// Span in sample numbers on a sampled capture (as sigrok-cli prints them).
    pub start_sample: Option<i64>,
    pub end_sample: Option<i64>,
    /// Borrowed when the text is one of a fixed set (`Stop`, a byte in hex): a large
    /// decode then allocates no text per annotation.
    pub text: Cow<'static, str>,
    pub fields: Vec<(&'static str, Value)>,
}

impl Annotation {
    pub fn field(&self, name: &str) -> Option<&Value> {
        self.fields.iter().find(|(k, _)| *k == name).map(|(_, v)| v)
    }

    /// How [`Decoded::attach`] makes this annotation's two events in `b`: their layouts, the
    /// task (the decoder) and, in `values`, the field values both carry (`kinds` is scratch).
    pub fn events(
        &self,
        b: &mut EventTableBuilder,
        kinds: &mut Vec<(latscope_model::Sym, FieldKind)>,
        values: &mut Vec<FieldValue>,
    ) -> AnnotationEvents {
        kinds.clear();
        values.clear();
        for (k, v) in &self.fields {
            let key = b.intern(k.as_bytes());
            let (kind, value) = match v {
                Value::UInt(u) => (FieldKind::UInt, FieldValue::UInt(*u)),
                Value::Hex(u) => (FieldKind::Hex, FieldValue::UInt(*u)),
                Value::Int(i) => (FieldKind::Int, FieldValue::Int(*i)),
                Value::Bool(x) => (FieldKind::UInt, FieldValue::UInt(u64::from(*x))),
                Value::Str(s) => (FieldKind::Str, FieldValue::Str(b.intern(s.as_bytes()))),
            };
            kinds.push((key, kind));
            values.push(value);
        }
        for (key, sample) in [("start_sample", self.start_sample), ("end_sample", self.end_sample)] {
            if let Some(s) = sample {
                kinds.push((b.intern(key.as_bytes()), FieldKind::Int));
                values.push(FieldValue::Int(s));
            }
        }
        let comm = b.intern(self.decoder.as_bytes());
        let ev = event_name(self.decoder, self.row);
        let start_name = b.intern(ev.as_bytes());
        let end_name = b.intern(format!("{ev}_end").as_bytes());
        AnnotationEvents { comm, start: b.layout(start_name, kinds), end: b.layout(end_name, kinds) }
    }
}

/// An annotation's events as [`Decoded::attach`] adds them: `DECODER_ROW` at its start and
/// `DECODER_ROW_end` at its end, both with its fields, on the decoder's task.
#[derive(Debug, Clone, Copy)]
pub struct AnnotationEvents {
    pub comm: latscope_model::Sym,
    pub start: latscope_model::LayoutId,
    pub end: latscope_model::LayoutId,
}

/// Errors before decoding starts: the spec, the channels, the options.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error(transparent)]
    Spec(#[from] spec::SpecError),
    #[error("column {column}: unknown decoder `{name}`; decoders: {}", registry::NATIVE.iter().map(|d| d.name).collect::<Vec<_>>().join(", "))]
    UnknownDecoder { name: String, column: usize },
    #[error("column {column}: no channel `{name}`; channels: {}", available.join(", "))]
    UnknownChannel { name: String, column: usize, available: Vec<String> },
    #[error("column {column}: channel `{name}` is ambiguous: {}", candidates.join(", "))]
    AmbiguousChannel { name: String, column: usize, candidates: Vec<String> },
    #[error("column {column}: {message}")]
    Option { column: usize, message: String },
    #[error("{decoder}: {message}")]
    Config { decoder: String, message: String },
}

/// A channel a decoder may read.
#[derive(Debug, Clone, Copy)]
pub enum Channel<'a> {
    Digital(&'a DigitalTrack),
    /// Read through [`Threshold::Auto`].
    Analog(&'a AnalogTrack),
    /// Already on the tick grid: a sampled capture read straight as sample numbers
    /// ([`Inputs::of_lines`]).
    Line(&'a Line),
}

impl Channel<'_> {
    pub fn name(&self) -> &str {
        match self {
            Channel::Digital(d) => &d.name,
            Channel::Analog(a) => &a.name,
            Channel::Line(l) => &l.name,
        }
    }
}

/// What decoders read: the channels of a source and its tick grid.
#[derive(Debug, Clone)]
pub struct Inputs<'a> {
    pub channels: Vec<Channel<'a>>,
    pub clock: Clock,
}

impl<'a> Inputs<'a> {
    /// The digital and analog tracks of `source`; `sample_rate` (samples per second) when
    /// the source is a sampled capture, so annotations carry sample numbers.
    pub fn of_source(source: &'a Source, sample_rate: Option<u64>) -> Inputs<'a> {
        let mut channels: Vec<Channel<'a>> = source.digital.iter().map(Channel::Digital).collect();
        channels.extend(source.analog.iter().map(Channel::Analog));
        let clock = match sample_rate {
            Some(r) if r > 0 => Clock::Samples(r),
            _ => Clock::Picoseconds,
        };
        Inputs { channels, clock }
    }

    /// Channels already on a sample grid of `sample_rate` samples per second: ticks are
    /// sample numbers, and no edge is converted to a time and back.
    pub fn of_lines(lines: &'a [Line], sample_rate: u64) -> Inputs<'a> {
        let clock = if sample_rate > 0 { Clock::Samples(sample_rate) } else { Clock::Picoseconds };
        Inputs { channels: lines.iter().map(Channel::Line).collect(), clock }
    }

    /// Resolves a channel name as rule endpoints do ([`latscope_model::resolve_name`]): the
    /// exact name, else the one channel whose name ends with it after a separator. A
    /// channel already on the tick grid is borrowed, not copied.
    pub fn resolve(&self, name: &str, column: usize) -> Result<Cow<'a, Line>, DecodeError> {
        let index = stream::resolve(self.channels.iter().map(|c| c.name()), name, column)?;
        Ok(match self.channels[index] {
            Channel::Digital(d) => Cow::Owned(Line::from_track(d, self.clock)),
            Channel::Analog(a) => Cow::Owned(Line::from_track(&a.to_digital(Threshold::Auto), self.clock)),
            Channel::Line(l) => Cow::Borrowed(l),
        })
    }
}

/// Where a decoder puts its annotations; errors are also counted by kind. A decoder works
/// in ticks; [`decode`]'s sink turns them into times (and sample numbers) as each
/// annotation is put, while it is still in cache (a later pass over a large decode's
/// hundreds of thousands of annotations cost a fifth of decoding them). Decoders read
/// an annotation's ticks back with [`Sink::start_tick`] / [`Sink::end_tick`]. A default
/// sink (unit tests) keeps ticks.
#[derive(Debug, Default)]
pub(crate) struct Sink {
    pub anns: Vec<Annotation>,
    pub errors: BTreeMap<&'static str, u64>,
    decoder: &'static str,
    clock: Option<Clock>,
    /// The clock's sample period when it is a whole number of ps ([`Clock::exact_sample_period`]).
    period: Option<i64>,
    /// Whether the annotations were put in start order so far.
    pub in_order: bool,
    /// The start of the last annotation taken out ([`Sink::take_all`]): later ones are
    /// in order if they start no earlier.
    taken_last: Option<Ps>,
}

impl Sink {
    pub(crate) fn new(decoder: &'static str, clock: Clock) -> Self {
        Sink {
            decoder,
            clock: Some(clock),
            period: clock.exact_sample_period(),
            in_order: true,
            ..Sink::default()
        }
    }

    /// An empty sink of the same decoder and clock.
    pub(crate) fn empty_like(&self) -> Self {
        Sink {
            decoder: self.decoder,
            clock: self.clock,
            period: self.period,
            in_order: true,
            ..Sink::default()
        }
    }

    pub(crate) fn decoder_name(&self) -> &'static str {
        self.decoder
    }

    /// The start of the last annotation put, whether still here or taken out.
    pub(crate) fn last_start(&self) -> Option<Ps> {
        self.anns.last().map(|a| a.start).or(self.taken_last)
    }

    /// The start of the last annotation taken out ([`Sink::take_all`]), if any was.
    pub(crate) fn taken_last(&self) -> Option<Ps> {
        self.taken_last
    }

    /// Moves every annotation into `out` (a stream decode hands on those its decoder says
    /// are final); the order is still checked against them. An empty `out` trades lists with
    /// this sink instead: a batch of a large decode is megabytes, copied for nothing.
    pub(crate) fn take_all(&mut self, out: &mut Vec<Annotation>) {
        if let Some(a) = self.anns.last() {
            self.taken_last = Some(a.start);
        }
        if out.is_empty() {
            std::mem::swap(out, &mut self.anns);
        } else {
            out.append(&mut self.anns);
        }
    }

    /// Moves the annotations that start before `reach` into `out`, in start order (equal
    /// starts in the order they were put), when every annotation still to come starts at
    /// `reach` or later: a decoder that puts them out of start order hands on those that
    /// are final. The ones left are sorted too, which changes nothing a sort at the end
    /// would not.
    pub(crate) fn take_before(&mut self, reach: Ps, out: &mut Vec<Annotation>) {
        sort_by_start(&mut self.anns);
        let n = self.anns.partition_point(|a| a.start < reach);
        if n == 0 {
            return;
        }
        self.taken_last = Some(self.anns[n - 1].start);
        out.extend(self.anns.drain(..n));
    }

    /// Adds `other`'s annotations after these, and its error counts to these.
    pub(crate) fn append(&mut self, mut other: Sink) {
        self.in_order &= other.in_order
            && match (self.last_start(), other.anns.first()) {
                (Some(a), Some(b)) => a <= b.start,
                _ => true,
            };
        self.anns.append(&mut other.anns);
        for (k, n) in other.errors {
            *self.errors.entry(k).or_default() += n;
        }
    }

    pub(crate) fn time(&self, tick: i64) -> (Ps, Option<i64>) {
        match (self.period, self.clock) {
            // What `time_of` gives for such a clock, without its divisions.
            (Some(p), _) => (tick.saturating_mul(p), Some(tick)),
            (None, Some(c)) => (c.time_of(tick), c.sample_numbers().then_some(tick)),
            (None, None) => (tick, None),
        }
    }

    pub fn put(
        &mut self,
        ss: i64,
        es: i64,
        row: &'static str,
        text: impl Into<Cow<'static, str>>,
        fields: Vec<(&'static str, Value)>,
    ) {
        // The registry lists each decoder's rows (their events are known before a decode:
        // the recorder tells a rule over decoded logic from one over the kernel by them).
        debug_assert!(
            registry::native(self.decoder).is_none_or(|d| d.rows.contains(&row)),
            "{}: row {row:?} is not in its registry entry's rows",
            self.decoder
        );
        let (start, start_sample) = self.time(ss);
        let (end, end_sample) = self.time(es);
        self.in_order &= self.last_start().is_none_or(|s| s <= start);
        self.anns.push(Annotation {
            decoder: self.decoder,
            row,
            start,
            end,
            start_sample,
            end_sample,
            text: text.into(),
            fields,
        });
    }

    /// The tick annotation `i` starts at.
    pub fn start_tick(&self, i: usize) -> i64 {
        self.anns[i].start_sample.unwrap_or(self.anns[i].start)
    }

    /// The tick annotation `i` ends at.
    pub fn end_tick(&self, i: usize) -> i64 {
        self.anns[i].end_sample.unwrap_or(self.anns[i].end)
    }

    /// Moves the end of annotation `i` to `tick`.
    pub fn set_end(&mut self, i: usize, tick: i64) {
        let (end, end_sample) = self.time(tick);
        let a = &mut self.anns[i];
        a.end = end;
        a.end_sample = end_sample;
    }

    /// An error annotation on the `warnings` row, counted under `kind`.
    pub fn error(&mut self, ss: i64, es: i64, kind: &'static str, text: impl Into<Cow<'static, str>>) {
        *self.errors.entry(kind).or_default() += 1;
        self.put(ss, es, "warnings", text, vec![("error", Value::Str(kind.into()))]);
    }

    pub fn count(&mut self, kind: &'static str) {
        *self.errors.entry(kind).or_default() += 1;
    }
}

/// The result of a decoder stack.
#[derive(Debug, Clone, Default)]
pub struct Decoded {
    /// Every stage's annotations, sorted by start (stable: a stage's order is kept).
    pub annotations: Vec<Annotation>,
    /// Errors by decoder and kind (`uart: frame`, `sd: crc`, …), with their counts.
    pub errors: BTreeMap<String, u64>,
    pub clock: Option<Clock>,
}

/// Runs the decoder stack `spec` on `inputs`: the changes of the channels it names, merged
/// in time order, through the same machines as [`StreamDecoder`].
pub fn decode(spec_text: &str, inputs: &Inputs<'_>) -> Result<Decoded, DecodeError> {
    stream::decode_inputs(spec_text, inputs)
}

/// Sorts annotations by start, stably (equal starts keep their order). Decoders emit almost
/// in order — a transfer or a cut-off frame is emitted when it ends — so the order is
/// found on small keys and applied in place by following its cycles, instead of a merge
/// sort moving the whole structs (a fifth of a 10M-sample SPI decode) or a second copy of
/// them.
pub fn sort_by_start(anns: &mut [Annotation]) {
    if anns.is_sorted_by_key(|a| a.start) {
        return;
    }
    let mut keys: Vec<(Ps, usize)> = anns.iter().enumerate().map(|(i, a)| (a.start, i)).collect();
    keys.sort_unstable();
    // Position k takes the annotation now at `from[k]`.
    let mut from: Vec<usize> = keys.into_iter().map(|(_, i)| i).collect();
    for start in 0..from.len() {
        let mut k = start;
        while from[k] != start {
            let src = from[k];
            anns.swap(k, src);
            from[k] = k;
            k = src;
        }
        from[k] = k;
    }
}

/// `v` in upper-case hex with at least `digits` digits: what `format!("{v:0digits$X}")`
/// gives, without the formatting machinery (one per word of a large capture). A byte in
/// two digits, the common case, is borrowed from a table: no allocation.
pub(crate) fn hex_upper(v: u64, digits: usize) -> Cow<'static, str> {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    if (digits == 2 || (digits < 2 && v > 0xF))
        && v < 0x100
        && let Some(s) = HEX_BYTES.get(2 * v as usize..2 * v as usize + 2)
    {
        return Cow::Borrowed(s);
    }
    let needed = (16 - (v.leading_zeros() as usize) / 4).max(1);
    let n = needed.max(digits);
    let mut s = String::with_capacity(n);
    for k in (0..n).rev() {
        let nibble = if k < 16 { (v >> (4 * k)) & 0xf } else { 0 };
        s.push(char::from(HEX[nibble as usize]));
    }
    Cow::Owned(s)
}

/// `"{prefix}{v:02X}"`: for a byte, borrowed from a table built once per prefix, so texts
/// such as `Data write: 3F` cost no allocation per annotation.
pub(crate) struct ByteTexts {
    prefix: &'static str,
    table: std::sync::OnceLock<Box<[String]>>,
}

impl ByteTexts {
    pub const fn new(prefix: &'static str) -> Self {
        ByteTexts { prefix, table: std::sync::OnceLock::new() }
    }

    pub fn get(&'static self, v: u64) -> Cow<'static, str> {
        match usize::try_from(v) {
            Ok(i) if i < 256 => {
                let table =
                    self.table.get_or_init(|| (0..256).map(|b| format!("{}{b:02X}", self.prefix)).collect());
                Cow::Borrowed(&table[i])
            }
            _ => Cow::Owned(format!("{}{v:02X}", self.prefix)),
        }
    }
}

/// `00`, `01`, … `FF` back to back.
const HEX_BYTES: &str = concat!(
    "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F",
    "202122232425262728292A2B2C2D2E2F303132333435363738393A3B3C3D3E3F",
    "404142434445464748494A4B4C4D4E4F505152535455565758595A5B5C5D5E5F",
    "606162636465666768696A6B6C6D6E6F707172737475767778797A7B7C7D7E7F",
    "808182838485868788898A8B8C8D8E8F909192939495969798999A9B9C9D9E9F",
    "A0A1A2A3A4A5A6A7A8A9AAABACADAEAFB0B1B2B3B4B5B6B7B8B9BABBBCBDBEBF",
    "C0C1C2C3C4C5C6C7C8C9CACBCCCDCECFD0D1D2D3D4D5D6D7D8D9DADBDCDDDEDF",
    "E0E1E2E3E4E5E6E7E8E9EAEBECEDEEEFF0F1F2F3F4F5F6F7F8F9FAFBFCFDFEFF",
);

/// The event name of a decoder row: `sd` + `response` → `sd_resp`, `sigrok:i2c` + `address_read`
/// → `sigrok_i2c_address_read`.
pub fn event_name(decoder: &str, row: &str) -> String {
    let row = match row {
        "response" => "resp",
        r => r,
    };
    format!("{}_{}", decoder.replace(['-', ':'], "_"), row)
}

impl Decoded {
    /// Adds `d`'s annotations (after this one's) and error counts to this one.
    pub fn absorb(&mut self, d: Decoded) {
        if self.annotations.is_empty() {
            self.annotations = d.annotations;
        } else {
            self.annotations.extend(d.annotations);
        }
        for (k, n) in d.errors {
            *self.errors.entry(k).or_default() += n;
        }
        self.clock = d.clock;
    }

    /// Several decodes as one: annotations sorted by start (one decode's come sorted),
    /// errors added up.
    pub fn merged(parts: impl IntoIterator<Item = Decoded>) -> Decoded {
        let mut all = Decoded::default();
        let mut several = false;
        for (i, d) in parts.into_iter().enumerate() {
            several |= i > 0;
            all.absorb(d);
        }
        if several {
            sort_by_start(&mut all.annotations);
        }
        all
    }

    /// Adds the annotations to `source` (the capture they were decoded from) in the trace
    /// model: one span track per decoder row (`sd.cmd`, `uart.data`, …), labelled with the
    /// annotation text, and events with fields — `DECODER_ROW` at each annotation's start and
    /// `DECODER_ROW_end` at its end (`sd_cmd`, `sd_resp`, `sd_data_end`, …). Booleans become
    /// 0/1; on a sampled capture `start_sample` and `end_sample` are fields too. Events the
    /// source already has are kept; decoding errors become source warnings.
    pub fn attach(&self, source: &mut Source) -> Result<(), BuildError> {
        let mut b = EventTableBuilder::new();
        b.interner = std::mem::take(&mut source.strings);
        // The source's own events first, with their layouts in order (so ids are stable).
        let old = std::mem::take(&mut source.events);
        for l in old.layouts() {
            b.layout(l.event, &l.fields);
        }
        let mut values: Vec<FieldValue> = Vec::new();
        for ev in old.iter() {
            values.clear();
            values.extend(ev.fields().map(|(_, v)| v));
            b.push(ev.ts(), ev.cpu(), ev.pid(), ev.comm(), ev.flags(), old.layout[ev.index], &values);
        }
        drop(old);
        let mut spans: BTreeMap<String, SpanTrack> = BTreeMap::new();
        let mut kinds: Vec<(latscope_model::Sym, FieldKind)> = Vec::new();
        for a in &self.annotations {
            let track = format!("{}.{}", a.decoder, a.row);
            let label = b.intern(a.text.as_bytes());
            spans
                .entry(track.clone())
                .or_insert_with(|| SpanTrack::new(track))
                .push(a.start, a.end, label, 0, 0);
            let ev = a.events(&mut b, &mut kinds, &mut values);
            b.push(a.start, 0, 0, ev.comm, IrqFlags::default(), ev.start, &values);
            b.push(a.end, 0, 0, ev.comm, IrqFlags::default(), ev.end, &values);
        }
        let (events, interner) = b.finish()?;
        source.events = events;
        source.strings = interner;
        for mut s in spans.into_values() {
            s.sort();
            source.spans.push(s);
        }
        for (kind, n) in &self.errors {
            source.diagnostics.warn(format!("decoder {kind}: {n} error annotation(s)"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ann(start: Ps, text: &'static str) -> Annotation {
        Annotation {
            decoder: "spi",
            row: "mosi",
            start,
            end: start + 1,
            start_sample: None,
            end_sample: None,
            text: text.into(),
            fields: Vec::new(),
        }
    }

    #[test]
    fn hex_digits_match_the_formatter() {
        for v in (0u64..=0x100).chain([0x1FF, 0xABCD, u64::MAX, 1 << 40]) {
            for digits in [1, 2, 3, 4, 16, 17] {
                assert_eq!(hex_upper(v, digits), format!("{v:0digits$X}"), "{v:#x} {digits}");
            }
        }
    }

    #[test]
    fn byte_texts_match_the_formatter() {
        static T: ByteTexts = ByteTexts::new("Data write: ");
        for v in [0u64, 0x3F, 0xFF, 0x100, 0x3FF] {
            assert_eq!(T.get(v), format!("Data write: {v:02X}"));
        }
        assert!(matches!(T.get(7), Cow::Borrowed(_)));
    }

    #[test]
    fn sorting_by_start_is_stable_and_equals_a_stable_sort() {
        // Words in order, a transfer emitted at its end with its start, ties in emission order.
        let mut v: Vec<Annotation> =
            [(10, "a"), (20, "b"), (20, "c"), (30, "d"), (10, "transfer"), (40, "e"), (20, "late")]
                .iter()
                .map(|&(s, t)| ann(s, t))
                .collect();
        let mut want = v.clone();
        want.sort_by_key(|a| a.start);
        sort_by_start(&mut v);
        assert_eq!(v, want);
        let texts: Vec<&str> = v.iter().map(|a| &*a.text).collect();
        assert_eq!(texts, ["a", "transfer", "b", "c", "late", "d", "e"]);
    }
}

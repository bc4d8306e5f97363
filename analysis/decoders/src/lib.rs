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
pub mod sd;
mod sd_spi;
pub mod signal;
pub mod spec;
mod spi;
mod uart;

use latscope_model::{
    AnalogTrack, BuildError, DigitalTrack, EventTableBuilder, FieldKind, FieldValue, IrqFlags, Ps, Source,
    SpanTrack, Threshold,
};
pub use signal::{Clock, Line};
use std::collections::BTreeMap;

/// Decoder names and one-line descriptions with their spec syntax, for `--help` and errors.
pub const DECODERS: &[(&str, &str)] = &[
    ("uart", "uart:tx=CH (or rx=CH),baud=N|auto,bits=5..9,parity=none|even|odd,stop=1|1.5|2,invert=0|1"),
    ("spi", "spi:clk=CH,mosi=CH,miso=CH,cs=CH,cpol=0|1,cpha=0|1,cs_active=low|high,order=msb|lsb,bits=N"),
    ("i2c", "i2c:scl=CH,sda=CH"),
    ("sd", "sd:clk=CH,cmd=CH[,dat0=CH,dat1=CH,dat2=CH,dat3=CH,width=1|4,block=N]"),
    ("sd-spi", "spi:clk=CH,mosi=CH,miso=CH,cs=CH | sd-spi[:block=N]"),
];

/// A typed annotation field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    UInt(u64),
    Int(i64),
    Bool(bool),
    Str(String),
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
    pub text: String,
    pub fields: Vec<(&'static str, Value)>,
}

impl Annotation {
    pub fn field(&self, name: &str) -> Option<&Value> {
        self.fields.iter().find(|(k, _)| *k == name).map(|(_, v)| v)
    }
}

/// Errors before decoding starts: the spec, the channels, the options.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error(transparent)]
    Spec(#[from] spec::SpecError),
    #[error("column {column}: unknown decoder `{name}`; decoders: {}", DECODERS.iter().map(|d| d.0).collect::<Vec<_>>().join(", "))]
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
}

impl Channel<'_> {
    pub fn name(&self) -> &str {
        match self {
            Channel::Digital(d) => &d.name,
            Channel::Analog(a) => &a.name,
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

    /// Resolves a channel name as rule endpoints do ([`latscope_model::resolve_name`]): the
    /// exact name, else the one channel whose name ends with it after a separator.
    pub fn resolve(&self, name: &str, column: usize) -> Result<Line, DecodeError> {
        let names = self.channels.iter().map(|c| c.name());
        let index = match latscope_model::resolve_name(names, name, "channel") {
            Ok(i) => i,
            Err(latscope_model::NameError::Unknown { available, .. }) => {
                return Err(DecodeError::UnknownChannel { name: name.into(), column, available });
            }
            Err(latscope_model::NameError::Ambiguous { candidates, .. }) => {
                return Err(DecodeError::AmbiguousChannel { name: name.into(), column, candidates });
            }
        };
        Ok(match self.channels[index] {
            Channel::Digital(d) => Line::from_track(d, self.clock),
            Channel::Analog(a) => Line::from_track(&a.to_digital(Threshold::Auto), self.clock),
        })
    }
}

/// An annotation while decoding: its span in ticks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ann {
    pub ss: i64,
    pub es: i64,
    pub row: &'static str,
    pub text: String,
    pub fields: Vec<(&'static str, Value)>,
}

/// Where a decoder puts its annotations; errors are also counted by kind.
#[derive(Debug, Default)]
pub(crate) struct Sink {
    pub anns: Vec<Ann>,
    pub errors: BTreeMap<&'static str, u64>,
}

impl Sink {
    pub fn put(
        &mut self,
        ss: i64,
        es: i64,
        row: &'static str,
        text: String,
        fields: Vec<(&'static str, Value)>,
    ) {
        self.anns.push(Ann { ss, es, row, text, fields });
    }

    /// An error annotation on the `warnings` row, counted under `kind`.
    pub fn error(&mut self, ss: i64, es: i64, kind: &'static str, text: String) {
        *self.errors.entry(kind).or_default() += 1;
        self.put(ss, es, "warnings", text, vec![("error", Value::Str(kind.into()))]);
    }

    pub fn count(&mut self, kind: &'static str) {
        *self.errors.entry(kind).or_default() += 1;
    }
}

/// What a decoder hands to the one stacked on it.
#[derive(Debug, Default)]
pub(crate) enum Stream {
    #[default]
    None,
    Spi(Vec<spi::Word>),
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

/// Runs the decoder stack `spec` on `inputs`.
pub fn decode(spec_text: &str, inputs: &Inputs<'_>) -> Result<Decoded, DecodeError> {
    let stages = spec::parse(spec_text)?;
    let mut out = Decoded { clock: Some(inputs.clock), ..Decoded::default() };
    let mut stream = Stream::None;
    for (i, stage) in stages.iter().enumerate() {
        let mut sink = Sink::default();
        let (decoder, next): (&'static str, Stream) = match (stage.name.as_str(), i) {
            ("uart", 0) => ("uart", uart::run(stage, inputs, &mut sink)?),
            ("spi", 0) => ("spi", spi::run(stage, inputs, &mut sink)?),
            ("i2c", 0) => ("i2c", i2c::run(stage, inputs, &mut sink)?),
            ("sd", 0) => ("sd", sd::run(stage, inputs, &mut sink)?),
            ("sd-spi", _) => match std::mem::take(&mut stream) {
                Stream::Spi(words) => ("sd-spi", sd_spi::run(stage, &words, &mut sink)?),
                Stream::None => {
                    return Err(DecodeError::Config {
                        decoder: "sd-spi".into(),
                        message: "stacks on spi: `spi:clk=CH,mosi=CH,miso=CH,cs=CH | sd-spi`".into(),
                    });
                }
            },
            ("uart" | "spi" | "i2c" | "sd", _) => {
                return Err(DecodeError::Config {
                    decoder: stage.name.clone(),
                    message: "reads channels, so it must be the first decoder of a stack".into(),
                });
            }
            (name, _) => return Err(DecodeError::UnknownDecoder { name: name.into(), column: stage.column }),
        };
        stream = next;
        for (kind, n) in sink.errors {
            *out.errors.entry(format!("{decoder}: {kind}")).or_default() += n;
        }
        let clock = inputs.clock;
        out.annotations.extend(sink.anns.into_iter().map(|a| Annotation {
            decoder,
            row: a.row,
            start: clock.time_of(a.ss),
            end: clock.time_of(a.es),
            start_sample: clock.sample_numbers().then_some(a.ss),
            end_sample: clock.sample_numbers().then_some(a.es),
            text: a.text,
            fields: a.fields,
        }));
    }
    out.annotations.sort_by_key(|a| a.start);
    Ok(out)
}

/// The event name of a decoder row: `sd` + `response` → `sd_resp`.
pub fn event_name(decoder: &str, row: &str) -> String {
    let row = match row {
        "response" => "resp",
        r => r,
    };
    format!("{}_{}", decoder.replace('-', "_"), row)
}

impl Decoded {
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
            kinds.clear();
            values.clear();
            for (k, v) in &a.fields {
                let key = b.intern(k.as_bytes());
                let (kind, value) = match v {
                    Value::UInt(u) => (FieldKind::UInt, FieldValue::UInt(*u)),
                    Value::Int(i) => (FieldKind::Int, FieldValue::Int(*i)),
                    Value::Bool(x) => (FieldKind::UInt, FieldValue::UInt(u64::from(*x))),
                    Value::Str(s) => (FieldKind::Str, FieldValue::Str(b.intern(s.as_bytes()))),
                };
                kinds.push((key, kind));
                values.push(value);
            }
            for (key, sample) in [("start_sample", a.start_sample), ("end_sample", a.end_sample)] {
                if let Some(s) = sample {
                    kinds.push((b.intern(key.as_bytes()), FieldKind::Int));
                    values.push(FieldValue::Int(s));
                }
            }
            let comm = b.intern(a.decoder.as_bytes());
            let ev = event_name(a.decoder, a.row);
            let start_name = b.intern(ev.as_bytes());
            let end_name = b.intern(format!("{ev}_end").as_bytes());
            let start_layout = b.layout(start_name, &kinds);
            let end_layout = b.layout(end_name, &kinds);
            b.push(a.start, 0, 0, comm, IrqFlags::default(), start_layout, &values);
            b.push(a.end, 0, 0, comm, IrqFlags::default(), end_layout, &values);
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

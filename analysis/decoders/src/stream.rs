//! Decoding as the samples arrive: a decoder stack is fed the level changes of its channels
//! in time order ([`StreamDecoder::change`]) and keeps only its own state, so a capture is
//! decoded while it is read (chunk by chunk from a `.sr`, or as a logic analyzer streams it)
//! without first storing every flip of every channel.
//!
//! Every decoder is such a machine ([`Machine`]); [`crate::decode`] feeds the same machines
//! from whole tracks, merging their changes in time order (a [`Line`] read as it lies, a
//! model track converted to ticks on the way, never copied).

use crate::params::Channels;
use crate::signal::{Clock, Line, binary};
use crate::spec::Stage;
use crate::{DecodeError, Decoded, Sink, i2c, sd, sd_spi, spi, uart};
use latscope_model::DigitalTrack;

/// A decoder fed with level changes. Levels are words of bits: bit `b` is the channel the
/// decoder resolved to `b` (see [`Channels`]).
pub(crate) trait Machine {
    /// The levels at tick 0, before any change.
    fn start(&mut self, levels: u64, sink: &mut Sink);
    /// The channels in `changed` changed at `t` (later than any earlier call's tick);
    /// `levels` are all levels after.
    fn change(&mut self, t: i64, changed: u64, levels: u64, sink: &mut Sink);
    /// The capture ended; `ends[b]` is the last tick of channel `b`.
    fn finish(&mut self, ends: &[i64], sink: &mut Sink) -> Result<(), DecodeError>;
    /// Whether no annotation already in the sink will be changed again (a decoder that
    /// amends one it put, an ACK added to its byte, says no while it may): then they can be
    /// handed on before the capture ends. Until a decoder knows, all are kept.
    fn settled(&self) -> bool {
        false
    }
    /// Whether no frame is open: the next annotation starts at or after the change that
    /// puts it. Until a decoder knows, it says no.
    fn quiet(&self) -> bool {
        false
    }
}

/// The decoder that reads channels: the first of a stack.
#[derive(Debug)]
enum First {
    Uart(uart::Uart),
    Spi(spi::Spi),
    I2c(i2c::I2c),
    Sd(sd::Sd),
}

impl First {
    fn settled(&self) -> bool {
        match self {
            First::Uart(m) => m.settled(),
            First::Spi(m) => m.settled(),
            First::I2c(m) => m.settled(),
            First::Sd(m) => m.settled(),
        }
    }

    fn quiet(&self) -> bool {
        match self {
            First::Uart(m) => m.quiet(),
            First::Spi(m) => m.quiet(),
            First::I2c(m) => m.quiet(),
            First::Sd(m) => m.quiet(),
        }
    }

    /// Whether the decoder says when its annotations are final ([`Machine::settled`]).
    fn says_settled(&self) -> bool {
        matches!(self, First::Spi(_) | First::I2c(_))
    }

    /// The index of the annotation the decoder will still amend by its position in the
    /// sink, if any: SPI's open transfer, I2C's byte waiting for its ACK.
    fn amended_index(&mut self) -> Option<&mut usize> {
        match self {
            First::Spi(m) => m.transfer_index(),
            First::I2c(m) => m.pending.as_mut(),
            First::Uart(_) | First::Sd(_) => None,
        }
    }

    fn machine(&mut self) -> &mut dyn Machine {
        match self {
            First::Uart(m) => m,
            First::Spi(m) => m,
            First::I2c(m) => m,
            First::Sd(m) => m,
        }
    }
}

/// A parsed stack with its state: the channel decoder, and a decoder stacked on it.
#[derive(Debug)]
struct Stack {
    first: First,
    first_sink: Sink,
    /// SD over SPI on the SPI words.
    stacked: Option<(sd_spi::SdSpi, Sink)>,
    clock: Clock,
}

impl Stack {
    fn build(spec_text: &str, channels: &mut dyn Channels, clock: Clock) -> Result<Stack, DecodeError> {
        let stages = crate::spec::parse(spec_text)?;
        let mut first: Option<(First, Sink)> = None;
        let mut stacked = None;
        for (i, stage) in stages.iter().enumerate() {
            let sink = Sink::new(stage_name(stage), clock);
            match (stage.name.as_str(), i) {
                ("uart", 0) => {
                    first = Some((First::Uart(uart::Uart::new(stage, channels, clock.rate(), &sink)?), sink))
                }
                ("spi", 0) => first = Some((First::Spi(spi::Spi::new(stage, channels)?), sink)),
                ("i2c", 0) => first = Some((First::I2c(i2c::I2c::new(stage, channels)?), sink)),
                ("sd", 0) => first = Some((First::Sd(sd::Sd::new(stage, channels, clock)?), sink)),
                ("sd-spi", 1) if matches!(first, Some((First::Spi(_), _))) => {
                    let decoder = sd_spi::SdSpi::new(stage)?;
                    if let Some((First::Spi(spi), _)) = first.as_mut() {
                        if !spi.has_both_lines() {
                            return Err(DecodeError::Config {
                                decoder: "sd-spi".into(),
                                message: "needs both mosi and miso on the spi decoder below it".into(),
                            });
                        }
                        spi.keep_words = true;
                    }
                    stacked = Some((decoder, sink));
                }
                ("sd-spi", _) => {
                    return Err(DecodeError::Config {
                        decoder: "sd-spi".into(),
                        message: "stacks on spi: `spi:clk=CH,mosi=CH,miso=CH,cs=CH | sd-spi`".into(),
                    });
                }
                ("uart" | "spi" | "i2c" | "sd", _) => {
                    return Err(DecodeError::Config {
                        decoder: stage.name.clone(),
                        message: "reads channels, so it must be the first decoder of a stack".into(),
                    });
                }
                (name, _) => {
                    return Err(DecodeError::UnknownDecoder { name: name.into(), column: stage.column });
                }
            }
        }
        // The grammar gives at least one stage, and every first stage reads channels.
        let Some((first, first_sink)) = first else {
            return Err(DecodeError::Config { decoder: String::new(), message: "an empty stack".into() });
        };
        Ok(Stack { first, first_sink, stacked, clock })
    }

    fn start(&mut self, levels: u64) {
        self.first.machine().start(levels, &mut self.first_sink);
    }

    #[inline]
    fn change(&mut self, t: i64, changed: u64, levels: u64) {
        match &mut self.first {
            // The common decoders without the indirection (one call per change of a large capture).
            First::Sd(m) => m.change(t, changed, levels, &mut self.first_sink),
            First::I2c(m) => m.change(t, changed, levels, &mut self.first_sink),
            First::Spi(m) => {
                m.change(t, changed, levels, &mut self.first_sink);
                if let Some((next, sink)) = self.stacked.as_mut() {
                    for w in m.words.drain(..) {
                        next.word(&w, sink);
                    }
                }
            }
            First::Uart(m) => m.change(t, changed, levels, &mut self.first_sink),
        }
    }

    /// Moves the annotations that are final into `out`: only from a stack of one decoder,
    /// whose annotations came in start order and which says when they no longer change.
    /// All of them once it says none will; otherwise those that start before the one it will
    /// still amend (SPI's open transfer, I2C's byte waiting for its ACK), whose index then
    /// moves back by as many.
    fn take_settled(&mut self, out: &mut Vec<crate::Annotation>) {
        if self.stacked.is_some() || !self.first_sink.in_order || !self.first.says_settled() {
            return;
        }
        if self.first.settled() {
            self.first_sink.take_all(out);
        } else if let Some(held) = self.first.amended_index() {
            take_before_held(&mut self.first_sink, held, out);
        }
    }

    fn finish(mut self, ends: &[i64]) -> Result<Decoded, DecodeError> {
        self.first.machine().finish(ends, &mut self.first_sink)?;
        let mut sinks = vec![self.first_sink];
        if let Some((mut next, mut sink)) = self.stacked {
            if let First::Spi(m) = &mut self.first {
                for w in m.words.drain(..) {
                    next.word(&w, &mut sink);
                }
            }
            next.finish(&mut sink);
            sinks.push(sink);
        }
        Ok(merge_sinks(
            self.clock,
            sinks.into_iter().map(|s| (s.decoder_name(), s.errors, s.anns, s.in_order)),
        ))
    }

    /// The annotations and errors put so far (a copy), sorted by start, as if the capture
    /// ended here but without ending the frames still open.
    /// Drops the annotations put so far that end before `t` (picoseconds). One the first
    /// decoder will still amend by its index stays, with every one after it, and its index
    /// moves with it: a transfer open longer than a ring lasts is not lost, nor its words
    /// misplaced when CS releases.
    fn forget_before(&mut self, t: latscope_model::Ps) {
        let keep = |sink: &mut Sink| sink.anns.retain(|a| a.end >= t);
        match self.first.amended_index() {
            Some(held) => {
                let (mut i, mut gone) = (0, 0);
                self.first_sink.anns.retain(|a| {
                    let kept = i >= *held || a.end >= t;
                    gone += usize::from(!kept);
                    i += 1;
                    kept
                });
                *held -= gone;
            }
            None => keep(&mut self.first_sink),
        }
        if let First::Uart(m) = &mut self.first {
            m.line_sinks_mut().for_each(keep);
        }
        if let Some((_, sink)) = self.stacked.as_mut() {
            keep(sink);
        }
    }

    /// [`StreamDecoder::take_final`] for SD over SPI: what both decoders put before the
    /// stack's reach, in the order the whole decode gives (by start; equal starts SPI's
    /// first, then each decoder's in the order it put them).
    ///
    /// The reach is the earlier of the two decoders'. SPI puts in start order, so nothing
    /// of its own still to come starts before the open transfer (amended when CS
    /// releases), or before the word under way or the next change while none is open. SD
    /// over SPI puts at the word being fed, but a frame's annotation at the frame's start
    /// ([`sd_spi::SdSpi::open_since`]); its next word starts no earlier than SPI's word
    /// under way, or the next change.
    fn take_stacked(&mut self, fed: i64, out: &mut Vec<crate::Annotation>) -> Option<latscope_model::Ps> {
        let (First::Spi(spi), Some((sd, sd_sink))) = (&mut self.first, self.stacked.as_mut()) else {
            return None;
        };
        let spi_sink = &mut self.first_sink;
        if !spi_sink.in_order {
            return None;
        }
        let next_word = spi.word_since().unwrap_or(fed);
        let spi_reach = match spi.transfer_index() {
            Some(held) => match spi_sink.anns.get(*held) {
                Some(transfer) => transfer.start,
                None => spi_sink.last_start().unwrap_or(spi_sink.time(0).0),
            },
            None => spi_sink.time(next_word).0,
        };
        let sd_since = sd.open_since().map_or(next_word, |t| t.min(next_word));
        let reach = spi_reach.min(sd_sink.time(sd_since).0);
        let (mut words, mut cards) = (Vec::new(), Vec::new());
        spi_sink.take_before(reach, &mut words);
        // What is taken starts before the open transfer, so its index moves back by as many.
        if let Some(held) = spi.transfer_index() {
            *held -= words.len();
        }
        sd_sink.take_before(reach, &mut cards);
        out.reserve(words.len() + cards.len());
        let mut cards = cards.into_iter().peekable();
        for w in words {
            while let Some(c) = cards.next_if(|c| c.start < w.start) {
                out.push(c);
            }
            out.push(w);
        }
        out.extend(cards);
        Some(reach)
    }

    /// Every sink of the stack, in stack order.
    fn sinks(&self) -> impl Iterator<Item = &Sink> {
        // UART keeps each line's annotations apart until the end.
        let own: Vec<&Sink> = match &self.first {
            First::Uart(m) => m.line_sinks().collect(),
            _ => Vec::new(),
        };
        std::iter::once(&self.first_sink).chain(own).chain(self.stacked.as_ref().map(|s| &s.1))
    }

    fn so_far(&self) -> Decoded {
        let sinks = self.sinks();
        merge_sinks(
            self.clock,
            sinks.map(|s| (s.decoder_name(), s.errors.clone(), s.anns.clone(), s.in_order)),
        )
    }
}

/// Moves into `out` the annotations of a sink in start order that start before the one at
/// index `held` (which its decoder will still amend), and moves `held` back by as many.
/// Those starting with it stay, so the annotations taken later keep the whole decode's
/// order.
fn take_before_held(sink: &mut Sink, held: &mut usize, out: &mut Vec<crate::Annotation>) {
    if let Some(reach) = sink.anns.get(*held).map(|a| a.start) {
        let before = out.len();
        sink.take_before(reach, out);
        *held -= out.len() - before;
    }
}

/// Adds a sink's error counts to `out`, keyed `DECODER: KIND` as [`Decoded::errors`] keys
/// them.
fn count_errors(
    out: &mut std::collections::BTreeMap<String, u64>,
    decoder: &str,
    errors: impl IntoIterator<Item = (&'static str, u64)>,
) {
    for (kind, n) in errors {
        *out.entry(format!("{decoder}: {kind}")).or_default() += n;
    }
}

/// One result of the sinks of a stack, in stack order: each sink's name, errors,
/// annotations, and whether they came in start order.
fn merge_sinks(
    clock: Clock,
    sinks: impl Iterator<
        Item = (&'static str, std::collections::BTreeMap<&'static str, u64>, Vec<crate::Annotation>, bool),
    >,
) -> Decoded {
    let mut out = Decoded { clock: Some(clock), ..Decoded::default() };
    let mut sorted = true;
    for (name, errors, mut anns, in_order) in sinks {
        count_errors(&mut out.errors, name, errors);
        sorted &= in_order
            && match (out.annotations.last(), anns.first()) {
                (Some(a), Some(b)) => a.start <= b.start,
                _ => true,
            };
        if out.annotations.is_empty() {
            out.annotations = anns;
        } else {
            out.annotations.append(&mut anns);
        }
    }
    if !sorted {
        crate::sort_by_start(&mut out.annotations);
    }
    out
}

/// The decoder's own name, from the table (an unknown one is refused when the stack is built).
fn stage_name(stage: &Stage) -> &'static str {
    crate::registry::native(&stage.name).map_or("", |d| d.name)
}

/// A decoder stack fed with level changes as they happen.
///
/// ```
/// use latscope_decoders::{Clock, StreamDecoder};
/// // Bit 0 is SCL, bit 1 SDA; both idle high.
/// let mut d = StreamDecoder::new("i2c:scl=SCL,sda=SDA", &[("SCL", 0), ("SDA", 1)], Clock::Samples(1_000_000)).unwrap();
/// d.start(0b11);
/// d.change(10, 0b10, 0b01); // SDA falls while SCL is high: START
/// let decoded = d.finish(20).unwrap();
/// assert_eq!(decoded.annotations[0].text, "Start");
/// ```
#[derive(Debug)]
pub struct StreamDecoder {
    stack: Stack,
    wanted: u64,
}

/// Resolves names among the feeder's channels, each at its own bit (below 64).
struct Named<'a> {
    channels: &'a [(&'a str, u32)],
    /// The bits of the channels the stack reads.
    wanted: u64,
}

impl Channels for Named<'_> {
    fn names(&self) -> Vec<String> {
        self.channels.iter().map(|c| c.0.to_owned()).collect()
    }
    fn bit(&mut self, name: &str, column: usize) -> Result<u32, DecodeError> {
        let i = resolve(self.channels.iter().map(|c| c.0), name, column)?;
        let bit = self.channels[i].1;
        if bit >= 64 {
            return Err(DecodeError::Config {
                decoder: String::new(),
                message: format!("channel `{name}` is at bit {bit}: a streamed decode reads bits 0 to 63"),
            });
        }
        self.wanted |= 1 << bit;
        Ok(bit)
    }
}

impl StreamDecoder {
    /// Prepares the stack `spec` over `channels`: each channel's name and its bit in the
    /// level words [`Self::change`] will be given (bits below 64). Names resolve as
    /// [`crate::Inputs::resolve`] resolves them.
    pub fn new(spec: &str, channels: &[(&str, u32)], clock: Clock) -> Result<Self, DecodeError> {
        let mut named = Named { channels, wanted: 0 };
        let stack = Stack::build(spec, &mut named, clock)?;
        Ok(StreamDecoder { stack, wanted: named.wanted })
    }

    /// The channels (as a mask of their bits) whose changes this stack reads: changes of
    /// others need not be passed.
    pub fn wanted(&self) -> u64 {
        self.wanted
    }

    /// The levels at tick 0.
    pub fn start(&mut self, levels: u64) {
        self.stack.start(levels);
    }

    /// The channels in `changed` changed at `tick`, after the tick of the previous call;
    /// `levels` are all levels after the change.
    #[inline]
    pub fn change(&mut self, tick: i64, changed: u64, levels: u64) {
        if changed & self.wanted != 0 {
            self.stack.change(tick, changed, levels);
        }
    }

    /// [`Self::change`] for each of a run of changes in tick order: at tick `base + at[k]` the
    /// levels became `levels[k]`, and `before` are the levels before the first. A change is
    /// passed with the channels of `wanted` that flipped, when one of them is this stack's.
    /// One call for a run keeps the common decoders' machines in one loop, without a call
    /// and a dispatch per change.
    pub fn changes<W: Copy + Into<u64>>(
        &mut self,
        base: i64,
        at: &[u32],
        levels: &[W],
        before: u64,
        wanted: u64,
    ) {
        fn run<W: Copy + Into<u64>>(
            base: i64,
            at: &[u32],
            levels: &[W],
            mut last: u64,
            (wanted, own): (u64, u64),
            mut each: impl FnMut(i64, u64, u64),
        ) {
            for (&a, &w) in at.iter().zip(levels) {
                let w: u64 = w.into();
                let changed = (w ^ last) & wanted;
                last = w;
                if changed & own != 0 {
                    each(base + i64::from(a), changed, w);
                }
            }
        }
        let masks = (wanted, self.wanted);
        let stack = &mut self.stack;
        match &mut stack.first {
            First::I2c(m) => {
                return run(base, at, levels, before, masks, |t, c, l| {
                    m.change(t, c, l, &mut stack.first_sink)
                });
            }
            First::Sd(m) => {
                return run(base, at, levels, before, masks, |t, c, l| {
                    m.change(t, c, l, &mut stack.first_sink)
                });
            }
            First::Spi(_) | First::Uart(_) => {}
        }
        run(base, at, levels, before, masks, |t, c, l| stack.change(t, c, l));
    }

    /// How many annotations the stack holds.
    pub fn held(&self) -> usize {
        let held_back = match &self.stack.first {
            First::Sd(m) => m.held_back(),
            _ => 0,
        };
        // The stack's sinks: a UART's lines keep their own.
        self.stack.sinks().map(|s| s.anns.len()).sum::<usize>() + held_back
    }

    /// Moves the annotations that are final into `out`, in start order, so that a long
    /// decode need not keep them all: those of a stack of one decoder that knows when its
    /// annotations can no longer change (SPI, I2C) and that came in start order; while it
    /// will still amend one (SPI's open transfer, I2C's byte waiting for its ACK), those
    /// that start before it. Any others, and those put since, come from [`Self::finish`],
    /// after every one taken here.
    pub fn take_settled(&mut self, out: &mut Vec<crate::Annotation>) {
        self.stack.take_settled(out);
    }

    /// [`Self::take_settled`] for a live decode, which must also know how far the final
    /// annotations reach: returns the time (ps) before which no annotation will start any
    /// more, `fed` being the number of ticks fed so far (the next change comes at `fed` or
    /// later). `None` when the stack cannot say: a decoder that does not say how early an
    /// annotation under way starts put them out of start order. A UART with `baud=auto`
    /// frames at the rate measured so far, and frames again when it changes
    /// ([`Self::frames_again`]).
    ///
    /// SD puts its annotations out of start order (the CMD line's and the DAT lines' as each
    /// ends), and UART each line's apart (a frame's errors before its data): both say how
    /// early one still under way starts, and those put that start before then are taken,
    /// in start order. SD over SPI says where its frame
    /// under way starts, and its annotations are taken with SPI's, merged as the whole
    /// decode merges them.
    pub fn take_final(&mut self, fed: i64, out: &mut Vec<crate::Annotation>) -> Option<latscope_model::Ps> {
        let stack = &mut self.stack;
        if stack.stacked.is_some() {
            return stack.take_stacked(fed, out);
        }
        match &mut stack.first {
            First::Sd(m) => {
                let sink = &mut stack.first_sink;
                let reach = sink.time(m.open_since().map_or(fed, |t| t.min(fed))).0;
                sink.take_before(reach, out);
                return Some(reach);
            }
            First::Uart(m) => {
                let reach = stack.first_sink.time(m.open_since(fed)?).0;
                m.take_before(reach, out);
                return Some(reach);
            }
            First::Spi(_) | First::I2c(_) => {}
        }
        if !stack.first.says_settled() || !stack.first_sink.in_order {
            return None;
        }
        stack.take_settled(out);
        let sink = &stack.first_sink;
        // Annotations come in start order: a later one starts no earlier than the first held
        // (amended, not final) or the last put.
        Some(match (sink.anns.first(), sink.taken_last()) {
            (Some(held), _) => held.start,
            (None, _) if stack.first.quiet() => sink.time(fed).0,
            (None, Some(last)) => last,
            (None, None) => sink.time(0).0,
        })
    }

    /// Whether the next [`Self::take_final`] or [`Self::finish`] frames a `baud=auto` UART
    /// line from its first change again, because the rate its pulses give changed: what
    /// was taken of this stack so far is void, and the caller drops it first.
    pub fn frames_again(&self) -> bool {
        matches!(&self.stack.first, First::Uart(m) if m.frames_again())
    }

    /// What has been decoded so far, while the capture goes on (a live view): a copy of the
    /// annotations and errors put, sorted by start. Frames still open are not in it, nor
    /// annotations already taken by [`Self::take_settled`], nor a UART's with `baud=auto`
    /// before a live decode framed it ([`Self::take_final`]).
    pub fn so_far(&self) -> Decoded {
        self.stack.so_far()
    }

    /// The errors counted so far, keyed as [`Decoded::errors`] keys them.
    pub fn errors(&self) -> std::collections::BTreeMap<String, u64> {
        let mut out = std::collections::BTreeMap::new();
        for sink in self.stack.sinks() {
            count_errors(&mut out, sink.decoder_name(), sink.errors.iter().map(|(&k, &n)| (k, n)));
        }
        out
    }

    /// Drops the annotations put so far that end before `t` (picoseconds on the decoder's
    /// clock), so a recording that keeps only recent data (a flight recorder's ring) holds
    /// only recent annotations too. Errors stay counted.
    pub fn forget_before(&mut self, t: latscope_model::Ps) {
        self.stack.forget_before(t);
    }

    /// The capture ended at tick `end` (its last sample): annotations cut off there are
    /// reported, and the result is returned sorted by start.
    pub fn finish(self, end: i64) -> Result<Decoded, DecodeError> {
        let taken = self.stack.first_sink.taken_last();
        let decoded = self.stack.finish(&[end; 64])?;
        // A decoder that says its annotations are settled puts them in start order.
        debug_assert!(
            taken.is_none_or(|t| {
                decoded.annotations.first().is_none_or(|a| a.start >= t)
                    && decoded.annotations.is_sorted_by_key(|a| a.start)
            }),
            "annotations after those taken out came out of order"
        );
        Ok(decoded)
    }
}

/// [`latscope_model::resolve_name`] with the decoders' errors.
pub(crate) fn resolve<'a>(
    names: impl IntoIterator<Item = &'a str>,
    name: &str,
    column: usize,
) -> Result<usize, DecodeError> {
    match latscope_model::resolve_name(names, name, "channel") {
        Ok(i) => Ok(i),
        Err(latscope_model::NameError::Unknown { available, .. }) => {
            Err(DecodeError::UnknownChannel { name: name.into(), column, available })
        }
        Err(latscope_model::NameError::Ambiguous { candidates, .. }) => {
            Err(DecodeError::AmbiguousChannel { name: name.into(), column, candidates })
        }
    }
}

/// Resolves names among the channels of [`crate::Inputs`]: the channels a stack uses get
/// bits 0, 1, … in the order it asks for them.
struct InputChannels<'i, 'a> {
    inputs: &'i crate::Inputs<'a>,
    used: Vec<usize>,
}

impl Channels for InputChannels<'_, '_> {
    fn names(&self) -> Vec<String> {
        self.inputs.channels.iter().map(|c| c.name().to_owned()).collect()
    }
    fn bit(&mut self, name: &str, column: usize) -> Result<u32, DecodeError> {
        let i = resolve(self.inputs.channels.iter().map(|c| c.name()), name, column)?;
        let bit = match self.used.iter().position(|&u| u == i) {
            Some(b) => b,
            None => {
                self.used.push(i);
                self.used.len() - 1
            }
        };
        Ok(bit as u32)
    }
}

/// Runs the stack `spec_text` on whole channels: their changes merged in time order.
pub(crate) fn decode_inputs(spec_text: &str, inputs: &crate::Inputs<'_>) -> Result<Decoded, DecodeError> {
    let mut channels = InputChannels { inputs, used: Vec::new() };
    let mut stack = Stack::build(spec_text, &mut channels, inputs.clock)?;
    let mut sources: Vec<Ticks<'_>> =
        channels.used.iter().map(|&i| Ticks::of(inputs.channels[i], inputs.clock)).collect();
    let ends: Vec<i64> = sources.iter().map(|s| s.end).collect();
    feed(&mut sources, |m| match m {
        Feed::Start(levels) => stack.start(levels),
        Feed::Change(t, changed, levels) => stack.change(t, changed, levels),
    });
    stack.finish(&ends)
}

/// What [`feed`] passes on.
enum Feed {
    Start(u64),
    Change(i64, u64, u64),
}

/// Merges the changes of `sources` (at most 64) in time order: bit `k` is source `k`.
fn feed(sources: &mut [Ticks<'_>], mut out: impl FnMut(Feed)) {
    let mut levels = sources.iter().enumerate().fold(0u64, |acc, (k, s)| acc | (u64::from(s.initial) << k));
    out(Feed::Start(levels));
    let mut heads: Vec<i64> = sources.iter_mut().map(|s| s.next().unwrap_or(i64::MAX)).collect();
    loop {
        let Some(t) = heads.iter().copied().min() else { return };
        if t == i64::MAX {
            return;
        }
        let mut changed = 0u64;
        for (k, head) in heads.iter_mut().enumerate() {
            if *head == t {
                changed |= 1 << k;
                *head = sources[k].next().unwrap_or(i64::MAX);
            }
        }
        levels ^= changed;
        out(Feed::Change(t, changed, levels));
    }
}

/// One channel's change ticks, read where they lie: a [`Line`]'s own, or a model track's
/// converted as [`Line::from_track`] converts them (same-tick changes keep the last level,
/// changes that cancel out vanish) without building the line.
struct Ticks<'a> {
    initial: u8,
    end: i64,
    kind: TicksKind<'a>,
}

enum TicksKind<'a> {
    Line(std::slice::Iter<'a, i64>),
    Owned(std::vec::IntoIter<i64>),
    Track(TrackTicks<'a>),
}

impl<'a> Ticks<'a> {
    fn of(channel: crate::Channel<'a>, clock: Clock) -> Ticks<'a> {
        match channel {
            crate::Channel::Line(l) => {
                Ticks { initial: l.initial, end: l.end, kind: TicksKind::Line(l.ticks.iter()) }
            }
            crate::Channel::Digital(d) => {
                let t = TrackTicks::new(d, clock);
                Ticks { initial: t.level, end: t.end, kind: TicksKind::Track(t) }
            }
            crate::Channel::Analog(a) => {
                let line = Line::from_track(&a.to_digital(latscope_model::Threshold::Auto), clock);
                Ticks { initial: line.initial, end: line.end, kind: TicksKind::Owned(line.ticks.into_iter()) }
            }
        }
    }

    #[inline]
    fn next(&mut self) -> Option<i64> {
        match &mut self.kind {
            TicksKind::Line(it) => it.next().copied(),
            TicksKind::Owned(it) => it.next(),
            TicksKind::Track(t) => t.next(),
        }
    }
}

/// The ticks [`Line::from_track`] would store for a track, one at a time: a tick is given
/// once the next change is on a later tick (a change on the same tick may still undo it).
struct TrackTicks<'a> {
    times: latscope_model::TimesIter<'a>,
    levels: std::slice::Iter<'a, u8>,
    clock: Clock,
    period: Option<i64>,
    /// The level after the ticks given so far.
    level: u8,
    /// A tick not given yet, with the level after it.
    pending: Option<(i64, u8)>,
    end: i64,
}

impl<'a> TrackTicks<'a> {
    fn new(track: &'a DigitalTrack, clock: Clock) -> Self {
        TrackTicks {
            times: track.times(),
            levels: track.levels().iter(),
            clock,
            period: clock.even_period(),
            level: binary(track.initial),
            pending: None,
            end: clock.tick_of(track.end.max(track.last_time().unwrap_or(0))),
        }
    }
}

impl Iterator for TrackTicks<'_> {
    type Item = i64;

    fn next(&mut self) -> Option<i64> {
        loop {
            let (Some(t), Some(&l)) = (self.times.next(), self.levels.next()) else {
                let (tick, level) = self.pending.take()?;
                self.level = level;
                return Some(tick);
            };
            let tick = self.clock.tick_fast(t, self.period);
            let level = binary(l);
            match self.pending {
                // A change on the pending tick replaces it: kept only if it still changes
                // the level from the one before that tick.
                Some((p, _)) if tick <= p => {
                    self.pending = (level != self.level).then_some((p, level));
                }
                Some((p, after)) => {
                    self.level = after;
                    self.pending = (level != after).then_some((tick, level));
                    return Some(p);
                }
                None => {
                    if level != self.level {
                        self.pending = Some((tick, level));
                    }
                }
            }
        }
    }
}

/// Feeds `lines` (bit `k` is `lines[k]`) to `machine`, then ends the capture at each
/// line's end: the decoders' unit tests run their machines this way.
#[cfg(test)]
pub(crate) fn feed_lines(
    machine: &mut dyn Machine,
    lines: &[&Line],
    sink: &mut Sink,
) -> Result<(), DecodeError> {
    let mut sources: Vec<Ticks<'_>> = lines
        .iter()
        .map(|l| Ticks { initial: l.initial, end: l.end, kind: TicksKind::Line(l.ticks.iter()) })
        .collect();
    let ends: Vec<i64> = sources.iter().map(|s| s.end).collect();
    feed(&mut sources, |m| match m {
        Feed::Start(levels) => machine.start(levels, sink),
        Feed::Change(t, changed, levels) => machine.change(t, changed, levels, sink),
    });
    machine.finish(&ends, sink)
}

#[cfg(test)]
mod tests {
    use super::*;
    use latscope_model::PS_PER_US;

    /// Sets the levels to `new` at tick `t`.
    fn set(d: &mut StreamDecoder, levels: &mut u64, t: i64, new: u64) {
        let changed = *levels ^ new;
        *levels = new;
        d.change(t, changed, new);
    }

    /// Clocks `byte` out MSB first in SPI mode 0 (CLK bit 0, MOSI bit 1, CS bit 2 held low),
    /// four ticks a bit, from tick `t`; returns the tick after it.
    fn spi_byte(d: &mut StreamDecoder, levels: &mut u64, mut t: i64, byte: u8) -> i64 {
        for i in (0..8).rev() {
            let mosi = u64::from((byte >> i) & 1) << 1;
            set(d, levels, t, mosi);
            set(d, levels, t + 2, mosi | 1);
            t += 4;
        }
        set(d, levels, t, *levels & !1);
        t + 1
    }

    #[test]
    fn a_transfer_open_while_a_ring_forgets_keeps_its_annotation_and_its_words() {
        let channels = [("CLK", 0), ("MOSI", 1), ("CS", 2)];
        let mut d =
            StreamDecoder::new("spi:clk=CLK,mosi=MOSI,cs=CS", &channels, Clock::Samples(1_000_000)).unwrap();
        let mut levels = 0b100;
        d.start(levels);
        set(&mut d, &mut levels, 10, 0);
        let t = spi_byte(&mut d, &mut levels, 12, 0xA5);
        set(&mut d, &mut levels, t, 0b100);
        set(&mut d, &mut levels, 200, 0);
        let t = spi_byte(&mut d, &mut levels, 202, 0x12);
        // A ring that keeps only what ends from here on: both transfers' starts are older.
        d.forget_before(latscope_model::Ps::from(t) * 1_000_000);
        let t = spi_byte(&mut d, &mut levels, t + 2, 0x34);
        set(&mut d, &mut levels, t, 0b100);
        let decoded = d.finish(t + 10).unwrap();
        let transfers: Vec<(i64, i64, &str)> = decoded
            .annotations
            .iter()
            .filter(|a| a.row == "transfer")
            .map(|a| (a.start_sample.unwrap_or(-1), a.end_sample.unwrap_or(-1), &*a.text))
            .collect();
        assert_eq!(transfers, [(200, t, "MOSI 12 34")], "{:?}", decoded.annotations);
        let words: Vec<&str> =
            decoded.annotations.iter().filter(|a| a.row == "mosi").map(|a| &*a.text).collect();
        assert_eq!(words, ["12", "34"]);
    }

    #[test]
    fn track_ticks_are_the_ticks_of_the_line_built_from_the_track() {
        // Same-tick changes, changes that cancel, X and Z levels, and a change at time 0.
        let changes = [
            (0, 1),
            (3, 0),
            (1_000_000, 1),
            (1_000_400, 0),
            (1_000_600, 1),
            (2_000_000, 3),
            (3_000_000, 2),
            (3_000_100, 1),
            (3_000_200, 0),
            (5_000_000, 1),
        ];
        let d = DigitalTrack::with_changes(
            "D",
            0,
            changes.iter().map(|c| c.0).collect(),
            changes.iter().map(|c| c.1).collect(),
            9 * PS_PER_US,
        );
        for clock in [Clock::Samples(1_000_000), Clock::Samples(3_000_000), Clock::Picoseconds] {
            let line = Line::from_track(&d, clock);
            let t = TrackTicks::new(&d, clock);
            assert_eq!((t.level, t.end), (line.initial, line.end), "{clock:?}");
            assert_eq!(t.collect::<Vec<_>>(), line.ticks, "{clock:?}");
        }
    }
}

//! Running decoder stacks: on a loaded source (its digital and analog tracks), straight on a
//! `.sr` file's samples (no model built), or on every input of several that has the channels;
//! and adding what they decoded to a source as span tracks and events, recording the specs
//! in its metadata (`decoder`), which is how a session saves them and a second decode of the
//! same spec is refused.

use crate::channels::ChannelName;
use crate::error::{EngineError, Result};
use crate::registry::Registry;
use latscope_decoders::{Annotation, Clock, DecodeError, Decoded, Inputs, StreamDecoder};
use latscope_importers::LoadControl;
use latscope_model::Source;
use std::path::Path;

/// The metadata key a decoded source records its decoder specs under.
pub const DECODER_KEY: &str = "decoder";

/// The sample rate of a sampled capture (its `samplerate` metadata), so annotations carry
/// sample numbers as sigrok-cli prints them.
pub fn sample_rate(source: &Source) -> Option<u64> {
    let (_, v) = source.metadata.iter().find(|(k, _)| k == "samplerate")?;
    latscope_importers::sigrok::parse_samplerate(v).ok()
}

/// The decoder specs recorded in a source's metadata, in the order they were added.
pub fn specs_of(source: &Source) -> Vec<String> {
    source.metadata.iter().filter(|(k, _)| k == DECODER_KEY).map(|(_, v)| v.clone()).collect()
}

/// Runs decoder stack `spec` on `source`.
pub fn decode(registry: &Registry, source: &Source, spec: &str) -> Result<Decoded> {
    registry.decode(spec, &Inputs::of_source(source, sample_rate(source)), Some(source))
}

/// Runs every spec on `inputs`; one result with all annotations, sorted by start.
fn decode_inputs(
    registry: &Registry,
    inputs: &Inputs<'_>,
    source: Option<&Source>,
    specs: &[String],
) -> Result<Decoded> {
    let parts = specs.iter().map(|spec| registry.decode(spec, inputs, source)).collect::<Result<Vec<_>>>()?;
    Ok(Decoded::merged(parts))
}

/// Runs every spec on `source`; one result with all annotations, sorted by start.
pub fn decode_all(registry: &Registry, source: &Source, specs: &[String]) -> Result<Decoded> {
    decode_inputs(registry, &Inputs::of_source(source, sample_rate(source)), Some(source), specs)
}

/// Decodes a `.sr` capture as it is read:
/// the decoders are fed the flips of their channels
/// as each chunk is inflated and scanned (`sigrok::read_logic`), on the sample numbers
/// sigrok-cli prints; no edge is stored or turned into a time and back, and no model is
/// built. `None` when the file is not a `.sr` with a sample rate and logic channels only, its
/// samples are wider than 64 channels, or a spec names a decoder found at run time: an
/// analog channel is read through a threshold, which needs the full load
/// ([`decodes_file`] says which beforehand). The source returned carries the capture's name
/// and warnings, and no tracks: its channels come beside it.
pub fn decode_file(registry: &Registry, path: &Path, specs: &[String]) -> Result<Option<FileDecode>> {
    let mut all = Vec::new();
    let decoded = decode_file_to(registry, path, specs, &mut |_, batch| {
        all.append(batch);
        Ok(())
    })?;
    Ok(decoded.map(|mut d| {
        d.decoded.annotations = all;
        d
    }))
}

/// Whether [`decode_file`] decodes `path` with `specs` (rather than answering `None`): read
/// from the file's header, before anything is decoded.
pub fn decodes_file(registry: &Registry, path: &Path, specs: &[String]) -> Result<bool> {
    if !all_native(registry, specs) {
        return Ok(false);
    }
    let input = latscope_importers::Input::open(path)?;
    let data = input.bytes();
    if latscope_importers::detect(data) != Some(latscope_importers::Format::SigrokSr) {
        return Ok(false);
    }
    let mut decodes = false;
    latscope_importers::sigrok::read_logic(data, &LoadControl::new(), |layout| {
        decodes = layout.samplerate.is_some() && layout.analog.is_empty();
        None::<(Streamed<'_, '_>, u64)>
    })
    .map_err(|f| EngineError::Import(f.at_path(path)))?;
    Ok(decodes)
}

/// Whether every stage of every spec is a native decoder. One stage found at run time (a
/// `sigrok:` stage anywhere in a stack) sends the whole decode down the general path, which
/// also refuses stacks that mix the two kinds.
fn all_native(registry: &Registry, specs: &[String]) -> bool {
    specs.iter().all(|s| {
        latscope_decoders::spec::parse(s).ok().is_none_or(|stages| {
            stages.iter().all(|st| {
                registry
                    .decoder(&st.name)
                    .is_none_or(|d| matches!(d.runner, crate::registry::DecoderRunner::Native))
            })
        })
    })
}

/// How many annotations a stream decode collects before handing them on: few enough that the
/// batches in flight (half a megabyte each) stay in cache and their memory is reused, rather
/// than faulted in batch after batch (32 K: 8 MiB of them in flight).
const BATCH: usize = 1 << 12;

/// A function given the annotations of a decode in batches, in start order, with the source
/// they belong to (its name and clock; no tracks). It may take them out of the batch.
pub type AnnotationsOut<'a> = dyn FnMut(&Source, &mut Vec<Annotation>) -> std::io::Result<()> + 'a;

/// [`decode_file`], handing the annotations to `out` in batches, in start order, instead of
/// returning them. A single stack whose decoder knows when its annotations are final (I2C)
/// hands them on during the decode, so they are never all held; the others hand theirs on
/// at the end. The result's `decoded.annotations` is empty. An error of `out` stops the
/// decode and is returned (`EngineError::Output`).
pub fn decode_file_to(
    registry: &Registry,
    path: &Path,
    specs: &[String],
    out: &mut AnnotationsOut<'_>,
) -> Result<Option<FileDecode>> {
    if !all_native(registry, specs) {
        return Ok(None);
    }
    let input = latscope_importers::Input::open(path)?;
    let data = input.bytes();
    if latscope_importers::detect(data) != Some(latscope_importers::Format::SigrokSr) {
        return Ok(None);
    }
    let name =
        path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
    let mut source = Source::new(&name, "sigrok-sr", latscope_model::SourceKind::File);
    source.path = Some(path.to_owned());
    let mut refused = None;
    let failed = std::cell::Cell::new(None);
    let read = latscope_importers::sigrok::read_logic(data, &LoadControl::new(), |layout| {
        let (Some(rate), true) = (layout.samplerate, layout.analog.is_empty()) else { return None };
        let channels: Vec<(&str, u32)> = layout.channels.iter().map(|(n, b)| (n.as_str(), *b)).collect();
        let mut decoders = Vec::with_capacity(specs.len());
        for spec in specs {
            match StreamDecoder::new(spec, &channels, Clock::Samples(rate)) {
                Ok(d) => decoders.push(d),
                Err(error) => {
                    refused = Some(EngineError::Decoder { spec: spec.clone(), error });
                    return None;
                }
            }
        }
        let wanted = decoders.iter().fold(0, |acc, d| acc | d.wanted());
        let streaming = decoders.len() == 1;
        let batch = Vec::new();
        Some((
            Streamed {
                decoders,
                changes: [0; 64],
                streaming,
                batch,
                source: &source,
                out,
                failed: &failed,
                stopped: false,
                next_try: BATCH,
            },
            wanted,
        ))
    });
    if let Some(e) = refused {
        return Err(e);
    }
    let read = match read {
        // Only a failure of `out` stops the read (the load is never cancelled).
        Err(latscope_importers::ParseFailure::Cancelled) => Ok(None),
        other => other.map_err(|f| EngineError::Import(f.at_path(path))),
    }?;
    if let Some(source) = failed.take() {
        return Err(EngineError::Output { what: "the annotations".into(), source });
    }
    let Some((mut streamed, end, layout)) = read else { return Ok(None) };
    let last = i64::try_from(end.samples.saturating_sub(1)).unwrap_or(i64::MAX);
    let parts = specs
        .iter()
        .zip(std::mem::take(&mut streamed.decoders))
        .map(|(spec, d)| d.finish(last).map_err(|error| EngineError::Decoder { spec: spec.clone(), error }))
        .collect::<Result<Vec<_>>>()?;
    let mut decoded = Decoded::merged(parts);
    streamed.batch.append(&mut decoded.annotations);
    streamed.flush();
    let changes = streamed.changes;
    if let Some(source) = failed.take() {
        return Err(EngineError::Output { what: "the annotations".into(), source });
    }
    let channels = layout
        .channels
        .iter()
        .map(|(name, bit)| ChannelName {
            name: name.clone(),
            analog: false,
            changes: changes.get(*bit as usize).copied().unwrap_or(0),
        })
        .collect();
    for w in end.warnings {
        source.diagnostics.warn(w);
    }
    Ok(Some(FileDecode { source, decoded, channels }))
}

/// Decoder stacks fed as a capture is read, and the flips counted per channel they read.
struct Streamed<'a, 'o> {
    decoders: Vec<StreamDecoder>,
    changes: [u64; 64],
    /// One stack: its final annotations are handed on as it goes.
    streaming: bool,
    batch: Vec<Annotation>,
    source: &'a Source,
    out: &'a mut AnnotationsOut<'o>,
    /// The first error of `out`: the read is stopped, and this returned.
    failed: &'a std::cell::Cell<Option<std::io::Error>>,
    /// Whether `out` failed.
    stopped: bool,
    /// How many annotations the decoder holds when it is next asked for the final ones.
    next_try: usize,
}

impl Streamed<'_, '_> {
    /// Hands the batch on (and empties it), unless `out` failed before.
    fn flush(&mut self) {
        if !self.stopped
            && !self.batch.is_empty()
            && let Err(e) = (self.out)(self.source, &mut self.batch)
        {
            self.failed.set(Some(e));
            self.stopped = true;
        }
        self.batch.clear();
    }
}

impl latscope_importers::sigrok::LogicVisitor for Streamed<'_, '_> {
    fn first(&mut self, levels: u64) -> std::result::Result<(), latscope_importers::ParseFailure> {
        self.decoders.iter_mut().for_each(|d| d.start(levels));
        Ok(())
    }

    fn change(
        &mut self,
        sample: u64,
        changed: u64,
        levels: u64,
    ) -> std::result::Result<(), latscope_importers::ParseFailure> {
        let mut bits = changed;
        while bits != 0 {
            self.changes[bits.trailing_zeros() as usize] += 1;
            bits &= bits - 1;
        }
        // Sample numbers stay far below 2^63 (a chunk inflates to at most 4 GiB).
        let tick = sample as i64;
        self.decoders.iter_mut().for_each(|d| d.change(tick, changed, levels));
        self.take_settled()
    }

    fn flips(
        &mut self,
        base: u64,
        at: &[u32],
        levels: latscope_importers::sigrok::FlipLevels<'_>,
        before: u64,
        wanted: u64,
    ) -> std::result::Result<(), latscope_importers::ParseFailure> {
        use latscope_importers::sigrok::FlipLevels;
        match levels {
            FlipLevels::Narrow(levels) => self.run(base as i64, at, levels, before, wanted),
            FlipLevels::Wide(levels) => self.run(base as i64, at, levels, before, wanted),
        }
    }
}

/// Changes handed on at a time between looks for settled annotations.
const RUN: usize = 1024;

impl Streamed<'_, '_> {
    /// A run of flips (see [`latscope_importers::sigrok::LogicVisitor::flips`]), handed to the
    /// decoders [`RUN`] at a time.
    fn run<W: Copy + Into<u64>>(
        &mut self,
        base: i64,
        at: &[u32],
        levels: &[W],
        before: u64,
        wanted: u64,
    ) -> std::result::Result<(), latscope_importers::ParseFailure> {
        count_flips(&mut self.changes, levels, before, wanted);
        let mut before = before;
        for (at, levels) in at.chunks(RUN).zip(levels.chunks(RUN)) {
            self.decoders.iter_mut().for_each(|d| d.changes(base, at, levels, before, wanted));
            before = levels.last().map_or(before, |&w| w.into());
            self.take_settled()?;
        }
        Ok(())
    }

    /// Hands on the streaming decoder's settled annotations once it holds a batch of them.
    fn take_settled(&mut self) -> std::result::Result<(), latscope_importers::ParseFailure> {
        // Asked once it holds a whole batch, which then changes hands without a copy (the
        // empty batch becomes the decoder's list); tried again only once 1,024 more are held:
        // a decoder that keeps its annotations (SD: 20 M changes a capture) is asked rarely.
        if self.streaming && self.decoders[0].held() >= self.next_try {
            self.decoders[0].take_settled(&mut self.batch);
            self.next_try = (self.decoders[0].held() + 1024).max(BATCH);
            if self.batch.len() >= BATCH {
                self.flush();
                if self.stopped {
                    // Stops the read; the error is returned instead.
                    return Err(latscope_importers::ParseFailure::Cancelled);
                }
            }
        }
        Ok(())
    }
}

/// Adds to `counts[b]` the flips of each channel `b` of `wanted` in a run of levels that
/// follows `before`.
fn count_flips<W: Copy + Into<u64>>(counts: &mut [u64; 64], levels: &[W], before: u64, wanted: u64) {
    let mut bits = wanted;
    while bits != 0 {
        let b = bits.trailing_zeros();
        let mut last = (before >> b) & 1;
        let mut n = 0;
        for &w in levels {
            let level = (w.into() >> b) & 1;
            n += level ^ last;
            last = level;
        }
        counts[b as usize] += n;
        bits &= bits - 1;
    }
}

/// A capture decoded straight from its file.
#[derive(Debug)]
pub struct FileDecode {
    /// The capture's name, path and warnings, without tracks.
    pub source: Source,
    pub decoded: Decoded,
    /// Every logic channel; `changes` is counted for the channels the specs read (only
    /// their flips are looked at; the others show 0).
    pub channels: Vec<ChannelName>,
}

/// Adds `decoded` (made by `specs`) to `source` as span tracks and events, and records the
/// specs in its metadata.
pub fn attach(source: &mut Source, decoded: &Decoded, specs: &[String]) -> Result<()> {
    decoded.attach(source).map_err(|e| EngineError::Attach { name: source.name.clone(), error: e })?;
    source.metadata.extend(specs.iter().map(|s| (DECODER_KEY.to_owned(), s.clone())));
    Ok(())
}

/// Decodes each of `specs` on `source`, one result per spec; a spec the source was already
/// decoded with is refused.
pub fn decode_each(registry: &Registry, source: &Source, specs: &[String]) -> Result<Vec<Decoded>> {
    let already = specs_of(source);
    if let Some(spec) = specs.iter().find(|s| already.contains(s)) {
        return Err(EngineError::AlreadyDecoded { spec: spec.clone(), name: source.name.clone() });
    }
    specs.iter().map(|spec| decode(registry, source, spec)).collect()
}

/// Several decodes as one, annotations sorted by start.
pub fn merged(parts: Vec<Decoded>) -> Decoded {
    Decoded::merged(parts)
}

/// Decodes `specs` on `source` and adds the result to it.
pub fn decode_into(registry: &Registry, source: &mut Source, specs: &[String]) -> Result<()> {
    if specs.is_empty() {
        return Ok(());
    }
    let decoded = merged(decode_each(registry, source, specs)?);
    attach(source, &decoded, specs)
}

/// The inputs, given by their channels and names, that decoder stack `spec` applies to (a
/// kernel trace beside a logic capture has no channels). An input that lacks a channel the
/// spec names is passed over while there are several; any other problem (an ambiguous
/// channel, a bad option) is an error naming the input. When no input applies, the error is
/// the first input's, which lists its channels.
pub fn applies_to(
    registry: &Registry,
    spec: &str,
    inputs: &[(&str, Vec<ChannelName>)],
) -> Result<Vec<usize>> {
    let mut on = Vec::new();
    let mut first_lack = None;
    for (i, (name, channels)) in inputs.iter().enumerate() {
        match check(registry, spec, channels) {
            Ok(()) => on.push(i),
            Err(EngineError::Decoder { error: e @ DecodeError::UnknownChannel { .. }, .. })
                if inputs.len() > 1 =>
            {
                first_lack.get_or_insert(e);
            }
            Err(EngineError::Decoder { spec, error }) => {
                return Err(EngineError::DecoderOnInput { spec, input: i, name: (*name).to_owned(), error });
            }
            Err(e) => return Err(e),
        }
    }
    match first_lack {
        Some(error) if on.is_empty() => Err(EngineError::NoInputHasChannels { spec: spec.to_owned(), error }),
        _ => Ok(on),
    }
}

/// Decodes each spec on every input it applies to ([`applies_to`]) and adds the results to
/// them. Returns, per spec, the inputs it ran on.
pub fn decode_where_present(
    registry: &Registry,
    sources: &mut [Source],
    specs: &[String],
) -> Result<Vec<Vec<usize>>> {
    let inputs: Vec<(&str, Vec<ChannelName>)> =
        sources.iter().map(|s| (s.name.as_str(), crate::channels::channels_of(s))).collect();
    let ran_on = specs.iter().map(|spec| applies_to(registry, spec, &inputs)).collect::<Result<Vec<_>>>()?;
    for (i, source) in sources.iter_mut().enumerate() {
        let mine: Vec<String> =
            specs.iter().zip(&ran_on).filter(|(_, on)| on.contains(&i)).map(|(s, _)| s.clone()).collect();
        decode_into(registry, source, &mine)?;
    }
    Ok(ran_on)
}

/// Whether decoder stack `spec` would run on a source with `channels`, without decoding: a
/// native stack runs on silent channels of the same names, which checks the grammar, every
/// channel name (by the one resolver) and every option at no cost. A decoder found at run
/// time is checked only for its grammar.
pub fn check(registry: &Registry, spec: &str, channels: &[ChannelName]) -> Result<()> {
    let stages = latscope_decoders::spec::parse(spec)
        .map_err(|e| EngineError::Decoder { spec: spec.to_owned(), error: DecodeError::Spec(e) })?;
    if stages
        .first()
        .and_then(|s| registry.decoder(&s.name))
        .is_some_and(|d| !matches!(d.runner, crate::registry::DecoderRunner::Native))
    {
        return Ok(());
    }
    let mut stub = Source::new("check", "check", latscope_model::SourceKind::File);
    for c in channels {
        if c.analog {
            stub.analog.push(latscope_model::AnalogTrack::new(c.name.clone(), "", 0, 1.0, Vec::new()));
        } else {
            stub.digital.push(latscope_model::DigitalTrack::new(c.name.clone(), 0));
        }
    }
    registry.decode(spec, &Inputs::of_source(&stub, Some(1_000_000)), None).map(|_| ())
}

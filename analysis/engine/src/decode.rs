//! Running decoder stacks: on a loaded source (its digital and analog tracks), straight on a
//! `.sr` file's samples (no model built), or on every input of several that has the channels;
//! and adding what they decoded to a source as span tracks and events, recording the specs
//! in its metadata (`decoder`), which is how a session saves them and a second decode of the
//! same spec is refused.

use crate::channels::ChannelName;
use crate::error::{EngineError, Result};
use crate::registry::Registry;
use latscope_decoders::{DecodeError, Decoded, Inputs, Line};
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
    let mut all = Decoded::default();
    for spec in specs {
        let d = registry.decode(spec, inputs, source)?;
        merge(&mut all, d);
    }
    // One spec's annotations come sorted from the decoder.
    if specs.len() > 1 {
        latscope_decoders::sort_by_start(&mut all.annotations);
    }
    Ok(all)
}

/// Adds `d`'s annotations and error counts to `all`.
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

/// Runs every spec on `source`; one result with all annotations, sorted by start.
pub fn decode_all(registry: &Registry, source: &Source, specs: &[String]) -> Result<Decoded> {
    decode_inputs(registry, &Inputs::of_source(source, sample_rate(source)), Some(source), specs)
}

/// Decodes a `.sr` capture straight from its samples when it can: its logic channels are
/// read as the sample numbers where they flip, which is the decoders' tick grid, so no edge
/// is turned into a time and back and no edge track of the model is built (on a 10M-sample
/// SPI capture that was most of the work). `None` when the file is not a `.sr` with a
/// sample rate and logic channels only, or a spec names a decoder found at run time: an
/// analog channel is read through a threshold, which needs the full load. The source
/// returned carries the capture's name and warnings, and no tracks: its channels come
/// beside it.
pub fn decode_file(registry: &Registry, path: &Path, specs: &[String]) -> Result<Option<FileDecode>> {
    let native = specs.iter().all(|s| {
        latscope_decoders::spec::parse(s).ok().and_then(|stages| stages.into_iter().next()).is_none_or(|st| {
            registry
                .decoder(&st.name)
                .is_none_or(|d| matches!(d.runner, crate::registry::DecoderRunner::Native))
        })
    });
    if !native {
        return Ok(None);
    }
    let input = latscope_importers::Input::open(path)?;
    let data = input.bytes();
    if latscope_importers::detect(data) != Some(latscope_importers::Format::SigrokSr) {
        return Ok(None);
    }
    let ticks = latscope_importers::sigrok::parse_logic_ticks(data, &LoadControl::new())
        .map_err(|f| EngineError::Import(f.at_path(path)))?;
    let (Some(rate), true) = (ticks.samplerate, ticks.analog.is_empty()) else { return Ok(None) };
    let end = i64::try_from(ticks.samples.saturating_sub(1)).unwrap_or(i64::MAX);
    let channels = ticks
        .channels
        .iter()
        .map(|c| ChannelName { name: c.name.clone(), analog: false, changes: c.ticks.len() as u64 })
        .collect();
    let lines: Vec<Line> =
        ticks.channels.into_iter().map(|c| Line::from_ticks(&c.name, c.initial, c.ticks, end)).collect();
    let decoded = decode_inputs(registry, &Inputs::of_lines(&lines, rate), None, specs)?;
    let name =
        path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
    let mut source = Source::new(&name, "sigrok-sr", latscope_model::SourceKind::File);
    source.path = Some(path.to_owned());
    for w in ticks.warnings {
        source.diagnostics.warn(w);
    }
    // The command ends after this: the edges need not be freed one vector at a time.
    std::mem::forget(lines);
    Ok(Some(FileDecode { source, decoded, channels }))
}

/// A capture decoded straight from its file.
#[derive(Debug)]
pub struct FileDecode {
    /// The capture's name, path and warnings, without tracks.
    pub source: Source,
    pub decoded: Decoded,
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
    let several = parts.len() > 1;
    let mut all = Decoded::default();
    for d in parts {
        merge(&mut all, d);
    }
    if several {
        latscope_decoders::sort_by_start(&mut all.annotations);
    }
    all
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

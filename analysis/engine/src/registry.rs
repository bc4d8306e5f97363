//! What a user can ask for by name, in one typed table per concept: presets (the analysis
//! crate's, and those a decoder's events serve, such as `sd-cmd-resp`), decoders (the native
//! ones from [`latscope_decoders::registry`], and decoders discovered at run time), and the
//! kernel events presets read ([`latscope_model::kernel::EVENTS`]). The command line, the
//! workbench's menus, rule box and decoder dialog, and the "what to record" hints all read
//! the same [`Registry`], so no front end knows a name another does not.

use crate::error::{EngineError, Result};
use latscope_analysis::runner::{self, Scope};
use latscope_analysis::spec::{self, Spec};
use latscope_decoders::registry::{Descriptor, NATIVE};
use latscope_decoders::{DecodeError, Decoded, Inputs};
use latscope_model::{Placed, Source};
use std::fmt;
use std::sync::Arc;

/// A preset: a name that stands for an analysis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PresetInfo {
    /// The name as typed; `pulse:CH` is a pattern with a placeholder.
    pub name: String,
    pub description: String,
    pub origin: PresetOrigin,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PresetOrigin {
    /// Built into the rule grammar (`block`, `chain:irq=5`): see
    /// [`latscope_analysis::spec::preset_spec`].
    Analysis,
    /// A rule spec over the events decoder `decoder` adds.
    Decoder { decoder: String, rule: String },
}

/// A channel a decoder reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelRole {
    pub key: String,
    pub required: bool,
    /// Names a channel usually goes by for this role, most specific first.
    pub aliases: Vec<String>,
}

/// An option a decoder takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecoderOption {
    pub key: String,
    /// Alternatives `a|b`, a range `5..9`, or a placeholder in capitals.
    pub accepts: String,
    pub default: String,
}

/// A decoder found at run time (sigrok's, through sigrok-cli): it decodes a whole spec whose
/// first stage names it.
pub trait ExternalDecoder: fmt::Debug + Send + Sync {
    fn decode(&self, spec: &str, source: &Source) -> Result<Decoded>;
}

#[derive(Debug, Clone)]
pub enum DecoderRunner {
    /// `latscope_decoders::decode`.
    Native,
    External(Arc<dyn ExternalDecoder>),
}

/// A decoder: what it reads and takes, and how it runs.
#[derive(Debug, Clone)]
pub struct DecoderInfo {
    /// The name a spec stage uses.
    pub name: String,
    /// What a menu shows.
    pub label: String,
    pub channels: Vec<ChannelRole>,
    pub options: Vec<DecoderOption>,
    /// The decoder whose output this one reads (`sd-spi` on `spi`).
    pub stacks_on: Option<String>,
    /// What the channel list cannot say (`tx=CH or rx=CH`).
    pub needs: Option<String>,
    /// `NAME:KEY=…` as help prints it.
    pub syntax: String,
    pub runner: DecoderRunner,
}

impl DecoderInfo {
    /// The options as `key=ACCEPTS,…`, the hint of an options field.
    pub fn options_hint(&self) -> String {
        self.options.iter().map(|o| format!("{}={}", o.key, o.accepts)).collect::<Vec<_>>().join(",")
    }
}

impl From<&'static Descriptor> for DecoderInfo {
    fn from(d: &'static Descriptor) -> Self {
        DecoderInfo {
            name: d.name.to_owned(),
            label: d.label.to_owned(),
            channels: d
                .channels
                .iter()
                .map(|c| ChannelRole {
                    key: c.key.to_owned(),
                    required: c.required,
                    aliases: c.aliases.iter().map(|a| (*a).to_owned()).collect(),
                })
                .collect(),
            options: d
                .options
                .iter()
                .map(|o| DecoderOption {
                    key: o.key.to_owned(),
                    accepts: o.accepts.to_owned(),
                    default: o.default.to_owned(),
                })
                .collect(),
            stacks_on: d.stacks_on.map(str::to_owned),
            needs: d.needs.map(str::to_owned),
            syntax: d.syntax(),
            runner: DecoderRunner::Native,
        }
    }
}

/// Presets and decoders by name.
#[derive(Debug, Clone)]
pub struct Registry {
    presets: Vec<PresetInfo>,
    decoders: Vec<DecoderInfo>,
}

impl Default for Registry {
    fn default() -> Self {
        Self::native()
    }
}

/// The presets that ran by default, their outcomes, and what the others lack.
pub type DefaultPresets = runner::DefaultPresets;

impl Registry {
    /// Everything built in: the analysis presets, the native decoders and their presets.
    pub fn native() -> Self {
        let mut r = Registry { presets: Vec::new(), decoders: Vec::new() };
        r.presets.extend(spec::PRESETS.iter().map(|(name, description)| PresetInfo {
            name: (*name).to_owned(),
            description: (*description).to_owned(),
            origin: PresetOrigin::Analysis,
        }));
        for d in NATIVE {
            r.add_decoder(DecoderInfo::from(d), d.presets.iter().map(|p| (p.name, p.description, p.rule)));
        }
        // `sigrok:ID` stacks: found on the PATH when one runs, not when the registry is made.
        r.add_decoder(crate::sigrok::info(), []);
        r
    }

    /// Adds a decoder found at run time, with the presets its events serve (name,
    /// description, rule spec). A later decoder of the same name replaces the earlier one.
    pub fn add_decoder<'a>(
        &mut self,
        info: DecoderInfo,
        presets: impl IntoIterator<Item = (&'a str, &'a str, &'a str)>,
    ) {
        self.decoders.retain(|d| d.name != info.name);
        for (name, description, rule) in presets {
            self.presets.retain(|p| p.name != name);
            self.presets.push(PresetInfo {
                name: name.to_owned(),
                description: description.to_owned(),
                origin: PresetOrigin::Decoder { decoder: info.name.clone(), rule: rule.to_owned() },
            });
        }
        self.decoders.push(info);
    }

    /// Adds every decoder sigrok-cli knows as `sigrok:ID` ([`crate::sigrok::catalogue`]):
    /// what the add-decoder dialog lists beside the native ones. How many were added.
    pub fn add_sigrok_decoders(&mut self, decoders: Vec<DecoderInfo>) -> usize {
        let n = decoders.len();
        for d in decoders {
            self.add_decoder(d, []);
        }
        n
    }

    pub fn presets(&self) -> &[PresetInfo] {
        &self.presets
    }

    pub fn decoders(&self) -> &[DecoderInfo] {
        &self.decoders
    }

    pub fn decoder(&self, name: &str) -> Option<&DecoderInfo> {
        self.decoders.iter().find(|d| d.name == name)
    }

    /// Whether the analysis `text` (a preset name or a rule) reads what the decoder stacks
    /// `decoders` add rather than a kernel trace: a decoder's preset (`sd-cmd-resp`), or a
    /// rule whose every event is one of theirs ([`Self::decoded_events`]). A recording beside
    /// the kernel runs it over the logic analyzer's decode.
    pub fn reads_decoded(&self, text: &str, decoders: &[String]) -> bool {
        if decoders.is_empty() {
            return false;
        }
        if let Some(p) = self.presets.iter().find(|p| p.name == text) {
            return matches!(p.origin, PresetOrigin::Decoder { .. });
        }
        let decoded = self.decoded_events(decoders);
        self.rule(text).ok().and_then(|spec| {
            spec.named_tracks().map(|t| !t.is_empty() && t.iter().all(|n| decoded.iter().any(|e| e == n)))
        }) == Some(true)
    }

    /// The presets of the decoders `decoders` name (`sd-cmd-resp` for `sd:…`).
    pub fn decoder_presets(&self, decoders: &[String]) -> Vec<&str> {
        let stages: Vec<String> = decoders
            .iter()
            .flat_map(|d| latscope_decoders::spec::parse(d).unwrap_or_default())
            .map(|s| s.name)
            .collect();
        self.presets
            .iter()
            .filter_map(|p| match &p.origin {
                PresetOrigin::Decoder { decoder, .. } if stages.contains(decoder) => Some(p.name.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The events the native decoder stacks `specs` add (each row's start and `_end`
    /// events), known before any decode; a spec that does not parse, or a stage found at
    /// run time (sigrok's), adds none here.
    pub fn decoded_events(&self, specs: &[String]) -> Vec<String> {
        latscope_decoders::registry::events_of_stacks(specs)
    }

    /// Every preset name, comma-separated, for errors.
    pub fn preset_names(&self) -> String {
        self.presets.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(", ")
    }

    fn decoder_preset(&self, name: &str) -> Option<(&PresetInfo, &str)> {
        self.presets.iter().find_map(|p| match &p.origin {
            PresetOrigin::Decoder { rule, .. } if p.name == name => Some((p, rule.as_str())),
            _ => None,
        })
    }

    /// The spec of preset `name` (`--preset`): a decoder's preset, or an analysis preset
    /// with its options (`chain:irq=5`).
    pub fn preset(&self, name: &str) -> Result<Spec> {
        let name = name.trim();
        if let Some((_, rule)) = self.decoder_preset(name) {
            return spec::parse_spec(rule).map_err(|error| EngineError::Preset {
                name: name.to_owned(),
                known: self.preset_names(),
                error,
            });
        }
        let base = name.split(':').next().unwrap_or(name);
        if !self.presets.iter().any(|p| p.name.split(':').next() == Some(base)) {
            return Err(EngineError::UnknownPreset { name: name.to_owned(), known: self.preset_names() });
        }
        spec::preset_spec(name).map_err(|error| EngineError::Preset {
            name: name.to_owned(),
            known: self.preset_names(),
            error,
        })
    }

    /// A rule spec or a preset name, as typed in `--rule` or the workbench's rule box.
    pub fn rule(&self, text: &str) -> Result<Spec> {
        let text = text.trim();
        if self.decoder_preset(text).is_some() {
            return self.preset(text);
        }
        spec::parse_spec(text).map_err(|error| EngineError::Rule { text: text.to_owned(), error })
    }

    /// What preset `name` (with its options) needs that none of `sources` has, and how to
    /// get it: the events to record for a kernel preset, the decoder to run for a decoder's.
    /// `None` when nothing is missing or `name` is not a preset.
    pub fn missing_events(&self, name: &str, sources: &[&Source]) -> Option<String> {
        let Some((preset, rule)) = self.decoder_preset(name) else {
            return latscope_analysis::presets::missing_events(name, sources);
        };
        let PresetOrigin::Decoder { decoder, .. } = &preset.origin else { return None };
        let spec = spec::parse_spec(rule).ok()?;
        let events = spec.named_tracks()?;
        let present =
            |e: &str| sources.iter().any(|s| latscope_analysis::endpoint::Endpoint::event(e).present_in(s));
        let missing: Vec<&str> = events.iter().copied().filter(|e| !present(e)).collect();
        if missing.is_empty() {
            return None;
        }
        let syntax = self.decoder(decoder).map_or_else(|| decoder.clone(), |d| d.syntax.clone());
        Some(format!(
            "{name} needs {}, which the {decoder} decoder adds: decode the bus first (--decoder {syntax})",
            events.join(" and ")
        ))
    }

    /// Every preset that finds something in `sources` (a pair, or an unmatched start or
    /// end), as `latscope report` runs them without `--preset` and the workbench when files
    /// open, and what the others lack. A decoder's preset runs where its events are, and is
    /// listed as missing only where some of them are.
    pub fn default_presets(&self, sources: &[Placed<'_>], scope: Scope) -> DefaultPresets {
        let mut out = runner::default_presets(sources, scope);
        let plain: Vec<&Source> = sources.iter().map(|p| p.source).collect();
        for p in &self.presets {
            let PresetOrigin::Decoder { rule, .. } = &p.origin else { continue };
            let Ok(spec) = spec::parse_spec(rule) else { continue };
            let found = runner::run(&spec, sources, scope).map(|r| r.outcomes).unwrap_or_default();
            if found.iter().any(|o| !o.samples.is_empty() || o.unmatched_start + o.unmatched_end > 0) {
                out.names.push(p.name.clone());
                out.outcomes.extend(found);
            } else if let Some(hint) = self.missing_events(&p.name, &plain) {
                let events = spec.named_tracks().unwrap_or_default();
                let some_present = events.iter().any(|e| {
                    plain.iter().any(|s| latscope_analysis::endpoint::Endpoint::event(*e).present_in(s))
                });
                if some_present {
                    out.missing.push(hint);
                }
            }
        }
        out
    }

    /// Runs decoder stack `spec` on `inputs` (native decoders) or on `source` (a decoder
    /// found at run time).
    pub fn decode(&self, spec: &str, inputs: &Inputs<'_>, source: Option<&Source>) -> Result<Decoded> {
        let stages = latscope_decoders::spec::parse(spec)
            .map_err(|e| EngineError::Decoder { spec: spec.to_owned(), error: DecodeError::Spec(e) })?;
        crate::sigrok::check_not_mixed(spec, &stages)?;
        let first = stages.into_iter().next().map(|s| s.name);
        if let Some(DecoderInfo { runner: DecoderRunner::External(ext), .. }) =
            first.as_deref().and_then(|n| self.decoder(n))
        {
            return match source {
                Some(src) => ext.decode(spec, src),
                None => Err(EngineError::Usage(format!("decoder {spec:?} needs the capture, not its lines"))),
            };
        }
        latscope_decoders::decode(spec, inputs)
            .map_err(|error| EngineError::Decoder { spec: spec.to_owned(), error })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_of_every_kind_resolves_by_name_and_as_a_rule() {
        let r = Registry::native();
        for p in r.presets() {
            if p.name.contains("CH") {
                continue;
            }
            let spec = r.preset(&p.name).unwrap_or_else(|e| panic!("{}: {e}", p.name));
            assert_eq!(spec.name(), p.name, "the spec is named by its preset");
            assert!(r.rule(&p.name).is_ok(), "{} typed as a rule", p.name);
        }
        assert!(r.preset("sd-cmd-resp").is_ok());
        let Err(EngineError::UnknownPreset { known, .. }) = r.preset("nope") else { panic!() };
        assert!(known.contains("sd-read-last") && known.contains("chain"), "{known}");
        assert!(r.preset("chain:irq=5").is_ok(), "an analysis preset takes its options");
    }

    #[test]
    fn the_events_a_native_stack_adds_are_known_before_it_decodes() {
        let r = Registry::native();
        let sd = r.decoded_events(&["sd:clk=CLK,cmd=CMD".into()]);
        for e in ["sd_cmd", "sd_cmd_end", "sd_resp", "sd_resp_end", "sd_warnings"] {
            assert!(sd.iter().any(|x| x == e), "{e} in {sd:?}");
        }
        // A stacked decoder adds its own; one found at run time adds none here.
        let stacked = r.decoded_events(&["spi:clk=C,mosi=M,miso=I,cs=S | sd-spi".into()]);
        assert!(
            stacked.iter().any(|x| x == "spi_mosi") && stacked.iter().any(|x| x == "sd_spi_cmd"),
            "{stacked:?}"
        );
        assert!(r.decoded_events(&["sigrok:can:can_rx=RX".into()]).is_empty());
    }

    #[test]
    fn an_analysis_reads_the_decoded_logic_when_its_events_are_the_decoders() {
        let r = Registry::native();
        let sd = ["sd:clk=CLK,cmd=CMD".to_owned()];
        assert!(r.reads_decoded("sd-cmd-resp", &sd));
        assert!(r.reads_decoded("cr=sd_cmd -> sd_resp by seq", &sd));
        // A kernel preset, a rule over kernel events, a mixed rule, or no decoders: the kernel.
        assert!(!r.reads_decoded("block", &sd));
        assert!(!r.reads_decoded("x=block_rq_issue -> block_rq_complete", &sd));
        assert!(!r.reads_decoded("m=print -> sd_resp", &sd));
        assert!(!r.reads_decoded("sd-cmd-resp", &[]));
        assert_eq!(r.decoder_presets(&sd), ["sd-cmd-resp", "sd-read", "sd-read-last", "sd-write-busy"]);
        assert!(r.decoder_presets(&["spi:clk=C,mosi=M".to_owned()]).is_empty());
    }

    #[test]
    fn a_decoder_found_at_run_time_brings_its_presets() {
        #[derive(Debug)]
        struct Fake;
        impl ExternalDecoder for Fake {
            fn decode(&self, _: &str, _: &Source) -> Result<Decoded> {
                Ok(Decoded::default())
            }
        }
        let mut r = Registry::native();
        let info = DecoderInfo {
            name: "fake".into(),
            label: "Fake".into(),
            channels: Vec::new(),
            options: Vec::new(),
            stacks_on: None,
            needs: None,
            syntax: "fake".into(),
            runner: DecoderRunner::External(Arc::new(Fake)),
        };
        r.add_decoder(info, [("fake-pair", "a to b", "fake-pair=fake_a -> fake_b")]);
        assert!(r.decoder("fake").is_some());
        assert_eq!(r.preset("fake-pair").map(|s| s.name().to_owned()).ok().as_deref(), Some("fake-pair"));
        let src = Source::new("s", "t", latscope_model::SourceKind::File);
        let hint = r.missing_events("fake-pair", &[&src]).unwrap_or_default();
        assert!(hint.contains("fake_a and fake_b") && hint.contains("fake decoder"), "{hint}");
        let inputs = Inputs::of_source(&src, None);
        assert!(r.decode("fake", &inputs, Some(&src)).is_ok());
    }
}

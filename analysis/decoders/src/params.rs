//! A stage's `key=value` list as a decoder reads it: channels resolved to the bits a
//! decoder reads them at ([`Channels`]), options parsed, and any key the decoder did not ask
//! for reported with its column. The keys are the decoder's entry in [`crate::registry`], so
//! help, hints and errors list the same.

use crate::DecodeError;
use crate::registry::Descriptor;
use crate::spec::{Param, Stage};

/// The channels a decoder stack may name, and the bit of the level words each is read at.
pub(crate) trait Channels {
    /// Every channel's name, for messages.
    fn names(&self) -> Vec<String>;
    /// The bit of the channel `name` (typed at `column`) in the level words fed to the stack.
    fn bit(&mut self, name: &str, column: usize) -> Result<u32, DecodeError>;
}

#[derive(Debug)]
pub(crate) struct Params<'s> {
    decoder: &'static str,
    descriptor: &'static Descriptor,
    params: Vec<(&'s Param, bool)>,
}

impl<'s> Params<'s> {
    pub fn new(descriptor: &'static Descriptor, stage: &'s Stage) -> Self {
        Params {
            decoder: descriptor.name,
            descriptor,
            params: stage.params.iter().map(|p| (p, false)).collect(),
        }
    }

    fn take(&mut self, key: &'static str) -> Option<&'s Param> {
        debug_assert!(
            self.descriptor.keys().any(|k| k == key),
            "{}: `{key}` is not in the registry",
            self.decoder
        );
        let (p, used) = self.params.iter_mut().find(|(p, _)| p.key == key)?;
        *used = true;
        Some(*p)
    }

    /// An optional channel: its bit.
    pub fn channel(
        &mut self,
        key: &'static str,
        channels: &mut dyn Channels,
    ) -> Result<Option<u32>, DecodeError> {
        match self.take(key) {
            None => Ok(None),
            Some(p) => channels.bit(&p.value, p.value_column).map(Some),
        }
    }

    /// A channel the decoder cannot run without.
    pub fn required(&mut self, key: &'static str, channels: &mut dyn Channels) -> Result<u32, DecodeError> {
        self.channel(key, channels)?.ok_or_else(|| DecodeError::Config {
            decoder: self.decoder.into(),
            message: format!("needs `{key}=CHANNEL`; channels: {}", channels.names().join(", ")),
        })
    }

    /// An option parsed by `parse`, which names what it accepts on failure.
    pub fn option<T>(
        &mut self,
        key: &'static str,
        default: T,
        parse: impl Fn(&str) -> Result<T, String>,
    ) -> Result<T, DecodeError> {
        match self.take(key) {
            None => Ok(default),
            Some(p) => parse(&p.value).map_err(|accepted| DecodeError::Option {
                column: p.value_column,
                message: format!("{}: `{}={}`: {accepted}", self.decoder, p.key, p.value),
            }),
        }
    }

    /// Errors on a key no `channel`/`option` call asked for.
    pub fn finish(self) -> Result<(), DecodeError> {
        match self.params.iter().find(|(_, used)| !used) {
            None => Ok(()),
            Some((p, _)) => Err(DecodeError::Option {
                column: p.key_column,
                message: format!(
                    "{}: unknown key `{}`; keys: {}",
                    self.decoder,
                    p.key,
                    self.descriptor.keys().collect::<Vec<_>>().join(", ")
                ),
            }),
        }
    }
}

/// `0`/`1` (also `no`/`yes`, `false`/`true`).
pub(crate) fn flag(s: &str) -> Result<bool, String> {
    match s {
        "0" | "no" | "false" => Ok(false),
        "1" | "yes" | "true" => Ok(true),
        _ => Err("expected 0 or 1".into()),
    }
}

/// A whole number in `lo..=hi`.
pub(crate) fn number(lo: u64, hi: u64) -> impl Fn(&str) -> Result<u64, String> {
    move |s| match s.parse::<u64>() {
        Ok(n) if (lo..=hi).contains(&n) => Ok(n),
        _ => Err(format!("expected a whole number from {lo} to {hi}")),
    }
}

//! A stage's `key=value` list as a decoder reads it: channels resolved against the inputs,
//! options parsed, and any key the decoder did not ask for reported with its column. The keys
//! are the decoder's entry in [`crate::registry`], so help, hints and errors list the same.

use crate::registry::Descriptor;
use crate::spec::{Param, Stage};
use crate::{DecodeError, Inputs, Line};
use std::borrow::Cow;

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

    /// An optional channel.
    pub fn channel<'a>(
        &mut self,
        key: &'static str,
        inputs: &Inputs<'a>,
    ) -> Result<Option<Cow<'a, Line>>, DecodeError> {
        match self.take(key) {
            None => Ok(None),
            Some(p) => inputs.resolve(&p.value, p.value_column).map(Some),
        }
    }

    /// A channel the decoder cannot run without.
    pub fn required<'a>(
        &mut self,
        key: &'static str,
        inputs: &Inputs<'a>,
    ) -> Result<Cow<'a, Line>, DecodeError> {
        self.channel(key, inputs)?.ok_or_else(|| DecodeError::Config {
            decoder: self.decoder.into(),
            message: format!(
                "needs `{key}=CHANNEL`; channels: {}",
                inputs.channels.iter().map(|c| c.name()).collect::<Vec<_>>().join(", ")
            ),
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

//! Which track a name means, by one rule everywhere (rules, `--align`, decoder specs, the
//! workbench's dialogs): the exact name, else the one name that ends with it after a
//! separator, and an error listing the candidates when several do
//! ([`latscope_model::resolve_name`]). Built on it: the guess of a decoder's channel from the
//! names it usually goes by, and the checks a front end shows before decoding — a channel
//! that is ambiguous, or one that never toggles.

use crate::registry::{ChannelRole, DecoderInfo, Registry};
use latscope_model::{NameError, Source, resolve_name};

/// A channel of a source as decoders read it: digital, or analog through a threshold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelName {
    pub name: String,
    pub analog: bool,
    /// Level changes (digital); for analog, the samples, or 0 when every sample is equal.
    pub changes: u64,
}

/// The channels of `source`: digital tracks, then analog ones.
pub fn channels_of(source: &Source) -> Vec<ChannelName> {
    let digital = source.digital.iter().map(|d| ChannelName {
        name: d.name.clone(),
        analog: false,
        changes: d.transitions() as u64,
    });
    let analog = source.analog.iter().map(|a| {
        let flat = a.min_max(0, a.samples.len()).is_none_or(|(lo, hi)| lo == hi);
        ChannelName {
            name: a.name.clone(),
            analog: true,
            changes: if flat { 0 } else { a.samples.len() as u64 },
        }
    });
    digital.chain(analog).collect()
}

/// What the guess of a role found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Guess {
    /// One channel fits.
    One(String),
    /// Several fit the first alias that fits at all: the user must choose.
    Ambiguous {
        alias: String,
        candidates: Vec<String>,
    },
    None,
}

/// The channel of `names` that `role` most likely is: for each of its aliases in turn, the
/// channel the alias resolves to (without case), skipping channels already `taken`. An alias
/// several channels answer to stops the guess: it is ambiguous, as it would be typed.
pub fn guess(role: &ChannelRole, names: &[&str], taken: &[String]) -> Guess {
    let free: Vec<&str> = names.iter().copied().filter(|n| !taken.iter().any(|t| t == n)).collect();
    let upper: Vec<String> = free.iter().map(|n| n.to_ascii_uppercase()).collect();
    for alias in &role.aliases {
        match resolve_name(upper.iter().map(String::as_str), &alias.to_ascii_uppercase(), "channel") {
            Ok(i) => return Guess::One(free[i].to_owned()),
            Err(NameError::Ambiguous { candidates, .. }) => {
                // The candidates in their own case.
                let candidates = free
                    .iter()
                    .zip(&upper)
                    .filter(|(_, u)| candidates.contains(u))
                    .map(|(n, _)| (*n).to_owned())
                    .collect();
                return Guess::Ambiguous { alias: alias.clone(), candidates };
            }
            Err(NameError::Unknown { .. }) => {}
        }
    }
    Guess::None
}

/// Something about a decoder's channels worth saying before it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChannelNote {
    /// The role's name fits several channels.
    Ambiguous { role: String, name: String, candidates: Vec<String> },
    /// These channels (role, channel) have no edge: the decoder finds nothing on them.
    NeverToggles(Vec<(String, String)>),
}

impl std::fmt::Display for ChannelNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChannelNote::Ambiguous { role, name, candidates } => {
                write!(f, "{role}: `{name}` is ambiguous: it could be {}", candidates.join(", "))
            }
            ChannelNote::NeverToggles(silent) => {
                let list: Vec<String> =
                    silent.iter().map(|(role, channel)| format!("{role} `{channel}`")).collect();
                match silent.len() {
                    1 => write!(f, "{} never toggles: nothing will decode on it", list.join(", ")),
                    _ => write!(f, "{} never toggle: nothing will decode on them", list.join(", ")),
                }
            }
        }
    }
}

/// The notes on the channels `assigned` (role, typed name) of `decoder` over `channels`:
/// names that resolve to several channels, and channels that never change.
pub fn notes(
    decoder: &DecoderInfo,
    assigned: &[(String, String)],
    channels: &[ChannelName],
) -> Vec<ChannelNote> {
    let mut out = Vec::new();
    let mut silent = Vec::new();
    for (role, typed) in assigned {
        let typed = typed.trim();
        if typed.is_empty() || !decoder.channels.iter().any(|c| &c.key == role) {
            continue;
        }
        match resolve_name(channels.iter().map(|c| c.name.as_str()), typed, "channel") {
            Ok(i) if channels[i].changes == 0 => silent.push((role.clone(), channels[i].name.clone())),
            Err(NameError::Ambiguous { candidates, .. }) => {
                out.push(ChannelNote::Ambiguous { role: role.clone(), name: typed.to_owned(), candidates });
            }
            _ => {}
        }
    }
    if !silent.is_empty() {
        out.push(ChannelNote::NeverToggles(silent));
    }
    out
}

/// The notes on the channels decoder stack `spec` names, over `channels`: what a front end
/// says before decoding (nothing for a spec that does not parse: decoding says why).
pub fn spec_notes(registry: &Registry, spec: &str, channels: &[ChannelName]) -> Vec<ChannelNote> {
    let Ok(stages) = latscope_decoders::spec::parse(spec) else { return Vec::new() };
    let Some(first) = stages.first() else { return Vec::new() };
    let Some(decoder) = registry.decoder(&first.name) else { return Vec::new() };
    let assigned: Vec<(String, String)> =
        first.params.iter().map(|p| (p.key.clone(), p.value.clone())).collect();
    notes(decoder, &assigned, channels)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn role(aliases: &[&str]) -> ChannelRole {
        ChannelRole {
            key: "cmd".into(),
            required: true,
            aliases: aliases.iter().map(|a| (*a).to_owned()).collect(),
        }
    }

    #[test]
    fn a_guess_is_what_the_name_resolves_to_and_says_when_it_is_ambiguous() {
        let r = role(&["CMD", "SDCMD"]);
        assert_eq!(
            guess(&r, &["litesdcard.CMD", "litesdcard.CLK"], &[]),
            Guess::One("litesdcard.CMD".into())
        );
        assert_eq!(guess(&r, &["sd_cmd", "clk"], &[]), Guess::One("sd_cmd".into()), "without case");
        assert_eq!(
            guess(&r, &["litesdcard.CMD", "sdcard.CMD"], &[]),
            Guess::Ambiguous {
                alias: "CMD".into(),
                candidates: vec!["litesdcard.CMD".into(), "sdcard.CMD".into()]
            }
        );
        assert_eq!(guess(&r, &["CMD", "sdcard.CMD"], &[]), Guess::One("CMD".into()), "the exact name wins");
        assert_eq!(guess(&r, &["DMA", "CLK"], &[]), Guess::None);
        assert_eq!(guess(&r, &["a.CMD", "b.CMD"], &["a.CMD".into()]), Guess::One("b.CMD".into()));
    }
}

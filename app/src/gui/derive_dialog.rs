//! Analog → digital as a user action: the "Derive digital…" dialog of an analog lane (a
//! threshold and hysteresis, by default the automatic one the rule specs use — midway
//! between the 5th and 95th percentile, see `latscope_model::threshold`), and the
//! derivation itself: the worker computes the digital track and its lane only; the
//! workbench adds both to the source in place (see `Prepared::add_digital`).

use super::document::SourceId;
use latscope_model::{DigitalTrack, Source, Threshold};

/// The dialog's state: which analog track, and the threshold being edited.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeriveDialog {
    pub open: bool,
    pub source: Option<SourceId>,
    pub track: usize,
    pub name: String,
    pub unit: String,
    /// Use the automatic threshold (recomputed from the samples by the worker).
    pub auto: bool,
    pub level: f64,
    pub hysteresis: f64,
}

impl DeriveDialog {
    /// Opens the dialog on analog track `track` of `src`, filled with its automatic threshold.
    pub fn open_on(&mut self, src: &Source, source: SourceId, track: usize) {
        let Some(t) = src.analog.get(track) else { return };
        let (level, hysteresis) = Threshold::Auto.resolve(t).unwrap_or((0.0, 0.0));
        *self = Self {
            open: true,
            source: Some(source),
            track,
            name: t.name.clone(),
            unit: t.unit.clone(),
            auto: true,
            level,
            hysteresis,
        };
    }

    pub fn threshold(&self) -> Option<(f64, f64)> {
        (!self.auto).then_some((self.level, self.hysteresis))
    }
}

/// The name of the digital track derived from analog track `name`.
pub fn derived_name(name: &str) -> String {
    format!("{name}_digital")
}

/// Analog track `track` of `src` as a digital track named [`derived_name`] (the source is
/// only read).
pub fn derive_track(
    src: &Source,
    track: usize,
    threshold: Option<(f64, f64)>,
) -> anyhow::Result<DigitalTrack> {
    let analog =
        src.analog.get(track).ok_or_else(|| anyhow::anyhow!("{}: no analog track {track}", src.name))?;
    let threshold = match threshold {
        None => Threshold::Auto,
        Some((level, hysteresis)) if level.is_finite() && hysteresis.is_finite() => {
            Threshold::Fixed { level, hysteresis }
        }
        Some(_) => anyhow::bail!("the threshold and hysteresis must be numbers"),
    };
    let mut digital = analog.to_digital(threshold);
    digital.name = derived_name(&analog.name);
    Ok(digital)
}

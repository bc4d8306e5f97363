//! Alignment: puts a source on the common timeline by choosing its
//! [`Placement`] (`t_common = t + offset + t * drift_ppm / 1e6`), either given by hand or
//! fitted by least squares from matched events — a marker the driver writes and the GPIO
//! edge it toggles. Sources are only read: the result is a placement, kept by the caller
//! beside the source.
//!
//! `--align` grammar (source indices count the inputs from 0; source 0 is the reference
//! whose own offset is kept):
//! ```text
//! N:OFFSET[:DRIFTppm]                  by hand, e.g. 1:+12.5us  or  1:-3ms:+20ppm: moved
//!                                      by OFFSET from where its clock puts it
//!                                      ([`Placement::by_clock`]: by clock value on the
//!                                      reference's kind of clock, else its own origin)
//! N:match REF_ENDPOINT -> ENDPOINT [drift]
//!                                      fitted: REF_ENDPOINT in source 0, ENDPOINT in N
//! ```
//! Matching: with equal occurrence counts the k-th matches the k-th; otherwise, after
//! shifting by the offset of the first occurrences, each occurrence of N matches the
//! nearest reference occurrence (each reference used once). The offset (and with `drift`
//! the drift) minimise the squared residuals.

use crate::endpoint::{PairError, endpoint_times};
use crate::spec::SpecError;
pub use crate::spec::{AlignSpec, parse_align};
use latscope_model::{Placed, Placement, Ps, Source};

/// What an alignment chose for a source.
#[derive(Debug, Clone, PartialEq)]
pub struct Alignment {
    pub source: usize,
    /// The source's placement on the common timeline.
    pub placement: Placement,
    /// Matched event pairs the fit used (0 when given by hand).
    pub matched: usize,
    /// Root mean square of the fit residuals, ps.
    pub residual_rms_ps: f64,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AlignError {
    #[error("--align: {0}")]
    Spec(#[from] SpecError),
    #[error("--align: no source {index} (there are {count})")]
    NoSource { index: usize, count: usize },
    #[error("--align: source 0 is the reference; align another source to it")]
    Reference,
    #[error("--align: {what}: {found} occurrences, need at least {need}")]
    TooFew { what: String, found: usize, need: usize },
    #[error("--align: {0}")]
    Pair(#[from] PairError),
}

/// Pairs reference times with other times (see the module doc): (reference, other).
pub fn match_times(reference: &[Ps], other: &[Ps]) -> Vec<(Ps, Ps)> {
    if reference.len() == other.len() {
        return reference.iter().copied().zip(other.iter().copied()).collect();
    }
    let (Some(&r0), Some(&o0)) = (reference.first(), other.first()) else { return Vec::new() };
    let shift = r0 - o0;
    let mut used = vec![false; reference.len()];
    let mut out = Vec::new();
    for &o in other {
        let t = o + shift;
        let k = reference.partition_point(|&r| r < t);
        let best = [k.checked_sub(1), Some(k)]
            .into_iter()
            .flatten()
            .filter(|&j| j < reference.len() && !used[j])
            .min_by_key(|&j| (reference[j] - t).abs());
        if let Some(j) = best {
            used[j] = true;
            out.push((reference[j], o));
        }
    }
    out
}

/// Least-squares offset (and drift, ppm) mapping `other` onto `reference`:
/// `reference ≈ other + offset + other * drift_ppm / 1e6`. Returns the RMS residual too.
pub fn fit(pairs: &[(Ps, Ps)], drift: bool) -> Option<(Ps, f64, f64)> {
    if pairs.is_empty() || (drift && pairs.len() < 2) {
        return None;
    }
    let n = pairs.len() as f64;
    // Centre x to keep f64 precise with picosecond times.
    let x0 = pairs[0].1;
    let y0 = pairs[0].0 - pairs[0].1;
    let xs: Vec<f64> = pairs.iter().map(|&(_, o)| (o - x0) as f64).collect();
    let ys: Vec<f64> = pairs.iter().map(|&(r, o)| (r - o - y0) as f64).collect();
    let mx = xs.iter().sum::<f64>() / n;
    let my = ys.iter().sum::<f64>() / n;
    let (d, a) = if drift {
        let sxx: f64 = xs.iter().map(|x| (x - mx) * (x - mx)).sum();
        if sxx == 0.0 {
            return None;
        }
        let sxy: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
        let d = sxy / sxx;
        (d, my - d * mx)
    } else {
        (0.0, my)
    };
    // y = a + d * (o - x0) + y0  =>  offset = y0 + a - d * x0.
    let offset = y0 as f64 + a - d * x0 as f64;
    let rss: f64 = xs.iter().zip(&ys).map(|(x, y)| (y - a - d * x).powi(2)).sum();
    Some((offset.round() as Ps, d * 1e6, (rss / n).sqrt()))
}

/// Where source `index` sits by its clock, after the sources before it as they are placed.
fn by_clock(sources: &[&Source], placements: &[Placement], index: usize) -> Placement {
    let earlier: Vec<Placed<'_>> =
        sources.iter().zip(placements).take(index).map(|(s, p)| Placed::new(s, *p)).collect();
    sources.get(index).map_or_else(Placement::default, |s| Placement::by_clock(&earlier, s))
}

/// Applies `spec` to the placements of `sources` (`placements[i]` is source `i`'s; the
/// reference, source 0, keeps its own): sets the aligned source's placement and returns
/// what was chosen. The sources are only read.
pub fn apply_align(
    spec: &AlignSpec,
    sources: &[&Source],
    placements: &mut [Placement],
) -> Result<Alignment, AlignError> {
    let count = sources.len().min(placements.len());
    let index = match spec {
        AlignSpec::Manual { source, .. } | AlignSpec::Match { source, .. } => *source,
    };
    if index >= count {
        return Err(AlignError::NoSource { index, count });
    }
    if index == 0 {
        return Err(AlignError::Reference);
    }
    let a = match spec {
        AlignSpec::Manual { offset, drift_ppm, .. } => Alignment {
            source: index,
            placement: Placement::new(by_clock(sources, placements, index).offset + offset, *drift_ppm),
            matched: 0,
            residual_rms_ps: 0.0,
        },
        AlignSpec::Match { reference, other, drift, .. } => {
            let r: Vec<Ps> = endpoint_times(sources[0], "--align", reference)?
                .into_iter()
                .map(|t| placements[0].to_common(t))
                .collect();
            let o = endpoint_times(sources[index], "--align", other)?;
            let need = if *drift { 2 } else { 1 };
            for (what, list) in [(reference.target(), &r), (other.target(), &o)] {
                if list.len() < need {
                    return Err(AlignError::TooFew { what: what.to_owned(), found: list.len(), need });
                }
            }
            let pairs = match_times(&r, &o);
            let (offset, drift_ppm, rms) = fit(&pairs, *drift).ok_or_else(|| AlignError::TooFew {
                what: "matched pairs with distinct times".into(),
                found: pairs.len(),
                need,
            })?;
            Alignment {
                source: index,
                placement: Placement::new(offset, drift_ppm),
                matched: pairs.len(),
                residual_rms_ps: rms,
            }
        }
    };
    placements[index] = a.placement;
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_manual_and_match_forms() {
        assert_eq!(
            parse_align("1:+12.5us"),
            Ok(AlignSpec::Manual { source: 1, offset: 12_500_000, drift_ppm: 0.0 })
        );
        assert_eq!(
            parse_align("2:-3ms:+20ppm"),
            Ok(AlignSpec::Manual { source: 2, offset: -3_000_000_000, drift_ppm: 20.0 })
        );
        let m = parse_align("1:match tracing_mark_write[text~gpio] -> D0:rise drift");
        assert!(matches!(m, Ok(AlignSpec::Match { source: 1, drift: true, .. })), "{m:?}");
        assert_eq!(parse_align("1:5").map_err(|e| e.column), Err(3));
        assert_eq!(parse_align("x").map_err(|e| e.column), Err(0));
    }

    #[test]
    fn fit_recovers_offset_and_drift() {
        // other runs 50 ppm fast and 1 ms behind: reference = other + 1ms - other * 50e-6.
        let other: Vec<Ps> = (0..100).map(|k| k * 10_000_000_000).collect();
        let pairs: Vec<(Ps, Ps)> = other.iter().map(|&o| (o + 1_000_000_000 - o / 20_000, o)).collect();
        let (offset, ppm, rms) = fit(&pairs, true).unwrap_or_default();
        assert!((offset - 1_000_000_000).abs() <= 1, "{offset}");
        assert!((ppm + 50.0).abs() < 1e-6, "{ppm}");
        assert!(rms < 1.0);
        let (offset, ppm, _) = fit(&pairs[..1], false).unwrap_or_default();
        assert_eq!((offset, ppm), (1_000_000_000, 0.0));
    }

    #[test]
    fn nearest_matching_skips_extra_occurrences() {
        let r = [100, 200, 300, 400];
        let o = [10, 110, 310];
        assert_eq!(match_times(&r, &o), [(100, 10), (200, 110), (400, 310)]);
    }
}

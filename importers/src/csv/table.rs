//! Time + value columns → uniform [`AnalogTrack`]s.
//!
//! The model stores analog data uniformly sampled (`t0 + round(i·dt)`), so an explicit time
//! column is checked for uniformity:
//!
//! - The time axis is cut into **segments** wherever a step is not within ±0.1 % of the
//!   median step (a gap between Saleae MSO waveforms, a time going backwards, a pause).
//!   Each segment becomes its own track, named `NAME #k` when there is more than one, so
//!   every stored sample keeps its own time within ±0.5 % of a step and nothing is
//!   invented. A warning says how many segments there were.
//! - A segment's `dt` is `(t_last − t_first) / (n − 1)` in fractional picoseconds, so a
//!   printed time axis with rounding noise (Saleae analog's 10 significant digits) does not
//!   drift.
//! - When the axis is so irregular that it would make more than [`MAX_SEGMENTS`] segments,
//!   the channel is instead **resampled** by sample-and-hold onto a grid of the median step
//!   (at most 4× the row count, coarser if needed), with a warning: the data stays
//!   viewable and bounded, and the warning tells the user the times are approximations.

use latscope_model::{AnalogTrack, Diagnostics, Ps};

/// More segments than this and the channel is resampled instead.
pub const MAX_SEGMENTS: usize = 64;

/// One value column: display name, SI unit and its samples (NaN = no data).
#[derive(Debug, Clone)]
pub struct Column {
    pub name: String,
    pub unit: String,
    pub values: Vec<f32>,
}

/// The time axis of a table.
#[derive(Debug, Clone)]
pub enum Axis {
    /// One time per row, relative ps (already shifted so the first is the origin).
    Times(Vec<Ps>),
    /// `t0 + round(i·dt)` (Rigol/Tek preambles, sigrok sample rate).
    Uniform { t0: Ps, dt_ps: f64 },
}

/// Builds the tracks of `columns` on `axis`.
pub fn build(axis: &Axis, columns: Vec<Column>, diag: &mut Diagnostics) -> Vec<AnalogTrack> {
    match axis {
        Axis::Uniform { t0, dt_ps } => {
            columns.into_iter().map(|c| AnalogTrack::new(c.name, c.unit, *t0, *dt_ps, c.values)).collect()
        }
        Axis::Times(times) => from_times(times, columns, diag),
    }
}

fn median_step(times: &[Ps]) -> Option<Ps> {
    let mut steps: Vec<Ps> = times.windows(2).map(|w| w[1].saturating_sub(w[0])).filter(|d| *d > 0).collect();
    if steps.is_empty() {
        return None;
    }
    let mid = steps.len() / 2;
    Some(*steps.select_nth_unstable(mid).1)
}

/// Index ranges of the uniform segments of `times`.
fn segments(times: &[Ps], median: Ps) -> Vec<std::ops::Range<usize>> {
    let tol = (median / 1000).max(1);
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..times.len() {
        let step = times[i].saturating_sub(times[i - 1]);
        if (i128::from(step) - i128::from(median)).abs() > i128::from(tol) {
            out.push(start..i);
            start = i;
        }
    }
    if !times.is_empty() {
        out.push(start..times.len());
    }
    out
}

fn from_times(times: &[Ps], columns: Vec<Column>, diag: &mut Diagnostics) -> Vec<AnalogTrack> {
    let Some(median) = median_step(times) else {
        // Zero or one row, or every time equal: one track at the first time.
        let t0 = times.first().copied().unwrap_or(0);
        return columns.into_iter().map(|c| AnalogTrack::new(c.name, c.unit, t0, 0.0, c.values)).collect();
    };
    let segs = segments(times, median);
    if segs.len() > MAX_SEGMENTS {
        return resample(times, median, columns, diag);
    }
    if segs.len() > 1 {
        diag.warn(format!(
            "the time column is not uniform: {} segments of uniform sampling (median step {} ps); each is a separate track",
            segs.len(),
            median
        ));
    }
    let mut out = Vec::new();
    for col in columns {
        for (k, seg) in segs.iter().enumerate() {
            let n = seg.len();
            let t0 = times[seg.start];
            let dt = if n > 1 { (times[seg.end - 1] - t0) as f64 / (n - 1) as f64 } else { median as f64 };
            let name = if segs.len() > 1 { format!("{} #{}", col.name, k + 1) } else { col.name.clone() };
            out.push(AnalogTrack::new(name, col.unit.clone(), t0, dt, col.values[seg.clone()].to_vec()));
        }
    }
    out
}

fn resample(times: &[Ps], median: Ps, columns: Vec<Column>, diag: &mut Diagnostics) -> Vec<AnalogTrack> {
    let t0 = times.iter().copied().min().unwrap_or(0);
    let t1 = times.iter().copied().max().unwrap_or(0);
    let span = (t1 - t0) as f64;
    let cap = times.len().saturating_mul(4).max(16) as f64;
    let mut dt = median as f64;
    if span / dt + 1.0 > cap {
        dt = span / (cap - 1.0);
    }
    let n = (span / dt).floor() as usize + 1;
    diag.warn(format!(
        "the time column is irregular; resampled by sample-and-hold onto a {dt:.0} ps grid ({n} samples), times are approximate"
    ));
    // Rows sorted by time so sample-and-hold picks the latest row at or before each point.
    let mut order: Vec<usize> = (0..times.len()).collect();
    order.sort_by_key(|&i| times[i]);
    columns
        .into_iter()
        .map(|c| {
            let mut out = Vec::with_capacity(n);
            let mut j = 0;
            for k in 0..n {
                let t = t0 + (k as f64 * dt).round() as Ps;
                while j + 1 < order.len() && times[order[j + 1]] <= t {
                    j += 1;
                }
                out.push(c.values[order[j]]);
            }
            AnalogTrack::new(c.name, c.unit, t0, dt, out)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(values: &[f32]) -> Vec<Column> {
        vec![Column { name: "A".into(), unit: "V".into(), values: values.to_vec() }]
    }

    #[test]
    fn uniform_times_give_one_track() {
        let mut d = Diagnostics::default();
        let t = build(&Axis::Times(vec![0, 1000, 2001, 3000]), col(&[1.0, 2.0, 3.0, 4.0]), &mut d);
        assert_eq!(t.len(), 1);
        assert_eq!((t[0].t0, t[0].dt_ps, t[0].end()), (0, 1000.0, 3000));
        assert!(d.warnings.is_empty());
    }

    #[test]
    fn gaps_split_into_segments() {
        let mut d = Diagnostics::default();
        let t = build(&Axis::Times(vec![0, 10, 20, 1000, 1010]), col(&[1.0, 2.0, 3.0, 4.0, 5.0]), &mut d);
        let names: Vec<_> = t.iter().map(|a| (a.name.as_str(), a.t0, a.samples.len())).collect();
        assert_eq!(names, [("A #1", 0, 3), ("A #2", 1000, 2)]);
        assert_eq!(d.warnings.len(), 1);
    }

    #[test]
    fn irregular_times_are_resampled_and_bounded() {
        let mut d = Diagnostics::default();
        let times: Vec<Ps> = (0..200).map(|i| i * i).collect();
        let values: Vec<f32> = (0..200).map(|i| i as f32).collect();
        let t = build(&Axis::Times(times), col(&values), &mut d);
        assert_eq!(t.len(), 1);
        assert!(t[0].samples.len() <= 800);
        assert_eq!(t[0].samples[0], 0.0);
        assert_eq!(*t[0].samples.last().unwrap_or(&0.0), 199.0);
        assert_eq!(d.warnings.len(), 1);
    }
}

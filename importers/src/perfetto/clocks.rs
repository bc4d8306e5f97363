//! Clock snapshots: maps timestamps of any clock the trace names onto the trace's primary
//! clock (BOOTTIME unless a snapshot says otherwise), which is the clock Perfetto's UI shows.

use super::protos::ClockSnapshot;

/// Perfetto's `BuiltinClock` ids.
pub(crate) const MONOTONIC_RAW: u32 = 5;
pub(crate) const BOOTTIME: u32 = 6;

#[derive(Debug, Default, Clone)]
pub(crate) struct Clocks {
    /// Each snapshot: (clock id, nanoseconds) of the clocks read at one instant.
    snapshots: Vec<Vec<(u32, i64)>>,
    primary: Option<u32>,
}

impl Clocks {
    pub(crate) fn add(&mut self, s: &ClockSnapshot) {
        if let Some(p) = s.primary_trace_clock.filter(|&p| p > 0) {
            self.primary.get_or_insert(p as u32);
        }
        let clocks: Vec<(u32, i64)> = s
            .clocks
            .iter()
            // Incremental and sequence-scoped clocks (ids 64..128) belong to one packet
            // sequence; latscope maps only the global clocks.
            .filter(|c| !c.is_incremental && c.clock_id < 64)
            .filter_map(|c| {
                let mult = if c.unit_multiplier_ns == 0 { 1 } else { c.unit_multiplier_ns };
                let ns = c.timestamp.checked_mul(mult)?;
                Some((c.clock_id, i64::try_from(ns).ok()?))
            })
            .collect();
        if !clocks.is_empty() {
            self.snapshots.push(clocks);
        }
    }

    pub(crate) fn primary(&self) -> u32 {
        self.primary.unwrap_or(BOOTTIME)
    }

    /// The primary clock's value at the first snapshot, if any.
    pub(crate) fn first_primary(&self) -> Option<i64> {
        let p = self.primary();
        self.snapshots.iter().find_map(|s| s.iter().find(|c| c.0 == p).map(|c| c.1))
    }

    /// `ts` of clock `clock` on the primary clock: the offset of the latest snapshot that
    /// read both clocks at or before `ts` (the first one when `ts` precedes them all), as
    /// Perfetto's trace processor does. `None` when no snapshot relates the two clocks.
    pub(crate) fn to_primary(&self, clock: u32, ts: i64) -> Option<i64> {
        let primary = self.primary();
        if clock == primary {
            return Some(ts);
        }
        let mut best: Option<(i64, i64)> = None;
        for s in &self.snapshots {
            let c = s.iter().find(|c| c.0 == clock).map(|c| c.1);
            let p = s.iter().find(|c| c.0 == primary).map(|c| c.1);
            let (Some(c), Some(p)) = (c, p) else { continue };
            match best {
                None => best = Some((c, p)),
                Some(_) if c <= ts => best = Some((c, p)),
                _ => {}
            }
        }
        let (c, p) = best?;
        p.checked_add(ts.checked_sub(c)?)
    }
}

#[cfg(test)]
mod tests {
    use super::super::protos::{Clock, ClockSnapshot};
    use super::*;

    fn snap(pairs: &[(u32, u64)]) -> ClockSnapshot {
        ClockSnapshot {
            clocks: pairs
                .iter()
                .map(|&(clock_id, timestamp)| Clock { clock_id, timestamp, ..Default::default() })
                .collect(),
            primary_trace_clock: None,
        }
    }

    #[test]
    fn maps_through_the_latest_snapshot_before() {
        let mut c = Clocks::default();
        c.add(&snap(&[(MONOTONIC_RAW, 1_000), (BOOTTIME, 5_000)]));
        c.add(&snap(&[(MONOTONIC_RAW, 2_000), (BOOTTIME, 6_100)]));
        assert_eq!(c.to_primary(BOOTTIME, 42), Some(42));
        assert_eq!(c.to_primary(MONOTONIC_RAW, 500), Some(4_500), "before all: the first");
        assert_eq!(c.to_primary(MONOTONIC_RAW, 1_500), Some(5_500));
        assert_eq!(c.to_primary(MONOTONIC_RAW, 2_500), Some(6_600));
        assert_eq!(c.to_primary(3, 1), None, "no snapshot has the clock");
    }
}

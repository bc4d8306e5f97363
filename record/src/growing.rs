//! The kernel's events as a source that grows while the recording runs, so that a tick
//! decodes and analyses what arrived since the last one, not everything kept.
//!
//! Each CPU's buffer hands its pages over in time order, but the CPUs do not wait for each
//! other: a page from an idle CPU may arrive after a busy CPU's later ones. An event is
//! **final** once no CPU can still deliver an earlier one, which is at or before the
//! **watermark**, the oldest of the CPUs' "complete through" times:
//! - a CPU is complete through the moment before its newest record, since its own records
//!   come in order (the next may share the newest's time);
//! - a local CPU whose reader found its buffer empty is complete through the moment before
//!   that read (this machine's monotonic clock is the recording's `mono` trace clock),
//!   less [`IN_FLIGHT_NS`] for a record reserved before the read and committed after it;
//! - a board read without blocking says the same of an idle CPU, on the board's trace
//!   clock, every few reads (an idle mark in the CPU's stream, `ssh::idle_mark`);
//! - a board read by a blocking `cat` says nothing when a CPU is idle (`cat` waits for a
//!   page), so the watermark never trails the newest record by more than [`IDLE_LAG_NS`].
//!
//! Final records are decoded from the pages straight into one table that snapshots share
//! (`PageDecoder::decode_merged`), in time order across CPUs, equal times taking the lower
//! CPU first as a trace.dat file's reader does. A record that arrives at or
//! before the watermark already passed (an idle board CPU beyond the lag, a clock that
//! stepped back) cannot be appended in order: it is counted in [`Growing::late`], and the
//! recorder starts a new growing source from the pages it keeps.

use latscope_importers::tracedat::live::{KernelMeta, PageDecoder};
use latscope_model::{Diagnostics, EventTable, EventTableBuilder, PS_PER_NS, Ps, Source};

/// How long a record may sit reserved but not yet committed, as the kernel writes it. The
/// kernel commits with preemption off, so it is microseconds; this is generous.
pub const IN_FLIGHT_NS: u64 = 5_000_000;

/// How far the watermark may trail the newest record when a CPU says nothing.
pub const IDLE_LAG_NS: u64 = 2_000_000_000;

/// One CPU's pages not yet wholly appended, and what is known of its stream.
#[derive(Debug, Default)]
struct CpuFeed {
    /// Whole pages (padded to the page size), in the order read, with each one's first
    /// and last record time (the header's time for a page without records) and whether it
    /// holds records.
    pages: Vec<u8>,
    spans: Vec<(u64, u64, bool)>,
    /// The newest record time read.
    newest: Option<u64>,
    /// When the reader last found the buffer empty (raw ns of the trace clock).
    drained: Option<u64>,
}

impl CpuFeed {
    fn complete_through(&self) -> Option<u64> {
        // The next page may begin with a record as old as the newest read: a page can end
        // between records that share a time.
        let read = self.newest.map(|n| n.saturating_sub(1));
        let drained = self.drained.map(|d| d.saturating_sub(IN_FLIGHT_NS));
        match (read, drained) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        }
    }
}

/// The recorded kernel events, final ones appended in time order.
#[derive(Debug)]
pub struct Growing {
    cpus: Vec<CpuFeed>,
    page_size: usize,
    /// Decodes pages on the growing source's timeline: made with the first final event,
    /// whose whole second is the origin (as a trace.dat file's reader chooses it).
    decoder: Option<PageDecoder>,
    table: EventTableBuilder,
    diagnostics: Diagnostics,
    /// Every record at or before this raw time has been appended.
    through: Option<u64>,
    late: u64,
    /// How far behind the watermark the latest of them was (ns).
    late_by: u64,
}

impl Growing {
    pub fn new(cpus: usize, page_size: usize) -> Growing {
        Growing {
            cpus: (0..cpus).map(|_| CpuFeed::default()).collect(),
            page_size,
            decoder: None,
            table: EventTableBuilder::new(),
            diagnostics: Diagnostics::default(),
            through: None,
            late: 0,
            late_by: 0,
        }
    }

    /// An empty source for the same CPUs that knows when each reader last found its buffer
    /// empty (a source started again from the pages kept).
    pub fn renew(&self) -> Growing {
        let mut g = Growing::new(self.cpus.len(), self.page_size);
        for (new, old) in g.cpus.iter_mut().zip(&self.cpus) {
            new.drained = old.drained;
        }
        g
    }

    /// Takes one page of `cpu` (its used bytes), whose record times are `first..=last`
    /// (`records`: whether it holds any; a page without records carries only a time and
    /// perhaps a lost-events count, and says nothing of order).
    pub fn push(&mut self, cpu: usize, page: &[u8], first: u64, last: u64, records: bool) {
        let Some(feed) = self.cpus.get_mut(cpu) else { return };
        if records
            && let Some(t) = self.through
            && first <= t
        {
            self.late += 1;
            self.late_by = self.late_by.max(t - first);
        }
        feed.pages.extend_from_slice(page);
        feed.pages.resize(feed.pages.len().div_ceil(self.page_size) * self.page_size, 0);
        feed.spans.push((first, last, records));
        if records {
            feed.newest = Some(feed.newest.map_or(last, |n| n.max(last)));
        }
    }

    /// Says that `cpu`'s reader found its buffer empty at raw time `at`.
    pub fn drained(&mut self, cpu: usize, at: u64) {
        if let Some(feed) = self.cpus.get_mut(cpu) {
            feed.drained = Some(feed.drained.map_or(at, |d| d.max(at)));
        }
    }

    /// How many events have been appended so far.
    pub fn appended(&self) -> usize {
        self.table.table().len()
    }

    /// Records that arrived behind what was already appended (so they are not in it).
    pub fn late(&self) -> u64 {
        self.late
    }

    /// How far behind the watermark the latest late record was, in nanoseconds.
    pub fn late_by_ns(&self) -> u64 {
        self.late_by
    }

    /// The time every event at or before which has arrived, if known.
    pub fn watermark(&self) -> Option<u64> {
        let mut oldest: Option<u64> = None;
        let mut newest: Option<u64> = None;
        for feed in &self.cpus {
            let c = feed.complete_through()?;
            oldest = Some(oldest.map_or(c, |o| o.min(c)));
            if let Some(n) = feed.newest {
                newest = Some(newest.map_or(n, |m| m.max(n)));
            }
        }
        let lagged = newest.map(|n| n.saturating_sub(IDLE_LAG_NS));
        match (oldest, lagged) {
            (Some(o), Some(l)) => Some(o.max(l)),
            (o, l) => o.or(l),
        }
    }

    /// The watermark, or, with some CPU silent so far, the newest record less the idle lag.
    fn final_through(&self) -> Option<u64> {
        self.watermark().or_else(|| {
            let newest = self.cpus.iter().filter_map(|f| f.newest).max()?;
            Some(newest.saturating_sub(IDLE_LAG_NS))
        })
    }

    /// Appends every event up to the watermark, with `meta`'s task names. Returns how many
    /// were appended.
    pub fn advance(&mut self, meta: &KernelMeta) -> usize {
        let Some(to) = self.final_through() else { return 0 };
        self.advance_to(meta, to)
    }

    /// Appends every record still pending, once the readers have stopped (nothing earlier
    /// can come), and names every event's task by `meta`'s last `saved_cmdlines`, as a
    /// trace.dat of the same pages names them. Returns how many events' task names changed
    /// (a task named after its first events were appended).
    pub fn finish(&mut self, meta: &KernelMeta) -> usize {
        self.advance_to(meta, u64::MAX);
        let Some(decoder) = self.decoder.as_ref() else { return 0 };
        self.table.rename_tasks(|pid| decoder.task_name(pid))
    }

    fn advance_to(&mut self, meta: &KernelMeta, to: u64) -> usize {
        let from = self.through.map_or(0, |t| t.saturating_add(1));
        if to < from {
            return 0;
        }
        if self.decoder.is_none() {
            // The origin is the whole second of the first final record.
            let first = self
                .cpus
                .iter()
                .flat_map(|f| f.spans.iter().filter(|s| s.2).map(|s| s.0))
                .filter(|&t| t > 0 && t <= to)
                .min();
            let Some(first) = first else { return 0 };
            match PageDecoder::new(meta, first / 1_000_000_000 * 1_000_000_000) {
                Ok(d) => self.decoder = Some(d),
                Err(e) => {
                    self.diagnostics.warn(format!("decoding the recorded pages: {e}"));
                    return 0;
                }
            }
        }
        let Some(decoder) = self.decoder.as_mut() else { return 0 };
        decoder.set_cmdlines(&meta.cmdlines);
        let pages: Vec<(u16, &[u8])> =
            self.cpus.iter().enumerate().map(|(cpu, feed)| (cpu as u16, feed.pages.as_slice())).collect();
        let added = decoder.decode_merged(&mut self.table, &mut self.diagnostics, &pages, from, to);
        // The pages read to their end go; one that holds later records stays.
        for feed in &mut self.cpus {
            let done = feed.spans.iter().take_while(|s| s.1 <= to).count();
            feed.spans.drain(..done);
            feed.pages.drain(..done * self.page_size);
        }
        self.through = Some(to);
        added as usize
    }

    /// The events appended so far without those at or before each CPU's raw time in
    /// `dropped` (the pages a ring let go), on the timeline a trace.dat of the rest is read
    /// on: its origin the whole second of the first event kept. `None` before any event.
    pub fn snapshot_after(&self, meta: &KernelMeta, dropped: &[Option<u64>]) -> Option<Source> {
        let decoder = self.decoder.as_ref()?;
        let table = self.table.table();
        let bounds: Vec<Option<Ps>> = dropped.iter().map(|d| d.map(|raw| decoder.to_ps(raw))).collect();
        let mut events = table.retain_rows(|i| {
            let cpu = usize::from(table.cpu[i]);
            bounds.get(cpu).copied().flatten().is_none_or(|b| table.ts[i] > b)
        });
        let first_ns = events.ts.first().map_or(decoder.origin_ns(), |&t| decoder.to_raw(t));
        let origin_ns = first_ns / 1_000_000_000 * 1_000_000_000;
        let rebased = PageDecoder::new(meta, origin_ns).ok()?;
        let shift = (i128::from(origin_ns) - i128::from(decoder.origin_ns())) * i128::from(PS_PER_NS);
        let shift = shift.clamp(i128::from(Ps::MIN), i128::from(Ps::MAX)) as Ps;
        if shift != 0 {
            for t in events.ts.iter_mut() {
                *t = t.saturating_sub(shift);
            }
        }
        let mut diagnostics = self.diagnostics.clone();
        // The losses the pages kept say, where they say them.
        let first = events.ts.first().copied().unwrap_or(Ps::MAX);
        diagnostics.gaps.retain_mut(|g| {
            g.ts = g.ts.saturating_sub(shift);
            g.ts >= first
        });
        Some(self.source_of(&rebased, events, diagnostics))
    }

    /// The events appended so far, sharing this source's memory.
    pub fn snapshot(&self) -> Option<Source> {
        let decoder = self.decoder.as_ref()?;
        Some(self.source_of(decoder, self.table.table().clone(), self.diagnostics.clone()))
    }

    /// `events` (with this source's strings) on `decoder`'s timeline, as a trace.dat.
    fn source_of(&self, decoder: &PageDecoder, events: EventTable, diagnostics: Diagnostics) -> Source {
        let mut src = decoder.empty_source();
        src.name = "trace.dat".into();
        src.events = events;
        src.strings = self.table.interner.clone();
        src.diagnostics = diagnostics;
        src.renderer = Some(decoder.renderer(&src));
        src
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_watermark_is_the_oldest_cpus_complete_time() {
        let mut g = Growing::new(2, 64);
        let page = [0u8; 64];
        assert_eq!(g.watermark(), None, "nothing known of either CPU");
        g.push(0, &page, 1_000, 2_000, true);
        assert_eq!(g.watermark(), None, "CPU 1 may still hold anything");
        g.drained(1, 50_000_000);
        assert_eq!(g.watermark(), Some(1_999), "CPU 0's next page may share its newest time");
        g.push(0, &page, 2_000, 90_000_000, true);
        assert_eq!(g.watermark(), Some(50_000_000 - IN_FLIGHT_NS), "CPU 1 drained, less what is in flight");
        g.push(1, &page, 3_000_000_000, 3_000_000_000, true);
        assert_eq!(
            g.watermark(),
            Some(3_000_000_000 - IDLE_LAG_NS),
            "a silent CPU 0 trails by the lag at most"
        );
    }

    #[test]
    fn a_page_without_records_is_never_late_and_moves_no_time() {
        let mut g = Growing::new(1, 64);
        let page = [0u8; 64];
        g.push(0, &page, 5_000, 6_000, true);
        g.through = Some(10_000);
        g.push(0, &page, 4_000, 4_000, false);
        assert_eq!(g.late(), 0);
        assert_eq!(g.cpus[0].newest, Some(6_000));
        g.push(0, &page, 9_000, 12_000, true);
        assert_eq!((g.late(), g.late_by_ns()), (1, 1_000), "a record at 9 µs, 1 µs behind");
    }
}

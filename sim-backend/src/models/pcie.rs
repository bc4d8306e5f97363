//! A PCIe path from the CPU to an endpoint, shared with other DMA masters: one FIFO of
//! transactions served at a finite rate. Posted writes are queued (the CPU only waits when
//! `credits` writes are outstanding), a read waits behind every earlier transaction and then
//! its completion's round trip, and another master's DMA waits behind whatever is queued.
//!
//! The FIFO is served in order, so each transaction's completion time is known when it is
//! queued; callers must queue in nondecreasing time order (the engine guarantees it).

use latscope_model::Ps;
use std::collections::VecDeque;

#[derive(Debug, Clone)]
pub struct PcieLink {
    /// When the link finishes everything queued so far.
    tail: Ps,
    /// Completion times of outstanding posted writes, oldest first.
    posted: VecDeque<Ps>,
    credits: usize,
}

impl PcieLink {
    pub fn new(credits: usize) -> Self {
        Self { tail: 0, posted: VecDeque::new(), credits: credits.max(1) }
    }

    fn retire(&mut self, t: Ps) {
        while self.posted.front().is_some_and(|&c| c <= t) {
            self.posted.pop_front();
        }
    }

    /// When the CPU may post its next write at or after `t` (it stalls while all posted-write
    /// credits are in use).
    pub fn can_post_at(&mut self, t: Ps) -> Ps {
        self.retire(t);
        if self.posted.len() < self.credits { t } else { self.posted[self.posted.len() - self.credits] }
    }

    /// Queues a posted write at `t` that occupies the link for `drain`; returns its completion.
    pub fn post_write(&mut self, t: Ps, drain: Ps) -> Ps {
        self.retire(t);
        self.tail = self.tail.max(t) + drain;
        self.posted.push_back(self.tail);
        self.tail
    }

    /// A non-posted read issued at `t`: it waits for every earlier posted write, then takes
    /// `service` on the link and `round_trip` back; returns when the CPU has its data.
    pub fn read(&mut self, t: Ps, service: Ps, round_trip: Ps) -> Ps {
        self.tail = self.tail.max(t) + service;
        self.tail + round_trip
    }

    /// Another master's DMA requested at `t`: returns (start, end) of its transfer.
    pub fn dma(&mut self, t: Ps, service: Ps) -> (Ps, Ps) {
        let start = self.tail.max(t);
        self.tail = start + service;
        (start, self.tail)
    }

    /// Queued work at `t`, as time to drain.
    pub fn backlog(&self, t: Ps) -> Ps {
        (self.tail - t).max(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_dma_wait_for_posted_writes() {
        let mut l = PcieLink::new(2);
        assert_eq!(l.post_write(0, 10), 10);
        assert_eq!(l.post_write(1, 10), 20);
        assert_eq!(l.can_post_at(2), 10, "two credits in use: wait for the oldest");
        assert_eq!(l.dma(5, 3), (20, 23));
        assert_eq!(l.read(6, 2, 4), 29);
        assert_eq!(l.backlog(6), 19);
    }
}

//! A NIC transmit path: a descriptor ring, a wire that sends frames back to back at line
//! rate, and TX-completion interrupt coalescing (an interrupt after `coalesce` completed
//! frames, or `timeout` after the last completion).

use latscope_model::Ps;
use std::collections::VecDeque;

#[derive(Debug, Clone)]
pub struct TxRing {
    pub size: usize,
    /// Frames queued to the NIC and not yet cleaned by the driver.
    in_ring: usize,
    /// Frames waiting for the wire.
    waiting: VecDeque<u64>,
    wire_free: Ps,
    /// Completed but not yet cleaned frames.
    pub completed: usize,
    /// Frames completed since the last interrupt.
    since_irq: usize,
    pub coalesce: usize,
}

impl TxRing {
    pub fn new(size: usize, coalesce: usize) -> Self {
        Self {
            size,
            in_ring: 0,
            waiting: VecDeque::new(),
            wire_free: 0,
            completed: 0,
            since_irq: 0,
            coalesce: coalesce.max(1),
        }
    }

    pub fn space(&self) -> usize {
        self.size - self.in_ring
    }

    /// Queues a frame; false when the ring is full (the stack must stop the queue).
    pub fn enqueue(&mut self, skb: u64) -> bool {
        if self.in_ring >= self.size {
            return false;
        }
        self.in_ring += 1;
        self.waiting.push_back(skb);
        true
    }

    /// Starts the next waiting frame at or after `t` if the wire is free; returns
    /// (skb, start, end) of the transmission.
    pub fn start_next(&mut self, t: Ps, frame_time: Ps) -> Option<(u64, Ps, Ps)> {
        if self.wire_free > t {
            return None;
        }
        let skb = self.waiting.pop_front()?;
        let start = t.max(self.wire_free);
        self.wire_free = start + frame_time;
        Some((skb, start, self.wire_free))
    }

    pub fn wire_free(&self) -> Ps {
        self.wire_free
    }

    /// A frame finished; true if that raises the coalesced interrupt.
    pub fn complete(&mut self) -> bool {
        self.completed += 1;
        self.since_irq += 1;
        if self.since_irq >= self.coalesce {
            self.since_irq = 0;
            return true;
        }
        false
    }

    /// Fires the coalescing timeout: true if frames are waiting for an interrupt.
    pub fn timeout(&mut self) -> bool {
        let any = self.since_irq > 0;
        self.since_irq = 0;
        any
    }

    /// The driver cleans up to `budget` completed frames; returns how many.
    pub fn clean(&mut self, budget: usize) -> usize {
        let n = self.completed.min(budget);
        self.completed -= n;
        self.in_ring -= n;
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_fills_sends_in_order_and_coalesces() {
        let mut r = TxRing::new(2, 2);
        assert!(r.enqueue(1) && r.enqueue(2) && !r.enqueue(3));
        assert_eq!(r.start_next(0, 10), Some((1, 0, 10)));
        assert_eq!(r.start_next(5, 10), None, "wire busy");
        assert_eq!(r.start_next(10, 10), Some((2, 10, 20)));
        assert!(!r.complete());
        assert!(r.complete());
        assert_eq!(r.clean(64), 2);
        assert_eq!(r.space(), 2);
    }
}

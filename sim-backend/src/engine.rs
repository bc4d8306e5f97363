//! The discrete-event engine: a time-ordered queue in integer picoseconds. Events at the same
//! time pop in the order they were pushed (a sequence number breaks ties), so a run is a
//! pure function of the configuration and the seed.

use latscope_model::Ps;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

#[derive(Debug)]
struct Entry<E> {
    t: Ps,
    seq: u64,
    ev: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        (self.t, self.seq) == (other.t, other.seq)
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    // Reversed: BinaryHeap is a max-heap and we want the earliest (then first pushed) on top.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.t, other.seq).cmp(&(self.t, self.seq))
    }
}

/// The pending events of a run.
#[derive(Debug)]
pub struct Queue<E> {
    heap: BinaryHeap<Entry<E>>,
    seq: u64,
    now: Ps,
}

impl<E> Default for Queue<E> {
    fn default() -> Self {
        Self { heap: BinaryHeap::new(), seq: 0, now: 0 }
    }
}

impl<E> Queue<E> {
    pub fn new() -> Self {
        Self::default()
    }
    /// Schedules `ev` at `t`; a time in the past is clamped to now (causality).
    pub fn at(&mut self, t: Ps, ev: E) {
        let t = t.max(self.now);
        self.heap.push(Entry { t, seq: self.seq, ev });
        self.seq += 1;
    }
    pub fn next_time(&self) -> Option<Ps> {
        self.heap.peek().map(|e| e.t)
    }
    pub fn pop(&mut self) -> Option<(Ps, E)> {
        let e = self.heap.pop()?;
        self.now = e.t;
        Some((e.t, e.ev))
    }
    pub fn now(&self) -> Ps {
        self.now
    }
    pub fn len(&self) -> usize {
        self.heap.len()
    }
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

/// A configured set of components: it handles one event at a time and schedules more.
pub trait World {
    type Ev;
    fn handle(&mut self, t: Ps, ev: Self::Ev, q: &mut Queue<Self::Ev>);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_by_time_then_push_order() {
        let mut q = Queue::new();
        q.at(30, 'c');
        q.at(10, 'a');
        q.at(30, 'd');
        q.at(10, 'b');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|e| e.1)).collect();
        assert_eq!(order, ['a', 'b', 'c', 'd']);
        q.at(5, 'z');
        assert_eq!(q.pop(), Some((30, 'z')), "the past is clamped to now");
    }
}

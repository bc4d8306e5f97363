//! Span tracks: intervals with a label and a nesting depth (function_graph calls, pairs
//! found by analysis, stall windows), sorted by start.

use super::intern::Sym;
use super::time::Ps;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SpanTrack {
    pub name: String,
    pub start: Vec<Ps>,
    pub end: Vec<Ps>,
    pub label: Vec<Sym>,
    pub depth: Vec<u16>,
    /// The lane a span belongs to (the CPU for function_graph).
    pub lane: Vec<u16>,
}

impl SpanTrack {
    pub fn new(name: impl Into<String>) -> Self {
        Self { name: name.into(), ..Self::default() }
    }

    pub fn push(&mut self, start: Ps, end: Ps, label: Sym, depth: u16, lane: u16) {
        self.start.push(start);
        self.end.push(end);
        self.label.push(label);
        self.depth.push(depth);
        self.lane.push(lane);
    }

    pub fn len(&self) -> usize {
        self.start.len()
    }

    pub fn is_empty(&self) -> bool {
        self.start.is_empty()
    }

    /// Stable sort by start time.
    pub fn sort(&mut self) {
        if self.start.windows(2).all(|w| w[0] <= w[1]) {
            return;
        }
        let mut order: Vec<usize> = (0..self.len()).collect();
        order.sort_by_key(|&i| self.start[i]);
        self.start = order.iter().map(|&i| self.start[i]).collect();
        self.end = order.iter().map(|&i| self.end[i]).collect();
        self.label = order.iter().map(|&i| self.label[i]).collect();
        self.depth = order.iter().map(|&i| self.depth[i]).collect();
        self.lane = order.iter().map(|&i| self.lane[i]).collect();
    }

    pub fn max_end(&self) -> Option<Ps> {
        self.end.iter().copied().max()
    }
}

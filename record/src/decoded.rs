//! A live logic capture's decoded annotations as a source that grows, so that a tick
//! appends and analyses what the decoders made final since the last one, not every
//! annotation so far.
//!
//! An annotation is final once its decoder says none it holds will change
//! ([`StreamDecoder::take_final`]); its events (`DECODER_ROW` at its start and
//! `DECODER_ROW_end` at its end, as [`Decoded::attach`] makes them) are appended once no
//! stack can still put an earlier one: before the **reach**, the earliest of the stacks'
//! "nothing starts before" times. The events then come in the order `attach` gives them
//! over the whole decode (by time; equal times by annotation, start before end; equal
//! annotation starts by stack), so an analysis of the growing source equals one of the
//! decode as a whole.
//!
//! [`StreamDecoder::take_final`]: latscope_decoders::StreamDecoder::take_final
//! [`Decoded::attach`]: latscope_decoders::Decoded::attach

use latscope_decoders::Annotation;
use latscope_model::{EventTableBuilder, FieldKind, FieldValue, IrqFlags, LayoutId, Ps, Source, Sym};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// An annotation's end event, waiting until nothing can come before it.
#[derive(Debug)]
struct WaitingEnd {
    at: Ps,
    /// `attach`'s push order: `2 × annotation + 1`.
    order: u64,
    comm: Sym,
    layout: LayoutId,
    values: Vec<FieldValue>,
}

impl PartialEq for WaitingEnd {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.order) == (other.at, other.order)
    }
}
impl Eq for WaitingEnd {}
impl PartialOrd for WaitingEnd {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for WaitingEnd {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.at, self.order).cmp(&(other.at, other.order))
    }
}

/// The final annotations' events, appended in time order (module doc).
#[derive(Debug, Default)]
pub struct DecodedGrowth {
    table: EventTableBuilder,
    ends: BinaryHeap<Reverse<WaitingEnd>>,
    /// Annotations appended.
    appended: u64,
    kinds: Vec<(Sym, FieldKind)>,
    values: Vec<FieldValue>,
}

impl DecodedGrowth {
    /// Appends the events of the annotations that start before `reach`, taking them from
    /// the front of each stack's list `stacks[i][next[i]..]` (final annotations in start
    /// order) and moving `next[i]` past them; then every end event before `reach`.
    pub fn advance(&mut self, stacks: &[Vec<Annotation>], next: &mut [usize], reach: Ps) {
        loop {
            // The earliest annotation left, the lower stack first on equal starts.
            let mut first: Option<(Ps, usize)> = None;
            for (i, list) in stacks.iter().enumerate() {
                if let Some(a) = list.get(next[i])
                    && a.start < reach
                    && first.is_none_or(|(s, _)| a.start < s)
                {
                    first = Some((a.start, i));
                }
            }
            let Some((start, i)) = first else { break };
            let a = &stacks[i][next[i]];
            next[i] += 1;
            let order = 2 * self.appended;
            self.append_ends(|at, o| (at, o) < (start, order));
            let ev = a.events(&mut self.table, &mut self.kinds, &mut self.values);
            self.table.push(a.start, 0, 0, ev.comm, IrqFlags::default(), ev.start, &self.values);
            self.ends.push(Reverse(WaitingEnd {
                at: a.end,
                order: order + 1,
                comm: ev.comm,
                layout: ev.end,
                values: self.values.clone(),
            }));
            self.appended += 1;
        }
        self.append_ends(|at, _| at < reach);
    }

    /// Appends the waiting end events, earliest first, while `before(time, order)` holds.
    fn append_ends(&mut self, before: impl Fn(Ps, u64) -> bool) {
        while let Some(Reverse(e)) = self.ends.peek()
            && before(e.at, e.order)
        {
            if let Some(Reverse(e)) = self.ends.pop() {
                self.table.push(e.at, 0, 0, e.comm, IrqFlags::default(), e.layout, &e.values);
            }
        }
    }

    /// Annotations appended so far.
    pub fn appended(&self) -> u64 {
        self.appended
    }

    /// The events appended so far as a source, sharing this one's memory (as
    /// `decoded_source` names a decode's).
    pub fn snapshot(&self) -> Source {
        let mut source = crate::sigrok::logic_source();
        source.events = self.table.table().clone();
        source.strings = self.table.interner.clone();
        source
    }
}

/// An event as a test compares it: time, name, and every field as text.
#[cfg(test)]
pub(crate) type EventRow = (Ps, String, Vec<(String, String)>);

/// A source's events as comparable rows.
#[cfg(test)]
pub(crate) fn event_rows(src: &Source) -> Vec<EventRow> {
    src.events
        .iter()
        .map(|e| {
            let fields = e
                .fields()
                .map(|(k, v)| {
                    let mut text = String::new();
                    latscope_model::value_text(src, v, &mut text);
                    (src.strings.resolve(k).into_owned(), text)
                })
                .collect();
            (e.ts(), src.strings.resolve(e.name()).into_owned(), fields)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use latscope_decoders::{Decoded, Value};

    use super::event_rows;

    fn ann(decoder: &'static str, start: Ps, end: Ps) -> Annotation {
        Annotation {
            decoder,
            row: "data",
            start,
            end,
            start_sample: Some(start),
            end_sample: Some(end),
            text: "x".into(),
            fields: vec![("value", Value::UInt(start as u64))],
        }
    }

    #[test]
    fn growing_in_steps_gives_the_events_of_the_whole_decode() {
        // Two stacks: overlapping spans, equal starts across stacks, an end equal to the
        // next start.
        let stacks = vec![
            vec![ann("uart", 0, 10), ann("uart", 10, 30), ann("uart", 20, 21), ann("uart", 40, 45)],
            vec![ann("spi", 5, 50), ann("spi", 10, 10), ann("spi", 21, 40)],
        ];
        let mut whole = Source::new("logic", "sigrok-sr", latscope_model::SourceKind::File);
        let parts = stacks.iter().map(|s| Decoded { annotations: s.clone(), ..Decoded::default() });
        Decoded::merged(parts).attach(&mut whole).unwrap();
        for reaches in [vec![i64::MAX], vec![6, 10, 11, 21, 22, 41, i64::MAX], (0..60).collect()] {
            let mut growth = DecodedGrowth::default();
            let mut next = vec![0; stacks.len()];
            let mut last = 0;
            for reach in reaches {
                growth.advance(&stacks, &mut next, reach);
                let src = growth.snapshot();
                assert!(src.events.iter().all(|e| e.ts() < reach), "nothing at or after the reach");
                assert!(src.events.len() >= last, "only appends");
                last = src.events.len();
            }
            growth.advance(&stacks, &mut next, Ps::MAX);
            assert_eq!(event_rows(&growth.snapshot()), event_rows(&whole));
            assert_eq!(growth.appended(), 7);
        }
    }
}

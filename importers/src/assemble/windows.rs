//! One allocation of event columns for a parallel parse, cut into a window per part.

use super::MergeError;
use super::merge::{Part, merge_columns, split_lengths};
use latscope_model::{
    BuildError, EventRow, EventSink, EventTableBuilder, EventTableParts, Interner, IrqFlags, LayoutId, Ps,
    Sym,
};
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicU64, Ordering};

/// Event columns allocated once for a parallel parse and cut into one [`ColumnWindow`] per
/// chunk, each as long as a bound of that chunk's events (its line count). Chunks write
/// their events where they end up: merging only closes the gaps the bounds left
/// ([`SharedColumns::merge`]), so the columns are neither copied nor faulted in twice, and
/// the memory of a second set of columns is never needed.
#[derive(Debug)]
pub(crate) struct SharedColumns {
    /// Tells this allocation's windows from another's (never 0).
    id: u64,
    bounds: Vec<usize>,
    /// Capacity for the sum of `bounds` in each event column; lengths stay 0 until the
    /// merge.
    columns: EventTableParts,
}

static NEXT_SHARED_COLUMNS: AtomicU64 = AtomicU64::new(1);

/// One chunk's part of [`SharedColumns`]: uninitialised slots that its builder fills in
/// order, as the builder's [`EventSink`].
pub(crate) struct ColumnWindow<'a> {
    owner: u64,
    index: usize,
    /// Slots written: `push` writes slot `len` of every column, then counts it.
    len: usize,
    ts: &'a mut [MaybeUninit<Ps>],
    cpu: &'a mut [MaybeUninit<u16>],
    pid: &'a mut [MaybeUninit<i32>],
    comm: &'a mut [MaybeUninit<Sym>],
    layout: &'a mut [MaybeUninit<LayoutId>],
    flags: &'a mut [MaybeUninit<IrqFlags>],
    field_off: &'a mut [MaybeUninit<u32>],
}

impl std::fmt::Debug for ColumnWindow<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ColumnWindow")
            .field("index", &self.index)
            .field("len", &self.len)
            .field("capacity", &self.ts.len())
            .finish()
    }
}

impl EventSink for ColumnWindow<'_> {
    #[inline]
    fn push(&mut self, row: EventRow) -> bool {
        let i = self.len;
        let slots = (
            self.ts.get_mut(i),
            self.cpu.get_mut(i),
            self.pid.get_mut(i),
            self.comm.get_mut(i),
            self.flags.get_mut(i),
            self.layout.get_mut(i),
            self.field_off.get_mut(i),
        );
        // Slot `i` of every column, or none when the window is full.
        let (Some(t0), Some(c0), Some(p0), Some(m0), Some(f0), Some(l0), Some(o0)) = slots else {
            return false;
        };
        t0.write(row.ts);
        c0.write(row.cpu);
        p0.write(row.pid);
        m0.write(row.comm);
        f0.write(row.flags);
        l0.write(row.layout);
        o0.write(row.field_off);
        self.len = i + 1;
        true
    }

    fn len(&self) -> usize {
        self.len
    }
}

/// A builder that wrote into a window, taken apart: its strings, layouts, field values and
/// stacks, and how many slots of which window it filled.
#[derive(Debug)]
pub(crate) struct WindowedPart {
    part: Part,
    error: Option<BuildError>,
    owner: u64,
    index: usize,
    len: usize,
}

impl WindowedPart {
    /// Ends `builder`'s use of its window.
    pub fn new(builder: EventTableBuilder<ColumnWindow<'_>>) -> WindowedPart {
        let (part, window, error) = Part::from_builder(builder.into_parts());
        // A builder with a window always has it; owner 0 is no allocation's.
        let (owner, index, len) = window.map_or((0, 0, 0), |w| (w.owner, w.index, w.len));
        WindowedPart { part, error, owner, index, len }
    }

    /// The part's strings (span labels and other symbols a chunk kept are in this numbering).
    pub fn interner(&self) -> &Interner {
        &self.part.interner
    }

    /// Events written into the window.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }
}

impl SharedColumns {
    /// Room for `bounds[i]` events in window `i`.
    pub fn new(bounds: Vec<usize>) -> SharedColumns {
        let total = bounds.iter().sum();
        let mut c = EventTableParts::default();
        c.ts.reserve_exact(total);
        c.cpu.reserve_exact(total);
        c.pid.reserve_exact(total);
        c.comm.reserve_exact(total);
        c.layout.reserve_exact(total);
        c.flags.reserve_exact(total);
        c.field_off.reserve_exact(total);
        SharedColumns { id: NEXT_SHARED_COLUMNS.fetch_add(1, Ordering::Relaxed), bounds, columns: c }
    }

    /// One window per bound, in order.
    pub fn windows(&mut self) -> Vec<ColumnWindow<'_>> {
        fn cut<'a, T>(v: &'a mut Vec<T>, bounds: &[usize]) -> Vec<&'a mut [MaybeUninit<T>]> {
            let total = bounds.iter().sum();
            split_lengths(&mut v.spare_capacity_mut()[..total], bounds.iter().copied())
        }
        let b = &self.bounds;
        let c = &mut self.columns;
        let (ts, cpu, pid, comm) =
            (cut(&mut c.ts, b), cut(&mut c.cpu, b), cut(&mut c.pid, b), cut(&mut c.comm, b));
        let (layout, flags, field_off) =
            (cut(&mut c.layout, b), cut(&mut c.flags, b), cut(&mut c.field_off, b));
        let columns = ts.into_iter().zip(cpu).zip(pid).zip(comm).zip(layout).zip(flags).zip(field_off);
        columns
            .enumerate()
            .map(|(index, ((((((ts, cpu), pid), comm), layout), flags), field_off))| ColumnWindow {
                owner: self.id,
                index,
                len: 0,
                ts,
                cpu,
                pid,
                comm,
                layout,
                flags,
                field_off,
            })
            .collect()
    }

    /// The events of all windows, in window order, as one builder (see
    /// [`merge_builders`](super::merge_builders)). `parts` are the builders of this
    /// allocation's windows, in order.
    pub fn merge(mut self, mut parts: Vec<WindowedPart>) -> Result<EventTableBuilder, MergeError> {
        let ours = parts.len() == self.bounds.len()
            && parts.iter().enumerate().all(|(i, p)| p.owner == self.id && p.index == i);
        if !ours {
            return Err(MergeError::ForeignPart);
        }
        if let Some(e) = parts.iter_mut().find_map(|p| p.error.take()) {
            return Err(e.into());
        }
        let counts: Vec<usize> = parts.iter().map(|p| p.len).collect();
        let starts: Vec<usize> =
            self.bounds.iter().scan(0, |at, &b| Some(std::mem::replace(at, *at + b))).collect();
        let c = &mut self.columns;
        // Each column is compacted by its own task: a sequential move within one allocation.
        rayon::scope(|s| {
            let (starts, counts) = (&starts, &counts);
            let EventTableParts { ts, cpu, pid, comm, layout, flags, field_off, .. } = &mut *c;
            s.spawn(move |_| close_gaps(ts, starts, counts));
            s.spawn(move |_| close_gaps(cpu, starts, counts));
            s.spawn(move |_| close_gaps(pid, starts, counts));
            s.spawn(move |_| close_gaps(comm, starts, counts));
            s.spawn(move |_| close_gaps(layout, starts, counts));
            s.spawn(move |_| close_gaps(flags, starts, counts));
            s.spawn(move |_| close_gaps(field_off, starts, counts));
        });
        let total: usize = counts.iter().sum();
        // SAFETY: window i wrote slots `starts[i]..starts[i] + counts[i]` of every column (a
        // window's `len` counts the slots its `push` wrote, in order, nothing else changes
        // it, and `parts` were checked to be this allocation's windows, each once), and
        // `close_gaps` moved those slots to `dst[i]..dst[i] + counts[i]` with `dst[i]` the
        // sum of the counts before: together `0..total`, every slot initialised. The
        // capacity is the sum of the bounds ≥ total.
        #[allow(unsafe_code)]
        unsafe {
            c.ts.set_len(total);
            c.cpu.set_len(total);
            c.pid.set_len(total);
            c.comm.set_len(total);
            c.layout.set_len(total);
            c.flags.set_len(total);
            c.field_off.set_len(total);
        }
        let columns = std::mem::take(&mut self.columns);
        Ok(merge_columns(columns, counts, parts.into_iter().map(|p| p.part).collect())?)
    }
}

/// Moves each window's `counts[i]` slots from `starts[i]` down to the end of the window
/// before it (in order: a window only moves onto slots already moved or never written).
fn close_gaps<T: Copy>(column: &mut Vec<T>, starts: &[usize], counts: &[usize]) {
    let spare = column.spare_capacity_mut();
    let mut dst = 0;
    for (&start, &count) in starts.iter().zip(counts) {
        if start != dst {
            spare.copy_within(start..start + count, dst);
        }
        dst += count;
    }
}

#[cfg(test)]
mod tests {
    use super::super::merge::tests::builder_with;
    use super::super::merge_builders;
    use super::*;
    use latscope_model::{EventTable, FieldKind, FieldValue};

    /// Fills window `i` of `columns` with `events[i]` through a builder of its own.
    fn fill_windows(columns: &mut SharedColumns, events: &[Vec<(Ps, &str, i64)>]) -> Vec<WindowedPart> {
        columns
            .windows()
            .into_iter()
            .zip(events)
            .map(|(w, evs)| {
                let mut b = EventTableBuilder::with_sink(w);
                let irq = b.intern(b"irq");
                let name = b.intern(b"name");
                for &(ts, ev, n) in evs {
                    let comm = b.intern(format!("task{}", n % 3).as_bytes());
                    let e = b.intern(ev.as_bytes());
                    let l = b.layout(e, &[(irq, FieldKind::Int), (name, FieldKind::Str)]);
                    let s = b.intern(format!("dev{n}").as_bytes());
                    b.push(
                        ts,
                        n as u16,
                        n as i32,
                        comm,
                        IrqFlags::NONE,
                        l,
                        &[FieldValue::Int(n), FieldValue::Str(s)],
                    );
                    if n % 5 == 0 {
                        let frames = b.intern(format!("stack{n}").as_bytes());
                        assert!(b.attach_stack_to_last(frames));
                    }
                }
                WindowedPart::new(b)
            })
            .collect()
    }

    /// Event `i` as text: name, comm, fields and stack.
    fn text(t: &EventTable, s: &Interner, i: usize) -> (String, String, Vec<String>, Option<String>) {
        let e = t.get(i).expect("event");
        let fields: Vec<String> = e
            .fields()
            .map(|(n, v)| match v {
                FieldValue::Str(v) => format!("{}={}", s.resolve(n), s.resolve(v)),
                v => format!("{}={:?}", s.resolve(n), v.as_i64()),
            })
            .collect();
        let stack = e.stack().map(|st| s.resolve(st).into_owned());
        (s.resolve(e.name()).into_owned(), s.resolve(e.comm()).into_owned(), fields, stack)
    }

    #[test]
    fn windows_with_gaps_merge_into_the_same_table_as_one_window() {
        let evs: Vec<(Ps, String, i64)> = (0..500).map(|i| (i * 7, format!("ev{}", i % 11), i)).collect();
        let evs: Vec<(Ps, &str, i64)> = evs.iter().map(|(t, n, v)| (*t, n.as_str(), *v)).collect();
        // Parts of unequal sizes, one empty; every window but the full ones leaves a gap that
        // the merge closes.
        let cuts = [0, 40, 40, 41, 300, 500];
        let parts: Vec<Vec<_>> = cuts.windows(2).map(|w| evs[w[0]..w[1]].to_vec()).collect();
        let slack = [3, 0, 1, 100, 0];
        let bounds = parts.iter().zip(slack).map(|(p, s)| p.len() + s).collect();
        let mut columns = SharedColumns::new(bounds);
        let filled = fill_windows(&mut columns, &parts);
        assert_eq!(filled.iter().map(WindowedPart::len).collect::<Vec<_>>(), [40, 0, 1, 259, 200]);
        let (merged, strings) = columns.merge(filled).expect("merge").finish().expect("finish");

        let mut whole = SharedColumns::new(vec![evs.len()]);
        let one = fill_windows(&mut whole, std::slice::from_ref(&evs));
        let (whole, whole_strings) = whole.merge(one).expect("merge").finish().expect("finish");
        assert_eq!(merged.len(), 500);
        assert_eq!(merged.ts, whole.ts);
        assert_eq!(merged.cpu, whole.cpu);
        assert_eq!(merged.pid, whole.pid);
        for i in 0..500 {
            assert_eq!(text(&merged, &strings, i), text(&whole, &whole_strings, i), "event {i}");
        }
        assert_eq!(merged.stacks().len(), 100);
    }

    #[test]
    fn windows_and_owned_builders_merge_to_the_same_parts() {
        // The same events, parted the same way, through windows and through owned builders
        // (whose interners differ from the windows' only in the comm strings).
        let evs: Vec<(Ps, String, i64)> = (0..120).map(|i| (i * 3, format!("ev{}", i % 5), i)).collect();
        let evs: Vec<(Ps, &str, i64)> = evs.iter().map(|(t, n, v)| (*t, n.as_str(), *v)).collect();
        let parts: Vec<Vec<_>> = [0, 50, 51, 120].windows(2).map(|w| evs[w[0]..w[1]].to_vec()).collect();
        let mut columns = SharedColumns::new(parts.iter().map(|p| p.len() + 2).collect());
        let filled = fill_windows(&mut columns, &parts);
        let (windowed, ws) = columns.merge(filled).expect("merge").finish().expect("finish");
        let owned = parts.iter().map(|p| builder_with(p)).collect();
        let (owned, os) = merge_builders(owned).expect("merge").finish().expect("finish");
        assert_eq!(windowed.ts, owned.ts);
        for i in 0..evs.len() {
            let (w, o) = (text(&windowed, &ws, i), text(&owned, &os, i));
            assert_eq!((&w.0, &w.2), (&o.0, &o.2), "event {i}");
        }
    }

    #[test]
    fn windows_refuse_overflow_and_foreign_parts() {
        let evs = vec![(1, "a", 1), (2, "a", 2), (3, "a", 3)];
        // A window one slot short: the builder reports it instead of writing past it.
        let mut columns = SharedColumns::new(vec![2]);
        let filled = fill_windows(&mut columns, std::slice::from_ref(&evs));
        assert_eq!(filled[0].len(), 2);
        assert_eq!(columns.merge(filled).err(), Some(MergeError::Build(BuildError::SinkFull)));
        // Parts of other columns, missing or out of order are refused.
        let mut a = SharedColumns::new(vec![3, 3]);
        let mut b = SharedColumns::new(vec![3, 3]);
        let from_a = fill_windows(&mut a, &[evs.clone(), evs.clone()]);
        let mut from_b = fill_windows(&mut b, &[evs.clone(), evs.clone()]);
        assert_eq!(a.merge(from_b.drain(..1).collect()).err(), Some(MergeError::ForeignPart));
        let c = SharedColumns::new(vec![3, 3]);
        assert_eq!(c.merge(from_a).err(), Some(MergeError::ForeignPart));
        let mut d = SharedColumns::new(vec![3, 3]);
        let mut from_d = fill_windows(&mut d, &[evs.clone(), evs.clone()]);
        from_d.swap(0, 1);
        assert_eq!(d.merge(from_d).err(), Some(MergeError::ForeignPart));
    }
}

//! The events track: ftrace records (and simulator events) stored column by column.
//!
//! Per event: time (8 bytes), cpu (2), pid (4), comm (4), layout (4), irq flags (4) and an
//! offset into the field arena (4) — 30 bytes — plus its varint-encoded field values,
//! typically 1–3 bytes each. Events are sorted by time (stable: equal times keep file order).
//!
//! The columns are `SharedVec`s: a clone of a table shares their memory and reads the rows
//! that were there when it was made, while the table it came from goes on appending (a live
//! source's snapshots cost what is new); a clone that is changed copies first.

use crate::builder::EventRow;
use crate::field_encoding::decode_value;
use crate::fields::{FieldValue, Layout, LayoutId};
use crate::flags::IrqFlags;
use crate::intern::Sym;
use crate::time::Ps;
use latscope_shared::SharedVec;
use rustc_hash::FxHashMap;

/// Runs `$body` once for each per-event column of `$table` (an `&mut EventTable`), with `$c`
/// bound to that column (`&mut SharedVec<_>`). The columns have different types, so no loop can
/// visit them; the fields are borrowed one by one, so a body may keep its column.
macro_rules! each_column {
    ($table:expr, |$c:ident| $body:expr) => {{
        let table: &mut EventTable = $table;
        let EventTable { ts, cpu, pid, comm, layout, flags, field_off, .. } = table;
        each_column!(@visit [ts, cpu, pid, comm, layout, flags, field_off], |$c| $body);
    }};
    (@visit [$($column:ident),*], |$c:ident| $body:expr) => {
        $({
            let $c = $column;
            $body;
        })*
    };
}

/// Columnar events with their own string and layout tables.
#[derive(Debug, Clone, Default)]
pub struct EventTable {
    pub ts: SharedVec<Ps>,
    pub cpu: SharedVec<u16>,
    pub pid: SharedVec<i32>,
    pub comm: SharedVec<Sym>,
    pub layout: SharedVec<LayoutId>,
    pub flags: SharedVec<IrqFlags>,
    pub(crate) field_off: SharedVec<u32>,
    pub(crate) field_data: SharedVec<u8>,
    pub(crate) layouts: Vec<Layout>,
    /// Stack traces attached to events: (event index, interned frames joined by '\n').
    pub(crate) stacks: Vec<(u32, Sym)>,
}

/// One event, borrowed from its table.
#[derive(Debug, Clone, Copy)]
pub struct EventRef<'a> {
    table: &'a EventTable,
    pub index: usize,
}

impl<'a> EventRef<'a> {
    pub fn ts(&self) -> Ps {
        self.table.ts[self.index]
    }
    pub fn cpu(&self) -> u16 {
        self.table.cpu[self.index]
    }
    pub fn pid(&self) -> i32 {
        self.table.pid[self.index]
    }
    pub fn comm(&self) -> Sym {
        self.table.comm[self.index]
    }
    pub fn flags(&self) -> IrqFlags {
        self.table.flags[self.index]
    }
    pub fn layout(&self) -> &'a Layout {
        self.table.layout_of(self.index)
    }
    pub fn name(&self) -> Sym {
        self.layout().event
    }
    /// Field values in layout order.
    pub fn fields(&self) -> impl Iterator<Item = (Sym, FieldValue)> + 'a {
        let layout = self.layout();
        let data = &self.table.field_data;
        let mut pos = self.table.field_off[self.index] as usize;
        layout.fields.iter().map(move |&(name, kind)| (name, decode_value(data, &mut pos, kind)))
    }
    pub fn field(&self, name: Sym) -> Option<FieldValue> {
        let idx = self.layout().field_index(name)?;
        self.fields().nth(idx).map(|(_, v)| v)
    }
    pub fn stack(&self) -> Option<Sym> {
        self.table.stack_of(self.index)
    }
}

impl EventTable {
    pub fn len(&self) -> usize {
        self.ts.len()
    }

    /// Whether this table is `earlier` with rows appended and nothing else changed: every
    /// column still shares `earlier`'s memory (a writer copies before changing a row a
    /// clone can read, and when it outgrows its buffer), and `earlier`'s layouts and
    /// stacks come first. `earlier` must be held (a clone kept) for the answer to hold:
    /// it is what makes a change copy. A `false` may be a table that only moved to a
    /// larger buffer; a reader then reads it from its beginning.
    pub fn extends(&self, earlier: &EventTable) -> bool {
        // An empty arena holds nothing a clone reads: its writer may have moved to a first
        // buffer of its own.
        let arena = earlier.field_data.is_empty() || self.field_data.shares_memory_with(&earlier.field_data);
        self.rows_share_memory_with(earlier)
            && arena
            && self.len() >= earlier.len()
            && self.field_data.len() >= earlier.field_data.len()
            && self.layouts.get(..earlier.layouts.len()) == Some(&earlier.layouts[..])
            && self.stacks.get(..earlier.stacks.len()) == Some(&earlier.stacks[..])
    }
    pub fn is_empty(&self) -> bool {
        self.ts.is_empty()
    }
    pub fn get(&self, index: usize) -> Option<EventRef<'_>> {
        (index < self.len()).then_some(EventRef { table: self, index })
    }
    pub fn iter(&self) -> impl Iterator<Item = EventRef<'_>> {
        (0..self.len()).map(move |index| EventRef { table: self, index })
    }
    pub fn layouts(&self) -> &[Layout] {
        &self.layouts
    }
    pub fn layout_of(&self, index: usize) -> &Layout {
        &self.layouts[self.layout[index].0 as usize]
    }
    pub fn stacks(&self) -> &[(u32, Sym)] {
        &self.stacks
    }
    pub fn stack_of(&self, index: usize) -> Option<Sym> {
        let i = self.stacks.binary_search_by_key(&(index as u32), |s| s.0).ok()?;
        Some(self.stacks[i].1)
    }

    /// Index of the first event at or after `t`.
    pub fn lower_bound(&self, t: Ps) -> usize {
        self.ts.partition_point(|&x| x < t)
    }

    /// Index range of the events in `[from, to)`.
    pub fn range(&self, from: Ps, to: Ps) -> std::ops::Range<usize> {
        self.lower_bound(from)..self.lower_bound(to).max(self.lower_bound(from))
    }

    /// Whether every column reads the same memory as `other`'s: a clone of a growing table
    /// shares it (it costs no copy), and reads the rows that were there when it was made.
    pub fn shares_memory_with(&self, other: &EventTable) -> bool {
        self.rows_share_memory_with(other) && self.field_data.shares_memory_with(&other.field_data)
    }

    /// Whether every per-event column (all but the field arena) reads `other`'s memory.
    fn rows_share_memory_with(&self, other: &EventTable) -> bool {
        self.ts.shares_memory_with(&other.ts)
            && self.cpu.shares_memory_with(&other.cpu)
            && self.pid.shares_memory_with(&other.pid)
            && self.comm.shares_memory_with(&other.comm)
            && self.layout.shares_memory_with(&other.layout)
            && self.flags.shares_memory_with(&other.flags)
            && self.field_off.shares_memory_with(&other.field_off)
    }

    /// Heap bytes held by the columns and the field arena (not the interner).
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        self.ts.capacity() * size_of::<Ps>()
            + self.cpu.capacity() * 2
            + self.pid.capacity() * 4
            + self.comm.capacity() * 4
            + self.layout.capacity() * 4
            + self.flags.capacity() * 4
            + self.field_off.capacity() * 4
            + self.field_data.capacity()
            + self.stacks.capacity() * 8
            + self.layouts.iter().map(|l| 16 + l.fields.capacity() * 8).sum::<usize>()
    }

    /// Number of events per layout event name, in order of first appearance.
    pub fn counts_by_name(&self) -> Vec<(Sym, u64)> {
        let mut per_layout = vec![0u64; self.layouts.len()];
        for l in &self.layout {
            per_layout[l.0 as usize] += 1;
        }
        let mut order: Vec<(Sym, u64)> = Vec::new();
        let mut index: FxHashMap<Sym, usize> = FxHashMap::default();
        for (layout, n) in self.layouts.iter().zip(per_layout) {
            if n == 0 {
                continue;
            }
            match index.get(&layout.event) {
                Some(&i) => order[i].1 += n,
                None => {
                    index.insert(layout.event, order.len());
                    order.push((layout.event, n));
                }
            }
        }
        order
    }

    /// Releases the growth slack of every column: a finished table is read-only, and the
    /// slack of doubling vectors would otherwise cost up to half of its memory.
    pub fn shrink_to_fit(&mut self) {
        each_column!(self, |c| c.shrink_to_fit());
        self.field_data.shrink_to_fit();
        self.stacks.shrink_to_fit();
    }

    /// Bytes of field values (the varint arena), for memory accounting.
    pub fn field_bytes(&self) -> usize {
        self.field_data.len()
    }

    pub fn is_sorted(&self) -> bool {
        self.ts.windows(2).all(|w| w[0] <= w[1])
    }

    /// Stable sort by time. Field bytes stay where they are; only offsets move.
    pub fn sort_by_time(&mut self) {
        if self.is_sorted() {
            return;
        }
        let mut order: Vec<u32> = (0..self.len() as u32).collect();
        order.sort_by_key(|&i| self.ts[i as usize]);
        fn permute<T: Copy>(v: &mut SharedVec<T>, order: &[u32]) {
            *v = order.iter().map(|&i| v[i as usize]).collect();
        }
        each_column!(self, |c| permute(c, &order));
        if !self.stacks.is_empty() {
            let mut new_index = vec![0u32; order.len()];
            for (new, &old) in order.iter().enumerate() {
                new_index[old as usize] = new as u32;
            }
            for s in &mut self.stacks {
                s.0 = new_index[s.0 as usize];
            }
            self.stacks.sort_by_key(|s| s.0);
        }
    }

    /// Appends one event's row to the columns.
    // Always inlined: called once per event, and a call (the row passed through memory)
    // cost 2% of a trace.dat import's instructions.
    #[inline(always)]
    pub(crate) fn push_row(&mut self, row: EventRow) {
        self.ts.push(row.ts);
        self.cpu.push(row.cpu);
        self.pid.push(row.pid);
        self.comm.push(row.comm);
        self.flags.push(row.flags);
        self.layout.push(row.layout);
        self.field_off.push(row.field_off);
    }

    /// Room for `rows` more rows in every column.
    pub(crate) fn reserve_rows(&mut self, rows: usize) {
        each_column!(self, |c| c.reserve(rows));
    }

    /// A table from its parts, checked: the columns are equally long, every row names a
    /// layout of `layouts` and a field offset within `field_data`, and stacks name rows in
    /// ascending order. (Field values are not decoded: a value cut short by the end of the
    /// arena reads as what is there, never out of bounds.)
    pub fn from_parts(parts: EventTableParts) -> Result<EventTable, BuildError> {
        let EventTableParts { ts, cpu, pid, comm, layout, flags, field_off, field_data, layouts, stacks } =
            parts;
        let rows = ts.len();
        let lengths = [cpu.len(), pid.len(), comm.len(), layout.len(), flags.len(), field_off.len()];
        if lengths.iter().any(|&n| n != rows) {
            return Err(BuildError::Inconsistent(format!(
                "{rows} times but {lengths:?} cpus, pids, comms, layouts, flags and field offsets"
            )));
        }
        // The largest value first (one pass that vectorises); the row only on failure.
        if layout.iter().fold(0, |m, l| m.max(l.0)) as usize >= layouts.len() && !layout.is_empty() {
            let row = layout.iter().position(|l| l.0 as usize >= layouts.len()).unwrap_or_default();
            return Err(BuildError::Inconsistent(format!(
                "row {row} names layout {} of {}",
                layout[row].0,
                layouts.len()
            )));
        }
        if field_off.iter().fold(0, |m, &o| m.max(o)) as usize > field_data.len() {
            let row = field_off.iter().position(|&o| o as usize > field_data.len()).unwrap_or_default();
            return Err(BuildError::Inconsistent(format!(
                "row {row} has field offset {} past the {} bytes of field data",
                field_off[row],
                field_data.len()
            )));
        }
        let ascending = stacks.windows(2).all(|w| w[0].0 < w[1].0);
        if !ascending || stacks.last().is_some_and(|s| s.0 as usize >= rows) {
            return Err(BuildError::Inconsistent(format!(
                "stacks must name rows below {rows} in ascending order, once each"
            )));
        }
        Ok(EventTable {
            ts: ts.into(),
            cpu: cpu.into(),
            pid: pid.into(),
            comm: comm.into(),
            layout: layout.into(),
            flags: flags.into(),
            field_off: field_off.into(),
            field_data: field_data.into(),
            layouts,
            stacks,
        })
    }

    /// The rows `keep` says yes to, in order, as a table of their own. The field arena
    /// and layouts are shared, not copied: the rows' offsets still point into it (rows
    /// left out keep their bytes there), so this costs the kept rows' columns only.
    pub fn retain_rows(&self, mut keep: impl FnMut(usize) -> bool) -> EventTable {
        let kept: Vec<usize> = (0..self.len()).filter(|&i| keep(i)).collect();
        fn column<T: Copy>(c: &SharedVec<T>, rows: &[usize]) -> SharedVec<T> {
            rows.iter().map(|&i| c[i]).collect::<Vec<T>>().into()
        }
        // A stack stays with its row, at the row's new index.
        let stacks = self
            .stacks
            .iter()
            .filter_map(|&(row, frames)| {
                let at = kept.binary_search(&(row as usize)).ok()?;
                Some((u32::try_from(at).ok()?, frames))
            })
            .collect();
        EventTable {
            ts: column(&self.ts, &kept),
            cpu: column(&self.cpu, &kept),
            pid: column(&self.pid, &kept),
            comm: column(&self.comm, &kept),
            layout: column(&self.layout, &kept),
            flags: column(&self.flags, &kept),
            field_off: column(&self.field_off, &kept),
            field_data: self.field_data.clone(),
            layouts: self.layouts.clone(),
            stacks,
        }
    }

    /// The table's vectors, moved out (see [`EventTableParts`]).
    pub fn into_parts(self) -> EventTableParts {
        let EventTable { ts, cpu, pid, comm, layout, flags, field_off, field_data, layouts, stacks } = self;
        EventTableParts {
            ts: ts.into_vec(),
            cpu: cpu.into_vec(),
            pid: pid.into_vec(),
            comm: comm.into_vec(),
            layout: layout.into_vec(),
            flags: flags.into_vec(),
            field_off: field_off.into_vec(),
            field_data: field_data.into_vec(),
            layouts,
            stacks,
        }
    }
}

/// An [`EventTable`] as plain vectors: what [`EventTable::into_parts`] gives and
/// [`EventTable::from_parts`] checks and takes.
///
/// Row `i` is element `i` of each column. Its field values start at byte `field_off[i]` of
/// `field_data`, one value per field of layout `layouts[layout[i]]`, in the encoding of
/// [`crate::field_encoding`]. Symbols (comms, event and field names, string values) are
/// those of the interner the table came with.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventTableParts {
    pub ts: Vec<Ps>,
    pub cpu: Vec<u16>,
    pub pid: Vec<i32>,
    pub comm: Vec<Sym>,
    pub layout: Vec<LayoutId>,
    pub flags: Vec<IrqFlags>,
    pub field_off: Vec<u32>,
    pub field_data: Vec<u8>,
    pub layouts: Vec<Layout>,
    /// Stack traces: (row, interned frames joined by '\n'), rows ascending.
    pub stacks: Vec<(u32, Sym)>,
}

/// Errors building an event table.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BuildError {
    #[error("field data exceeds 4 GiB; the trace is too large for one event table")]
    ArenaFull,
    #[error("an event sink had no room for an event, so the event was dropped")]
    SinkFull,
    #[error("inconsistent event table parts: {0}")]
    Inconsistent(String),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EventTableBuilder;
    use crate::fields::FieldKind;

    /// One event per `(time, name)`, with one integer field: its index.
    fn builder_of(events: &[(Ps, &str)]) -> EventTableBuilder {
        let mut b = EventTableBuilder::new();
        let index = b.intern(b"index");
        for (i, &(ts, name)) in events.iter().enumerate() {
            let ev = b.intern(name.as_bytes());
            let l = b.layout(ev, &[(index, FieldKind::Int)]);
            b.push(ts, 0, i as i32, ev, IrqFlags::NONE, l, &[FieldValue::Int(i as i64)]);
        }
        b
    }

    /// The rows kept are the same events, fields and stacks at their new places; the
    /// arena is the original's.
    #[test]
    fn rows_retained_keep_their_fields_and_stacks() {
        let mut b = builder_of(&[(10, "a"), (20, "b"), (30, "a"), (40, "c")]);
        let frames = b.intern(b"f1\nf2");
        let index = b.intern(b"index");
        // A stack on the last row, which is kept, and none on those left out.
        assert!(b.attach_stack_to_last(frames));
        let table = b.table().clone();
        let kept = table.retain_rows(|i| i != 1);
        assert_eq!(kept.len(), 3);
        assert_eq!(&kept.ts[..], &[10, 30, 40]);
        let fields: Vec<Option<FieldValue>> = kept.iter().map(|e| e.field(index)).collect();
        assert_eq!(fields, [Some(FieldValue::Int(0)), Some(FieldValue::Int(2)), Some(FieldValue::Int(3))]);
        assert_eq!(kept.stack_of(2), Some(frames));
        assert_eq!(kept.stack_of(1), None);
        assert!(kept.field_data.shares_memory_with(&table.field_data));
        assert!(table.retain_rows(|_| false).is_empty());
    }

    /// A table that only grew extends its clone; one changed in place, sorted again or
    /// built apart does not.
    #[test]
    fn a_grown_table_extends_its_clone_and_a_changed_one_does_not() {
        let mut b = builder_of(&[(1, "a"), (2, "b")]);
        let before = b.table().clone();
        let index = b.intern(b"index");
        let c = b.intern(b"c");
        let l = b.layout(c, &[(index, FieldKind::Int)]);
        b.push(3, 0, 9, c, IrqFlags::NONE, l, &[FieldValue::Int(2)]);
        assert!(b.table().extends(&before), "rows and a layout appended");
        assert!(before.extends(&before.clone()), "a clone extends itself");
        assert!(!before.extends(b.table()), "a shorter table extends nothing longer");
        let mut changed = b.table().clone();
        changed.pid.as_mut_slice()[0] = 42;
        assert!(!changed.extends(&before), "a row changed: copied, so no longer shared");
        let apart = builder_of(&[(1, "a"), (2, "b")]);
        assert!(!apart.table().extends(&before), "the same rows built apart");
    }

    /// The former definition, by searching each column's character list.
    #[test]
    fn fixed_cost_per_event_is_30_bytes() {
        let b = builder_of(&[(1, "e"); 1000]);
        let (t, _) = b.finish().expect("finish");
        let per_event = (t.heap_bytes() - t.field_data.capacity()) as f64 / 1000.0;
        assert!((30.0..30.2).contains(&per_event), "{per_event}");
    }

    #[test]
    fn parts_round_trip_and_are_checked() {
        let mut b = builder_of(&[(3, "a"), (1, "b"), (2, "a")]);
        assert!(b.attach_stack_to_last(Sym(0)));
        let (t, _) = b.finish().expect("finish");
        let parts = t.clone().into_parts();
        let back = EventTable::from_parts(parts.clone()).expect("the parts of a table are consistent");
        assert_eq!(back.clone().into_parts(), parts);
        assert_eq!(back.stack_of(1), Some(Sym(0)), "stacks follow their event through the sort");

        let broken = |f: &dyn Fn(&mut EventTableParts)| {
            let mut p = parts.clone();
            f(&mut p);
            match EventTable::from_parts(p) {
                Err(BuildError::Inconsistent(why)) => why,
                other => panic!("accepted broken parts: {other:?}"),
            }
        };
        assert!(
            broken(&|p| {
                p.pid.pop();
            })
            .contains("3 times but [3, 2,")
        );
        assert_eq!(broken(&|p| p.layout[2] = LayoutId(2)), "row 2 names layout 2 of 2");
        let past = broken(&|p| p.field_off[1] = 100);
        assert!(past.starts_with("row 1 has field offset 100 past the"), "{past}");
        broken(&|p| p.stacks = vec![(3, Sym(0))]);
        broken(&|p| p.stacks = vec![(1, Sym(0)), (1, Sym(0))]);
        // An offset at the very end is an event whose fields are all empty: allowed.
        let mut end = parts.clone();
        end.field_off[0] = end.field_data.len() as u32;
        assert!(EventTable::from_parts(end).is_ok());
    }
}

//! Building an [`EventTable`]: interning strings, interning layouts, encoding field values
//! into the arena and attaching stacks, event by event.
//!
//! Each event's fixed-size columns (its [`EventRow`]) go into the builder's own table, or,
//! for a builder made with [`EventTableBuilder::with_sink`], into an [`EventSink`] that the
//! caller owns (an importer can write rows straight into memory it allocated for them).
//! Strings, layouts, field values and stacks stay in the builder either way;
//! [`EventTableBuilder::into_parts`] hands everything over as plain vectors, and
//! [`EventTableBuilder::from_table`] continues from a finished or reassembled table.

use crate::events::{BuildError, EventTable, EventTableParts};
use crate::field_encoding::encode_value;
use crate::fields::{FieldKind, FieldValue, Layout, LayoutId};
use crate::flags::IrqFlags;
use crate::intern::{Interner, Sym};
use crate::time::Ps;
use rustc_hash::FxHashMap;

/// One event's fixed-size columns, as a builder hands them to its sink. `field_off` is where
/// the event's field values start in the builder's field arena.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventRow {
    pub ts: Ps,
    pub cpu: u16,
    pub pid: i32,
    pub comm: Sym,
    pub flags: IrqFlags,
    pub layout: LayoutId,
    pub field_off: u32,
}

/// Where an [`EventTableBuilder`] made with [`EventTableBuilder::with_sink`] stores its rows.
///
/// The builder pushes one row per event, in order, and counts its events with
/// [`EventSink::len`]: stack traces are attached to row `len() - 1`.
pub trait EventSink {
    /// Stores `row` as row number `self.len()`. Returns `false`, having stored nothing, when
    /// there is no room: the builder then drops the event and reports
    /// [`BuildError::SinkFull`].
    fn push(&mut self, row: EventRow) -> bool;
    /// Rows stored so far.
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// A hint that about `additional` more rows will come.
    fn reserve(&mut self, _additional: usize) {}
}

/// The sink type of a builder that keeps its rows in its own table (the default). It has
/// no values: such a builder never holds a sink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InTable {}

impl EventSink for InTable {
    fn push(&mut self, _row: EventRow) -> bool {
        match *self {}
    }
    fn len(&self) -> usize {
        match *self {}
    }
}

/// Fills an [`EventTable`]: the simulator and importers push events one by one, then
/// [`finish`](EventTableBuilder::finish) sorts them by time.
///
/// `S` is where the rows go: [`InTable`] (the default, [`EventTableBuilder::new`]) keeps
/// them in the builder; any other [`EventSink`] receives them
/// ([`EventTableBuilder::with_sink`]), and the builder is then taken apart with
/// [`EventTableBuilder::into_parts`].
#[derive(Debug)]
pub struct EventTableBuilder<S: EventSink = InTable> {
    /// Field values, layouts and stacks; the rows too unless `sink` holds them.
    table: EventTable,
    /// Always `None` for [`InTable`], always `Some` otherwise.
    sink: Option<S>,
    pub interner: Interner,
    layout_ids: FxHashMap<Layout, LayoutId>,
    /// Where each string value starts in the field arena, in row order: code that renumbers
    /// symbols rewrites them there without decoding every event's fields.
    str_at: Vec<u32>,
    /// `str_at` does not list the string values of events the builder did not push itself
    /// (it was made [`from_table`](EventTableBuilder::from_table)).
    str_at_lost: bool,
    arena_full: bool,
    sink_full: bool,
}

impl Default for EventTableBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl EventTableBuilder {
    /// An empty builder that keeps its rows.
    pub fn new() -> Self {
        Self::empty(None)
    }

    /// A builder that continues `table` (its rows, field values, layouts and stacks, in
    /// `interner`'s symbols). The positions of its string values are not known:
    /// [`string_positions`](EventTableBuilder::string_positions) is `None` from then on.
    pub fn from_table(table: EventTable, interner: Interner) -> Self {
        let layout_ids =
            table.layouts.iter().enumerate().map(|(i, l)| (l.clone(), LayoutId(i as u32))).collect();
        EventTableBuilder { table, interner, layout_ids, str_at_lost: true, ..Self::new() }
    }

    /// The table so far (in push order, not yet sorted).
    pub fn table(&self) -> &EventTable {
        &self.table
    }

    /// Names every row's task again: `name_of(pid)` is the name its rows get (a recording's
    /// task names as the last `saved_cmdlines` gives them). Returns how many rows changed;
    /// the column is copied first if a clone shares it, and only then.
    pub fn rename_tasks<'n>(&mut self, mut name_of: impl FnMut(i32) -> &'n [u8]) -> usize {
        let mut sym_of: FxHashMap<i32, Sym> = FxHashMap::default();
        let mut changed = Vec::new();
        for (i, (&pid, &comm)) in self.table.pid.iter().zip(self.table.comm.iter()).enumerate() {
            let sym = *sym_of.entry(pid).or_insert_with(|| self.interner.intern(name_of(pid)));
            if sym != comm {
                changed.push((i, sym));
            }
        }
        if !changed.is_empty() {
            let comms = self.table.comm.as_mut_slice();
            for &(i, sym) in &changed {
                comms[i] = sym;
            }
        }
        changed.len()
    }

    /// The finished table (sorted by time) and its strings.
    pub fn finish(self) -> Result<(EventTable, Interner), BuildError> {
        self.check()?;
        let mut table = self.table;
        table.sort_by_time();
        table.shrink_to_fit();
        Ok((table, self.interner))
    }
}

impl<S: EventSink> EventTableBuilder<S> {
    /// An empty builder whose rows go into `sink` (which should be empty).
    pub fn with_sink(sink: S) -> Self {
        Self::empty(Some(sink))
    }

    fn empty(sink: Option<S>) -> Self {
        EventTableBuilder {
            table: EventTable::default(),
            sink,
            interner: Interner::default(),
            layout_ids: FxHashMap::default(),
            str_at: Vec::new(),
            str_at_lost: false,
            arena_full: false,
            sink_full: false,
        }
    }

    pub fn intern(&mut self, s: &[u8]) -> Sym {
        self.interner.intern(s)
    }

    /// The id of a layout, adding it if new. Importers cache the ids of the layouts they use.
    pub fn layout(&mut self, event: Sym, fields: &[(Sym, FieldKind)]) -> LayoutId {
        let key = Layout { event, fields: fields.to_vec() };
        if let Some(&id) = self.layout_ids.get(&key) {
            return id;
        }
        let id = LayoutId(self.table.layouts.len() as u32);
        self.table.layouts.push(key.clone());
        self.layout_ids.insert(key, id);
        id
    }

    pub fn layout_def(&self, id: LayoutId) -> Option<&Layout> {
        self.table.layouts.get(id.0 as usize)
    }

    /// Reserves room for `events` more events with `field_bytes` of field values, so a
    /// parser that can estimate its output does not pay for repeated growth.
    pub fn reserve(&mut self, events: usize, field_bytes: usize) {
        self.table.field_data.reserve(field_bytes);
        match &mut self.sink {
            Some(sink) => sink.reserve(events),
            None => self.table.reserve_rows(events),
        }
    }

    /// Appends an event. `values` must match the layout's kinds (checked in debug builds).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn push(
        &mut self,
        ts: Ps,
        cpu: u16,
        pid: i32,
        comm: Sym,
        flags: IrqFlags,
        layout: LayoutId,
        values: &[FieldValue],
    ) {
        debug_assert!(self.table.layouts.get(layout.0 as usize).is_some_and(|l| {
            l.fields.len() == values.len() && l.fields.iter().zip(values).all(|(f, v)| f.1.holds(*v))
        }));
        let off = self.table.field_data.len();
        let Ok(field_off) = u32::try_from(off) else {
            self.arena_full = true;
            return;
        };
        let strings_before = self.str_at.len();
        for &v in values {
            if let FieldValue::Str(_) = v {
                match u32::try_from(self.table.field_data.len()) {
                    Ok(at) => self.str_at.push(at),
                    Err(_) => self.arena_full = true,
                }
            }
            encode_value(&mut self.table.field_data, v);
        }
        let row = EventRow { ts, cpu, pid, comm, flags, layout, field_off };
        match &mut self.sink {
            None => self.table.push_row(row),
            Some(sink) => {
                if !sink.push(row) {
                    self.sink_full = true;
                    self.table.field_data.truncate(off);
                    self.str_at.truncate(strings_before);
                }
            }
        }
    }

    /// Attaches a stack trace to the most recent event (if any).
    pub fn attach_stack_to_last(&mut self, frames: Sym) -> bool {
        let Some(last) = self.len().checked_sub(1) else { return false };
        let last = last as u32;
        match self.table.stacks.last_mut() {
            Some(s) if s.0 == last => s.1 = frames,
            _ => self.table.stacks.push((last, frames)),
        }
        true
    }

    /// Events pushed (and kept) so far.
    pub fn len(&self) -> usize {
        self.sink.as_ref().map_or(self.table.len(), S::len)
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Where each string value starts in the field arena, in row order; `None` for a builder
    /// made [`from_table`](EventTableBuilder::from_table).
    pub fn string_positions(&self) -> Option<&[u32]> {
        (!self.str_at_lost).then_some(&self.str_at[..])
    }

    /// Whether every pushed event was kept: the field arena stayed under 4 GiB and the sink
    /// had room.
    pub fn check(&self) -> Result<(), BuildError> {
        if self.arena_full {
            return Err(BuildError::ArenaFull);
        }
        if self.sink_full {
            return Err(BuildError::SinkFull);
        }
        Ok(())
    }

    /// Everything built so far, unsorted, as plain vectors.
    pub fn into_parts(self) -> BuilderParts<S> {
        let error = self.check().err();
        BuilderParts {
            sink: self.sink,
            table: self.table.into_parts(),
            interner: self.interner,
            string_positions: (!self.str_at_lost).then_some(self.str_at),
            error,
        }
    }
}

/// An [`EventTableBuilder`] taken apart ([`EventTableBuilder::into_parts`]).
#[derive(Debug)]
pub struct BuilderParts<S> {
    /// The sink that holds the rows; `None` when they are in `table`'s columns.
    pub sink: Option<S>,
    /// The columns (empty when `sink` holds the rows), field values, layouts and stacks.
    pub table: EventTableParts,
    /// The strings `table` refers to.
    pub interner: Interner,
    /// Where each string value starts in `table.field_data`, in row order; `None` when not
    /// known (read them through the layouts then).
    pub string_positions: Option<Vec<u32>>,
    /// Why the builder dropped events, if it did: the parts then lack them.
    pub error: Option<BuildError>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sink with room for `cap` rows.
    #[derive(Debug, Default)]
    struct Bounded {
        rows: Vec<EventRow>,
        cap: usize,
    }

    impl EventSink for Bounded {
        fn push(&mut self, row: EventRow) -> bool {
            if self.rows.len() == self.cap {
                return false;
            }
            self.rows.push(row);
            true
        }
        fn len(&self) -> usize {
            self.rows.len()
        }
    }

    fn fill<S: EventSink>(b: &mut EventTableBuilder<S>, n: i64) {
        let ev = b.intern(b"ev");
        let key = b.intern(b"k");
        let name = b.intern(b"name");
        let l = b.layout(ev, &[(key, FieldKind::Int), (name, FieldKind::Str)]);
        for i in 0..n {
            let s = b.intern(format!("s{i}").as_bytes());
            b.push(10 - i, i as u16, 7, ev, IrqFlags::NONE, l, &[FieldValue::Int(-i), FieldValue::Str(s)]);
            if i == 1 {
                assert!(b.attach_stack_to_last(name));
            }
        }
    }

    /// Rows named before their task's name was known are named again; a clone made
    /// before keeps the names it saw.
    #[test]
    fn renaming_tasks_changes_only_the_rows_whose_name_differs() {
        let mut b = EventTableBuilder::new();
        let (ev, unknown, sh) = (b.intern(b"ev"), b.intern(b"<...>"), b.intern(b"sh"));
        let l = b.layout(ev, &[]);
        for (pid, comm) in [(7, unknown), (8, sh), (7, unknown), (0, unknown)] {
            b.push(pid.into(), 0, pid, comm, IrqFlags::NONE, l, &[]);
        }
        let held = b.table().clone();
        let names = |pid: i32| -> &'static [u8] {
            match pid {
                7 => b"dd",
                8 => b"sh",
                _ => b"<idle>",
            }
        };
        assert_eq!(b.rename_tasks(names), 3, "pid 7 twice and pid 0; pid 8 was already sh");
        let shown = |t: &EventTable, i: &Interner| -> Vec<String> {
            t.comm.iter().map(|&c| i.resolve(c).into_owned()).collect()
        };
        assert_eq!(shown(b.table(), &b.interner), ["dd", "sh", "dd", "<idle>"]);
        assert_eq!(
            shown(&held, &b.interner),
            ["<...>", "sh", "<...>", "<...>"],
            "the clone's column is its own"
        );
        assert_eq!(b.rename_tasks(names), 0, "nothing left to rename");
    }

    #[test]
    fn a_sink_gets_the_rows_and_the_builder_keeps_the_rest() {
        let mut own = EventTableBuilder::new();
        fill(&mut own, 3);
        let mut sunk = EventTableBuilder::with_sink(Bounded { cap: 3, ..Bounded::default() });
        fill(&mut sunk, 3);
        assert_eq!((own.len(), sunk.len()), (3, 3));
        let own = own.into_parts();
        let sunk = sunk.into_parts();
        let rows = sunk.sink.map(|s| s.rows).unwrap_or_default();
        assert_eq!(rows.iter().map(|r| r.ts).collect::<Vec<_>>(), own.table.ts);
        assert_eq!(rows.iter().map(|r| r.field_off).collect::<Vec<_>>(), own.table.field_off);
        assert_eq!(rows.iter().map(|r| r.cpu).collect::<Vec<_>>(), own.table.cpu);
        assert!(sunk.table.ts.is_empty() && sunk.table.field_off.is_empty());
        assert_eq!(sunk.table.field_data, own.table.field_data);
        assert_eq!(sunk.table.stacks, [(1, Sym(2))]);
        assert_eq!((sunk.error, own.error), (None, None));
        // Each string value starts where its symbol is encoded.
        let at = own.string_positions.unwrap_or_default();
        assert_eq!(at.len(), 3);
        for (i, &p) in at.iter().enumerate() {
            let mut pos = p as usize;
            let v = crate::field_encoding::decode_value(&own.table.field_data, &mut pos, FieldKind::Str);
            assert_eq!(
                v,
                FieldValue::Str(own.interner.lookup(format!("s{i}").as_bytes()).unwrap_or_default())
            );
        }
    }

    #[test]
    fn a_full_sink_drops_the_event_and_says_so() {
        let mut b = EventTableBuilder::with_sink(Bounded { cap: 2, ..Bounded::default() });
        fill(&mut b, 3);
        assert_eq!(b.len(), 2);
        assert_eq!(b.check(), Err(BuildError::SinkFull));
        let parts = b.into_parts();
        assert_eq!(parts.error, Some(BuildError::SinkFull));
        // The dropped event's field values and string position are gone with it.
        assert_eq!(parts.string_positions.map(|p| p.len()), Some(2));
        let last = parts.sink.and_then(|s| s.rows.last().copied()).map(|r| r.field_off);
        assert_eq!(last.map(|o| o as usize + 3), Some(parts.table.field_data.len()));
    }

    #[test]
    fn a_builder_continues_a_table() {
        let mut b = EventTableBuilder::new();
        fill(&mut b, 3);
        let (t, strings) = b.finish().expect("finish");
        let mut more = EventTableBuilder::from_table(t, strings);
        assert_eq!(more.string_positions(), None);
        let ev = more.intern(b"ev");
        let k = more.intern(b"k");
        let name = more.intern(b"name");
        // The same layout gets the same id; a new one the next.
        assert_eq!(more.layout(ev, &[(k, FieldKind::Int), (name, FieldKind::Str)]), LayoutId(0));
        let other = more.layout(ev, &[]);
        assert_eq!(other, LayoutId(1));
        more.push(0, 0, 0, ev, IrqFlags::NONE, other, &[]);
        let (t, _) = more.finish().expect("finish");
        assert_eq!(t.ts, [0, 8, 9, 10]);
        assert_eq!(t.stack_of(2), Some(name), "the stack moved with its event");
    }
}

//! The events track: ftrace records (and simulator events) stored column by column.
//!
//! Per event: time (8 bytes), cpu (2), pid (4), comm (4), layout (4), irq flags (4) and an
//! offset into the field arena (4) — 30 bytes — plus its varint-encoded field values,
//! typically 1–3 bytes each. Events are sorted by time (stable: equal times keep file order).

use super::fields::{
    FieldKind, FieldValue, Layout, LayoutId, decode_value, encode_value, get_varint, skip_varint, str_len,
    write_varint_exact,
};
use super::flags::IrqFlags;
use super::intern::{Interner, Sym};
use super::time::Ps;
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicU64, Ordering};

/// Runs `$body` once for each per-event column of `$table` (an `&mut EventTable`), with `$c`
/// bound to that column (`&mut Vec<_>`). The columns have different types, so no loop can
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
    pub ts: Vec<Ps>,
    pub cpu: Vec<u16>,
    pub pid: Vec<i32>,
    pub comm: Vec<Sym>,
    pub layout: Vec<LayoutId>,
    pub flags: Vec<IrqFlags>,
    field_off: Vec<u32>,
    field_data: Vec<u8>,
    layouts: Vec<Layout>,
    /// Stack traces attached to events: (event index, interned frames joined by '\n').
    stacks: Vec<(u32, Sym)>,
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
        fn permute<T: Copy>(v: &mut Vec<T>, order: &[u32]) {
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
}

/// Errors building an event table.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BuildError {
    #[error("field data exceeds 4 GiB; the trace is too large for one event table")]
    ArenaFull,
    #[error("a chunk produced more events than its window holds (its line count)")]
    WindowFull,
    #[error("a builder writing into a shared window is finished by merging the windows")]
    InWindow,
    #[error("the parts to merge are not the windows of these columns, in order")]
    ForeignPart,
}

/// Fills an [`EventTable`]. Importers that parse in parallel use one builder per chunk and
/// [`EventTableBuilder::merge`] them in file order, or let each chunk's builder write its
/// events straight into its window of one [`SharedColumns`] allocation.
pub type EventTableBuilder = TableBuilder<'static>;

/// An [`EventTableBuilder`] whose event columns may be a [`ColumnWindow`] borrowed for `'a`.
#[derive(Debug, Default)]
pub struct TableBuilder<'a> {
    /// The columns (unless `window` holds them), field values, layouts and stacks.
    table: EventTable,
    window: Option<ColumnWindow<'a>>,
    pub interner: Interner,
    layout_ids: FxHashMap<Layout, LayoutId>,
    /// Where each string value starts in the field arena: a merge renumbers them there
    /// without decoding every event's fields.
    str_at: Vec<u32>,
    /// `str_at` no longer lists every string value (the builder is a merge's result, whose
    /// parts' positions were not carried over): a merge finds them through the layouts.
    str_at_lost: bool,
    arena_full: bool,
    window_full: bool,
}

impl<'a> TableBuilder<'a> {
    pub fn new() -> Self {
        Self::default()
    }

    /// A builder whose events go into `window` (see [`SharedColumns`]); strings, layouts and
    /// field values stay its own until [`SharedColumns::merge`].
    pub fn in_window(window: ColumnWindow<'a>) -> Self {
        TableBuilder { window: Some(window), ..Self::default() }
    }

    /// Ends the window (a builder without one gives a part that no merge accepts).
    pub fn leave_window(mut self) -> WindowedPart {
        let window = self.window.take();
        let (owner, index, len) = window.map_or((0, 0, 0), |w| (w.owner, w.index, w.len));
        let builder = TableBuilder {
            table: std::mem::take(&mut self.table),
            window: None,
            interner: std::mem::take(&mut self.interner),
            layout_ids: std::mem::take(&mut self.layout_ids),
            str_at: std::mem::take(&mut self.str_at),
            str_at_lost: self.str_at_lost,
            arena_full: self.arena_full,
            window_full: self.window_full,
        };
        WindowedPart { builder, owner, index, len }
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

    /// Reserves room for `events` more events with `field_bytes` of field values, so a
    /// parser that can estimate its output does not pay for repeated growth.
    pub fn reserve(&mut self, events: usize, field_bytes: usize) {
        let t = &mut self.table;
        t.field_data.reserve(field_bytes);
        if self.window.is_some() {
            return;
        }
        each_column!(t, |c| c.reserve(events));
    }

    pub fn layout_def(&self, id: LayoutId) -> Option<&Layout> {
        self.table.layouts.get(id.0 as usize)
    }

    /// Appends an event. `values` must match the layout's kinds (checked in debug builds).
    #[allow(clippy::too_many_arguments)]
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
            l.fields.len() == values.len() && l.fields.iter().zip(values).all(|(f, v)| f.1 == v.kind())
        }));
        let off = self.table.field_data.len();
        let off = match u32::try_from(off) {
            Ok(o) => o,
            Err(_) => {
                self.arena_full = true;
                return;
            }
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
        let t = &mut self.table;
        match &mut self.window {
            None => {
                t.ts.push(ts);
                t.cpu.push(cpu);
                t.pid.push(pid);
                t.comm.push(comm);
                t.flags.push(flags);
                t.layout.push(layout);
                t.field_off.push(off);
            }
            Some(w) => {
                let i = w.len;
                let slots = (
                    w.ts.get_mut(i),
                    w.cpu.get_mut(i),
                    w.pid.get_mut(i),
                    w.comm.get_mut(i),
                    w.flags.get_mut(i),
                    w.layout.get_mut(i),
                    w.field_off.get_mut(i),
                );
                // Window slot `i` of every column, or none when the window is full.
                if let (Some(t0), Some(c0), Some(p0), Some(m0), Some(f0), Some(l0), Some(o0)) = slots {
                    t0.write(ts);
                    c0.write(cpu);
                    p0.write(pid);
                    m0.write(comm);
                    f0.write(flags);
                    l0.write(layout);
                    o0.write(off);
                    w.len = i + 1;
                } else {
                    self.window_full = true;
                    t.field_data.truncate(off as usize);
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

    pub fn len(&self) -> usize {
        self.window.as_ref().map_or(self.table.len(), |w| w.len)
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The table so far; its event columns are empty while the builder writes into a window.
    pub fn table(&self) -> &EventTable {
        &self.table
    }

    fn check(&self) -> Result<(), BuildError> {
        if self.arena_full {
            return Err(BuildError::ArenaFull);
        }
        if self.window_full {
            return Err(BuildError::WindowFull);
        }
        Ok(())
    }

    /// The finished table (sorted by time) and its strings.
    pub fn finish(self) -> Result<(EventTable, Interner), BuildError> {
        self.check()?;
        if self.window.is_some() {
            return Err(BuildError::InWindow);
        }
        let mut table = self.table;
        table.sort_by_time();
        table.shrink_to_fit();
        Ok((table, self.interner))
    }
}

impl EventTableBuilder {
    /// Concatenates builders in order into one, remapping symbols and layouts.
    ///
    /// Each column is allocated once at its final size and every part copied into its own
    /// slice of it by a rayon task, so the copy and the page faults of the fresh memory are
    /// shared by the threads instead of being a serial phase after a parallel parse. The
    /// renumbering is then [`merge_columns`]'s, as for windows.
    pub fn merge(parts: Vec<EventTableBuilder>) -> Result<EventTableBuilder, BuildError> {
        for p in &parts {
            p.check()?;
        }
        if parts.len() <= 1 {
            return Ok(parts.into_iter().next().unwrap_or_default());
        }
        let tables: Vec<&EventTable> = parts.iter().map(|p| &p.table).collect();
        let columns = EventTable {
            ts: par_column(&tables, |p| &p.ts),
            cpu: par_column(&tables, |p| &p.cpu),
            pid: par_column(&tables, |p| &p.pid),
            comm: par_column(&tables, |p| &p.comm),
            layout: par_column(&tables, |p| &p.layout),
            flags: par_column(&tables, |p| &p.flags),
            field_off: par_column(&tables, |p| &p.field_off),
            ..EventTable::default()
        };
        let counts = tables.iter().map(|t| t.len()).collect();
        merge_columns(columns, counts, parts)
    }
}

/// Event columns allocated once for a parallel parse and cut into one [`ColumnWindow`] per
/// chunk, each as long as a bound of that chunk's events (its line count). Chunks write
/// their events where they end up: merging only closes the gaps the bounds left
/// ([`SharedColumns::merge`]), so the columns are neither copied nor faulted in twice, and
/// the memory of a second set of columns is never needed.
#[derive(Debug)]
pub struct SharedColumns {
    /// Tells this allocation's windows from another's.
    id: u64,
    bounds: Vec<usize>,
    /// Capacity for the sum of `bounds`; lengths stay 0 until the merge.
    columns: EventTable,
}

static NEXT_SHARED_COLUMNS: AtomicU64 = AtomicU64::new(1);

/// One chunk's part of [`SharedColumns`]: uninitialised slots its builder fills in order.
pub struct ColumnWindow<'a> {
    owner: u64,
    index: usize,
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

/// A builder that has left its window: its strings, layouts, field values and stacks, and
/// how many slots of which window it filled.
#[derive(Debug)]
pub struct WindowedPart {
    builder: EventTableBuilder,
    owner: u64,
    index: usize,
    len: usize,
}

impl WindowedPart {
    /// The part's strings (span labels and other symbols a chunk kept are in this numbering).
    pub fn interner(&self) -> &Interner {
        &self.builder.interner
    }
    /// Events written into the window.
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl SharedColumns {
    /// Room for `bounds[i]` events in window `i`.
    pub fn new(bounds: Vec<usize>) -> SharedColumns {
        let total = bounds.iter().sum();
        let mut columns = EventTable::default();
        each_column!(&mut columns, |c| c.reserve_exact(total));
        SharedColumns { id: NEXT_SHARED_COLUMNS.fetch_add(1, Ordering::Relaxed), bounds, columns }
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
    /// [`EventTableBuilder::merge`]). `parts` are the builders of this allocation's windows,
    /// in order.
    pub fn merge(mut self, parts: Vec<WindowedPart>) -> Result<EventTableBuilder, BuildError> {
        let ours = parts.len() == self.bounds.len()
            && parts.iter().enumerate().all(|(i, p)| p.owner == self.id && p.index == i);
        if !ours {
            return Err(BuildError::ForeignPart);
        }
        for p in &parts {
            p.builder.check()?;
        }
        let counts: Vec<usize> = parts.iter().map(|p| p.len).collect();
        let starts: Vec<usize> =
            self.bounds.iter().scan(0, |at, &b| Some(std::mem::replace(at, *at + b))).collect();
        let c = &mut self.columns;
        // Each column is compacted by its own task: a sequential move within one allocation.
        {
            let (starts, counts) = (&starts, &counts);
            rayon::scope(|s| each_column!(&mut *c, |col| s.spawn(move |_| close_gaps(col, starts, counts))));
        }
        let total: usize = counts.iter().sum();
        // SAFETY: window i wrote slots `starts[i]..starts[i] + counts[i]` of every column (a
        // window's `len` counts the slots its `push` wrote, in order, and `parts` were checked
        // to be this allocation's windows, each once), and `close_gaps` moved those slots to
        // `dst[i]..dst[i] + counts[i]` with `dst[i]` the sum of the counts before: together
        // `0..total`, every slot initialised. The capacity is the sum of the bounds ≥ total.
        #[allow(unsafe_code)]
        unsafe {
            each_column!(c, |col| col.set_len(total));
        }
        let columns = std::mem::take(&mut self.columns);
        merge_columns(columns, counts, parts.into_iter().map(|p| p.builder).collect())
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

/// One builder from `columns`, the concatenated event columns of `parts` (`counts[i]` events
/// each, in each part's own numbering), and the parts' strings, layouts, field values and
/// stacks.
///
/// Strings and layouts (a few thousand at most) are absorbed serially in part order, so
/// symbol numbers are those of a part-by-part merge. The per-event work runs in parallel,
/// one task per part on its slice of the columns: copying its field values into the merged
/// arena, renumbering their strings where they lie, rebasing offsets, renumbering comms and
/// layouts.
fn merge_columns(
    mut columns: EventTable,
    counts: Vec<usize>,
    parts: Vec<EventTableBuilder>,
) -> Result<EventTableBuilder, BuildError> {
    let mut parts = parts.into_iter();
    let Some(mut out) = parts.next() else { return Ok(EventTableBuilder::new()) };
    let rest: Vec<EventTableBuilder> = parts.collect();
    // Part 0 is already in the merged numbering.
    let mut maps = vec![PartMap::default()];
    for part in &rest {
        let syms = out.interner.absorb(&part.interner);
        let layouts = part
            .table
            .layouts
            .iter()
            .map(|l| {
                let fields: Vec<_> = l.fields.iter().map(|&(n, k)| (remap_sym(&syms, n), k)).collect();
                out.layout(remap_sym(&syms, l.event), &fields)
            })
            .collect();
        maps.push(PartMap { syms, layouts, strings_done: false });
    }
    let mut tables = Vec::with_capacity(rest.len() + 1);
    let mut str_at = Vec::with_capacity(rest.len() + 1);
    let mut str_at_lost = Vec::with_capacity(rest.len() + 1);
    tables.push(std::mem::take(&mut out.table));
    str_at.push(std::mem::take(&mut out.str_at));
    str_at_lost.push(out.str_at_lost);
    for p in rest {
        tables.push(p.table);
        str_at.push(p.str_at);
        str_at_lost.push(p.str_at_lost);
    }
    // Part 0's layouts are the merged list (`out.layout` added the others' to it).
    columns.layouts = std::mem::take(&mut tables[0].layouts);
    // A part whose strings would change byte length in the new numbering (only past 2^14
    // strings) has its field arena rewritten first; the others are renumbered in place, at
    // positions read from the layouts where the part lost its list (a merge's result).
    {
        let offs = split_lengths(&mut columns.field_off, counts.iter().copied());
        let layouts = split_lengths(&mut columns.layout, counts.iter().copied());
        let parts = tables.par_iter_mut().zip(maps.par_iter_mut()).zip(str_at.par_iter_mut());
        parts.zip(str_at_lost).zip(offs).zip(layouts).try_for_each(
            |(((((t, map), str_at), lost), offs), layouts)| {
                if !map.keeps_string_lengths() {
                    map.reencode_strings(t, offs, layouts)?;
                } else if lost && !map.syms.is_empty() {
                    *str_at = string_positions(&t.layouts, offs, layouts, &t.field_data)?;
                }
                Ok(())
            },
        )?;
    }
    // Field offsets are rebased by the field bytes of the parts before; each part's last
    // (largest) offset must still fit the u32 offset column.
    let mut data_base = Vec::with_capacity(tables.len());
    let mut data_len = 0usize;
    let mut at = 0usize;
    for (t, &n) in tables.iter().zip(&counts) {
        let base = u32::try_from(data_len).map_err(|_| BuildError::ArenaFull)?;
        if let Some(&last) = columns.field_off[at..at + n].last() {
            base.checked_add(last).ok_or(BuildError::ArenaFull)?;
        }
        data_base.push(base);
        data_len += t.field_data.len();
        at += n;
    }
    // A zeroed allocation of this size is fresh pages: nothing is written twice.
    let mut field_data = vec![0u8; data_len];
    {
        let data = split_lengths(&mut field_data, tables.iter().map(|t| t.field_data.len()));
        let offs = split_lengths(&mut columns.field_off, counts.iter().copied());
        let layouts = split_lengths(&mut columns.layout, counts.iter().copied());
        let comms = split_lengths(&mut columns.comm, counts.iter().copied());
        data.into_par_iter().zip(offs).zip(layouts).zip(comms).enumerate().for_each(
            |(i, (((data, offs), layouts), comms))| {
                let map = &maps[i];
                // The part's field values are renumbered while in cache.
                data.copy_from_slice(&tables[i].field_data);
                map.renumber_strings(&str_at[i], data);
                for off in offs.iter_mut() {
                    *off += data_base[i];
                }
                if !map.syms.is_empty() {
                    for c in comms.iter_mut() {
                        *c = map.sym(*c);
                    }
                    for l in layouts.iter_mut() {
                        *l = map.layout(*l);
                    }
                }
            },
        );
    }
    columns.field_data = field_data;
    let mut base_index = 0u32;
    for ((t, map), &n) in tables.iter().zip(&maps).zip(&counts) {
        columns.stacks.extend(t.stacks.iter().map(|&(i, s)| (base_index + i, map.sym(s))));
        base_index += n as u32;
    }
    out.table = columns;
    // The parts' positions are not carried over (that would cost a copy on every parse for a
    // second merge that importers never do); a later merge reads them from the layouts.
    out.str_at_lost = true;
    // Freeing the parts gives their pages back (munmap); the merged table does not wait.
    rayon::spawn(move || drop((tables, str_at)));
    Ok(out)
}

/// The concatenation of one column of every part, written in parallel straight into an
/// allocation of the final size.
fn par_column<T, C>(parts: &[&EventTable], column: C) -> Vec<T>
where
    T: Copy + Send + Sync,
    C: Fn(&EventTable) -> &Vec<T> + Sync,
{
    let total = parts.iter().map(|p| column(p).len()).sum();
    let mut out: Vec<T> = Vec::with_capacity(total);
    split_lengths(&mut out.spare_capacity_mut()[..total], parts.iter().map(|p| column(p).len()))
        .into_par_iter()
        .zip(parts)
        .for_each(|(dst, p)| {
            for (d, &v) in dst.iter_mut().zip(column(p).iter()) {
                d.write(v);
            }
        });
    // SAFETY: the slices partition the first `total` elements of the spare capacity, each
    // exactly as long as its part's column, and the loop above wrote every element of each
    // (`zip` of two equally long slices).
    #[allow(unsafe_code)]
    unsafe {
        out.set_len(total);
    }
    out
}

/// `buf` cut into consecutive slices of the given lengths (their sum must not exceed `buf`'s
/// length).
fn split_lengths<X>(mut buf: &mut [X], lengths: impl Iterator<Item = usize>) -> Vec<&mut [X]> {
    let mut slices = Vec::with_capacity(lengths.size_hint().0);
    for len in lengths {
        let (head, tail) = std::mem::take(&mut buf).split_at_mut(len);
        slices.push(head);
        buf = tail;
    }
    slices
}

/// How one part's symbols and layouts map into the merged builder's; empty for the part
/// whose numbering the merged builder started from.
#[derive(Default)]
struct PartMap {
    syms: Vec<Sym>,
    layouts: Vec<LayoutId>,
    /// The part's field arena is already in the merged numbering.
    strings_done: bool,
}

/// Where each string value of these events starts in `data`, read through their layouts.
fn string_positions(
    layouts: &[Layout],
    offs: &[u32],
    layout_ids: &[LayoutId],
    data: &[u8],
) -> Result<Vec<u32>, BuildError> {
    let mut at = Vec::new();
    for (&off, l) in offs.iter().zip(layout_ids) {
        let mut pos = off as usize;
        for &(_, kind) in &layouts[l.0 as usize].fields {
            if kind == FieldKind::Str {
                at.push(u32::try_from(pos).map_err(|_| BuildError::ArenaFull)?);
            }
            skip_varint(data, &mut pos);
        }
    }
    Ok(at)
}

fn remap_sym(syms: &[Sym], s: Sym) -> Sym {
    syms.get(s.0 as usize).copied().unwrap_or(s)
}

impl PartMap {
    fn sym(&self, s: Sym) -> Sym {
        remap_sym(&self.syms, s)
    }

    fn layout(&self, l: LayoutId) -> LayoutId {
        self.layouts.get(l.0 as usize).copied().unwrap_or(l)
    }

    /// Whether every string value keeps its byte length when renumbered.
    fn keeps_string_lengths(&self) -> bool {
        self.syms.iter().enumerate().all(|(old, &new)| str_len(Sym(old as u32)) == str_len(new))
    }

    /// Renumbers the string values in `data`, a copy of a part's field arena, where they lie
    /// (`str_at`: where each starts).
    fn renumber_strings(&self, str_at: &[u32], data: &mut [u8]) {
        if self.syms.is_empty() || self.strings_done {
            return;
        }
        for &at in str_at {
            let start = at as usize;
            let mut pos = start;
            let old = get_varint(data, &mut pos);
            let new = self.sym(Sym(old as u32));
            // Same length by `keeps_string_lengths`, so this always fits.
            if let Some(dst) = data.get_mut(start..pos) {
                write_varint_exact(dst, u64::from(new.0));
            }
        }
    }

    /// Rewrites a part's field arena in the merged numbering (string values re-encoded,
    /// the events' offsets `offs` moved); used when renumbering in place would change lengths.
    fn reencode_strings(
        &mut self,
        t: &mut EventTable,
        offs: &mut [u32],
        layout_ids: &[LayoutId],
    ) -> Result<(), BuildError> {
        let mut data = Vec::with_capacity(t.field_data.len() + t.field_data.len() / 8);
        for (off, l) in offs.iter_mut().zip(layout_ids) {
            let mut pos = *off as usize;
            *off = u32::try_from(data.len()).map_err(|_| BuildError::ArenaFull)?;
            for &(_, kind) in &t.layouts[l.0 as usize].fields {
                if kind == FieldKind::Str {
                    if let FieldValue::Str(s) = decode_value(&t.field_data, &mut pos, kind) {
                        encode_value(&mut data, FieldValue::Str(self.sym(s)));
                    }
                } else {
                    let start = pos;
                    skip_varint(&t.field_data, &mut pos);
                    data.extend_from_slice(&t.field_data[start..pos]);
                }
            }
        }
        t.field_data = data;
        self.strings_done = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn builder_with(events: &[(Ps, &str, i64)]) -> EventTableBuilder {
        let mut b = EventTableBuilder::new();
        let irq = b.intern(b"irq");
        let name = b.intern(b"name");
        let comm = b.intern(b"swapper");
        for &(ts, ev, n) in events {
            let e = b.intern(ev.as_bytes());
            let l = b.layout(e, &[(irq, FieldKind::Int), (name, FieldKind::Str)]);
            let s = b.intern(format!("dev{n}").as_bytes());
            b.push(ts, 1, 0, comm, IrqFlags::NONE, l, &[FieldValue::Int(n), FieldValue::Str(s)]);
        }
        b
    }

    /// The former definition, by searching each column's character list.
    #[test]
    fn merge_remaps_strings_and_layouts_and_sorts() {
        let a = builder_with(&[(10, "irq_handler_entry", 5), (30, "irq_handler_exit", 5)]);
        let mut b = builder_with(&[(20, "irq_handler_exit", 7), (40, "softirq_entry", 1)]);
        assert!(b.attach_stack_to_last(Sym(0)));
        let merged = EventTableBuilder::merge(vec![a, b]).expect("merge");
        let (t, strings) = merged.finish().expect("finish");
        assert_eq!(t.ts, vec![10, 20, 30, 40]);
        let names: Vec<_> = t.iter().map(|e| strings.resolve(e.name()).into_owned()).collect();
        assert_eq!(names, ["irq_handler_entry", "irq_handler_exit", "irq_handler_exit", "softirq_entry"]);
        let second = t.get(1).expect("event 1");
        let fields: Vec<_> = second.fields().map(|(n, v)| (strings.resolve(n).into_owned(), v)).collect();
        assert_eq!(fields[0], ("irq".into(), FieldValue::Int(7)));
        let FieldValue::Str(dev) = fields[1].1 else { panic!("name is a string") };
        assert_eq!(strings.resolve(dev), "dev7");
        // Layouts are shared across parts: two distinct event names with one field shape.
        assert_eq!(t.layouts().len(), 3);
        assert_eq!(t.stack_of(3).map(|s| strings.resolve(s).into_owned()), Some("irq".into()));
        assert_eq!(t.counts_by_name().iter().map(|c| c.1).collect::<Vec<_>>(), [1, 2, 1]);
        assert_eq!(t.range(15, 35), 1..3);
    }

    #[test]
    fn merging_parts_equals_one_builder() {
        let evs: Vec<(Ps, String, i64)> =
            (0..300).map(|i| (i * 10, format!("ev{}", i % 7), i * 1000 - 150_000)).collect();
        let evs: Vec<(Ps, &str, i64)> = evs.iter().map(|(t, n, v)| (*t, n.as_str(), *v)).collect();
        let (whole, whole_strings) = builder_with(&evs).finish().expect("finish");
        // Unequal parts, one empty, each with its own numbering of strings and layouts.
        let cuts = [0, 1, 1, 140, 299, 300];
        let parts = cuts.windows(2).map(|w| builder_with(&evs[w[0]..w[1]])).collect();
        let (merged, strings) = EventTableBuilder::merge(parts).and_then(|b| b.finish()).expect("merge");
        assert_eq!(merged.ts, whole.ts);
        assert_eq!(merged.len(), 300);
        for (a, b) in merged.iter().zip(whole.iter()) {
            assert_eq!(strings.bytes_of(a.name()), whole_strings.bytes_of(b.name()));
            let fa: Vec<_> = a.fields().map(|(n, v)| (strings.resolve(n).into_owned(), v.as_i64())).collect();
            let fb: Vec<_> =
                b.fields().map(|(n, v)| (whole_strings.resolve(n).into_owned(), v.as_i64())).collect();
            assert_eq!(fa, fb);
            let FieldValue::Str(sa) = a.fields().nth(1).expect("name field").1 else { panic!("string") };
            assert_eq!(strings.resolve(sa), format!("dev{}", evs[a.index].2));
        }
    }

    #[test]
    fn a_merged_builder_merges_again() {
        // A merge's result keeps no list of its string positions; merged again behind
        // another part (so its strings are renumbered), it must read like one merge.
        let a = builder_with(&[(10, "irq_handler_entry", 5), (30, "irq_handler_exit", 6)]);
        let b = builder_with(&[(40, "softirq_entry", 7)]);
        let c = builder_with(&[(5, "sched_switch", 8), (6, "sched_wakeup", 9)]);
        let ab = EventTableBuilder::merge(vec![a, b]).expect("merge");
        let (t, strings) = EventTableBuilder::merge(vec![c, ab]).and_then(|m| m.finish()).expect("merge");
        let read: Vec<(String, String)> = t
            .iter()
            .map(|e| {
                let FieldValue::Str(dev) = e.fields().nth(1).expect("name field").1 else { panic!("string") };
                (strings.resolve(e.name()).into_owned(), strings.resolve(dev).into_owned())
            })
            .collect();
        let expected = [
            ("sched_switch", "dev8"),
            ("sched_wakeup", "dev9"),
            ("irq_handler_entry", "dev5"),
            ("irq_handler_exit", "dev6"),
            ("softirq_entry", "dev7"),
        ];
        assert_eq!(read, expected.map(|(n, d)| (n.to_string(), d.to_string())));
    }

    #[test]
    fn merge_renumbers_strings_that_change_length() {
        // Past 2^14 strings a renumbered string value takes 3 bytes instead of 2, so the part
        // is re-encoded instead of renumbered in place; both paths must read back the same.
        let mut big = EventTableBuilder::new();
        let comm = big.intern(b"c");
        let name = big.intern(b"name");
        let ev = big.intern(b"ev");
        let l = big.layout(ev, &[(name, FieldKind::Str), (comm, FieldKind::Int)]);
        for i in 0..20_000 {
            let s = big.intern(format!("s{i}").as_bytes());
            big.push(i, 0, 0, comm, IrqFlags::NONE, l, &[FieldValue::Str(s), FieldValue::Int(-i)]);
        }
        let small = builder_with(&[(30_000, "ev2", 3), (30_001, "ev2", 4)]);
        let late = builder_with(&[(40_000, "ev2", 5)]);
        let (t, strings) =
            EventTableBuilder::merge(vec![big, small, late]).and_then(|b| b.finish()).expect("merge");
        assert_eq!(t.len(), 20_003);
        let text = |i: usize| -> Vec<String> {
            t.get(i)
                .expect("event")
                .fields()
                .map(|(_, v)| match v {
                    FieldValue::Str(s) => strings.resolve(s).into_owned(),
                    v => format!("{:?}", v.as_i64()),
                })
                .collect()
        };
        assert_eq!(text(19_999), ["s19999", "Some(-19999)"]);
        assert_eq!(text(20_000), ["Some(3)", "dev3"]);
        assert_eq!(text(20_001), ["Some(4)", "dev4"]);
        assert_eq!(text(20_002), ["Some(5)", "dev5"]);
    }

    /// Fills window `i` of `columns` with `events[i]` through a builder of its own.
    fn fill_windows(columns: &mut SharedColumns, events: &[Vec<(Ps, &str, i64)>]) -> Vec<WindowedPart> {
        columns
            .windows()
            .into_iter()
            .zip(events)
            .map(|(w, evs)| {
                let mut b = TableBuilder::in_window(w);
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
                assert!(b.table().is_empty(), "a window's events are not in the builder's own columns");
                b.leave_window()
            })
            .collect()
    }

    #[test]
    fn windows_with_gaps_merge_into_the_same_table_as_owned_parts() {
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
        let (merged, strings) = columns.merge(filled).and_then(|b| b.finish()).expect("merge");

        let mut whole = SharedColumns::new(vec![evs.len()]);
        let one = fill_windows(&mut whole, std::slice::from_ref(&evs));
        let (whole, whole_strings) = whole.merge(one).and_then(|b| b.finish()).expect("merge");
        assert_eq!(merged.len(), 500);
        assert_eq!(merged.ts, whole.ts);
        assert_eq!(merged.cpu, whole.cpu);
        assert_eq!(merged.pid, whole.pid);
        let text = |t: &EventTable, s: &Interner, i: usize| {
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
        };
        for i in 0..500 {
            assert_eq!(text(&merged, &strings, i), text(&whole, &whole_strings, i), "event {i}");
        }
        assert_eq!(merged.stacks().len(), 100);
    }

    #[test]
    fn windows_refuse_overflow_and_foreign_parts() {
        let evs = vec![(1, "a", 1), (2, "a", 2), (3, "a", 3)];
        // A window one slot short: the builder reports it instead of writing past it.
        let mut columns = SharedColumns::new(vec![2]);
        let filled = fill_windows(&mut columns, std::slice::from_ref(&evs));
        assert_eq!(filled[0].len(), 2);
        assert_eq!(columns.merge(filled).err(), Some(BuildError::WindowFull));
        // Parts of other columns, missing or out of order are refused.
        let mut a = SharedColumns::new(vec![3, 3]);
        let mut b = SharedColumns::new(vec![3, 3]);
        let from_a = fill_windows(&mut a, &[evs.clone(), evs.clone()]);
        let mut from_b = fill_windows(&mut b, &[evs.clone(), evs.clone()]);
        assert_eq!(a.merge(from_b.drain(..1).collect()).err(), Some(BuildError::ForeignPart));
        let c = SharedColumns::new(vec![3, 3]);
        assert_eq!(c.merge(from_a).err(), Some(BuildError::ForeignPart));
        let mut d = SharedColumns::new(vec![3, 3]);
        let mut from_d = fill_windows(&mut d, &[evs.clone(), evs.clone()]);
        from_d.swap(0, 1);
        assert_eq!(d.merge(from_d).err(), Some(BuildError::ForeignPart));
        // A builder that never had a window is no window's part.
        let owned = EventTableBuilder::new().leave_window();
        assert_eq!(SharedColumns::new(vec![0]).merge(vec![owned]).err(), Some(BuildError::ForeignPart));
    }

    #[test]
    fn fixed_cost_per_event_is_30_bytes() {
        let b = builder_with(&[(1, "e", 1); 1000]);
        let (t, _) = b.finish().expect("finish");
        let per_event = (t.heap_bytes() - t.field_data.capacity()) as f64 / 1000.0;
        assert!((30.0..30.2).contains(&per_event), "{per_event}");
    }
}

//! Joining parts: owned builders by copying their columns into one allocation, and the
//! renumbering every join ends with ([`merge_columns`]).

use latscope_model::field_encoding::{
    decode_value, encode_value, get_varint, skip_varint, str_len, write_varint_exact,
};
use latscope_model::{
    BuildError, BuilderParts, EventTable, EventTableBuilder, EventTableParts, FieldKind, FieldValue,
    Interner, Layout, LayoutId, Ps, Sym,
};
use rayon::prelude::*;

/// What a part brings to a join besides its rows: its strings, layouts, field values and
/// stacks, in its own numbering.
#[derive(Debug)]
pub(super) struct Part {
    /// Layouts, field values and stacks (the columns, if any, are not read).
    pub table: EventTableParts,
    pub interner: Interner,
    /// Where each string value starts in `table.field_data`, if known.
    pub string_positions: Option<Vec<u32>>,
}

impl Part {
    /// The part of a builder taken apart, and the builder's sink and error.
    pub fn from_builder<S>(parts: BuilderParts<S>) -> (Part, Option<S>, Option<BuildError>) {
        let BuilderParts { sink, table, interner, string_positions, error } = parts;
        (Part { table, interner, string_positions }, sink, error)
    }
}

/// Joins builders into one, remapping symbols and layouts, with their events in the order
/// a stable sort by time of their concatenation gives (equal times: the earlier part first,
/// then each part's order).
///
/// Each part's events usually come sorted (a CPU's buffer, or a run of it): then the merged
/// order is found once, by a k-way merge of the parts' time columns, and every merged
/// column is written straight in that order from the parts (one gather per column; see
/// [`merge_sorted`]), so `finish` finds the table sorted. Otherwise each column is
/// allocated once at its final size, every part copied into its own slice by a rayon task
/// and the parts' copy freed at once, and `finish` sorts. The renumbering is
/// [`renumber_parts`]'s either way, as for windows.
pub(crate) fn merge_builders(builders: Vec<EventTableBuilder>) -> Result<EventTableBuilder, BuildError> {
    for b in &builders {
        b.check()?;
    }
    if builders.len() <= 1 {
        return Ok(builders.into_iter().next().unwrap_or_default());
    }
    let mut parts: Vec<Part> = builders.into_iter().map(|b| Part::from_builder(b.into_parts()).0).collect();
    let counts: Vec<usize> = parts.iter().map(|p| p.table.ts.len()).collect();
    let sorted = parts.iter().all(|p| p.table.ts.is_sorted());
    // Run numbers are u16 and run positions u32 in the merge order.
    if sorted && parts.len() <= 1 << 16 && counts.iter().all(|&n| u32::try_from(n).is_ok()) {
        return merge_sorted(parts);
    }
    let columns = EventTableParts {
        ts: take_column(&mut parts, |p| &mut p.ts),
        cpu: take_column(&mut parts, |p| &mut p.cpu),
        pid: take_column(&mut parts, |p| &mut p.pid),
        comm: take_column(&mut parts, |p| &mut p.comm),
        layout: take_column(&mut parts, |p| &mut p.layout),
        flags: take_column(&mut parts, |p| &mut p.flags),
        field_off: take_column(&mut parts, |p| &mut p.field_off),
        ..EventTableParts::default()
    };
    merge_columns(columns, counts, parts)
}

/// [`merge_builders`] of parts whose events are each sorted by time: the parts are
/// renumbered on their own columns, then every merged column is gathered from the parts in
/// the merged order.
fn merge_sorted(mut parts: Vec<Part>) -> Result<EventTableBuilder, BuildError> {
    fn take<T>(parts: &mut [Part], column: fn(&mut EventTableParts) -> &mut Vec<T>) -> Vec<Vec<T>> {
        parts.iter_mut().map(|p| std::mem::take(column(&mut p.table))).collect()
    }
    let ts_runs = take(&mut parts, |t| &mut t.ts);
    let (cpu, pid, flags) = (
        take(&mut parts, |t| &mut t.cpu),
        take(&mut parts, |t| &mut t.pid),
        take(&mut parts, |t| &mut t.flags),
    );
    let (mut comm, mut layout, mut field_off) = (
        take(&mut parts, |t| &mut t.comm),
        take(&mut parts, |t| &mut t.layout),
        take(&mut parts, |t| &mut t.field_off),
    );
    let rows = field_off
        .iter_mut()
        .zip(layout.iter_mut())
        .zip(comm.iter_mut())
        .map(|((field_off, layout), comm)| PartRows { field_off, layout, comm })
        .collect();
    let joined = renumber_parts(rows, parts)?;
    let (ts, order) = {
        let runs: Vec<&[Ps]> = ts_runs.iter().map(Vec::as_slice).collect();
        merge_order(&runs)
    };
    drop(ts_runs);
    let stacks = order.remap_stacks(&joined.stacks);
    // Each part's column is freed once gathered, so the join holds the parts' columns not
    // yet gathered, the merged ones and two in flight: not two tables.
    let order = &order;
    let ((cpu, pid, flags), (comm, layout, field_off)) = rayon::join(
        || (order.gather(cpu), order.gather(pid), order.gather(flags)),
        || (order.gather(comm), order.gather(layout), order.gather(field_off)),
    );
    let table = EventTableParts {
        ts,
        cpu,
        pid,
        comm,
        layout,
        flags,
        field_off,
        field_data: joined.field_data,
        layouts: joined.layouts,
        stacks,
    };
    Ok(EventTableBuilder::from_table(EventTable::from_parts(table)?, joined.interner))
}

/// Where each merged row comes from: `run[j]` is its part, `pos[j]` its index in that part.
struct MergeOrder {
    run: Vec<u16>,
    pos: Vec<u32>,
}

impl MergeOrder {
    /// One column in the merged order, read from every part's own copy of it (`parts[i]`
    /// is part i's), which is then freed.
    fn gather<T: Copy>(&self, parts: Vec<Vec<T>>) -> Vec<T> {
        self.run.iter().zip(&self.pos).map(|(&r, &i)| parts[r as usize][i as usize]).collect()
    }

    /// Stacks given per part (rows in the part's numbering), as rows of the merged order.
    fn remap_stacks(&self, per_part: &[Vec<(u32, Sym)>]) -> Vec<(u32, Sym)> {
        if per_part.iter().all(Vec::is_empty) {
            return Vec::new();
        }
        // Merged row of each stacked part row, found in one pass over the order.
        let mut new_row: Vec<Vec<u32>> = per_part
            .iter()
            .map(
                |s| if s.is_empty() { Vec::new() } else { vec![0; s.last().map_or(0, |l| l.0 as usize + 1)] },
            )
            .collect();
        for (j, (&r, &i)) in self.run.iter().zip(&self.pos).enumerate() {
            if let Some(slot) = new_row[r as usize].get_mut(i as usize) {
                *slot = j as u32;
            }
        }
        let mut stacks: Vec<(u32, Sym)> = per_part
            .iter()
            .zip(&new_row)
            .flat_map(|(s, rows)| s.iter().map(|&(i, sym)| (rows[i as usize], sym)))
            .collect();
        stacks.sort_by_key(|s| s.0);
        stacks
    }
}

/// The merged times of `runs` (each sorted) and where each merged row comes from: a k-way
/// merge through a loser tree, equal times taking the lower run first, which is the stable
/// sort of the runs' concatenation.
fn merge_order(runs: &[&[Ps]]) -> (Vec<Ps>, MergeOrder) {
    let total: usize = runs.iter().map(|r| r.len()).sum();
    let k = runs.len().next_power_of_two().max(2);
    // A run's key orders by time, then run number; an exhausted run's is above every live
    // key. Keys compare as one integer: no branch to mispredict on equal times.
    let key = |r: usize, i: usize| -> u128 {
        match runs.get(r).and_then(|run| run.get(i)) {
            Some(&t) => (u128::from((t as u64) ^ (1 << 63)) << 32) | r as u128,
            None => (1u128 << 96) | r as u128,
        }
    };
    let mut head: Vec<u128> = (0..k).map(|r| key(r, 0)).collect();
    let mut next = vec![0usize; k];
    // `loser[n]` is the run that lost at inner node n (1..k); leaves are k + run.
    let mut loser = vec![0usize; k];
    let mut win = vec![0usize; 2 * k];
    for (r, w) in win[k..].iter_mut().enumerate() {
        *w = r;
    }
    for n in (1..k).rev() {
        let (a, b) = (win[2 * n], win[2 * n + 1]);
        let (w, l) = if head[b] < head[a] { (b, a) } else { (a, b) };
        win[n] = w;
        loser[n] = l;
    }
    let mut w = win[1];
    let mut ts = Vec::with_capacity(total);
    let mut run = Vec::with_capacity(total);
    let mut pos = Vec::with_capacity(total);
    for _ in 0..total {
        let i = next[w];
        ts.push(runs[w][i]);
        run.push(w as u16);
        pos.push(i as u32);
        next[w] = i + 1;
        head[w] = key(w, i + 1);
        let mut wk = head[w];
        let mut n = (k + w) / 2;
        while n >= 1 {
            let l = loser[n];
            let lk = head[l];
            let lower = lk < wk;
            loser[n] = if lower { w } else { l };
            w = if lower { l } else { w };
            wk = if lower { lk } else { wk };
            n /= 2;
        }
    }
    (ts, MergeOrder { run, pos })
}

/// The concatenation of one column of every part, taken out of the parts (which are left
/// without it) and freed once copied.
fn take_column<T, C>(parts: &mut [Part], column: C) -> Vec<T>
where
    T: Copy + Send + Sync,
    C: Fn(&mut EventTableParts) -> &mut Vec<T>,
{
    let taken: Vec<Vec<T>> = parts.iter_mut().map(|p| std::mem::take(column(&mut p.table))).collect();
    let refs: Vec<&Vec<T>> = taken.iter().collect();
    par_column(&refs)
}

/// One part's rows of the columns the renumbering rewrites.
struct PartRows<'a> {
    field_off: &'a mut [u32],
    layout: &'a mut [LayoutId],
    comm: &'a mut [Sym],
}

/// The parts' strings, layouts, field values and stacks in the merged numbering.
struct Joined {
    layouts: Vec<Layout>,
    interner: Interner,
    field_data: Vec<u8>,
    /// Each part's stacks, rows in the part's own numbering.
    stacks: Vec<Vec<(u32, Sym)>>,
}

/// One builder from `columns`, the concatenated event columns of `parts` (`counts[i]` events
/// each, in each part's own numbering), and the parts' strings, layouts, field values and
/// stacks.
pub(super) fn merge_columns(
    mut columns: EventTableParts,
    counts: Vec<usize>,
    parts: Vec<Part>,
) -> Result<EventTableBuilder, BuildError> {
    let joined = {
        let offs = split_lengths(&mut columns.field_off, counts.iter().copied());
        let layouts = split_lengths(&mut columns.layout, counts.iter().copied());
        let comms = split_lengths(&mut columns.comm, counts.iter().copied());
        let rows = offs
            .into_iter()
            .zip(layouts)
            .zip(comms)
            .map(|((field_off, layout), comm)| PartRows { field_off, layout, comm })
            .collect();
        renumber_parts(rows, parts)?
    };
    columns.layouts = joined.layouts;
    columns.field_data = joined.field_data;
    let mut base_index = 0u32;
    for (s, &n) in joined.stacks.iter().zip(&counts) {
        columns.stacks.extend(s.iter().map(|&(i, sym)| (base_index + i, sym)));
        base_index += n as u32;
    }
    Ok(EventTableBuilder::from_table(EventTable::from_parts(columns)?, joined.interner))
}

/// Renumbers the parts' rows (`rows[i]` are part i's, in its own numbering) into the merged
/// numbering, and joins the parts' strings, layouts, field values and stacks.
///
/// Strings and layouts (a few thousand at most) are absorbed serially in part order, so
/// symbol numbers are those of a part-by-part merge. The per-event work runs in parallel,
/// one task per part on its rows: copying its field values into the merged arena,
/// renumbering their strings where they lie, rebasing offsets, renumbering comms and
/// layouts.
fn renumber_parts(mut rows: Vec<PartRows<'_>>, parts: Vec<Part>) -> Result<Joined, BuildError> {
    let mut parts = parts.into_iter();
    let Some(first) = parts.next() else {
        return Ok(Joined {
            layouts: Vec::new(),
            interner: Interner::default(),
            field_data: Vec::new(),
            stacks: Vec::new(),
        });
    };
    let rest: Vec<Part> = parts.collect();
    let Part { table: mut first_table, interner, string_positions } = first;
    // Part 0 is already in the merged numbering; the builder `out` continues its strings
    // and layouts with the other parts'.
    let layouts =
        EventTableParts { layouts: std::mem::take(&mut first_table.layouts), ..EventTableParts::default() };
    let mut out = EventTableBuilder::from_table(EventTable::from_parts(layouts)?, interner);
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
    tables.push(first_table);
    str_at.push(string_positions);
    for p in rest {
        tables.push(p.table);
        str_at.push(p.string_positions);
    }
    let out = out.into_parts();
    // `out.layout` added the other parts' layouts to part 0's: the merged list.
    let layouts = out.table.layouts;
    let interner = out.interner;
    // A part whose strings would change byte length in the new numbering (only past 2^14
    // strings) has its field arena rewritten first; the others are renumbered in place, at
    // positions read from the layouts where the part did not record them (a merge's result).
    {
        let parts = tables.par_iter_mut().zip(maps.par_iter_mut()).zip(str_at.par_iter_mut());
        parts.zip(rows.par_iter_mut()).try_for_each(|(((t, map), str_at), rows)| {
            if !map.keeps_string_lengths() {
                map.reencode_strings(t, rows.field_off, rows.layout)?;
            } else if str_at.is_none() && !map.syms.is_empty() {
                *str_at = Some(string_positions_of(&t.layouts, rows.field_off, rows.layout, &t.field_data)?);
            }
            Ok::<(), BuildError>(())
        })?;
    }
    // Field offsets are rebased by the field bytes of the parts before; each part's last
    // (largest) offset must still fit the u32 offset column.
    let mut data_base = Vec::with_capacity(tables.len());
    let mut data_len = 0usize;
    for (t, rows) in tables.iter().zip(&rows) {
        let base = u32::try_from(data_len).map_err(|_| BuildError::ArenaFull)?;
        if let Some(&last) = rows.field_off.last() {
            base.checked_add(last).ok_or(BuildError::ArenaFull)?;
        }
        data_base.push(base);
        data_len += t.field_data.len();
    }
    // A zeroed allocation of this size is fresh pages: nothing is written twice.
    let mut field_data = vec![0u8; data_len];
    {
        let data = split_lengths(&mut field_data, tables.iter().map(|t| t.field_data.len()));
        let own = tables.par_iter_mut().zip(str_at.par_iter_mut());
        data.into_par_iter().zip(rows.par_iter_mut()).zip(own).enumerate().for_each(
            |(i, ((data, rows), (table, str_at)))| {
                let map = &maps[i];
                // The part's field values are renumbered while in cache, and its copy and
                // string positions freed at once.
                data.copy_from_slice(&table.field_data);
                table.field_data = Vec::new();
                map.renumber_strings(str_at.take().as_deref().unwrap_or_default(), data);
                for off in rows.field_off.iter_mut() {
                    *off += data_base[i];
                }
                if !map.syms.is_empty() {
                    for c in rows.comm.iter_mut() {
                        *c = map.sym(*c);
                    }
                    for l in rows.layout.iter_mut() {
                        *l = map.layout(*l);
                    }
                }
            },
        );
    }
    let stacks = tables
        .iter_mut()
        .zip(&maps)
        .map(|(t, map)| std::mem::take(&mut t.stacks).into_iter().map(|(i, s)| (i, map.sym(s))).collect())
        .collect();
    // Freeing the parts gives their pages back (munmap); the merged table does not wait.
    // The parts' string positions are not carried over (that would cost a copy on every
    // parse for a second merge that importers never do); a later merge reads them from
    // the layouts.
    rayon::spawn(move || drop((tables, str_at)));
    Ok(Joined { layouts, interner, field_data, stacks })
}

/// The concatenation of `parts`, written in parallel straight into an allocation of the
/// final size.
fn par_column<T: Copy + Send + Sync>(parts: &[&Vec<T>]) -> Vec<T> {
    let total = parts.iter().map(|p| p.len()).sum();
    let mut out: Vec<T> = Vec::with_capacity(total);
    split_lengths(&mut out.spare_capacity_mut()[..total], parts.iter().map(|p| p.len()))
        .into_par_iter()
        .zip(parts)
        .for_each(|(dst, p)| {
            for (d, &v) in dst.iter_mut().zip(p.iter()) {
                d.write(v);
            }
        });
    // SAFETY: the slices partition the first `total` elements of the spare capacity, each
    // exactly as long as its part, and the loop above wrote every element of each (`zip` of
    // two equally long slices).
    #[allow(unsafe_code)]
    unsafe {
        out.set_len(total);
    }
    out
}

/// `buf` cut into consecutive slices of the given lengths (their sum must not exceed `buf`'s
/// length).
pub(super) fn split_lengths<X>(mut buf: &mut [X], lengths: impl Iterator<Item = usize>) -> Vec<&mut [X]> {
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
#[derive(Debug, Default)]
struct PartMap {
    syms: Vec<Sym>,
    layouts: Vec<LayoutId>,
    /// The part's field arena is already in the merged numbering.
    strings_done: bool,
}

/// Where each string value of these events starts in `data`, read through their layouts.
fn string_positions_of(
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
        t: &mut EventTableParts,
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
pub(super) mod tests {
    use super::*;
    use latscope_model::{IrqFlags, Ps};

    /// A builder with one event per `(time, name, n)`: fields `irq=n`, `name="dev{n}"`.
    pub(crate) fn builder_with(events: &[(Ps, &str, i64)]) -> EventTableBuilder {
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

    #[test]
    fn merge_remaps_strings_and_layouts_and_sorts() {
        let a = builder_with(&[(10, "irq_handler_entry", 5), (30, "irq_handler_exit", 5)]);
        let mut b = builder_with(&[(20, "irq_handler_exit", 7), (40, "softirq_entry", 1)]);
        assert!(b.attach_stack_to_last(Sym(0)));
        let merged = merge_builders(vec![a, b]).expect("merge");
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
        let (merged, strings) = merge_builders(parts).and_then(|b| b.finish()).expect("merge");
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

    /// Each event's `(time, name, irq)` and stack, in table order.
    fn rows(t: &EventTable, strings: &Interner) -> Vec<(Ps, String, Option<i64>, Option<String>)> {
        t.iter()
            .map(|e| {
                let irq = e.fields().next().and_then(|(_, v)| v.as_i64());
                let stack = e.stack().map(|s| strings.resolve(s).into_owned());
                (e.ts(), strings.resolve(e.name()).into_owned(), irq, stack)
            })
            .collect()
    }

    #[test]
    fn sorted_parts_merge_as_the_stable_sort_of_their_concatenation() {
        // Five sorted parts (one empty) with many equal times across and within parts, and
        // stacks: the k-way merge must give the order a stable sort of the concatenation
        // gives (equal times: lower part first, then the part's order), stacks following
        // their events. The reference is one builder of all events, sorted by `finish`.
        let part = |p: i64, n: i64| -> Vec<(Ps, String, i64)> {
            (0..n).map(|i| ((i * (p + 1)) / 3, format!("ev{}", (i + p) % 4), p * 1000 + i)).collect()
        };
        let events: Vec<Vec<(Ps, String, i64)>> =
            vec![part(0, 40), part(1, 0), part(2, 25), part(3, 33), part(4, 7)];
        // As `builder_with`, with a stack on the events whose number is a multiple of 5.
        let with_stacks = |evs: &[(Ps, String, i64)]| {
            let mut b = EventTableBuilder::new();
            let irq = b.intern(b"irq");
            let name = b.intern(b"name");
            let comm = b.intern(b"swapper");
            for (ts, ev, n) in evs {
                let e = b.intern(ev.as_bytes());
                let l = b.layout(e, &[(irq, FieldKind::Int), (name, FieldKind::Str)]);
                let s = b.intern(format!("dev{n}").as_bytes());
                b.push(*ts, 1, 0, comm, IrqFlags::NONE, l, &[FieldValue::Int(*n), FieldValue::Str(s)]);
                if n % 5 == 0 {
                    let frame = b.intern(format!("frame{n}").as_bytes());
                    assert!(b.attach_stack_to_last(frame));
                }
            }
            b
        };
        let parts: Vec<EventTableBuilder> = events.iter().map(|e| with_stacks(e)).collect();
        let all: Vec<(Ps, String, i64)> = events.concat();
        let (merged, strings) = merge_builders(parts).and_then(|b| b.finish()).expect("merge");
        let (whole, whole_strings) = with_stacks(&all).finish().expect("finish");
        assert_eq!(merged.len(), 105);
        assert_eq!(rows(&merged, &strings), rows(&whole, &whole_strings));
        assert_eq!(merged.stacks().len(), 22);
    }

    #[test]
    fn an_unsorted_part_is_merged_and_sorted_stably() {
        let a = builder_with(&[(30, "a", 1), (10, "a", 2), (10, "a", 3)]);
        let b = builder_with(&[(10, "b", 4), (20, "b", 5)]);
        let (t, strings) = merge_builders(vec![a, b]).and_then(|m| m.finish()).expect("merge");
        let irqs: Vec<_> = rows(&t, &strings).into_iter().map(|r| r.2).collect();
        assert_eq!(irqs, [2, 3, 4, 5, 1].map(Some));
    }

    #[test]
    fn a_merged_builder_merges_again() {
        // A merge's result keeps no list of its string positions; merged again behind
        // another part (so its strings are renumbered), it must read like one merge.
        let a = builder_with(&[(10, "irq_handler_entry", 5), (30, "irq_handler_exit", 6)]);
        let b = builder_with(&[(40, "softirq_entry", 7)]);
        let c = builder_with(&[(5, "sched_switch", 8), (6, "sched_wakeup", 9)]);
        let ab = merge_builders(vec![a, b]).expect("merge");
        let (t, strings) = merge_builders(vec![c, ab]).and_then(|m| m.finish()).expect("merge");
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
        let (t, strings) = merge_builders(vec![big, small, late]).and_then(|b| b.finish()).expect("merge");
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
}

//! Record payloads → model events. Each event format is compiled once into an
//! [`EventDecoder`] (a list of typed field readers at fixed offsets); a [`Worker`] owns one
//! `EventTableBuilder` and decodes the pages handed to it (one per CPU run, in parallel),
//! creating each layout on first use. Marker events (`print`, `bprint`, `bputs`) get the
//! message as `text` plus its `key=value` tokens.

use super::bytes::Endian;
use super::format::{EventFormat, FieldDef, Loc};
use super::options::Tsc2Nsec;
use super::page::PageFormat;
use super::printf::format_bprint;
use crate::marker::push_token_fields;
use latscope_model::{
    Diagnostics, EventTableBuilder, FieldKind, FieldValue, Gap, IrqFlags, LayoutId, PS_PER_NS, Ps, Sym,
};
use rustc_hash::FxHashMap;

/// Where the common fields are (from the formats; the defaults are the classic layout).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Common {
    pub type_off: usize,
    pub type_size: usize,
    pub flags_off: Option<usize>,
    pub preempt_off: Option<usize>,
    pub pid_off: usize,
    pub pid_size: usize,
}

impl Common {
    pub(crate) fn from_formats(formats: &[EventFormat]) -> Common {
        let mut c = Common {
            type_off: 0,
            type_size: 2,
            flags_off: Some(2),
            preempt_off: Some(3),
            pid_off: 4,
            pid_size: 4,
        };
        if let Some(f) = formats.iter().find(|f| f.field("common_type").is_some()) {
            let get = |n: &str| f.field(n).filter(|d| matches!(d.size, 1 | 2 | 4 | 8));
            if let Some(d) = get("common_type") {
                (c.type_off, c.type_size) = (d.offset as usize, d.size as usize);
            }
            c.flags_off = get("common_flags").map(|d| d.offset as usize);
            c.preempt_off = get("common_preempt_count").map(|d| d.offset as usize);
            if let Some(d) = get("common_pid") {
                (c.pid_off, c.pid_size) = (d.offset as usize, d.size as usize);
            }
        }
        c
    }
}

/// How to read one field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FieldDec {
    Int {
        off: usize,
        size: usize,
    },
    UInt {
        off: usize,
        size: usize,
    },
    /// Char array at a fixed place (to the end of the record when `size` is 0).
    Str {
        off: usize,
        size: usize,
        loc: Loc,
    },
    /// Other bytes, shown as hex (to the end of the record when `size` is 0).
    Hex {
        off: usize,
        size: usize,
        loc: Loc,
    },
}

impl FieldDec {
    fn kind(self) -> FieldKind {
        match self {
            FieldDec::Int { .. } => FieldKind::Int,
            FieldDec::UInt { .. } => FieldKind::UInt,
            FieldDec::Str { .. } | FieldDec::Hex { .. } => FieldKind::Str,
        }
    }

    fn compile(f: &FieldDef) -> FieldDec {
        let off = f.offset as usize;
        let size = f.size as usize;
        if f.loc != Loc::Fixed {
            return if f.is_char() {
                FieldDec::Str { off, size, loc: f.loc }
            } else {
                FieldDec::Hex { off, size, loc: f.loc }
            };
        }
        if f.array || size == 0 {
            return if f.is_char() {
                FieldDec::Str { off, size, loc: Loc::Fixed }
            } else {
                FieldDec::Hex { off, size, loc: Loc::Fixed }
            };
        }
        match (size, f.signed) {
            (1 | 2 | 4 | 8, true) => FieldDec::Int { off, size },
            (1 | 2 | 4 | 8, false) => FieldDec::UInt { off, size },
            _ => FieldDec::Hex { off, size, loc: Loc::Fixed },
        }
    }
}

/// Marker events whose message becomes `text`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Marker {
    None,
    /// `print`: `ip`, then `buf` (a string to the end of the record).
    Print {
        ip: Option<FieldDec>,
        buf: FieldDec,
    },
    /// `bprint`: `ip`, `fmt` (address in printk_formats), `buf` (packed args).
    Bprint {
        ip: Option<FieldDec>,
        fmt: FieldDec,
        buf: usize,
    },
    /// `bputs`: `ip`, `str` (address in printk_formats).
    Bputs {
        ip: Option<FieldDec>,
        str: FieldDec,
    },
}

#[derive(Debug, Clone)]
pub(crate) struct EventDecoder {
    pub name: String,
    pub fields: Vec<(String, FieldDec)>,
    pub marker: Marker,
    /// Smallest payload that holds every fixed field.
    pub min_len: usize,
}

impl EventDecoder {
    pub(crate) fn compile(f: &EventFormat) -> EventDecoder {
        let fields: Vec<(String, FieldDec)> = f
            .fields
            .iter()
            .filter(|d| !d.is_common())
            .map(|d| (d.name.clone(), FieldDec::compile(d)))
            .collect();
        let min_len = f
            .fields
            .iter()
            .map(|d| {
                if d.loc == Loc::Fixed { d.offset as usize + d.size as usize } else { d.offset as usize + 4 }
            })
            .max()
            .unwrap_or(0);
        let get = |n: &str| fields.iter().find(|(name, _)| name == n).map(|(_, d)| *d);
        let marker = if f.system == "ftrace" {
            match (f.name.as_str(), get("ip"), get("buf"), get("fmt"), get("str")) {
                ("print", ip, Some(buf @ FieldDec::Str { .. }), _, _) => Marker::Print { ip, buf },
                ("bprint", ip, Some(FieldDec::Hex { off, .. }), Some(fmt @ FieldDec::UInt { .. }), _) => {
                    Marker::Bprint { ip, fmt, buf: off }
                }
                ("bputs", ip, _, _, Some(str @ FieldDec::UInt { .. })) => Marker::Bputs { ip, str },
                _ => Marker::None,
            }
        } else {
            Marker::None
        };
        EventDecoder { name: f.name.clone(), fields, marker, min_len }
    }
}

/// Raw ring-buffer clock → ns as `trace-cmd report` prints it, then → model time.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TimeConv {
    pub tsc: Option<Tsc2Nsec>,
    pub offset: i64,
    /// The provisional origin in ns; events are stored relative to it.
    pub origin_ns: i128,
}

impl TimeConv {
    #[inline]
    pub(crate) fn ns(&self, raw: u64) -> u64 {
        let ns = match self.tsc {
            // mul_u64_u32_shr: a 128-bit product, shifted.
            Some(t) => ((u128::from(raw) * u128::from(t.mult)) >> t.shift) as u64,
            None => raw,
        };
        ns.wrapping_add_signed(self.offset)
    }

    #[inline]
    pub(crate) fn ps(&self, raw: u64) -> Ps {
        let rel = (i128::from(self.ns(raw)) - self.origin_ns) * i128::from(PS_PER_NS);
        rel.clamp(i128::from(Ps::MIN), i128::from(Ps::MAX)) as Ps
    }
}

/// Read-only state shared by all workers.
#[derive(Debug)]
pub(crate) struct Shared {
    pub endian: Endian,
    pub long_size: usize,
    pub common: Common,
    /// `common_type` → index in `decoders` (`u32::MAX` = unknown), for ids below 65536.
    pub by_id: Vec<u32>,
    pub by_id_sparse: FxHashMap<u64, u32>,
    pub decoders: Vec<EventDecoder>,
    pub printk: FxHashMap<u64, String>,
    pub cmdlines: FxHashMap<i32, Vec<u8>>,
    pub time: TimeConv,
    pub page: PageFormat,
}

impl Shared {
    /// The name of task `pid` as `saved_cmdlines` gives it (`<idle>` for pid 0 and `<...>`
    /// for a task it does not list, as trace-cmd shows them).
    pub(crate) fn task_name(&self, pid: i32) -> &[u8] {
        match self.cmdlines.get(&pid) {
            Some(c) => c,
            None if pid == 0 => b"<idle>",
            None => b"<...>",
        }
    }

    pub(crate) fn new(
        formats: &[EventFormat],
        endian: Endian,
        long_size: usize,
        printk: FxHashMap<u64, String>,
        cmdlines: FxHashMap<i32, Vec<u8>>,
        time: TimeConv,
        page: PageFormat,
    ) -> Shared {
        let common = Common::from_formats(formats);
        let mut by_id = Vec::new();
        let mut by_id_sparse = FxHashMap::default();
        let mut decoders = Vec::with_capacity(formats.len());
        for f in formats {
            let idx = decoders.len() as u32;
            decoders.push(EventDecoder::compile(f));
            if f.id < 65536 {
                let i = f.id as usize;
                if by_id.len() <= i {
                    by_id.resize(i + 1, u32::MAX);
                }
                by_id[i] = idx;
            } else {
                by_id_sparse.insert(u64::from(f.id), idx);
            }
        }
        Shared { endian, long_size, common, by_id, by_id_sparse, decoders, printk, cmdlines, time, page }
    }

    #[inline]
    fn decoder_of(&self, id: u64) -> Option<u32> {
        match usize::try_from(id).ok().and_then(|i| self.by_id.get(i)) {
            Some(&x) if x != u32::MAX => Some(x),
            Some(_) => None,
            None => self.by_id_sparse.get(&id).copied(),
        }
    }
}

/// The `IrqFlags` of `common_flags`/`common_preempt_count`, as libtraceevent's latency
/// format shows them: `d` irqs off (`X` when the arch cannot tell), `N` need-resched,
/// `h`/`s`/`H` hard/soft/both irq context (`z`/`Z` NMI), preempt depth (low nibble) and
/// migrate-disable depth (high nibble).
pub(crate) fn irq_flags(flags: u8, preempt: u8) -> IrqFlags {
    const PRESENT: u32 = 1 << 31;
    let irq = if flags & 0x01 != 0 {
        1
    } else if flags & 0x02 != 0 {
        3
    } else {
        0
    };
    let resched = u32::from(flags & 0x04 != 0);
    let (hard, soft, nmi) = (flags & 0x08 != 0, flags & 0x10 != 0, flags & 0x40 != 0);
    let ctx = match (nmi, hard, soft) {
        (true, true, _) => 5,
        (true, false, _) => 4,
        (false, true, true) => 3,
        (false, true, false) => 1,
        (false, false, true) => 2,
        _ => 0,
    };
    let pc = u32::from(preempt);
    IrqFlags(PRESENT | irq | resched << 3 | ctx << 6 | (pc & 0xf) << 9 | (pc >> 4) << 13)
}

/// Decodes pages into its own builder.
#[derive(Debug)]
pub(crate) struct Worker<'s> {
    shared: &'s Shared,
    pub builder: EventTableBuilder,
    pub diags: Diagnostics,
    layouts: Vec<Option<LayoutId>>,
    comms: FxHashMap<i32, Sym>,
    values: Vec<FieldValue>,
    scratch: Vec<u8>,
    text: String,
    marker_fields: Vec<(Sym, FieldKind)>,
    text_sym: Option<Sym>,
    ip_sym: Option<Sym>,
}

impl<'s> Worker<'s> {
    pub(crate) fn reserve(&mut self, events: usize) {
        self.builder.reserve(events, events * 12);
    }

    pub(crate) fn new(shared: &'s Shared) -> Self {
        Worker {
            shared,
            builder: EventTableBuilder::new(),
            diags: Diagnostics::default(),
            layouts: vec![None; shared.decoders.len()],
            comms: FxHashMap::default(),
            values: Vec::with_capacity(16),
            scratch: Vec::new(),
            text: String::new(),
            marker_fields: Vec::new(),
            text_sym: None,
            ip_sym: None,
        }
    }

    fn layout_for(&mut self, idx: usize) -> LayoutId {
        if let Some(Some(id)) = self.layouts.get(idx) {
            return *id;
        }
        let dec = &self.shared.decoders[idx];
        let event = self.builder.intern(dec.name.as_bytes());
        let fields: Vec<(Sym, FieldKind)> =
            dec.fields.iter().map(|(n, d)| (self.builder.intern(n.as_bytes()), d.kind())).collect();
        let id = self.builder.layout(event, &fields);
        self.layouts[idx] = Some(id);
        id
    }

    fn comm(&mut self, pid: i32) -> Sym {
        if let Some(&s) = self.comms.get(&pid) {
            return s;
        }
        let s = self.builder.intern(self.shared.task_name(pid));
        self.comms.insert(pid, s);
        s
    }

    /// Decodes every record of one page. `file_off` is the page's file offset (for
    /// compressed data: the chunk's), for diagnostics.
    pub(crate) fn page(&mut self, cpu: u16, page: &[u8], file_off: u64) {
        let pf = self.shared.page;
        let Some(hdr) = pf.header(page) else {
            self.diags.malformed(None, file_off, format!("CPU {cpu}: page header is cut short"));
            return;
        };
        if hdr.overlong {
            self.diags.malformed(
                None,
                file_off + 8,
                format!("CPU {cpu}: page commit length exceeds the page; clamped"),
            );
        }
        let mut first = true;
        let missed = hdr.missed;
        let lost = hdr.lost;
        let res = pf.for_each_record(page, &hdr, |ts, payload, off| {
            if first && missed {
                self.diags.gaps.push(Gap { cpu, ts: self.shared.time.ps(ts), lost });
            }
            first = false;
            self.record(cpu, ts, payload, file_off + off as u64);
        });
        if first && missed {
            self.diags.gaps.push(Gap { cpu, ts: self.shared.time.ps(hdr.ts), lost });
        }
        if let Err(e) = res {
            self.diags.malformed(
                None,
                file_off + e.at as u64,
                format!("CPU {cpu}: {}; rest of the page skipped", e.message),
            );
        }
    }

    pub(crate) fn record(&mut self, cpu: u16, ts: u64, p: &[u8], file_off: u64) {
        let sh = self.shared;
        let e = sh.endian;
        let c = sh.common;
        let Some(id) = e.read_uint(p, c.type_off, c.type_size) else {
            self.diags.malformed(None, file_off, "record shorter than its common fields");
            return;
        };
        if id == 0 {
            // An all-zero record: a discarded event the kernel did not turn into padding.
            return;
        }
        let Some(idx) = sh.decoder_of(id) else {
            self.diags.malformed(None, file_off, format!("record of unknown event type {id}"));
            return;
        };
        let dec = &sh.decoders[idx as usize];
        if p.len() < dec.min_len {
            self.diags.malformed(
                None,
                file_off,
                format!("{} record of {} bytes is shorter than its format", dec.name, p.len()),
            );
            return;
        }
        let pid = e.read_uint(p, c.pid_off, c.pid_size).unwrap_or(0);
        let pid = match c.pid_size {
            8 => pid as i64 as i32,
            _ => pid as u32 as i32,
        };
        let flags = c.flags_off.and_then(|o| p.get(o)).copied().unwrap_or(0);
        let preempt = c.preempt_off.and_then(|o| p.get(o)).copied().unwrap_or(0);
        let flags = irq_flags(flags, preempt);
        let comm = self.comm(pid);
        let ps = sh.time.ps(ts);
        if dec.marker != Marker::None {
            self.marker(dec, ps, cpu, pid, comm, flags, p);
            return;
        }
        let layout = self.layout_for(idx as usize);
        self.values.clear();
        for &(_, d) in &dec.fields {
            let v = self.field(d, p);
            self.values.push(v);
        }
        self.builder.push(ps, cpu, pid, comm, flags, layout, &self.values);
    }

    #[inline]
    fn field(&mut self, d: FieldDec, p: &[u8]) -> FieldValue {
        let e = self.shared.endian;
        match d {
            FieldDec::Int { off, size } => {
                let v = e.read_uint(p, off, size).unwrap_or(0);
                let shift = 64 - 8 * size as u32;
                FieldValue::Int(((v << shift) as i64) >> shift)
            }
            FieldDec::UInt { off, size } => FieldValue::UInt(e.read_uint(p, off, size).unwrap_or(0)),
            FieldDec::Str { off, size, loc } => {
                let b = field_bytes(e, p, off, size, loc);
                let n = memchr::memchr(0, b).unwrap_or(b.len());
                FieldValue::Str(self.builder.intern(&b[..n]))
            }
            FieldDec::Hex { off, size, loc } => {
                let b = field_bytes(e, p, off, size, loc);
                self.scratch.clear();
                const MAX_HEX: usize = 256;
                for x in &b[..b.len().min(MAX_HEX)] {
                    self.scratch.extend_from_slice(&[HEX[usize::from(x >> 4)], HEX[usize::from(x & 15)]]);
                }
                if b.len() > MAX_HEX {
                    self.scratch.extend_from_slice("…".as_bytes());
                }
                FieldValue::Str(self.builder.intern(&self.scratch))
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn marker(
        &mut self,
        dec: &EventDecoder,
        ps: Ps,
        cpu: u16,
        pid: i32,
        comm: Sym,
        flags: IrqFlags,
        p: &[u8],
    ) {
        let sh = self.shared;
        let e = sh.endian;
        self.text.clear();
        let ip = match dec.marker {
            Marker::Print { ip, buf } => {
                let FieldDec::Str { off, size, loc } = buf else { return };
                let b = field_bytes(e, p, off, size, loc);
                let n = memchr::memchr(0, b).unwrap_or(b.len());
                self.text.push_str(&String::from_utf8_lossy(&b[..n]));
                ip
            }
            Marker::Bprint { ip, fmt, buf } => {
                let addr = match self.field(fmt, p) {
                    FieldValue::UInt(a) => a,
                    _ => 0,
                };
                match sh.printk.get(&addr) {
                    Some(f) => format_bprint(f, p.get(buf..).unwrap_or(&[]), e, sh.long_size, &mut self.text),
                    None => {
                        use std::fmt::Write;
                        let _ = write!(self.text, "[FORMAT 0x{addr:x} NOT FOUND]");
                    }
                }
                ip
            }
            Marker::Bputs { ip, str } => {
                let addr = match self.field(str, p) {
                    FieldValue::UInt(a) => a,
                    _ => 0,
                };
                match sh.printk.get(&addr) {
                    Some(s) => self.text.push_str(s),
                    None => {
                        use std::fmt::Write;
                        let _ = write!(self.text, "[STRING 0x{addr:x} NOT FOUND]");
                    }
                }
                ip
            }
            Marker::None => return,
        };
        if self.text.ends_with('\n') {
            self.text.pop();
        }
        let ip_sym = *self.ip_sym.get_or_insert_with(|| self.builder.intern(b"ip"));
        let text_sym = *self.text_sym.get_or_insert_with(|| self.builder.intern(b"text"));
        self.values.clear();
        self.marker_fields.clear();
        if let Some(ipd) = ip {
            let v = self.field(ipd, p);
            self.marker_fields.push((ip_sym, v.kind()));
            self.values.push(v);
        }
        let text = std::mem::take(&mut self.text);
        self.marker_fields.push((text_sym, FieldKind::Str));
        self.values.push(FieldValue::Str(self.builder.intern(text.as_bytes())));
        let builder = &mut self.builder;
        push_token_fields(
            text.as_bytes(),
            &mut |s| builder.intern(s),
            &mut self.marker_fields,
            &mut self.values,
        );
        self.text = text;
        let event = self.builder.intern(dec.name.as_bytes());
        let layout = self.builder.layout(event, &self.marker_fields);
        self.builder.push(ps, cpu, pid, comm, flags, layout, &self.values);
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// The bytes of a string/array field: fixed (`size` 0 = to the end of the record) or
/// through a `__data_loc`/`__rel_loc` descriptor. Out-of-range descriptors give what fits.
#[inline]
fn field_bytes(e: Endian, p: &[u8], off: usize, size: usize, loc: Loc) -> &[u8] {
    let (start, len) = match loc {
        Loc::Fixed => (off, if size == 0 { p.len().saturating_sub(off) } else { size }),
        Loc::Data | Loc::Rel => {
            let Some(v) = e.read_u32(p, off) else { return &[] };
            let mut start = (v & 0xffff) as usize;
            if loc == Loc::Rel {
                start += off + 4;
            }
            (start, (v >> 16) as usize)
        }
    };
    let start = start.min(p.len());
    &p[start..start.saturating_add(len).min(p.len())]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn irq_flags_render_like_trace_cmd() {
        assert_eq!(irq_flags(0x01, 2).render(), "d..2.");
        assert_eq!(irq_flags(0x0d, 1).render(), "dNh1.");
        assert_eq!(irq_flags(0x18, 0).render(), "..H..");
        assert_eq!(irq_flags(0x10, 0x12).render(), "..s21");
        assert_eq!(irq_flags(0x48, 0).render(), "..Z..");
        assert_eq!(irq_flags(0x00, 0).render(), ".....");
    }

    #[test]
    fn data_loc_and_rel_loc() {
        // A record: 8 common bytes, __data_loc at 8 → "eth0" at 16; __rel_loc at 12 → "ab" at 20.
        let mut p = vec![0u8; 8];
        p.extend_from_slice(&((5u32 << 16) | 16).to_le_bytes());
        p.extend_from_slice(&((3u32 << 16) | 5).to_le_bytes());
        p.extend_from_slice(b"eth0\0ab\0");
        assert_eq!(field_bytes(Endian::Little, &p, 8, 4, Loc::Data), b"eth0\0");
        assert_eq!(field_bytes(Endian::Little, &p, 12, 4, Loc::Rel), b"ab\0");
        // Descriptors pointing outside the record give what fits, never panic.
        p[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(field_bytes(Endian::Little, &p, 8, 4, Loc::Data), b"");
        assert_eq!(field_bytes(Endian::Little, &p, 8, 0, Loc::Fixed).len(), p.len() - 8);
    }
}

//! How trace.dat events read as text: the [`EventRenderer`] a trace.dat source carries.
//! One program per layout of the finished table — the event format's parsed `print fmt`,
//! or one of the forms trace-cmd's plugins print instead (`sched_switch`, `sched_wakeup`,
//! `hrtimer_start`, `hrtimer_expire_entry`), or the marker form `caller: message` — plus the
//! file's kallsyms and printk strings. Rendering decodes the event's stored field values;
//! nothing rendered is kept.

use super::format::{EventFormat, FieldDef, Loc};
use super::printfmt::{Eval, FieldInfo, PrintFmt, Raw, Record, Symbols, push_c_string};
use latscope_model::{EventRenderer, EventTable, FieldValue, Interner, Source, write_task_state};
use rustc_hash::FxHashMap;
use std::fmt::Write;

/// Function symbols of the file's kallsyms, sorted by address.
#[derive(Debug, Clone, Default)]
pub(crate) struct Kallsyms {
    addrs: Vec<u64>,
    /// Where each name lies in `names`.
    spans: Vec<(u32, u32)>,
    names: String,
}

impl Kallsyms {
    /// `ADDR TYPE NAME [MODULE]` lines. As trace-cmd does, absolute symbols (`A`/`a`) and
    /// ARM's `$`-mapping symbols are left out.
    pub(crate) fn parse(text: &[u8]) -> Kallsyms {
        let mut entries: Vec<(u64, &[u8])> = Vec::new();
        for line in text.split(|&b| b == b'\n') {
            let mut parts = line.split(|&b| b == b' ' || b == b'\t').filter(|p| !p.is_empty());
            let (Some(addr), Some(kind), Some(name)) = (parts.next(), parts.next(), parts.next()) else {
                continue;
            };
            let Ok(addr) = u64::from_str_radix(&String::from_utf8_lossy(addr), 16) else { continue };
            if matches!(kind, b"A" | b"a") || name.starts_with(b"$") {
                continue;
            }
            entries.push((addr, name));
        }
        entries.sort_by_key(|e| e.0);
        let mut k = Kallsyms::default();
        for (addr, name) in entries {
            let start = k.names.len();
            k.names.push_str(&String::from_utf8_lossy(name));
            let (Ok(s), Ok(e)) = (u32::try_from(start), u32::try_from(k.names.len())) else { break };
            k.addrs.push(addr);
            k.spans.push((s, e));
        }
        k
    }

    /// The function containing `addr`: libtraceevent's `find_func` — an exact start, or an
    /// address below the next symbol (past the last symbol only its exact address matches).
    pub(crate) fn find(&self, addr: u64) -> Option<(&str, u64)> {
        let i = self.addrs.partition_point(|&a| a <= addr).checked_sub(1)?;
        if self.addrs[i] != addr && self.addrs.get(i + 1).is_none_or(|&next| next <= addr) {
            return None;
        }
        let (s, e) = self.spans[i];
        Some((self.names.get(s as usize..e as usize)?, self.addrs[i]))
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.addrs.len()
    }
}

#[derive(Debug)]
struct Syms<'a> {
    kallsyms: &'a Kallsyms,
    printk: &'a FxHashMap<u64, String>,
}

impl Symbols for Syms<'_> {
    fn function(&self, addr: u64) -> Option<(&str, u64)> {
        self.kallsyms.find(addr)
    }
    fn printk(&self, addr: u64) -> Option<&str> {
        self.printk.get(&addr).map(String::as_str)
    }
}

#[derive(Debug)]
enum Program {
    /// No form: the model's default rendering.
    None,
    Fmt(PrintFmt, Vec<FieldInfo>),
    /// The print fmt is not understood: `[FAILED TO PARSE]` and the raw fields.
    Failed(Vec<FieldInfo>),
    SchedSwitch(Vec<FieldInfo>),
    SchedWakeup(Vec<FieldInfo>),
    HrtimerStart(Vec<FieldInfo>),
    HrtimerExpireEntry(Vec<FieldInfo>),
    /// `print`/`bprint`/`bputs`: `%ps: message` from the `ip` and `text` fields.
    Marker,
}

/// The renderer of one trace.dat source.
#[derive(Debug)]
pub(crate) struct TraceDatRenderer {
    programs: Vec<Program>,
    kallsyms: Kallsyms,
    printk: FxHashMap<u64, String>,
    long_size: usize,
    big_endian: bool,
}

pub(crate) fn field_info(d: &FieldDef) -> FieldInfo {
    let ty = d.ty.as_str();
    let elem_size = if ty.contains("char") || ty.contains("8") && !ty.contains("64") {
        1
    } else if ty.contains("short") || ty.contains("16") {
        2
    } else if ty.contains("64") || ty.contains("long") {
        8
    } else if d.array {
        4
    } else {
        d.size.max(1)
    };
    let array = d.array || d.loc != Loc::Fixed;
    FieldInfo {
        name: d.name.clone(),
        size: d.size,
        elem_size: if array { elem_size.min(d.size.max(1)) } else { d.size },
        array,
        dynamic: d.loc != Loc::Fixed,
        string: array && d.is_char(),
        signed: d.signed,
        pointer: ty.contains('*'),
        long: (ty == "long" || ty == "unsigned long") && !array,
    }
}

fn program_for(f: &EventFormat) -> (Program, Option<String>) {
    let infos: Vec<FieldInfo> = f.fields.iter().filter(|d| !d.is_common()).map(field_info).collect();
    if f.system == "ftrace" && matches!(f.name.as_str(), "print" | "bprint" | "bputs") {
        return (Program::Marker, None);
    }
    match (f.system.as_str(), f.name.as_str()) {
        ("sched", "sched_switch") => return (Program::SchedSwitch(infos), None),
        ("sched", "sched_wakeup" | "sched_wakeup_new") => return (Program::SchedWakeup(infos), None),
        ("timer", "hrtimer_start") => return (Program::HrtimerStart(infos), None),
        ("timer", "hrtimer_expire_entry") => return (Program::HrtimerExpireEntry(infos), None),
        _ => {}
    }
    match PrintFmt::parse(&f.print_fmt, &infos) {
        Ok(p) => (Program::Fmt(p, infos), None),
        Err(e) => (Program::Failed(infos), Some(format!("{}: {e}", f.name))),
    }
}

impl TraceDatRenderer {
    /// Programs for every layout of `table`. Returns the renderer and a note per event format
    /// whose print fmt is not understood (events of those formats print raw fields).
    pub(crate) fn new(
        formats: &[EventFormat],
        table: &EventTable,
        strings: &Interner,
        kallsyms: Kallsyms,
        printk: FxHashMap<u64, String>,
        long_size: usize,
        big_endian: bool,
    ) -> (TraceDatRenderer, Vec<String>) {
        let mut failed = Vec::new();
        let programs = table
            .layouts()
            .iter()
            .map(|l| {
                let name = strings.resolve(l.event);
                let names: Vec<_> = l.fields.iter().map(|f| strings.resolve(f.0)).collect();
                let candidates = formats.iter().filter(|f| f.name == name);
                let mut chosen = None;
                for f in candidates {
                    let own: Vec<&str> =
                        f.fields.iter().filter(|d| !d.is_common()).map(|d| d.name.as_str()).collect();
                    let marker =
                        f.system == "ftrace" && matches!(f.name.as_str(), "print" | "bprint" | "bputs");
                    if marker || own.len() == names.len() && own.iter().zip(&names).all(|(a, b)| a == b) {
                        chosen = Some(f);
                        break;
                    }
                }
                let Some(f) = chosen else { return Program::None };
                let (p, note) = program_for(f);
                if let Some(n) = note
                    && !failed.contains(&n)
                {
                    failed.push(n);
                }
                p
            })
            .collect();
        (TraceDatRenderer { programs, kallsyms, printk, long_size, big_endian }, failed)
    }
}

/// One event's stored values, read as libtraceevent reads the record's fields.
struct Stored<'a> {
    strings: &'a Interner,
    infos: &'a [FieldInfo],
    values: &'a [FieldValue],
}

fn unhex(s: &[u8]) -> Vec<u8> {
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    s.chunks_exact(2).map_while(|p| Some(digit(p[0])? << 4 | digit(p[1])?)).collect()
}

impl Record for Stored<'_> {
    fn field(&self, index: usize) -> Option<Raw> {
        let info = self.infos.get(index)?;
        let mask = |v: u64| match info.size {
            1 | 2 | 4 => v & ((1u64 << (8 * info.size)) - 1),
            _ => v,
        };
        Some(match *self.values.get(index)? {
            FieldValue::Int(v) => Raw::Num(mask(v as u64)),
            FieldValue::UInt(v) => Raw::Num(mask(v)),
            FieldValue::Str(s) if info.string => Raw::Bytes(self.strings.bytes_of(s).to_vec()),
            FieldValue::Str(s) => Raw::Bytes(unhex(self.strings.bytes_of(s))),
        })
    }
}

impl Stored<'_> {
    /// `comm:pid` as trace-cmd's sched plugin prints a task; `!` (and `false`) without a pid.
    fn task(&self, comm: &str, pid: &str, out: &mut String) -> bool {
        let Some(pid) = self.num(pid) else {
            out.push('!');
            return false;
        };
        if self.text(comm, out) {
            out.push(':');
        }
        let _ = write!(out, "{pid}");
        true
    }

    fn num(&self, name: &str) -> Option<u64> {
        let i = self.infos.iter().position(|f| f.name == name)?;
        match self.field(i)? {
            Raw::Num(v) => Some(v),
            Raw::Bytes(_) => None,
        }
    }
    fn text(&self, name: &str, out: &mut String) -> bool {
        let Some(i) = self.infos.iter().position(|f| f.name == name) else { return false };
        match self.field(i) {
            Some(Raw::Bytes(b)) => push_c_string(&b, out),
            Some(Raw::Num(v)) => {
                let _ = write!(out, "{v}");
            }
            None => return false,
        }
        true
    }
}

/// libtraceevent's `print_field_raw`: a field's value when there is no print fmt to use.
fn raw_field(info: &FieldInfo, v: Option<Raw>, out: &mut String) {
    match v {
        Some(Raw::Bytes(b)) => {
            let n = memchr::memchr(0, &b).unwrap_or(b.len());
            let printable = b[..n].iter().all(|&c| c.is_ascii_graphic() || c.is_ascii_whitespace());
            if info.string && printable {
                push_c_string(&b, out);
            } else {
                out.push_str("ARRAY[");
                for (k, x) in b.iter().enumerate() {
                    if k > 0 {
                        out.push_str(", ");
                    }
                    let _ = write!(out, "{x:02x}");
                }
                out.push(']');
            }
        }
        Some(Raw::Num(v)) => {
            let _ = if info.pointer {
                write!(out, "0x{v:x}")
            } else if info.signed {
                match info.size {
                    4 if info.long => write!(out, "0x{:x}", v as u32),
                    4 => write!(out, "{}", v as u32 as i32),
                    2 => write!(out, "{:2}", v as u16 as i16),
                    1 => write!(out, "{}", v as u8 as i8),
                    _ => write!(out, "{}", v as i64),
                }
            } else if info.long {
                write!(out, "0x{v:x}")
            } else {
                write!(out, "{v}")
            };
        }
        None => {}
    }
}

impl TraceDatRenderer {
    fn eval<'a>(&'a self, infos: &'a [FieldInfo], syms: &'a Syms<'a>) -> Eval<'a> {
        Eval { fields: infos, long_size: self.long_size, big_endian: self.big_endian, symbols: syms }
    }

    /// `name/0x…` as trace-cmd's `tep_print_func_field` prints a function field.
    fn func_field(&self, v: u64, out: &mut String) {
        match self.kallsyms.find(v) {
            Some((name, start)) => {
                let _ = write!(out, "{name}/0x{:x}", start.wrapping_sub(v));
            }
            None => {
                let _ = write!(out, "0x{v:08x}");
            }
        }
    }
}

impl EventRenderer for TraceDatRenderer {
    fn payload(&self, source: &Source, index: usize, out: &mut String) -> bool {
        let Some(ev) = source.events.get(index) else { return false };
        let Some(program) = self.programs.get(source.events.layout[index].0 as usize) else { return false };
        let values: Vec<FieldValue> = ev.fields().map(|(_, v)| v).collect();
        let syms = Syms { kallsyms: &self.kallsyms, printk: &self.printk };
        let stored = |infos| Stored { strings: &source.strings, infos, values: &values };
        match program {
            Program::None => return false,
            Program::Fmt(fmt, infos) => {
                let rec = stored(infos);
                fmt.render(&rec, &self.eval(infos, &syms), out);
            }
            Program::Failed(infos) => {
                let rec = stored(infos);
                out.push_str("[FAILED TO PARSE]");
                for (i, info) in infos.iter().enumerate() {
                    let _ = write!(out, " {}=", info.name);
                    raw_field(info, rec.field(i), out);
                }
            }
            Program::SchedSwitch(infos) => {
                let r = stored(infos);
                if !r.task("prev_comm", "prev_pid", out) {
                    return true;
                }
                out.push(' ');
                if let Some(p) = r.num("prev_prio") {
                    let _ = write!(out, "[{}] ", p as u32 as i32);
                }
                if let Some(s) = r.num("prev_state") {
                    write_task_state(s, out);
                }
                out.push_str(" ==> ");
                if !r.task("next_comm", "next_pid", out) {
                    return true;
                }
                if let Some(p) = r.num("next_prio") {
                    let _ = write!(out, " [{}]", p as u32 as i32);
                }
            }
            Program::SchedWakeup(infos) => {
                let r = stored(infos);
                if !r.task("comm", "pid", out) {
                    return true;
                }
                if let Some(p) = r.num("prio") {
                    let _ = write!(out, " [{}]", p as i64);
                }
                if let Some(s) = r.num("success") {
                    let _ = write!(out, " success={}", s as i64);
                }
                if let Some(c) = r.num("target_cpu") {
                    let _ = write!(out, " CPU:{c:03}");
                }
            }
            Program::HrtimerStart(infos) | Program::HrtimerExpireEntry(infos) => {
                let r = stored(infos);
                let timer = r.num("timer").or_else(|| r.num("hrtimer")).unwrap_or(0);
                let _ = write!(out, "hrtimer=0x{timer:x}");
                if let Program::HrtimerExpireEntry(_) = program {
                    let _ = write!(out, " now={}", r.num("now").unwrap_or(0));
                    if let Some(f) = r.num("function") {
                        out.push_str(" function=");
                        self.func_field(f, out);
                    }
                } else {
                    if let Some(f) = r.num("function") {
                        out.push_str(" function=");
                        self.func_field(f, out);
                    }
                    let _ = write!(
                        out,
                        " expires={} softexpires={}",
                        r.num("expires").unwrap_or(0),
                        r.num("softexpires").unwrap_or(0)
                    );
                }
            }
            Program::Marker => {
                let s = &source.strings;
                let mut ip = None;
                let mut text = None;
                for (n, v) in ev.fields() {
                    match (s.bytes_of(n), v) {
                        (b"ip", FieldValue::UInt(a)) => ip = Some(a),
                        (b"ip", FieldValue::Int(a)) => ip = Some(a as u64),
                        (b"text", FieldValue::Str(t)) => text = Some(t),
                        _ => {}
                    }
                    if ip.is_some() && text.is_some() {
                        break;
                    }
                }
                if let Some(ip) = ip {
                    match self.kallsyms.find(ip) {
                        Some((name, _)) => out.push_str(name),
                        None => {
                            let ip = if self.long_size == 4 { ip & 0xffff_ffff } else { ip };
                            let _ = write!(out, "0x{ip:x}");
                        }
                    }
                    out.push_str(": ");
                }
                if let Some(t) = text {
                    out.push_str(&s.resolve(t));
                }
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kallsyms_lookup_follows_find_func() {
        let k = Kallsyms::parse(
            b"ffffffff81000000 T _text\nffffffff81000100 t tick_nohz_handler\nffffffff81000200 A abs_sym\nffffffff81000300 T last [mod]\n0000000000000010 t $a\n",
        );
        assert_eq!(k.len(), 3);
        assert_eq!(k.find(0xffff_ffff_8100_0100), Some(("tick_nohz_handler", 0xffff_ffff_8100_0100)));
        assert_eq!(k.find(0xffff_ffff_8100_0150).map(|f| f.0), Some("tick_nohz_handler"));
        assert_eq!(k.find(0xffff_ffff_8100_02ff).map(|f| f.0), Some("tick_nohz_handler"));
        assert_eq!(k.find(0xffff_ffff_8100_0300).map(|f| f.0), Some("last"));
        assert_eq!(k.find(0xffff_ffff_8100_0301), None, "past the last symbol only its address");
        assert_eq!(k.find(0x10), None);
    }
}

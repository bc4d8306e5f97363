//! Event payloads as text, rendered on demand: nothing rendered is stored per event.
//!
//! A [`Source`] may carry an [`EventRenderer`] set by its importer (trace.dat: the event
//! formats' `print fmt` and trace-cmd's plugin forms). Events it does not render, and the
//! events of sources without one (ftrace text, the simulator, other formats), are rendered
//! by [`kernel_payload`]: the kernel's TP_printk forms of the events latscope parses into
//! known fields, trace-cmd's `sched_switch`/`sched_wakeup` plugin forms, and `name=value`
//! pairs for everything else. Rendering reads the stored field values, so rules and filters
//! keep matching raw values.

use super::fields::FieldValue;
use super::kernel;
use super::source::Source;
use crate::display::value_text;
use std::fmt::Write;

/// Renders the payload of some events of a source (what `trace-cmd report` prints after
/// `event:`). Implementations hold per-layout programs, never per-event text.
pub trait EventRenderer: Send + Sync + std::fmt::Debug {
    /// Appends the payload of event `index` of `source` to `out`; `false` (and nothing
    /// appended) when this renderer has no form for that event's layout.
    fn payload(&self, source: &Source, index: usize, out: &mut String) -> bool;
}

/// The payload of event `index` as text (empty for an index out of range). The workbench's
/// table and tooltips and `latscope events` all show this.
pub fn render_event(source: &Source, index: usize) -> String {
    let mut out = String::new();
    write_payload(source, index, &mut out);
    out
}

/// Appends the payload of event `index` to `out` (see [`render_event`]).
pub fn write_payload(source: &Source, index: usize, out: &mut String) {
    if index >= source.events.len() {
        return;
    }
    if let Some(r) = &source.renderer
        && r.payload(source, index, out)
    {
        return;
    }
    kernel_payload(source, index, out);
}

/// `name=value` pairs of every field of event `index`, space separated, values as people
/// read them ([`crate::display`]).
pub fn fields_payload(source: &Source, index: usize, out: &mut String) {
    crate::display::fields_text(source, index, out);
}

/// The event's fields by name, for the fixed forms below.
struct Named<'a> {
    source: &'a Source,
    fields: Vec<(std::borrow::Cow<'a, str>, FieldValue)>,
}

impl Named<'_> {
    fn get(&self, name: &str) -> Option<FieldValue> {
        self.fields.iter().find(|(n, _)| n == name).map(|&(_, v)| v)
    }
    fn has(&self, names: &[&str]) -> bool {
        names.iter().all(|n| self.get(n).is_some())
    }
    fn s(&self, name: &str) -> String {
        let mut out = String::new();
        if let Some(v) = self.get(name) {
            value_text(self.source, v, &mut out);
        }
        out
    }
    fn i(&self, name: &str) -> i64 {
        self.get(name).and_then(FieldValue::as_i64).unwrap_or(0)
    }
    /// A device number: `MAJ,MIN` of a stored `dev_t`, or the text a parser kept.
    fn dev(&self, name: &str) -> String {
        match self.get(name) {
            Some(FieldValue::UInt(dev)) => crate::kernel::dev_text(dev),
            _ => self.s(name),
        }
    }
    fn u(&self, name: &str) -> u64 {
        self.i(name) as u64
    }
    /// A pointer printed `%016lx`-style; text parsers keep such values as the text they read.
    fn x16(&self, name: &str) -> String {
        match self.get(name) {
            Some(FieldValue::Str(_)) => self.s(name),
            _ => format!("{:016x}", self.u(name)),
        }
    }
}

/// trace-cmd's sched plugin form of a task state: the letters of its bits (`S|D`), `R` for
/// none.
pub fn write_task_state(bits: u64, out: &mut String) {
    let mut any = false;
    for (i, c) in "SDTtZXxW".chars().enumerate() {
        if bits & (1 << i) != 0 {
            if any {
                out.push('|');
            }
            out.push(c);
            any = true;
        }
    }
    if !any {
        out.push('R');
    }
}

/// A stored task state: states parsed from text are kept as text and shown as they are.
fn task_state(v: Option<FieldValue>, source: &Source, out: &mut String) {
    match v {
        Some(FieldValue::Str(s)) => out.push_str(&source.strings.resolve(s)),
        Some(v) => write_task_state(v.as_i64().unwrap_or(0) as u64, out),
        None => out.push('R'),
    }
}

/// The payload of event `index` as `trace-cmd report` prints it: the kernel's TP_printk
/// forms, with trace-cmd's sched plugin forms of `sched_switch` and `sched_wakeup`, from the
/// field names latscope's parsers and the simulator give these events; `name=value` pairs
/// when the event is not one of them or lacks a field its form needs.
pub fn kernel_payload(source: &Source, index: usize, out: &mut String) {
    forms(source, index, out, true);
}

/// The payload of event `index` as the kernel's own `trace` file prints it (TP_printk forms
/// throughout, `sched_switch` as `prev_comm=… ==> next_comm=…`): what the simulator writes.
pub fn tp_printk_payload(source: &Source, index: usize, out: &mut String) {
    forms(source, index, out, false);
}

fn forms(source: &Source, index: usize, out: &mut String, plugins: bool) {
    let Some(ev) = source.events.get(index) else { return };
    let s = &source.strings;
    let name = s.resolve(ev.name());
    let f = Named { source, fields: ev.fields().map(|(n, v)| (s.resolve(n), v)).collect() };
    let start = out.len();
    let done = match name.as_ref() {
        "sched_switch" if !plugins && f.has(&["prev_comm", "prev_pid", "next_comm", "next_pid"]) => {
            let _ = write!(
                out,
                "prev_comm={} prev_pid={} prev_prio={} prev_state={} ==> next_comm={} next_pid={} next_prio={}",
                f.s("prev_comm"),
                f.i("prev_pid"),
                f.i("prev_prio"),
                f.s("prev_state"),
                f.s("next_comm"),
                f.i("next_pid"),
                f.i("next_prio")
            );
            true
        }
        "sched_switch" if f.has(&["prev_comm", "prev_pid", "next_comm", "next_pid"]) => {
            let _ = write!(out, "{}:{} [{}] ", f.s("prev_comm"), f.i("prev_pid"), f.i("prev_prio"));
            task_state(f.get("prev_state"), source, out);
            let _ = write!(out, " ==> {}:{} [{}]", f.s("next_comm"), f.i("next_pid"), f.i("next_prio"));
            true
        }
        "sched_wakeup" | "sched_wakeup_new" if plugins && f.has(&["comm", "pid"]) => {
            let _ = write!(out, "{}:{}", f.s("comm"), f.i("pid"));
            if f.get("prio").is_some() {
                let _ = write!(out, " [{}]", f.i("prio"));
            }
            if f.get("success").is_some() {
                let _ = write!(out, " success={}", f.i("success"));
            }
            if f.get("target_cpu").is_some() {
                let _ = write!(out, " CPU:{:03}", f.i("target_cpu"));
            }
            true
        }
        // The kernel's form of the wakeups (trace-cmd's plugin forms sched_wakeup above).
        "sched_waking" | "sched_wakeup" | "sched_wakeup_new"
            if f.has(&["comm", "pid", "prio", "target_cpu"]) =>
        {
            let _ = write!(
                out,
                "comm={} pid={} prio={} target_cpu={:03}",
                f.s("comm"),
                f.i("pid"),
                f.i("prio"),
                f.i("target_cpu")
            );
            true
        }
        "irq_handler_entry" if f.has(&["irq", "name"]) => {
            let _ = write!(out, "irq={} name={}", f.i("irq"), f.s("name"));
            true
        }
        "irq_handler_exit" if f.has(&["irq", "ret"]) => {
            let _ = write!(out, "irq={} ret={}", f.i("irq"), f.s("ret"));
            true
        }
        "softirq_entry" | "softirq_exit" | "softirq_raise" if f.has(&["vec"]) => {
            let vec = f.u("vec");
            let _ = write!(out, "vec={vec} [action={}]", kernel::softirq_name(vec).unwrap_or("UNKNOWN"));
            true
        }
        "mmc_request_start" if f.has(&["host", "mrq", "cmd_opcode"]) => {
            let _ = write!(
                out,
                "{}: start struct mmc_request[{:x}]: cmd_opcode={} cmd_arg=0x{:x} cmd_flags=0x0 cmd_retries={} \
                 stop_opcode=0 stop_arg=0x0 stop_flags=0x0 stop_retries=0 sbc_opcode=0 sbc_arg=0x0 sbc_flags=0x0 \
                 sbc_retires=0 blocks={} block_size={} blk_addr={} data_flags=0x0 tag=0 can_retune=0 \
                 doing_retune=0 retune_now=0 need_retune=0 hold_retune=0 retune_period=0",
                f.s("host"),
                f.u("mrq"),
                f.u("cmd_opcode"),
                f.u("cmd_arg"),
                f.u("cmd_retries"),
                f.u("blocks"),
                f.u("block_size"),
                f.u("blk_addr")
            );
            true
        }
        "mmc_request_done" if f.has(&["host", "mrq", "cmd_opcode"]) => {
            let _ = write!(
                out,
                "{}: end struct mmc_request[{:x}]: cmd_opcode={} cmd_err={} cmd_resp=0x0 0x0 0x0 0x0 cmd_retries={} \
                 stop_opcode=0 stop_err=0 stop_resp=0x0 0x0 0x0 0x0 stop_retries=0 sbc_opcode=0 sbc_err=0 \
                 sbc_resp=0x0 0x0 0x0 0x0 sbc_retries=0 bytes_xfered={} data_err={} tag=0 can_retune=0 \
                 doing_retune=0 retune_now=0 need_retune=0 hold_retune=0 retune_period=0",
                f.s("host"),
                f.u("mrq"),
                f.u("cmd_opcode"),
                f.i("cmd_err"),
                f.u("cmd_retries"),
                f.u("bytes_xfered"),
                f.i("data_err")
            );
            true
        }
        "cpu_idle" if f.has(&["state", "cpu_id"]) => {
            let _ = write!(out, "state={} cpu_id={}", f.u("state") as u32, f.u("cpu_id"));
            true
        }
        // Block events as the kernel prints them, with the parts the source holds: bytes,
        // the command in parentheses (request events), sector range, ioprio
        // (`class,hint,level`, kernels from 2024), then the comm or the error.
        n if n.starts_with("block_") && f.has(&["dev", "rwbs"]) => {
            let _ = write!(out, "{} {}", f.dev("dev"), f.s("rwbs"));
            if f.get("bytes").is_some() {
                let _ = write!(out, " {}", f.u("bytes"));
            }
            if n.starts_with("block_rq_") {
                let _ = write!(out, " ({})", f.s("cmd"));
            }
            if f.has(&["sector", "nr_sector"]) {
                let _ = write!(out, " {} + {}", f.u("sector"), f.u("nr_sector"));
            }
            if f.get("ioprio").is_some() {
                let _ = write!(out, " {}", f.s("ioprio"));
            }
            if f.get("comm").is_some() {
                let _ = write!(out, " [{}]", f.s("comm"));
            } else if f.get("error").is_some() {
                let _ = write!(out, " [{}]", f.i("error"));
            }
            true
        }
        "irq_disable" | "irq_enable" | "preempt_disable" | "preempt_enable"
            if f.has(&["caller", "parent"]) =>
        {
            let _ = write!(out, "caller={} parent={}", f.s("caller"), f.s("parent"));
            true
        }
        "napi_poll" if f.has(&["napi", "dev_name", "work", "budget"]) => {
            let _ = write!(
                out,
                "napi poll on napi struct {} for device {} work {} budget {}",
                f.x16("napi"),
                f.s("dev_name"),
                f.i("work"),
                f.i("budget")
            );
            true
        }
        "net_dev_xmit" if f.has(&["dev", "skbaddr", "len", "rc"]) => {
            let _ = write!(
                out,
                "dev={} skbaddr={} len={} rc={}",
                f.s("dev"),
                f.x16("skbaddr"),
                f.u("len"),
                f.i("rc")
            );
            true
        }
        "print" | "bprint" | "bputs" | "tracing_mark_write" if f.has(&["text"]) => {
            if let Some(caller) = f.get("caller").or_else(|| f.get("ip")) {
                value_text(source, caller, out);
                out.push_str(": ");
            }
            out.push_str(&f.s("text"));
            true
        }
        "function" if f.has(&["func"]) => {
            out.push_str(&f.s("func"));
            if f.get("parent").is_some() {
                let _ = write!(out, " <-- {}", f.s("parent"));
            }
            true
        }
        _ => false,
    };
    if !done {
        out.truncate(start);
        fields_payload(source, index, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{EventTableBuilder, FieldKind, IrqFlags, SourceKind};
    use std::sync::Arc;

    fn source(events: &[(&str, &[(&str, FieldValue)])]) -> Source {
        let mut b = EventTableBuilder::new();
        let comm = b.intern(b"task");
        for (i, (name, fields)) in events.iter().enumerate() {
            let e = b.intern(name.as_bytes());
            let defs: Vec<_> = fields.iter().map(|(n, v)| (b.intern(n.as_bytes()), v.kind())).collect();
            let l = b.layout(e, &defs);
            let vals: Vec<_> = fields.iter().map(|f| f.1).collect();
            b.push(i as i64, 0, 1, comm, IrqFlags::NONE, l, &vals);
        }
        let mut src = Source::new("t", "test", SourceKind::File);
        (src.events, src.strings) = b.finish().expect("finish");
        src
    }

    #[test]
    fn kernel_forms_and_fallback() {
        let mut src = source(&[
            ("softirq_entry", &[("vec", FieldValue::UInt(9))]),
            ("my_event", &[("a", FieldValue::Int(-3)), ("b", FieldValue::UInt(7))]),
            ("sched_wakeup", &[("pid", FieldValue::Int(5)), ("prio", FieldValue::Int(120))]),
        ]);
        assert_eq!(render_event(&src, 0), "vec=9 [action=RCU]");
        assert_eq!(render_event(&src, 1), "a=-3 b=7");
        // A form whose fields are missing falls back to name=value pairs.
        assert_eq!(render_event(&src, 2), "pid=5 prio=120");
        assert_eq!(render_event(&src, 99), "");

        #[derive(Debug)]
        struct OnlyFirst;
        impl EventRenderer for OnlyFirst {
            fn payload(&self, _: &Source, index: usize, out: &mut String) -> bool {
                (index == 0).then(|| out.push_str("custom")).is_some()
            }
        }
        src.renderer = Some(Arc::new(OnlyFirst));
        assert_eq!(render_event(&src, 0), "custom");
        assert_eq!(render_event(&src, 1), "a=-3 b=7", "events it declines use the default");
        let _ = FieldKind::Int;
    }

    #[test]
    fn sched_plugin_forms() {
        let mut b = EventTableBuilder::new();
        let comm = b.intern(b"task");
        let names: Vec<_> =
            ["prev_comm", "prev_pid", "prev_prio", "prev_state", "next_comm", "next_pid", "next_prio"]
                .iter()
                .map(|n| b.intern(n.as_bytes()))
                .collect();
        let kinds = [
            FieldKind::Str,
            FieldKind::Int,
            FieldKind::Int,
            FieldKind::Int,
            FieldKind::Str,
            FieldKind::Int,
            FieldKind::Int,
        ];
        let defs: Vec<_> = names.iter().copied().zip(kinds).collect();
        let e = b.intern(b"sched_switch");
        let l = b.layout(e, &defs);
        let (bash, idle) = (b.intern(b"bash"), b.intern(b"swapper/0"));
        let vals = |state: i64| {
            [
                FieldValue::Str(bash),
                FieldValue::Int(42),
                FieldValue::Int(120),
                FieldValue::Int(state),
                FieldValue::Str(idle),
                FieldValue::Int(0),
                FieldValue::Int(120),
            ]
        };
        b.push(0, 0, 42, comm, IrqFlags::NONE, l, &vals(1));
        b.push(1, 0, 42, comm, IrqFlags::NONE, l, &vals(0));
        b.push(2, 0, 42, comm, IrqFlags::NONE, l, &vals(0x41));
        let mut src = Source::new("t", "test", SourceKind::File);
        (src.events, src.strings) = b.finish().expect("finish");
        assert_eq!(render_event(&src, 0), "bash:42 [120] S ==> swapper/0:0 [120]");
        assert_eq!(render_event(&src, 1), "bash:42 [120] R ==> swapper/0:0 [120]");
        assert_eq!(render_event(&src, 2), "bash:42 [120] S|x ==> swapper/0:0 [120]");
    }
}

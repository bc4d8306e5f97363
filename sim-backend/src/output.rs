//! Writers for other tools: ftrace text in the kernel's `trace` format (FORMATS.md §1.2,
//! §1.3, payloads as the kernel's TP_printk formats of §1.8) and VCD for waveform viewers.

use latscope_model::{FieldValue, PS_PER_S, Ps, Source, Sym, kernel};
use std::io::{self, Write};

fn softirq_name(vec: u64) -> &'static str {
    kernel::softirq_name(vec).unwrap_or("UNKNOWN")
}

struct Fields<'a> {
    src: &'a Source,
    names: &'a [String],
    vals: Vec<FieldValue>,
}

impl Fields<'_> {
    fn get(&self, name: &str) -> Option<FieldValue> {
        self.names.iter().position(|n| n == name).and_then(|i| self.vals.get(i).copied())
    }
    fn s(&self, name: &str) -> String {
        match self.get(name) {
            Some(FieldValue::Str(s)) => self.src.strings.resolve(s).into_owned(),
            Some(FieldValue::Int(i)) => i.to_string(),
            Some(FieldValue::UInt(u)) => u.to_string(),
            None => String::new(),
        }
    }
    fn u(&self, name: &str) -> u64 {
        match self.get(name) {
            Some(FieldValue::Int(i)) => i as u64,
            Some(FieldValue::UInt(u)) => u,
            _ => 0,
        }
    }
    fn i(&self, name: &str) -> i64 {
        self.get(name).and_then(FieldValue::as_i64).unwrap_or(0)
    }
}

/// The TP_printk payload of one event.
fn payload(event: &str, f: &Fields<'_>) -> String {
    match event {
        "irq_handler_entry" => format!("irq={} name={}", f.i("irq"), f.s("name")),
        "irq_handler_exit" => format!("irq={} ret={}", f.i("irq"), f.s("ret")),
        "softirq_entry" | "softirq_exit" | "softirq_raise" => {
            format!("vec={} [action={}]", f.u("vec"), softirq_name(f.u("vec")))
        }
        "sched_wakeup" | "sched_waking" => format!(
            "comm={} pid={} prio={} target_cpu={:03}",
            f.s("comm"),
            f.i("pid"),
            f.i("prio"),
            f.i("target_cpu")
        ),
        "sched_switch" => format!(
            "prev_comm={} prev_pid={} prev_prio={} prev_state={} ==> next_comm={} next_pid={} next_prio={}",
            f.s("prev_comm"),
            f.i("prev_pid"),
            f.i("prev_prio"),
            f.s("prev_state"),
            f.s("next_comm"),
            f.i("next_pid"),
            f.i("next_prio")
        ),
        "cpu_idle" => format!("state={} cpu_id={}", f.u("state"), f.u("cpu_id")),
        "irq_disable" | "irq_enable" => format!("caller={} parent={}", f.s("caller"), f.s("parent")),
        "block_rq_issue" => format!(
            "{} {} {} ({}) {} + {} [{}]",
            f.s("dev"),
            f.s("rwbs"),
            f.u("bytes"),
            f.s("cmd"),
            f.u("sector"),
            f.u("nr_sector"),
            f.s("comm")
        ),
        "block_rq_complete" => format!(
            "{} {} ({}) {} + {} [{}]",
            f.s("dev"),
            f.s("rwbs"),
            f.s("cmd"),
            f.u("sector"),
            f.u("nr_sector"),
            f.i("error")
        ),
        "mmc_request_start" => format!(
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
        ),
        "mmc_request_done" => format!(
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
        ),
        "net_dev_xmit" => {
            format!("dev={} skbaddr={:016x} len={} rc={}", f.s("dev"), f.u("skbaddr"), f.u("len"), f.i("rc"))
        }
        "napi_poll" => format!(
            "napi poll on napi struct {:016x} for device {} work {} budget {}",
            f.u("napi"),
            f.s("dev_name"),
            f.i("work"),
            f.i("budget")
        ),
        "tracing_mark_write" | "print" => f.s("text"),
        _ => f.names.iter().map(|n| format!("{n}={}", f.s(n))).collect::<Vec<_>>().join(" "),
    }
}

/// Writes `src`'s events as a tracefs `trace` file (tracer nop, irq-info flags, clock in
/// ns printed as seconds with 6 decimals, truncated like the kernel's).
pub fn write_ftrace(src: &Source, w: &mut impl Write) -> io::Result<()> {
    let n = src.events.len();
    let cpus = src.events.cpu.iter().copied().max().map_or(1, |c| u32::from(c) + 1);
    writeln!(w, "# tracer: nop")?;
    writeln!(w, "#")?;
    writeln!(w, "# entries-in-buffer/entries-written: {n}/{n}   #P:{cpus}")?;
    writeln!(w, "#")?;
    for l in [
        "#                                _-----=> irqs-off/BH-disabled",
        "#                               / _----=> need-resched",
        "#                              | / _---=> hardirq/softirq",
        "#                              || / _--=> preempt-depth",
        "#                              ||| / _-=> migrate-disable",
        "#                              |||| /     delay",
        "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION",
        "#              | |         |   |||||     |         |",
    ] {
        writeln!(w, "{l}")?;
    }
    // Names of each layout's event and fields, resolved once.
    let layouts: Vec<(String, Vec<String>)> = src
        .events
        .layouts()
        .iter()
        .map(|l| {
            (
                src.strings.resolve(l.event).into_owned(),
                l.fields.iter().map(|f| src.strings.resolve(f.0).into_owned()).collect(),
            )
        })
        .collect();
    let comms: Vec<String> =
        (0..src.strings.len()).map(|i| src.strings.resolve(Sym(i as u32)).into_owned()).collect();
    for ev in src.events.iter() {
        let li = src.events.layout[ev.index].0 as usize;
        let Some((name, names)) = layouts.get(li) else { continue };
        let f = Fields { src, names, vals: ev.fields().map(|(_, v)| v).collect() };
        let abs = src.origin.ps + ev.ts();
        let secs = src.origin.secs + abs.div_euclid(PS_PER_S);
        let usec = abs.rem_euclid(PS_PER_S) / 1_000_000;
        let comm = comms.get(ev.comm().0 as usize).map_or("<...>", String::as_str);
        writeln!(
            w,
            "{comm:>16}-{:<7} [{:03}] {} {secs:>5}.{usec:06}: {name}: {}",
            ev.pid(),
            ev.cpu(),
            ev.flags().render(),
            payload(name, &f)
        )?;
    }
    Ok(())
}

fn vcd_id(i: usize) -> String {
    // Printable identifiers '!'..'~', then two characters.
    let base = 94;
    if i < base {
        char::from(b'!' + i as u8).to_string()
    } else {
        format!("{}{}", char::from(b'!' + (i / base - 1) as u8 % 94), char::from(b'!' + (i % base) as u8))
    }
}

/// Writes the digital lines as VCD with a 1 ps timescale.
pub fn write_vcd(src: &Source, w: &mut impl Write) -> io::Result<()> {
    writeln!(w, "$date simulated by latscope $end")?;
    writeln!(w, "$version latscope-sim {} $end", env!("CARGO_PKG_VERSION"))?;
    writeln!(w, "$timescale 1ps $end")?;
    writeln!(w, "$scope module {} $end", src.name.replace(|c: char| !c.is_ascii_alphanumeric(), "_"))?;
    for (i, d) in src.digital.iter().enumerate() {
        writeln!(w, "$var wire 1 {} {} $end", vcd_id(i), d.name.replace(' ', "_"))?;
    }
    writeln!(w, "$upscope $end")?;
    writeln!(w, "$enddefinitions $end")?;
    let level = |l: u8| match l {
        0 => '0',
        1 => '1',
        3 => 'z',
        _ => 'x',
    };
    writeln!(w, "#0")?;
    writeln!(w, "$dumpvars")?;
    for (i, d) in src.digital.iter().enumerate() {
        writeln!(w, "{}{}", level(d.level_at(0)), vcd_id(i))?;
    }
    writeln!(w, "$end")?;
    let mut changes: Vec<(Ps, usize, u8)> = src
        .digital
        .iter()
        .enumerate()
        .flat_map(|(i, d)| {
            d.times.iter().zip(&d.levels).filter(|(t, _)| **t > 0).map(move |(&t, &l)| (t, i, l))
        })
        .collect();
    changes.sort_by_key(|c| (c.0, c.1));
    let mut last = 0;
    for (t, i, l) in changes {
        if t != last {
            writeln!(w, "#{t}")?;
            last = t;
        }
        writeln!(w, "{}{}", level(l), vcd_id(i))?;
    }
    let end = src.digital.iter().map(|d| d.end).max().unwrap_or(0);
    if end > last {
        writeln!(w, "#{end}")?;
    }
    Ok(())
}

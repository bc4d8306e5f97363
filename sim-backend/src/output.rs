//! Writers for other tools: ftrace text in the kernel's `trace` format (its header and
//! `TASK-PID [CPU] FLAGS TIMESTAMP: event: payload` lines; payloads as the kernel's
//! TP_printk formats, rendered by the model's
//! `tp_printk_payload`) and VCD for waveform viewers.

use latscope_model::{PS_PER_S, Ps, Source, Sym, tp_printk_payload};
use std::io::{self, Write};

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
    // Names of each layout's event, resolved once.
    let layouts: Vec<String> =
        src.events.layouts().iter().map(|l| src.strings.resolve(l.event).into_owned()).collect();
    let comms: Vec<String> =
        (0..src.strings.len()).map(|i| src.strings.resolve(Sym(i as u32)).into_owned()).collect();
    let mut payload = String::new();
    for ev in src.events.iter() {
        let li = src.events.layout[ev.index].0 as usize;
        let Some(name) = layouts.get(li) else { continue };
        payload.clear();
        tp_printk_payload(src, ev.index, &mut payload);
        let abs = src.origin.ps + ev.ts();
        let secs = src.origin.secs + abs.div_euclid(PS_PER_S);
        let usec = abs.rem_euclid(PS_PER_S) / 1_000_000;
        let comm = comms.get(ev.comm().0 as usize).map_or("<...>", String::as_str);
        writeln!(
            w,
            "{comm:>16}-{:<7} [{:03}] {} {secs:>5}.{usec:06}: {name}: {payload}",
            ev.pid(),
            ev.cpu(),
            ev.flags().render(),
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
        .flat_map(|(i, d)| d.changes().filter(|(t, _)| *t > 0).map(move |(t, l)| (t, i, l)))
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

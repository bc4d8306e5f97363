//! The `litesdcard` scenario's SD bus against the SD decoder: every command, response, data
//! block (and its bytes), CRC status and busy the simulator drove is decoded from the
//! emitted lines with the right values and the same span, and every `mmc_request_start` of
//! the kernel side has its command on the bus after it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::models::sdbus::{BusItem, Logged};
use latscope_decoders::{Annotation, Inputs, Value};
use latscope_model::Source;

const SPEC: &str = "sd:clk=SD_CLK,cmd=SD_CMD,dat0=SD_DAT0,dat1=SD_DAT1,dat2=SD_DAT2,dat3=SD_DAT3";

/// Runs the scenario with the bus on to its end: the source and the bus's ground truth.
fn run_with_bus(sets: &[&str]) -> (Source, Vec<Logged>) {
    let mut s = Scenario::load("litesdcard").unwrap();
    for kv in ["sd_bus=true", "requests=3"].iter().chain(sets) {
        let (k, v) = kv.split_once('=').unwrap();
        s.set(k, v).unwrap();
    }
    let mut sim = build_sim(&s).unwrap();
    while sim.step().is_some() {}
    let log = std::mem::take(&mut sim.w.bus.as_mut().unwrap().log);
    (sim.w.out.finish("litesdcard"), log)
}

fn uint(a: &Annotation, k: &str) -> u64 {
    match a.field(k) {
        Some(Value::UInt(v)) => *v,
        Some(Value::Bool(b)) => u64::from(*b),
        other => panic!("{k}: {other:?} in {a:?}"),
    }
}

fn text(a: &Annotation, k: &str) -> String {
    match a.field(k) {
        Some(Value::Str(s)) => s.clone(),
        other => panic!("{k}: {other:?} in {a:?}"),
    }
}

fn rows<'a>(anns: &'a [Annotation], row: &str) -> Vec<&'a Annotation> {
    anns.iter().filter(|a| a.row == row).collect()
}

/// Checks the decode of a run against its ground truth; the decoded command indices.
fn check(sets: &[&str]) -> Vec<u64> {
    let (src, log) = run_with_bus(sets);
    let decoded = latscope_decoders::decode(SPEC, &Inputs::of_source(&src, None)).unwrap();
    assert!(decoded.errors.is_empty(), "{sets:?}: decode errors {:?}", decoded.errors);
    let anns = &decoded.annotations;
    let of = |f: fn(&BusItem) -> bool| log.iter().filter(|l| f(&l.item)).collect::<Vec<_>>();

    let cmds = rows(anns, "cmd");
    let sent = of(|i| matches!(i, BusItem::Command { .. }));
    assert!(sent.len() >= 7, "{sets:?}: {} commands", sent.len());
    assert_eq!(cmds.len(), sent.len(), "{sets:?}: commands");
    for (a, l) in cmds.iter().zip(&sent) {
        let BusItem::Command { index, arg } = l.item else { unreachable!() };
        assert_eq!((uint(a, "index"), uint(a, "arg")), (u64::from(index), u64::from(arg)), "{a:?}");
        assert_eq!((a.start, a.end), (l.start, l.end), "{sets:?}: span of {a:?}");
        assert_eq!(uint(a, "crc_ok"), 1);
    }
    let resps = rows(anns, "response");
    let answered = of(|i| matches!(i, BusItem::Response { .. }));
    assert_eq!(resps.len(), answered.len(), "{sets:?}: responses");
    for (a, l) in resps.iter().zip(&answered) {
        let BusItem::Response { index, status } = l.item else { unreachable!() };
        assert_eq!((uint(a, "index"), uint(a, "arg")), (u64::from(index), u64::from(status)), "{a:?}");
        assert_eq!((a.start, a.end), (l.start, l.end), "{sets:?}: span of {a:?}");
        assert_eq!(uint(a, "crc_ok"), 1);
        let ty = if index == 12 { "R1b" } else { "R1" };
        assert_eq!(text(a, "type"), ty);
    }
    let data = rows(anns, "data");
    let blocks = of(|i| matches!(i, BusItem::Block { .. }));
    assert!(blocks.len() >= 48, "{sets:?}: {} blocks", blocks.len());
    assert_eq!(data.len(), blocks.len(), "{sets:?}: blocks");
    for (a, l) in data.iter().zip(&blocks) {
        let BusItem::Block { block, write, .. } = l.item else { unreachable!() };
        assert_eq!((a.start, a.end), (l.start, l.end), "{sets:?}: span of {a:?}");
        assert_eq!(uint(a, "crc_ok"), 1, "{a:?}");
        assert_eq!((uint(a, "block"), uint(a, "write")), (u64::from(block), u64::from(write)), "{a:?}");
        assert_eq!(uint(a, "bytes"), 512);
    }
    // The bytes of each data command's blocks are its sectors' pattern.
    for c in cmds.iter().filter(|c| matches!(uint(c, "index"), 18 | 25)) {
        let seq = uint(c, "seq");
        let got: String = data.iter().filter(|d| uint(d, "seq") == seq).map(|d| text(d, "hex")).collect();
        let want: String =
            sdbus::sector_bytes(uint(c, "arg"), 8).iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(got, want, "{sets:?}: data of {c:?}");
    }
    let status = rows(anns, "crc-status");
    let tokens = of(|i| matches!(i, BusItem::CrcStatus { .. }));
    assert_eq!(status.len(), tokens.len());
    for (a, l) in status.iter().zip(&tokens) {
        assert_eq!((a.start, a.end, uint(a, "accepted")), (l.start, l.end, 1), "{a:?}");
    }
    let busy = rows(anns, "busy");
    let held = of(|i| matches!(i, BusItem::Busy));
    assert_eq!(busy.len(), held.len());
    for (a, l) in busy.iter().zip(&held) {
        assert_eq!((a.start, a.end), (l.start, l.end), "{sets:?}: busy {a:?}");
    }

    // The kernel side: each mmc_request_start is followed by its command on the bus, the
    // same opcode and argument, in the same order, within the CPU work.
    let opcode = latscope_analysis::endpoint::FieldSel::new(&src, "cmd_opcode");
    let arg = latscope_analysis::endpoint::FieldSel::new(&src, "cmd_arg");
    let start = src.strings.lookup(b"mmc_request_start").unwrap();
    let starts: Vec<_> = src.events.iter().filter(|e| e.name() == start).collect();
    assert_eq!(starts.len(), cmds.len(), "{sets:?}: mmc_request_start vs commands on the bus");
    for (e, c) in starts.iter().zip(&cmds) {
        assert_eq!(opcode.get(e).and_then(|v| v.as_i64()), Some(uint(c, "index") as i64));
        assert_eq!(arg.get(e).and_then(|v| v.as_i64()), Some(uint(c, "arg") as i64));
        assert!(c.start > e.ts() && c.start - e.ts() < 100_000_000, "{c:?} long after {}", e.ts());
    }
    cmds.iter().map(|c| uint(c, "index")).collect()
}

#[test]
fn the_decoder_reads_back_every_command_block_and_busy_the_bus_carried() {
    // The old driver (IRQ for data commands) and the new one (IRQs for everything).
    // Three reads (CMD23, CMD18) and three writes (CMD23, CMD25, CMD13).
    let want = [23, 18, 23, 18, 23, 18, 23, 25, 13, 23, 25, 13, 23, 25, 13];
    assert_eq!(check(&["mode=cmd-irq"]), want);
    assert_eq!(check(&["mode=all-irq", "cpu=microwatt-100mhz"]), want);
}

#[test]
fn retries_after_polled_errors_are_on_the_bus_too() {
    // Polling with errors: CMD12 (R1b) and CMD13 of the recovery, then the data again.
    let sent = check(&["mode=poll-0us", "requests=6", "seed=3"]);
    let stops = sent.iter().filter(|&&i| i == 12).count();
    assert!(stops >= 2, "{sent:?}");
    assert!(sent.len() > 6 * 2 + 6 * 3 + stops, "{sent:?}");
}

#[test]
fn the_bus_follows_the_model_and_its_clock_stops_in_long_waits() {
    let (src, log) = run_with_bus(&["mode=cmd-irq"]);
    let clk = src.digital.iter().find(|d| d.name == "SD_CLK").unwrap();
    // 40 ns at 25 MHz.
    let period = clk.times[1] - clk.times[0];
    assert_eq!(period * 2, 40_000, "a half period");
    // Far fewer clocks than the run is long: gated in the read access and write busy.
    let run_clocks = (clk.end - clk.times[0]) / 40_000;
    let clocks = clk.times.len() as i64 / 2;
    assert!(clocks * 5 < run_clocks, "{clocks} clocks over {run_clocks}");
    // Every item's span is a whole number of clocks, items never overlap on the bus.
    for w in log.windows(2) {
        assert!(w[0].start < w[0].end && w[0].end <= w[1].start, "{w:?}");
        assert_eq!((w[0].end - w[0].start) % 40_000, 0);
    }
    // The model's command-phase line (CMD) rises at each issue: the command token starts
    // on the bus within the next clocks.
    let phase = src.digital.iter().find(|d| d.name == "CMD").unwrap();
    let rises: Vec<i64> = phase.times.iter().zip(&phase.levels).filter(|p| *p.1 == 1).map(|p| *p.0).collect();
    let commands: Vec<&Logged> = log.iter().filter(|l| matches!(l.item, BusItem::Command { .. })).collect();
    assert_eq!(rises.len(), commands.len());
    for (r, c) in rises.iter().zip(&commands) {
        assert!(c.start > *r && c.start - r <= 40_000 * 3, "command at {} after the issue at {r}", c.start);
    }
}

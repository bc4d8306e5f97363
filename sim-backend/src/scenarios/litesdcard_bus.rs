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
        Some(Value::UInt(v) | Value::Hex(v)) => *v,
        Some(Value::Bool(b)) => u64::from(*b),
        other => panic!("{k}: {other:?} in {a:?}"),
    }
}

fn text(a: &Annotation, k: &str) -> String {
    match a.field(k) {
        Some(Value::Str(s)) => s.to_string(),
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
    let period = clk.time(1) - clk.time(0);
    assert_eq!(period * 2, 40_000, "a half period");
    // Far fewer clocks than the run is long: gated in the read access and write busy.
    let run_clocks = (clk.end - clk.time(0)) / 40_000;
    let clocks = clk.transitions() as i64 / 2;
    assert!(clocks * 5 < run_clocks, "{clocks} clocks over {run_clocks}");
    // Every item's span is a whole number of clocks, items never overlap on the bus.
    for w in log.windows(2) {
        assert!(w[0].start < w[0].end && w[0].end <= w[1].start, "{w:?}");
        assert_eq!((w[0].end - w[0].start) % 40_000, 0);
    }
    // The model's command-phase line (CMD) rises at each issue: the command token starts
    // on the bus within the next clocks.
    let phase = src.digital.iter().find(|d| d.name == "CMD").unwrap();
    let rises: Vec<i64> = phase.changes().filter(|p| p.1 == 1).map(|p| p.0).collect();
    let commands: Vec<&Logged> = log.iter().filter(|l| matches!(l.item, BusItem::Command { .. })).collect();
    assert_eq!(rises.len(), commands.len());
    for (r, c) in rises.iter().zip(&commands) {
        assert!(c.start > *r && c.start - r <= 40_000 * 3, "command at {} after the issue at {r}", c.start);
    }
}

/// The run of `sets` with its bus decoded and attached as events: the source and the log.
fn decoded_run(sets: &[&str]) -> (Source, Vec<Logged>) {
    let (mut src, log) = run_with_bus(sets);
    let decoded = latscope_decoders::decode(SPEC, &Inputs::of_source(&src, None)).unwrap();
    decoded.attach(&mut src).unwrap();
    (src, log)
}

fn chain(sources: &[Placed<'_>]) -> latscope_analysis::outcome::Outcome {
    let spec = latscope_analysis::spec::parse_spec("chain:irq=3").unwrap();
    let mut out = latscope_analysis::runner::run_spec(&spec, sources).unwrap();
    assert_eq!(out.len(), 1);
    out.remove(0)
}

/// Each sample's stage boundaries: start of the first stage, then each stage's end.
fn boundaries(c: &latscope_analysis::outcome::Outcome) -> Vec<Vec<Ps>> {
    (0..c.samples.len())
        .map(|k| {
            let mut b = vec![c.stages[0].samples[k].start];
            b.extend(c.stages.iter().map(|s| s.samples[k].end));
            b
        })
        .collect()
}

use latscope_model::Placed;

#[test]
fn the_chain_runs_through_the_bus_at_the_times_the_model_drove_it() {
    let (src, log) = decoded_run(&["mode=cmd-irq"]);
    let c = chain(&[Placed::unaligned(&src)]);
    let names: Vec<&str> = c.stages.iter().map(|s| s.name.strip_prefix("chain:irq=3/").unwrap()).collect();
    assert_eq!(names, latscope_analysis::chain::BUS_STAGES);
    // The old driver takes the IRQ for the data commands only: 3 reads and 3 writes.
    assert_eq!(c.samples.len(), 6, "{:?}", c.notes);
    // CMD23 (six) and CMD13 (three) are polled: no IRQ line rise before the next request.
    assert_eq!(c.stages[3].unmatched_start, 9, "{:?}", c.notes);
    let data_cmds: Vec<usize> =
        (0..log.len()).filter(|&i| matches!(log[i].item, BusItem::Command { index: 18 | 25, .. })).collect();
    assert_eq!(data_cmds.len(), 6);
    let irq = src.digital.iter().find(|d| d.name == "IRQ").unwrap();
    let rises: Vec<Ps> = irq.changes().filter(|p| p.1 == 1).map(|p| p.0).collect();
    let start = src.strings.lookup(b"mmc_request_start").unwrap();
    let op = latscope_analysis::endpoint::FieldSel::new(&src, "cmd_opcode");
    let requests: Vec<Ps> = src
        .events
        .iter()
        .filter(|e| e.name() == start && matches!(op.get(e).and_then(|v| v.as_i64()), Some(18 | 25)))
        .map(|e| e.ts())
        .collect();
    for (k, (b, &ci)) in boundaries(&c).iter().zip(&data_cmds).enumerate() {
        let BusItem::Command { index, .. } = log[ci].item else { unreachable!() };
        let resp = log[ci + 1];
        // The command's last block (reads) or its last busy (writes): the next command's
        // items start after it.
        let end =
            log[ci + 1..].iter().take_while(|l| !matches!(l.item, BusItem::Command { .. })).last().unwrap();
        assert_eq!(b[0], requests[k], "sample {k}: request");
        assert_eq!(b[1], log[ci].start, "sample {k}: command on the bus");
        assert_eq!(b[2], resp.start, "sample {k}: response");
        assert_eq!(b[3], end.end, "sample {k}: data done");
        assert!(rises.contains(&b[4]), "sample {k}: IRQ line");
        if index == 25 {
            // A write is done, and its IRQ raised, at the clock that samples the busy end.
            assert!(matches!(end.item, BusItem::Busy));
            assert_eq!(b[4], b[3], "sample {k}: write done -> IRQ");
        } else {
            // A read's command-done comes 5 us after the data (cmd_done_after_data_us), the
            // data ending on a clock at or before the model's data end.
            assert!(matches!(end.item, BusItem::Block { block: 7, .. }));
            let gap = b[4] - b[3];
            assert!((5_000_000..5_040_000).contains(&gap), "sample {k}: read done -> IRQ {gap}");
        }
        // The rocket board's IRQ entry takes 30 us; then the handler, wakeup, switch-in.
        assert!(b[5] - b[4] >= 30_000_000, "sample {k}: {b:?}");
        assert!(b.windows(2).all(|w| w[0] <= w[1]), "sample {k}: {b:?}");
        assert_eq!(c.samples[k].end - c.samples[k].start, b[8] - b[0]);
    }
    // The plain chain of the same trace (without the bus) ends each request at the same
    // switch-in: the bus refines it, it does not move it.
    let (plain_src, _) = run_with_bus(&["mode=cmd-irq"]);
    let plain = chain(&[Placed::unaligned(&plain_src)]);
    assert_eq!(plain.stages.len(), 4);
    let ends: Vec<(Ps, Ps)> = plain.samples.iter().map(|s| (s.start, s.end)).collect();
    for s in &c.samples {
        assert!(ends.contains(&(s.start, s.end)), "{s:?} not in the plain chain {ends:?}");
    }
}

#[test]
fn the_chain_joins_a_bus_captured_on_another_clock_once_aligned() {
    let (src, _) = run_with_bus(&["mode=all-irq", "cpu=microwatt-100mhz"]);
    let (mut whole, _) = (src.clone(), ());
    let decoded = latscope_decoders::decode(SPEC, &Inputs::of_source(&whole, None)).unwrap();
    decoded.attach(&mut whole).unwrap();
    let one = chain(&[Placed::unaligned(&whole)]);
    assert!(one.samples.len() >= 15, "{:?}", one.notes);
    // The kernel side alone, and the bus as a logic analyser would see it: its own clock,
    // 1.234567891 ms late.
    let skew: Ps = 1_234_567_891;
    let mut kernel = src.clone();
    kernel.digital.retain(|d| !d.name.starts_with("SD_"));
    let mut capture = Source::new("bus", "vcd", latscope_model::SourceKind::File);
    for d in src.digital.iter().filter(|d| d.name.starts_with("SD_")) {
        let mut d = d.clone();
        d.shift(skew);
        d.end += skew;
        capture.digital.push(d);
    }
    let decoded = latscope_decoders::decode(SPEC, &Inputs::of_source(&capture, None)).unwrap();
    decoded.attach(&mut capture).unwrap();
    let both = [kernel, capture];
    let aligned = Placed::with(
        &both,
        &[latscope_model::Placement::IDENTITY, latscope_model::Placement::new(-skew, 0.0)],
    );
    let two = chain(&aligned);
    assert_eq!(two.source, 0);
    assert_eq!(boundaries(&two), boundaries(&one));
    assert_eq!(two.samples, one.samples);
    // Unaligned, the capture is not the kernel's bus: the chain stays the kernel's own.
    let alone = chain(&Placed::all(&both)[..1]);
    assert_eq!(alone.stages.len(), 4);
}

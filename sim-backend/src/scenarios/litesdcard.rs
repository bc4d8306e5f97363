//! `litesdcard`: copying a file from and to an SD card behind LiteSDCard on a slow soft CPU
//! (shared/context/litesdcard-edge-vs-level-irq.txt), with the driver strategies discussed
//! there: command-done IRQ only for data commands (`cmd-irq`, the current driver), plus
//! DMA-done IRQs (`dma-irq`), IRQs for every command (`all-irq`), or pure polling with a
//! 5 us or 0 us sleep between status reads (`poll-5us`, `poll-0us`).
//!
//! Each 4 KiB block request is CMD23 (set block count) then CMD18/CMD25 (data), and CMD13
//! (status) after writes. A command is issued by CSR writes, the card answers after its
//! latency, the data phase moves blocks with DMA. The driver waits for the command either by
//! polling CMDEVT (sleeping `sd_sleep_us` between reads: a timer interrupt and a wake-up
//! each time) or by sleeping until the command-done IRQ wakes it; then it polls DATAEVT and
//! the DMA status (or sleeps on the DMA-done IRQ).
//!
//! The interrupt controller has pending and enable registers. With level-triggered command
//! done (old gateware) the old driver disables the IRQ in the handler and enables it after
//! issuing the next IRQ-driven command, whose launch drops the old level. On edge-triggered
//! gateware the completions of *polled* commands latch the pending bit while disabled, so the
//! old driver's enable fires at once: the driver wakes before its command is done, reports
//! -110 (ETIMEDOUT) and the MMC core retries — lots of errors, right data in the end.
//! In the polling modes the discussion reports "lots of cmd. errors & retries" without a
//! cause; they are modelled as a per-completion error probability (fitted, see
//! docs/SIMULATOR.md).
//!
//! Metrics: `read_kib_s`/`write_kib_s` from `block_rq_issue -> block_rq_complete` pairs,
//! `cmd_errors` from `mmc_request_start -> mmc_request_done[cmd_err!=0]` pairs, and the
//! latencies of the instrumented driver (markers, IRQ line, `sched_switch`).

use crate::emit::{Ctx, Emitter, Line};
use crate::engine::{Queue, World};
use crate::models::cpu::{Cpu, WakePath};
use crate::models::irq::{IrqController, Trigger};
use crate::models::sdbus::{self, SdBus};
use crate::models::sdhost::{CardTiming, Dir};
use crate::report::{Found, Metrics, us_of};
use crate::rng::{Rng, us};
use crate::scenario::{Scenario, ScenarioError};
use crate::simulation::{Model, Sim};
use latscope_model::{Ps, Sym};
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub scenario: String,
    pub description: String,
    pub seed: u64,
    pub mode: String,
    pub cpu: String,
    pub irq_trigger: String,
    pub driver: String,
    pub file_mib: u64,
    pub request_kib: u64,
    /// SD_SLEEP_US of the driver: the sleep between status reads of polled commands.
    pub sd_sleep_us: f64,
    /// Block requests per direction; 0 means the whole file (`file_mib`).
    #[serde(default)]
    pub requests: u64,
    /// Also emit the SD bus (CLK, CMD, DAT0-3) at bit level: off by default, for short
    /// runs (every bit moved is a few edges).
    #[serde(default)]
    pub sd_bus: bool,
    /// The SD bus clock, MHz (with `sd_bus`).
    #[serde(default = "default_sd_clock_mhz")]
    pub sd_clock_mhz: f64,
    pub poll_errors: BTreeMap<String, ErrorProb>,
    pub cpus: BTreeMap<String, Board>,
}

/// Probability that a polled data command completes with an error, per direction.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorProb {
    pub read: f64,
    pub write: f64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Board {
    /// File-system and copy work per request in the copying task, microseconds (range).
    pub fs_read_us: [f64; 2],
    pub fs_write_us: [f64; 2],
    /// CSR writes to issue a command; one CSR read.
    pub cmd_issue_us: f64,
    pub mmio_read_us: f64,
    /// From the IRQ line to the handler, and the handler itself.
    pub irq_entry_us: f64,
    pub handler_us: f64,
    pub timer_handler_us: f64,
    /// Extra CPU work of the MMC core per failed command before the retry.
    pub recovery_us: f64,
    /// Handler `complete()` to the woken task running; timer expiry to the task running.
    pub irq_wake: WakePath,
    pub timer_wake: WakePath,
    pub card: CardTiming,
}

fn default_sd_clock_mhz() -> f64 {
    25.0
}

/// The card's relative address, as CMD13 (SEND_STATUS) carries it.
const RCA: u32 = 0x0001;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    CmdIrq,
    DmaIrq,
    AllIrq,
    Poll,
}

const CMD_BIT: u32 = 1;
const DMA_BIT: u32 = 2;
const CARD_DETECT: u32 = 1 << 0;
const SD_IRQ: i64 = 3;
const TIMER_IRQ: i64 = 5;
const ETIMEDOUT: i64 = -110;
/// Requests after which the expected size of the whole run is known well enough to reserve.
const RESERVE_AFTER_REQUESTS: u64 = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum What {
    Cmd,
    Dma,
}

#[derive(Debug, Clone, Copy)]
pub enum Ev {
    Request,
    CmdDone(u64),
    DmaDone(u64),
    Poll(u64, What),
    Timer(u64, What),
    Woken(u64, What),
}

#[derive(Debug, Clone, Copy)]
struct Cmd {
    op: u64,
    bytes: u64,
    irq: bool,
}

#[derive(Debug)]
pub struct Lsd {
    b: Board,
    mode: Mode,
    new_driver: bool,
    sleep: Ps,
    err: ErrorProb,
    rng: Rng,
    cpu: Cpu,
    irqc: IrqController,
    edge_trigger: bool,
    out: Emitter,
    l_cmd: Line,
    l_dma: Line,
    l_irq: Line,
    /// The SD bus at bit level, when `sd_bus` is on.
    bus: Option<SdBus>,
    task: (Sym, i32),
    dev: Sym,
    host: Sym,
    rwbs_r: Sym,
    rwbs_w: Sym,
    state_d: Sym,
    state_r: Sym,
    timer_name: Sym,
    sd_name: Sym,
    k_op: Sym,
    k_irq: Sym,
    k_dir: Sym,
    // Run and request state.
    requests: u64,
    req: u64,
    dir: Dir,
    nr: u64,
    cmds: Vec<Cmd>,
    ci: usize,
    mrq: u64,
    retries: u64,
    // Current command.
    cmd_gen: u64,
    issued: Ps,
    cmd_done: Option<Ps>,
    dma_done: Option<Ps>,
    cmd_completion: bool,
    dma_completion: bool,
    waiting: Option<What>,
    retry_when_done: bool,
    line_high: bool,
    /// Interned marker texts, by (kind, opcode, irq, dir): formatting and interning them
    /// per command was a third of the run time.
    texts: rustc_hash::FxHashMap<(u8, u64, u8, u8), Sym>,
}

/// The values of the settings that are words (`cpu` names a `[cpus.NAME]` table).
pub const CHOICES: &[(&str, &[&str])] = &[
    ("mode", &["cmd-irq", "dma-irq", "all-irq", "poll-5us", "poll-0us"]),
    ("irq_trigger", &["level", "edge", "auto"]),
    ("driver", &["old", "new", "auto"]),
];

/// Numbers with limits tighter than "not negative".
pub const RANGES: &[(&str, f64, f64)] =
    &[("request_kib", 1.0, f64::INFINITY), ("file_mib", 1.0, f64::INFINITY)];

pub fn build(s: &Scenario) -> Result<Box<dyn Model>, ScenarioError> {
    Ok(Box::new(build_sim(s)?))
}

fn build_sim(s: &Scenario) -> Result<Sim<Lsd>, ScenarioError> {
    let cfg: Config = s.config()?;
    let b = cfg.cpus.get(&cfg.cpu).cloned().ok_or_else(|| {
        s.bad_value("cpu", format!("unknown CPU {:?}; known: {:?}", cfg.cpu, cfg.cpus.keys()))
    })?;
    let (mode, sleep_us) = match cfg.mode.as_str() {
        "cmd-irq" => (Mode::CmdIrq, cfg.sd_sleep_us),
        "dma-irq" => (Mode::DmaIrq, cfg.sd_sleep_us),
        "all-irq" => (Mode::AllIrq, cfg.sd_sleep_us),
        "poll-5us" => (Mode::Poll, 5.0),
        "poll-0us" => (Mode::Poll, 0.0),
        other => {
            return Err(s.bad_value(
                "mode",
                format!("{other:?}: expected cmd-irq, dma-irq, all-irq, poll-5us or poll-0us"),
            ));
        }
    };
    // The new driver (DMA IRQs, IRQs always enabled) is what dma-irq and all-irq need.
    let new_driver = match cfg.driver.as_str() {
        "auto" => matches!(mode, Mode::DmaIrq | Mode::AllIrq),
        "new" => true,
        "old" => false,
        other => return Err(s.bad_value("driver", format!("{other:?}: expected old, new or auto"))),
    };
    if !new_driver && matches!(mode, Mode::DmaIrq | Mode::AllIrq) {
        return Err(
            s.bad_value("driver", format!("mode {} needs the new driver (driver=new or auto)", cfg.mode))
        );
    }
    let edge = match cfg.irq_trigger.as_str() {
        "auto" => new_driver,
        "edge" => true,
        "level" => false,
        other => return Err(s.bad_value("irq_trigger", format!("{other:?}: expected level, edge or auto"))),
    };
    if new_driver && !edge && mode != Mode::Poll {
        // "no amount of writing to the pending bit will shut up the asserted level": the
        // handler would run forever and the task that launches the next command never runs.
        return Err(s.bad_value(
            "irq_trigger",
            "the new driver on level-triggered gateware is an interrupt storm (the asserted level cannot be acknowledged)",
        ));
    }
    let err = match cfg.mode.as_str() {
        m @ ("poll-5us" | "poll-0us") => *cfg
            .poll_errors
            .get(m)
            .ok_or_else(|| s.bad_value("poll_errors", format!("missing entry for {m}")))?,
        _ => ErrorProb { read: 0.0, write: 0.0 },
    };
    if cfg.request_kib == 0 {
        return Err(s.bad_value("request_kib", "must be at least 1"));
    }
    if !(cfg.sd_clock_mhz.is_finite() && (0.1..=208.0).contains(&cfg.sd_clock_mhz)) {
        return Err(s.bad_value("sd_clock_mhz", "expected a clock from 0.1 to 208 MHz"));
    }
    let mut out = Emitter::new();
    let trig = if edge { Trigger::Edge } else { Trigger::Level };
    let mut irqc = IrqController::new(vec![Trigger::Level, trig, Trigger::Edge]);
    irqc.write_enable(if new_driver { CARD_DETECT | 1 << CMD_BIT | 1 << DMA_BIT } else { CARD_DETECT });
    let w = Lsd {
        mode,
        new_driver,
        sleep: us(sleep_us),
        err,
        rng: Rng::new(s.seed),
        cpu: Cpu::new(0),
        irqc,
        edge_trigger: edge,
        l_cmd: out.line("CMD", 0),
        l_dma: out.line("DMA", 0),
        l_irq: out.line("IRQ", 0),
        bus: cfg.sd_bus.then(|| SdBus::new(&mut out, cfg.sd_clock_mhz * 1e6)),
        task: (out.sym("cp"), 300),
        dev: out.sym("179,0"),
        host: out.sym("mmc0"),
        rwbs_r: out.sym("R"),
        rwbs_w: out.sym("W"),
        state_d: out.sym("D"),
        state_r: out.sym("R"),
        timer_name: out.sym("riscv-timer"),
        sd_name: out.sym("litex-mmc"),
        k_op: out.sym("op"),
        k_irq: out.sym("irq"),
        k_dir: out.sym("dir"),
        requests: if cfg.requests > 0 {
            cfg.requests
        } else {
            (cfg.file_mib * 1024).div_ceil(cfg.request_kib)
        },
        req: 0,
        dir: Dir::Read,
        nr: cfg.request_kib * 2,
        cmds: Vec::new(),
        ci: 0,
        mrq: 0xc669_d000,
        retries: 0,
        cmd_gen: 0,
        issued: 0,
        cmd_done: None,
        dma_done: None,
        cmd_completion: false,
        dma_completion: false,
        waiting: None,
        retry_when_done: false,
        line_high: false,
        texts: rustc_hash::FxHashMap::default(),
        b,
        out,
    };
    let mut q = Queue::new();
    q.at(us(100.0), Ev::Request);
    Ok(Sim { q, w })
}

crate::simulation::emits_via_out_field!(Lsd);

impl Lsd {
    fn text(&mut self, kind: u8, op: u64, irq: bool, dir: i64) -> Sym {
        let key = (kind, op, u8::from(irq), dir as u8);
        if let Some(&s) = self.texts.get(&key) {
            return s;
        }
        let text = match kind {
            0 => format!("cmd_start op={op} irq={} dir={dir}", u8::from(irq)),
            1 => format!("cmd_end op={op} irq={}", u8::from(irq)),
            2 => format!("data_wait op={op}"),
            _ => format!("data_done op={op}"),
        };
        let s = self.out.sym(&text);
        self.texts.insert(key, s);
        s
    }

    fn swapper(&self) -> (Sym, i32) {
        (self.out.c.swapper, 0)
    }

    fn cmd_uses_irq(&self, op: u64, bytes: u64) -> bool {
        match self.mode {
            Mode::Poll => false,
            Mode::AllIrq => true,
            // The old driver takes the IRQ for data transfers and busy commands only.
            Mode::CmdIrq | Mode::DmaIrq => bytes > 0 || op == 12,
        }
    }

    fn dma_uses_irq(&self) -> bool {
        matches!(self.mode, Mode::DmaIrq | Mode::AllIrq)
    }

    fn start_request(&mut self, t: Ps, q: &mut Queue<Ev>) {
        let fs = if self.dir == Dir::Read { self.b.fs_read_us } else { self.b.fs_write_us };
        let (_, e) = self.cpu.run(t, self.rng.uniform_us(fs[0], fs[1]), &mut self.out);
        let rwbs = if self.dir == Dir::Read { self.rwbs_r } else { self.rwbs_w };
        let sector = 2048 + self.req * self.nr;
        self.out.rq_issue(e, 0, self.task, self.dev, rwbs, sector, self.nr);
        let bytes = self.nr * 512;
        let mut cmds = vec![Cmd { op: 23, bytes: 0, irq: self.cmd_uses_irq(23, 0) }];
        let op = if self.dir == Dir::Read { 18 } else { 25 };
        cmds.push(Cmd { op, bytes, irq: self.cmd_uses_irq(op, bytes) });
        if self.dir == Dir::Write {
            cmds.push(Cmd { op: 13, bytes: 0, irq: self.cmd_uses_irq(13, 0) });
        }
        self.cmds = cmds;
        self.ci = 0;
        self.send_cmd(e, q);
    }

    fn send_cmd(&mut self, t: Ps, q: &mut Queue<Ev>) {
        let Some(cmd) = self.cmds.get(self.ci).copied() else { return };
        let dirv = i64::from(self.dir == Dir::Write);
        let kv = [(self.k_op, cmd.op as i64), (self.k_irq, i64::from(cmd.irq)), (self.k_dir, dirv)];
        let text = self.text(0, cmd.op, cmd.irq, dirv);
        self.out.marker_sym(t, 0, self.task, text, &kv);
        self.mrq += 0x40;
        let sector = 2048 + self.req * self.nr;
        let arg = match cmd.op {
            18 | 25 => sector,
            23 => self.nr,
            13 => u64::from(RCA) << 16,
            _ => 0,
        };
        self.out.mmc_start(t, self.task, self.host, self.mrq, cmd.op, arg, self.retries, cmd.bytes / 512);
        let (_, e) = self.cpu.run(t, us(self.b.cmd_issue_us), &mut self.out);
        self.cmd_gen += 1;
        // Launching a command drops the previous command's asserted level (not a latched edge).
        self.irqc.set_source(CMD_BIT, false);
        self.update_line(e);
        let mut timing = self.b.card.command(e, self.dir, cmd.bytes, &mut self.rng);
        if let Some(bus) = self.bus.as_mut() {
            let bytes = if cmd.bytes > 0 { sdbus::sector_bytes(sector, cmd.bytes / 512) } else { Vec::new() };
            let data =
                (cmd.bytes > 0).then_some(sdbus::Data { write: self.dir == Dir::Write, bytes: &bytes });
            bus.transaction(&mut self.out, e, cmd.op as u8, arg as u32, data, &mut timing);
        }
        self.issued = e;
        self.cmd_done = None;
        self.dma_done = None;
        self.cmd_completion = false;
        self.dma_completion = false;
        self.retry_when_done = false;
        self.out.pulse(self.l_cmd, e, timing.done);
        q.at(timing.done, Ev::CmdDone(self.cmd_gen));
        if let (Some((start, _)), Some(dma)) = (timing.data, timing.dma_done) {
            self.out.pulse(self.l_dma, start, dma);
            q.at(dma, Ev::DmaDone(self.cmd_gen));
        }
        if cmd.irq {
            if !self.new_driver {
                // Enable command-done only now: the previous command's level is gone.
                self.irqc.write_enable(CARD_DETECT | 1 << CMD_BIT);
            }
            self.sleep_on(e, What::Cmd);
            if self.irqc.line() {
                self.interrupt(e, q);
            }
        } else {
            q.at(e, Ev::Poll(self.cmd_gen, What::Cmd));
        }
    }

    fn sleep_on(&mut self, t: Ps, what: What) {
        self.waiting = Some(what);
        let idle = self.swapper();
        self.out.switch(t.max(self.cpu.free_at()), 0, self.task, self.state_d, idle);
    }

    fn update_line(&mut self, t: Ps) {
        let high = self.irqc.line();
        if high != self.line_high {
            self.out.edge(t, self.l_irq, u8::from(high));
            self.line_high = high;
        }
    }

    /// The SD interrupt is taken: handler, acknowledgement, completion, wake-up.
    fn interrupt(&mut self, t: Ps, q: &mut Queue<Ev>) {
        self.update_line(t);
        let (s, e) = self.cpu.run(t + us(self.b.irq_entry_us), us(self.b.handler_us), &mut self.out);
        self.out.irq_entry(s, 0, SD_IRQ, self.sd_name);
        let pending = self.irqc.pending() & self.irqc.enabled();
        let mut woke = None;
        if pending & (1 << CMD_BIT) != 0 {
            if !self.new_driver {
                // The old driver silences a level by disabling it.
                self.irqc.write_enable(CARD_DETECT);
            }
            self.cmd_completion = true;
            if self.waiting == Some(What::Cmd) {
                woke = Some(What::Cmd);
            }
        }
        if pending & (1 << DMA_BIT) != 0 {
            self.dma_completion = true;
            if self.waiting == Some(What::Dma) {
                woke = Some(What::Dma);
            }
        }
        self.irqc.ack(pending);
        self.update_line(e);
        if woke.is_some() {
            // complete() in the handler wakes the task before the handler returns.
            self.out.wakeup(e, 0, self.task, 0);
        }
        self.out.irq_exit(e, 0, SD_IRQ);
        if let Some(what) = woke {
            self.waiting = None;
            let run = e + self.b.irq_wake.sample(&mut self.rng);
            let idle = self.swapper();
            self.out.switch(run, 0, idle, self.state_r, self.task);
            q.at(run, Ev::Woken(self.cmd_gen, what));
        }
    }

    /// After the command wait returns: check CMDEVT, then the data and DMA phases.
    fn after_cmd(&mut self, t: Ps, polled: bool, q: &mut Queue<Ev>) {
        let Some(cmd) = self.cmds.get(self.ci).copied() else { return };
        let (_, e) = self.cpu.run(t, us(self.b.mmio_read_us), &mut self.out);
        let premature = self.cmd_done.is_none_or(|d| d > e);
        let p = if self.dir == Dir::Read { self.err.read } else { self.err.write };
        let polled_error = polled && cmd.bytes > 0 && self.rng.chance(p);
        if premature || polled_error {
            self.fail(e, premature, q);
            return;
        }
        if cmd.bytes == 0 {
            self.finish_cmd(e, q);
            return;
        }
        let kv = [(self.k_op, cmd.op as i64)];
        let text = self.text(2, cmd.op, false, 0);
        self.out.marker_sym(e, 0, self.task, text, &kv);
        // DATAEVT: the data phase ended before the command did.
        let (_, e) = self.cpu.run(e, us(self.b.mmio_read_us), &mut self.out);
        self.wait_dma(e, q);
    }

    fn wait_dma(&mut self, t: Ps, q: &mut Queue<Ev>) {
        if self.dma_uses_irq() {
            if self.dma_completion {
                self.dma_ok(t, q);
            } else {
                self.sleep_on(t, What::Dma);
            }
        } else {
            q.at(t, Ev::Poll(self.cmd_gen, What::Dma));
        }
    }

    fn dma_ok(&mut self, t: Ps, q: &mut Queue<Ev>) {
        let op = self.cmds.get(self.ci).map_or(0, |c| c.op);
        let text = self.text(3, op, false, 0);
        self.out.marker_sym(t, 0, self.task, text, &[(self.k_op, op as i64)]);
        self.finish_cmd(t, q);
    }

    fn finish_cmd(&mut self, t: Ps, q: &mut Queue<Ev>) {
        let Some(cmd) = self.cmds.get(self.ci).copied() else { return };
        self.out.mmc_done(t, self.task, self.host, self.mrq, cmd.op, 0, self.retries, cmd.bytes);
        if cmd.bytes > 0 {
            self.retries = 0;
        }
        let kv = [(self.k_op, cmd.op as i64), (self.k_irq, i64::from(cmd.irq))];
        let text = self.text(1, cmd.op, cmd.irq, 0);
        self.out.marker_sym(t, 0, self.task, text, &kv);
        self.ci += 1;
        if self.ci < self.cmds.len() {
            self.send_cmd(t, q);
            return;
        }
        let rwbs = if self.dir == Dir::Read { self.rwbs_r } else { self.rwbs_w };
        let sector = 2048 + self.req * self.nr;
        self.out.rq_complete(t, 0, self.task, Ctx::Task, self.dev, rwbs, sector, self.nr);
        self.req += 1;
        if self.dir == Dir::Read && self.req == RESERVE_AFTER_REQUESTS {
            // Grow the event table once, by extrapolation over both phases (writes add a
            // status command), instead of by repeated doubling and copying.
            let per_request = self.out.events() as u64 / RESERVE_AFTER_REQUESTS;
            let expected = per_request * self.requests * 9 / 4;
            self.out.reserve(usize::try_from(expected).unwrap_or(0).saturating_sub(self.out.events()));
        }
        if self.req >= self.requests {
            if self.dir == Dir::Write {
                return;
            }
            // The read phase is over: write the file back after a pause.
            self.dir = Dir::Write;
            self.req = 0;
            q.at(t + us(10_000.0), Ev::Request);
            return;
        }
        q.at(t, Ev::Request);
    }

    /// -110 on this attempt: the MMC core recovers and retries once the host is idle.
    fn fail(&mut self, t: Ps, premature: bool, q: &mut Queue<Ev>) {
        let Some(cmd) = self.cmds.get(self.ci).copied() else { return };
        self.out.mmc_done(t, self.task, self.host, self.mrq, cmd.op, ETIMEDOUT, self.retries, 0);
        self.retries += 1;
        let (_, e) = self.cpu.run(t, us(self.b.recovery_us), &mut self.out);
        if cmd.bytes > 0 {
            // The MMC core's recovery: stop the transmission (and, after a bad status,
            // check the card), through the same driver path so they cost what any command
            // costs; then the data command again.
            let stop = Cmd { op: 12, bytes: 0, irq: self.cmd_uses_irq(12, 0) };
            let status = Cmd { op: 13, bytes: 0, irq: self.cmd_uses_irq(13, 0) };
            if premature {
                self.cmds.insert(self.ci, stop);
            } else {
                self.cmds.splice(self.ci..self.ci, [stop, status]);
            }
        }
        if premature && self.cmd_done.is_none() {
            // The gateware still runs the command: the retry waits for it.
            self.retry_when_done = true;
            self.waiting = None;
            self.issued = e;
            return;
        }
        self.send_cmd(e.max(self.cmd_done.unwrap_or(e)), q);
    }
}

impl World for Lsd {
    type Ev = Ev;
    fn handle(&mut self, t: Ps, ev: Ev, q: &mut Queue<Ev>) {
        match ev {
            Ev::Request => self.start_request(t, q),
            Ev::CmdDone(g) if g == self.cmd_gen => {
                self.cmd_done = Some(t);
                self.irqc.set_source(CMD_BIT, true);
                if self.edge_trigger {
                    self.irqc.set_source(CMD_BIT, false);
                }
                if self.retry_when_done {
                    self.retry_when_done = false;
                    // The host's error recovery clears every latched event before the retry.
                    self.irqc.ack(u32::MAX);
                    let at = t.max(self.issued);
                    self.send_cmd(at, q);
                    return;
                }
                if self.irqc.line() && !self.line_high {
                    self.interrupt(t, q);
                } else {
                    self.update_line(t);
                }
            }
            Ev::DmaDone(g) if g == self.cmd_gen => {
                self.dma_done = Some(t);
                self.irqc.set_source(DMA_BIT, true);
                self.irqc.set_source(DMA_BIT, false);
                if self.irqc.line() && !self.line_high {
                    self.interrupt(t, q);
                }
            }
            Ev::Poll(g, what) if g == self.cmd_gen => {
                let (_, e) = self.cpu.run(t, us(self.b.mmio_read_us), &mut self.out);
                let done = match what {
                    What::Cmd => self.cmd_done.is_some_and(|d| d <= e),
                    What::Dma => self.dma_done.is_some_and(|d| d <= e),
                };
                if done {
                    match what {
                        What::Cmd => self.after_cmd(e, true, q),
                        What::Dma => self.dma_ok(e, q),
                    }
                } else if self.sleep == 0 {
                    q.at(e, Ev::Poll(g, what));
                } else {
                    // usleep: the task sleeps, an hrtimer interrupt wakes it.
                    let idle = self.swapper();
                    self.out.switch(e, 0, self.task, self.state_d, idle);
                    q.at(e + self.sleep, Ev::Timer(g, what));
                }
            }
            Ev::Timer(g, what) if g == self.cmd_gen => {
                let (s, e) =
                    self.cpu.run(t + us(self.b.irq_entry_us), us(self.b.timer_handler_us), &mut self.out);
                self.out.irq_entry(s, 0, TIMER_IRQ, self.timer_name);
                self.out.wakeup(e, 0, self.task, 0);
                self.out.irq_exit(e, 0, TIMER_IRQ);
                let run = e + self.b.timer_wake.sample(&mut self.rng);
                let idle = self.swapper();
                self.out.switch(run, 0, idle, self.state_r, self.task);
                q.at(run, Ev::Poll(g, what));
            }
            Ev::Woken(g, what) if g == self.cmd_gen => match what {
                What::Cmd => self.after_cmd(t, false, q),
                What::Dma => self.dma_ok(t, q),
            },
            // Events of a command that was retried since.
            _ => {}
        }
    }
}

/// Block requests by direction, commands that ended in an error, and the latencies of the
/// instrumented driver (markers, the IRQ line, the IRQ thread's switch-in).
pub fn rules() -> Vec<String> {
    [
        "block-read=block_rq_issue[rwbs=R] -> block_rq_complete[rwbs=R] by dev,sector,nr_sector",
        "block-write=block_rq_issue[rwbs=W] -> block_rq_complete[rwbs=W] by dev,sector,nr_sector",
        "mmc-errors=mmc_request_start -> mmc_request_done[cmd_err!=0] by host policy next",
        "cmd-polled=tracing_mark_write[text~cmd_start,irq=0] -> tracing_mark_write[text~cmd_end,irq=0] by op policy next",
        "cmd-irq-read=tracing_mark_write[text~cmd_start,irq=1,dir=0] -> IRQ:rise policy next",
        "cmd-irq-write=tracing_mark_write[text~cmd_start,irq=1,dir=1] -> IRQ:rise policy next",
        "irq-to-thread=IRQ:rise -> sched_switch[next_pid=300] policy next",
        "data-wait=tracing_mark_write[text~data_wait] -> tracing_mark_write[text~data_done] by op policy next",
    ]
    .map(String::from)
    .to_vec()
}

/// Throughput per direction, the error count and the latencies' medians (and the IRQ
/// thread's worst wakeup).
pub fn metrics(found: &Found<'_>) -> Metrics {
    let thread = found.stats("irq-to-thread");
    super::metrics_of(&[
        ("read_kib_s", super::throughput(found.samples("block-read")) / 1024.0),
        ("write_kib_s", super::throughput(found.samples("block-write")) / 1024.0),
        ("cmd_errors", found.samples("mmc-errors").len() as f64),
        ("cmd_polled_us_p50", us_of(found.stats("cmd-polled").p50)),
        ("read_issue_to_irq_us_p50", us_of(found.stats("cmd-irq-read").p50)),
        ("write_issue_to_irq_us_p50", us_of(found.stats("cmd-irq-write").p50)),
        ("irq_to_thread_us_p50", us_of(thread.p50)),
        ("irq_to_thread_us_max", us_of(thread.max)),
        ("data_wait_us_p50", us_of(found.stats("data-wait").p50)),
    ])
}

#[cfg(test)]
#[path = "litesdcard_bus.rs"]
mod bus_truth;

//! `imx8mq-cpuidle`: a thread reading an eMMC/SD card on i.MX8MQ or i.MX93
//! (shared/context/imx8mq-cpuidle-read-performance.txt). The thread issues a request and
//! sleeps; with probability `idle_probability` its CPU then goes idle (otherwise another task
//! runs there). The transfer-complete IRQ must first bring the CPU out of idle — ~500 us on
//! i.MX8MQ (an IC erratum), ~60 us on i.MX93 — before the handler wakes the thread, which
//! then issues the next request. `pm_qos = "on"` holds a CPU latency constraint during the
//! transfer, so the governor only uses WFI.
//!
//! Metrics: `read_mib_s` from `block_rq_issue -> block_rq_complete` pairs (bytes over first
//! issue to last completion), `idle_exit_us_p50` from `IRQ:rise -> cpu_idle[state=exit]`.

use crate::emit::{Ctx, Emitter, Line};
use crate::engine::{Queue, World};
use crate::models::cpu::{Cpu, IdleState, WakePath, governor, idle_state};
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
    pub soc: String,
    pub idle_probability: f64,
    pub pm_qos: String,
    /// Data read in the run, MiB, in requests of `request_kib`.
    pub read_mib: u64,
    pub request_kib: u64,
    /// The constraint the driver requests with PM QoS (0 = no idle state with any latency).
    pub qos_latency_us: f64,
    pub socs: BTreeMap<String, Soc>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Soc {
    /// Exit latencies of WFI and of the deep idle state, microseconds.
    pub wfi_exit_us: f64,
    pub deep_exit_us: f64,
    /// Card transfer time of one request (command, access, data), microseconds.
    pub transfer_us: [f64; 2],
    /// CPU time: issuing a request, the IRQ handler, the thread's copy-out per request.
    pub issue_us: f64,
    pub handler_us: f64,
    pub process_us: f64,
    pub wake: WakePath,
}

#[derive(Debug, Clone, Copy)]
pub enum Ev {
    Issue(u64),
    Complete(u64),
}

#[derive(Debug)]
pub struct Imx {
    soc: Soc,
    rng: Rng,
    cpu: Cpu,
    states: Vec<IdleState>,
    qos: Option<Ps>,
    idle_p: f64,
    requests: u64,
    nr: u64,
    out: Emitter,
    irq_line: Line,
    task: (Sym, i32),
    other: (Sym, i32),
    dev: Sym,
    rwbs: Sym,
    irq_name: Sym,
    state_d: Sym,
    state_r: Sym,
    other_running: bool,
}

/// The values of the settings that are words (`soc` names a `[socs.NAME]` table).
pub const CHOICES: &[(&str, &[&str])] = &[("pm_qos", &["on", "off"])];

/// Numbers with limits tighter than "not negative".
pub const RANGES: &[(&str, f64, f64)] =
    &[("idle_probability", 0.0, 1.0), ("request_kib", 1.0, f64::INFINITY), ("read_mib", 1.0, f64::INFINITY)];

pub fn build(s: &Scenario) -> Result<Box<dyn Model>, ScenarioError> {
    let cfg: Config = s.config()?;
    let soc = cfg.socs.get(&cfg.soc).cloned().ok_or_else(|| {
        s.bad_value("soc", format!("unknown SoC {:?}; known: {:?}", cfg.soc, cfg.socs.keys()))
    })?;
    let qos = match cfg.pm_qos.as_str() {
        "on" => Some(us(cfg.qos_latency_us)),
        "off" => None,
        other => return Err(s.bad_value("pm_qos", format!("{other:?}: expected on or off"))),
    };
    if !(0.0..=1.0).contains(&cfg.idle_probability) {
        return Err(s.bad_value("idle_probability", "must be within 0..1"));
    }
    if cfg.request_kib == 0 {
        return Err(s.bad_value("request_kib", "must be at least 1"));
    }
    let mut out = Emitter::new();
    let irq_line = out.line("IRQ", 0);
    let w = Imx {
        states: vec![idle_state(0, soc.wfi_exit_us), idle_state(1, soc.deep_exit_us)],
        soc,
        rng: Rng::new(s.seed),
        cpu: Cpu::new(0),
        qos,
        idle_p: cfg.idle_probability,
        requests: (cfg.read_mib * 1024).div_ceil(cfg.request_kib),
        nr: cfg.request_kib * 2,
        irq_line,
        task: (out.sym("dd"), 412),
        other: (out.sym("kworker/0:2"), 77),
        dev: out.sym("179,0"),
        rwbs: out.sym("R"),
        irq_name: out.sym("mmc0"),
        state_d: out.sym("D"),
        state_r: out.sym("R+"),
        other_running: false,
        out,
    };
    let mut q = Queue::new();
    q.at(us(10.0), Ev::Issue(0));
    Ok(Box::new(Sim { q, w }))
}

crate::simulation::emits_via_out_field!(Imx);

const IRQ: i64 = 62;

impl World for Imx {
    type Ev = Ev;
    fn handle(&mut self, t: Ps, ev: Ev, q: &mut Queue<Ev>) {
        match ev {
            Ev::Issue(n) => {
                let (_, end) = self.cpu.run(t, us(self.soc.issue_us), &mut self.out);
                self.out.rq_issue(end, 0, self.task, self.dev, self.rwbs, n * self.nr, self.nr);
                let done = end + self.rng.uniform_us(self.soc.transfer_us[0], self.soc.transfer_us[1]);
                q.at(done, Ev::Complete(n));
                // The thread sleeps until the data is there. Either the CPU idles (the
                // governor picks a state, constrained by PM QoS) or another task runs.
                if self.rng.chance(self.idle_p) {
                    self.out.switch(end, 0, self.task, self.state_d, (self.out.c.swapper, 0));
                    if let Some(state) = governor(&self.states, self.qos) {
                        self.cpu.enter_idle(end, state, &mut self.out);
                    }
                    self.other_running = false;
                } else {
                    self.out.switch(end, 0, self.task, self.state_d, self.other);
                    self.other_running = true;
                }
            }
            Ev::Complete(n) => {
                self.out.edge(t, self.irq_line, 1);
                let (start, end) = self.cpu.run(t, us(self.soc.handler_us), &mut self.out);
                self.out.irq_entry(start, 0, IRQ, self.irq_name);
                let mid = start + (end - start) / 2;
                self.out.rq_complete(
                    mid,
                    0,
                    (self.out.c.swapper, 0),
                    Ctx::HardIrq,
                    self.dev,
                    self.rwbs,
                    n * self.nr,
                    self.nr,
                );
                self.out.wakeup(mid, 0, self.task, 0);
                self.out.edge(mid, self.irq_line, 0);
                self.out.irq_exit(end, 0, IRQ);
                let switch = end + self.soc.wake.sample(&mut self.rng);
                let prev = if self.other_running {
                    (self.other, self.state_r)
                } else {
                    ((self.out.c.swapper, 0), self.state_r)
                };
                self.out.switch(switch, 0, prev.0, prev.1, self.task);
                let (_, done) = self.cpu.run(switch, us(self.soc.process_us), &mut self.out);
                if n + 1 < self.requests {
                    q.at(done, Ev::Issue(n + 1));
                }
            }
        }
    }
}

/// Block requests (keyed by their sector count, for the bytes), and the IRQ-to-idle-exit
/// latency.
pub fn rules() -> Vec<String> {
    vec![
        "block=block_rq_issue -> block_rq_complete by dev,sector,nr_sector".into(),
        "idle-exit=IRQ:rise -> cpu_idle[state=4294967295] policy next".into(),
    ]
}

/// `read_mib_s` from the block pairs, `idle_exit_us_p50` from the idle exits.
pub fn metrics(found: &Found<'_>) -> Metrics {
    let bps = super::throughput(found.samples("block"));
    let p50 = found.stats("idle-exit").p50;
    super::metrics_of(&[("read_mib_s", bps / 1_048_576.0), ("idle_exit_us_p50", us_of(p50))])
}

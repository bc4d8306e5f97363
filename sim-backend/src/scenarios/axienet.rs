//! `axienet-napi`: TCP transmit at 1 Gb/s on a Xilinx AXI Ethernet (ZynqMP), with TX
//! completion in the hard IRQ handler or in NAPI
//! (shared/context/axienet-napi-tx-completion.txt).
//!
//! The wire sends frames back to back; the TX IRQ is coalesced (`nic.coalesce_frames`).
//! ACKs come back after `tcp.rtt_us`, are coalesced into RX IRQs, and their NET_RX softirq
//! processing transmits the next frames (ACK clocking) — all on CPU 0, where ZynqMP routes
//! the interrupts by default. With `tx_completion = "hardirq"` the TX handler cleans every
//! completed descriptor with interrupts off; with `"napi"` it only schedules a NAPI poll and
//! the cleaning runs in softirq context with interrupts on.
//!
//! Metrics, all from the trace: `tx_mbps` from the frame rate on the wire (DMA line rises,
//! TCP payload per frame), `hardirq_cpu_pct` from `irq-handler` pairs on CPU 0, `irq_total_cpu_pct` from
//! the union of those and `softirq` pairs, `max_irqs_off_us` from `irqs-off` pairs.

use crate::emit::{Ctx, Emitter, Line};
use crate::engine::{Queue, World};
use crate::models::cpu::Cpu;
use crate::models::nic::TxRing;
use crate::report::{Found, Metrics, key_int, union_length};
use crate::rng::{Rng, ns, us};
use crate::scenario::{Scenario, ScenarioError};
use crate::simulation::{Model, Sim};
use latscope_analysis::outcome::Sample;
use latscope_model::{PS_PER_US, Ps, Sym};
use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub scenario: String,
    pub description: String,
    pub seed: u64,
    pub tx_completion: String,
    pub run_ms: f64,
    pub link: LinkCfg,
    pub tcp: TcpCfg,
    pub nic: NicCfg,
    pub cpu: CpuCfg,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkCfg {
    pub mbps: f64,
    pub frame_bytes: u64,
    /// Preamble, SFD, FCS and inter-frame gap on the wire.
    pub wire_overhead_bytes: u64,
    /// Ethernet + IPv4 + TCP (with timestamps) headers: payload = frame - headers.
    pub header_bytes: u64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpCfg {
    pub window_frames: u64,
    pub ack_every: u64,
    pub rtt_us: f64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NicCfg {
    pub ring: usize,
    pub coalesce_frames: usize,
    pub rx_coalesce_acks: usize,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpuCfg {
    pub irq_entry_ns: f64,
    /// TX handler fixed cost and per-frame cleaning cost in hard IRQ context.
    pub hard_irq_ns: f64,
    pub hard_clean_ns_per_frame: f64,
    /// NAPI mode: the handler only masks and schedules; the poll cleans per frame.
    pub napi_irq_ns: f64,
    pub napi_poll_ns: f64,
    pub napi_clean_ns_per_frame: f64,
    /// RX IRQ handler, and NET_RX softirq work per ACK (TCP input and pushing the frames
    /// the ACK opens, including their xmit).
    pub rx_irq_ns: f64,
    pub ack_softirq_ns: f64,
    /// The ring lock in start_xmit holds interrupts off this long per frame.
    pub xmit_irqsoff_ns: f64,
}

#[derive(Debug, Clone, Copy)]
pub enum Ev {
    Start,
    WireDone,
    TxIrq,
    AckArrive,
    RxIrq,
}

#[derive(Debug)]
pub struct Axienet {
    cfg: Config,
    napi: bool,
    rng: Rng,
    cpu: Cpu,
    ring: TxRing,
    frame_time: Ps,
    sent: u64,
    acked: u64,
    unacked_on_wire: u64,
    acks_pending: usize,
    stop: Ps,
    out: Emitter,
    dma: Line,
    irq_line: Line,
    dev: Sym,
    tx_name: Sym,
    rx_name: Sym,
    xmit_caller: Sym,
    irq_caller: Sym,
}

const TX_IRQ: i64 = 58;
const RX_IRQ: i64 = 59;
const NET_RX: u64 = 3;

/// The values of the settings that are words.
pub const CHOICES: &[(&str, &[&str])] = &[("tx_completion", &["hardirq", "napi"])];

/// Numbers with limits tighter than "not negative".
pub const RANGES: &[(&str, f64, f64)] = &[];

pub fn build(s: &Scenario) -> Result<Box<dyn Model>, ScenarioError> {
    let cfg: Config = s.config()?;
    let napi = match cfg.tx_completion.as_str() {
        "napi" => true,
        "hardirq" => false,
        other => return Err(s.bad_value("tx_completion", format!("{other:?}: expected hardirq or napi"))),
    };
    if cfg.link.mbps <= 0.0 || cfg.tcp.ack_every == 0 || cfg.nic.ring == 0 {
        return Err(s.bad_value("link.mbps", "link speed, ack_every and ring must be positive"));
    }
    let mut out = Emitter::new();
    let dma = out.line("DMA", 0);
    let irq_line = out.line("IRQ", 0);
    let bits = ((cfg.link.frame_bytes + cfg.link.wire_overhead_bytes) * 8) as f64;
    let w = Axienet {
        napi,
        rng: Rng::new(s.seed),
        cpu: Cpu::new(0),
        ring: TxRing::new(cfg.nic.ring, cfg.nic.coalesce_frames),
        frame_time: us(bits / cfg.link.mbps),
        sent: 0,
        acked: 0,
        unacked_on_wire: 0,
        acks_pending: 0,
        stop: us(cfg.run_ms * 1000.0),
        dma,
        irq_line,
        dev: out.sym("eth0"),
        tx_name: out.sym("xilinx_axienet_tx"),
        rx_name: out.sym("xilinx_axienet_rx"),
        xmit_caller: out.sym("axienet_start_xmit+0x5c"),
        irq_caller: out.sym("axienet_tx_irq+0x28"),
        out,
        cfg,
    };
    let mut q = Queue::new();
    q.at(us(10.0), Ev::Start);
    Ok(Box::new(Sim { q, w }))
}

crate::simulation::emits_via_out_field!(Axienet);

impl Axienet {
    /// Queues one frame (net_dev_xmit, ring lock with irqs off) at `t` on `cpu`.
    fn xmit(&mut self, t: Ps, cpu: u16, ctx: Ctx) {
        let skb = 0xffff_0000_1000_0000 + (self.sent % 4096) * 0x100;
        if !self.ring.enqueue(skb) {
            return;
        }
        self.sent += 1;
        self.out.xmit(t, cpu, ctx, self.dev, skb, self.cfg.link.frame_bytes);
        let off = ns(self.cfg.cpu.xmit_irqsoff_ns);
        self.out.irqs_off(t, t + off, cpu, self.xmit_caller);
    }

    fn kick(&mut self, t: Ps, q: &mut Queue<Ev>) {
        if let Some((_, start, end)) = self.ring.start_next(t, self.frame_time) {
            // The DMA fetches the frame as it starts on the wire.
            self.out.pulse(self.dma, start, start + self.frame_time / 8);
            q.at(end, Ev::WireDone);
        }
    }

    fn window_open(&self) -> bool {
        self.sent - self.acked < self.cfg.tcp.window_frames
    }
}

impl World for Axienet {
    type Ev = Ev;
    fn handle(&mut self, t: Ps, ev: Ev, q: &mut Queue<Ev>) {
        let c = self.cfg.cpu.clone();
        match ev {
            Ev::Start => {
                // iperf3 on CPU 1 fills the window.
                let mut at = t;
                while self.window_open() && self.ring.space() > 0 {
                    self.xmit(at, 1, Ctx::Task);
                    at += ns(2000.0);
                }
                self.kick(t, q);
            }
            Ev::WireDone => {
                self.unacked_on_wire += 1;
                if self.unacked_on_wire >= self.cfg.tcp.ack_every {
                    self.unacked_on_wire = 0;
                    let rtt = self.rng.jitter_us(self.cfg.tcp.rtt_us, 0.1);
                    q.at(t + rtt, Ev::AckArrive);
                }
                if self.ring.complete() {
                    q.at(t, Ev::TxIrq);
                }
                if t < self.stop {
                    self.kick(t, q);
                }
            }
            Ev::TxIrq => {
                self.out.edge(t, self.irq_line, 1);
                let n = self.ring.completed;
                let entry = ns(c.irq_entry_ns);
                if self.napi {
                    let (s, e) = self.cpu.run(t + entry, ns(c.napi_irq_ns), &mut self.out);
                    self.out.irq_entry(s, 0, TX_IRQ, self.tx_name);
                    self.out.irqs_off(s, e, 0, self.irq_caller);
                    self.out.softirq_raise(e, 0, NET_RX);
                    self.out.irq_exit(e, 0, TX_IRQ);
                    self.out.edge(s, self.irq_line, 0);
                    let work = ns(c.napi_poll_ns + c.napi_clean_ns_per_frame * n as f64);
                    let (ss, se) = self.cpu.run(e, work, &mut self.out);
                    self.out.softirq(ss, se, 0, NET_RX);
                    let mut left = n;
                    while left > 0 {
                        let w = left.min(64);
                        self.out.napi_poll(se, 0, 0xffff_0000_0aa0_0000, self.dev, w as i64, 64);
                        left -= w;
                    }
                } else {
                    let work = ns(c.hard_irq_ns + c.hard_clean_ns_per_frame * n as f64);
                    let (s, e) = self.cpu.run(t + entry, work, &mut self.out);
                    self.out.irq_entry(s, 0, TX_IRQ, self.tx_name);
                    self.out.irqs_off(s, e, 0, self.irq_caller);
                    self.out.irq_exit(e, 0, TX_IRQ);
                    self.out.edge(e, self.irq_line, 0);
                }
                self.ring.clean(n);
            }
            Ev::AckArrive => {
                self.acks_pending += 1;
                if self.acks_pending >= self.cfg.nic.rx_coalesce_acks {
                    q.at(t, Ev::RxIrq);
                }
            }
            Ev::RxIrq => {
                let acks = std::mem::take(&mut self.acks_pending);
                let (s, e) = self.cpu.run(t + ns(c.irq_entry_ns), ns(c.rx_irq_ns), &mut self.out);
                self.out.irq_entry(s, 0, RX_IRQ, self.rx_name);
                self.out.softirq_raise(e, 0, NET_RX);
                self.out.irq_exit(e, 0, RX_IRQ);
                // NET_RX: each ACK is processed and opens the window for the next frames.
                let per_ack = ns(c.ack_softirq_ns);
                let (ss, se) = self.cpu.run(e, per_ack * acks as Ps, &mut self.out);
                self.out.softirq(ss, se, 0, NET_RX);
                for k in 0..acks {
                    self.acked += self.cfg.tcp.ack_every;
                    let at = ss + per_ack * (k as Ps + 1) - per_ack / 4;
                    if t < self.stop {
                        for _ in 0..self.cfg.tcp.ack_every {
                            if self.window_open() {
                                self.xmit(at, 0, Ctx::SoftIrq);
                            }
                        }
                    }
                }
                // The wire restarts now if it idled; never kick at a future time, which
                // would leave the wire idle until then.
                self.kick(t, q);
            }
        }
    }
}

/// Frames on the wire (the DMA line rises once per frame as it starts transmitting), the
/// hard and soft IRQ handlers, and interrupts-off sections.
pub fn rules() -> Vec<String> {
    [
        "frame-interval=DMA:rise -> DMA:rise policy next",
        "irq-handler=irq_handler_entry -> irq_handler_exit by cpu,irq policy lifo",
        "softirq=softirq_entry -> softirq_exit by cpu,vec policy lifo",
        "irqs-off=irq_disable -> irq_enable by cpu policy next",
    ]
    .map(String::from)
    .to_vec()
}

/// `tx_mbps` from the frame rate, the CPU 0 shares of hard IRQ and of hard plus soft IRQ
/// time over the transmit span, and the longest interrupts-off section.
pub fn metrics(s: &Scenario, found: &Found<'_>) -> Result<Metrics, ScenarioError> {
    let cfg: Config = s.config()?;
    let frames = found.samples("frame-interval");
    let (Some(first), Some(last)) = (frames.first().map(|p| p.start), frames.last().map(|p| p.end)) else {
        return Err(s.bad_value("run_ms", "no frames were sent"));
    };
    let span = (last - first) as f64;
    let payload = (cfg.link.frame_bytes - cfg.link.header_bytes) as f64 * 8.0;
    let cpu0 = |p: &&Sample| key_int(&p.key, "cpu") == Some(0);
    let clip = |p: &Sample| (p.start.max(first), p.end.min(last));
    let on_cpu0 = |name: &str| -> Vec<(Ps, Ps)> {
        found.samples(name).iter().filter(cpu0).map(clip).filter(|i| i.1 > i.0).collect()
    };
    let hard = on_cpu0("irq-handler");
    let mut all = hard.clone();
    all.extend(on_cpu0("softirq"));
    let max_off = found.latencies("irqs-off").into_iter().max().unwrap_or(0);
    Ok(super::metrics_of(&[
        ("tx_mbps", frames.len() as f64 * payload / (span / 1e12) / 1e6),
        ("hardirq_cpu_pct", 100.0 * union_length(hard) as f64 / span),
        ("irq_total_cpu_pct", 100.0 * union_length(all) as f64 / span),
        ("max_irqs_off_us", max_off as f64 / PS_PER_US as f64),
    ]))
}

//! `e1000e-mta`: the e1000e multicast-table update on a Sandy Bridge i3-2310E
//! (shared/context/e1000e-posted-pcie-writes.txt). The driver writes `writes` MTA registers
//! as posted PCIe writes and flushes (a register read) after every `flush_every`-th write and
//! at the end; another device's periodic DMA shares the path and stalls behind queued writes.
//!
//! Emitted: markers `mta_start id=N` / `mta_done id=N` around each update, the DMA line of
//! the other device (high during each transfer) and a FLUSH line (high while the CPU waits
//! for a flush read). Metrics: `mta_update_us` is the mean of the marker pairs,
//! `max_dma_delay_us` the largest excess of the stall windows on DMA rises.

use crate::emit::{Emitter, Line};
use crate::engine::{Queue, World};
use crate::models::pcie::PcieLink;
use crate::report::{Found, Metrics};
use crate::rng::{Rng, ns, us};
use crate::scenario::{Scenario, ScenarioError};
use crate::simulation::{Model, Sim};
use latscope_model::{PS_PER_US, Ps, Sym};
use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub scenario: String,
    pub description: String,
    pub seed: u64,
    /// Flush after every Nth write; 0 = one flush after all writes.
    pub flush_every: u32,
    /// MTA registers written per update (128 on this part).
    pub writes: u32,
    /// Updates simulated (link down/up cycles); the metric is their mean.
    pub updates: u32,
    pub update_interval_us: f64,
    pub pcie: PcieCfg,
    pub dma: DmaCfg,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PcieCfg {
    /// CPU time to issue one posted MMIO write.
    pub write_issue_ns: f64,
    /// Link time to drain one posted write.
    pub write_drain_ns: f64,
    /// Relative jitter of the drain time.
    pub drain_jitter: f64,
    /// Link service of the flush read and its completion's round trip.
    pub read_service_ns: f64,
    pub read_round_trip_ns: f64,
    /// Posted-write credits: the CPU stalls when this many writes are outstanding.
    pub posted_credits: u32,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DmaCfg {
    /// The other device's DMA period and the link time of one transfer.
    pub period_us: f64,
    pub transfer_ns: f64,
    /// Stall factor for the detector (the `stall:` detector's default is 1.5).
    pub stall_factor: f64,
}

#[derive(Debug, Clone, Copy)]
pub enum Ev {
    UpdateStart(u32),
    Write { update: u32, i: u32 },
    UpdateDone(u32),
    DmaRequest,
}

#[derive(Debug)]
pub struct E1000e {
    cfg: Config,
    rng: Rng,
    link: PcieLink,
    out: Emitter,
    dma: Line,
    flush: Line,
    task: (Sym, i32),
    id: Sym,
    last_done: Ps,
}

/// The values of the settings that are words (none here).
pub const CHOICES: &[(&str, &[&str])] = &[];

/// Numbers with limits tighter than "not negative".
pub const RANGES: &[(&str, f64, f64)] = &[("writes", 1.0, f64::INFINITY)];

pub fn build(s: &Scenario) -> Result<Box<dyn Model>, ScenarioError> {
    let cfg: Config = s.config()?;
    if cfg.writes == 0 {
        return Err(s.bad_value("writes", "must be at least 1"));
    }
    let mut out = Emitter::new();
    let dma = out.line("DMA", 0);
    let flush = out.line("FLUSH", 0);
    let task = (out.sym("kworker/0:1"), 57);
    let id = out.sym("id");
    let mut q = Queue::new();
    q.at(us(cfg.dma.period_us), Ev::DmaRequest);
    q.at(us(cfg.update_interval_us) / 2, Ev::UpdateStart(0));
    let link = PcieLink::new(cfg.pcie.posted_credits as usize);
    let w = E1000e { rng: Rng::new(s.seed), link, out, dma, flush, task, id, last_done: 0, cfg };
    Ok(Box::new(Sim { q, w }))
}

crate::simulation::emits_via_out_field!(E1000e);

impl World for E1000e {
    type Ev = Ev;
    fn handle(&mut self, t: Ps, ev: Ev, q: &mut Queue<Ev>) {
        let p = &self.cfg.pcie;
        match ev {
            Ev::UpdateStart(u) => {
                self.out.marker(t, 0, self.task, &format!("mta_start id={u}"), &[(self.id, i64::from(u))]);
                q.at(t, Ev::Write { update: u, i: 0 });
            }
            Ev::Write { update, i } => {
                // The CPU stalls while every posted-write credit is in use.
                let ready = self.link.can_post_at(t);
                if ready > t {
                    q.at(ready, ev);
                    return;
                }
                let drain = self.rng.jitter_us(p.write_drain_ns / 1e3, p.drain_jitter);
                self.link.post_write(t, drain);
                let mut next = t + ns(p.write_issue_ns);
                let last = i + 1 == self.cfg.writes;
                let n = self.cfg.flush_every;
                if last || (n > 0 && (i + 1) % n == 0) {
                    // The flush read waits behind every posted write, then round-trips.
                    let back = self.link.read(next, ns(p.read_service_ns), ns(p.read_round_trip_ns));
                    self.out.pulse(self.flush, next, back);
                    next = back;
                }
                if last {
                    q.at(next, Ev::UpdateDone(update));
                } else {
                    q.at(next, Ev::Write { update, i: i + 1 });
                }
            }
            Ev::UpdateDone(u) => {
                self.out.marker(t, 0, self.task, &format!("mta_done id={u}"), &[(self.id, i64::from(u))]);
                self.last_done = t;
                if u + 1 < self.cfg.updates {
                    q.at(t + us(self.cfg.update_interval_us), Ev::UpdateStart(u + 1));
                }
            }
            Ev::DmaRequest => {
                let (start, end) = self.link.dma(t, ns(self.cfg.dma.transfer_ns));
                self.out.pulse(self.dma, start, end);
                // The device keeps its heartbeat until shortly after the last update.
                let horizon = self.last_done + us(self.cfg.update_interval_us) / 2;
                if self.last_done == 0 || t < horizon {
                    q.at(t + us(self.cfg.dma.period_us), Ev::DmaRequest);
                }
            }
        }
    }
}

/// The marker pairs of each update, and stall windows of the other device's DMA.
pub fn rules(s: &Scenario) -> Result<Vec<String>, ScenarioError> {
    let cfg: Config = s.config()?;
    Ok(vec![
        "mta_update=tracing_mark_write[text~mta_start] -> tracing_mark_write[text~mta_done] by id".into(),
        format!("dma_stall=stall:DMA:rise factor {}", cfg.dma.stall_factor),
    ])
}

/// `mta_update_us`: the mean update; `max_dma_delay_us`: the largest stall excess.
pub fn metrics(found: &Found<'_>) -> Metrics {
    let d = found.latencies("mta_update");
    let mean = if d.is_empty() { 0.0 } else { d.iter().sum::<Ps>() as f64 / d.len() as f64 };
    let max_excess = found.max_excess("dma_stall");
    super::metrics_of(&[
        ("mta_update_us", mean / PS_PER_US as f64),
        ("max_dma_delay_us", max_excess as f64 / PS_PER_US as f64),
    ])
}

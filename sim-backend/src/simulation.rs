//! Running a scenario: all at once ([`run`]) or incrementally ([`Simulation`]) for a live
//! view. A `Simulation` advances in batches (`run_batch`, `step_until`, `step`), can be
//! paused and resumed, paced at N x real time or run as fast as possible, and sends each
//! batch of new events over an `mpsc` channel to whoever draws them.

use crate::emit::Emitter;
use crate::engine::{Queue, World};
use crate::report::Report;
use crate::scenario::{Scenario, ScenarioError};
use crate::scenarios;
use latscope_model::{FieldValue, IrqFlags, Ps, Source, Sym};
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

/// A world that writes into an [`Emitter`].
pub trait Emits {
    fn out(&self) -> &Emitter;
    fn into_out(self) -> Emitter;
}

/// Implements [`Emits`] for worlds that keep their emitter in a field named `out`.
macro_rules! emits_via_out_field {
    ($($world:ty),+ $(,)?) => {
        $(impl $crate::simulation::Emits for $world {
            fn out(&self) -> &$crate::emit::Emitter {
                &self.out
            }
            fn into_out(self) -> $crate::emit::Emitter {
                self.out
            }
        })+
    };
}
pub(crate) use emits_via_out_field;

/// A scenario's engine and world behind one object-safe interface.
pub trait Model: Send + std::fmt::Debug {
    /// Handles the next event; returns its time, or `None` when nothing is left.
    fn step(&mut self) -> Option<Ps>;
    fn next_time(&self) -> Option<Ps>;
    fn out(&self) -> &Emitter;
    fn into_out(self: Box<Self>) -> Emitter;
}

/// The engine queue and a world.
#[derive(Debug)]
pub struct Sim<W: World> {
    pub q: Queue<W::Ev>,
    pub w: W,
}

impl<W> Model for Sim<W>
where
    W: World + Emits + Send + std::fmt::Debug,
    W::Ev: Send + std::fmt::Debug,
{
    fn step(&mut self) -> Option<Ps> {
        let (t, ev) = self.q.pop()?;
        self.w.handle(t, ev, &mut self.q);
        Some(t)
    }
    fn next_time(&self) -> Option<Ps> {
        self.q.next_time()
    }
    fn out(&self) -> &Emitter {
        self.w.out()
    }
    fn into_out(self: Box<Self>) -> Emitter {
        self.w.into_out()
    }
}

/// One event of a batch, self-contained for a consumer on another thread.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchEvent {
    pub ts: Ps,
    pub cpu: u16,
    pub pid: i32,
    pub comm: Sym,
    pub flags: IrqFlags,
    pub name: Sym,
    pub fields: Vec<(Sym, FieldValue)>,
}

/// What a run produced since the previous batch. Events come in emission order (models may
/// emit slightly ahead of the clock; the finished source is sorted).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Batch {
    /// Simulated time reached.
    pub now: Ps,
    /// Strings interned since the last batch: symbol `first_sym + i` is `strings[i]`.
    pub first_sym: u32,
    pub strings: Vec<String>,
    pub events: Vec<BatchEvent>,
    /// (time, line index, level); line names are in [`Simulation::line_names`].
    pub edges: Vec<(Ps, u16, u8)>,
    pub finished: bool,
}

/// Pacing of a live run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Speed {
    /// As fast as the CPU allows.
    Max,
    /// Simulated time advances this many times faster than wall time (0.001 = 1000x slower).
    RealTime(f64),
}

/// What a finished run hands back.
#[derive(Debug)]
pub struct Output {
    pub source: Source,
    pub report: Report,
}

/// An incremental run of a scenario.
#[derive(Debug)]
pub struct Simulation {
    scenario: Scenario,
    model: Box<dyn Model>,
    now: Ps,
    end: Option<Ps>,
    paused: bool,
    speed: Speed,
    tx: Option<Sender<Batch>>,
    sent_events: usize,
    sent_edges: usize,
    sent_strings: usize,
    /// Wall clock and simulated time at the last resume, for real-time pacing.
    anchor: Option<(Instant, Ps)>,
}

impl Simulation {
    pub fn new(scenario: Scenario) -> Result<Self, ScenarioError> {
        let model = scenarios::build(&scenario)?;
        let end = scenario.duration;
        Ok(Self {
            scenario,
            model,
            now: 0,
            end,
            paused: false,
            speed: Speed::Max,
            tx: None,
            sent_events: 0,
            sent_edges: 0,
            sent_strings: 0,
            anchor: None,
        })
    }

    /// Sends every batch from now on over `tx`.
    pub fn attach(&mut self, tx: Sender<Batch>) {
        self.tx = Some(tx);
    }

    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }
    pub fn now(&self) -> Ps {
        self.now
    }
    pub fn events(&self) -> usize {
        self.model.out().events()
    }
    pub fn line_names(&self) -> Vec<String> {
        self.model.out().line_names()
    }
    pub fn is_finished(&self) -> bool {
        match (self.model.next_time(), self.end) {
            (None, _) => true,
            (Some(t), Some(end)) => t > end,
            _ => false,
        }
    }
    pub fn pause(&mut self) {
        self.paused = true;
        self.anchor = None;
    }
    pub fn resume(&mut self) {
        self.paused = false;
    }
    pub fn is_paused(&self) -> bool {
        self.paused
    }
    pub fn set_speed(&mut self, speed: Speed) {
        self.speed = speed;
        self.anchor = None;
    }
    pub fn speed(&self) -> Speed {
        self.speed
    }

    fn step_one(&mut self) -> bool {
        if self.is_finished() {
            return false;
        }
        match self.model.step() {
            Some(t) => {
                self.now = t;
                true
            }
            None => false,
        }
    }

    /// Handles exactly one engine event (works while paused: that is single-stepping).
    pub fn step(&mut self) -> bool {
        let done = self.step_one();
        self.flush();
        done
    }

    /// Handles up to `n` engine events; returns how many.
    pub fn run_batch(&mut self, n: usize) -> usize {
        let mut k = 0;
        while k < n && self.step_one() {
            k += 1;
        }
        self.flush();
        k
    }

    /// Handles every event up to simulated time `t`; returns how many.
    pub fn step_until(&mut self, t: Ps) -> usize {
        let mut k = 0;
        while self.model.next_time().is_some_and(|n| n <= t) && self.step_one() {
            k += 1;
        }
        self.now = self.now.max(t.min(self.end.unwrap_or(Ps::MAX)));
        self.flush();
        k
    }

    /// One slice of a live run, for a worker loop: does nothing while paused; at
    /// `Speed::Max` runs `max_events`; at `RealTime(x)` advances to where the wall clock
    /// says simulated time should be (never more than `max_events`).
    pub fn tick(&mut self, max_events: usize) -> usize {
        if self.paused {
            return 0;
        }
        match self.speed {
            Speed::Max => self.run_batch(max_events),
            Speed::RealTime(x) => {
                let (wall0, sim0) = *self.anchor.get_or_insert((Instant::now(), self.now));
                let target = sim0 + (wall0.elapsed().as_secs_f64() * x * 1e12) as Ps;
                let mut k = 0;
                while k < max_events && self.model.next_time().is_some_and(|n| n <= target) && self.step_one()
                {
                    k += 1;
                }
                if k < max_events {
                    self.now = self.now.max(target);
                }
                self.flush();
                k
            }
        }
    }

    /// How long a worker may sleep before the next real-time tick has work.
    pub fn idle_hint(&self) -> Duration {
        match (self.speed, self.paused) {
            (Speed::RealTime(_), false) => Duration::from_millis(16),
            (Speed::Max, false) => Duration::ZERO,
            (_, true) => Duration::from_millis(50),
        }
    }

    fn flush(&mut self) {
        let Some(tx) = &self.tx else { return };
        let out = self.model.out();
        let table = out.b.table();
        let strings = &out.b.interner;
        let mut batch = Batch {
            now: self.now,
            first_sym: self.sent_strings as u32,
            strings: (self.sent_strings..strings.len())
                .map(|i| strings.resolve(Sym(i as u32)).into_owned())
                .collect(),
            finished: self.is_finished(),
            ..Batch::default()
        };
        for i in self.sent_events..table.len() {
            if let Some(e) = table.get(i) {
                batch.events.push(BatchEvent {
                    ts: e.ts(),
                    cpu: e.cpu(),
                    pid: e.pid(),
                    comm: e.comm(),
                    flags: e.flags(),
                    name: e.name(),
                    fields: e.fields().collect(),
                });
            }
        }
        batch.edges = (self.sent_edges..out.edges_emitted()).filter_map(|i| out.edge_at(i)).collect();
        self.sent_events = table.len();
        self.sent_edges = out.edges_emitted();
        self.sent_strings = strings.len();
        if tx.send(batch).is_err() {
            // The receiver is gone (the view closed): keep running, stop sending.
            self.tx = None;
        }
    }

    /// Runs to the end (or `duration`) and measures the scenario's metrics.
    pub fn finish(mut self) -> Result<Output, ScenarioError> {
        while self.run_batch(1 << 20) > 0 {}
        let source = self.model.into_out().finish(&self.scenario.name);
        let report = scenarios::report(&self.scenario, &source)?;
        Ok(Output { source, report })
    }
}

/// Runs a scenario to completion.
pub fn run(scenario: Scenario) -> Result<Output, ScenarioError> {
    Simulation::new(scenario)?.finish()
}

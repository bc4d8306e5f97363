//! A CPU as a non-preemptive server with idle states, and the scheduler's wake path.
//!
//! Work is reserved in time order: `run(t, d)` starts at `t` or when the CPU is free, and
//! first pays the exit latency of the idle state the CPU sits in (emitting `cpu_idle` exit
//! when it is back, as the kernel does). The idle governor is the caller's: it picks a state
//! (or none) when the CPU runs out of work; a PM QoS latency limit forbids states whose exit
//! latency exceeds it.

use crate::emit::{Emitter, IDLE_EXIT};
use crate::rng::{Rng, us};
use latscope_model::Ps;
use serde::Deserialize;

/// One cpuidle state: its index (the `state=` of `cpu_idle`) and exit latency.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IdleState {
    pub index: u64,
    pub exit: Ps,
}

#[derive(Debug, Clone)]
pub struct Cpu {
    pub id: u16,
    busy_until: Ps,
    idle: Option<IdleState>,
    /// Total busy time reserved (for sanity checks; metrics come from the trace).
    pub busy: Ps,
}

impl Cpu {
    pub fn new(id: u16) -> Self {
        Self { id, busy_until: 0, idle: None, busy: 0 }
    }

    /// When the CPU is next free (ignoring idle exit).
    pub fn free_at(&self) -> Ps {
        self.busy_until
    }

    pub fn is_idle(&self) -> bool {
        self.idle.is_some()
    }

    /// Reserves `dur` of work ready at `t`; returns (start, end).
    pub fn run(&mut self, t: Ps, dur: Ps, out: &mut Emitter) -> (Ps, Ps) {
        let mut start = t.max(self.busy_until);
        if let Some(state) = self.idle.take() {
            start += state.exit;
            out.cpu_idle(start, self.id, IDLE_EXIT);
        }
        self.busy_until = start + dur;
        self.busy += dur;
        (start, start + dur)
    }

    /// The CPU has nothing to run from `t` on and enters `state` (once it is free).
    pub fn enter_idle(&mut self, t: Ps, state: IdleState, out: &mut Emitter) {
        if self.idle.is_none() {
            out.cpu_idle(t.max(self.busy_until), self.id, state.index);
            self.idle = Some(state);
        }
    }
}

/// Scheduler wake path timing: from `sched_wakeup` (in the waker's context) to the woken
/// task's `sched_switch`. Mostly `base_us`, with an occasional long tail (other work, cache
/// misses, a timer tick in the way).
#[derive(Debug, Clone, Copy, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WakePath {
    /// Typical wakeup-to-switch range, microseconds.
    pub base_us: [f64; 2],
    /// Probability of a slow wake, and its extra delay range in microseconds.
    pub tail_prob: f64,
    pub tail_us: [f64; 2],
}

impl WakePath {
    pub fn sample(&self, rng: &mut Rng) -> Ps {
        let mut d = rng.uniform_us(self.base_us[0], self.base_us[1]);
        if rng.chance(self.tail_prob) {
            d += rng.uniform_us(self.tail_us[0], self.tail_us[1]);
        }
        d
    }
}

/// Picks the deepest allowed idle state: `latency_limit` is a PM QoS constraint. The
/// shallowest state (WFI on Arm) stays allowed under any constraint, as in cpuidle.
pub fn governor(states: &[IdleState], latency_limit: Option<Ps>) -> Option<IdleState> {
    states
        .iter()
        .filter(|s| latency_limit.is_none_or(|l| s.exit <= l))
        .max_by_key(|s| s.exit)
        .or_else(|| states.iter().min_by_key(|s| s.exit))
        .copied()
}

pub fn idle_state(index: u64, exit_us: f64) -> IdleState {
    IdleState { index, exit: us(exit_us) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_exit_delays_work_and_is_traced() {
        let mut out = Emitter::new();
        let mut cpu = Cpu::new(0);
        assert_eq!(cpu.run(10, 5, &mut out), (10, 15));
        assert_eq!(cpu.run(12, 5, &mut out), (15, 20), "waits for the CPU");
        cpu.enter_idle(30, IdleState { index: 1, exit: 100 }, &mut out);
        assert_eq!(cpu.run(50, 5, &mut out), (150, 155));
        assert_eq!(out.events(), 2, "enter and exit");
        let states = [idle_state(0, 1.0), idle_state(1, 500.0)];
        assert_eq!(governor(&states, None).map(|s| s.index), Some(1));
        assert_eq!(governor(&states, Some(us(100.0))).map(|s| s.index), Some(0));
        assert_eq!(governor(&states, Some(0)).map(|s| s.index), Some(0));
    }
}

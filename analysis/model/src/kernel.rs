//! Linux kernel vocabulary that importers, the simulator, analyses and views all read the
//! same way: defined once here.

/// Names of the softirq vectors, indexed by the `vec` field of `softirq_*` events
/// (`enum { HI_SOFTIRQ = 0, TIMER_SOFTIRQ, … }` in `include/linux/interrupt.h`; the kernel
/// prints them with `show_softirq_name`).
pub const SOFTIRQ_NAMES: [&str; 10] =
    ["HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU"];

/// The name of softirq vector `vec`, if the kernel defines one.
pub fn softirq_name(vec: impl TryInto<usize>) -> Option<&'static str> {
    vec.try_into().ok().and_then(|v| SOFTIRQ_NAMES.get(v)).copied()
}

/// `PWR_EVENT_EXIT`: the `cpu_idle` state meaning "leaving idle" (`(u32)-1`; kernels print it
/// as `4294967295`, some as `-1`).
pub const CPU_IDLE_EXIT_STATE: u64 = u32::MAX as u64;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn softirq_vectors_by_number() {
        assert_eq!(softirq_name(0), Some("HI"));
        assert_eq!(softirq_name(3), Some("NET_RX"));
        assert_eq!(softirq_name(9), Some("RCU"));
        assert_eq!(softirq_name(10), None);
        assert_eq!(softirq_name(-1i64), None);
        assert_eq!(CPU_IDLE_EXIT_STATE.to_string(), "4294967295");
    }
}

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

/// A kernel trace event latscope reads by name: its tracefs system and its name, so an
/// analysis names it, a hint says `trace-cmd record -e NAME`, and a recorder enables
/// `events/SYSTEM/NAME`, from one value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KernelEvent {
    pub system: &'static str,
    pub name: &'static str,
}

impl KernelEvent {
    const fn new(system: &'static str, name: &'static str) -> Self {
        KernelEvent { system, name }
    }

    /// `SYSTEM/NAME`, as tracefs lays out `events/`.
    pub fn path(&self) -> String {
        format!("{}/{}", self.system, self.name)
    }
}

pub const IRQ_HANDLER_ENTRY: KernelEvent = KernelEvent::new("irq", "irq_handler_entry");
pub const IRQ_HANDLER_EXIT: KernelEvent = KernelEvent::new("irq", "irq_handler_exit");
pub const SOFTIRQ_ENTRY: KernelEvent = KernelEvent::new("irq", "softirq_entry");
pub const SOFTIRQ_EXIT: KernelEvent = KernelEvent::new("irq", "softirq_exit");
pub const SOFTIRQ_RAISE: KernelEvent = KernelEvent::new("irq", "softirq_raise");
pub const SCHED_WAKEUP: KernelEvent = KernelEvent::new("sched", "sched_wakeup");
pub const SCHED_WAKING: KernelEvent = KernelEvent::new("sched", "sched_waking");
pub const SCHED_WAKEUP_NEW: KernelEvent = KernelEvent::new("sched", "sched_wakeup_new");
pub const SCHED_SWITCH: KernelEvent = KernelEvent::new("sched", "sched_switch");
pub const BLOCK_RQ_ISSUE: KernelEvent = KernelEvent::new("block", "block_rq_issue");
pub const BLOCK_RQ_COMPLETE: KernelEvent = KernelEvent::new("block", "block_rq_complete");
pub const BLOCK_RQ_INSERT: KernelEvent = KernelEvent::new("block", "block_rq_insert");
pub const MMC_REQUEST_START: KernelEvent = KernelEvent::new("mmc", "mmc_request_start");
pub const MMC_REQUEST_DONE: KernelEvent = KernelEvent::new("mmc", "mmc_request_done");
pub const CPU_IDLE: KernelEvent = KernelEvent::new("power", "cpu_idle");
pub const IRQ_DISABLE: KernelEvent = KernelEvent::new("preemptirq", "irq_disable");
pub const IRQ_ENABLE: KernelEvent = KernelEvent::new("preemptirq", "irq_enable");
/// `trace_marker` writes as trace-cmd names them (`ftrace/print` in tracefs).
pub const PRINT: KernelEvent = KernelEvent::new("ftrace", "print");
/// `trace_marker` writes as the kernel's text output and Perfetto's atrace name them.
pub const TRACING_MARK_WRITE: KernelEvent = KernelEvent::new("ftrace", "tracing_mark_write");
/// The two names of the event a `trace_marker` write makes: trace.dat keeps the kernel's
/// own, `print`, while `trace-cmd report` and the text format print `tracing_mark_write`.
pub const MARKER_NAMES: [&str; 2] = [TRACING_MARK_WRITE.name, PRINT.name];

/// Every kernel event an analysis reads by name.
pub const EVENTS: &[KernelEvent] = &[
    IRQ_HANDLER_ENTRY,
    IRQ_HANDLER_EXIT,
    SOFTIRQ_ENTRY,
    SOFTIRQ_EXIT,
    SOFTIRQ_RAISE,
    SCHED_WAKEUP,
    SCHED_WAKING,
    SCHED_WAKEUP_NEW,
    SCHED_SWITCH,
    BLOCK_RQ_ISSUE,
    BLOCK_RQ_COMPLETE,
    BLOCK_RQ_INSERT,
    MMC_REQUEST_START,
    MMC_REQUEST_DONE,
    CPU_IDLE,
    IRQ_DISABLE,
    IRQ_ENABLE,
    PRINT,
    TRACING_MARK_WRITE,
];

/// The kernel event named `name`.
pub fn event(name: &str) -> Option<&'static KernelEvent> {
    EVENTS.iter().find(|e| e.name == name)
}

/// Bits of the minor number in the kernel's internal `dev_t` (`MINORBITS`), which trace
/// events record: `MAJOR(dev) = dev >> 20`.
pub const MINOR_BITS: u32 = 20;

/// The kernel's `dev_t` of device `major,minor`.
pub fn dev_t(major: u64, minor: u64) -> u64 {
    (major << MINOR_BITS) | (minor & ((1 << MINOR_BITS) - 1))
}

/// A device number as ftrace prints it and engineers write it, `MAJ,MIN` (`254,0`).
pub fn parse_dev(text: &str) -> Option<u64> {
    let (major, minor) = text.trim().split_once(',')?;
    let (major, minor) = (major.trim().parse::<u64>().ok()?, minor.trim().parse::<u64>().ok()?);
    (major < (1 << (64 - MINOR_BITS)) && minor < (1 << MINOR_BITS)).then(|| dev_t(major, minor))
}

/// `MAJ,MIN` of a kernel `dev_t`.
pub fn dev_text(dev: u64) -> String {
    format!("{},{}", dev >> MINOR_BITS, dev & ((1 << MINOR_BITS) - 1))
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

    #[test]
    fn device_numbers_read_both_ways() {
        assert_eq!(dev_t(254, 0), 266_338_304, "virtio-blk vda as trace.dat stores it");
        assert_eq!(parse_dev("254,0"), Some(266_338_304));
        assert_eq!(parse_dev(" 8, 16 "), Some(dev_t(8, 16)));
        assert_eq!(dev_text(266_338_304), "254,0");
        assert_eq!(parse_dev("254"), None);
        assert_eq!(parse_dev("1,1048576"), None, "a minor wider than 20 bits");
    }

    #[test]
    fn events_are_found_by_name_with_their_tracefs_path() {
        assert_eq!(event("sched_switch").map(KernelEvent::path).as_deref(), Some("sched/sched_switch"));
        assert_eq!(event("cpu_idle").map(|e| e.system), Some("power"));
        assert_eq!(event("nope"), None);
        let mut names: Vec<&str> = EVENTS.iter().map(|e| e.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), EVENTS.len(), "each event once");
    }
}

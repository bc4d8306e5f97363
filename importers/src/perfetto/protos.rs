//! The subset of Perfetto's trace protos (`protos/perfetto/trace/**.proto`, Apache-2.0)
//! that latscope reads, as hand-written prost messages: field numbers and types as in
//! Perfetto's `perfetto_trace.proto` (checked against the descriptors Perfetto ships in its
//! Python package, see docs/ARCHITECTURE.md). Strings are read as bytes: a kernel comm or a
//! marker need not be UTF-8, and prost refuses a `string` that is not.
//!
//! Framing messages (`Trace`, `TracePacket`, `FtraceEventBundle`, `FtraceEvent`) are walked
//! by [`super::wire`] instead, so packets are not copied and unknown events are kept, and
//! the flat event messages are read by `wire::Leaf` (the `leaf` module keeps them as
//! prost messages, which the tests read beside it).

#![allow(missing_docs)]

/// `FtraceEventBundle.CompactSched`: delta-encoded sched_switch and sched_waking columns
/// with a per-bundle comm table.
#[derive(Clone, PartialEq, prost::Message)]
pub struct CompactSched {
    #[prost(bytes = "bytes", repeated, tag = "5")]
    pub intern_table: Vec<prost::bytes::Bytes>,
    #[prost(uint64, repeated, tag = "1")]
    pub switch_timestamp: Vec<u64>,
    #[prost(int64, repeated, tag = "2")]
    pub switch_prev_state: Vec<i64>,
    #[prost(int32, repeated, tag = "3")]
    pub switch_next_pid: Vec<i32>,
    #[prost(int32, repeated, tag = "4")]
    pub switch_next_prio: Vec<i32>,
    #[prost(uint32, repeated, tag = "6")]
    pub switch_next_comm_index: Vec<u32>,
    #[prost(uint64, repeated, tag = "7")]
    pub waking_timestamp: Vec<u64>,
    #[prost(int32, repeated, tag = "8")]
    pub waking_pid: Vec<i32>,
    #[prost(int32, repeated, tag = "9")]
    pub waking_target_cpu: Vec<i32>,
    #[prost(int32, repeated, tag = "10")]
    pub waking_prio: Vec<i32>,
    #[prost(uint32, repeated, tag = "11")]
    pub waking_comm_index: Vec<u32>,
    #[prost(uint32, repeated, tag = "12")]
    pub waking_common_flags: Vec<u32>,
}

/// `generic` (327): an event Perfetto has no proto for, with named fields.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GenericFtraceEvent {
    #[prost(bytes = "vec", tag = "1")]
    pub event_name: Vec<u8>,
    #[prost(message, repeated, tag = "2")]
    pub field: Vec<GenericField>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct GenericField {
    #[prost(bytes = "vec", tag = "1")]
    pub name: Vec<u8>,
    #[prost(oneof = "GenericValue", tags = "3, 4, 5")]
    pub value: Option<GenericValue>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
pub enum GenericValue {
    #[prost(bytes = "vec", tag = "3")]
    Str(Vec<u8>),
    #[prost(int64, tag = "4")]
    Int(i64),
    #[prost(uint64, tag = "5")]
    UInt(u64),
}

// ---- process names ----

/// `ProcessTree` (TracePacket field 2).
#[derive(Clone, PartialEq, prost::Message)]
pub struct ProcessTree {
    #[prost(message, repeated, tag = "1")]
    pub processes: Vec<Process>,
    #[prost(message, repeated, tag = "2")]
    pub threads: Vec<Thread>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Process {
    #[prost(int32, tag = "1")]
    pub pid: i32,
    #[prost(int32, tag = "2")]
    pub ppid: i32,
    #[prost(bytes = "vec", repeated, tag = "3")]
    pub cmdline: Vec<Vec<u8>>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Thread {
    #[prost(int32, tag = "1")]
    pub tid: i32,
    #[prost(bytes = "vec", tag = "2")]
    pub name: Vec<u8>,
    #[prost(int32, tag = "3")]
    pub tgid: i32,
}

// ---- clocks ----

/// `ClockSnapshot` (TracePacket field 6).
#[derive(Clone, PartialEq, prost::Message)]
pub struct ClockSnapshot {
    #[prost(message, repeated, tag = "1")]
    pub clocks: Vec<Clock>,
    #[prost(int32, optional, tag = "2")]
    pub primary_trace_clock: Option<i32>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Clock {
    #[prost(uint32, tag = "1")]
    pub clock_id: u32,
    #[prost(uint64, tag = "2")]
    pub timestamp: u64,
    #[prost(bool, tag = "3")]
    pub is_incremental: bool,
    #[prost(uint64, tag = "4")]
    pub unit_multiplier_ns: u64,
}

// ---- track events ----

/// `TrackDescriptor` (TracePacket field 60).
#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackDescriptor {
    #[prost(uint64, tag = "1")]
    pub uuid: u64,
    #[prost(uint64, tag = "5")]
    pub parent_uuid: u64,
    #[prost(bytes = "vec", optional, tag = "2")]
    pub name: Option<Vec<u8>>,
    #[prost(bytes = "vec", optional, tag = "10")]
    pub static_name: Option<Vec<u8>>,
    #[prost(bytes = "vec", optional, tag = "13")]
    pub atrace_name: Option<Vec<u8>>,
    #[prost(message, optional, tag = "3")]
    pub process: Option<ProcessDescriptor>,
    #[prost(message, optional, tag = "4")]
    pub thread: Option<ThreadDescriptor>,
    #[prost(message, optional, tag = "8")]
    pub counter: Option<CounterDescriptor>,
}

/// `ProcessDescriptor` (in a TrackDescriptor, or TracePacket field 43).
#[derive(Clone, PartialEq, prost::Message)]
pub struct ProcessDescriptor {
    #[prost(int32, tag = "1")]
    pub pid: i32,
    #[prost(bytes = "vec", repeated, tag = "2")]
    pub cmdline: Vec<Vec<u8>>,
    #[prost(bytes = "vec", optional, tag = "6")]
    pub process_name: Option<Vec<u8>>,
}

/// `ThreadDescriptor` (in a TrackDescriptor, or TracePacket field 44).
#[derive(Clone, PartialEq, prost::Message)]
pub struct ThreadDescriptor {
    #[prost(int32, tag = "1")]
    pub pid: i32,
    #[prost(int32, tag = "2")]
    pub tid: i32,
    #[prost(bytes = "vec", optional, tag = "5")]
    pub thread_name: Option<Vec<u8>>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct CounterDescriptor {
    #[prost(bytes = "vec", optional, tag = "6")]
    pub unit_name: Option<Vec<u8>>,
    #[prost(int64, tag = "4")]
    pub unit_multiplier: i64,
    #[prost(bool, tag = "5")]
    pub is_incremental: bool,
}

/// `TrackEvent` (TracePacket field 11): the fields latscope reads.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackEvent {
    #[prost(uint64, optional, tag = "10")]
    pub name_iid: Option<u64>,
    #[prost(bytes = "vec", optional, tag = "23")]
    pub name: Option<Vec<u8>>,
    /// 1 slice begin, 2 slice end, 3 instant, 4 counter.
    #[prost(int32, tag = "9")]
    pub r#type: i32,
    #[prost(uint64, optional, tag = "11")]
    pub track_uuid: Option<u64>,
    #[prost(int64, optional, tag = "30")]
    pub counter_value: Option<i64>,
    #[prost(double, optional, tag = "44")]
    pub double_counter_value: Option<f64>,
}

/// `InternedData` (TracePacket field 12): event names only.
#[derive(Clone, PartialEq, prost::Message)]
pub struct InternedData {
    #[prost(message, repeated, tag = "2")]
    pub event_names: Vec<EventName>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct EventName {
    #[prost(uint64, tag = "1")]
    pub iid: u64,
    #[prost(bytes = "vec", tag = "2")]
    pub name: Vec<u8>,
}

/// `TracePacketDefaults` (TracePacket field 59).
#[derive(Clone, PartialEq, prost::Message)]
pub struct TracePacketDefaults {
    #[prost(uint32, optional, tag = "58")]
    pub timestamp_clock_id: Option<u32>,
    #[prost(message, optional, tag = "11")]
    pub track_event_defaults: Option<TrackEventDefaults>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackEventDefaults {
    #[prost(uint64, optional, tag = "11")]
    pub track_uuid: Option<u64>,
}

/// The flat ftrace event messages (FtraceEvent oneof `event`), as prost reads them. The
/// importer reads these with `wire::Leaf` instead (they come by the million and prost
/// copies every string); the tests check that both read the same.
#[cfg(test)]
pub mod leaf {
    /// `print` (field 3): trace_marker writes, including atrace markers.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Print {
        #[prost(uint64, tag = "1")]
        pub ip: u64,
        #[prost(bytes = "vec", tag = "2")]
        pub buf: Vec<u8>,
    }

    /// `sched_switch` (field 4).
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct SchedSwitch {
        #[prost(bytes = "vec", tag = "1")]
        pub prev_comm: Vec<u8>,
        #[prost(int32, tag = "2")]
        pub prev_pid: i32,
        #[prost(int32, tag = "3")]
        pub prev_prio: i32,
        #[prost(int64, tag = "4")]
        pub prev_state: i64,
        #[prost(bytes = "vec", tag = "5")]
        pub next_comm: Vec<u8>,
        #[prost(int32, tag = "6")]
        pub next_pid: i32,
        #[prost(int32, tag = "7")]
        pub next_prio: i32,
    }

    /// `sched_wakeup` (17), `sched_waking` (20), `sched_wakeup_new` (114): one message shape.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct SchedWakeup {
        #[prost(bytes = "vec", tag = "1")]
        pub comm: Vec<u8>,
        #[prost(int32, tag = "2")]
        pub pid: i32,
        #[prost(int32, tag = "3")]
        pub prio: i32,
        #[prost(int32, tag = "4")]
        pub success: i32,
        #[prost(int32, tag = "5")]
        pub target_cpu: i32,
    }

    /// `cpu_idle` (13) and `cpu_frequency` (11).
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct CpuState {
        #[prost(uint32, tag = "1")]
        pub state: u32,
        #[prost(uint32, tag = "2")]
        pub cpu_id: u32,
    }

    /// `irq_handler_entry` (36).
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct IrqHandlerEntry {
        #[prost(int32, tag = "1")]
        pub irq: i32,
        #[prost(bytes = "vec", tag = "2")]
        pub name: Vec<u8>,
        #[prost(uint32, tag = "3")]
        pub handler: u32,
    }

    /// `irq_handler_exit` (37).
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct IrqHandlerExit {
        #[prost(int32, tag = "1")]
        pub irq: i32,
        #[prost(int32, tag = "2")]
        pub ret: i32,
    }

    /// `softirq_entry` (24), `softirq_exit` (25), `softirq_raise` (26).
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Softirq {
        #[prost(uint32, tag = "1")]
        pub vec: u32,
    }

    /// `block_rq_issue` (45) and `block_rq_insert` (126).
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct BlockRqIssue {
        #[prost(uint64, tag = "1")]
        pub dev: u64,
        #[prost(uint64, tag = "2")]
        pub sector: u64,
        #[prost(uint32, tag = "3")]
        pub nr_sector: u32,
        #[prost(uint32, tag = "4")]
        pub bytes: u32,
        #[prost(bytes = "vec", tag = "5")]
        pub rwbs: Vec<u8>,
        #[prost(bytes = "vec", tag = "6")]
        pub comm: Vec<u8>,
        #[prost(bytes = "vec", tag = "7")]
        pub cmd: Vec<u8>,
    }

    /// `block_rq_complete` (125).
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct BlockRqComplete {
        #[prost(uint64, tag = "1")]
        pub dev: u64,
        #[prost(uint64, tag = "2")]
        pub sector: u64,
        #[prost(uint32, tag = "3")]
        pub nr_sector: u32,
        #[prost(int32, tag = "4")]
        pub errors: i32,
        #[prost(bytes = "vec", tag = "5")]
        pub rwbs: Vec<u8>,
        #[prost(bytes = "vec", tag = "6")]
        pub cmd: Vec<u8>,
        #[prost(int32, optional, tag = "7")]
        pub error: Option<i32>,
    }

    /// `task_newtask` (235).
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct TaskNewtask {
        #[prost(int32, tag = "1")]
        pub pid: i32,
        #[prost(bytes = "vec", tag = "2")]
        pub comm: Vec<u8>,
        #[prost(uint64, tag = "3")]
        pub clone_flags: u64,
        #[prost(int32, tag = "4")]
        pub oom_score_adj: i32,
    }

    /// `task_rename` (236).
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct TaskRename {
        #[prost(int32, tag = "1")]
        pub pid: i32,
        #[prost(bytes = "vec", tag = "2")]
        pub oldcomm: Vec<u8>,
        #[prost(bytes = "vec", tag = "3")]
        pub newcomm: Vec<u8>,
        #[prost(int32, tag = "4")]
        pub oom_score_adj: i32,
    }

    /// `sched_process_exit` (238, with `tgid` as field 3) and `sched_process_free` (240, whose
    /// field 3 is `prio`): read as comm, pid and the two optional integers.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct SchedProcess {
        #[prost(bytes = "vec", tag = "1")]
        pub comm: Vec<u8>,
        #[prost(int32, tag = "2")]
        pub pid: i32,
        #[prost(int32, tag = "3")]
        pub field3: i32,
        #[prost(int32, tag = "4")]
        pub field4: i32,
    }

    /// `sched_process_fork` (239).
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct SchedProcessFork {
        #[prost(bytes = "vec", tag = "1")]
        pub parent_comm: Vec<u8>,
        #[prost(int32, tag = "2")]
        pub parent_pid: i32,
        #[prost(bytes = "vec", tag = "3")]
        pub child_comm: Vec<u8>,
        #[prost(int32, tag = "4")]
        pub child_pid: i32,
    }
}

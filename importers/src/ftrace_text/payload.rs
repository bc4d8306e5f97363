//! Event payloads: typed parsers for the events latency analysis leans on (irq, softirq,
//! sched, block, mmc, power, napi, preemptirq, markers) and a generic `key=value` parser
//! for everything else. Parsers fill the [`Sink`]'s field and value buffers; a typed parser
//! that does not recognise the payload's shape returns `false` and the caller falls back to
//! the generic one, so an unexpected kernel variant is never lost.

use super::line::{
    find, padded_word, parse_0x, parse_hex, parse_i64, parse_u64, split_digits, trim, trim_end, trim_start,
};
use crate::assemble::ColumnWindow;
use latscope_model::{EventTableBuilder, FieldKind, FieldValue, Sym};
use memchr::memmem;

/// How an event name's payload is parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Handler {
    IrqEntry,
    IrqExit,
    Softirq,
    SchedSwitch,
    SchedWakeup,
    Block,
    Mmc,
    CpuIdle,
    NapiPoll,
    PreemptIrq,
    /// `print`/`bprint`/`bputs`: an optional `caller: ` then the message.
    Print,
    /// `tracing_mark_write` and trace_printk from unknown callers: the message itself.
    Marker,
    /// The function tracer, trace-cmd's `function:` plugin form.
    Function,
    /// A known tracepoint: `key=value` fields, or `text` when it has none.
    Generic,
}

impl Handler {
    pub fn for_name(name: &[u8]) -> Handler {
        match name {
            b"irq_handler_entry" => Handler::IrqEntry,
            b"irq_handler_exit" => Handler::IrqExit,
            b"softirq_entry" | b"softirq_exit" | b"softirq_raise" => Handler::Softirq,
            b"sched_switch" => Handler::SchedSwitch,
            b"sched_wakeup" | b"sched_wakeup_new" | b"sched_waking" => Handler::SchedWakeup,
            b"mmc_request_start" | b"mmc_request_done" => Handler::Mmc,
            b"cpu_idle" => Handler::CpuIdle,
            b"napi_poll" => Handler::NapiPoll,
            b"irq_disable" | b"irq_enable" | b"preempt_disable" | b"preempt_enable" => Handler::PreemptIrq,
            b"print" | b"bprint" | b"bputs" => Handler::Print,
            b"tracing_mark_write" => Handler::Marker,
            b"function" => Handler::Function,
            n if n.starts_with(b"block_") => Handler::Block,
            n if is_known_event(n) => Handler::Generic,
            _ => Handler::Marker,
        }
    }
}

/// Tracepoint subsystems. A body `foo: bar` is either event `foo` or a trace_printk from
/// function `foo`; without the kernel's `available_events` we call
/// names with these prefixes events and treat the rest as print-like (they keep their name
/// and get a `text` field besides their `key=value` tokens).
const EVENT_PREFIXES: &[&[u8]] = &[
    b"sched_",
    b"irq_",
    b"softirq_",
    b"tasklet_",
    b"ipi_",
    b"block_",
    b"mmc_",
    b"sdhci_",
    b"nvme_",
    b"scsi_",
    b"ufshcd_",
    b"ext4_",
    b"xfs_",
    b"f2fs_",
    b"btrfs_",
    b"jbd2_",
    b"iomap_",
    b"writeback_",
    b"napi_",
    b"net_",
    b"netif_",
    b"skb_",
    b"kfree_skb",
    b"consume_skb",
    b"tcp_",
    b"udp_",
    b"sock_",
    b"inet_",
    b"qdisc_",
    b"xdp_",
    b"hrtimer_",
    b"timer_",
    b"itimer_",
    b"tick_",
    b"alarmtimer_",
    b"cpu_",
    b"cpuhp_",
    b"clock_",
    b"clk_",
    b"thermal_",
    b"cdev_",
    b"power_",
    b"pm_",
    b"rpm_",
    b"devfreq_",
    b"workqueue_",
    b"kmem_",
    b"mm_",
    b"kmalloc",
    b"kfree",
    b"rcu_",
    b"sys_",
    b"io_uring_",
    b"lock_",
    b"contention_",
    b"signal_",
    b"task_",
    b"regulator_",
    b"i2c_",
    b"smbus_",
    b"spi_",
    b"dwc3_",
    b"usb_",
    b"xhci_",
    b"dma_",
    b"page_",
    b"kvm_",
    b"funcgraph_",
    b"cgroup_",
    b"oom_",
    b"binder_",
    b"drm_",
    b"i915_",
    b"gpu_",
    b"wakeup_source_",
    b"suspend_resume",
    b"irq_noise",
    b"thread_noise",
    b"nmi_noise",
    b"softirq_noise",
    b"sample_threshold",
    b"osnoise",
    b"timerlat",
    b"hwlat",
    b"mce_",
    b"x86_",
    b"local_timer_",
    b"reschedule_",
    b"call_function",
    b"initcall_",
    b"module_",
    b"percpu_",
    b"filemap_",
    b"vm_",
    b"compaction_",
    b"iommu_",
    b"pci_",
    b"rtc_",
    b"gpio_",
    b"pwm_",
    b"fib_",
    b"neigh_",
    b"bpf_",
    b"console",
    b"error_report_",
    b"rss_stat",
    b"mmap_lock_",
    b"rseq_",
    b"memcg_",
    b"vmscan_",
    b"ata_",
    b"nfs",
    b"rpc_",
    b"svc_",
];

pub(crate) fn is_known_event(name: &[u8]) -> bool {
    EVENT_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// Field names, interned once per chunk.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Keys {
    pub irq: Sym,
    pub name: Sym,
    pub ret: Sym,
    pub vec: Sym,
    pub action: Sym,
    pub prev_comm: Sym,
    pub prev_pid: Sym,
    pub prev_prio: Sym,
    pub prev_state: Sym,
    pub next_comm: Sym,
    pub next_pid: Sym,
    pub next_prio: Sym,
    pub comm: Sym,
    pub pid: Sym,
    pub prio: Sym,
    pub target_cpu: Sym,
    pub dev: Sym,
    pub rwbs: Sym,
    pub bytes: Sym,
    pub sector: Sym,
    pub nr_sector: Sym,
    pub ioprio: Sym,
    pub error: Sym,
    pub host: Sym,
    pub state: Sym,
    pub cpu_id: Sym,
    pub napi: Sym,
    pub work: Sym,
    pub budget: Sym,
    pub caller: Sym,
    pub parent: Sym,
    pub text: Sym,
    pub func: Sym,
    pub id: Sym,
    pub context: Sym,
    pub timer_latency: Sym,
}

impl Keys {
    pub fn new(b: &mut EventTableBuilder<ColumnWindow<'_>>) -> Keys {
        let mut k = |s: &str| b.intern(s.as_bytes());
        Keys {
            irq: k("irq"),
            name: k("name"),
            ret: k("ret"),
            vec: k("vec"),
            action: k("action"),
            prev_comm: k("prev_comm"),
            prev_pid: k("prev_pid"),
            prev_prio: k("prev_prio"),
            prev_state: k("prev_state"),
            next_comm: k("next_comm"),
            next_pid: k("next_pid"),
            next_prio: k("next_prio"),
            comm: k("comm"),
            pid: k("pid"),
            prio: k("prio"),
            target_cpu: k("target_cpu"),
            dev: k("dev"),
            rwbs: k("rwbs"),
            bytes: k("bytes"),
            sector: k("sector"),
            nr_sector: k("nr_sector"),
            ioprio: k("ioprio"),
            error: k("error"),
            host: k("host"),
            state: k("state"),
            cpu_id: k("cpu_id"),
            napi: k("napi"),
            work: k("work"),
            budget: k("budget"),
            caller: k("caller"),
            parent: k("parent"),
            text: k("text"),
            func: k("func"),
            id: k("id"),
            context: k("context"),
            timer_latency: k("timer_latency"),
        }
    }
}

/// Slots of [`Sink`]'s string cache (direct-mapped) and the longest string it holds.
const STR_CACHE_SLOTS: usize = 512;
pub(crate) const STR_CACHE_BYTES: usize = 24;

/// Where parsers put an event's fields: the builder (for interning) and reusable buffers.
#[derive(Debug)]
pub(crate) struct Sink<'a> {
    pub b: EventTableBuilder<ColumnWindow<'a>>,
    pub keys: Keys,
    pub fields: Vec<(Sym, FieldKind)>,
    pub values: Vec<FieldValue>,
    /// Recently interned short strings (field keys, comms, states, irq and softirq names
    /// repeat on most lines): a compare in a small table instead of a lookup in the
    /// interner's large one.
    str_cache: Vec<(u8, [u64; 3], Sym)>,
}

/// A short string (at most [`STR_CACHE_BYTES`]) as three zero-padded little-endian words,
/// and its slot: a multiplicative hash of the words and the length. Built from word loads,
/// not a variable-length copy (which costs a `memcpy` call per string).
#[inline]
pub(crate) fn str_key(s: &[u8]) -> ([u64; 3], usize) {
    let key = [padded_word(s, 0), padded_word(s, 8), padded_word(s, 16)];
    let h = (key[0] ^ key[1].rotate_left(21) ^ key[2].rotate_left(42) ^ s.len() as u64)
        .wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (key, (h >> 40) as usize % STR_CACHE_SLOTS)
}

impl<'a> Sink<'a> {
    /// A sink filling `b`.
    pub fn new(mut b: EventTableBuilder<ColumnWindow<'a>>) -> Sink<'a> {
        let keys = Keys::new(&mut b);
        Sink {
            b,
            keys,
            fields: Vec::with_capacity(32),
            values: Vec::with_capacity(32),
            // Length u8::MAX marks a free slot: no cached string is that long.
            str_cache: vec![(u8::MAX, [0; 3], Sym(0)); STR_CACHE_SLOTS],
        }
    }

    /// Interns `s` through the string cache (the same symbol as `self.b.intern(s)`).
    #[inline]
    pub fn intern(&mut self, s: &[u8]) -> Sym {
        if s.len() > STR_CACHE_BYTES {
            return self.b.intern(s);
        }
        let (key, i) = str_key(s);
        let slot = &mut self.str_cache[i];
        if usize::from(slot.0) == s.len() && slot.1 == key {
            return slot.2;
        }
        let sym = self.b.intern(s);
        *slot = (s.len() as u8, key, sym);
        sym
    }

    pub fn clear(&mut self) {
        self.fields.clear();
        self.values.clear();
    }

    #[inline]
    pub fn int(&mut self, key: Sym, v: i64) {
        self.fields.push((key, FieldKind::Int));
        self.values.push(FieldValue::Int(v));
    }
    #[inline]
    pub fn uint(&mut self, key: Sym, v: u64) {
        self.fields.push((key, FieldKind::UInt));
        self.values.push(FieldValue::UInt(v));
    }
    #[inline]
    pub fn str(&mut self, key: Sym, v: &[u8]) {
        let s = self.intern(v);
        self.fields.push((key, FieldKind::Str));
        self.values.push(FieldValue::Str(s));
    }

    /// A generic value: decimal → Int (UInt above `i64::MAX`), `0x` hex → UInt, else Str.
    pub fn auto(&mut self, key: Sym, v: &[u8]) {
        // One scan per kind: a value that is not a number (hashed `%p` pointers, names)
        // fails fast once instead of in each of three parsers.
        match v.first() {
            Some(b'-') => match parse_i64(v) {
                Some(i) => self.int(key, i),
                None => self.str(key, v),
            },
            Some(b'0'..=b'9') => match parse_u64(v) {
                Some(u) => match i64::try_from(u) {
                    Ok(i) => self.int(key, i),
                    Err(_) => self.uint(key, u),
                },
                None => match parse_0x(v) {
                    Some(u) => self.uint(key, u),
                    None => self.str(key, v),
                },
            },
            _ => self.str(key, v),
        }
    }

    /// Fills the fields for `payload` with `handler`, falling back to the generic parser.
    pub fn parse(&mut self, handler: Handler, payload: &[u8]) {
        self.clear();
        let ok = match handler {
            Handler::IrqEntry => self.irq(payload, b" name=", b" handler="),
            Handler::IrqExit => self.irq(payload, b" ret=", b" return="),
            Handler::Softirq => self.softirq(payload),
            Handler::SchedSwitch => self.sched_switch(payload) || self.sched_switch_plugin(payload),
            Handler::SchedWakeup => self.sched_wakeup(payload) || self.sched_wakeup_plugin(payload),
            Handler::Block => self.block(payload),
            Handler::Mmc => {
                self.mmc(payload);
                true
            }
            Handler::CpuIdle => self.cpu_idle(payload),
            Handler::NapiPoll => self.napi_poll(payload),
            Handler::PreemptIrq => self.preemptirq(payload),
            Handler::Print => {
                self.print(payload);
                true
            }
            Handler::Marker => {
                self.marker(payload);
                true
            }
            Handler::Function => self.function(payload),
            Handler::Generic => false,
        };
        if !ok {
            self.clear();
            if !self.key_values(payload) {
                self.str(self.keys.text, trim(payload));
            }
        }
    }

    fn irq(&mut self, p: &[u8], second: &[u8], old_second: &[u8]) -> bool {
        let Some(rest) = p.strip_prefix(b"irq=") else { return false };
        let (digits, rest) = take_int(rest);
        let Some(irq) = parse_i64(digits) else { return false };
        let Some(val) = rest.strip_prefix(second).or_else(|| rest.strip_prefix(old_second)) else {
            return false;
        };
        let key = if second == b" name=" { self.keys.name } else { self.keys.ret };
        self.int(self.keys.irq, irq);
        self.str(key, val);
        true
    }

    fn softirq(&mut self, p: &[u8]) -> bool {
        let (rest, old) = match p.strip_prefix(b"vec=") {
            Some(r) => (r, false),
            None => match p.strip_prefix(b"softirq=") {
                Some(r) => (r, true),
                None => return false,
            },
        };
        let (digits, rest) = take_int(rest);
        let Some(vec) = parse_i64(digits) else { return false };
        let action = if old {
            rest.strip_prefix(b" action=")
        } else {
            rest.strip_prefix(b" [action=").and_then(|a| a.strip_suffix(b"]"))
        };
        let Some(action) = action else { return false };
        self.int(self.keys.vec, vec);
        self.str(self.keys.action, action);
        true
    }

    /// `prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s ==> next_comm=%s next_pid=%d
    /// next_prio=%d`; comms may hold spaces, so anchor on the following keys. Old trace-cmd
    /// output has no `==>`.
    fn sched_switch(&mut self, p: &[u8]) -> bool {
        let Some(rest) = p.strip_prefix(b"prev_comm=") else { return false };
        let Some(i) = find(rest, b" prev_pid=") else { return false };
        let prev_comm = &rest[..i];
        let (prev_pid, rest) = take_int(&rest[i + 10..]);
        let Some(rest) = trim_start(rest).strip_prefix(b"prev_prio=") else { return false };
        let (prev_prio, rest) = take_int(rest);
        let Some(rest) = trim_start(rest).strip_prefix(b"prev_state=") else { return false };
        let Some(i) = find(rest, b" next_comm=") else { return false };
        let mut prev_state = trim_end(&rest[..i]);
        if let Some(s) = prev_state.strip_suffix(b"==>") {
            prev_state = trim_end(s);
        }
        let rest = &rest[i + 11..];
        let Some(i) = find(rest, b" next_pid=") else { return false };
        let next_comm = &rest[..i];
        let (next_pid, rest) = take_int(&rest[i + 10..]);
        let Some(rest) = trim_start(rest).strip_prefix(b"next_prio=") else { return false };
        let (next_prio, _) = take_int(rest);
        let (Some(pp), Some(ppr), Some(np), Some(npr)) =
            (parse_i64(prev_pid), parse_i64(prev_prio), parse_i64(next_pid), parse_i64(next_prio))
        else {
            return false;
        };
        self.switch_fields(prev_comm, pp, ppr, prev_state, next_comm, np, npr);
        true
    }

    /// trace-cmd's plugin form: `swapper/0:0 [120] R ==> trace-cmd:89135 [120]`.
    fn sched_switch_plugin(&mut self, p: &[u8]) -> bool {
        let Some(i) = find(p, b" ==> ") else { return false };
        let (left, right) = (&p[..i], &p[i + 5..]);
        let left = trim_end(left);
        let Some(sp) = memchr::memrchr(b' ', left) else { return false };
        let prev_state = &left[sp + 1..];
        let Some((prev_comm, pp, ppr, _)) = task_prio(&left[..sp]) else { return false };
        let Some((next_comm, np, npr, _)) = task_prio(right) else { return false };
        self.switch_fields(prev_comm, pp, ppr, prev_state, next_comm, np, npr);
        true
    }

    #[allow(clippy::too_many_arguments)]
    fn switch_fields(&mut self, pc: &[u8], pp: i64, ppr: i64, ps: &[u8], nc: &[u8], np: i64, npr: i64) {
        let k = self.keys;
        self.str(k.prev_comm, pc);
        self.int(k.prev_pid, pp);
        self.int(k.prev_prio, ppr);
        self.str(k.prev_state, ps);
        self.str(k.next_comm, nc);
        self.int(k.next_pid, np);
        self.int(k.next_prio, npr);
    }

    /// `comm=%s pid=%d prio=%d [success=%d] target_cpu=%03d`.
    fn sched_wakeup(&mut self, p: &[u8]) -> bool {
        let Some(rest) = p.strip_prefix(b"comm=") else { return false };
        let Some(i) = find(rest, b" pid=") else { return false };
        let comm = &rest[..i];
        let (pid, rest) = take_int(&rest[i + 5..]);
        let Some(rest) = rest.strip_prefix(b" prio=") else { return false };
        let (prio, rest) = take_int(rest);
        let Some(i) = find(rest, b"target_cpu=") else { return false };
        let (cpu, _) = take_int(&rest[i + 11..]);
        let (Some(pid), Some(prio), Some(cpu)) = (parse_i64(pid), parse_i64(prio), parse_i64(cpu)) else {
            return false;
        };
        self.wakeup_fields(comm, pid, prio, cpu);
        true
    }

    /// trace-cmd's plugin form: `trace-cmd:89992 [120] CPU:005`, older with `success=1`.
    fn sched_wakeup_plugin(&mut self, p: &[u8]) -> bool {
        let Some(i) = memmem::rfind(p, b" CPU:") else { return false };
        let Some(cpu) = parse_i64(take_int(&p[i + 5..]).0) else { return false };
        let Some((comm, pid, prio, _)) = task_prio(&p[..i]) else { return false };
        self.wakeup_fields(comm, pid, prio, cpu);
        true
    }

    fn wakeup_fields(&mut self, comm: &[u8], pid: i64, prio: i64, cpu: i64) {
        let k = self.keys;
        self.str(k.comm, comm);
        self.int(k.pid, pid);
        self.int(k.prio, prio);
        self.int(k.target_cpu, cpu);
    }

    /// Block request/bio events: `MAJ,MIN RWBS [BYTES] [(CMD)] SECTOR + NR [IOPRIO] [COMM|ERR]`
    /// (classic and 2024+ ioprio forms; flushes print `0 + 0` or no sector at all).
    fn block(&mut self, p: &[u8]) -> bool {
        let mut t = Tokens(p);
        let Some(dev) = t.next() else { return false };
        let (maj, rest) = split_digits(dev);
        if maj.is_empty() || rest.first() != Some(&b',') || !rest[1..].iter().all(u8::is_ascii_digit) {
            return false;
        }
        let Some(rwbs) = t.next() else { return false };
        // The kernel's `dev_t`, as trace.dat and Perfetto store it: `dev=254,0` and
        // `dev=266338304` then match the same events in every format.
        let number = |d: &[u8]| std::str::from_utf8(d).ok()?.parse::<u64>().ok();
        let (Some(major), Some(minor)) = (number(maj), number(&rest[1..])) else { return false };
        let k = self.keys;
        self.uint(k.dev, latscope_model::kernel::dev_t(major, minor));
        self.str(k.rwbs, rwbs);
        let mut rest = trim_start(t.0);
        // bytes, only when the command (or the sector) follows
        let (digits, after) = split_digits(rest);
        if !digits.is_empty() && after.starts_with(b" (") {
            let Some(bytes) = parse_u64(digits) else { return false };
            self.uint(k.bytes, bytes);
            rest = &after[1..];
        }
        if rest.first() == Some(&b'(') {
            let Some(close) = memchr::memchr(b')', rest) else { return false };
            rest = trim_start(&rest[close + 1..]);
        }
        let (digits, after) = split_digits(rest);
        if !digits.is_empty() && after.starts_with(b" + ") {
            let Some(sector) = parse_u64(digits) else { return false };
            let (nr, after) = split_digits(&after[3..]);
            let Some(nr) = parse_u64(nr) else { return false };
            self.uint(k.sector, sector);
            self.uint(k.nr_sector, nr);
            rest = trim_start(after);
        }
        // ioprio `class,hint,level`
        if !rest.starts_with(b"[")
            && let Some(sp) = memchr::memchr(b' ', rest)
            && rest[..sp].contains(&b',')
        {
            self.str(k.ioprio, &rest[..sp]);
            rest = trim_start(&rest[sp..]);
        }
        let rest = trim_end(rest);
        if let Some(inner) = rest.strip_prefix(b"[").and_then(|r| r.strip_suffix(b"]")) {
            match parse_i64(inner) {
                Some(err) => self.int(k.error, err),
                None => self.str(k.comm, inner),
            }
            true
        } else {
            rest.is_empty() && self.fields.len() > 2
        }
    }

    /// `mmcN: start struct mmc_request[%p]: cmd_opcode=…`: the host, then `key=value`.
    fn mmc(&mut self, p: &[u8]) {
        let p = trim_start(p);
        if let Some(colon) = memchr::memchr(b':', p)
            && p[..colon].iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
            && colon > 0
        {
            self.str(self.keys.host, &p[..colon]);
        }
        self.key_values(p);
    }

    fn cpu_idle(&mut self, p: &[u8]) -> bool {
        let Some(rest) = p.strip_prefix(b"state=") else { return false };
        let (state, rest) = take_int(rest);
        let Some(rest) = rest.strip_prefix(b" cpu_id=") else { return false };
        let (cpu, _) = take_int(rest);
        let (Some(state), Some(cpu)) = (parse_u64(state), parse_u64(cpu)) else { return false };
        self.uint(self.keys.state, state);
        self.uint(self.keys.cpu_id, cpu);
        true
    }

    /// `napi poll on napi struct %p for device %s work %d budget %d`.
    fn napi_poll(&mut self, p: &[u8]) -> bool {
        let Some(rest) = p.strip_prefix(b"napi poll on napi struct ") else { return false };
        let Some(sp) = memchr::memchr(b' ', rest) else { return false };
        let ptr = &rest[..sp];
        let Some(rest) = rest[sp..].strip_prefix(b" for device ") else { return false };
        let Some(i) = memmem::rfind(rest, b" work ") else { return false };
        let dev = &rest[..i];
        let (work, rest) = take_int(&rest[i + 6..]);
        let Some(rest) = rest.strip_prefix(b" budget ") else { return false };
        let (budget, _) = take_int(rest);
        let Some(napi) = parse_hex(ptr).or_else(|| parse_0x(ptr)) else { return false };
        let (Some(work), Some(budget)) = (parse_i64(work), parse_i64(budget)) else { return false };
        let k = self.keys;
        self.uint(k.napi, napi);
        self.str(k.dev, dev);
        self.int(k.work, work);
        self.int(k.budget, budget);
        true
    }

    fn preemptirq(&mut self, p: &[u8]) -> bool {
        let Some(rest) = p.strip_prefix(b"caller=") else { return false };
        let Some(i) = find(rest, b" parent=") else { return false };
        self.str(self.keys.caller, &rest[..i]);
        self.str(self.keys.parent, &rest[i + 8..]);
        true
    }

    /// `print`/`bprint`/`bputs`: `caller: message` (trace-cmd prints the caller as a symbol
    /// or `0x…` address).
    fn print(&mut self, p: &[u8]) {
        let p = trim(p);
        match name_token(p) {
            Some((caller, msg)) => {
                self.str(self.keys.caller, caller);
                self.marker(msg);
            }
            None => self.marker(p),
        }
    }

    /// A marker: `text` is the whole message, then each `key=value` token in it, by the
    /// same rules as trace.dat markers (decimal tokens are Int, others Str; a key already
    /// present, such as `text`, or repeated, keeps its first value).
    pub fn marker(&mut self, msg: &[u8]) {
        let msg = trim(msg);
        self.str(self.keys.text, msg);
        let mut toks: Vec<crate::marker::Token<'_>> = Vec::new();
        crate::marker::tokens(msg, &mut toks);
        for t in &toks {
            let key = self.intern(t.key);
            if self.fields.iter().any(|f| f.0 == key) {
                continue;
            }
            match crate::marker::token_int(t.value) {
                Some(i) => self.int(key, i),
                None => self.str(key, t.value),
            }
        }
    }

    /// `func <-parent` (kernel), `func <-- parent` (trace-cmd), optional ` (repeats: …)`.
    pub fn function(&mut self, p: &[u8]) -> bool {
        let p = trim(p);
        if p.is_empty() {
            return false;
        }
        let (func, parent) = match find(p, b" <-") {
            Some(i) => {
                let mut parent = &p[i + 3..];
                parent = parent.strip_prefix(b"-").unwrap_or(parent);
                if let Some(j) = find(parent, b" (repeats:") {
                    parent = &parent[..j];
                }
                (trim_end(&p[..i]), Some(trim(parent)))
            }
            None => (p, None),
        };
        self.str(self.keys.func, func);
        if let Some(parent) = parent {
            self.str(self.keys.parent, parent);
        }
        true
    }

    /// Generic `key=value` tokens of a tracepoint payload: a value runs to the next ` key=`
    /// (so `cmd_resp=0x900 0x0 0x0 0x0` and comms with spaces stay whole). `(` and `{`
    /// values end at their closing bracket (`load={24 19}`); trailing commas and ` [ns]`
    /// units are dropped. A key may also open a bracket, `[key=value]` (timer_start's
    /// `expires=%lu [timeout=%ld]`): the bracket belongs to neither value. Returns false when
    /// there was no `key=` at all.
    pub fn key_values(&mut self, p: &[u8]) -> bool {
        let start = self.fields.len();
        let mut key = next_key(p, 0);
        while let Some((ks, eq)) = key {
            let in_brackets = opens_bracket(p, ks);
            let vs = eq + 1;
            let bracketed = match p.get(vs) {
                Some(b'(') => matching(&p[vs..], b'(', b')'),
                Some(b'{') => matching(&p[vs..], b'{', b'}'),
                _ => None,
            };
            let (ve, next) = match bracketed {
                Some(n) => (vs + n + 1, next_key(p, vs + n + 1)),
                None => {
                    let next = next_key(p, vs);
                    (next.map_or(p.len(), |(nks, _)| nks), next)
                }
            };
            let mut v = trim(&p[vs..ve]);
            if next.is_some_and(|(nks, _)| opens_bracket(p, nks)) {
                v = v.strip_suffix(b"[").map_or(v, trim_end);
            }
            if in_brackets {
                v = v.strip_suffix(b"]").map_or(v, trim_end);
            }
            v = v.strip_suffix(b",").map_or(v, trim_end);
            v = v.strip_suffix(b"[ns]").map_or(v, trim_end);
            let key_sym = self.intern(&p[ks..eq]);
            self.auto(key_sym, v);
            key = next;
        }
        self.fields.len() > start
    }
}

/// Bytes of a [`name_token`]: ASCII letters, digits, `_` and `.`.
static NAME_CHARS: [bool; 256] = byte_class(b"_.");
/// Bytes of a `key=` key: ASCII letters, digits and `_`.
static KEY_CHARS: [bool; 256] = byte_class(b"_");

/// A byte-class table (ASCII letters, digits and `extra`): one load per byte where a loop
/// would test four ranges.
const fn byte_class(extra: &[u8]) -> [bool; 256] {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        t[c] = (c as u8).is_ascii_alphanumeric();
        c += 1;
    }
    let mut i = 0;
    while i < extra.len() {
        t[extra[i] as usize] = true;
        i += 1;
    }
    t
}

/// `name: rest` where name is a symbol-like token (event name, function, `0x…`).
pub(crate) fn name_token(p: &[u8]) -> Option<(&[u8], &[u8])> {
    let n = p.iter().position(|&c| !NAME_CHARS[usize::from(c)]).unwrap_or(p.len());
    if n == 0 || p.get(n) != Some(&b':') {
        return None;
    }
    match p.get(n + 1) {
        None => Some((&p[..n], &[])),
        Some(&c) if c == b' ' || c == b'\t' => Some((&p[..n], trim_start(&p[n + 1..]))),
        Some(_) => None,
    }
}

/// The next `key=` at or after `from` that starts the payload or follows a blank;
/// returns (key start, index of '=').
fn next_key(p: &[u8], from: usize) -> Option<(usize, usize)> {
    let mut i = from;
    while i < p.len() {
        let eq = i + memchr::memchr(b'=', &p[i..])?;
        // walk back over identifier chars
        let mut ks = eq;
        while ks > i && KEY_CHARS[usize::from(p[ks - 1])] {
            ks -= 1;
        }
        let at_boundary = ks == 0 || p[ks - 1] == b' ' || p[ks - 1] == b'\t' || opens_bracket(p, ks);
        if ks < eq && at_boundary && !p[ks].is_ascii_digit() {
            return Some((ks, eq));
        }
        i = eq + 1;
    }
    None
}

/// Whether the key starting at `ks` follows a `[` that starts a token (`[timeout=2]`).
fn opens_bracket(p: &[u8], ks: usize) -> bool {
    ks >= 1 && p[ks - 1] == b'[' && (ks == 1 || p[ks - 2] == b' ' || p[ks - 2] == b'\t')
}

/// Length up to the bracket matching the one at `s[0]`.
fn matching(s: &[u8], open: u8, close: u8) -> Option<usize> {
    let mut depth = 0usize;
    for (i, &c) in s.iter().enumerate() {
        if c == open {
            depth += 1;
        } else if c == close {
            depth = depth.saturating_sub(1);
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}

/// The leading integer token (optional `-`, digits) and the rest.
#[inline]
fn take_int(s: &[u8]) -> (&[u8], &[u8]) {
    let neg = usize::from(s.first() == Some(&b'-'));
    let n = neg + s[neg..].iter().take_while(|c| c.is_ascii_digit()).count();
    s.split_at(n)
}

/// `comm:pid [prio]` from trace-cmd's sched plugins; returns what follows.
fn task_prio(s: &[u8]) -> Option<(&[u8], i64, i64, &[u8])> {
    let s = trim_start(s);
    let open = find(s, b" [")?;
    let task = &s[..open];
    let rest = &s[open + 2..];
    let (prio, rest) = take_int(rest);
    let rest = rest.strip_prefix(b"]")?;
    let colon = memchr::memrchr(b':', task)?;
    let pid = parse_i64(&task[colon + 1..])?;
    Some((&task[..colon], pid, parse_i64(prio)?, rest))
}

/// Whitespace-separated tokens, leaving the unread rest in `.0`.
struct Tokens<'a>(&'a [u8]);

impl<'a> Tokens<'a> {
    fn next(&mut self) -> Option<&'a [u8]> {
        let s = trim_start(self.0);
        let n = s.iter().position(|&c| c == b' ' || c == b'\t').unwrap_or(s.len());
        if n == 0 {
            return None;
        }
        self.0 = &s[n..];
        Some(&s[..n])
    }
}

//! function_graph output: the line syntax (`[abstime |] cpu) [proc |]
//! [flags |] [mark duration] | text`) and the per-CPU call stacks that turn entries, exits
//! and leaves into spans. Without the `funcgraph-abstime` column there is no clock at all;
//! each CPU then gets a virtual clock that starts at 0 and advances by the printed
//! durations, which keeps nesting and durations right but not gaps between calls.

use super::flags::parse_flags;
use super::line::{Ts, is_ws, parse_ts, parse_u64, split_comm_pid, split_digits, trim, trim_end, trim_start};
use latscope_model::{PS_PER_US, Ps, SpanTrack, Sym};
use memchr::{memchr, memmem};
use rustc_hash::FxHashMap;

/// What the text column of a graph line holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GraphText<'a> {
    /// `func() {`
    Entry(&'a [u8]),
    /// `func();` (entry and exit in one line)
    Leaf(&'a [u8]),
    /// `}` with the function name when the tail comment names it (`} /* func */`).
    Exit(Option<&'a [u8]>),
    /// `/* … */`: an event or a trace_printk inside the graph.
    Comment(&'a [u8]),
    /// Not complete: a mail client wrapped it (joined with the next line).
    Incomplete(&'a [u8]),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GraphKind<'a> {
    Text(GraphText<'a>),
    /// `==========>` / `<==========` (irq entry/exit markers of `funcgraph-irqs`).
    IrqMarker,
    /// The context-switch banner ` 3)   kworker-32   =>  chromiu-919  `: the next task.
    Banner(&'a [u8], i32),
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct GraphLine<'a> {
    pub abstime: Option<Ts>,
    pub cpu: u16,
    pub task: Option<(&'a [u8], i32)>,
    /// The printed duration in picoseconds.
    pub duration: Option<Ps>,
    pub kind: GraphKind<'a>,
}

/// Parses one function_graph line; `None` if it is not one.
pub(crate) fn parse_graph_line(line: &[u8]) -> Option<GraphLine<'_>> {
    let mut s = trim_start(line);
    let mut abstime = None;
    // Optional `%5lu.%06lu |  ` (abstime) and `%9llu us |  ` (reltime) columns.
    for _ in 0..2 {
        let n = s.iter().take_while(|c| c.is_ascii_digit() || **c == b'.').count();
        if n == 0 {
            break;
        }
        let tok = &s[..n];
        let rest = trim_start(&s[n..]);
        if let Some(r) = rest.strip_prefix(b"|") {
            if !tok.contains(&b'.') {
                return None;
            }
            abstime = Some(parse_ts(tok)?);
            s = trim_start(r);
        } else if let Some(r) = rest.strip_prefix(b"us").map(trim_start).and_then(|r| r.strip_prefix(b"|")) {
            s = trim_start(r);
        } else {
            break;
        }
    }
    let (digits, rest) = split_digits(s);
    if rest.first() != Some(&b')') {
        return None;
    }
    let cpu = u16::try_from(parse_u64(digits)?).ok()?;
    let mut s = &rest[1..];
    if !s.first().is_none_or(|&c| is_ws(c)) {
        return None;
    }
    if memchr(b'|', s).is_none() {
        let t = trim(s);
        let i = memmem::find(t, b"=>")?;
        let (comm, pid) = split_comm_pid(&t[i + 2..]);
        return Some(GraphLine {
            abstime,
            cpu,
            task: None,
            duration: None,
            kind: GraphKind::Banner(comm, pid),
        });
    }
    let mut task = None;
    for _ in 0..4 {
        let bar = memchr(b'|', s)?;
        let seg = trim(&s[..bar]);
        let after = &s[bar + 1..];
        if seg == b"==========>" || seg == b"<==========" {
            return Some(GraphLine { abstime, cpu, task, duration: None, kind: GraphKind::IrqMarker });
        }
        let duration = if seg.is_empty() { Some(None) } else { parse_duration(seg).map(Some) };
        if let Some(duration) = duration {
            let kind = GraphKind::Text(classify_text(after));
            return Some(GraphLine { abstime, cpu, task, duration, kind });
        }
        // The `funcgraph-proc` task column or the latency flags column.
        if parse_flags(seg).is_none() {
            task = Some(split_comm_pid(seg));
        }
        s = after;
    }
    None
}

/// `[mark] N[.frac] us` → picoseconds.
fn parse_duration(seg: &[u8]) -> Option<Ps> {
    let s = match seg.first() {
        Some(b'+' | b'!' | b'#' | b'*' | b'@' | b'$') => trim_start(&seg[1..]),
        _ => seg,
    };
    let num = trim_end(s.strip_suffix(b"us")?);
    let t = parse_ts(num)?;
    if num.contains(&b'.') {
        // `parse_ts` read "us.frac" as seconds: scale back to microseconds.
        let us = i64::try_from(t.secs).ok()?.checked_mul(PS_PER_US)?;
        us.checked_add(i64::try_from(t.ps / 1_000_000).ok()?)
    } else {
        i64::try_from(t.ps).ok()?.checked_mul(PS_PER_US)
    }
}

/// Classifies the text column (also used on a wrapped line once it is joined).
pub(crate) fn classify_text(t: &[u8]) -> GraphText<'_> {
    let t = trim(t);
    if let Some(c) = t.strip_prefix(b"/*") {
        let c = c.strip_suffix(b"*/").unwrap_or(c);
        return GraphText::Comment(trim(c));
    }
    if let Some(tail) = t.strip_prefix(b"}") {
        let tail = trim(tail);
        let name = tail
            .strip_prefix(b"/*")
            .map(|c| trim_start(c.strip_suffix(b"*/").unwrap_or(c)))
            .map(|c| &c[..c.iter().position(|&b| is_ws(b) || b == b'=').unwrap_or(c.len())])
            .filter(|n| !n.is_empty());
        return GraphText::Exit(name);
    }
    if let Some(open) = memchr(b'(', t) {
        let name = trim_end(&t[..open]);
        let mut depth = 0usize;
        let mut close = None;
        for (i, &c) in t[open..].iter().enumerate() {
            if c == b'(' {
                depth += 1;
            } else if c == b')' {
                depth -= 1;
                if depth == 0 {
                    close = Some(open + i);
                    break;
                }
            }
        }
        if let Some(close) = close
            && !name.is_empty()
        {
            match trim_start(&t[close + 1..]).first() {
                Some(b'{') => return GraphText::Entry(name),
                Some(b';') => return GraphText::Leaf(name),
                _ => {}
            }
        }
    }
    GraphText::Incomplete(t)
}

#[derive(Debug, Default)]
struct CpuState {
    /// Open calls: start time and label.
    stack: Vec<(Ps, Sym)>,
    /// The last time seen on this CPU (the virtual clock without abstime).
    clock: Ps,
    task: Option<(Sym, i32)>,
}

/// Calls deeper than this are not tracked (hostile input could otherwise grow the stack
/// without bound); a real kernel stack is far shallower.
const MAX_DEPTH: usize = 4096;

/// Per-CPU call stacks and the spans they produce.
#[derive(Debug, Default)]
pub(crate) struct GraphState {
    cpus: FxHashMap<u16, CpuState>,
    pub spans: SpanTrack,
    /// Graph records as the tracer counts them: entries and exits (a leaf is both).
    pub records: u64,
    /// Exits whose entry was not in the trace.
    pub unmatched_exits: u64,
    pub too_deep: u64,
}

impl GraphState {
    /// The current time on `cpu`: the absolute stamp if the line has one.
    pub fn now(&mut self, cpu: u16, abs: Option<Ps>) -> Ps {
        let st = self.cpus.entry(cpu).or_default();
        if let Some(t) = abs {
            st.clock = t;
        }
        st.clock
    }

    pub fn set_task(&mut self, cpu: u16, comm: Sym, pid: i32) {
        self.cpus.entry(cpu).or_default().task = Some((comm, pid));
    }

    pub fn task(&self, cpu: u16) -> Option<(Sym, i32)> {
        self.cpus.get(&cpu).and_then(|s| s.task)
    }

    pub fn entry(&mut self, cpu: u16, now: Ps, label: Sym) {
        self.records += 1;
        let st = self.cpus.entry(cpu).or_default();
        if st.stack.len() >= MAX_DEPTH {
            self.too_deep += 1;
            return;
        }
        st.stack.push((now, label));
    }

    pub fn leaf(&mut self, cpu: u16, now: Ps, label: Sym, duration: Option<Ps>) {
        self.records += 2;
        let st = self.cpus.entry(cpu).or_default();
        let end = now.saturating_add(duration.unwrap_or(0));
        let depth = u16::try_from(st.stack.len()).unwrap_or(u16::MAX);
        self.spans.push(now, end, label, depth, cpu);
        st.clock = st.clock.max(end);
    }

    /// An exit at `now` (its absolute time, or the CPU's clock). `fallback` labels an exit
    /// without an entry.
    pub fn exit(&mut self, cpu: u16, now: Ps, has_abs: bool, duration: Option<Ps>, fallback: Sym) {
        self.records += 1;
        let st = self.cpus.entry(cpu).or_default();
        match st.stack.pop() {
            Some((start, label)) => {
                let end = match duration {
                    Some(d) => start.saturating_add(d),
                    None => now.max(start),
                };
                let depth = u16::try_from(st.stack.len()).unwrap_or(u16::MAX);
                self.spans.push(start, end, label, depth, cpu);
                st.clock = st.clock.max(end);
            }
            None => {
                // The buffer started mid-call: the exit ends now and began `duration` ago.
                self.unmatched_exits += 1;
                let d = duration.unwrap_or(0);
                let (start, end) =
                    if has_abs { (now.saturating_sub(d), now) } else { (now, now.saturating_add(d)) };
                self.spans.push(start, end, fallback, 0, cpu);
                st.clock = st.clock.max(end);
            }
        }
    }

    /// Closes the calls still open at the end of the trace at their CPU's last time.
    pub fn finish(&mut self) {
        let mut cpus: Vec<_> = self.cpus.iter_mut().collect();
        cpus.sort_by_key(|(c, _)| **c);
        for (&cpu, st) in cpus {
            while let Some((start, label)) = st.stack.pop() {
                let depth = u16::try_from(st.stack.len()).unwrap_or(u16::MAX);
                self.spans.push(start, st.clock.max(start), label, depth, cpu);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(line: &str) -> GraphKind<'_> {
        parse_graph_line(line.as_bytes()).expect(line).kind
    }

    #[test]
    fn doc_lines() {
        let g = parse_graph_line(b" 0)               |  sys_open() {").expect("entry");
        assert_eq!((g.cpu, g.duration, g.kind), (0, None, GraphKind::Text(GraphText::Entry(b"sys_open"))));
        let g = parse_graph_line(b" 0)   1.382 us    |          __might_sleep();").expect("leaf");
        assert_eq!(g.duration, Some(1_382_000));
        assert_eq!(g.kind, GraphKind::Text(GraphText::Leaf(b"__might_sleep")));
        let g = parse_graph_line(b" 3) # 1837.709 us |          } /* __switch_to */").expect("exit");
        assert_eq!((g.cpu, g.duration), (3, Some(1_837_709_000)));
        assert_eq!(g.kind, GraphKind::Text(GraphText::Exit(Some(b"__switch_to"))));
        assert_eq!(
            parse_graph_line(b" 1) ! 217.240 us  |        }").and_then(|g| g.duration),
            Some(217_240_000)
        );
        assert_eq!(
            parse_graph_line(b" 1) @ 119760.2 us |  }").and_then(|g| g.duration),
            Some(119_760_200_000)
        );
        assert_eq!(
            parse_graph_line(b" 2) $ 3594274 us  |  }").and_then(|g| g.duration),
            Some(3_594_274_000_000)
        );
        let g = parse_graph_line(
            b" 0)    sh-4802     |   0.616 us    |                        rcu_process_gp_end();",
        )
        .expect("proc column");
        assert_eq!(g.task, Some((&b"sh"[..], 4802)));
        assert_eq!(g.kind, GraphKind::Text(GraphText::Leaf(b"rcu_process_gp_end")));
        let g =
            parse_graph_line(b"360.774522 |   1)   0.541 us    |                                          }")
                .expect("abstime");
        assert_eq!((g.abstime.map(|t| t.secs), g.cpu), (Some(360), 1));
        assert_eq!(g.kind, GraphKind::Text(GraphText::Exit(None)));
        assert_eq!(kind(" 12)   0.300 us    |  foo();"), GraphKind::Text(GraphText::Leaf(b"foo")));
        assert_eq!(kind("13378.411877 |     0)   ==========> |"), GraphKind::IrqMarker);
        assert_eq!(kind(" 3)   kworker-32   =>  chromiu-919  "), GraphKind::Banner(b"chromiu", 919));
        assert_eq!(
            kind(" 1)   0.205 us    |  cgroup_taskset_next(); /* = 0xffff93fc8fb20000 */"),
            GraphKind::Text(GraphText::Leaf(b"cgroup_taskset_next"))
        );
        assert_eq!(
            kind(" 1) + 13.250 us   |  } /* cpu_cgroup_can_attach = -22 */"),
            GraphKind::Text(GraphText::Exit(Some(b"cpu_cgroup_can_attach")))
        );
        assert_eq!(
            kind(" 1)   0.1 us |  } /* func ret=-22 */"),
            GraphKind::Text(GraphText::Exit(Some(b"func")))
        );
        assert_eq!(
            kind("   1)               |                /* I'm a comment! */"),
            GraphKind::Text(GraphText::Comment(b"I'm a comment!"))
        );
        assert_eq!(
            kind("13378.411863 |     0)               |  cppc_cpufreq_get_rate"),
            GraphKind::Text(GraphText::Incomplete(b"cppc_cpufreq_get_rate"))
        );
        assert!(parse_graph_line(b"bash-1 [000] 1.0: x").is_none());
    }
}

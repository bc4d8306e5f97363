#!/usr/bin/env python3
"""Independent decode of a Perfetto trace, for latscope's cross-check tests.

Decodes with Google's protobuf runtime and the message descriptors Perfetto itself
publishes (`perfetto.protos.perfetto.trace.perfetto_trace_pb2`, PyPI package `perfetto`),
not with latscope's code. Prints one JSON object:

  counts   {event name: number}            ftrace events per type (compact sched expanded)
  events   {event name: [[ts_ns, pid], ...]} sorted
  atrace   {"B": n, "E": n, "C": n}        atrace markers in print events
  slices   {"threads": {tid: {"name": task name or null, "begun": n}},
            "unmatched_end": n, "never_ended": n}
           atrace slices per thread: `B|…` opens one on the thread that wrote it, `E`
           closes that thread's latest open one (an `E` with none open is unmatched);
           the name is the thread's (or its process's) in the process tree
  pairs    {"irq-handler"|"softirq"|"wakeup": {"pairs": [[start_ns, end_ns], ...],
                                               "unmatched_start": n, "unmatched_end": n}}
           (wakeup also: "from", the start event paired, and "starts", how many there are)

Pairing is written here from latscope's documented preset semantics (docs/ARCHITECTURE.md,
DESIGN 4.3): irq-handler irq_handler_entry -> irq_handler_exit by (cpu, irq), newest first;
softirq the same by (cpu, vec); wakeup sched_wakeup -> sched_switch by pid:next_pid, a
switch-in closing the oldest open wakeup and dropping the others, and any event executed
by a task dropping its open wakeups; a trace with no sched_wakeup pairs its sched_waking
events the same way (the wakeup entry's "from" names the start event).

Compact sched: the task a switch puts on a CPU is the previous task of that CPU's next
switch; a waking is executed by the task running on its CPU at that time (-1 when none is
known yet). Events are ordered by (time, cpu, order within the CPU's stream), where a
bundle's compact records (switches before wakings at equal times) precede its plain events.

Usage: perfetto_oracle.py TRACE
"""

import json
import sys

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

SOFTIRQ = None  # vec numbers are kept as numbers


def main(path):
    trace = pb.Trace()
    with open(path, "rb") as f:
        trace.ParseFromString(f.read())

    # (ts, cpu, seq, name, pid, fields)
    events = []
    seq_per_cpu = {}
    running = {}  # cpu -> pid of the task the CPU's last switch put on it

    def add(cpu, ts, name, pid, fields):
        n = seq_per_cpu.get(cpu, 0)
        seq_per_cpu[cpu] = n + 1
        events.append((ts, cpu, n, name, pid, fields))

    atrace = {"B": 0, "E": 0, "C": 0}
    names = {}  # tid -> task name from the process tree
    for packet in trace.packet:
        if packet.HasField("process_tree"):
            for proc in packet.process_tree.processes:
                if proc.cmdline:
                    names.setdefault(proc.pid, proc.cmdline[0])
            for thread in packet.process_tree.threads:
                if thread.HasField("name"):
                    names[thread.tid] = thread.name
        if packet.WhichOneof("data") != "ftrace_events":
            continue
        bundle = packet.ftrace_events
        cpu = bundle.cpu
        if bundle.HasField("compact_sched"):
            cs = bundle.compact_sched
            switches = []
            t = 0
            for i, d in enumerate(cs.switch_timestamp):
                t += d
                switches.append((t, 0, i))
            wakings = []
            t = 0
            for i, d in enumerate(cs.waking_timestamp):
                t += d
                wakings.append((t, 1, i))
            # Merge in time order, switches first at equal times.
            for ts, kind, i in sorted(switches + wakings):
                if kind == 0:
                    prev = running.get(cpu, -1)
                    nxt = cs.switch_next_pid[i]
                    add(cpu, ts, "sched_switch", prev, {"next_pid": nxt})
                    running[cpu] = nxt
                else:
                    add(cpu, ts, "sched_waking", running.get(cpu, -1), {"pid": cs.waking_pid[i]})
        for ev in bundle.event:
            kind = ev.WhichOneof("event")
            if kind is None:
                continue
            body = getattr(ev, kind)
            fields = {}
            if kind == "sched_switch":
                fields = {"next_pid": body.next_pid}
                running[cpu] = body.next_pid
            elif kind in ("sched_wakeup", "sched_waking", "sched_wakeup_new"):
                fields = {"pid": body.pid}
            elif kind in ("irq_handler_entry", "irq_handler_exit"):
                fields = {"irq": body.irq}
            elif kind in ("softirq_entry", "softirq_exit", "softirq_raise"):
                fields = {"vec": body.vec}
            elif kind == "print":
                text = body.buf.rstrip("\n")
                fields = {"text": text}
                if text.startswith("B|"):
                    atrace["B"] += 1
                elif text == "E" or text.startswith("E|"):
                    atrace["E"] += 1
                elif text.startswith("C|"):
                    atrace["C"] += 1
            add(cpu, ev.timestamp, kind, ev.pid, fields)

    events.sort(key=lambda e: (e[0], e[1], e[2]))
    counts = {}
    by_name = {}
    for ts, cpu, _, name, pid, _ in events:
        counts[name] = counts.get(name, 0) + 1
        by_name.setdefault(name, []).append([ts, pid])
    for v in by_name.values():
        v.sort()

    out = {
        "counts": counts,
        "events": by_name,
        "atrace": atrace,
        "slices": slices(events, names),
        "pairs": {
            "irq-handler": lifo(events, "irq_handler_entry", "irq_handler_exit", "irq"),
            "softirq": lifo(events, "softirq_entry", "softirq_exit", "vec"),
            "wakeup": wakeup(events),
        },
    }
    json.dump(out, sys.stdout)


def slices(events, names):
    open_ = {}  # tid -> number of open slices
    threads = {}
    unmatched_end = 0
    for _, _, _, name, pid, fields in events:
        if name != "print":
            continue
        text = fields["text"]
        if text.startswith("B|"):
            open_[pid] = open_.get(pid, 0) + 1
            t = threads.setdefault(pid, {"name": names.get(pid), "begun": 0})
            t["begun"] += 1
        elif text == "E" or text.startswith("E|"):
            if open_.get(pid):
                open_[pid] -= 1
            else:
                unmatched_end += 1
    return {"threads": threads, "unmatched_end": unmatched_end, "never_ended": sum(open_.values())}


def lifo(events, start, end, field):
    open_ = {}
    pairs, unmatched_end = [], 0
    for ts, cpu, _, name, _, fields in events:
        if name == end:
            stack = open_.get((cpu, fields[field]))
            if stack:
                pairs.append([stack.pop(), ts])
            else:
                unmatched_end += 1
        elif name == start:
            open_.setdefault((cpu, fields[field]), []).append(ts)
    unmatched_start = sum(len(s) for s in open_.values())
    pairs.sort()
    return {"pairs": pairs, "unmatched_start": unmatched_start, "unmatched_end": unmatched_end}


def wakeup(events):
    names = {e[3] for e in events}
    start = "sched_wakeup" if "sched_wakeup" in names else "sched_waking"
    open_ = {}
    pairs, unmatched_start, unmatched_end = [], 0, 0
    for ts, _, _, name, pid, fields in events:
        if open_ and pid in open_:
            unmatched_start += len(open_.pop(pid))
        if name == "sched_switch":
            waiting = open_.pop(fields["next_pid"], [])
            if waiting:
                pairs.append([waiting[0], ts])
                unmatched_start += len(waiting) - 1
            else:
                unmatched_end += 1
        elif name == start:
            open_.setdefault(fields["pid"], []).append(ts)
    unmatched_start += sum(len(v) for v in open_.values())
    pairs.sort()
    return {
        "pairs": pairs,
        "unmatched_start": unmatched_start,
        "unmatched_end": unmatched_end,
        "from": start,
        "starts": sum(1 for e in events if e[3] == start),
    }


if __name__ == "__main__":
    main(sys.argv[1])

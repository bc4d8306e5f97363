#!/usr/bin/env python3
"""Writes a synthetic but valid Perfetto trace (protobuf) for latscope's tests and benchmarks.

Built with the message classes Perfetto publishes (PyPI `perfetto`), so the file is what
Perfetto's own tooling would parse. A deterministic scheduler on N CPUs emits, per CPU:
IRQ handler entry/exit, softirq entry/exit, sched_wakeup (and sched_waking) of a task
followed by the switch that runs it, atrace `B|tgid|name` / `E|tgid` markers and
`C|tgid|name|value` counters through `print`, cpu_idle enter/exit and block request
issue/complete. With --compact, switches and wakings go into each bundle's compact_sched
arrays (delta-encoded, with the comm intern table) as traced_probes writes them.

Usage: perfetto_gen.py OUT [--size-mb N | --events N] [--cpus N] [--compact] [--seed N]
"""

import argparse
import random

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

BOOT0 = 703_770_000_000_000  # BOOTTIME ns at the trace's start (a host up ~8 days)
TASKS = [(1000 + i, f"worker/{i}") for i in range(40)] + [(2000, "app"), (2001, "RenderThread"), (2002, "ui")]
NAMES = dict(TASKS)


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def write_packet(f, packet):
    data = packet.SerializeToString()
    f.write(b"\x0a" + varint(len(data)) + data)
    return len(data) + 1 + len(varint(len(data)))


def header_packets():
    snap = pb.TracePacket()
    snap.trusted_packet_sequence_id = 1
    cs = snap.clock_snapshot
    for cid, ts in ((6, BOOT0), (3, BOOT0 - 15_000_000_000), (5, BOOT0 - 15_000_500_000), (1, 1_761_759_996_514_493_482)):
        c = cs.clocks.add()
        c.clock_id = cid
        c.timestamp = ts
    cs.primary_trace_clock = 6
    tree = pb.TracePacket()
    tree.trusted_packet_sequence_id = 1
    for pid, name in TASKS:
        t = tree.process_tree.threads.add()
        t.tid = pid
        t.tgid = 2000 if pid >= 2000 else pid
        t.name = name
    p = tree.process_tree.processes.add()
    p.pid = 2000
    p.cmdline.append("/system/bin/app")
    return [snap, tree]


class Cpu:
    def __init__(self, n, rng):
        self.n = n
        self.rng = rng
        self.t = BOOT0 + 1_000_000 + n * 1_357
        self.current = TASKS[n % len(TASKS)][0]
        self.open_marks = 0

    def step(self, bundle, compact, seq):
        """Appends one burst of activity to `bundle` (a list of callables)."""
        r = self.rng
        self.t += r.randint(2_000, 60_000)
        roll = r.random()
        if roll < 0.25:
            irq = r.choice((24, 36, 52))
            self.ev(bundle, self.t, self.current, "irq_handler_entry", irq=irq, name=f"irq{irq}")
            self.t += r.randint(1_000, 20_000)
            self.ev(bundle, self.t, self.current, "irq_handler_exit", irq=irq, ret=1)
            if r.random() < 0.5:
                vec = r.choice((1, 3, 9))
                self.t += r.randint(500, 3_000)
                self.ev(bundle, self.t, self.current, "softirq_entry", vec=vec)
                self.t += r.randint(1_000, 30_000)
                self.ev(bundle, self.t, self.current, "softirq_exit", vec=vec)
        elif roll < 0.55:
            pid = r.choice(TASKS)[0]
            if pid == self.current:
                return
            if compact is not None:
                self.waking(compact, self.t, pid)
            else:
                self.ev(bundle, self.t, self.current, "sched_waking", pid=pid, comm=NAMES[pid], prio=120, target_cpu=self.n)
            self.t += r.randint(100, 2_000)
            self.ev(bundle, self.t, self.current, "sched_wakeup", pid=pid, comm=NAMES[pid], prio=120, target_cpu=self.n)
            self.t += r.randint(3_000, 300_000)
            if compact is not None:
                self.switch_compact(compact, self.t, pid)
            else:
                self.ev(
                    bundle, self.t, self.current, "sched_switch",
                    prev_comm=NAMES[self.current], prev_pid=self.current, prev_prio=120, prev_state=1,
                    next_comm=NAMES[pid], next_pid=pid, next_prio=120,
                )
            self.current = pid
        elif roll < 0.75:
            if self.open_marks and r.random() < 0.5:
                self.ev(bundle, self.t, self.current, "print", buf=f"E|{self.current}\n")
                self.open_marks -= 1
            else:
                self.ev(bundle, self.t, self.current, "print", buf=f"B|{self.current}|frame {seq % 97}\n")
                self.open_marks += 1
        elif roll < 0.82:
            self.ev(bundle, self.t, self.current, "print", buf=f"C|{self.current}|queue|{seq % 13}\n")
        elif roll < 0.92:
            self.ev(bundle, self.t, 0, "cpu_idle", state=1, cpu_id=self.n)
            self.t += r.randint(10_000, 500_000)
            self.ev(bundle, self.t, 0, "cpu_idle", state=4294967295, cpu_id=self.n)
        else:
            sector = r.randint(0, 1 << 30)
            dev = (8 << 20) | 0
            self.ev(bundle, self.t, self.current, "block_rq_issue", dev=dev, sector=sector, nr_sector=8, bytes=4096, rwbs="R", comm=NAMES[self.current])
            self.t += r.randint(50_000, 2_000_000)
            self.ev(bundle, self.t, 0, "block_rq_complete", dev=dev, sector=sector, nr_sector=8, rwbs="R", error=0)

    @staticmethod
    def ev(bundle, ts, who, kind, **fields):
        bundle.append((ts, who, kind, fields))

    def waking(self, compact, ts, pid):
        compact["waking"].append((ts, pid, self.n, 120, NAMES[pid]))

    def switch_compact(self, compact, ts, pid):
        compact["switch"].append((ts, 1, pid, 120, NAMES[pid]))


def flush(f, cpu, bundle, compact):
    packet = pb.TracePacket()
    packet.trusted_packet_sequence_id = 2
    b = packet.ftrace_events
    b.cpu = cpu
    for ts, pid, kind, fields in bundle:
        e = b.event.add()
        e.timestamp = ts
        e.pid = pid
        body = getattr(e, kind)
        for k, v in fields.items():
            setattr(body, k, v)
    if compact is not None and (compact["switch"] or compact["waking"]):
        cs = b.compact_sched
        table = {}

        def intern(s):
            if s not in table:
                table[s] = len(table)
                cs.intern_table.append(s)
            return table[s]

        last = 0
        for ts, state, pid, prio, comm in compact["switch"]:
            cs.switch_timestamp.append(ts - last)
            last = ts
            cs.switch_prev_state.append(state)
            cs.switch_next_pid.append(pid)
            cs.switch_next_prio.append(prio)
            cs.switch_next_comm_index.append(intern(comm))
        last = 0
        for ts, pid, target, prio, comm in compact["waking"]:
            cs.waking_timestamp.append(ts - last)
            last = ts
            cs.waking_pid.append(pid)
            cs.waking_target_cpu.append(target)
            cs.waking_prio.append(prio)
            cs.waking_comm_index.append(intern(comm))
            cs.waking_common_flags.append(1)
    return write_packet(f, packet)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--size-mb", type=float)
    ap.add_argument("--events", type=int, default=20_000)
    ap.add_argument("--cpus", type=int, default=8)
    ap.add_argument("--compact", action="store_true")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--per-bundle", type=int, default=400)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    cpus = [Cpu(n, rng) for n in range(a.cpus)]
    written, bursts = 0, 0
    limit_bytes = int(a.size_mb * 1e6) if a.size_mb else None
    with open(a.out, "wb") as f:
        for p in header_packets():
            written += write_packet(f, p)
        seq = 0
        while True:
            for cpu in cpus:
                bundle = []
                compact = {"switch": [], "waking": []} if a.compact else None
                while len(bundle) + len(compact["switch"] if compact else []) < a.per_bundle:
                    cpu.step(bundle, compact, seq)
                    seq += 1
                    bursts += 1
                written += flush(f, cpu.n, bundle, compact)
            if limit_bytes is not None:
                if written >= limit_bytes:
                    break
            elif seq * 1.6 >= a.events:
                break


if __name__ == "__main__":
    main()

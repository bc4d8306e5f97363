#!/usr/bin/env python3
"""An independent oracle for latscope's `chain` preset on block I/O: the chain of each
request, from its issue to the moment the task its completion woke runs.

It reads what `trace-cmd report -t FILE.dat` prints (trace-cmd's own parser, nanosecond
times) and follows the definition in docs/ARCHITECTURE.md, written again here without any
of latscope's code:

- a command is a `block_rq_issue`; its completion is the first later `block_rq_complete`
  of the same device and sector (first in, first out);
- the IRQ is the number most often the first `irq_handler_entry` after a command; a
  command's IRQ entry is the last entry of that IRQ on the completion's CPU after the
  issue and at or before the completion; its exit is that IRQ's next exit on the CPU;
- the waiter is the task of the first `sched_wakeup` or `sched_waking` on the completion's
  CPU after the completion and before that CPU's next `block_rq_complete`,
  `irq_handler_entry`, `irq_handler_exit`, `softirq_entry`, `softirq_exit` or `sched_switch`
  (the completing context); its wakeup is that `sched_wakeup`, or after a `sched_waking`
  the task's next `sched_wakeup` anywhere (a remote wakeup is recorded on the woken task's
  CPU); a wakeup before the handler's exit counts from the exit;
- the chain ends when the waiter runs: its first `sched_switch` in after the wakeup, or
  its first event of its own when that comes first.

Prints JSON: {"irq": N, "commands": n, "chains": [[issue_ns, total_ns, waiter_pid, issuer_pid]...]}.
"""
import bisect
import json
import re
import subprocess
import sys
from collections import defaultdict, deque

LINE = re.compile(r"^\s*(.*)-(\d+)\s+\[(\d+)\]\s+(\d+)\.(\d{9}):\s+(\w+):\s*(.*)$")
BLOCK = re.compile(r"^(\d+),(\d+) \S+ (?:\d+ )?\(.*?\) (\d+) \+ (\d+)")
WAKEUP = re.compile(r"^(.*):(\d+) \[-?\d+\]")
WAKING = re.compile(r"\bpid=(\d+)")
SWITCH_IN = re.compile(r"==> (.*):(\d+) \[-?\d+\]\s*$")
IRQ = re.compile(r"irq=(\d+)")

CONTEXT_ENDS = {"block_rq_complete", "irq_handler_entry", "irq_handler_exit",
                "softirq_entry", "softirq_exit", "sched_switch"}


def events(path):
    out = subprocess.run(["trace-cmd", "report", "-t", path], capture_output=True, text=True, check=True)
    evs = []
    for line in out.stdout.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        comm, pid, cpu, sec, nsec, name, payload = m.groups()
        evs.append((int(sec) * 10**9 + int(nsec), int(cpu), int(pid), name, payload))
    return evs


def main(path):
    evs = events(path)
    by_cpu = defaultdict(list)  # cpu -> event indices in order
    for i, e in enumerate(evs):
        by_cpu[e[1]].append(i)
    pos_in_cpu = {}
    for cpu, idx in by_cpu.items():
        for k, i in enumerate(idx):
            pos_in_cpu[i] = k

    commands = [i for i, e in enumerate(evs) if e[3] == "block_rq_issue"]
    entries = [(i, int(IRQ.match(e[4]).group(1))) for i, e in enumerate(evs) if e[3] == "irq_handler_entry"]

    # The IRQ most often first after a command (ties: the lowest number).
    counts = defaultdict(int)
    entry_idx = [i for i, _ in entries]
    for c in commands:
        k = bisect.bisect_right(entry_idx, c)
        if k < len(entries):
            counts[entries[k][1]] += 1
    if not counts:
        print(json.dumps({"irq": None, "commands": len(commands), "chains": []}))
        return
    irq = max(counts.items(), key=lambda kv: (kv[1], -kv[0]))[0]

    # Completions, first in first out per (device, sector).
    open_reqs = defaultdict(deque)
    completion = {}
    for i, e in enumerate(evs):
        if e[3] not in ("block_rq_issue", "block_rq_complete"):
            continue
        m = BLOCK.match(e[4])
        if not m:
            continue
        key = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
        if e[3] == "block_rq_issue":
            open_reqs[key].append(i)
        elif open_reqs[key]:
            completion[open_reqs[key].popleft()] = i

    # Per CPU: this IRQ's entries and exits.
    irq_entries = defaultdict(list)
    irq_exits = defaultdict(list)
    for i, e in enumerate(evs):
        if e[3] in ("irq_handler_entry", "irq_handler_exit"):
            m = IRQ.match(e[4])
            if m and int(m.group(1)) == irq:
                (irq_entries if e[3] == "irq_handler_entry" else irq_exits)[e[1]].append(i)

    wakeups_of = defaultdict(list)  # pid -> indices of its sched_wakeup events
    for i, e in enumerate(evs):
        if e[3] == "sched_wakeup":
            wakeups_of[int(WAKEUP.match(e[4]).group(2))].append(i)
    switch_in = defaultdict(list)  # pid -> indices of sched_switch into it
    own = defaultdict(list)  # pid -> indices of its own events
    for i, e in enumerate(evs):
        own[e[2]].append(i)
        if e[3] == "sched_switch":
            m = SWITCH_IN.search(e[4])
            if m:
                switch_in[int(m.group(2))].append(i)

    chains = []
    for c in commands:
        done = completion.get(c)
        if done is None:
            continue
        cpu = evs[done][1]
        ents = irq_entries[cpu]
        k = bisect.bisect_right(ents, done) - 1
        if k < 0 or ents[k] <= c:
            continue
        entry = ents[k]
        exits = irq_exits[cpu]
        x = bisect.bisect_right(exits, entry)
        if x >= len(exits):
            continue
        exit_ = exits[x]
        # The waiter: the first wakeup in the completing context.
        waker = None
        cpu_list = by_cpu[cpu]
        for j in cpu_list[pos_in_cpu[done] + 1:]:
            name = evs[j][3]
            if name in ("sched_wakeup", "sched_waking"):
                waker = j
                break
            if name in CONTEXT_ENDS:
                break
        if waker is None:
            continue
        if evs[waker][3] == "sched_waking":
            waiter = int(WAKING.search(evs[waker][4]).group(1))
            later = wakeups_of[waiter]
            k = bisect.bisect_right(later, waker)
            if k >= len(later):
                continue
            waker = later[k]
        else:
            waiter = int(WAKEUP.match(evs[waker][4]).group(2))
        sw = switch_in[waiter]
        s = bisect.bisect_right(sw, waker)
        ow = own[waiter]
        o = bisect.bisect_right(ow, waker)
        candidates = [l[p] for l, p in ((sw, s), (ow, o)) if p < len(l)]
        if not candidates:
            continue
        running = min(candidates)
        wake_t = max(evs[waker][0], evs[exit_][0])
        total = evs[running][0] - evs[c][0]
        assert evs[entry][0] <= evs[exit_][0] <= wake_t <= evs[running][0]
        chains.append([evs[c][0], total, waiter, evs[c][2]])
    print(json.dumps({"irq": irq, "commands": len(commands), "chains": chains}))


if __name__ == "__main__":
    main(sys.argv[1])

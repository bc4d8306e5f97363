#!/usr/bin/env python3
"""Per-event load cost of `latscope info FILE --json`, whole process, for several files.

Usage: bench/per-event.py BINARY ROUNDS FILE...

BINARY is `latscope` (the app: `info FILE --json`) or the importers' example `import_info`
(the importer alone, without the app's analysis of the source; it prints `N events`).

Runs the files alternately (the order rotates every round, so drifting machine load hits
all alike) and prints, per file: the events `info` reports, the best and median wall time,
the best and median CPU time (user + sys), each per event in ns, and the peak RSS (the
process's own maximum resident set, from wait4). On a machine shared with other builds
the CPU time is the fairer figure; the best wall time is the closest to an idle machine.
"""
import json
import os
import statistics
import subprocess
import sys
import time


def run(binary, path):
    t0 = time.perf_counter()
    alone = os.path.basename(binary).startswith("import_info")
    cmd = [binary, path] if alone else [binary, "info", path, "--json"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    if status != 0:
        sys.exit(f"{binary} info {path} failed: status {status}")
    if alone:
        text = out.decode()
        if ": error:" in text:
            sys.exit(text)
        events = int(text.split(": ", 1)[1].split(" events", 1)[0])
    else:
        events = json.loads(out)["events"]
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss * 1024, events


def main():
    binary, rounds, files = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    res = {f: [] for f in files}
    loads = []
    for i in range(rounds):
        order = files[i % len(files):] + files[: i % len(files)]
        for f in order:
            res[f].append(run(binary, f))
        loads.append(os.getloadavg()[0])
    print(f"{binary}, {rounds} rounds, load average {min(loads):.2f}-{max(loads):.2f}")
    print("| file | MB | events | wall best | wall median | cpu best | cpu median | "
          "ns/event (wall best) | ns/event (cpu best) | ns/event (cpu median) | peak RSS MB (max) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for f in files:
        r = res[f]
        ev = r[0][3]
        walls = [x[0] for x in r]
        cpus = [x[1] for x in r]
        rss = max(x[2] for x in r)
        print(
            f"| {os.path.basename(f)} | {os.path.getsize(f) / 1e6:.1f} | {ev:,} | "
            f"{min(walls):.3f} s | {statistics.median(walls):.3f} s | "
            f"{min(cpus):.3f} s | {statistics.median(cpus):.3f} s | "
            f"{min(walls) / ev * 1e9:.0f} | {min(cpus) / ev * 1e9:.0f} | "
            f"{statistics.median(cpus) / ev * 1e9:.0f} | {rss / 1e6:.0f} |"
        )


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A/B of two latscope binaries on `latscope info FILE --json`, whole process.

Usage: bench/ab-info.py OLD_BINARY NEW_BINARY FILE [ROUNDS]

Runs the two binaries alternately (the order flips every round, so drifting machine load
hits both alike) and prints, per binary, the median and minimum wall time, the matching
input MB/s and the median CPU time (user + sys) — plus the load average seen. On a
machine shared with other sessions' builds (sched_autogroup), raise this session's
autogroup priority for the run, e.g. `sh -c 'echo -20 > /proc/$$/autogroup; bench/ab-info.py ...'`;
see docs/PERFORMANCE.md.
"""
import os
import resource
import statistics
import subprocess
import sys
import time


def main():
    old, new, path = sys.argv[1], sys.argv[2], sys.argv[3]
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 9
    wall = {old: [], new: []}
    cpu = {old: [], new: []}
    loads = []
    for i in range(rounds):
        for binary in (old, new) if i % 2 == 0 else (new, old):
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            subprocess.run([binary, "info", path, "--json"], stdout=subprocess.DEVNULL, check=True)
            wall[binary].append(time.perf_counter() - t0)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[binary].append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
        loads.append(os.getloadavg()[0])
    size = os.path.getsize(path)
    for binary in (old, new):
        med, low = statistics.median(wall[binary]), min(wall[binary])
        print(
            f"{binary}: wall median {med * 1e3:.1f} ms, min {low * 1e3:.1f} ms "
            f"= {size / med / 1e6:.0f} / {size / low / 1e6:.0f} MB/s; "
            f"cpu median {statistics.median(cpu[binary]) * 1e3:.1f} ms"
        )
    print(f"load average during the runs: {min(loads):.2f}-{max(loads):.2f}")


if __name__ == "__main__":
    main()

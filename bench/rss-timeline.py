#!/usr/bin/env python3
"""Resident memory of a command over time: its RSS, file-backed and anonymous parts.

Usage: bench/rss-timeline.py COMMAND [ARGS...]

Samples /proc/PID/status every 20 ms while the command runs and prints about 40 evenly
spaced samples and the peak, so a load's phases (the mapped file read, the parse, the
merge) show as steps.
"""
import subprocess
import sys
import time


def main():
    p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
    t0 = time.perf_counter()
    samples = []
    while p.poll() is None:
        try:
            with open(f"/proc/{p.pid}/status") as f:
                d = dict(line.split(":", 1) for line in f if ":" in line)
            mb = lambda k: int(d.get(k, "0 kB").split()[0]) // 1024
            samples.append((time.perf_counter() - t0, mb("VmRSS"), mb("RssFile"), mb("RssAnon")))
        except (OSError, ValueError):
            pass
        time.sleep(0.02)
    if not samples:
        sys.exit("no samples: the command ended at once")
    for s in samples[:: max(1, len(samples) // 40)]:
        print(f"{s[0]:6.2f} s  rss {s[1]:4d} MB  (file {s[2]:4d}, anon {s[3]:4d})")
    peak = max(samples, key=lambda s: s[1])
    print(f"peak at {peak[0]:.2f} s: rss {peak[1]} MB (file {peak[2]}, anon {peak[3]})")


if __name__ == "__main__":
    main()

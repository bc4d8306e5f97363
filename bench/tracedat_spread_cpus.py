#!/usr/bin/env python3
"""Spread a v6 trace.dat's ring-buffer pages over more CPUs, for like-for-like benchmarks.

Usage: bench/tracedat_spread_cpus.py IN.dat OUT.dat --cpus N [--check] [--event-dump BIN]
       bench/tracedat_spread_cpus.py --self-test SAMPLE.dat   (e.g. samples/ftrace/blk_read_v6.dat)

The benchmark machine has 2 CPUs, so a recorded trace.dat has 2 per-CPU streams while the
Perfetto traces it is compared with have 8. This writes OUT.dat with N CPUs (a multiple of
IN's count): every header is copied unchanged except the CPU count (and the CPUCOUNT option,
if present) and the flyrecord table of per-CPU (offset, size); each input CPU's pages are cut
into N / IN-CPUs runs of consecutive pages, in order, and run k of input CPU i becomes output
CPU k * IN-CPUs + i (so CPU 0's runs go to 0, 2, 4, 6 and CPU 1's to 1, 3, 5, 7 for 2 -> 8).
A ring-buffer page carries its own timestamp base and every event lies inside one page, so
each output CPU is still a valid, time-ordered stream and every event is kept exactly once.

--check compares `trace-cmd report` of IN and OUT: the same number of events, the same lines
once the CPU column is dropped (as multisets), and OUT's report in time order (which it is
only if every output CPU is). --event-dump BIN does the same with latscope's own importer
(the importers' `event_dump` example). Both exit non-zero on a difference. --self-test shows
the --check oracle rejects a spread with one CPU's page runs out of order or a CPU dropped.

Format: trace-cmd.dat.v6(5) — the header, header_page/header_event, the ftrace and event
formats, kallsyms, printk, cmdlines, the u32 CPU count, "options  " (u16 id, u32 size, data;
id 0 ends), "flyrecord" and per CPU a u64 offset and u64 size, then (with a TRACECLOCK
option) a u64-sized trace_clock text; CPU data starts page aligned.
"""
import argparse
import os
import re
import struct
import subprocess
import sys
import tempfile

MAGIC = b"\x17\x08\x44tracing"
OPT_BUFFER, OPT_TRACECLOCK, OPT_CPUCOUNT = 3, 4, 8


class Layout:
    """Where the parts of a v6 trace.dat are."""


def parse(d):
    if d[:10] != MAGIC:
        sys.exit("not a trace.dat (bad magic)")
    p = 10
    e = d.index(b"\0", p)
    if d[p:e] not in (b"6", b"0.6"):
        sys.exit(f"only file version 6 is supported, found {d[p:e]!r} "
                 "(trace-cmd convert --file-version 6 --compression none)")
    p = e + 1
    if d[p] != 0:
        sys.exit("only little-endian files are supported")
    p += 2
    (page_size,) = struct.unpack_from("<I", d, p)
    p += 4

    def u(fmt):
        nonlocal p
        (v,) = struct.unpack_from(fmt, d, p)
        p += struct.calcsize(fmt)
        return v

    for tag in (b"header_page\0", b"header_event\0"):
        if d[p:p + len(tag)] != tag:
            sys.exit(f"byte {p}: expected {tag!r}")
        p += len(tag)
        n = u("<Q")
        p += n
    for _ in range(u("<I")):  # ftrace formats
        n = u("<Q")
        p += n
    for _ in range(u("<I")):  # event systems
        p = d.index(b"\0", p) + 1
        for _ in range(u("<I")):
            n = u("<Q")
            p += n
    n = u("<I")
    p += n  # kallsyms
    n = u("<I")
    p += n  # printk
    n = u("<Q")
    p += n  # cmdlines
    L = Layout()
    L.page_size = page_size
    L.cpus_at = p
    L.cpus = u("<I")
    L.cpucount_at = None
    L.cpucount = None
    saw_clock = False
    while True:
        tag = d[p:p + 10]
        p += 10
        if tag == b"options  \0":
            while True:
                oid = u("<H")
                if oid == 0:
                    break
                size = u("<I")
                if oid == OPT_BUFFER:
                    sys.exit("buffer instances (BUFFER option) are not supported")
                if oid == OPT_TRACECLOCK:
                    saw_clock = True
                if oid == OPT_CPUCOUNT:
                    L.cpucount_at = p
                    (L.cpucount,) = struct.unpack_from("<I", d, p)
                p += size
        elif tag == b"flyrecord\0":
            break
        else:
            sys.exit(f"byte {p - 10}: expected options or flyrecord, found {tag!r}")
    L.table_at = p
    L.regions = [struct.unpack_from("<QQ", d, p + 16 * c) for c in range(L.cpus)]
    p += 16 * L.cpus
    if L.cpucount is not None and L.cpucount > L.cpus:
        p += 16  # trace-cmd writes one more (zero) pair then
    L.clock = b""
    if saw_clock:
        start = p
        n = u("<Q")
        p += n
        L.clock = d[start:p]
    L.header_end = p
    return L


def spread(d, L, out_cpus):
    if out_cpus % L.cpus:
        sys.exit(f"--cpus {out_cpus} is not a multiple of the input's {L.cpus} CPUs")
    k = out_cpus // L.cpus
    ps = L.page_size
    runs = [None] * out_cpus  # output CPU -> (input offset, size)
    for i, (off, size) in enumerate(L.regions):
        if size % ps:
            sys.exit(f"CPU {i}: data size {size} is not a whole number of {ps}-byte pages")
        pages = size // ps
        for j in range(k):
            a, b = pages * j // k, pages * (j + 1) // k
            runs[j * L.cpus + i] = (off + a * ps, (b - a) * ps)
    head = bytearray(d[:L.table_at])
    struct.pack_into("<I", head, L.cpus_at, out_cpus)
    if L.cpucount_at is not None:
        struct.pack_into("<I", head, L.cpucount_at, out_cpus)
    head_len = len(head) + 16 * out_cpus + len(L.clock)
    pos = -(-head_len // ps) * ps
    table = bytearray()
    for off, size in runs:
        table += struct.pack("<QQ", pos, size)
        pos += size
    out = head + table + L.clock
    out += b"\0" * (-len(out) % ps)
    parts = [out]
    for off, size in runs:
        parts.append(d[off:off + size])
    return b"".join(parts), runs


class CheckFailed(Exception):
    """OUT does not hold IN's events."""


CPU_COL = re.compile(rb"\[\d+\]")


def report_lines(path):
    """trace-cmd report's event lines with the CPU column dropped, and their timestamps."""
    p = subprocess.run(["trace-cmd", "report", path], capture_output=True, check=True)
    lines, times = [], []
    for line in p.stdout.splitlines():
        if line.startswith(b"cpus=") or not line.strip():
            continue
        m = CPU_COL.search(line)
        if line.startswith(b"CPU:"):  # "CPU:N [EVENTS DROPPED]"
            line = re.sub(rb"^CPU:\d+", b"CPU:", line)
        elif m:
            line = line[:m.start()] + line[m.end():]
            ts = line[m.start():].split(b":", 1)[0].strip()
            try:
                times.append(float(ts))
            except ValueError:
                sys.exit(f"{path}: no timestamp after the CPU column: {line!r}")
        lines.append(line)
    return lines, times


def check_report(inp, outp):
    a, _ = report_lines(inp)
    b, tb = report_lines(outp)
    print(f"trace-cmd report: {len(a)} lines in {inp}, {len(b)} in {outp}")
    if len(a) != len(b):
        raise CheckFailed("trace-cmd report line counts differ")
    if sorted(a) != sorted(b):
        raise CheckFailed("trace-cmd report lines differ (CPU column dropped)")
    if any(x > y for x, y in zip(tb, tb[1:])):
        raise CheckFailed(f"{outp} is not reported in time order")
    print("trace-cmd report: same lines once the CPU column is dropped; output in time order")


COMM_SYM = re.compile(rb"^(\S+ )\d+:")
STR_SYM = re.compile(rb'=\d+:"')
LAYOUT = re.compile(rb"\) L\d+ ")


def dump_lines(binary, path):
    """event_dump's event lines with the CPU column (the 2nd) and the numbers of strings
    and layouts dropped (the importer numbers both in the order it meets them, which
    depends on how the events are split over CPUs; the texts stay)."""
    with tempfile.TemporaryFile() as f:
        subprocess.run([binary, path], stdout=f, check=True)
        f.seek(0)
        header = f.readline()
        if b": error:" in header:
            sys.exit(header.decode(errors="replace"))
        lines, times = [], []
        for line in f:
            t, _cpu, rest = line.split(b" ", 2)
            rest = COMM_SYM.sub(rb"\1", rest, count=1)
            rest = STR_SYM.sub(b'="', LAYOUT.sub(b") L ", rest, count=1))
            times.append(int(t))
            lines.append(t + b" " + rest)
    return header.split(b": ", 1)[1], lines, times


def check_dump(binary, inp, outp):
    ha, a, _ = dump_lines(binary, inp)
    hb, b, tb = dump_lines(binary, outp)
    print(f"event_dump: {ha.decode().strip()} / {hb.decode().strip()}")
    if ha != hb:
        raise CheckFailed("event_dump summaries differ")
    if sorted(a) != sorted(b):
        raise CheckFailed("event_dump events differ (CPU column, string and layout numbers dropped)")
    if tb != sorted(tb):
        raise CheckFailed(f"{outp} is not loaded in time order")
    print("event_dump: same events once the CPU column, string and layout numbers are dropped; in time order")


def self_test(sample):
    """The checks accept a spread of `sample` and reject two broken ones: an output CPU
    holding two page runs in reverse order (every event kept, time order broken) and an
    output CPU's pages dropped."""
    with open(sample, "rb") as f:
        d = f.read()
    L = parse(d)
    data, _ = spread(d, L, 4 * L.cpus)
    table = L.table_at  # the table's offset is the same in the output
    with tempfile.TemporaryDirectory() as tmp:
        good = os.path.join(tmp, "good.dat")
        with open(good, "wb") as f:
            f.write(data)
        check_report(sample, good)
        # Output CPU L.cpus (run 1 of CPU 0) becomes runs 1 then 0; run 0's CPU is emptied.
        b = bytearray(data)
        o0, s0 = struct.unpack_from("<QQ", b, table)
        o1, s1 = struct.unpack_from("<QQ", b, table + 16 * L.cpus)
        if s0 == 0 or s1 == 0:
            sys.exit(f"self-test: {sample} needs at least two pages on CPU 0")
        struct.pack_into("<QQ", b, table + 16 * L.cpus, len(b), s0 + s1)
        struct.pack_into("<QQ", b, table, o0, 0)
        b += data[o1:o1 + s1] + data[o0:o0 + s0]
        broken = {"reordered": bytes(b)}
        b = bytearray(data)
        struct.pack_into("<QQ", b, table, o0, 0)
        broken["dropped"] = bytes(b)
        for name, blob in broken.items():
            path = os.path.join(tmp, name + ".dat")
            with open(path, "wb") as f:
                f.write(blob)
            try:
                check_report(sample, path)
            except CheckFailed as e:
                print(f"self-test: {name} output rejected: {e}")
            else:
                sys.exit(f"self-test: the check accepted a {name} output")
    print("self-test: passed")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--self-test":
        self_test(sys.argv[2])
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--cpus", type=int, required=True)
    ap.add_argument("--check", action="store_true", help="compare trace-cmd report of IN and OUT")
    ap.add_argument("--event-dump", metavar="BIN", help="compare latscope's event_dump of IN and OUT")
    args = ap.parse_args()
    with open(args.input, "rb") as f:
        d = f.read()
    L = parse(d)
    data, runs = spread(d, L, args.cpus)
    tmp = args.output + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, args.output)
    print(f"{args.output}: {len(data)} bytes, {L.cpus} -> {args.cpus} CPUs, pages per CPU "
          + " ".join(str(s // L.page_size) for _, s in runs))
    try:
        if args.check:
            check_report(args.input, args.output)
        if args.event_dump:
            check_dump(args.event_dump, args.input, args.output)
    except CheckFailed as e:
        sys.exit(f"check failed: {e}")


if __name__ == "__main__":
    main()

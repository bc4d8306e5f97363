#!/usr/bin/env python3
"""The inflate limit of a .sr capture: its `logic-*` members inflated with ISA-L (PyPI
`isal`, Intel's assembly inflater) in PROCS processes, nothing else done with the bytes.

    bench/isal_inflate.py F.sr [PROCS]      (default 2 processes: this machine's cores)

Members are dealt out in turn (member i to process i % PROCS), each inflated into a buffer
of its declared size and dropped. Prints the members and bytes inflated, and the time
inside the processes; bench/peers.sh times the whole command, as it times latscope.
"""
import os
import struct
import sys
import time
import zipfile

from isal import isal_zlib


def logic_members(path):
    """(data offset, compressed size, size) of each deflated `logic-*` member."""
    out = []
    with open(path, "rb") as f, zipfile.ZipFile(f) as z:
        for info in z.infolist():
            if not info.filename.startswith("logic-"):
                continue
            if info.compress_type != zipfile.ZIP_DEFLATED:
                sys.exit(f"{path}: member {info.filename} is not deflated")
            f.seek(info.header_offset)
            header = f.read(30)
            name_len, extra_len = struct.unpack("<HH", header[26:30])
            out.append((info.header_offset + 30 + name_len + extra_len, info.compress_size, info.file_size))
    return out


def inflate(path, members):
    total = 0
    with open(path, "rb") as f:
        data = f.read()
    for offset, csize, size in members:
        out = isal_zlib.decompress(data[offset:offset + csize], wbits=-15, bufsize=max(size, 1))
        if len(out) != size:
            sys.exit(f"{path}: a member inflated to {len(out)} bytes, not {size}")
        total += len(out)
    return total


def main():
    path = sys.argv[1]
    procs = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    t0 = time.perf_counter()
    members = logic_members(path)
    pids = []
    for k in range(procs):
        pid = os.fork()
        if pid == 0:
            inflate(path, members[k::procs])
            os._exit(0)
        pids.append(pid)
    for pid in pids:
        _, status = os.waitpid(pid, 0)
        if status != 0:
            sys.exit(f"an inflating process failed ({status})")
    t1 = time.perf_counter()
    size = sum(m[2] for m in members)
    print(f"{path}: {len(members)} members, {size} bytes inflated in {procs} processes, {t1 - t0:.3f} s")


main()

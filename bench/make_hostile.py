#!/usr/bin/env python3
"""Writes the hostile inputs measured in docs/PERFORMANCE.md ("Huge files / hostile files").

usage: make_hostile.py OUTDIR
  toggling_100M.sr  100 M samples, D0 toggling every sample (~100 KB deflated)
  bomb.sr           a logic member declaring 64 KiB that inflates to 1 GiB of zeros
  changes_30M.vcd   30 M value changes (one bit toggling, one 8-bit vector), ~350 MB
  names.vcd         5,000 variables under one 60 KB scope name (184 KB)
"""
import os
import struct
import sys
import zipfile

META = (
    "[global]\nsigrok version=0.5.2\n[device 1]\ncapturefile=logic-1\ntotal probes=8\n"
    "samplerate=1 MHz\nprobe1=D0\nunitsize=1\n"
)


def write_sr(path, chunks):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("version", "2")
        z.writestr("metadata", META)
        with z.open("logic-1-1", "w") as m:
            for c in chunks:
                m.write(c)


def patch_declared(path, member, size):
    """Makes the member's local and central headers declare `size` uncompressed bytes."""
    data = bytearray(open(path, "rb").read())
    name = member.encode()
    for i in range(len(data) - 50):
        if data[i:i + 4] == b"PK\x03\x04" and data[i + 30:i + 30 + len(name)] == name:
            data[i + 22:i + 26] = struct.pack("<I", size)
        if data[i:i + 4] == b"PK\x01\x02" and data[i + 46:i + 46 + len(name)] == name:
            data[i + 24:i + 28] = struct.pack("<I", size)
    open(path, "wb").write(data)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    toggling = bytes(i % 2 for i in range(1 << 20))
    write_sr(os.path.join(out, "toggling_100M.sr"), (toggling for _ in range(100_000_000 >> 20)))
    bomb = os.path.join(out, "bomb.sr")
    write_sr(bomb, (bytes(1 << 20) for _ in range(1024)))
    patch_declared(bomb, "logic-1-1", 64 << 10)
    with open(os.path.join(out, "changes_30M.vcd"), "w") as f:
        f.write("$timescale 1 ns $end\n$var wire 1 ! clk $end\n$var wire 8 \" bus $end\n$enddefinitions $end\n")
        for i in range(15_000_000):
            f.write(f"#{i}\n{i % 2}!\nb{i % 256:b} \"\n")
    with open(os.path.join(out, "names.vcd"), "w") as f:
        f.write("$timescale 1 ns $end\n$scope module " + "s" * 60000 + " $end\n")
        for i in range(5000):
            f.write(f"$var wire 1 ! a{i} $end\n")
        f.write("$upscope $end\n$enddefinitions $end\n#0 0!\n#1 1!\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Writes libsigrok_jtag_8mhz.fst, the FST copy of the corpus capture
samples/corpus/vcd/wellen_libsigrok_jtag_8mhz.vcd used by importers/tests/wave.rs.

usage: make_fst.py VCD OUT.fst   (needs `pip install pylibfst`, the bindings to GTKWave's fstapi)

Only what that file uses is converted: 1-bit wires in one scope, `#t` timestamps and
scalar values. The context is flushed every 1000 timestamps so the FST has several value
change blocks, like a long simulation's dump.
"""
import sys

from _libfstapi import ffi, lib


def main():
    vcd, out = sys.argv[1], sys.argv[2]
    tokens = open(vcd).read().split()
    fst = lib.fstWriterCreate(out.encode(), 1)
    lib.fstWriterSetTimescale(fst, -9)  # the VCD's `$timescale 1 ns`
    lib.fstWriterSetVersion(fst, b"libsigrok 0.5.2 (via pylibfst)")
    handles = {}
    i = 0
    while tokens[i] != "$enddefinitions":
        if tokens[i] == "$scope":
            lib.fstWriterSetScope(fst, lib.FST_ST_VCD_MODULE, tokens[i + 2].encode(), ffi.NULL)
        elif tokens[i] == "$upscope":
            lib.fstWriterSetUpscope(fst)
        elif tokens[i] == "$var":
            _, width, ident, name = tokens[i + 1:i + 5]
            assert width == "1", "only 1-bit wires are converted"
            handles[ident] = lib.fstWriterCreateVar(
                fst, lib.FST_VT_VCD_WIRE, lib.FST_VD_IMPLICIT, 1, name.encode(), 0
            )
        i += 1
    stamps = 0
    for t in tokens[i + 2:]:
        if t.startswith("#"):
            lib.fstWriterEmitTimeChange(fst, int(t[1:]))
            stamps += 1
            if stamps % 1000 == 0:
                lib.fstWriterFlushContext(fst)
        else:
            lib.fstWriterEmitValueChange(fst, handles[t[1:]], t[0].encode())
    lib.fstWriterClose(fst)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Writes long_scope_names.fst for importers/tests/wave.rs: 1000 one-bit variables under a
60,000-character scope name. The file is small (FST stores the scope once) but the variables'
full names total 60 MB, past latscope's cap on name bytes.

usage: make_long_names_fst.py OUT.fst   (needs `pip install pylibfst`)
"""
import sys

from _libfstapi import ffi, lib

fst = lib.fstWriterCreate(sys.argv[1].encode(), 1)
lib.fstWriterSetTimescale(fst, -9)
lib.fstWriterSetScope(fst, lib.FST_ST_VCD_MODULE, b"s" * 60000, ffi.NULL)
handles = [
    lib.fstWriterCreateVar(fst, lib.FST_VT_VCD_WIRE, lib.FST_VD_IMPLICIT, 1, f"a{i}".encode(), 0)
    for i in range(1000)
]
lib.fstWriterSetUpscope(fst)
lib.fstWriterEmitTimeChange(fst, 0)
for h in handles:
    lib.fstWriterEmitValueChange(fst, h, b"0")
lib.fstWriterEmitTimeChange(fst, 1)
lib.fstWriterEmitValueChange(fst, handles[0], b"1")
lib.fstWriterClose(fst)

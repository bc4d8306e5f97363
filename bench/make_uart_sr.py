#!/usr/bin/env python3
"""Writes a sigrok .sr capture of continuous UART traffic for the decoder benchmark.

    bench/make_uart_sr.py OUT.sr [SAMPLES] [--idle]   (default 10,000,000 samples at 10 MHz)

Channels TX and RX (one byte per sample, libsigrok's unitsize 1): 1 Mbaud 8N1, ten samples
a bit, frames back to back with two idle bits between them; TX sends a counter, RX its
complement, shifted by half a frame. Deterministic, so the annotation count is known:
every whole frame is one data annotation per line. With --idle both lines stay high (no
traffic): the same number of samples and no annotation, to show that memory follows
annotations, not samples.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sr_file import write_sr  # noqa: E402

args = [a for a in sys.argv[1:] if not a.startswith("--")]
idle = "--idle" in sys.argv
out = args[0]
samples = int(args[1]) if len(args) > 1 else 10_000_000
TX, RX = 1, 2
BIT = 10  # samples per bit: 10 MHz / 1 Mbaud
FRAME = 12 * BIT  # start, 8 data, stop, two idle bits


def levels(byte):
    """The line level of each sample of one frame (idle high)."""
    bits = [0] + [(byte >> i) & 1 for i in range(8)] + [1, 1, 1]
    return [b for b in bits for _ in range(BIT)]


tx = bytearray([1] * (2 * BIT))
rx = bytearray([1] * (FRAME // 2))
frames = 0
if idle:
    buf = bytes([TX | RX]) * samples
else:
    while len(tx) < samples:
        tx.extend(levels(frames & 0xFF))
        rx.extend(levels(~frames & 0xFF))
        frames += 1
    buf = bytes((TX if t else 0) | (RX if r else 0) for t, r in zip(tx[:samples], rx[:samples]))

write_sr(out, ['TX', 'RX'], buf)
print(f"{out}: {samples} samples, {frames} frames a line")

#!/usr/bin/env python3
"""Writes a sigrok .sr capture of continuous I2C traffic for the decoder benchmark.

    bench/make_i2c_sr.py OUT.sr [SAMPLES]        (default 10,000,000 samples at 10 MHz)

Channels SCL and SDA (one byte per sample, libsigrok's unitsize 1): 12 samples a bit
(833 kHz), transactions back to back with 24 idle samples between them. Each is a start, a
7-bit address with write (0x50), two data bytes (a counter and its complement), every byte
ACKed, and a stop. Deterministic, so the annotation count is known: one address and two data
annotations per whole transaction.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sr_file import write_sr  # noqa: E402

out = sys.argv[1]
samples = int(sys.argv[2]) if len(sys.argv) > 2 else 10_000_000
SCL, SDA = 1, 2
Q = 3  # samples per quarter bit


def put(buf, scl, sda, n):
    buf.extend([(SCL if scl else 0) | (SDA if sda else 0)] * n)


def byte(buf, v):
    """Eight bits MSB first, then the receiver's ACK (SDA low)."""
    for bit in [(v >> i) & 1 for i in range(7, -1, -1)] + [0]:
        put(buf, 0, bit, Q)  # SCL low: data set up
        put(buf, 1, bit, 2 * Q)  # SCL high: sampled
        put(buf, 0, bit, Q)


buf = bytearray()
n = 0
while len(buf) < samples:
    put(buf, 1, 1, 24)  # idle
    put(buf, 1, 0, Q)  # start: SDA falls while SCL is high
    put(buf, 0, 0, Q)
    byte(buf, 0x50 << 1)  # address 0x50, write
    byte(buf, n & 0xFF)
    byte(buf, ~n & 0xFF)
    put(buf, 0, 0, Q)  # stop: SDA rises while SCL is high
    put(buf, 1, 0, Q)
    put(buf, 1, 1, Q)
    n += 1

write_sr(out, ['SCL', 'SDA'], buf[:samples])
print(f"{out}: {samples} samples, {n} transactions")

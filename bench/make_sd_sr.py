#!/usr/bin/env python3
"""Writes a sigrok .sr capture of an SD bus's CMD line for the decoder benchmark.

    bench/make_sd_sr.py OUT.sr [SAMPLES]         (default 10,000,000 samples at 10 MHz)

Channels CLK and CMD (one byte per sample, libsigrok's unitsize 1): CLK runs continuously
at 4 samples a clock (2.5 MHz), CMD changes on its falling edge. The host sends CMD13
(SEND_STATUS) and CMD17 (READ_SINGLE_BLOCK) in turn, each answered by the card with an R1
after 8 idle clocks; 8 idle clocks follow each answer. Real encodings: start and end bits,
transmission bit, CRC7. Deterministic, so the annotation count is known: one command and one
response per whole exchange.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sr_file import write_sr  # noqa: E402

out = sys.argv[1]
samples = int(sys.argv[2]) if len(sys.argv) > 2 else 10_000_000
CLK, CMD = 1, 2
HALF = 2  # samples per half clock


def crc7(bits):
    crc = 0
    for b in bits:
        top = ((crc >> 6) & 1) ^ b
        crc = (crc << 1) & 0x7F
        if top:
            crc ^= 0x09
    return crc


def token(host, index, arg):
    """The 48 bits of a command (host) or an R1 response (card)."""
    bits = [0, 1 if host else 0] + [(index >> i) & 1 for i in range(5, -1, -1)]
    bits += [(arg >> i) & 1 for i in range(31, -1, -1)]
    c = crc7(bits)
    return bits + [(c >> i) & 1 for i in range(6, -1, -1)] + [1]


def clocks(buf, bits):
    """One clock per bit: CMD set while CLK is low, sampled on the rise."""
    for b in bits:
        v = CMD if b else 0
        buf.extend([v] * HALF)
        buf.extend([v | CLK] * HALF)


buf = bytearray()
n = 0
while len(buf) < samples:
    index = 13 if n % 2 == 0 else 17
    arg = (n << 16) & 0xFFFFFFFF if index == 13 else (n * 8) & 0xFFFFFFFF
    clocks(buf, [1] * 8)
    clocks(buf, token(True, index, arg))
    clocks(buf, [1] * 8)
    clocks(buf, token(False, index, 0x900))  # R1: READY_FOR_DATA, state tran
    n += 1

write_sr(out, ['CLK', 'CMD'], buf[:samples])
print(f"{out}: {samples} samples, {n} exchanges")

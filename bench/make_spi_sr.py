#!/usr/bin/env python3
"""Writes a sigrok .sr capture of continuous SPI traffic for the decoder benchmark.

    bench/make_spi_sr.py OUT.sr [SAMPLES]        (default 10,000,000 samples at 10 MHz)

Channels CLK, MOSI, MISO, CS (one byte per sample, libsigrok's unitsize 1): mode 0, eight
samples per SPI clock, 16-byte transfers with CS high for 64 samples between them, MOSI a
counter and MISO its complement. Deterministic, so the annotation count is known:
every full transfer is 16 words on each line.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sr_file import write_sr  # noqa: E402

out = sys.argv[1]
samples = int(sys.argv[2]) if len(sys.argv) > 2 else 10_000_000
CLK, MOSI, MISO, CS = 1, 2, 4, 8
HALF = 4  # samples per clock half-period

buf = bytearray()
counter = 0
while len(buf) < samples:
    buf.extend([CS] * 64)  # idle, CS inactive (high)
    for _ in range(16):
        byte = counter & 0xFF
        counter += 1
        for bit in range(7, -1, -1):
            mosi = MOSI if (byte >> bit) & 1 else 0
            miso = 0 if (byte >> bit) & 1 else MISO
            buf.extend([mosi | miso] * HALF)  # CLK low: data set up
            buf.extend([CLK | mosi | miso] * HALF)  # CLK high: sampled on the rise
del buf[samples:]

write_sr(out, ['CLK', 'MOSI', 'MISO', 'CS'], buf)
print(f"{out}: {samples} samples, {counter} bytes sent")

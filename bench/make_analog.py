#!/usr/bin/env python3
"""Writes one long analog channel, for the analog rows of bench/peers.sh:

    bench/make_analog.py sr OUT.sr [SAMPLES]     an analog-only .sr (float32 chunks `analog-1-1-N`)
    bench/make_analog.py csv OUT.csv [SAMPLES]   a Rigol DS1000Z-style scope export (`X,CH1,Start,Increment`)

(default 48,000,000 samples at 100 MS/s: 0.48 s). The signal is a 1 MHz square wave through
an RC low-pass with ringing on each edge, a slow 1 kHz ripple and a little noise, so zooming
in shows edges and ringing, and zooming out shows the ripple: every level of detail has
something to draw. The .sr is written as libsigrok writes analog captures: 4 MiB members of
little-endian float32, a `total analog=1` device with `analog1=CH1`. Deterministic.
"""
import array
import math
import random
import sys
import zipfile

RATE = 100_000_000
PERIOD = 100  # samples per 1 MHz cycle
RIPPLE = 100_000  # samples per 1 kHz ripple cycle


def cycle_table():
    """One cycle of the ringing square wave (samples 0..PERIOD-1), without ripple or noise."""
    out = []
    for i in range(PERIOD):
        high = i < PERIOD // 2
        t = i if high else i - PERIOD // 2
        settle = 1 - math.exp(-t / 4.0)
        ring = 0.25 * math.exp(-t / 10.0) * math.sin(t * 0.9)
        v = (settle + ring) if high else (1 - settle - ring)
        out.append(3.3 * v)
    return out


def samples(n):
    """The samples in blocks of one ripple cycle (a float32 array each)."""
    rng = random.Random(48)
    base = cycle_table()
    noise = [rng.gauss(0, 0.01) for _ in range(7919)]
    ripple = [0.05 * math.sin(2 * math.pi * k / RIPPLE) for k in range(RIPPLE)]
    block = array.array("f", (base[k % PERIOD] + ripple[k] + noise[k % 7919] for k in range(RIPPLE)))
    done = 0
    while done < n:
        take = min(RIPPLE, n - done)
        yield block if take == RIPPLE else block[:take]
        done += take


def write_sr(out, n):
    meta = "\n".join(["[global]", "sigrok version=0.5.2", "", "[device 1]", "total probes=0",
                      f"samplerate={RATE // 1_000_000} MHz", "total analog=1", "analog1=CH1", ""])
    chunk = 4 << 20
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("version", "2")
        z.writestr("metadata", meta)
        buf, k = bytearray(), 1
        for block in samples(n):
            buf += block.tobytes()
            while len(buf) >= chunk:
                z.writestr(f"analog-1-1-{k}", bytes(buf[:chunk]))
                del buf[:chunk]
                k += 1
        if buf:
            z.writestr(f"analog-1-1-{k}", bytes(buf))


def write_csv(out, n):
    with open(out, "w") as f:
        f.write("X,CH1,Start,Increment,\n")
        f.write(f"Sequence,Volt,0.000000e+00,{1 / RATE:e}\n")
        i = 0
        for block in samples(n):
            f.write("".join(f"{i + k},{v:.4e},\n" for k, v in enumerate(block)))
            i += len(block)


def main():
    kind, out = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 48_000_000
    {"sr": write_sr, "csv": write_csv}[kind](out, n)
    print(f"{out}: {n} samples at {RATE} S/s")


main()

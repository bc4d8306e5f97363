#!/usr/bin/env python3
"""Writes a .sr capture shaped like sigrok-dumps' full i.MX6 SD session (`working.sr`, whose
first chunk is the corpus' sd_imx6_working_snippet.sr), for the real-shaped benchmark rows.

    bench/make_sd_real_sr.py OUT.sr [--scale N]   (N = 1: the full shape; 4: a quarter)

The shape copied from that session: a Saleae Logic16 at 40 MHz, 16 channels (unitsize 2)
named as the snippet names them (CLK, DAT0, DAT1, DAT2, CMD, DAT3, then 6..15), the idle
levels of the snippet (CLK, CMD, DAT0-2 and channel 6 high, DAT3 low: the word 0x5f),
1,198 deflated members `logic-1-N` of 1 MiB (the last one shorter), 627 M samples, and
about 16 M clock edges in bursts separated by long idle stretches: 1,060 members are the
same idle bytes, the other 138 differ from each other.

The traffic: the card's initialisation at ~343 kHz, as the snippet shows it (CMD0, CMD8,
ACMD41 polled until ready, CMD2, CMD3, CMD9, CMD7, ACMD6 to 4 bits), then bursts at 5 MHz
(8 samples a clock) of CMD13 status polls, CMD18 multi-block reads of 512-byte blocks on
the 4-bit DAT bus ended by CMD12 and its busy, and CMD25 writes with the card's CRC status
token and busy. Every token has real start/transmission/end bits and CRC7, every block its
per-line CRC16. CMD and DAT change with CLK's falling edge (as in the snippet) and are
sampled on its rise. Block contents mix zeros, patterns and seeded random bytes, so the
file stays near the real one's 2 MB. Deterministic: the same file every run.
"""
import argparse
import random
import zipfile

SAMPLES_PER_MEMBER = 1 << 19  # 1 MiB of 2-byte samples
MEMBERS = 1198
LAST_MEMBER_SAMPLES = 200_000

CLK, DAT0, DAT1, DAT2, CMD, DAT3, CH6 = 1, 2, 4, 8, 16, 32, 64
DAT_BITS = (DAT0, DAT1, DAT2, DAT3)
# Between bus activity: CMD and DAT0-2 pulled up, DAT3 low, channel 6 high (the snippet's
# idle word 0x5f with CLK high).
IDLE = CH6 | CMD | DAT0 | DAT1 | DAT2
CLK_BIT = bytes(b & CLK for b in range(256))
# Marks a cycle during which the host stops the clock (CLK stays high).
STOP = 0x8000


def crc7(bits):
    crc = 0
    for b in bits:
        top = ((crc >> 6) & 1) ^ b
        crc = (crc << 1) & 0x7F
        if top:
            crc ^= 0x09
    return crc


def crc16(bits):
    crc = 0
    for b in bits:
        top = ((crc >> 15) & 1) ^ b
        crc = (crc << 1) & 0xFFFF
        if top:
            crc ^= 0x1021
    return crc


def token48(host, index, arg):
    bits = [0, 1 if host else 0] + [(index >> i) & 1 for i in range(5, -1, -1)]
    bits += [(arg >> i) & 1 for i in range(31, -1, -1)]
    c = crc7(bits)
    return bits + [(c >> i) & 1 for i in range(6, -1, -1)] + [1]


def token136(register):
    """An R2 response: start, transmission 0, 111111, the 120 register bits, CRC7, end."""
    reg_bits = []
    for byte in register:
        reg_bits += [(byte >> i) & 1 for i in range(7, -1, -1)]
    c = crc7(reg_bits)
    return [0, 0] + [1] * 6 + reg_bits + [(c >> i) & 1 for i in range(6, -1, -1)] + [1]


class Bus:
    """Clock cycles as the word CMD and DAT hold during each (CLK added when drawn)."""

    blocks = 0  # data blocks put on DAT, in all bursts

    def __init__(self):
        self.cycles = []
        self.dat_idle = IDLE & (DAT0 | DAT1 | DAT2 | DAT3)
        self.cmd = CMD
        self.dat = self.dat_idle

    def word(self):
        return CH6 | self.cmd | self.dat

    def idle(self, n):
        self.cmd, self.dat = CMD, self.dat_idle
        self.cycles.extend([self.word()] * n)

    def pause(self, n):
        """The host stops the clock for `n` cycles' time (between transactions)."""
        self.cmd, self.dat = CMD, self.dat_idle
        self.cycles.extend([STOP | self.word()] * n)

    def cmd_bits(self, bits):
        for b in bits:
            self.cmd = CMD if b else 0
            self.cycles.append(self.word())
        self.cmd = CMD

    def dat_cycles(self, nibbles):
        """One cycle per nibble: bit 3 on DAT3 ... bit 0 on DAT0; CMD idle."""
        Bus.blocks += 1
        self.cmd = CMD
        for v in nibbles:
            self.dat = sum(line for k, line in enumerate(DAT_BITS) if (v >> k) & 1)
            self.cycles.append(self.word())
        self.dat = self.dat_idle

    def dat0_bits(self, bits):
        for b in bits:
            self.dat = (self.dat_idle & ~DAT0) | (DAT0 if b else 0)
            self.cycles.append(self.word())
        self.dat = self.dat_idle


def block_nibbles(data):
    """Start nibble, the data two nibbles a byte (high first), CRC16 per line, end nibble."""
    nibbles = []
    for byte in data:
        nibbles += [byte >> 4, byte & 0xF]
    lines = [[(n >> k) & 1 for n in nibbles] for k in range(4)]
    crcs = [crc16(line) for line in lines]
    out = [0] + nibbles
    for i in range(15, -1, -1):
        out.append(sum(((crcs[k] >> i) & 1) << k for k in range(4)))
    return out + [0xF]


def exchange(bus, index, arg, response, rng, reply=0, r2=None, after=8):
    """A command, its response (None, "R1" with `reply` as its argument, "R2" with the
    register `r2`, "R3" with the OCR `reply`) after 2..8 cycles (NCR), then `after` idle
    cycles (8: NRC; 2 before an R1b's busy)."""
    bus.cmd_bits(token48(True, index, arg))
    bus.idle(rng.randint(2, 8))
    if response == "R2":
        bus.cmd_bits(token136(r2))
    elif response == "R3":
        bus.cmd_bits(token48(False, 0x3F, reply)[:40] + [1] * 8)  # no CRC: all ones
    elif response == "R1":
        bus.cmd_bits(token48(False, index, reply))
    bus.idle(after)


def init_sequence(rng):
    bus = Bus()
    bus.idle(80)
    exchange(bus, 0, 0, None, rng)
    exchange(bus, 8, 0x1AA, "R1", rng, reply=0x1AA)
    for k in range(12):
        exchange(bus, 55, 0, "R1", rng, reply=0x120)
        ready = 0x80000000 if k == 11 else 0
        exchange(bus, 41, 0x40FF8000, "R3", rng, reply=0x00FF8000 | ready)
        bus.idle(200)
    exchange(bus, 2, 0, "R2", rng, r2=bytes(rng.randrange(256) for _ in range(15)))
    exchange(bus, 3, 0, "R1", rng, reply=0xAAAA0500)
    exchange(bus, 9, 0xAAAA0000, "R2", rng, r2=bytes(rng.randrange(256) for _ in range(15)))
    exchange(bus, 7, 0xAAAA0000, "R1", rng, reply=0x700)
    exchange(bus, 55, 0xAAAA0000, "R1", rng, reply=0x920)
    exchange(bus, 6, 2, "R1", rng, reply=0x920)  # ACMD6: 4-bit bus
    bus.idle(40)
    return bus.cycles


def block_data(rng):
    """Mostly zeros and patterns, a few blocks random (the real file is ~2 MB)."""
    x = rng.random()
    if x < 0.03:
        return bytes(rng.randrange(256) for _ in range(512))
    if x < 0.3:
        return bytes((i * 7 + 3) & 0xFF for i in range(512))
    return bytes(512)


def data_burst(rng, cycles_wanted, lba):
    """Status polls, multi-block reads and writes until `cycles_wanted` clock cycles."""
    bus = Bus()
    bus.idle(16)
    # Whole transactions only (the longest is ~9,000 cycles); the clock then stops until the
    # burst's end, so no token or block is cut off.
    while len(bus.cycles) < cycles_wanted - 12_000:
        exchange(bus, 13, 0xAAAA0000, "R1", rng, reply=0x900)
        if rng.random() < 0.8:
            blocks = rng.randint(4, 8)
            exchange(bus, 18, lba, "R1", rng, reply=0x900)
            for _ in range(blocks):
                bus.dat_cycles(block_nibbles(block_data(rng)))
                bus.idle(rng.randint(2, 4))
            exchange(bus, 12, 0, "R1", rng, reply=0xB00, after=2)
            bus.dat0_bits([0] * rng.randint(10, 30))  # R1b busy
        else:
            blocks = rng.randint(1, 3)
            exchange(bus, 25, lba, "R1", rng, reply=0x900)
            for _ in range(blocks):
                bus.idle(2)
                bus.dat_cycles(block_nibbles(block_data(rng)))
                bus.idle(2)
                bus.dat0_bits([0, 0, 1, 0, 1] + [0] * rng.randint(20, 60))  # CRC status, busy
            exchange(bus, 12, 0, "R1", rng, reply=0xB00, after=2)
            bus.dat0_bits([0] * rng.randint(10, 30))
        lba += 8
        bus.idle(8)
        bus.pause(rng.randint(200, 900))
    bus.pause(cycles_wanted - len(bus.cycles))
    return bus.cycles, lba


def cycle_bytes(word, lo, hi):
    if word & STOP:
        return ((word & ~STOP) | CLK).to_bytes(2, "little") * (lo + hi)
    return (word & ~CLK).to_bytes(2, "little") * lo + (word | CLK).to_bytes(2, "little") * hi


def draw(cycles, halves):
    """Samples (2 bytes each) of `cycles`: each cycle low for halves[i % 2][0] samples, then
    high for halves[i % 2][1]; CMD/DAT change with the falling edge."""
    out = bytearray()
    run_word, run_len, k = None, 0, 0
    lo_hi = {}

    def flush(word, count, parity):
        for j in range(count):
            lo, hi = halves[(parity + j) % len(halves)]
            key = (word, lo, hi)
            if key not in lo_hi:
                lo_hi[key] = cycle_bytes(word, lo, hi)
            out.extend(lo_hi[key])

    for w in cycles:
        if w == run_word:
            run_len += 1
            continue
        if run_word is not None:
            if len(halves) == 1:
                lo, hi = halves[0]
                out.extend(cycle_bytes(run_word, lo, hi) * run_len)
            else:
                flush(run_word, run_len, k)
            k += run_len
        run_word, run_len = w, 1
    if run_word is not None:
        if len(halves) == 1:
            lo, hi = halves[0]
            out.extend(cycle_bytes(run_word, lo, hi) * run_len)
        else:
            flush(run_word, run_len, k)
    return bytes(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--scale", type=int, default=1, help="divide the number of members by this")
    args = ap.parse_args()
    rng = random.Random(31)
    S = SAMPLES_PER_MEMBER
    members = MEMBERS // args.scale
    # Bursts (start sample, bytes). The init burst starts where the snippet's clock does.
    bursts = []
    init = draw(init_sequence(rng), [(58, 58), (58, 59), (59, 58)])  # ~343 kHz: 116.7 samples a clock
    bursts.append((439_761, init))
    init_members = (439_761 + len(init) // 2 - 1) // S + 1
    # Data bursts: each starts S/20 into a member and ends S/20 before the end of its last,
    # so a burst touching k members leaves the others idle. 137 members touched in all (the
    # 138th differing member is the shorter last one), spread evenly.
    touched = [10] * 12 + [7] * 2
    if args.scale > 1:
        touched = touched[: max(1, len(touched) // args.scale)]
    free = members - 1 - init_members - sum(touched)
    gap = free // (len(touched) + 1)
    m = init_members + gap
    lba = 0x2000
    for k in touched:
        length = k * S - S // 10
        cycles, lba = data_burst(rng, length // 8, lba)
        samples = draw(cycles, [(4, 4)])[: 2 * length]
        bursts.append((m * S + S // 20, samples))
        m += k + gap
    idle_member = (IDLE | CLK).to_bytes(2, "little") * S
    lines = ["[global]", "sigrok version=0.3.0", "", "[device 1]", "capturefile=logic-1",
             "total probes=16", "samplerate=40 MHz"]
    names = ["CLK", "DAT0", "DAT1", "DAT2", "CMD", "DAT3"] + [str(i) for i in range(6, 16)]
    lines += [f"probe{i + 1}={n}" for i, n in enumerate(names)]
    lines += ["unitsize=2", ""]
    distinct, same, clock_edges, prev_clk = 0, 0, 0, 1
    with zipfile.ZipFile(args.out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("version", "2")
        z.writestr("metadata", "\n".join(lines))
        for n in range(members):
            count = S if n < members - 1 else LAST_MEMBER_SAMPLES
            lo, hi = n * S * 2, (n * S + count) * 2
            parts = [(b0, b) for b0, b in bursts if b0 * 2 < hi and b0 * 2 + len(b) > lo]
            if not parts and count == S:
                data = idle_member
                same += 1
            else:
                buf = bytearray(idle_member[: count * 2])
                for b0, b in parts:
                    s0 = max(lo, b0 * 2)
                    s1 = min(hi, b0 * 2 + len(b))
                    buf[s0 - lo:s1 - lo] = b[s0 - b0 * 2:s1 - b0 * 2]
                data = bytes(buf)
                distinct += 1
                clk = data[0::2].translate(CLK_BIT)
                flips = clk.count(b"\x00\x01") + clk.count(b"\x01\x00")
                clock_edges += flips + ((clk[0] & 1) != prev_clk)
            prev_clk = data[-2] & 1
            z.writestr(f"logic-1-{n + 1}", data)
    total = (members - 1) * S + LAST_MEMBER_SAMPLES
    print(f"{args.out}: {members} members ({same} the same idle bytes, {distinct} others), "
          f"{total} samples, {clock_edges} clock edges, {Bus.blocks} data blocks")


main()

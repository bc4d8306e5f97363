//! The SD bus at bit level: the CLK, CMD and DAT0–3 lines a 4-bit host and its card drive
//! for each command — the command token and the card's R1/R1b response with their CRC7s,
//! data blocks with a CRC16 per DAT line, and after each written block the card's CRC status
//! token and its busy on DAT0. The encodings are the SD decoder's
//! (`latscope_decoders::sd::encode`), so a capture of this bus decodes as a real one does.
//!
//! Lines change half a clock before the rising edge that samples them (on the falling
//! edge). The clock runs while a token or block is on the bus and through short waits (a
//! card answering a command); it stops in waits longer than [`GATE_CLOCKS`] — the read
//! access before the first block, the programming busy after the last written one — as a
//! host may, so a run's edges grow with the bits moved, not with its length.
//!
//! The bus never runs behind the model it draws: where the model's phase is shorter than
//! the bits need (a response after 3 us, when the two tokens take 3.9 us at 25 MHz), the
//! phase's end moves to where the bits end, and a write is done at the clock that samples
//! the end of its busy ([`SdBus::transaction`] adjusts the [`CmdTiming`]). Every token, block and busy is also kept in [`SdBus::log`], the ground
//! truth a decoder is checked against.

use crate::emit::{Emitter, Line};
use crate::models::sdhost::CmdTiming;
use latscope_decoders::sd::encode;
use latscope_model::{PS_PER_S, Ps};

/// Clocks between the command's end bit and the card's response to a data command (Ncr).
pub const NCR: i64 = 8;
/// Clocks between two blocks of a read (Nac) and before a written block (Nwr).
pub const NAC: i64 = 2;
/// Clocks from a written block's end bit to the card's CRC status token (Ncrc).
pub const NCRC: i64 = 2;
/// Clocks the card is busy after a written block that is not the transfer's last.
pub const BLOCK_BUSY: i64 = 8;
/// Clocks the clock keeps running after a token, block or busy (Ncc).
pub const TRAILING: i64 = 8;
/// A wait longer than this many clocks stops the clock.
pub const GATE_CLOCKS: i64 = 512;
/// The R1 card status every response carries: READY_FOR_DATA, state `tran`.
pub const STATUS_TRAN: u32 = 0x900;

/// What one item on the bus was: the ground truth of a decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BusItem {
    Command {
        index: u8,
        arg: u32,
    },
    Response {
        index: u8,
        status: u32,
    },
    /// Block `block` of the transfer (0-based), with the CRC16 of each line.
    Block {
        block: u32,
        write: bool,
        crc: [u16; 4],
    },
    CrcStatus {
        accepted: bool,
    },
    Busy,
}

/// One item with its span as the SD decoder reports it: from the clock rise that samples
/// its first bit to one clock after the rise that samples its last (for busy, to the first
/// rise that samples DAT0 high again).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Logged {
    pub item: BusItem,
    pub start: Ps,
    pub end: Ps,
}

/// The data phase of a command.
#[derive(Debug, Clone, Copy)]
pub struct Data<'a> {
    pub write: bool,
    /// The bytes moved, a whole number of 512-byte blocks.
    pub bytes: &'a [u8],
}

/// The SD bus lines and where the clock has run to.
#[derive(Debug)]
pub struct SdBus {
    period: Ps,
    clk: Line,
    cmd: Line,
    dat: [Line; 4],
    /// The last clock (index of its rising edge) emitted; `i64::MIN` before the first.
    clock_to: i64,
    cmd_level: u8,
    dat_level: [u8; 4],
    /// Everything driven so far, in time order.
    pub log: Vec<Logged>,
}

const BLOCK: usize = 512;
/// Clocks one 512-byte block takes on four lines: start bit, 1024 nibbles, CRC16, end bit.
const BLOCK_CLOCKS: i64 = 1 + (BLOCK as i64 * 2) + 16 + 1;

impl SdBus {
    /// Declares the lines `SD_CLK`, `SD_CMD` and `SD_DAT0`..`SD_DAT3` (CMD and DAT idle
    /// high, pulled up) with a clock of `clock_hz`.
    pub fn new(out: &mut Emitter, clock_hz: f64) -> SdBus {
        let period = ((PS_PER_S as f64 / clock_hz).round() as Ps).max(2);
        SdBus {
            period: period + period % 2,
            clk: out.line("SD_CLK", 0),
            cmd: out.line("SD_CMD", 1),
            dat: [
                out.line("SD_DAT0", 1),
                out.line("SD_DAT1", 1),
                out.line("SD_DAT2", 1),
                out.line("SD_DAT3", 1),
            ],
            clock_to: i64::MIN,
            cmd_level: 1,
            dat_level: [1; 4],
            log: Vec::new(),
        }
    }

    pub fn period(&self) -> Ps {
        self.period
    }

    fn rise(&self, k: i64) -> Ps {
        k * self.period
    }

    /// The index of the first rising edge whose preceding falling edge is at or after `t`.
    fn first_clock_after(&self, t: Ps) -> i64 {
        let x = t + self.period / 2;
        x.div_euclid(self.period) + i64::from(x.rem_euclid(self.period) != 0)
    }

    /// Runs the clock through rising edges `from..=to`; a gap of at most [`GATE_CLOCKS`]
    /// since the last clock is filled (the clock did not stop).
    fn run_clock(&mut self, out: &mut Emitter, from: i64, to: i64) {
        let mut k = from;
        if self.clock_to != i64::MIN && from - self.clock_to <= GATE_CLOCKS {
            k = self.clock_to + 1;
        }
        while k <= to {
            let r = self.rise(k);
            out.edge(r, self.clk, 1);
            out.edge(r + self.period / 2, self.clk, 0);
            k += 1;
        }
        self.clock_to = self.clock_to.max(to);
    }

    /// Drives CMD with `bits`, bit `i` sampled at rise `k + i`.
    fn drive_cmd(&mut self, out: &mut Emitter, k: i64, bits: &[u8]) {
        for (i, &b) in bits.iter().enumerate() {
            if b != self.cmd_level {
                out.edge(self.rise(k + i as i64) - self.period / 2, self.cmd, b);
                self.cmd_level = b;
            }
        }
    }

    /// Sets DAT line `l` to `level` from the falling edge before rise `k`.
    fn set_dat(&mut self, out: &mut Emitter, k: i64, l: usize, level: u8) {
        if self.dat_level[l] != level {
            out.edge(self.rise(k) - self.period / 2, self.dat[l], level);
            self.dat_level[l] = level;
        }
    }

    /// Drives DAT0–3 with one level set per clock, clock `i` sampled at rise `k + i`.
    fn drive_dat(&mut self, out: &mut Emitter, k: i64, clocks: &[[u8; 4]]) {
        for (i, levels) in clocks.iter().enumerate() {
            for (l, &level) in levels.iter().enumerate() {
                self.set_dat(out, k + i as i64, l, level);
            }
        }
    }

    fn log(&mut self, item: BusItem, first: i64, clocks: i64) {
        let (start, end) = (self.rise(first), self.rise(first + clocks));
        self.log.push(Logged { item, start, end });
    }

    /// The clocks a command token, the card's wait and its response take: the earliest a
    /// command without data issued at `issue` can be answered.
    pub fn earliest_response_end(&self, issue: Ps) -> Ps {
        let k0 = self.first_clock_after(issue).max(self.clock_to.saturating_add(2));
        self.rise(k0 + 48 + 2 + 48)
    }

    /// Drives command `index` with `arg` issued at `issue`, the card's R1 (R1b for CMD12)
    /// and, for a data command, its blocks, CRC status tokens and busy. `timing` is the
    /// model's: the response ends at its `done` (commands without data); read blocks end
    /// where its data phase ends; written blocks start where its data phase starts and the
    /// last one's busy lasts until `done`. A phase too short for its bits is lengthened
    /// (`done`, the data phase and the DMA completion move by as much).
    pub fn transaction(
        &mut self,
        out: &mut Emitter,
        issue: Ps,
        index: u8,
        arg: u32,
        data: Option<Data<'_>>,
        timing: &mut CmdTiming,
    ) {
        let k0 = self.first_clock_after(issue).max(self.clock_to.saturating_add(2));
        let token = encode::token48(true, index, arg);
        self.run_clock(out, k0 - 2, k0 + 47);
        self.drive_cmd(out, k0, &token);
        self.log(BusItem::Command { index, arg }, k0, 48);
        let cmd_end = k0 + 48;
        // The response: at the model's `done` for commands without data, Ncr after the
        // command for data commands (their `done` is the end of the data or of the busy).
        let r0 = match data {
            None => {
                let last = timing.done.div_euclid(self.period) - 1;
                (last - 47).max(cmd_end + 2)
            }
            Some(_) => cmd_end + NCR,
        };
        let resp = encode::token48(false, index, STATUS_TRAN);
        self.run_clock(out, r0, r0 + 47 + TRAILING);
        self.drive_cmd(out, r0, &resp);
        self.log(BusItem::Response { index, status: STATUS_TRAN }, r0, 48);
        let resp_end = r0 + 48;
        let Some(data) = data else {
            self.delay(timing, self.rise(resp_end));
            return;
        };
        let blocks: Vec<&[u8]> = data.bytes.chunks(BLOCK).collect();
        let n = blocks.len() as i64;
        if data.write {
            let (first, _) = timing.data.unwrap_or((issue, issue));
            let mut k = self.first_clock_after(first).max(resp_end + NAC);
            for (b, bytes) in blocks.iter().enumerate() {
                let last = b as i64 == n - 1;
                let clocks = encode::data_block(bytes, 4, false);
                self.run_clock(out, k - 2, k + BLOCK_CLOCKS - 1);
                self.drive_dat(out, k, &clocks);
                self.log(
                    BusItem::Block { block: b as u32, write: true, crc: crcs(&clocks) },
                    k,
                    BLOCK_CLOCKS,
                );
                // The CRC status token on DAT0: start bit, status 010 (accepted), end bit.
                let c = k + BLOCK_CLOCKS + NCRC;
                let status = [[0, 1, 1, 1], [0, 1, 1, 1], [1, 1, 1, 1], [0, 1, 1, 1], [1, 1, 1, 1]];
                let busy_from = c + 5;
                self.run_clock(out, c, busy_from + TRAILING);
                self.drive_dat(out, c, &status);
                self.log(BusItem::CrcStatus { accepted: true }, c, 5);
                // Busy: DAT0 low until the card is done programming (the whole write's
                // busy after the last block, ends at the model's `done`).
                self.set_dat(out, busy_from, 0, 0);
                let release = if last {
                    // The host sees the busy end at the clock that samples DAT0 high: the
                    // command is done then (up to a clock and a half after the model's done,
                    // or after the blocks when the model's busy would end before them).
                    let release = self.first_clock_after(timing.done).max(busy_from + 1);
                    self.delay(timing, self.rise(release));
                    release
                } else {
                    busy_from + BLOCK_BUSY
                };
                self.run_clock(out, release - TRAILING, release + TRAILING);
                self.set_dat(out, release, 0, 1);
                self.log(BusItem::Busy, busy_from, release - busy_from);
                k = release + NAC;
            }
            return;
        }
        // Reads: the blocks back to back (Nac apart), the last ending where the model's
        // data phase ends, none before the response.
        let total = n * BLOCK_CLOCKS + (n - 1) * NAC;
        let (_, end) = timing.data.unwrap_or((issue, issue));
        let last_end = end.div_euclid(self.period);
        let k_first = (last_end - total).max(resp_end + NAC);
        let mut k = k_first;
        for (b, bytes) in blocks.iter().enumerate() {
            let clocks = encode::data_block(bytes, 4, false);
            self.run_clock(out, k - 2, k + BLOCK_CLOCKS - 1 + TRAILING);
            self.drive_dat(out, k, &clocks);
            self.log(BusItem::Block { block: b as u32, write: false, crc: crcs(&clocks) }, k, BLOCK_CLOCKS);
            k += BLOCK_CLOCKS + NAC;
        }
        let data_end = self.rise(k_first + total);
        if data_end > end {
            let late = data_end - end;
            if let Some((s, e)) = timing.data.as_mut() {
                *s += late;
                *e += late;
            }
            timing.dma_done = timing.dma_done.map(|d| d + late);
            timing.done += late;
        }
    }

    /// Moves `done` to `at` when it came earlier.
    fn delay(&self, timing: &mut CmdTiming, at: Ps) {
        if timing.done < at {
            timing.done = at;
        }
    }
}

/// The CRC16 of each line of an encoded block (the 16 clocks before the end bit).
fn crcs(clocks: &[[u8; 4]]) -> [u16; 4] {
    let n = clocks.len();
    let mut out = [0u16; 4];
    for c in &clocks[n - 17..n - 1] {
        for (l, crc) in out.iter_mut().enumerate() {
            *crc = (*crc << 1) | u16::from(c[l]);
        }
    }
    out
}

/// The bytes of `sectors` 512-byte sectors from `sector`: a fixed pseudo-random pattern of
/// the sector number, so a block's content and CRCs are known without a file.
pub fn sector_bytes(sector: u64, sectors: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity((sectors as usize) * BLOCK);
    for s in sector..sector + sectors {
        let mut x = s.wrapping_mul(0xd1b5_4a32_d192_ed03);
        for _ in 0..BLOCK / 8 {
            // splitmix64
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            out.extend_from_slice(&(z ^ (z >> 31)).to_be_bytes());
        }
    }
    out
}

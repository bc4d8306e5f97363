//! SD card, native (SD) mode: the CMD line and the DAT0–3 lines, sampled on CLK rising.
//!
//! CMD: a token starts with a 0 bit; its second (transmission) bit says who sends it —
//! 1 the host (a 48-bit command), 0 the card (a response, 136 bits for R2, else 48). The
//! token's bits are parsed with nom ([`crate::bits`]); CRC7 is checked for commands and for
//! R1/R1b/R6/R7 over the token, for R2 over the CID/CSD register (R3 has none). A command
//! after CMD55 is an ACMD. A bit spans from its CLK rise to the next; the last bit as long
//! as the one before (sigrok's spans).
//!
//! DAT: after a data command (reads: CMD17/18, CMD6, CMD19, CMD30, CMD56, ACMD13/22/51;
//! writes: CMD24/25, CMD27, CMD42) blocks are expected: a start bit (DAT0 low), the data
//! on 1 or 4 lines (4: a nibble per clock, DAT3 the high bit), a CRC16 per line and an end
//! bit. CMD23's count, or CMD12, ends a multiple-block transfer; CMD16 sets the block
//! length (ACMD51 reads 8 bytes, CMD6/ACMD13/CMD19 64, ACMD22/CMD30 4). After a written
//! block the card sends a CRC status token on DAT0 (start, 3 status bits, end) and then
//! holds DAT0 low while busy; an R1b response may be followed by busy too. The bus width is
//! 4 when dat1–3 are given (or `width=4`), changed by ACMD6.
//!
//! Rows: `cmd` {index, app, arg, crc_ok, name, seq}; `response` {type, index (of the
//! command it answers), raw_index, arg, crc_ok, seq, latency_clocks, latency_ps};
//! `data` {bytes, crc_ok, block, seq, cmd, dir, first, last, hex}; `crc-status` {status,
//! accepted}; `busy` {seq, block, cmd}; `warnings`.

use crate::bits::{parse_line_block, parse_token48, parse_token136};
use crate::crc::{bits_of, crc7, crc16};
use crate::names::{command_name, response_type};
use crate::params::{Channels, Params};
use crate::signal::Clock;
use crate::spec::Stage;
use crate::stream::Machine;
use crate::{DecodeError, Sink, Value};

#[derive(Debug, Clone, Copy)]
struct Config {
    width: u32,
    block_len: usize,
}

/// The SD decoder, fed with the changes of CLK, CMD and the DAT lines in time order: at
/// each CLK rise it reads CMD and DAT from the levels after that rise.
#[derive(Debug)]
pub(crate) struct Sd {
    clk: u32,
    cmd: u32,
    /// DAT0.. given, by bit.
    dat: Vec<u32>,
    clk_level: u8,
    clock_index: u64,
    token: Token,
    bus: Bus,
}

impl Sd {
    pub(crate) fn new(stage: &Stage, channels: &mut dyn Channels, clock: Clock) -> Result<Self, DecodeError> {
        let mut p = Params::new(&crate::registry::SD, stage);
        let clk = p.required("clk", channels)?;
        let cmd = p.required("cmd", channels)?;
        let dat: Vec<Option<u32>> = vec![
            p.channel("dat0", channels)?,
            p.channel("dat1", channels)?,
            p.channel("dat2", channels)?,
            p.channel("dat3", channels)?,
        ];
        let four = dat.iter().all(Option::is_some);
        let width = p.option("width", if four { 4 } else { 1 }, |s| match s {
            "1" => Ok(1),
            "4" => Ok(4),
            _ => Err("expected 1 or 4".into()),
        })?;
        let block_len = p.option("block", 512usize, |s| match s.parse::<usize>() {
            Ok(n) if (1..=4096).contains(&n) => Ok(n),
            _ => Err("expected a block length from 1 to 4096 bytes".into()),
        })?;
        p.finish()?;
        if width == 4 && !four {
            return Err(DecodeError::Config {
                decoder: "sd".into(),
                message: "width=4 needs dat0, dat1, dat2 and dat3".into(),
            });
        }
        if dat[0].is_none() && dat.iter().any(Option::is_some) {
            return Err(DecodeError::Config { decoder: "sd".into(), message: "dat1–3 need dat0".into() });
        }
        let dat: Vec<u32> = dat.into_iter().flatten().collect();
        Ok(Self::on_bits(clk, cmd, dat, Config { width, block_len }, clock))
    }

    fn on_bits(clk: u32, cmd: u32, dat: Vec<u32>, cfg: Config, clock: Clock) -> Self {
        let bus = Bus {
            clock,
            cfg,
            seq: 0,
            app_next: false,
            sent: None,
            block_count: None,
            transfer: None,
            dat: Dat::Idle,
            unmarked: None,
            have_dat: !dat.is_empty(),
            dat_lines: dat.len(),
        };
        Sd { clk, cmd, dat, clk_level: 0, clock_index: 0, token: Token::default(), bus }
    }

    /// A CLK rise at `t`: CMD and DAT as `levels` hold them.
    fn rise(&mut self, t: i64, levels: u64, sink: &mut Sink) {
        self.clock_index += 1;
        let clock_index = self.clock_index;
        let c = ((levels >> self.cmd) & 1) as u8;
        let token = &mut self.token;
        if token.bits.is_empty() {
            if c == 0 {
                *token = Token { bits: vec![0], ticks: vec![t], len: 48, first_clock: clock_index };
            }
        } else {
            token.bits.push(c);
            token.ticks.push(t);
            if token.bits.len() == 2 && c == 0 {
                let expected = self.bus.sent.filter(|s| !s.answered).and_then(|s| s.response);
                token.len = if expected == Some("R2") { 136 } else { 48 };
            }
            if token.bits.len() == token.len {
                let done = std::mem::take(token);
                self.bus.token(&done, clock_index, sink);
            }
        }
        if self.bus.have_dat {
            let mut dat = [1u8; 4];
            for (d, &b) in dat.iter_mut().zip(&self.dat) {
                *d = ((levels >> b) & 1) as u8;
            }
            self.bus.dat_clock(t, &dat[..self.dat.len()], sink);
        }
    }
}

impl Machine for Sd {
    fn start(&mut self, levels: u64, _: &mut Sink) {
        self.clk_level = ((levels >> self.clk) & 1) as u8;
    }

    #[inline]
    fn change(&mut self, t: i64, changed: u64, levels: u64, sink: &mut Sink) {
        if (changed >> self.clk) & 1 == 0 {
            return;
        }
        self.clk_level = ((levels >> self.clk) & 1) as u8;
        if self.clk_level == 1 {
            self.rise(t, levels, sink);
        }
    }

    fn finish(&mut self, ends: &[i64], sink: &mut Sink) -> Result<(), DecodeError> {
        let end = ends[self.clk as usize];
        self.bus.put_unmarked(sink);
        if !self.token.bits.is_empty() {
            let ss = self.token.ticks[0];
            sink.error(ss, end, "cut", "CMD token cut off by the end of the capture");
        }
        match self.bus.dat {
            Dat::Block { start, .. } | Dat::CrcStatus { start, .. } => {
                sink.error(start, end, "cut", "data block cut off by the end of the capture");
            }
            Dat::Busy { start } => {
                // Busy starts a clock after the CRC status token's end bit, which may be past the
                // last sample: then the warning is where busy would have begun.
                sink.error(start, end.max(start), "cut", "busy until the end of the capture");
            }
            _ => {}
        }
        Ok(())
    }
}

impl Sd {
    /// The earliest tick at which an annotation not yet put can start, or `None` when none
    /// is under way (the next starts at a CLK rise still to come). Annotations are put when
    /// they end, the CMD line's and the DAT lines' apart, so they come out of start order;
    /// this says which of those put are final.
    pub(crate) fn open_since(&self) -> Option<i64> {
        let token = self.token.ticks.first().copied();
        // A command still unanswered: the next command puts "no response" at its start.
        let unanswered = self.bus.sent.filter(|s| !s.answered && s.response.is_some()).map(|s| s.ss);
        let dat = match self.bus.dat {
            Dat::Block { start, .. } | Dat::CrcStatus { start, .. } | Dat::Busy { start } => Some(start),
            Dat::WaitCrcStatus { block_end, .. } => Some(block_end),
            Dat::Idle | Dat::WaitStart | Dat::MaybeBusy { .. } => None,
        };
        let unmarked = self.bus.unmarked.as_ref().map(|u| u.ss);
        [token, unanswered, dat, unmarked].into_iter().flatten().min()
    }

    /// Annotations made but not yet put: a data block held back for a CMD12.
    pub(crate) fn held_back(&self) -> usize {
        usize::from(self.bus.unmarked.is_some())
    }
}

/// A data block's annotation held back while a CMD12 may still mark it the last.
#[derive(Debug)]
struct Unmarked {
    ss: i64,
    es: i64,
    text: String,
    fields: Vec<(&'static str, Value)>,
}

/// The command most recently sent, until its response (or the next command).
#[derive(Debug, Clone, Copy)]
struct Sent {
    seq: u64,
    index: u8,
    app: bool,
    response: Option<&'static str>,
    end_tick: i64,
    end_clock: u64,
    ss: i64,
    answered: bool,
}

/// A data transfer in progress.
#[derive(Debug, Clone, Copy)]
struct Transfer {
    seq: u64,
    cmd: u8,
    write: bool,
    block_len: usize,
    /// Blocks still expected; `None` until CMD12.
    remaining: Option<u64>,
    done: u64,
}

#[derive(Debug)]
enum Dat {
    Idle,
    WaitStart,
    Block { start: i64, bits: [Vec<u8>; 4], prev: i64 },
    WaitCrcStatus { clocks: u32, block_end: i64 },
    CrcStatus { start: i64, bits: Vec<u8>, prev: i64 },
    Busy { start: i64 },
    MaybeBusy { clocks: u32 },
}

/// The bus state above the bit level: commands, responses and data transfers.
#[derive(Debug)]
struct Bus {
    clock: Clock,
    cfg: Config,
    seq: u64,
    app_next: bool,
    sent: Option<Sent>,
    block_count: Option<u64>,
    transfer: Option<Transfer>,
    dat: Dat,
    /// The last data block, while it is not marked the last of its transfer: a CMD12 marks
    /// it so. It is put once marked, or when the next block is put, since a CMD12 marks
    /// only the last block.
    unmarked: Option<Unmarked>,
    have_dat: bool,
    /// DAT lines given: ACMD6 can only switch to 4 bits when all four are.
    dat_lines: usize,
}

/// The command-line token being received.
#[derive(Debug, Default)]
struct Token {
    bits: Vec<u8>,
    ticks: Vec<i64>,
    len: usize,
    first_clock: u64,
}

/// Marks a failed annotation with the field `error` naming why (analyses leave pairs that
/// end at one out of their statistics).
fn push_failure(fields: &mut Vec<(&'static str, Value)>, crc_bad: bool, stopped: bool) {
    let why = if stopped {
        "clock-stopped"
    } else if crc_bad {
        "crc"
    } else {
        return;
    };
    fields.push(("error", Value::Str(why.into())));
}

/// How much longer than its shortest bit a token's longest bit may be before the clock is
/// taken to have stopped inside it: a host gates the clock between tokens, not within one,
/// and bits read across a stopped clock are another token's or noise.
const STOPPED_CLOCK_FACTOR: i64 = 16;

/// Whether the clock stopped inside a token whose bits were sampled at `ticks`.
fn clock_stopped(ticks: &[i64]) -> bool {
    let gaps = ticks.windows(2).map(|w| w[1] - w[0]);
    match (gaps.clone().filter(|&g| g > 0).min(), gaps.max()) {
        (Some(shortest), Some(longest)) => longest > STOPPED_CLOCK_FACTOR * shortest,
        _ => false,
    }
}

impl Bus {
    fn token(&mut self, token: &Token, clock_index: u64, sink: &mut Sink) {
        let n = token.ticks.len();
        let ss = token.ticks[0];
        let last = token.ticks[n - 1];
        let es = last + (last - token.ticks[n - 2]);
        let stopped = clock_stopped(&token.ticks);
        if stopped {
            sink.error(
                ss,
                es,
                "clock-stopped",
                "the clock stopped inside this token: its bits are not one token",
            );
        }
        if token.bits[1] == 1 {
            self.command(token, ss, es, clock_index, stopped, sink);
        } else {
            self.response(token, ss, es, stopped, sink);
        }
    }

    fn command(&mut self, token: &Token, ss: i64, es: i64, clock_index: u64, stopped: bool, sink: &mut Sink) {
        let Ok(t) = parse_token48(&token.bits) else { return };
        if let Some(prev) = self.sent
            && !prev.answered
            && prev.response.is_some()
        {
            sink.error(prev.ss, ss, "no-response", format!("CMD{} got no response", prev.index));
        }
        let app = self.app_next && t.index != 55;
        self.app_next = t.index == 55;
        let crc_ok = crc7(token.bits[..40].iter().copied()) == t.crc && t.end == 1;
        if !crc_ok {
            sink.error(
                ss,
                es,
                "crc",
                format!("CMD{}: CRC7 0x{:02x} is wrong or the end bit is 0", t.index, t.crc),
            );
        }
        self.seq += 1;
        let name = command_name(t.index, app);
        let prefix = if app { "ACMD" } else { "CMD" };
        let mut fields = vec![
            ("index", Value::UInt(t.index.into())),
            ("app", Value::Bool(app)),
            ("arg", Value::Hex(t.arg.into())),
            ("crc", Value::Hex(t.crc.into())),
            ("crc_ok", Value::Bool(crc_ok)),
            ("name", Value::Str(name.into())),
            ("seq", Value::UInt(self.seq)),
            ("read", Value::Bool(!app && matches!(t.index, 17 | 18))),
        ];
        push_failure(&mut fields, !crc_ok, stopped);
        sink.put(ss, es, "cmd", format!("{prefix}{} ({name}) arg 0x{:08x}", t.index, t.arg), fields);
        self.sent = Some(Sent {
            seq: self.seq,
            index: t.index,
            app,
            response: response_type(t.index, app),
            end_tick: es,
            end_clock: clock_index,
            ss,
            answered: false,
        });
        self.command_effects(t.index, app, t.arg, sink);
    }

    /// What a command does to the data lines.
    fn command_effects(&mut self, index: u8, app: bool, arg: u32, sink: &mut Sink) {
        let block_len = self.cfg.block_len;
        let (read_len, write) = match (app, index) {
            (false, 17 | 18) => (Some(block_len), false),
            (false, 24 | 25) => (Some(block_len), true),
            (false, 6 | 19) | (true, 13) => (Some(64), false),
            (true, 51) => (Some(8), false),
            (true, 22) | (false, 30) => (Some(4), false),
            (false, 56) => (Some(block_len), arg & 1 == 0),
            (false, 27) => (Some(16), true),
            (false, 42) => (Some(block_len), true),
            (false, 16) => {
                if (1..=4096).contains(&arg) {
                    self.cfg.block_len = arg as usize;
                }
                (None, false)
            }
            (false, 23) => {
                self.block_count = Some(u64::from(arg & 0xffff)).filter(|&n| n > 0);
                (None, false)
            }
            (true, 6) => {
                self.cfg.width = if arg & 3 == 2 && self.dat_lines == 4 { 4 } else { 1 };
                (None, false)
            }
            (false, 12) => {
                // Sent while a block is under way, CMD12 makes that block the last (it ends
                // the transfer below); between blocks, the one before.
                if !matches!(self.dat, Dat::Block { .. }) {
                    if let Some(u) = self.unmarked.as_mut()
                        && let Some(f) = u.fields.iter_mut().find(|f| f.0 == "last")
                    {
                        f.1 = Value::Bool(true);
                    }
                    self.put_unmarked(sink);
                }
                if let Some(tr) = self.transfer.as_mut() {
                    tr.remaining = Some(0);
                }
                if matches!(self.dat, Dat::WaitStart) {
                    self.dat = Dat::Idle;
                    self.transfer = None;
                }
                (None, false)
            }
            _ => (None, false),
        };
        let Some(len) = read_len else { return };
        let multiple = !app && matches!(index, 18 | 25);
        let remaining = if multiple { self.block_count.take() } else { Some(1) };
        if !multiple {
            self.block_count = None;
        }
        self.transfer =
            Some(Transfer { seq: self.seq, cmd: index, write, block_len: len, remaining, done: 0 });
        if self.have_dat {
            self.dat = Dat::WaitStart;
        }
    }

    fn response(&mut self, token: &Token, ss: i64, es: i64, stopped: bool, sink: &mut Sink) {
        let sent = self.sent.filter(|s| !s.answered);
        let ty = sent.and_then(|s| s.response).unwrap_or("R1");
        let mut fields = vec![("type", Value::Str(ty.into()))];
        let (raw_index, crc_ok, detail) = if token.len == 136 {
            let Ok(t) = parse_token136(&token.bits) else { return };
            let ok = crc7(bits_of(&t.register)) == t.crc && t.end == 1;
            let hex: String = t.register.iter().map(|b| format!("{b:02x}")).collect();
            fields.push(("register", Value::Str(hex.clone().into())));
            (63u8, Some(ok), format!("CID/CSD {hex}"))
        } else {
            let Ok(t) = parse_token48(&token.bits) else { return };
            fields.push(("arg", Value::Hex(t.arg.into())));
            let ok = (ty != "R3").then(|| crc7(token.bits[..40].iter().copied()) == t.crc && t.end == 1);
            let detail = match ty {
                "R3" => format!("OCR 0x{:08x}", t.arg),
                "R6" => format!("RCA 0x{:04x} status 0x{:04x}", t.arg >> 16, t.arg & 0xffff),
                "R7" => format!("voltage 0x{:x} pattern 0x{:02x}", (t.arg >> 8) & 0xf, t.arg & 0xff),
                _ => format!("status 0x{:08x}", t.arg),
            };
            (t.index, ok, detail)
        };
        let index = sent.map_or(raw_index, |s| s.index);
        fields.push(("index", Value::UInt(index.into())));
        fields.push(("raw_index", Value::UInt(raw_index.into())));
        if let Some(ok) = crc_ok {
            fields.push(("crc_ok", Value::Bool(ok)));
            if !ok {
                sink.error(ss, es, "crc", format!("{ty}: CRC7 is wrong or the end bit is 0"));
            }
        }
        push_failure(&mut fields, crc_ok == Some(false), stopped);
        let mut text = format!("{ty} {detail}");
        if let Some(s) = sent {
            let prefix = if s.app { "ACMD" } else { "CMD" };
            text = format!("{ty} ({prefix}{}) {detail}", s.index);
            let clocks = token.first_clock.saturating_sub(s.end_clock);
            let ps = self.clock.time_of(ss) - self.clock.time_of(s.end_tick);
            fields.push(("seq", Value::UInt(s.seq)));
            fields.push(("app", Value::Bool(s.app)));
            fields.push(("latency_clocks", Value::UInt(clocks)));
            fields.push(("latency_ps", Value::Int(ps)));
        } else {
            sink.count("unexpected-response");
        }
        sink.put(ss, es, "response", text, fields);
        if let Some(s) = self.sent.as_mut() {
            s.answered = true;
        }
        if ty == "R1b" && self.have_dat && matches!(self.dat, Dat::Idle) {
            self.dat = Dat::MaybeBusy { clocks: 0 };
        }
    }

    /// Puts the data block held back for a CMD12, if any.
    fn put_unmarked(&mut self, sink: &mut Sink) {
        if let Some(u) = self.unmarked.take() {
            sink.put(u.ss, u.es, "data", u.text, u.fields);
        }
    }

    fn busy_fields(&self) -> Vec<(&'static str, Value)> {
        match self.transfer {
            Some(tr) => vec![
                ("seq", Value::UInt(tr.seq)),
                ("cmd", Value::UInt(tr.cmd.into())),
                ("block", Value::UInt(tr.done.saturating_sub(1))),
            ],
            None => {
                let s = self.sent.map_or(0, |s| s.seq);
                let c = self.sent.map_or(0, |s| u64::from(s.index));
                vec![("seq", Value::UInt(s)), ("cmd", Value::UInt(c))]
            }
        }
    }

    /// After a block: the next one, or the end of the transfer.
    fn after_block(&mut self) {
        let more = self.transfer.is_some_and(|tr| tr.remaining.is_none_or(|r| r > 0));
        if more {
            self.dat = Dat::WaitStart;
        } else {
            self.dat = Dat::Idle;
            self.transfer = None;
        }
    }

    fn dat_clock(&mut self, t: i64, levels: &[u8], sink: &mut Sink) {
        let width = self.cfg.width as usize;
        match &mut self.dat {
            Dat::Idle => {}
            Dat::MaybeBusy { clocks } => {
                *clocks += 1;
                if levels[0] == 0 {
                    self.dat = Dat::Busy { start: t };
                } else if *clocks > 8 {
                    self.dat = Dat::Idle;
                }
            }
            Dat::WaitStart => {
                if levels[0] == 0 {
                    self.dat = Dat::Block { start: t, bits: Default::default(), prev: t };
                }
            }
            Dat::Block { start, bits, prev } => {
                for (l, b) in bits.iter_mut().take(width).enumerate() {
                    b.push(levels.get(l).copied().unwrap_or(1));
                }
                let len = self.transfer.map_or(self.cfg.block_len, |tr| tr.block_len);
                let data_bits = len * 8 / width;
                if bits[0].len() < data_bits + 17 {
                    *prev = t;
                    return;
                }
                let (ss, es) = (*start, t + (t - *prev));
                let lines = std::mem::take(bits);
                self.block(ss, es, &lines[..width], data_bits, sink);
            }
            Dat::WaitCrcStatus { clocks, block_end } => {
                *clocks += 1;
                if levels[0] == 0 {
                    self.dat = Dat::CrcStatus { start: t, bits: Vec::new(), prev: t };
                } else if *clocks > 16 {
                    let ss = *block_end;
                    sink.error(ss, t, "no-crc-status", "no CRC status token after the written block");
                    self.after_block();
                }
            }
            Dat::CrcStatus { start, bits, prev } => {
                bits.push(levels[0]);
                if bits.len() < 4 {
                    *prev = t;
                    return;
                }
                let (ss, es) = (*start, t + (t - *prev));
                let status = (bits[0] << 2) | (bits[1] << 1) | bits[2];
                let end_ok = bits[3] == 1;
                let (text, accepted) = match status {
                    0b010 => ("accepted", true),
                    0b101 => ("CRC error", false),
                    0b110 => ("write error", false),
                    _ => ("invalid", false),
                };
                if !accepted || !end_ok {
                    sink.error(ss, es, "crc-status", format!("CRC status: {text}"));
                }
                sink.put(
                    ss,
                    es,
                    "crc-status",
                    format!("CRC status: {text}"),
                    vec![("status", Value::UInt(status.into())), ("accepted", Value::Bool(accepted))],
                );
                self.dat = Dat::Busy { start: es };
            }
            Dat::Busy { start } => {
                if levels[0] == 1 {
                    let ss = *start;
                    if t > ss {
                        let fields = self.busy_fields();
                        sink.put(ss, t, "busy", "Busy", fields);
                    }
                    if self.transfer.is_some_and(|tr| tr.write) {
                        self.after_block();
                    } else {
                        self.dat = Dat::Idle;
                    }
                }
            }
        }
    }

    fn block(&mut self, ss: i64, es: i64, lines: &[Vec<u8>], data_bits: usize, sink: &mut Sink) {
        let mut crc_ok = true;
        let mut end_ok = true;
        let mut line_data: Vec<Vec<u8>> = Vec::with_capacity(lines.len());
        for bits in lines {
            match parse_line_block(bits, data_bits) {
                Ok(b) => {
                    crc_ok &= crc16(bits_of(&b.data)) == b.crc;
                    end_ok &= b.end == 1;
                    line_data.push(b.data);
                }
                Err(_) => {
                    // Block lengths that are not whole bytes per line: check CRC on the bits.
                    let crc_bits = &bits[data_bits..data_bits + 16];
                    let crc = crc_bits.iter().fold(0u16, |a, &b| (a << 1) | u16::from(b));
                    crc_ok &= crc16(bits[..data_bits].iter().copied()) == crc;
                    end_ok &= bits[data_bits + 16] == 1;
                    line_data.push(crate::bits::pack(&bits[..data_bits]));
                }
            }
        }
        let bytes: Vec<u8> = if lines.len() == 1 {
            line_data.swap_remove(0)
        } else {
            // Clock c carries DAT3..DAT0 as bits 3..0 of nibble c; two nibbles a byte.
            let line_bits: Vec<Vec<u8>> = line_data.iter().map(|d| bits_of(d).collect()).collect();
            (0..data_bits / 2)
                .map(|j| {
                    let nib = |c: usize| (0..4).fold(0u8, |acc, l| acc | (line_bits[l][c] << l));
                    (nib(2 * j) << 4) | nib(2 * j + 1)
                })
                .collect()
        };
        let tr = self.transfer;
        let block = tr.map_or(0, |t| t.done);
        let write = tr.is_some_and(|t| t.write);
        let last = tr.is_some_and(|t| t.remaining.is_some_and(|r| r <= 1));
        if !crc_ok {
            sink.error(ss, es, "crc", format!("data block {block}: CRC16 mismatch"));
        }
        if !end_ok {
            sink.error(ss, es, "end-bit", format!("data block {block}: end bit is 0"));
        }
        let dir = if write { "write" } else { "read" };
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let mut fields = vec![
            ("bytes", Value::UInt(bytes.len() as u64)),
            ("crc_ok", Value::Bool(crc_ok && end_ok)),
            ("block", Value::UInt(block)),
            ("dir", Value::Str(dir.into())),
            ("write", Value::Bool(write)),
            ("first", Value::Bool(block == 0)),
            ("last", Value::Bool(last)),
            ("width", Value::UInt(lines.len() as u64)),
            ("hex", Value::Str(hex.into())),
        ];
        if let Some(t) = tr {
            fields.push(("seq", Value::UInt(t.seq)));
            fields.push(("cmd", Value::UInt(t.cmd.into())));
        }
        push_failure(&mut fields, !(crc_ok && end_ok), false);
        let status = if crc_ok && end_ok { "CRC ok" } else { "CRC BAD" };
        self.put_unmarked(sink);
        let text = format!("{dir} block {block}: {} bytes, {status}", bytes.len());
        if last {
            sink.put(ss, es, "data", text, fields);
        } else {
            self.unmarked = Some(Unmarked { ss, es, text, fields });
        }
        if let Some(t) = self.transfer.as_mut() {
            t.done += 1;
            t.remaining = t.remaining.map(|r| r.saturating_sub(1));
        }
        if write {
            self.dat = Dat::WaitCrcStatus { clocks: 0, block_end: es };
        } else {
            self.after_block();
        }
    }
}

/// Encoders for tests and generated captures: the bits the bus carries.
pub mod encode {
    use crate::crc::{bits_of, crc7, crc16};

    /// A 48-bit command token (`host`) or response token, MSB first.
    pub fn token48(host: bool, index: u8, arg: u32) -> Vec<u8> {
        let head = [
            (u8::from(host) << 6) | (index & 0x3f),
            (arg >> 24) as u8,
            (arg >> 16) as u8,
            (arg >> 8) as u8,
            arg as u8,
        ];
        let mut bits: Vec<u8> = bits_of(&head).collect();
        let crc = crc7(bits.iter().copied());
        bits.extend((0..7).rev().map(|i| (crc >> i) & 1));
        bits.push(1);
        bits
    }

    /// The per-clock levels of DAT0..DAT(width-1) for one data block: start bit, data,
    /// CRC16 per line (`corrupt` flips one CRC bit of line 0), end bit.
    pub fn data_block(data: &[u8], width: usize, corrupt: bool) -> Vec<[u8; 4]> {
        let bits: Vec<u8> = bits_of(data).collect();
        let mut lines: Vec<Vec<u8>> = vec![Vec::new(); width];
        for (i, b) in bits.iter().enumerate() {
            // 4-bit: bit i of the stream goes to line 3 - (i % 4).
            let line = if width == 1 { 0 } else { 3 - (i % 4) };
            lines[line].push(*b);
        }
        for (l, line) in lines.iter_mut().enumerate() {
            let mut crc = crc16(line.iter().copied());
            if corrupt && l == 0 {
                crc ^= 1;
            }
            line.extend((0..16).rev().map(|i| ((crc >> i) & 1) as u8));
            line.push(1);
        }
        // The start bit: every line of the bus width low, unused lines high.
        let start = if width == 4 { [0, 0, 0, 0] } else { [0, 1, 1, 1] };
        let mut clocks = vec![start];
        for c in 0..lines[0].len() {
            let mut v = [1u8; 4];
            for (l, line) in lines.iter().enumerate() {
                v[l] = line[c];
            }
            clocks.push(v);
        }
        clocks
    }
}

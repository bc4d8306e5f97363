//! SD card in SPI mode, stacked on SPI words (MOSI from the host, MISO from the card).
//!
//! A command is six MOSI bytes starting `01xxxxxx` (index, 32-bit argument, CRC7 and end
//! bit, parsed with nom). The response follows after at least one byte of 0xFF: R1 (one
//! byte, bit 7 clear), R1b (R1 then busy: MISO 0x00 bytes), R2 (two bytes: CMD13/ACMD13),
//! R3 (CMD58) and R7 (CMD8), five bytes. Reads (CMD17/18, CMD9/10, CMD6, ACMD13/22/51)
//! answer with a start token 0xFE on MISO, the block and its CRC16; writes (CMD24, CMD25)
//! send 0xFE (0xFC for each block of CMD25, 0xFD to stop) on MOSI, the block and CRC16,
//! and the card answers with a data response token `xxx0sss1` (010 accepted, 101 CRC
//! error, 110 write error) and holds MISO at 0x00 while busy. Spans are whole SPI words:
//! a command from its first byte to its sixth, R1 its byte, data its data bytes (without
//! token and CRC), busy from the first 0x00 byte to the last — sigrok's `sdcard_spi` spans.
//!
//! Rows: `cmd` {index, app, arg, crc, crc_ok, seq}, `response` {type, index, r1, arg, seq,
//! latency_ps}, `token`, `data` {bytes, crc_ok, seq, cmd, dir, block, hex}, `data-response`
//! {status, accepted}, `busy` {seq}, `warnings`.

use crate::bits::parse_token48;
use crate::crc::{bits_of, crc7, crc16};
use crate::names::command_name;
use crate::params::{Params, number};
use crate::spec::Stage;
use crate::spi::Word;
use crate::{DecodeError, Sink, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    None,
    Read,
    Write,
}

#[derive(Debug, Clone, Copy)]
struct Cmd {
    seq: u64,
    index: u8,
    app: bool,
    resp_len: usize,
    busy_after: bool,
    data: Kind,
    data_len: usize,
    multiple: bool,
}

#[derive(Debug)]
enum State {
    Idle,
    Command { ss: i64, bytes: Vec<u8> },
    WaitResponse { skipped: u32 },
    Response { ss: i64, bytes: Vec<u8> },
    Busy { first: Option<(i64, i64)> },
    WaitToken { waited: u32, block: u64 },
    Data { ss: i64, bytes: Vec<u8>, block: u64 },
    WaitDataResponse { block: u64, waited: u32 },
}

/// The SD-over-SPI decoder, fed one SPI word at a time.
#[derive(Debug)]
pub(crate) struct SdSpi {
    state: State,
    cmd: Option<Cmd>,
    seq: u64,
    app_next: bool,
    block_len: usize,
    /// SPI mode starts with CRCs off (hosts send 0xFFFF); CMD59 with bit 0 set turns them on.
    crc_on: bool,
    /// The end of the last word, where a frame cut off by the end of the capture ends.
    last_es: Option<i64>,
}

impl SdSpi {
    pub(crate) fn new(stage: &Stage) -> Result<Self, DecodeError> {
        let mut p = Params::new(&crate::registry::SD_SPI, stage);
        let block = p.option("block", 512u64, number(1, 4096))? as usize;
        p.finish()?;
        Ok(Self::with_block(block))
    }

    fn with_block(block_len: usize) -> Self {
        SdSpi {
            state: State::Idle,
            cmd: None,
            seq: 0,
            app_next: false,
            block_len,
            crc_on: false,
            last_es: None,
        }
    }

    pub(crate) fn word(&mut self, w: &Word, sink: &mut Sink) {
        self.last_es = Some(w.es);
        let (mosi, miso) = (w.mosi.unwrap_or(0xff) as u8, w.miso.unwrap_or(0xff) as u8);
        // A new command while waiting for card data (CMD12 during CMD18) starts over.
        let starts_command = mosi & 0xc0 == 0x40 && miso == 0xff;
        if starts_command && matches!(self.state, State::WaitToken { .. } | State::WaitResponse { .. }) {
            if let (State::WaitResponse { .. }, Some(c)) = (&self.state, self.cmd) {
                sink.error(w.ss, w.es, "no-response", format!("CMD{} got no response", c.index));
            }
            self.state = State::Idle;
        }
        self.state = match std::mem::replace(&mut self.state, State::Idle) {
            State::Idle if mosi & 0xc0 == 0x40 => State::Command { ss: w.ss, bytes: vec![mosi] },
            State::Idle => State::Idle,
            State::Command { ss, mut bytes } => {
                bytes.push(mosi);
                if bytes.len() < 6 {
                    State::Command { ss, bytes }
                } else {
                    let c = command(
                        ss,
                        w.es,
                        &bytes,
                        &mut self.seq,
                        &mut self.app_next,
                        &mut self.block_len,
                        sink,
                    );
                    if !c.app && c.index == 59 {
                        self.crc_on = bytes[4] & 1 == 1;
                    }
                    self.cmd = Some(c);
                    State::WaitResponse { skipped: 0 }
                }
            }
            State::WaitResponse { skipped } => {
                // The byte right after the command is never the response (NCR >= 1).
                if skipped == 0 || miso == 0xff {
                    if skipped > 9 {
                        sink.error(w.ss, w.es, "no-response", "no response within 8 bytes");
                        State::Idle
                    } else {
                        State::WaitResponse { skipped: skipped + 1 }
                    }
                } else {
                    let st = State::Response { ss: w.ss, bytes: vec![miso] };
                    finish_response(st, w, self.cmd, sink)
                }
            }
            State::Response { ss, mut bytes } => {
                bytes.push(miso);
                finish_response(State::Response { ss, bytes }, w, self.cmd, sink)
            }
            State::Busy { first } => {
                if miso == 0x00 {
                    State::Busy { first: Some((first.map_or(w.ss, |f| f.0), w.es)) }
                } else {
                    if let Some((ss, es)) = first {
                        let s = self.cmd.map_or(0, |c| c.seq);
                        sink.put(ss, es, "busy", "Card is busy", vec![("seq", Value::UInt(s))]);
                    }
                    match self.cmd {
                        Some(c) if c.data == Kind::Write && c.multiple => {
                            State::WaitToken { waited: 0, block: 0 }
                        }
                        _ => State::Idle,
                    }
                }
            }
            State::WaitToken { waited, block } => {
                let c = self.cmd.unwrap_or(EMPTY);
                let token = if c.data == Kind::Write { mosi } else { miso };
                match token {
                    0xfe | 0xfc => {
                        sink.put(
                            w.ss,
                            w.es,
                            "token",
                            "Start block",
                            vec![("token", Value::UInt(token.into()))],
                        );
                        State::Data { ss: w.ss, bytes: Vec::new(), block }
                    }
                    0xfd if c.data == Kind::Write => {
                        sink.put(
                            w.ss,
                            w.es,
                            "token",
                            "Stop transmission",
                            vec![("token", Value::UInt(0xfd))],
                        );
                        State::Busy { first: None }
                    }
                    0xff => State::WaitToken { waited: waited + 1, block },
                    t if c.data == Kind::Read && t & 0xf0 == 0 => {
                        sink.error(w.ss, w.es, "data-error", format!("data error token 0x{t:02x}"));
                        State::Idle
                    }
                    _ => State::WaitToken { waited: waited + 1, block },
                }
            }
            State::Data { ss, mut bytes, block } => {
                let c = self.cmd.unwrap_or(EMPTY);
                let byte = if c.data == Kind::Write { mosi } else { miso };
                let ss = if bytes.is_empty() { w.ss } else { ss };
                bytes.push(byte);
                if bytes.len() == c.data_len {
                    sink.put(ss, w.es, "data", String::new(), Vec::new());
                }
                if bytes.len() < c.data_len + 2 {
                    State::Data { ss, bytes, block }
                } else {
                    data_block(&bytes, c, block, self.crc_on, sink);
                    match c.data {
                        Kind::Write => State::WaitDataResponse { block, waited: 0 },
                        _ if c.multiple => State::WaitToken { waited: 0, block: block + 1 },
                        _ => State::Idle,
                    }
                }
            }
            State::WaitDataResponse { block, waited } => {
                if miso != 0xff && miso & 0x11 == 0x01 {
                    let status = (miso >> 1) & 7;
                    let (text, ok) = match status {
                        0b010 => ("Data accepted", true),
                        0b101 => ("Data rejected (CRC error)", false),
                        0b110 => ("Data rejected (write error)", false),
                        _ => ("Data response (invalid)", false),
                    };
                    if !ok {
                        sink.error(w.ss, w.es, "data-response", text);
                    }
                    sink.put(
                        w.ss,
                        w.es,
                        "data-response",
                        text,
                        vec![
                            ("status", Value::UInt(status.into())),
                            ("accepted", Value::Bool(ok)),
                            ("block", Value::UInt(block)),
                        ],
                    );
                    State::Busy { first: None }
                } else if waited > 16 {
                    sink.error(w.ss, w.es, "no-data-response", "no data response token");
                    State::Idle
                } else {
                    State::WaitDataResponse { block, waited: waited + 1 }
                }
            }
        };
    }

    /// The first tick of the frame under way (a command, a response, a data block, a
    /// busy stretch), if one is. Its annotation is put, or amended (a data block's, once
    /// its CRC arrives), when the frame ends, or an error at its start if the capture
    /// ends first; everything else is put at the word being fed. So no annotation still to
    /// come starts before this, or before the next word.
    pub(crate) fn open_since(&self) -> Option<i64> {
        match self.state {
            State::Command { ss, .. } | State::Response { ss, .. } | State::Data { ss, .. } => Some(ss),
            State::Busy { first: Some((ss, _)) } => Some(ss),
            _ => None,
        }
    }

    pub(crate) fn finish(&mut self, sink: &mut Sink) {
        match self.state {
            State::Command { ss, .. } | State::Response { ss, .. } | State::Data { ss, .. } => {
                let end = self.last_es.unwrap_or(ss);
                sink.error(ss, end, "cut", "frame cut off by the end of the capture");
            }
            _ => {}
        }
    }
}

const EMPTY: Cmd = Cmd {
    seq: 0,
    index: 0,
    app: false,
    resp_len: 1,
    busy_after: false,
    data: Kind::None,
    data_len: 0,
    multiple: false,
};

fn command(
    ss: i64,
    es: i64,
    bytes: &[u8],
    seq: &mut u64,
    app_next: &mut bool,
    block_len: &mut usize,
    sink: &mut Sink,
) -> Cmd {
    let bits: Vec<u8> = bits_of(bytes).collect();
    let (index, arg, crc, end) = match parse_token48(&bits) {
        Ok(t) => (t.index, t.arg, t.crc, t.end),
        Err(_) => (bytes[0] & 0x3f, 0, 0, 0),
    };
    let app = *app_next && index != 55;
    *app_next = index == 55;
    let crc_ok = crc7(bits[..40].iter().copied()) == crc && end == 1;
    // SPI mode runs without CRC unless CMD59 turns it on; only CMD0 and CMD8 must carry it.
    let crc_failed = !crc_ok && !app && (index == 0 || index == 8);
    if crc_failed {
        sink.error(ss, es, "crc", format!("CMD{index}: CRC7 0x{crc:02x} is wrong"));
    }
    *seq += 1;
    let name = command_name(index, app);
    let prefix = if app { "ACMD" } else { "CMD" };
    let mut fields = vec![
        ("index", Value::UInt(index.into())),
        ("app", Value::Bool(app)),
        ("arg", Value::Hex(arg.into())),
        ("crc", Value::Hex(crc.into())),
        ("crc_ok", Value::Bool(crc_ok)),
        ("name", Value::Str(name.into())),
        ("seq", Value::UInt(*seq)),
    ];
    // A failed command: analyses leave pairs that end at it out of their statistics.
    if crc_failed {
        fields.push(("error", Value::Str("crc".into())));
    }
    sink.put(ss, es, "cmd", format!("{prefix}{index} ({name}) arg 0x{arg:08x}"), fields);
    if !app && index == 16 && (1..=4096).contains(&arg) {
        *block_len = arg as usize;
    }
    let (resp_len, busy_after) = match (app, index) {
        (false, 8 | 58) => (5, false),
        (false, 13) | (true, 13) => (2, false),
        (false, 12 | 28 | 29 | 38) => (1, true),
        _ => (1, false),
    };
    let (data, data_len, multiple) = match (app, index) {
        (false, 17) => (Kind::Read, *block_len, false),
        (false, 18) => (Kind::Read, *block_len, true),
        (false, 9 | 10) => (Kind::Read, 16, false),
        (false, 6) | (true, 13) => (Kind::Read, 64, false),
        (true, 51) => (Kind::Read, 8, false),
        (true, 22) => (Kind::Read, 4, false),
        (false, 24) => (Kind::Write, *block_len, false),
        (false, 25) => (Kind::Write, *block_len, true),
        _ => (Kind::None, 0, false),
    };
    Cmd { seq: *seq, index, app, resp_len, busy_after, data, data_len, multiple }
}

/// Adds a response byte; when the response is complete, annotates it and says what comes next.
fn finish_response(state: State, w: &Word, cmd: Option<Cmd>, sink: &mut Sink) -> State {
    let State::Response { ss, bytes } = state else { return state };
    let c = cmd.unwrap_or(EMPTY);
    if bytes.len() < c.resp_len {
        return State::Response { ss, bytes };
    }
    let r1 = bytes[0];
    let ty = match (c.resp_len, c.busy_after) {
        (5, _) if c.index == 58 => "R3",
        (5, _) => "R7",
        (2, _) => "R2",
        (_, true) => "R1b",
        _ => "R1",
    };
    let arg = bytes[1..].iter().fold(0u64, |a, &b| (a << 8) | u64::from(b));
    let prefix = if c.app { "ACMD" } else { "CMD" };
    let mut fields = vec![
        ("type", Value::Str(ty.into())),
        ("index", Value::UInt(c.index.into())),
        ("r1", Value::UInt(r1.into())),
        ("seq", Value::UInt(c.seq)),
    ];
    if bytes.len() > 1 {
        fields.push(("arg", Value::Hex(arg)));
    }
    let flags: Vec<&str> = [
        (0x01, "idle"),
        (0x02, "erase reset"),
        (0x04, "illegal command"),
        (0x08, "CRC error"),
        (0x10, "erase sequence error"),
        (0x20, "address error"),
        (0x40, "parameter error"),
    ]
    .iter()
    .filter(|(m, _)| r1 & m != 0)
    .map(|(_, s)| *s)
    .collect();
    let mut text = format!("{ty} ({prefix}{}): 0x{r1:02x}", c.index);
    if !flags.is_empty() {
        text.push_str(&format!(" [{}]", flags.join(", ")));
    }
    if bytes.len() > 1 {
        text.push_str(&format!(" 0x{arg:0w$x}", w = (bytes.len() - 1) * 2));
    }
    sink.put(ss, w.es, "response", text, fields);
    let error = r1 & 0x7c != 0;
    if c.busy_after {
        State::Busy { first: None }
    } else if c.data != Kind::None && !error {
        State::WaitToken { waited: 0, block: 0 }
    } else {
        State::Idle
    }
}

/// Annotates a received block (data bytes then two CRC bytes), replacing the placeholder
/// put when its last data byte arrived. A CRC16 mismatch is an error only once CMD59 has
/// turned CRCs on; `crc_ok` reports the comparison either way.
fn data_block(bytes: &[u8], c: Cmd, block: u64, crc_on: bool, sink: &mut Sink) {
    let n = c.data_len;
    let crc = (u16::from(bytes[n]) << 8) | u16::from(bytes[n + 1]);
    let crc_ok = crc16(bits_of(&bytes[..n])) == crc;
    let dir = if c.data == Kind::Write { "write" } else { "read" };
    let Some(i) = sink.anns.iter().rposition(|a| a.row == "data" && a.text.is_empty()) else { return };
    let (ss, es) = (sink.start_tick(i), sink.end_tick(i));
    if !crc_ok && crc_on {
        sink.error(ss, es, "crc", format!("data block {block}: CRC16 0x{crc:04x} mismatch"));
    }
    let hex: String = bytes[..n].iter().map(|b| format!("{b:02x}")).collect();
    let a = &mut sink.anns[i];
    let status = match (crc_ok, crc_on) {
        (true, _) => "CRC ok",
        (false, true) => "CRC BAD",
        (false, false) => "no CRC (CRCs off)",
    };
    a.text = format!("{dir} block {block}: {n} bytes, {status}").into();
    a.fields = vec![
        ("bytes", Value::UInt(n as u64)),
        ("crc_ok", Value::Bool(crc_ok)),
        ("block", Value::UInt(block)),
        ("dir", Value::Str(dir.into())),
        ("write", Value::Bool(c.data == Kind::Write)),
        ("first", Value::Bool(block == 0)),
        ("seq", Value::UInt(c.seq)),
        ("cmd", Value::UInt(c.index.into())),
        ("hex", Value::Str(hex.into())),
    ];
    if !crc_ok && crc_on {
        a.fields.push(("error", Value::Str("crc".into())));
    }
}

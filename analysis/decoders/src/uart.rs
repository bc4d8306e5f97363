//! UART: one line (tx or rx), idle high (low with `invert=1`). A frame starts at a falling
//! edge; bit `n` is sampled at `ceil(start + (w - 1) / 2 + n * w)` ticks for a bit width of
//! `w` ticks (the middle sample of the bit, sigrok's sample points exactly). Data is LSB
//! first; parity and the first stop bit are checked; the next frame is searched after the
//! stop bit's sample point.
//!
//! Rows: `data` {value, error: "frame"/"parity" when the frame is bad} spanning
//! `first data sample - floor(w/2) .. last data sample + ceil(w/2)`; `warnings` for frame
//! and parity errors, false start bits and frames cut off by the end of the capture.
//!
//! `baud=auto` averages the one-bit pulses: those from the shortest pulse that occurs at
//! least twice (so one glitch does not set the rate) to 1.5 times it; it then rounds to a
//! standard rate within 3 %. The rate needs the whole line, so with `auto` a line's changes
//! (only that line's) are kept until the capture ends, and the whole line is framed at the
//! rate its pulses give. A live decode frames them as they arrive at the rate measured so
//! far (a histogram of the pulse widths, kept as changes arrive); when that rate changes,
//! the line is framed again from its first change ([`Uart::frames_again`]), so that once
//! the rate holds to the end, what was framed is what the end frames.
//!
//! The decoder is fed changes in time order: a frame's sample points are read as later
//! changes (or the end of the capture) pass them, and the frame is annotated once its stop
//! bit is read. A frame whose stop bit lies past the end of the capture is cut off (one
//! warning, and nothing after it is decoded); a false start bit is reported once the end of
//! its frame is known to be inside the capture, so a cut frame is reported as cut either way.

use crate::params::{Channels, Params, flag, number};
#[cfg(test)]
use crate::signal::Line;
use crate::spec::Stage;
use crate::stream::Machine;
use crate::{DecodeError, Sink, Value};
use std::collections::{BTreeMap, VecDeque};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Parity {
    None,
    Even,
    Odd,
}

#[derive(Debug, Clone, Copy)]
struct Config {
    /// Bit width in ticks.
    width: f64,
    bits: u32,
    parity: Parity,
    invert: bool,
}

const STANDARD_BAUDS: &[u64] = &[
    300, 600, 1200, 2400, 4800, 9600, 14_400, 19_200, 28_800, 38_400, 57_600, 76_800, 115_200, 230_400,
    250_000, 460_800, 500_000, 921_600, 1_000_000, 1_500_000, 2_000_000, 3_000_000, 4_000_000,
];

/// The UART decoder: one [`UartLine`] per line given (tx first), each with its own sink so
/// the annotations come out line by line, as a decode of each line in turn gives them.
#[derive(Debug)]
pub(crate) struct Uart {
    lines: Vec<(UartLine, Sink)>,
}

impl Uart {
    pub(crate) fn new(
        stage: &Stage,
        channels: &mut dyn Channels,
        rate: f64,
        sink: &Sink,
    ) -> Result<Self, DecodeError> {
        let mut p = Params::new(&crate::registry::UART, stage);
        let tx = p.channel("tx", channels)?;
        let rx = p.channel("rx", channels)?;
        let baud = p.option("baud", None, |s| {
            if s == "auto" {
                return Ok(None);
            }
            match s.parse::<f64>() {
                Ok(b) if b.is_finite() && b > 0.0 => Ok(Some(b)),
                _ => Err("expected a baud rate in bit/s, or auto".into()),
            }
        })?;
        let bits = p.option("bits", 8, number(5, 9))? as u32;
        let parity = p.option("parity", Parity::None, |s| match s {
            "none" => Ok(Parity::None),
            "even" => Ok(Parity::Even),
            "odd" => Ok(Parity::Odd),
            _ => Err("expected none, even or odd".into()),
        })?;
        // Only the first stop bit is checked (as sigrok does); the option is validated so a
        // typo is an error, not a silent default.
        p.option("stop", 1.0, |s| match s {
            "1" | "1.5" | "2" => Ok(1.0),
            _ => Err("expected 1, 1.5 or 2".into()),
        })?;
        let invert = p.option("invert", false, flag)?;
        p.finish()?;
        let given: Vec<(&'static str, u32)> =
            [("tx", tx), ("rx", rx)].into_iter().filter_map(|(n, b)| b.map(|b| (n, b))).collect();
        if given.is_empty() {
            return Err(DecodeError::Config {
                decoder: "uart".into(),
                message: format!(
                    "needs `tx=CHANNEL` or `rx=CHANNEL`; channels: {}",
                    channels.names().join(", ")
                ),
            });
        }
        let mut lines = Vec::with_capacity(given.len());
        for (dir, bit) in given {
            let mode = match baud {
                Some(baud) => Mode::Fixed(Framer::new(config(baud, rate, bits, parity, invert)?)),
                None => Mode::Auto { initial: 0, ticks: Vec::new(), widths: BTreeMap::new(), live: None },
            };
            lines.push((UartLine { dir, bit, bits, parity, invert, rate, mode }, sink.empty_like()));
        }
        Ok(Uart { lines })
    }
}

fn config(baud: f64, rate: f64, bits: u32, parity: Parity, invert: bool) -> Result<Config, DecodeError> {
    let cfg = Config { width: rate / baud, bits, parity, invert };
    if cfg.width < 1.0 {
        return Err(DecodeError::Config {
            decoder: "uart".into(),
            message: format!("{baud} baud is faster than the capture's {rate} samples/s"),
        });
    }
    Ok(cfg)
}

impl Uart {
    /// Each line's own annotations so far (merged into the stack's sink at the end).
    pub(crate) fn line_sinks(&self) -> impl Iterator<Item = &Sink> {
        self.lines.iter().map(|(_, sink)| sink)
    }

    pub(crate) fn line_sinks_mut(&mut self) -> impl Iterator<Item = &mut Sink> {
        self.lines.iter_mut().map(|(_, sink)| sink)
    }

    /// Reads each line's sample points before tick `fed` (no change comes before it, so the
    /// level there is the level now: what the line's next change would read, read sooner)
    /// and returns the earliest tick at which an annotation not yet put can start: the
    /// start of a frame or a false start bit still open, else `fed`. A `baud=auto` line is
    /// framed at the rate measured so far first (from its first change again when that
    /// rate changed: [`Self::frames_again`]); while no rate can be measured, nothing of it
    /// is final. `None` when a rate is faster than the capture.
    pub(crate) fn open_since(&mut self, fed: i64) -> Option<i64> {
        let mut open = fed;
        for (line, sink) in &mut self.lines {
            if !line.frame_so_far(fed, sink).ok()? {
                // No rate yet: nothing of it starts before its first change, nor, at the
                // end, the error that no rate was found; an idle line holds back no other.
                open = open.min(line.first_change().unwrap_or(fed));
                continue;
            }
            let f = match &mut line.mode {
                Mode::Fixed(f) => f,
                Mode::Auto { live: Some(l), .. } => &mut l.framer,
                Mode::Auto { live: None, .. } => continue,
            };
            f.read_points_before(fed, line.dir, sink);
            let starts = f.frame.map(|fr| fr.start).into_iter().chain(f.glitches.front().map(|g| g.start));
            open = starts.fold(open, i64::min);
        }
        Some(open)
    }

    /// With `baud=auto`: whether a line's rate measured now differs from the one it was
    /// framed at so far, so that the next [`Self::open_since`] (or the end) frames it from
    /// its first change again and what was taken of this decoder is void.
    pub(crate) fn frames_again(&self) -> bool {
        self.lines.iter().any(|(line, _)| line.frames_again())
    }

    /// Moves the annotations of every line that start before `reach` into `out`, in start
    /// order, tx before rx on equal starts: as the end merges the lines.
    pub(crate) fn take_before(&mut self, reach: latscope_model::Ps, out: &mut Vec<crate::Annotation>) {
        let from = out.len();
        for (_, sink) in &mut self.lines {
            sink.take_before(reach, out);
        }
        // Stable: TX's, taken first, stay before RX's on equal starts.
        crate::sort_by_start(&mut out[from..]);
    }
}

impl Machine for Uart {
    fn start(&mut self, levels: u64, _: &mut Sink) {
        for (line, _) in &mut self.lines {
            line.start(((levels >> line.bit) & 1) as u8);
        }
    }

    #[inline]
    fn change(&mut self, t: i64, changed: u64, levels: u64, _: &mut Sink) {
        for (line, sink) in &mut self.lines {
            if (changed >> line.bit) & 1 != 0 {
                line.change(t, ((levels >> line.bit) & 1) as u8, sink);
            }
        }
    }

    fn finish(&mut self, ends: &[i64], sink: &mut Sink) -> Result<(), DecodeError> {
        for (line, own) in &mut self.lines {
            line.finish(ends[line.bit as usize], own)?;
            sink.append(std::mem::take(own));
        }
        Ok(())
    }
}

/// One line: frames found as its changes arrive, or with `baud=auto` its changes kept
/// until the end.
#[derive(Debug)]
struct UartLine {
    dir: &'static str,
    bit: u32,
    bits: u32,
    parity: Parity,
    invert: bool,
    rate: f64,
    mode: Mode,
}

#[derive(Debug)]
enum Mode {
    Fixed(Framer),
    /// The line's changes, and how many pulses of each width (ticks) they hold.
    Auto {
        initial: u8,
        ticks: Vec<i64>,
        widths: BTreeMap<i64, u64>,
        live: Option<AutoLive>,
    },
}

impl UartLine {
    fn start(&mut self, level: u8) {
        match &mut self.mode {
            Mode::Fixed(f) => f.level = level,
            Mode::Auto { initial, .. } => *initial = crate::signal::binary(level),
        }
    }

    fn change(&mut self, t: i64, level: u8, sink: &mut Sink) {
        match &mut self.mode {
            Mode::Fixed(f) => f.change(t, level, self.dir, sink),
            Mode::Auto { ticks, widths, .. } => {
                if let Some(&last) = ticks.last() {
                    *widths.entry(t - last).or_default() += 1;
                }
                ticks.push(t);
            }
        }
    }

    /// With `baud=auto`: the tick of the line's first change.
    fn first_change(&self) -> Option<i64> {
        match &self.mode {
            Mode::Auto { ticks, .. } => ticks.first().copied(),
            Mode::Fixed(_) => None,
        }
    }

    /// With `baud=auto`: whether the rate measured now differs from the one the line was
    /// framed at so far.
    fn frames_again(&self) -> bool {
        match &self.mode {
            Mode::Auto { widths, live: Some(live), .. } => {
                baud_of_widths(widths, self.rate) != Some(live.baud)
            }
            _ => false,
        }
    }

    /// With `baud=auto`, live: frames the changes not framed yet at the rate measured so far,
    /// from the first change again (into an emptied `sink`) when that rate changed, and
    /// reads the sample points before tick `fed`. `false` while no rate can be measured.
    fn frame_so_far(&mut self, fed: i64, sink: &mut Sink) -> Result<bool, DecodeError> {
        let (dir, rate, bits, parity, invert) = (self.dir, self.rate, self.bits, self.parity, self.invert);
        let Mode::Auto { initial, ticks, widths, live } = &mut self.mode else { return Ok(true) };
        let Some(baud) = baud_of_widths(widths, rate) else { return Ok(false) };
        if live.as_ref().is_none_or(|l| l.baud != baud) {
            let mut framer = Framer::new(config(baud, rate, bits, parity, invert)?);
            framer.level = *initial;
            *sink = sink.empty_like();
            *live = Some(AutoLive { baud, framer, next: 0 });
        }
        let Some(l) = live.as_mut() else { return Ok(false) };
        for (k, &t) in ticks.iter().enumerate().skip(l.next) {
            // The level after change k: the initial level, flipped k + 1 times.
            l.framer.change(t, *initial ^ ((k + 1) & 1) as u8, dir, sink);
        }
        l.next = ticks.len();
        l.framer.read_points_before(fed, dir, sink);
        Ok(true)
    }

    fn finish(&mut self, end: i64, sink: &mut Sink) -> Result<(), DecodeError> {
        let dir = self.dir;
        if matches!(self.mode, Mode::Auto { .. }) {
            // Framed at the rate the whole line gives: carried on when it is the rate framed
            // at so far, else from the first change again.
            if !self.frame_so_far(end, sink)? {
                let from = self.first_change().unwrap_or(end);
                sink.error(from, end, "no-baud", format!("{dir}: too few edges to measure the baud rate"));
                return Ok(());
            }
        }
        match &mut self.mode {
            Mode::Fixed(f) => f.finish(end, dir, sink),
            Mode::Auto { live: Some(l), .. } => l.framer.finish(end, dir, sink),
            Mode::Auto { live: None, .. } => {}
        }
        Ok(())
    }
}

/// A `baud=auto` line framed as it arrives: the rate, the framer, and how many of the
/// line's changes it has read.
#[derive(Debug)]
struct AutoLive {
    baud: f64,
    framer: Framer,
    next: usize,
}

/// A frame being read: its start edge and what its sample points gave so far.
#[derive(Debug, Clone, Copy)]
struct Frame {
    start: i64,
    /// The next sample point to read: 0 the start bit, 1.. the data bits, then parity and stop.
    next: u32,
    value: u64,
    parity_ok: bool,
}

/// A false start bit whose frame may still run past the end of the capture.
#[derive(Debug, Clone, Copy)]
struct Glitch {
    start: i64,
    point: i64,
    last_point: i64,
}

/// Frames of one line at a known bit width.
#[derive(Debug)]
struct Framer {
    cfg: Config,
    /// The line's level now (not inverted).
    level: u8,
    /// Start edges at or before this tick are inside an earlier frame.
    after: i64,
    frame: Option<Frame>,
    glitches: VecDeque<Glitch>,
}

impl Framer {
    fn new(cfg: Config) -> Self {
        Framer { cfg, level: 1, after: i64::MIN, frame: None, glitches: VecDeque::new() }
    }

    fn parity_bits(&self) -> u32 {
        u32::from(self.cfg.parity != Parity::None)
    }

    /// Sample point `n` of a frame starting at `start`: the middle sample of bit `n`.
    fn point(&self, start: i64, n: u32) -> i64 {
        let w = self.cfg.width;
        (start as f64 + (w - 1.0) / 2.0 + f64::from(n) * w).ceil() as i64
    }

    fn last_index(&self) -> u32 {
        1 + self.cfg.bits + self.parity_bits()
    }

    fn half(&self) -> (i64, i64) {
        let w = self.cfg.width;
        ((w / 2.0).floor() as i64, (w / 2.0).ceil() as i64)
    }

    fn change(&mut self, t: i64, level: u8, dir: &'static str, sink: &mut Sink) {
        self.read_points_before(t, dir, sink);
        self.level = level;
        let idle = u8::from(!self.cfg.invert);
        if self.frame.is_none() && level != idle && t > self.after {
            self.frame = Some(Frame { start: t, next: 0, value: 0, parity_ok: true });
        }
    }

    /// Reads the sample points of the frame in progress that lie before `t` (the level
    /// there is the level now), and reports false start bits whose frames end before `t`.
    fn read_points_before(&mut self, t: i64, dir: &'static str, sink: &mut Sink) {
        while let Some(g) = self.glitches.front().copied()
            && g.last_point < t
        {
            self.glitches.pop_front();
            self.report_glitch(g, dir, sink);
        }
        while let Some(mut f) = self.frame {
            let p = self.point(f.start, f.next);
            if p >= t {
                return;
            }
            let bit = self.level ^ u8::from(self.cfg.invert);
            let last = self.last_index();
            match f.next {
                0 if bit != 0 => {
                    // A glitch, not a start bit: look for the next edge after this sample point.
                    let g = Glitch { start: f.start, point: p, last_point: self.point(f.start, last) };
                    if g.last_point < t {
                        self.report_glitch(g, dir, sink);
                    } else {
                        self.glitches.push_back(g);
                    }
                    self.after = p;
                    self.frame = None;
                    return;
                }
                0 => {}
                n if n <= self.cfg.bits => f.value |= u64::from(bit) << (n - 1),
                n if n < last => f.parity_ok = parity_ok(self.cfg.parity, bit, f.value),
                _ => {
                    self.complete(f, bit, dir, sink);
                    self.after = p;
                    self.frame = None;
                    return;
                }
            }
            f.next += 1;
            self.frame = Some(f);
        }
    }

    fn report_glitch(&self, g: Glitch, dir: &'static str, sink: &mut Sink) {
        let (half_floor, half_ceil) = self.half();
        sink.error(
            g.point - half_floor,
            g.point + half_ceil,
            "frame",
            format!("{dir}: frame error (start bit)"),
        );
    }

    /// The frame's stop bit was read as `stop`: its errors and its data annotation.
    fn complete(&self, f: Frame, stop: u8, dir: &'static str, sink: &mut Sink) {
        let (half_floor, half_ceil) = self.half();
        let mut error = None;
        if !f.parity_ok {
            let p = self.point(f.start, 1 + self.cfg.bits);
            error = Some("parity");
            sink.error(p - half_floor, p + half_ceil, "parity", format!("{dir}: parity error"));
        }
        if stop != 1 {
            let last_point = self.point(f.start, self.last_index());
            error = error.or(Some("frame"));
            sink.error(
                last_point - half_floor,
                last_point + half_ceil,
                "frame",
                format!("{dir}: frame error (stop bit)"),
            );
        }
        let digits = (self.cfg.bits as usize).div_ceil(4);
        let mut fields = vec![("value", Value::UInt(f.value)), ("dir", Value::Str(dir.into()))];
        if let Some(e) = error {
            fields.push(("error", Value::Str(e.into())));
        }
        sink.put(
            self.point(f.start, 1) - half_floor,
            self.point(f.start, self.cfg.bits) + half_ceil,
            "data",
            crate::hex_upper(f.value, digits),
            fields,
        );
    }

    /// The capture ended at `end`: the sample points up to it are read; a frame (or a false
    /// start bit's frame) that runs past it is cut off, and nothing after it counts.
    fn finish(&mut self, end: i64, dir: &'static str, sink: &mut Sink) {
        let last = self.last_index();
        while let Some(g) = self.glitches.pop_front() {
            if g.last_point > end {
                sink.error(g.start, end, "cut", format!("{dir}: frame cut off by the end of the capture"));
                return;
            }
            self.report_glitch(g, dir, sink);
        }
        let Some(f) = self.frame else { return };
        if self.point(f.start, last) > end {
            sink.error(f.start, end, "cut", format!("{dir}: frame cut off by the end of the capture"));
            self.frame = None;
            return;
        }
        // Every point left lies at or before the end, where the level is the level now.
        self.read_points_before(i64::MAX, dir, sink);
    }
}

/// The baud rate from the shortest pulse seen at least twice (within 10 %): the mean of
/// the pulses up to 1.5 times that long (one-bit pulses, whose width in samples alternates
/// when the bit is not a whole number of samples), rounded to a standard rate when one is
/// within 3 %; from how many pulses of each width (ticks) a line holds, so that a live
/// decode keeps the count as changes arrive.
fn baud_of_widths(widths: &BTreeMap<i64, u64>, rate: f64) -> Option<f64> {
    // The shortest width with another at most 10 % longer (itself, or the next one up).
    let mut distinct = widths.iter().peekable();
    let shortest = loop {
        let (&w, &n) = distinct.next()?;
        let near = n > 1 || distinct.peek().is_some_and(|&(&next, _)| (next as f64) <= w as f64 * 1.1);
        if near {
            break w;
        }
    };
    let (mut sum, mut count) = (0i64, 0u64);
    for (&w, &n) in widths.range(shortest..).take_while(|&(&w, _)| (w as f64) < shortest as f64 * 1.5) {
        sum += w * n as i64;
        count += n;
    }
    let mean = sum as f64 / count.max(1) as f64;
    let baud = rate / mean;
    let standard = STANDARD_BAUDS.iter().map(|&b| b as f64).find(|b| ((baud - b) / b).abs() <= 0.03);
    Some(standard.unwrap_or(baud))
}

fn parity_ok(parity: Parity, bit: u8, value: u64) -> bool {
    let ones = value.count_ones() + u32::from(bit);
    match parity {
        Parity::None => true,
        Parity::Even => ones.is_multiple_of(2),
        Parity::Odd => !ones.is_multiple_of(2),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_line(line: &Line, dir: &'static str, cfg: &Config, sink: &mut Sink) {
        let mut f = Framer::new(*cfg);
        f.level = line.initial;
        for (t, l) in line.changes() {
            f.change(t, l, dir, sink);
        }
        f.finish(line.end, dir, sink);
    }

    /// A line carrying `bytes` at `width` ticks per bit, 8N1, with `gap` idle bits between.
    pub(crate) fn uart_line(bytes: &[u8], width: i64, gap: i64) -> Line {
        let mut changes = Vec::new();
        let mut t = 10 * width;
        for &b in bytes {
            let mut frame = vec![0u8];
            frame.extend((0..8).map(|i| (b >> i) & 1));
            frame.push(1);
            for bit in frame {
                changes.push((t, bit));
                t += width;
            }
            t += gap * width;
        }
        Line::new("TX", 1, &changes, t + 10 * width)
    }

    /// The rate measured as the whole decode first measured it: every pulse width sorted.
    fn measure_sorted(line: &Line, rate: f64) -> Option<f64> {
        let mut widths: Vec<i64> = line.ticks.windows(2).map(|w| w[1] - w[0]).filter(|&w| w > 0).collect();
        widths.sort_unstable();
        let shortest = widths.iter().enumerate().find_map(|(i, &w)| {
            let near = widths[i + 1..].first().is_some_and(|&n| (n as f64) <= w as f64 * 1.1);
            near.then_some(w)
        })?;
        let one_bit: Vec<i64> =
            widths.iter().copied().filter(|&w| w >= shortest && (w as f64) < shortest as f64 * 1.5).collect();
        let mean = one_bit.iter().sum::<i64>() as f64 / one_bit.len().max(1) as f64;
        let baud = rate / mean;
        let standard = STANDARD_BAUDS.iter().map(|&b| b as f64).find(|b| ((baud - b) / b).abs() <= 0.03);
        Some(standard.unwrap_or(baud))
    }

    fn measure_baud(line: &Line, rate: f64) -> Option<f64> {
        let mut widths: BTreeMap<i64, u64> = BTreeMap::new();
        for w in line.ticks.windows(2).map(|w| w[1] - w[0]) {
            *widths.entry(w).or_default() += 1;
        }
        baud_of_widths(&widths, rate)
    }

    /// The histogram of pulse widths gives the rate sorting every width gave: on lines of
    /// several rates and gaps, with glitches and on random changes.
    #[test]
    fn the_rate_from_a_histogram_of_widths_is_the_rate_from_every_width_sorted() {
        let mut lines = vec![Line::new("TX", 1, &[], 100), Line::new("TX", 1, &[(5, 0), (9, 1)], 100)];
        for (width, gap) in [(10, 1), (13, 0), (87, 3), (868, 2)] {
            lines.push(uart_line(b"Hi\x00\xff\x55", width, gap));
            lines.push(uart_line(&[0xCC, 0xCC, 0x33], width, gap));
        }
        let mut x = 0x2545_f491_u32;
        for _ in 0..50 {
            let mut t = 0;
            let changes: Vec<(i64, u8)> = (0..200)
                .map(|k| {
                    x ^= x << 13;
                    x ^= x >> 17;
                    x ^= x << 5;
                    t += 1 + i64::from(x % 40);
                    (t, (k % 2) as u8)
                })
                .collect();
            lines.push(Line::new("TX", 1, &changes, t + 10));
        }
        for line in &lines {
            for rate in [1_000.0, 1e6, 24e6] {
                assert_eq!(measure_baud(line, rate), measure_sorted(line, rate), "{:?}", line.ticks);
            }
        }
    }

    #[test]
    fn bytes_come_back_with_sigrok_spans() {
        let line = uart_line(b"Hi\x00\xff", 10, 1);
        let cfg = Config { width: 10.0, bits: 8, parity: Parity::None, invert: false };
        let mut sink = Sink::default();
        decode_line(&line, "tx", &cfg, &mut sink);
        let data: Vec<_> = sink.anns.iter().filter(|a| a.row == "data").collect();
        assert_eq!(data.iter().map(|a| &*a.text).collect::<Vec<_>>(), ["48", "69", "00", "FF"]);
        // Start edge at 100: bit 1 sampled at ceil(100 + 4.5 + 10) = 115, span 110..190.
        assert_eq!((data[0].start, data[0].end), (110, 190));
        assert!(sink.errors.is_empty(), "{:?}", sink.errors);
        assert_eq!(measure_baud(&line, 1_000.0), Some(100.0));
    }

    #[test]
    fn a_wrong_baud_gives_counted_errors_not_a_panic() {
        let line = uart_line(&[0x55, 0xAA, 0x0F, 0xF0, 0x00], 10, 0);
        let cfg = Config { width: 23.0, bits: 8, parity: Parity::Even, invert: false };
        let mut sink = Sink::default();
        decode_line(&line, "tx", &cfg, &mut sink);
        assert!(sink.errors.values().sum::<u64>() > 0);
    }
}

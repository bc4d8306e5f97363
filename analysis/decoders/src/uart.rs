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
//! standard rate within 3 %.

use crate::params::{Params, flag, number};
use crate::spec::Stage;
use crate::{DecodeError, Inputs, Line, Sink, Stream, Value};
use std::borrow::Cow;

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

pub(crate) fn run(stage: &Stage, inputs: &Inputs<'_>, sink: &mut Sink) -> Result<Stream, DecodeError> {
    let mut p = Params::new(&crate::registry::UART, stage);
    let tx = p.channel("tx", inputs)?;
    let rx = p.channel("rx", inputs)?;
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
    let lines: Vec<(&'static str, Cow<'_, Line>)> =
        [("tx", tx), ("rx", rx)].into_iter().filter_map(|(n, l)| l.map(|l| (n, l))).collect();
    if lines.is_empty() {
        return Err(DecodeError::Config {
            decoder: "uart".into(),
            message: format!(
                "needs `tx=CHANNEL` or `rx=CHANNEL`; channels: {}",
                inputs.channels.iter().map(|c| c.name()).collect::<Vec<_>>().join(", ")
            ),
        });
    }
    let rate = inputs.clock.rate();
    for (dir, line) in &lines {
        let baud = match baud {
            Some(b) => b,
            None => match measure_baud(line, rate) {
                Some(b) => b,
                None => {
                    sink.error(
                        0,
                        line.end,
                        "no-baud",
                        format!("{dir}: too few edges to measure the baud rate"),
                    );
                    continue;
                }
            },
        };
        let cfg = Config { width: rate / baud, bits, parity, invert };
        if cfg.width < 1.0 {
            return Err(DecodeError::Config {
                decoder: "uart".into(),
                message: format!("{baud} baud is faster than the capture's {rate} samples/s"),
            });
        }
        decode_line(line, dir, &cfg, sink);
    }
    Ok(Stream::None)
}

/// The baud rate from the shortest pulse seen at least twice (within 10 %): the mean of
/// the pulses up to 1.5 times that long (one-bit pulses, whose width in samples alternates
/// when the bit is not a whole number of samples), rounded to a standard rate when one is
/// within 3 %.
pub(crate) fn measure_baud(line: &Line, rate: f64) -> Option<f64> {
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

fn parity_ok(parity: Parity, bit: u8, value: u64) -> bool {
    let ones = value.count_ones() + u32::from(bit);
    match parity {
        Parity::None => true,
        Parity::Even => ones.is_multiple_of(2),
        Parity::Odd => !ones.is_multiple_of(2),
    }
}

fn decode_line(line: &Line, dir: &'static str, cfg: &Config, sink: &mut Sink) {
    let w = cfg.width;
    let half_floor = (w / 2.0).floor() as i64;
    let half_ceil = (w / 2.0).ceil() as i64;
    let idle = u8::from(!cfg.invert);
    let mut cur = line.cursor();
    let mut level = |t: i64| cur.level_at(t) ^ u8::from(cfg.invert);
    // The start-bit edges: changes to the active level (low, or high when inverted).
    let starts: Vec<i64> = line.changes().filter(|&(_, l)| l != idle).map(|(t, _)| t).collect();
    let mut k = 0;
    let mut after = i64::MIN;
    let parity_bits = u32::from(cfg.parity != Parity::None);
    while k < starts.len() {
        let start = starts[k];
        k += 1;
        if start <= after {
            continue;
        }
        let point = |n: u32| (start as f64 + (w - 1.0) / 2.0 + f64::from(n) * w).ceil() as i64;
        let p0 = point(0);
        let last_point = point(1 + cfg.bits + parity_bits);
        if last_point > line.end {
            sink.error(start, line.end, "cut", format!("{dir}: frame cut off by the end of the capture"));
            break;
        }
        if level(p0) != 0 {
            // A glitch, not a start bit: look for the next edge after this sample point.
            sink.error(p0 - half_floor, p0 + half_ceil, "frame", format!("{dir}: frame error (start bit)"));
            after = p0;
            continue;
        }
        let mut value = 0u64;
        for n in 0..cfg.bits {
            value |= u64::from(level(point(1 + n))) << n;
        }
        let mut error = None;
        if cfg.parity != Parity::None {
            let p = point(1 + cfg.bits);
            if !parity_ok(cfg.parity, level(p), value) {
                error = Some("parity");
                sink.error(p - half_floor, p + half_ceil, "parity", format!("{dir}: parity error"));
            }
        }
        if level(last_point) != 1 {
            error = error.or(Some("frame"));
            sink.error(
                last_point - half_floor,
                last_point + half_ceil,
                "frame",
                format!("{dir}: frame error (stop bit)"),
            );
        }
        let digits = (cfg.bits as usize).div_ceil(4);
        let mut fields = vec![("value", Value::UInt(value)), ("dir", Value::Str(dir.into()))];
        if let Some(e) = error {
            fields.push(("error", Value::Str(e.into())));
        }
        sink.put(
            point(1) - half_floor,
            point(cfg.bits) + half_ceil,
            "data",
            crate::hex_upper(value, digits),
            fields,
        );
        after = last_point;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

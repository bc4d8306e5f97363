//! SPI: bits are sampled on the clock edge the mode says (rising for CPOL=CPHA, falling
//! otherwise), only while CS is active when there is a CS line; a CS change drops a
//! partial word. A word spans from its first sampling edge to its last sampling edge plus
//! the distance between its last two (sigrok's spans exactly).
//!
//! Rows: `mosi` / `miso` {value}, `transfer` (one per CS assertion, the words of each
//! line), `warnings` (a word cut by CS).

use crate::params::{Params, flag, number};
use crate::signal::{Line, merged_changes};
use crate::spec::Stage;
use crate::{DecodeError, Inputs, Sink, Stream, Value};

/// One SPI word, for a decoder stacked on SPI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Word {
    pub ss: i64,
    pub es: i64,
    pub mosi: Option<u64>,
    pub miso: Option<u64>,
}

#[derive(Debug, Clone, Copy)]
struct Config {
    sample_on_rise: bool,
    cs_active_high: bool,
    lsb_first: bool,
    bits: u32,
}

pub(crate) fn run(stage: &Stage, inputs: &Inputs<'_>, sink: &mut Sink) -> Result<Stream, DecodeError> {
    let mut p = Params::new(&crate::registry::SPI, stage);
    let clk = p.required("clk", inputs)?;
    let mosi = p.channel("mosi", inputs)?;
    let miso = p.channel("miso", inputs)?;
    let cs = p.channel("cs", inputs)?;
    let cpol = p.option("cpol", false, flag)?;
    let cpha = p.option("cpha", false, flag)?;
    let cs_active_high = p.option("cs_active", false, |s| match s {
        "low" => Ok(false),
        "high" => Ok(true),
        _ => Err("expected low or high".into()),
    })?;
    let lsb_first = p.option("order", false, |s| match s {
        "msb" => Ok(false),
        "lsb" => Ok(true),
        _ => Err("expected msb or lsb".into()),
    })?;
    let bits = p.option("bits", 8, number(1, 64))? as u32;
    p.finish()?;
    if mosi.is_none() && miso.is_none() {
        return Err(DecodeError::Config {
            decoder: "spi".into(),
            message: "needs `mosi=CH` or `miso=CH` (or both)".into(),
        });
    }
    let cfg = Config { sample_on_rise: cpol == cpha, cs_active_high, lsb_first, bits };
    Ok(Stream::Spi(decode(&clk, mosi.as_deref(), miso.as_deref(), cs.as_deref(), &cfg, sink)))
}

#[derive(Debug, Default)]
struct Acc {
    bits: u32,
    mosi: u64,
    miso: u64,
    first: i64,
    prev: i64,
    last: i64,
}

fn decode(
    clk: &Line,
    mosi: Option<&Line>,
    miso: Option<&Line>,
    cs: Option<&Line>,
    cfg: &Config,
    sink: &mut Sink,
) -> Vec<Word> {
    let mut words = Vec::new();
    let mut mosi_c = mosi.map(Line::cursor);
    let mut miso_c = miso.map(Line::cursor);
    let active = |level: u8| (level == 1) == cfg.cs_active_high;
    let mut acc = Acc::default();
    // An open transfer: its start, its words, and the index of its annotation. The
    // annotation is put when CS asserts and completed when CS releases, so the annotations
    // come out in start order and need no sort (a tenth of a large SPI decode).
    let mut transfer: Option<(i64, Vec<u64>, Vec<u64>, usize)> = None;
    let open = |sink: &mut Sink, ss: i64| {
        sink.put(ss, ss, "transfer", "", Vec::new());
        sink.anns.len() - 1
    };
    // An annotation starting where the open transfer starts goes before it, where a stable
    // sort by start would put it (the transfer is complete only after it).
    let before_transfer = |sink: &mut Sink, transfer: &mut Option<(i64, Vec<u64>, Vec<u64>, usize)>| {
        if let Some((ts, _, _, at)) = transfer.as_mut()
            && let Some(last) = sink.anns.len().checked_sub(1)
            && sink.start_tick(last) == *ts
            && *at < last
        {
            sink.anns[*at..].rotate_right(1);
            *at += 1;
        }
    };
    let lines: Vec<&Line> = match cs {
        Some(c) => vec![clk, c],
        None => vec![clk],
    };
    if let Some(c) = cs
        && active(c.initial)
    {
        transfer = Some((0, Vec::new(), Vec::new(), open(sink, 0)));
    }
    let mut cs_level = cs.map(|c| c.initial);
    let mut clk_level = clk.initial;
    for (t, mask) in merged_changes(&lines) {
        if mask & 1 != 0 {
            clk_level ^= 1;
        }
        if mask & 2 != 0 {
            let level = cs_level.map_or(0, |l| l ^ 1);
            cs_level = Some(level);
            if acc.bits > 0 {
                sink.error(acc.first, t, "cut-word", format!("word cut by CS after {} bit(s)", acc.bits));
                before_transfer(sink, &mut transfer);
            }
            acc = Acc::default();
            if active(level) {
                if let Some((_, _, _, at)) = transfer.take() {
                    sink.anns.remove(at);
                }
                transfer = Some((t, Vec::new(), Vec::new(), open(sink, t)));
            } else if let Some((_, o, i, at)) = transfer.take() {
                let hex = |v: &[u64]| v.iter().map(|&x| crate::hex_upper(x, 2)).collect::<Vec<_>>().join(" ");
                let mut fields = vec![("words", Value::UInt(o.len().max(i.len()) as u64))];
                let mut text = Vec::new();
                if mosi.is_some() {
                    fields.push(("mosi", Value::Str(hex(&o).into())));
                    text.push(format!("MOSI {}", hex(&o)));
                }
                if miso.is_some() {
                    fields.push(("miso", Value::Str(hex(&i).into())));
                    text.push(format!("MISO {}", hex(&i)));
                }
                sink.set_end(at, t);
                let a = &mut sink.anns[at];
                a.text = text.join(" / ").into();
                a.fields = fields;
            }
        }
        if let Some(l) = cs_level
            && !active(l)
        {
            continue;
        }
        if mask & 1 == 0 || (clk_level == 1) != cfg.sample_on_rise {
            continue;
        }
        let shift = if cfg.lsb_first { acc.bits } else { cfg.bits - 1 - acc.bits };
        if let Some(c) = mosi_c.as_mut() {
            acc.mosi |= u64::from(c.level_at(t)) << shift;
        }
        if let Some(c) = miso_c.as_mut() {
            acc.miso |= u64::from(c.level_at(t)) << shift;
        }
        if acc.bits == 0 {
            acc.first = t;
        }
        acc.prev = acc.last;
        acc.last = t;
        acc.bits += 1;
        if acc.bits < cfg.bits {
            continue;
        }
        let es = if cfg.bits > 1 { acc.last + (acc.last - acc.prev) } else { acc.last };
        let word = Word {
            ss: acc.first,
            es,
            mosi: mosi.is_some().then_some(acc.mosi),
            miso: miso.is_some().then_some(acc.miso),
        };
        let digits = (cfg.bits as usize).div_ceil(4).max(2);
        for (row, v) in [("miso", word.miso), ("mosi", word.mosi)] {
            if let Some(v) = v {
                sink.put(word.ss, word.es, row, crate::hex_upper(v, digits), vec![("value", Value::UInt(v))]);
                before_transfer(sink, &mut transfer);
            }
        }
        if let Some((_, o, i, _)) = transfer.as_mut() {
            o.extend(word.mosi);
            i.extend(word.miso);
        }
        words.push(word);
        acc = Acc::default();
    }
    if acc.bits > 0 {
        sink.error(
            acc.first,
            clk.end,
            "cut-word",
            format!("word cut off by the end of the capture after {} bit(s)", acc.bits),
        );
        before_transfer(sink, &mut transfer);
    }
    // A transfer still open at the end of the capture has no annotation.
    if let Some((_, _, _, at)) = transfer {
        sink.anns.remove(at);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Mode-0 SPI of `bytes` on MOSI (MSB first), 4 ticks per clock, CS low around them.
    pub(crate) fn spi_lines(bytes: &[u8]) -> (Line, Line, Line) {
        let (mut clk, mut mosi) = (Vec::new(), Vec::new());
        let mut t = 10;
        for &b in bytes {
            for i in (0..8).rev() {
                mosi.push((t, (b >> i) & 1));
                clk.push((t + 2, 1));
                clk.push((t + 4, 0));
                t += 4;
            }
        }
        let end = t + 10;
        (
            Line::new("CLK", 0, &clk, end),
            Line::new("MOSI", 0, &mosi, end),
            Line::new("CS", 1, &[(5, 0), (t + 3, 1)], end),
        )
    }

    #[test]
    fn words_and_spans() {
        let (clk, mosi, cs) = spi_lines(&[0xA5, 0x3C]);
        let cfg = Config { sample_on_rise: true, cs_active_high: false, lsb_first: false, bits: 8 };
        let mut sink = Sink::default();
        let words = decode(&clk, Some(&mosi), None, Some(&cs), &cfg, &mut sink);
        assert_eq!(words.iter().map(|w| w.mosi).collect::<Vec<_>>(), [Some(0xA5), Some(0x3C)]);
        assert_eq!((words[0].ss, words[0].es), (12, 44));
        let t = sink.anns.iter().find(|a| a.row == "transfer").map(|a| a.text.clone());
        assert_eq!(t.as_deref(), Some("MOSI A5 3C"));
        // LSB first reverses the bits.
        let cfg = Config { lsb_first: true, ..cfg };
        let words = decode(&clk, Some(&mosi), None, Some(&cs), &cfg, &mut Sink::default());
        assert_eq!(words[0].mosi, Some(0xA5u8.reverse_bits().into()));
    }

    #[test]
    fn annotations_come_out_in_stable_start_order_without_a_sort() {
        // CS asserts on the tick of the first rising clock edge, so that word starts with
        // its transfer; a stable sort by start (of the transfer put at its end) puts the word
        // first. The second transfer is still open when the capture ends: no annotation,
        // only its cut word.
        let mut clk = Vec::new();
        for k in 0..12 {
            clk.push((5 + 4 * k, 1));
            clk.push((7 + 4 * k, 0));
        }
        let clk = Line::new("CLK", 0, &clk, 200);
        let mosi = Line::new("MOSI", 0, &[(6, 1)], 200);
        let cs = Line::new("CS", 1, &[(5, 0), (37, 1), (40, 0)], 200);
        let cfg = Config { sample_on_rise: true, cs_active_high: false, lsb_first: false, bits: 8 };
        let mut sink = Sink::default();
        decode(&clk, Some(&mosi), None, Some(&cs), &cfg, &mut sink);
        let got: Vec<(&str, i64, i64, &str)> =
            sink.anns.iter().map(|a| (a.row, a.start, a.end, &*a.text)).collect();
        assert_eq!(
            got,
            [
                ("mosi", 5, 37, "7F"),
                ("transfer", 5, 37, "MOSI 7F"),
                ("warnings", 41, 200, "word cut off by the end of the capture after 3 bit(s)"),
            ]
        );
    }
}

//! SPI: bits are sampled on the clock edge the mode says (rising for CPOL=CPHA, falling
//! otherwise), only while CS is active when there is a CS line; a CS change drops a
//! partial word. A word spans from its first sampling edge to its last sampling edge plus
//! the distance between its last two (sigrok's spans exactly).
//!
//! Rows: `mosi` / `miso` {value}, `transfer` (one per CS assertion, the words of each
//! line), `warnings` (a word cut by CS).

use crate::params::{Channels, Params, flag, number};
use crate::spec::Stage;
use crate::stream::Machine;
use crate::{DecodeError, Sink, Value};

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

#[derive(Debug, Default)]
struct Acc {
    bits: u32,
    mosi: u64,
    miso: u64,
    first: i64,
    prev: i64,
    last: i64,
}

/// An open transfer: its start, its words on each line, and the index of its annotation.
type Transfer = (i64, Vec<u64>, Vec<u64>, usize);

/// The SPI decoder, fed with the changes of its lines in time order. Words are sampled on
/// the mode's clock edge from the levels after that edge.
#[derive(Debug)]
pub(crate) struct Spi {
    clk: u32,
    mosi: Option<u32>,
    miso: Option<u32>,
    cs: Option<u32>,
    cfg: Config,
    acc: Acc,
    /// The annotation is put when CS asserts and completed when CS releases, so the
    /// annotations come out in start order and need no sort (a tenth of a large SPI decode).
    transfer: Option<Transfer>,
    cs_level: Option<u8>,
    clk_level: u8,
    /// Words for a decoder stacked on this one (kept only when one is).
    pub(crate) words: Vec<Word>,
    pub(crate) keep_words: bool,
}

impl Spi {
    pub(crate) fn new(stage: &Stage, channels: &mut dyn Channels) -> Result<Self, DecodeError> {
        let mut p = Params::new(&crate::registry::SPI, stage);
        let clk = p.required("clk", channels)?;
        let mosi = p.channel("mosi", channels)?;
        let miso = p.channel("miso", channels)?;
        let cs = p.channel("cs", channels)?;
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
        Ok(Self::on_bits(clk, mosi, miso, cs, cfg))
    }

    fn on_bits(clk: u32, mosi: Option<u32>, miso: Option<u32>, cs: Option<u32>, cfg: Config) -> Self {
        Spi {
            clk,
            mosi,
            miso,
            cs,
            cfg,
            acc: Acc::default(),
            transfer: None,
            cs_level: None,
            clk_level: 0,
            words: Vec::new(),
            keep_words: false,
        }
    }

    /// The tick of the first bit of the word under way, if one is: a decoder stacked on
    /// this one gets no word that starts earlier than it (or than the next change, if none
    /// is under way).
    pub(crate) fn word_since(&self) -> Option<i64> {
        (self.acc.bits > 0).then_some(self.acc.first)
    }

    /// The index in the sink of the open transfer's annotation, amended when CS releases.
    pub(crate) fn transfer_index(&mut self) -> Option<&mut usize> {
        self.transfer.as_mut().map(|t| &mut t.3)
    }

    /// Whether words carry both MOSI and MISO (what SD over SPI needs).
    pub(crate) fn has_both_lines(&self) -> bool {
        self.mosi.is_some() && self.miso.is_some()
    }

    fn active(&self, level: u8) -> bool {
        (level == 1) == self.cfg.cs_active_high
    }

    fn open(sink: &mut Sink, ss: i64) -> usize {
        sink.put(ss, ss, "transfer", "", Vec::new());
        sink.anns.len() - 1
    }

    /// An annotation starting where the open transfer starts goes before it, where a stable
    /// sort by start would put it (the transfer is complete only after it).
    fn before_transfer(&mut self, sink: &mut Sink) {
        if let Some((ts, _, _, at)) = self.transfer.as_mut()
            && let Some(last) = sink.anns.len().checked_sub(1)
            && sink.start_tick(last) == *ts
            && *at < last
        {
            sink.anns[*at..].rotate_right(1);
            *at += 1;
        }
    }

    fn cs_changed(&mut self, t: i64, level: u8, sink: &mut Sink) {
        self.cs_level = Some(level);
        if self.acc.bits > 0 {
            sink.error(
                self.acc.first,
                t,
                "cut-word",
                format!("word cut by CS after {} bit(s)", self.acc.bits),
            );
            self.before_transfer(sink);
        }
        self.acc = Acc::default();
        if self.active(level) {
            if let Some((_, _, _, at)) = self.transfer.take() {
                sink.anns.remove(at);
            }
            self.transfer = Some((t, Vec::new(), Vec::new(), Self::open(sink, t)));
        } else if let Some((_, o, i, at)) = self.transfer.take() {
            let hex = |v: &[u64]| v.iter().map(|&x| crate::hex_upper(x, 2)).collect::<Vec<_>>().join(" ");
            let mut fields = vec![("words", Value::UInt(o.len().max(i.len()) as u64))];
            let mut text = Vec::new();
            if self.mosi.is_some() {
                fields.push(("mosi", Value::Str(hex(&o).into())));
                text.push(format!("MOSI {}", hex(&o)));
            }
            if self.miso.is_some() {
                fields.push(("miso", Value::Str(hex(&i).into())));
                text.push(format!("MISO {}", hex(&i)));
            }
            sink.set_end(at, t);
            let a = &mut sink.anns[at];
            a.text = text.join(" / ").into();
            a.fields = fields;
        }
    }

    fn sample(&mut self, t: i64, levels: u64, sink: &mut Sink) {
        let cfg = self.cfg;
        let acc = &mut self.acc;
        let shift = if cfg.lsb_first { acc.bits } else { cfg.bits - 1 - acc.bits };
        if let Some(b) = self.mosi {
            acc.mosi |= ((levels >> b) & 1) << shift;
        }
        if let Some(b) = self.miso {
            acc.miso |= ((levels >> b) & 1) << shift;
        }
        if acc.bits == 0 {
            acc.first = t;
        }
        acc.prev = acc.last;
        acc.last = t;
        acc.bits += 1;
        if acc.bits < cfg.bits {
            return;
        }
        let es = if cfg.bits > 1 { acc.last + (acc.last - acc.prev) } else { acc.last };
        let word = Word {
            ss: acc.first,
            es,
            mosi: self.mosi.is_some().then_some(acc.mosi),
            miso: self.miso.is_some().then_some(acc.miso),
        };
        let digits = (cfg.bits as usize).div_ceil(4).max(2);
        for (row, v) in [("miso", word.miso), ("mosi", word.mosi)] {
            if let Some(v) = v {
                sink.put(word.ss, word.es, row, crate::hex_upper(v, digits), vec![("value", Value::UInt(v))]);
                self.before_transfer(sink);
            }
        }
        if let Some((_, o, i, _)) = self.transfer.as_mut() {
            o.extend(word.mosi);
            i.extend(word.miso);
        }
        if self.keep_words {
            self.words.push(word);
        }
        self.acc = Acc::default();
    }
}

impl Machine for Spi {
    fn start(&mut self, levels: u64, sink: &mut Sink) {
        self.clk_level = ((levels >> self.clk) & 1) as u8;
        if let Some(c) = self.cs {
            let level = ((levels >> c) & 1) as u8;
            self.cs_level = Some(level);
            if self.active(level) {
                self.transfer = Some((0, Vec::new(), Vec::new(), Self::open(sink, 0)));
            }
        }
    }

    #[inline]
    fn change(&mut self, t: i64, changed: u64, levels: u64, sink: &mut Sink) {
        let clk_changed = (changed >> self.clk) & 1 != 0;
        if clk_changed {
            self.clk_level = ((levels >> self.clk) & 1) as u8;
        }
        if let Some(c) = self.cs
            && (changed >> c) & 1 != 0
        {
            self.cs_changed(t, ((levels >> c) & 1) as u8, sink);
        }
        if let Some(l) = self.cs_level
            && !self.active(l)
        {
            return;
        }
        if !clk_changed || (self.clk_level == 1) != self.cfg.sample_on_rise {
            return;
        }
        self.sample(t, levels, sink);
    }

    /// Only the open transfer's annotation is amended (completed when CS releases, a word
    /// starting with it moved before it); every annotation is put in start order.
    fn settled(&self) -> bool {
        self.transfer.is_none()
    }

    /// No transfer and no word begun: the next word starts at the clock edge that samples
    /// its first bit.
    fn quiet(&self) -> bool {
        self.transfer.is_none() && self.acc.bits == 0
    }

    fn finish(&mut self, ends: &[i64], sink: &mut Sink) -> Result<(), DecodeError> {
        if self.acc.bits > 0 {
            sink.error(
                self.acc.first,
                ends[self.clk as usize],
                "cut-word",
                format!("word cut off by the end of the capture after {} bit(s)", self.acc.bits),
            );
            self.before_transfer(sink);
        }
        // A transfer still open at the end of the capture has no annotation.
        if let Some((_, _, _, at)) = self.transfer.take() {
            sink.anns.remove(at);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signal::Line;

    fn decode(
        clk: &Line,
        mosi: Option<&Line>,
        miso: Option<&Line>,
        cs: Option<&Line>,
        cfg: &Config,
        sink: &mut Sink,
    ) -> Vec<Word> {
        let mut lines = vec![clk];
        let mut bits = [None; 3];
        for (b, l) in bits.iter_mut().zip([mosi, miso, cs]) {
            if let Some(l) = l {
                lines.push(l);
                *b = Some(lines.len() as u32 - 1);
            }
        }
        let [mosi, miso, cs] = bits;
        let mut spi = Spi::on_bits(0, mosi, miso, cs, *cfg);
        spi.keep_words = true;
        crate::stream::feed_lines(&mut spi, &lines, sink).unwrap();
        spi.words
    }

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

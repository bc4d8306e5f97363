//! I2C: START is SDA falling while SCL is high, STOP SDA rising while SCL is high; bits are
//! sampled on SCL rising. After START the first byte is the address (7-bit, shown shifted,
//! R/W in bit 0), then an ACK bit; then data bytes with their ACK, until STOP or a repeated
//! START. A first byte `11110xx` with R/W=0 starts a 10-bit address whose low eight bits
//! are the next byte. Spans follow sigrok: an address byte from its first SCL rise to its
//! eighth, a data byte one bit width further,
//! ACK/NACK from the ninth rise for one bit width (the distance between the seventh and
//! eighth rise), START/STOP at their edge.
//!
//! Rows: `start`, `stop`, `address` {address, rw}, `address10` {address, rw}, `data`
//! {value, rw, ack}, `ack`, `warnings` (a byte cut by START/STOP or the end of capture).

use crate::params::{Channels, Params};
use crate::spec::Stage;
use crate::stream::Machine;
use crate::{ByteTexts, DecodeError, Sink, Value};

static ADDRESS_READ: ByteTexts = ByteTexts::new("Address read: ");
static ADDRESS_WRITE: ByteTexts = ByteTexts::new("Address write: ");
static DATA_READ: ByteTexts = ByteTexts::new("Data read: ");
static DATA_WRITE: ByteTexts = ByteTexts::new("Data write: ");

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    FindStart,
    Address,
    Data,
    Ack,
}

/// The byte being read and what it is.
#[derive(Debug, Default)]
struct Byte {
    bits: u32,
    value: u64,
    first: i64,
    /// SCL rises of bits 7 and 8, for the bit width.
    seventh: i64,
    eighth: i64,
}

/// The I2C decoder, fed with the changes of SCL and SDA in time order.
#[derive(Debug)]
pub(crate) struct I2c {
    scl: u32,
    sda: u32,
    scl_level: u8,
    sda_level: u8,
    state: State,
    repeat: bool,
    byte: Byte,
    is_address: bool,
    /// R/W of the transfer: true for a read.
    read: bool,
    /// The sink index of the last address or data annotation, until its ACK bit.
    pub(crate) pending: Option<usize>,
    width: i64,
    /// A 10-bit address: the high bits from the first byte, waiting for the second.
    ten_bit: Option<(i64, u64)>,
    address_bytes: u32,
}

impl Machine for I2c {
    fn start(&mut self, levels: u64, _: &mut Sink) {
        self.scl_level = ((levels >> self.scl) & 1) as u8;
        self.sda_level = ((levels >> self.sda) & 1) as u8;
    }

    #[inline]
    fn change(&mut self, t: i64, changed: u64, levels: u64, sink: &mut Sink) {
        self.on_change(t, changed, levels, sink);
    }

    /// The capture ended; `ends` gives each channel's last tick by bit.
    fn finish(&mut self, ends: &[i64], sink: &mut Sink) -> Result<(), DecodeError> {
        if self.byte.bits > 1 {
            let end = ends[self.scl as usize].max(ends[self.sda as usize]);
            sink.error(self.byte.first, end, "cut-byte", "byte cut off by the end of the capture");
        }
        Ok(())
    }

    /// Only a byte waiting for its ACK bit is amended later; every annotation is put in
    /// start order (a byte's when its eighth bit is read, before its R/W bit and ACK).
    fn settled(&self) -> bool {
        self.pending.is_none()
    }

    /// Waiting for a START with no byte begun: the next annotation is that START, at its
    /// edge.
    fn quiet(&self) -> bool {
        self.state == State::FindStart && self.pending.is_none() && self.byte.bits == 0
    }
}

impl I2c {
    pub(crate) fn new(stage: &Stage, channels: &mut dyn Channels) -> Result<Self, DecodeError> {
        let mut p = Params::new(&crate::registry::I2C, stage);
        let scl = p.required("scl", channels)?;
        let sda = p.required("sda", channels)?;
        p.finish()?;
        Ok(Self::on_bits(scl, sda))
    }

    pub(crate) fn on_bits(scl: u32, sda: u32) -> Self {
        I2c {
            scl,
            sda,
            scl_level: 0,
            sda_level: 0,
            state: State::FindStart,
            repeat: false,
            byte: Byte::default(),
            is_address: true,
            read: false,
            pending: None,
            width: 0,
            ten_bit: None,
            address_bytes: 0,
        }
    }

    #[inline]
    fn on_change(&mut self, t: i64, changed: u64, levels: u64, sink: &mut Sink) {
        let scl_changed = (changed >> self.scl) & 1 != 0;
        let sda_change = (changed >> self.sda) & 1 != 0;
        if !scl_changed && !sda_change {
            return;
        }
        let scl_rise = scl_changed && self.scl_level == 0;
        self.scl_level = ((levels >> self.scl) & 1) as u8;
        self.sda_level = ((levels >> self.sda) & 1) as u8;
        let start = sda_change && self.sda_level == 0 && self.scl_level == 1;
        let stop = sda_change && self.sda_level == 1 && self.scl_level == 1;
        match self.state {
            State::FindStart if start => {}
            State::FindStart => return,
            State::Address | State::Ack => {
                if !scl_rise {
                    return;
                }
            }
            State::Data => {
                if !scl_rise && !start && !stop {
                    return;
                }
            }
        }
        if self.state == State::FindStart || (self.state == State::Data && !scl_rise && start) {
            // The SCL rise that precedes a START or STOP reads as one bit: normal, not a cut.
            if self.byte.bits > 1 {
                sink.error(
                    self.byte.first,
                    t,
                    "cut-byte",
                    format!("byte cut by a repeated START after {} bit(s)", self.byte.bits),
                );
            }
            let text = if self.repeat { "Start repeat" } else { "Start" };
            sink.put(t, t, "start", text, vec![("repeat", Value::Bool(self.repeat))]);
            self.repeat = true;
            self.state = State::Address;
            self.byte = Byte::default();
            self.is_address = true;
            self.address_bytes = 0;
            self.ten_bit = None;
            return;
        }
        if self.state == State::Data && !scl_rise && stop {
            if self.byte.bits > 1 {
                sink.error(
                    self.byte.first,
                    t,
                    "cut-byte",
                    format!("byte cut by STOP after {} bit(s)", self.byte.bits),
                );
            }
            sink.put(t, t, "stop", "Stop", Vec::new());
            self.state = State::FindStart;
            self.repeat = false;
            self.byte = Byte::default();
            return;
        }
        // An SCL rise: a bit of a byte, or an ACK.
        let bit = u64::from(self.sda_level);
        if self.state == State::Ack {
            let nack = bit == 1;
            sink.put(
                t,
                t + self.width,
                "ack",
                if nack { "NACK" } else { "ACK" },
                vec![("ack", Value::Bool(!nack))],
            );
            // The byte before this ACK bit learns whether it was acknowledged.
            if let Some(i) = self.pending.take()
                && let Some(a) = sink.anns.get_mut(i)
            {
                a.fields.push(("ack", Value::Bool(!nack)));
            }
            self.state = State::Data;
            return;
        }
        let byte = &mut self.byte;
        if byte.bits == 0 {
            byte.first = t;
        }
        byte.value = (byte.value << 1) | bit;
        byte.bits += 1;
        if byte.bits == 7 {
            byte.seventh = t;
        }
        if byte.bits < 8 {
            return;
        }
        byte.eighth = t;
        self.width = byte.eighth - byte.seventh;
        let (value, first) = (byte.value, byte.first);
        let width = self.width;
        if self.is_address {
            self.read = value & 1 == 1;
            let read = self.read;
            let rw = if read { "read" } else { "write" };
            let addr = value >> 1;
            let label = if read { &ADDRESS_READ } else { &ADDRESS_WRITE };
            // The address before its R/W bit: annotations come out in start order (no sort).
            let mut fields = Vec::with_capacity(3);
            fields.extend([("address", Value::UInt(addr)), ("rw", Value::Str(rw.into()))]);
            sink.put(first, t, "address", label.get(addr), fields);
            self.pending = Some(sink.anns.len() - 1);
            sink.put(t, t + width, "rw", if read { "Read" } else { "Write" }, Vec::new());
            if value & 0xF8 == 0xF0 && !read {
                self.ten_bit = Some((first, (value >> 1) & 3));
                self.address_bytes = 1;
            }
            self.is_address = false;
        } else {
            if self.address_bytes == 1
                && let Some((ss, high)) = self.ten_bit.take()
            {
                let addr = (high << 8) | value;
                sink.put(
                    ss,
                    t,
                    "address10",
                    format!("10-bit address: {addr:03X}"),
                    vec![("address", Value::UInt(addr)), ("rw", Value::Str("write".into()))],
                );
            }
            self.address_bytes = 2;
            let read = self.read;
            let what = if read { &DATA_READ } else { &DATA_WRITE };
            // Room for the `ack` field its ACK bit adds.
            let mut fields = Vec::with_capacity(3);
            fields.extend([
                ("value", Value::UInt(value)),
                ("rw", Value::Str(if read { "read" } else { "write" }.into())),
            ]);
            // A data byte spans one bit width past its eighth rise; an address byte ends on it.
            sink.put(first, t + width, "data", what.get(value), fields);
            self.pending = Some(sink.anns.len() - 1);
        }
        self.byte = Byte::default();
        self.state = State::Ack;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signal::Line;

    fn decode(scl: &Line, sda: &Line, sink: &mut Sink) {
        crate::stream::feed_lines(&mut I2c::on_bits(0, 1), &[scl, sda], sink).unwrap();
    }

    /// Edges of an I2C write of `bytes` (the first is the address byte), each ACKed, 10
    /// ticks per bit.
    fn i2c_lines(bytes: &[u8], nack_last: bool) -> (Line, Line) {
        let (mut scl, mut sda) = (vec![], vec![]);
        let mut t = 100;
        sda.push((t, 0)); // START
        t += 5;
        scl.push((t, 0));
        for (k, &b) in bytes.iter().enumerate() {
            let mut bits: Vec<u8> = (0..8).rev().map(|i| (b >> i) & 1).collect();
            bits.push(u8::from(nack_last && k == bytes.len() - 1));
            for bit in bits {
                sda.push((t + 2, bit));
                scl.push((t + 5, 1));
                scl.push((t + 10, 0));
                t += 10;
            }
        }
        sda.push((t + 2, 0));
        scl.push((t + 5, 1));
        sda.push((t + 8, 1)); // STOP
        (Line::new("SCL", 1, &scl, t + 50), Line::new("SDA", 1, &sda, t + 50))
    }

    #[test]
    fn address_data_ack_and_spans() {
        let (scl, sda) = i2c_lines(&[0x50 << 1, 0x12, 0x34], true);
        let mut sink = Sink::default();
        decode(&scl, &sda, &mut sink);
        let rows: Vec<(&str, &str)> = sink.anns.iter().map(|a| (a.row, &*a.text)).collect();
        assert_eq!(
            rows,
            [
                ("start", "Start"),
                ("address", "Address write: 50"),
                ("rw", "Write"),
                ("ack", "ACK"),
                ("data", "Data write: 12"),
                ("ack", "ACK"),
                ("data", "Data write: 34"),
                ("ack", "NACK"),
                ("stop", "Stop"),
            ]
        );
        // Emitted in start order, so a large decode needs no sort.
        assert!(sink.anns.is_sorted_by_key(|a| a.start));
        let addr = &sink.anns[1];
        assert_eq!((addr.start, addr.end), (110, 180));
        let data = &sink.anns[6];
        assert_eq!(data.fields[2], ("ack", Value::Bool(false)));
        assert!(sink.errors.is_empty(), "{:?}", sink.errors);
    }

    #[test]
    fn ten_bit_addresses() {
        let (scl, sda) = i2c_lines(&[0xF0 | (0x2 << 1), 0x9A], false);
        let mut sink = Sink::default();
        decode(&scl, &sda, &mut sink);
        let a = sink.anns.iter().find(|a| a.row == "address10").map(|a| a.fields[0].1.clone());
        assert_eq!(a, Some(Value::UInt(0x29A)));
    }
}

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

use crate::params::Params;
use crate::signal::{Line, merged_changes};
use crate::spec::Stage;
use crate::{ByteTexts, DecodeError, Inputs, Sink, Stream, Value};

pub(crate) fn run(stage: &Stage, inputs: &Inputs<'_>, sink: &mut Sink) -> Result<Stream, DecodeError> {
    let mut p = Params::new(&crate::registry::I2C, stage);
    let scl = p.required("scl", inputs)?;
    let sda = p.required("sda", inputs)?;
    p.finish()?;
    decode(&scl, &sda, sink);
    Ok(Stream::None)
}

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

fn decode(scl: &Line, sda: &Line, sink: &mut Sink) {
    let (mut scl_level, mut sda_level) = (scl.initial, sda.initial);
    let mut state = State::FindStart;
    let mut repeat = false;
    let mut byte = Byte::default();
    let mut is_address = true;
    // R/W of the transfer: true for a read.
    let mut read = false;
    // The sink index of the last address or data annotation, until its ACK bit.
    let mut pending: Option<usize> = None;
    let mut width = 0i64;
    // A 10-bit address: the high bits from the first byte, waiting for the second.
    let mut ten_bit: Option<(i64, u64)> = None;
    let mut address_bytes = 0u32;
    for (t, mask) in merged_changes(&[scl, sda]) {
        let scl_rise = mask & 1 != 0 && scl_level == 0;
        let sda_change = mask & 2 != 0;
        if mask & 1 != 0 {
            scl_level ^= 1;
        }
        if sda_change {
            sda_level ^= 1;
        }
        let start = sda_change && sda_level == 0 && scl_level == 1;
        let stop = sda_change && sda_level == 1 && scl_level == 1;
        match state {
            State::FindStart if start => {}
            State::FindStart => continue,
            State::Address | State::Ack => {
                if !scl_rise {
                    continue;
                }
            }
            State::Data => {
                if !scl_rise && !start && !stop {
                    continue;
                }
            }
        }
        if state == State::FindStart || (state == State::Data && !scl_rise && start) {
            // The SCL rise that precedes a START or STOP reads as one bit: normal, not a cut.
            if byte.bits > 1 {
                sink.error(
                    byte.first,
                    t,
                    "cut-byte",
                    format!("byte cut by a repeated START after {} bit(s)", byte.bits),
                );
            }
            let text = if repeat { "Start repeat" } else { "Start" };
            sink.put(t, t, "start", text, vec![("repeat", Value::Bool(repeat))]);
            repeat = true;
            state = State::Address;
            byte = Byte::default();
            is_address = true;
            address_bytes = 0;
            ten_bit = None;
            continue;
        }
        if state == State::Data && !scl_rise && stop {
            if byte.bits > 1 {
                sink.error(byte.first, t, "cut-byte", format!("byte cut by STOP after {} bit(s)", byte.bits));
            }
            sink.put(t, t, "stop", "Stop", Vec::new());
            state = State::FindStart;
            repeat = false;
            byte = Byte::default();
            continue;
        }
        // An SCL rise: a bit of a byte, or an ACK.
        let bit = u64::from(sda_level);
        if state == State::Ack {
            let nack = bit == 1;
            sink.put(
                t,
                t + width,
                "ack",
                if nack { "NACK" } else { "ACK" },
                vec![("ack", Value::Bool(!nack))],
            );
            // The byte before this ACK bit learns whether it was acknowledged.
            if let Some(i) = pending.take()
                && let Some(a) = sink.anns.get_mut(i)
            {
                a.fields.push(("ack", Value::Bool(!nack)));
            }
            state = State::Data;
            continue;
        }
        if byte.bits == 0 {
            byte.first = t;
        }
        byte.value = (byte.value << 1) | bit;
        byte.bits += 1;
        if byte.bits == 7 {
            byte.seventh = t;
        }
        if byte.bits < 8 {
            continue;
        }
        byte.eighth = t;
        width = byte.eighth - byte.seventh;
        let value = byte.value;
        if is_address {
            read = value & 1 == 1;
            let rw = if read { "read" } else { "write" };
            let addr = value >> 1;
            let label = if read { &ADDRESS_READ } else { &ADDRESS_WRITE };
            // The address before its R/W bit: annotations come out in start order (no sort).
            let mut fields = Vec::with_capacity(3);
            fields.extend([("address", Value::UInt(addr)), ("rw", Value::Str(rw.into()))]);
            sink.put(byte.first, t, "address", label.get(addr), fields);
            pending = Some(sink.anns.len() - 1);
            sink.put(t, t + width, "rw", if read { "Read" } else { "Write" }, Vec::new());
            if value & 0xF8 == 0xF0 && !read {
                ten_bit = Some((byte.first, (value >> 1) & 3));
                address_bytes = 1;
            }
            is_address = false;
        } else {
            if address_bytes == 1
                && let Some((ss, high)) = ten_bit.take()
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
            address_bytes = 2;
            let what = if read { &DATA_READ } else { &DATA_WRITE };
            // Room for the `ack` field its ACK bit adds.
            let mut fields = Vec::with_capacity(3);
            fields.extend([
                ("value", Value::UInt(value)),
                ("rw", Value::Str(if read { "read" } else { "write" }.into())),
            ]);
            // A data byte spans one bit width past its eighth rise; an address byte ends on it.
            sink.put(byte.first, t + width, "data", what.get(value), fields);
            pending = Some(sink.anns.len() - 1);
        }
        byte = Byte::default();
        state = State::Ack;
    }
    if byte.bits > 1 {
        sink.error(byte.first, scl.end.max(sda.end), "cut-byte", "byte cut off by the end of the capture");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

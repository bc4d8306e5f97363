//! Field values as engineers read them, in the event table, the inspector, `latscope events`
//! and analysis keys: a kernel device number as `MAJ,MIN` (`dev=254,0`, where trace.dat
//! stores 266338304), a [`FieldKind::Hex`] value in hex (`arg=0x1AA`), a duration in
//! picoseconds (`latency_ps`) with its unit; everything else as stored. The stored values
//! are not changed: rules and filters match them, and accept either spelling.

use crate::fields::{FieldKind, FieldValue};
use crate::kernel;
use crate::source::Source;
use crate::time::format_seconds;
use std::fmt::Write as _;

/// A field value as text: integers in decimal, strings as they are.
pub fn value_text(source: &Source, v: FieldValue, out: &mut String) {
    match v {
        FieldValue::Int(i) => {
            let _ = write!(out, "{i}");
        }
        FieldValue::UInt(u) => {
            let _ = write!(out, "{u}");
        }
        FieldValue::Str(s) => out.push_str(&source.strings.resolve(s)),
    }
}

/// Whether field `name` holds a kernel `dev_t` when it is a number (block, ext4, jbd2 and
/// writeback events call it `dev`; a network device's `dev` is its name, a string).
pub fn is_device(name: &str) -> bool {
    name == "dev"
}

/// How a stored value differs from how people read it, if it does.
pub fn readable(name: &str, kind: FieldKind, v: FieldValue) -> Option<String> {
    let FieldValue::UInt(u) = v else {
        return match v {
            FieldValue::Int(ps) if name.ends_with("_ps") => Some(format_seconds(ps)),
            _ => None,
        };
    };
    if is_device(name) {
        return Some(kernel::dev_text(u));
    }
    if kind == FieldKind::Hex {
        return Some(format!("{u:#X}").replacen("0X", "0x", 1));
    }
    if name.ends_with("_ps") {
        return i64::try_from(u).ok().map(format_seconds);
    }
    None
}

/// Appends field `name`'s value `v` (of its layout's `kind`) as people read it.
pub fn write_field(source: &Source, name: &str, kind: FieldKind, v: FieldValue, out: &mut String) {
    match readable(name, kind, v) {
        Some(text) => out.push_str(&text),
        None => value_text(source, v, out),
    }
}

/// `name=value` of every field of event `index`, space separated, as people read them.
pub fn fields_text(source: &Source, index: usize, out: &mut String) {
    let Some(ev) = source.events.get(index) else { return };
    let kinds = &ev.layout().fields;
    for (i, ((name, v), &(_, kind))) in ev.fields().zip(kinds).enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let name = source.strings.resolve(name);
        let _ = write!(out, "{name}=");
        write_field(source, &name, kind, v, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_read_as_engineers_read_them() {
        assert_eq!(readable("dev", FieldKind::UInt, FieldValue::UInt(266_338_304)).as_deref(), Some("254,0"));
        assert_eq!(readable("arg", FieldKind::Hex, FieldValue::UInt(426)).as_deref(), Some("0x1AA"));
        assert_eq!(
            readable("latency_ps", FieldKind::Int, FieldValue::Int(14_550_000)).as_deref(),
            Some("14.550 us")
        );
        assert_eq!(readable("sector", FieldKind::UInt, FieldValue::UInt(2048)), None);
        assert_eq!(readable("dev", FieldKind::Str, FieldValue::Str(crate::Sym(1))), None);
    }
}

//! Event filter terms, as the workbench's search box and `latscope events --filter` take them.
//! Terms are separated by spaces and ANDed:
//!
//! - `word`: the event's name, task (`comm`, `comm-pid`), a field value or its rendered
//!   payload contains it (case-insensitive);
//! - `"a phrase"`: the same, with spaces;
//! - `field=value`: the field equals the value (numbers compare as numbers, `0x` hex
//!   allowed; text case-insensitively). `event`/`name`, `comm`/`task`, `pid` and `cpu` name
//!   the columns unless the event has a field of that name; `common_comm`, `common_pid`
//!   and `common_cpu` (ftrace's names) always name the columns; a value may be quoted
//!   (`comm="kworker/0:1 x"`);
//! - `field~text`: the field's value contains the text (case-insensitive);
//! - `-term`: the event does not match the term.
//!
//! Field values are the stored raw values (`dev=266338304`), never their rendering.

use super::display::value_text;
use super::fields::FieldValue;
use super::render::write_payload;
use super::source::Source;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Test {
    /// Lowercased text anywhere in the event.
    Text(String),
    Equals(String, String),
    /// Field, lowercased text.
    Contains(String, String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Term {
    test: Test,
    negate: bool,
}

/// A parsed filter; the empty filter matches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    terms: Vec<Term>,
}

/// Why a filter does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FilterError {
    #[error("unclosed quote in filter at character {0}")]
    UnclosedQuote(usize),
    #[error("filter term {0:?} has no field name before its `=` or `~`")]
    NoField(String),
}

/// Splits `q` into words; quotes group spaces and are removed (`a="b c"` is one word).
fn words(q: &str) -> Result<Vec<String>, FilterError> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut quote_at: Option<usize> = None;
    for (i, c) in q.char_indices() {
        match (c, quote_at) {
            ('"', None) => {
                quote_at = Some(i);
                in_word = true;
            }
            ('"', Some(_)) => quote_at = None,
            (c, None) if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            (c, _) => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if let Some(at) = quote_at {
        return Err(FilterError::UnclosedQuote(at));
    }
    if in_word {
        out.push(cur);
    }
    Ok(out)
}

impl Filter {
    pub fn parse(q: &str) -> Result<Filter, FilterError> {
        let mut terms = Vec::new();
        for w in words(q)? {
            let (negate, body) = match w.strip_prefix('-') {
                Some(rest) if !rest.is_empty() => (true, rest.to_string()),
                _ => (false, w),
            };
            let test = match body.find(['=', '~']) {
                Some(0) => return Err(FilterError::NoField(body)),
                Some(i) => {
                    let (field, value) = (body[..i].to_string(), body[i + 1..].to_string());
                    if body.as_bytes()[i] == b'=' {
                        Test::Equals(field, value)
                    } else {
                        Test::Contains(field, value.to_lowercase())
                    }
                }
                None => Test::Text(body.to_lowercase()),
            };
            terms.push(Term { test, negate });
        }
        Ok(Filter { terms })
    }

    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// Whether event `index` of `source` matches every term.
    pub fn matches(&self, source: &Source, index: usize) -> bool {
        if index >= source.events.len() {
            return false;
        }
        self.terms.iter().all(|t| t.matches(source, index) != t.negate)
    }
}

/// The value of a column or field of an event as text, and as a number where it is one.
fn lookup(source: &Source, index: usize, field: &str) -> Option<(String, Option<i128>)> {
    let ev = source.events.get(index)?;
    let s = &source.strings;
    // The columns under ftrace's own names for them, which no event field shadows: a
    // filter for a task's events (`common_pid=123`) never matches the pid field of a
    // sched_wakeup that wakes it.
    match field {
        "common_comm" => return Some((s.resolve(ev.comm()).into_owned(), None)),
        "common_pid" => return Some((ev.pid().to_string(), Some(i128::from(ev.pid())))),
        "common_cpu" => return Some((ev.cpu().to_string(), Some(i128::from(ev.cpu())))),
        _ => {}
    }
    // The event's own field wins (irq_handler_entry has a `name`), then the columns.
    let Some(v) = s.lookup(field.as_bytes()).and_then(|sym| ev.field(sym)) else {
        return match field {
            "event" | "name" => Some((s.resolve(ev.name()).into_owned(), None)),
            "comm" | "task" => Some((s.resolve(ev.comm()).into_owned(), None)),
            "pid" => Some((ev.pid().to_string(), Some(i128::from(ev.pid())))),
            "cpu" => Some((ev.cpu().to_string(), Some(i128::from(ev.cpu())))),
            _ => None,
        };
    };
    // As people read it (`254,0`, `0x1AA`): `dev~254` finds a device, and `field=value`
    // below also compares the number.
    let mut text = String::new();
    let kind = ev.layout().fields.iter().find(|f| Some(f.0) == s.lookup(field.as_bytes())).map(|f| f.1);
    crate::display::write_field(source, field, kind.unwrap_or(v.kind()), v, &mut text);
    let num = match v {
        FieldValue::Int(i) => Some(i128::from(i)),
        FieldValue::UInt(u) => Some(i128::from(u)),
        FieldValue::Str(_) => None,
    };
    Some((text, num))
}

/// A decimal or `0x` number, or a device number `MAJ,MIN` (its kernel `dev_t`).
fn parse_number(v: &str) -> Option<i128> {
    if let Some(dev) = crate::kernel::parse_dev(v) {
        return Some(i128::from(dev));
    }
    let (neg, body) = match v.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, v),
    };
    let n = match body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        Some(h) => i128::from_str_radix(h, 16).ok()?,
        None => body.parse::<i128>().ok()?,
    };
    Some(if neg { -n } else { n })
}

fn contains_lower(hay: &str, needle_lower: &str) -> bool {
    if hay.is_ascii() && needle_lower.is_ascii() {
        let (h, n) = (hay.as_bytes(), needle_lower.as_bytes());
        return n.is_empty() || h.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n));
    }
    hay.to_lowercase().contains(needle_lower)
}

impl Term {
    fn matches(&self, source: &Source, index: usize) -> bool {
        match &self.test {
            Test::Equals(field, value) => match lookup(source, index, field) {
                Some((text, num)) => match (num, parse_number(value)) {
                    (Some(a), Some(b)) => a == b,
                    _ => text.eq_ignore_ascii_case(value) || text == *value,
                },
                None => false,
            },
            Test::Contains(field, text) => {
                lookup(source, index, field).is_some_and(|(value, _)| contains_lower(&value, text))
            }
            Test::Text(text) => {
                let Some(ev) = source.events.get(index) else { return false };
                let s = &source.strings;
                if contains_lower(&s.resolve(ev.name()), text)
                    || contains_lower(&format!("{}-{}", s.resolve(ev.comm()), ev.pid()), text)
                {
                    return true;
                }
                let mut buf = String::new();
                for ((name, v), &(_, kind)) in ev.fields().zip(&ev.layout().fields) {
                    buf.clear();
                    crate::display::write_field(source, &s.resolve(name), kind, v, &mut buf);
                    if contains_lower(&buf, text) {
                        return true;
                    }
                    if crate::display::readable(&s.resolve(name), kind, v).is_some() {
                        buf.clear();
                        value_text(source, v, &mut buf);
                        if contains_lower(&buf, text) {
                            return true;
                        }
                    }
                }
                buf.clear();
                write_payload(source, index, &mut buf);
                contains_lower(&buf, text)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{EventTableBuilder, IrqFlags, SourceKind};

    fn source() -> Source {
        let mut b = EventTableBuilder::new();
        let dd = b.intern(b"dd");
        let kw = b.intern(b"kworker/0:1");
        let issue = b.intern(b"block_rq_issue");
        let entry = b.intern(b"irq_handler_entry");
        let (sector, rwbs, irq, name) =
            (b.intern(b"sector"), b.intern(b"rwbs"), b.intern(b"irq"), b.intern(b"name"));
        let l1 = b.layout(issue, &[(sector, crate::FieldKind::UInt), (rwbs, crate::FieldKind::Str)]);
        let l2 = b.layout(entry, &[(irq, crate::FieldKind::Int), (name, crate::FieldKind::Str)]);
        let (ra, w, virtio) = (b.intern(b"RA"), b.intern(b"WS"), b.intern(b"virtio0-requests"));
        b.push(1, 0, 100, dd, IrqFlags::NONE, l1, &[FieldValue::UInt(23_942_400), FieldValue::Str(ra)]);
        b.push(2, 1, 100, dd, IrqFlags::NONE, l1, &[FieldValue::UInt(8), FieldValue::Str(w)]);
        b.push(3, 1, 0, kw, IrqFlags::NONE, l2, &[FieldValue::Int(36), FieldValue::Str(virtio)]);
        let mut src = Source::new("t", "test", SourceKind::File);
        (src.events, src.strings) = b.finish().expect("finish");
        src
    }

    fn hits(q: &str) -> Vec<usize> {
        let src = source();
        let f = Filter::parse(q).expect("parses");
        (0..src.events.len()).filter(|&i| f.matches(&src, i)).collect()
    }

    #[test]
    fn terms_are_anded() {
        assert_eq!(hits("dd sector=23942400"), [0]);
        assert_eq!(hits("dd"), [0, 1]);
        assert_eq!(hits(""), [0, 1, 2]);
        assert_eq!(hits("sector=0x16d5500"), [0]);
        assert_eq!(hits("block -rwbs=ra"), [1]);
        assert_eq!(hits("name~VIRTIO cpu=1"), [2]);
        assert_eq!(hits("\"kworker/0:1\""), [2]);
        assert_eq!(hits("comm=\"kworker/0:1\" irq=36"), [2]);
        assert_eq!(hits("-dd"), [2]);
        assert_eq!(hits("event=block_rq_issue pid=100 -cpu=0"), [1]);
        assert_eq!(hits("name=block_rq_issue"), [0, 1], "the event name where there is no `name` field");
        assert_eq!(hits("nosuchfield=1"), Vec::<usize>::new());
        assert_eq!(hits("dd-100"), [0, 1]);
    }

    #[test]
    fn bad_filters_are_errors() {
        assert_eq!(Filter::parse("a \"b"), Err(FilterError::UnclosedQuote(2)));
        assert!(matches!(Filter::parse("=3"), Err(FilterError::NoField(_))));
        assert!(Filter::parse("-").is_ok(), "a lone dash is a word");
    }
}

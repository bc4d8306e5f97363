//! Marker messages (`print`, `bprint`, `tracing_mark_write`): the exposes every
//! `key=value` token of the text as a field. One tokenizer serves the ftrace text and the
//! trace.dat importers, so a marker gets the same fields whichever file it came from.

use latscope_model::{FieldKind, FieldValue, Sym};

/// A `key=value` token of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Token<'a> {
    pub key: &'a [u8],
    pub value: &'a [u8],
}

/// The `key=value` tokens of `text` (whitespace-separated; keys are `[A-Za-z0-9_]+`, a
/// trailing `,` or `;` after the value is dropped). The first of a repeated key wins.
pub(crate) fn tokens<'a>(text: &'a [u8], out: &mut Vec<Token<'a>>) {
    out.clear();
    for tok in text.split(|b| b.is_ascii_whitespace()) {
        let Some(eq) = memchr::memchr(b'=', tok) else { continue };
        let key = &tok[..eq];
        if key.is_empty() || !key.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_') {
            continue;
        }
        let mut value = &tok[eq + 1..];
        while let Some((last, rest)) = value.split_last() {
            if *last == b',' || *last == b';' {
                value = rest;
            } else {
                break;
            }
        }
        if out.iter().any(|t| t.key == key) {
            continue;
        }
        out.push(Token { key, value });
    }
}

/// Appends the `key=value` tokens of `text` to an event's `fields` and `values` (decimal
/// values as Int, others as Str; a key already present, such as `text`, keeps its value),
/// interning through `intern`. The trace.dat and Perfetto importers read markers with it.
pub(crate) fn push_token_fields(
    text: &[u8],
    intern: &mut dyn FnMut(&[u8]) -> Sym,
    fields: &mut Vec<(Sym, FieldKind)>,
    values: &mut Vec<FieldValue>,
) {
    // Most markers have no token: one scan says so.
    if memchr::memchr(b'=', text).is_none() {
        return;
    }
    let mut toks: Vec<Token<'_>> = Vec::new();
    tokens(text, &mut toks);
    for t in &toks {
        let key = intern(t.key);
        if fields.iter().any(|f| f.0 == key) {
            continue;
        }
        let v = match token_int(t.value) {
            Some(i) => FieldValue::Int(i),
            None => FieldValue::Str(intern(t.value)),
        };
        fields.push((key, v.kind()));
        values.push(v);
    }
}

/// A token value as an integer when it is a plain decimal one.
pub(crate) fn token_int(v: &[u8]) -> Option<i64> {
    let s = std::str::from_utf8(v).ok()?;
    if s.is_empty() || s.len() > 20 {
        return None;
    }
    s.parse::<i64>().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_key_value_tokens() {
        let mut t = Vec::new();
        tokens(b"cmd_start id=7 lba=0x10, x= =5 id=8 a-b=1", &mut t);
        let got: Vec<_> = t.iter().map(|t| (t.key, t.value)).collect();
        assert_eq!(got, vec![(&b"id"[..], &b"7"[..]), (b"lba", b"0x10"), (b"x", b"")]);
        assert_eq!(token_int(b"-12"), Some(-12));
        assert_eq!(token_int(b"0x10"), None);
    }
}

//! Rule specs (DESIGN §7): the text a user types after `--rule`, `--preset` or into the
//! GUI, parsed into a [`Spec`], and [`run_spec`], which turns a spec and the open sources
//! into [`Outcome`]s. This module owns the grammar and the dispatch; the analyses live in
//! `pairing`, `presets`, `chain` and `detect`.
//!
//! ```text
//! [NAME=]START -> END [by KEY[,KEY...]] [policy fifo|lifo|next|first] [within DURATION]
//! pulse:CHANNEL[:high|low][@LEVEL]
//! stall:SELECTOR [factor F]
//! long:TRACK[:high|low][@LEVEL] over DURATION
//! poll:SELECTOR within DURATION [min N]
//! PRESET            (block, irq-handler, …, cmd-irq[:OPTS], chain[:OPTS], pulse:CH)
//! ```
//! START/END/SELECTOR: `event[field=value,field~text,field!=v,field!~text]`, `CHANNEL:rise|fall|any`
//! (on an analog track: its automatic threshold) or `CHANNEL:rise@1.65` (an explicit
//! level). A bare `TRACK` after `stall:` means its rising edges, or the event of that name.
//! KEY is `field` or `start_field:end_field`. DURATION is a decimal number with a unit:
//! `ps ns us ms s`. Names and channels with other characters are written in double quotes.

use crate::outcome::Outcome;
use crate::pairing::{Edge, Endpoint, Level, PairError, PairRule, Policy, Pred, PredOp};
use crate::presets::Preset;
use latscope_model::{PS_PER_NS, PS_PER_S, PS_PER_US, Placed, Ps};

pub use crate::presets::PRESETS;

/// One parsed analysis.
#[derive(Debug, Clone, PartialEq)]
pub enum Spec {
    /// A pair rule (DESIGN §4.2).
    Pair(PairRule),
    /// Widths of high (or low) pulses of a digital channel, or of an analog one through a
    /// threshold (`pulse:CH`).
    Pulse { name: String, channel: String, high: bool, level: Option<f64> },
    /// Gaps in a periodic stream longer than `factor` x its median period.
    Stall { name: String, selector: Endpoint, factor: f64 },
    /// Spans of a span track, or high/low phases of an analog or digital track, longer than
    /// `over`: each is a window with the excess over `over`.
    Long { name: String, track: String, high: bool, level: Option<f64>, over: Ps },
    /// Polling loops: runs of `selector` occurrences each within `spacing` of the previous,
    /// of at least `min_iterations` occurrences.
    Poll { name: String, selector: Endpoint, spacing: Ps, min_iterations: u32 },
    /// A DESIGN §4.3 preset with custom semantics (block, cmd-irq, chain).
    Preset(Preset),
}

impl Spec {
    /// The analysis name reports use.
    pub fn name(&self) -> &str {
        match self {
            Spec::Pair(r) => &r.name,
            Spec::Pulse { name, .. }
            | Spec::Stall { name, .. }
            | Spec::Long { name, .. }
            | Spec::Poll { name, .. } => name,
            Spec::Preset(p) => p.name(),
        }
    }

    /// Every track (or event) name the spec can read, when the spec names them all in its
    /// text; `None` for presets, which find their events and tracks themselves. An importer
    /// given these names may leave other tracks out (`latscope report`).
    pub fn named_tracks(&self) -> Option<Vec<&str>> {
        Some(match self {
            Spec::Pair(r) => vec![r.start.target(), r.end.target()],
            Spec::Pulse { channel, .. } => vec![channel.as_str()],
            Spec::Stall { selector, .. } | Spec::Poll { selector, .. } => vec![selector.target()],
            Spec::Long { track, .. } => vec![track.as_str()],
            Spec::Preset(_) => return None,
        })
    }
}

/// A spec that does not parse: where (0-based character offset) and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("column {column}: {message}")]
pub struct SpecError {
    pub column: usize,
    pub message: String,
}

/// A spec that parsed but cannot run on the sources given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnalysisError {
    #[error("{rule}: no source has {what}")]
    Missing { rule: String, what: String },
    #[error(transparent)]
    Pair(#[from] PairError),
}

fn err<T>(column: usize, message: impl Into<String>) -> Result<T, SpecError> {
    Err(SpecError { column, message: message.into() })
}

/// A character cursor over the spec text.
pub(crate) struct Cursor<'a> {
    chars: Vec<char>,
    pub(crate) pos: usize,
    text: &'a str,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        Self { chars: text.chars().collect(), pos: 0, text }
    }
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }
    fn peek_at(&self, k: usize) -> Option<char> {
        self.chars.get(self.pos + k).copied()
    }
    pub(crate) fn skip_ws(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
    }
    pub(crate) fn at_end(&mut self) -> bool {
        self.skip_ws();
        self.pos >= self.chars.len()
    }
    /// Consumes `s` if the text continues with it (after blanks).
    pub(crate) fn eat(&mut self, s: &str) -> bool {
        self.skip_ws();
        let n = s.chars().count();
        if self.chars.len() >= self.pos + n && s.chars().zip(&self.chars[self.pos..]).all(|(a, &b)| a == b) {
            self.pos += n;
            true
        } else {
            false
        }
    }
    /// Consumes keyword `w` only when a word boundary follows it.
    pub(crate) fn eat_word(&mut self, w: &str) -> bool {
        let save = self.pos;
        if self.eat(w) && !self.peek().is_some_and(is_name_char) {
            return true;
        }
        self.pos = save;
        false
    }
    fn slice(&self, from: usize, to: usize) -> String {
        self.chars[from..to].iter().collect()
    }
    /// A name: a run of name characters (a `-` only when no `>` follows), or a quoted string.
    pub(crate) fn name(&mut self, what: &str) -> Result<String, SpecError> {
        self.skip_ws();
        let start = self.pos;
        if self.peek() == Some('"') {
            self.pos += 1;
            let from = self.pos;
            while let Some(c) = self.peek() {
                if c == '"' {
                    let s = self.slice(from, self.pos);
                    self.pos += 1;
                    return Ok(s);
                }
                self.pos += 1;
            }
            return err(start, format!("expected a closing '\"' for the {what} opened here"));
        }
        while let Some(c) = self.peek() {
            if is_name_char(c) && !(c == '-' && self.peek_at(1) == Some('>')) {
                self.pos += 1;
            } else {
                break;
            }
        }
        if self.pos == start {
            return err(start, format!("expected {what}"));
        }
        Ok(self.slice(start, self.pos))
    }
    /// A predicate value: up to `,` or `]`, or a quoted string.
    fn value(&mut self) -> Result<String, SpecError> {
        self.skip_ws();
        if self.peek() == Some('"') {
            return self.name("value");
        }
        let start = self.pos;
        while let Some(c) = self.peek() {
            if c == ',' || c == ']' {
                break;
            }
            self.pos += 1;
        }
        Ok(self.slice(start, self.pos).trim().to_owned())
    }
    /// A plain decimal number (optionally signed).
    pub(crate) fn number(&mut self, what: &str) -> Result<(String, usize), SpecError> {
        self.skip_ws();
        let start = self.pos;
        if matches!(self.peek(), Some('-' | '+')) {
            self.pos += 1;
        }
        while self.peek().is_some_and(|c| c.is_ascii_digit() || c == '.') {
            self.pos += 1;
        }
        let s = self.slice(start, self.pos);
        if !s.chars().any(|c| c.is_ascii_digit()) {
            self.pos = start;
            return err(start, format!("expected {what}"));
        }
        Ok((s, start))
    }
    pub(crate) fn float(&mut self, what: &str) -> Result<f64, SpecError> {
        let (s, at) = self.number(what)?;
        s.parse::<f64>()
            .ok()
            .filter(|f| f.is_finite())
            .map_or_else(|| err(at, format!("expected {what}")), Ok)
    }
    /// A duration with a unit, e.g. `12.5us`; signed when `signed`.
    pub(crate) fn duration(&mut self, signed: bool) -> Result<Ps, SpecError> {
        self.skip_ws();
        let at = self.pos;
        let what = "a duration such as 500us (units ps ns us ms s)";
        let (num, _) = self.number(what)?;
        self.skip_ws();
        let unit_at = self.pos;
        let mut unit = String::new();
        while let Some(c) = self.peek().filter(|c| c.is_alphabetic()) {
            unit.push(c);
            self.pos += 1;
        }
        let scale: Ps = match unit.as_str() {
            "ps" => 1,
            "ns" => PS_PER_NS,
            "us" | "µs" => PS_PER_US,
            "ms" => PS_PER_US * 1000,
            "s" => PS_PER_S,
            "" => return err(unit_at, "expected a unit after the number: ps ns us ms s"),
            _ => return err(unit_at, format!("expected a unit ps ns us ms s, found {unit:?}")),
        };
        let v = scaled(&num, scale).ok_or(SpecError { column: at, message: format!("expected {what}") })?;
        if !signed && v < 0 {
            return err(at, "expected a duration that is not negative");
        }
        Ok(v)
    }
    pub(crate) fn rest(&self) -> &str {
        let byte = self.text.char_indices().nth(self.pos).map_or(self.text.len(), |(b, _)| b);
        &self.text[byte..]
    }
}

/// `num` (decimal, optional sign and fraction) times `scale`, exactly, rounded to ps.
fn scaled(num: &str, scale: Ps) -> Option<Ps> {
    let (neg, body) = match num.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, num.strip_prefix('+').unwrap_or(num)),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    if frac.contains('.') || (int.is_empty() && frac.is_empty()) {
        return None;
    }
    let int_v: i128 = if int.is_empty() { 0 } else { int.parse().ok()? };
    let mut v = int_v.checked_mul(i128::from(scale))?;
    let mut unit = i128::from(scale);
    for (i, d) in frac.chars().enumerate() {
        let d = i128::from(d.to_digit(10)?);
        if i >= 30 {
            break;
        }
        // Each further digit is worth a tenth of the previous; round at the picosecond.
        if unit >= 10 {
            unit /= 10;
            v += d * unit;
        } else {
            if d * unit >= 5 && unit == 1 {
                v += 1;
            }
            break;
        }
    }
    let v = if neg { -v } else { v };
    Ps::try_from(v).ok()
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '.' | '-' | '/' | '$' | '#')
}

/// Parses an endpoint: `event[preds]`, `CH:rise|fall|any[@LEVEL]`, or a bare name (an
/// event endpoint; `stall:`/`poll:` also try it as a track when no source has the event).
pub(crate) fn parse_endpoint(c: &mut Cursor<'_>, which: &str) -> Result<Endpoint, SpecError> {
    let name = c.name(&format!("{which}: an event name or CHANNEL:rise|fall|any"))?;
    c.skip_ws();
    if c.peek() == Some('[') {
        c.pos += 1;
        let mut preds = Vec::new();
        loop {
            if c.eat("]") {
                break;
            }
            let field = c.name("a field name in the predicate list")?;
            c.skip_ws();
            let op = if c.eat("!=") {
                PredOp::Ne
            } else if c.eat("!~") {
                PredOp::NotContains
            } else if c.eat("=") {
                PredOp::Eq
            } else if c.eat("~") {
                PredOp::Contains
            } else {
                return err(c.pos, format!("expected =, !=, ~ or !~ after field {field:?}"));
            };
            let value = c.value()?;
            preds.push(Pred::new(field, op, value));
            if c.eat(",") {
                continue;
            }
            if c.eat("]") {
                break;
            }
            return err(c.pos, "expected ',' or ']' after a predicate");
        }
        return Ok(Endpoint::event_where(name, preds));
    }
    if c.peek() == Some(':') {
        let save = c.pos;
        c.pos += 1;
        let edge = if c.eat_word("rise") {
            Edge::Rise
        } else if c.eat_word("fall") {
            Edge::Fall
        } else if c.eat_word("any") {
            Edge::Any
        } else {
            c.pos = save + 1;
            return err(c.pos, "expected rise, fall or any after ':'");
        };
        if c.peek() == Some('@') {
            c.pos += 1;
            let level = c.float("a threshold level after '@', e.g. 1.65")?;
            return Ok(Endpoint::Crossing { track: name, edge, level: Level(level) });
        }
        return Ok(Endpoint::edge(name, edge));
    }
    Ok(Endpoint::event(name))
}

/// Parses one spec. Presets are accepted too (`block`, `cmd-irq:irq=36`, `pulse:D1`).
pub fn parse_spec(text: &str) -> Result<Spec, SpecError> {
    let mut c = Cursor::new(text);
    if c.at_end() {
        return err(0, "expected a rule: [NAME=]START -> END, pulse:CH, stall:TRACK or a preset name");
    }
    if c.eat("pulse:") {
        return parse_pulse(&mut c);
    }
    if c.eat("stall:") {
        let selector = parse_selector(&mut c)?;
        let mut factor = 1.5;
        if c.eat_word("factor") {
            c.skip_ws();
            let at = c.pos;
            factor = c.float("a factor after 'factor', e.g. 1.5")?;
            if factor <= 0.0 {
                return err(at, "expected a factor above 0");
            }
        }
        expect_end(&mut c, "'factor F' or the end of the rule")?;
        return Ok(Spec::Stall { name: text.trim().to_owned(), selector, factor });
    }
    if c.eat("long:") {
        let track = c.name("a track name after 'long:'")?;
        let (high, level) = parse_phase(&mut c)?;
        if !c.eat_word("over") {
            return err(c.pos, "expected 'over DURATION' after the track");
        }
        let over = c.duration(false)?;
        expect_end(&mut c, "the end of the rule after the duration")?;
        return Ok(Spec::Long { name: text.trim().to_owned(), track, high, level, over });
    }
    if c.eat("poll:") {
        let selector = parse_selector(&mut c)?;
        if !c.eat_word("within") {
            return err(c.pos, "expected 'within DURATION' (the largest spacing inside a loop)");
        }
        let spacing = c.duration(false)?;
        let mut min_iterations = 2;
        if c.eat_word("min") {
            let (n, at) = c.number("an iteration count after 'min'")?;
            min_iterations = n.parse().ok().filter(|&n| n >= 2).ok_or(SpecError {
                column: at,
                message: "expected a whole iteration count of at least 2".into(),
            })?;
        }
        expect_end(&mut c, "'min N' or the end of the rule")?;
        return Ok(Spec::Poll { name: text.trim().to_owned(), selector, spacing, min_iterations });
    }
    if !text.contains("->")
        && let Some(p) = crate::presets::parse_preset(text)?
    {
        return Ok(p);
    }
    parse_pair(&mut c)
}

pub(crate) fn parse_pulse(c: &mut Cursor<'_>) -> Result<Spec, SpecError> {
    let channel = c.name("a channel name after 'pulse:'")?;
    let (high, level) = parse_phase(c)?;
    expect_end(c, "':high', ':low', '@LEVEL' or the end of the rule")?;
    let name = format!("pulse:{channel}{}", if high { "" } else { ":low" });
    Ok(Spec::Pulse { name, channel, high, level })
}

/// `[:high|:low][@LEVEL]` after a channel.
fn parse_phase(c: &mut Cursor<'_>) -> Result<(bool, Option<f64>), SpecError> {
    let mut high = true;
    if c.eat(":") {
        if c.eat_word("high") {
        } else if c.eat_word("low") {
            high = false;
        } else {
            return err(c.pos, "expected high or low after ':'");
        }
    }
    let mut level = None;
    if c.eat("@") {
        level = Some(c.float("a threshold level after '@', e.g. 1.65")?);
    }
    Ok((high, level))
}

/// A stall or poll selector: an endpoint; a bare name is an event or a track's rising edges
/// (decided against the sources when the spec runs).
fn parse_selector(c: &mut Cursor<'_>) -> Result<Endpoint, SpecError> {
    parse_endpoint(c, "a selector")
}

fn expect_end(c: &mut Cursor<'_>, what: &str) -> Result<(), SpecError> {
    if c.at_end() { Ok(()) } else { err(c.pos, format!("expected {what}")) }
}

fn parse_pair(c: &mut Cursor<'_>) -> Result<Spec, SpecError> {
    c.pos = 0;
    c.skip_ws();
    // `NAME=` prefix: a name followed by '=' (a predicate's '=' is inside brackets).
    let mut name = None;
    let save = c.pos;
    if let Ok(n) = c.name("a name") {
        c.skip_ws();
        if c.peek() == Some('=') {
            c.pos += 1;
            name = Some(n);
        } else {
            c.pos = save;
        }
    } else {
        c.pos = save;
    }
    c.skip_ws();
    let start_at = c.pos;
    let start = parse_endpoint(c, "the start endpoint")?;
    let start_text = c.slice(start_at, c.pos);
    if !c.eat("->") {
        return err(c.pos, "expected \"->\" after the start endpoint");
    }
    c.skip_ws();
    let end_at = c.pos;
    let end = parse_endpoint(c, "the end endpoint")?;
    let end_text = c.slice(end_at, c.pos);
    let name = name.unwrap_or_else(|| format!("{}->{}", start_text.trim(), end_text.trim()));
    let mut rule = PairRule::new(name, start, end, Policy::Fifo);
    let mut seen = [false; 3];
    loop {
        if c.at_end() {
            break;
        }
        let at = c.pos;
        if c.eat_word("by") {
            if std::mem::replace(&mut seen[0], true) {
                return err(at, "'by' given twice");
            }
            loop {
                if rule.by.len() == crate::pairing::MAX_KEYS {
                    c.skip_ws();
                    return err(c.pos, format!("at most {} key fields", crate::pairing::MAX_KEYS));
                }
                let a = c.name("a key field after 'by'")?;
                let b = if c.eat(":") { c.name("the end field after ':' in a key")? } else { a.clone() };
                rule.by.push((a, b));
                if !c.eat(",") {
                    break;
                }
            }
        } else if c.eat_word("policy") {
            if std::mem::replace(&mut seen[1], true) {
                return err(at, "'policy' given twice");
            }
            rule.policy = if c.eat_word("fifo") {
                Policy::Fifo
            } else if c.eat_word("lifo") {
                Policy::Lifo
            } else if c.eat_word("next") {
                Policy::Next
            } else if c.eat_word("first") {
                Policy::First
            } else {
                c.skip_ws();
                return err(c.pos, "expected fifo, lifo, next or first after 'policy'");
            };
        } else if c.eat_word("within") {
            if std::mem::replace(&mut seen[2], true) {
                return err(at, "'within' given twice");
            }
            rule.within = Some(c.duration(false)?);
        } else {
            return err(at, "expected 'by', 'policy', 'within' or the end of the rule");
        }
    }
    Ok(Spec::Pair(rule))
}

/// The spec of a `--preset NAME` (see [`PRESETS`]).
pub fn preset_spec(name: &str) -> Result<Spec, SpecError> {
    match crate::presets::parse_preset(name)? {
        Some(s) => Ok(s),
        None => err(
            0,
            format!("expected a preset name: {}", PRESETS.iter().map(|p| p.0).collect::<Vec<_>>().join(", ")),
        ),
    }
}

/// Runs `spec` over `sources` (borrowed, each with its placement on the common timeline):
/// one [`Outcome`] per source it applies to (the sources that hold what it selects), or one
/// over several sources on their common timeline when a pair rule's start and end are only
/// found in different sources.
pub fn run_spec(spec: &Spec, sources: &[Placed<'_>]) -> Result<Vec<Outcome>, AnalysisError> {
    match spec {
        Spec::Pair(rule) => crate::presets::run_pair_rule(rule, sources),
        Spec::Pulse { name, channel, high, level } => {
            crate::detect::run_pulse(name, channel, *high, *level, sources)
        }
        Spec::Stall { name, selector, factor } => crate::detect::run_stall(name, selector, *factor, sources),
        Spec::Long { name, track, high, level, over } => {
            crate::detect::run_long(name, track, *high, *level, *over, sources)
        }
        Spec::Poll { name, selector, spacing, min_iterations } => {
            crate::detect::run_poll(name, selector, *spacing, *min_iterations, sources)
        }
        Spec::Preset(p) => crate::presets::run_preset(p, sources),
    }
}

/// Runs `spec` on each source alone (two captures compared, or sources held apart), with
/// `Outcome::source` set to the source's index; one result per source, in order.
pub fn run_spec_each<'a>(
    spec: &Spec,
    sources: impl IntoIterator<Item = Placed<'a>>,
) -> Vec<Result<Vec<Outcome>, AnalysisError>> {
    sources
        .into_iter()
        .enumerate()
        .map(|(index, src)| {
            run_spec(spec, &[src]).map(|outcomes| {
                outcomes
                    .into_iter()
                    .map(|mut o| {
                        o.source = index;
                        o
                    })
                    .collect()
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_exact() {
        let d = |s: &str| Cursor::new(s).duration(true);
        assert_eq!(d("12.5us"), Ok(12_500_000));
        assert_eq!(d("2ms"), Ok(2_000_000_000));
        assert_eq!(d("1.5s"), Ok(1_500_000_000_000));
        assert_eq!(d("0.0015ns"), Ok(2));
        assert_eq!(d("-3ns"), Ok(-3000));
        assert_eq!(d("7ps"), Ok(7));
        assert_eq!(d("3").map_err(|e| e.column), Err(1));
        assert_eq!(d("3 hours").map_err(|e| e.column), Err(2));
    }
}

//! Rule specs: what a spec is ([`Spec`], the presets) and the whole grammar —
//! the text a user types after `--rule`, `--preset`, `--align` or into the GUI, parsed into a
//! [`Spec`] or an [`AlignSpec`]. Every parser of the project's rule language is here, so the
//! grammar can change in this one module. Running a spec is `runner`'s.
//!
//! ```text
//! [NAME=]START -> END [by KEY[,KEY...]] [policy fifo|lifo|next|first] [within DURATION]
//! [NAME=]pulse:CHANNEL[:high|low][@LEVEL]
//! [NAME=]stall:SELECTOR [factor F]
//! [NAME=]long:TRACK[:high|low][@LEVEL] over DURATION
//! [NAME=]poll:SELECTOR within DURATION [min N]
//! PRESET            (block, irq-handler, …, cmd-irq[:OPTS], chain[:OPTS], pulse:CH)
//! N:OFFSET[:DRIFTppm] | N:match REF_ENDPOINT -> ENDPOINT [drift]      (--align)
//! ```
//! START/END/SELECTOR: `event[field=value,field~text,field!=v,field!~text]`, `CHANNEL:rise|fall|any`
//! (on an analog track: its automatic threshold) or `CHANNEL:rise@1.65` (an explicit
//! level). A bare `TRACK` after `stall:` means its rising edges, or the event of that name.
//! KEY is `field` or `start_field:end_field`. DURATION is a decimal number with a unit:
//! `ps ns us ms s`. Names and channels with other characters are written in double quotes.

use crate::endpoint::{Edge, Endpoint, Level, Pred, PredOp};
use crate::pairing::{MAX_KEYS, PairRule, Policy};
use latscope_model::{PS_PER_NS, PS_PER_S, PS_PER_US, Ps};

/// One parsed analysis.
#[derive(Debug, Clone, PartialEq)]
pub enum Spec {
    /// A pair rule.
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
    /// A preset with custom semantics (block, cmd-irq, chain).
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

    /// The spec under another name (`NAME=` before a rule or detector); presets keep theirs.
    pub fn named(mut self, new: String) -> Self {
        match &mut self {
            Spec::Pair(r) => r.name = new,
            Spec::Pulse { name, .. }
            | Spec::Stall { name, .. }
            | Spec::Long { name, .. }
            | Spec::Poll { name, .. } => *name = new,
            Spec::Preset(_) => {}
        }
        self
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

/// Preset names and one-line descriptions, for `--help` and the GUI.
pub const PRESETS: &[(&str, &str)] = &[
    ("block", "block_rq_issue -> block_rq_complete by dev,sector (flushes by dev), fifo"),
    ("irq-handler", "irq_handler_entry -> irq_handler_exit by cpu,irq, lifo (nesting)"),
    ("softirq", "softirq_entry -> softirq_exit by cpu,vec, lifo"),
    ("wakeup", "sched_wakeup (else sched_waking) -> sched_switch in of that pid; the oldest pending wakeup"),
    ("idle", "cpu_idle state!=4294967295 -> state=4294967295 by cpu, next"),
    ("irqs-off", "irq_disable -> irq_enable by cpu, next"),
    ("mmc", "mmc_request_start -> mmc_request_done by host,cmd_opcode, fifo"),
    ("cmd-irq", "command -> first IRQ after it (cmd-irq:irq=N,cmd=ENDPOINT to choose), next"),
    ("chain", "command -> IRQ entry -> handler exit -> wakeup -> switch-in of the issuer"),
    ("pulse:CH", "widths of the high pulses of channel CH (pulse:CH:low for low ones)"),
];

/// `cmd-irq` and `chain` options: the command endpoints and the IRQ.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CmdIrq {
    /// The command; `None` means `mmc_request_start` where the source has it, else
    /// `block_rq_issue`.
    pub cmd: Option<Endpoint>,
    /// The IRQ: an `irq_handler_entry` IRQ number, or any endpoint (a GPIO edge); `None`
    /// means the IRQ number that most often is the first `irq_handler_entry` after a command.
    pub irq: Option<IrqSel>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IrqSel {
    Number(i64),
    Endpoint(Endpoint),
}

/// Presets that are more than a pair rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Preset {
    Block,
    /// `sched_wakeup -> sched_switch` by `pid:next_pid`, policy first; a task seen running
    /// drops its open wakeups (their switch-in was not recorded), and they are noted. A
    /// source without `sched_wakeup` is paired from `sched_waking`, noted.
    Wakeup,
    CmdIrq {
        name: String,
        opts: CmdIrq,
    },
    Chain {
        name: String,
        opts: CmdIrq,
    },
}

impl Preset {
    pub fn name(&self) -> &str {
        match self {
            Preset::Block => "block",
            Preset::Wakeup => "wakeup",
            Preset::CmdIrq { name, .. } | Preset::Chain { name, .. } => name,
        }
    }
}

fn simple(name: &str, start: Endpoint, end: Endpoint, by: &[(&str, &str)], policy: Policy) -> Spec {
    let mut r = PairRule::new(name, start, end, policy);
    for (a, b) in by {
        r = r.by_mapped(a, b);
    }
    Spec::Pair(r)
}

fn state_pred(op: PredOp) -> Endpoint {
    Endpoint::event_where("cpu_idle", vec![Pred::new("state", op, "4294967295")])
}

/// The spec of a preset name (with options for `cmd-irq` and `chain`); `None` when `text`
/// names no preset.
fn parse_preset(text: &str) -> Result<Option<Spec>, SpecError> {
    let t = text.trim();
    let lead = text.len() - text.trim_start().len();
    Ok(Some(match t {
        "block" => Spec::Preset(Preset::Block),
        "irq-handler" => simple(
            "irq-handler",
            Endpoint::event("irq_handler_entry"),
            Endpoint::event("irq_handler_exit"),
            &[("cpu", "cpu"), ("irq", "irq")],
            Policy::Lifo,
        ),
        "softirq" => simple(
            "softirq",
            Endpoint::event("softirq_entry"),
            Endpoint::event("softirq_exit"),
            &[("cpu", "cpu"), ("vec", "vec")],
            Policy::Lifo,
        ),
        "wakeup" => Spec::Preset(Preset::Wakeup),
        "idle" => {
            simple("idle", state_pred(PredOp::Ne), state_pred(PredOp::Eq), &[("cpu", "cpu")], Policy::Next)
        }
        "irqs-off" => simple(
            "irqs-off",
            Endpoint::event("irq_disable"),
            Endpoint::event("irq_enable"),
            &[("cpu", "cpu")],
            Policy::Next,
        ),
        "mmc" => simple(
            "mmc",
            Endpoint::event("mmc_request_start"),
            Endpoint::event("mmc_request_done"),
            &[("host", "host"), ("cmd_opcode", "cmd_opcode")],
            Policy::Fifo,
        ),
        _ => {
            let mut c = Cursor::new(text);
            if c.eat("pulse:") {
                return parse_pulse(&mut c).map(Some);
            }
            let chain = if c.eat_word("cmd-irq") {
                false
            } else if c.eat_word("chain") {
                true
            } else {
                return Ok(None);
            };
            let opts = if c.eat(":") { parse_cmd_irq_opts(&mut c)? } else { CmdIrq::default() };
            if !c.at_end() {
                return Err(SpecError {
                    column: c.pos,
                    message: "expected ':' and options, or the end".into(),
                });
            }
            let name = text[lead..].trim_end().to_owned();
            if chain {
                Spec::Preset(Preset::Chain { name, opts })
            } else {
                Spec::Preset(Preset::CmdIrq { name, opts })
            }
        }
    }))
}

/// `irq=N|irq=ENDPOINT` and `cmd=ENDPOINT`, separated by commas.
fn parse_cmd_irq_opts(c: &mut Cursor<'_>) -> Result<CmdIrq, SpecError> {
    let mut o = CmdIrq::default();
    loop {
        if c.eat("irq=") {
            let save = c.pos;
            o.irq = Some(match c.number("an IRQ number") {
                Ok((n, at)) if !c.rest().starts_with(':') && !c.rest().starts_with('[') => {
                    IrqSel::Number(n.parse().map_err(|_| SpecError {
                        column: at,
                        message: "expected a whole IRQ number".into(),
                    })?)
                }
                _ => {
                    c.pos = save;
                    IrqSel::Endpoint(parse_endpoint(c, "the IRQ endpoint after 'irq='")?)
                }
            });
        } else if c.eat("cmd=") {
            o.cmd = Some(parse_endpoint(c, "the command endpoint after 'cmd='")?);
        } else {
            c.skip_ws();
            return Err(SpecError {
                column: c.pos,
                message: "expected irq=N, irq=ENDPOINT or cmd=ENDPOINT".into(),
            });
        }
        if !c.eat(",") {
            return Ok(o);
        }
    }
}

/// A spec that does not parse: where (0-based character offset) and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("column {column}: {message}")]
pub struct SpecError {
    pub column: usize,
    pub message: String,
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
    // `NAME=` before a detector names it (a pair rule's `NAME=` is read by `parse_pair`).
    let mut name = None;
    let save = c.pos;
    if let Ok(n) = c.name("a name") {
        c.skip_ws();
        let rest = c.rest();
        let detector =
            |r: &str| ["pulse:", "stall:", "long:", "poll:"].iter().any(|k| r.trim_start().starts_with(k));
        if rest.strip_prefix('=').is_some_and(detector) {
            c.pos += 1;
            name = Some(n);
        } else {
            c.pos = save;
        }
    } else {
        c.pos = save;
    }
    let spec = parse_detector(&mut c, text)?;
    match (spec, name) {
        (Some(spec), Some(n)) => Ok(spec.named(n)),
        (Some(spec), None) => Ok(spec),
        (None, _) => {
            if !text.contains("->")
                && let Some(p) = parse_preset(text)?
            {
                return Ok(p);
            }
            parse_pair(&mut c)
        }
    }
}

/// `pulse:`, `stall:`, `long:` and `poll:` specs; `None` when the text is none of them.
fn parse_detector(c: &mut Cursor<'_>, text: &str) -> Result<Option<Spec>, SpecError> {
    if c.eat("pulse:") {
        return parse_pulse(c).map(Some);
    }
    if c.eat("stall:") {
        let selector = parse_selector(c)?;
        let mut factor = 1.5;
        if c.eat_word("factor") {
            c.skip_ws();
            let at = c.pos;
            factor = c.float("a factor after 'factor', e.g. 1.5")?;
            if factor <= 0.0 {
                return err(at, "expected a factor above 0");
            }
        }
        expect_end(c, "'factor F' or the end of the rule")?;
        return Ok(Some(Spec::Stall { name: text.trim().to_owned(), selector, factor }));
    }
    if c.eat("long:") {
        let track = c.name("a track name after 'long:'")?;
        let (high, level) = parse_phase(c)?;
        if !c.eat_word("over") {
            return err(c.pos, "expected 'over DURATION' after the track");
        }
        let over = c.duration(false)?;
        expect_end(c, "the end of the rule after the duration")?;
        return Ok(Some(Spec::Long { name: text.trim().to_owned(), track, high, level, over }));
    }
    if c.eat("poll:") {
        let selector = parse_selector(c)?;
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
        expect_end(c, "'min N' or the end of the rule")?;
        return Ok(Some(Spec::Poll { name: text.trim().to_owned(), selector, spacing, min_iterations }));
    }
    Ok(None)
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
                if rule.by.len() == MAX_KEYS {
                    c.skip_ws();
                    return err(c.pos, format!("at most {} key fields", MAX_KEYS));
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
    match parse_preset(name)? {
        Some(s) => Ok(s),
        None => err(
            0,
            format!("expected a preset name: {}", PRESETS.iter().map(|p| p.0).collect::<Vec<_>>().join(", ")),
        ),
    }
}

/// A parsed `--align`.
#[derive(Debug, Clone, PartialEq)]
pub enum AlignSpec {
    Manual { source: usize, offset: Ps, drift_ppm: f64 },
    Match { source: usize, reference: Endpoint, other: Endpoint, drift: bool },
}

/// Parses an `--align` value: `N:OFFSET[:DRIFTppm]` or `N:match REF_ENDPOINT -> ENDPOINT
/// [drift]` (source indices count the inputs from 0; source 0 is the reference).
pub fn parse_align(text: &str) -> Result<AlignSpec, SpecError> {
    let mut c = Cursor::new(text);
    let (n, at) = c.number("a source index")?;
    let source: usize = n
        .parse()
        .map_err(|_| SpecError { column: at, message: "expected a source index (0, 1, …)".into() })?;
    if !c.eat(":") {
        return Err(SpecError { column: c.pos, message: "expected ':' after the source index".into() });
    }
    if c.eat_word("match") {
        let reference = parse_endpoint(&mut c, "the reference endpoint (in source 0)")?;
        if !c.eat("->") {
            return Err(SpecError {
                column: c.pos,
                message: "expected \"->\" after the reference endpoint".into(),
            });
        }
        let other = parse_endpoint(&mut c, "the endpoint in the aligned source")?;
        let drift = c.eat_word("drift");
        if !c.at_end() {
            return Err(SpecError { column: c.pos, message: "expected 'drift' or the end".into() });
        }
        return Ok(AlignSpec::Match { source, reference, other, drift });
    }
    let offset = c.duration(true)?;
    let mut drift_ppm = 0.0;
    if c.eat(":") {
        drift_ppm = c.float("a drift in ppm, e.g. +20ppm")?;
        if !c.eat("ppm") {
            return Err(SpecError { column: c.pos, message: "expected 'ppm' after the drift".into() });
        }
    }
    if !c.at_end() {
        return Err(SpecError { column: c.pos, message: "expected ':DRIFTppm' or the end".into() });
    }
    Ok(AlignSpec::Manual { source, offset, drift_ppm })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_before_a_detector_names_it() {
        let s = parse_spec("dma_stall=stall:DMA:rise factor 2").expect("spec");
        assert_eq!(s.name(), "dma_stall");
        assert!(matches!(s, Spec::Stall { factor, .. } if factor == 2.0));
        assert_eq!(parse_spec("w = pulse:D1:low").expect("spec").name(), "w");
        assert_eq!(parse_spec("stall:DMA:rise").expect("spec").name(), "stall:DMA:rise");
        // A pair rule's name, and presets with options, are read as before.
        assert_eq!(parse_spec("io=a -> b").expect("spec").name(), "io");
        assert_eq!(parse_spec("cmd-irq:irq=36").expect("spec").name(), "cmd-irq:irq=36");
        assert_eq!(parse_spec("x=stall:").map_err(|e| e.column), Err(8));
    }

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

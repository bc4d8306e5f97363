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
//!
//! The grammar is written with nom combinators over `&str`. Productions fail recoverably
//! where an alternative may still match and with `cut` once committed; every failure carries
//! the text left where it happened and what was expected there, turned into a 0-based
//! character column for [`SpecError`]. Blanks are skipped before a token (and after a bare
//! endpoint name), so an error points at the first character that does not fit.

use crate::endpoint::{Edge, Endpoint, Level, Pred, PredOp};
use crate::pairing::{MAX_KEYS, PairRule, Policy};
use latscope_model::kernel::{self, CPU_IDLE_EXIT_STATE};
use latscope_model::{PS_PER_NS, PS_PER_S, PS_PER_US, Ps};
use nom::branch::alt;
use nom::bytes::complete::{tag, take_till, take_while};
use nom::character::complete::{char, one_of, satisfy};
use nom::combinator::{cut, eof, map, map_res, not, opt, peek, recognize, value, verify};
use nom::error::{ErrorKind, FromExternalError, ParseError};
use nom::multi::{many1_count, separated_list1};
use nom::sequence::{preceded, terminated};
use nom::{IResult, Parser};

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
    (
        "chain",
        "command -> IRQ entry -> handler exit -> wakeup -> switch-in of the issuer (through a decoded SD bus when there is one)",
    ),
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
        /// The IRQ line of a chain through a decoded SD bus (`line=ENDPOINT`; by default a
        /// digital track named `IRQ`).
        line: Option<Endpoint>,
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
    Endpoint::event_where(
        kernel::CPU_IDLE.name,
        vec![Pred::new("state", op, CPU_IDLE_EXIT_STATE.to_string())],
    )
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
            Endpoint::event(kernel::IRQ_HANDLER_ENTRY.name),
            Endpoint::event(kernel::IRQ_HANDLER_EXIT.name),
            &[("cpu", "cpu"), ("irq", "irq")],
            Policy::Lifo,
        ),
        "softirq" => simple(
            "softirq",
            Endpoint::event(kernel::SOFTIRQ_ENTRY.name),
            Endpoint::event(kernel::SOFTIRQ_EXIT.name),
            &[("cpu", "cpu"), ("vec", "vec")],
            Policy::Lifo,
        ),
        "wakeup" => Spec::Preset(Preset::Wakeup),
        "idle" => {
            simple("idle", state_pred(PredOp::Ne), state_pred(PredOp::Eq), &[("cpu", "cpu")], Policy::Next)
        }
        "irqs-off" => simple(
            "irqs-off",
            Endpoint::event(kernel::IRQ_DISABLE.name),
            Endpoint::event(kernel::IRQ_ENABLE.name),
            &[("cpu", "cpu")],
            Policy::Next,
        ),
        "mmc" => simple(
            "mmc",
            Endpoint::event(kernel::MMC_REQUEST_START.name),
            Endpoint::event(kernel::MMC_REQUEST_DONE.name),
            &[("host", "host"), ("cmd_opcode", "cmd_opcode")],
            Policy::Fifo,
        ),
        _ => {
            let c = Cursor::new(text);
            if let Ok((i, _)) = sym("pulse:").parse(text) {
                return c.finish(i, pulse).map(Some);
            }
            let Ok((i, chain)) =
                preceded(ws, alt((value(false, word("cmd-irq")), value(true, word("chain"))))).parse(text)
            else {
                return Ok(None);
            };
            let opts = (opt(preceded(sym(":"), cmd_irq_opts)), end_of_text("':' and options, or the end"));
            let (opts, line) = c.finish(i, opts)?.0.unwrap_or_default();
            let name = text[lead..].trim_end().to_owned();
            if chain {
                Spec::Preset(Preset::Chain { name, opts, line: line.map(|l| l.1) })
            } else if let Some((at, _)) = line {
                return err(
                    c.column(at),
                    "line= is an option of chain (the IRQ line after a decoded SD bus)",
                );
            } else {
                Spec::Preset(Preset::CmdIrq { name, opts })
            }
        }
    }))
}

/// `irq=N|irq=ENDPOINT`, `cmd=ENDPOINT` and `line=ENDPOINT` (with where it was written),
/// separated by commas; a later one overrides.
type LineOpt<'a> = Option<(&'a str, Endpoint)>;

fn cmd_irq_opts(i: &str) -> PResult<'_, (CmdIrq, LineOpt<'_>)> {
    // A number not followed by `:` or `[` is an IRQ number (a bad one is an error), anything
    // else an endpoint.
    let irq_number = |i| {
        let (rest, (n, at)) = terminated(number("an IRQ number"), not(one_of(":["))).parse(i)?;
        match n.parse() {
            Ok(n) => Ok((rest, IrqSel::Number(n))),
            Err(_) => fail(at, "expected a whole IRQ number"),
        }
    };
    let irq = preceded(
        sym("irq="),
        cut(alt((irq_number, map(endpoint("the IRQ endpoint after 'irq='"), IrqSel::Endpoint)))),
    );
    let cmd = preceded(sym("cmd="), cut(endpoint("the command endpoint after 'cmd='")));
    let line = |i| {
        let (at, _) = ws(i)?;
        let (rest, ep) = preceded(tag("line="), cut(endpoint("the IRQ line after 'line='"))).parse(at)?;
        Ok((rest, (at, ep)))
    };
    let item = alt((
        map(irq, |s| (Some(s), None, None)),
        map(cmd, |e| (None, Some(e), None)),
        map(line, |l| (None, None, Some(l))),
    ));
    let what = || "expected irq=N, irq=ENDPOINT or cmd=ENDPOINT (and line=ENDPOINT for chain)".into();
    let item = preceded(ws, expect(item, what));
    map(separated_list1(sym(","), item), |items| {
        items.into_iter().fold((CmdIrq::default(), None), |(mut o, mut l), (irq, cmd, line)| {
            o.irq = irq.or(o.irq);
            o.cmd = cmd.or(o.cmd);
            l = line.or(l);
            (o, l)
        })
    })
    .parse(i)
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

/// A parse error inside the grammar: the text left where it happened, and what was expected.
/// Combinators that fail without saying what they expected (`tag`, `not`, …) leave `message`
/// empty; every path that can end a parse goes through [`expect`] or a production that fills
/// it in.
#[derive(Debug)]
struct Fail<'a> {
    at: &'a str,
    message: Option<String>,
}

impl<'a> Fail<'a> {
    fn new(at: &'a str, message: impl Into<String>) -> Self {
        Self { at, message: Some(message.into()) }
    }
}

impl<'a> ParseError<&'a str> for Fail<'a> {
    fn from_error_kind(at: &'a str, _: ErrorKind) -> Self {
        Self { at, message: None }
    }
    fn append(_: &'a str, _: ErrorKind, other: Self) -> Self {
        other
    }
}

impl<'a> FromExternalError<&'a str, Fail<'a>> for Fail<'a> {
    fn from_external_error(_: &'a str, _: ErrorKind, e: Fail<'a>) -> Self {
        e
    }
}

type PResult<'a, T> = IResult<&'a str, T, Fail<'a>>;

/// The text being parsed, to turn the grammar's positions (the text left) into columns.
struct Cursor<'a> {
    text: &'a str,
}

impl<'a> Cursor<'a> {
    fn new(text: &'a str) -> Self {
        Self { text }
    }

    /// The 0-based character column of `rest`, a tail of the text.
    fn column(&self, rest: &str) -> usize {
        let consumed = self.text.len().saturating_sub(rest.len());
        self.text.get(..consumed).map_or(0, |s| s.chars().count())
    }

    fn error(&self, e: nom::Err<Fail<'_>>) -> SpecError {
        match e {
            nom::Err::Error(f) | nom::Err::Failure(f) => SpecError {
                column: self.column(f.at),
                message: f.message.unwrap_or_else(|| "unexpected text".into()),
            },
            nom::Err::Incomplete(_) => {
                SpecError { column: self.text.chars().count(), message: "unexpected end".into() }
            }
        }
    }

    /// Runs `p` on `rest` (a tail of the text), the result or its error with a column.
    fn finish<T>(
        &self,
        rest: &'a str,
        mut p: impl Parser<&'a str, Output = T, Error = Fail<'a>>,
    ) -> Result<T, SpecError> {
        p.parse(rest).map(|(_, v)| v).map_err(|e| self.error(e))
    }

    /// A duration with a unit, e.g. `12.5us`, at the start of the text; signed when `signed`.
    #[cfg(test)]
    fn duration(&self, signed: bool) -> Result<Ps, SpecError> {
        self.finish(self.text, duration(signed))
    }
}

/// Blanks (any Unicode white space); never fails.
fn ws(i: &str) -> PResult<'_, &str> {
    take_while(char::is_whitespace).parse(i)
}

/// `s` after blanks.
fn sym<'a>(s: &'static str) -> impl Parser<&'a str, Output = &'a str, Error = Fail<'a>> {
    preceded(ws, tag(s))
}

/// Keyword `w` when no name character follows it (`by` is not the start of `bypass`).
fn word<'a>(w: &'static str) -> impl Parser<&'a str, Output = &'a str, Error = Fail<'a>> {
    terminated(tag(w), not(satisfy(is_name_char)))
}

/// `p`, and where it does not match, a failure at that point saying what was expected.
fn expect<'a, T>(
    mut p: impl Parser<&'a str, Output = T, Error = Fail<'a>>,
    what: impl Fn() -> String,
) -> impl FnMut(&'a str) -> PResult<'a, T> {
    move |i| match p.parse(i) {
        Err(nom::Err::Error(_)) => Err(nom::Err::Failure(Fail::new(i, what()))),
        other => other,
    }
}

/// The end of the text after blanks, or a failure there saying what else could come.
fn end_of_text<'a>(what: &'static str) -> impl FnMut(&'a str) -> PResult<'a, ()> {
    move |i| {
        let (i, _) = ws(i)?;
        expect(map(eof, |_| ()), || format!("expected {what}"))(i)
    }
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '.' | '-' | '/' | '$' | '#')
}

/// A name after blanks: a run of name characters (a `-` only when no `>` follows, so
/// `a->b` is two names), or a double-quoted string. Fails recoverably: callers that commit
/// to a name wrap it in `cut`.
fn name<'a>(what: &str) -> impl FnMut(&'a str) -> PResult<'a, String> {
    move |i| {
        let (i, _) = ws(i)?;
        let quoted = preceded(char('"'), terminated(take_till(|c| c == '"'), char('"')));
        let bare = recognize(many1_count(alt((
            satisfy(|c| is_name_char(c) && c != '-'),
            terminated(char('-'), not(char('>'))),
        ))));
        let found: PResult<'a, &str> = alt((quoted, bare)).parse(i);
        match found {
            Ok((rest, s)) => Ok((rest, s.to_owned())),
            Err(nom::Err::Error(_)) if i.starts_with('"') => Err(nom::Err::Error(Fail::new(
                i,
                format!("expected a closing '\"' for the {what} opened here"),
            ))),
            Err(_) => Err(nom::Err::Error(Fail::new(i, format!("expected {what}")))),
        }
    }
}

/// A predicate value after blanks: a quoted string, or the text up to `,` or `]`, trimmed.
fn pred_value(i: &str) -> PResult<'_, String> {
    let (i, _) = ws(i)?;
    if i.starts_with('"') {
        return cut(name("value")).parse(i);
    }
    map(take_till(|c| c == ',' || c == ']'), |v: &str| v.trim().to_owned()).parse(i)
}

/// A plain decimal number after blanks (optional sign, digits and dots, at least one digit),
/// with the text where it starts.
fn number<'a>(what: &'static str) -> impl FnMut(&'a str) -> PResult<'a, (&'a str, &'a str)> {
    move |i| {
        let (i, _) = ws(i)?;
        let digits = recognize((opt(one_of("+-")), take_while(|c: char| c.is_ascii_digit() || c == '.')));
        let found: PResult<'a, &str> =
            verify(digits, |s: &str| s.contains(|c: char| c.is_ascii_digit())).parse(i);
        match found {
            Ok((rest, n)) => Ok((rest, (n, i))),
            Err(_) => Err(nom::Err::Error(Fail::new(i, format!("expected {what}")))),
        }
    }
}

/// A finite decimal number after blanks.
fn float<'a>(what: &'static str) -> impl FnMut(&'a str) -> PResult<'a, f64> {
    move |i| {
        let finite = |(n, at): (&'a str, &'a str)| {
            n.parse::<f64>()
                .ok()
                .filter(|f| f.is_finite())
                .ok_or_else(|| Fail::new(at, format!("expected {what}")))
        };
        map_res(number(what), finite).parse(i)
    }
}

/// A duration after blanks: a number and a unit (`ps ns us ms s`); signed when `signed`.
fn duration<'a>(signed: bool) -> impl FnMut(&'a str) -> PResult<'a, Ps> {
    move |i| {
        let what = "a duration such as 500us (units ps ns us ms s)";
        let (i, _) = ws(i)?;
        let (rest, (num, _)) = cut(number(what)).parse(i)?;
        let (unit_at, _) = ws(rest)?;
        let (rest, unit) = take_while(char::is_alphabetic).parse(unit_at)?;
        let scale: Ps = match unit {
            "ps" => 1,
            "ns" => PS_PER_NS,
            "us" | "µs" => PS_PER_US,
            "ms" => PS_PER_US * 1000,
            "s" => PS_PER_S,
            "" => return fail(unit_at, "expected a unit after the number: ps ns us ms s"),
            _ => return fail(unit_at, format!("expected a unit ps ns us ms s, found {unit:?}")),
        };
        let Some(v) = scaled(num, scale) else { return fail(i, format!("expected {what}")) };
        if !signed && v < 0 {
            return fail(i, "expected a duration that is not negative");
        }
        Ok((rest, v))
    }
}

fn fail<'a, T>(at: &'a str, message: impl Into<String>) -> PResult<'a, T> {
    Err(nom::Err::Failure(Fail::new(at, message)))
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

/// `field OP value` inside an event's brackets.
fn predicate(i: &str) -> PResult<'_, Pred> {
    let (i, field) = cut(name("a field name in the predicate list")).parse(i)?;
    let (i, _) = ws(i)?;
    let ops = alt((
        value(PredOp::Ne, tag("!=")),
        value(PredOp::NotContains, tag("!~")),
        value(PredOp::Eq, tag("=")),
        value(PredOp::Contains, tag("~")),
    ));
    let (i, op) = expect(ops, || format!("expected =, !=, ~ or !~ after field {field:?}"))(i)?;
    let (i, value) = pred_value(i)?;
    Ok((i, Pred::new(field, op, value)))
}

/// `[pred, pred, …]` after an event name; a trailing comma is allowed, `[]` is no predicate.
fn predicates(i: &str) -> PResult<'_, Vec<Pred>> {
    let list = terminated(
        separated_list1(sym(","), preceded(not(sym("]")), predicate)),
        (opt(sym(",")), preceded(ws, expect(char(']'), || "expected ',' or ']' after a predicate".into()))),
    );
    preceded(char('['), alt((value(Vec::new(), sym("]")), list))).parse(i)
}

/// `rise|fall|any[@LEVEL]` right after `CHANNEL:`.
fn edge(i: &str, track: String) -> PResult<'_, Endpoint> {
    let edges = alt((
        value(Edge::Rise, word("rise")),
        value(Edge::Fall, word("fall")),
        value(Edge::Any, word("any")),
    ));
    let (i, edge) = expect(preceded(ws, edges), || "expected rise, fall or any after ':'".into())(i)?;
    let (i, level) =
        opt(preceded(char('@'), cut(float("a threshold level after '@', e.g. 1.65")))).parse(i)?;
    Ok((
        i,
        match level {
            Some(level) => Endpoint::Crossing { track, edge, level: Level(level) },
            None => Endpoint::edge(track, edge),
        },
    ))
}

/// An endpoint: `event[preds]`, `CH:rise|fall|any[@LEVEL]`, or a bare name (an event
/// endpoint; `stall:`/`poll:` also try it as a track when no source has the event). Blanks
/// after a bare name are consumed, so what follows is reported where it starts.
fn endpoint<'a>(which: &'static str) -> impl FnMut(&'a str) -> PResult<'a, Endpoint> {
    move |i| {
        let what = format!("{which}: an event name or CHANNEL:rise|fall|any");
        let (i, n) = cut(name(&what)).parse(i)?;
        let (i, _) = ws(i)?;
        if i.starts_with('[') {
            let (i, preds) = predicates(i)?;
            return Ok((i, Endpoint::event_where(n, preds)));
        }
        if let Some(after) = i.strip_prefix(':') {
            return edge(after, n);
        }
        Ok((i, Endpoint::event(n)))
    }
}

/// Parses one spec. Presets are accepted too (`block`, `cmd-irq:irq=36`, `pulse:D1`).
pub fn parse_spec(text: &str) -> Result<Spec, SpecError> {
    let c = Cursor::new(text);
    if text.trim_start().is_empty() {
        return err(0, "expected a rule: [NAME=]START -> END, pulse:CH, stall:TRACK or a preset name");
    }
    // `NAME=` before a detector names it (a pair rule's `NAME=` is read by `pair`).
    let detector_word = (ws, alt((tag("pulse:"), tag("stall:"), tag("long:"), tag("poll:"))));
    let named = opt(terminated(name("a name"), (ws, char('='), peek(detector_word)))).parse(text);
    let (i, label) = named.unwrap_or((text, None));
    let spec = c.finish(i, |i| detector(i, text))?;
    match (spec, label) {
        (Some(spec), Some(n)) => Ok(spec.named(n)),
        (Some(spec), None) => Ok(spec),
        (None, _) => {
            if !text.contains("->")
                && let Some(p) = parse_preset(text)?
            {
                return Ok(p);
            }
            c.finish(text, pair)
        }
    }
}

/// `pulse:`, `stall:`, `long:` and `poll:` specs; `None` when the text is none of them.
/// Detectors are named by their whole text (`text`).
fn detector<'a>(i: &'a str, text: &str) -> PResult<'a, Option<Spec>> {
    let whole = || text.trim().to_owned();
    if let Ok((i, _)) = sym("pulse:").parse(i) {
        return map(pulse, Some).parse(i);
    }
    if let Ok((i, _)) = sym("stall:").parse(i) {
        let (i, selector) = endpoint("a selector")(i)?;
        let factor = preceded((ws, word("factor")), cut(factor));
        let (i, factor) = map(opt(factor), |f| f.unwrap_or(1.5)).parse(i)?;
        let (i, _) = end_of_text("'factor F' or the end of the rule")(i)?;
        return Ok((i, Some(Spec::Stall { name: whole(), selector, factor })));
    }
    if let Ok((i, _)) = sym("long:").parse(i) {
        let (i, track) = cut(name("a track name after 'long:'")).parse(i)?;
        let (i, (high, level)) = phase(i)?;
        let (i, _) =
            expect(preceded(ws, word("over")), || "expected 'over DURATION' after the track".into())(i)?;
        let (i, over) = duration(false)(i)?;
        let (i, _) = end_of_text("the end of the rule after the duration")(i)?;
        return Ok((i, Some(Spec::Long { name: whole(), track, high, level, over })));
    }
    if let Ok((i, _)) = sym("poll:").parse(i) {
        let (i, selector) = endpoint("a selector")(i)?;
        let within = || "expected 'within DURATION' (the largest spacing inside a loop)".into();
        let (i, _) = expect(preceded(ws, word("within")), within)(i)?;
        let (i, spacing) = duration(false)(i)?;
        let min = preceded((ws, word("min")), cut(iterations));
        let (i, min_iterations) = map(opt(min), |n| n.unwrap_or(2)).parse(i)?;
        let (i, _) = end_of_text("'min N' or the end of the rule")(i)?;
        return Ok((i, Some(Spec::Poll { name: whole(), selector, spacing, min_iterations })));
    }
    Ok((i, None))
}

/// The factor of `stall:… factor F`: above 0.
fn factor(i: &str) -> PResult<'_, f64> {
    let (i, _) = ws(i)?;
    let (rest, f) = cut(float("a factor after 'factor', e.g. 1.5")).parse(i)?;
    if f <= 0.0 { fail(i, "expected a factor above 0") } else { Ok((rest, f)) }
}

/// The count of `poll:… min N`: a whole number of at least 2.
fn iterations(i: &str) -> PResult<'_, u32> {
    map_res(number("an iteration count after 'min'"), |(n, at)| {
        n.parse()
            .ok()
            .filter(|&n| n >= 2)
            .ok_or_else(|| Fail::new(at, "expected a whole iteration count of at least 2"))
    })
    .parse(i)
}

/// `CHANNEL[:high|:low][@LEVEL]` after `pulse:`, to the end of the text.
fn pulse(i: &str) -> PResult<'_, Spec> {
    let (i, channel) = cut(name("a channel name after 'pulse:'")).parse(i)?;
    let (i, (high, level)) = phase(i)?;
    let (i, _) = end_of_text("':high', ':low', '@LEVEL' or the end of the rule")(i)?;
    let name = format!("pulse:{channel}{}", if high { "" } else { ":low" });
    Ok((i, Spec::Pulse { name, channel, high, level }))
}

/// `[:high|:low][@LEVEL]` after a channel.
fn phase(i: &str) -> PResult<'_, (bool, Option<f64>)> {
    let high_low = alt((value(true, word("high")), value(false, word("low"))));
    let high_low = expect(preceded(ws, high_low), || "expected high or low after ':'".into());
    let (i, high) = map(opt(preceded(sym(":"), high_low)), |h| h.unwrap_or(true)).parse(i)?;
    let (i, _) = ws(i)?;
    let (i, level) =
        opt(preceded(char('@'), cut(float("a threshold level after '@', e.g. 1.65")))).parse(i)?;
    Ok((i, (high, level)))
}

/// `[NAME=]START -> END` and its clauses `by`, `policy`, `within`, each at most once.
fn pair(text: &str) -> PResult<'_, Spec> {
    let (i, _) = ws(text)?;
    // `NAME=` prefix: a name followed by '=' (a predicate's '=' is inside brackets).
    let (i, label) = opt(terminated(name("a name"), (ws, char('=')))).parse(i)?;
    let (start_at, _) = ws(i)?;
    let (i, start) = endpoint("the start endpoint")(start_at)?;
    let start_text = &start_at[..start_at.len() - i.len()];
    let (i, _) =
        preceded(ws, expect(tag("->"), || "expected \"->\" after the start endpoint".into())).parse(i)?;
    let (end_at, _) = ws(i)?;
    let (mut i, end) = endpoint("the end endpoint")(end_at)?;
    let end_text = &end_at[..end_at.len() - i.len()];
    let name = label.unwrap_or_else(|| format!("{}->{}", start_text.trim(), end_text.trim()));
    let mut rule = PairRule::new(name, start, end, Policy::Fifo);
    let mut seen = [false; 3];
    loop {
        let (at, _) = ws(i)?;
        if at.is_empty() {
            return Ok((at, Spec::Pair(rule)));
        }
        let clause = alt((value(0, word("by")), value(1, word("policy")), value(2, word("within"))));
        let (rest, k) =
            expect(clause, || "expected 'by', 'policy', 'within' or the end of the rule".into())(at)?;
        if std::mem::replace(&mut seen[k], true) {
            let word = ["by", "policy", "within"][k];
            return fail(at, format!("'{word}' given twice"));
        }
        i = match k {
            0 => {
                let (rest, keys) = keys(rest)?;
                rule.by = keys;
                rest
            }
            1 => {
                let policies = alt((
                    value(Policy::Fifo, word("fifo")),
                    value(Policy::Lifo, word("lifo")),
                    value(Policy::Next, word("next")),
                    value(Policy::First, word("first")),
                ));
                let policy = expect(policies, || "expected fifo, lifo, next or first after 'policy'".into());
                let (rest, p) = preceded(ws, policy).parse(rest)?;
                rule.policy = p;
                rest
            }
            _ => {
                let (rest, d) = duration(false)(rest)?;
                rule.within = Some(d);
                rest
            }
        };
    }
}

/// The key fields after `by`: `field` or `start_field:end_field`, at most [`MAX_KEYS`].
fn keys<'a>(i: &'a str) -> PResult<'a, Vec<(String, String)>> {
    let mut count = 0;
    let key = move |i: &'a str| -> PResult<'a, (String, String)> {
        let (i, _) = ws(i)?;
        if count == MAX_KEYS {
            return fail(i, format!("at most {} key fields", MAX_KEYS));
        }
        count += 1;
        let (i, a) = cut(name("a key field after 'by'")).parse(i)?;
        let (i, b) = opt(preceded(sym(":"), cut(name("the end field after ':' in a key")))).parse(i)?;
        let b = b.unwrap_or_else(|| a.clone());
        Ok((i, (a, b)))
    };
    separated_list1(sym(","), key).parse(i)
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

impl AlignSpec {
    /// The index of the source it aligns (onto source 0).
    pub fn source(&self) -> usize {
        match self {
            AlignSpec::Manual { source, .. } | AlignSpec::Match { source, .. } => *source,
        }
    }

    /// The same alignment, of source `index` (a front end that aligns a pair numbers it 1).
    pub fn of_source(mut self, index: usize) -> Self {
        match &mut self {
            AlignSpec::Manual { source, .. } | AlignSpec::Match { source, .. } => *source = index,
        }
        self
    }
}

/// Parses an `--align` value: `N:OFFSET[:DRIFTppm]` or `N:match REF_ENDPOINT -> ENDPOINT
/// [drift]` (source indices count the inputs from 0; source 0 is the reference).
pub fn parse_align(text: &str) -> Result<AlignSpec, SpecError> {
    let c = Cursor::new(text);
    c.finish(text, align)
}

fn align(i: &str) -> PResult<'_, AlignSpec> {
    let index = map_res(number("a source index"), |(n, at)| {
        n.parse::<usize>().map_err(|_| Fail::new(at, "expected a source index (0, 1, …)"))
    });
    let (i, source) = cut(index).parse(i)?;
    let (i, _) = preceded(ws, expect(char(':'), || "expected ':' after the source index".into())).parse(i)?;
    if let Ok((i, _)) = preceded(ws, word("match")).parse(i) {
        let (i, reference) = endpoint("the reference endpoint (in source 0)")(i)?;
        let arrow = expect(tag("->"), || "expected \"->\" after the reference endpoint".into());
        let (i, _) = preceded(ws, arrow).parse(i)?;
        let (i, other) = endpoint("the endpoint in the aligned source")(i)?;
        let (i, drift) = map(opt(preceded(ws, word("drift"))), |d| d.is_some()).parse(i)?;
        let (i, _) = end_of_text("'drift' or the end")(i)?;
        return Ok((i, AlignSpec::Match { source, reference, other, drift }));
    }
    let (i, offset) = duration(true)(i)?;
    let ppm = preceded(
        sym(":"),
        cut(terminated(
            float("a drift in ppm, e.g. +20ppm"),
            preceded(ws, expect(tag("ppm"), || "expected 'ppm' after the drift".into())),
        )),
    );
    let (i, drift_ppm) = map(opt(ppm), |d| d.unwrap_or(0.0)).parse(i)?;
    let (i, _) = end_of_text("':DRIFTppm' or the end")(i)?;
    Ok((i, AlignSpec::Manual { source, offset, drift_ppm }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_idle_preset_says_the_exit_state_it_pairs_on() {
        let idle = PRESETS.iter().find(|(name, _)| *name == "idle").map(|(_, text)| *text);
        let exit = CPU_IDLE_EXIT_STATE.to_string();
        assert_eq!(idle, Some(format!("cpu_idle state!={exit} -> state={exit} by cpu, next").as_str()));
    }

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

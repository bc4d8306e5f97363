//! Value Change Dump (IEEE 1364 §18, plus GTKWave/GHDL/EVCD extensions).
//!
//! A token-stream reader over the raw bytes: line breaks carry no meaning, id codes may
//! contain `#`/`$` or start with digits, and a value is told from a timestamp only by its
//! first character at the start of an item. 1-bit variables become digital tracks (levels
//! 0/1/X/Z, weak H/L read as 1/0); vectors, integers and reals become sample-and-hold
//! analog tracks. Malformed items are counted with their line and skipped.
//!
//! wellen reads FST and GHW (see `wave`); for VCD this reader is used because it accepts
//! `$timezero`, EVCD ports and the quirks of real writers that wellen rejects.

mod timescale;

pub use timescale::{TickScale, parse_timescale};

use crate::{LoadControl, ParseFailure, Position, budget};
use latscope_model::{AnalogTrack, Diagnostics, DigitalTrack, Ps, Source, SourceKind};
use rustc_hash::FxHashMap;

/// Scope nesting beyond this is refused: no real design nests this deep.
pub const MAX_SCOPE_DEPTH: usize = 1024;
/// Variables declared in one file.
pub const MAX_VARS: usize = 1 << 20;
/// Value changes kept across all variables. A change costs 9 bytes (1-bit) or 12 bytes
/// (vector, real), so the tracks stay under 2.4 GB. VCD is plain text written at 3+ bytes
/// a change, so memory follows the file's size (no compression to amplify it): a file that
/// reaches the limit is 600+ MB. It bounds the pathological case, not real simulations.
pub const MAX_CHANGES: usize = 200_000_000;
/// Longest token (identifier, value, word of a declaration). The longest legitimate token
/// is a vector value, one character per bit; no simulator dumps million-bit vectors, and
/// without a cap an endless token would be scanned (and, in a name, copied) whole.
pub const MAX_TOKEN_BYTES: usize = 1 << 20;
/// Tokens kept from one declaration (`$var`, `$scope`, `$timescale`, `$version`): real
/// ones have fewer than 10, and a declaration with no `$end` must not collect the whole
/// file as a token list (16 bytes per token). Comments are skipped without collecting.
pub const MAX_DECLARATION_TOKENS: usize = 4096;
/// Longest hierarchical scope path (`top.cpu.core0…`) a variable name may get: scope
/// names are copied into every variable's name, so nesting × name length is bounded.
pub const MAX_SCOPE_PATH_BYTES: usize = 64 * 1024;
/// Total length of all variable names. Each name repeats its scope path, so a file of a few
/// megabytes declaring many variables under a long path would otherwise need gigabytes
/// (path × variables); real designs' names total a few megabytes even with 10^5 signals.
pub const MAX_NAME_BYTES: usize = 32 << 20;
const PROGRESS_STEP: usize = 1 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum VarKind {
    Bit,
    Vector,
    Real,
    Text,
}

#[derive(Debug)]
struct Var {
    name: String,
    kind: VarKind,
    width: u32,
    digital: Option<DigitalTrack>,
    times: Vec<Ps>,
    values: Vec<f32>,
}

/// Splits input into whitespace-separated tokens, remembering where each starts.
/// A limit hit, it ends the token stream; the parser returns it as the file's error.
struct Tokens<'a> {
    data: &'a [u8],
    pos: usize,
    stop: Option<ParseFailure>,
}

impl<'a> Tokens<'a> {
    fn new(data: &'a [u8]) -> Self {
        Self { data, pos: 0, stop: None }
    }

    fn next(&mut self) -> Option<(usize, &'a [u8])> {
        let d = self.data;
        let mut i = self.pos;
        while i < d.len() && d[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= d.len() {
            self.pos = i;
            return None;
        }
        let start = i;
        let cap = d.len().min(start + MAX_TOKEN_BYTES + 1);
        while i < cap && !d[i].is_ascii_whitespace() {
            i += 1;
        }
        if i - start > MAX_TOKEN_BYTES {
            self.refuse(start, "VCD token".into(), format!("{MAX_TOKEN_BYTES} bytes"));
            return None;
        }
        self.pos = i;
        Some((start, &d[start..i]))
    }

    /// Ends the stream with a limit error at the line holding byte `at`.
    fn refuse(&mut self, at: usize, what: String, limit: String) {
        self.stop = Some(ParseFailure::Limit { at: Position::Line(line_of(self.data, at)), what, limit });
        self.pos = self.data.len();
    }

    /// Tokens up to (not including) `$end`; `None` if the file ends first or the
    /// declaration has more than [`MAX_DECLARATION_TOKENS`].
    fn until_end(&mut self) -> Option<Vec<&'a [u8]>> {
        let mut out = Vec::new();
        loop {
            let (at, t) = self.next()?;
            if t == b"$end" {
                return Some(out);
            }
            if out.len() >= MAX_DECLARATION_TOKENS {
                let what = "tokens in one VCD declaration (is its $end missing?)".into();
                self.refuse(at, what, MAX_DECLARATION_TOKENS.to_string());
                return None;
            }
            out.push(t);
        }
    }

    /// Skips to just after the next `$end` without keeping anything (comments, dates).
    fn skip_to_end(&mut self) {
        while let Some((_, t)) = self.next() {
            if t == b"$end" {
                return;
            }
        }
    }
}

/// True when `data` starts like a VCD: its first token is a VCD declaration keyword.
pub fn looks_like_vcd(data: &[u8]) -> bool {
    let start = data.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(data.len());
    let rest = &data[start..];
    const KEYWORDS: [&[u8]; 10] = [
        b"$date",
        b"$version",
        b"$timescale",
        b"$scope",
        b"$var",
        b"$comment",
        b"$upscope",
        b"$enddefinitions",
        b"$timezero",
        b"$attrbegin",
    ];
    KEYWORDS.iter().any(|k| rest.starts_with(k) && rest.get(k.len()).is_none_or(|b| b.is_ascii_whitespace()))
}

fn line_of(data: &[u8], offset: usize) -> u64 {
    memchr::memchr_iter(b'\n', &data[..offset.min(data.len())]).count() as u64 + 1
}

struct Reader<'a> {
    data: &'a [u8],
    diag: Diagnostics,
}

impl Reader<'_> {
    fn malformed(&mut self, offset: usize, msg: impl Into<String>) {
        // Line numbers are only computed for the few malformed items that are kept.
        let line = (self.diag.first_malformed.len() < latscope_model::MAX_KEPT_DIAGNOSTICS)
            .then(|| line_of(self.data, offset));
        self.diag.malformed(line, offset as u64, msg);
    }
}

pub fn parse(data: &[u8], ctl: &LoadControl) -> Result<Source, ParseFailure> {
    parse_with_limit(data, ctl, MAX_CHANGES)
}

/// [`parse`] with a lower change limit, so tests can hit it without a huge file.
fn parse_with_limit(data: &[u8], ctl: &LoadControl, max_changes: usize) -> Result<Source, ParseFailure> {
    // Refused before a change past the limit is stored.
    let too_many = |at: usize| ParseFailure::Limit {
        at: Position::Line(line_of(data, at)),
        what: "VCD value changes".into(),
        limit: format!("{max_changes} changes (~{} MB of tracks)", max_changes * 12 / 1_000_000),
    };
    let mut r = Reader { data, diag: Diagnostics::default() };
    let mut tok = Tokens::new(data);
    let mut scope_path_bytes = 0usize;
    let mut name_bytes = 0usize;
    let mut source = Source::new("", "vcd", SourceKind::File);
    let mut scale: Option<TickScale> = None;
    let mut timezero: i64 = 0;
    let mut scopes: Vec<String> = Vec::new();
    let mut vars: Vec<Var> = Vec::new();
    let mut ids: FxHashMap<&[u8], Vec<usize>> = FxHashMap::default();

    // Header: declarations up to $enddefinitions.
    let mut in_body = false;
    while let Some((at, t)) = tok.next() {
        match t {
            b"$enddefinitions" => {
                tok.skip_to_end();
                in_body = true;
                break;
            }
            b"$timescale" => {
                let body = tok.until_end().unwrap_or_default();
                let text = body.iter().map(|b| String::from_utf8_lossy(b)).collect::<Vec<_>>().join("");
                match parse_timescale(&text) {
                    Some(s) => {
                        source.metadata.push(("timescale".into(), text));
                        scale = Some(s);
                    }
                    None => r.malformed(at, format!("unusable $timescale {text:?}")),
                }
            }
            b"$timezero" => {
                let body = tok.until_end().unwrap_or_default();
                match body.first().and_then(|b| std::str::from_utf8(b).ok()?.parse::<i64>().ok()) {
                    Some(z) => timezero = z,
                    None => r.malformed(at, "unusable $timezero"),
                }
            }
            b"$scope" => {
                let body = tok.until_end().unwrap_or_default();
                // `$scope module $end` (an empty name) occurs in real files.
                let name = body.get(1).map(|b| String::from_utf8_lossy(b).into_owned()).unwrap_or_default();
                scope_path_bytes += name.len() + 1;
                if scope_path_bytes > MAX_SCOPE_PATH_BYTES {
                    return Err(ParseFailure::Limit {
                        at: Position::Line(line_of(data, at)),
                        what: "VCD scope path length".into(),
                        limit: format!("{MAX_SCOPE_PATH_BYTES} bytes"),
                    });
                }
                scopes.push(name);
                if scopes.len() > MAX_SCOPE_DEPTH {
                    return Err(ParseFailure::Limit {
                        at: Position::Line(line_of(data, at)),
                        what: "VCD scope nesting".into(),
                        limit: format!("{MAX_SCOPE_DEPTH} levels"),
                    });
                }
            }
            b"$upscope" => {
                tok.skip_to_end();
                if let Some(name) = scopes.pop() {
                    scope_path_bytes -= name.len() + 1;
                }
            }
            b"$var" => {
                let Some(body) = tok.until_end() else { break };
                if body.len() < 4 {
                    r.malformed(at, "$var needs a type, a size, an id and a name");
                    continue;
                }
                if vars.len() >= MAX_VARS {
                    return Err(ParseFailure::Limit {
                        at: Position::Line(line_of(data, at)),
                        what: "VCD variables".into(),
                        limit: MAX_VARS.to_string(),
                    });
                }
                let var_type = body[0].to_ascii_lowercase();
                let width = var_width(body[1]);
                let kind = match var_type.as_slice() {
                    b"real" | b"realtime" | b"shortreal" | b"real_parameter" => VarKind::Real,
                    b"string" => VarKind::Text,
                    _ if width == 1 => VarKind::Bit,
                    _ => VarKind::Vector,
                };
                let reference =
                    body[3..].iter().map(|b| String::from_utf8_lossy(b)).collect::<Vec<_>>().join(" ");
                let name = scopes
                    .iter()
                    .filter(|s| !s.is_empty())
                    .chain(std::iter::once(&reference))
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(".");
                name_bytes += name.len();
                if name_bytes > MAX_NAME_BYTES {
                    return Err(ParseFailure::Limit {
                        at: Position::Line(line_of(data, at)),
                        what: "total length of VCD variable names (each repeats its scope path)".into(),
                        limit: format!("{MAX_NAME_BYTES} bytes"),
                    });
                }
                ids.entry(body[2]).or_default().push(vars.len());
                vars.push(Var { name, kind, width, digital: None, times: Vec::new(), values: Vec::new() });
            }
            b"$version" => {
                let body = tok.until_end().unwrap_or_default();
                let text = body.iter().map(|b| String::from_utf8_lossy(b)).collect::<Vec<_>>().join(" ");
                source.metadata.push(("writer".into(), text));
            }
            _ if t.starts_with(b"$") => {
                // $date, $comment, $attrbegin … and unknown declarations: skip to $end.
                if t != b"$attrend" && t != b"$date" && t != b"$comment" && t != b"$attrbegin" {
                    source
                        .diagnostics
                        .warn(format!("unknown VCD declaration {} skipped", String::from_utf8_lossy(t)));
                }
                tok.skip_to_end();
            }
            _ => {
                // Value changes before $enddefinitions: some writers omit it.
                tok.pos = at;
                in_body = true;
                break;
            }
        }
    }
    if let Some(limit) = tok.stop.take() {
        return Err(limit);
    }
    if !in_body && !vars.is_empty() {
        source.diagnostics.warn(format!(
            "the file ends inside its header (no $enddefinitions at byte {}): it is truncated, so no value changes were read",
            data.len()
        ));
    }
    if vars.is_empty() && !in_body {
        return Err(ParseFailure::invalid(
            Position::Line(line_of(data, data.len())),
            "VCD has no variables and no value changes",
        ));
    }
    let scale = scale.unwrap_or_else(|| {
        source.diagnostics.warn("no $timescale: 1 ns per time unit assumed");
        TickScale::NS
    });

    // Body: timestamps and value changes. A file that ends inside a token may have been cut
    // short (a writer killed, a copy interrupted): if its last id code is a proper prefix of
    // another variable's, it may be that id cut, so the change is dropped, not misassigned.
    let cut_token = (!data.last().is_none_or(u8::is_ascii_whitespace))
        .then(|| data.iter().rposition(u8::is_ascii_whitespace).map_or(0, |i| i + 1));
    let maybe_cut = |at: usize, id: &[u8]| {
        cut_token == Some(at) && ids.keys().any(|k| k.len() > id.len() && k.starts_with(id))
    };
    let dropped_cut = |source: &mut Source, at: usize, time: Option<Ps>| {
        source.diagnostics.warn(format!(
            "byte offset {at}: the file ends inside the value change starting there (cut short at byte {}: \
             its id code may be cut); that change was not loaded, everything before it (up to {} ps) was",
            data.len(),
            time.unwrap_or(0)
        ));
    };
    let mut now: Option<Ps> = None;
    let mut first_time: Option<Ps> = None;
    let mut last_time: Ps = 0;
    let mut changes = 0usize;
    let mut next_progress = PROGRESS_STEP;
    while let Some((at, t)) = tok.next() {
        if at >= next_progress {
            ctl.advance(PROGRESS_STEP as u64);
            next_progress += PROGRESS_STEP;
            if ctl.is_cancelled() {
                return Err(ParseFailure::Cancelled);
            }
        }
        let (first, rest) = (t[0], &t[1..]);
        match first {
            b'#' => {
                let Some(ticks) = parse_ticks(rest) else {
                    r.malformed(at, format!("bad timestamp {}", String::from_utf8_lossy(t)));
                    continue;
                };
                let time = scale.apply(ticks).saturating_add(scale.apply_signed(timezero));
                if let Some(prev) = now
                    && time < prev
                {
                    if cut_token == Some(at) {
                        // Not a writer's error: the file ends inside this timestamp.
                        source.diagnostics.warn(format!(
                            "byte offset {at}: the file ends inside timestamp {} (cut short at byte {}); ignored",
                            String::from_utf8_lossy(t),
                            data.len()
                        ));
                        continue;
                    }
                    r.malformed(at, format!("time goes backwards to #{}", String::from_utf8_lossy(rest)));
                    continue;
                }
                now = Some(time);
                first_time.get_or_insert(time);
                last_time = time;
            }
            b'$' => {
                // $dumpvars/$dumpall/$dumpon/$dumpoff and their $end carry no values;
                // $comment blocks are skipped whole.
                if t == b"$comment" {
                    tok.skip_to_end();
                }
            }
            b'0' | b'1' | b'x' | b'X' | b'z' | b'Z' | b'u' | b'U' | b'w' | b'W' | b'l' | b'L' | b'h'
            | b'H' | b'-' => {
                if maybe_cut(at, rest) {
                    dropped_cut(&mut source, at, now);
                    break;
                }
                let time = *now.get_or_insert(0);
                first_time.get_or_insert(time);
                let Some(targets) = ids.get(rest) else {
                    r.malformed(at, format!("value for undeclared id {:?}", String::from_utf8_lossy(rest)));
                    continue;
                };
                for &v in targets {
                    if changes >= max_changes {
                        return Err(too_many(at));
                    }
                    let room = max_changes - changes;
                    changes += record(&mut vars[v], time, &[first], first_time == Some(time), room);
                }
            }
            b'b' | b'B' | b'r' | b'R' | b's' | b'S' | b'p' | b'P' => {
                if matches!(first, b'p' | b'P') {
                    // EVCD port value: two strength tokens precede the id.
                    tok.next();
                    tok.next();
                }
                let Some((id_at, id)) = tok.next() else {
                    r.malformed(at, "value without an id at the end of the file");
                    break;
                };
                if maybe_cut(id_at, id) {
                    dropped_cut(&mut source, at, now);
                    break;
                }
                let time = *now.get_or_insert(0);
                first_time.get_or_insert(time);
                let Some(targets) = ids.get(id) else {
                    r.malformed(id_at, format!("value for undeclared id {:?}", String::from_utf8_lossy(id)));
                    continue;
                };
                let is_real = matches!(first, b'r' | b'R');
                let is_text = matches!(first, b's' | b'S');
                for &v in targets {
                    if is_text {
                        continue;
                    }
                    if changes >= max_changes {
                        return Err(too_many(at));
                    }
                    let room = max_changes - changes;
                    if is_real {
                        let value = std::str::from_utf8(rest)
                            .ok()
                            .and_then(|s| s.parse::<f64>().ok())
                            .unwrap_or(f64::NAN);
                        changes += record_value(&mut vars[v], time, value as f32, room);
                    } else {
                        changes += record(&mut vars[v], time, rest, first_time == Some(time), room);
                    }
                }
            }
            _ => r.malformed(
                at,
                format!("unexpected token {:?}", String::from_utf8_lossy(&t[..t.len().min(40)])),
            ),
        }
    }

    if let Some(limit) = tok.stop.take() {
        return Err(limit);
    }
    let start = first_time.unwrap_or(0);
    let mut strings = 0;
    for var in vars {
        match var.kind {
            VarKind::Text => strings += 1,
            VarKind::Bit => {
                let mut d = var.digital.unwrap_or_else(|| DigitalTrack::new(var.name.clone(), 2));
                d.end = last_time.max(start);
                source.digital.push(d);
            }
            VarKind::Vector | VarKind::Real => {
                let _ = var.width;
                source.analog.push(AnalogTrack::with_times(var.name, "", var.times, var.values));
            }
        }
    }
    if strings > 0 {
        source.diagnostics.warn(format!("{strings} string variable(s) not shown (no string tracks yet)"));
    }
    if timezero != 0 {
        source.metadata.push(("timezero".into(), timezero.to_string()));
    }
    r.diag.warnings.append(&mut source.diagnostics.warnings);
    source.diagnostics = r.diag;
    Ok(source)
}

/// `[msb:lsb]` (EVCD ports) or a plain decimal width; 0 and garbage read as 1.
fn var_width(size: &[u8]) -> u32 {
    if let Some(range) = size.strip_prefix(b"[").and_then(|s| s.strip_suffix(b"]")) {
        let text = String::from_utf8_lossy(range);
        if let Some((a, b)) = text.split_once(':')
            && let (Ok(a), Ok(b)) = (a.trim().parse::<i64>(), b.trim().parse::<i64>())
        {
            return (a - b).unsigned_abs() as u32 + 1;
        }
        return 1;
    }
    std::str::from_utf8(size).ok().and_then(|s| s.parse().ok()).filter(|&w| w > 0).unwrap_or(1)
}

/// `#123`, or an integral float `#1.0e3` as some writers print.
fn parse_ticks(s: &[u8]) -> Option<u64> {
    if !s.is_empty() && s.iter().all(u8::is_ascii_digit) {
        return std::str::from_utf8(s).ok()?.parse().ok();
    }
    let f: f64 = std::str::from_utf8(s).ok()?.parse().ok()?;
    (f >= 0.0 && f.fract() == 0.0 && f < 1.8e19).then_some(f as u64)
}

/// Level of one VCD/EVCD state character: 0, 1, 2 = X (and U/W/-), 3 = Z.
fn level(c: u8) -> u8 {
    match c {
        b'0' | b'l' | b'L' | b'D' | b'd' => 0,
        b'1' | b'h' | b'H' | b'U' | b'u' => 1,
        b'z' | b'Z' | b'T' | b'f' | b'F' => 3,
        _ => 2,
    }
}

/// Records a bit or vector value; returns the number of changes stored (0 or 1). `room` is
/// how many more changes the limit allows, which bounds how far the vectors may grow.
fn record(var: &mut Var, time: Ps, bits: &[u8], at_start: bool, room: usize) -> usize {
    match var.kind {
        VarKind::Bit => {
            let l = bits.last().map_or(2, |&c| level(c));
            match var.digital.as_mut() {
                None => {
                    let mut d = DigitalTrack::new(var.name.clone(), if at_start { l } else { 2 });
                    if !at_start {
                        d.push(time, l);
                    }
                    var.digital = Some(d);
                    usize::from(!at_start)
                }
                Some(d) => {
                    budget::room_for_transition(d, room);
                    let before = d.transitions();
                    d.push(time, l);
                    d.transitions() - before
                }
            }
        }
        VarKind::Vector | VarKind::Real => {
            // Unsigned value, zero-extended on the left; any X/Z bit makes it unknown (NaN).
            let mut v = 0f64;
            for &c in bits {
                match level(c) {
                    0 => v *= 2.0,
                    1 => v = v * 2.0 + 1.0,
                    _ => {
                        v = f64::NAN;
                        break;
                    }
                }
            }
            record_value(var, time, v as f32, room)
        }
        VarKind::Text => 0,
    }
}

fn record_value(var: &mut Var, time: Ps, value: f32, room: usize) -> usize {
    if let (Some(&t), Some(last)) = (var.times.last(), var.values.last_mut())
        && t == time
    {
        *last = value;
        return 0;
    }
    budget::room_for_one(&mut var.times, room);
    budget::room_for_one(&mut var.values, room);
    var.times.push(time);
    var.values.push(value);
    1
}

#[cfg(test)]
mod tests;

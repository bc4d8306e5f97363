//! Line-level syntax of ftrace text: the context prefix of an event line (`comm-pid
//! [cpu] flags ts: `), its latency-format variant (`comm-pid 2d..1  259us+: `), timestamps
//! and the small byte helpers the other modules share. Everything works on bytes and
//! returns `None` on anything unexpected; nothing here allocates.

use super::flags::parse_flags;
use latscope_model::{IrqFlags, PS_PER_S, PS_PER_US, Ps};

/// A timestamp as printed. Decimal ones are kept as whole seconds plus a sub-second part in
/// picoseconds; integer ones (counter, x86-tsc, latency `259us`) carry their raw value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ts {
    pub secs: u64,
    /// Sub-second picoseconds for decimal stamps, the whole raw value otherwise.
    pub ps: u64,
}

impl Ts {
    /// Picoseconds relative to `origin_secs`; `None` when it does not fit.
    pub fn relative(self, origin_secs: i64) -> Option<Ps> {
        let secs = i64::try_from(self.secs).ok()?.checked_sub(origin_secs)?;
        secs.checked_mul(PS_PER_S)?.checked_add(i64::try_from(self.ps).ok()?)
    }
}

/// Parses `DEC` or `DEC.DIGIT{1,12}` into exact picoseconds (never through `f64`).
pub(crate) fn parse_ts(tok: &[u8]) -> Option<Ts> {
    let (int, frac) = match pos(b'.', tok) {
        Some(dot) => (&tok[..dot], Some(&tok[dot + 1..])),
        None => (tok, None),
    };
    let whole = parse_u64(int)?;
    match frac {
        None => Some(Ts { secs: 0, ps: whole }),
        Some(f) => {
            if f.is_empty() || f.len() > 12 {
                return None;
            }
            let digits = parse_u64(f)?;
            Some(Ts { secs: whole, ps: digits * FRACTION_SCALE[f.len()] })
        }
    }
}

/// Unsigned decimal, 1..=20 digits, no sign; `None` on overflow.
#[inline]
pub(crate) fn parse_u64(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 20 {
        return None;
    }
    if s.len() < 20 {
        // 19 digits cannot overflow: skip the checked arithmetic of the general case.
        let mut v: u64 = 0;
        for &c in s {
            let d = c.wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            v = v * 10 + u64::from(d);
        }
        return Some(v);
    }
    let mut v: u64 = 0;
    for &c in s {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
    }
    Some(v)
}

/// Signed decimal with an optional leading `-`.
#[inline]
pub(crate) fn parse_i64(s: &[u8]) -> Option<i64> {
    match s.split_first() {
        Some((b'-', rest)) => {
            let v = parse_u64(rest)?;
            if v == 1 << 63 { Some(i64::MIN) } else { i64::try_from(v).ok().map(|v| -v) }
        }
        _ => i64::try_from(parse_u64(s)?).ok(),
    }
}

/// Hex digits without prefix, 1..=16 of them.
#[inline]
pub(crate) fn parse_hex(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 16 {
        return None;
    }
    let mut v = 0u64;
    for &c in s {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => return None,
        };
        v = v << 4 | u64::from(d);
    }
    Some(v)
}

/// `0x`-prefixed hex.
#[inline]
pub(crate) fn parse_0x(s: &[u8]) -> Option<u64> {
    match s {
        [b'0', b'x' | b'X', rest @ ..] => parse_hex(rest),
        _ => None,
    }
}

/// Position of `b` in a short slice. A plain loop: the distances on the hot path are a few
/// dozen bytes, where memchr's vector setup costs more than it saves.
#[inline]
pub(crate) fn pos(b: u8, s: &[u8]) -> Option<usize> {
    s.iter().position(|&c| c == b)
}

/// First occurrence of a short `needle` in a line. A memchr for the first byte and a
/// compare: cheaper than building a `memmem` searcher for every call on short haystacks.
#[inline]
pub(crate) fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let (&first, rest) = needle.split_first()?;
    let mut from = 0;
    while let Some(i) = pos(first, &hay[from..]) {
        let at = from + i;
        if hay[at + 1..].starts_with(rest) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

#[inline]
pub(crate) fn is_ws(c: u8) -> bool {
    c == b' ' || c == b'\t'
}

const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
const HIGH: u64 = 0x8080_8080_8080_8080;
const SPACES: u64 = u64::from_le_bytes([b' '; 8]);
const TABS: u64 = u64::from_le_bytes([b'\t'; 8]);

/// The 8 bytes at `s[at..]` as a little-endian word, if there are 8.
#[inline]
pub(crate) fn word_at(s: &[u8], at: usize) -> Option<u64> {
    let w: [u8; 8] = s.get(at..at.checked_add(8)?)?.try_into().ok()?;
    Some(u64::from_le_bytes(w))
}

/// The bytes `s[at..at + 8]` as a little-endian word, zero-padded where `s` ends first (0
/// past its end): one load when 8 bytes are there.
#[inline]
pub(crate) fn padded_word(s: &[u8], at: usize) -> u64 {
    match word_at(s, at) {
        Some(w) => w,
        None => s.get(at..).unwrap_or(&[]).iter().rev().fold(0, |w, &c| w << 8 | u64::from(c)),
    }
}

/// The high bit of every byte of `w` that is a blank (space or tab), exactly (the carry-free
/// zero-byte test, no false positives).
#[inline]
fn blank_bytes(w: u64) -> u64 {
    let zero = |x: u64| !(((x & LOW7) + LOW7) | x) & HIGH;
    zero(w ^ SPACES) | zero(w ^ TABS)
}

// The task column is padded with runs of blanks and tokens are short: the scans below test
// eight bytes at a time (a mask of blank bytes) instead of branching on every byte.

/// Index of the first blank in `s`.
#[inline]
pub(crate) fn first_blank(s: &[u8]) -> Option<usize> {
    let mut n = 0;
    while let Some(w) = word_at(s, n) {
        let m = blank_bytes(w);
        if m != 0 {
            return Some(n + m.trailing_zeros() as usize / 8);
        }
        n += 8;
    }
    s[n..].iter().position(|&c| is_ws(c)).map(|p| n + p)
}

#[inline]
pub(crate) fn trim_start(s: &[u8]) -> &[u8] {
    if s.first().is_none_or(|&c| !is_ws(c)) {
        return s;
    }
    let mut n = 0;
    while let Some(w) = word_at(s, n) {
        let m = !blank_bytes(w) & HIGH;
        if m != 0 {
            return &s[n + m.trailing_zeros() as usize / 8..];
        }
        n += 8;
    }
    while n < s.len() && is_ws(s[n]) {
        n += 1;
    }
    &s[n..]
}

#[inline]
pub(crate) fn trim_end(s: &[u8]) -> &[u8] {
    // Most strings end in a non-blank: one byte test before the word scan.
    if s.last().is_none_or(|&c| !is_ws(c)) {
        return s;
    }
    let mut n = s.len();
    while n >= 8 {
        let m = !blank_bytes(word_at(s, n - 8).unwrap_or(SPACES)) & HIGH;
        if m != 0 {
            // The highest non-blank byte is the last one kept.
            return &s[..n - m.leading_zeros() as usize / 8];
        }
        n -= 8;
    }
    while n > 0 && is_ws(s[n - 1]) {
        n -= 1;
    }
    &s[..n]
}

#[inline]
pub(crate) fn trim(s: &[u8]) -> &[u8] {
    trim_end(trim_start(s))
}

/// The leading run of digits and what follows it.
#[inline]
pub(crate) fn split_digits(s: &[u8]) -> (&[u8], &[u8]) {
    let n = s.iter().take_while(|c| c.is_ascii_digit()).count();
    s.split_at(n)
}

/// Splits `comm-pid` at the last `-` followed only by digits. Without one, the whole text is
/// the comm and the pid is unknown (-1).
pub(crate) fn split_comm_pid(s: &[u8]) -> (&[u8], i32) {
    let s = trim(s);
    // `parse_u64` reads at most 20 digits, so a `-` further from the end than 21 bytes
    // cannot start a pid: look only there (the comm before it may hold dashes of its own).
    let tail = s.len().saturating_sub(21);
    if let Some(dash) = s[tail..].iter().rposition(|&c| c == b'-').map(|i| tail + i)
        && let Some(pid) = parse_u64(&s[dash + 1..]).and_then(|p| i32::try_from(p).ok())
    {
        // `s` starts with no blank, so neither does the comm.
        return (&s[..dash], pid);
    }
    (s, -1)
}

/// The parsed context of one event line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Prefix<'a> {
    pub comm: &'a [u8],
    pub pid: i32,
    pub cpu: u16,
    pub flags: IrqFlags,
    pub ts: Ts,
    /// The record body after `ts: `, trailing blanks removed.
    pub body: &'a [u8],
}

/// Parses the default (`trace`, `trace_pipe`, `trace-cmd report`) context prefix, anchored
/// on the first ` [NNN] ` that is followed by an optional flag field and a timestamp. The
/// comm before it may hold spaces, dashes, brackets and parentheses.
pub(crate) fn parse_event_prefix(line: &[u8]) -> Option<Prefix<'_>> {
    if let Some(p) = fixed_width_prefix(line) {
        return Some(p);
    }
    general_event_prefix(line)
}

/// The prefix as tracefs prints it by default (`trace`, `trace_pipe`, irq-info on):
/// `%16s-%-7d [%03d] FLAGS ts: ` — the comm right-aligned in 16 columns (a kernel comm has
/// at most 15 bytes), the pid left-aligned in 7, three CPU digits and five flag characters.
/// Most lines of most traces have it, and reading it at fixed offsets skips the search for
/// the CPU field and the comm/pid split. Every column is checked; anything else (wider pid
/// or CPU, a tgid column, four-character flags, `trace-cmd report` spacing) returns `None`
/// and goes to [`general_event_prefix`], which reads such a line the same way.
pub(crate) fn fixed_width_prefix(line: &[u8]) -> Option<Prefix<'_>> {
    let head: &[u8; 37] = line.get(..37)?.try_into().ok()?;
    if head[16] != b'-'
        || head[24] != b' '
        || head[25] != b'['
        || head[29] != b']'
        || head[30] != b' '
        || head[36] != b' '
    {
        return None;
    }
    let pid_field = &head[17..24];
    let digits = pid_field.iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 || pid_field[digits..].iter().any(|&c| c != b' ') {
        return None;
    }
    let pid = pid_field[..digits].iter().fold(0i32, |v, &c| v * 10 + i32::from(c - b'0'));
    let [c0, c1, c2] = [head[26], head[27], head[28]];
    if !(c0.is_ascii_digit() && c1.is_ascii_digit() && c2.is_ascii_digit()) {
        return None;
    }
    let cpu = u16::from(c0 - b'0') * 100 + u16::from(c1 - b'0') * 10 + u16::from(c2 - b'0');
    let flags = parse_flags(&head[31..36])?;
    // The timestamp token and the body, read as the general parser reads them.
    let (ts, body) = ts_and_body(&line[37..])?;
    // The general parser splits `comm-pid` at the last dash followed only by digits: here
    // always column 16.
    let comm = trim_start(&head[..16]);
    Some(Prefix { comm, pid, cpu, flags, ts, body })
}

/// The general form of [`parse_event_prefix`].
fn general_event_prefix(line: &[u8]) -> Option<Prefix<'_>> {
    let mut from = 0;
    // memchr: the `[` sits ~25 bytes in, past the padded task column.
    while let Some(rel) = memchr::memchr(b'[', &line[from..]) {
        let open = from + rel;
        from = open + 1;
        let (digits, rest) = split_digits(&line[open + 1..]);
        if digits.is_empty() || digits.len() > 5 || rest.first() != Some(&b']') {
            continue;
        }
        if open > 0 && !is_ws(line[open - 1]) {
            continue;
        }
        let Some(after) = rest.get(1..) else { continue };
        if !after.first().is_some_and(|&c| is_ws(c)) {
            continue;
        }
        let Some(cpu) = parse_u64(digits).and_then(|c| u16::try_from(c).ok()) else { continue };
        if let Some((flags, ts, body)) = parse_after_cpu(after) {
            let (comm, pid) = parse_task(&line[..open]);
            return Some(Prefix { comm, pid, cpu, flags, ts, body });
        }
    }
    None
}

/// `[flags] ts: body` after the CPU field.
fn parse_after_cpu(s: &[u8]) -> Option<(IrqFlags, Ts, &[u8])> {
    let (tok, rest) = next_token(s);
    if let Some(t) = tok.strip_suffix(b":").and_then(parse_ts) {
        return Some((IrqFlags::NONE, t, body_after(rest)?));
    }
    let flags = parse_flags(tok)?;
    let (ts, body) = ts_and_body(rest)?;
    Some((flags, ts, body))
}

/// The next blank-separated token of `s` and what follows it.
fn next_token(s: &[u8]) -> (&[u8], &[u8]) {
    let s = trim_start(s);
    s.split_at(first_blank(s).unwrap_or(s.len()))
}

/// `ts: body`: the timestamp token and the record body after it.
fn ts_and_body(s: &[u8]) -> Option<(Ts, &[u8])> {
    if let Some(read) = seconds_colon(s) {
        return Some(read);
    }
    let (tok, rest) = next_token(s);
    Some((tok.strip_suffix(b":").and_then(parse_ts)?, body_after(rest)?))
}

/// `10^(12 - digits)`: the picoseconds of one unit of a fraction with `digits` digits.
const FRACTION_SCALE: [u64; 13] = {
    let mut t = [0u64; 13];
    let mut d = 0;
    while d <= 12 {
        t[d] = 10u64.pow(12 - d as u32);
        d += 1;
    }
    t
};

/// [`ts_and_body`] for the form nearly every line has, `SECS.FRACTION:` then a blank or
/// the end, read in one pass over the digits (no token scan, no second search for the
/// dot). Anything else is `None` and left to the general reading, which gives the same
/// result for this form.
#[inline]
fn seconds_colon(s: &[u8]) -> Option<(Ts, &[u8])> {
    let s = trim_start(s);
    let mut i = 0;
    let mut secs: u64 = 0;
    while let Some(&c) = s.get(i) {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        // 19 digits cannot overflow; longer ones take the general path.
        if i == 19 {
            return None;
        }
        secs = secs * 10 + u64::from(d);
        i += 1;
    }
    if i == 0 || s.get(i) != Some(&b'.') {
        return None;
    }
    let frac_start = i + 1;
    let mut j = frac_start;
    let mut frac: u64 = 0;
    while let Some(&c) = s.get(j) {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        if j - frac_start == 12 {
            return None;
        }
        frac = frac * 10 + u64::from(d);
        j += 1;
    }
    let digits = j - frac_start;
    if digits == 0 || s.get(j) != Some(&b':') {
        return None;
    }
    let body = body_after(&s[j + 1..])?;
    Some((Ts { secs, ps: frac * FRACTION_SCALE[digits] }, body))
}

/// The body after the `:` of the timestamp: one blank, then the text (or nothing).
fn body_after(rest: &[u8]) -> Option<&[u8]> {
    match rest.first() {
        None => Some(rest),
        Some(&c) if is_ws(c) => Some(trim_end(&rest[1..])),
        Some(_) => None,
    }
}

/// The task column before the CPU field: `comm-pid` with an optional `(tgid)` column.
fn parse_task(s: &[u8]) -> (&[u8], i32) {
    let mut s = trim_end(s);
    if s.last() == Some(&b')')
        && let Some(open) = memchr::memrchr(b'(', s)
    {
        let inner = trim(&s[open + 1..s.len() - 1]);
        if inner.iter().all(|&c| c.is_ascii_digit() || c == b'-') {
            s = trim_end(&s[..open]);
        }
    }
    split_comm_pid(s)
}

/// Parses the latency-format prefix `comm-pid  CPUflags  time[us]mark: body`
/// (`lat_print_generic` + `lat_print_timestamp`, also `trace-cmd report -l`).
/// Relative `259us` stamps come back as raw picoseconds (secs 0).
pub(crate) fn parse_latency_prefix(line: &[u8]) -> Option<Prefix<'_>> {
    for colon in memchr::memchr_iter(b':', line).take(6) {
        if !line.get(colon + 1).is_none_or(|&c| is_ws(c)) {
            continue;
        }
        if let Some(p) = latency_at(line, colon) {
            return Some(p);
        }
    }
    None
}

fn latency_at(line: &[u8], colon: usize) -> Option<Prefix<'_>> {
    let mut left = &line[..colon];
    // The delay mark: one of ` +!#*@$` right before the colon.
    let mut us = false;
    if let Some((&m, rest)) = left.split_last()
        && matches!(m, b'+' | b'!' | b'#' | b'*' | b'@' | b'$' | b' ')
        && rest.ends_with(b"us")
    {
        left = rest;
    }
    if let Some(rest) = left.strip_suffix(b"us") {
        left = rest;
        us = true;
    }
    let n = left.iter().rev().take_while(|c| c.is_ascii_digit() || **c == b'.').count();
    if n == 0 {
        return None;
    }
    let (before, tstok) = left.split_at(left.len() - n);
    let ts = parse_ts(tstok)?;
    let ts = if us {
        if tstok.contains(&b'.') {
            return None;
        }
        Ts { secs: 0, ps: ts.ps.checked_mul(PS_PER_US as u64)? }
    } else {
        ts
    };
    if !before.last().is_some_and(|&c| is_ws(c)) {
        return None;
    }
    let before = trim_end(before);
    let start = before.iter().rposition(|&c| is_ws(c)).map_or(0, |p| p + 1);
    let (task, cpuflags) = before.split_at(start);
    let (digits, flag_txt) = split_digits(cpuflags);
    let cpu = u16::try_from(parse_u64(digits)?).ok()?;
    let flags = parse_flags(flag_txt)?;
    let (comm, pid) = split_comm_pid(task);
    if comm.is_empty() && pid < 0 {
        return None;
    }
    let body = body_after(&line[colon + 1..])?;
    Some(Prefix { comm, pid, cpu, flags, ts, body })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padded_words_are_the_bytes_zero_padded() {
        let s: Vec<u8> = (1..=20).collect();
        for len in 0..=s.len() {
            for at in 0..=24 {
                let mut bytes = [0u8; 8];
                for (i, b) in bytes.iter_mut().enumerate() {
                    *b = s[..len].get(at + i).copied().unwrap_or(0);
                }
                assert_eq!(padded_word(&s[..len], at), u64::from_le_bytes(bytes), "len {len} at {at}");
            }
        }
    }

    /// The one-pass timestamp reader agrees with the token reading wherever it answers, and
    /// answers for the usual forms.
    #[test]
    fn one_pass_timestamps_read_as_the_token_reading() {
        fn general(s: &[u8]) -> Option<(Ts, &[u8])> {
            let (tok, rest) = next_token(s);
            Some((tok.strip_suffix(b":").and_then(parse_ts)?, body_after(rest)?))
        }
        let digits = |n: usize| -> Vec<u8> { (0..n).map(|i| b"9081726354"[i % 10]).collect() };
        let mut answered = 0;
        for lead in [&b""[..], b" ", b"   ", b"\t", b" \t "] {
            for secs in [0, 1, 5, 19, 20, 21] {
                for dot in [None, Some(0), Some(1), Some(6), Some(9), Some(12), Some(13)] {
                    for end in [&b""[..], b":", b": ", b":\t", b": sched_switch: a=1  ", b":x", b" :", b"::"]
                    {
                        let mut s = lead.to_vec();
                        s.extend(digits(secs));
                        if let Some(f) = dot {
                            s.push(b'.');
                            s.extend(digits(f));
                        }
                        s.extend_from_slice(end);
                        let fast = seconds_colon(&s);
                        if fast.is_some() {
                            answered += 1;
                            assert_eq!(fast, general(&s), "{}", String::from_utf8_lossy(&s));
                        }
                        assert_eq!(ts_and_body(&s), general(&s), "{}", String::from_utf8_lossy(&s));
                    }
                }
            }
        }
        assert!(answered >= 100, "{answered}");
        assert_eq!(
            seconds_colon(b"  123.000456: irq_handler_entry: irq=1"),
            Some((Ts { secs: 123, ps: 456_000_000 }, &b"irq_handler_entry: irq=1"[..]))
        );
    }

    #[test]
    fn timestamps_are_exact() {
        assert_eq!(parse_ts(b"17284.993652"), Some(Ts { secs: 17284, ps: 993_652_000_000 }));
        assert_eq!(parse_ts(b"11658.899115123"), Some(Ts { secs: 11658, ps: 899_115_123_000 }));
        assert_eq!(parse_ts(b"123456"), Some(Ts { secs: 0, ps: 123_456 }));
        assert_eq!(parse_ts(b"1."), None);
        assert_eq!(parse_ts(b"a.1"), None);
        assert_eq!(parse_ts(b"99999999999999999999999"), None);
        let t = Ts { secs: 852_655, ps: 67_718_000_000 };
        assert_eq!(t.relative(852_655), Some(67_718_000_000));
        assert_eq!(Ts { secs: u64::MAX, ps: 0 }.relative(0), None);
    }

    #[test]
    fn fixed_width_lines_read_as_the_general_parser_reads_them() {
        // Every line of the recorded samples and the corpus: where the fixed-width reading
        // applies, the general one gives the same prefix.
        let samples = latscope_testkit::root().join("samples/ftrace");
        let mut files = latscope_testkit::files_under(&samples, Some("txt"));
        assert!(files.len() >= 8, "samples/ftrace holds at least 8 traces: {files:?}");
        files.extend(latscope_testkit::corpus_files("ftrace_text", Some("txt")));
        let (fixed, total) = fixed_width_reads_as_general(&files);
        // 22,298 of 52,646 lines with the shared corpus when written (the rest: trace-cmd
        // report, latency and function_graph formats, headers, older kernels' four flag
        // columns).
        assert!(fixed >= 10_000, "the fixed-width form was compared on {fixed} of {total} lines only");
        // Shifted columns fall back.
        for line in [
            &b"          <idle>-0     [001] 17110.331399: irq_handler_entry: irq=24"[..],
            b"            bash-5628    (   5628) [001] d..3. 17110.329469: x: y",
            b"            bash-12345678 [001] d..3. 17110.329469: x: y",
            b"            bash-5628    [001] d..3 17110.329469: x: y",
        ] {
            assert_eq!(fixed_width_prefix(line), None, "{}", String::from_utf8_lossy(line));
        }
    }

    #[test]
    #[cfg_attr(
        not(have_shared_corpus),
        ignore = "needs the shared corpus: ../shared/corpus or $LATSCOPE_CORPUS"
    )]
    fn fixed_width_lines_of_the_shared_corpus_read_as_the_general_parser_reads_them() {
        let files = latscope_testkit::shared_corpus_files("ftrace_text", Some("txt"));
        let (fixed, total) = fixed_width_reads_as_general(&files);
        assert!(fixed > 0, "the fixed-width form was compared on none of {total} lines");
    }

    /// Every line of `files` where the fixed-width reading applies gives the general one's
    /// prefix; (lines compared, lines).
    fn fixed_width_reads_as_general(files: &[std::path::PathBuf]) -> (usize, usize) {
        let (mut fixed, mut total) = (0, 0);
        for f in files {
            let data = std::fs::read(f).expect("readable");
            for line in data.split(|&c| c == b'\n') {
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                total += 1;
                if let Some(p) = fixed_width_prefix(line) {
                    fixed += 1;
                    assert_eq!(
                        Some(p),
                        general_event_prefix(line),
                        "{f:?}: {}",
                        String::from_utf8_lossy(line)
                    );
                }
            }
        }
        (fixed, total)
    }

    #[test]
    fn a_comm_that_looks_like_a_cpu_field_is_read_at_its_columns() {
        // prctl(PR_SET_NAME) allows any comm: this one holds ` [1] 1.1: `, which the search
        // for the first CPU field would take for the line's. The fixed columns are not fooled.
        let line = b"      [1] 1.1: x-1234    [001] d..3. 17110.329469: sched_waking: pid=1";
        let p = parse_event_prefix(line).expect("event line");
        assert_eq!((p.comm, p.pid, p.cpu, p.ts.secs), (&b"[1] 1.1: x"[..], 1234, 1, 17110));
        assert_eq!(p.body, b"sched_waking: pid=1");
    }

    /// The former definition: the last `-` anywhere, digits after it.
    fn split_comm_pid_reference(s: &[u8]) -> (&[u8], i32) {
        let s = trim(s);
        if let Some(dash) = s.iter().rposition(|&c| c == b'-')
            && let Some(pid) = parse_u64(&s[dash + 1..]).and_then(|p| i32::try_from(p).ok())
        {
            return (trim_start(&s[..dash]), pid);
        }
        (s, -1)
    }

    #[test]
    fn comm_pid_split_matches_the_reference() {
        let cases: [&[u8]; 15] = [
            b"          <idle>-0       ",
            b"kworker/u8:3-2147483647",
            b"kworker/u8:3-2147483648",
            b"a-b-c-12",
            b"a-12345678901",
            b"-5",
            b"-",
            b"",
            b"   x-",
            b"Web Content-4242",
            b"name-with-dash-and-long-tail-x",
            b"a -1",
            b"<...>-1234",
            b"\t sh-00000000001",
            b"sh-00000000000000000001",
        ];
        for c in cases {
            assert_eq!(split_comm_pid(c), split_comm_pid_reference(c), "{:?}", String::from_utf8_lossy(c));
        }
    }

    fn check_scans(s: &[u8]) {
        let n = s.iter().take_while(|&&c| is_ws(c)).count();
        assert_eq!(trim_start(s), &s[n..], "{s:?}");
        let n = s.iter().rev().take_while(|&&c| is_ws(c)).count();
        assert_eq!(trim_end(s), &s[..s.len() - n], "{s:?}");
        assert_eq!(first_blank(s), s.iter().position(|&c| is_ws(c)), "{s:?}");
    }

    #[test]
    fn scans_match_a_byte_loop() {
        let lines: [&[u8]; 6] =
            [b"", b" ", b"\t \t", b"        x        ", b"  \t         a b \t        \t", b"abc"];
        for s in lines {
            check_scans(s);
        }
        // Every string of up to 20 bytes over an alphabet of the blanks, the bytes one off
        // them (the carries of the word test) and high bytes, from a fixed-seed generator.
        let alphabet = [b' ', b'\t', b'!', 0x1f, 0x08, b'\n', 0, 0xa0, 0x89, 0xff, b'x'];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let len = (state % 21) as usize;
            let s: Vec<u8> = (0..len)
                .map(|i| alphabet[((state >> (i * 3 % 60)) % alphabet.len() as u64) as usize])
                .collect();
            check_scans(&s);
        }
    }

    #[test]
    fn prefix_variants() {
        let p = parse_event_prefix(b" IntentService[E-3866  [001] ...1   652.762632: sys_exit: NR 54 = 0")
            .expect("comm with bracket");
        assert_eq!((p.comm, p.pid, p.cpu), (&b"IntentService[E"[..], 3866, 1));
        assert_eq!(p.body, b"sys_exit: NR 54 = 0");
        let p =
            parse_event_prefix(b" [007] 154.892211: irq_handler_entry: irq=2 name=IPI").expect("taskless");
        assert_eq!((p.comm, p.pid, p.cpu), (&b""[..], -1, 7));
        let p =
            parse_latency_prefix(b"  kworker/-59      3...1    0us : __schedule <-schedule").expect("lat");
        assert_eq!((p.comm, p.pid, p.cpu, p.ts.ps), (&b"kworker/"[..], 59, 3, 0));
        let p = parse_latency_prefix(b"      ps-6143    2d..1  259us+: trace_hardirqs_on <-x").expect("lat");
        assert_eq!((p.cpu, p.ts.ps, p.flags.preempt_depth()), (2, 259_000_000, 1));
        let p = parse_latency_prefix(b"  <idle>-0       0d.h1. 106467.859747: function:  ktime_get <-- tick")
            .expect("trace-cmd -l");
        assert_eq!((p.comm, p.cpu, p.ts.secs), (&b"<idle>"[..], 0, 106_467));
        assert!(parse_latency_prefix(b"hello: world").is_none());
    }
}

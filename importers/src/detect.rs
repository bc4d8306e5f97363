//! Format detection from content, never from the file name.

/// What `latscope` reads, for the "not a supported format" message.
pub const SUPPORTED_FORMATS: &str = "ftrace text (tracefs trace/trace_pipe, trace-cmd report), trace-cmd trace.dat (v6, v7), \
     Perfetto protobuf traces, \
     sigrok session (.sr), VCD, FST, GHW, Saleae Logic 2 / Logic 1.x CSV exports (digital, analog, MSO waveform, analyzer tables), sigrok-cli CSV, \
     oscilloscope CSV (Keysight/Agilent InfiniiVision, Rigol DS1000Z/DHO, Tektronix MDO/MSO and TDS/TBS, Siglent, \
     PicoScope, Digilent WaveForms, generic time-first CSV)";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    FtraceText,
    TraceDat,
    /// Perfetto protobuf traces (`Trace` of `TracePacket`s).
    Perfetto,
    SigrokSr,
    Vcd,
    Fst,
    Ghw,
    /// Saleae Logic 2 / 1.x CSV exports.
    SaleaeCsv,
    /// sigrok-cli `-O csv` output.
    SigrokCsv,
    /// Oscilloscope CSV exports.
    ScopeCsv,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::FtraceText => "ftrace-text",
            Format::TraceDat => "trace.dat",
            Format::Perfetto => "perfetto",
            Format::SigrokSr => "sigrok-sr",
            Format::Vcd => "vcd",
            Format::Fst => "fst",
            Format::Ghw => "ghw",
            Format::SaleaeCsv => "saleae-csv",
            Format::SigrokCsv => "sigrok-csv",
            Format::ScopeCsv => "scope-csv",
        }
    }
}

/// Detects the format of a file from its first bytes (the whole file may be passed).
pub fn detect(data: &[u8]) -> Option<Format> {
    if data.starts_with(b"\x17\x08\x44tracing") {
        return Some(Format::TraceDat);
    }
    if data.starts_with(b"PK\x03\x04") && is_sigrok_session(data) {
        return Some(Format::SigrokSr);
    }
    if crate::perfetto::looks_like_perfetto(data) {
        return Some(Format::Perfetto);
    }
    if crate::vcd::looks_like_vcd(data) {
        return Some(Format::Vcd);
    }
    if crate::wave::looks_like_ghw(data) {
        return Some(Format::Ghw);
    }
    if crate::wave::looks_like_fst(data) {
        return Some(Format::Fst);
    }
    if looks_like_ftrace_text(data) {
        return Some(Format::FtraceText);
    }
    crate::csv::sniff(data).map(crate::csv::CsvKind::format)
}

/// A zip whose directory names a `metadata` member (the directory is at the end).
fn is_sigrok_session(data: &[u8]) -> bool {
    let tail = &data[data.len().saturating_sub(1 << 20)..];
    memchr::memmem::find(tail, b"metadata").is_some()
}

/// True when the first lines of `data` are ftrace header lines or event lines.
fn looks_like_ftrace_text(data: &[u8]) -> bool {
    let head = &data[..data.len().min(64 * 1024)];
    let lines = head.split(|&b| b == b'\n').take(200);
    for line in lines {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let trimmed = trim_start(line);
        if trimmed.is_empty() {
            continue;
        }
        if line.starts_with(b"# tracer:") || line.starts_with(b"version = ") || line.starts_with(b"cpus=") {
            return true;
        }
        if line.contains(&0) {
            return false;
        }
        if has_cpu_and_timestamp(line) {
            return true;
        }
    }
    false
}

fn trim_start(s: &[u8]) -> &[u8] {
    let n = s.iter().take_while(|b| b.is_ascii_whitespace()).count();
    &s[n..]
}

/// `[NNN]` followed by a `digits(.digits)?:` token, or a function_graph `N) ` prefix with a `|`.
fn has_cpu_and_timestamp(line: &[u8]) -> bool {
    let Some(open) = memchr::memchr(b'[', line) else { return graph_line(line) };
    let rest = &line[open + 1..];
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || rest.get(digits) != Some(&b']') {
        return graph_line(line);
    }
    rest[digits + 1..].split(|b| b.is_ascii_whitespace()).any(|tok| {
        tok.len() > 1
            && tok.ends_with(b":")
            && tok[..tok.len() - 1].iter().all(|b| b.is_ascii_digit() || *b == b'.')
            && tok[0].is_ascii_digit()
    })
}

fn graph_line(line: &[u8]) -> bool {
    let t = trim_start(line);
    let digits = t.iter().take_while(|b| b.is_ascii_digit()).count();
    digits > 0 && t.get(digits) == Some(&b')') && memchr::memchr(b'|', t).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_by_content() {
        assert_eq!(detect(b"\x17\x08\x44tracing6\0"), Some(Format::TraceDat));
        assert_eq!(detect(b"# tracer: nop\n#\n"), Some(Format::FtraceText));
        assert_eq!(
            detect(b"  bash-1977  [000] .... 17284.993652: sys_close <-system_call_fastpath\n"),
            Some(Format::FtraceText)
        );
        assert_eq!(detect(b" 0)   1.382 us    |          __might_sleep();\n"), Some(Format::FtraceText));
        assert_eq!(detect(b"\x00\x01\x02garbage"), None);
        assert_eq!(detect(b"\r\n$timescale 1ns $end"), Some(Format::Vcd));
        assert_eq!(detect(b"$dateline"), None);
        assert_eq!(detect(b"GHDLwave\n"), Some(Format::Ghw));
        assert_eq!(detect(b"Time [s], Channel 0\n0.0, 1\n"), Some(Format::SaleaeCsv));
        assert_eq!(detect(b"; CSV generated by libsigrok 0.5.2\nlogic\n1\n"), Some(Format::SigrokCsv));
        assert_eq!(detect(b"x-axis,1\nsecond,Volt\n-0.001,0.1\n"), Some(Format::ScopeCsv));
        assert_eq!(detect(b"hello, world\n"), None);
    }
}

//! What a report states about how it was made: the request rendered as the command line
//! that makes the report again, the date (`SOURCE_DATE_EPOCH` when set), the host, and the
//! SHA-256 of every input file's bytes. The command line comes from the request, never from
//! argv, so `latscope report` and the workbench's export of the same files and analyses
//! print the same text.

use crate::error::{EngineError, Result};
use crate::registry::Registry;
use latscope_analysis::report::{FileDigest, Provenance};
use latscope_model::Source;
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// What a report was asked for, as `latscope report` takes it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Request {
    /// Presets by name (`--preset`), in the order given.
    pub presets: Vec<String>,
    /// Rule specs (`--rule`), in the order given.
    pub rules: Vec<String>,
    /// Decoder stacks run first (`--decoder`).
    pub decoders: Vec<String>,
    /// The `--align` argument.
    pub align: Option<String>,
    /// Input 0 is the baseline (`--baseline`).
    pub baseline: bool,
    /// `--include-errors`.
    pub include_errors: bool,
}

impl Request {
    /// The analyses `texts` (preset names or rule specs, as the workbench's rule box holds
    /// them, or the names of the outcomes of several inputs) as a request: a text that names
    /// a preset is a preset; each text counts once.
    pub fn of_analyses<S: AsRef<str>>(registry: &Registry, texts: &[S]) -> Self {
        let mut seen = std::collections::HashSet::new();
        let (presets, rules): (Vec<String>, Vec<String>) = texts
            .iter()
            .map(|t| t.as_ref().trim().to_owned())
            .filter(|t| !t.is_empty() && seen.insert(t.clone()))
            .partition(|t| registry.preset(t).is_ok());
        Request { presets, rules, ..Request::default() }
    }

    /// The command line that makes the report of `paths` again, each argument quoted for a
    /// POSIX shell where it needs it: `latscope report [--baseline B] FILE... [--preset P]...
    /// [--rule R]... [--decoder D]... [--align A] [--include-errors]`. Where the report is
    /// written (`-o`, `--format`) is not part of what it says.
    pub fn command_line(&self, paths: &[String]) -> String {
        let mut args: Vec<&str> = vec!["latscope", "report"];
        let (baseline, files) = match (self.baseline, paths.split_first()) {
            (true, Some((b, rest))) => (Some(b.as_str()), rest),
            _ => (None, paths),
        };
        if let Some(b) = baseline {
            args.extend(["--baseline", b]);
        }
        args.extend(files.iter().map(String::as_str));
        for (flag, values) in
            [("--preset", &self.presets), ("--rule", &self.rules), ("--decoder", &self.decoders)]
        {
            for v in values {
                args.extend([flag, v.as_str()]);
            }
        }
        if let Some(a) = &self.align {
            args.extend(["--align", a.as_str()]);
        }
        if self.include_errors {
            args.push("--include-errors");
        }
        args.iter().map(|a| quote(a)).collect::<Vec<_>>().join(" ")
    }
}

/// `arg` as a POSIX shell reads it back. A NUL cannot be passed in an argument at all; it is
/// shown as `\0` so the line still says where it was.
fn quote(arg: &str) -> String {
    let arg = arg.replace('\0', "\\0");
    match shlex::try_quote(&arg) {
        Ok(q) => q.into_owned(),
        Err(_) => format!("'{}'", arg.replace('\'', "'\\''")),
    }
}

/// The SHA-256 of the file at `path` and its size, read in blocks (a trace can be larger
/// than memory).
pub fn digest_file(path: &Path) -> Result<FileDigest> {
    let fail = |source| EngineError::Digest { path: path.display().to_string(), source };
    let mut file = std::fs::File::open(path).map_err(fail)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut bytes = 0u64;
    loop {
        match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                hasher.update(&buf[..n]);
                bytes += n as u64;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(fail(e)),
        }
    }
    let sha256 = hasher.finalize().iter().map(|b| format!("{b:02x}")).collect();
    Ok(FileDigest { sha256, bytes })
}

/// When a report is made: `SOURCE_DATE_EPOCH` (seconds since 1970, UTC) when set, so two
/// runs can give the same bytes (reproducible-builds.org), else now; RFC 3339 to the second.
/// A malformed `SOURCE_DATE_EPOCH` is an error, as the specification asks.
pub fn report_date() -> Result<String> {
    date_from(std::env::var("SOURCE_DATE_EPOCH").ok().as_deref(), SystemTime::now())
}

fn date_from(epoch: Option<&str>, now: SystemTime) -> Result<String> {
    let when = match epoch {
        Some(text) => {
            let secs: u64 = text.trim().parse().map_err(|_| {
                EngineError::Usage(format!(
                    "SOURCE_DATE_EPOCH={text:?}: not a number of seconds since 1970-01-01 UTC"
                ))
            })?;
            UNIX_EPOCH
                .checked_add(Duration::from_secs(secs))
                .ok_or_else(|| EngineError::Usage(format!("SOURCE_DATE_EPOCH={text:?}: out of range")))?
        }
        None => now,
    };
    Ok(humantime::format_rfc3339_seconds(when).to_string())
}

/// The host's name, as the kernel has it; `None` when it is not valid text.
pub fn host() -> Option<String> {
    gethostname::gethostname().into_string().ok().filter(|h| !h.is_empty())
}

/// Everything a report states about how it was made: `request` over `paths` (the inputs as
/// the user named them), the date, the host, and the digest of each source read from a
/// file (sources hashed in parallel).
pub fn provenance(request: &Request, paths: &[String], sources: &[&Source]) -> Result<Provenance> {
    let files = sources
        .par_iter()
        .map(|s| s.path.as_deref().map(digest_file).transpose())
        .collect::<Result<Vec<_>>>()?;
    Ok(Provenance {
        command: Some(request.command_line(paths)),
        date: Some(report_date()?),
        host: host(),
        files,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_is_the_requests_quoted_for_a_shell() {
        let r = Request {
            presets: vec!["block".into()],
            rules: vec!["io=block_rq_issue -> block_rq_complete by dev,sector".into()],
            decoders: vec!["sd:clk=D0".into()],
            align: Some("1:match irq_handler_entry -> D1".into()),
            baseline: true,
            include_errors: true,
        };
        let paths = ["base line.dat".to_owned(), "it's.dat".to_owned()];
        assert_eq!(
            r.command_line(&paths),
            "latscope report --baseline 'base line.dat' \"it's.dat\" --preset block \
             --rule 'io=block_rq_issue -> block_rq_complete by dev,sector' --decoder 'sd:clk=D0' \
             --align '1:match irq_handler_entry -> D1' --include-errors"
        );
        // What a shell makes of it is the request again.
        let words = shlex::split(&r.command_line(&paths)).unwrap();
        assert_eq!(words[3..5], ["base line.dat", "it's.dat"]);
        assert_eq!(words[8], r.rules[0]);
    }

    #[test]
    fn presets_and_rules_are_told_apart_by_the_registry() {
        let r = Request::of_analyses(&Registry::native(), &["irq-handler", " t=a -> b ", "", "irq-handler"]);
        assert_eq!(r.presets, ["irq-handler"]);
        assert_eq!(r.rules, ["t=a -> b"]);
    }

    #[test]
    fn the_date_is_source_date_epoch_when_set() {
        let now = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        assert_eq!(date_from(Some("1700000000"), now).unwrap(), "2023-11-14T22:13:20Z");
        assert_eq!(date_from(None, now).unwrap(), "2027-01-15T08:00:00Z");
        assert!(date_from(Some("yesterday"), now).unwrap_err().to_string().contains("SOURCE_DATE_EPOCH"));
    }

    #[test]
    fn a_digest_is_sha256_of_the_bytes() {
        let dir = std::env::temp_dir().join(format!("latscope-digest-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("abc");
        std::fs::write(&path, b"abc").unwrap();
        let d = digest_file(&path).unwrap();
        // FIPS 180-2, appendix B.1.
        assert_eq!(d.sha256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert_eq!(d.bytes, 3);
        std::fs::remove_dir_all(&dir).ok();
        assert!(digest_file(&path).unwrap_err().to_string().contains("abc"));
    }
}

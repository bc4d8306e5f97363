//! Every sigrok decoder: a `sigrok:ID[:KEY=VALUE,…]` stack runs libsigrokdecode's decoders
//! through `sigrok-cli` on a `.sr` (the capture itself when it is one, else a temporary `.sr`
//! written from the source's digital tracks), and its annotations become latscope
//! annotations (decoder `sigrok:ID`, one per annotation sigrok-cli prints, every row
//! included), so rules, presets, `query` and the timeline use them unchanged.
//!
//! The annotations are read from sigrok-cli's `--protocol-decoder-jsontrace` output, which
//! names each annotation's row and gives its span in microseconds with picosecond digits;
//! the sample numbers are those times at the capture's sample rate. A stack mixing native and
//! sigrok stages is refused: sigrok-cli cannot feed a native decoder's output to a Python one.

use crate::error::{EngineError, Result};
use crate::registry::{DecoderInfo, DecoderRunner, ExternalDecoder};
use latscope_decoders::spec::{SIGROK, Stage};
use latscope_decoders::{Annotation, Decoded};
use latscope_model::{PS_PER_S, Ps, Source};
use std::borrow::Cow;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

/// What to say when sigrok-cli is missing.
pub const INSTALL: &str = "sigrok-cli is not installed (apt-get install sigrok-cli)";

/// A written `.sr` may hold at most this many bytes of samples.
const MAX_SR_BYTES: u64 = 512 << 20;

/// The registry's entry for `sigrok:ID` stacks.
pub fn info() -> DecoderInfo {
    DecoderInfo {
        name: SIGROK.to_owned(),
        label: "Any sigrok decoder (through sigrok-cli)".to_owned(),
        channels: Vec::new(),
        options: Vec::new(),
        stacks_on: None,
        needs: Some("sigrok:ID:CHANNEL=NAME,OPTION=VALUE (ids: sigrok-cli -L)".to_owned()),
        syntax: "sigrok:ID[:KEY=VALUE,…] [| sigrok:ID…]".to_owned(),
        runner: DecoderRunner::External(Arc::new(SigrokCli)),
    }
}

/// Runs sigrok stacks with the `sigrok-cli` on the `PATH`.
#[derive(Debug)]
pub struct SigrokCli;

impl ExternalDecoder for SigrokCli {
    fn decode(&self, spec: &str, source: &Source) -> Result<Decoded> {
        decode(spec, source)
    }
}

/// Refuses a stack that mixes sigrok and native stages, naming both.
pub fn check_not_mixed(spec: &str, stages: &[Stage]) -> Result<()> {
    let sigrok = stages.iter().filter(|s| s.name == SIGROK).count();
    if sigrok == 0 || sigrok == stages.len() {
        return Ok(());
    }
    let native: Vec<&str> = stages.iter().filter(|s| s.name != SIGROK).map(|s| s.name.as_str()).collect();
    Err(EngineError::Usage(format!(
        "decoder {spec:?}: a stack cannot mix native decoders ({}) with sigrok: stages — sigrok-cli \
         cannot feed a native decoder's output to a sigrok decoder; use sigrok: stages throughout \
         (sigrok:i2c:scl=SCL,sda=SDA | sigrok:eeprom24xx) or native ones",
        native.join(", ")
    )))
}

fn usage(spec: &str, what: impl std::fmt::Display) -> EngineError {
    EngineError::Usage(format!("decoder {spec:?}: {what}"))
}

/// Decodes `source` with the sigrok stack `spec`.
pub fn decode(spec: &str, source: &Source) -> Result<Decoded> {
    let stages = latscope_decoders::spec::parse(spec).map_err(|e| EngineError::Decoder {
        spec: spec.to_owned(),
        error: latscope_decoders::DecodeError::Spec(e),
    })?;
    check_not_mixed(spec, &stages)?;
    let mut decoders = Vec::new();
    let mut ids = Vec::new();
    for s in &stages {
        let id = s.id.as_deref().unwrap_or_default();
        let mut arg = id.to_owned();
        for p in &s.params {
            if p.value.contains(':') {
                return Err(usage(
                    spec,
                    format!("`{}={}`: sigrok-cli cannot take a `:` in a value", p.key, p.value),
                ));
            }
            arg.push_str(&format!(":{}={}", p.key, p.value));
        }
        decoders.push(arg);
        ids.push(id.to_owned());
    }
    let (input, rate) = input_for(spec, source)?;
    let out = Command::new("sigrok-cli")
        .arg("-i")
        .arg(input.path())
        .arg("-P")
        .arg(decoders.join(","))
        .arg("-A")
        .arg(ids.join(","))
        .arg("--protocol-decoder-jsontrace")
        .output()
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                usage(spec, INSTALL)
            } else {
                usage(spec, format!("running sigrok-cli: {e}"))
            }
        })?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    // sigrok-cli reports a decoder it does not know, or a bad option, on stderr and may still
    // exit 0; a decoder that raises stops its stack with a Python traceback there.
    let complaint = stderr.lines().find(|l| {
        l.contains("rror") || l.contains("not found") || l.contains("Traceback") || l.contains("nvalid")
    });
    if !out.status.success() || complaint.is_some() {
        let said = complaint.map_or_else(|| stderr.trim().to_owned(), |l| l.trim().to_owned());
        if let Some(id) = ids.iter().find(|id| said.contains(&format!("Failed to load decoder {id}:"))) {
            return Err(usage(
                spec,
                format!("unknown sigrok decoder {id:?} (sigrok-cli -L lists them): {said}"),
            ));
        }
        let how = match out.status.code() {
            Some(c) => format!("exit status {c}"),
            None => "killed by a signal".to_owned(),
        };
        return Err(usage(spec, format!("sigrok-cli failed ({how}): {said}")));
    }
    let annotations = parse_jsontrace(&out.stdout, rate).map_err(|e| usage(spec, e))?;
    Ok(Decoded { annotations, ..Decoded::default() })
}

/// The `.sr` to give sigrok-cli, and its sample rate: the capture's own file when it is a
/// `.sr` with a sample rate, else one written from its digital tracks (removed when dropped).
fn input_for(spec: &str, source: &Source) -> Result<(SrFile, u64)> {
    if let (Some(path), Some(rate)) = (&source.path, crate::decode::sample_rate(source))
        && source.format == "sigrok-sr"
    {
        return Ok((SrFile::Kept(path.clone()), rate));
    }
    if source.digital.is_empty() {
        return Err(usage(spec, format!("{} has no digital tracks for sigrok-cli to decode", source.name)));
    }
    let (bytes, rate) = sr_bytes(&source.digital.iter().collect::<Vec<_>>())
        .map_err(|e| usage(spec, format!("{}: {e}", source.name)))?;
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!("latscope-sigrok-{}-{n}.sr", std::process::id()));
    std::fs::write(&path, bytes).map_err(|e| usage(spec, format!("writing {}: {e}", path.display())))?;
    Ok((SrFile::Temporary(path), rate))
}

/// A `.sr` given to sigrok-cli; a temporary one is removed when dropped.
#[derive(Debug)]
enum SrFile {
    Kept(PathBuf),
    Temporary(PathBuf),
}

impl SrFile {
    fn path(&self) -> &Path {
        match self {
            SrFile::Kept(p) | SrFile::Temporary(p) => p,
        }
    }
}

impl Drop for SrFile {
    fn drop(&mut self) {
        if let SrFile::Temporary(p) = self {
            let _ = std::fs::remove_file(p);
        }
    }
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 { a.abs() } else { gcd(b, a % b) }
}

/// A `.sr` (zip: `version`, `metadata`, `logic-1-1`) holding `tracks` sampled at the
/// coarsest period that puts every change on a sample (their times' greatest common
/// divisor), and that sample rate.
pub fn sr_bytes(tracks: &[&latscope_model::DigitalTrack]) -> std::result::Result<(Vec<u8>, u64), String> {
    use std::io::Write;
    let period = tracks.iter().flat_map(|t| t.times()).filter(|&t| t > 0).fold(0, gcd).max(1);
    let end = tracks.iter().map(|t| t.end.max(t.last_time().unwrap_or(0))).max().unwrap_or(0);
    let samples = u64::try_from(end / period + 1).unwrap_or(1);
    let unit = tracks.len().div_ceil(8);
    let size = samples.saturating_mul(unit as u64);
    if size > MAX_SR_BYTES {
        return Err(format!(
            "{samples} samples of {unit} byte(s) at a {period} ps period exceed the {} MiB a written .sr may hold",
            MAX_SR_BYTES >> 20
        ));
    }
    let n = samples as usize;
    let mut raw = vec![0u8; n * unit];
    for (k, t) in tracks.iter().enumerate() {
        let (byte, bit) = (k / 8, 1u8 << (k % 8));
        let mut level = t.initial;
        let mut from = 0usize;
        for (i, at) in t.times().chain(std::iter::once(end + period)).enumerate() {
            let to = usize::try_from(at / period).unwrap_or(0).min(n);
            if level != 0 {
                for s in from..to {
                    raw[s * unit + byte] |= bit;
                }
            }
            from = to;
            level = t.levels().get(i).copied().unwrap_or(level);
        }
    }
    let rate = u64::try_from(PS_PER_S / period).unwrap_or(1).max(1);
    let mut meta = format!(
        "[global]\nsigrok version=0.5.2\n[device 1]\ncapturefile=logic-1\ntotal probes={}\nsamplerate={rate} Hz\ntotal analog=0\n",
        tracks.len()
    );
    for (k, t) in tracks.iter().enumerate() {
        meta.push_str(&format!("probe{}={}\n", k + 1, t.name));
    }
    meta.push_str(&format!("unitsize={unit}\n"));
    let mut out = std::io::Cursor::new(Vec::new());
    let written = (|| -> zip::result::ZipResult<()> {
        let mut zip = zip::ZipWriter::new(&mut out);
        let opts =
            zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
        zip.start_file("version", opts)?;
        zip.write_all(b"2")?;
        zip.start_file("metadata", opts)?;
        zip.write_all(meta.as_bytes())?;
        zip.start_file("logic-1-1", opts)?;
        zip.write_all(&raw)?;
        zip.finish()?;
        Ok(())
    })();
    written.map_err(|e| format!("writing the .sr: {e}"))?;
    Ok((out.into_inner(), rate))
}

/// Names that live as long as the program (annotations name their decoder and row as
/// `&'static str`): one allocation per distinct sigrok decoder and row.
fn interned(name: String) -> &'static str {
    static NAMES: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
    let mut names = NAMES.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(n) = names.get(name.as_str()) {
        return n;
    }
    let leaked: &'static str = Box::leak(name.into_boxed_str());
    names.insert(leaked);
    leaked
}

/// A row's description as a name: `Address/data` → `address_data`.
fn row_name(desc: &str) -> String {
    let mut out = String::new();
    for c in desc.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('_') && !out.is_empty() {
            out.push('_');
        }
    }
    let trimmed = out.trim_end_matches('_');
    if trimmed.is_empty() { "row".to_owned() } else { trimmed.to_owned() }
}

#[derive(serde::Deserialize)]
struct Trace {
    #[serde(rename = "traceEvents")]
    trace_events: Vec<TraceEvent>,
}

#[derive(serde::Deserialize)]
struct TraceEvent {
    ph: String,
    ts: f64,
    pid: String,
    tid: String,
    name: String,
}

/// The annotations of sigrok-cli's `--protocol-decoder-jsontrace` output: each a `B` event
/// and its `E`, `pid` the decoder instance (`i2c-1`), `tid` the row, `name` the text, `ts`
/// microseconds from sample 0.
pub fn parse_jsontrace(json: &[u8], rate: u64) -> std::result::Result<Vec<Annotation>, String> {
    // sigrok-cli 0.7.2 ends the array without a closing bracket when a decoder fails midway.
    let text = String::from_utf8_lossy(json);
    let trimmed = text.trim_end().trim_end_matches(',');
    let fixed: Cow<'_, str> = if trimmed.ends_with("]}") || trimmed.is_empty() {
        Cow::Borrowed(trimmed)
    } else {
        Cow::Owned(format!("{trimmed}]}}"))
    };
    if fixed.is_empty() {
        return Ok(Vec::new());
    }
    let trace: Trace =
        serde_json::from_str(&fixed).map_err(|e| format!("reading sigrok-cli's JSON trace: {e}"))?;
    let to_ps = |us: f64| -> Ps { (us * 1e6).round() as Ps };
    let to_sample = |us: f64| -> i64 { (us * rate as f64 / 1e6).round() as i64 };
    let mut out = Vec::new();
    let mut open: Option<&TraceEvent> = None;
    for e in &trace.trace_events {
        match (e.ph.as_str(), open) {
            ("B", _) => open = Some(e),
            ("E", Some(b)) if b.pid == e.pid && b.tid == e.tid => {
                let id = b.pid.rsplit_once('-').map_or(b.pid.as_str(), |(id, _)| id);
                out.push(Annotation {
                    decoder: interned(format!("{SIGROK}:{id}")),
                    row: interned(row_name(&b.tid)),
                    start: to_ps(b.ts),
                    end: to_ps(e.ts),
                    start_sample: Some(to_sample(b.ts)),
                    end_sample: Some(to_sample(e.ts)),
                    text: Cow::Owned(b.name.clone()),
                    fields: Vec::new(),
                });
                open = None;
            }
            _ => return Err(format!("sigrok-cli's JSON trace: an unpaired {:?} event at {} us", e.ph, e.ts)),
        }
    }
    latscope_decoders::sort_by_start(&mut out);
    Ok(out)
}

/// Every decoder sigrok-cli knows (`sigrok-cli -L`), each with its channels, options and the
/// decoder it stacks on (`sigrok-cli -P ID --show`), as registry entries named `sigrok:ID`:
/// what the add-decoder dialog lists. Read once per process (about a hundred short
/// sigrok-cli runs, in parallel) and kept; a decoder whose `--show` fails is listed bare.
pub fn catalogue() -> Result<Vec<DecoderInfo>> {
    static CACHE: std::sync::OnceLock<std::result::Result<Vec<DecoderInfo>, String>> =
        std::sync::OnceLock::new();
    CACHE.get_or_init(read_catalogue).clone().map_err(EngineError::Usage)
}

fn sigrok_cli_text(args: &[&str]) -> std::result::Result<String, String> {
    let out = Command::new("sigrok-cli").args(args).output().map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            INSTALL.to_owned()
        } else {
            format!("running sigrok-cli: {e}")
        }
    })?;
    if !out.status.success() {
        return Err(format!(
            "sigrok-cli {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn read_catalogue() -> std::result::Result<Vec<DecoderInfo>, String> {
    use rayon::prelude::*;
    let list = sigrok_cli_text(&["-L"])?;
    let ids = decoder_ids(&list);
    // sigrok-cli 0.7.2 crashes showing a few decoders (cc1101): they are listed without
    // channels or options, and still run when named.
    Ok(ids
        .par_iter()
        .map(|id| parse_show(id, &sigrok_cli_text(&["-P", id, "--show"]).unwrap_or_default()))
        .collect())
}

/// The ids of the "Supported protocol decoders" section of `sigrok-cli -L`.
pub fn decoder_ids(list: &str) -> Vec<String> {
    list.lines()
        .skip_while(|l| !l.starts_with("Supported protocol decoders"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect()
}

/// A registry entry from `sigrok-cli -P ID --show`.
pub fn parse_show(id: &str, text: &str) -> DecoderInfo {
    let mut long_name = id.to_owned();
    let mut section = "";
    let mut channels = Vec::new();
    let mut options = Vec::new();
    let mut inputs: Vec<String> = Vec::new();
    for line in text.lines() {
        if let Some(n) = line.strip_prefix("Long name: ") {
            long_name = n.trim().to_owned();
            continue;
        }
        if !line.starts_with("- ") {
            section = line.trim_end_matches(':');
            continue;
        }
        let item = &line[2..];
        let key = item.split([' ', ':']).next().unwrap_or_default().to_owned();
        match section {
            "Possible decoder input IDs" => inputs.push(key),
            "Required channels" | "Optional channels" => {
                let label = item.split_once(" (").and_then(|(_, r)| r.split_once(')')).map_or("", |(l, _)| l);
                let mut aliases = vec![key.to_ascii_uppercase()];
                if !label.is_empty() && label != aliases[0] {
                    aliases.push(label.to_owned());
                }
                channels.push(crate::registry::ChannelRole {
                    key,
                    required: section == "Required channels",
                    aliases,
                });
            }
            "Options" => {
                let rest = item.split_once(": ").map_or("", |(_, d)| d);
                let default = rest
                    .rsplit_once("default ")
                    .map_or("", |(_, d)| d.trim_end_matches(')'))
                    .trim_matches('\'')
                    .to_owned();
                let accepts = rest.split_once(" (").map_or("VALUE", |(_, r)| r.trim_end_matches(')'));
                let accepts = accepts.rsplit_once(", default").map_or(accepts, |(a, _)| a);
                let accepts = if accepts.starts_with("default") { "VALUE" } else { accepts };
                options.push(crate::registry::DecoderOption {
                    key,
                    accepts: accepts.replace(['\'', ' '], "").replace(',', "|"),
                    default,
                });
            }
            _ => {}
        }
    }
    let stacks_on = inputs.iter().find(|i| *i != "logic").map(|i| format!("{SIGROK}:{i}"));
    let syntax = format!(
        "{SIGROK}:{id}:{}",
        channels
            .iter()
            .map(|c| format!("{}=NAME", c.key))
            .chain(options.iter().map(|o| format!("{}=…", o.key)))
            .collect::<Vec<_>>()
            .join(",")
    );
    DecoderInfo {
        name: format!("{SIGROK}:{id}"),
        label: format!("{long_name} (sigrok: {id})"),
        channels,
        options,
        stacks_on,
        needs: None,
        syntax,
        runner: DecoderRunner::External(Arc::new(SigrokCli)),
    }
}

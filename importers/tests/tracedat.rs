//! trace.dat importer tests: cross-checks against `trace-cmd report` on every real file we
//! have (shared corpus, samples/ftrace and their v7 conversions), golden values, synthetic
//! files (both byte orders, v7 zlib with sparse CPUs), truncation and corruption.

// Test helpers outside #[test] functions may panic with a message.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use latscope_analysis::model::{FieldValue, PS_PER_NS, Source};
use latscope_importers::{LoadControl, tracedat};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn dats_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "dat"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn corpus_files() -> Vec<PathBuf> {
    let dir = root().join("../shared/corpus/tracedat");
    let v = dats_in(&dir);
    if v.is_empty() {
        println!("skipping the shared corpus: {} has no .dat files", dir.display());
    }
    v
}

fn sample_files() -> Vec<PathBuf> {
    dats_in(&root().join("samples/ftrace"))
}

fn all_files() -> Vec<PathBuf> {
    let mut v = corpus_files();
    v.extend(sample_files());
    v
}

fn load(path: &Path) -> Source {
    let data = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    tracedat::parse(&data, &LoadControl::new()).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn have_trace_cmd() -> bool {
    Command::new("trace-cmd")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success() || !o.stdout.is_empty())
}

/// One event line of `trace-cmd report -t`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Line {
    comm: String,
    pid: i32,
    cpu: u16,
    ns: u128,
    event: String,
    rest: String,
}

/// Parses `COMM-PID [CPU] SECS.NSECS: EVENT: REST`; other lines (headers, dropped-event
/// notes, continuation lines of multi-line messages) give `None`.
fn parse_line(line: &str) -> Option<Line> {
    let open = line.find(" [")?;
    let close = open + line[open..].find(']')?;
    let cpu: u16 = line[open + 2..close].parse().ok()?;
    let (comm, pid) = line[..open].trim().rsplit_once('-')?;
    let pid: i32 = pid.parse().ok()?;
    let after = line[close + 1..].trim_start();
    let colon = after.find(": ")?;
    // `secs.nsecs`, or a bare integer when trace-cmd does not take the clock for one it
    // prints in seconds (it does so for some v7 conversions): that integer is the ns value.
    let ns = match after[..colon].split_once('.') {
        Some((secs, frac)) if frac.len() == 9 => {
            secs.parse::<u128>().ok()? * 1_000_000_000 + frac.parse::<u128>().ok()?
        }
        Some(_) => return None,
        None => after[..colon].parse::<u128>().ok()?,
    };
    let after = &after[colon + 2..];
    let ecolon = after.find(':')?;
    let event = after[..ecolon].to_string();
    let rest = after[ecolon + 1..].trim().to_string();
    Some(Line { comm: comm.to_string(), pid, cpu, ns, event, rest })
}

fn report(path: &Path, raw: bool) -> Vec<Line> {
    let mut cmd = Command::new("trace-cmd");
    cmd.arg("report").arg("-t");
    if raw {
        cmd.arg("-R");
    }
    let out = cmd.arg(path).output().expect("run trace-cmd");
    assert!(
        out.status.success(),
        "trace-cmd report {} failed: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<Line> = text.lines().filter_map(parse_line).collect();
    assert!(
        !lines.is_empty() || text.lines().count() <= 1,
        "{}: no event line understood in trace-cmd's output; it starts {:?}",
        path.display(),
        &text[..text.len().min(400)]
    );
    lines
}

/// Splits a `-R` field list by our field names, in order.
fn raw_values<'a>(rest: &'a str, names: &[String]) -> Option<Vec<&'a str>> {
    let mut out = Vec::new();
    let mut pos = 0;
    for (i, n) in names.iter().enumerate() {
        let key = format!("{n}=");
        if !rest[pos..].starts_with(&key) {
            return None;
        }
        let start = pos + key.len();
        let end = match names.get(i + 1) {
            Some(next) => start + rest[start..].find(&format!(" {next}="))?,
            None => rest.len(),
        };
        out.push(&rest[start..end]);
        pos = (end + 1).min(rest.len());
    }
    Some(out)
}

fn int_matches(raw: &str, v: FieldValue) -> bool {
    let mine = match v {
        FieldValue::Int(i) => i as u64,
        FieldValue::UInt(u) => u,
        FieldValue::Str(_) => return false,
    };
    let theirs = if let Some(h) = raw.strip_prefix("0x") {
        u64::from_str_radix(h, 16).ok()
    } else {
        raw.parse::<i64>().map(|i| i as u64).ok().or_else(|| raw.parse::<u64>().ok())
    };
    // libtraceevent prints 4-byte signed longs as `0x%x` of the int.
    theirs.is_some_and(|t| t == mine || (t >> 32 == 0 && t == mine & 0xffff_ffff))
}

#[derive(Debug, Default)]
struct Checked {
    events: usize,
    fields: usize,
    texts: usize,
}

fn check_against_trace_cmd(path: &Path) -> Checked {
    let src = load(path);
    let lines = report(path, false);
    let raw = report(path, true);
    let name = path.display();
    assert_eq!(src.events.len(), lines.len(), "{name}: event count");
    assert_eq!(raw.len(), lines.len(), "{name}: -R event count");
    let mut c = Checked::default();
    let o = src.origin;
    for ((ev, line), rline) in src.events.iter().zip(&lines).zip(&raw) {
        let i = ev.index;
        assert_eq!(ev.ts() % PS_PER_NS, 0, "{name} #{i}: sub-ns time");
        let ns = o.secs as i128 * 1_000_000_000 + (o.ps / PS_PER_NS) as i128 + (ev.ts() / PS_PER_NS) as i128;
        assert_eq!(ns as u128, line.ns, "{name} #{i}: timestamp ({line:?})");
        assert_eq!(ev.cpu(), line.cpu, "{name} #{i}: cpu ({line:?})");
        assert_eq!(ev.pid(), line.pid, "{name} #{i}: pid ({line:?})");
        let event = src.strings.resolve(ev.name());
        assert_eq!(event, line.event, "{name} #{i}: event name ({line:?})");
        let comm = src.strings.resolve(ev.comm());
        // trace-cmd pads/cuts nothing in -t mode but its comm column is right-aligned.
        assert_eq!(comm.trim(), line.comm.trim(), "{name} #{i}: comm ({line:?})");
        let fields: Vec<(String, FieldValue)> =
            ev.fields().map(|(n, v)| (src.strings.resolve(n).into_owned(), v)).collect();
        if matches!(line.event.as_str(), "print" | "bprint" | "bputs") {
            let text = fields.iter().find(|f| f.0 == "text").map(|f| f.1).expect("marker has text");
            let FieldValue::Str(s) = text else { panic!("text is a string") };
            let mine = src.strings.resolve(s);
            let mine_first = mine.lines().next().unwrap_or("").trim_end();
            // trace-cmd prints `SYMBOL: message` (the symbol of `ip`).
            let theirs = line.rest.split_once(": ").map_or(line.rest.as_str(), |x| x.1).trim_end();
            assert_eq!(mine_first, theirs, "{name} #{i}: message ({line:?})");
            c.texts += 1;
        } else {
            let names: Vec<String> = fields.iter().map(|f| f.0.clone()).collect();
            let vals = raw_values(&rline.rest, &names)
                .unwrap_or_else(|| panic!("{name} #{i}: fields {names:?} not in {:?}", rline.rest));
            for ((fname, v), theirs) in fields.iter().zip(vals) {
                match *v {
                    FieldValue::Str(s) => {
                        if theirs.starts_with("ARRAY[") {
                            continue;
                        }
                        assert_eq!(src.strings.resolve(s), theirs, "{name} #{i}: {fname} ({rline:?})");
                    }
                    v => {
                        assert!(int_matches(theirs, v), "{name} #{i}: {fname}={v:?} vs {theirs} ({rline:?})")
                    }
                }
                c.fields += 1;
            }
        }
        c.events += 1;
    }
    c
}

/// `trace-cmd convert` of `path` into v7 (zstd), if this trace-cmd can.
fn convert_v7(path: &Path, dir: &Path, compression: &str) -> Option<PathBuf> {
    let stem = path.file_stem()?.to_string_lossy().into_owned();
    let out = dir.join(format!("{stem}_v7_{compression}.dat"));
    let ok = Command::new("trace-cmd")
        .args(["convert", "--file-version", "7", "--compression", compression, "-i"])
        .arg(path)
        .arg("-o")
        .arg(&out)
        .output()
        .is_ok_and(|o| o.status.success());
    ok.then_some(out)
}

#[test]
fn matches_trace_cmd_report_on_every_file() {
    if !have_trace_cmd() {
        println!("skipping: trace-cmd is not on PATH");
        return;
    }
    let files = all_files();
    assert!(!files.is_empty(), "no trace.dat files found (corpus and samples/ftrace are both empty)");
    let tmp = std::env::temp_dir().join(format!("latscope-tracedat-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).expect("temp dir");
    let mut total = Checked::default();
    let mut checked_files = 0;
    for f in &files {
        let mut variants = vec![f.clone()];
        // The v6 corpus files, converted to v7 (FORMATS.md §2.11 case 13).
        if f.starts_with(root().join("../shared")) {
            variants.extend(convert_v7(f, &tmp, "zstd"));
            variants.extend(convert_v7(f, &tmp, "none"));
        }
        for v in variants {
            let c = check_against_trace_cmd(&v);
            println!(
                "{}: {} events, {} fields, {} messages match trace-cmd",
                v.display(),
                c.events,
                c.fields,
                c.texts
            );
            total.events += c.events;
            total.fields += c.fields;
            total.texts += c.texts;
            checked_files += 1;
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    println!(
        "total: {checked_files} files, {} events, {} fields, {} messages",
        total.events, total.fields, total.texts
    );
    assert!(total.events > 0 && total.fields > 0);
}

//! Test helpers: open real captures, and a deliberately simple ftrace text line scanner
//! that shares no code with the importers, for independent cross-checks.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use latscope_analysis::outcome::Outcome;
use latscope_model::{PS_PER_S, Ps, Source};
use std::path::{Path, PathBuf};

pub fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples")
}

/// The corpus file `REL`: samples/corpus's copy, or the shared corpus's (a panic saying it
/// is needed when it is absent; tests reading it are marked `have_shared_corpus`).
pub fn corpus(rel: &str) -> PathBuf {
    latscope_testkit::corpus(rel)
}

pub fn open(path: &Path) -> Source {
    latscope_importers::open(path, &latscope_importers::LoadControl::new())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

pub fn sample(rel: &str) -> Source {
    open(&samples().join(rel))
}

/// A relative time of `src` as absolute source-clock picoseconds.
pub fn abs(src: &Source, t: Ps) -> Ps {
    src.origin.secs * PS_PER_S + src.origin.ps + t
}

/// An outcome's samples as absolute (start, end) picoseconds.
pub fn spans(src: &Source, o: &Outcome) -> Vec<(Ps, Ps)> {
    let mut v: Vec<(Ps, Ps)> = o.samples.iter().map(|s| (abs(src, s.start), abs(src, s.end))).collect();
    v.sort_unstable();
    v
}

/// One ftrace text line, scanned by hand.
#[derive(Debug, Clone)]
pub struct Line {
    pub ts: Ps,
    pub cpu: u32,
    pub pid: i32,
    pub event: String,
    pub payload: String,
}

impl Line {
    /// The value of `key=` in the payload.
    pub fn field(&self, key: &str) -> Option<&str> {
        self.payload.split_whitespace().find_map(|t| t.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
    }
    pub fn int(&self, key: &str) -> Option<i64> {
        self.field(key)?.parse().ok()
    }
}

fn seconds_to_ps(s: &str) -> Option<Ps> {
    let (a, b) = s.split_once('.')?;
    let frac: String = b.chars().chain(std::iter::repeat('0')).take(12).collect();
    Some(a.parse::<i64>().ok()? * PS_PER_S + frac.parse::<i64>().ok()?)
}

/// Event lines of a tracefs `trace` file, sorted by time (stable).
pub fn scan(path: &Path) -> Vec<Line> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut out = Vec::new();
    for l in text.lines() {
        if l.starts_with('#') {
            continue;
        }
        let Some(open) = l.find("] ") else { continue };
        let Some(lb) = l[..open].rfind('[') else { continue };
        let Ok(cpu) = l[lb + 1..open].parse::<u32>() else { continue };
        let task = l[..lb].trim();
        let pid = task.rsplit('-').next().and_then(|p| p.trim().parse().ok()).unwrap_or(-1);
        let rest = &l[open + 1..];
        let mut it = rest.split_whitespace();
        let mut ts = None;
        for tok in it.by_ref() {
            if let Some(t) = tok.strip_suffix(':').and_then(seconds_to_ps) {
                ts = Some(t);
                break;
            }
        }
        let Some(ts) = ts else { continue };
        let Some(ev) = it.next().and_then(|e| e.strip_suffix(':')) else { continue };
        let at = rest.find(&format!(" {ev}:")).unwrap() + ev.len() + 2;
        out.push(Line { ts, cpu, pid, event: ev.to_owned(), payload: rest[at..].trim().to_owned() });
    }
    out.sort_by_key(|l| l.ts);
    out
}

//! Frame timing for the UI-stall budget (the UI thread never stalls over 50 ms; first frame
//! under 300 ms from start). Off unless `LATSCOPE_FRAME_LOG=PATH` is set: then each frame's
//! `ui` duration (draining worker messages, applying them, laying out and drawing the
//! widgets; not the GPU upload and buffer swap that follow) is recorded, and a summary is
//! written to PATH when the window closes.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The environment variable that turns frame logging on and names the summary file.
pub const ENV: &str = "LATSCOPE_FRAME_LOG";
/// A frame longer than this is a stall.
pub const STALL: Duration = Duration::from_millis(50);
/// Slow frames listed individually in the summary (the longest, in frame order).
const LISTED: usize = 20;

#[derive(Debug)]
pub struct FrameStats {
    path: PathBuf,
    /// When `run_native` began (just after argument parsing in `main`).
    start: Instant,
    /// The process's age at `start`, from /proc (10 ms resolution), when known.
    age_at_start: Option<Duration>,
    /// End of the first frame, from `start`.
    first_frame: Option<Duration>,
    /// Each frame: when it began (from `start`) and how long it took.
    frames: Vec<(Duration, Duration)>,
}

impl FrameStats {
    /// A recorder when [`ENV`] is set (to a non-empty path), else `None`.
    pub fn from_env() -> Option<Self> {
        let path = std::env::var_os(ENV).filter(|p| !p.is_empty())?;
        Some(Self {
            path: PathBuf::from(path),
            start: Instant::now(),
            age_at_start: process_age(),
            first_frame: None,
            frames: Vec::new(),
        })
    }

    /// Records one frame that began at `began`.
    pub fn frame(&mut self, began: Instant) {
        let now = Instant::now();
        self.first_frame.get_or_insert(now - self.start);
        self.frames.push((began.saturating_duration_since(self.start), now - began));
    }

    /// The summary as written at exit.
    pub fn summary(&self) -> String {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let mut sorted: Vec<Duration> = self.frames.iter().map(|f| f.1).collect();
        sorted.sort_unstable();
        let quantile = |q: f64| {
            // Nearest rank: the smallest duration with at least q of the frames at or below it.
            let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len().max(1));
            sorted.get(rank - 1).copied().unwrap_or_default()
        };
        let stalls = sorted.iter().filter(|&&d| d > STALL).count();
        let mut out = String::new();
        let _ = writeln!(out, "frames: {}", sorted.len());
        let _ = writeln!(out, "max_ms: {:.1}", ms(sorted.last().copied().unwrap_or_default()));
        let _ = writeln!(out, "p99_ms: {:.1}", ms(quantile(0.99)));
        let _ = writeln!(out, "p50_ms: {:.1}", ms(quantile(0.5)));
        let _ = writeln!(out, "over_{}ms: {stalls}", STALL.as_millis());
        let first = self.first_frame.map_or("none".to_string(), |d| format!("{:.1}", ms(d)));
        let _ = writeln!(out, "first_frame_ms: {first}");
        let age = self.age_at_start.map_or("unknown".to_string(), |d| format!("{:.0}", ms(d)));
        let _ = writeln!(out, "process_age_at_start_ms: {age}");
        // The slowest frames with when they happened, to line them up with what was going on.
        let mut slow: Vec<(usize, &(Duration, Duration))> =
            self.frames.iter().enumerate().filter(|(_, f)| f.1 > STALL).collect();
        slow.sort_by_key(|(_, f)| std::cmp::Reverse(f.1));
        slow.truncate(LISTED);
        slow.sort_by_key(|(i, _)| *i);
        for (i, (at, took)) in slow {
            let _ = writeln!(out, "slow_frame: #{i} at {:.0} ms took {:.1} ms", ms(*at), ms(*took));
        }
        out
    }
}

impl Drop for FrameStats {
    /// Written when the window's app is dropped at exit; a failure is reported, not fatal.
    fn drop(&mut self) {
        if let Err(e) = std::fs::write(&self.path, self.summary()) {
            eprintln!("latscope: {}: cannot write the frame log: {e}", self.path.display());
        }
    }
}

/// How long ago this process started, from `/proc/self/stat` (start time in clock ticks
/// since boot, 100 per second on Linux) and `/proc/uptime`.
fn process_age() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may hold spaces) start at state, field 3;
    // starttime is field 22.
    let after = stat.rsplit_once(')')?.1;
    let ticks: f64 = after.split_whitespace().nth(19)?.parse().ok()?;
    let uptime: f64 =
        std::fs::read_to_string("/proc/uptime").ok()?.split_whitespace().next()?.parse().ok()?;
    let age = uptime - ticks / 100.0;
    (age >= 0.0).then(|| Duration::from_secs_f64(age))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stats over frames of the given lengths, 16 ms apart, logging to a scratch file.
    fn stats(name: &str, frames_ms: &[u64]) -> FrameStats {
        FrameStats {
            path: std::env::temp_dir().join(format!("latscope-frames-{name}-{}", std::process::id())),
            start: Instant::now(),
            age_at_start: Some(Duration::from_millis(3)),
            first_frame: (!frames_ms.is_empty()).then(|| Duration::from_millis(120)),
            frames: frames_ms
                .iter()
                .enumerate()
                .map(|(i, &ms)| (Duration::from_millis(i as u64 * 16), Duration::from_millis(ms)))
                .collect(),
        }
    }

    /// Drops `s` (which writes its log) and returns what was written.
    fn written(s: FrameStats) -> String {
        let path = s.path.clone();
        drop(s);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        text
    }

    #[test]
    fn summary_counts_stalls_and_quantiles() {
        // 100 frames: 97 of 2 ms, then 40, 60 and 250 ms.
        let mut ms = vec![2; 97];
        ms.extend([40, 60, 250]);
        let s = stats("quantiles", &ms);
        let text = s.summary();
        for line in [
            "frames: 100",
            "max_ms: 250.0",
            "p99_ms: 60.0",
            "p50_ms: 2.0",
            "over_50ms: 2",
            "first_frame_ms: 120.0",
            "process_age_at_start_ms: 3",
            "slow_frame: #98 at 1568 ms took 60.0 ms",
            "slow_frame: #99 at 1584 ms took 250.0 ms",
        ] {
            assert!(text.lines().any(|l| l == line), "{line:?} missing from:\n{text}");
        }
        assert_eq!(written(s), text, "the summary is written at drop");
    }

    #[test]
    fn an_empty_run_still_summarises() {
        let text = written(stats("empty", &[]));
        assert!(text.contains("frames: 0\n") && text.contains("first_frame_ms: none"), "{text}");
    }

    #[test]
    fn this_process_has_an_age() {
        // On Linux /proc answers; the age is small but not negative.
        if std::path::Path::new("/proc/self/stat").exists() {
            assert!(process_age().is_some());
        }
    }
}

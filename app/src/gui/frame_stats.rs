//! Frame timing for the UI-stall budget (the UI thread never stalls over 50 ms; first frame
//! under 300 ms from start). Off unless `LATSCOPE_FRAME_LOG=PATH` is set: then each frame's
//! `ui` duration (draining worker messages, applying them, laying out and drawing the
//! widgets; not the GPU upload and buffer swap that follow) is recorded, and a summary is
//! written to PATH when the window closes.
//!
//! Wall time alone cannot tell a stall from a busy machine (other processes take the CPU
//! mid-frame), so each frame's on-CPU and run-queue time of the UI thread are recorded too,
//! from `/proc/thread-self/schedstat` (nanoseconds; Linux only, absent elsewhere).

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
    /// The UI (main) thread's on-CPU and run-queue time from process start to then.
    first_frame_sched: Option<(Duration, Duration)>,
    /// Each frame: when it began (from `start`) and how long it took.
    frames: Vec<(Duration, Duration)>,
    /// Each frame's on-CPU and waiting-for-CPU time, when schedstat is readable.
    sched: Vec<Option<(Duration, Duration)>>,
    /// schedstat at the start of the current frame.
    frame_sched: Option<(Duration, Duration)>,
    /// Moments of the run (the end of the first frame that drew something), from `start`.
    milestones: Vec<(&'static str, Duration)>,
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
            first_frame_sched: None,
            frames: Vec::new(),
            sched: Vec::new(),
            frame_sched: None,
            milestones: Vec::new(),
        })
    }

    /// Records, the first time only, that `what` is on screen as this frame ends
    /// (`preview_drawn`, `tracks_drawn`, `settled`); the summary prints `{what}_ms`.
    pub fn mark_once(&mut self, what: &'static str) {
        if !self.milestones.iter().any(|m| m.0 == what) {
            self.milestones.push((what, self.start.elapsed()));
        }
    }

    /// Call as a frame begins, on the UI thread.
    pub fn begin(&mut self) -> Instant {
        self.frame_sched = thread_sched();
        Instant::now()
    }

    /// Records one frame that began at `began` (from [`Self::begin`]).
    pub fn frame(&mut self, began: Instant) {
        let now = Instant::now();
        let total = thread_sched();
        if self.first_frame.is_none() {
            self.first_frame_sched = total;
        }
        let sched = match (self.frame_sched.take(), total) {
            (Some((cpu0, wait0)), Some((cpu1, wait1))) => {
                Some((cpu1.saturating_sub(cpu0), wait1.saturating_sub(wait0)))
            }
            _ => None,
        };
        self.first_frame.get_or_insert(now - self.start);
        self.frames.push((began.saturating_duration_since(self.start), now - began));
        self.sched.push(sched);
    }

    /// The summary as written at exit.
    pub fn summary(&self) -> String {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let wall: Vec<Duration> = self.frames.iter().map(|f| f.1).collect();
        let cpu: Vec<Duration> = self.sched.iter().flatten().map(|s| s.0).collect();
        let mut out = String::new();
        let _ = writeln!(out, "frames: {}", wall.len());
        for (label, durations) in [("", &wall), ("cpu_", &cpu)] {
            if label == "cpu_" && cpu.len() != wall.len() {
                let _ = writeln!(out, "cpu: unknown (no /proc/thread-self/schedstat)");
                continue;
            }
            let (max, p99, p50, stalls) = spread(durations);
            let _ = writeln!(out, "{label}max_ms: {:.1}", ms(max));
            let _ = writeln!(out, "{label}p99_ms: {:.1}", ms(p99));
            let _ = writeln!(out, "{label}p50_ms: {:.1}", ms(p50));
            let _ = writeln!(out, "{label}over_{}ms: {stalls}", STALL.as_millis());
        }
        let first = self.first_frame.map_or("none".to_string(), |d| format!("{:.1}", ms(d)));
        let _ = writeln!(out, "first_frame_ms: {first}");
        if let Some((cpu, wait)) = self.first_frame_sched {
            // The main thread is the UI thread: its totals are since the process began.
            let _ = writeln!(out, "first_frame_cpu_ms: {:.1}", ms(cpu));
            let _ = writeln!(out, "first_frame_wait_ms: {:.1}", ms(wait));
        }
        for (what, at) in &self.milestones {
            let _ = writeln!(out, "{what}_ms: {:.1}", ms(*at));
        }
        let age = self.age_at_start.map_or("unknown".to_string(), |d| format!("{:.0}", ms(d)));
        let _ = writeln!(out, "process_age_at_start_ms: {age}");
        // The slowest frames with when they happened, to line them up with what was going on.
        let mut slow: Vec<(usize, &(Duration, Duration))> =
            self.frames.iter().enumerate().filter(|(_, f)| f.1 > STALL).collect();
        slow.sort_by_key(|(_, f)| std::cmp::Reverse(f.1));
        slow.truncate(LISTED);
        slow.sort_by_key(|(i, _)| *i);
        for (i, (at, took)) in slow {
            let _ = write!(out, "slow_frame: #{i} at {:.0} ms took {:.1} ms", ms(*at), ms(*took));
            if let Some(Some((cpu, wait))) = self.sched.get(i) {
                let _ = write!(out, " (on CPU {:.1} ms, waiting for a CPU {:.1} ms)", ms(*cpu), ms(*wait));
            }
            out.push('\n');
        }
        out
    }
}

/// Max, 99th and 50th percentile (nearest rank) and the count over [`STALL`].
fn spread(durations: &[Duration]) -> (Duration, Duration, Duration, usize) {
    let mut sorted = durations.to_vec();
    sorted.sort_unstable();
    let quantile = |q: f64| {
        // Nearest rank: the smallest duration with at least q of the frames at or below it.
        let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len().max(1));
        sorted.get(rank - 1).copied().unwrap_or_default()
    };
    let stalls = sorted.iter().filter(|&&d| d > STALL).count();
    (sorted.last().copied().unwrap_or_default(), quantile(0.99), quantile(0.5), stalls)
}

/// This thread's time on a CPU and waiting for one, from `/proc/thread-self/schedstat`.
fn thread_sched() -> Option<(Duration, Duration)> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let mut fields = text.split_whitespace().map(|f| f.parse::<u64>().ok());
    Some((Duration::from_nanos(fields.next()??), Duration::from_nanos(fields.next()??)))
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
            first_frame_sched: (!frames_ms.is_empty()).then(|| (Duration::from_millis(70), Duration::ZERO)),
            frames: frames_ms
                .iter()
                .enumerate()
                .map(|(i, &ms)| (Duration::from_millis(i as u64 * 16), Duration::from_millis(ms)))
                .collect(),
            // Half of each frame on the CPU, the rest waiting for it.
            sched: frames_ms
                .iter()
                .map(|&ms| Some((Duration::from_millis(ms / 2), Duration::from_millis(ms - ms / 2))))
                .collect(),
            frame_sched: None,
            milestones: Vec::new(),
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
            "first_frame_cpu_ms: 70.0",
            "first_frame_wait_ms: 0.0",
            "process_age_at_start_ms: 3",
            "cpu_max_ms: 125.0",
            "cpu_p99_ms: 30.0",
            "cpu_over_50ms: 1",
            "slow_frame: #98 at 1568 ms took 60.0 ms (on CPU 30.0 ms, waiting for a CPU 30.0 ms)",
            "slow_frame: #99 at 1584 ms took 250.0 ms (on CPU 125.0 ms, waiting for a CPU 125.0 ms)",
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
    fn this_process_has_an_age_and_this_thread_cpu_time() {
        // On Linux /proc answers; the age is small but not negative.
        if std::path::Path::new("/proc/self/stat").exists() {
            assert!(process_age().is_some());
            let (cpu0, _) = thread_sched().unwrap();
            let mut x = 0u64;
            for i in 0..5_000_000u64 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
            }
            let (cpu1, _) = thread_sched().unwrap();
            assert!(cpu1 > cpu0, "busy work adds on-CPU time ({x})");
        }
    }
}

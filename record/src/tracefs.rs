//! A kernel's tracefs, as the recorder uses it: where it is mounted, the settings a
//! recording changes and puts back ([`Settings`], [`Guard`]), which events exist, and what
//! tracefs says about the ring buffer and the events' formats ([`Tracefs::meta`]).

use crate::RecordError;
use latscope_importers::tracedat::live::KernelMeta;
use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Where tracefs is usually mounted, in the order tried.
const MOUNTS: [&str; 2] = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

/// Marker events: ftrace's own, recorded whenever tracing is on (no `enable` file).
pub const MARKER_EVENTS: [&str; 2] = ["tracing_mark_write", "print"];

/// A mounted tracefs (the top-level buffer).
#[derive(Debug, Clone)]
pub struct Tracefs {
    pub root: PathBuf,
}

/// An event to enable: its system and name (`events/SYSTEM/NAME`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventName {
    pub system: String,
    pub name: String,
}

impl std::fmt::Display for EventName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.system, self.name)
    }
}

impl Tracefs {
    /// The mounted tracefs, or why there is none / it cannot be written (not root).
    pub fn find() -> Result<Tracefs, RecordError> {
        let root = MOUNTS.iter().map(Path::new).find(|p| p.join("tracing_on").exists()).ok_or_else(|| {
            RecordError::NoTracefs(
                "no tracefs at /sys/kernel/tracing or /sys/kernel/debug/tracing: mount it \
                 (`mount -t tracefs nodev /sys/kernel/tracing`) on a kernel built with CONFIG_FTRACE"
                    .into(),
            )
        })?;
        Tracefs::at(root)
    }

    /// tracefs at `root`, checked writable.
    pub fn at(root: &Path) -> Result<Tracefs, RecordError> {
        if let Err(e) = fs::OpenOptions::new().write(true).open(root.join("tracing_on")) {
            return Err(RecordError::NoTracefs(format!(
                "{}: {e}: recording needs root (run with sudo) or write access to tracefs",
                root.join("tracing_on").display()
            )));
        }
        Ok(Tracefs { root: root.to_path_buf() })
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// A tracefs file's text. Reads are large: `header_page` and `header_event` answer
    /// only the first read of an open file (later reads at an offset give nothing), so a
    /// small first read would cut them.
    pub fn read(&self, rel: &str) -> Result<Vec<u8>, RecordError> {
        let p = self.path(rel);
        let mut f = fs::File::open(&p).map_err(|e| RecordError::io(&p, e))?;
        let mut out = Vec::new();
        let mut buf = vec![0u8; 1 << 16];
        loop {
            match f.read(&mut buf) {
                Ok(0) => return Ok(out),
                Ok(n) => out.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(RecordError::io(&p, e)),
            }
        }
    }

    pub fn read_text(&self, rel: &str) -> Result<String, RecordError> {
        Ok(String::from_utf8_lossy(&self.read(rel)?).trim().to_owned())
    }

    /// Writes `text` to a tracefs file (truncating, as `echo TEXT > FILE` does).
    pub fn write(&self, rel: &str, text: &str) -> Result<(), RecordError> {
        let p = self.path(rel);
        let mut f =
            fs::OpenOptions::new().write(true).truncate(true).open(&p).map_err(|e| RecordError::io(&p, e))?;
        f.write_all(text.as_bytes()).map_err(|e| RecordError::io(&p, e))
    }

    /// Appends `text` (as `echo TEXT >> FILE`: `set_event` adds an event).
    fn append(&self, rel: &str, text: &str) -> Result<(), RecordError> {
        let p = self.path(rel);
        let mut f = fs::OpenOptions::new().append(true).open(&p).map_err(|e| RecordError::io(&p, e))?;
        f.write_all(text.as_bytes()).map_err(|e| RecordError::io(&p, e))
    }

    /// The CPUs of the buffer (`per_cpu/cpuN`), as a count of the highest index plus one.
    pub fn cpus(&self) -> Result<u32, RecordError> {
        let dir = self.path("per_cpu");
        let rd = fs::read_dir(&dir).map_err(|e| RecordError::io(&dir, e))?;
        let max = rd
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                e.file_name().to_str().and_then(|n| n.strip_prefix("cpu")).and_then(|n| n.parse::<u32>().ok())
            })
            .max();
        Ok(max.map_or(0, |m| m + 1))
    }

    /// `SYSTEM:NAME` or `NAME` as an event of this kernel; `None` for the marker events
    /// (always recorded). A name the kernel lacks is [`RecordError::NoSuchEvent`].
    pub fn event(&self, typed: &str) -> Result<Option<EventName>, RecordError> {
        let (system, name) = match typed.split_once(':') {
            Some((s, n)) => (Some(s), n),
            None => (None, typed),
        };
        if MARKER_EVENTS.contains(&name) && system.is_none_or(|s| s == "ftrace") {
            return Ok(None);
        }
        let events = self.path("events");
        let found = match system {
            Some(s) => events.join(s).join(name).join("enable").exists().then(|| s.to_owned()),
            None => fs::read_dir(&events)
                .map_err(|e| RecordError::io(&events, e))?
                .filter_map(|e| e.ok())
                .filter(|e| e.path().join(name).join("enable").exists())
                .filter_map(|e| e.file_name().to_str().map(str::to_owned))
                .min(),
        };
        match found {
            Some(system) => Ok(Some(EventName { system, name: name.to_owned() })),
            None => Err(RecordError::NoSuchEvent(typed.to_owned())),
        }
    }

    /// The sub-buffer ("page") size: `buffer_subbuf_size_kb` where the kernel has it, else
    /// the system's page size.
    pub fn page_size(&self) -> Result<u32, RecordError> {
        if let Ok(kb) = self.read_text("buffer_subbuf_size_kb")
            && let Ok(kb) = kb.parse::<u32>()
        {
            return Ok(kb * 1024);
        }
        // Older kernels: a sub-buffer is a page, the size /proc/self/smaps reports.
        let smaps = fs::read_to_string("/proc/self/smaps").unwrap_or_default();
        let kb = smaps
            .lines()
            .find_map(|l| l.strip_prefix("KernelPageSize:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u32>().ok())
            .unwrap_or(4);
        Ok(kb * 1024)
    }

    /// What decoding this kernel's pages needs, for `events` (the marker formats always).
    pub fn meta(&self, events: &[EventName]) -> Result<KernelMeta, RecordError> {
        let header_page = self.read("events/header_page")?;
        let header_event = self.read("events/header_event")?;
        let text = String::from_utf8_lossy(&header_page).into_owned();
        // `field: unsigned long commit; offset:8; size:8;` gives the kernel's long.
        let long_size = text
            .lines()
            .find(|l| l.contains(" commit;"))
            .and_then(|l| l.split("size:").nth(1))
            .and_then(|s| s.split(';').next())
            .and_then(|s| s.trim().parse::<u8>().ok())
            .unwrap_or(8);
        let mut ftrace_formats = Vec::new();
        for name in ["print", "bprint", "bputs"] {
            if let Ok(f) = self.read(&format!("events/ftrace/{name}/format")) {
                ftrace_formats.push(f);
            }
        }
        let mut event_formats = Vec::new();
        for e in events {
            event_formats
                .push((e.system.clone(), self.read(&format!("events/{}/{}/format", e.system, e.name))?));
        }
        Ok(KernelMeta {
            big_endian: cfg!(target_endian = "big"),
            long_size,
            page_size: self.page_size()?,
            header_page,
            header_event,
            ftrace_formats,
            event_formats,
            kallsyms: Vec::new(),
            printk_formats: self.read("printk_formats").unwrap_or_default(),
            cmdlines: self.read("saved_cmdlines").unwrap_or_default(),
            trace_clock: self.read("trace_clock").unwrap_or_default(),
            uname: None,
            cpus: self.cpus()?,
            cpu_stats: Vec::new(),
        })
    }

    /// Each CPU's `per_cpu/cpuN/stats`.
    pub fn cpu_stats(&self, cpus: u32) -> Vec<Vec<u8>> {
        (0..cpus).map(|c| self.read(&format!("per_cpu/cpu{c}/stats")).unwrap_or_default()).collect()
    }
}

/// The tracefs settings a recording changes, as found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    pub tracing_on: String,
    /// `set_event`, one event a line.
    pub set_event: Vec<String>,
    /// The selected clock (`local`).
    pub trace_clock: String,
    /// `buffer_size_kb` of each CPU.
    pub buffer_kb: Vec<String>,
}

impl Settings {
    pub fn read(fs: &Tracefs) -> Result<Settings, RecordError> {
        let clock = fs.read_text("trace_clock")?;
        let selected = clock
            .split_whitespace()
            .find_map(|w| w.strip_prefix('[').and_then(|w| w.strip_suffix(']')))
            .unwrap_or("local")
            .to_owned();
        let cpus = fs.cpus()?;
        let mut buffer_kb = Vec::new();
        for c in 0..cpus {
            buffer_kb.push(fs.read_text(&format!("per_cpu/cpu{c}/buffer_size_kb"))?);
        }
        Ok(Settings {
            tracing_on: fs.read_text("tracing_on")?,
            set_event: fs
                .read_text("set_event")?
                .lines()
                .map(str::to_owned)
                .filter(|l| !l.is_empty())
                .collect(),
            trace_clock: selected,
            buffer_kb,
        })
    }

    /// Whether another user has the buffer: tracing on with events enabled.
    pub fn busy(&self) -> bool {
        self.tracing_on == "1" && !self.set_event.is_empty()
    }

    /// Puts these settings back: tracing off first, then the events, the clock and the
    /// buffer sizes that differ, then `tracing_on`. Every step is tried; the first failure
    /// is returned.
    pub fn restore(&self, fs: &Tracefs) -> Result<(), RecordError> {
        let mut first: Option<RecordError> = None;
        let mut keep = |r: Result<(), RecordError>| {
            if let Err(e) = r {
                first.get_or_insert(e);
            }
        };
        keep(fs.write("tracing_on", "0"));
        keep(fs.write("set_event", ""));
        for e in &self.set_event {
            keep(fs.append("set_event", &format!("{e}\n")));
        }
        if fs.read_text("trace_clock").is_ok_and(|c| !c.contains(&format!("[{}]", self.trace_clock))) {
            keep(fs.write("trace_clock", &self.trace_clock));
        }
        for (c, kb) in self.buffer_kb.iter().enumerate() {
            let rel = format!("per_cpu/cpu{c}/buffer_size_kb");
            if fs.read_text(&rel).is_ok_and(|now| &now != kb) && kb.parse::<u64>().is_ok() {
                keep(fs.write(&rel, kb));
            }
        }
        keep(fs.write("tracing_on", &self.tracing_on));
        match first {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// Puts tracefs back as found when dropped (also on an error's early return or a panic),
/// unless [`Guard::restore`] already did.
#[derive(Debug)]
pub struct Guard {
    fs: Tracefs,
    found: Option<Settings>,
}

impl Guard {
    /// Reads the settings; refuses a busy buffer unless `force`.
    pub fn take(fs: &Tracefs, force: bool) -> Result<Guard, RecordError> {
        let found = Settings::read(fs)?;
        if found.busy() && !force {
            return Err(RecordError::Busy(found.set_event.join(", ")));
        }
        Ok(Guard { fs: fs.clone(), found: Some(found) })
    }

    pub fn found(&self) -> Option<&Settings> {
        self.found.as_ref()
    }

    /// Restores now, saying whether it worked.
    pub fn restore(&mut self) -> Result<(), RecordError> {
        match self.found.take() {
            Some(s) => s.restore(&self.fs),
            None => Ok(()),
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Err(e) = self.restore() {
            eprintln!("latscope: could not put tracefs back as it was: {e}");
        }
    }
}

/// Enables `events` for a recording on the mono clock, emptying the buffer.
pub fn prepare(fs: &Tracefs, events: &[EventName]) -> Result<(), RecordError> {
    fs.write("tracing_on", "0")?;
    fs.write("trace_clock", "mono")?;
    // Emptying `trace` clears every CPU's buffer (a clock change did too).
    fs.write("trace", "")?;
    fs.write("set_event", "")?;
    for e in events {
        fs.append("set_event", &format!("{e}\n"))?;
    }
    Ok(())
}

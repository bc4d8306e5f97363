//! A kernel's tracefs, as the recorder uses it: where it is mounted, the settings a
//! recording changes and puts back ([`Settings`], [`Guard`]), which events exist, and what
//! tracefs says about the ring buffer and the events' formats ([`Tracefs::meta`]). It is
//! this machine's, or a board's over SSH ([`crate::ssh`]): every access goes through the
//! methods here, which read files here and run `cat` or the shell's `echo` there.

use crate::RecordError;
use crate::ssh::{Ssh, quote};
use latscope_importers::tracedat::live::KernelMeta;
use std::collections::HashMap;
use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Where tracefs is usually mounted, in the order tried.
const MOUNTS: [&str; 2] = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

/// Marker events: ftrace's own, recorded whenever tracing is on (no `enable` file).
const MARKER_EVENTS: [&str; 2] = latscope_model::kernel::MARKER_NAMES;

/// A mounted tracefs (the top-level buffer), here or on a board over SSH.
#[derive(Debug, Clone)]
pub struct Tracefs {
    pub root: PathBuf,
    pub remote: Option<Arc<Ssh>>,
    /// A board's files fetched ahead in one command ([`Tracefs::prefetch`]), each taken
    /// by the next read of it: every command over SSH costs a round trip.
    fetched: Arc<Mutex<HashMap<String, Option<Vec<u8>>>>>,
    /// While [`Tracefs::batch`] runs: a board's writes, sent as one script at its end.
    queued: Arc<Mutex<Option<Vec<String>>>>,
}

/// Where a CPU's pages come from: the local file, read without blocking, or `cat` of it
/// on the board (which blocks until data comes; the recorder ends it).
#[derive(Debug)]
pub enum PagePipe {
    Local(fs::File),
    Remote(std::process::Child),
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
        Ok(Tracefs {
            root: root.to_path_buf(),
            remote: None,
            fetched: Arc::default(),
            queued: Arc::default(),
        })
    }

    /// The board's tracefs over `ssh`, checked writable.
    pub fn remote(ssh: Ssh) -> Result<Tracefs, RecordError> {
        let found = ssh.run(
            "for d in /sys/kernel/tracing /sys/kernel/debug/tracing; do \
               if [ -e $d/tracing_on ]; then if [ -w $d/tracing_on ]; then echo $d; else echo -$d; fi; break; fi; \
             done",
        )?;
        let found = String::from_utf8_lossy(&found).trim().to_owned();
        let dest = ssh.dest.clone();
        match found.strip_prefix('-') {
            _ if found.is_empty() => Err(RecordError::NoTracefs(format!(
                "{dest} has no tracefs at /sys/kernel/tracing or /sys/kernel/debug/tracing: mount it there \
                 (mount -t tracefs nodev /sys/kernel/tracing)"
            ))),
            Some(root) => Err(RecordError::NoTracefs(format!(
                "{dest}: {root}/tracing_on is not writable: log in as root (--ssh root@{dest})"
            ))),
            None => Ok(Tracefs {
                root: PathBuf::from(found),
                remote: Some(Arc::new(ssh)),
                fetched: Arc::default(),
                queued: Arc::default(),
            }),
        }
    }

    /// Fetches a board's text files `rels` in one command, for the reads that follow
    /// (nothing to do here: local reads cost no round trip).
    pub fn prefetch(&self, rels: &[String]) -> Result<(), RecordError> {
        let Some(ssh) = &self.remote else { return Ok(()) };
        let mark = format!("@@latscope-{}-{}@@", std::process::id(), rels.len());
        let mut script = String::new();
        for (i, rel) in rels.iter().enumerate() {
            script.push_str(&format!(
                "echo '{mark} {i}'; if cat {} 2>/dev/null; then echo; echo '{mark} ok'; else echo; echo '{mark} no'; fi; ",
                quote(&self.remote_path(rel))
            ));
        }
        let out = ssh.run(&script)?;
        let mut cache = self.fetched.lock().map_err(|_| RecordError::Ssh("a reader panicked".into()))?;
        // What an earlier fetch left unread is stale by now.
        cache.clear();
        let mut rest: &[u8] = &out;
        for (i, rel) in rels.iter().enumerate() {
            let start = format!("{mark} {i}\n");
            let Some(at) = find(rest, start.as_bytes()) else { break };
            let body = &rest[at + start.len()..];
            let end = format!("\n{mark} ");
            let Some(stop) = find(body, end.as_bytes()) else { break };
            let ok = body[stop + end.len()..].starts_with(b"ok");
            cache.insert(rel.clone(), ok.then(|| body[..stop].to_vec()));
            rest = &body[stop..];
        }
        Ok(())
    }

    /// Runs `work`, sending a board's writes in it as one script at its end.
    pub fn batch<T>(&self, work: impl FnOnce(&Tracefs) -> Result<T, RecordError>) -> Result<T, RecordError> {
        let Some(ssh) = &self.remote else { return work(self) };
        if let Ok(mut q) = self.queued.lock() {
            *q = Some(Vec::new());
        }
        let result = work(self);
        let lines = self.queued.lock().ok().and_then(|mut q| q.take()).unwrap_or_default();
        if !lines.is_empty() {
            // Every write is tried; the script fails if one did.
            let script: String = lines.iter().map(|l| format!("{{ {l}; }} || fail=1; ")).collect();
            ssh.run(&format!("fail=0; {script}exit $fail"))?;
        }
        result
    }

    fn queue(&self, line: String) -> Option<String> {
        match self.queued.lock() {
            Ok(mut q) => match q.as_mut() {
                Some(lines) => {
                    lines.push(line);
                    None
                }
                None => Some(line),
            },
            Err(_) => Some(line),
        }
    }

    fn remote_path(&self, rel: &str) -> String {
        self.path(rel).display().to_string()
    }

    /// Opens CPU `cpu`'s `trace_pipe_raw`, whose pages are `page_size` bytes.
    pub fn pages(&self, cpu: usize, page_size: usize) -> Result<PagePipe, RecordError> {
        let rel = format!("per_cpu/cpu{cpu}/trace_pipe_raw");
        match &self.remote {
            Some(ssh) => {
                Ok(PagePipe::Remote(ssh.stream(&self.remote_path(&format!("per_cpu/cpu{cpu}")), page_size)?))
            }
            None => {
                use std::os::unix::fs::OpenOptionsExt;
                let p = self.path(&rel);
                let f = fs::OpenOptions::new()
                    .read(true)
                    .custom_flags(libc::O_NONBLOCK)
                    .open(&p)
                    .map_err(|e| RecordError::io(&p, e))?;
                Ok(PagePipe::Local(f))
            }
        }
    }

    /// `/proc/kallsyms` of the traced machine (empty when unreadable: addresses then print
    /// as numbers).
    pub fn kallsyms(&self) -> Vec<u8> {
        match &self.remote {
            Some(ssh) => ssh.cat("/proc/kallsyms").unwrap_or_default(),
            None => fs::read("/proc/kallsyms").unwrap_or_default(),
        }
    }

    /// Where the machine is: `this machine` or the SSH destination.
    pub fn machine(&self) -> String {
        self.remote.as_ref().map_or_else(|| "this machine".to_owned(), |s| s.dest.clone())
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// A tracefs file's text. Reads are large: `header_page` and `header_event` answer
    /// only the first read of an open file (later reads at an offset give nothing), so a
    /// small first read would cut them.
    pub fn read(&self, rel: &str) -> Result<Vec<u8>, RecordError> {
        if let Some(ssh) = &self.remote {
            let cached = self.fetched.lock().ok().and_then(|mut c| c.remove(rel));
            return match cached {
                Some(Some(bytes)) => Ok(bytes),
                Some(None) => {
                    Err(RecordError::Ssh(format!("on {}: cannot read {}", ssh.dest, self.remote_path(rel))))
                }
                None => ssh.cat(&self.remote_path(rel)),
            };
        }
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
        if let Some(ssh) = &self.remote {
            let line = format!("echo {} > {}", quote(text), quote(&self.remote_path(rel)));
            return match self.queue(line) {
                Some(line) => ssh.run(&line).map(drop),
                None => Ok(()),
            };
        }
        let p = self.path(rel);
        let mut f =
            fs::OpenOptions::new().write(true).truncate(true).open(&p).map_err(|e| RecordError::io(&p, e))?;
        f.write_all(text.as_bytes()).map_err(|e| RecordError::io(&p, e))
    }

    /// Appends `text` (as `echo TEXT >> FILE`: `set_event` adds an event).
    fn append(&self, rel: &str, text: &str) -> Result<(), RecordError> {
        if let Some(ssh) = &self.remote {
            let text = text.trim_end_matches('\n');
            let line = format!("echo {} >> {}", quote(text), quote(&self.remote_path(rel)));
            return match self.queue(line) {
                Some(line) => ssh.run(&line).map(drop),
                None => Ok(()),
            };
        }
        let p = self.path(rel);
        let mut f = fs::OpenOptions::new().append(true).open(&p).map_err(|e| RecordError::io(&p, e))?;
        f.write_all(text.as_bytes()).map_err(|e| RecordError::io(&p, e))
    }

    /// The CPUs of the buffer (`per_cpu/cpuN`), as a count of the highest index plus one.
    pub fn cpus(&self) -> Result<u32, RecordError> {
        if let Some(ssh) = &self.remote {
            let out = ssh.run(&format!(
                "for d in {}/cpu*; do echo \"${{d##*/cpu}}\"; done",
                quote(&self.remote_path("per_cpu"))
            ))?;
            let max =
                String::from_utf8_lossy(&out).lines().filter_map(|l| l.trim().parse::<u32>().ok()).max();
            return Ok(max.map_or(0, |m| m + 1));
        }
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
        if let Some(ssh) = &self.remote {
            let ev = self.remote_path("events");
            let out = ssh.run(&format!(
                "for d in {}/*/{}/enable; do [ -e \"$d\" ] && echo \"$d\"; done; true",
                quote(&ev),
                quote(name)
            ))?;
            let text = String::from_utf8_lossy(&out).into_owned();
            let mut systems: Vec<String> = text
                .lines()
                .filter_map(|l| l.strip_prefix(&format!("{ev}/")))
                .filter_map(|l| l.split('/').next())
                .map(str::to_owned)
                .filter(|s| system.is_none_or(|want| want == s))
                .collect();
            systems.sort();
            return match systems.into_iter().next() {
                Some(system) => Ok(Some(EventName { system, name: name.to_owned() })),
                None => Err(RecordError::NoSuchEvent(typed.to_owned())),
            };
        }
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
        let smaps = match &self.remote {
            Some(ssh) => String::from_utf8_lossy(&ssh.cat("/proc/self/smaps")?).into_owned(),
            None => fs::read_to_string("/proc/self/smaps").unwrap_or_default(),
        };
        let kb = smaps
            .lines()
            .find_map(|l| l.strip_prefix("KernelPageSize:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u32>().ok())
            .unwrap_or(4);
        Ok(kb * 1024)
    }

    /// What decoding this kernel's pages needs, for `events` (the marker formats always).
    pub fn meta(&self, events: &[EventName]) -> Result<KernelMeta, RecordError> {
        let mut wanted: Vec<String> = [
            "events/header_page",
            "events/header_event",
            "events/ftrace/print/format",
            "events/ftrace/bprint/format",
            "events/ftrace/bputs/format",
            "printk_formats",
            "saved_cmdlines",
            "trace_clock",
            "buffer_subbuf_size_kb",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        wanted.extend(events.iter().map(|e| format!("events/{}/{}/format", e.system, e.name)));
        self.prefetch(&wanted)?;
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
        // The byte order is the traced machine's: its ELF programs say it (`cat`'s own).
        let big_endian = match &self.remote {
            Some(ssh) => match ssh.cat("/proc/self/exe")?.get(..6) {
                Some([0x7f, b'E', b'L', b'F', _, data]) => *data == 2,
                _ => {
                    return Err(RecordError::Ssh(format!(
                        "{}: /proc/self/exe is not an ELF program",
                        ssh.dest
                    )));
                }
            },
            None => cfg!(target_endian = "big"),
        };
        Ok(KernelMeta {
            big_endian,
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
        let _ = self.prefetch(&(0..cpus).map(|c| format!("per_cpu/cpu{c}/stats")).collect::<Vec<_>>());
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
    /// `buffer_size_kb` of each CPU: what to put back. A buffer the kernel has not
    /// expanded yet (it keeps it minimal until tracing is first used: the top-level file
    /// reads `7 (expanded: 1408)`, each CPU's `7`) is put back at its expanded size, which
    /// is what any use gives it; writing the minimal size back would make it real.
    pub buffer_kb: Vec<String>,
    /// `buffer_percent` (how full a buffer is before a blocked reader wakes), if the kernel
    /// has it.
    pub buffer_percent: Option<String>,
}

impl Settings {
    pub fn read(fs: &Tracefs) -> Result<Settings, RecordError> {
        fs.prefetch(&Settings::files(fs)?)?;
        let clock = fs.read_text("trace_clock")?;
        let selected = clock
            .split_whitespace()
            .find_map(|w| w.strip_prefix('[').and_then(|w| w.strip_suffix(']')))
            .unwrap_or("local")
            .to_owned();
        let cpus = fs.cpus()?;
        let unexpanded = fs.read_text("buffer_size_kb").ok().as_deref().and_then(unexpanded_kb);
        let mut buffer_kb = Vec::new();
        for c in 0..cpus {
            let kb = fs.read_text(&format!("per_cpu/cpu{c}/buffer_size_kb"))?;
            buffer_kb.push(match &unexpanded {
                Some((minimal, expanded)) if &kb == minimal => expanded.clone(),
                _ => kb,
            });
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
            buffer_percent: fs.read_text("buffer_percent").ok(),
        })
    }

    /// The files a recording changes (and the top-level buffer size, which says whether
    /// the buffer was ever expanded).
    fn files(fs: &Tracefs) -> Result<Vec<String>, RecordError> {
        let mut files: Vec<String> =
            ["trace_clock", "tracing_on", "set_event", "buffer_percent", "buffer_size_kb"]
                .iter()
                .map(|s| s.to_string())
                .collect();
        files.extend((0..fs.cpus()?).map(|c| format!("per_cpu/cpu{c}/buffer_size_kb")));
        Ok(files)
    }

    /// Whether another user has the buffer: tracing on with events enabled.
    pub fn busy(&self) -> bool {
        self.tracing_on == "1" && !self.set_event.is_empty()
    }

    /// Puts these settings back: tracing off first, then the events, the clock and the
    /// buffer sizes that differ, then `tracing_on`. Every step is tried; the first failure
    /// is returned.
    pub fn restore(&self, fs: &Tracefs) -> Result<(), RecordError> {
        let mut files: Vec<String> = vec!["trace_clock".into(), "buffer_percent".into()];
        files.extend((0..self.buffer_kb.len()).map(|c| format!("per_cpu/cpu{c}/buffer_size_kb")));
        fs.prefetch(&files)?;
        fs.batch(|fs| self.restore_each(fs))
    }

    fn restore_each(&self, fs: &Tracefs) -> Result<(), RecordError> {
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
        if let Some(pct) = &self.buffer_percent
            && fs.read_text("buffer_percent").is_ok_and(|now| &now != pct)
        {
            keep(fs.write("buffer_percent", pct));
        }
        keep(fs.write("tracing_on", &self.tracing_on));
        match first {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// `7 (expanded: 1408)`, the top-level `buffer_size_kb` of a buffer never used: the minimal
/// size each CPU's file shows, and the size it takes when used.
fn unexpanded_kb(text: &str) -> Option<(String, String)> {
    let (minimal, rest) = text.trim().split_once(" (expanded: ")?;
    let expanded = rest.strip_suffix(')')?;
    expanded.parse::<u64>().ok()?;
    Some((minimal.trim().to_owned(), expanded.to_owned()))
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
    fs.prefetch(&["buffer_percent".to_owned()])?;
    fs.batch(|fs| prepare_each(fs, events))
}

fn prepare_each(fs: &Tracefs, events: &[EventName]) -> Result<(), RecordError> {
    fs.write("tracing_on", "0")?;
    fs.write("trace_clock", "mono")?;
    // Emptying `trace` clears every CPU's buffer (a clock change did too).
    fs.write("trace", "")?;
    fs.write("set_event", "")?;
    for e in events {
        fs.append("set_event", &format!("{e}\n"))?;
    }
    // A board whose pages a blocking `cat` reads: wake it at the first event, not when
    // half the buffer is full (kernels whose reads wait for `buffer_percent`).
    if fs.remote.as_ref().is_some_and(|ssh| ssh.reads() == crate::ssh::BoardReads::AsTheyCome)
        && fs.read_text("buffer_percent").is_ok()
    {
        fs.write("buffer_percent", "0")?;
    }
    Ok(())
}

/// Where `needle` first occurs in `hay`.
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unexpanded_buffer_is_known_by_its_top_level_size() {
        assert_eq!(unexpanded_kb("7 (expanded: 1408)"), Some(("7".into(), "1408".into())));
        assert_eq!(unexpanded_kb("1410"), None);
        assert_eq!(unexpanded_kb("7 (expanded: lots)"), None);
    }
}

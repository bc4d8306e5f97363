//! A board's tracefs over SSH, through the system's `ssh` (so the user's keys,
//! `~/.ssh/config` and jump hosts work): one control master, and every command — reading a
//! file with `cat`, writing one with the shell's `echo`, streaming a CPU's `trace_pipe_raw`
//! — a session on it. The board needs tracefs, a POSIX shell and `cat`.
//!
//! A CPU's pages are read without blocking every [`PACE_S`] where the board's `dd` can
//! (`iflag=nonblock`, GNU's) and its `sleep` takes fractions, as the local reader reads
//! them: pages then fill between reads. Elsewhere a blocking `cat` streams them, which
//! wakes at the first event and takes the page being written with the few events it holds
//! (sparse pages: at 50,000 events/s, eight events a page instead of about ninety).
//! `LATSCOPE_SSH_COMMAND` replaces `ssh` (a program and its first arguments, split at
//! blanks, as `GIT_SSH_COMMAND`): `ssh -F ./config`.

use crate::RecordError;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;

/// Seconds between a board's reads of a CPU's pages, when it can read without blocking:
/// each read forks `dd` and `sleep` on the board, so not as often as locally (20 ms).
pub const PACE_S: &str = "0.05";

/// How a board's CPU pages are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoardReads {
    /// `dd iflag=nonblock` every [`PACE_S`]: pages fill between reads.
    Paced,
    /// A blocking `cat`: each page is read as soon as it holds an event.
    AsTheyCome,
}

impl BoardReads {
    /// What a recording's end says of it, when the pages may be sparse.
    pub fn note(self, dest: &str) -> Option<String> {
        match self {
            BoardReads::Paced => None,
            BoardReads::AsTheyCome => Some(format!(
                "{dest}'s pages were read by a blocking cat as each event came (its dd lacks \
                 iflag=nonblock or its sleep takes no fractions): at high event rates pages hold \
                 few events, so the saved file is larger and each event costs more to read"
            )),
        }
    }
}

/// `[USER@]HOST[:PORT]` and the control master that carries every command.
#[derive(Debug)]
pub struct Ssh {
    /// `USER@HOST` or `HOST`.
    pub dest: String,
    pub port: Option<u16>,
    program: Vec<String>,
    control: PathBuf,
    master: Option<Child>,
    reads: OnceLock<BoardReads>,
}

/// A string as one word of a POSIX shell command.
pub fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

impl Ssh {
    /// Parses the destination and starts the control master (it asks for a password or a
    /// key's passphrase on the terminal, as `ssh` does), with the system's `ssh` or
    /// `LATSCOPE_SSH_COMMAND`.
    pub fn connect(target: &str) -> Result<Ssh, RecordError> {
        let program: Vec<String> = std::env::var("LATSCOPE_SSH_COMMAND")
            .ok()
            .map(|c| c.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
            .filter(|c| !c.is_empty())
            .unwrap_or_else(|| vec!["ssh".to_owned()]);
        Ssh::connect_with(target, program)
    }

    /// [`Ssh::connect`] through `program` (`ssh` and its first arguments).
    pub fn connect_with(target: &str, program: Vec<String>) -> Result<Ssh, RecordError> {
        if program.is_empty() {
            return Err(RecordError::Usage("no ssh program given".into()));
        }
        let (dest, port) = match target.rsplit_once(':') {
            Some((d, p)) if !d.is_empty() => {
                let port = p.parse::<u16>().map_err(|_| {
                    RecordError::Usage(format!("--ssh {target:?}: the port after ':' is not a number"))
                })?;
                (d.to_owned(), Some(port))
            }
            _ => (target.to_owned(), None),
        };
        if dest.is_empty() || dest.starts_with('-') {
            return Err(RecordError::Usage(format!("--ssh {target:?}: expected [USER@]HOST[:PORT]")));
        }
        // A short path of its own per connection: ssh binds a longer temporary name beside
        // it, and a Unix socket's path has 108 bytes at most (a `%C` hash passed that under
        // a long TMPDIR); known exactly, it can be removed if the master leaves it.
        static CONNECTIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = CONNECTIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let control = std::env::temp_dir().join(format!("latscope-ssh-{}-{n}", std::process::id()));
        remove_stale_socket(&control);
        let mut ssh = Ssh { dest, port, program, control, master: None, reads: OnceLock::new() };
        let mut cmd = ssh.base();
        cmd.args(["-o", "ControlMaster=yes", "-N"]).stdin(Stdio::null());
        let master =
            cmd.spawn().map_err(|error| RecordError::Command { command: ssh.program[0].clone(), error })?;
        ssh.master = Some(master);
        // Wait for the master: `ssh -O check` answers once it is up.
        for _ in 0..300 {
            if let Some(m) = ssh.master.as_mut()
                && let Ok(Some(status)) = m.try_wait()
            {
                return Err(RecordError::Ssh(format!(
                    "ssh to {} failed ({status}): check the host, the port and that your key is accepted \
                     (ssh {} true should work without a password prompt)",
                    ssh.dest, ssh.dest
                )));
            }
            let ok = ssh
                .base()
                .args(["-O", "check"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if ok {
                return Ok(ssh);
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        Err(RecordError::Ssh(format!("ssh to {}: no connection after 30 s", ssh.dest)))
    }

    /// `ssh [-p PORT] -o ControlPath=… DEST`, ready for a remote command.
    fn base(&self) -> Command {
        let mut cmd = Command::new(&self.program[0]);
        cmd.args(&self.program[1..]);
        if let Some(p) = self.port {
            cmd.args(["-p", &p.to_string()]);
        }
        cmd.arg("-o").arg(format!("ControlPath={}", self.control.display()));
        cmd.args(["-o", "BatchMode=yes"]);
        cmd.arg(&self.dest);
        cmd
    }

    /// `script` as a command on the board, to be spawned (its I/O the caller's).
    pub fn command(&self, script: &str) -> Command {
        let mut cmd = self.base();
        cmd.arg(script);
        cmd
    }

    /// Runs `script` in the board's shell; its standard output, or what went wrong.
    pub fn run(&self, script: &str) -> Result<Vec<u8>, RecordError> {
        let out = self
            .base()
            .arg(script)
            .stdin(Stdio::null())
            .output()
            .map_err(|error| RecordError::Command { command: self.program[0].clone(), error })?;
        if !out.status.success() {
            let shown: String = script.chars().take(80).collect();
            let cut = if shown.len() < script.len() { "…" } else { "" };
            return Err(RecordError::Ssh(format!(
                "on {}: `{shown}{cut}` failed ({}): {}",
                self.dest,
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        Ok(out.stdout)
    }

    /// A file's bytes (`cat`).
    pub fn cat(&self, path: &str) -> Result<Vec<u8>, RecordError> {
        self.run(&format!("cat {}", quote(path)))
    }

    /// How this board reads pages, asked of it once.
    pub fn reads(&self) -> BoardReads {
        *self.reads.get_or_init(|| {
            let probe = format!(
                "dd if=/dev/null of=/dev/null iflag=nonblock 2>/dev/null && sleep {PACE_S} && echo paced; true"
            );
            match self.run(&probe) {
                Ok(out) if String::from_utf8_lossy(&out).trim() == "paced" => BoardReads::Paced,
                _ => BoardReads::AsTheyCome,
            }
        })
    }

    /// Streams the pages of the CPU folder `cpu_dir`'s `trace_pipe_raw` (`page_size` bytes
    /// a read) until killed, as [`Ssh::reads`] says: `dd` without blocking again and again,
    /// or `cat` again and again (a blocking read can end with nothing read while pages are
    /// left, which ends a `cat`). Returns the process, its output piped. The output's first
    /// line is the board's process id of the shell running the loop, which leads its own
    /// process group.
    ///
    /// Paced, the loop first reads the CPU's `stats` with the shell's own `read` (no
    /// process): with no entry left in the buffer, it reads no page but, every
    /// [`idle_every`] such turns, writes an [idle mark](idle_mark) with the trace clock's
    /// `now ts` instead. Every record older than that was read before the mark, in the same
    /// stream, so the host knows the idle CPU is complete through it, as a local reader
    /// knows it when its read finds the buffer empty.
    pub fn stream(&self, cpu_dir: &str, page_size: usize) -> Result<Child, RecordError> {
        let pipe = quote(&format!("{cpu_dir}/trace_pipe_raw"));
        let every = idle_every(page_size);
        let read = match self.reads() {
            BoardReads::Paced => format!(
                "e=; t=; while IFS=: read -r k v; do case $k in entries) e=$v;; 'now ts') t=$v;; esac; done < {stats}; \
                 case $e in ''|*[!0\\ ]*) dd if={pipe} bs={page_size} iflag=nonblock 2>/dev/null; i={last};; \
                 *) i=$((i+1)); if [ $i -ge {every} ] && [ -n \"$t\" ]; then i=0; \
                 printf '{zeros}%-{text}s' \"{IDLE_TAG}$t\"; fi;; esac; sleep {PACE_S}",
                stats = quote(&format!("{cpu_dir}/stats")),
                last = every - 1,
                zeros = "\\000".repeat(IDLE_ZEROS),
                text = page_size.saturating_sub(IDLE_ZEROS),
            ),
            BoardReads::AsTheyCome => format!("cat {pipe}"),
        };
        self.base()
            .arg(format!("echo $$; i={}; while :; do {read}; done", every - 1))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|error| RecordError::Command { command: self.program[0].clone(), error })
    }
}

/// Idle turns of a paced loop between two idle marks, for pages of `page_size` bytes: every
/// fourth turn (200 ms), so an idle CPU lets the live lines trail by about that, not
/// [`crate::growing::IDLE_LAG_NS`]. A mark is a whole page on the wire: 20 KB/s an idle CPU
/// with 4 KiB pages, 80 KB/s with 16 KiB ones (a Raspberry Pi 5's), and no more with larger
/// sub-buffers, whose marks come as rarely as that takes (1 MiB: every 12.8 s, when the
/// 2 s bound already holds).
pub fn idle_every(page_size: usize) -> u32 {
    u32::try_from(page_size / 4096).unwrap_or(u32::MAX).max(4)
}

/// An idle mark is a page-sized frame that no page can be: zero bytes where a page's
/// time stamp and commit lie (a page read always holds a time and an event), then
/// [`IDLE_TAG`] and the trace clock's `now ts`, padded with blanks.
const IDLE_ZEROS: usize = 16;
const IDLE_TAG: &str = "latscope-idle ";

/// The board's trace clock time (ns) an idle mark says, if `frame` is one. `now ts` is
/// written as seconds and microseconds (`  5473.123456`).
pub fn idle_mark(frame: &[u8]) -> Option<u64> {
    let (zeros, rest) = frame.split_at_checked(IDLE_ZEROS)?;
    let text = rest.strip_prefix(IDLE_TAG.as_bytes())?;
    if zeros.iter().any(|&b| b != 0) {
        return None;
    }
    let text = std::str::from_utf8(text).ok()?.trim();
    let (secs, micros) = text.split_once('.')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    // The kernel writes the microseconds as six digits (`%06lu`).
    if !digits(secs) || !digits(micros) || micros.len() != 6 {
        return None;
    }
    let (secs, micros): (u64, u64) = (secs.parse().ok()?, micros.parse().ok()?);
    secs.checked_mul(1_000_000_000)?.checked_add(micros * 1_000)
}

impl Drop for Ssh {
    fn drop(&mut self) {
        let _ = self
            .base()
            .args(["-O", "exit"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        if let Some(mut m) = self.master.take() {
            // `-O exit` returns before the master has gone, and a master killed then leaves
            // its socket: give it a moment to leave on its own.
            for _ in 0..50 {
                if !matches!(m.try_wait(), Ok(None)) {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            let _ = m.kill();
            let _ = m.wait();
        }
        // The socket, if the master did not remove it (killed, or never started).
        let _ = std::fs::remove_file(&self.control);
    }
}

/// Removes a socket at `path` that nothing listens on: one left by a latscope that was
/// killed with the PID this one has now. Its ssh master would not bind there, and the
/// connection would wait for a control socket that never comes. A socket something still
/// listens on is left alone.
fn remove_stale_socket(path: &std::path::Path) {
    use std::os::unix::fs::FileTypeExt;
    let is_socket = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_socket());
    if is_socket && std::os::unix::net::UnixStream::connect(path).is_err() {
        let _ = std::fs::remove_file(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_socket_nothing_listens_on_is_removed_and_a_live_one_kept() {
        let dir = std::env::temp_dir().join(format!("latscope-stale-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (stale, live, file) = (dir.join("stale"), dir.join("live"), dir.join("file"));
        drop(std::os::unix::net::UnixListener::bind(&stale).unwrap());
        let listening = std::os::unix::net::UnixListener::bind(&live).unwrap();
        std::fs::write(&file, b"not a socket").unwrap();
        assert!(stale.exists(), "a dropped listener leaves its socket");
        for p in [&stale, &live, &file, &dir.join("none")] {
            remove_stale_socket(p);
        }
        assert!(!stale.exists(), "the stale socket is removed");
        assert!(live.exists(), "a socket something listens on stays");
        assert!(file.exists(), "what is not a socket stays");
        drop(listening);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_idle_mark_reads_as_the_time_it_says_and_a_page_never_does() {
        let mark = |text: &str| {
            let mut frame = vec![0u8; IDLE_ZEROS];
            frame.extend_from_slice(format!("{IDLE_TAG}{text}").as_bytes());
            frame.resize(4096, b' ');
            frame
        };
        assert_eq!(idle_mark(&mark("  928.130277")), Some(928_130_277_000));
        assert_eq!(idle_mark(&mark("0.000001")), Some(1_000));
        for bad in [
            "",
            "928",
            "928.1302770",
            "928.13",
            "x.5",
            "-1.000000",
            "+1.000000",
            "99999999999999999999.000000",
        ] {
            assert_eq!(idle_mark(&mark(bad)), None, "{bad:?}");
        }
        // A page: its time stamp is never zero.
        let mut page = mark("  928.130277");
        page[0] = 1;
        assert_eq!(idle_mark(&page), None);
        assert_eq!(idle_mark(&[0u8; 8]), None);
    }

    #[test]
    fn idle_marks_cost_an_idle_cpu_at_most_80_kb_a_second_whatever_the_page() {
        let turns_per_s = 1.0 / PACE_S.parse::<f64>().unwrap();
        for (page, every) in [(4096, 4), (16_384, 4), (65_536, 16), (1 << 20, 256), (1024, 4)] {
            assert_eq!(idle_every(page), every, "{page}");
            let bytes_per_s = page as f64 * turns_per_s / f64::from(every);
            assert!(bytes_per_s <= 81_920.0, "{page}: {bytes_per_s} B/s");
        }
    }

    #[test]
    fn shell_quoting_keeps_every_character() {
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), r"'it'\''s'");
    }
}

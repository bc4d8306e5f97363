//! A board's tracefs over SSH, through the system's `ssh` (so the user's keys,
//! `~/.ssh/config` and jump hosts work): one control master, and every command — reading a
//! file with `cat`, writing one with the shell's `echo`, streaming a CPU's `trace_pipe_raw`
//! with `cat` — a session on it. The board needs tracefs, a POSIX shell and `cat`.
//! `LATSCOPE_SSH_COMMAND` replaces `ssh` (a program and its first arguments, split at
//! blanks, as `GIT_SSH_COMMAND`): `ssh -F ./config`.

use crate::RecordError;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

/// `[USER@]HOST[:PORT]` and the control master that carries every command.
#[derive(Debug)]
pub struct Ssh {
    /// `USER@HOST` or `HOST`.
    pub dest: String,
    pub port: Option<u16>,
    program: Vec<String>,
    control: PathBuf,
    master: Option<Child>,
}

/// A string as one word of a POSIX shell command.
pub fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

impl Ssh {
    /// Parses the destination and starts the control master (it asks for a password or a
    /// key's passphrase on the terminal, as `ssh` does).
    pub fn connect(target: &str) -> Result<Ssh, RecordError> {
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
        let program: Vec<String> = std::env::var("LATSCOPE_SSH_COMMAND")
            .ok()
            .map(|c| c.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
            .filter(|c| !c.is_empty())
            .unwrap_or_else(|| vec!["ssh".to_owned()]);
        let control = std::env::temp_dir().join(format!("latscope-ssh-{}-%C", std::process::id()));
        let mut ssh = Ssh { dest, port, program, control, master: None };
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

    /// Streams `path` (`cat` again and again, until killed: a blocking read of
    /// `trace_pipe_raw` can end with nothing read while pages are left, which ends a `cat`):
    /// the process, its output piped. The output's first line is the board's process id of
    /// the shell running the loop, which leads its own process group.
    pub fn stream(&self, path: &str) -> Result<Child, RecordError> {
        self.base()
            .arg(format!("echo $$; while :; do cat {}; done", quote(path)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|error| RecordError::Command { command: self.program[0].clone(), error })
    }
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
            let _ = m.kill();
            let _ = m.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_quoting_keeps_every_character() {
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), r"'it'\''s'");
    }
}

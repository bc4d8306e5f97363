//! `latscope record --ssh` (issue 30) against sshd on loopback with throw-away keys: the
//! "board" is this machine reached through `ssh`, so what it saves is checked as the local
//! recording's is (trace-cmd reads it line for line, the live statistics are the report's,
//! tracefs is back as found), and a connection that drops mid-capture keeps what arrived.
//! A board whose `dd` cannot read without blocking (busybox's) is read by `cat` instead:
//! its sshd puts a `dd` that refuses `iflag=nonblock` first on the sessions' `PATH`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Scratch;
use serde_json::Value;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

/// sshd on a free loopback port, with a host key and a user key made for the test, in the
/// foreground (`-D`) so the test owns it; and an ssh config that uses them.
struct Sshd {
    child: Child,
    port: u16,
    config: std::path::PathBuf,
}

impl Sshd {
    fn start(dir: &Path) -> Sshd {
        Sshd::start_with_path(dir, None)
    }

    /// With `first_on_path`, the board's commands find its programs there first.
    fn start_with_path(dir: &Path, first_on_path: Option<&Path>) -> Sshd {
        for key in ["host_key", "user_key"] {
            let out = latscope_testkit::Need::Sshd.output(
                Command::new("ssh-keygen").args(["-q", "-t", "ed25519", "-N", "", "-f"]).arg(dir.join(key)),
            );
            assert!(out.status.success(), "ssh-keygen: {}", String::from_utf8_lossy(&out.stderr));
        }
        std::fs::copy(dir.join("user_key.pub"), dir.join("authorized_keys")).unwrap();
        // A port the kernel just handed out and let go of.
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let d = dir.display();
        std::fs::write(
            dir.join("sshd_config"),
            format!(
                "Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host_key\nAuthorizedKeysFile {d}/authorized_keys\n\
                 PermitRootLogin prohibit-password\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n\
                 UsePAM no\nStrictModes no\nPidFile {d}/sshd.pid\n{}",
                first_on_path.map_or(String::new(), |p| format!(
                    "SetEnv PATH={}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin\n",
                    p.display()
                ))
            ),
        )
        .unwrap();
        let config = dir.join("ssh_config");
        std::fs::write(
            &config,
            format!(
                "Host *\n  IdentityFile {d}/user_key\n  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n"
            ),
        )
        .unwrap();
        // sshd wants its privilege-separation directory.
        let _ = std::fs::create_dir_all("/run/sshd");
        let child = Command::new(latscope_testkit::SSHD)
            .arg("-D")
            .arg("-f")
            .arg(dir.join("sshd_config"))
            .arg("-E")
            .arg(dir.join("sshd.log"))
            .stdin(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{}: {e}", latscope_testkit::Need::Sshd.reason()));
        let sshd = Sshd { child, port, config };
        for _ in 0..100 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return sshd;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!(
            "sshd did not listen on {port}: {}",
            std::fs::read_to_string(dir.join("sshd.log")).unwrap_or_default()
        );
    }

    fn target(&self) -> String {
        format!("root@127.0.0.1:{}", self.port)
    }

    fn ssh_command(&self) -> String {
        format!("ssh -F {}", self.config.display())
    }

    /// Ends every session this sshd serves (its children): the connections drop.
    fn drop_sessions(&self) {
        let me = self.child.id().to_string();
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            let ppid = stat.rsplit(") ").next().and_then(|r| r.split_whitespace().nth(1));
            if ppid == Some(me.as_str()) {
                let pid = entry.file_name().to_string_lossy().into_owned();
                let _ = Command::new("kill").args(["-KILL", &pid]).status();
            }
        }
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `latscope ARGS` in `dir`, through the test's ssh, with its temporary files (the control
/// master's socket) in `dir/tmp`, where [`left_in_tmp`] finds what it left.
fn latscope_via(sshd: &Sshd, dir: &Path, args: &[&str]) -> Output {
    std::fs::create_dir_all(dir.join("tmp")).unwrap();
    Command::new(env!("CARGO_BIN_EXE_latscope"))
        .current_dir(dir)
        .env("LATSCOPE_SSH_COMMAND", sshd.ssh_command())
        .env("TMPDIR", dir.join("tmp"))
        .args(args)
        .output()
        .expect("latscope runs")
}

/// What the runs of [`latscope_via`] in `dir` left in their temporary directory.
fn left_in_tmp(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir.join("tmp"))
        .map(|d| d.filter_map(|e| Some(e.ok()?.file_name().to_string_lossy().into_owned())).collect())
        .unwrap_or_default()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn event_lines(stdout: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stdout).lines().filter(|l| !l.starts_with("cpus=")).map(str::to_owned).collect()
}

/// Records `dd … iflag=direct` with `--preset block` over `sshd` and checks what it saved
/// against trace-cmd and the report. Returns the recording's standard error, its events and
/// the pages its file holds (trace-cmd's sizes of each CPU's data over the page size).
fn dd_recorded_over_ssh_reads_back_as_trace_cmd_and_the_report_say(
    sshd: &Sshd,
    dir: &Path,
) -> (String, u64, u64) {
    let before = latscope_testkit::tracefs_state();
    std::fs::write(dir.join("data.bin"), vec![0x5a; 8 << 20]).unwrap();
    let data = dir.join("data.bin");
    let input = format!("if={}", data.display());
    let out = latscope_via(
        sshd,
        dir,
        &[
            "record",
            "--ssh",
            &sshd.target(),
            "--preset",
            "block",
            "--format",
            "json",
            "-o",
            "run.dat",
            "--",
            "dd",
            &input,
            "of=/dev/null",
            "bs=4k",
            "count=2000",
            "iflag=direct",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(latscope_testkit::tracefs_state(), before, "tracefs is left as found, buffer_percent too");
    assert_eq!(left_in_tmp(dir), Vec::<String>::new(), "the control master's socket is removed");
    let last: Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap()).unwrap();
    assert_eq!(last["final"], true);
    let live = &last["analyses"][0];
    assert!(live["count"].as_u64().unwrap() >= 2000, "{live}");
    let tc = latscope_testkit::Need::TraceCmd
        .output(Command::new("trace-cmd").arg("report").arg(dir.join("run.dat")));
    assert!(tc.status.success() && tc.stderr.is_empty(), "{}", stderr(&tc));
    let ours =
        Command::new(env!("CARGO_BIN_EXE_latscope")).arg("events").arg(dir.join("run.dat")).output().unwrap();
    assert_eq!(event_lines(&tc.stdout), event_lines(&ours.stdout));
    assert_eq!(event_lines(&tc.stdout).len() as u64, last["events"].as_u64().unwrap());
    let report = Command::new(env!("CARGO_BIN_EXE_latscope"))
        .arg("report")
        .arg(dir.join("run.dat"))
        .args(["--preset", "block", "--format", "json"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&report.stdout).unwrap();
    let report = &report["analyses"][0];
    assert_eq!(live["count"], report["count"]);
    for stat in ["p50", "p99", "max"] {
        assert_eq!(live[format!("{stat}_ns")], report["stats_ns"][stat], "{stat}");
    }
    (stderr(&out), last["events"].as_u64().unwrap(), pages_in(&dir.join("run.dat")))
}

/// The pages a trace.dat holds, by trace-cmd: each CPU's data size over the page size.
fn pages_in(dat: &Path) -> u64 {
    let dump = latscope_testkit::Need::TraceCmd
        .output(Command::new("trace-cmd").args(["dump", "--flyrecord", "--head-page", "-i"]).arg(dat));
    let text = String::from_utf8_lossy(&dump.stdout).into_owned();
    assert!(dump.status.success(), "{}", stderr(&dump));
    // The header page's `data` field ends where the page does; each CPU's line reads
    // "OFFSET SIZE [offset, size of cpu N]".
    let number = |field: &str, key: &str| -> Option<u64> {
        field.split(key).nth(1)?.split(';').next()?.trim().parse().ok()
    };
    let data = text.lines().find(|l| l.contains("char data;")).expect("the header page's data field");
    let page_size = number(data, "offset:").unwrap() + number(data, "size:").unwrap();
    let sizes: Vec<u64> = text
        .lines()
        .filter(|l| l.contains("[offset, size of cpu"))
        .filter_map(|l| l.split_whitespace().nth(1)?.parse().ok())
        .collect();
    assert!(!sizes.is_empty(), "trace-cmd dump gives each CPU's size: {text}");
    sizes.iter().map(|s| s / page_size).sum()
}

#[test]
#[cfg_attr(
    not(all(have_tracefs, have_sshd, have_trace_cmd)),
    ignore = "needs root and tracefs: run as root where /sys/kernel/tracing is mounted; needs sshd and ssh: apt-get install openssh-server openssh-client; needs trace-cmd: apt-get install trace-cmd"
)]
fn dd_recorded_over_ssh_reads_back_in_trace_cmd_and_live_statistics_equal_the_report() {
    let _lock = latscope_testkit::tracefs_lock();
    let _restore = latscope_testkit::TracefsRestore(latscope_testkit::tracefs_state());
    let dir = Scratch::new("record-ssh");
    let sshd = Sshd::start(&dir);
    let (err, events, pages) = dd_recorded_over_ssh_reads_back_as_trace_cmd_and_the_report_say(&sshd, &dir);
    assert!(!err.contains("blocking cat"), "this board's dd reads without blocking: {err}");
    // Read every 50 ms, a page fills with the events between reads; read at each event, as
    // `cat` does, it holds one or two.
    assert!(events >= 8 * pages, "{events} events in {pages} pages: the board's pages were read sparse");
}

#[test]
#[cfg_attr(
    not(all(have_tracefs, have_sshd, have_trace_cmd)),
    ignore = "needs root and tracefs: run as root where /sys/kernel/tracing is mounted; needs sshd and ssh: apt-get install openssh-server openssh-client; needs trace-cmd: apt-get install trace-cmd"
)]
fn a_board_whose_dd_cannot_read_without_blocking_is_read_by_cat_and_says_so() {
    let _lock = latscope_testkit::tracefs_lock();
    let _restore = latscope_testkit::TracefsRestore(latscope_testkit::tracefs_state());
    let dir = Scratch::new("record-ssh-cat");
    // busybox's dd knows no iflag=nonblock: it says so and fails.
    let bin = dir.join("board-bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(
        bin.join("dd"),
        "#!/bin/sh\nfor a in \"$@\"; do case $a in iflag=*nonblock*) echo \"dd: invalid iflag\" >&2; exit 1;; esac; done\nexec /bin/dd \"$@\"\n",
    )
    .unwrap();
    std::fs::set_permissions(bin.join("dd"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let sshd = Sshd::start_with_path(&dir, Some(&bin));
    let (err, events, _) = dd_recorded_over_ssh_reads_back_as_trace_cmd_and_the_report_say(&sshd, &dir);
    assert!(events > 0);
    assert!(err.contains("read by a blocking cat") && err.contains("127.0.0.1"), "{err}");
}

#[test]
#[cfg_attr(
    not(all(have_tracefs, have_sshd, have_trace_cmd)),
    ignore = "needs root and tracefs: run as root where /sys/kernel/tracing is mounted; needs sshd and ssh: apt-get install openssh-server openssh-client; needs trace-cmd: apt-get install trace-cmd"
)]
fn a_connection_that_drops_mid_capture_keeps_what_arrived_and_says_where_it_stopped() {
    let _lock = latscope_testkit::tracefs_lock();
    let _restore = latscope_testkit::TracefsRestore(latscope_testkit::tracefs_state());
    let dir = Scratch::new("record-ssh-drop");
    let sshd = Sshd::start(&dir);
    let mut child = Command::new(env!("CARGO_BIN_EXE_latscope"))
        .current_dir(&*dir)
        .env("LATSCOPE_SSH_COMMAND", sshd.ssh_command())
        .args([
            "record",
            "--ssh",
            &sshd.target(),
            "--events",
            "sched_switch",
            "--duration",
            "60s",
            "--format",
            "json",
            "-o",
            "cut.dat",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Once a live line says pages arrive, the connection drops.
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    loop {
        let mut line = String::new();
        let n = std::io::BufRead::read_line(&mut stdout, &mut line).unwrap();
        assert!(n > 0, "the recording ended before a live line: {:?}", child.wait_with_output());
        let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line}: {e}"));
        if v["events"].as_u64().unwrap() > 0 {
            break;
        }
    }
    sshd.drop_sessions();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("dropped") && err.contains("127.0.0.1"), "{err}");
    let tc = latscope_testkit::Need::TraceCmd
        .output(Command::new("trace-cmd").arg("report").arg(dir.join("cut.dat")));
    assert!(tc.status.success(), "{}", stderr(&tc));
    let switches = event_lines(&tc.stdout).iter().filter(|l| l.contains(" sched_switch: ")).count();
    assert!(switches > 0, "what arrived before the drop is saved");
}

/// An idle CPU of a board read without blocking says so, with idle marks on the board's
/// trace clock in its stream, so the live source is final to a fraction of a second
/// before now. Before them, a CPU that said nothing let the live lines trail the newest
/// record by two seconds. Markers are written from CPU 0 alone and nothing else is traced,
/// so CPU 1 has no record at all; at each tick the newest final event is compared with this
/// machine's monotonic clock, which is the board's (loopback) and its trace clock's.
#[test]
#[cfg_attr(
    not(all(have_tracefs, have_sshd)),
    ignore = "needs root and tracefs: run as root where /sys/kernel/tracing is mounted; needs sshd and ssh: apt-get install openssh-server openssh-client"
)]
fn an_idle_board_cpu_says_so_and_the_live_source_trails_by_a_fraction_of_a_second() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert!(cpus >= 2, "this test needs a CPU with no events beside the one writing them: {cpus} CPU");
    let _lock = latscope_testkit::tracefs_lock();
    let _restore = latscope_testkit::TracefsRestore(latscope_testkit::tracefs_state());
    let dir = Scratch::new("record-ssh-idle");
    let sshd = Sshd::start(&dir);
    let program = vec!["ssh".to_owned(), "-F".to_owned(), sshd.config.display().to_string()];
    let ssh =
        latscope_record::ssh::Ssh::connect_with(&format!("root@127.0.0.1:{}", sshd.port), program).unwrap();
    let fs = latscope_record::tracefs::Tracefs::remote(ssh).unwrap();
    let rule = "req=print[text~req_start] -> print[text~req_done] by id";
    // 100 requests a second for 4 s, from CPU 0.
    let writer = "M=/sys/kernel/tracing/trace_marker; i=0; while [ $i -lt 400 ]; do i=$((i+1)); \
                  printf 'req_start id=%d\\n' $i > $M; printf 'req_done id=%d\\n' $i > $M; sleep 0.01; done";
    let opts = latscope_record::Options {
        specs: vec![latscope_analysis::spec::parse_spec(rule).unwrap()],
        spec_texts: vec![rule.to_owned()],
        command: ["taskset", "-c", "0", "sh", "-c", writer].map(String::from).to_vec(),
        duration: Some(std::time::Duration::from_secs(8)),
        tick: std::time::Duration::from_millis(250),
        ..latscope_record::Options::default()
    };
    let started = std::time::Instant::now();
    // (seconds into the recording, how far the newest final event trails now, in seconds)
    let mut trails: Vec<(f64, f64)> = Vec::new();
    let rec = latscope_record::recorder::record_on(&fs, &opts, &mut |_| {}, &mut |snap| {
        let latscope_record::Snapshot::Kernel(src, _) = snap else { return };
        let Some(&last) = src.events.ts.last() else { return };
        let newest_ns = src.origin.secs as i128 * 1_000_000_000 + i128::from((src.origin.ps + last) / 1000);
        let now_ns = i128::from(latscope_record::sigrok::mono_ns());
        trails.push((started.elapsed().as_secs_f64(), (now_ns - newest_ns) as f64 / 1e9));
    })
    .unwrap();
    assert!(matches!(rec.stopped, latscope_record::Stopped::Exited(s) if s.success()), "{:?}", rec.stopped);
    assert!(rec.events >= 800, "{} events", rec.events);
    // Every tick but the last, which reads everything once the recording has ended.
    let mut during: Vec<f64> = trails[..trails.len().saturating_sub(1)].iter().map(|t| t.1).collect();
    assert!(during.len() >= 4, "ticks while the writer ran: {trails:?}");
    println!("(seconds since the call, seconds the newest final event trailed): {trails:?}");
    during.sort_by(f64::total_cmp);
    let median = during[during.len() / 2];
    assert!(median < 0.8, "the live source trails by {median:.2} s at the median: {trails:?}");
}

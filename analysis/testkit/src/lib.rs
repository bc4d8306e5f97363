//! What latscope's tests need from the machine, declared in one place.
//!
//! Some tests check latscope against a reference tool (`trace-cmd`, `sigrok-cli`, Python
//! packages) or read captures of the shared corpus, which is not redistributable and so is
//! not in the repository. Such a test must neither pass by not running nor fail on a
//! machine that merely lacks the tool. The contract:
//!
//! - The build script of each crate with such tests calls [`probe`] with the [`Need`]s its
//!   tests have. Each need that is met sets a cfg (`have_sigrok_cli`, …), and every one is
//!   declared to `check-cfg`, so a misspelt or undeclared cfg is a compile warning.
//! - A test that needs one is marked with the need's cfg and its [`Need::reason`], e.g.
//!   `#[cfg_attr(not(have_sigrok_cli), ignore = "needs sigrok-cli: apt-get install sigrok-cli")]`:
//!   where the need is not met, libtest reports the test as ignored, with the reason.
//! - With the environment variable `CI` set, every cfg is on: in CI the tests run, and one
//!   whose need is missing fails saying what is missing, through the helpers below
//!   ([`Need::output`], [`corpus`], [`shared_corpus_files`]), which panic with "needs …".
//! - `LATSCOPE_TESTS_WITHOUT=sigrok-cli,shared-corpus` (names from [`Need::name`]) turns
//!   needs off even where they are met (and even in CI), to see what a machine without them
//!   runs.
//!
//! The probe runs when the build script does: after installing a tool, `cargo clean -p
//! latscope-testkit` makes every build script probe again (a change of `PATH`, `CI`,
//! `LATSCOPE_CORPUS` or `LATSCOPE_TESTS_WITHOUT` does so by itself).
//!
//! The corpus: `samples/corpus/` holds the redistributable files (its README says where each
//! comes from); the others stay in the shared corpus, `../shared/corpus` beside the checkout
//! or `$LATSCOPE_CORPUS`.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Something a test may need that a machine may lack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// `trace-cmd` on the `PATH`.
    TraceCmd,
    /// `sigrok-cli` on the `PATH`.
    SigrokCli,
    /// `desktop-file-validate` (desktop-file-utils) on the `PATH`.
    DesktopFileValidate,
    /// `chromium` (Debian's package) on the `PATH`, run headless.
    Chromium,
    /// `python3` on the `PATH` (for a test's own script).
    Python3,
    /// `python3` that imports Perfetto's message classes (PyPI `perfetto` and `protobuf`).
    PythonPerfetto,
    /// `python3` that imports `jsonschema`.
    PythonJsonschema,
    /// `python3` that imports Apache DataFusion (PyPI `datafusion`).
    PythonDatafusion,
    /// `python3` that imports SciPy's statistics (PyPI `scipy`, with numpy).
    PythonScipy,
    /// `python3` that imports PySpark, and a Java runtime (`java`) on the `PATH` for it.
    PythonSpark,
    /// The shared corpus: `../shared/corpus` beside the checkout, or `$LATSCOPE_CORPUS`.
    SharedCorpus,
    /// A writable tracefs (`/sys/kernel/tracing`): root on a kernel with tracing (the
    /// recorder's tests, which take `tracefs_lock` since tests run in parallel).
    Tracefs,
    /// `sshd` (Debian's openssh-server, at /usr/sbin/sshd) and `ssh`: the recorder's SSH
    /// tests run a server on loopback with throw-away keys.
    Sshd,
}

impl Need {
    /// Every need, in the order [`probe`] reports them.
    pub const ALL: [Need; 13] = [
        Need::TraceCmd,
        Need::SigrokCli,
        Need::DesktopFileValidate,
        Need::Chromium,
        Need::Python3,
        Need::PythonPerfetto,
        Need::PythonJsonschema,
        Need::PythonDatafusion,
        Need::PythonScipy,
        Need::PythonSpark,
        Need::SharedCorpus,
        Need::Tracefs,
        Need::Sshd,
    ];

    /// The cfg set when the need is met.
    pub fn cfg(self) -> &'static str {
        match self {
            Need::TraceCmd => "have_trace_cmd",
            Need::SigrokCli => "have_sigrok_cli",
            Need::DesktopFileValidate => "have_desktop_file_validate",
            Need::Chromium => "have_chromium",
            Need::Python3 => "have_python3",
            Need::PythonPerfetto => "have_python_perfetto",
            Need::PythonJsonschema => "have_python_jsonschema",
            Need::PythonDatafusion => "have_python_datafusion",
            Need::PythonScipy => "have_python_scipy",
            Need::PythonSpark => "have_python_spark",
            Need::SharedCorpus => "have_shared_corpus",
            Need::Tracefs => "have_tracefs",
            Need::Sshd => "have_sshd",
        }
    }

    /// Its name in `LATSCOPE_TESTS_WITHOUT`.
    pub fn name(self) -> &'static str {
        match self {
            Need::TraceCmd => "trace-cmd",
            Need::SigrokCli => "sigrok-cli",
            Need::DesktopFileValidate => "desktop-file-validate",
            Need::Chromium => "chromium",
            Need::Python3 => "python3",
            Need::PythonPerfetto => "python-perfetto",
            Need::PythonJsonschema => "python-jsonschema",
            Need::PythonDatafusion => "python-datafusion",
            Need::PythonScipy => "python-scipy",
            Need::PythonSpark => "python-spark",
            Need::SharedCorpus => "shared-corpus",
            Need::Tracefs => "tracefs",
            Need::Sshd => "sshd",
        }
    }

    /// The `ignore` reason of a test with this need: what is missing and how to get it.
    /// Attributes take literals, so tests spell it out; this is the one they copy.
    pub fn reason(self) -> &'static str {
        match self {
            Need::TraceCmd => "needs trace-cmd: apt-get install trace-cmd",
            Need::SigrokCli => "needs sigrok-cli: apt-get install sigrok-cli",
            Need::DesktopFileValidate => "needs desktop-file-validate: apt-get install desktop-file-utils",
            Need::Chromium => "needs chromium: apt-get install chromium",
            Need::Python3 => "needs python3: apt-get install python3",
            Need::PythonPerfetto => "needs python3 with perfetto: pip install perfetto protobuf",
            Need::PythonJsonschema => "needs python3 with jsonschema: pip install jsonschema",
            Need::PythonDatafusion => "needs python3 with datafusion: pip install datafusion",
            Need::PythonScipy => "needs python3 with scipy: pip install scipy",
            Need::PythonSpark => {
                "needs python3 with pyspark and Java 17: pip install pyspark; apt-get install openjdk-17-jre-headless"
            }
            Need::SharedCorpus => "needs the shared corpus: ../shared/corpus or $LATSCOPE_CORPUS",
            Need::Tracefs => "needs root and tracefs: run as root where /sys/kernel/tracing is mounted",
            Need::Sshd => "needs sshd and ssh: apt-get install openssh-server openssh-client",
        }
    }

    /// The module a Python need imports.
    fn python_module(self) -> Option<&'static str> {
        match self {
            Need::PythonPerfetto => Some("perfetto.protos.perfetto.trace.perfetto_trace_pb2"),
            Need::PythonJsonschema => Some("jsonschema"),
            Need::PythonDatafusion => Some("datafusion"),
            Need::PythonScipy => Some("scipy.stats"),
            Need::PythonSpark => Some("pyspark.sql"),
            _ => None,
        }
    }

    /// Whether this machine meets the need now.
    pub fn is_met(self) -> bool {
        match self {
            Need::TraceCmd => on_path("trace-cmd"),
            Need::SigrokCli => on_path("sigrok-cli"),
            Need::DesktopFileValidate => on_path("desktop-file-validate"),
            Need::Chromium => on_path("chromium"),
            Need::Python3 => on_path("python3"),
            Need::SharedCorpus => shared_corpus_dir().join("MANIFEST.tsv").is_file(),
            // Opening for writing writes nothing; it fails unless root may trace.
            Need::Tracefs => std::fs::OpenOptions::new().write(true).open(TRACEFS_ON).is_ok(),
            Need::Sshd => std::path::Path::new(SSHD).is_file() && on_path("ssh") && on_path("ssh-keygen"),
            Need::PythonSpark => on_path("java") && self.python_imports(),
            Need::PythonPerfetto | Need::PythonJsonschema | Need::PythonDatafusion | Need::PythonScipy => {
                self.python_imports()
            }
        }
    }

    /// Whether `python3` imports this need's module.
    fn python_imports(self) -> bool {
        let module = self.python_module().unwrap_or_default();
        Command::new("python3")
            .args(["-c", &format!("import {module}")])
            .output()
            .is_ok_and(|o| o.status.success())
    }

    /// Runs `cmd` (the tool or the Python of this need) to completion. It panics naming the
    /// need when the program cannot be started, or when Python cannot import the need's
    /// module; any other failure is the caller's to judge from the output.
    #[track_caller]
    pub fn output(self, cmd: &mut Command) -> Output {
        let shown = format!("{:?}", cmd.get_program());
        let out = cmd.output().unwrap_or_else(|e| panic!("{}: cannot run {shown}: {e}", self.reason()));
        if !out.status.success() && self.python_module().is_some() {
            let stderr = String::from_utf8_lossy(&out.stderr);
            if stderr.contains("ModuleNotFoundError") || stderr.contains("ImportError") {
                panic!("{}: {shown} failed: {stderr}", self.reason());
            }
        }
        out
    }
}

/// Where Debian's openssh-server puts the server (not on a user's `PATH`).
pub const SSHD: &str = "/usr/sbin/sshd";

/// The file whose write access says tracefs is usable.
const TRACEFS_ON: &str = "/sys/kernel/tracing/tracing_on";

/// A lock every test that touches tracefs holds while it does (tests run in parallel, in
/// several processes): an exclusive lock on a file in the system's temporary directory.
#[track_caller]
pub fn tracefs_lock() -> std::fs::File {
    let path = std::env::temp_dir().join("latscope-tracefs.lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("cannot open the tracefs lock {}: {e}", path.display()));
    file.lock().unwrap_or_else(|e| panic!("cannot lock {}: {e}", path.display()));
    file
}

const TRACEFS: &str = "/sys/kernel/tracing";

/// The tracefs files a recording changes and must put back, as text: tracing on or off, the
/// events, the clock, `buffer_percent` and every buffer size.
pub fn tracefs_state() -> Vec<(String, String)> {
    // A buffer never used reads `7 (expanded: 1408)` (each CPU `7`), and any use expands it
    // for good (the recorder puts it back expanded): expand it first, as a first recording
    // would, so before and after compare like for like.
    let top = std::fs::read_to_string(format!("{TRACEFS}/buffer_size_kb")).unwrap_or_default();
    if let Some((_, expanded)) = top.trim().split_once(" (expanded: ") {
        write_tracefs("buffer_size_kb", expanded.trim_end_matches(')'));
    }
    let mut files: Vec<String> =
        ["tracing_on", "set_event", "trace_clock", "buffer_size_kb", "buffer_percent"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    let mut cpu = 0;
    while std::path::Path::new(&format!("{TRACEFS}/per_cpu/cpu{cpu}")).exists() {
        files.push(format!("per_cpu/cpu{cpu}/buffer_size_kb"));
        cpu += 1;
    }
    files
        .into_iter()
        .map(|f| {
            let text = std::fs::read_to_string(format!("{TRACEFS}/{f}"))
                .unwrap_or_else(|e| panic!("{TRACEFS}/{f}: {e}"));
            (f, text)
        })
        .collect()
}

fn write_tracefs(file: &str, text: &str) {
    std::fs::write(format!("{TRACEFS}/{file}"), text).unwrap_or_else(|e| panic!("{file}: {e}"));
}

/// Puts tracefs back as [`tracefs_state`] found it when dropped, so a failing test does not
/// leave the kernel tracing.
#[derive(Debug)]
pub struct TracefsRestore(pub Vec<(String, String)>);

impl Drop for TracefsRestore {
    fn drop(&mut self) {
        write_tracefs("tracing_on", "0");
        write_tracefs("set_event", "");
        for (f, text) in &self.0 {
            match f.as_str() {
                "trace_clock" => {
                    let sel = text.split_whitespace().find(|w| w.starts_with('[')).unwrap_or("[local]");
                    write_tracefs(f, sel.trim_matches(['[', ']']));
                }
                "set_event" => {
                    for line in text.lines().filter(|l| !l.is_empty()) {
                        let _ = std::fs::OpenOptions::new()
                            .append(true)
                            .open(format!("{TRACEFS}/set_event"))
                            .and_then(|mut h| {
                                std::io::Write::write_all(&mut h, format!("{line}\n").as_bytes())
                            });
                    }
                }
                "tracing_on" => {}
                _ => write_tracefs(f, text.trim()),
            }
        }
        let on = self.0.iter().find(|(f, _)| f == "tracing_on").map_or("1", |(_, t)| t.trim());
        write_tracefs("tracing_on", on);
    }
}

/// Whether `program` is an executable file in a directory of the `PATH`.
fn on_path(program: &str) -> bool {
    let Some(paths) = std::env::var_os("PATH") else { return false };
    std::env::split_paths(&paths)
        .any(|dir| std::fs::metadata(dir.join(program)).is_ok_and(|m| executable(&m)))
}

#[cfg(unix)]
fn executable(m: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    m.is_file() && m.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn executable(m: &std::fs::Metadata) -> bool {
    m.is_file()
}

/// The environment the probe reads, apart from the machine itself.
#[derive(Debug, Clone, Default)]
pub struct ProbeEnv {
    /// `CI` is set (and not empty, `0` or `false`): every need counts as met.
    pub ci: bool,
    /// Names (from [`Need::name`]) turned off by `LATSCOPE_TESTS_WITHOUT`.
    pub without: Vec<String>,
}

impl ProbeEnv {
    /// The probe's environment from the process's.
    pub fn from_env() -> ProbeEnv {
        let ci = std::env::var("CI").is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false"));
        let without = std::env::var("LATSCOPE_TESTS_WITHOUT")
            .unwrap_or_default()
            .split(',')
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .collect();
        ProbeEnv { ci, without }
    }
}

/// The lines a build script prints for `needs`: `rerun-if-env-changed` for what the probe
/// reads, `rustc-check-cfg` for each need's cfg, and `rustc-cfg` for each need that is on
/// (`met` says whether the machine meets one; it is only asked outside CI).
pub fn probe_lines(needs: &[Need], env: &ProbeEnv, met: impl Fn(Need) -> bool) -> Vec<String> {
    let mut lines: Vec<String> = ["CI", "PATH", "LATSCOPE_CORPUS", "LATSCOPE_TESTS_WITHOUT"]
        .iter()
        .map(|v| format!("cargo::rerun-if-env-changed={v}"))
        .collect();
    for &need in needs {
        lines.push(format!("cargo::rustc-check-cfg=cfg({})", need.cfg()));
        let off = env.without.iter().any(|w| w == need.name());
        if !off && (env.ci || met(need)) {
            lines.push(format!("cargo::rustc-cfg={}", need.cfg()));
        }
    }
    lines
}

/// For a build script: probes `needs` and prints the cfgs (see the crate docs).
pub fn probe(needs: &[Need]) {
    for line in probe_lines(needs, &ProbeEnv::from_env(), Need::is_met) {
        println!("{line}");
    }
}

/// The workspace root (this crate lives in `analysis/testkit`).
pub fn root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.ancestors().nth(2).unwrap_or(here).to_path_buf()
}

/// `samples/corpus`: the redistributable corpus files, in the repository.
pub fn repo_corpus() -> PathBuf {
    root().join("samples/corpus")
}

/// Where the shared corpus is expected: `$LATSCOPE_CORPUS`, or `../shared/corpus` beside
/// the checkout. It may be absent.
pub fn shared_corpus_dir() -> PathBuf {
    std::env::var_os("LATSCOPE_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().parent().unwrap_or(Path::new("/")).join("shared/corpus"))
}

/// Whether `rel` (e.g. `sigrok/no_samplerate.sr`) is one of the repository's corpus files.
pub fn in_repo(rel: &str) -> bool {
    repo_corpus().join(rel).is_file()
}

/// The corpus file `rel`: the repository's copy, or else the shared corpus's, or a panic
/// saying the shared corpus is needed.
#[track_caller]
pub fn corpus(rel: &str) -> PathBuf {
    let here = repo_corpus().join(rel);
    if here.is_file() {
        return here;
    }
    let there = shared_corpus_dir().join(rel);
    if !there.exists() {
        panic!(
            "{}: {} is absent (not redistributable, so not in samples/corpus)",
            Need::SharedCorpus.reason(),
            there.display()
        );
    }
    there
}

/// The repository's corpus files under `sub` (e.g. `sigrok`), recursively, with extension
/// `ext` if given, sorted. Panics when there are none: `sub` is misspelt.
#[track_caller]
pub fn corpus_files(sub: &str, ext: Option<&str>) -> Vec<PathBuf> {
    let dir = repo_corpus().join(sub);
    let files = files_under(&dir, ext);
    assert!(!files.is_empty(), "no corpus files under {}", dir.display());
    files
}

/// The shared corpus's files under `sub` that the repository does not hold, recursively,
/// with extension `ext` if given, sorted. Panics naming the need when the shared corpus is
/// absent, and when it holds none: every directory of it has files of its own.
#[track_caller]
pub fn shared_corpus_files(sub: &str, ext: Option<&str>) -> Vec<PathBuf> {
    let base = shared_corpus_dir();
    let dir = base.join(sub);
    if !dir.is_dir() {
        panic!("{}: {} is absent", Need::SharedCorpus.reason(), dir.display());
    }
    let files: Vec<PathBuf> = files_under(&dir, ext)
        .into_iter()
        .filter(|p| p.strip_prefix(&base).is_ok_and(|rel| !repo_corpus().join(rel).is_file()))
        .collect();
    assert!(!files.is_empty(), "the shared corpus has no files of its own under {}", dir.display());
    files
}

/// Files under `dir`, recursively, with extension `ext` if given, sorted; none if `dir`
/// cannot be read.
pub fn files_under(dir: &Path, ext: Option<&str>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for p in entries.flatten().map(|e| e.path()) {
            if p.is_dir() {
                todo.push(p);
            } else if ext.is_none_or(|x| p.extension() == Some(OsStr::new(x))) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// A logic analyzer that plays a recorded capture, for the recorder's tests: a directory
/// holding a `sigrok-cli` that answers `--show` with the capture's logic channels and, when
/// asked to capture, streams the capture's samples as `-O binary` (through the real
/// sigrok-cli) and then waits for its standard input to close, as `--continuous` does. Put
/// the directory first on the `PATH` of the latscope under test; any driver name works.
/// Real bus traffic (the corpus's SD captures) can then be recorded live.
pub fn sigrok_player(dir: &std::path::Path, capture: &std::path::Path) -> std::path::PathBuf {
    let real = Need::SigrokCli.output(Command::new("sh").args(["-c", "command -v sigrok-cli"]));
    let real = String::from_utf8_lossy(&real.stdout).trim().to_owned();
    assert!(!real.is_empty(), "{}", Need::SigrokCli.reason());
    let shown = Need::SigrokCli.output(Command::new(&real).arg("-i").arg(capture).arg("--show"));
    // `- CLK: logic` lines.
    let channels: Vec<String> = String::from_utf8_lossy(&shown.stdout)
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- ")?.strip_suffix(": logic").map(str::to_owned))
        .collect();
    assert!(!channels.is_empty(), "no logic channels in {}", capture.display());
    let bin = dir.join("player-bin");
    std::fs::create_dir_all(&bin).unwrap_or_else(|e| panic!("{}: {e}", bin.display()));
    let script = format!(
        "#!/bin/sh\n\
         case \" $* \" in\n\
           *\" --show \"*) printf 'Channel groups:\\n    Logic: channels {}\\n'; exit 0;;\n\
         esac\n\
         '{real}' -i '{}' -O binary\n\
         exec cat > /dev/null\n",
        channels.join(" "),
        capture.display()
    );
    let path = bin.join("sigrok-cli");
    std::fs::write(&path, script).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    bin
}

/// `PATH` with `first` before the rest.
pub fn path_with(first: &std::path::Path) -> std::ffi::OsString {
    let mut paths = vec![first.to_path_buf()];
    paths.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
    std::env::join_paths(paths).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfgs(lines: &[String]) -> Vec<&str> {
        lines.iter().filter_map(|l| l.strip_prefix("cargo::rustc-cfg=")).collect()
    }

    #[test]
    fn every_need_is_declared_and_only_met_ones_are_set() {
        let needs = [Need::TraceCmd, Need::SigrokCli, Need::SharedCorpus];
        let lines = probe_lines(&needs, &ProbeEnv::default(), |n| n == Need::SigrokCli);
        let declared: Vec<&str> =
            lines.iter().filter_map(|l| l.strip_prefix("cargo::rustc-check-cfg=")).collect();
        assert_eq!(declared, ["cfg(have_trace_cmd)", "cfg(have_sigrok_cli)", "cfg(have_shared_corpus)"]);
        assert_eq!(cfgs(&lines), ["have_sigrok_cli"]);
        for var in ["CI", "PATH", "LATSCOPE_CORPUS", "LATSCOPE_TESTS_WITHOUT"] {
            assert!(lines.contains(&format!("cargo::rerun-if-env-changed={var}")), "{var}");
        }
    }

    #[test]
    fn ci_sets_every_cfg_without_asking_the_machine() {
        let env = ProbeEnv { ci: true, without: Vec::new() };
        let lines = probe_lines(&Need::ALL, &env, |n| panic!("{n:?} asked in CI"));
        assert_eq!(cfgs(&lines), Need::ALL.map(Need::cfg));
    }

    #[test]
    fn tests_without_turns_needs_off_even_in_ci() {
        let env = ProbeEnv { ci: true, without: vec!["sigrok-cli".into(), "shared-corpus".into()] };
        let lines = probe_lines(&Need::ALL, &env, |_| true);
        let on = cfgs(&lines);
        assert!(!on.contains(&"have_sigrok_cli") && !on.contains(&"have_shared_corpus"), "{on:?}");
        assert_eq!(on.len(), Need::ALL.len() - 2);
    }

    #[test]
    fn names_cfgs_and_reasons_are_distinct_and_say_what_to_install() {
        for (i, a) in Need::ALL.iter().enumerate() {
            assert!(a.reason().starts_with("needs ") && a.reason().contains(": "), "{a:?}");
            assert!(a.cfg().starts_with("have_"), "{a:?}");
            for b in &Need::ALL[i + 1..] {
                assert!(a.cfg() != b.cfg() && a.name() != b.name(), "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn a_program_that_cannot_start_fails_naming_the_need() {
        let err = std::panic::catch_unwind(|| {
            Need::SigrokCli.output(&mut Command::new("/nonexistent/latscope-testkit-no-such-tool"))
        })
        .expect_err("it cannot run");
        let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(msg.starts_with("needs sigrok-cli: apt-get install sigrok-cli: cannot run"), "{msg}");
    }

    /// The manifest's rows: every file is there at its stated size, under a licence that
    /// allows redistribution, and nothing else is.
    #[test]
    fn the_repository_corpus_is_what_its_manifest_lists() {
        let manifest = std::fs::read_to_string(repo_corpus().join("MANIFEST.tsv")).unwrap_or_default();
        let mut lines = manifest.lines();
        assert_eq!(
            lines.next(),
            Some("path\tformat\torigin_repo\tcommit\tpath_in_origin\tsize_bytes\tlicense\tdescription")
        );
        let rows: Vec<Vec<&str>> = lines.map(|l| l.split('\t').collect()).collect();
        assert_eq!(rows.len(), 32, "samples/corpus/MANIFEST.tsv");
        let listed: Vec<&str> = rows.iter().map(|r| r[0]).collect();
        for row in &rows {
            let (rel, size, licence) = (row[0], row[5], row[6]);
            assert!(in_repo(rel), "{rel} is listed but absent");
            assert_eq!(corpus(rel), repo_corpus().join(rel));
            let len = std::fs::metadata(repo_corpus().join(rel)).map(|m| m.len()).unwrap_or(0);
            assert_eq!(len.to_string(), size, "{rel}: size");
            assert!(
                ["Public domain", "MIT", "Apache-2.0", "BSD-3-Clause"].iter().any(|l| licence.starts_with(l)),
                "{rel}: {licence}"
            );
        }
        // Every file of samples/corpus (but its README, manifest and attributes) is listed.
        let on_disk = files_under(&repo_corpus(), None);
        let mut rels: Vec<String> = on_disk
            .iter()
            .filter_map(|p| p.strip_prefix(repo_corpus()).ok())
            .map(|p| p.to_string_lossy().into_owned())
            .filter(|r| !matches!(r.as_str(), "README.md" | "MANIFEST.tsv" | ".gitattributes"))
            .collect();
        rels.sort();
        let mut want: Vec<String> = listed.iter().map(|s| (*s).to_owned()).collect();
        want.sort();
        assert_eq!(rels, want);
        assert_eq!(corpus_files("sigrok", Some("sr")).len(), 11);
    }
}

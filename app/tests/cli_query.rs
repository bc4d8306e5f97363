//! `latscope query`: SQL over a capture's tables, against independent answers — the event
//! counts `trace-cmd report` prints for every sample trace, `latscope report`'s statistics
//! for the pairs, `latscope decode`'s annotations, and DataFusion running the same SQL on the
//! tables exported as Parquet.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure should panic

mod common;

use common::{Scratch, latscope, ok};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn sample_dats() -> Vec<PathBuf> {
    let mut dats: Vec<PathBuf> = std::fs::read_dir(root().join("samples/ftrace"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "dat"))
        .collect();
    dats.sort();
    assert!(dats.len() >= 5, "{dats:?}");
    dats
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The rows of CSV `text` (no field of these queries holds a comma or quote), header first.
fn csv(text: &[u8]) -> Vec<Vec<String>> {
    String::from_utf8_lossy(text).lines().map(|l| l.split(',').map(str::to_owned).collect()).collect()
}

fn query_json(args: &[&str]) -> Vec<serde_json::Value> {
    let mut all = vec!["query"];
    all.extend(args);
    all.extend(["--format", "json"]);
    let out = ok(&all);
    serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap().as_array().unwrap().clone()
}

/// Events per name as `trace-cmd report` prints them: the word before the first `: ` after
/// the timestamp.
fn trace_cmd_counts(path: &Path) -> BTreeMap<String, u64> {
    let out = latscope_testkit::Need::TraceCmd.output(Command::new("trace-cmd").arg("report").arg(path));
    assert!(
        out.status.success(),
        "trace-cmd report {}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let mut counts = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        // `            comm-PID   [CPU]  SECS.USECS: NAME:  PAYLOAD`
        let Some(close) = line.find("] ") else { continue };
        let rest = &line[close + 2..];
        let Some((_time, after)) = rest.split_once(": ") else { continue };
        let Some((name, _)) = after.split_once(':') else { continue };
        *counts.entry(name.trim().to_owned()).or_insert(0) += 1;
    }
    counts
}

#[test]
#[cfg_attr(not(have_trace_cmd), ignore = "needs trace-cmd: apt-get install trace-cmd")]
fn events_per_name_equal_trace_cmd_report_on_every_sample_trace() {
    for dat in sample_dats() {
        let theirs = trace_cmd_counts(&dat);
        assert!(!theirs.is_empty(), "{}", dat.display());
        let out = ok(&[
            "query",
            s(&dat),
            "--sql",
            "SELECT name, count(*) AS n FROM events GROUP BY name ORDER BY name",
            "--format",
            "csv",
        ]);
        let rows = csv(&out.stdout);
        assert_eq!(rows[0], ["name", "n"], "{}", dat.display());
        let ours: BTreeMap<String, u64> = rows[1..]
            .iter()
            .map(|r| (r[0].clone(), r[1].parse::<u64>().expect("counts are integers")))
            .collect();
        assert_eq!(ours, theirs, "{}", dat.display());
        // Each event name is a table of its own with as many rows.
        for (name, n) in theirs.iter().take(4) {
            let sql = format!("SELECT count(*) AS n FROM {name}");
            let rows = query_json(&[s(&dat), "--sql", &sql]);
            assert_eq!(rows[0]["n"].as_u64(), Some(*n), "{}: {name}", dat.display());
        }
    }
}

/// `block_rq_issue.sector` is an unsigned column holding what trace-cmd prints after the
/// command: `8,0 RA 4096 () 2048 + 8 [cat]`.
#[test]
#[cfg_attr(not(have_trace_cmd), ignore = "needs trace-cmd: apt-get install trace-cmd")]
fn per_event_tables_have_typed_fields_as_trace_cmd_prints_them() {
    let dat = root().join("samples/ftrace/virtio_blk_direct_read.dat");
    let out = latscope_testkit::Need::TraceCmd.output(Command::new("trace-cmd").arg("report").arg(&dat));
    let text = String::from_utf8_lossy(&out.stdout);
    let mut theirs: Vec<(u64, u64)> = Vec::new();
    for line in text.lines().filter(|l| l.contains(" block_rq_issue: ")) {
        let payload = line.split(" block_rq_issue: ").nth(1).unwrap();
        let after_cmd = &payload[payload.find(") ").unwrap() + 2..];
        let mut words = after_cmd.split_whitespace();
        let sector: u64 = words.next().unwrap().parse().unwrap();
        assert_eq!(words.next(), Some("+"));
        let nr: u64 = words.next().unwrap().parse().unwrap();
        theirs.push((sector, nr));
    }
    assert!(theirs.len() > 10, "{}", theirs.len());
    let rows =
        query_json(&[s(&dat), "--sql", "SELECT sector, nr_sector FROM block_rq_issue ORDER BY time_ps"]);
    let ours: Vec<(u64, u64)> =
        rows.iter().map(|r| (r["sector"].as_u64().unwrap(), r["nr_sector"].as_u64().unwrap())).collect();
    assert_eq!(ours, theirs);
    // Unsigned: arithmetic and comparison on it are numeric, not text.
    let rows = query_json(&[
        s(&dat),
        "--sql",
        "SELECT max(sector) AS top, sum(nr_sector) AS total FROM block_rq_issue WHERE sector >= 0",
    ]);
    assert_eq!(rows[0]["top"].as_u64(), theirs.iter().map(|t| t.0).max());
    assert_eq!(rows[0]["total"].as_u64(), Some(theirs.iter().map(|t| t.1).sum::<u64>()));
}

/// Count, p50 and p99 of each analysis's pairs through SQL equal `latscope report`'s
/// statistics (the report's percentiles are linear between ranks, as `quantile_cont`).
#[test]
fn pairs_statistics_equal_the_report() {
    for (file, preset) in [
        ("samples/ftrace/virtio_blk_direct_read.dat", "block"),
        ("samples/ftrace/timer_wakeups_under_load.dat", "wakeup"),
    ] {
        let path = root().join(file);
        let report = ok(&["report", s(&path), "--preset", preset, "--format", "json"]);
        let report: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
        let analyses = report["analyses"].as_array().unwrap();
        assert!(!analyses.is_empty(), "{file}");
        let rows = query_json(&[
            s(&path),
            "--preset",
            preset,
            "--sql",
            "SELECT analysis, count(*) AS n, quantile_cont(latency_ns, 0.5) AS p50, \
             quantile_cont(latency_ns, 0.99) AS p99 FROM pairs GROUP BY analysis ORDER BY analysis",
        ]);
        for a in analyses {
            let name = a["name"].as_str().unwrap();
            let stats = &a["stats_ns"];
            let row = rows
                .iter()
                .find(|r| r["analysis"] == name)
                .unwrap_or_else(|| panic!("{file}: {name}: {rows:?}"));
            assert!(a["count"].as_u64().unwrap() > 10, "{file}: {name}: {}", a["count"]);
            assert_eq!(row["n"].as_u64(), a["count"].as_u64(), "{file}: {name}");
            for p in ["p50", "p99"] {
                let (ours, theirs) = (row[p].as_f64().unwrap(), stats[p].as_f64().unwrap());
                assert!(
                    (ours - theirs).abs() <= 1e-6 * theirs.abs().max(1.0),
                    "{file}: {name} {p}: {ours} vs {theirs}"
                );
            }
        }
    }
}

/// `annotations` holds what `latscope decode` prints, row for row.
#[test]
fn annotations_equal_the_decode_command() {
    let capture = latscope_testkit::corpus("sigrok/lazysig_spi_24mhz.sr");
    let spec = "spi:clk=CLK,mosi=MOSI,miso=MISO,cs=CS";
    let decoded = ok(&["decode", s(&capture), "--decoder", spec, "--format", "json"]);
    let decoded: serde_json::Value = serde_json::from_slice(&decoded.stdout).unwrap();
    let theirs = decoded["annotations"].as_array().unwrap();
    assert!(theirs.len() > 10, "{}", theirs.len());
    let rows = query_json(&[
        s(&capture),
        "--decoder",
        spec,
        "--sql",
        "SELECT decoder, row, start_sample, end_sample, text FROM annotations ORDER BY start_ps, row",
    ]);
    assert_eq!(rows.len(), theirs.len());
    let key = |v: &serde_json::Value, start: &str, end: &str| {
        (
            v[start].as_i64().unwrap(),
            v[end].as_i64().unwrap(),
            v["row"].as_str().unwrap().to_owned(),
            v["text"].as_str().unwrap().to_owned(),
        )
    };
    let mut ours: Vec<_> = rows.iter().map(|r| key(r, "start_sample", "end_sample")).collect();
    let mut want: Vec<_> = theirs.iter().map(|a| key(a, "start_sample", "end_sample")).collect();
    ours.sort();
    want.sort();
    assert_eq!(ours, want);
    assert!(rows.iter().all(|r| r["decoder"] == "spi"));
}

/// DataFusion, given `events` and a per-event table exported as Parquet by `query -o`, gives
/// the same answers to the same SQL as `latscope query` on the trace.
#[test]
#[cfg_attr(not(have_python_datafusion), ignore = "needs python3 with datafusion: pip install datafusion")]
fn datafusion_on_the_exported_parquet_answers_as_query_does() {
    let d = Scratch::new("query-datafusion");
    let dat = root().join("samples/ftrace/virtio_blk_direct_read.dat");
    let tables = ["events", "block_rq_issue", "block_rq_complete", "tracks"];
    for t in tables {
        let out = d.join(format!("{t}.parquet"));
        ok(&["query", s(&dat), "--sql", &format!("SELECT * FROM {t}"), "-o", s(&out)]);
    }
    let queries = [
        "SELECT name, count(*) AS n FROM events GROUP BY name ORDER BY name",
        "SELECT cpu, count(*) AS n, min(time_ps) AS first, max(time_ps) AS last FROM events GROUP BY cpu ORDER BY cpu",
        "SELECT i.sector, c.time_ps - i.time_ps AS ps FROM block_rq_issue i JOIN block_rq_complete c \
         ON i.sector = c.sector AND c.time_ps > i.time_ps ORDER BY i.time_ps, c.time_ps LIMIT 50",
        "SELECT comm, count(*) AS n FROM events WHERE name = 'block_rq_issue' GROUP BY comm ORDER BY n DESC, comm",
        "SELECT kind, sum(count) AS n FROM tracks GROUP BY kind ORDER BY kind",
    ];
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/query_datafusion.py");
    for sql in queries {
        let ours = query_json(&[s(&dat), "--sql", sql]);
        let out = latscope_testkit::Need::PythonDatafusion
            .output(Command::new("python3").arg(&script).arg(d.as_os_str()).arg(sql));
        assert!(out.status.success(), "DataFusion: {}", String::from_utf8_lossy(&out.stderr));
        let theirs: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
        assert!(!theirs.is_empty(), "{sql}");
        assert_eq!(ours.len(), theirs.len(), "{sql}");
        for (a, b) in ours.iter().zip(&theirs) {
            for (k, v) in b.as_object().unwrap() {
                let mine = &a[k];
                let same = match (mine.as_f64(), v.as_f64()) {
                    (Some(x), Some(y)) => x == y,
                    _ => mine == v,
                };
                assert!(same, "{sql}: column {k}: ours {a} DataFusion {b}");
            }
        }
    }
}

#[test]
fn errors_name_the_sql_the_table_and_the_column() {
    let dat = root().join("samples/ftrace/blk_read_v7_zstd.dat");
    let run = |sql: &str| {
        let out = latscope(&["query", s(&dat), "--sql", sql]);
        assert_eq!(out.status.code(), Some(1), "{sql}");
        assert!(out.stdout.is_empty(), "{sql}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let e = run("SELEC name FROM events");
    assert!(e.contains("SQL"), "{e}");
    let e = run("SELECT * FROM no_such_table");
    assert!(
        e.contains("unknown table \"no_such_table\"") && e.contains("events") && e.contains("block_rq_issue"),
        "{e}"
    );
    let e = run("SELECT sectr FROM block_rq_issue");
    assert!(
        e.contains("unknown column \"sectr\"") && e.contains("table block_rq_issue") && e.contains("sector"),
        "{e}"
    );
    let e = run("SELECT bogus FROM events");
    assert!(e.contains("unknown column \"bogus\"") && e.contains("table events"), "{e}");
    let out = latscope(&["query", s(&dat), "--sql", "SELECT * FROM events", "--format", "parquet"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("-o"));
    // An unknown preset is said before any file is read.
    let out = latscope(&["query", "/nonexistent.dat", "--preset", "nope", "--sql", "SELECT * FROM pairs"]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("unknown preset"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn help_lists_every_table_and_outputs_write_each_format() {
    let help = ok(&["query", "--help"]);
    let help = String::from_utf8_lossy(&help.stdout);
    for t in ["events", "pairs", "windows", "annotations", "edges", "tracks", "<EVENT>"] {
        assert!(help.contains(&format!("\n  {t} ")), "{t} missing from --help:\n{help}");
    }
    let d = Scratch::new("query-formats");
    let dat = root().join("samples/ftrace/blk_read_v7_zstd.dat");
    let sql = "SELECT name, count(*) AS n FROM events GROUP BY name ORDER BY name";
    let table = ok(&["query", s(&dat), "--sql", sql]);
    let table = String::from_utf8_lossy(&table.stdout);
    let csv_out = d.join("out.csv");
    ok(&["query", s(&dat), "--sql", sql, "-o", s(&csv_out)]);
    let rows = csv(&std::fs::read(&csv_out).unwrap());
    // The table shows the CSV's rows, and says how many.
    assert!(table.starts_with("name"), "{table}");
    assert!(table.trim_end().ends_with(&format!("({} rows)", rows.len() - 1)), "{table}");
    for r in &rows[1..] {
        assert!(
            table.lines().any(|l| l.split_whitespace().collect::<Vec<_>>() == [r[0].as_str(), r[1].as_str()]),
            "{r:?}\n{table}"
        );
    }
}

//! Fleet datasets end to end: `latscope report --label --dataset` appends, `latscope fleet`
//! aggregates. Numbers are checked against an independent oracle: each capture's pairs as
//! `report` writes them to CSV, pooled per group and run through a plain linear-percentile
//! function here. Appends are checked for atomicity and idempotence with concurrent
//! processes, and every kind of bad input for a clear message and no lost data.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure should panic

mod common;

use common::Scratch;
use common::{cpuidle_capture, latscope, ok};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

const PRESETS: [&str; 4] = ["--preset", "irq-handler", "--preset", "block"];

/// A simulated capture of the i.MX8MQ cpuidle scenario with these settings, as ftrace text.
fn capture(dir: &Path, name: &str, soc: &str, qos: &str, seed: u64) -> PathBuf {
    let path = dir.join(format!("{name}.txt"));
    cpuidle_capture(&path, soc, qos, seed);
    path
}

fn append(dataset: &Path, file: &Path, labels: &[&str]) -> Output {
    let mut args = vec!["report", s(file), "--format", "json", "--dataset", s(dataset)];
    args.extend_from_slice(&PRESETS);
    for l in labels {
        args.extend_from_slice(&["--label", l]);
    }
    ok(&args)
}

fn fleet_json(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["fleet"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--format", "json"]);
    let out = ok(&all);
    serde_json::from_slice(&out.stdout).expect("fleet --format json prints JSON")
}

/// (analysis, latency_ns) of every pair of `file`, from `report -o x.csv`.
fn csv_pairs(file: &Path, scratch: &Path) -> Vec<(String, f64)> {
    let csv = scratch.join(format!("{}.csv", file.file_stem().unwrap().to_string_lossy()));
    let mut args = vec!["report", s(file), "-o", s(&csv)];
    args.extend_from_slice(&PRESETS);
    ok(&args);
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    // `analysis,key,start_s,end_s,latency_ns,input`: a key may hold a quoted comma
    // (`dev=8,0`), so the analysis is read from the left and the latency from the right.
    assert_eq!(lines.next().unwrap(), "analysis,key,start_s,end_s,latency_ns,input");
    lines
        .map(|line| {
            let cells: Vec<&str> = line.split(',').collect();
            (cells[0].to_owned(), cells[cells.len() - 2].parse().unwrap())
        })
        .collect()
}

/// numpy's `percentile(method="linear")`, written out.
fn linear_percentile(sorted: &[f64], p: f64) -> f64 {
    let rank = p * (sorted.len() - 1) as f64;
    let (lo, hi) = (rank.floor() as usize, rank.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo as f64)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

fn group<'a>(v: &'a serde_json::Value, labels: &[(&str, &str)], analysis: &str) -> &'a serde_json::Value {
    v["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["analysis"] == analysis && labels.iter().all(|(k, val)| g["labels"][*k] == *val))
        .unwrap_or_else(|| panic!("no group {labels:?} {analysis} in {v}"))
}

#[test]
fn groups_pool_every_pair_and_match_an_independent_oracle() {
    let d = Scratch::new("fleet-oracle");
    let ds = d.join("ds");
    let caps = [
        (capture(&d, "a1", "imx8mq", "off", 1), "imx8mq"),
        (capture(&d, "a2", "imx8mq", "off", 2), "imx8mq"),
        (capture(&d, "b1", "imx93", "off", 3), "imx93"),
    ];
    for (i, (file, soc)) in caps.iter().enumerate() {
        let err = append(&ds, file, &[&format!("soc={soc}"), &format!("run={i}")]);
        assert!(String::from_utf8_lossy(&err.stderr).contains("appended capture"));
    }
    let v = fleet_json(&[s(&ds), "--group-by", "soc"]);
    assert_eq!(v["latscope_fleet"], 1);
    assert_eq!(v["captures"], 3);
    // The oracle: the CSV pairs of each capture, pooled per soc and analysis.
    let mut pooled: BTreeMap<(String, String), Vec<f64>> = BTreeMap::new();
    for (file, soc) in &caps {
        for (analysis, lat) in csv_pairs(file, &d) {
            pooled.entry((soc.to_string(), analysis)).or_default().push(lat);
        }
    }
    assert!(pooled.len() >= 4, "{:?}", pooled.keys());
    for ((soc, analysis), mut lat) in pooled {
        lat.sort_by(f64::total_cmp);
        let g = group(&v, &[("soc", &soc)], &analysis);
        assert_eq!(g["count"].as_u64().unwrap(), lat.len() as u64, "{soc} {analysis}");
        let want_captures = if soc == "imx8mq" { 2 } else { 1 };
        assert_eq!(g["captures"], want_captures, "{soc} {analysis}");
        let st = &g["stats_ns"];
        for (name, p) in [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p999", 0.999)] {
            let got = st[name].as_f64().unwrap();
            assert!(close(got, linear_percentile(&lat, p)), "{soc} {analysis} {name}: {got}");
        }
        assert_eq!(st["min"].as_f64().unwrap(), lat[0]);
        assert_eq!(st["max"].as_f64().unwrap(), *lat.last().unwrap());
        let mean = lat.iter().sum::<f64>() / lat.len() as f64;
        assert!(close(st["mean"].as_f64().unwrap(), mean));
        // The worst pair is the maximum, and names a capture of this group and its file.
        let w = &g["worst"][0];
        assert_eq!(w["latency_ns"].as_f64().unwrap(), *lat.last().unwrap());
        assert_eq!(w["labels"]["soc"], soc.as_str());
        assert!(caps.iter().any(|(f, _)| w["source"] == s(f)), "{w}");
    }
}

#[test]
fn a_fleet_of_one_capture_gives_the_numbers_of_its_report() {
    let d = Scratch::new("fleet-one");
    let ds = d.join("ds");
    let file = capture(&d, "one", "imx93", "off", 7);
    let out = append(&ds, &file, &["soc=imx93"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let v = fleet_json(&[s(&ds)]);
    for a in report["analyses"].as_array().unwrap() {
        let name = a["name"].as_str().unwrap();
        if a["count"] == 0 {
            continue;
        }
        let g = group(&v, &[], name);
        assert_eq!(g["count"], a["count"], "{name}");
        for stat in ["min", "p50", "p90", "p99", "p999", "max"] {
            assert_eq!(g["stats_ns"][stat], a["stats_ns"][stat], "{name} {stat}");
        }
        assert!(close(g["stats_ns"]["mean"].as_f64().unwrap(), a["stats_ns"]["mean"].as_f64().unwrap()));
        assert_eq!(g["worst"][0]["start_s"], a["worst"][0]["start_s"], "{name}");
    }
}

#[test]
fn concurrent_appends_of_one_capture_keep_exactly_one_copy() {
    let d = Scratch::new("fleet-concurrent");
    let ds = d.join("ds");
    let same = capture(&d, "same", "imx8mq", "on", 11);
    let other = capture(&d, "other", "imx8mq", "on", 12);
    let spawn = |file: &Path| {
        let mut args: Vec<String> =
            ["report", s(file), "--format", "json", "--dataset", s(&ds), "--label", "soc=imx8mq"]
                .map(String::from)
                .to_vec();
        args.extend(PRESETS.map(String::from));
        Command::new(env!("CARGO_BIN_EXE_latscope"))
            .args(&args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let children = [spawn(&same), spawn(&same), spawn(&other), spawn(&same)];
    let mut appended = 0;
    for c in children {
        let out = c.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{err}");
        appended += err.matches("appended capture").count();
        assert!(err.contains("appended capture") || err.contains("skipped"), "{err}");
    }
    assert_eq!(appended, 2);
    let v = fleet_json(&[s(&ds)]);
    assert_eq!(v["captures"], 2);
    assert!(v["warnings"].as_array().unwrap().is_empty(), "{}", v["warnings"]);
    // The pooled count is exactly the two reports' counts.
    let count = |f: &Path| csv_pairs(f, &d).iter().filter(|p| p.0 == "irq-handler").count() as u64;
    assert_eq!(group(&v, &[], "irq-handler")["count"].as_u64().unwrap(), count(&same) + count(&other));
    // Sequentially, the second append of a capture is detected by its hash and skipped,
    // also with other labels, which are not applied.
    let again = append(&ds, &same, &["soc=other"]);
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(err.contains("already in") && err.contains("other labels"), "{err}");
    assert_eq!(fleet_json(&[s(&ds)])["captures"], 2);
    assert!(!ds.join("_claims").read_dir().unwrap().any(|_| true), "claims left behind");
}

#[test]
fn ab_trend_and_fail_if_work_per_group() {
    let d = Scratch::new("fleet-ab");
    let ds = d.join("ds");
    // Three commits per soc: the third turns PM QoS off, so idle exits (~60-500 us) reach
    // the wakeups and the tail of the IRQ-to-handler latencies.
    for (i, commit) in ["c1", "c2", "c3"].iter().enumerate() {
        let qos = if i == 2 { "off" } else { "on" };
        for soc in ["imx8mq", "imx93"] {
            let f = capture(&d, &format!("{soc}-{commit}"), soc, qos, 20 + i as u64);
            append(&ds, &f, &[&format!("soc={soc}"), &format!("commit={commit}"), &format!("qos={qos}")]);
        }
    }
    let v = fleet_json(&[
        s(&ds),
        "--group-by",
        "soc",
        "--baseline",
        "qos=on",
        "--compare",
        "qos=off",
        "--trend",
        "commit",
    ]);
    let cmp = v["comparison"].as_array().unwrap();
    assert!(!cmp.is_empty());
    for c in cmp {
        let (a, b) = (&c["baseline"], &c["compare"]);
        assert!(a["captures"].as_u64().unwrap() + b["captures"].as_u64().unwrap() > 0);
        if let (Some(x), Some(y)) = (a["stats_ns"]["p99"].as_f64(), b["stats_ns"]["p99"].as_f64()) {
            assert!(close(c["delta_ns"]["p99"].as_f64().unwrap(), y - x), "{c}");
        }
    }
    // The baseline side of one group equals that group filtered by hand.
    let only_on = fleet_json(&[s(&ds), "--group-by", "soc,qos"]);
    let c = cmp.iter().find(|c| c["labels"]["soc"] == "imx8mq" && c["analysis"] == "irq-handler").unwrap();
    let g = group(&only_on, &[("soc", "imx8mq"), ("qos", "on")], "irq-handler");
    assert_eq!(c["baseline"]["count"], g["count"]);
    assert_eq!(c["baseline"]["stats_ns"]["p99"], g["stats_ns"]["p99"]);
    // Trend: commits in append order, a step per commit after the first. These 40 ms
    // captures hold about 80 pairs, too few for an interval of p99 (5 beyond it are needed):
    // no step has one, so none is a change point (`trend_change_points_are_significant_steps`
    // has captures long enough).
    let t = v["trend"].as_array().unwrap();
    let tr = t.iter().find(|t| t["labels"]["soc"] == "imx8mq" && t["analysis"] == "irq-handler").unwrap();
    let values: Vec<&str> =
        tr["points"].as_array().unwrap().iter().map(|p| p["value"].as_str().unwrap()).collect();
    assert_eq!(values, ["c1", "c2", "c3"]);
    let steps = tr["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2, "{tr}");
    assert_eq!((steps[0]["from"].as_str(), steps[0]["value"].as_str()), (Some("c1"), Some("c2")));
    for st in steps {
        assert_eq!(st["verdict"], "insufficient", "{st}");
        assert!(st["p_value"].is_null() && st["ci95_change"].is_null(), "{st}");
    }
    assert!(tr["first_change"].is_null(), "{tr}");
    // --fail-if per group: a limit just under the largest p99 fails exactly the groups
    // above it (at least that one), and names each.
    let groups = fleet_json(&[s(&ds), "--group-by", "soc"]);
    let p99s: Vec<f64> = ["imx8mq", "imx93"]
        .iter()
        .map(|soc| group(&groups, &[("soc", soc)], "irq-handler")["stats_ns"]["p99"].as_f64().unwrap())
        .collect();
    let limit = (p99s.iter().copied().fold(0.0, f64::max) * 0.999).floor();
    let out =
        latscope(&["fleet", s(&ds), "--group-by", "soc", "--fail-if", &format!("irq-handler.p99>{limit}ns")]);
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    let crossed = p99s.iter().filter(|p| **p > limit).count();
    assert_eq!(err.matches("threshold crossed").count(), crossed, "{err}");
    assert!(!out.stdout.is_empty(), "the report is still written");
    let pass = latscope(&["fleet", s(&ds), "--group-by", "soc", "--fail-if", "irq-handler.p99>10s"]);
    assert_eq!(pass.status.code(), Some(0));
    let unknown = latscope(&["fleet", s(&ds), "--fail-if", "nope.p99>1us"]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no group has the analysis"));
    // Markdown and self-contained HTML with the CDF and trend plots.
    let md = ok(&["fleet", s(&ds), "--group-by", "soc", "--trend", "commit"]);
    let md = String::from_utf8_lossy(&md.stdout);
    assert!(md.contains("| soc=imx8mq | irq-handler |") && md.contains("## Trend of irq-handler"), "{md}");
    let html_path = d.join("fleet.html");
    ok(&["fleet", s(&ds), "--group-by", "soc", "--trend", "commit", "-o", s(&html_path)]);
    let html = std::fs::read_to_string(&html_path).unwrap();
    assert!(html.contains("CDF of irq-handler") && html.contains("p99 of irq-handler over the trend label"));
    assert!(!html.contains("http://") || !html.contains("src=\"http"), "nothing fetched");
    assert!(!html.contains("<script"));
}

#[test]
fn bad_input_gives_clear_errors_and_loses_nothing() {
    let d = Scratch::new("fleet-bad");
    let ds = d.join("ds");
    // Labels: `/` and `=` in a value are kept exactly; bad names are refused up front.
    let file = capture(&d, "x", "imx93", "on", 31);
    append(&ds, &file, &["branch=feat/x=1", "soc=imx93"]);
    let v = fleet_json(&[s(&ds), "--group-by", "branch"]);
    assert_eq!(v["groups"][0]["labels"]["branch"], "feat/x=1");
    for bad in ["soc/x=1", "latency_ns=3", "novalue"] {
        let out = latscope(&["report", s(&file), "--dataset", s(&ds), "--label", bad]);
        assert_eq!(out.status.code(), Some(1), "{bad}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("--label"), "{bad}");
    }
    let out = latscope(&["report", s(&file), "--label", "a=b"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("--dataset"));
    // Conflicting label sets: a capture without `soc` groups as null, with a warning.
    let y = capture(&d, "y", "imx93", "on", 32);
    append(&ds, &y, &["branch=main"]);
    let v = fleet_json(&[s(&ds), "--group-by", "soc"]);
    assert!(v["groups"].as_array().unwrap().iter().any(|g| g["labels"]["soc"].is_null()));
    let w = v["warnings"].to_string();
    assert!(w.contains("have no label \\\"soc\\\"") && w.contains("different sets of label names"), "{w}");
    let before = group(&v, &[("soc", "imx93")], "irq-handler")["count"].clone();
    // A killed append: a temporary file, whole pairs without a summary, a truncated file.
    let pairs_dir = std::fs::read_dir(ds.join("pairs")).unwrap().next().unwrap().unwrap().path();
    let some_pairs = std::fs::read_dir(&pairs_dir).unwrap().next().unwrap().unwrap().path();
    let bytes = std::fs::read(&some_pairs).unwrap();
    std::fs::write(pairs_dir.join(".0123.parquet.latscope-tmp-1-0"), &bytes[..bytes.len() / 2]).unwrap();
    std::fs::write(pairs_dir.join("00000000000000000000000000000000.parquet"), &bytes).unwrap();
    std::fs::write(pairs_dir.join("11111111111111111111111111111111.parquet"), &bytes[..bytes.len() / 2])
        .unwrap();
    let out = ok(&["fleet", s(&ds), "--group-by", "soc", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(group(&v, &[("soc", "imx93")], "irq-handler")["count"], before);
    let w = v["warnings"].to_string();
    assert!(
        w.contains("interrupted append") && w.contains("did not finish") && w.contains("truncated"),
        "{w}"
    );
    assert!(pairs_dir.join("00000000000000000000000000000000.parquet").exists(), "nothing deleted");
    // A dataset of a newer schema version is refused by readers and appenders alike.
    let manifest = ds.join("latscope-dataset.json");
    std::fs::write(&manifest, "{\"latscope_dataset\": 2}\n").unwrap();
    let out = latscope(&["fleet", s(&ds)]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("schema version 2"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let z = capture(&d, "z", "imx93", "on", 33);
    let out = latscope(&["report", s(&z), "--dataset", s(&ds), "--label", "soc=imx93"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("schema version 2"));
    // Empty and missing datasets.
    let empty = d.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    std::fs::write(empty.join("latscope-dataset.json"), "{\"latscope_dataset\": 1}\n").unwrap();
    let out = latscope(&["fleet", s(&empty)]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no complete capture"));
    let out = latscope(&["fleet", s(&d.join("missing"))]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no such dataset"));
}

#[test]
fn an_append_killed_half_way_is_completed_by_appending_again() {
    let d = Scratch::new("fleet-killed");
    let ds = d.join("ds");
    let file = capture(&d, "k", "imx93", "on", 51);
    append(&ds, &file, &["soc=imx93"]);
    let v = fleet_json(&[s(&ds)]);
    let id = v["groups"][0]["worst"][0]["capture"].as_str().unwrap().to_owned();
    let count = group(&v, &[], "irq-handler")["count"].clone();
    // What a kill after the pairs and before the commit leaves: the pairs (here moved to an
    // older day's partition), no summary, and the claim file its lock no longer holds.
    let day_of = |table: &str| std::fs::read_dir(ds.join(table)).unwrap().next().unwrap().unwrap().path();
    let pairs = day_of("pairs").join(format!("{id}.parquet"));
    let old_day = ds.join("pairs").join("day=2000-01-01");
    std::fs::create_dir_all(&old_day).unwrap();
    std::fs::rename(&pairs, old_day.join(format!("{id}.parquet"))).unwrap();
    std::fs::remove_file(day_of("captures").join(format!("{id}.parquet"))).unwrap();
    std::fs::create_dir_all(ds.join("_claims")).unwrap();
    std::fs::write(ds.join("_claims").join(&id), "999999").unwrap();
    let out = latscope(&["fleet", s(&ds)]);
    assert_eq!(out.status.code(), Some(1), "no complete capture is left");
    // Appending again takes the free claim, writes over the orphaned pairs, and commits.
    let again = append(&ds, &file, &["soc=imx93"]);
    assert!(String::from_utf8_lossy(&again.stderr).contains("appended capture"));
    let v = fleet_json(&[s(&ds)]);
    assert_eq!(v["captures"], 1);
    assert!(v["warnings"].as_array().unwrap().is_empty(), "{}", v["warnings"]);
    assert_eq!(group(&v, &[], "irq-handler")["count"], count);
    let files: Vec<PathBuf> = std::fs::read_dir(ds.join("pairs"))
        .unwrap()
        .flat_map(|d| std::fs::read_dir(d.unwrap().path()).unwrap())
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files, [old_day.join(format!("{id}.parquet"))], "one copy of the pairs");
    assert!(!ds.join("_claims").join(&id).exists());
}

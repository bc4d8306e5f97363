#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The workbench's fleet window, headless through egui_kittest: a dataset appended by the
//! real CLI from simulated captures, its groups in a table matching `latscope fleet`, the
//! trend plot, and a click on a group's worst pair opening that capture at that pair.

mod common;
mod workbench_harness;

use common::Scratch;
use common::{cpuidle_capture, ok};
use egui_kittest::kittest::Queryable as _;
use latscope::gui::picker::NoPicker;
use latscope::gui::{Options, Workbench};
use std::path::{Path, PathBuf};
use workbench_harness::wait;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Four simulated captures: two socs, two commits, PM QoS off on the second commit.
fn dataset(d: &Scratch) -> (PathBuf, Vec<PathBuf>) {
    let ds = d.join("ds");
    let mut files = Vec::new();
    for (i, (soc, commit, qos)) in
        [("imx8mq", "c1", "on"), ("imx93", "c1", "on"), ("imx8mq", "c2", "off"), ("imx93", "c2", "off")]
            .into_iter()
            .enumerate()
    {
        let f = d.join(format!("{soc}-{commit}.txt"));
        cpuidle_capture(&f, soc, qos, 40 + i as u64);
        ok(&[
            "report",
            s(&f),
            "--preset",
            "irq-handler",
            "--format",
            "json",
            "--dataset",
            s(&ds),
            "--label",
            &format!("soc={soc}"),
            "--label",
            &format!("commit={commit}"),
        ]);
        files.push(f);
    }
    (ds, files)
}

#[test]
fn the_fleet_window_shows_groups_and_trend_and_opens_a_worst_pair() {
    let d = Scratch::new("gui-fleet");
    let (ds, _files) = dataset(&d);
    let cli: serde_json::Value = serde_json::from_slice(
        &ok(&["fleet", s(&ds), "--group-by", "soc", "--trend", "commit", "--format", "json"]).stdout,
    )
    .unwrap();
    let options = Options {
        dataset: Some(ds.clone()),
        group_by: vec!["soc".into()],
        trend: Some("commit".into()),
        ..Options::default()
    };
    let wb = Workbench::new(options, Box::new(NoPicker), Vec::new());
    let mut h = workbench_harness::harness(wb, egui::vec2(1400.0, 1000.0));
    wait(&mut h, "the aggregation", |wb| wb.fleet.report.is_some() || wb.fleet.error.is_some());
    h.step();
    let wb = h.state();
    assert!(wb.fleet.error.is_none(), "{:?}", wb.fleet.error);
    assert!(wb.fleet.open);
    let report = wb.fleet.report.clone().unwrap();
    // The window's numbers are `latscope fleet`'s, group by group.
    let groups = cli["groups"].as_array().unwrap();
    assert_eq!(report.groups.len(), groups.len());
    for (g, c) in report.groups.iter().zip(groups) {
        assert_eq!(g.analysis, c["analysis"].as_str().unwrap());
        assert_eq!(g.count, c["count"].as_u64().unwrap());
        assert_eq!(g.stats_ns.p99, c["stats_ns"]["p99"].as_f64());
    }
    assert_eq!(wb.fleet.analysis.as_deref(), Some("irq-handler"));
    // The table lists both groups (and the trend plot's legend names them again).
    for g in ["soc=imx8mq", "soc=imx93"] {
        assert!(h.query_all_by_label(g).count() >= 1, "{g} is not shown");
    }
    let _ = h.get_by_label("p99 over commit");
    let trend = report.trend.iter().find(|t| t.analysis == "irq-handler").unwrap();
    let values: Vec<&str> = trend.points.iter().map(|p| p.value.as_str()).collect();
    assert_eq!(values, ["c1", "c2"]);

    // The imx93 group's worst pair: its button opens the capture and shows that pair.
    let g = report.groups.iter().find(|g| g.labels["soc"].as_deref() == Some("imx93")).unwrap();
    let w = g.worst[0].clone();
    let button =
        format!("open {} at {:.6} s", Path::new(&w.path).file_name().unwrap().to_string_lossy(), w.start_s);
    h.get_by_label(&button).click();
    wait(&mut h, "the capture to load and show the pair", |wb| {
        wb.doc.sources.len() == 1 && wb.loads().is_empty() && !wb.jump_pending()
    });
    h.step();
    let wb = h.state();
    assert!(wb.errors.is_empty(), "{:?}", wb.errors);
    let sv = &wb.doc.sources[0];
    assert_eq!(sv.source().name, Path::new(&w.path).file_name().unwrap().to_string_lossy());
    // Cursors A and B sit on the pair's ends, read back on the file's own clock.
    let (a, b) = (wb.view.overlay.cursor_a.unwrap(), wb.view.overlay.cursor_b.unwrap());
    let secs = |t: f64| sv.source().origin.to_source_seconds(sv.to_source(t).round() as i64);
    assert!((secs(a) - w.start_s).abs() < 1e-9, "{} vs {}", secs(a), w.start_s);
    assert!((secs(b) - w.end_s).abs() < 1e-9, "{} vs {}", secs(b), w.end_s);
    assert!(((secs(b) - secs(a)) * 1e9 - w.latency_ns).abs() < 1e-3 * w.latency_ns.max(1.0));
    // And the pair is in view.
    let vp = &wb.view.viewport;
    let end = vp.start + vp.ps_per_px * f64::from(wb.frame.layout.data_width);
    assert!(vp.start <= a && b <= end, "{vp:?} {a} {b} {end}");
}

#[test]
fn a_missing_dataset_is_an_error_in_the_window() {
    let d = Scratch::new("gui-fleet-missing");
    let options = Options { dataset: Some(d.join("nope")), ..Options::default() };
    let wb = Workbench::new(options, Box::new(NoPicker), Vec::new());
    let mut h = workbench_harness::harness(wb, egui::vec2(1200.0, 800.0));
    wait(&mut h, "the error", |wb| wb.fleet.error.is_some());
    h.step();
    let e = h.state().fleet.error.clone().unwrap();
    assert!(e.contains("no such dataset directory"), "{e}");
    let _ = h.get_by_label(e.as_str());
}

#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The `chain` preset on the recorded virtio-blk direct reads: stages sum to the total of
//! every sample, and every stage boundary is the event a line scan of the text finds.

mod common;

use common::{Line, samples, scan, spans};
use latscope_analysis::outcome::AnalysisKind;
use latscope_analysis::runner::run_spec;
use latscope_analysis::spec::preset_spec;
use latscope_model::{Placed, Ps};

/// Chains computed from the scanned lines: (cmd, irq entry, exit, wakeup-or-exit, running).
fn scan_chains(lines: &[Line], irq: i64) -> Vec<[Ps; 5]> {
    let issues: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].event == "block_rq_issue").collect();
    let mut out = Vec::new();
    for (k, &i) in issues.iter().enumerate() {
        let pid = lines[i].pid;
        let next_issue = issues.get(k + 1).copied().unwrap_or(lines.len());
        let next_own_issue =
            issues[k + 1..].iter().copied().find(|&j| lines[j].pid == pid).unwrap_or(lines.len());
        let Some(e) = (i + 1..next_issue)
            .find(|&j| lines[j].event == "irq_handler_entry" && lines[j].int("irq") == Some(irq))
        else {
            continue;
        };
        let Some(x) = (e + 1..lines.len()).find(|&j| {
            lines[j].event == "irq_handler_exit"
                && lines[j].int("irq") == Some(irq)
                && lines[j].cpu == lines[e].cpu
        }) else {
            continue;
        };
        let Some(w) = (e + 1..next_own_issue)
            .find(|&j| lines[j].event == "sched_wakeup" && lines[j].int("pid") == Some(i64::from(pid)))
        else {
            continue;
        };
        let Some(r) = (w + 1..lines.len()).find(|&j| {
            lines[j].pid == pid
                || (lines[j].event == "sched_switch" && lines[j].int("next_pid") == Some(i64::from(pid)))
        }) else {
            continue;
        };
        let t3 = lines[w].ts.max(lines[x].ts);
        out.push([lines[i].ts, lines[e].ts, lines[x].ts, t3, lines[r].ts]);
    }
    out
}

#[test]
fn chain_stages_sum_to_the_total_and_match_a_line_scan() {
    for name in ["virtio_blk_direct_read.txt", "blk_read.txt"] {
        let path = samples().join("ftrace").join(name);
        let sources = vec![common::open(&path)];
        let out = run_spec(&preset_spec("chain").unwrap(), &Placed::all(&sources)).unwrap();
        let c = &out[0];
        assert_eq!(c.kind, AnalysisKind::Chain);
        assert_eq!(c.stages.len(), 4);
        for st in &c.stages {
            assert_eq!(st.samples.len(), c.samples.len(), "{name} {}", st.name);
        }
        for (k, total) in c.samples.iter().enumerate() {
            let sum: Ps = c.stages.iter().map(|s| s.samples[k].latency()).sum();
            assert_eq!(sum, total.latency(), "{name} sample {k}");
            assert_eq!(c.stages[0].samples[k].start, total.start);
            assert_eq!(c.stages[3].samples[k].end, total.end);
            assert!(c.stages.iter().all(|s| s.samples[k].latency() >= 0));
        }
        let want = scan_chains(&scan(&path), 36);
        let got: Vec<[Ps; 5]> = (0..c.samples.len())
            .map(|k| {
                let b: Vec<(Ps, Ps)> =
                    c.stages.iter().map(|s| spans(&sources[0], &single(&s.samples[k]))[0]).collect();
                [b[0].0, b[1].0, b[2].0, b[3].0, b[3].1]
            })
            .collect();
        assert_eq!(got, want, "{name}");
        // Every dd read is in the chain except the ones the notes account for.
        let issues = scan(&path).iter().filter(|l| l.event == "block_rq_issue").count() as u64;
        assert_eq!(c.samples.len() as u64 + c.unmatched_start, issues, "{name}");
        assert!(c.samples.len() as u64 * 10 >= issues * 9, "{name}: {} of {issues}", c.samples.len());
        assert!(c.samples.iter().all(|s| s.key.ends_with("irq=36")));
    }
}

fn single(s: &latscope_analysis::outcome::Sample) -> latscope_analysis::outcome::Outcome {
    let mut o = latscope_analysis::outcome::Outcome::new("x", AnalysisKind::Pair, 0);
    o.samples.push(s.clone());
    o
}

#[test]
fn virtio_chain_issuer_is_dd() {
    let path = samples().join("ftrace/virtio_blk_direct_read.txt");
    let dd = scan(&path).iter().find(|l| l.event == "block_rq_issue").unwrap().pid;
    let sources = vec![common::open(&path)];
    let c = &run_spec(&preset_spec("chain:irq=36").unwrap(), &Placed::all(&sources)).unwrap()[0];
    assert!(c.samples.iter().all(|s| s.key == format!("pid={dd} irq=36")));
    // The kernel records no switch-in of dd after most wakeups: its first own event stands in.
    assert!(c.notes.iter().any(|n| n.what.starts_with("switch-in not recorded")), "{:?}", c.notes);
}

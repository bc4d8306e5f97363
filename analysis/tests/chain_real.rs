#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The `chain` preset on recorded block I/O: stages sum to the total of every sample, every
//! stage boundary is the event a line scan of the text finds, and on a recording with
//! asynchronous dispatch (requests issued by kblockd or another reader) the chain follows
//! the task each request's completion woke, as an independent script reading
//! `trace-cmd report` finds it.

mod common;

use common::{Line, samples, scan, spans};
use latscope_analysis::outcome::AnalysisKind;
use latscope_analysis::runner::run_spec;
use latscope_analysis::spec::preset_spec;
use latscope_model::{Placed, Ps};
use std::collections::{HashMap, VecDeque};

/// (device, sector) of a block event's payload: `254,0 RS 65536 () 23838720 + 128 ...`.
fn block_key(l: &Line) -> Option<(String, String)> {
    let t: Vec<&str> = l.payload.split_whitespace().collect();
    let plus = t.iter().position(|&x| x == "+")?;
    Some((t[0].to_owned(), t[plus - 1].to_owned()))
}

/// Chains computed from the scanned lines by the definition in docs/ARCHITECTURE.md:
/// (issue, irq entry, exit, wakeup-or-exit, running) per request whose completion woke a task.
fn scan_chains(lines: &[Line], irq: i64) -> Vec<[Ps; 5]> {
    // Completions, first in first out per device and sector.
    let mut open: HashMap<(String, String), VecDeque<usize>> = HashMap::new();
    let mut completion: HashMap<usize, usize> = HashMap::new();
    for (i, l) in lines.iter().enumerate() {
        match (l.event.as_str(), block_key(l)) {
            ("block_rq_issue", Some(k)) => open.entry(k).or_default().push_back(i),
            ("block_rq_complete", Some(k)) => {
                if let Some(issue) = open.get_mut(&k).and_then(VecDeque::pop_front) {
                    completion.insert(issue, i);
                }
            }
            _ => {}
        }
    }
    let ends = [
        "block_rq_complete",
        "irq_handler_entry",
        "irq_handler_exit",
        "softirq_entry",
        "softirq_exit",
        "sched_switch",
    ];
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if l.event != "block_rq_issue" {
            continue;
        }
        let Some(&c) = completion.get(&i) else { continue };
        let cpu = lines[c].cpu;
        let is_irq = |j: usize, ev: &str| {
            lines[j].event == ev && lines[j].int("irq") == Some(irq) && lines[j].cpu == cpu
        };
        let Some(e) = (i + 1..=c).rev().find(|&j| is_irq(j, "irq_handler_entry")) else { continue };
        let Some(x) = (e + 1..lines.len()).find(|&j| is_irq(j, "irq_handler_exit")) else { continue };
        let after = (c + 1..lines.len()).filter(|&j| lines[j].cpu == cpu);
        let Some(w) = after
            .take_while(|&j| !ends.contains(&lines[j].event.as_str()))
            .find(|&j| lines[j].event == "sched_wakeup" || lines[j].event == "sched_waking")
        else {
            continue;
        };
        let Some(pid) = lines[w].int("pid") else { continue };
        // A remote wakeup: the waking is the completion's, the wakeup comes on the task's CPU.
        let w = if lines[w].event == "sched_waking" {
            match (w + 1..lines.len())
                .find(|&j| lines[j].event == "sched_wakeup" && lines[j].int("pid") == Some(pid))
            {
                Some(w) => w,
                None => continue,
            }
        } else {
            w
        };
        let Some(r) = (w + 1..lines.len()).find(|&j| {
            i64::from(lines[j].pid) == pid
                || (lines[j].event == "sched_switch" && lines[j].int("next_pid") == Some(pid))
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
    for name in ["virtio_blk_direct_read.txt", "blk_read.txt", "async_dispatch_direct_reads.txt"] {
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
        // Every read is in the chain except the ones the notes account for.
        let issues = scan(&path).iter().filter(|l| l.event == "block_rq_issue").count() as u64;
        assert_eq!(c.samples.len() as u64 + c.unmatched_start, issues, "{name}");
        assert!(c.samples.len() as u64 * 10 >= issues * 9, "{name}: {} of {issues}", c.samples.len());
        assert!(c.samples.iter().all(|s| s.key.contains("irq=36")));
    }
}

fn single(s: &latscope_analysis::outcome::Sample) -> latscope_analysis::outcome::Outcome {
    let mut o = latscope_analysis::outcome::Outcome::new("x", AnalysisKind::Pair, 0);
    o.samples.push(s.clone());
    o
}

/// The async recording's chain, block and wakeup analyses: the chain of a request can only
/// be as long as its completion plus the wakeup of the task it woke. Following the issuer
/// instead (kblockd, which sleeps on other work after dispatching) gave chains of tens of
/// milliseconds that no request or wakeup took.
#[test]
fn the_chain_follows_the_task_the_completion_woke_not_the_dispatcher() {
    let path = samples().join("ftrace/async_dispatch_direct_reads.dat");
    let sources = vec![common::open(&path)];
    let placed = Placed::all(&sources);
    let run = |p: &str| run_spec(&preset_spec(p).unwrap(), &placed).unwrap().remove(0);
    let (chain, block, wakeup) = (run("chain"), run("block"), run("wakeup"));
    let max = |o: &latscope_analysis::outcome::Outcome| o.samples.iter().map(|s| s.latency()).max().unwrap();
    assert!(
        max(&chain) <= max(&block) + max(&wakeup) + 200 * latscope_model::PS_PER_US,
        "chain max {} > block max {} + wakeup max {} + 0.2 ms",
        max(&chain),
        max(&block),
        max(&wakeup)
    );
    assert!(
        chain.samples.len() * 10 >= block.samples.len() * 9,
        "{} chains of {} requests",
        chain.samples.len(),
        block.samples.len()
    );
    let dispatched = chain
        .notes
        .iter()
        .find(|n| n.what.starts_with("woken task other than the issuer"))
        .map_or(0, |n| n.count);
    assert!(dispatched >= 100, "the recording has asynchronous dispatch: {:?}", chain.notes);
}

/// Sample for sample, the chain on the async recording is what an independent script finds
/// in `trace-cmd report -t`.
#[test]
#[cfg_attr(
    not(all(have_trace_cmd, have_python3)),
    ignore = "needs trace-cmd (apt-get install trace-cmd) and python3 (apt-get install python3)"
)]
fn the_chain_samples_equal_an_independent_script_reading_trace_cmd_report() {
    let path = samples().join("ftrace/async_dispatch_direct_reads.dat");
    let sources = vec![common::open(&path)];
    let chain = run_spec(&preset_spec("chain").unwrap(), &Placed::all(&sources)).unwrap().remove(0);
    assert!(which("trace-cmd"), "needs trace-cmd (apt-get install trace-cmd): the script runs it");
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oracles/chain_waiter.py");
    let out =
        latscope_testkit::Need::Python3.output(std::process::Command::new("python3").arg(&script).arg(&path));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let oracle: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(oracle["irq"], 36);
    let mut want: Vec<(i64, i64, i64)> = oracle["chains"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c[0].as_i64().unwrap(), c[1].as_i64().unwrap(), c[2].as_i64().unwrap()))
        .collect();
    let src = &sources[0];
    let mut got: Vec<(i64, i64, i64)> = chain
        .samples
        .iter()
        .map(|s| {
            let pid = s.key.strip_prefix("pid=").and_then(|k| k.split(' ').next()).unwrap().parse().unwrap();
            (common::abs(src, s.start) / 1000, s.latency() / 1000, pid)
        })
        .collect();
    want.sort_unstable();
    got.sort_unstable();
    assert_eq!(got.len(), want.len());
    assert_eq!(got, want);
}

/// Whether `program` is on the `PATH` (the oracle script starts it itself).
fn which(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
}

#[test]
fn virtio_chain_issuer_is_dd() {
    let path = samples().join("ftrace/virtio_blk_direct_read.txt");
    let dd = scan(&path).iter().find(|l| l.event == "block_rq_issue").unwrap().pid;
    let sources = vec![common::open(&path)];
    let c = &run_spec(&preset_spec("chain:irq=36").unwrap(), &Placed::all(&sources)).unwrap()[0];
    // The task is named in the key; the stored key keeps the number alone.
    assert!(c.samples.iter().all(|s| s.key == format!("pid={dd} (dd) irq=36")));
    assert!(c.samples.iter().all(|s| c.raw_key(&s.key) == format!("pid={dd} irq=36")));
    // The kernel records no switch-in of dd after most wakeups: its first own event stands in.
    assert!(c.notes.iter().any(|n| n.what.starts_with("switch-in not recorded")), "{:?}", c.notes);
}

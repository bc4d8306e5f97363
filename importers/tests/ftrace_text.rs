//! ftrace text importer: the dialect test cases with exact values, the real corpus
//! (samples/corpus/ftrace_text, and the shared corpus's own files in the tests marked
//! `have_shared_corpus`), recorded samples, chunking invariance, cancel, and fuzz regressions.

// Helpers outside #[test] functions fail loudly too: this is test code.
#![allow(clippy::expect_used)]

use latscope_importers::{LoadControl, ParseFailure, ftrace_text};
use latscope_model::{FieldValue, Gap, PS_PER_S, Source};
use latscope_testkit::{corpus, corpus_files, files_under, shared_corpus_files};
use std::path::{Path, PathBuf};

fn load(text: &str) -> Source {
    load_bytes(text.as_bytes())
}

fn load_bytes(data: &[u8]) -> Source {
    match ftrace_text::parse(data, &LoadControl::new()) {
        Ok(s) => s,
        Err(e) => panic!("parse failed: {e}"),
    }
}

fn name(src: &Source, i: usize) -> String {
    src.strings.resolve(src.events.get(i).expect("event").name()).into_owned()
}

fn comm(src: &Source, i: usize) -> String {
    src.strings.resolve(src.events.get(i).expect("event").comm()).into_owned()
}

fn field(src: &Source, i: usize, key: &str) -> Option<FieldValue> {
    let sym = src.strings.lookup(key.as_bytes())?;
    src.events.get(i).expect("event").field(sym)
}

fn int(src: &Source, i: usize, key: &str) -> i64 {
    match field(src, i, key) {
        Some(FieldValue::Int(v)) => v,
        other => panic!("event {i} field {key}: expected Int, got {other:?}"),
    }
}

fn uint(src: &Source, i: usize, key: &str) -> u64 {
    match field(src, i, key) {
        Some(FieldValue::UInt(v)) => v,
        other => panic!("event {i} field {key}: expected UInt, got {other:?}"),
    }
}

fn text(src: &Source, i: usize, key: &str) -> String {
    match field(src, i, key) {
        Some(FieldValue::Str(s)) => src.strings.resolve(s).into_owned(),
        other => panic!("event {i} field {key}: expected Str, got {other:?}"),
    }
}

fn field_names(src: &Source, i: usize) -> Vec<String> {
    src.events.get(i).expect("event").fields().map(|(n, _)| src.strings.resolve(n).into_owned()).collect()
}

/// Absolute seconds of event `i` as (whole seconds, picoseconds), exactly.
fn abs(src: &Source, i: usize) -> (i64, i64) {
    let t = src.origin.ps + src.events.ts[i];
    (src.origin.secs + t.div_euclid(PS_PER_S), t.rem_euclid(PS_PER_S))
}

fn clean(src: &Source) {
    assert_eq!(src.diagnostics.malformed, 0, "malformed: {:?}", src.diagnostics.first_malformed);
}

// ---- dialect cases -------------------------------------------------------------------

#[test]
fn case01_function_tracer_line() {
    let s = load("              bash-1977  [000] .... 17284.993652: sys_close <-system_call_fastpath\n");
    clean(&s);
    assert_eq!(s.events.len(), 1);
    assert_eq!((comm(&s, 0), s.events.pid[0], s.events.cpu[0]), ("bash".into(), 1977, 0));
    assert_eq!(s.events.flags[0].render(), ".....");
    assert!(s.events.flags[0].is_present());
    assert_eq!(abs(&s, 0), (17284, 993_652_000_000));
    assert_eq!(s.origin.secs, 17284);
    assert_eq!(name(&s, 0), "function");
    assert_eq!(text(&s, 0, "func"), "sys_close");
    assert_eq!(text(&s, 0, "parent"), "system_call_fastpath");
    assert_eq!(s.format, "ftrace-text");
    assert_eq!(s.records, Some(1));
}

#[test]
fn case02_no_flags_and_dotted_function() {
    let s = load(
        "            <idle>-0     [002]  23636.756054: ttwu_do_activate.constprop.89 <-try_to_wake_up\n",
    );
    clean(&s);
    assert!(!s.events.flags[0].is_present());
    assert_eq!((comm(&s, 0), s.events.pid[0], s.events.cpu[0]), ("<idle>".into(), 0, 2));
    assert_eq!(text(&s, 0, "func"), "ttwu_do_activate.constprop.89");
    assert_eq!(text(&s, 0, "parent"), "try_to_wake_up");
}

#[test]
fn case03_sched_switch() {
    let s = load(
        "       kworker/0:1-59    [000] d..3   136.677025: sched_switch: prev_comm=kworker/0:1 prev_pid=59 prev_prio=120 prev_state=S ==> next_comm=bash next_pid=1998 next_prio=120\n",
    );
    clean(&s);
    assert_eq!((comm(&s, 0), s.events.pid[0]), ("kworker/0:1".into(), 59));
    assert_eq!(s.events.flags[0].render(), "d..3.");
    assert_eq!(text(&s, 0, "prev_comm"), "kworker/0:1");
    assert_eq!(int(&s, 0, "prev_pid"), 59);
    assert_eq!(int(&s, 0, "prev_prio"), 120);
    assert_eq!(text(&s, 0, "prev_state"), "S");
    assert_eq!(text(&s, 0, "next_comm"), "bash");
    assert_eq!(int(&s, 0, "next_pid"), 1998);
    assert_eq!(int(&s, 0, "next_prio"), 120);
    assert_eq!(
        field_names(&s, 0),
        ["prev_comm", "prev_pid", "prev_prio", "prev_state", "next_comm", "next_pid", "next_prio"]
    );
}

#[test]
fn case04_prev_states() {
    let s = load(concat!(
        "  bash-1998  [000] d..3   1.000001: sched_switch: prev_comm=bash prev_pid=1998 prev_prio=120 prev_state=R+ ==> next_comm=kworker/0:1 next_pid=59 next_prio=120\n",
        "  bash-1998  [000] d..3   1.000002: sched_switch: prev_comm=bash prev_pid=1998 prev_prio=120 prev_state=D|K ==> next_comm=a next_pid=1 next_prio=120\n",
        "  bash-1998  [000] d..3   1.000003: sched_switch: prev_comm=bash prev_pid=1998 prev_prio=120 prev_state=I ==> next_comm=b next_pid=2 next_prio=120\n",
    ));
    clean(&s);
    let states: Vec<String> = (0..3).map(|i| text(&s, i, "prev_state")).collect();
    assert_eq!(states, ["R+", "D|K", "I"]);
    assert_eq!(s.events.layouts().len(), 1, "one layout shared by all three");
}

#[test]
fn case05_comm_with_space() {
    let s = load(
        "     Web Content-4242    [001] d..2.   100.000001: sched_switch: prev_comm=Web Content prev_pid=4242 prev_prio=120 prev_state=S ==> next_comm=Web Content next_pid=4243 next_prio=120\n",
    );
    clean(&s);
    assert_eq!((comm(&s, 0), s.events.pid[0], s.events.cpu[0]), ("Web Content".into(), 4242, 1));
    assert_eq!(text(&s, 0, "prev_comm"), "Web Content");
    assert_eq!(text(&s, 0, "next_comm"), "Web Content");
    assert_eq!(int(&s, 0, "next_pid"), 4243);
}

#[test]
fn case06_tgid_column() {
    let s = load(concat!(
        "<idle>-0     (-------) [000] d.h1 79281.108822: irq_handler_entry: irq=125 name=fts_ts\n",
        "<idle>-0     (-----) [000] d.h1 79281.108823: irq_handler_entry: irq=126 name=fts_ts\n",
        "  sh-4802 ( 4800) [003] ....  79281.108824: irq_handler_exit: irq=126 ret=handled\n",
    ));
    clean(&s);
    assert_eq!((comm(&s, 0), s.events.pid[0], s.events.cpu[0]), ("<idle>".into(), 0, 0));
    assert_eq!((int(&s, 0, "irq"), text(&s, 0, "name")), (125, "fts_ts".into()));
    assert_eq!(int(&s, 1, "irq"), 126);
    assert_eq!((comm(&s, 2), s.events.pid[2], s.events.cpu[2]), ("sh".into(), 4802, 3));
    assert_eq!(text(&s, 2, "ret"), "handled");
}

#[test]
fn case07_five_flag_columns() {
    let s = load(
        "           sleep-89142 [001] ...1. 162573.215752: sched_waking: comm=trace-cmd pid=89135 prio=120 target_cpu=000\n",
    );
    clean(&s);
    let f = s.events.flags[0];
    assert_eq!((f.render(), f.preempt_depth()), (String::from("...1."), 1));
    assert_eq!(abs(&s, 0), (162_573, 215_752_000_000));
    assert_eq!(text(&s, 0, "comm"), "trace-cmd");
    assert_eq!((int(&s, 0, "pid"), int(&s, 0, "prio"), int(&s, 0, "target_cpu")), (89135, 120, 0));
}

#[test]
fn case08_integer_counter_timestamps() {
    let s = load(concat!(
        "bash-1  [000] ....     123456: sys_close <-sys_foo\n",
        "bash-1  [000] ....     123460: sys_open <-sys_foo\n",
    ));
    clean(&s);
    assert_eq!(s.origin.secs, 0);
    assert_eq!(s.events.ts, vec![123_456, 123_460], "raw counter values are kept as they are");
}

#[test]
fn case09_buffer_started_annotation() {
    let s = load(concat!(
        "##### CPU 2 buffer started ####\n",
        "  bash-1  [002] ....   5.000001: sys_close <-sys_foo\n",
    ));
    clean(&s);
    assert_eq!(s.events.len(), 1);
    assert!(s.diagnostics.warnings.iter().any(|w| w.starts_with("line 1: CPU 2 buffer started")));
}

#[test]
fn case10_lost_events_attach_to_next_event_of_that_cpu() {
    let s = load(concat!(
        "  a-1  [001] ....   5.000001: sys_close <-x\n",
        "CPU:2 [LOST 11745 EVENTS]\n",
        "  a-1  [001] ....   5.000002: sys_close <-x\n",
        "  b-2  [002] ....   5.000003: sys_close <-x\n",
        "CPU:2 [LOST EVENTS]\n",
        "  b-2  [002] ....   5.000004: sys_close <-x\n",
    ));
    clean(&s);
    assert_eq!(
        s.diagnostics.gaps,
        vec![Gap { cpu: 2, ts: 3_000_000, lost: Some(11745) }, Gap { cpu: 2, ts: 4_000_000, lost: None }]
    );
}

#[test]
fn case11_latency_format() {
    let s = load(concat!(
        "    <idle>-0       0d.s2    0us+: _raw_spin_lock_irq <-run_timer_softirq\n",
        "  kworker/-59      3...1    15us : __schedule <-schedule\n",
    ));
    clean(&s);
    assert_eq!((comm(&s, 0), s.events.pid[0], s.events.cpu[0]), ("<idle>".into(), 0, 0));
    assert_eq!(s.events.flags[0].render(), "d.s2.");
    assert!(s.events.flags[0].in_softirq());
    assert_eq!(text(&s, 0, "func"), "_raw_spin_lock_irq");
    assert_eq!((comm(&s, 1), s.events.pid[1], s.events.cpu[1]), ("kworker/".into(), 59, 3));
    assert_eq!(s.events.ts, vec![0, 15_000_000]);
    assert_eq!(text(&s, 1, "parent"), "schedule");
}

#[test]
fn case11_wakeup_tracer_context_lines() {
    let s = load(concat!(
        "    <idle>-0       3d..3   15us :      0:120:R ==> [003]   312:100:R kworker/3:1H\n",
        "    <idle>-0       3d..3   16us :      0:120:R   + [003]   312:100:R kworker/3:1H\n",
    ));
    clean(&s);
    assert_eq!(
        (name(&s, 0), int(&s, 0, "prev_pid"), text(&s, 0, "prev_state")),
        ("sched_switch".into(), 0, "R".into())
    );
    assert_eq!(
        (int(&s, 0, "next_pid"), int(&s, 0, "next_prio"), text(&s, 0, "next_comm")),
        (312, 100, "kworker/3:1H".into())
    );
    assert_eq!((name(&s, 1), int(&s, 1, "pid"), uint(&s, 1, "target_cpu")), ("sched_wakeup".into(), 312, 3));
}

#[test]
fn case12_stack_trace_attached() {
    let s = load(concat!(
        "      ps-6143    2d..1  306us : time_hardirqs_on <-_raw_spin_unlock_irqrestore\n",
        "      ps-6143    2d..1  306us : <stack trace>\n",
        " => trace_hardirqs_on_caller\n",
        " => trace_hardirqs_on\n",
        "      ps-6143    2d..1  307us : foo <-bar\n",
    ));
    clean(&s);
    assert_eq!(s.events.len(), 2);
    assert_eq!(s.records, Some(3), "the stack is its own kernel record");
    let st = s.events.get(0).and_then(|e| e.stack()).expect("stack on the first event");
    assert_eq!(s.strings.resolve(st), "trace_hardirqs_on_caller\ntrace_hardirqs_on");
    assert!(s.events.get(1).and_then(|e| e.stack()).is_none());
}

#[test]
fn stack_of_a_skipped_record_is_dropped_with_it() {
    let s = load(concat!(
        "  a-1 [000] .... 1.000001: f <-g\n",
        "  a-1 [000] .... 1.000002: funcgraph> not an event body\n",
        " => belongs_to_the_skipped_line\n",
        "  a-1 [000] .... 1.000003: h <-g\n",
    ));
    assert_eq!((s.events.len(), s.diagnostics.malformed), (2, 1));
    assert!(s.events.stacks().is_empty(), "frames must not move to the event before");
    // Frames after a header line have no event: counted, not attached.
    let s = load(concat!(
        "  a-1 [000] .... 1.000001: f <-g\n",
        "# tracer: nop\n",
        " => stray_frame\n",
        "  a-1 [000] .... 1.000003: h <-g\n",
    ));
    assert_eq!((s.events.len(), s.diagnostics.malformed), (2, 1));
    assert!(s.events.stacks().is_empty());
}

fn spans(src: &Source) -> Vec<(i64, i64, String, u16, u16)> {
    let Some(t) = src.spans.first() else { return Vec::new() };
    assert_eq!(t.name, "function_graph");
    (0..t.len())
        .map(|i| (t.start[i], t.end[i], src.strings.resolve(t.label[i]).into_owned(), t.depth[i], t.lane[i]))
        .collect()
}

#[test]
fn case13_function_graph_doc_lines() {
    let s = load(concat!(
        "# tracer: function_graph\n",
        "#\n",
        "# CPU  DURATION                  FUNCTION CALLS\n",
        "# |     |   |                     |   |   |   |\n",
        " 0)               |  sys_open() {\n",
        " 0)   1.382 us    |          __might_sleep();\n",
        " 0) + 10.500 us   |  }\n",
        " 3) # 1837.709 us |          } /* __switch_to */\n",
        " 1) ! 217.240 us  |        }\n",
        " ------------------------------------------\n",
        " 1)  migration/0--1  =>  sshd-1755\n",
        " ------------------------------------------\n",
        "\n",
        " 1)   ==========> |\n",
        " 1)               |  /* irq_handler_entry: irq=21 name=eth0 */\n",
        " 1)   <========== |\n",
        " 12)   0.205 us    |  cgroup_taskset_next(); /* = 0xffff93fc8fb20000 */\n",
        " 12)               |  cpu_cgroup_can_attach() {\n",
        " 12)   0.100 us    |    foo(); /* ret=0x0 */\n",
        " 12) + 13.250 us   |  } /* cpu_cgroup_can_attach = -22 */\n",
        " 0)    sh-4802     |   0.616 us    |  rcu_process_gp_end();\n",
    ));
    clean(&s);
    assert_eq!(s.metadata, vec![("tracer".to_string(), "function_graph".to_string())]);
    // The comment is an event on CPU 1, by the task of the banner.
    assert_eq!(s.events.len(), 1);
    assert_eq!(
        (name(&s, 0), int(&s, 0, "irq"), text(&s, 0, "name")),
        ("irq_handler_entry".into(), 21, "eth0".into())
    );
    assert_eq!((comm(&s, 0), s.events.pid[0], s.events.cpu[0]), ("sshd".into(), 1755, 1));
    let sp = spans(&s);
    // No abstime column: each CPU has a virtual clock advanced by the durations.
    assert!(sp.contains(&(0, 10_500_000, "sys_open".into(), 0, 0)));
    assert!(sp.contains(&(0, 1_382_000, "__might_sleep".into(), 1, 0)));
    assert!(sp.contains(&(0, 1_837_709_000, "__switch_to".into(), 0, 3)), "exit without entry");
    assert!(sp.contains(&(0, 217_240_000, "?".into(), 0, 1)), "unnamed exit without entry");
    assert!(sp.contains(&(0, 205_000, "cgroup_taskset_next".into(), 0, 12)));
    assert!(sp.contains(&(205_000, 13_455_000, "cpu_cgroup_can_attach".into(), 0, 12)));
    assert!(sp.contains(&(205_000, 305_000, "foo".into(), 1, 12)));
    assert!(sp.contains(&(10_500_000, 11_116_000, "rcu_process_gp_end".into(), 0, 0)));
    assert_eq!(sp.len(), 8);
    // entries+exits: sys_open 2, __might_sleep 2, 2 lone exits, cgroup_taskset_next 2,
    // can_attach 2, foo 2, rcu 2, plus the comment event.
    assert_eq!(s.records, Some(15));
    assert!(s.diagnostics.warnings.iter().any(|w| w.starts_with("2 function_graph exit(s) without")));
}

#[test]
fn case13_function_graph_abstime() {
    let s = load(concat!(
        "# tracer: function_graph\n",
        "#     TIME        CPU  DURATION                  FUNCTION CALLS\n",
        "360.774520 |   1)               |  outer() {\n",
        "360.774521 |   1)   0.541 us    |    inner();\n",
        "360.774522 |   1)   2.000 us    |  }\n",
    ));
    clean(&s);
    assert_eq!(s.origin.secs, 360);
    assert_eq!(
        spans(&s),
        vec![
            (774_520_000_000, 774_522_000_000, "outer".into(), 0, 1),
            (774_521_000_000, 774_521_541_000, "inner".into(), 1, 1)
        ]
    );
}

#[test]
fn case14_trace_cmd_report() {
    let s = load(concat!(
        "version = 6\n",
        "cpus=8\n",
        "CPU:7 [204600 EVENTS DROPPED]\n",
        "           <...>-3979  [007]   217.975284: sched_stat_runtime:   comm=Thread-103 pid=3979 runtime=5014167 [ns] vruntime=244334517704 [ns]\n",
        "           <...>-3979  [007]   217.975366: softirq_raise:        vec=7 [action=SCHED]\n",
        "           <...>-3979  [007]   217.975446: irq_handler_exit:     irq=163 ret=handled\n",
        "       trace-cmd-11809 [003] 11658.899115123: sched_switch:         swapper/0:0 [120] R ==> trace-cmd:89135 [120]\n",
        "           sleep-89142 [001] ...1. 162573.215752: sched_wakeup:         trace-cmd:89992 [120] CPU:005\n",
        "     migration/5-48 [005]  1.000000: sched_wakeup:         migration/5:48 [0] success=1 CPU:005\n",
    ));
    clean(&s);
    assert_eq!(s.metadata, vec![("version".into(), "6".into()), ("cpus".into(), "8".into())]);
    assert_eq!(s.diagnostics.gaps.len(), 1);
    assert_eq!((s.diagnostics.gaps[0].cpu, s.diagnostics.gaps[0].lost), (7, Some(204_600)));
    // sorted by time: migration (1.0), then the three trappy lines, the -t line, the 3.x line
    assert_eq!(name(&s, 1), "sched_stat_runtime");
    assert_eq!((int(&s, 1, "runtime"), int(&s, 1, "vruntime")), (5_014_167, 244_334_517_704));
    assert_eq!(s.diagnostics.gaps[0].ts, s.events.ts[1]);
    assert_eq!((int(&s, 2, "vec"), text(&s, 2, "action")), (7, "SCHED".into()));
    assert_eq!((int(&s, 3, "irq"), text(&s, 3, "ret")), (163, "handled".into()));
    assert_eq!(abs(&s, 4), (11658, 899_115_123_000), "9 decimals kept exactly");
    assert_eq!(text(&s, 4, "prev_comm"), "swapper/0");
    assert_eq!((int(&s, 4, "prev_pid"), int(&s, 4, "prev_prio")), (0, 120));
    assert_eq!(text(&s, 4, "prev_state"), "R");
    assert_eq!((text(&s, 4, "next_comm"), int(&s, 4, "next_pid")), ("trace-cmd".into(), 89135));
    assert_eq!(s.events.flags[5].render(), "...1.");
    assert_eq!(
        (text(&s, 5, "comm"), int(&s, 5, "pid"), int(&s, 5, "target_cpu")),
        ("trace-cmd".into(), 89992, 5)
    );
    assert_eq!(
        (text(&s, 0, "comm"), int(&s, 0, "prio"), int(&s, 0, "target_cpu")),
        ("migration/5".into(), 0, 5)
    );
}

#[test]
fn case15_typed_payloads() {
    let s = load(concat!(
        "  a-1 [000] d.h1 10.000001: irq_handler_entry: irq=163 name=mct_tick7\n",
        "  a-1 [000] ..s1 10.000002: softirq_entry: vec=1 [action=TIMER]\n",
        "  a-1 [000] d..1 10.000003: cpu_idle: state=4294967295 cpu_id=2\n",
        "  a-1 [000] d..1 10.000004: block_rq_issue: 8,16 R 4096 () 98400 + 8 [xfs_io]\n",
        "  a-1 [000] d..1 10.000005: block_rq_complete: 8,16 R () 98400 + 8 [0]\n",
        "  a-1 [000] d..1 10.000006: block_rq_issue: 8,0 FF 0 () 0 + 0 [kworker/7:1H]\n",
        "  a-1 [000] d..1 10.000007: block_rq_issue: 259,0 WS 4096 () 498455480 + 8 be,0,4 [fio]\n",
        "  a-1 [000] d..1 10.000008: block_rq_complete: 8,0 FF () 18446744073709551615 + 0 be,0,4 [-5]\n",
        "  a-1 [000] ..s1 10.000009: napi_poll: napi poll on napi struct ffff003ffffab350 for device (no_device) work 2 budget 64\n",
        "  a-1 [000] ..s1 10.000010: net_dev_xmit: dev=eth0 skbaddr=0000000075b7e3e8 len=114 rc=0\n",
        "  a-1 [000] d.h1 10.000011: mmc_request_done: mmc0: end struct mmc_request[c669d954]: cmd_opcode=25 cmd_err=0 cmd_resp=0x900 0x0 0x0 0x0 cmd_retries=0\n",
        "  a-1 [000] d..1 10.000012: irq_disable: caller=syscall_exit_to_user_mode+0x15 parent=0x0\n",
        "  a-1 [000] d..1 10.000013: thermal_power_cpu_get_power: cpus=00000000,00000006 freq=1100000 load={24 19} dynamic_power=250\n",
        "  a-1 [000] d..1 10.000014: nvme_setup_cmd: nvme0: disk=nvme0n1, qid=4, cmd=(nvme_cmd_write slba=498455480, len=7), x=0x1f\n",
        "  a-1 [000] d..1 10.000015: block_bio_remap: 259,0 WS 498455480 + 8 <- (259,5) 263096\n",
    ));
    clean(&s);
    assert_eq!((int(&s, 0, "irq"), text(&s, 0, "name")), (163, "mct_tick7".into()));
    assert_eq!((int(&s, 1, "vec"), text(&s, 1, "action")), (1, "TIMER".into()));
    assert_eq!((uint(&s, 2, "state"), uint(&s, 2, "cpu_id")), (4_294_967_295, 2));
    assert_eq!(field_names(&s, 3), ["dev", "rwbs", "bytes", "sector", "nr_sector", "comm"]);
    // The device as the kernel's dev_t, as trace.dat stores it: 8,16.
    assert_eq!(
        (uint(&s, 3, "dev"), text(&s, 3, "rwbs"), uint(&s, 3, "bytes")),
        (latscope_model::kernel::dev_t(8, 16), "R".into(), 4096)
    );
    assert_eq!(
        (uint(&s, 3, "sector"), uint(&s, 3, "nr_sector"), text(&s, 3, "comm")),
        (98400, 8, "xfs_io".into())
    );
    assert_eq!(field_names(&s, 4), ["dev", "rwbs", "sector", "nr_sector", "error"]);
    assert_eq!((uint(&s, 4, "sector"), int(&s, 4, "error")), (98400, 0));
    assert_eq!((text(&s, 5, "rwbs"), uint(&s, 5, "sector"), uint(&s, 5, "nr_sector")), ("FF".into(), 0, 0));
    assert_eq!(
        (text(&s, 6, "ioprio"), uint(&s, 6, "sector"), text(&s, 6, "comm")),
        ("be,0,4".into(), 498_455_480, "fio".into())
    );
    assert_eq!((uint(&s, 7, "sector"), int(&s, 7, "error")), (u64::MAX, -5));
    assert_eq!((uint(&s, 8, "napi"), text(&s, 8, "dev")), (0xffff_003f_fffa_b350, "(no_device)".into()));
    assert_eq!((int(&s, 8, "work"), int(&s, 8, "budget")), (2, 64));
    assert_eq!(
        (text(&s, 9, "dev"), text(&s, 9, "skbaddr"), int(&s, 9, "len")),
        ("eth0".into(), "0000000075b7e3e8".into(), 114)
    );
    assert_eq!((text(&s, 10, "host"), int(&s, 10, "cmd_opcode")), ("mmc0".into(), 25));
    assert_eq!((text(&s, 10, "cmd_resp"), int(&s, 10, "cmd_retries")), ("0x900 0x0 0x0 0x0".into(), 0));
    assert_eq!(
        (text(&s, 11, "caller"), text(&s, 11, "parent")),
        ("syscall_exit_to_user_mode+0x15".into(), "0x0".into())
    );
    assert_eq!((text(&s, 12, "load"), int(&s, 12, "dynamic_power")), ("{24 19}".into(), 250));
    assert_eq!(text(&s, 12, "cpus"), "00000000,00000006");
    assert_eq!((text(&s, 13, "disk"), int(&s, 13, "qid")), ("nvme0n1".into(), 4));
    assert_eq!(
        (text(&s, 13, "cmd"), uint(&s, 13, "x")),
        ("(nvme_cmd_write slba=498455480, len=7)".into(), 0x1f)
    );
    assert_eq!(field_names(&s, 14), ["text"], "no key=value: the payload is the text");
    assert_eq!(text(&s, 14, "text"), "259,0 WS 498455480 + 8 <- (259,5) 263096");
}

#[test]
fn case16_markers() {
    let s = load(concat!(
        "  a-1 [000] .... 10.000001: tracing_mark_write: B|1234|doFrame\n",
        "  a-1 [000] .... 10.000002: tracing_mark_write: cmd_start id=7 note: a: b\n",
        "  a-1 [000] .... 10.000003: do_timer: [+]jiffies_64: 4294960195, caller:tick_do_update_jiffies64\n",
        "  a-1 [000] .... 10.000004: bprint: 0xc044504c: cpu_load: cpu=0 load=13\n",
        "  a-1 [000] .... 10.000005: print:                tracing_mark_write: cmd_done id=7\n",
    ));
    clean(&s);
    assert_eq!((name(&s, 0), text(&s, 0, "text")), ("tracing_mark_write".into(), "B|1234|doFrame".into()));
    assert_eq!(field_names(&s, 0), ["text"]);
    assert_eq!(text(&s, 1, "text"), "cmd_start id=7 note: a: b");
    assert_eq!(int(&s, 1, "id"), 7);
    assert_eq!(
        (name(&s, 2), text(&s, 2, "text")),
        ("do_timer".into(), "[+]jiffies_64: 4294960195, caller:tick_do_update_jiffies64".into())
    );
    assert_eq!(
        (text(&s, 3, "caller"), text(&s, 3, "text")),
        ("0xc044504c".into(), "cpu_load: cpu=0 load=13".into())
    );
    assert_eq!((int(&s, 3, "cpu"), int(&s, 3, "load")), (0, 13));
    assert_eq!(
        (name(&s, 4), text(&s, 4, "caller"), int(&s, 4, "id")),
        ("print".into(), "tracing_mark_write".into(), 7)
    );
}

#[test]
fn case17_header_only() {
    let s = load(concat!(
        "# tracer: nop\n",
        "#\n",
        "# entries-in-buffer/entries-written: 0/0   #P:8\n",
        "#\n",
        "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n",
        "#              | |         |   |||||     |         |\n",
    ));
    clean(&s);
    assert!(s.events.is_empty() && s.spans.is_empty());
    assert_eq!(s.records, Some(0));
    let md: Vec<(&str, &str)> = s.metadata.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(md, [("tracer", "nop"), ("entries-in-buffer", "0"), ("entries-written", "0"), ("cpus", "8")]);
}

// ---- other behaviour ----------------------------------------------------------------

#[test]
fn context_info_off_fails_clearly() {
    let err = ftrace_text::parse(b"sys_close <-system_call_fastpath\nsys_open <-x\n", &LoadControl::new())
        .expect_err("no [cpu] column");
    match err {
        ParseFailure::Invalid { message, .. } => assert!(message.contains("context-info"), "{message}"),
        other => panic!("expected Invalid, got {other}"),
    }
}

#[test]
fn crlf_and_missing_final_newline() {
    let lf = "  a-1 [000] .... 10.000001: irq_handler_entry: irq=5 name=x\n  a-1 [000] .... 10.000002: irq_handler_exit: irq=5 ret=handled\n";
    let crlf = lf.replace('\n', "\r\n");
    let no_final = lf.trim_end_matches('\n');
    for input in [lf, crlf.as_str(), no_final] {
        let s = load(input);
        clean(&s);
        assert_eq!(s.events.len(), 2);
        assert_eq!(text(&s, 1, "ret"), "handled", "no trailing CR in values");
    }
}

#[test]
fn unsorted_input_is_sorted_stably() {
    let s = load(concat!(
        "  a-1 [006] .... 7115.449811: cpu_idle: state=4294967295 cpu_id=6\n",
        "  a-1 [006] .... 7115.449809: cpu_idle: state=1 cpu_id=6\n",
        "  a-1 [000] .... 7115.449809: cpu_idle: state=2 cpu_id=0\n",
    ));
    clean(&s);
    assert!(s.events.is_sorted());
    let states: Vec<u64> = (0..3).map(|i| uint(&s, i, "state")).collect();
    assert_eq!(states, [1, 2, 4_294_967_295]);
}

#[test]
fn hostile_bytes_never_panic() {
    // A deterministic xorshift stream mixed with fragments of real line syntax.
    let pieces: [&[u8]; 10] = [
        b"  a-1 [000] d.h1 10.000001: ",
        b"irq_handler_entry: irq=",
        b" 0)   1.382 us    |  ",
        b"} /* ",
        b"\n",
        b" => ",
        b"CPU:2 [LOST ",
        b"\xff\x00\r",
        b"sched_switch: prev_comm=",
        b"# tracer: function_graph\n",
    ];
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut data = Vec::new();
    for _ in 0..20_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        if x.is_multiple_of(3) {
            data.push((x >> 8) as u8);
        } else {
            data.extend_from_slice(pieces[(x >> 16) as usize % pieces.len()]);
        }
    }
    for chunks in [1, 3, 64] {
        let _ = ftrace_text::parse_with_chunks(&data, &LoadControl::new(), chunks);
    }
    let _ = ftrace_text::parse(&[], &LoadControl::new());
    let long = vec![b'x'; (1 << 20) + 10];
    let mut with_long = b"  a-1 [000] .... 1.000001: f <-g\n".to_vec();
    with_long.extend_from_slice(&long);
    with_long.extend_from_slice(b"\n  a-1 [000] .... 1.000002: f <-g\n");
    let s = load_bytes(&with_long);
    assert_eq!((s.events.len(), s.diagnostics.malformed), (2, 1));
    assert_eq!(s.diagnostics.first_malformed[0].line, Some(2));
}

#[test]
fn cancel_is_honoured() {
    let ctl = LoadControl::new();
    ctl.cancel();
    let r = ftrace_text::parse(b"  a-1 [000] .... 1.000001: f <-g\n", &ctl);
    assert!(matches!(r, Err(ParseFailure::Cancelled)));
    // Mid-parse: the check runs every few thousand lines, in every chunk.
    let big = "  a-1 [000] .... 1.000001: f <-g\n".repeat(20_000);
    let ctl = LoadControl::new();
    ctl.cancel();
    let r = ftrace_text::parse_with_chunks(big.as_bytes(), &ctl, 4);
    assert!(matches!(r, Err(ParseFailure::Cancelled)));
}

#[test]
fn progress_reaches_the_input_size() {
    let big = "  a-1 [000] .... 1.000001: f <-g\n".repeat(10_000);
    let ctl = LoadControl::new();
    ctl.set_total(big.len() as u64);
    ftrace_text::parse_with_chunks(big.as_bytes(), &ctl, 5).expect("parses");
    assert_eq!(ctl.fraction(), 1.0);
}

/// Everything observable about a source, with strings resolved, for exact comparison.
fn snapshot(s: &Source) -> Vec<String> {
    let mut out: Vec<String> = s
        .events
        .iter()
        .map(|e| {
            let fields: Vec<String> = e
                .fields()
                .map(|(n, v)| {
                    let v = match v {
                        FieldValue::Str(x) => format!("{:?}", s.strings.resolve(x)),
                        other => format!("{other:?}"),
                    };
                    format!("{}={v}", s.strings.resolve(n))
                })
                .collect();
            format!(
                "{} {} {} {:?} {} {} {} {:?}",
                e.ts(),
                e.cpu(),
                e.pid(),
                s.strings.resolve(e.comm()),
                e.flags().0,
                s.strings.resolve(e.name()),
                fields.join(","),
                e.stack().map(|st| s.strings.resolve(st).into_owned())
            )
        })
        .collect();
    out.push(format!("records {:?} origin {:?} metadata {:?}", s.records, s.origin, s.metadata));
    out.push(format!("diagnostics {:?}", s.diagnostics));
    for t in &s.spans {
        for i in 0..t.len() {
            out.push(format!(
                "span {} {} {:?} {} {}",
                t.start[i],
                t.end[i],
                s.strings.resolve(t.label[i]),
                t.depth[i],
                t.lane[i]
            ));
        }
    }
    out
}

fn assert_chunking_invariant(data: &[u8]) {
    let one = ftrace_text::parse_with_chunks(data, &LoadControl::new(), 1).expect("1 chunk");
    let base = snapshot(&one);
    for chunks in [2, 7, 50, 1000] {
        let many = ftrace_text::parse_with_chunks(data, &LoadControl::new(), chunks).expect("chunks");
        assert_eq!(snapshot(&many), base, "{chunks} chunks differ from 1");
    }
    // The default plan: above 256 KiB, chunks of decreasing size.
    let guided = ftrace_text::parse(data, &LoadControl::new()).expect("default chunks");
    assert_eq!(snapshot(&guided), base, "the default chunking differs from 1 chunk");
}

#[test]
fn chunk_boundaries_do_not_change_the_result() {
    let block = concat!(
        "  a-1 [001] d..2 10.000001: sched_switch: prev_comm=a prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=b next_pid=2 next_prio=120\n",
        "  a-1 [001] .... 10.000002: <stack trace>\n",
        " => f1+0x1/0x2\n",
        " => f2\n",
        "CPU:3 [LOST 5 EVENTS]\n",
        "garbage line\n",
        "  b-2 [002] .... 10.000003: mmc_request_start:\n",
        "mmc0: start struct mmc_request[1]: cmd_opcode=25\n",
        "cmd_arg=0x10 tag=0\n",
        "##### CPU 3 buffer started ####\n",
        "  c-3 [003] .... 10.000004: tracing_mark_write: id=4 Web Content\n",
    );
    let data = block.repeat(300);
    assert_chunking_invariant(data.as_bytes());
    // Large enough for the default plan to split it (into ~20 chunks).
    assert_chunking_invariant(block.repeat(6000).as_bytes());
    let s = load(&data);
    assert_eq!(s.events.len(), 900);
    assert_eq!(s.diagnostics.malformed, 300, "one garbage line per block");
    assert_eq!(s.diagnostics.first_malformed[1].line, Some(17), "absolute line numbers");
    assert_eq!(s.diagnostics.gaps.len(), 300);
    assert_eq!(s.events.stacks().len(), 300);
    let mmc = (0..s.events.len()).find(|&i| name(&s, i) == "mmc_request_start").expect("mmc event");
    assert_eq!((uint(&s, mmc, "cmd_arg"), int(&s, mmc, "tag")), (16, 0), "wrapped payload joined");
}

// ---- real files -----------------------------------------------------------------------

/// An independent count of event lines: lines holding a `[NNN]` CPU token between blanks,
/// found by splitting on whitespace (the parser anchors differently), minus stack records.
fn count_cpu_lines(data: &[u8]) -> (usize, usize) {
    let text = String::from_utf8_lossy(data);
    let mut lines = 0;
    let mut stacks = 0;
    for l in text.lines() {
        let has_cpu = l.split_whitespace().any(|tok| {
            tok.len() == 5
                && tok.starts_with('[')
                && tok.ends_with(']')
                && tok[1..4].chars().all(|c| c.is_ascii_digit())
        });
        if has_cpu {
            lines += 1;
            if l.contains("<stack trace>") {
                stacks += 1;
            }
        }
    }
    (lines, stacks)
}

#[test]
fn corpus_files_load_cleanly_with_exact_counts() {
    let files = corpus_files("ftrace_text", None);
    assert!(files.len() >= 4, "expected the 4 corpus files of the repository, found {}", files.len());
    load_cleanly_with_exact_counts(files);
}

#[test]
#[cfg_attr(not(have_shared_corpus), ignore = "needs the shared corpus: ../shared/corpus or $LATSCOPE_CORPUS")]
fn corpus_files_of_the_shared_corpus_load_cleanly_with_exact_counts() {
    let files = shared_corpus_files("ftrace_text", None);
    let all = files.len() + corpus_files("ftrace_text", None).len();
    assert!(all >= 24, "expected the 24 corpus files, found {all}");
    load_cleanly_with_exact_counts(files);
}

fn load_cleanly_with_exact_counts(files: Vec<PathBuf>) {
    for path in files {
        let data = std::fs::read(&path).expect("read");
        let s = load_bytes(&data);
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
        assert_eq!(latscope_importers::detect(&data), Some(latscope_importers::Format::FtraceText), "{name}");
        assert_eq!(s.diagnostics.malformed, 0, "{name}: {:?}", s.diagnostics.first_malformed);
        let (lines, stacks) = count_cpu_lines(&data);
        let span_count = s.spans.iter().map(|t| t.len()).sum::<usize>();
        match name.as_str() {
            // No [cpu] column: latency format (3 events + 1 stack record) and function_graph.
            "kernel_doc_irqsoff_latency_format.txt" => assert_eq!((s.events.len(), s.records), (3, Some(4))),
            "cppc_funcgraph_abstime_irq_wrapped.txt" => {
                // 32 leaves + 18 entries (grep -c '();' / '{$'), all matched.
                assert_eq!((s.events.len(), span_count), (0, 50));
                assert_eq!(s.diagnostics.warnings, Vec::<String>::new());
            }
            "rpi_function_graph_irq_thread.txt" => {
                assert_eq!((s.events.len(), span_count, s.records), (8, 2, Some(12)));
            }
            _ => {
                assert_eq!(s.events.len(), lines - stacks, "{name}");
                assert_eq!(s.records, Some(lines as u64), "{name}");
                assert_eq!(s.events.stacks().len(), stacks, "{name}");
            }
        }
        assert_chunking_invariant(&data);
    }
}

/// `ftrace_text/REL` of the corpus, loaded.
fn corpus_file(rel: &str) -> Source {
    load_bytes(&std::fs::read(corpus(&format!("ftrace_text/{rel}"))).expect("read"))
}

#[test]
fn corpus_spot_checks() {
    let s = corpus_file("trappy_cpu_idle_unsorted.txt");
    assert!(s.events.is_sorted());
    assert_eq!(s.metadata, vec![("version".into(), "6".into()), ("cpus".into(), "8".into())]);
    // The last line is cut after prev_pid: it falls back to generic key=value.
    let last = (0..s.events.len()).find(|&i| comm(&s, i) == "bash").expect("bash");
    assert_eq!(field_names(&s, last), ["prev_comm", "prev_pid"]);
}

#[test]
#[cfg_attr(not(have_shared_corpus), ignore = "needs the shared corpus: ../shared/corpus or $LATSCOPE_CORPUS")]
fn corpus_spot_checks_on_the_shared_corpus() {
    let s = corpus_file("rpi_function_sched_signal_large.txt");
    assert_eq!(abs(&s, 0), (676, 984_916_000_000));
    assert_eq!(s.origin.secs, 676);
    let first_switch = (0..s.events.len()).find(|&i| name(&s, i) == "sched_switch").expect("a switch");
    assert_eq!(
        (text(&s, first_switch, "prev_comm"), int(&s, first_switch, "next_pid")),
        ("lxpanel".into(), 502)
    );
    let st = s.events.get(0).and_then(|e| e.stack()).expect("stack of the first event");
    assert!(s.strings.resolve(st).starts_with("copy_process.part.5+0x18/0x1acc\n_do_fork+0xc0/0x41c"));
    assert_eq!(text(&s, 0, "func"), "copy_process.part.5+0x14/0x1acc");
    assert_eq!(s.metadata[1], ("entries-in-buffer".into(), "26696".into()));

    let s = corpus_file("rpi_irq_dwc_otg_shared.txt");
    assert_eq!((int(&s, 0, "irq"), text(&s, 0, "name")), (162, "arch_timer".into()));
    assert_eq!((int(&s, 11, "irq"), text(&s, 11, "name")), (56, "dwc_otg_hcd:usb1".into()));
    let last = s.events.len() - 1;
    assert_eq!(abs(&s, last), (89, 432_046_000_000));

    let s = corpus_file("tc_android_sched_irq_syscall.txt");
    let i = (0..s.events.len()).find(|&i| comm(&s, i) == "IntentService[E").expect("bracket comm");
    assert_eq!(s.events.pid[i], 3866);

    let s = corpus_file("mail_excerpts/cpuidle_ipi_taskless.txt");
    assert_eq!((comm(&s, 0), s.events.pid[0]), (String::new(), -1));

    let s = corpus_file("mail_excerpts/emmc_cmd25_crc_error_wrapped.txt");
    assert_eq!((text(&s, 1, "host"), int(&s, 1, "data_err")), ("mmc0".into(), -84));

    let s = corpus_file("doc_excerpts/kernel_doc_timerlat_trace.txt");
    assert_eq!(
        (name(&s, 0), int(&s, 0, "timer_latency"), text(&s, 0, "context")),
        ("timerlat".into(), 932, "irq".into())
    );
}

#[test]
fn recorded_samples_load_cleanly() {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../samples/ftrace"));
    let files = files_under(dir, Some("txt"));
    assert!(files.len() >= 8, "samples/ftrace holds at least 8 text traces: {files:?}");
    for path in files {
        let data = std::fs::read(&path).expect("read");
        let s = load_bytes(&data);
        assert_eq!(s.diagnostics.malformed, 0, "{}: {:?}", path.display(), s.diagnostics.first_malformed);
        let (lines, stacks) = count_cpu_lines(&data);
        if path.to_string_lossy().ends_with("report-l.txt") {
            // `trace-cmd report -l` prints no `[cpu]` column: count the body lines instead.
            let body = data
                .split(|&b| b == b'\n')
                .filter(|l| {
                    !l.is_empty()
                        && !l.starts_with(b"#")
                        && !l.starts_with(b"cpus=")
                        && !l.starts_with(b"version")
                })
                .count();
            assert_eq!(s.events.len(), body, "{}", path.display());
        } else if s.spans.is_empty() {
            assert_eq!(s.events.len(), lines - stacks, "{}", path.display());
        }
    }
}

#[test]
fn fuzz_regressions_do_not_panic() {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/regressions/ftrace_text"));
    let files = files_under(dir, None);
    assert!(!files.is_empty(), "regression inputs missing from {}", dir.display());
    for path in files {
        let data = std::fs::read(&path).expect("read");
        let counts = |chunks| {
            ftrace_text::parse_with_chunks(&data, &LoadControl::new(), chunks)
                .map(|s| (s.events.len(), s.records, s.diagnostics.malformed))
                .ok()
        };
        assert_eq!(counts(1), counts(7), "{}: chunking changed the result", path.display());
    }
}

/// a parsed ftrace event costs well under 48 bytes including its field values
/// (plus the unique strings it interns). Measured on our own recorded traces.
#[test]
fn memory_per_event_stays_well_under_48_bytes() {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../samples/ftrace"));
    for name in ["virtio_blk_direct_read.txt", "timer_wakeups_under_load.txt"] {
        let path = dir.join(name);
        let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let s = load_bytes(&data);
        let per_event = s.events.heap_bytes() as f64 / s.events.len() as f64;
        assert!(per_event < 42.0, "{name}: {per_event:.1} bytes per event");
        let strings_per_event = s.strings.heap_bytes() as f64 / s.events.len() as f64;
        assert!(strings_per_event < 8.0, "{name}: {strings_per_event:.1} bytes of strings per event");
    }
}

#[test]
fn bracketed_keys_of_generic_payloads_are_fields() {
    // timer_start prints `expires=%lu [timeout=%ld]`: recorded on this machine
    // (target/bench-data/ftrace_big.txt has 23,689 of them).
    let s = load(concat!(
        "     rcu_preempt-15      [000] d..1. 17110.331424: timer_start: timer=00000000e1329e21 function=process_timeout expires=4299169835 [timeout=1] bucket_expiry=4299169836 cpu=0 idx=44 flags=\n",
        "     rcu_preempt-15      [000] d..1. 17110.331425: timer_start: timer=00000000e1329e21 function=process_timeout expires=4299169835 [timeout=-3] cpu=0 idx=44 flags=D|I\n",
        // A bracket inside a value or right after `=` opens no key.
        "     rcu_preempt-15      [000] d..1. 17110.331426: workqueue_test: comm=a[b=1] x=[y=2] z=3\n",
    ));
    clean(&s);
    assert_eq!(
        field_names(&s, 0),
        ["timer", "function", "expires", "timeout", "bucket_expiry", "cpu", "idx", "flags"]
    );
    assert_eq!((int(&s, 0, "expires"), int(&s, 0, "timeout")), (4_299_169_835, 1));
    assert_eq!((int(&s, 1, "timeout"), int(&s, 1, "cpu"), text(&s, 1, "flags")), (-3, 0, "D|I".into()));
    assert_eq!(field_names(&s, 2), ["comm", "x", "z"]);
    assert_eq!(
        (text(&s, 2, "comm"), text(&s, 2, "x"), int(&s, 2, "z")),
        ("a[b=1]".into(), "[y=2]".into(), 3)
    );
}

#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The rule grammar: every form parses to what it says, and every error names the
//! column and what was expected there.

use latscope_analysis::endpoint::{Edge, Endpoint, Level, Pred, PredOp};
use latscope_analysis::pairing::{PairRule, Policy};
use latscope_analysis::spec::{CmdIrq, IrqSel, Preset};
use latscope_analysis::spec::{PRESETS, Spec, parse_spec, preset_spec};

fn pair(text: &str) -> PairRule {
    match parse_spec(text) {
        Ok(Spec::Pair(r)) => r,
        other => panic!("{text}: {other:?}"),
    }
}

fn error(text: &str) -> (usize, String) {
    let e = parse_spec(text).expect_err(text);
    assert_eq!(e.to_string(), format!("column {}: {}", e.column, e.message));
    (e.column, e.message)
}

#[test]
fn full_pair_rule() {
    let r =
        pair("wake=sched_wakeup[comm~dd,prio!=99] -> sched_switch by pid:next_pid policy lifo within 2.5ms");
    assert_eq!(r.name, "wake");
    assert_eq!(
        r.start,
        Endpoint::event_where(
            "sched_wakeup",
            vec![Pred::new("comm", PredOp::Contains, "dd"), Pred::new("prio", PredOp::Ne, "99")]
        )
    );
    assert_eq!(r.end, Endpoint::event("sched_switch"));
    assert_eq!(r.by, [("pid".to_owned(), "next_pid".to_owned())]);
    assert_eq!(r.policy, Policy::Lifo);
    assert_eq!(r.within, Some(2_500_000_000));
    // Defaults: fifo, no key, no timeout.
    let r = pair("a->b");
    assert_eq!((r.name.as_str(), r.policy, r.by.len(), r.within), ("a->b", Policy::Fifo, 0, None));
}

#[test]
fn nameless_rules_get_their_text_as_name() {
    assert_eq!(
        pair("irq_handler_entry[irq=36] -> irq_handler_exit by cpu,irq").name,
        "irq_handler_entry[irq=36]->irq_handler_exit"
    );
    assert_eq!(Spec::Pair(pair("CMD:rise -> IRQ:fall")).name(), "CMD:rise->IRQ:fall");
}

#[test]
fn edges_crossings_and_markers() {
    let r = pair("lat = CMD:rise -> SCOPE:fall@1.65 policy next");
    assert_eq!(r.start, Endpoint::edge("CMD", Edge::Rise));
    assert_eq!(r.end, Endpoint::Crossing { track: "SCOPE".into(), edge: Edge::Fall, level: Level(1.65) });
    let r = pair(r#"req=tracing_mark_write[text~req_start] -> tracing_mark_write[text~"req_done"] by id"#);
    assert_eq!(
        r.end,
        Endpoint::event_where("tracing_mark_write", vec![Pred::new("text", PredOp::Contains, "req_done")])
    );
    let r = pair(r#""my rule"="D 3:any" -> "D 3":any"#);
    assert_eq!(r.name, "my rule");
    // A quoted name without a trailing edge is an event of that name.
    assert_eq!(r.start, Endpoint::event("D 3:any"));
    assert_eq!(r.end, Endpoint::edge("D 3", Edge::Any));
    let r = pair("f=block_rq_issue[rwbs!~F,sector=0x10] -> block_rq_complete");
    assert_eq!(
        r.start,
        Endpoint::event_where(
            "block_rq_issue",
            vec![Pred::new("rwbs", PredOp::NotContains, "F"), Pred::new("sector", PredOp::Eq, "0x10")]
        )
    );
}

#[test]
fn pulse_stall_long_poll() {
    assert_eq!(
        parse_spec("pulse:D1"),
        Ok(Spec::Pulse { name: "pulse:D1".into(), channel: "D1".into(), high: true, level: None })
    );
    assert_eq!(
        parse_spec("pulse:CH2:low@0.8"),
        Ok(Spec::Pulse {
            name: "pulse:CH2:low".into(),
            channel: "CH2".into(),
            high: false,
            level: Some(0.8)
        })
    );
    assert_eq!(
        parse_spec("stall:DMA:rise factor 2"),
        Ok(Spec::Stall {
            name: "stall:DMA:rise factor 2".into(),
            selector: Endpoint::edge("DMA", Edge::Rise),
            factor: 2.0
        })
    );
    assert!(matches!(
        parse_spec("stall:hrtimer_expire_entry[function~tick]"),
        Ok(Spec::Stall { factor: 1.5, .. })
    ));
    assert!(matches!(
        parse_spec("long:flushes over 2ms"),
        Ok(Spec::Long { over: 2_000_000_000, high: true, .. })
    ));
    assert!(matches!(
        parse_spec("poll:mmio_read within 5us min 3"),
        Ok(Spec::Poll { spacing: 5_000_000, min_iterations: 3, .. })
    ));
}

#[test]
fn presets_parse_by_name_and_with_options() {
    for (name, _) in PRESETS {
        let name = name.replace("CH", "D0");
        let s = preset_spec(&name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(s.name(), name);
        assert_eq!(parse_spec(&name).map(|s| s.name().to_owned()), Ok(name.clone()));
    }
    assert_eq!(preset_spec("wakeup"), Ok(Spec::Preset(Preset::Wakeup)));
    let w = latscope_analysis::presets::wakeup_rule();
    assert_eq!((w.policy, w.by[0].1.as_str()), (Policy::First, "next_pid"));
    assert_eq!(
        preset_spec("cmd-irq:irq=36"),
        Ok(Spec::Preset(Preset::CmdIrq {
            name: "cmd-irq:irq=36".into(),
            opts: CmdIrq { cmd: None, irq: Some(IrqSel::Number(36)) }
        }))
    );
    let Ok(Spec::Preset(Preset::CmdIrq { opts, .. })) =
        preset_spec("cmd-irq:cmd=tracing_mark_write[text~req_start,id!=0],irq=IRQ:rise")
    else {
        panic!("cmd-irq with endpoints")
    };
    assert_eq!(opts.irq, Some(IrqSel::Endpoint(Endpoint::edge("IRQ", Edge::Rise))));
    assert!(matches!(opts.cmd, Some(Endpoint::Event { ref preds, .. }) if preds.len() == 2));
    assert!(matches!(preset_spec("chain:irq=36"), Ok(Spec::Preset(Preset::Chain { .. }))));
    let e = preset_spec("blok").expect_err("unknown preset");
    assert!(e.message.contains("block") && e.message.contains("irq-handler"), "{e}");
    assert_eq!(preset_spec("cmd-irq:foo").map_err(|e| e.column), Err(8));
}

#[test]
fn errors_say_what_was_expected_where() {
    assert_eq!(
        error("lat=irq_handler_entry irq_handler_exit"),
        (22, "expected \"->\" after the start endpoint".into())
    );
    assert_eq!(
        error("a -> "),
        (5, "expected the end endpoint: an event name or CHANNEL:rise|fall|any".into())
    );
    assert_eq!(error("a -> b by"), (9, "expected a key field after 'by'".into()));
    assert_eq!(
        error("a -> b policy random"),
        (14, "expected fifo, lifo, next or first after 'policy'".into())
    );
    assert_eq!(error("a -> b within 5"), (15, "expected a unit after the number: ps ns us ms s".into()));
    assert_eq!(error("a -> b within 5 parsecs").0, 16);
    assert_eq!(error("a -> b within soon").0, 14);
    assert_eq!(
        error("a -> b frobnicate"),
        (7, "expected 'by', 'policy', 'within' or the end of the rule".into())
    );
    assert_eq!(error("a[irq 36] -> b").0, 6);
    assert_eq!(error("a[irq=36 -> b").0, 13);
    assert_eq!(error("CMD:up -> b"), (4, "expected rise, fall or any after ':'".into()));
    assert_eq!(error("CMD:rise@ -> b").0, 10);
    assert_eq!(error("a -> b by pid policy next by cpu").0, 26);
    assert_eq!(error("pulse:D1:middle").0, 9);
    assert_eq!(error("stall:D1 factor -2").0, 16);
    assert_eq!(error("long:spans 2ms").0, 11);
    assert_eq!(error("poll:x within 1us min 1").0, 22);
    assert_eq!(error("\"unterminated -> b").0, 0);
    assert_eq!(error("   ").0, 0);
    // Columns count characters, not bytes.
    assert_eq!(error("µ -> b policy x").0, 14);
}

#[test]
fn mangled_specs_never_panic() {
    let seeds = [
        "wake=sched_wakeup[comm~dd,prio!=99] -> sched_switch by pid:next_pid policy lifo within 2.5ms",
        "lat = CMD:rise -> SCOPE:fall@1.65 policy next",
        r#""my rule"="D 3:any" -> "D 3":any"#,
        "pulse:CH2:low@0.8",
        "stall:DMA:rise factor 2",
        "long:flushes:high@1.5 over 2ms",
        "poll:mmio_read within 5us min 3",
        "cmd-irq:cmd=tracing_mark_write[text~req_start,id!=0],irq=IRQ:rise",
        "chain:irq=36",
    ];
    let alphabet: Vec<char> = "[]=,:~!-><@\" .0123456789aµsupolicyby\t".chars().collect();
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for seed in seeds {
        let chars: Vec<char> = seed.chars().collect();
        for cut in 0..=chars.len() {
            let prefix: String = chars[..cut].iter().collect();
            let _ = parse_spec(&prefix);
            let _ = preset_spec(&prefix);
            let _ = latscope_analysis::align::parse_align(&prefix);
        }
        for _ in 0..400 {
            let mut c = chars.clone();
            for _ in 0..1 + next() % 3 {
                let i = (next() as usize) % (c.len() + 1);
                let ch = alphabet[(next() as usize) % alphabet.len()];
                match next() % 3 {
                    0 if i < c.len() => c[i] = ch,
                    1 if i < c.len() => {
                        c.remove(i);
                    }
                    _ => c.insert(i, ch),
                }
            }
            let text: String = c.into_iter().collect();
            if let Err(e) = parse_spec(&text) {
                assert!(e.column <= text.chars().count(), "{text:?}: {e}");
            }
        }
    }
}

#[test]
fn chain_takes_the_irq_line_of_a_decoded_bus() {
    let Ok(Spec::Preset(Preset::Chain { line, opts, .. })) = preset_spec(r#"chain:irq=3,line="GPIO 4":rise"#)
    else {
        panic!("chain with line=")
    };
    assert_eq!(line, Some(Endpoint::edge("GPIO 4", Edge::Rise)));
    assert_eq!(opts.irq, Some(IrqSel::Number(3)));
    let Ok(Spec::Preset(Preset::Chain { line, .. })) = parse_spec("chain:line=IRQ") else {
        panic!("bare line")
    };
    assert_eq!(line, Some(Endpoint::event("IRQ")));
    assert!(matches!(preset_spec("chain"), Ok(Spec::Preset(Preset::Chain { line: None, .. }))));
    // Only chain has an IRQ line.
    let e = preset_spec("cmd-irq:irq=3, line=IRQ").expect_err("cmd-irq has no line");
    assert_eq!(e.column, 15);
    assert!(e.message.contains("line= is an option of chain"), "{e}");
    assert_eq!(preset_spec("chain:line=").map_err(|e| e.column), Err(11));
}

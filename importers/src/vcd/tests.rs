use super::*;

fn load(text: &str) -> Source {
    parse(text.as_bytes(), &LoadControl::new()).expect("loads")
}

fn digital<'a>(s: &'a Source, name: &str) -> &'a DigitalTrack {
    s.digital.iter().find(|d| d.name == name).unwrap_or_else(|| panic!("no track {name}"))
}

#[test]
fn values_on_timestamp_lines_and_digit_ids() {
    // ChronoVu uses digit ids (`00` is value 0 on id 0); libsigrok uses `#` and `$` as ids.
    let s = load(
        "$timescale 10 ns $end\r\n$scope module la $end\r\n$var wire 1 0 A $end\r\n$var wire 1 # B $end\r\n\
         $var wire 1 $ C $end\r\n$upscope $end\r\n$enddefinitions $end\r\n#0 00 1# 0$\r\n#5 10 0#\r\n#7 1$\r\n#9",
    );
    let a = digital(&s, "la.A");
    assert_eq!((a.initial, a.times().collect::<Vec<_>>(), a.levels().to_vec()), (0, vec![50_000], vec![1]));
    let b = digital(&s, "la.B");
    assert_eq!((b.initial, b.times().collect::<Vec<_>>()), (1, vec![50_000]));
    let c = digital(&s, "la.C");
    assert_eq!((c.initial, c.times().collect::<Vec<_>>()), (0, vec![70_000]));
    assert_eq!(a.end, 90_000, "a final timestamp with no changes ends the capture");
    assert_eq!(s.diagnostics.malformed, 0);
}

#[test]
fn vectors_reals_and_four_state_values() {
    let s = load(
        "$timescale 1ns $end $var reg 8 ! v [7:0] $end $var real 64 \" r $end $var wire 1 % w $end\n\
         $enddefinitions $end\n$dumpvars\nb101 !\nr1.5 \"\nx%\n$end\n#10 bz ! R-2e-3 \" 1%\n#20 bx1 ! 0%\n#30 b11111111 !",
    );
    let v = s.analog.iter().find(|a| a.name == "v [7:0]").expect("vector track");
    assert_eq!(v.times, [0, 10_000, 20_000, 30_000]);
    assert_eq!(v.samples[0], 5.0);
    assert!(v.samples[1].is_nan() && v.samples[2].is_nan());
    assert_eq!(v.samples[3], 255.0);
    let r = s.analog.iter().find(|a| a.name == "r").expect("real track");
    assert_eq!(r.samples, [1.5, -0.002]);
    let w = digital(&s, "w");
    assert_eq!((w.initial, w.levels().to_vec()), (2, vec![1, 0]));
}

#[test]
fn header_quirks() {
    // $timescale over lines, an empty scope name, a $var before any $scope, unknown
    // declarations, $attrbegin, no $timescale at all.
    let s = load(
        "$date today $end $timescale\n\t1s\n$end $var wire 1 a top_level $end $scope module $end $var wire 1 b inner $end\n\
         $attrbegin misc 07 foo 1 $end $upscope $end $enddefinitions $end #0 0a 0b #2 1a",
    );
    assert_eq!(digital(&s, "top_level").times().collect::<Vec<_>>(), [2_000_000_000_000]);
    assert!(s.digital.iter().any(|d| d.name == "inner"));
    let s = load("$var wire 1 ! x $end $enddefinitions $end #0 0! #3 1!");
    assert_eq!(digital(&s, "x").times().collect::<Vec<_>>(), [3000], "1 ns assumed");
    assert!(s.diagnostics.summary().iter().any(|w| w.contains("no $timescale")));
}

#[test]
fn timezero_and_evcd_ports() {
    let s =
        load("$timescale 1 ns $end $timezero -2 $end $var wire 1 ! a $end $enddefinitions $end #0 0! #5 1!");
    assert_eq!(digital(&s, "a").times().collect::<Vec<_>>(), [3000]);
    let s = load(
        "$timescale 1 ns $end $scope module top $end $var port [0:2] <1 bus $end $var port 1 <2 pin $end $upscope $end \
         $enddefinitions $end #0 pDDU 6 6 <1 pD 6 0 <2 #4 pUUU 6 6 <1 pU 0 6 <2",
    );
    let bus = s.analog.iter().find(|a| a.name == "top.bus").expect("port vector");
    assert_eq!(bus.samples, [1.0, 7.0]);
    assert_eq!(digital(&s, "top.pin").times().collect::<Vec<_>>(), [4000]);
}

#[test]
fn malformed_items_are_counted_with_lines_and_the_rest_loads() {
    let s = load(
        "$timescale 1 ns $end $var wire 1 ! a $end $enddefinitions $end\n#0 0!\n?garbage\n1?\n#5 1!\n#3 0!\n#6 0!",
    );
    assert_eq!(s.diagnostics.malformed, 3, "{:?}", s.diagnostics);
    assert_eq!(s.diagnostics.first_malformed[0].line, Some(3));
    assert_eq!(s.diagnostics.first_malformed[2].line, Some(6), "backwards time");
    // The change after the rejected timestamp stays at the last good time (5 ns).
    let a = digital(&s, "a");
    assert_eq!(a.times().collect::<Vec<_>>(), [5000, 5000]);
    assert_eq!(a.levels(), [1, 0]);
}

#[test]
fn a_file_cut_inside_its_header_loads_its_variables_and_says_so() {
    let s = load(
        "$timescale 1 ps $end $scope module tb $end $var wire 1 ! CLK $end $var reg 8 \" bus [7:0] $end $var ",
    );
    assert_eq!(s.digital.len(), 1);
    assert!(s.diagnostics.summary().iter().any(|w| w.contains("truncated")), "{:?}", s.diagnostics);
    assert!(parse(b"$date today $end", &LoadControl::new()).is_err(), "no variables at all is an error");
}

#[test]
fn deep_nesting_hits_the_limit() {
    let text = "$scope module m $end ".repeat(MAX_SCOPE_DEPTH + 1);
    let err = parse(text.as_bytes(), &LoadControl::new()).expect_err("too deep");
    assert!(err.to_string().contains("scope nesting"), "{err}");
}

#[test]
fn never_panics_on_truncations() {
    let text = "$timescale 10 ns $end $scope module la $end $var wire 1 0 A $end $var reg 4 # v $end $upscope $end \
                $enddefinitions $end #0 00 b1010 # #5 10 bx #";
    for n in 0..text.len() {
        let _ = parse(&text.as_bytes()[..n], &LoadControl::new());
    }
}

/// A VCD of `n` toggles of one bit and `n` changes of one vector, generated in memory.
fn many_changes(n: usize) -> Vec<u8> {
    let mut v =
        b"$timescale 1 ns $end\n$var wire 1 ! clk $end\n$var wire 8 \" bus $end\n$enddefinitions $end\n"
            .to_vec();
    for i in 0..n {
        v.extend(format!("#{i}\n{}!\nb{:b} \"\n", i % 2, i % 256).as_bytes());
    }
    v
}

#[test]
fn millions_of_changes_are_refused_at_the_limit_before_they_are_stored() {
    let data = many_changes(1_500_000);
    let err = parse_with_limit(&data, &LoadControl::new(), 2_000_000).expect_err("3 M changes > 2 M");
    match &err {
        ParseFailure::Limit { at: Position::Line(line), what, limit } => {
            // Timestamp #i is on line 5 + 3i, its bit on the next, its vector after that; at
            // #0 only the vector counts (the bit's first value is its initial level), so the
            // vector of #1000000 is change 2,000,001.
            assert_eq!(*line, 7 + 3 * 1_000_000);
            assert_eq!(what, "VCD value changes");
            assert!(limit.starts_with("2000000 changes"), "{limit}");
        }
        other => panic!("expected the change limit, got {other}"),
    }
    // Under the limit everything loads, and no track reserves much beyond what the limit
    // still allowed when it grew.
    let s = parse_with_limit(&data, &LoadControl::new(), 3_000_000).expect("3 M changes fit");
    let clk = digital(&s, "clk");
    assert_eq!(clk.transitions(), 1_500_000 - 1);
    assert_eq!(s.analog[0].samples.len(), 1_500_000);
    assert!(clk.capacity() <= 2 * clk.transitions(), "{}", clk.capacity());
}

#[test]
fn a_value_change_cut_at_the_end_of_the_file_is_dropped_not_misassigned() {
    let head = "$timescale 1 ns $end\n$var wire 1 a A $end\n$var wire 1 ab AB $end\n$enddefinitions $end\n#0 0a 0ab\n#5 ";
    // `1ab` cut after `1a` would set A; it must be dropped with a warning naming the byte.
    let cut = format!("{head}1a");
    let s = load(&cut);
    assert_eq!(digital(&s, "A").transitions(), 0);
    let at = head.len();
    assert!(
        s.diagnostics.warnings.iter().any(|w| w.starts_with(&format!("byte offset {at}:"))
            && w.contains(&format!("cut short at byte {}", cut.len()))),
        "{:?}",
        s.diagnostics.warnings
    );
    // The same change ended by whitespace is whole and loads, and so does a final change
    // whose id no other id extends (it cannot be a cut one).
    let s = load(&format!("{head}1a\n"));
    assert_eq!(digital(&s, "A").times().collect::<Vec<_>>(), [5000]);
    assert!(s.diagnostics.warnings.is_empty(), "{:?}", s.diagnostics.warnings);
    let s = load(&format!("{head}1ab"));
    assert_eq!(digital(&s, "AB").times().collect::<Vec<_>>(), [5000]);
    assert!(s.diagnostics.warnings.is_empty(), "{:?}", s.diagnostics.warnings);
    // A vector whose id is cut is dropped the same way; a final timestamp is kept (it only
    // ends the capture, and a cut one can only be earlier than the real one).
    let vec_head = "$timescale 1 ns $end\n$var wire 4 v V $end\n$var wire 4 vw VW $end\n$enddefinitions $end\n#0 b0 v\n#7 b1 ";
    let s = load(&format!("{vec_head}v"));
    assert_eq!(s.analog.iter().find(|a| a.name == "V").unwrap().samples, [0.0]);
    assert_eq!(s.diagnostics.warnings.len(), 1, "{:?}", s.diagnostics.warnings);
    let s = load(&format!("{head}1a\n#9"));
    assert_eq!(digital(&s, "A").end, 9000);
    // A timestamp cut so short that it goes backwards is the cut, not a writer's error.
    let s = load(&format!("{head}1a\n#40\n#3"));
    assert_eq!((s.diagnostics.malformed, digital(&s, "A").end), (0, 40_000));
    assert!(s.diagnostics.warnings[0].contains("ends inside timestamp #3"), "{:?}", s.diagnostics.warnings);
}

#[test]
fn many_variables_under_a_long_scope_path_are_refused_by_their_total_name_length() {
    // 60 KB of scope name repeated in 1000 names: 60 MB of names from a 90 KB file.
    let mut v = format!("$timescale 1 ns $end\n$scope module {} $end\n", "s".repeat(60_000));
    for i in 0..1000 {
        v.push_str(&format!("$var wire 1 ! a{i} $end\n"));
    }
    v.push_str("$upscope $end\n$enddefinitions $end\n#0 0!\n");
    match parse(v.as_bytes(), &LoadControl::new()) {
        Err(ParseFailure::Limit { at: Position::Line(line), what, limit }) => {
            // Variable k (from 0) is on line 3 + k; the limit is passed at the 560th.
            let k = MAX_NAME_BYTES / (60_000 + ".a000".len());
            assert!((line as usize).abs_diff(3 + k) <= 1, "line {line}, expected near {}", 3 + k);
            assert!(what.contains("VCD variable names"), "{what}");
            assert_eq!(limit, format!("{MAX_NAME_BYTES} bytes"));
        }
        other => panic!("expected the name limit, got {other:?}"),
    }
}

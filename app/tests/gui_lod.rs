#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The per-column level-of-detail queries agree with a brute-force scan of real captures.

use latscope::gui::lod::{self, Grid, MinMaxPyramid};
use latscope::gui::prepare::{LaneKind, prepare};
use latscope_importers::LoadControl;
use std::path::PathBuf;

fn load(rel: &str) -> latscope_model::Source {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../samples").join(rel);
    latscope_importers::open(&p, &LoadControl::new()).unwrap()
}

/// Grids at several zoom levels over `[lo, hi]`, including ones finer than the data.
fn grids(lo: i64, hi: i64) -> Vec<Grid> {
    let span = (hi - lo).max(1) as f64;
    [1.0, 0.37, 0.05, 0.004]
        .iter()
        .flat_map(|&f| {
            let cols = 997;
            let ps_per_px = span * f / cols as f64;
            [0.0, 0.5].map(|shift| Grid {
                t0: lo as f64 + span * shift * (1.0 - f),
                ps_per_px,
                columns: cols,
            })
        })
        .collect()
}

#[test]
fn digital_columns_match_a_scan_of_every_sigrok_sample_channel() {
    for file in
        ["sigrok/demo_4ch_1mhz.sr", "sigrok/sd_mode_imx6_snippet.sr", "sigrok/mixed_100khz_2logic_1analog.sr"]
    {
        let src = load(file);
        assert!(!src.digital.is_empty(), "{file}");
        for d in &src.digital {
            let pyramid = MinMaxPyramid::new(d.levels());
            for grid in grids(0, d.end) {
                let cols = lod::digital_columns(d, &pyramid, &grid);
                for (c, col) in cols.iter().enumerate() {
                    let (a, b) = (grid.edge(c), grid.edge(c + 1));
                    let inside: Vec<usize> =
                        (0..d.transitions()).filter(|&i| d.time(i) >= a && d.time(i) < b).collect();
                    let level_in = d.times().rposition(|t| t < a).map_or(d.initial, |i| d.level(i));
                    let levels = std::iter::once(level_in).chain(inside.iter().map(|&i| d.level(i)));
                    let (mn, mx) = levels.fold((u8::MAX, 0), |(l, h), v| (l.min(v), h.max(v)));
                    assert_eq!(col.level_in, level_in, "{file} {} col {c}", d.name);
                    assert_eq!(col.transitions as usize, inside.len(), "{file} {} col {c}", d.name);
                    assert_eq!((col.min, col.max), (mn, mx), "{file} {} col {c}", d.name);
                }
            }
        }
    }
}

#[test]
fn analog_columns_match_a_scan_of_the_sigrok_analog_channel() {
    let src = load("sigrok/mixed_100khz_2logic_1analog.sr");
    let a = &src.analog[0];
    assert!(a.samples.len() > 100);
    let n = a.samples.len();
    for grid in grids(a.t0, a.end()) {
        let cols = lod::analog_columns(a, &grid);
        // One linear walk: `next` counts the samples before the column's right edge.
        let mut next = 0;
        for (c, col) in cols.iter().enumerate() {
            let (lo, hi) = (grid.edge(c), grid.edge(c + 1));
            let mut first = next;
            while first > 0 && a.time_of(first - 1) >= lo {
                first -= 1;
            }
            while first < n && a.time_of(first) < lo {
                first += 1;
            }
            next = first;
            while next < n && a.time_of(next) < hi {
                next += 1;
            }
            let held = first.checked_sub(1);
            let expect = if next > first {
                let vals = (first..next).map(|i| a.samples[i]).chain(held.map(|h| a.samples[h]));
                Some(vals.fold((f32::INFINITY, f32::NEG_INFINITY), |(l, h), v| (l.min(v), h.max(v))))
            } else {
                held.filter(|_| next < n).map(|h| (a.samples[h], a.samples[h]))
            };
            assert_eq!(*col, expect, "column {c} of {grid:?}");
        }
    }
}

#[test]
fn event_counts_per_column_match_a_scan_of_a_real_ftrace() {
    let prepared = prepare(load("ftrace/virtio_blk_direct_read.txt"));
    let src = &prepared.source;
    let (lo, hi) = src.time_range().unwrap();
    let mut lanes = 0;
    for lane in &prepared.lanes {
        let (events, index) = match &lane.kind {
            LaneKind::Cpu(c) => (&c.events, &c.index),
            LaneKind::Events(e) => (&e.events, &e.index),
            _ => continue,
        };
        lanes += 1;
        for grid in grids(lo, hi) {
            let counts = lod::count_columns(events.len(), |i| src.events.ts[events[i] as usize], &grid);
            let mut brute = vec![0u32; grid.columns];
            for &e in events {
                let t = src.events.ts[e as usize];
                // The column from the formula, nudged onto the exact integer edges.
                let guess = ((t as f64 - grid.t0) / grid.ps_per_px).floor() as i64;
                let hit = (guess - 1..=guess + 1)
                    .filter(|&c| c >= 0 && (c as usize) < grid.columns)
                    .find(|&c| t >= grid.edge(c as usize) && t < grid.edge(c as usize + 1));
                if let Some(c) = hit {
                    brute[c as usize] += 1;
                }
            }
            assert_eq!(counts, brute, "{} {grid:?}", lane.name);
            // What the timeline draws: the same counts through the lane's bucket index.
            let time = |i: usize| src.events.ts[events[i] as usize];
            assert_eq!(lod::count_columns_indexed(events.len(), time, index, &grid), brute, "{}", lane.name);
        }
    }
    assert!(lanes > 3);
}

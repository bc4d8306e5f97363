//! The flight recorder: triggers (`ANALYSIS>DURATION`), every pair that crosses one
//! counted, and the window around it (from PRE before its start to POST after its end)
//! saved from the ring as `OUT/NNNN-ANALYSIS-<seconds>s/`: `kernel.dat` with its pages
//! re-encoded to hold only the window's events, and `session.latscope.json`, which reopens
//! it with the rules and both cursors on the pair.

use crate::recorder::{Live, Options, Store};
use crate::{RecordError, save};
use latscope_analysis::live::Standing;
use latscope_analysis::report::threshold::parse_duration_ns;
use latscope_analysis::spec::AlignSpec;
use latscope_importers::tracedat::live::{CpuPages, KernelMeta, PageDecoder, write_v6};
use latscope_model::{PS_PER_NS, Placement};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// `--trigger 'ANALYSIS>DURATION'`.
#[derive(Debug, Clone, PartialEq)]
pub struct Trigger {
    pub analysis: String,
    pub over_ns: f64,
}

impl Trigger {
    pub fn parse(text: &str) -> Result<Trigger, RecordError> {
        let bad = || {
            RecordError::Usage(format!(
                "--trigger {text:?}: expected ANALYSIS>DURATION, e.g. 'block>10ms' (ANALYSIS is a --preset or --rule name)"
            ))
        };
        let (analysis, duration) = text.rsplit_once('>').ok_or_else(bad)?;
        let analysis = analysis.trim();
        let over_ns = parse_duration_ns(duration.trim()).ok_or_else(bad)?;
        if analysis.is_empty() {
            return Err(bad());
        }
        Ok(Trigger { analysis: analysis.to_owned(), over_ns })
    }
}

/// A window the flight recorder saved.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Saved {
    pub dir: PathBuf,
    pub analysis: String,
    pub latency_ns: f64,
    /// The pair's ends, raw clock nanoseconds.
    pub start_raw: u64,
    pub end_raw: u64,
    /// Records the window's kernel.dat holds (for a logic analyzer alone, the samples of
    /// its logic.sr).
    pub records: u64,
}

/// A crossing whose window is not complete yet.
#[derive(Debug, Clone)]
pub(crate) struct Pending {
    pub(crate) analysis: String,
    pub(crate) latency_ns: f64,
    pub(crate) start_raw: u64,
    pub(crate) end_raw: u64,
    pub(crate) start_s: f64,
}

/// The flight recorder's state.
#[derive(Debug)]
pub struct Flight {
    triggers: Vec<crate::Trigger>,
    pre_ns: u64,
    post_ns: u64,
    max_saves: Option<u64>,
    dir: PathBuf,
    rules: Vec<String>,
    align: Option<AlignSpec>,
    /// Per analysis: the latest pair end already looked at (raw ns).
    seen_end: BTreeMap<String, u64>,
    /// Per analysis: pairs added that ended too close to the newest data to look at yet.
    waiting: BTreeMap<String, Vec<Seen>>,
    pending: Vec<Pending>,
    pub crossings: u64,
    pub saved: Vec<Saved>,
    /// Crossings not saved (over --max-saves).
    pub unsaved: u64,
}

/// A pair as the flight recorder looks at it, on the raw clock.
#[derive(Debug, Clone, Copy)]
struct Seen {
    start_raw: u64,
    end_raw: u64,
    latency_ns: f64,
}

/// Pairs ending this close to the newest data wait a tick: another CPU's pages may still
/// hold events before them.
pub(crate) const SETTLE_NS: u64 = 200_000_000;

impl Flight {
    pub(crate) fn new(opts: &Options, dir: PathBuf) -> Flight {
        Flight {
            triggers: opts.triggers.clone(),
            align: opts.align.clone(),
            pre_ns: opts.keep_ns.0,
            post_ns: opts.keep_ns.1,
            max_saves: opts.max_saves,
            dir,
            rules: opts.spec_texts.clone(),
            seen_end: BTreeMap::new(),
            waiting: BTreeMap::new(),
            pending: Vec::new(),
            crossings: 0,
            saved: Vec::new(),
            unsaved: 0,
        }
    }

    /// The oldest raw time a pending window still needs (the ring keeps it).
    pub fn keep_from(&self) -> Option<u64> {
        self.pending.iter().map(|p| p.start_raw.saturating_sub(self.pre_ns)).min()
    }

    /// The oldest raw time still needed once pairs up to `newest` were looked at: a window
    /// waiting, or PRE before the pairs not looked at yet (those ending after `newest` less
    /// the settling time), which may still cross.
    pub(crate) fn needed_from(&self, newest: u64) -> u64 {
        let unseen = newest.saturating_sub(SETTLE_NS).saturating_sub(self.pre_ns);
        self.keep_from().map_or(unseen, |k| k.min(unseen))
    }

    /// Looks at the pairs the analyses added (`Standing::added`; their times are
    /// picoseconds after `origin_ns`) that were not seen before; each crossing is counted
    /// and, within --max-saves, waits for its window.
    pub fn observe(
        &mut self,
        standings: &[Standing],
        origin_ns: u64,
        newest: u64,
        first_raw: u64,
        last: bool,
    ) {
        let horizon = if last { u64::MAX } else { newest.saturating_sub(SETTLE_NS) };
        for o in standings {
            let Some(t) = self.triggers.iter().find(|t| t.analysis == o.name) else { continue };
            let over = t.over_ns;
            let seen = self.seen_end.get(&o.name).copied();
            let mut latest = seen;
            // Pairs that ended too recently wait for the next look, unless the analysis
            // gives all its pairs again.
            let waiting = self.waiting.remove(&o.name).filter(|_| !o.anew).unwrap_or_default();
            let to_raw = |ps: i64| origin_ns.saturating_add_signed(ps.div_euclid(PS_PER_NS));
            // A sample still open (a polling run going on) is handed on once it ends, or
            // as it stands when the recording does.
            let open = if last { &o.open[..] } else { &[] };
            let added = o.added.iter().chain(open).map(|s| Seen {
                start_raw: to_raw(s.start),
                end_raw: to_raw(s.end),
                latency_ns: s.latency() as f64 / PS_PER_NS as f64,
            });
            let mut still = Vec::new();
            for s in waiting.into_iter().chain(added) {
                if s.end_raw > horizon {
                    still.push(s);
                    continue;
                }
                if seen.is_some_and(|seen| s.end_raw <= seen) {
                    continue;
                }
                latest = Some(latest.map_or(s.end_raw, |l| l.max(s.end_raw)));
                if s.latency_ns <= over {
                    continue;
                }
                self.crossings += 1;
                if self.max_saves.is_some_and(|m| self.saved.len() as u64 + self.pending.len() as u64 >= m) {
                    self.unsaved += 1;
                    continue;
                }
                self.pending.push(Pending {
                    analysis: o.name.clone(),
                    latency_ns: s.latency_ns,
                    start_raw: s.start_raw,
                    end_raw: s.end_raw,
                    start_s: s.start_raw.saturating_sub(first_raw) as f64 / 1e9,
                });
            }
            if !still.is_empty() {
                self.waiting.insert(o.name.clone(), still);
            }
            if let Some(l) = latest {
                self.seen_end.insert(o.name.clone(), l);
            }
        }
    }

    /// Saves the windows whose POST has been recorded (all of them when `last`).
    /// With a logic analyzer beside the kernel, each window holds its samples too.
    pub(crate) fn save_due(
        &mut self,
        meta: &KernelMeta,
        decoder: &PageDecoder,
        store: &Store,
        logic: Option<&crate::sigrok::LogicCapture>,
        last: bool,
    ) -> Vec<Live> {
        let mut said = Vec::new();
        for due in self.take_due(store.newest, last) {
            let kernel = KernelWindow { meta, decoder, store };
            let saved = save_window(
                kernel,
                logic,
                &due.dir,
                due.window,
                &due.pending,
                (&self.rules, self.align.as_ref()),
            );
            said.push(self.note_saved(due, saved));
        }
        said
    }

    /// The crossings whose window has been recorded up to `newest` (raw ns; all of them when
    /// `last`), taken from those pending, each with its folder and its window (raw ns).
    pub(crate) fn take_due(&mut self, newest: u64, last: bool) -> Vec<Due> {
        let (due, keep): (Vec<Pending>, Vec<Pending>) = std::mem::take(&mut self.pending)
            .into_iter()
            .partition(|p| last || p.end_raw.saturating_add(self.post_ns) <= newest);
        self.pending = keep;
        due.into_iter()
            .enumerate()
            .map(|(i, p)| {
                let n = self.saved.len() + i + 1;
                let dir = self.dir.join(format!("{n:04}-{}-{:.3}s", file_safe(&p.analysis), p.start_s));
                let window =
                    (p.start_raw.saturating_sub(self.pre_ns), p.end_raw.saturating_add(self.post_ns));
                Due { pending: p, dir, window }
            })
            .collect()
    }

    /// Keeps a window's save (or says why it failed), and the crossing's live line.
    pub(crate) fn note_saved(&mut self, due: Due, saved: Result<Saved, RecordError>) -> Live {
        let path = match saved {
            Ok(s) => {
                let d = s.dir.clone();
                self.saved.push(s);
                Some(d)
            }
            Err(e) => {
                eprintln!("latscope: window {} not saved: {e}", due.dir.display());
                None
            }
        };
        Live::Crossing {
            analysis: due.pending.analysis,
            latency_ns: due.pending.latency_ns,
            start_s: due.pending.start_s,
            saved: path,
        }
    }

    /// The analyses' texts, as sessions list them.
    pub(crate) fn rules(&self) -> &[String] {
        &self.rules
    }
}

/// A crossing whose window is complete: where it is saved, and the window (raw ns).
#[derive(Debug)]
pub(crate) struct Due {
    pub pending: Pending,
    pub dir: PathBuf,
    pub window: (u64, u64),
}

fn file_safe(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' }).collect()
}

/// Where a window's kernel records come from.
struct KernelWindow<'a> {
    meta: &'a KernelMeta,
    decoder: &'a PageDecoder,
    store: &'a Store,
}

fn save_window(
    kernel: KernelWindow<'_>,
    logic: Option<&crate::sigrok::LogicCapture>,
    dir: &Path,
    (from, to): (u64, u64),
    p: &Pending,
    (rules, align): (&[String], Option<&AlignSpec>),
) -> Result<Saved, RecordError> {
    let KernelWindow { meta, decoder, store } = kernel;
    let mut records = 0;
    let mut origin: Option<u64> = None;
    let cut: Vec<Vec<u8>> = store
        .joined_between(from, to)
        .iter()
        .map(|pages| {
            let (out, kept) = decoder.cut(pages, from, to);
            records += kept;
            if let Some(first) = decoder.page_span(&out).map(|s| s.first) {
                origin = Some(origin.map_or(first, |o| o.min(first)));
            }
            out
        })
        .collect();
    // A trace.dat's times count from the whole second of its earliest page (as the reader
    // opening it will), which is where the session's cursors are measured from.
    let origin_ns = origin.unwrap_or(from) / 1_000_000_000 * 1_000_000_000;
    let cursor = |raw: u64| (raw as f64 - origin_ns as f64) * PS_PER_NS as f64;
    // The logic analyzer's samples in the same window, placed by the host's clock as the
    // whole recording's are: its first sample's time on the kernel file's timeline.
    let logic_cut = logic.and_then(|l| {
        let (rate, placed) = (l.spec.samplerate_hz()?, l.placement()?);
        let sample_at = |raw: u64| crate::sigrok::samples_in(raw.saturating_sub(placed.at_ns), rate);
        let cut = l.window(sample_at(from), sample_at(to))?;
        let first_ns = placed.at_ns + crate::sigrok::ns_of_sample(cut.first_sample, rate);
        let offset_ps = (i128::from(first_ns) - i128::from(origin_ns)) * i128::from(PS_PER_NS);
        Some((cut, i64::try_from(offset_ps).unwrap_or(0), crate::placed_by(placed.uncertainty_ns)))
    });
    save::folder(dir, |tmp| {
        if let Some((cut, _, _)) = &logic_cut {
            cut.save(&tmp.join("logic.sr"))?;
        }
        save::file(&tmp.join("kernel.dat"), |w| {
            let mut readers: Vec<&[u8]> = cut.iter().map(Vec::as_slice).collect();
            let mut cpus: Vec<CpuPages<'_>> = readers
                .iter_mut()
                .map(|r| CpuPages { len: r.len() as u64, data: r as &mut dyn Read })
                .collect();
            write_v6(meta, &mut cpus, w).map(|_| ())
        })?;
        // Fitted on the markers inside this window, when asked to, as the files are saved.
        let placed = logic_cut.as_ref().zip(logic).map(|((_, offset, how), l)| {
            let (p, how) = fit_logic(tmp, align, *offset, how.clone());
            (p, how, l.spec.decoders.as_slice())
        });
        let session = session_json_with(rules, Some((cursor(p.start_raw), cursor(p.end_raw))), placed);
        save::file(&tmp.join("session.latscope.json"), |w| w.write_all(session.as_bytes()))
    })?;
    Ok(Saved {
        dir: dir.to_path_buf(),
        analysis: p.analysis.clone(),
        latency_ns: p.latency_ns,
        start_raw: p.start_raw,
        end_raw: p.end_raw,
        records,
    })
}

/// A session (docs/ARCHITECTURE.md "Session files") opening `kernel.dat` beside it with
/// `rules`, and the cursors on a pair when given (common-timeline picoseconds).
pub fn session_json(rules: &[String], cursors: Option<(f64, f64)>) -> String {
    session_json_with(rules, cursors, None)
}

/// A session opening a logic capture alone (`logic.sr` beside it) with its decoder stacks
/// (decoded again on open), `rules`, and the cursors on a pair when given (picoseconds from
/// the capture's first sample).
pub fn logic_session_json(decoders: &[String], rules: &[String], cursors: Option<(f64, f64)>) -> String {
    session_text(vec![logic_file(serde_json::json!({ "path": "logic.sr" }), decoders)], rules, cursors)
}

/// [`session_json`], with `logic.sr` beside `kernel.dat` when `logic` is given: its
/// placement onto the kernel's timeline, how it was placed (with the uncertainty), and the
/// decoder stacks it was decoded with (decoded again on open).
pub fn session_json_with(
    rules: &[String],
    cursors: Option<(f64, f64)>,
    logic: Option<(Placement, String, &[String])>,
) -> String {
    let mut files = vec![serde_json::json!({ "path": "kernel.dat" })];
    if let Some((placement, placed_by, decoders)) = logic {
        let mut file =
            serde_json::json!({ "path": "logic.sr", "offset_ps": placement.offset, "placed_by": placed_by });
        if placement.drift_ppm != 0.0 {
            file["drift_ppm"] = serde_json::json!(placement.drift_ppm);
        }
        files.push(logic_file(file, decoders));
    }
    session_text(files, rules, cursors)
}

/// Where a logic capture saved in `dir` beside its `kernel.dat` sits on the kernel's
/// timeline, and how that was found: `offset_ps` by the host's clocks (`how`), or with
/// `--align` fitted on the shared markers of the two saved files, read back as the session
/// will open them. When the markers do not fit, the host's clocks stay, and `how` says why.
pub(crate) fn fit_logic(
    dir: &Path,
    align: Option<&AlignSpec>,
    offset_ps: i64,
    how: String,
) -> (Placement, String) {
    let by_host = Placement::new(offset_ps, 0.0);
    let Some(spec) = align else { return (by_host, how) };
    let open = |name: &str| {
        latscope_importers::open(&dir.join(name), &latscope_importers::LoadControl::new())
            .map_err(|e| e.to_string())
    };
    let fitted = open("kernel.dat").and_then(|kernel| {
        let logic = open("logic.sr")?;
        let mut placements = [Placement::default(), by_host];
        latscope_analysis::align::apply_align(spec, &[&kernel, &logic], &mut placements)
            .map_err(|e| e.to_string())
    });
    match fitted {
        Ok(a) => {
            let rms = latscope_analysis::units::human_ns(a.residual_rms_ps / 1e3);
            let drift = if a.placement.drift_ppm != 0.0 {
                format!(", drift {:+.3} ppm", a.placement.drift_ppm)
            } else {
                String::new()
            };
            (a.placement, format!("{} shared markers (rms {rms}{drift})", a.matched))
        }
        Err(why) => {
            let host = how.split_once(": align on").map_or(how.as_str(), |(host, _)| host);
            (by_host, format!("{host}; the shared markers did not fit ({why})"))
        }
    }
}

/// A session's `files` entry of a logic capture, with its decoders when it has any.
fn logic_file(mut file: serde_json::Value, decoders: &[String]) -> serde_json::Value {
    if !decoders.is_empty() {
        file["decoders"] = serde_json::json!(decoders);
    }
    file
}

/// A session file's text (docs/ARCHITECTURE.md "Session files"): `files`, `rules`, and both
/// cursors when given.
fn session_text(files: Vec<serde_json::Value>, rules: &[String], cursors: Option<(f64, f64)>) -> String {
    let mut v = serde_json::json!({ "latscope_session": 1, "files": files, "rules": rules });
    if let Some((a, b)) = cursors {
        v["cursor_a"] = serde_json::json!(a);
        v["cursor_b"] = serde_json::json!(b);
    }
    let mut text = serde_json::to_string_pretty(&v).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triggers_parse_an_analysis_and_a_duration() {
        assert_eq!(
            Trigger::parse("block>10ms").unwrap(),
            Trigger { analysis: "block".into(), over_ns: 10e6 }
        );
        assert_eq!(Trigger::parse(" irq-handler > 20us ").unwrap().over_ns, 20e3);
        // A rule name may hold `>` (`a->b`): the last one splits.
        assert_eq!(Trigger::parse("a->b>1ms").unwrap().analysis, "a->b");
        for bad in ["block", ">10ms", "block>", "block>soon"] {
            assert!(Trigger::parse(bad).is_err(), "{bad}");
        }
    }

    /// A polling run still going stands open: the flight recorder does not look at it
    /// (its end may still move, and a trigger would see it again, longer) until it ends
    /// and an update adds it, or the recording stops with it going.
    #[test]
    fn a_sample_still_open_crosses_once_it_ends_or_the_recording_does() {
        let opts = crate::Options {
            triggers: vec![Trigger::parse("loop>1ms").unwrap()],
            keep_ns: (0, 0),
            ..Default::default()
        };
        let mut flight = Flight::new(&opts, PathBuf::from("unused"));
        // Runs from 1 s (raw) lasting `end_ms`, the data reaching 3 s.
        let run =
            |end_ms: i64| latscope_analysis::outcome::Sample::new(0, end_ms * 1_000_000_000, String::new());
        let standing = |added: Vec<_>, open: Vec<_>| latscope_analysis::live::Standing {
            name: "loop".into(),
            added,
            open,
            anew: false,
            count: 1,
            p50_ns: None,
            p99_ns: None,
            max_ns: None,
        };
        let (origin, second) = (1_000_000_000, 1_000_000_000);
        flight.observe(&[standing(vec![], vec![run(4)])], origin, 3 * second, origin, false);
        assert_eq!(flight.crossings, 0, "open: not looked at");
        flight.observe(&[standing(vec![run(5)], vec![])], origin, 3 * second, origin, false);
        assert_eq!(flight.crossings, 1, "ended: one crossing");
        assert_eq!(flight.pending[0].end_raw, origin + 5_000_000);
        // Another still going when the recording stops: final then.
        flight.observe(&[standing(vec![], vec![run(6)])], origin, 3 * second, origin, true);
        assert_eq!(flight.crossings, 2, "the last tick takes it");
    }

    #[test]
    fn window_folders_have_file_safe_names() {
        assert_eq!(file_safe("req"), "req");
        assert_eq!(file_safe("a[x=1]->b"), "a_x_1_-_b");
    }
}

//! Test helpers: real captures, and sigrok-cli's protocol decoders as the oracle.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use latscope_decoders::{Decoded, Inputs};
use latscope_model::Source;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The corpus file `REL`: samples/corpus's copy, or the shared corpus's (a panic saying it
/// is needed when it is absent; tests reading it are marked `have_shared_corpus`).
pub fn corpus(rel: &str) -> PathBuf {
    latscope_testkit::corpus(rel)
}

/// The capture and its sample rate.
pub fn open(path: &Path) -> (Source, Option<u64>) {
    let src = latscope_importers::open(path, &latscope_importers::LoadControl::new())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let rate = src
        .metadata
        .iter()
        .find(|(k, _)| k == "samplerate")
        .and_then(|(_, v)| latscope_importers::sigrok::parse_samplerate(v).ok());
    (src, rate)
}

/// Decodes `spec` on the loaded capture. When it is a `.sr` with logic channels only, it is
/// also decoded the two ways `latscope decode` can read it, and the three results must be
/// equal: straight from its sample numbers (`sigrok::parse_logic_ticks`), and streamed, the
/// decoder fed each flip as the capture's chunks are read (`sigrok::read_logic`).
pub fn decode(src: &Source, rate: Option<u64>, spec: &str) -> Decoded {
    let d = latscope_decoders::decode(spec, &Inputs::of_source(src, rate))
        .unwrap_or_else(|e| panic!("{spec}: {e}"));
    if let Some(path) = src.path.as_deref().filter(|p| p.extension().is_some_and(|e| e == "sr")) {
        let data = std::fs::read(path).unwrap();
        let ticks =
            latscope_importers::sigrok::parse_logic_ticks(&data, &latscope_importers::LoadControl::new())
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        if let (Some(rate), true) = (ticks.samplerate, ticks.analog.is_empty()) {
            let end = ticks.samples.saturating_sub(1) as i64;
            let lines: Vec<latscope_decoders::Line> = ticks
                .channels
                .into_iter()
                .map(|c| latscope_decoders::Line::from_ticks(&c.name, c.initial, c.ticks, end))
                .collect();
            let from_ticks = latscope_decoders::decode(spec, &Inputs::of_lines(&lines, rate)).unwrap();
            assert_eq!(
                from_ticks.annotations,
                d.annotations,
                "{spec} on {}: read as sample numbers",
                path.display()
            );
            assert_eq!(from_ticks.errors, d.errors, "{spec} on {}", path.display());
            let streamed =
                streamed(&data, spec).unwrap_or_else(|| panic!("{}: not streamed", path.display()));
            assert_eq!(streamed.annotations, d.annotations, "{spec} on {}: streamed", path.display());
            assert_eq!(streamed.errors, d.errors, "{spec} on {}: streamed", path.display());
        } else {
            println!("{}: decoded from the loaded capture only (it has analog channels)", path.display());
        }
    }
    d
}

/// When a live decode asks which annotations are final.
#[derive(Debug, Clone, Copy)]
pub enum Ask {
    /// After every that many changes.
    Every(usize),
    /// After every change that leaves the named channel low (bit resolved from the layout).
    WhileLow(&'static str),
}

/// One question of a live decode: the sample of the change it followed, how many
/// annotations had been handed on after it, and the reach it said.
#[derive(Debug, Clone, Copy)]
pub struct Question {
    pub sample: u64,
    pub taken: usize,
    pub reach: latscope_model::Ps,
}

/// The decoder stack fed as the capture is read; with `ask` (its bit for `WhileLow`), asked
/// which annotations are final as a live recording asks.
struct Streamed {
    decoder: latscope_decoders::StreamDecoder,
    ask: Option<(Ask, u32)>,
    taken: Vec<latscope_decoders::Annotation>,
    reach: latscope_model::Ps,
    changes: usize,
    questions: Vec<Question>,
    spec: String,
}

impl latscope_importers::sigrok::LogicVisitor for Streamed {
    fn first(&mut self, levels: u64) -> Result<(), latscope_importers::ParseFailure> {
        self.decoder.start(levels);
        Ok(())
    }
    fn change(
        &mut self,
        sample: u64,
        changed: u64,
        levels: u64,
    ) -> Result<(), latscope_importers::ParseFailure> {
        self.decoder.change(sample as i64, changed, levels);
        self.changes += 1;
        let asked = match self.ask {
            Some((Ask::Every(every), _)) => self.changes.is_multiple_of(every),
            Some((Ask::WhileLow(_), bit)) => (levels >> bit) & 1 == 0,
            None => false,
        };
        if asked {
            let before = self.taken.len();
            let reach = self
                .decoder
                .take_final(sample as i64 + 1, &mut self.taken)
                .unwrap_or_else(|| panic!("{}: cannot say which annotations are final", self.spec));
            let new = &self.taken[before..];
            let spec = &self.spec;
            assert!(reach >= self.reach, "{spec}: the reach went back from {} to {reach}", self.reach);
            assert!(new.iter().all(|a| a.start >= self.reach), "{spec}: taken before the last reach");
            assert!(new.iter().all(|a| a.start < reach), "{spec}: taken at or after the reach");
            self.reach = reach;
            self.questions.push(Question { sample, taken: self.taken.len(), reach });
        }
        Ok(())
    }
}

/// `spec` decoded from the `.sr` bytes `data` as they are read, asked as `ask` says which
/// annotations are final if given (`None`: not streamable): those handed on before the end,
/// the questions asked, and what the end gave.
fn stream(
    data: &[u8],
    spec: &str,
    ask: Option<Ask>,
) -> Option<(Vec<latscope_decoders::Annotation>, Vec<Question>, Decoded)> {
    let (streamed, end, _) =
        latscope_importers::sigrok::read_logic(data, &latscope_importers::LoadControl::new(), |layout| {
            let channels: Vec<(&str, u32)> = layout.channels.iter().map(|(n, b)| (n.as_str(), *b)).collect();
            let decoder = latscope_decoders::StreamDecoder::new(
                spec,
                &channels,
                latscope_decoders::Clock::Samples(layout.samplerate?),
            )
            .unwrap_or_else(|e| panic!("{spec}: {e}"));
            let wanted = decoder.wanted();
            let ask = ask.map(|ask| {
                let bit = match ask {
                    Ask::Every(_) => 0,
                    Ask::WhileLow(name) => {
                        channels
                            .iter()
                            .find(|(n, _)| *n == name)
                            .unwrap_or_else(|| panic!("no channel {name} in {channels:?}"))
                            .1
                    }
                };
                (ask, bit)
            });
            let streamed = Streamed {
                decoder,
                ask,
                taken: Vec::new(),
                reach: latscope_model::Ps::MIN,
                changes: 0,
                questions: Vec::new(),
                spec: spec.to_owned(),
            };
            Some((streamed, wanted))
        })
        .unwrap()?;
    let rest = streamed.decoder.finish(end.samples.saturating_sub(1) as i64).unwrap();
    Some((streamed.taken, streamed.questions, rest))
}

/// `spec` decoded from the `.sr` bytes `data` as they are read (`None`: not streamable).
pub fn streamed(data: &[u8], spec: &str) -> Option<Decoded> {
    stream(data, spec, None).map(|(_, _, decoded)| decoded)
}

/// `spec` decoded from the `.sr` bytes `data` as a live recording decodes them: asked as
/// `ask` says which annotations are final ([`StreamDecoder::take_final`]), each handed on
/// starting at or after the reach said before and before the reach said with it. Returns
/// those handed on before the end, the questions asked, and what the end gave.
///
/// [`StreamDecoder::take_final`]: latscope_decoders::StreamDecoder::take_final
pub fn streamed_live(
    data: &[u8],
    spec: &str,
    ask: Ask,
) -> (Vec<latscope_decoders::Annotation>, Vec<Question>, Decoded) {
    stream(data, spec, Some(ask)).unwrap_or_else(|| panic!("{spec}: not streamed"))
}

/// One annotation as sigrok-cli prints it with `--protocol-decoder-samplenum`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sig {
    pub ss: i64,
    pub es: i64,
    pub text: String,
}

/// `sigrok-cli -i FILE -P DECODERS -A ANNOTATIONS --protocol-decoder-samplenum`, parsed.
pub fn sigrok(path: &Path, decoders: &str, annotations: &str) -> Vec<Sig> {
    let out =
        latscope_testkit::Need::SigrokCli.output(Command::new("sigrok-cli").arg("-i").arg(path).args([
            "-P",
            decoders,
            "-A",
            annotations,
            "--protocol-decoder-samplenum",
        ]));
    assert!(out.status.success(), "sigrok-cli failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let (span, rest) = l.split_once(' ')?;
            let (ss, es) = span.split_once('-')?;
            let (_, text) = rest.split_once(": ")?;
            Some(Sig { ss: ss.parse().ok()?, es: es.parse().ok()?, text: text.to_owned() })
        })
        .collect()
}

/// Our annotations of `row` as (start_sample, end_sample, text).
pub fn rows(d: &Decoded, decoder: &str, row: &str) -> Vec<(i64, i64, String)> {
    d.annotations
        .iter()
        .filter(|a| a.decoder == decoder && a.row == row)
        .map(|a| (a.start_sample.unwrap(), a.end_sample.unwrap(), a.text.to_string()))
        .collect()
}

pub fn uint(a: &latscope_decoders::Annotation, field: &str) -> u64 {
    match a.field(field) {
        Some(latscope_decoders::Value::UInt(v) | latscope_decoders::Value::Hex(v)) => *v,
        Some(latscope_decoders::Value::Bool(b)) => u64::from(*b),
        other => panic!("{field}: {other:?} in {a:?}"),
    }
}

/// Equal lists, or a panic showing the first difference with a little context.
pub fn assert_same<T: std::fmt::Debug + PartialEq>(ours: &[T], want: &[T], what: &str) {
    if ours == want {
        return;
    }
    let i = ours.iter().zip(want).position(|(a, b)| a != b).unwrap_or(ours.len().min(want.len()));
    let lo = i.saturating_sub(3);
    panic!(
        "{what}: first difference at {i} of {} (ours) / {} (sigrok)\n ours: {:?}\n want: {:?}",
        ours.len(),
        want.len(),
        &ours[lo..(i + 4).min(ours.len())],
        &want[lo..(i + 4).min(want.len())]
    );
}

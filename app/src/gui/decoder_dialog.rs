//! Protocol decoders in the workbench: the "Add decoder…" dialog (pick a decoder of the
//! engine's registry, map its channels — guessed by the engine from the names each role
//! usually goes by, through the one name resolver — and set its options, the spec checked
//! as it is edited, with what the command line would say of its channels: ambiguous names,
//! channels that never toggle) and the decode job's work: the source copied with the
//! annotations attached as span tracks and events, its lanes prepared with each annotation
//! row right under the last channel it decodes and each slice linked to its event, so a
//! click inspects it and the table and search list it. The specs are kept in the source's
//! metadata (`decoder`), which is how a session saves them.

use super::document::SourceId;
use super::prepare::{LaneKind, Prepared, prepare};
use latscope_decoders::spec::Stack;
use latscope_engine::channels::{self, ChannelName, Guess};
use latscope_engine::registry::{DecoderInfo, Registry};
use latscope_model::{Ps, Source, Sym};

pub use latscope_engine::decode::specs_of;

/// The dialog's state.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DecoderDialog {
    pub open: bool,
    pub source: Option<SourceId>,
    /// The decoder chosen, by its registry name; a stacked one (SD over SPI) reads the
    /// channels of the decoder under it.
    pub decoder: String,
    /// (role, channel name; empty for none), of the decoder that reads the channels.
    pub channels: Vec<(String, String)>,
    /// The options of each stage, the channel reader's first: (decoder, `key=value,…`).
    pub options: Vec<(String, String)>,
    /// The source's channels.
    pub names: Vec<ChannelName>,
    /// The decoder specs the source already has (decoding one again is refused).
    pub existing: Vec<String>,
    /// The spec as assembled, and what is wrong with it (checked against the source's
    /// channel names and every option, without decoding).
    pub spec: String,
    pub problem: Option<String>,
    /// Roles left empty because their usual names fit several channels.
    pub unguessed: Vec<String>,
    /// What the command line would say of the channels: a name that fits several, a channel
    /// that never toggles.
    pub notes: Vec<String>,
}

/// The decoders a channel reader stacks under `decoder`, base first.
pub fn stages<'r>(registry: &'r Registry, decoder: &str) -> Vec<&'r DecoderInfo> {
    let mut out = Vec::new();
    let mut next = registry.decoder(decoder);
    while let Some(d) = next {
        out.insert(0, d);
        next = d.stacks_on.as_deref().and_then(|b| registry.decoder(b));
    }
    out
}

impl DecoderDialog {
    /// Opens the dialog on `source` of `src`, with the decoder whose required channels the
    /// names fill best (UART when nothing fits better).
    pub fn open_on(registry: &Registry, src: &Source, source: SourceId) -> Self {
        let names = channels::channels_of(src);
        let mut d =
            Self { open: true, source: Some(source), names, existing: specs_of(src), ..Self::default() };
        let plain: Vec<&str> = d.names.iter().map(|n| n.name.as_str()).collect();
        // A stacked decoder (SD over SPI) only when asked for: its base wins a tie.
        let score = |info: &DecoderInfo| {
            let base = stages(registry, &info.name)[0];
            let found = base
                .channels
                .iter()
                .filter(|c| matches!(channels::guess(c, &plain, &[]), Guess::One(_)))
                .count();
            // The native decoders stay the default where they exist: a sigrok one is chosen
            // only when it finds more of the channels.
            let native = matches!(info.runner, latscope_engine::registry::DecoderRunner::Native);
            (found, info.stacks_on.is_none(), native)
        };
        let decoders = registry.decoders();
        let best =
            (0..decoders.len()).max_by_key(|&i| (score(&decoders[i]), std::cmp::Reverse(i))).unwrap_or(0);
        d.set_decoder(registry, decoders.get(best).map_or("uart", |x| x.name.as_str()));
        d
    }

    /// Switches to `decoder`, guessing its channels and setting its default options.
    pub fn set_decoder(&mut self, registry: &Registry, decoder: &str) {
        self.decoder = decoder.to_owned();
        let stack = stages(registry, decoder);
        let plain: Vec<&str> = self.names.iter().map(|n| n.name.as_str()).collect();
        let mut taken: Vec<String> = Vec::new();
        let mut ambiguous = Vec::new();
        self.channels = stack
            .first()
            .map(|base| {
                base.channels
                    .iter()
                    .map(|role| {
                        let chosen = match channels::guess(role, &plain, &taken) {
                            Guess::One(name) => {
                                taken.push(name.clone());
                                name
                            }
                            Guess::Ambiguous { alias, candidates } => {
                                ambiguous.push(format!(
                                    "{}: `{alias}` could be {}: choose one",
                                    role.key,
                                    candidates.join(", ")
                                ));
                                String::new()
                            }
                            Guess::None => String::new(),
                        };
                        (role.key.clone(), chosen)
                    })
                    .collect()
            })
            .unwrap_or_default();
        // UART finds its rate by itself unless told.
        self.options = stack
            .iter()
            .map(|d| (d.name.clone(), if d.name == "uart" { "baud=auto".to_owned() } else { String::new() }))
            .collect();
        self.unguessed = ambiguous;
        self.check(registry);
    }

    /// The spec the dialog describes.
    pub fn assemble(&self) -> String {
        let mut parts = Vec::new();
        for (k, (decoder, options)) in self.options.iter().enumerate() {
            let mut params: Vec<String> = Vec::new();
            if k == 0 {
                params.extend(
                    self.channels
                        .iter()
                        .filter(|(_, ch)| !ch.trim().is_empty())
                        .map(|(r, ch)| format!("{r}={ch}")),
                );
            }
            params.extend(options.split(',').map(str::trim).filter(|o| !o.is_empty()).map(str::to_owned));
            parts.push(if params.is_empty() {
                decoder.clone()
            } else {
                format!("{decoder}:{}", params.join(","))
            });
        }
        parts.join(" | ")
    }

    /// Assembles the spec and checks it as the engine would run it, and notes what the
    /// command line would say of its channels.
    pub fn check(&mut self, registry: &Registry) {
        self.spec = self.assemble();
        self.problem = if self.existing.contains(&self.spec) {
            Some("this capture is already decoded with this spec".to_owned())
        } else {
            latscope_engine::decode::check(registry, &self.spec, &self.names).err().map(|e| e.to_string())
        };
        self.notes =
            channels::spec_notes(registry, &self.spec, &self.names).iter().map(ToString::to_string).collect();
    }
}

/// The decode job's work: a copy of `src` with the annotations of `specs` attached (the
/// engine's decode, refusing a spec the source already has), its lanes prepared, each
/// decoder's annotation rows moved right under the last channel it reads and each slice
/// linked to the event it starts.
pub fn decode_into(registry: &Registry, src: &Source, stacks: &[Stack]) -> latscope_engine::Result<Prepared> {
    let specs: Vec<String> = stacks.iter().map(|s| s.text.clone()).collect();
    let parts = latscope_engine::decode::decode_each(registry, src, &specs)?;
    let placed: Vec<(Vec<String>, Vec<String>)> = stacks
        .iter()
        .zip(&parts)
        .map(|(stack, d)| (spec_channels(registry, stack), decoded_rows(d)))
        .collect();
    let mut source = src.clone();
    latscope_engine::decode::attach(&mut source, &latscope_engine::decode::merged(parts), &specs)?;
    let mut prepared = prepare(source);
    if src.events.is_empty() {
        // A capture without events: the CPU lane would hold only the decoded events, which
        // their rows already show.
        prepared.lanes.retain(|l| !matches!(l.kind, LaneKind::Cpu(_)));
    }
    link_slices(&mut prepared);
    for (channels, rows) in &placed {
        place_rows(&mut prepared, channels, rows);
    }
    // The decoded events' own lanes (hidden at first: the rows show them) go last, not
    // before the capture's channels where a source's event lanes are prepared.
    let events = decoded_event_lanes(&prepared);
    let (last, first): (Vec<_>, Vec<_>) = std::mem::take(&mut prepared.lanes)
        .into_iter()
        .partition(|l| matches!(l.kind, LaneKind::Events(_)) && events.contains(&l.name));
    prepared.lanes = first.into_iter().chain(last).collect();
    Ok(prepared)
}

/// The span tracks a decode adds (`DECODER.ROW`).
fn decoded_rows(d: &latscope_decoders::Decoded) -> Vec<String> {
    let mut rows: Vec<String> = d.annotations.iter().map(|a| format!("{}.{}", a.decoder, a.row)).collect();
    rows.sort();
    rows.dedup();
    rows
}

/// The channel names a stack's first stage names (the values of its channel keys).
fn spec_channels(registry: &Registry, stack: &Stack) -> Vec<String> {
    let Some(first) = stack.stages.first() else { return Vec::new() };
    let Some(decoder) = registry.decoder(&first.name) else { return Vec::new() };
    first
        .params
        .iter()
        .filter(|p| decoder.channels.iter().any(|c| c.key == p.key))
        .map(|p| p.value.clone())
        .collect()
}

/// Moves the lanes named `rows` right after the last digital or analog lane whose track
/// `channels` name, resolved as the decoder resolved them.
fn place_rows(p: &mut Prepared, channels: &[String], rows: &[String]) {
    let signal: Vec<usize> = (0..p.lanes.len())
        .filter(|&i| matches!(p.lanes[i].kind, LaneKind::Digital { .. } | LaneKind::Analog { .. }))
        .collect();
    let names: Vec<&str> = signal.iter().map(|&i| p.lanes[i].name.as_str()).collect();
    let Some(anchor) = channels
        .iter()
        .filter_map(|c| latscope_model::resolve_name(names.iter().copied(), c, "channel").ok())
        .map(|k| signal[k])
        .max()
    else {
        return;
    };
    let moved: Vec<usize> = (0..p.lanes.len())
        .filter(|&i| {
            i > anchor && matches!(p.lanes[i].kind, LaneKind::Spans { .. }) && rows.contains(&p.lanes[i].name)
        })
        .collect();
    let mut lanes: Vec<Option<super::prepare::Lane>> =
        std::mem::take(&mut p.lanes).into_iter().map(Some).collect();
    let mut out = Vec::with_capacity(lanes.len());
    for i in 0..lanes.len() {
        if moved.contains(&i) {
            continue;
        }
        if let Some(l) = lanes[i].take() {
            out.push(l);
        }
        if i == anchor {
            out.extend(moved.iter().filter_map(|&m| lanes[m].take()));
        }
    }
    p.lanes = out;
}

/// Links each slice of a decoded span lane (`DECODER.ROW`) to the `DECODER_ROW` event that
/// starts it, so a click selects the event with its fields.
pub fn link_slices(p: &mut Prepared) {
    let src = &p.source;
    for lane in &mut p.lanes {
        let LaneKind::Spans { rows, .. } = &mut lane.kind else { continue };
        let Some((decoder, row)) = lane.name.split_once('.') else { continue };
        let Some(sym) = src.strings.lookup(latscope_decoders::event_name(decoder, row).as_bytes()) else {
            continue;
        };
        let starts: Vec<(Ps, u32)> = events_named(src, sym);
        for r in rows.iter_mut() {
            for (k, &start) in r.start.iter().enumerate() {
                let i = starts.partition_point(|e| e.0 < start);
                if let Some(&(t, idx)) = starts.get(i)
                    && t == start
                {
                    r.event[k] = idx;
                }
            }
        }
    }
}

fn events_named(src: &Source, name: Sym) -> Vec<(Ps, u32)> {
    src.events.iter().filter(|e| e.name() == name).map(|e| (e.ts(), e.index as u32)).collect()
}

/// The decoder each decoded lane belongs to, by lane name: its annotation rows (`sd.cmd`,
/// `false`) and the event lanes the decode added (`sd_cmd`, `sd_cmd_end`, `true`). The
/// track list groups them under their decoder.
pub fn decoded_lane_groups(p: &Prepared) -> std::collections::HashMap<String, (String, bool)> {
    let mut groups = std::collections::HashMap::new();
    for l in &p.lanes {
        if let (LaneKind::Spans { .. }, Some((decoder, row))) = (&l.kind, l.name.split_once('.')) {
            let ev = latscope_decoders::event_name(decoder, row);
            groups.insert(l.name.clone(), (decoder.to_owned(), false));
            groups.insert(format!("{ev}_end"), (decoder.to_owned(), true));
            groups.insert(ev, (decoder.to_owned(), true));
        }
    }
    groups
}

/// The event lanes a decode added (`sd_cmd`, `sd_cmd_end`, …): hidden at first, since the
/// annotation rows show them; they stay in the table and search.
pub fn decoded_event_lanes(p: &Prepared) -> Vec<String> {
    let mut names = Vec::new();
    for l in &p.lanes {
        if let (LaneKind::Spans { .. }, Some((decoder, row))) = (&l.kind, l.name.split_once('.')) {
            let ev = latscope_decoders::event_name(decoder, row);
            names.push(format!("{ev}_end"));
            names.push(ev);
        }
    }
    names
}

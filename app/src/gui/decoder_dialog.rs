//! Protocol decoders in the workbench: the "Add decoder…" dialog (pick a decoder, map its
//! channels — guessed from the names CLK/CMD/DAT0..3, SCK/MOSI/MISO/CS, SDA/SCL, TX/RX —
//! and set its options, the spec checked as it is edited) and the decode job's work: the
//! source copied with the annotations attached as span tracks and events (`latscope
//! decode`'s `Decoded::attach`), its lanes prepared with each annotation row right under
//! the last channel it decodes and each slice linked to its event, so a click inspects it
//! and the table and search list it. The spec is kept in the source's metadata
//! (`decoder`), which is how a session saves it.

use super::message::Message;
use super::prepare::{LaneKind, Prepared, prepare};
use latscope_decoders::Inputs;
use latscope_model::{AnalogTrack, DigitalTrack, Ps, Source, SourceKind, Sym};

/// The metadata key a decoded source records its decoder specs under.
pub const DECODER_KEY: &str = "decoder";

/// Decoders the dialog offers: (what the combo shows, first stage, stacked stage).
pub const CHOICES: &[(&str, &str, Option<&str>)] = &[
    ("UART", "uart", None),
    ("SPI", "spi", None),
    ("I2C", "i2c", None),
    ("SD (native: CMD, DAT0-3)", "sd", None),
    ("SD over SPI", "spi", Some("sd-spi")),
];

/// The channels of a decoder, in the order the dialog lists them, and whether each is
/// required.
pub fn roles(decoder: &str) -> &'static [(&'static str, bool)] {
    match decoder {
        "uart" => &[("rx", false), ("tx", false)],
        "spi" => &[("clk", true), ("mosi", false), ("miso", false), ("cs", false)],
        "i2c" => &[("scl", true), ("sda", true)],
        "sd" => &[
            ("clk", true),
            ("cmd", true),
            ("dat0", false),
            ("dat1", false),
            ("dat2", false),
            ("dat3", false),
        ],
        _ => &[],
    }
}

/// Names a channel goes by for a role, most specific first (compared without case, scope
/// prefix or punctuation).
fn aliases(role: &str) -> &'static [&'static str] {
    match role {
        "clk" => &["CLK", "SCK", "SCLK", "CLOCK", "SDCLK"],
        "cmd" => &["CMD", "SDCMD"],
        "dat0" => &["DAT0", "DATA0", "SDDAT0"],
        "dat1" => &["DAT1", "DATA1", "SDDAT1"],
        "dat2" => &["DAT2", "DATA2", "SDDAT2"],
        "dat3" => &["DAT3", "DATA3", "SDDAT3"],
        "mosi" => &["MOSI", "COPI", "SDI", "DI"],
        "miso" => &["MISO", "CIPO", "SDO", "DO"],
        "cs" => &["CS", "NCS", "CSN", "SS", "NSS", "CE"],
        "scl" => &["SCL", "SCK"],
        "sda" => &["SDA"],
        "tx" => &["TX", "TXD"],
        "rx" => &["RX", "RXD"],
        _ => &[],
    }
}

/// A channel name reduced for matching: upper case, letters and digits only, without a
/// `scope.` prefix.
fn key(name: &str) -> String {
    let last = name.rsplit('.').next().unwrap_or(name);
    last.chars().filter(char::is_ascii_alphanumeric).map(|c| c.to_ascii_uppercase()).collect()
}

/// The channel of `names` that role `role` most likely is: one named as an alias, else one
/// whose name ends with an alias after a separator (`SD_CLK`, `spi.SCK`); `None` when no
/// name fits or the fit is ambiguous.
pub fn guess(role: &str, names: &[String], taken: &[String]) -> Option<String> {
    let free = || names.iter().filter(|n| !taken.contains(n));
    for alias in aliases(role) {
        let exact: Vec<&String> = free().filter(|n| key(n) == *alias).collect();
        if let [one] = exact.as_slice() {
            return Some((*one).clone());
        }
    }
    for alias in aliases(role) {
        let ends: Vec<&String> = free()
            .filter(|n| {
                let last = n.rsplit('.').next().unwrap_or(n).to_ascii_uppercase();
                last.strip_suffix(alias).is_some_and(|head| head.ends_with(['_', '-', ' ', '(']))
            })
            .collect();
        if let [one] = ends.as_slice() {
            return Some((*one).clone());
        }
    }
    None
}

/// The dialog's state.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DecoderDialog {
    pub open: bool,
    pub source: usize,
    /// Index into [`CHOICES`].
    pub choice: usize,
    /// (role, channel name; empty for none).
    pub channels: Vec<(String, String)>,
    /// Options as `key=value,…` (`baud=auto`, `cpol=1`, `width=4`).
    pub options: String,
    /// The source's channels: (name, analog).
    pub names: Vec<(String, bool)>,
    /// The decoder specs the source already has (decoding one again is refused).
    pub existing: Vec<String>,
    /// The spec as assembled, and what is wrong with it (checked against the source's
    /// channel names and every option, without decoding).
    pub spec: String,
    pub problem: Option<String>,
}

impl DecoderDialog {
    /// Opens the dialog on `source` of `src`, with UART when nothing fits better.
    pub fn open_on(src: &Source, source: usize) -> Self {
        let mut names: Vec<(String, bool)> = src.digital.iter().map(|d| (d.name.clone(), false)).collect();
        names.extend(src.analog.iter().map(|a| (a.name.clone(), true)));
        let mut d = Self { open: true, source, names, existing: specs_of(src), ..Self::default() };
        // The decoder whose required channels the names fill best.
        let plain: Vec<String> = d.names.iter().map(|n| n.0.clone()).collect();
        // A stacked choice (SD over SPI) only when asked for: SPI wins a tie.
        let score = |choice: usize| {
            let (_, first, stacked) = CHOICES[choice];
            let found = roles(first).iter().filter(|(r, _)| guess(r, &plain, &[]).is_some()).count();
            (found, stacked.is_none())
        };
        d.choice = (0..CHOICES.len()).max_by_key(|&c| (score(c), std::cmp::Reverse(c))).unwrap_or(0);
        d.set_choice(d.choice);
        d
    }

    /// Switches to decoder `choice`, guessing its channels and default options.
    pub fn set_choice(&mut self, choice: usize) {
        self.choice = choice.min(CHOICES.len() - 1);
        let (_, first, _) = CHOICES[self.choice];
        let plain: Vec<String> = self.names.iter().map(|n| n.0.clone()).collect();
        let mut taken: Vec<String> = Vec::new();
        self.channels = roles(first)
            .iter()
            .map(|(role, _)| {
                let g = guess(role, &plain, &taken).unwrap_or_default();
                if !g.is_empty() {
                    taken.push(g.clone());
                }
                ((*role).to_owned(), g)
            })
            .collect();
        self.options = match first {
            "uart" => "baud=auto".into(),
            _ => String::new(),
        };
        self.check();
    }

    /// The spec the dialog describes.
    pub fn assemble(&self) -> String {
        let (_, first, stacked) = CHOICES[self.choice.min(CHOICES.len() - 1)];
        let mut params: Vec<String> = self
            .channels
            .iter()
            .filter(|(_, ch)| !ch.trim().is_empty())
            .map(|(r, ch)| format!("{r}={ch}"))
            .collect();
        params.extend(self.options.split(',').map(str::trim).filter(|o| !o.is_empty()).map(str::to_owned));
        let mut spec =
            if params.is_empty() { first.to_owned() } else { format!("{first}:{}", params.join(",")) };
        if let Some(s) = stacked {
            spec = format!("{spec} | {s}");
        }
        spec
    }

    /// Assembles the spec and checks it: the decoder runs on channels of the same names
    /// without a single edge, which checks the grammar, the channel names and every option
    /// at no cost.
    pub fn check(&mut self) {
        self.spec = self.assemble();
        self.problem = if self.existing.contains(&self.spec) {
            Some("this capture is already decoded with this spec".to_owned())
        } else {
            check_spec(&self.spec, &self.names).err()
        };
    }
}

/// Whether `spec` would run on a source with channels `names`: `Err` says why not.
pub fn check_spec(spec: &str, names: &[(String, bool)]) -> Result<(), String> {
    let mut stub = Source::new("check", "check", SourceKind::File);
    for (name, analog) in names {
        if *analog {
            stub.analog.push(AnalogTrack::new(name.clone(), "", 0, 1.0, Vec::new()));
        } else {
            stub.digital.push(DigitalTrack::new(name.clone(), 0));
        }
    }
    latscope_decoders::decode(spec, &Inputs::of_source(&stub, Some(1_000_000)))
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// The dialog window; returns the decode asked for and the dialog as edited.
pub fn show(ctx: &egui::Context, dialog: &DecoderDialog, sources: &[String]) -> Vec<Message> {
    let mut msgs = Vec::new();
    let mut d = dialog.clone();
    let mut open = d.open;
    let mut close = false;
    super::dialog_window(ctx, "Add decoder", egui::Id::unique("add-decoder"), &mut open).show(ctx, |ui| {
        egui::Grid::new("decoder-grid").num_columns(2).spacing([12.0, 6.0]).show(ui, |ui| {
            if sources.len() > 1 {
                ui.label("source");
                let name = sources.get(d.source).cloned().unwrap_or_default();
                egui::ComboBox::from_id_salt("decoder-source").selected_text(name).show_ui(ui, |ui| {
                    for (i, s) in sources.iter().enumerate() {
                        if ui.selectable_label(i == d.source, s).clicked() && i != d.source {
                            msgs.push(Message::OpenDecoder(Some(i)));
                        }
                    }
                });
                ui.end_row();
            }
            ui.label("decoder");
            let mut choice = d.choice;
            egui::ComboBox::from_id_salt("decoder-kind").selected_text(CHOICES[d.choice].0).show_ui(
                ui,
                |ui| {
                    for (i, c) in CHOICES.iter().enumerate() {
                        ui.selectable_value(&mut choice, i, c.0);
                    }
                },
            );
            ui.end_row();
            if choice != d.choice {
                d.set_choice(choice);
            }
            let (_, first, _) = CHOICES[d.choice];
            let required = roles(first);
            for (k, (role, channel)) in d.channels.iter_mut().enumerate() {
                let must = required.get(k).is_some_and(|r| r.1);
                ui.label(if must { format!("{role} *") } else { role.clone() });
                let shown = if channel.is_empty() { "(none)".to_owned() } else { channel.clone() };
                egui::ComboBox::from_id_salt(("decoder-channel", k)).selected_text(shown).show_ui(ui, |ui| {
                    ui.selectable_value(channel, String::new(), "(none)");
                    for (name, analog) in &dialog.names {
                        let label =
                            if *analog { format!("{name} (analog, thresholded)") } else { name.clone() };
                        ui.selectable_value(channel, name.clone(), label);
                    }
                });
                ui.end_row();
            }
            ui.label("options");
            ui.add(
                egui::TextEdit::singleline(&mut d.options)
                    .hint_text(options_hint(first))
                    .desired_width(280.0),
            );
            ui.end_row();
        });
        d.check();
        ui.add_space(4.0);
        ui.monospace(&d.spec);
        match &d.problem {
            Some(p) => {
                ui.colored_label(ui.visuals().error_fg_color, p);
            }
            None => {
                ui.weak("adds its annotation rows under the channels, and its events to the table");
            }
        }
        ui.add_enabled_ui(d.problem.is_none(), |ui| {
            if ui.button("Decode").clicked() {
                msgs.push(Message::AddDecoder { source: d.source, specs: vec![d.spec.clone()] });
                close = true;
            }
        });
    });
    d.open = open && !close;
    if d != *dialog {
        msgs.push(Message::EditDecoder(d));
    }
    msgs
}

/// The options a decoder takes (its channels have their own fields).
fn options_hint(decoder: &str) -> &'static str {
    match decoder {
        "uart" => "baud=N|auto,bits=8,parity=none|even|odd,stop=1,invert=0",
        "spi" => "cpol=0,cpha=0,cs_active=low|high,order=msb|lsb,bits=8",
        "sd" => "width=1|4,block=512",
        _ => "",
    }
}

/// The decode job's work: a copy of `src` with the annotations of `specs` attached, its
/// lanes prepared, each decoder's annotation rows moved right under the last channel it
/// reads and each slice linked to the event it starts.
pub fn decode_into(src: &Source, specs: &[String]) -> Result<Prepared, String> {
    let already = specs_of(src);
    let mut all = latscope_decoders::Decoded::default();
    let mut placed: Vec<(Vec<String>, Vec<String>)> = Vec::new();
    for spec in specs {
        if already.contains(spec) {
            return Err(format!("{}: already decoded with {spec:?}", src.name));
        }
        let d = crate::decode_cmd::decode_all(src, std::slice::from_ref(spec))
            .map_err(|e| format!("--decoder {spec:?}: {e:#}"))?;
        placed.push((spec_channels(spec), decoded_rows(&d)));
        all.annotations.extend(d.annotations);
        for (k, n) in d.errors {
            *all.errors.entry(k).or_default() += n;
        }
    }
    all.annotations.sort_by_key(|a| a.start);
    let mut source = src.clone();
    all.attach(&mut source).map_err(|e| format!("{}: adding the decoded events: {e}", source.name))?;
    source.metadata.extend(specs.iter().map(|s| (DECODER_KEY.to_owned(), s.clone())));
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

/// The channel names a spec's first stage names (the values of its channel keys).
fn spec_channels(spec: &str) -> Vec<String> {
    let Ok(stages) = latscope_decoders::spec::parse(spec) else { return Vec::new() };
    let Some(first) = stages.first() else { return Vec::new() };
    let roles = roles(&first.name);
    first.params.iter().filter(|p| roles.iter().any(|r| r.0 == p.key)).map(|p| p.value.clone()).collect()
}

/// Moves the lanes named `rows` right after the last digital or analog lane whose track
/// `channels` name (exactly or by suffix, as the decoder resolved them).
fn place_rows(p: &mut Prepared, channels: &[String], rows: &[String]) {
    let reads = |lane_name: &str| channels.iter().any(|c| lane_name == c || lane_name.ends_with(c.as_str()));
    let Some(anchor) = p.lanes.iter().rposition(|l| {
        matches!(l.kind, LaneKind::Digital { .. } | LaneKind::Analog { .. }) && reads(&l.name)
    }) else {
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

/// The decoder specs recorded in a source's metadata, in the order they were added.
pub fn specs_of(src: &Source) -> Vec<String> {
    src.metadata.iter().filter(|(k, _)| k == DECODER_KEY).map(|(_, v)| v.clone()).collect()
}

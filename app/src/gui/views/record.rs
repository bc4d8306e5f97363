//! The record window: what to record (kernel, analyses, events, sigrok device, flight
//! recorder, where to save), Record and Stop, and while it runs the live lines (count, p50,
//! p99, max per analysis), the events lost and the crossings.

use crate::gui::message::{Message, RecordMsg};
use crate::gui::record::{Machine, RecordForm, RecordState, kernel_presets};
use crate::gui::theme;
use latscope_engine::Registry;
use latscope_record::stats::human_ns;

/// The record window. Returns what the user did.
pub fn show(ctx: &egui::Context, registry: &Registry, st: &RecordState) -> Vec<Message> {
    let mut msgs = Vec::new();
    let mut open = true;
    egui::Window::new("Record")
        .id(egui::Id::unique("record-window"))
        .open(&mut open)
        .default_width(560.0)
        .default_pos(ctx.content_rect().center_top() + egui::vec2(-280.0, 60.0))
        .show(ctx, |ui| {
            // What runs comes first: the controls, the error, the live lines; the form (read
            // only while recording) below them scrolls.
            msgs.extend(controls(ui, st));
            if let Some(e) = &st.error {
                ui.add(egui::Label::new(egui::RichText::new(e).color(theme::IRQ)).wrap());
            }
            live_ui(ui, st);
            ui.separator();
            // An id of its own: the error line above comes and goes (an edit clears it) and
            // the live lines change, and the fields' ids must not move with them, or the
            // field being typed in loses the focus and the keys after the first.
            let form_scope = egui::UiBuilder::new().scope_id(ui.scope_id().with("record-form"));
            ui.scope_builder(form_scope, |ui| {
                egui::ScrollArea::vertical()
                    .max_height((ctx.content_rect().height() - 360.0).max(160.0))
                    .show(ui, |ui| {
                        let mut form = st.form.clone();
                        ui.add_enabled_ui(!st.running(), |ui| form_ui(ui, registry, &mut form));
                        if form != st.form {
                            msgs.push(Message::Record(RecordMsg::Edit(form)));
                        }
                    });
            });
        });
    if !open {
        msgs.push(Message::Record(RecordMsg::Close));
    }
    msgs
}

fn field(ui: &mut egui::Ui, label: &str, text: &mut String, hint: &str, help: &str) {
    ui.label(label).on_hover_text(help);
    ui.add(egui::TextEdit::singleline(text).hint_text(hint).desired_width(f32::INFINITY)).on_hover_text(help);
    ui.end_row();
}

fn form_ui(ui: &mut egui::Ui, registry: &Registry, form: &mut RecordForm) {
    ui.horizontal(|ui| {
        ui.strong("Kernel");
        ui.radio_value(&mut form.machine, Machine::Local, "This machine");
        ui.radio_value(&mut form.machine, Machine::Ssh, "Board over SSH");
        ui.radio_value(&mut form.machine, Machine::None, "None (logic only)");
    });
    if form.machine == Machine::Ssh {
        ui.horizontal(|ui| {
            ui.label("Host");
            ui.add(egui::TextEdit::singleline(&mut form.ssh_host).hint_text("[user@]host[:port]"))
                .on_hover_text("Through the system's ssh: your keys, ~/.ssh/config and jump hosts work");
        });
    }
    let kernel = form.machine != Machine::None;
    // With no kernel, the rules read the logic analyzer: its channels and what its decoders
    // find.
    let logic_alone = !kernel && !form.sigrok.trim().is_empty();
    // The kernel's presets with a kernel; the decoders' (sd-cmd-resp, …) once a decoder is
    // typed, beside a kernel or alone.
    let decoders = form.decoder_lines();
    let of_decoders: Vec<String> =
        registry.decoder_presets(&decoders).into_iter().map(str::to_owned).collect();
    ui.strong("Presets");
    ui.horizontal_wrapped(|ui| {
        let kernel_ones = kernel_presets().into_iter().map(|p| (p.to_owned(), kernel));
        for (p, enabled) in kernel_ones.chain(of_decoders.iter().map(|p| (p.clone(), true))) {
            let mut on = form.presets.contains(&p);
            if ui.add_enabled(enabled, egui::Checkbox::new(&mut on, p.as_str())).changed() {
                if on {
                    form.presets.push(p.clone());
                } else {
                    form.presets.retain(|x| *x != p);
                }
            }
        }
    });
    egui::Grid::new("record-kernel").num_columns(2).spacing([8.0, 4.0]).show(ui, |ui| {
        let (hint, help) = if logic_alone {
            (
                "pulse:D0  or  word=spi_mosi -> spi_mosi_end",
                "Rule specs over the channels and the decoded events, one a line, as --rule takes them",
            )
        } else {
            ("req=print[text~start] -> print[text~done]", "Rule specs, one a line, as --rule takes them")
        };
        ui.add_enabled(kernel || logic_alone, egui::Label::new("Rules")).on_hover_text(help);
        ui.add_enabled(
            kernel || logic_alone,
            egui::TextEdit::multiline(&mut form.rules)
                .hint_text(hint)
                .desired_rows(2)
                .desired_width(f32::INFINITY)
                .code_editor(),
        )
        .on_disabled_hover_text("With no kernel, rules read the logic analyzer: name its device below");
        ui.end_row();
        ui.add_enabled(kernel, egui::Label::new("More events")).on_hover_text("Comma-separated");
        ui.add_enabled(
            kernel,
            egui::TextEdit::singleline(&mut form.events)
                .hint_text("sched_switch, irq:irq_handler_entry")
                .desired_width(f32::INFINITY),
        );
        ui.end_row();
    });
    // The kernel events a recording enables; with no kernel, none.
    ui.add_enabled_ui(kernel, |ui| {
        let events = if kernel { form.events_enabled(registry) } else { Vec::new() };
        let mut said = if events.is_empty() {
            "Events enabled: none (trace_marker writes are recorded always)".to_owned()
        } else {
            format!("Events enabled: {} (and trace_marker writes)", events.join(", "))
        };
        if !form.sigrok.trim().is_empty() && !events.is_empty() {
            said.push_str("; a name of one of the logic analyzer's channels is read from it instead");
        }
        ui.add(egui::Label::new(egui::RichText::new(said).weak()).wrap());
        ui.checkbox(&mut form.force, "Record even if another tracer has the buffer (--force)");
    });
    egui::Grid::new("record-rest").num_columns(2).spacing([8.0, 4.0]).show(ui, |ui| {
        field(
            ui,
            "Logic analyzer",
            &mut form.sigrok,
            "demo:samplerate=100k  (sigrok driver; empty: none)",
            "A device libsigrok drives, through sigrok-cli: DRIVER[:key=value…]",
        );
        ui.label("Decoders");
        ui.add(
            egui::TextEdit::multiline(&mut form.decoders)
                .desired_rows(1)
                .desired_width(f32::INFINITY)
                .hint_text("uart:rx=D0,baud=115200  (one stack a line; run live on the stream)"),
        )
        .on_hover_text(
            "latscope's decoders, as `latscope decode --decoder` takes them; the rate must be in the \
             device's options (samplerate=…). With no kernel, the presets and rules read what they decode.",
        );
        ui.end_row();
        let beside = kernel && !form.sigrok.trim().is_empty();
        ui.add_enabled(beside, egui::Label::new("Align on"));
        ui.add_enabled(
            beside,
            egui::TextEdit::singleline(&mut form.align)
                .hint_text("print[text~sync] -> D0:rise  (empty: host clocks)")
                .desired_width(f32::INFINITY),
        )
        .on_hover_text(
            "Shared markers: a GPIO toggled beside a trace_marker write. What is saved places the logic \
             capture by fitting them (add `drift` to fit the clocks' drift too) instead of by the host's clocks.",
        )
        .on_disabled_hover_text("Fits a logic analyzer onto the kernel recorded beside it");
        ui.end_row();
        field(ui, "Duration", &mut form.duration, "until Stop", "Stop after this long: 10s, 500ms");
        field(
            ui,
            "Save to",
            &mut form.output,
            "not saved",
            "X.dat, X.sr, a new folder, or the triggers' folder",
        );
    });
    egui::CollapsingHeader::new("Flight recorder")
        .id_salt("record-flight")
        .default_open(!form.triggers.is_empty())
        .show(ui, |ui| {
            egui::Grid::new("record-flight-grid").num_columns(2).spacing([8.0, 4.0]).show(ui, |ui| {
                field(
                    ui,
                    "Triggers",
                    &mut form.triggers,
                    "block>10ms",
                    "ANALYSIS>DURATION, comma-separated: saves the window around each pair that crosses",
                );
                field(
                    ui,
                    "Keep",
                    &mut form.keep,
                    "PRE[,POST]: 5ms,20ms",
                    "Before the pair's start, after its end",
                );
                field(
                    ui,
                    "Ring",
                    &mut form.ring,
                    "64MiB (default with triggers)",
                    "A duration (30s) or a size (64MiB)",
                );
                field(ui, "Max saves", &mut form.max_saves, "no limit", "Every crossing is still counted");
            });
        });
}

fn controls(ui: &mut egui::Ui, st: &RecordState) -> Vec<Message> {
    let mut msgs = Vec::new();
    ui.horizontal(|ui| match &st.run {
        None => {
            if ui.button("Start recording").clicked() {
                msgs.push(Message::Record(RecordMsg::Start));
            }
            if let Some(end) = &st.ended {
                ui.weak(format!(
                    "Recorded {} {}, {} lost ({}){}",
                    end.events,
                    end.counted,
                    end.lost,
                    end.how,
                    if end.crossings > 0 { format!(", {} crossings", end.crossings) } else { String::new() }
                ));
            }
        }
        Some(run) => {
            if ui.add_enabled(!run.stopping, egui::Button::new("Stop")).clicked() {
                msgs.push(Message::Record(RecordMsg::Stop));
            }
            ui.spinner();
            ui.label(if run.stopping { "Stopping: saving and putting tracefs back…" } else { "Recording" });
        }
    });
    if let Some(end) = &st.ended {
        for p in &end.saved {
            ui.weak(format!("Saved {}", p.display()));
        }
    }
    msgs
}

fn live_ui(ui: &mut egui::Ui, st: &RecordState) {
    let Some(line) = &st.line else {
        if st.running() {
            ui.weak("Waiting for the first second of data…");
        }
        return;
    };
    ui.horizontal(|ui| {
        ui.strong(format!("{:.1} s", line.elapsed_s));
        // A logic analyzer alone has no kernel events: its count is the samples', below,
        // and what it loses is what its ring dropped unseen.
        if st.form.machine == Machine::None {
            if line.lost > 0 {
                ui.colored_label(theme::IRQ, format!("{} samples dropped unseen", line.lost)).on_hover_text(
                    "The ring held twice its size before the triggers looked at them: a larger ring keeps them",
                );
            }
        } else {
            ui.label(format!("{} events", line.events));
            let lost = format!("{} lost", line.lost);
            if line.lost > 0 {
                ui.colored_label(theme::IRQ, lost)
                    .on_hover_text("The kernel's buffer overflowed: record fewer events, or read faster");
            } else {
                ui.label(lost);
            }
        }
        ui.weak(format!("{:.1} MiB kept", line.kept_bytes as f64 / f64::from(1u32 << 20)));
        if line.last {
            ui.weak("(final)");
        }
    });
    egui::Grid::new("record-live").num_columns(6).striped(true).spacing([14.0, 2.0]).show(ui, |ui| {
        for h in ["analysis", "count", "p50", "p99", "max", ""] {
            ui.strong(h);
        }
        ui.end_row();
        for a in &line.analyses {
            ui.label(&a.analysis);
            ui.label(a.count.to_string());
            ui.label(human_ns(a.p50_ns));
            ui.label(human_ns(a.p99_ns));
            ui.label(human_ns(a.max_ns));
            match &a.note {
                Some(n) => ui.weak(n).on_hover_text(n),
                None => ui.label(""),
            };
            ui.end_row();
        }
    });
    if let Some(l) = &line.logic {
        // Beside a kernel, where the host's clock places it; alone, there is nothing to place.
        let placed = match (l.start_s, l.uncertainty_ns, st.form.machine) {
            (Some(_), Some(u), _) => format!(
                ", placed on the kernel's timeline by host clocks, ± {} (align on a shared marker to fit it)",
                human_ns(Some(u as f64))
            ),
            (_, _, Machine::None) => String::new(),
            _ => ", no data yet".to_owned(),
        };
        ui.add(egui::Label::new(format!("Logic analyzer: {} samples{placed}", l.samples)).wrap());
        for d in &l.decoders {
            let errors = if d.errors == 1 { "1 error".to_owned() } else { format!("{} errors", d.errors) };
            let text = format!("{}: {} annotations, {errors}", d.decoder, d.annotations);
            if d.errors > 0 {
                let kinds: Vec<String> = d.error_kinds.iter().map(|(k, n)| format!("{k}: {n}")).collect();
                ui.colored_label(ui.visuals().warn_fg_color, text).on_hover_text(kinds.join("\n"));
            } else {
                ui.label(text);
            }
        }
    }
    // While it records, the live line says the placement; once it ends, how it was opened.
    if let Some(p) = st.logic_placed.as_ref().filter(|_| !st.running()) {
        ui.add(
            egui::Label::new(
                egui::RichText::new(format!("Logic opened beside the kernel, placed by {p}")).weak(),
            )
            .wrap(),
        );
    }
    if st.crossings_total > 0 {
        egui::CollapsingHeader::new(format!("Crossings ({})", st.crossings_total))
            .id_salt("record-crossings")
            .default_open(true)
            .show(ui, |ui| {
                for c in st.crossings.iter().rev().take(20) {
                    ui.weak(c);
                }
            });
    }
}

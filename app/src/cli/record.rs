//! `latscope record`: reads the arguments, has the recorder ([`latscope_record`]) record
//! this machine's kernel, prints its live lines (text or JSON, one per line on stdout) and
//! what it saved, and gates `--fail-if` with the engine's report as `latscope report` does.

use anyhow::{Result, bail};
use latscope_analysis::report::Format;
use latscope_engine::analyse::Which;
use latscope_engine::report::ThresholdsCrossed;
use latscope_engine::{Capture, Registry};
use latscope_record::stats::human_ns;
use latscope_record::{Live, Request, Stopped};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct RecordArgs {
    /// A preset analysis whose events are recorded and whose statistics are shown live
    /// (block, irq-handler, ...); repeatable.
    #[arg(long = "preset", value_name = "NAME")]
    pub presets: Vec<String>,
    /// A rule spec, recorded and shown like a preset; repeatable. Beside --sigrok, a rule
    /// naming one of its channels or an event its decoders add reads the kernel and the
    /// logic together ('gpio=print[text~go] -> D0:rise').
    #[arg(long = "rule", value_name = "SPEC")]
    pub rules: Vec<String>,
    /// More events to record, comma-separated (`sched_switch`, `irq:irq_handler_entry`).
    #[arg(long, value_name = "EVENTS", value_delimiter = ',')]
    pub events: Vec<String>,
    /// Record a board over SSH ([USER@]HOST[:PORT]) through the system's ssh; the board
    /// needs only tracefs, a POSIX shell and cat. COMMAND then runs on the board.
    #[arg(long, value_name = "HOST")]
    pub ssh: Option<String>,
    /// Record a logic analyzer through sigrok-cli (DRIVER[:key=value...], e.g.
    /// demo:samplerate=100k): alone, saved with -o X.sr; beside this machine's kernel
    /// (with --preset, --rule or --events), placed on its timeline by the host's clock and
    /// saved in the -o folder as logic.sr.
    #[arg(long, value_name = "DRIVER")]
    pub sigrok: Option<String>,
    /// A native decoder stack run live on the logic capture (--sigrok), as `decode` takes it
    /// (uart:rx=D0,baud=9600); repeatable. With --sigrok alone, --preset and --rule run
    /// over what it decodes.
    #[arg(long = "decoder", value_name = "SPEC")]
    pub decoders: Vec<String>,
    /// Beside the kernel (--sigrok with --preset, --rule or --events): place the logic
    /// capture in what is saved by fitting shared markers, a trace_marker write (a `print`
    /// event) beside each GPIO edge, instead of by the host's clocks: REF_ENDPOINT ->
    /// ENDPOINT [drift], e.g. 'print[text~sync] -> D0:rise'.
    #[arg(long, value_name = "MARKERS")]
    pub align: Option<String>,
    /// Stop after this long (`10s`, `500ms`).
    #[arg(long, value_name = "D")]
    pub duration: Option<String>,
    /// Save the window around every pair of ANALYSIS longer than DURATION ('block>10ms');
    /// repeatable; needs -o.
    #[arg(long = "trigger", value_name = "A>D")]
    pub triggers: Vec<String>,
    /// With --trigger: keep PRE before the pair's start and POST after its end (POST
    /// defaults to PRE).
    #[arg(long, value_name = "PRE[,POST]")]
    pub keep: Option<String>,
    /// How much recent data is kept: a duration (30s) or a size (64MiB). Default with
    /// --trigger: 64MiB; without, everything.
    #[arg(long, value_name = "SIZE")]
    pub ring: Option<String>,
    /// With --trigger: save at most N windows (every crossing is still counted).
    #[arg(long = "max-saves", value_name = "N")]
    pub max_saves: Option<u64>,
    /// ANALYSIS.STAT>DURATION as in `report`; exit code 3 when crossed at the end.
    #[arg(long = "fail-if", value_name = "EXPR")]
    pub fail_if: Vec<String>,
    /// Live lines as text, or one JSON object per line.
    #[arg(long, value_enum, default_value = "text")]
    pub format: LiveFormat,
    /// Record even when another tracer has the buffer (tracing on with events enabled).
    #[arg(long)]
    pub force: bool,
    /// The capture: X.dat the kernel's trace alone, X.sr the logic alone, any other path a
    /// new folder with kernel.dat and session.latscope.json. With --trigger, the folder of
    /// the saved windows.
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// A command run once tracing is on; the recording stops when it exits.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LiveFormat {
    Text,
    Json,
}

pub fn run(args: &RecordArgs) -> Result<()> {
    let registry = Registry::native();
    check_decoders(args)?;
    // On a logic analyzer, the presets over decoded events (sd-cmd-resp) and the rules
    // over them or over its channels read the logic; any other preset or rule, or
    // --events, records the kernel too.
    let channels = logic_alone_channels(args, &registry)?;
    let logic_reads = |text: &String, spec: Result<latscope_analysis::spec::Spec, _>| {
        registry.reads_decoded(text, &args.decoders)
            || spec.is_ok_and(|s| latscope_record::sigrok::reads_logic(&s, &channels, &args.decoders))
    };
    let kernel = !args.events.is_empty()
        || args.presets.iter().any(|p| !logic_reads(p, registry.preset(p)))
        || args.rules.iter().any(|r| !logic_reads(r, registry.rule(r)));
    if let Some(text) = &args.sigrok
        && !kernel
        && args.ssh.is_none()
    {
        return record_logic(args, &registry, text, &channels);
    }
    // Beside the kernel, what reads the decoded logic alone is the logic's; the rest reads
    // the kernel, or the kernel and the logic's channels together.
    let (logic_presets, kernel_presets): (Vec<String>, Vec<String>) =
        args.presets.iter().cloned().partition(|p| registry.reads_decoded(p, &args.decoders));
    let (logic_rules, kernel_rules): (Vec<String>, Vec<String>) =
        args.rules.iter().cloned().partition(|r| registry.reads_decoded(r, &args.decoders));
    let sigrok = args.sigrok.as_deref().map(|t| sigrok_spec(t, args, &channels)).transpose()?;
    let thresholds = latscope_engine::report::thresholds(&args.fail_if)?;
    latscope_engine::report::require_baseline(&thresholds, false, "a baseline (latscope report --baseline)")?;
    let specs = super::report::specs(&registry, &kernel_presets, &kernel_rules)?;
    let logic_specs = super::report::specs(&registry, &logic_presets, &logic_rules)?;
    let kernel_texts: Vec<String> = kernel_presets.iter().chain(&kernel_rules).cloned().collect();
    let logic_texts: Vec<String> = logic_presets.iter().chain(&logic_rules).cloned().collect();
    let spec_texts: Vec<String> = kernel_texts.iter().chain(&logic_texts).cloned().collect();
    let opts = latscope_record::plan(&Request {
        specs: specs.clone(),
        logic_specs: logic_specs.clone(),
        spec_texts: spec_texts.clone(),
        events: args.events.clone(),
        ssh: args.ssh.clone(),
        duration: args.duration.clone(),
        triggers: args.triggers.clone(),
        keep: args.keep.clone(),
        ring: args.ring.clone(),
        max_saves: args.max_saves,
        output: args.output.clone(),
        force: args.force,
        command: args.command.clone(),
        sigrok,
        align: args.align.clone(),
    })?;
    let output = args.output.as_deref();
    let rec = latscope_record::record(&opts, &mut live_printer(args.format, Recorded::Kernel))?;
    let how = rec.stopped.describe();
    eprintln!(
        "latscope: recorded {:.3} s ({how}): {} events, {} lost{}",
        rec.elapsed.as_secs_f64(),
        rec.events,
        rec.lost,
        if rec.lost > 0 { " (the kernel's buffer overflowed: record fewer events)" } else { "" }
    );
    for note in &rec.notes {
        eprintln!("latscope: {note}");
    }
    if let Some(l) = &rec.logic {
        let placed = match l.placement {
            Some(p) => format!(
                "placed by host clocks, first sample at {:.6} s (mono) ± {}",
                p.at_ns as f64 / 1e9,
                human_ns(Some(p.uncertainty_ns as f64))
            ),
            None => "no data arrived".to_owned(),
        };
        eprintln!(
            "latscope: recorded {} samples of {} logic channels, {placed}",
            l.samples(),
            l.channels.len()
        );
        if l.overrun > 0 {
            eprintln!(
                "latscope: the logic ring dropped {} samples before the triggers looked at them (a larger --ring keeps them)",
                l.overrun
            );
        }
    }
    if opts.windows_dir.is_some() {
        say_windows(rec.crossings, &rec.saved);
    } else if let Some(o) = output {
        let placed = rec.save(o, &spec_texts)?;
        eprintln!("latscope: saved {}", o.display());
        if let Some(how) = placed {
            eprintln!("latscope: logic.sr placed on the kernel's timeline by {how}");
        }
    }
    // Each threshold is judged on what its analysis read: the kernel, the decoded logic, or
    // both together.
    let (logic_thresholds, thresholds): (Vec<_>, Vec<_>) =
        thresholds.into_iter().partition(|t| logic_specs.iter().any(|s| s.name() == t.analysis));
    let (joint_thresholds, kernel_thresholds): (Vec<_>, Vec<_>) =
        thresholds.into_iter().partition(|t| rec.joint_specs.iter().any(|s| s.name() == t.analysis));
    let mut crossed = Vec::new();
    if !kernel_thresholds.is_empty() {
        let path = output.map_or_else(|| PathBuf::from("kernel"), Path::to_path_buf);
        let kernel_specs = specs.iter().filter(|s| !rec.joint_specs.contains(s)).cloned().collect();
        crossed.extend(gate(
            &registry,
            rec.source()?,
            path,
            kernel_specs,
            &kernel_texts,
            &kernel_thresholds,
        )?);
    }
    if !joint_thresholds.is_empty() {
        crossed.extend(gate_joint(&registry, &rec, output, &kernel_texts, &joint_thresholds)?);
    }
    if !logic_thresholds.is_empty() {
        let decoded = rec.logic.as_ref().map(|l| l.decoded.as_slice()).unwrap_or_default();
        let source = latscope_record::sigrok::decoded_source(decoded)?;
        let path = output.map_or_else(|| PathBuf::from("logic"), |o| o.join("logic.sr"));
        crossed.extend(gate(&registry, source, path, logic_specs, &logic_texts, &logic_thresholds)?);
    }
    if let Some(why) = &rec.unrestored {
        bail!("{why}");
    }
    if let Stopped::Failed(why) = &rec.stopped {
        bail!("the recording stopped early: {why} (what arrived before was kept)");
    }
    if crossed.is_empty() { Ok(()) } else { Err(ThresholdsCrossed(crossed).into()) }
}

/// The logic channels of `--sigrok`'s device, when the analyses might read it alone: with
/// no `--ssh` and no `--events`, and an analysis the decoded events do not answer (empty
/// otherwise). A device that is missing is said here, before anything is touched.
fn logic_alone_channels(args: &RecordArgs, registry: &Registry) -> Result<Vec<String>> {
    let Some(text) = &args.sigrok else { return Ok(Vec::new()) };
    let undecoded =
        args.presets.iter().chain(&args.rules).any(|t| !registry.reads_decoded(t, &args.decoders));
    if args.ssh.is_some() || !args.events.is_empty() || !undecoded {
        return Ok(Vec::new());
    }
    Ok(latscope_record::sigrok::logic_channels(&latscope_record::sigrok::SigrokSpec::parse(text)?)?)
}

/// `--sigrok TEXT` with the `--decoder` stacks, and its logic `channels` if they were asked
/// already (not asked again).
fn sigrok_spec(
    text: &str,
    args: &RecordArgs,
    channels: &[String],
) -> Result<latscope_record::sigrok::SigrokSpec> {
    let spec = latscope_record::sigrok::SigrokSpec::parse(text)?.with_decoders(args.decoders.clone());
    Ok(if channels.is_empty() { spec } else { spec.with_channels(channels.to_vec()) })
}

/// `--decoder` needs a logic analyzer, and runs latscope's own decoders: sigrok's run on
/// a saved capture.
fn check_decoders(args: &RecordArgs) -> Result<()> {
    if args.decoders.is_empty() {
        return Ok(());
    }
    if args.sigrok.is_none() {
        bail!("--decoder decodes a logic analyzer's stream: add --sigrok DRIVER[:key=value...]");
    }
    if let Some(d) = args.decoders.iter().find(|d| d.trim_start().starts_with("sigrok:")) {
        bail!(
            "--decoder {d:?}: sigrok's decoders run on a saved capture, not live: record with -o X.sr, \
             then `latscope decode X.sr --decoder {d:?}`"
        );
    }
    Ok(())
}

/// `--sigrok` alone: a logic capture saved as `-o X.sr` (or a folder with a session), with
/// `--decoder` stacks run on it as it streams, `--preset`/`--rule` statistics over them and
/// over its channels in the live lines, and `--trigger` windows saved from a ring of recent
/// samples; `channels` are the device's, if already asked. (Beside the kernel it is
/// `latscope_record::record`'s, placed by host clocks.)
fn record_logic(args: &RecordArgs, registry: &Registry, text: &str, channels: &[String]) -> Result<()> {
    let thresholds = latscope_engine::report::thresholds(&args.fail_if)?;
    latscope_engine::report::require_baseline(&thresholds, false, "a baseline (latscope report --baseline)")?;
    let specs = super::report::specs(registry, &args.presets, &args.rules)?;
    let spec_texts: Vec<String> = args.presets.iter().chain(&args.rules).cloned().collect();
    let opts = latscope_record::plan::plan_logic(&Request {
        specs: specs.clone(),
        spec_texts: spec_texts.clone(),
        duration: args.duration.clone(),
        triggers: args.triggers.clone(),
        keep: args.keep.clone(),
        ring: args.ring.clone(),
        max_saves: args.max_saves,
        output: args.output.clone(),
        command: args.command.clone(),
        align: args.align.clone(),
        ..Request::default()
    })?;
    let output = args.output.as_deref();
    let spec = sigrok_spec(text, args, channels)?;
    let (logic, end) = latscope_record::sigrok::record_logic(
        spec,
        &opts,
        &mut live_printer(args.format, Recorded::LogicAlone),
    )?;
    eprintln!(
        "latscope: recorded {} samples of {} logic channels ({})",
        logic.first_sample + logic.samples() as u64,
        logic.channels.len(),
        end.stopped.describe()
    );
    if logic.overrun > 0 {
        eprintln!(
            "latscope: the ring dropped {} samples before the triggers looked at them (a larger --ring keeps them)",
            logic.overrun
        );
    }
    if opts.windows_dir.is_some() {
        say_windows(end.crossings, &end.saved);
    } else if let Some(o) = output {
        if o.extension().is_some_and(|e| e == "sr") {
            logic.save(o)?;
        } else {
            logic.save_folder(o, &args.decoders, &spec_texts, None)?;
        }
        eprintln!("latscope: saved {}", o.display());
    }
    let crossed = if thresholds.is_empty() {
        Vec::new()
    } else {
        let path = output.map_or_else(|| PathBuf::from("logic"), Path::to_path_buf);
        gate(registry, logic.source()?, path, specs, &spec_texts, &thresholds)?
    };
    if let Stopped::Failed(why) = &end.stopped {
        bail!("the recording stopped early: {why} (what arrived before was kept)");
    }
    if crossed.is_empty() { Ok(()) } else { Err(ThresholdsCrossed(crossed).into()) }
}

/// `--fail-if`, as `report` judges it, on the statistics of `specs` over `source` (what was
/// recorded, read as the saved file is); the thresholds that pass are said.
fn gate(
    registry: &Registry,
    source: latscope_model::Source,
    path: PathBuf,
    specs: Vec<latscope_analysis::spec::Spec>,
    texts: &[String],
    thresholds: &[latscope_analysis::report::threshold::Threshold],
) -> Result<Vec<latscope_analysis::report::threshold::Crossing>> {
    gate_capture(registry, &Capture::of(vec![path], vec![source]), specs, texts, thresholds)
}

/// [`gate`] on the sources of `capture`, as they are placed.
fn gate_capture(
    registry: &Registry,
    capture: &Capture,
    specs: Vec<latscope_analysis::spec::Spec>,
    texts: &[String],
    thresholds: &[latscope_analysis::report::threshold::Threshold],
) -> Result<Vec<latscope_analysis::report::threshold::Crossing>> {
    let analysed = capture.analyse(registry, &Which::Specs(specs), Default::default());
    if let Some(failure) = analysed.failures.into_iter().next() {
        return Err(failure.into());
    }
    let request = latscope_engine::report::Request::of_analyses(registry, texts);
    let report = capture.report(&analysed.outcomes, Some(Format::Json), &request)?;
    let crossed = latscope_engine::report::gate(&report, thresholds)?;
    for line in latscope_engine::report::passed(&report, thresholds) {
        eprintln!("latscope: {line}");
    }
    Ok(crossed)
}

/// `--fail-if` on the analyses that read the kernel and the logic together, on both as the
/// saved folder holds them, the logic placed by the host's clocks.
fn gate_joint(
    registry: &Registry,
    rec: &latscope_record::Recording,
    output: Option<&Path>,
    texts: &[String],
    thresholds: &[latscope_analysis::report::threshold::Threshold],
) -> Result<Vec<latscope_analysis::report::threshold::Crossing>> {
    let Some((kernel, logic, offset)) = rec.joint_sources()? else {
        bail!("--fail-if on an analysis of the kernel and the logic: the logic analyzer sent no samples");
    };
    let dir = output.map_or_else(PathBuf::new, Path::to_path_buf);
    let mut capture = Capture::of(vec![dir.join("kernel.dat"), dir.join("logic.sr")], vec![kernel, logic]);
    capture.placements =
        vec![latscope_model::Placement::IDENTITY, latscope_model::Placement::new(offset, 0.0)];
    capture.aligned = Some(format!("logic.sr at {offset} ps by host clocks"));
    gate_capture(registry, &capture, rec.joint_specs.clone(), texts, thresholds)
}

/// What a recording holds, for its live lines' text.
#[derive(Debug, Clone, Copy)]
enum Recorded {
    /// The kernel, with a logic analyzer beside it or not.
    Kernel,
    LogicAlone,
}

/// Prints each live line on stdout as it comes, as text or one JSON object a line.
fn live_printer(format: LiveFormat, recorded: Recorded) -> impl FnMut(&Live) {
    let mut out = std::io::stdout();
    move |live: &Live| {
        let text = match format {
            LiveFormat::Json => serde_json::to_string(live).unwrap_or_default(),
            LiveFormat::Text => live_text(live, recorded),
        };
        // A reader that went away (`| head`) does not stop the recording.
        let _ = writeln!(out, "{text}");
        let _ = out.flush();
    }
}

/// The flight recorder's end: every crossing counted, and the windows saved.
fn say_windows(crossings: u64, saved: &[latscope_record::Saved]) {
    eprintln!(
        "latscope: {crossings} crossing(s), {} window(s) saved{}",
        saved.len(),
        saved.iter().map(|s| format!("\n  {}", s.dir.display())).collect::<String>()
    );
}

/// A live line as text: the time, then one line per analysis, as `rtla timerlat top`.
fn live_text(live: &Live, recorded: Recorded) -> String {
    match live {
        Live::Stats { elapsed_s, events, lost, analyses, logic, last, .. } => {
            let mut t = format!("{}{elapsed_s:8.1} s", if *last { "final " } else { "" });
            match recorded {
                Recorded::Kernel => t.push_str(&format!("  events {events}  lost {lost}")),
                // No kernel events: the samples and each decoder's annotations follow.
                Recorded::LogicAlone if *lost > 0 => t.push_str(&format!("  samples dropped unseen {lost}")),
                Recorded::LogicAlone => {}
            }
            if let Some(l) = logic {
                t.push_str(&format!("\n  {:<20} samples {}", "logic", l.samples));
                if let (Some(at), Some(u)) = (l.start_s, l.uncertainty_ns) {
                    t.push_str(&format!(
                        "  first at {at:.6} s (mono) ± {} by host clocks",
                        human_ns(Some(u as f64))
                    ));
                }
                for d in &l.decoders {
                    t.push_str(&format!(
                        "\n  {:<20} annotations {:>8}  errors {}",
                        d.decoder, d.annotations, d.errors
                    ));
                }
            }
            for a in analyses {
                t.push_str(&format!(
                    "\n  {:<20} count {:>8}  p50 {:>11}  p99 {:>11}  max {:>11}",
                    a.analysis,
                    a.count,
                    human_ns(a.p50_ns),
                    human_ns(a.p99_ns),
                    human_ns(a.max_ns)
                ));
                if let Some(n) = &a.note {
                    t.push_str(&format!("  ({n})"));
                }
            }
            t
        }
        Live::Crossing { analysis, latency_ns, start_s, saved } => format!(
            "crossing: {analysis} {} at {start_s:.3} s{}",
            human_ns(Some(*latency_ns)),
            saved
                .as_ref()
                .map(|p| format!(" saved {}", p.display()))
                .unwrap_or_else(|| " (not saved: --max-saves)".into())
        ),
    }
}

//! What a recording is asked for, as the command line (`latscope record`'s arguments) and
//! the workbench (*File > Record…*) both say it, checked and turned into [`Options`]: one
//! place decides what `--trigger`, `--keep`, `--ring` and `-o` mean together, so both front
//! ends refuse the same things with the same words.

use crate::recorder::{Options, Ring};
use crate::window::Trigger;
use crate::{RecordError, stats};
use latscope_analysis::report::threshold::parse_duration_ns;
use latscope_analysis::spec::{AlignSpec, Spec};
use std::path::PathBuf;
use std::time::Duration;

/// A recording as asked for, in the words of `latscope record`'s options.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// The analyses (presets and rules, resolved by the caller's registry) and their texts.
    pub specs: Vec<Spec>,
    /// Beside the kernel, the analyses over the logic analyzer's decoded events (the
    /// decoders' presets); their texts are in `spec_texts` too.
    pub logic_specs: Vec<Spec>,
    pub spec_texts: Vec<String>,
    /// `--events`: more events to enable.
    pub events: Vec<String>,
    pub ssh: Option<String>,
    /// `--duration`, as typed.
    pub duration: Option<String>,
    /// `--trigger`s, as typed.
    pub triggers: Vec<String>,
    /// `--keep PRE[,POST]`, as typed.
    pub keep: Option<String>,
    /// `--ring`, as typed.
    pub ring: Option<String>,
    pub max_saves: Option<u64>,
    /// `-o`: the capture (or, with triggers, the folder of the windows).
    pub output: Option<PathBuf>,
    pub force: bool,
    pub command: Vec<String>,
    /// `--sigrok` beside the kernel: a logic analyzer placed by this machine's clock.
    pub sigrok: Option<crate::sigrok::SigrokSpec>,
    /// `--align`, as typed: the shared markers that fit the logic analyzer's placement.
    pub align: Option<String>,
}

/// `--align REF_ENDPOINT -> ENDPOINT [drift]` (or the same after `1:match`, as `report`
/// takes it): the shared markers of the kernel and the logic analyzer beside it.
pub fn align(text: Option<&str>, beside_kernel: bool) -> Result<Option<AlignSpec>, RecordError> {
    let Some(text) = text.map(str::trim).filter(|t| !t.is_empty()) else { return Ok(None) };
    if !beside_kernel {
        return Err(RecordError::Usage(
            "--align fits a logic analyzer onto the kernel recorded beside it: it needs --sigrok with \
             --preset, --rule or --events"
                .into(),
        ));
    }
    let full = if text.starts_with("1:") { text.to_owned() } else { format!("1:match {text}") };
    match latscope_analysis::align::parse_align(&full) {
        Ok(spec @ AlignSpec::Match { .. }) => Ok(Some(spec)),
        Ok(AlignSpec::Manual { .. }) => Err(RecordError::Usage(format!(
            "--align {text:?}: the recorder fits on shared markers, REF_ENDPOINT -> ENDPOINT [drift] \
             (print[text~sync] -> D0:rise); to move a capture by hand, open its session"
        ))),
        Err(e) => Err(RecordError::Usage(format!("--align {text:?}: {e}"))),
    }
}

/// A duration as `--duration` and `--keep` take it (`10s`, `500ms`, `20us`).
pub fn duration_ns(text: &str, what: &str) -> Result<u64, RecordError> {
    match parse_duration_ns(text.trim()) {
        Some(ns) if ns >= 0.0 => Ok(ns as u64),
        _ => Err(RecordError::Usage(format!(
            "{what} {text:?}: expected a duration such as 10s, 500ms or 20us"
        ))),
    }
}

/// `--keep PRE[,POST]` in nanoseconds; POST defaults to PRE.
pub fn keep_ns(text: Option<&str>) -> Result<(u64, u64), RecordError> {
    Ok(match text.map(str::trim).filter(|t| !t.is_empty()) {
        None => (0, 0),
        Some(text) => match text.split_once(',') {
            Some((pre, post)) => (duration_ns(pre, "--keep")?, duration_ns(post, "--keep")?),
            None => {
                let pre = duration_ns(text, "--keep")?;
                (pre, pre)
            }
        },
    })
}

/// Checks `req` and makes the recorder's options. With triggers, the folder of the windows
/// is created (the recording saves into it as it goes); without, `-o` must name a new path.
pub fn plan(req: &Request) -> Result<Options, RecordError> {
    let specs = &req.specs;
    let triggers = triggers(req)?;
    let keep_ns = keep_ns(req.keep.as_deref())?;
    let output = req.output.as_deref();
    if let Some(sigrok) = &req.sigrok {
        if !triggers.is_empty() && sigrok.samplerate_hz().is_none() {
            return Err(RecordError::Usage(
                "--trigger beside a logic analyzer cuts its samples by time, which needs its rate: \
                 --sigrok DRIVER:samplerate=…"
                    .into(),
            ));
        }
        if output.is_some_and(|o| o.extension().is_some_and(|e| e == "dat" || e == "sr")) {
            return Err(RecordError::Usage(
                "the kernel and a logic analyzer together are saved as a folder (kernel.dat, logic.sr and a \
                 session placing them): -o names a new folder"
                    .into(),
            ));
        }
    }
    if output.is_some_and(|o| o.extension().is_some_and(|e| e == "sr")) {
        return Err(RecordError::Usage("-o X.sr writes a logic capture, which needs --sigrok".into()));
    }
    let windows_dir = windows_dir(&triggers, output)?;
    let ring = ring(req, &triggers, output)?;
    let mut events = stats::events_for(specs);
    for e in req.events.iter().map(|e| e.trim()).filter(|e| !e.is_empty()) {
        if !events.iter().any(|have| have == e) {
            events.push(e.to_owned());
        }
    }
    let duration = duration(req)?;
    let align = align(req.align.as_deref(), req.sigrok.is_some() && req.ssh.is_none())?;
    Ok(Options {
        align,
        events,
        ssh: req.ssh.clone(),
        specs: specs.clone(),
        logic_specs: req.logic_specs.clone(),
        joint_specs: Vec::new(),
        show_logic: false,
        spec_texts: req.spec_texts.clone(),
        duration,
        command: req.command.clone(),
        force: req.force,
        triggers,
        keep_ns,
        ring,
        max_saves: req.max_saves,
        windows_dir,
        tick: Duration::from_secs(1),
        stop: None,
        sigrok: req.sigrok.clone(),
    })
}

/// [`plan`] for a logic analyzer alone (`req.sigrok` is not looked at): the analyses read
/// what its decoders find, the flight recorder keeps samples, and `-o` names `X.sr`, a new
/// folder (`logic.sr` and a session with the decoders), or with triggers their folder.
pub fn plan_logic(req: &Request) -> Result<Options, RecordError> {
    let triggers = triggers(req)?;
    let output = req.output.as_deref();
    if !triggers.is_empty() && output.is_some_and(|o| o.extension().is_some_and(|e| e == "sr")) {
        return Err(RecordError::Usage(
            "with --trigger, -o names the folder of the saved windows, not a .sr file".into(),
        ));
    }
    let ring = ring(req, &triggers, output)?;
    let windows_dir = windows_dir(&triggers, output)?;
    align(req.align.as_deref(), false)?;
    Ok(Options {
        specs: req.specs.clone(),
        spec_texts: req.spec_texts.clone(),
        duration: duration(req)?,
        command: req.command.clone(),
        keep_ns: keep_ns(req.keep.as_deref())?,
        ring,
        triggers,
        max_saves: req.max_saves,
        windows_dir,
        ..Options::default()
    })
}

/// `--trigger`s, each naming one of the analyses.
fn triggers(req: &Request) -> Result<Vec<Trigger>, RecordError> {
    let specs = &req.specs;
    let triggers = req.triggers.iter().map(|t| Trigger::parse(t)).collect::<Result<Vec<_>, _>>()?;
    for t in &triggers {
        if !specs.iter().chain(&req.logic_specs).any(|s| s.name() == t.analysis) {
            let names: Vec<&str> = specs.iter().chain(&req.logic_specs).map(|s| s.name()).collect();
            return Err(RecordError::Usage(format!(
                "--trigger {:?}: no analysis of that name (the --preset and --rule names: {})",
                t.analysis,
                if names.is_empty() { "none given".to_owned() } else { names.join(", ") }
            )));
        }
    }
    Ok(triggers)
}

/// With triggers, `-o` is the folder of the windows (created); without, a new path.
fn windows_dir(
    triggers: &[Trigger],
    output: Option<&std::path::Path>,
) -> Result<Option<PathBuf>, RecordError> {
    if triggers.is_empty() {
        if let Some(o) = output
            && o.exists()
        {
            return Err(RecordError::Usage(format!("{} exists: -o names a new capture", o.display())));
        }
        return Ok(None);
    }
    let dir = output.ok_or_else(|| {
        RecordError::Usage("--trigger needs -o OUT: the folder its windows are saved in".into())
    })?;
    if dir.extension().is_some_and(|e| e == "dat") {
        return Err(RecordError::Usage(
            "with --trigger, -o names the folder of the saved windows, not a .dat file".into(),
        ));
    }
    std::fs::create_dir_all(dir).map_err(|e| RecordError::io(dir, e))?;
    Ok(Some(dir.to_path_buf()))
}

/// `--ring`: as typed, else the flight recorder's default with triggers, else everything.
fn ring(req: &Request, triggers: &[Trigger], output: Option<&std::path::Path>) -> Result<Ring, RecordError> {
    let ring_typed = req.ring.as_deref().map(str::trim).filter(|t| !t.is_empty());
    if ring_typed.is_some() && triggers.is_empty() && output.is_some() {
        return Err(RecordError::Usage(
            "--ring keeps only recent data; without --trigger -o saves the whole recording: drop --ring"
                .into(),
        ));
    }
    Ok(match ring_typed {
        Some(t) => Ring::parse(t)?,
        None if !triggers.is_empty() => Ring::DEFAULT,
        None => Ring::All,
    })
}

fn duration(req: &Request) -> Result<Option<Duration>, RecordError> {
    req.duration
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(|d| duration_ns(d, "--duration").map(Duration::from_nanos))
        .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;
    use latscope_analysis::spec::preset_spec;

    fn block() -> Request {
        Request {
            specs: vec![preset_spec("block").unwrap()],
            spec_texts: vec!["block".into()],
            ..Request::default()
        }
    }

    #[test]
    fn triggers_name_an_analysis_and_need_a_folder() {
        let mut r = block();
        r.triggers = vec!["irq>1ms".into()];
        let e = plan(&r).unwrap_err().to_string();
        assert!(e.contains("no analysis of that name") && e.contains("block"), "{e}");
        r.triggers = vec!["block>1ms".into()];
        assert!(plan(&r).unwrap_err().to_string().contains("needs -o OUT"));
        r.output = Some("x.dat".into());
        assert!(plan(&r).unwrap_err().to_string().contains("not a .dat file"));
    }

    #[test]
    fn keep_ring_and_events_read_as_the_command_line_reads_them() {
        let mut r = block();
        r.keep = Some("2ms,5ms".into());
        r.events = vec!["sched_switch".into(), " ".into(), "block:block_rq_issue".into()];
        r.duration = Some("3s".into());
        let o = plan(&r).unwrap();
        assert_eq!(o.keep_ns, (2_000_000, 5_000_000));
        assert_eq!(o.ring, Ring::All);
        assert_eq!(o.duration, Some(Duration::from_secs(3)));
        assert_eq!(o.events, ["block:block_rq_issue", "block:block_rq_complete", "sched_switch"]);
        assert_eq!(keep_ns(Some("1ms")).unwrap(), (1_000_000, 1_000_000));
        r.ring = Some("8MiB".into());
        assert_eq!(plan(&r).unwrap().ring, Ring::Bytes(8 << 20));
        r.output = Some("somewhere-new".into());
        assert!(plan(&r).unwrap_err().to_string().contains("drop --ring"));
        r.ring = None;
        r.duration = Some("soon".into());
        assert!(plan(&r).unwrap_err().to_string().contains("--duration"));
        r.duration = None;
        r.sigrok = Some(crate::sigrok::SigrokSpec::parse("demo").unwrap());
        r.output = Some("both.dat".into());
        assert!(plan(&r).unwrap_err().to_string().contains("saved as a folder"));
        r.output = Some("both-new".into());
        assert_eq!(plan(&r).unwrap().sigrok.unwrap().driver, "demo");
    }

    #[test]
    fn a_logic_analyzer_alone_keeps_windows_in_a_folder_and_its_capture_in_a_new_path() {
        let mut r = Request {
            specs: vec![latscope_analysis::spec::parse_spec("word=spi_mosi -> spi_mosi_end").unwrap()],
            spec_texts: vec!["word=spi_mosi -> spi_mosi_end".into()],
            triggers: vec!["word>1ms".into()],
            output: Some("windows.sr".into()),
            ..Request::default()
        };
        assert!(plan_logic(&r).unwrap_err().to_string().contains("not a .sr file"));
        r.triggers.clear();
        r.ring = Some("1MiB".into());
        assert!(plan_logic(&r).unwrap_err().to_string().contains("drop --ring"));
        r.ring = None;
        let o = plan_logic(&r).unwrap();
        assert_eq!((o.ring, o.windows_dir), (Ring::All, None));
        r.triggers = vec!["nothing>1ms".into()];
        assert!(plan_logic(&r).unwrap_err().to_string().contains("no analysis of that name"));
    }
}

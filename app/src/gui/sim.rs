//! The simulator's room: the scenario and its settings, the run going on (its control
//! handle, its live source, its clock), and the live statistics: the scenario's own
//! analyses, and the rules the user ran, kept up to date on the growing trace. The panel is
//! `views::sim_panel`.

use super::document::SourceId;
use super::jobs::Ticket;
use super::prepare::Prepared;
use latscope_model::Ps;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Simulator controls.
#[derive(Debug, Clone, PartialEq)]
pub enum SimCommand {
    /// (Re)start `scenario` with these `KEY=VALUE` settings.
    Start {
        scenario: String,
        sets: Vec<String>,
        duration: Option<Ps>,
    },
    Play,
    Pause,
    Step,
    /// Simulated seconds per wall second; `None` runs as fast as possible.
    Speed(Option<f64>),
    Stop,
}

/// A change to the simulator panel's settings.
#[derive(Debug, Clone, PartialEq)]
pub enum SimEdit {
    /// Pick a built-in scenario (its settings become the editable defaults).
    Scenario(String),
    /// Setting `index` of the list now has `value`.
    Setting(usize, latscope_sim::SettingValue),
    /// Simulated seconds per wall second.
    Speed(f64),
    MaxSpeed(bool),
    Follow(bool),
}

/// The live simulator's control handle; dropping it stops the worker.
#[derive(Debug)]
pub struct SimHandle {
    /// The simulator job's ticket: its snapshots carry it.
    pub ticket: Ticket,
    pub commands: Sender<SimCommand>,
}

impl SimHandle {
    pub fn send(&self, cmd: SimCommand) {
        // A finished worker has hung up: nothing to control any more.
        self.commands.send(cmd).ok();
    }
}

/// How often the live statistics are recomputed at most (a snapshot comes every 200 ms).
pub const LIVE_EVERY: Duration = Duration::from_millis(500);

/// The scenario's analyses and the user's rules over the live trace, recomputed by a job at
/// most every [`LIVE_EVERY`]; a newer job makes an older one's answer stale (the job runner
/// drops it).
#[derive(Debug, Default)]
pub struct LiveStats {
    last_start: Option<Instant>,
    /// The snapshot of the latest job asked for.
    pub asked: Option<Arc<Prepared>>,
    /// The snapshot the shown statistics describe.
    pub shown: Option<Arc<Prepared>>,
    /// The simulated time of the latest snapshot asked for, and of the one shown: the
    /// simulator's clock when it was taken. Its records may reach past it (a command
    /// issued before completes after), so the trace's end is not this time.
    pub asked_now: Ps,
    pub shown_now: Ps,
    /// Statistics updates received.
    pub updates: u64,
    /// The accumulator's reorders when the last analysis was asked for: more since means
    /// the next snapshot does not extend the last, and the analyses read it anew.
    pub reorders: usize,
    /// The running scenario's analyses kept up to date across snapshots: each job reads only what
    /// is new since the last. One job holds it at a time ([`LiveStats::due`]); the lock
    /// only orders the run's last job behind a running one.
    pub report: Option<Arc<Mutex<latscope_sim::scenarios::LiveReport>>>,
    /// The user's rules (the analysis panel's, run while the simulator is the source),
    /// analysed beside the scenario's on the same snapshots and kept across restarts.
    pub user_specs: Vec<latscope_analysis::spec::Spec>,
    pub user: Option<Arc<Mutex<latscope_analysis::live::LiveAnalyses>>>,
}

impl LiveStats {
    /// Follows a new run of `scenario` (the caller stops the previous run's jobs).
    pub fn restart(&mut self, scenario: &latscope_sim::Scenario) {
        // A scenario whose rules do not parse has no live statistics (its run reports why).
        let report = latscope_sim::scenarios::LiveReport::new(scenario).ok().map(|r| Arc::new(Mutex::new(r)));
        let user_specs = std::mem::take(&mut self.user_specs);
        *self = Self { report, ..Self::default() };
        self.set_user_rules(user_specs);
    }

    /// Analyses the user's rules live from now on, from the start of the run: none when
    /// `specs` is empty.
    pub fn set_user_rules(&mut self, specs: Vec<latscope_analysis::spec::Spec>) {
        self.user = (!specs.is_empty())
            .then(|| Arc::new(Mutex::new(latscope_analysis::live::LiveAnalyses::new(specs.clone()))));
        self.user_specs = specs;
    }

    /// Whether a snapshot should be analysed now: the last one of a run always is; others
    /// only when no analysis is `running`. The analyses of a long run take longer than
    /// [`LIVE_EVERY`] (each answer copies and summarises every sample), and a cancelled
    /// one still runs to its end, so starting the next meanwhile would pile them up on the
    /// cores the simulator and the window need. The statistics then update as fast as they are computed.
    pub fn due(&self, finished: bool, running: bool) -> bool {
        (self.report.is_some() || self.user.is_some())
            && (finished || (!running && self.last_start.is_none_or(|t| t.elapsed() >= LIVE_EVERY)))
    }

    /// Notes that `snapshot` (taken at simulated time `now`) is being analysed.
    pub fn asked_for(&mut self, snapshot: Arc<Prepared>, now: Ps) {
        self.last_start = Some(Instant::now());
        self.asked = Some(snapshot);
        self.asked_now = now;
    }
}

/// The simulator's state as the workbench sees it.
#[derive(Debug)]
pub struct SimState {
    pub scenario: String,
    /// Top-level settings of the scenario, typed (words with their valid values, numbers
    /// with units and limits).
    pub settings: Vec<latscope_sim::Setting>,
    /// Which real question the scenario answers, and what it models (its file's
    /// `question` and `description`).
    pub question: Option<String>,
    pub description: Option<String>,
    /// The scenario and settings of the run going on (as the scenario took them): a panel
    /// whose settings differ says that Restart applies them.
    pub ran_with: Option<(String, Vec<latscope_sim::Setting>)>,
    /// Simulated seconds per wall second.
    pub speed: f64,
    pub max_speed: bool,
    pub playing: bool,
    pub follow: bool,
    pub handle: Option<SimHandle>,
    /// The live source in the document.
    pub source: Option<SourceId>,
    pub now: Ps,
    pub events: usize,
    pub finished: bool,
    pub snapshots: u64,
    pub error: Option<String>,
    pub duration: Option<Ps>,
    /// The scenario's metrics once the run has finished.
    pub metrics: Vec<(String, f64)>,
    pub live: LiveStats,
}

impl Default for SimState {
    fn default() -> Self {
        let mut s = Self {
            scenario: "litesdcard".into(),
            settings: Vec::new(),
            question: None,
            description: None,
            ran_with: None,
            speed: 0.02,
            max_speed: false,
            playing: true,
            follow: true,
            handle: None,
            source: None,
            now: 0,
            events: 0,
            finished: false,
            snapshots: 0,
            error: None,
            duration: None,
            metrics: Vec::new(),
            live: LiveStats::default(),
        };
        s.load_settings();
        s
    }
}

impl SimState {
    /// Reads the scenario's own top-level settings as the editable defaults.
    pub fn load_settings(&mut self) {
        match latscope_sim::Scenario::load(&self.scenario) {
            Ok(sc) => {
                self.settings = sc.settings();
                self.question = sc.question().map(str::to_owned);
                self.description = sc.description().map(str::to_owned);
                self.error = None;
            }
            Err(e) => self.error = Some(e.to_string()),
        }
    }

    /// The settings as `KEY=VALUE` overrides.
    pub fn sets(&self) -> Vec<String> {
        self.settings.iter().map(|s| format!("{}={}", s.key, s.value.to_arg())).collect()
    }

    /// Whether the panel's scenario or settings differ from the run going on: Restart
    /// applies them.
    pub fn restart_pending(&self) -> bool {
        self.handle.is_some()
            && self.ran_with.as_ref().is_some_and(|(scenario, settings)| {
                *scenario != self.scenario
                    || settings.iter().zip(&self.settings).any(|(a, b)| a.value != b.value)
            })
    }

    pub fn speed_arg(&self) -> Option<f64> {
        (!self.max_speed).then_some(self.speed)
    }

    pub fn start_command(&self) -> SimCommand {
        SimCommand::Start { scenario: self.scenario.clone(), sets: self.sets(), duration: self.duration }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One live analysis at a time: while one runs the next waits, however long ago the last
    /// started, but the run's last snapshot is always analysed.
    #[test]
    fn live_analyses_wait_for_the_one_running_but_never_the_last() {
        let mut live = LiveStats::default();
        assert!(!live.due(true, false), "no scenario, nothing to analyse");
        let scenario =
            latscope_sim::prepare("litesdcard", &[], None, Some("1s")).expect("a built-in scenario");
        live.restart(&scenario);
        assert!(live.due(false, false));
        assert!(!live.due(false, true));
        assert!(live.due(true, true));
        live.last_start = Some(Instant::now() - 2 * LIVE_EVERY);
        assert!(live.due(false, false));
        assert!(!live.due(false, true));
        live.last_start = Some(Instant::now());
        assert!(!live.due(false, false), "asked again within {LIVE_EVERY:?}");
    }
}

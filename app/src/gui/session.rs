//! Sessions (`*.latscope.json`, docs/ARCHITECTURE.md "Workbench sessions"): the open files
//! with their alignment, the analysis rules, markers, cursors, the view and the user's lane
//! arrangement, and the theme — everything but the data, which is read again from the files.
//! Opening a session starts the loads in the background and restores the rest when they
//! have finished; a file that is gone becomes an in-window error and the rest restores.

use super::app::Workbench;
use super::jobs::{JobKind, Ticket};
use super::message::Message;
use super::theme::{self, ThemeKind};
use super::timeline::{Overlay, Viewport};
use anyhow::Context as _;
use latscope_engine::atomic;
use latscope_model::{Placement, Ps};
use std::path::{Path, PathBuf};

/// The version of the session layout (`latscope_session`).
pub const SESSION_VERSION: u32 = 1;

/// Whether `path` names a session file rather than a capture.
pub fn is_session_path(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.to_ascii_lowercase().ends_with(".latscope.json"))
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Session {
    pub latscope_session: u32,
    /// Open files in timeline order (simulator runs are not files and are not saved).
    pub files: Vec<SessionFile>,
    /// The analysis panel's rules, in order.
    #[serde(default)]
    pub rules: Vec<String>,
    #[serde(default)]
    pub markers: Vec<SessionMarker>,
    /// Cursor times on the common timeline, ps.
    #[serde(default)]
    pub cursor_a: Option<f64>,
    #[serde(default)]
    pub cursor_b: Option<f64>,
    /// The visible range: common time at the left edge (ps) and ps per point; without it
    /// the view fits the data.
    #[serde(default)]
    pub view: Option<SessionView>,
    #[serde(default)]
    pub theme: ThemeKind,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SessionFile {
    /// As opened; a relative path is relative to the session file's directory.
    pub path: PathBuf,
    /// Alignment onto the common timeline (`t + offset + t * drift_ppm / 1e6`).
    #[serde(default)]
    pub offset_ps: Ps,
    #[serde(default)]
    pub drift_ppm: f64,
    /// Lanes in display order; lanes of the file not listed keep their place after these.
    #[serde(default)]
    pub lanes: Vec<SessionLane>,
    /// Protocol decoder stacks run on the file, in order (`latscope decode --decoder`
    /// specs); decoded again when the session opens.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub decoders: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SessionLane {
    /// The lane's own name (track, event or `CPU n`), which identifies it.
    pub lane: String,
    /// The name shown (renamed by the user, else the same).
    pub name: String,
    pub visible: bool,
    /// `#rrggbb`.
    pub color: String,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SessionMarker {
    pub name: String,
    pub t_ps: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SessionView {
    pub start_ps: f64,
    pub ps_per_px: f64,
}

impl Session {
    /// The workbench's state as a session.
    pub fn capture(wb: &Workbench) -> Self {
        let files = wb
            .view
            .sources
            .iter()
            .filter_map(|sv| {
                let src = sv.source();
                let path = src.path.clone()?;
                let lanes = sv
                    .lanes
                    .iter()
                    .filter_map(|v| {
                        Some(SessionLane {
                            lane: sv.prepared.lanes.get(v.lane)?.name.clone(),
                            name: v.name.clone(),
                            visible: v.visible,
                            color: theme::to_hex(v.color),
                        })
                    })
                    .collect();
                let p = sv.placement;
                let decoders = super::decoder_dialog::specs_of(src);
                Some(SessionFile { path, offset_ps: p.offset, drift_ppm: p.drift_ppm, lanes, decoders })
            })
            .collect();
        Self {
            latscope_session: SESSION_VERSION,
            files,
            rules: wb.analysis.rules.specs.clone(),
            markers: wb
                .view
                .overlay
                .markers
                .iter()
                .map(|(name, t)| SessionMarker { name: name.clone(), t_ps: *t })
                .collect(),
            cursor_a: wb.view.overlay.cursor_a,
            cursor_b: wb.view.overlay.cursor_b,
            view: Some(SessionView {
                start_ps: wb.view.viewport.start,
                ps_per_px: wb.view.viewport.ps_per_px,
            }),
            theme: wb.theme,
        }
    }

    pub fn to_json(&self) -> anyhow::Result<String> {
        Ok(serde_json::to_string_pretty(self).context("writing the session")? + "\n")
    }

    /// Writes the session to `path` atomically, never over one of `inputs`.
    pub fn write(&self, path: &Path, inputs: &[PathBuf]) -> anyhow::Result<()> {
        atomic::write_atomic(path, self.to_json()?.as_bytes(), inputs)?;
        Ok(())
    }

    /// Reads and checks a session file; relative file paths become relative to its directory.
    pub fn read(path: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let mut s: Session = serde_json::from_str(&text)
            .with_context(|| format!("{}: not a latscope session", path.display()))?;
        if s.latscope_session != SESSION_VERSION {
            anyhow::bail!(
                "{}: session version {} (this latscope reads version {SESSION_VERSION})",
                path.display(),
                s.latscope_session
            );
        }
        if let Some(v) = s.view
            && !(v.ps_per_px.is_finite() && v.ps_per_px > 0.0 && v.start_ps.is_finite())
        {
            anyhow::bail!("{}: view has a bad range", path.display());
        }
        let dir = path.parent().unwrap_or(Path::new(""));
        for f in &mut s.files {
            if f.path.is_relative() {
                f.path = dir.join(&f.path);
            }
        }
        Ok(s)
    }
}

/// A session whose files are loading.
#[derive(Debug)]
pub(super) struct PendingSession {
    pub session: Session,
    /// Load jobs started for its files.
    pub jobs: Vec<Ticket>,
}

impl Workbench {
    /// Whether a session is still being restored (its files loading).
    pub fn session_pending(&self) -> bool {
        self.pending_session.is_some()
    }

    /// Whether a session is being read or restored.
    pub fn session_busy(&self) -> bool {
        self.jobs.busy(JobKind::SessionRead) || self.pending_session.is_some()
    }

    /// `Message::SessionRead`: replace what is open by the session's files, then restore
    /// the rest once they are loaded ([`Self::finish_session`]).
    pub(super) fn session_read(&mut self, path: &Path, result: Result<Session, String>) {
        let session = match result {
            Ok(s) => s,
            Err(e) => {
                self.errors.push(e);
                return;
            }
        };
        self.update(Message::CloseAll);
        let mut jobs = Vec::new();
        let mut missing = Vec::new();
        for f in &session.files {
            if !f.path.exists() {
                missing.push(format!(
                    "session {}: {} is missing; restoring the rest",
                    path.display(),
                    f.path.display()
                ));
                continue;
            }
            self.update(Message::OpenFiles(vec![f.path.clone()]));
            if let Some(j) = self.jobs.of_kind(JobKind::Load).last() {
                jobs.push(j.ticket);
            }
        }
        // Said after the session's files are asked for, so that their loading (which
        // closes the errors of earlier opens) leaves these in view.
        self.errors.extend(missing);
        self.theme = session.theme;
        self.analysis.rules.specs = session.rules.clone();
        // A session with rules runs them; one without gets the presets its files hold.
        self.analysis.chosen_by_files = session.rules.is_empty();
        self.pending_session = Some(PendingSession { session, jobs });
    }

    /// Restores a pending session once its loads are done; called every frame, after the
    /// first fit of the loaded data so that the session's view wins.
    pub(super) fn finish_session(&mut self) {
        let Some(p) = &self.pending_session else { return };
        if self.jobs.of_kind(JobKind::Load).any(|j| p.jobs.contains(&j.ticket)) {
            return;
        }
        let session = &p.session;
        // Sources in the session's order (`None` for a file that did not load); anything
        // else open stays after them.
        let mut order: Vec<Option<usize>> = Vec::new();
        for f in &session.files {
            let found = self.view.sources.iter().enumerate().position(|(i, sv)| {
                !order.contains(&Some(i)) && sv.source().path.as_deref() == Some(f.path.as_path())
            });
            order.push(found);
        }
        // Results of analyses run meanwhile name sources by their old places: drop them.
        self.analysis.clear();
        let placed: Vec<(SessionFile, usize)> =
            session.files.iter().zip(&order).filter_map(|(f, i)| Some((f.clone(), (*i)?))).collect();
        let Some(PendingSession { session, .. }) = self.pending_session.take() else { return };
        let mut rest: Vec<_> = std::mem::take(&mut self.view.sources).into_iter().map(Some).collect();
        let mut sources = Vec::with_capacity(rest.len());
        for (f, i) in placed {
            let Some(mut sv) = rest[i].take() else { continue };
            // The placement lives beside the source: restoring it touches no data (the
            // meshes were drawn at the old place, so they are invalidated).
            let placement = Placement::new(f.offset_ps, f.drift_ppm);
            if sv.placement != placement {
                sv.placement = placement;
                sv.generation = self.view.next_generation();
            }
            restore_lanes(&mut sv, &f.lanes);
            sources.push(sv);
        }
        sources.extend(rest.into_iter().flatten());
        self.view.sources = sources;
        // Decoders run again on the files they decoded (their rows join the lanes restored).
        let decoders: Vec<(usize, Vec<String>)> = session
            .files
            .iter()
            .filter(|f| !f.decoders.is_empty())
            .filter_map(|f| {
                let i = self
                    .view
                    .sources
                    .iter()
                    .position(|sv| sv.source().path.as_deref() == Some(f.path.as_path()))?;
                Some((i, f.decoders.clone()))
            })
            .collect();
        self.view.overlay = Overlay {
            cursor_a: session.cursor_a,
            cursor_b: session.cursor_b,
            markers: session.markers.iter().map(|m| (m.name.clone(), m.t_ps)).collect(),
            ..Overlay::default()
        };
        if let Some(v) = session.view {
            self.view.viewport = Viewport { start: v.start_ps, ps_per_px: v.ps_per_px };
        }
        self.theme = session.theme;
        self.update(Message::SetFilter(self.table.filter.clone()));
        for (source, specs) in decoders {
            self.update(Message::AddDecoder { source, specs });
        }
        // The results are part of what the session showed: compute them again.
        if !self.analysis.rules.specs.is_empty() && !self.view.sources.is_empty() {
            self.update(Message::RunAnalysis);
        }
    }
}

/// Puts `sv`'s lanes in the session's order with its names, visibility and colours.
fn restore_lanes(sv: &mut super::timeline::SourceView, saved: &[SessionLane]) {
    let mut rest: Vec<_> = std::mem::take(&mut sv.lanes).into_iter().map(Some).collect();
    let mut lanes = Vec::with_capacity(rest.len());
    for s in saved {
        let found = rest.iter().position(|v| {
            v.as_ref().and_then(|v| sv.prepared.lanes.get(v.lane)).is_some_and(|l| l.name == s.lane)
        });
        let Some(mut v) = found.and_then(|i| rest[i].take()) else { continue };
        v.name = s.name.clone();
        v.visible = s.visible;
        if let Some(c) = theme::from_hex(&s.color) {
            v.color = c;
        }
        lanes.push(v);
    }
    lanes.extend(rest.into_iter().flatten());
    sv.lanes = lanes;
}

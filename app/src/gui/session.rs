//! Sessions (`*.latscope.json`, docs/ARCHITECTURE.md "Workbench sessions"): the open files
//! with their alignment, the analysis rules, markers, cursors, the view and the user's lane
//! arrangement, and the theme — everything but the data, which is read again from the files.
//! Opening a session starts the loads in the background and restores the rest when they
//! have finished; a file that is gone becomes an in-window error and the rest restores.

use super::document::{Document, SourceId};
use super::prepare::Prepared;
use super::theme::{self, ThemeKind};
use super::view::{LaneView, ViewState};
use anyhow::Context as _;
use latscope_engine::atomic;
use latscope_model::Ps;
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
    /// How the file was placed when neither its clock nor an alignment did (the recorder's
    /// `host clocks (±U): …` for a logic analyzer beside the kernel).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placed_by: Option<String>,
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
    /// The document, its view, the rules and the look as a session.
    pub fn capture(doc: &Document, view: &ViewState, rules: &[String], theme: ThemeKind) -> Self {
        let files = doc
            .sources
            .iter()
            .filter_map(|sv| {
                let src = sv.source();
                let path = src.path.clone()?;
                let lanes = view
                    .lanes_of(sv.id)
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
                let placed_by = sv.placed_by.clone();
                Some(SessionFile {
                    path,
                    offset_ps: p.offset,
                    drift_ppm: p.drift_ppm,
                    lanes,
                    decoders,
                    placed_by,
                })
            })
            .collect();
        Self {
            latscope_session: SESSION_VERSION,
            files,
            rules: rules.to_vec(),
            markers: view
                .overlay
                .markers
                .iter()
                .map(|(name, t)| SessionMarker { name: name.clone(), t_ps: *t })
                .collect(),
            cursor_a: view.overlay.cursor_a,
            cursor_b: view.overlay.cursor_b,
            view: Some(SessionView { start_ps: view.viewport.start, ps_per_px: view.viewport.ps_per_px }),
            theme,
        }
    }

    pub fn to_json(&self) -> anyhow::Result<String> {
        Ok(serde_json::to_string_pretty(self).context("writing the session")? + "\n")
    }

    /// Copies each file of this session that is one of `temporary` (a recording's logic
    /// capture, removed when the window closes) beside the session at `path`, as
    /// `NAME-logic.sr` (`NAME-logic-2.sr`…), atomically and never over one of `inputs`, and
    /// names the copy instead: the session reopens after the window is closed.
    pub fn keep_temporary(
        &mut self,
        path: &Path,
        temporary: &[PathBuf],
        inputs: &[PathBuf],
    ) -> anyhow::Result<()> {
        let dir = path.parent().unwrap_or(Path::new(""));
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let stem = name
            .get(..name.len().saturating_sub(".latscope.json".len()))
            .filter(|s| is_session_path(path) && !s.is_empty())
            .unwrap_or("session")
            .to_owned();
        let mut kept = 0;
        for f in self.files.iter_mut().filter(|f| temporary.contains(&f.path)) {
            kept += 1;
            let ext =
                f.path.extension().map(|e| e.to_string_lossy().into_owned()).unwrap_or_else(|| "sr".into());
            let copy_name =
                if kept == 1 { format!("{stem}-logic.{ext}") } else { format!("{stem}-logic-{kept}.{ext}") };
            let copy = dir.join(&copy_name);
            let from = f.path.clone();
            atomic::write_atomic_with(&copy, inputs, |w| {
                let mut src = std::fs::File::open(&from)?;
                std::io::copy(&mut src, w).map(drop)
            })
            .with_context(|| {
                format!("keeping the recording's capture {} as {}", from.display(), copy.display())
            })?;
            f.path = PathBuf::from(copy_name);
        }
        Ok(())
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

/// A session whose files are loading: each file that exists, with the id its load took.
#[derive(Debug)]
pub struct PendingSession {
    pub session: Session,
    pub files: Vec<(SessionFile, SourceId)>,
}

/// `lanes` (the view's lanes of `prepared`) in the session's order, with its names,
/// visibility and colours; lanes the session does not list keep their order after these.
pub fn restore_lanes(prepared: &Prepared, lanes: Vec<LaneView>, saved: &[SessionLane]) -> Vec<LaneView> {
    let mut rest: Vec<_> = lanes.into_iter().map(Some).collect();
    let mut out = Vec::with_capacity(rest.len());
    for s in saved {
        let found = rest.iter().position(|v| {
            v.as_ref().and_then(|v| prepared.lanes.get(v.lane)).is_some_and(|l| l.name == s.lane)
        });
        let Some(mut v) = found.and_then(|i| rest[i].take()) else { continue };
        v.name = s.name.clone();
        v.visible = s.visible;
        if let Some(c) = theme::from_hex(&s.color) {
            v.color = c;
        }
        out.push(v);
    }
    out.extend(rest.into_iter().flatten());
    out
}

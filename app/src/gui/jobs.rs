//! The one job runner: every background job of the workbench (loading a file, a table query,
//! an analysis, live statistics, an alignment, a derived lane, a decode, the live simulator,
//! a save, a session read, a screenshot, a fleet aggregation) is started here, on a named
//! thread, with a [`Ticket`]. The runner knows nothing of the workbench's messages: it is
//! generic over the message type `M` its jobs send back.
//!
//! The runner owns what every job needs and what used to be written once per job:
//! - thread spawning, with a failure to start reported in the window;
//! - progress and cancel, through one [`LoadControl`] per job;
//! - staleness. A job's answer carries its ticket, and `update` hands it to
//!   [`JobRunner::accept`] before using it. An answer is stale, and dropped, when its job was
//!   cancelled, superseded by a newer job of the same slot (a newer table query, analysis
//!   run, …), or when it read a source whose data has changed since (its [`SourceStamp`]):
//!   a derived lane must not bring back the copy of a source that was closed or aligned
//!   while it was being computed.

pub use super::document::SourceStamp;
use latscope_importers::LoadControl;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, OnceLock};

/// What a job does (also its thread's name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JobKind {
    Load,
    Table,
    Analysis,
    LiveStats,
    Align,
    Derive,
    Decode,
    Simulator,
    Save,
    SessionRead,
    Screenshot,
    Fleet,
    Query,
    SigrokList,
    Record,
}

impl JobKind {
    fn thread_name(self) -> &'static str {
        match self {
            JobKind::Load => "latscope-load",
            JobKind::Table => "latscope-table",
            JobKind::Analysis => "latscope-analysis",
            JobKind::LiveStats => "latscope-live-stats",
            JobKind::Align => "latscope-align",
            JobKind::Derive => "latscope-derive",
            JobKind::Decode => "latscope-decode",
            JobKind::Simulator => "latscope-sim",
            JobKind::Save => "latscope-save",
            JobKind::SessionRead => "latscope-session",
            JobKind::Screenshot => "latscope-screenshot",
            JobKind::Fleet => "latscope-fleet",
            JobKind::Query => "latscope-query",
            JobKind::SigrokList => "latscope-sigrok-list",
            JobKind::Record => "latscope-record",
        }
    }

    /// Whether a newer job of this kind makes the older one's answer useless (only the
    /// latest query, run, fit or statistics update is shown). Loads, saves, session reads and
    /// derivations each stand on their own.
    fn latest_wins(self) -> bool {
        matches!(
            self,
            JobKind::Table
                | JobKind::Analysis
                | JobKind::LiveStats
                | JobKind::Align
                | JobKind::Simulator
                | JobKind::Fleet
                | JobKind::Query
        )
    }

    /// Whether the job reads the open sources, so that closing them makes its answer stale.
    fn reads_sources(self) -> bool {
        !matches!(
            self,
            JobKind::Load
                | JobKind::Save
                | JobKind::SessionRead
                | JobKind::Screenshot
                | JobKind::Fleet
                | JobKind::SigrokList
                | JobKind::Record
        )
    }
}

/// A job's staleness ticket: its answer names it, and only a ticket the runner still holds
/// (and whose source is unchanged) is accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ticket {
    /// Increasing in the order jobs were started.
    pub id: u64,
    pub kind: JobKind,
}

/// What the runner makes of a job's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Wanted: apply it.
    Current,
    /// The job was cancelled, superseded or its sources closed: drop it silently.
    Gone,
    /// The source it read has changed since: drop it, and the user may want to know.
    Changed,
}

/// A job's thread could not be started: said in the window.
#[derive(Debug, thiserror::Error)]
#[error("cannot start the {thread} thread: {error}")]
pub struct SpawnFailed {
    pub thread: &'static str,
    pub error: std::io::Error,
}

/// Sent by a job's thread when its work has returned, after everything the work held has
/// been dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobEnded(pub Ticket);

/// What a running job gets: its ticket, its control (progress, cancel) and the way back.
#[derive(Debug, Clone)]
pub struct JobContext<M> {
    pub ticket: Ticket,
    pub control: LoadControl,
    pub outbox: Outbox<M>,
}

impl<M> JobContext<M> {
    /// Whether the job was cancelled or superseded: it should stop and send nothing.
    pub fn cancelled(&self) -> bool {
        self.control.is_cancelled()
    }

    pub fn send(&self, msg: impl Into<M>) {
        self.outbox.send(msg.into());
    }
}

/// A job the runner is waiting for.
#[derive(Debug, Clone)]
pub struct RunningJob {
    pub ticket: Ticket,
    /// The file it reads (a load).
    pub path: Option<std::path::PathBuf>,
    pub control: LoadControl,
    reads: Option<SourceStamp>,
}

impl RunningJob {
    /// Fraction done in `0.0..=1.0` (jobs that do not report progress stay at 0).
    pub fn progress(&self) -> f32 {
        self.control.fraction()
    }
}

/// Sends messages to the UI and wakes it. The egui context is set on the first frame; a
/// message sent before that simply waits in the channel.
#[derive(Debug)]
pub struct Outbox<M> {
    tx: Sender<M>,
    ctx: Arc<OnceLock<egui::Context>>,
}

impl<M> Clone for Outbox<M> {
    fn clone(&self) -> Self {
        Self { tx: self.tx.clone(), ctx: self.ctx.clone() }
    }
}

impl<M> Outbox<M> {
    pub fn new() -> (Self, Receiver<M>) {
        let (tx, rx) = channel();
        (Self { tx, ctx: Arc::new(OnceLock::new()) }, rx)
    }

    pub fn set_context(&self, ctx: &egui::Context) {
        if self.ctx.get().is_none() {
            self.ctx.set(ctx.clone()).ok();
        }
    }

    pub fn send(&self, msg: M) {
        // The receiver lives as long as the workbench; after that nobody is listening.
        self.tx.send(msg).ok();
        if let Some(ctx) = self.ctx.get() {
            ctx.request_repaint();
        }
    }
}

/// Starts, tracks and judges every background job; its jobs answer with messages `M`.
#[derive(Debug)]
pub struct JobRunner<M> {
    outbox: Outbox<M>,
    inbox: Receiver<M>,
    next_id: u64,
    running: Vec<RunningJob>,
}

impl<M> Default for JobRunner<M> {
    fn default() -> Self {
        let (outbox, inbox) = Outbox::new();
        Self { outbox, inbox, next_id: 1, running: Vec::new() }
    }
}

impl<M: From<SpawnFailed> + From<JobEnded> + Send + 'static> JobRunner<M> {
    /// The sender workers and pickers use; tests use it to inject messages.
    pub fn outbox(&self) -> Outbox<M> {
        self.outbox.clone()
    }

    /// The next message a job (or a picker) sent, if any.
    pub fn try_recv(&self) -> Option<M> {
        self.inbox.try_recv().ok()
    }

    /// Starts `work` on its own thread and returns its ticket. `reads` is the source the job
    /// works on, if it works on one source. A job of a latest-wins kind cancels the running
    /// ones of its kind.
    pub fn spawn(
        &mut self,
        kind: JobKind,
        reads: Option<SourceStamp>,
        work: impl FnOnce(JobContext<M>) + Send + 'static,
    ) -> Ticket {
        self.start(kind, None, reads, LoadControl::new(), work)
    }

    /// Starts loading `path`; the importer reports its progress in `control`.
    pub fn spawn_load(
        &mut self,
        path: std::path::PathBuf,
        control: LoadControl,
        work: impl FnOnce(JobContext<M>) + Send + 'static,
    ) -> Ticket {
        self.start(JobKind::Load, Some(path), None, control, work)
    }

    fn start(
        &mut self,
        kind: JobKind,
        path: Option<std::path::PathBuf>,
        reads: Option<SourceStamp>,
        control: LoadControl,
        work: impl FnOnce(JobContext<M>) + Send + 'static,
    ) -> Ticket {
        if kind.latest_wins() {
            self.cancel_kind(kind);
        }
        let ticket = Ticket { id: self.next_id, kind };
        self.next_id += 1;
        let cx = JobContext { ticket, control: control.clone(), outbox: self.outbox.clone() };
        let ended = self.outbox.clone();
        let spawned = std::thread::Builder::new().name(kind.thread_name().to_owned()).spawn(move || {
            work(cx);
            // `work` and what it captured are gone: say so (a source it shared is free).
            ended.send(JobEnded(ticket).into());
        });
        match spawned {
            Ok(_) => self.running.push(RunningJob { ticket, path, control, reads }),
            Err(error) => self.outbox.send(SpawnFailed { thread: kind.thread_name(), error }.into()),
        }
        ticket
    }

    /// Takes a job's final answer: whether it is still wanted. `current` tells whether the
    /// source the job read still holds the same data. The job is done either way.
    pub fn accept(&mut self, ticket: Ticket, current: impl Fn(SourceStamp) -> bool) -> bool {
        self.judge(ticket, current) == Verdict::Current
    }

    /// [`Self::accept`], telling why an answer is not wanted.
    pub fn judge(&mut self, ticket: Ticket, current: impl Fn(SourceStamp) -> bool) -> Verdict {
        let Some(i) = self.running.iter().position(|j| j.ticket == ticket) else { return Verdict::Gone };
        let job = self.running.remove(i);
        if job.reads.is_none_or(current) { Verdict::Current } else { Verdict::Changed }
    }

    /// Takes one of several answers of a job that keeps running (the live simulator's
    /// snapshots): whether the job is still wanted.
    pub fn is_current(&self, ticket: Ticket) -> bool {
        self.running.iter().any(|j| j.ticket == ticket)
    }

    /// Stops a job: it stops at its next check, and its late answer is dropped.
    pub fn cancel(&mut self, ticket: Ticket) {
        self.running.retain(|j| {
            if j.ticket == ticket {
                j.control.cancel();
            }
            j.ticket != ticket
        });
    }

    /// Stops every running job of `kind`.
    pub fn cancel_kind(&mut self, kind: JobKind) {
        self.running.retain(|j| {
            if j.ticket.kind == kind {
                j.control.cancel();
            }
            j.ticket.kind != kind
        });
    }

    /// The open sources are gone (Close all, a session replacing them): every job that read
    /// them is stopped. Loads go on: their files join whatever is opened next.
    pub fn forget_sources(&mut self) {
        self.running.retain(|j| {
            let reads = j.ticket.kind.reads_sources();
            if reads {
                j.control.cancel();
            }
            !reads
        });
    }

    /// The jobs running, oldest first.
    pub fn running(&self) -> impl Iterator<Item = &RunningJob> {
        self.running.iter()
    }

    /// The running jobs of `kind`, oldest first.
    pub fn of_kind(&self, kind: JobKind) -> impl Iterator<Item = &RunningJob> {
        self.running.iter().filter(move |j| j.ticket.kind == kind)
    }

    /// Whether a job of `kind` is running.
    pub fn busy(&self, kind: JobKind) -> bool {
        self.of_kind(kind).next().is_some()
    }

    /// Whether no job is running at all.
    pub fn idle(&self) -> bool {
        self.running.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the tests' jobs send.
    #[derive(Debug)]
    enum Said {
        Text(&'static str),
        Failed,
        Ended(Ticket),
    }

    impl From<SpawnFailed> for Said {
        fn from(_: SpawnFailed) -> Self {
            Said::Failed
        }
    }

    impl From<JobEnded> for Said {
        fn from(JobEnded(t): JobEnded) -> Self {
            Said::Ended(t)
        }
    }

    type JobRunner = super::JobRunner<Said>;

    /// The next answer of a job (not the note that a job's thread ended).
    fn wait(runner: &JobRunner) -> Said {
        loop {
            match runner.inbox.recv_timeout(std::time::Duration::from_secs(30)).expect("the job answers") {
                Said::Ended(_) => continue,
                said => return said,
            }
        }
    }

    #[test]
    fn a_job_says_it_ended_once_what_it_held_is_let_go() {
        let mut r = JobRunner::default();
        let shared = Arc::new(vec![1u8; 16]);
        let held = shared.clone();
        let t = r.spawn(JobKind::Derive, None, move |cx| {
            // The answer goes first, while the job still holds its share.
            cx.send(Said::Text(if held.len() == 16 { "held" } else { "?" }));
        });
        assert!(matches!(wait(&r), Said::Text("held")));
        let ended = loop {
            match r.inbox.recv_timeout(std::time::Duration::from_secs(30)).expect("the job ends") {
                Said::Ended(ticket) => break ticket,
                _ => continue,
            }
        };
        assert_eq!(ended, t);
        assert_eq!(Arc::strong_count(&shared), 1, "the job's share is dropped before it says it ended");
    }

    #[test]
    fn a_newer_job_of_a_latest_wins_kind_makes_the_older_answer_stale() {
        let mut r = JobRunner::default();
        let first = r.spawn(JobKind::Table, None, |cx| cx.send(Said::Text("first")));
        let second = r.spawn(JobKind::Table, None, |cx| cx.send(Said::Text("second")));
        let answers = [wait(&r), wait(&r)];
        assert!(answers.iter().all(|a| matches!(a, Said::Text(_))), "{answers:?}");
        assert!(!r.accept(first, |_| true), "superseded");
        assert!(r.accept(second, |_| true));
        assert!(!r.accept(second, |_| true), "an answer is taken once");
        assert!(r.idle());
    }

    #[test]
    fn an_answer_about_changed_data_or_forgotten_sources_is_stale() {
        let mut r = JobRunner::default();
        let stamp = SourceStamp { id: crate::gui::document::SourceId(1), generation: 7 };
        let a = r.spawn(JobKind::Derive, Some(stamp), |_| {});
        let b = r.spawn(JobKind::Derive, Some(stamp), |_| {});
        // Derivations stand on their own: both run.
        assert_eq!(r.of_kind(JobKind::Derive).count(), 2);
        assert_eq!(r.judge(a, |s| s.generation == 8), Verdict::Changed, "the source changed meanwhile");
        let load = r.spawn_load("x".into(), LoadControl::new(), |_| {});
        r.forget_sources();
        assert_eq!(r.judge(b, |_| true), Verdict::Gone, "closed meanwhile");
        assert!(r.accept(load, |_| true), "a load outlives Close all");
    }

    #[test]
    fn cancel_reaches_the_worker() {
        let mut r = JobRunner::default();
        let (tx, rx) = channel();
        let t = r.spawn(JobKind::Analysis, None, move |cx| {
            while !cx.cancelled() {
                std::thread::yield_now();
            }
            tx.send(()).ok();
        });
        r.cancel(t);
        rx.recv_timeout(std::time::Duration::from_secs(30)).expect("the worker saw the cancel");
        assert!(!r.accept(t, |_| true));
    }
}

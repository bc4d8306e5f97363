//! [`Workbench::update`]: the one place state changes. A [`Message`] is addressed to one
//! room, and the compiler routes it: each room's enum goes to that room's handler, which
//! matches all of it. Every answer of a background job is first judged by the job runner
//! ([`JobRunner::accept`](super::jobs::JobRunner::accept)); a stale one changes nothing.
//!
//! After each message, `update` settles what it made due: a derived lane whose source a
//! job has let go, a session whose files have loaded, the command line's next step, the
//! presets of newly opened files, a fleet pair whose capture has loaded. Nothing else
//! changes state: the frame only draws, and sends what it saw (the timeline's width) as
//! messages too.

mod align;
mod analysis;
mod decoder;
mod derive;
mod files;
mod fleet;
mod query;
mod record;
mod save;
mod session;
mod shell;
mod sim;
mod startup;
mod table;
mod view;

use super::app::Workbench;
use super::jobs::JobKind;
use super::message::Message;

/// How many rounds of settling one message may cause at most (each round's steps start
/// jobs or finish what jobs left; none can loop on itself).
const SETTLE_ROUNDS: usize = 8;

impl Workbench {
    /// Applies one message, then settles what it made due.
    pub fn update(&mut self, msg: Message) {
        match msg {
            Message::Files(m) => self.update_files(m),
            Message::View(m) => self.update_view(m),
            Message::Table(m) => self.update_table(m),
            Message::Analysis(m) => self.update_analysis(m),
            Message::Align(m) => self.update_align(m),
            Message::Derive(m) => self.update_derive(m),
            Message::Decoder(m) => self.update_decoder(m),
            Message::Sim(m) => self.update_sim(m),
            Message::Save(m) => self.update_save(m),
            Message::Shell(m) => self.update_shell(m),
            Message::Fleet(m) => self.update_fleet(m),
            Message::Query(m) => self.update_query(m),
            Message::Record(m) => self.update_record(m),
            // What the job held is free now: settling adds the derived lanes that waited.
            Message::JobEnded(ticket) => {
                // A table query that ended without an answer (it panicked) asks no more.
                if ticket.kind == JobKind::Table && self.jobs.is_current(ticket) {
                    self.jobs.cancel(ticket);
                    self.table.asking = None;
                }
            }
        }
        if !self.settling {
            self.settling = true;
            self.settle();
            self.settling = false;
        }
    }

    /// The steps a message may have made due, until none acts. A step sends its own
    /// messages through `update` (which does not settle again while this runs).
    fn settle(&mut self) {
        for _ in 0..SETTLE_ROUNDS {
            let acted = self.add_pending_derived()
                | self.finish_session()
                | self.session_rules_step()
                | self.startup_step()
                | self.presets_step()
                | self.fleet_jump_step();
            if !acted {
                break;
            }
        }
        self.view.drop_stale_arrow();
    }
}

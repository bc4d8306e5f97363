//! Protocol decoders' messages: the Add decoder dialog, the decode job (the source comes back
//! rebuilt with its annotation rows) and its answer.

use crate::gui::app::Workbench;
use crate::gui::decoder_dialog::{self, DecoderDialog};
use crate::gui::document::SourceId;
use crate::gui::jobs::{JobKind, Verdict};
use crate::gui::message::{DecoderMsg, TableMsg};
use crate::gui::prepare::Prepared;
use crate::gui::view::carried_lanes;
use latscope_decoders::spec::Stack;
use std::sync::Arc;

impl Workbench {
    pub(super) fn update_decoder(&mut self, msg: DecoderMsg) {
        match msg {
            DecoderMsg::Open(source) => self.open_decoder(source),
            DecoderMsg::Edit(d) => self.dialogs.decoder = d,
            DecoderMsg::Add { source, stacks } => self.add_decoder(source, stacks),
            DecoderMsg::SigrokListed { ticket, result } => {
                if !self.jobs.accept(ticket, |_| true) {
                    return;
                }
                match result {
                    Ok(decoders) => {
                        Arc::make_mut(&mut self.registry).add_sigrok_decoders(decoders);
                    }
                    // Without sigrok-cli the native decoders are all there is; a `sigrok:`
                    // stack typed by hand still says how to install it.
                    Err(e) => {
                        self.notice =
                            Some(format!("sigrok decoders not listed: {}", crate::errors::error_text(&e)))
                    }
                }
            }
            DecoderMsg::Decoded { ticket, source, result } => {
                match (self.jobs.judge(ticket, |s| self.doc.is_current(s)), result) {
                    (Verdict::Current, Ok(prepared)) => self.decoded(source, prepared),
                    (Verdict::Current, Err(e)) => self.errors.push(e.context("decode")),
                    (Verdict::Changed, _) => self.errors.push(anyhow::anyhow!(
                        "decode: the source changed while it was decoded; add the decoder again"
                    )),
                    (Verdict::Gone, _) => {}
                }
            }
        }
    }

    /// Opens the "Add decoder…" dialog on `source`, else the focused lane's source, else the
    /// first source with channels.
    fn open_decoder(&mut self, source: Option<SourceId>) {
        let doc = &self.doc;
        let has_channels = |id: SourceId| {
            doc.get(id).is_some_and(|s| !s.source().digital.is_empty() || !s.source().analog.is_empty())
        };
        let focused = self.view.overlay.focused.map(|f| f.source);
        let pick = source
            .or(focused.filter(|&id| has_channels(id)))
            .or_else(|| doc.ids().into_iter().find(|&id| has_channels(id)));
        if !self.dialogs.sigrok_asked {
            self.dialogs.sigrok_asked = true;
            self.jobs.spawn(JobKind::SigrokList, None, |cx| {
                let result = latscope_engine::sigrok::catalogue().map_err(anyhow::Error::from);
                cx.send(DecoderMsg::SigrokListed { ticket: cx.ticket, result });
            });
        }
        let doc = &self.doc;
        match pick.and_then(|id| doc.get(id)) {
            Some(s) => self.dialogs.decoder = DecoderDialog::open_on(&self.registry, s.source(), s.id),
            None => self
                .errors
                .push(anyhow::anyhow!("Add decoder: open a capture with digital or analog channels first")),
        }
    }

    /// Decodes `source` with `stacks` on a worker: the source is copied with the
    /// annotations attached and its lanes prepared there ([`decoder_dialog::decode_into`]).
    fn add_decoder(&mut self, source: SourceId, stacks: Vec<Stack>) {
        let Some(s) = self.doc.get(source) else { return };
        let p = s.prepared.clone();
        let registry = self.registry.clone();
        self.jobs.spawn(JobKind::Decode, self.doc.stamp(source), move |cx| {
            let result = decoder_dialog::decode_into(&registry, &p.source, &stacks)
                .map(Arc::new)
                .map_err(anyhow::Error::from);
            drop(p);
            cx.send(DecoderMsg::Decoded { ticket: cx.ticket, source, result });
        });
    }

    /// A decode job's answer: the source with its annotation rows; the event lanes it added
    /// start hidden (the rows show them; the table and search list the events).
    fn decoded(&mut self, id: SourceId, prepared: Arc<Prepared>) {
        let hidden = decoder_dialog::decoded_event_lanes(&prepared);
        self.replace_source(id, prepared);
        if let Some(lanes) = self.view.lanes.get_mut(&id) {
            for v in lanes.iter_mut().filter(|v| hidden.contains(&v.name)) {
                v.visible = false;
            }
        }
        self.update(TableMsg::SetFilter(self.table.filter.clone()).into());
    }

    /// Replaces source `id`'s data, keeping the user's choices for lanes whose names still
    /// exist, and its place.
    pub(super) fn replace_source(&mut self, id: SourceId, prepared: Arc<Prepared>) {
        let old = self.view.lanes.remove(&id).unwrap_or_default();
        self.view.lanes.insert(id, carried_lanes(&prepared, &old, self.theme));
        self.doc.replace(id, prepared);
    }
}

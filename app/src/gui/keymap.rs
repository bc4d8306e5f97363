//! The one table of the workbench's actions: each with its name, its place in the menus,
//! its keyboard shortcut and the message it sends. The command palette lists the table,
//! the menus take their labels and shortcut texts from it, and the keyboard handler
//! ([`keyboard`]) acts on exactly the shortcuts it names, so a shortcut is defined once.

use super::export::SaveWhat;
use super::message::{
    AlignMsg, AnalysisMsg, DecoderMsg, FileMsg, FleetMsg, Message, QueryMsg, RecordMsg, SaveMsg, ShellMsg,
    TableMsg, ViewMsg,
};
use super::view::PanelId;
use egui::{Key, Modifiers};
use latscope_analysis::report::Format;

/// A key with its modifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shortcut {
    pub modifiers: Modifiers,
    pub key: Key,
}

impl Shortcut {
    const fn plain(key: Key) -> Self {
        Self { modifiers: Modifiers::NONE, key }
    }
    const fn shift(key: Key) -> Self {
        Self { modifiers: Modifiers::SHIFT, key }
    }
    const fn command(key: Key) -> Self {
        Self { modifiers: Modifiers::COMMAND, key }
    }
    const fn command_shift(key: Key) -> Self {
        Self { modifiers: Modifiers { shift: true, ..Modifiers::COMMAND }, key }
    }

    /// How menus and the palette write it: `Ctrl+Shift+P`, `Shift+N`, `Esc`.
    pub fn label(&self) -> String {
        let m = self.modifiers;
        let mut out = String::new();
        if m.command || m.ctrl {
            out += "Ctrl+";
        }
        if m.alt {
            out += "Alt+";
        }
        if m.shift {
            out += "Shift+";
        }
        out += match self.key {
            Key::Escape => "Esc",
            other => other.name(),
        };
        out
    }

    /// Whether it acts while a text field has the keyboard: chords with Ctrl and function
    /// keys do; a plain letter is typed into the field instead.
    pub fn while_typing(&self) -> bool {
        let function_key = self.key.name().strip_prefix('F').is_some_and(|n| n.parse::<u8>().is_ok());
        self.modifiers.command || self.modifiers.ctrl || function_key
    }

    /// How many modifiers it names: egui lets a key pressed with Shift match a shortcut
    /// without Shift, so the more specific shortcuts are tried first.
    fn specificity(&self) -> u8 {
        let m = self.modifiers;
        u8::from(m.command || m.ctrl) + u8::from(m.shift) + u8::from(m.alt)
    }
}

/// Every action, by name in code. [`ACTIONS`] lists them in this order, and the last one is
/// named where the table's length is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActionId {
    OpenFiles,
    CloseAll,
    ZoomIn,
    ZoomOut,
    PanLeft,
    PanRight,
    FitAll,
    NextEdge,
    PreviousEdge,
    ClearCursors,
    Escape,
    AddMarker,
    FilterEvents,
    NextMatch,
    PreviousMatch,
    ToggleTracks,
    ToggleTable,
    ToggleAnalysis,
    ToggleSimulator,
    ToggleLog,
    RunAnalysis,
    Palette,
    ExportHtml,
    ExportMarkdown,
    ExportJson,
    ExportCsv,
    ExportParquet,
    ExportPerfetto,
    SaveTimelinePng,
    SaveSession,
    OpenSession,
    ToggleTheme,
    Align,
    OpenDataset,
    AddDecoder,
    Query,
    Record,
    NextRow,
    PreviousRow,
}

/// One action: its name in the palette, its label in a menu (`None`: the name), its
/// shortcut, and the message it sends.
#[derive(Debug, Clone, Copy)]
pub struct Action {
    pub id: ActionId,
    pub name: &'static str,
    pub menu_label: Option<&'static str>,
    pub shortcut: Option<Shortcut>,
    make: fn() -> Message,
}

impl Action {
    pub fn message(&self) -> Message {
        (self.make)()
    }

    /// The shortcut as the palette writes it (empty when there is none).
    pub fn shortcut_text(&self) -> String {
        self.shortcut.map(|s| s.label()).unwrap_or_default()
    }

    /// The menu entry's text: its label and, when it has one, its shortcut.
    pub fn menu_text(&self) -> String {
        let label = self.menu_label.unwrap_or(self.name);
        match self.shortcut {
            Some(s) => format!("{label}  {}", s.label()),
            None => label.to_owned(),
        }
    }
}

const fn action(
    id: ActionId,
    name: &'static str,
    shortcut: Option<Shortcut>,
    make: fn() -> Message,
) -> Action {
    Action { id, name, menu_label: None, shortcut, make }
}

const fn in_menu_as(mut a: Action, label: &'static str) -> Action {
    a.menu_label = Some(label);
    a
}

fn export(format: Format) -> Message {
    Message::Save(SaveMsg::Export(SaveWhat::Report(format)))
}

use ActionId as A;

/// The table. Its order is the palette's.
pub const ACTIONS: &[Action] = &[
    in_menu_as(
        action(A::OpenFiles, "Open files…", Some(Shortcut::command(Key::O)), || {
            Message::Files(FileMsg::Pick)
        }),
        "Open…",
    ),
    in_menu_as(
        action(A::CloseAll, "Close all sources", None, || Message::Files(FileMsg::CloseAll)),
        "Close all",
    ),
    action(A::ZoomIn, "Zoom in", Some(Shortcut::plain(Key::W)), || {
        Message::View(ViewMsg::Zoom { factor: 0.5, at: f64::NAN })
    }),
    action(A::ZoomOut, "Zoom out", Some(Shortcut::plain(Key::S)), || {
        Message::View(ViewMsg::Zoom { factor: 2.0, at: f64::NAN })
    }),
    action(A::PanLeft, "Pan left", Some(Shortcut::plain(Key::A)), || {
        Message::View(ViewMsg::PanFraction(-0.2))
    }),
    action(A::PanRight, "Pan right", Some(Shortcut::plain(Key::D)), || {
        Message::View(ViewMsg::PanFraction(0.2))
    }),
    action(A::FitAll, "Fit all", Some(Shortcut::plain(Key::F)), || Message::View(ViewMsg::FitAll)),
    action(A::NextEdge, "Next edge/event on focused lane", Some(Shortcut::plain(Key::N)), || {
        Message::View(ViewMsg::StepEdge(true))
    }),
    action(A::PreviousEdge, "Previous edge/event on focused lane", Some(Shortcut::shift(Key::N)), || {
        Message::View(ViewMsg::StepEdge(false))
    }),
    action(A::ClearCursors, "Clear cursors", None, || Message::View(ViewMsg::ClearCursors)),
    action(
        A::Escape,
        "Close the error banner, else clear cursors",
        Some(Shortcut::plain(Key::Escape)),
        || Message::Shell(ShellMsg::Escape),
    ),
    action(A::AddMarker, "Add marker at cursor A", Some(Shortcut::plain(Key::M)), || {
        Message::View(ViewMsg::AddMarker)
    }),
    action(A::FilterEvents, "Filter events", Some(Shortcut::command(Key::F)), || {
        Message::Table(TableMsg::FocusFilter)
    }),
    action(A::NextMatch, "Next search match", Some(Shortcut::plain(Key::F3)), || {
        Message::Table(TableMsg::SearchStep(true))
    }),
    action(A::PreviousMatch, "Previous search match", Some(Shortcut::shift(Key::F3)), || {
        Message::Table(TableMsg::SearchStep(false))
    }),
    in_menu_as(
        action(A::ToggleTracks, "Toggle track list", None, || {
            Message::View(ViewMsg::TogglePanel(PanelId::Tracks))
        }),
        "Track list",
    ),
    in_menu_as(
        action(A::ToggleTable, "Toggle event table", None, || {
            Message::View(ViewMsg::TogglePanel(PanelId::Table))
        }),
        "Event table",
    ),
    in_menu_as(
        action(A::ToggleAnalysis, "Toggle analysis panel", None, || {
            Message::View(ViewMsg::TogglePanel(PanelId::Analysis))
        }),
        "Analysis",
    ),
    in_menu_as(
        action(A::ToggleSimulator, "Toggle simulator panel", None, || {
            Message::View(ViewMsg::TogglePanel(PanelId::Simulator))
        }),
        "Simulator",
    ),
    in_menu_as(
        action(A::ToggleLog, "Toggle log", None, || Message::View(ViewMsg::TogglePanel(PanelId::Log))),
        "Log",
    ),
    in_menu_as(
        action(A::RunAnalysis, "Run analysis", None, || Message::Analysis(AnalysisMsg::Run)),
        "Run the analysis panel's rules",
    ),
    action(A::Palette, "Command palette", Some(Shortcut::command_shift(Key::P)), || {
        Message::Shell(ShellMsg::TogglePalette)
    }),
    action(A::ExportHtml, "Export report as HTML…", None, || export(Format::Html)),
    action(A::ExportMarkdown, "Export report as Markdown…", None, || export(Format::Md)),
    action(A::ExportJson, "Export report as JSON…", None, || export(Format::Json)),
    action(A::ExportCsv, "Export samples as CSV…", None, || export(Format::Csv)),
    action(A::ExportParquet, "Export samples as Parquet…", None, || export(Format::Parquet)),
    action(A::ExportPerfetto, "Export trace for Perfetto (ui.perfetto.dev)…", None, || {
        Message::Save(SaveMsg::Export(SaveWhat::PerfettoTrace))
    }),
    action(A::SaveTimelinePng, "Save timeline as PNG…", None, || {
        Message::Save(SaveMsg::Export(SaveWhat::TimelinePng))
    }),
    action(A::SaveSession, "Save session…", None, || Message::Save(SaveMsg::Export(SaveWhat::Session))),
    action(A::OpenSession, "Open session…", None, || Message::Files(FileMsg::Pick)),
    in_menu_as(
        action(A::ToggleTheme, "Toggle light / dark theme", None, || Message::Shell(ShellMsg::ToggleTheme)),
        "Light / dark theme",
    ),
    action(A::Align, "Align sources…", None, || Message::Align(AlignMsg::Open)),
    action(A::OpenDataset, "Open fleet dataset…", None, || Message::Fleet(FleetMsg::Show)),
    action(A::AddDecoder, "Add decoder…", None, || Message::Decoder(DecoderMsg::Open(None))),
    action(A::Query, "Query the tables with SQL…", None, || Message::Query(QueryMsg::Show)),
    in_menu_as(
        action(A::Record, "Record the kernel or a logic analyzer…", None, || {
            Message::Record(RecordMsg::Show)
        }),
        "Record…",
    ),
    action(A::NextRow, "Select the next event of the table", Some(Shortcut::plain(Key::ArrowDown)), || {
        Message::Table(TableMsg::Step(1))
    }),
    action(
        A::PreviousRow,
        "Select the previous event of the table",
        Some(Shortcut::plain(Key::ArrowUp)),
        || Message::Table(TableMsg::Step(-1)),
    ),
];

/// One entry of a menu.
#[derive(Debug, Clone, Copy)]
pub enum MenuItem {
    Action(ActionId),
    /// A submenu of actions.
    Submenu(&'static str, &'static [ActionId]),
    Separator,
    /// The recently opened files (drawn by the workbench).
    RecentFiles,
}

/// The menu bar: each menu's title and entries. Labels and shortcuts come from [`ACTIONS`].
pub const MENUS: &[(&str, &[MenuItem])] = {
    use MenuItem::{Action as Do, RecentFiles, Separator, Submenu};
    &[
        (
            "File",
            &[
                Do(A::OpenFiles),
                RecentFiles,
                Do(A::CloseAll),
                Separator,
                Do(A::Record),
                Separator,
                Submenu(
                    "Export report",
                    &[A::ExportHtml, A::ExportMarkdown, A::ExportJson, A::ExportCsv, A::ExportParquet],
                ),
                Do(A::ExportPerfetto),
                Do(A::SaveTimelinePng),
                Separator,
                Do(A::OpenSession),
                Do(A::SaveSession),
                Separator,
                Do(A::OpenDataset),
            ],
        ),
        (
            "View",
            &[
                Do(A::FitAll),
                Do(A::ZoomIn),
                Do(A::ZoomOut),
                Do(A::ToggleTracks),
                Do(A::ToggleTable),
                Do(A::ToggleAnalysis),
                Do(A::ToggleSimulator),
                Do(A::ToggleLog),
                Do(A::Palette),
                Do(A::ToggleTheme),
            ],
        ),
        ("Analysis", &[Do(A::RunAnalysis), Do(A::Align), Do(A::AddDecoder), Do(A::Query)]),
    ]
};

/// The actions of menu `title`, submenus included.
pub fn menu_actions(title: &str) -> Vec<ActionId> {
    let items = MENUS.iter().filter(|(t, _)| *t == title).flat_map(|(_, items)| items.iter());
    items
        .flat_map(|item| match item {
            MenuItem::Action(id) => vec![*id],
            MenuItem::Submenu(_, ids) => ids.to_vec(),
            MenuItem::Separator | MenuItem::RecentFiles => Vec::new(),
        })
        .collect()
}

/// Draws menu `items`; `recent` draws the recent files. Returns the message of the entry
/// clicked.
pub fn menu_items(
    ui: &mut egui::Ui,
    items: &[MenuItem],
    recent: &mut dyn FnMut(&mut egui::Ui) -> Vec<Message>,
) -> Vec<Message> {
    let mut msgs = Vec::new();
    for item in items {
        match item {
            MenuItem::Action(id) => msgs.extend(menu_button(ui, *id)),
            MenuItem::Submenu(title, ids) => {
                ui.menu_button(*title, |ui| {
                    for &id in *ids {
                        msgs.extend(menu_button(ui, id));
                    }
                });
            }
            MenuItem::Separator => {
                ui.separator();
            }
            MenuItem::RecentFiles => {
                ui.menu_button("Open recent", |ui| msgs.extend(recent(ui)));
            }
        }
    }
    msgs
}

/// The table's entry for `id`.
pub fn get(id: ActionId) -> &'static Action {
    // The table lists every id at its own place: checked when the crate compiles (below).
    &ACTIONS[id as usize]
}

/// The table lists each id once, in the order of [`ActionId`], so [`get`] is an index.
const _: () = {
    assert!(ACTIONS.len() == ActionId::PreviousRow as usize + 1, "ACTIONS must list every ActionId");
    let mut i = 0;
    while i < ACTIONS.len() {
        assert!(ACTIONS[i].id as usize == i, "ACTIONS must list the ids in the order of ActionId");
        i += 1;
    }
};

/// A menu entry for `id`: its label and shortcut from the table; its message when clicked.
pub fn menu_button(ui: &mut egui::Ui, id: ActionId) -> Option<Message> {
    let a = get(id);
    ui.button(a.menu_text()).clicked().then(|| a.message())
}

/// Actions whose name contains every word of `query` (case-insensitive).
pub fn matching(query: &str) -> Vec<&'static Action> {
    let q = query.to_lowercase();
    ACTIONS.iter().filter(|a| q.split_whitespace().all(|w| a.name.to_lowercase().contains(w))).collect()
}

/// The actions whose shortcut was pressed this frame, consumed from the input so no widget
/// also acts on them. `typing`: a text field has the keyboard (only chords act);
/// `palette_open`: the palette has it (the same).
pub fn keyboard(input: &mut egui::InputState, typing: bool) -> Vec<Message> {
    let mut bound: Vec<(&Action, Shortcut)> = ACTIONS.iter().filter_map(|a| Some((a, a.shortcut?))).collect();
    bound.sort_by_key(|(_, s)| std::cmp::Reverse(s.specificity()));
    let mut msgs = Vec::new();
    for (a, s) in bound {
        if (!typing || s.while_typing()) && input.consume_key(s.modifiers, s.key) {
            msgs.push(a.message());
        }
    }
    msgs
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the keyboard handler makes of `shortcut` pressed once in a real egui frame.
    fn press(shortcut: Shortcut, typing: bool) -> Vec<String> {
        let ctx = egui::Context::default();
        let raw = egui::RawInput {
            events: vec![egui::Event::Key {
                key: shortcut.key,
                physical_key: None,
                pressed: true,
                repeat: false,
                modifiers: shortcut.modifiers,
            }],
            ..Default::default()
        };
        let mut got = Vec::new();
        let mut out = ctx.run_pass(raw, |ctx| got = ctx.input_mut(|i| keyboard(i, typing)));
        // Nothing is painted: the font atlas upload is dropped on purpose.
        out.textures_delta.clear();
        got.iter().map(|m| format!("{m:?}")).collect()
    }

    #[test]
    fn every_shortcut_of_the_palette_is_the_one_the_keyboard_acts_on() {
        let mut bound = 0;
        for a in ACTIONS {
            let Some(s) = a.shortcut else { continue };
            bound += 1;
            assert_eq!(press(s, false), [format!("{:?}", a.message())], "{} ({})", a.name, s.label());
            // In a text field a plain key is typed, a chord still acts.
            let typed = press(s, true);
            if s.while_typing() {
                assert_eq!(typed.len(), 1, "{}", a.name);
            } else {
                assert!(typed.is_empty(), "{} acted while typing", a.name);
            }
        }
        assert!(bound >= 14, "{bound} shortcuts");
    }

    #[test]
    fn every_action_in_a_menu_is_in_the_table_and_menus_show_their_shortcuts() {
        for (title, _) in MENUS {
            for id in menu_actions(title) {
                let a = get(id);
                assert_eq!(a.id, id);
                if let Some(s) = a.shortcut {
                    assert!(a.menu_text().ends_with(&format!("  {}", s.label())), "{}", a.menu_text());
                }
            }
        }
        assert!(menu_actions("View").contains(&ActionId::FitAll));
    }

    #[test]
    fn every_action_has_one_entry_and_no_shortcut_is_bound_twice() {
        for a in ACTIONS {
            assert_eq!(ACTIONS.iter().filter(|b| b.id == a.id).count(), 1, "{:?}", a.id);
            if let Some(s) = a.shortcut {
                let twice: Vec<_> =
                    ACTIONS.iter().filter(|b| b.shortcut == Some(s)).map(|b| b.name).collect();
                assert_eq!(twice.len(), 1, "{} is bound to {twice:?}", s.label());
            }
        }
        assert_eq!(get(ActionId::Align).name, "Align sources…");
    }

    #[test]
    fn shortcuts_read_as_users_type_them() {
        let label = |id| get(id).shortcut_text();
        assert_eq!(label(ActionId::Palette), "Ctrl+Shift+P");
        assert_eq!(label(ActionId::PreviousEdge), "Shift+N");
        assert_eq!(label(ActionId::Escape), "Esc");
        assert_eq!(label(ActionId::NextMatch), "F3");
        assert_eq!(get(ActionId::FitAll).menu_text(), "Fit all  F");
        assert!(get(ActionId::NextMatch).shortcut.is_some_and(|s| s.while_typing()));
        assert!(!get(ActionId::ZoomIn).shortcut.is_some_and(|s| s.while_typing()));
    }
}

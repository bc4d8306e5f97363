//! SD presets: rule specs over the events that [`crate::Decoded::attach`] adds, so the
//! bus side of a command becomes a number in `latscope report`.
//!
//! - `sd-cmd-resp`: a command (`sd_cmd`, at its start bit) to its response (`sd_resp`, at
//!   its start bit), paired by the command's sequence number;
//! - `sd-read`: CMD17/CMD18 to the start of its first data block;
//! - `sd-read-last`: CMD17/CMD18 to the end of its last data block (CMD18 without CMD23
//!   ends with CMD12: its last block is the one before CMD12);
//! - `sd-write-busy`: the end of a written block to the release of DAT0 (the end of busy).

/// A preset that a decoder's events serve: a rule spec over them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PresetSpec {
    pub name: &'static str,
    pub description: &'static str,
    /// The rule spec, named by the preset (`sd-read=sd_cmd[read=1] -> …`).
    pub rule: &'static str,
}

/// The SD presets: names, descriptions and their rule specs.
pub const PRESETS: &[PresetSpec] = &[
    PresetSpec {
        name: "sd-cmd-resp",
        description: "SD command -> its response (start bits), by command",
        rule: "sd-cmd-resp=sd_cmd -> sd_resp by seq",
    },
    PresetSpec {
        name: "sd-read",
        description: "SD CMD17/18 -> start of its first data block",
        rule: "sd-read=sd_cmd[read=1] -> sd_data[first=1] by seq",
    },
    PresetSpec {
        name: "sd-read-last",
        description: "SD CMD17/18 -> end of its last data block",
        rule: "sd-read-last=sd_cmd[read=1] -> sd_data_end[last=1] by seq",
    },
    PresetSpec {
        name: "sd-write-busy",
        description: "SD written block end -> DAT0 released (busy end)",
        rule: "sd-write-busy=sd_data_end[write=1] -> sd_busy_end by seq,block",
    },
];

/// The rule spec of an SD preset.
pub fn rule_for(name: &str) -> Option<&'static str> {
    PRESETS.iter().find(|p| p.name == name).map(|p| p.rule)
}

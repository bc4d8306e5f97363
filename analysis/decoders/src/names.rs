//! SD command names (the SD Physical Layer specification's), for CMDn and ACMDn.

/// The name of CMD`index`, or of ACMD`index` when `app` (the command after CMD55).
pub fn command_name(index: u8, app: bool) -> &'static str {
    if app {
        return match index {
            6 => "SET_BUS_WIDTH",
            13 => "SD_STATUS",
            22 => "SEND_NUM_WR_BLOCKS",
            23 => "SET_WR_BLK_ERASE_COUNT",
            41 => "SD_SEND_OP_COND",
            42 => "SET_CLR_CARD_DETECT",
            51 => "SEND_SCR",
            _ => "Unknown",
        };
    }
    match index {
        0 => "GO_IDLE_STATE",
        1 => "SEND_OP_COND",
        2 => "ALL_SEND_CID",
        3 => "SEND_RELATIVE_ADDR",
        4 => "SET_DSR",
        5 => "IO_SEND_OP_COND",
        6 => "SWITCH_FUNC",
        7 => "SELECT/DESELECT_CARD",
        8 => "SEND_IF_COND",
        9 => "SEND_CSD",
        10 => "SEND_CID",
        11 => "VOLTAGE_SWITCH",
        12 => "STOP_TRANSMISSION",
        13 => "SEND_STATUS",
        15 => "GO_INACTIVE_STATE",
        16 => "SET_BLOCKLEN",
        17 => "READ_SINGLE_BLOCK",
        18 => "READ_MULTIPLE_BLOCK",
        19 => "SEND_TUNING_BLOCK",
        20 => "SPEED_CLASS_CONTROL",
        23 => "SET_BLOCK_COUNT",
        24 => "WRITE_BLOCK",
        25 => "WRITE_MULTIPLE_BLOCK",
        27 => "PROGRAM_CSD",
        28 => "SET_WRITE_PROT",
        29 => "CLR_WRITE_PROT",
        30 => "SEND_WRITE_PROT",
        32 => "ERASE_WR_BLK_START",
        33 => "ERASE_WR_BLK_END",
        38 => "ERASE",
        42 => "LOCK_UNLOCK",
        52 => "IO_RW_DIRECT",
        53 => "IO_RW_EXTENDED",
        55 => "APP_CMD",
        56 => "GEN_CMD",
        58 => "READ_OCR",
        59 => "CRC_ON_OFF",
        _ => "Unknown",
    }
}

/// The response format of a command in SD mode; `None` for commands the card does not
/// answer.
pub fn response_type(index: u8, app: bool) -> Option<&'static str> {
    if app {
        return Some(match index {
            41 => "R3",
            _ => "R1",
        });
    }
    match index {
        0 | 4 | 15 => None,
        2 | 9 | 10 => Some("R2"),
        3 => Some("R6"),
        8 => Some("R7"),
        7 | 12 | 20 | 28 | 29 | 38 => Some("R1b"),
        _ => Some("R1"),
    }
}

//! Recovery of a `.sr` archive cut short: zip keeps its member directory at the end, so a
//! truncated capture has none. libsigrok (via libzip) writes every member's sizes in its
//! local header, so the directory can be rebuilt by walking those headers from the start.
//! The members found are copied with a fresh directory; a member cut off keeps the bytes
//! present, and decoding it stops where they end (the caller keeps the samples before).

/// Local file header signature and fixed size (APPNOTE 4.3.7).
const LOCAL_SIG: u32 = 0x0403_4b50;
const LOCAL_LEN: usize = 30;
/// General-purpose flag bit 3: sizes follow the data (unknown when reading forwards).
const FLAG_DATA_DESCRIPTOR: u16 = 1 << 3;

/// What was rebuilt: the archive bytes, and a note for the diagnostics.
pub(super) struct Rebuilt {
    pub bytes: Vec<u8>,
    pub note: String,
}

fn u16_at(d: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(d.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(d: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(d.get(at..at + 4)?.try_into().ok()?))
}

/// Rebuilds a directory for `data`, or `None` when not even one member header is readable.
pub(super) fn rebuild(data: &[u8]) -> Option<Rebuilt> {
    let mut central = Vec::new();
    let mut members = 0u16;
    let mut pos = 0usize;
    let mut cut_member: Option<(String, usize, usize)> = None;
    while u32_at(data, pos) == Some(LOCAL_SIG) && members < u16::MAX {
        let flags = u16_at(data, pos + 6)?;
        let compressed = u32_at(data, pos + 18)? as usize;
        let name_len = usize::from(u16_at(data, pos + 26)?);
        let extra_len = usize::from(u16_at(data, pos + 28)?);
        if flags & FLAG_DATA_DESCRIPTOR != 0 {
            break;
        }
        let name_start = pos + LOCAL_LEN;
        let Some(name) = data.get(name_start..name_start + name_len) else { break };
        let data_start = name_start + name_len + extra_len;
        if data_start > data.len() {
            break;
        }
        let present = compressed.min(data.len() - data_start);
        // The central entry repeats the local header's fields (version needed .. name length,
        // 26 bytes from offset 4), with the compressed size cut to what is present.
        let mut fixed = data.get(pos + 4..pos + 30)?.to_vec();
        fixed[14..18].copy_from_slice(&(present as u32).to_le_bytes());
        fixed[24..26].copy_from_slice(&0u16.to_le_bytes()); // no extra field in the directory
        central.extend(0x0201_4b50u32.to_le_bytes());
        central.extend(20u16.to_le_bytes()); // made by
        central.extend(&fixed);
        central.extend([0u8; 6]); // comment length, disk, internal attributes
        central.extend(0u32.to_le_bytes()); // external attributes
        central.extend((pos as u32).to_le_bytes());
        central.extend(name);
        members += 1;
        if present < compressed {
            cut_member = Some((String::from_utf8_lossy(name).into_owned(), present, compressed));
            pos = data.len();
            break;
        }
        pos = data_start + compressed;
    }
    if members == 0 || pos > u32::MAX as usize {
        return None;
    }
    let mut bytes = Vec::with_capacity(pos + central.len() + 22);
    bytes.extend_from_slice(&data[..pos]);
    let dir_offset = bytes.len() as u32;
    bytes.extend(&central);
    bytes.extend(0x0605_4b50u32.to_le_bytes());
    bytes.extend([0u8; 4]); // disk numbers
    bytes.extend(members.to_le_bytes());
    bytes.extend(members.to_le_bytes());
    bytes.extend((central.len() as u32).to_le_bytes());
    bytes.extend(dir_offset.to_le_bytes());
    bytes.extend(0u16.to_le_bytes());
    let mut note = format!(
        "the file is cut short or its member directory is damaged (file size {} bytes): \
         rebuilt the directory from the {members} member header(s) found",
        data.len()
    );
    if let Some((name, present, total)) = cut_member {
        note.push_str(&format!("; member `{name}` is incomplete ({present} of {total} compressed bytes)"));
    }
    Some(Rebuilt { bytes, note })
}

//! The tracefs `format` files (one per event, plus `header_page`): field declarations with
//! their offsets, sizes and signedness, `__data_loc`/`__rel_loc` strings, arrays and the
//! `print fmt` (kept as text). Offsets and sizes are trusted over the C declaration
//! (`char prev_comm[32]` with `size:16` exists in real files).

use memchr::memmem;

/// Where the bytes of a dynamic field live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Loc {
    /// At `offset..offset+size` in the record.
    Fixed,
    /// `__data_loc`: a u32 at `offset`, low 16 bits = offset from the record start,
    /// high 16 bits = length.
    Data,
    /// `__rel_loc`: as `Data`, but the offset counts from the end of the u32.
    Rel,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FieldDef {
    pub name: String,
    /// The declared C type without the name and array suffix (`unsigned long`, `char`).
    pub ty: String,
    pub offset: u32,
    pub size: u32,
    pub signed: bool,
    /// Declared with `[...]`, or a `__data_loc`/`__rel_loc` array.
    pub array: bool,
    pub loc: Loc,
}

impl FieldDef {
    /// Character data: printed as a string by trace-cmd (libtraceevent tests `strstr(type, "char")`).
    pub(crate) fn is_char(&self) -> bool {
        self.ty.contains("char")
    }
    pub(crate) fn is_common(&self) -> bool {
        self.name.starts_with("common_")
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EventFormat {
    pub system: String,
    pub name: String,
    pub id: u32,
    pub fields: Vec<FieldDef>,
    pub print_fmt: String,
}

impl EventFormat {
    pub(crate) fn field(&self, name: &str) -> Option<&FieldDef> {
        self.fields.iter().find(|f| f.name == name)
    }
}

/// Parses one `field:DECL; offset:N; size:N; signed:N;` line (leading whitespace allowed).
pub(crate) fn parse_field_line(line: &str) -> Option<FieldDef> {
    let line = line.trim();
    let rest = line.strip_prefix("field:")?;
    let mut parts = rest.split(';');
    let decl = parts.next()?.trim();
    let mut offset = None;
    let mut size = None;
    let mut signed = None;
    for p in parts {
        let p = p.trim();
        if let Some(v) = p.strip_prefix("offset:") {
            offset = v.trim().parse::<u32>().ok();
        } else if let Some(v) = p.strip_prefix("size:") {
            size = v.trim().parse::<u32>().ok();
        } else if let Some(v) = p.strip_prefix("signed:") {
            signed = Some(v.trim() == "1");
        }
    }
    let (loc, decl) = if let Some(d) = decl.strip_prefix("__data_loc ") {
        (Loc::Data, d.trim())
    } else if let Some(d) = decl.strip_prefix("__rel_loc ") {
        (Loc::Rel, d.trim())
    } else {
        (Loc::Fixed, decl)
    };
    let (base, mut array) = match decl.strip_suffix(']') {
        Some(d) => (d.rfind('[').map_or(d, |i| &d[..i]).trim_end(), true),
        None => (decl, false),
    };
    let split = base.rfind(|c: char| c.is_whitespace() || c == '*').map_or(0, |i| i + 1);
    let name = base[split..].trim();
    if name.is_empty() {
        return None;
    }
    let mut ty = base[..split].trim().to_string();
    if loc != Loc::Fixed {
        array = true;
        ty = ty.trim_end_matches("[]").trim().to_string();
    }
    let signed = signed.unwrap_or_else(|| {
        !ty.starts_with("unsigned")
            && !ty.starts_with('u')
            && ["char", "short", "int", "long", "s8", "s16", "s32", "s64", "pid_t"]
                .iter()
                .any(|t| ty.contains(t))
    });
    Some(FieldDef { name: name.to_string(), ty, offset: offset?, size: size?, signed, array, loc })
}

/// Parses one event format file; `system` is the directory it came from.
pub(crate) fn parse_format(system: &str, text: &[u8]) -> Result<EventFormat, String> {
    let text = String::from_utf8_lossy(text);
    let mut name = None;
    let mut id = None;
    let mut fields = Vec::new();
    let mut print_fmt = String::new();
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("name:") {
            name = Some(v.trim().to_string());
        } else if let Some(v) = line.strip_prefix("ID:") {
            id = v.trim().parse::<u32>().ok();
        } else if let Some(v) = line.strip_prefix("print fmt:") {
            print_fmt = v.trim().to_string();
        } else if line.trim_start().starts_with("field:") {
            match parse_field_line(line) {
                Some(f) => fields.push(f),
                None => return Err(format!("bad field line {:?}", line.trim())),
            }
        }
    }
    let name = name.ok_or("no `name:` line")?;
    let id = id.ok_or_else(|| format!("event {name}: no valid `ID:` line"))?;
    Ok(EventFormat { system: system.to_string(), name, id, fields, print_fmt })
}

/// What `header_page` says about a ring-buffer sub-buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PageLayout {
    /// Offset and size of `commit` (its size is the kernel's long size).
    pub commit_offset: u32,
    pub long_size: u32,
    /// Where events start.
    pub data_offset: u32,
}

/// Parses `header_page`. `file_long` (the prefix's long size) is the fallback.
pub(crate) fn parse_header_page(text: &[u8], file_long: u8) -> PageLayout {
    let text = String::from_utf8_lossy(text);
    let mut commit = None;
    let mut data = None;
    for f in text.lines().filter_map(parse_field_line) {
        match f.name.as_str() {
            "commit" if f.size == 4 || f.size == 8 => commit = Some((f.offset, f.size)),
            "data" => data = Some(f.offset),
            _ => {}
        }
    }
    let (commit_offset, long_size) = commit.unwrap_or((8, if file_long == 4 { 4 } else { 8 }));
    let data_offset = data.unwrap_or(commit_offset.saturating_add(long_size));
    PageLayout { commit_offset, long_size, data_offset }
}

/// True when `header_event` describes the pre-2.6.31 header (2-bit type, 3-bit len).
pub(crate) fn is_old_event_header(text: &[u8]) -> bool {
    memmem::find(text, b"type_len").is_none() && memmem::find(text, b"type").is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_declarations() {
        let f =
            parse_field_line("\tfield:char prev_comm[32];\toffset:8;\tsize:16;\tsigned:0;").expect("field");
        assert_eq!(
            (f.name.as_str(), f.ty.as_str(), f.offset, f.size, f.signed, f.array),
            ("prev_comm", "char", 8, 16, false, true)
        );
        assert!(f.is_char());
        let f =
            parse_field_line("\tfield:__data_loc char[] name;\toffset:12;\tsize:4;\tsigned:1;").expect("loc");
        assert_eq!((f.name.as_str(), f.ty.as_str(), f.loc, f.array), ("name", "char", Loc::Data, true));
        let f = parse_field_line("field:__rel_loc u8[] buf;\toffset:8;\tsize:4;\tsigned:0;").expect("rel");
        assert_eq!((f.name.as_str(), f.loc), ("buf", Loc::Rel));
        let f = parse_field_line("\tfield:const char * str;\toffset:12;\tsize:4;\tsigned:0;").expect("ptr");
        assert_eq!((f.name.as_str(), f.ty.as_str(), f.array), ("str", "const char *", false));
        let f = parse_field_line("\tfield:pid_t pid;\toffset:8;\tsize:4;").expect("old, no signed");
        assert!(f.signed);
        let f = parse_field_line("\tfield:unsigned int x;\toffset:8;\tsize:4;").expect("old, no signed");
        assert!(!f.signed);
        assert!(parse_field_line("\tfield:int x;\tsize:4;").is_none());
    }

    #[test]
    fn header_page_sets_long_and_data_offset() {
        let p32 = b"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\tfield: local_t commit;\toffset:8;\tsize:4;\tsigned:1;\n\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\tfield: char data;\toffset:12;\tsize:4084;\tsigned:0;\n";
        assert_eq!(parse_header_page(p32, 8), PageLayout { commit_offset: 8, long_size: 4, data_offset: 12 });
        let p64 = b"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";
        // A 64-bit kernel recorded by a 32-bit trace-cmd: header_page wins.
        assert_eq!(parse_header_page(p64, 4), PageLayout { commit_offset: 8, long_size: 8, data_offset: 16 });
    }

    #[test]
    fn format_file() {
        let text = b"name: sched_switch\nID: 68\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\n\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n\nprint fmt: \"prev_pid=%d\", REC->prev_pid\n";
        let f = parse_format("sched", text).expect("format");
        assert_eq!((f.name.as_str(), f.id, f.fields.len()), ("sched_switch", 68, 2));
        assert_eq!(f.print_fmt, "\"prev_pid=%d\", REC->prev_pid");
        assert!(parse_format("x", b"name: a\nformat:\n").is_err());
    }
}

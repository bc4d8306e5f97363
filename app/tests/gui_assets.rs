#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The files in `assets/`: the icons decode at their sizes, the desktop entry is valid and
//! every MIME type it lists is defined and matches latscope's own samples, and HTML reports
//! carry the stylesheet of `assets/report.css`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The `(type, globs, magic strings)` of every `<mime-type>` in the shared-mime-info file.
fn mime_types(xml: &str) -> Vec<(String, Vec<String>, Vec<String>)> {
    let attr = |s: &str, name: &str| -> Vec<String> {
        s.split(&format!("{name}=\""))
            .skip(1)
            .filter_map(|r| r.split('"').next())
            .map(str::to_owned)
            .collect()
    };
    xml.split("<mime-type ")
        .skip(1)
        .map(|block| {
            let block = block.split("</mime-type>").next().unwrap();
            let ty = attr(block, "type")[0].clone();
            let globs = attr(block, "pattern");
            let magic = attr(block, "value");
            (ty, globs, magic)
        })
        .collect()
}

/// A shared-mime-info string value with its C escapes (`\x17`, `\n`) resolved.
fn unescape(v: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let mut it = v.bytes();
    while let Some(b) = it.next() {
        if b != b'\\' {
            out.push(b);
            continue;
        }
        match it.next() {
            Some(b'n') => out.push(b'\n'),
            Some(b'x') => {
                let hex: Vec<u8> = it.by_ref().take(2).collect();
                out.push(u8::from_str_radix(std::str::from_utf8(&hex).unwrap(), 16).unwrap());
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

fn glob_matches(glob: &str, name: &str) -> bool {
    match glob.split_once('*') {
        Some((pre, post)) => {
            name.len() >= pre.len() + post.len() && name.starts_with(pre) && name.ends_with(post)
        }
        None => glob == name,
    }
}

#[test]
fn the_icons_decode_at_the_sizes_their_names_say() {
    for size in [16u32, 32, 48, 64, 128, 256] {
        let path = root().join(format!("assets/icons/latscope-{size}.png"));
        let bytes = std::fs::read(&path).unwrap();
        let icon = latscope::gui::app::decode_icon(&bytes).unwrap();
        assert_eq!((icon.width, icon.height), (size, size), "{}", path.display());
    }
    let svg = read("assets/icons/latscope.svg");
    assert!(svg.starts_with("<svg") && svg.contains("viewBox=\"0 0 256 256\""));
}

#[test]
fn every_mime_type_of_the_desktop_entry_is_defined_and_fits_the_samples() {
    let desktop = read("assets/latscope.desktop");
    let listed: Vec<&str> = desktop
        .lines()
        .find_map(|l| l.strip_prefix("MimeType="))
        .expect("a MimeType= line")
        .split(';')
        .filter(|t| !t.is_empty())
        .collect();
    let defined = mime_types(&read("assets/latscope-mime.xml"));
    for t in &listed {
        // text/csv is shared-mime-info's own; the rest are ours.
        assert!(*t == "text/csv" || defined.iter().any(|d| d.0 == *t), "{t} is listed but not defined");
    }
    // Each sample latscope opens that one of our globs names has that type's magic, and a
    // type with a magic has a sample that carries it.
    let mut samples: Vec<PathBuf> = Vec::new();
    for dir in ["ftrace", "sigrok", "ghw"] {
        for e in std::fs::read_dir(root().join("samples").join(dir)).unwrap() {
            samples.push(e.unwrap().path());
        }
    }
    for (ty, globs, magic) in &defined {
        let named: Vec<&Path> = samples
            .iter()
            .map(PathBuf::as_path)
            .filter(|p| globs.iter().any(|g| glob_matches(g, &p.file_name().unwrap().to_string_lossy())))
            .collect();
        for m in magic {
            let m = unescape(m);
            let carried = samples.iter().filter(|p| std::fs::read(p).unwrap().starts_with(&m)).count();
            assert!(carried > 0, "{ty}: no sample starts with its magic {m:?}");
        }
        for p in named {
            let ctl = latscope_importers::LoadControl::new();
            assert!(
                latscope_importers::open(p, &ctl).is_ok(),
                "{ty}: latscope does not open {}",
                p.display()
            );
        }
    }
    // trace.dat by its magic: every .dat sample carries it.
    let trace_cmd = defined.iter().find(|d| d.0 == "application/x-trace-cmd").unwrap();
    let magic = unescape(&trace_cmd.2[0]);
    for p in samples.iter().filter(|p| p.extension().is_some_and(|e| e == "dat")) {
        assert!(std::fs::read(p).unwrap().starts_with(&magic), "{}", p.display());
    }
}

#[test]
#[cfg_attr(
    not(have_desktop_file_validate),
    ignore = "needs desktop-file-validate: apt-get install desktop-file-utils"
)]
fn the_desktop_entry_passes_the_freedesktop_validator() {
    let path = root().join("assets/latscope.desktop");
    let out =
        latscope_testkit::Need::DesktopFileValidate.output(Command::new("desktop-file-validate").arg(&path));
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stdout));
}

/// HTML reports embed `assets/report.css` as one line (its lines joined), and it keeps
/// numbers with their units on one line (issue 29: "units that wrap inside cells").
#[test]
fn html_reports_carry_the_stylesheet_of_the_assets() {
    let out = Command::new(env!("CARGO_BIN_EXE_latscope"))
        .arg("report")
        .arg(root().join("samples/ftrace/blk_read.txt"))
        .args(["--rule", "irq-handler", "--format", "html"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let html = String::from_utf8(out.stdout).unwrap();
    let style = html.split("<style>").nth(1).and_then(|s| s.split("</style>").next()).unwrap();
    assert_eq!(style, read("assets/report.css").lines().collect::<String>());
    assert!(style.contains("td{white-space:nowrap}td.t{white-space:normal}"), "{style}");
    assert!(html.starts_with("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>"));
}

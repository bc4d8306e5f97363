//! The workbench is a front end of the engine, not of the command line: no file under
//! `app/src/gui` names a command module (it once called `report_cmd` and `decode_cmd`,
//! and the two front ends drifted apart).

use std::path::Path;

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())).flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn the_workbench_names_no_command_module() {
    let gui = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/gui");
    let mut files = Vec::new();
    rust_files(&gui, &mut files);
    assert!(files.len() > 20, "{} files under {}", files.len(), gui.display());
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        for name in [
            "crate::cli",
            "cli::report",
            "cli::decode",
            "report_cmd",
            "decode_cmd",
            "events_cmd",
            "fleet_cmd",
        ] {
            assert!(!text.contains(name), "{} names {name}: call latscope_engine instead", file.display());
        }
    }
}

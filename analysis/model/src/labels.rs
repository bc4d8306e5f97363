//! How people are told which of several sources is meant, everywhere (workbench, reports,
//! errors): by name first, with a number only where names are ambiguous. The number is the
//! source's index counted from 0, as `--align N:` and the JSON report's `input` count.

/// Labels for sources given by the paths (or names) they were opened with, in order: each
/// one's file name; where two share a file name, the path as given; where those agree too
/// (the same file opened twice), `PATH (input N)`.
pub fn source_labels(paths: &[&str]) -> Vec<String> {
    let file_name = |p: &str| {
        std::path::Path::new(p).file_name().map_or_else(|| p.to_owned(), |n| n.to_string_lossy().into_owned())
    };
    let names: Vec<String> = paths.iter().map(|p| file_name(p)).collect();
    let count = |list: &[&str], x: &str| list.iter().filter(|y| **y == x).count();
    let name_refs: Vec<&str> = names.iter().map(String::as_str).collect();
    paths
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if count(&name_refs, &names[i]) == 1 {
                names[i].clone()
            } else if count(paths, p) == 1 {
                (*p).to_owned()
            } else {
                format!("{p} (input {i})")
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_first_numbers_only_where_names_are_ambiguous() {
        assert_eq!(source_labels(&["/t/a.txt", "b/b.dat"]), ["a.txt", "b.dat"]);
        assert_eq!(
            source_labels(&["old/run.dat", "new/run.dat", "x.sr"]),
            ["old/run.dat", "new/run.dat", "x.sr"]
        );
        assert_eq!(source_labels(&["run.dat", "run.dat"]), ["run.dat (input 0)", "run.dat (input 1)"]);
        assert_eq!(source_labels(&["sim"]), ["sim"]);
    }
}

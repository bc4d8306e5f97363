//! Track, channel and event names as users type them, resolved one way everywhere (rules,
//! presets, `--align`, decoders, the workbench's dialogs, import track selection): the exact
//! name wins; else the one name that ends with the typed text after a separator
//! (`CMD` finds `litesdcard.CMD`, `dut.clk` finds `counter_tb.dut.clk`); several such names
//! are an error listing them.

/// Why a typed name names no single track.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("no {what} named {name:?} (there are: {})", list(available))]
    Unknown { what: &'static str, name: String, available: Vec<String> },
    #[error("{what} name {name:?} is ambiguous: it could be {}", candidates.join(", "))]
    Ambiguous { what: &'static str, name: String, candidates: Vec<String> },
}

fn list(names: &[String]) -> String {
    if names.is_empty() { "none".to_owned() } else { names.join(", ") }
}

/// Whether `candidate` ends with `typed` after a separator (any character that is not a
/// letter or digit: `.`, `/`, `_`, a blank…), so `CMD` answers for `litesdcard.CMD` but
/// `MD` does not, nor `0` for `D0`.
pub fn is_name_suffix(candidate: &str, typed: &str) -> bool {
    if typed.is_empty() || candidate.len() <= typed.len() || !candidate.ends_with(typed) {
        return false;
    }
    let before = candidate[..candidate.len() - typed.len()].chars().next_back();
    let starts_apart = typed.chars().next().is_some_and(|c| !c.is_alphanumeric());
    starts_apart || before.is_some_and(|c| !c.is_alphanumeric())
}

/// Whether `candidate` is what `typed` may mean: the same name, or a name it is a suffix of
/// ([`is_name_suffix`]). For keeping candidates (a track selection); resolving picks one.
pub fn name_answers(candidate: &str, typed: &str) -> bool {
    candidate == typed || is_name_suffix(candidate, typed)
}

/// The index among `names` (in order) that `typed` means: the exact name wins (the first,
/// should two be equal), else the single name `typed` is a suffix of. `what` names the
/// kind of name for errors (`track`, `channel`, `event`).
pub fn resolve_name<'a>(
    names: impl IntoIterator<Item = &'a str>,
    typed: &str,
    what: &'static str,
) -> Result<usize, NameError> {
    let names: Vec<&str> = names.into_iter().collect();
    if let Some(i) = names.iter().position(|n| *n == typed) {
        return Ok(i);
    }
    let hits: Vec<usize> = (0..names.len()).filter(|&i| is_name_suffix(names[i], typed)).collect();
    match hits[..] {
        [i] => Ok(i),
        [] => Err(NameError::Unknown {
            what,
            name: typed.to_owned(),
            available: names.iter().map(|n| (*n).to_owned()).collect(),
        }),
        _ => Err(NameError::Ambiguous {
            what,
            name: typed.to_owned(),
            candidates: hits.iter().map(|&i| names[i].to_owned()).collect(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_wins_then_a_unique_suffix_after_a_separator() {
        let names =
            ["litesdcard.CMD", "CMD", "litesdcard.DMA", "top.dut.clk", "top.clk", "D0", "block_rq_issue"];
        let r = |t: &str| resolve_name(names, t, "track");
        assert_eq!(r("CMD"), Ok(1), "the exact name wins over the suffix");
        assert_eq!(r("DMA"), Ok(2));
        assert_eq!(r("dut.clk"), Ok(3));
        assert_eq!(r("rq_issue"), Ok(6));
        assert_eq!(r("top.clk"), Ok(4));
        let Err(NameError::Ambiguous { candidates, .. }) = r("clk") else { panic!("clk is ambiguous") };
        assert_eq!(candidates, ["top.dut.clk", "top.clk"]);
        assert!(matches!(r("0"), Err(NameError::Unknown { .. })), "no suffix inside a word");
        assert!(matches!(r("MD"), Err(NameError::Unknown { .. })));
        let e = r("nope").unwrap_err().to_string();
        assert!(e.starts_with("no track named \"nope\" (there are: litesdcard.CMD, CMD,"), "{e}");
        let e = r("clk").unwrap_err().to_string();
        assert_eq!(e, "track name \"clk\" is ambiguous: it could be top.dut.clk, top.clk");
        assert!(name_answers("litesdcard.CMD", "CMD") && name_answers("CMD", "CMD"));
        assert!(!name_answers("D10", "0"));
    }
}

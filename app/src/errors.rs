//! How an error reaches the user, on the terminal and in the window: its message and then
//! each cause, each said once.

/// `e` and its causes joined by `: `, as `{:#}` prints them, without a cause the message
/// before it already ends with: the library errors name their cause in their own message
/// (`"the annotations: No space left on device"`) and also keep it as their source.
pub fn error_text(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let said = cause.to_string();
        if said.is_empty() || text.ends_with(&said) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&said);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("{what}: {source}")]
    struct Named {
        what: String,
        source: std::io::Error,
    }

    #[test]
    fn a_cause_named_in_the_message_is_said_once() {
        let full = std::io::Error::from_raw_os_error(28);
        let said = full.to_string();
        let e = anyhow::Error::new(Named { what: "the annotations".into(), source: full });
        assert_eq!(
            format!("{e:#}"),
            format!("the annotations: {said}: {said}"),
            "the duplicate this removes"
        );
        assert_eq!(error_text(&e), format!("the annotations: {said}"));
        let e = e.context("writing out.txt");
        assert_eq!(error_text(&e), format!("writing out.txt: the annotations: {said}"));
        let plain = anyhow::anyhow!("no such scenario").context("sim");
        assert_eq!(error_text(&plain), "sim: no such scenario");
    }
}

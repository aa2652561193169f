//! Text shown to people: messages are one line, whatever a cause carried in it.

/// Joins the lines of `text` into one, each trimmed, blank ones dropped.
pub fn one_line(text: &str) -> String {
    text.split(['\n', '\r'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

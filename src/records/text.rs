//! Text: messages are one line, whatever a cause carried in it; paths read as one spelling.

use std::borrow::Cow;

/// Joins the lines of `text` into one, each trimmed, blank ones dropped.
pub fn one_line(text: &str) -> String {
    text.split(['\n', '\r'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Drops leading `./`, doubled slashes and a trailing slash, so `./a//b/` reads as `a/b`.
pub fn normalize_path(path: &str) -> Cow<'_, str> {
    let dirty = path.starts_with("./")
        || path.contains("//")
        || path.contains("/./")
        || path.ends_with("/.")
        || (path.ends_with('/') && path.len() > 1);
    if !dirty {
        return Cow::Borrowed(path);
    }
    let parts: Vec<&str> = path
        .split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .collect();
    let lead = if path.starts_with('/') { "/" } else { "" };
    Cow::Owned(format!("{lead}{}", parts.join("/")))
}

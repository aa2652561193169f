//! Text: messages are one line, whatever a cause carried in it; paths read as one spelling.

use std::borrow::Cow;

/// Joins the lines of `text` into one, each trimmed, blank ones dropped, control characters
/// escaped ([`shown`]).
pub fn one_line(text: &str) -> String {
    let joined = text
        .split(['\n', '\r'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    shown(&joined).into_owned()
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

/// `text` as it may be shown on a terminal: every control character but tab and newline (C0,
/// DEL, C1) is written as an escape, so a model's `\r` or `ESC[2K` cannot redraw what is shown.
pub fn shown(text: &str) -> Cow<'_, str> {
    escaped(text, |c| c.is_control() && c != '\t' && c != '\n')
}

/// `text` as a field of a line-oriented report: [`shown`], and a newline escaped too, so that
/// no field read from a record starts a line of its own (a forged `PANEL:` line).
pub fn inline(text: &str) -> Cow<'_, str> {
    escaped(text, |c| c.is_control() && c != '\t')
}

fn escaped(text: &str, hostile: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(&hostile) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            c if !hostile(c) => out.push(c),
            c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        }
    }
    Cow::Owned(out)
}

/// The names a run folder keeps for itself: a judge, reviewer or member named so would write
/// over them.
const RESERVED: &[&str] = &["candidate"];

/// Whether `name` may name a folder in a run folder (a judge, a lens, a reviewer, a stage, a PR
/// panel member); else why not. It must be one plain path component: letters, digits, `-`, `_`,
/// `.` and `@`, starting with a letter or digit, at most 100 bytes, and none of the run
/// folder's own names (`candidate`, `*.jsonl`).
pub fn check_folder_name(name: &str) -> Result<(), String> {
    let why = if name.is_empty() {
        "it is empty"
    } else if name.len() > 100 {
        "it is longer than 100 bytes"
    } else if !name.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        "it must start with a letter or a digit"
    } else if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_.@".contains(c))
    {
        "it may hold only letters, digits, '-', '_', '.' and '@'"
    } else if RESERVED.contains(&name) || name.ends_with(".jsonl") {
        "the run folder keeps that name for itself"
    } else {
        return Ok(());
    };
    Err(format!("{:?} cannot name a folder: {why}", shown(name)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_shown_escaped() {
        assert_eq!(shown("a\tb\nc"), "a\tb\nc");
        assert_eq!(shown("holds\r\x1b[2Kbreaks"), "holds\\x0d\\x1b[2Kbreaks");
        assert_eq!(shown("\x7f\u{9b}2J"), "\\x7f\\u{9b}2J");
        assert_eq!(one_line("a\r\nb\x1b"), "a b\\x1b");
        assert_eq!(inline("a\n\nPANEL: x"), "a\\x0a\\x0aPANEL: x");
    }

    #[test]
    fn a_folder_name_is_one_plain_component_of_its_own() {
        for good in ["correctness", "a.b", "lens@claude-sonnet", "writer-1", "9"] {
            assert_eq!(check_folder_name(good), Ok(()), "{good}");
        }
        for bad in [
            "",
            "..",
            ".",
            ".hidden",
            "-x",
            "a/b",
            "a b",
            "candidate",
            "verdicts.jsonl",
            "\u{1b}",
        ] {
            assert!(check_folder_name(bad).is_err(), "{bad:?}");
        }
        assert!(check_folder_name(&"a".repeat(101)).is_err());
    }
}

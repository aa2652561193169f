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

/// Rows of cells, the first the headings, as columns two spaces apart, each as wide as its
/// widest cell (the last one unpadded), one line each. Cells are shown as given: escape them
/// first ([`inline`]).
pub fn columns(rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = Vec::new();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            let n = cell.chars().count();
            match widths.get_mut(i) {
                Some(w) => *w = (*w).max(n),
                None => widths.push(n),
            }
        }
    }
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i + 1 < row.len() {
                let pad = widths[i] - cell.chars().count();
                line.push_str(&format!("{cell}{}  ", " ".repeat(pad)));
            } else {
                line.push_str(cell);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The most characters of one field of a record [`markdown`] shows; the rest is cut with `…`,
/// so that a long reason cannot push a comment past GitHub's limit (65536 characters).
pub const MARKDOWN_FIELD_CHARS: usize = 2000;

/// The ASCII marks that Markdown, GitHub or HTML may read as syntax anywhere in a line: tags
/// and entities, code spans, emphasis and strikethrough, links and images, table pipes,
/// mentions, issue references and math. The other marks (`,.;:'"?()-+=/`) mean something only
/// at the start of a block, which [`markdown`] never lets text begin.
const MARKDOWN_MARKS: &str = "\\`*_[]<>&|~!#@$";

/// `text` (from a record, so from a model) as one line of Markdown that is also valid HTML text:
/// it shows as the characters it holds and does nothing else, in a paragraph, a table cell or a
/// `<summary>`. Each mark in [`MARKDOWN_MARKS`], and a first character that is a mark or ends a
/// leading number (`1.`, `2)`), becomes a numeric character reference (`<` is `&#60;`, `|` is
/// `&#124;`), which neither Markdown nor HTML reads as syntax: no tag (`</details>`, `<img>`),
/// no image or link (`![x](…)`), no emphasis, code span, table pipe, heading or list. A
/// zero-width space (`&#8203;`) follows each `@`, each `#`, the `-` of `GH-` and the `:` of
/// `://`, and comes before the `.` of `www.`, so no one is mentioned, no issue linked and no
/// address made a link. A newline is `<br>`, so the text never starts a block of its own;
/// control and bidirectional characters are shown escaped ([`shown`]); leading blanks are
/// dropped (four would make a code block); at most [`MARKDOWN_FIELD_CHARS`] characters.
pub fn markdown(text: &str) -> String {
    escape_markdown(text, true)
}

/// A name (a judge's, `correctness@claude-haiku`) as Markdown: [`markdown`]'s escaping inside
/// `<code>`, but with no zero-width space after `@`, `#` or `GH-`, so that the name copied from
/// the page is the name. GitHub reads no mention or issue reference inside `code` (its filters
/// skip that element); an address (`://`, `www.`) is still broken, as Markdown links it anywhere.
pub fn markdown_name(text: &str) -> String {
    format!("<code>{}</code>", escape_markdown(text, false))
}

/// [`markdown`], with the zero-width spaces that stop mentions and issue references or without.
fn escape_markdown(text: &str, defuse_references: bool) -> String {
    const ZWSP: &str = "&#8203;";
    let mut out = String::with_capacity(text.len() + text.len() / 2);
    let text = text.trim_start_matches([' ', '\t']);
    let mut chars = text.chars().peekable();
    let mut taken = 0;
    // Still in the leading number (`12.` would start a list).
    let mut leading_number = true;
    // The last two characters written, for `GH-`, `://` and `www.`.
    let (mut prev, mut prev2) = ('\0', '\0');
    while let Some(c) = chars.next() {
        if taken == MARKDOWN_FIELD_CHARS {
            out.push('…');
            break;
        }
        taken += 1;
        let block_start = taken == 1 || (leading_number && matches!(c, '.' | ')'));
        leading_number &= c.is_ascii_digit();
        match c {
            '\n' => out.push_str("<br>"),
            '\r' if chars.peek() == Some(&'\n') => {}
            '\t' => out.push(' '),
            c if c.is_ascii_punctuation() => {
                // `www.` is broken before its dot, the others after their mark.
                if c == '.' && prev.eq_ignore_ascii_case(&'w') && prev2.eq_ignore_ascii_case(&'w') {
                    out.push_str(ZWSP);
                }
                if block_start || MARKDOWN_MARKS.contains(c) {
                    out.push_str(&format!("&#{};", c as u32));
                } else {
                    out.push(c);
                }
                let defuse = match c {
                    '@' | '#' => defuse_references,
                    '-' => {
                        defuse_references
                            && prev.eq_ignore_ascii_case(&'h')
                            && prev2.eq_ignore_ascii_case(&'g')
                    }
                    ':' => chars.peek() == Some(&'/'),
                    _ => false,
                };
                if defuse {
                    out.push_str(ZWSP);
                }
            }
            c if c.is_control() || is_bidi(c) => {
                out.push_str(&escaped(&c.to_string(), |_| true).replace('\\', "&#92;"))
            }
            c => out.push(c),
        }
        (prev2, prev) = (prev, c);
    }
    out
}

/// The characters that reorder text as it is shown (U+202A–U+202E, U+2066–U+2069): a reason
/// holding them can show other words than it holds.
fn is_bidi(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
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
    fn columns_are_as_wide_as_their_widest_cell() {
        let rows = |r: &[&[&str]]| -> Vec<Vec<String>> {
            r.iter()
                .map(|c| c.iter().map(|s| s.to_string()).collect())
                .collect()
        };
        assert_eq!(
            columns(&rows(&[
                &["NAME", "X", "LAST"],
                &["a-long-name", "é", ""],
                &["b", "yy", "z"]
            ])),
            "NAME         X   LAST\na-long-name  é\nb            yy  z\n"
        );
    }

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

    /// Numeric character references (`&#60;`) in `md` as the characters they stand for.
    fn decoded(md: &str) -> String {
        let mut out = String::new();
        let mut rest = md;
        while let Some(i) = rest.find("&#") {
            out.push_str(&rest[..i]);
            let tail = &rest[i + 2..];
            let end = tail.find(';').expect("a reference ends with ;");
            out.push(char::from_u32(tail[..end].parse().unwrap()).unwrap());
            rest = &tail[end + 1..];
        }
        out + rest
    }

    /// What a Markdown renderer or GitHub would read as syntax in `md`: in the source outside
    /// the character references, any punctuation but our `<br>`; in the text it shows, `@` or
    /// `#` before a name, `GH-` before a number, an address.
    fn active_syntax(md: &str) -> Vec<String> {
        let mut found = Vec::new();
        let mut source = md.replace("<br>", " ");
        while let Some(i) = source.find("&#") {
            let end = i + source[i..].find(';').unwrap();
            source.replace_range(i..=end, " ");
        }
        found.extend(
            source
                .chars()
                .enumerate()
                .filter(|(i, c)| {
                    MARKDOWN_MARKS.contains(*c)
                        || *c == '\n'
                        || (*i == 0 && c.is_ascii_punctuation())
                })
                .map(|(_, c)| c)
                .map(|c| format!("{c:?} in the source")),
        );
        let shown = decoded(md);
        let b: Vec<char> = shown.chars().collect();
        for i in 0..b.len() {
            let next = b.get(i + 1).copied().unwrap_or(' ');
            if (b[i] == '@'
                || b[i] == '#'
                || (b[i] == '-'
                    && i >= 2
                    && b[i - 2..i]
                        .iter()
                        .collect::<String>()
                        .eq_ignore_ascii_case("gh")))
                && (next.is_alphanumeric() || next == '_')
            {
                found.push(format!("{} before a name", b[i]));
            }
        }
        for address in ["://", "www."] {
            if shown.to_ascii_lowercase().contains(address) {
                found.push(format!("{address} in the text"));
            }
        }
        found
    }

    #[test]
    fn markdown_defuses_each_attack() {
        for attack in [
            "fine</details><details open><summary>MERGE</summary>",
            "cc @someone and @org/team",
            "fixes #123 and acme/app#7 and GH-9",
            "![x](http://evil/x.png)",
            "<img src=http://evil/x.png>",
            "a | b | c",
            "```\ncode\n``` and `x`",
            "line one\n\n# heading\n---\n> quote",
            "*bold* _em_ [link](https://evil) www.evil.com \\` ",
            "&lt;details&gt; &#64;someone",
            "- a list",
            "1. a list",
            "> a quote",
            "$x^2$ and ~~struck~~",
            "    indented code",
        ] {
            let md = markdown(attack);
            assert_eq!(
                active_syntax(&md),
                Vec::<String>::new(),
                "{attack:?} -> {md}"
            );
            assert_eq!(
                decoded(&md).replace('\u{200b}', ""),
                attack.replace('\n', "<br>").trim_start(),
                "shown as it is"
            );
        }
    }

    #[test]
    fn markdown_shows_the_text_it_holds() {
        assert_eq!(
            markdown("holds, plainly (see a.rs: 3-4)"),
            "holds, plainly (see a.rs: 3-4)"
        );
        assert_eq!(markdown("- not a list"), "&#45; not a list");
        assert_eq!(markdown("12. not a list"), "12&#46; not a list");
        assert_eq!(
            markdown("3) nor this; 4. this is fine"),
            "3&#41; nor this; 4. this is fine"
        );
        assert_eq!(markdown("@bob"), "&#64;&#8203;bob");
        assert_eq!(markdown("#12"), "&#35;&#8203;12");
        assert_eq!(markdown("gh-1"), "gh-&#8203;1");
        assert_eq!(markdown("a-b"), "a-b");
        assert_eq!(
            markdown("see https://x.org or www.y.org"),
            "see https:&#8203;//x.org or www&#8203;.y.org"
        );
        assert_eq!(markdown("a\r\nb"), "a<br>b");
        assert_eq!(markdown("    code"), "code");
        // An entity in the text is shown as its characters, never decoded.
        assert_eq!(markdown("&lt;"), "&#38;lt;");
        assert_eq!(markdown("a\x1b[2K\u{202e}"), "a&#92;x1b&#91;2K&#92;u{202e}");
        assert_eq!(markdown("é ✓"), "é ✓");
    }

    #[test]
    fn a_name_is_copied_as_it_is() {
        let name = "correctness@claude-haiku";
        let md = markdown_name(name);
        assert_eq!(md, "<code>correctness&#64;claude-haiku</code>");
        let text = decoded(
            md.strip_prefix("<code>")
                .unwrap()
                .strip_suffix("</code>")
                .unwrap(),
        );
        assert_eq!(text, name);
        assert_eq!(markdown_name("gh-1#2"), "<code>gh-1&#35;2</code>");
        // A hostile name still closes nothing and links nothing.
        assert_eq!(
            markdown_name("</code>www.x"),
            "<code>&#60;/code&#62;www&#8203;.x</code>"
        );
    }

    #[test]
    fn markdown_is_bounded() {
        let md = markdown(&"a".repeat(MARKDOWN_FIELD_CHARS + 50));
        assert_eq!(md.chars().count(), MARKDOWN_FIELD_CHARS + 1);
        assert!(md.ends_with('…'));
        assert_eq!(
            markdown(&"a".repeat(MARKDOWN_FIELD_CHARS)).chars().count(),
            MARKDOWN_FIELD_CHARS
        );
    }
}

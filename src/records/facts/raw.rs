//! `git diff --raw` read as each changed path's modes and status: what tells a symbolic link
//! (mode 120000) from a file, which `--numstat` does not say. A line (or with `-z` a record) is
//! `:OLDMODE NEWMODE OLDBLOB NEWBLOB STATUS`, then the path, or for a rename or copy the old and
//! the new path.

use super::quoted::{short, unquote};

/// Git's mode of a symbolic link.
pub const LINK_MODE: &str = "120000";

/// One entry of `git diff --raw`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawEntry {
    pub old_mode: String,
    pub new_mode: String,
    /// The head's blob, as long as git wrote it (`--no-abbrev` writes all of it).
    pub new_blob: String,
    /// `A`, `C75`, `D`, `M`, `R100`, `T`, `U` or `X`.
    pub status: String,
    pub path: String,
    /// The old path of a rename or a copy.
    pub previous_path: Option<String>,
}

impl RawEntry {
    /// Whether the path is a symbolic link at the head.
    pub fn is_link(&self) -> bool {
        self.new_mode == LINK_MODE && !self.status.starts_with('D')
    }
}

/// Whether `mode` is a mode as git writes it: six octal digits.
pub fn is_mode(mode: &str) -> bool {
    mode.len() == 6 && mode.bytes().all(|b| (b'0'..=b'7').contains(&b))
}

/// The fields before the path: an entry without its paths, and how many paths follow (two for
/// a rename or a copy).
pub fn meta(text: &str) -> Result<(RawEntry, usize), String> {
    let bad = || {
        format!(
            "not a --raw line (:OLDMODE NEWMODE OLDBLOB NEWBLOB STATUS<TAB>PATH): {:?}",
            short(text)
        )
    };
    let fields: Vec<&str> = text.strip_prefix(':').ok_or_else(bad)?.split(' ').collect();
    let [old_mode, new_mode, old_blob, new_blob, status] = fields[..] else {
        return Err(bad());
    };
    if !is_mode(old_mode) || !is_mode(new_mode) {
        return Err(format!(
            "a --raw mode that is not six octal digits: {:?}",
            short(text)
        ));
    }
    let hex = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit());
    if !hex(old_blob) || !hex(new_blob) {
        return Err(format!(
            "a --raw blob that is not hexadecimal: {:?}",
            short(text)
        ));
    }
    let (letter, score) = status.split_at(status.len().min(1));
    let paths = match letter {
        "R" | "C" if score.bytes().all(|b| b.is_ascii_digit()) => 2,
        "A" | "D" | "M" | "T" | "U" | "X" if score.is_empty() => 1,
        _ => return Err(format!("an unknown --raw status {:?}", short(status))),
    };
    let entry = RawEntry {
        old_mode: old_mode.into(),
        new_mode: new_mode.into(),
        new_blob: new_blob.into(),
        status: status.into(),
        path: String::new(),
        previous_path: None,
    };
    Ok((entry, paths))
}

/// One line of `git diff --raw` without `-z`: paths after tabs, quoted as git quotes them.
pub fn line(line: &str) -> Result<RawEntry, String> {
    let (head, rest) = line
        .split_once('\t')
        .ok_or_else(|| format!("a --raw line without its path: {:?}", short(line)))?;
    let (mut entry, n) = meta(head)?;
    let path = |s: &str| -> Result<(String, usize), String> {
        if s.starts_with('"') {
            let (p, tail) = unquote(s)?;
            return Ok((p, s.len() - tail.len()));
        }
        let end = s.find('\t').unwrap_or(s.len());
        Ok((s[..end].to_string(), end))
    };
    let (first, used) = path(rest)?;
    let tail = &rest[used..];
    if n == 2 {
        let Some(second) = tail.strip_prefix('\t') else {
            return Err(format!(
                "a --raw rename or copy without its new path: {:?}",
                short(line)
            ));
        };
        let (new, used) = path(second)?;
        if used != second.len() {
            return Err(format!(
                "unexpected text after a --raw path: {:?}",
                short(line)
            ));
        }
        entry.path = new;
        entry.previous_path = Some(first);
    } else {
        if !tail.is_empty() {
            return Err(format!(
                "unexpected text after a --raw path: {:?}",
                short(line)
            ));
        }
        entry.path = first;
    }
    if entry.path.is_empty() || entry.previous_path.as_deref() == Some("") {
        return Err("an empty path".into());
    }
    Ok(entry)
}

/// One record of `git diff --raw -z`: `meta` is its first field; its paths are the next.
pub fn z_record<'a>(
    meta_field: &str,
    fields: &mut impl Iterator<Item = &'a [u8]>,
) -> Result<RawEntry, String> {
    let (mut entry, n) = meta(meta_field)?;
    let mut next = || -> Result<String, String> {
        match fields.next() {
            Some(f) if !f.is_empty() => {
                String::from_utf8(f.to_vec()).map_err(|_| "a --raw path that is not UTF-8".into())
            }
            _ => Err("a --raw record without its paths".into()),
        }
    };
    let first = next()?;
    if n == 2 {
        entry.previous_path = Some(first);
        entry.path = next()?;
    } else {
        entry.path = first;
    }
    Ok(entry)
}

/// The whole output of `git diff --raw -z`.
pub fn parse_z(bytes: &[u8]) -> Result<Vec<RawEntry>, String> {
    let mut fields = bytes.split(|&b| b == 0);
    let mut entries = Vec::new();
    while let Some(field) = fields.next() {
        let field = field.trim_ascii_start();
        if field.is_empty() {
            continue;
        }
        let text = std::str::from_utf8(field)
            .map_err(|_| "a --raw record that is not UTF-8".to_string())?;
        entries.push(z_record(text, &mut fields)?);
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_lines_give_modes_status_and_paths() {
        let e = line(":000000 120000 0000000 524293f A\tdocs/setup.md").unwrap();
        assert_eq!((e.new_mode.as_str(), e.status.as_str()), ("120000", "A"));
        assert_eq!(e.path, "docs/setup.md");
        assert!(e.is_link());
        let e = line(":120000 120000 1111111 2222222 R087\told link\t\"new\\tlink\"").unwrap();
        assert_eq!(
            (e.path.as_str(), e.previous_path.as_deref()),
            ("new\tlink", Some("old link"))
        );
        assert!(e.is_link());
        assert!(
            !line(":120000 000000 1111111 0000000 D\tgone")
                .unwrap()
                .is_link()
        );
        assert!(
            !line(":100644 100644 1111111 2222222 M\ta.rs")
                .unwrap()
                .is_link()
        );
    }

    #[test]
    fn malformed_raw_lines_say_why_in_one_line() {
        for (bad, why) in [
            (":000000 120000 0 1 A", "without its path"),
            (":000000 12000 0 1 A\tp", "six octal digits"),
            (":000000 120000 0 1\tp", "not a --raw line"),
            (":000000 120000 0 zz A\tp", "not hexadecimal"),
            (":000000 120000 0 1 Q\tp", "unknown --raw status"),
            (":000000 120000 0 1 R100\tp", "without its new path"),
            (":000000 120000 0 1 A\tp\tq", "unexpected text"),
            (":000000 120000 0 1 A\t\"open", "closing quote"),
            (":000000 120000 0 1 A\t", "an empty path"),
        ] {
            let err = line(bad).unwrap_err();
            assert!(err.contains(why) && !err.contains('\n'), "{bad:?}: {err}");
        }
    }

    #[test]
    fn raw_z_records() {
        let bytes = b":000000 120000 0000000 abc A\0a b\0:100644 120000 1 2 R100\0old\0new\0";
        let e = parse_z(bytes).unwrap();
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].path, "a b");
        assert_eq!(
            (e[1].path.as_str(), e[1].previous_path.as_deref()),
            ("new", Some("old"))
        );
        assert!(parse_z(b":000000 120000 0 1 R100\0old\0").is_err());
        assert!(parse_z(b"").unwrap().is_empty());
    }
}

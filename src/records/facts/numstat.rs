//! `git diff --numstat` read as changed files: one file a line, or with `-z` one file a
//! NUL-ended record; renames in both notations, quoted paths, binary files' unknown counts.
//! `git diff --raw --numstat` adds each file's mode ([`super::raw`]), which tells a symbolic
//! link.

use anyhow::{Result, anyhow, bail};

use super::quoted::{short, unquote};
use super::raw::{self, RawEntry};
use super::{ChangedFile, PrFacts};

/// `git diff --numstat`, one file a line, or with `-z` one file a NUL-ended record; with
/// `--raw`, its lines (`:` first) give the files their modes.
pub fn parse(name: &str, bytes: &[u8]) -> Result<PrFacts> {
    let (files, raws) = if bytes.contains(&0) {
        numstat_z(name, bytes)?
    } else {
        let (mut files, mut raws) = (Vec::new(), Vec::new());
        let mut log = LogPart::Files;
        for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
            let at = || format!("{name}: line {}", i + 1);
            if log.skips(line) {
                continue;
            }
            let line = crate::records::input::line_text(line, &at)?;
            if line.trim_ascii().is_empty() {
                continue;
            }
            if line.starts_with(':') {
                let entry = raw::line(line).map_err(|e| anyhow!("{}: {e}", at()))?;
                raws.push((at(), entry));
                continue;
            }
            let file = numstat_line(line).map_err(|e| anyhow!("{}: {e}", at()))?;
            files.push(non_empty(file.normalized()).map_err(|e| anyhow!("{}: {e}", at()))?);
        }
        (files, raws)
    };
    let mut files = per_path(files);
    give_modes(&mut files, raws)?;
    Ok(PrFacts {
        changed_files: files.into_iter().map(ChangedFile::normalized).collect(),
        ..PrFacts::default()
    })
}

/// One entry a path: `git log --numstat` lists a file once for each commit that changed it,
/// and its counts are summed. A binary entry adds no lines; an unknown count stays unknown.
fn per_path(files: Vec<ChangedFile>) -> Vec<ChangedFile> {
    let mut out: Vec<ChangedFile> = Vec::with_capacity(files.len());
    let mut at = std::collections::HashMap::new();
    for file in files {
        let Some(&i) = at.get(&file.path) else {
            at.insert(file.path.clone(), out.len());
            out.push(file);
            continue;
        };
        let kept: &mut ChangedFile = &mut out[i];
        let sum = |x: Option<u64>, y: Option<u64>| match (x, y) {
            (Some(x), Some(y)) => Some(x.saturating_add(y)),
            (None, y) if kept.binary => y,
            (x, None) if file.binary => x,
            _ => None,
        };
        (kept.additions, kept.deletions) = (
            sum(kept.additions, file.additions),
            sum(kept.deletions, file.deletions),
        );
        kept.binary &= file.binary;
        if kept.previous_path.is_none() {
            kept.previous_path = file.previous_path;
        }
    }
    out
}

/// Where a line of `git log --numstat` is: among a commit's files, in its header (`commit
/// <hash>` and `Key: value` lines), or in its message (indented). Header and message are
/// skipped, so plain `git log --numstat` reads as `git log --numstat --format=` does.
#[derive(Clone, Copy)]
enum LogPart {
    Files,
    Header,
    Message,
}

impl LogPart {
    /// Whether `line` is a commit's header or message, moving on through the commit.
    fn skips(&mut self, line: &[u8]) -> bool {
        if commit_line(line) {
            *self = LogPart::Header;
            return true;
        }
        match self {
            LogPart::Files => false,
            LogPart::Header => {
                if line.trim_ascii().is_empty() {
                    *self = LogPart::Message;
                }
                true
            }
            LogPart::Message if line.starts_with(b"    ") || line.trim_ascii().is_empty() => true,
            LogPart::Message => {
                *self = LogPart::Files;
                false
            }
        }
    }
}

/// `commit <hash>` (40 or 64 hex digits), maybe followed by decorations: the first line of a
/// commit in `git log`.
fn commit_line(line: &[u8]) -> bool {
    let Some(rest) = line.strip_prefix(b"commit ") else {
        return false;
    };
    let hash = rest.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    matches!(hash, 40 | 64) && rest.get(hash).is_none_or(|&b| matches!(b, b' ' | b'\r'))
}

/// Gives each file the head's mode from its `--raw` entry (none for a deleted one). An entry
/// whose file the numstat does not list is refused: the two must come from one diff.
fn give_modes(files: &mut [ChangedFile], raws: Vec<(String, RawEntry)>) -> Result<()> {
    for (at, entry) in raws {
        let path = crate::records::printable::normalize_path(&entry.path);
        let Some(file) = files.iter_mut().find(|f| f.path == path) else {
            bail!(
                "{at}: a --raw line for {:?}, which no --numstat line lists (give both from one diff: git diff --raw --numstat)",
                short(&path)
            );
        };
        if !entry.status.starts_with('D') {
            file.mode = Some(entry.new_mode);
        }
    }
    Ok(())
}

/// A path that normalises to nothing (`""`, `./`) names no file.
fn non_empty(file: ChangedFile) -> Result<ChangedFile, String> {
    let blank = |p: &str| p.trim().is_empty();
    if blank(&file.path) || file.previous_path.as_deref().is_some_and(blank) {
        return Err("an empty path".into());
    }
    Ok(file)
}

/// `ADDED<TAB>DELETED<TAB>rest`: the counts, and what follows the second tab.
fn counts(line: &str) -> Result<(Option<u64>, Option<u64>, &str), String> {
    let mut it = line.splitn(3, '\t');
    let (Some(a), Some(d), Some(rest)) = (it.next(), it.next(), it.next()) else {
        return Err(format!(
            "not a numstat line (ADDED<TAB>DELETED<TAB>PATH): {:?}",
            short(line)
        ));
    };
    let count = |s: &str, what: &str| -> Result<Option<u64>, String> {
        match s {
            "-" => Ok(None),
            _ => s
                .parse::<u64>()
                .map(Some)
                .map_err(|_| format!("{what} count {:?} is neither a number nor -", short(s))),
        }
    };
    Ok((count(a, "added")?, count(d, "deleted")?, rest))
}

/// One line of plain `--numstat`.
pub fn numstat_line(line: &str) -> Result<ChangedFile, String> {
    let (additions, deletions, rest) = counts(line)?;
    let (path, previous_path) = numstat_path(rest)?;
    Ok(ChangedFile {
        path,
        additions,
        deletions,
        previous_path,
        mode: None,
        binary: additions.is_none() && deletions.is_none(),
    })
}

/// The path part of a numstat line: `path`, `"quoted path"`, `old => new`, or git's shared
/// prefix and suffix form `dir/{old => new}/file`, where a side may be empty.
fn numstat_path(rest: &str) -> Result<(String, Option<String>), String> {
    if rest.is_empty() {
        return Err("no path after the counts".into());
    }
    // git quotes a path with unusual bytes; in a rename each side is quoted on its own and
    // the shared parts are not factored out.
    if rest.starts_with('"') {
        let (old, tail) = unquote(rest)?;
        if tail.is_empty() {
            return Ok((old, None));
        }
        let Some(new) = tail.strip_prefix(" => ") else {
            return Err(format!(
                "unexpected text after a quoted path: {:?}",
                short(tail)
            ));
        };
        let new = if new.starts_with('"') {
            let (new, tail) = unquote(new)?;
            if !tail.is_empty() {
                return Err(format!(
                    "unexpected text after a quoted path: {:?}",
                    short(tail)
                ));
            }
            new
        } else {
            new.to_string()
        };
        return Ok((new, Some(old)));
    }
    let Some(arrow) = rest.find(" => ") else {
        return Ok((rest.to_string(), None));
    };
    if let Some(open) = rest[..arrow].rfind('{')
        && let Some(close) = rest[arrow + 4..].find('}').map(|c| c + arrow + 4)
    {
        let (prefix, suffix) = (&rest[..open], &rest[close + 1..]);
        let old = format!("{prefix}{}{suffix}", &rest[open + 1..arrow]);
        let new = format!("{prefix}{}{suffix}", &rest[arrow + 4..close]);
        // An empty side leaves `dir//file`; normalising makes it `dir/file`.
        return Ok((new, Some(old)));
    }
    if rest.starts_with(" => ") {
        return Err(format!("a rename without its old path: {:?}", short(rest)));
    }
    let (old, new) = (&rest[..arrow], &rest[arrow + 4..]);
    if new.is_empty() {
        return Err(format!("a rename without its new path: {:?}", short(rest)));
    }
    Ok((new.to_string(), Some(old.to_string())))
}

/// The files, and the `--raw` entries with where each was read.
type FilesAndModes = (Vec<ChangedFile>, Vec<(String, RawEntry)>);

/// `git diff --numstat -z`: `A\tD\tpath\0`, or for a rename `A\tD\t\0old\0new\0`; with
/// `--raw`, its records (`:` first) too.
fn numstat_z(name: &str, bytes: &[u8]) -> Result<FilesAndModes> {
    let mut fields = bytes.split(|&b| b == 0).peekable();
    let (mut files, mut raws) = (Vec::new(), Vec::new());
    let mut record = 0;
    let text = |f: &[u8], record: usize| -> Result<String> {
        String::from_utf8(f.to_vec()).map_err(|_| anyhow!("{name}: record {record}: not UTF-8"))
    };
    while let Some(field) = fields.next() {
        // Records may be separated by newlines too when several diffs are concatenated.
        let field = field.trim_ascii_start();
        record += 1;
        // git ends every record in a NUL and writes no empty ones (an empty diff is no bytes
        // at all), so a NUL with nothing before it is no diff: a lone NUL is refused, not read
        // as an empty diff. Only what follows the last NUL may be blank: the end of input.
        if field.is_empty() {
            if fields.peek().is_none() {
                break;
            }
            bail!("{name}: record {record}: an empty record (a NUL with no numstat before it)");
        }
        let line = text(field, record)?;
        let at = |e: String| anyhow!("{name}: record {record}: {e}");
        if line.starts_with(':') {
            let entry = raw::z_record(&line, &mut fields).map_err(at)?;
            raws.push((format!("{name}: record {record}"), entry));
            continue;
        }
        let (additions, deletions, rest) = counts(&line).map_err(at)?;
        let (path, previous_path) = if rest.is_empty() {
            let (Some(old), Some(new)) = (fields.next(), fields.next()) else {
                return Err(at("a rename without both of its paths".into()));
            };
            if old.is_empty() || new.is_empty() {
                return Err(at("a rename without both of its paths".into()));
            }
            (text(new, record)?, Some(text(old, record)?))
        } else {
            (rest.to_string(), None)
        };
        let file = ChangedFile {
            path,
            additions,
            deletions,
            previous_path,
            mode: None,
            binary: additions.is_none() && deletions.is_none(),
        };
        files.push(non_empty(file.normalized()).map_err(at)?);
    }
    Ok((files, raws))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::facts::{self, FactsInput};

    fn one(line: &str) -> ChangedFile {
        numstat_line(line).unwrap().normalized()
    }

    #[test]
    fn numstat_plain_binary_and_deleted_lines() {
        assert_eq!(one("4\t1\tsrc/a.rs"), ChangedFile::new("src/a.rs", 4, 1));
        let bin = one("-\t-\tlogo.png");
        assert_eq!(
            (bin.additions, bin.deletions, bin.binary, bin.lines()),
            (None, None, true, Some(0))
        );
        // Only git's two dashes say binary; one is a count missing.
        let half = one("-\t3\thalf.txt");
        assert_eq!((half.binary, half.lines()), (false, None));
        assert_eq!(one("0\t12\tgone.txt"), ChangedFile::new("gone.txt", 0, 12));
        assert_eq!(one("1\t0\tname with spaces.md").path, "name with spaces.md");
    }

    #[test]
    fn a_commit_line_is_git_logs_and_nothing_else() {
        let h = "0123456789abcdef0123456789abcdef01234567";
        assert!(commit_line(format!("commit {h}").as_bytes()));
        assert!(commit_line(
            format!("commit {h} (HEAD -> topic)").as_bytes()
        ));
        assert!(commit_line(format!("commit {h}{}", &h[..24]).as_bytes()));
        assert!(!commit_line(format!("commit {}", &h[..39]).as_bytes()));
        assert!(!commit_line(format!("commit {h}x").as_bytes()));
        assert!(!commit_line(b"1\t2\tcommit"));
    }

    #[test]
    fn a_path_a_commit_changed_twice_is_one_file_summed() {
        let parse = |t: &str| parse("in", t.as_bytes()).unwrap().changed_files;
        let files = parse("1\t2\ta\n-\t-\tbin\n\n3\t0\ta\n4\t4\tbin\n-\t-\tpic\n-\t-\tpic\n");
        assert_eq!(files.len(), 3);
        assert_eq!(files[0], ChangedFile::new("a", 4, 2));
        // A file binary in one commit and text in another counts the text's lines.
        assert_eq!((files[1].binary, files[1].lines()), (false, Some(8)));
        assert_eq!((files[2].binary, files[2].lines()), (true, Some(0)));
        // An unknown count stays unknown however many commits add to it.
        let files = parse("-\t1\ta\n3\t0\ta\n");
        assert_eq!(files[0].lines(), None);
    }

    #[test]
    fn numstat_renames_in_both_notations() {
        assert_eq!(
            one("0\t0\told.txt => new.txt"),
            ChangedFile::new("new.txt", 0, 0).renamed_from("old.txt")
        );
        assert_eq!(
            one("3\t2\tsrc/{a => b}/lib.rs"),
            ChangedFile::new("src/b/lib.rs", 3, 2).renamed_from("src/a/lib.rs")
        );
        assert_eq!(
            one("1\t1\tsrc/{old.rs => new.rs}"),
            ChangedFile::new("src/new.rs", 1, 1).renamed_from("src/old.rs")
        );
        assert_eq!(
            one("0\t0\t{a => b}/f.rs"),
            ChangedFile::new("b/f.rs", 0, 0).renamed_from("a/f.rs")
        );
    }

    #[test]
    fn numstat_renames_with_an_empty_side_collapse_the_slashes() {
        assert_eq!(
            one("0\t0\tdir/{ => sub}/f.txt"),
            ChangedFile::new("dir/sub/f.txt", 0, 0).renamed_from("dir/f.txt")
        );
        assert_eq!(
            one("0\t0\tdir/{sub => }/f.txt"),
            ChangedFile::new("dir/f.txt", 0, 0).renamed_from("dir/sub/f.txt")
        );
    }

    #[test]
    fn numstat_quoted_paths() {
        assert_eq!(one("1\t0\t\"a\\tb.txt\"").path, "a\tb.txt");
        assert_eq!(one("1\t0\t\"caf\\303\\251.md\"").path, "café.md");
        let r = one("1\t0\t\"a\\\"q.txt\" => \"b\\\"q.txt\"");
        assert_eq!(
            (r.path.as_str(), r.previous_path.as_deref()),
            ("b\"q.txt", Some("a\"q.txt"))
        );
        let r = one("1\t0\t\"caf\\303\\251\" => plain");
        assert_eq!(
            (r.path.as_str(), r.previous_path.as_deref()),
            ("plain", Some("café"))
        );
    }

    #[test]
    fn numstat_malformed_lines_say_why() {
        assert!(
            numstat_line("4 1 a.rs")
                .unwrap_err()
                .starts_with("not a numstat line")
        );
        assert!(
            numstat_line("x\t1\ta.rs")
                .unwrap_err()
                .contains("added count \"x\"")
        );
        assert!(
            numstat_line("1\t-2\ta.rs")
                .unwrap_err()
                .contains("deleted count")
        );
        assert_eq!(
            numstat_line("1\t2\t").unwrap_err(),
            "no path after the counts"
        );
        assert!(
            numstat_line("1\t2\t\"open")
                .unwrap_err()
                .contains("closing quote")
        );
    }

    #[test]
    fn numstat_errors_name_the_line() {
        let err = facts::parse("in", b"1\t2\ta\n\nbad\n", FactsInput::Numstat).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("in: line 3: not a numstat line"),
            "{err}"
        );
    }

    /// `git diff --raw --numstat`: the raw lines give each file its mode at the head, which is
    /// how a symbolic link is told from a file.
    #[test]
    fn raw_lines_give_the_files_their_modes() {
        let diff = b":000000 120000 0000000 5242939 A\tdocs/setup.md\n\
:100644 120000 1111111 2222222 T\tsrc/a.rs\n\
:120000 000000 3333333 0000000 D\told-link\n\
:100644 100644 4444444 5555555 R090\tx/old.rs\tx/new.rs\n\
1\t0\tdocs/setup.md\n1\t1\tsrc/a.rs\n0\t1\told-link\n2\t1\tx/{old.rs => new.rs}\n";
        for bytes in [diff.to_vec(), zed(diff)] {
            let files = parse("in", &bytes).unwrap().changed_files;
            let modes: Vec<(&str, Option<&str>)> = files
                .iter()
                .map(|f| (f.path.as_str(), f.mode.as_deref()))
                .collect();
            assert_eq!(
                modes,
                [
                    ("docs/setup.md", Some("120000")),
                    ("src/a.rs", Some("120000")),
                    ("old-link", None),
                    ("x/new.rs", Some("100644")),
                ]
            );
            assert!(files[0].is_link() && files[1].is_link() && !files[2].is_link());
        }
        let err = parse("in", b":000000 120000 0 1 A\tnot-listed\n1\t0\ta\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "in: line 1: a --raw line for \"not-listed\", which no --numstat line lists (give both from one diff: git diff --raw --numstat)"
        );
        let err = parse("in", b"1\t0\ta\n:000000 12000 0 1 A\ta\n").unwrap_err();
        assert!(
            err.to_string().starts_with("in: line 2: a --raw mode"),
            "{err}"
        );
        let err = parse("in", b":000000 120000 0 1 R100\0a\0").unwrap_err();
        assert_eq!(
            err.to_string(),
            "in: record 1: a --raw record without its paths"
        );
    }

    /// The same diff as `git diff --raw --numstat -z` writes it.
    fn zed(diff: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        for line in diff.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            let text = std::str::from_utf8(line).unwrap();
            if text.starts_with(':') {
                out.extend(text.replace('\t', "\0").bytes());
            } else if let Some((counts, rename)) = text.rsplit_once("\tx/{") {
                let (old, new) = rename.trim_end_matches('}').split_once(" => ").unwrap();
                out.extend(format!("{counts}\t\0x/{old}\0x/{new}").bytes());
            } else {
                out.extend(line);
            }
            out.push(0);
        }
        out
    }

    #[test]
    fn numstat_z_records() {
        let facts = facts::parse(
            "in",
            b"1\t2\ta b.txt\0-\t-\tbin\x003\t0\t\0old/x\0new/x\0",
            FactsInput::Detect,
        )
        .unwrap();
        assert_eq!(
            facts.changed_files,
            vec![
                ChangedFile::new("a b.txt", 1, 2),
                ChangedFile {
                    path: "bin".into(),
                    binary: true,
                    ..ChangedFile::default()
                },
                ChangedFile::new("new/x", 3, 0).renamed_from("old/x"),
            ]
        );
        let err = facts::parse("in", b"1\t2\t\0only\0", FactsInput::Numstat).unwrap_err();
        assert_eq!(
            err.to_string(),
            "in: record 1: a rename without both of its paths"
        );
        // A NUL with no record before it is no diff, alone or among records.
        for (bytes, record) in [
            (&b"\0"[..], 1),
            (b"\n\0", 1),
            (b"\0\0", 1),
            (b"1\t2\ta\0\0", 2),
            (b"1\t2\ta\0\n\0", 2),
        ] {
            for format in [FactsInput::Detect, FactsInput::Numstat] {
                let err = facts::parse("in", bytes, format).unwrap_err();
                assert_eq!(
                    err.to_string(),
                    format!(
                        "in: record {record}: an empty record (a NUL with no numstat before it)"
                    ),
                    "{bytes:?}"
                );
            }
        }
        // Diffs joined by newlines, and a newline after the last NUL, are still read.
        let facts = facts::parse("in", b"1\t2\ta\0\n3\t4\tb\0\n", FactsInput::Detect).unwrap();
        assert_eq!(facts.changed_files.len(), 2);
        // An empty diff is no bytes at all, as git writes it.
        assert!(
            facts::parse("in", b"", FactsInput::Numstat)
                .unwrap()
                .changed_files
                .is_empty()
        );
    }
}

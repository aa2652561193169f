//! What the caller knows about a pull request, read from one of three inputs: the seed's PR
//! facts as JSON, `gh pr view --json …` output as it is, or `git diff --numstat` (with or
//! without `-z`).

pub mod numstat;
mod quoted;
pub mod raw;

use std::io::Read;

use anyhow::{Context, Result, anyhow, bail};
use serde::{Deserialize, Serialize};

use crate::records::printable::normalize_path as normalize;

/// The largest input read: far past any real diff, small enough to never exhaust memory.
pub const MAX_INPUT: usize = 1 << 30;

/// One changed file. Counts are absent when unknown; a binary file (`-\t-` in numstat) has
/// none and is marked `binary`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ChangedFile {
    pub path: String,
    #[serde(default)]
    pub additions: Option<u64>,
    #[serde(default)]
    pub deletions: Option<u64>,
    /// Where a rename came from. GitHub's REST API calls it `previous_filename`.
    #[serde(
        default,
        alias = "previousFilename",
        alias = "previous_filename",
        skip_serializing_if = "Option::is_none"
    )]
    pub previous_path: Option<String>,
    /// The file's mode at the head as git writes it (`100644`, `100755`, `120000` for a
    /// symbolic link), when the input says: `git diff --raw` does, gh does not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// A binary file: git counts no lines in it (`-\t-` in numstat), as GitHub's files API
    /// counts 0 and 0. Its size is known to be no lines, not unread.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub binary: bool,
}

impl ChangedFile {
    /// A file with known counts (tests and callers building facts by hand).
    pub fn new(path: &str, additions: u64, deletions: u64) -> ChangedFile {
        ChangedFile {
            path: path.into(),
            additions: Some(additions),
            deletions: Some(deletions),
            previous_path: None,
            mode: None,
            binary: false,
        }
    }

    /// The same file, renamed from `from`.
    pub fn renamed_from(mut self, from: &str) -> ChangedFile {
        self.previous_path = Some(from.into());
        self
    }

    /// Whether the file is a symbolic link at the head.
    pub fn is_link(&self) -> bool {
        self.mode.as_deref() == Some(raw::LINK_MODE)
    }

    /// Additions plus deletions; none for a binary file without counts; `None` when a count is
    /// unknown.
    pub fn lines(&self) -> Option<u64> {
        match (self.additions, self.deletions) {
            (Some(a), Some(d)) => Some(a.saturating_add(d)),
            (None, None) if self.binary => Some(0),
            _ => None,
        }
    }

    pub(crate) fn normalized(mut self) -> ChangedFile {
        if let std::borrow::Cow::Owned(p) = normalize(&self.path) {
            self.path = p;
        }
        if let Some(prev) = &self.previous_path
            && let std::borrow::Cow::Owned(p) = normalize(prev)
        {
            self.previous_path = Some(p);
        }
        self
    }
}

/// PrFacts (docs/rules.md): everything classification reads.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct PrFacts {
    #[serde(default)]
    pub repo: Option<String>,
    #[serde(default)]
    pub pr: Option<u64>,
    #[serde(default)]
    pub head: Option<String>,
    #[serde(default)]
    pub base: Option<String>,
    #[serde(default)]
    pub kind: Option<String>,
    pub changed_files: Vec<ChangedFile>,
    /// The run holds or held a G10 hold (the seed's ReviewerFacts.g10Hold).
    #[serde(default)]
    pub g10_hold: bool,
    /// The list misses files its source counted (gh lists at most 100): the size is unread.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub list_incomplete: bool,
}

/// How many files `gh pr view --json files` lists at most.
pub const GH_FILES_LISTED: usize = 100;

/// Which input a caller hands over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FactsInput {
    /// Told apart by the first character: `{` is JSON, anything else numstat.
    Detect,
    Facts,
    Gh,
    Numstat,
}

/// Reads one whole input (a path, or standard input for `-`) as bytes, with its name.
pub fn read_input(path: &str) -> Result<(String, Vec<u8>)> {
    let (name, reader) = crate::records::input::Source::Path(path.into()).open()?;
    let mut bytes = Vec::new();
    let mut reader = reader.take(MAX_INPUT as u64 + 1);
    // Read in blocks so one endless line is refused at the line cap, not at MAX_INPUT.
    let (mut line, mut line_start) = (1usize, 0usize);
    let mut block = vec![0u8; 1 << 16];
    loop {
        let n = match reader.read(&mut block) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e).with_context(|| format!("{name}: cannot read")),
        };
        let from = bytes.len();
        bytes.extend_from_slice(&block[..n]);
        for (i, _) in bytes[from..]
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
        {
            line += 1;
            line_start = from + i + 1;
        }
        if bytes.len() - line_start > crate::records::input::MAX_LINE {
            return Err(crate::records::input::too_long(&format!(
                "{name}: line {line}"
            )));
        }
    }
    if bytes.len() > MAX_INPUT {
        bail!("{name}: larger than {} MiB", MAX_INPUT >> 20);
    }
    Ok((name, bytes))
}

/// Parses an input in the given format into PR facts.
pub fn parse(name: &str, bytes: &[u8], format: FactsInput) -> Result<PrFacts> {
    let text_start = bytes
        .strip_prefix(b"\xEF\xBB\xBF")
        .unwrap_or(bytes)
        .iter()
        .position(|b| !b.is_ascii_whitespace());
    let numstat = match (format, text_start) {
        (FactsInput::Numstat, _) => true,
        (FactsInput::Detect, None) => {
            bail!("{name}: empty input: no PR facts (pass --numstat if the diff is empty)")
        }
        (FactsInput::Detect, Some(i)) => !matches!(bytes[i], b'{' | b'['),
        _ => false,
    };
    if numstat {
        numstat::parse(name, bytes)
    } else {
        parse_json(name, bytes, format)
    }
}

/// Both JSON inputs at once, so one parse reads either and its errors carry line numbers.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct JsonInput {
    #[serde(rename = "type", default)]
    record_type: Option<String>,
    // PR facts as docs/rules.md names them.
    #[serde(default)]
    repo: Option<String>,
    #[serde(default)]
    pr: Option<u64>,
    #[serde(default)]
    head: Option<String>,
    #[serde(default)]
    base: Option<String>,
    #[serde(default)]
    kind: Option<String>,
    /// PR facts' list of files; in gh's output, the count of them.
    #[serde(default)]
    changed_files: Option<ChangedFiles>,
    #[serde(default)]
    g10_hold: Option<bool>,
    // gh pr view --json number,headRefOid,baseRefOid,files[,changedFiles,url,headRepository,headRepositoryOwner]
    #[serde(default)]
    number: Option<u64>,
    #[serde(default)]
    head_ref_oid: Option<String>,
    #[serde(default)]
    base_ref_oid: Option<String>,
    #[serde(default)]
    files: Option<Vec<ChangedFile>>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    head_repository: Option<GhName>,
    #[serde(default)]
    head_repository_owner: Option<GhLogin>,
}

/// `changedFiles`: a list in PR facts, a number in gh's output.
enum ChangedFiles {
    List(Vec<ChangedFile>),
    Count(u64),
}

impl<'de> Deserialize<'de> for ChangedFiles {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Either;
        impl<'de> serde::de::Visitor<'de> for Either {
            type Value = ChangedFiles;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list of changed files, or gh's count of them")
            }
            fn visit_u64<E>(self, n: u64) -> Result<ChangedFiles, E> {
                Ok(ChangedFiles::Count(n))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<ChangedFiles, A::Error> {
                let mut files = Vec::new();
                while let Some(f) = seq.next_element::<ChangedFile>()? {
                    files.push(f);
                }
                Ok(ChangedFiles::List(files))
            }
        }
        d.deserialize_any(Either)
    }
}

#[derive(Deserialize)]
struct GhName {
    #[serde(default)]
    name: Option<String>,
}

#[derive(Deserialize)]
struct GhLogin {
    #[serde(default)]
    login: Option<String>,
}

/// `https://github.com/OWNER/NAME/pull/N` → `OWNER/NAME`.
fn repo_from_url(url: &str) -> Option<String> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let mut parts = rest.split('/');
    let (_host, owner, name) = (parts.next()?, parts.next()?, parts.next()?);
    (!owner.is_empty() && !name.is_empty() && parts.next() == Some("pull"))
        .then(|| format!("{owner}/{name}"))
}

/// serde_json's message without its own " at line L column C", which we put in front instead.
pub(crate) fn json_error(name: &str, e: &serde_json::Error) -> anyhow::Error {
    let text = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let msg = text.strip_suffix(&suffix).unwrap_or(&text);
    anyhow!("{name}: line {}: {msg}", e.line().max(1))
}

fn parse_json(name: &str, bytes: &[u8], format: FactsInput) -> Result<PrFacts> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let line = bytes[..e.valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1;
        anyhow!("{name}: line {line}: not UTF-8")
    })?;
    // serde would read the input struct from an array, by position: facts are an object.
    if let Some(rest) = text.trim_start().strip_prefix('[') {
        let line = text[..text.len() - rest.len()].matches('\n').count() + 1;
        bail!("{name}: line {line}: not a JSON object");
    }
    let mut de = serde_json::Deserializer::from_str(text);
    // Every struct inside (changed files, gh's owner and repository) is an object too.
    let input = JsonInput::deserialize(crate::records::strict::Strict(&mut de))
        .map_err(|e| json_error(name, &e))?;
    de.end().map_err(|e| json_error(name, &e))?;
    if let Some(t) = input.record_type.as_deref() {
        bail!(
            "{name}: line 1: a {t} record; {}",
            crate::records::destination(t)
        );
    }
    let from_gh = input.files.is_some();
    let (files, counted) = match (input.changed_files, input.files) {
        (Some(ChangedFiles::List(_)), _) if format == FactsInput::Gh => {
            bail!("{name}: line 1: PR facts (changedFiles), not gh pr view output (files)")
        }
        (_, Some(_)) if format == FactsInput::Facts => {
            bail!("{name}: line 1: gh pr view output (files), not PR facts (changedFiles)")
        }
        (Some(ChangedFiles::List(f)), _) => (f, None),
        (Some(ChangedFiles::Count(n)), Some(f)) => (f, Some(n)),
        (None, Some(f)) => (f, None),
        (Some(ChangedFiles::Count(_)), None) => bail!(
            "{name}: line 1: gh's changedFiles counts the files, but \"files\" lists none: ask gh for --json files,changedFiles"
        ),
        (None, None) => bail!(
            "{name}: line 1: no changed files: PR facts carry \"changedFiles\", gh pr view --json carries \"files\""
        ),
    };
    // gh lists at most 100 files: fewer than it counts, or 100 with no count, may miss some.
    let list_incomplete = match counted {
        Some(n) => (files.len() as u64) < n,
        None => from_gh && files.len() >= GH_FILES_LISTED,
    };
    let files: Vec<ChangedFile> = files.into_iter().map(ChangedFile::normalized).collect();
    if let Some(i) = files
        .iter()
        .position(|f| f.path.trim().is_empty() || f.previous_path.as_deref() == Some(""))
    {
        bail!("{name}: changed file {} has an empty path", i + 1);
    }
    if let Some((i, mode)) = files.iter().enumerate().find_map(|(i, f)| {
        f.mode
            .as_deref()
            .filter(|m| !raw::is_mode(m))
            .map(|m| (i, m))
    }) {
        bail!(
            "{name}: changed file {}: mode {:?} is not a mode as git writes it (six octal digits; 120000 is a symbolic link)",
            i + 1,
            mode.chars().take(40).collect::<String>()
        );
    }
    let repo = input
        .repo
        .or_else(|| input.url.as_deref().and_then(repo_from_url));
    let repo = repo.or_else(|| {
        let owner = input.head_repository_owner?.login?;
        let repo = input.head_repository?.name?;
        Some(format!("{owner}/{repo}"))
    });
    Ok(PrFacts {
        repo,
        pr: input.pr.or(input.number),
        head: input.head.or(input.head_ref_oid),
        base: input.base.or(input.base_ref_oid),
        kind: input.kind,
        changed_files: files.into_iter().map(ChangedFile::normalized).collect(),
        g10_hold: input.g10_hold.unwrap_or(false),
        list_incomplete,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gh_output_as_it_is() {
        let gh = br#"{"baseRefOid":"b0","files":[{"path":"./a.ts","additions":4,"deletions":1,"changeType":"MODIFIED"}],"headRefOid":"h1","number":7,"url":"https://github.com/acme/app/pull/7"}"#;
        let facts = parse("gh", gh, FactsInput::Detect).unwrap();
        assert_eq!(facts.repo.as_deref(), Some("acme/app"));
        assert_eq!(
            (facts.pr, facts.head.as_deref(), facts.base.as_deref()),
            (Some(7), Some("h1"), Some("b0"))
        );
        assert_eq!(facts.changed_files, vec![ChangedFile::new("a.ts", 4, 1)]);
        let gh = br#"{"number":7,"files":[],"headRepository":{"id":"x","name":"app"},"headRepositoryOwner":{"id":"y","login":"acme"}}"#;
        assert_eq!(
            parse("gh", gh, FactsInput::Gh).unwrap().repo.as_deref(),
            Some("acme/app")
        );
    }

    /// gh lists at most 100 files: a PR with more was planned from its first 100 (its
    /// package.json beyond them). A list shorter than gh's count, or of 100 with no count, is
    /// incomplete.
    #[test]
    fn a_gh_file_list_shorter_than_its_count_is_incomplete() {
        let files = |n: usize| {
            let list: Vec<String> = (0..n)
                .map(|i| format!(r#"{{"path":"src/f{i}.ts","additions":1,"deletions":0}}"#))
                .collect();
            format!("[{}]", list.join(","))
        };
        let gh = |n: usize, count: Option<usize>| {
            let count = count.map_or(String::new(), |c| format!(r#","changedFiles":{c}"#));
            format!(r#"{{"number":7,"files":{}{count}}}"#, files(n))
        };
        let read = |text: String| parse("gh", text.as_bytes(), FactsInput::Detect).unwrap();
        assert!(read(gh(100, Some(140))).list_incomplete);
        assert!(!read(gh(100, Some(100))).list_incomplete);
        assert!(read(gh(100, None)).list_incomplete);
        assert!(!read(gh(99, None)).list_incomplete);
        assert!(!read(gh(3, Some(3))).list_incomplete);
        // PR facts carry their list whole.
        let facts = format!(r#"{{"changedFiles":{}}}"#, files(150));
        assert!(!read(facts).list_incomplete);
        let err = parse("gh", br#"{"changedFiles":3}"#, FactsInput::Detect).unwrap_err();
        assert!(err.to_string().contains("lists none"), "{err}");
    }

    #[test]
    fn facts_json_and_its_errors() {
        let facts = br#"{"repo":"acme/app","pr":7,"head":"abc","base":"def","kind":"feature",
          "changedFiles":[{"path":"x","additions":null,"deletions":3},{"path":"n","additions":1,"deletions":0,"previousPath":"o"}]}"#;
        let f = parse("f.json", facts, FactsInput::Detect).unwrap();
        assert_eq!(f.kind.as_deref(), Some("feature"));
        assert_eq!(f.changed_files[0].lines(), None);
        assert_eq!(f.changed_files[1].previous_path.as_deref(), Some("o"));
        let err = parse(
            "f.json",
            b"{\"changedFiles\":\n[{\"path\":1}]}",
            FactsInput::Detect,
        )
        .unwrap_err();
        assert!(
            err.to_string().starts_with("f.json: line 2: invalid type"),
            "{err}"
        );
        let err = parse(
            "f.json",
            br#"{"files":[{"path":"a"},{"path":""}]}"#,
            FactsInput::Detect,
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "f.json: changed file 2 has an empty path");
        let err = parse("f.json", b"{\"pr\":1}", FactsInput::Detect).unwrap_err();
        assert!(err.to_string().contains("no changed files"), "{err}");
        let err = parse("f.json", b"{\"type\":\"verdict\"}", FactsInput::Detect).unwrap_err();
        assert_eq!(
            err.to_string(),
            "f.json: line 1: a verdict record; verdicts go through panel-tally"
        );
        let err = parse("f.json", b"{} {}", FactsInput::Detect).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("f.json: line 1: trailing characters"),
            "{err}"
        );
        let err = parse("f.json", b"  \n", FactsInput::Detect).unwrap_err();
        assert!(err.to_string().contains("empty input"), "{err}");
        assert!(
            parse("f.json", b"", FactsInput::Numstat)
                .unwrap()
                .changed_files
                .is_empty()
        );
    }

    #[test]
    fn facts_may_give_a_file_s_mode_as_git_writes_it() {
        let facts = br#"{"changedFiles":[{"path":"docs/setup.md","additions":1,"deletions":0,"mode":"120000"},
          {"path":"a","additions":1,"deletions":0}]}"#;
        let f = parse("f.json", facts, FactsInput::Detect).unwrap();
        assert!(f.changed_files[0].is_link() && !f.changed_files[1].is_link());
        for bad in ["\"12000\"", "\"12000x\"", "\"\\n120000\""] {
            let text =
                format!(r#"{{"changedFiles":[{{"path":"a"}},{{"path":"b","mode":{bad}}}]}}"#);
            let err = parse("f.json", text.as_bytes(), FactsInput::Detect).unwrap_err();
            let err = err.to_string();
            assert!(
                err.starts_with("f.json: changed file 2: mode ") && !err.contains('\n'),
                "{err}"
            );
        }
        let err = parse(
            "f.json",
            br#"{"changedFiles":[{"path":"b","mode":120000}]}"#,
            FactsInput::Detect,
        )
        .unwrap_err();
        assert!(
            err.to_string().starts_with("f.json: line 1: invalid type"),
            "{err}"
        );
    }

    #[test]
    fn paths_that_normalise_to_nothing_are_refused() {
        // Found by the numstat fuzzer: a quoted empty path was accepted as "".
        let crash = b"4\t1\tsrc/a.rs\n1\t0\t\"\"\n";
        let err = parse("in", crash, FactsInput::Numstat).unwrap_err();
        assert_eq!(err.to_string(), "in: line 2: an empty path");
        let err = parse("in", b"1\t0\t./\n", FactsInput::Numstat).unwrap_err();
        assert_eq!(err.to_string(), "in: line 1: an empty path");
        let err = parse("in", b"1\t0\t{a => }\n", FactsInput::Numstat).unwrap_err();
        assert_eq!(err.to_string(), "in: line 1: an empty path");
        let err = parse("in", b"1\t0\t./\0", FactsInput::Numstat).unwrap_err();
        assert_eq!(err.to_string(), "in: record 1: an empty path");
        let err = parse("in", br#"{"files":[{"path":"./"}]}"#, FactsInput::Gh).unwrap_err();
        assert_eq!(err.to_string(), "in: changed file 1 has an empty path");
    }

    #[test]
    fn arrays_are_not_objects() {
        // serde reads a struct from an array by position; facts and gh objects are objects.
        let gh =
            br#"{"files":[{"path":"a"}],"headRepository":[],"headRepositoryOwner":{"login":"o"}}"#;
        let err = parse("gh", gh, FactsInput::Gh).unwrap_err().to_string();
        assert!(
            err.starts_with("gh: line 1: invalid type: sequence"),
            "{err}"
        );
        let err = parse("f", b"\n [null,null,null,null,null,[]]", FactsInput::Detect).unwrap_err();
        assert_eq!(err.to_string(), "f: line 2: not a JSON object");
    }

    #[test]
    fn repo_urls() {
        assert_eq!(
            repo_from_url("https://github.com/acme/app/pull/7").as_deref(),
            Some("acme/app")
        );
        assert_eq!(repo_from_url("https://github.com/acme/app"), None);
    }
}

#[cfg(test)]
mod fuzz_found {
    use super::*;

    #[test]
    fn facts_we_accept_read_back_as_facts() {
        // Found by the gh fuzzer: `-z` numstat took a blank path ("\t\r") that the facts
        // reader then refused.
        let crash = b"333\t3\t\t\r\0\0\0\0\0\x0033\t3\t\t3@@:\"acm";
        let err = parse("in", crash, FactsInput::Detect).unwrap_err();
        assert_eq!(err.to_string(), "in: record 1: an empty path");
        let facts = parse("in", b"1\t2\ta b\0", FactsInput::Detect).unwrap();
        let printed = serde_json::to_vec(&facts).unwrap();
        assert!(parse("again", &printed, FactsInput::Facts).is_ok());
    }
}

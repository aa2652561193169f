//! Gold labels: what people said of each candidate, for `panel-tally --ledger --gold LABELS`.
//!
//! One JSON object a line, `{"candidate": "sha256:…", "label": "holds"}` or
//! `{"name": "case-7", "label": "B"}` (optionally `"type": "gold"`): a candidate by its seal,
//! or by the name panel-judge recorded for it (`--name`), and its label, `holds`/`breaks` for
//! verdicts or `A`/`B` for pairwise preferences (the first answer given, the second). A file
//! holds one kind of label; a candidate labelled twice is an input error, never the later
//! label quietly.
//!
//! Labels are kept compactly (a seal as its 32 bytes), since a labelled set may be as large as
//! the history: about 60 bytes a label.

use std::collections::HashMap;

use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};

use crate::records::input::{Input, Source};
use crate::records::printable::inline;

/// The most labels one file may hold.
pub const MAX_LABELS: usize = 50_000_000;

/// A label as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
pub enum Label {
    #[serde(rename = "holds")]
    Holds,
    #[serde(rename = "breaks")]
    Breaks,
    A,
    B,
}

impl Label {
    pub fn as_str(self) -> &'static str {
        match self {
            Label::Holds => "holds",
            Label::Breaks => "breaks",
            Label::A => "A",
            Label::B => "B",
        }
    }

    /// 0 for the positive label (`holds`, `A`), 1 for the other: the row of a confusion table.
    pub fn index(self) -> usize {
        match self {
            Label::Holds | Label::A => 0,
            Label::Breaks | Label::B => 1,
        }
    }

    /// Whether it labels a pairwise preference.
    pub fn pairwise(self) -> bool {
        matches!(self, Label::A | Label::B)
    }
}

/// One line of a labels file.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct GoldLabel {
    /// `gold`, when given.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The candidate's seal, `sha256:<hex>`, as its records carry it (a pairwise record's is
    /// the pair's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidate: Option<String>,
    /// Or the name its records carry (panel-judge --name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub label: Label,
}

/// A candidate as a labels file names it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Key {
    /// A `sha256:` seal, as its bytes.
    Seal([u8; 32]),
    /// Any other candidate string.
    Candidate(Box<str>),
    Name(Box<str>),
}

/// A label and whether any panel was about its candidate yet.
#[derive(Clone, Copy, Debug)]
struct Entry {
    label: Label,
    seen: bool,
    line: u32,
}

/// The labels of one file, found by a panel's seal or name.
#[derive(Debug, Default)]
pub struct Gold {
    labels: HashMap<Key, Entry>,
    /// Whether its labels are pairwise (`A`/`B`) rather than verdicts.
    pub pairwise: bool,
}

/// The 32 bytes of a `sha256:<64 hex>` seal.
pub fn seal_bytes(seal: &str) -> Option<[u8; 32]> {
    let hex = seal.strip_prefix("sha256:")?.as_bytes();
    if hex.len() != 64 {
        return None;
    }
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut out = [0u8; 32];
    for (i, pair) in hex.chunks(2).enumerate() {
        out[i] = digit(pair[0])? << 4 | digit(pair[1])?;
    }
    Some(out)
}

fn seal_key(seal: &str) -> Key {
    match seal_bytes(seal) {
        Some(b) => Key::Seal(b),
        None => Key::Candidate(seal.into()),
    }
}

impl Gold {
    /// Reads a labels file; any bad line is an error naming it.
    pub fn read(source: Source) -> Result<Gold> {
        let mut input = Input::from_source(source)?;
        let mut gold = Gold::default();
        let mut first: Option<Label> = None;
        let mut buf = String::new();
        while input.next_line(&mut buf)? {
            let line = buf.strip_suffix('\r').unwrap_or(&buf);
            if line.trim().is_empty() {
                continue;
            }
            let g = parse(line, &|| input.at())?;
            let key = match (&g.candidate, &g.name) {
                (Some(c), None) => seal_key(c),
                (None, Some(n)) if !n.is_empty() => Key::Name(n.as_str().into()),
                (None, Some(_)) => bail!("{}: an empty name", input.at()),
                _ => bail!(
                    "{}: a gold label names its candidate by \"candidate\" (its seal) or by \"name\", one of them",
                    input.at()
                ),
            };
            match first {
                None => first = Some(g.label),
                Some(f) if f.pairwise() != g.label.pairwise() => bail!(
                    "{}: label {} after {} on an earlier line: a labels file holds holds/breaks or A/B labels, not both",
                    input.at(),
                    g.label.as_str(),
                    f.as_str()
                ),
                _ => {}
            }
            if let Some(e) = gold.labels.get(&key) {
                bail!(
                    "{}: {} is labelled twice (first on line {})",
                    input.at(),
                    describe(&key),
                    e.line
                );
            }
            if gold.labels.len() >= MAX_LABELS {
                bail!("{}: more than {MAX_LABELS} labels", input.at());
            }
            let line = u32::try_from(input.line_number()).unwrap_or(u32::MAX);
            gold.labels.insert(
                key,
                Entry {
                    label: g.label,
                    seen: false,
                    line,
                },
            );
        }
        if gold.labels.is_empty() {
            bail!("{}: no gold labels", input.name);
        }
        gold.pairwise = first.is_some_and(Label::pairwise);
        Ok(gold)
    }

    pub fn len(&self) -> usize {
        self.labels.len()
    }

    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// The label of a panel about `seal`, recorded as named `name`; marks it seen. A label by
    /// seal comes before one by name.
    pub fn label(&mut self, seal: &str, name: Option<&str>) -> Option<Label> {
        let by_seal = self.labels.get_mut(&seal_key(seal));
        let entry = match by_seal {
            Some(e) => Some(e),
            None => name.and_then(|n| self.labels.get_mut(&Key::Name(n.into()))),
        }?;
        entry.seen = true;
        Some(entry.label)
    }

    /// The labels no panel was about, as `(how it is named, label)`, in the file's order:
    /// at most `most`, and how many there are in all.
    pub fn unseen(&self, most: usize) -> (Vec<(String, Label)>, u64) {
        let mut all: Vec<(&Key, &Entry)> = self.labels.iter().filter(|(_, e)| !e.seen).collect();
        let n = all.len() as u64;
        all.sort_by_key(|(_, e)| e.line);
        let named = all
            .into_iter()
            .take(most)
            .map(|(k, e)| (describe(k), e.label))
            .collect();
        (named, n)
    }
}

/// One line as a gold label, or why it is not one: a record of another type names its tool.
fn parse(line: &str, at: &dyn Fn() -> String) -> Result<GoldLabel> {
    #[derive(Deserialize)]
    struct Kind {
        #[serde(rename = "type")]
        kind: Option<String>,
    }
    let parsed = crate::records::strict::from_str::<GoldLabel>(line);
    // The type a line says, read apart only when it is no label (a record of another kind).
    let kind = match &parsed {
        Ok(g) => g.kind.clone(),
        Err(_) => serde_json::from_str::<Kind>(line).ok().and_then(|k| k.kind),
    };
    if let Some(kind) = kind.filter(|k| k != "gold") {
        bail!(
            "{}: a {} record; {}; a labels file holds gold labels",
            at(),
            inline(&kind),
            crate::records::destination(&kind)
        );
    }
    match parsed {
        Ok(g) if line.trim_start().starts_with('{') => Ok(g),
        Ok(_) => bail!("{}: not a JSON object", at()),
        Err(e) => bail!("{}: not a gold label: {e}", at()),
    }
}

/// A candidate as reports name it: its seal or its name.
fn describe(key: &Key) -> String {
    match key {
        Key::Seal(b) => crate::records::candidate::seal_of(b),
        Key::Candidate(c) => c.to_string(),
        Key::Name(n) => format!("name {n:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Gold> {
        Gold::read(Source::Open {
            name: "labels".into(),
            reader: Box::new(std::io::Cursor::new(text.as_bytes().to_vec())),
        })
    }

    const SEAL: &str = "sha256:00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

    #[test]
    fn labels_are_found_by_seal_or_name() {
        let text = format!(
            "{{\"candidate\":\"{SEAL}\",\"label\":\"holds\"}}\n\n{{\"type\":\"gold\",\"name\":\"c-2\",\"label\":\"breaks\"}}\n{{\"candidate\":\"sha256:r1\",\"label\":\"breaks\"}}\n"
        );
        let mut g = read(&text).unwrap();
        assert_eq!((g.len(), g.pairwise), (3, false));
        assert_eq!(g.label(SEAL, Some("c-2")), Some(Label::Holds));
        assert_eq!(
            g.label(&SEAL.to_uppercase().replace("SHA", "sha"), None),
            Some(Label::Holds)
        );
        assert_eq!(g.label("sha256:r1", None), Some(Label::Breaks));
        assert_eq!(
            g.unseen(5),
            (vec![("name \"c-2\"".into(), Label::Breaks)], 1)
        );
        assert_eq!(g.label("sha256:ff", Some("c-2")), Some(Label::Breaks));
        assert_eq!(g.unseen(5).1, 0);
        assert_eq!(g.label("sha256:ff", Some("c-3")), None);
    }

    #[test]
    fn a_bad_labels_file_says_which_line() {
        for (text, want) in [
            (
                r#"{"name":"a","label":"maybe"}"#,
                "labels: line 1: not a gold label: unknown variant `maybe`",
            ),
            (
                r#"{"label":"A"}"#,
                "labels: line 1: a gold label names its candidate",
            ),
            (
                r#"{"name":"a","candidate":"sha256:1","label":"A"}"#,
                "labels: line 1: a gold label names",
            ),
            (
                r#"{"name":"a","label":"A","extra":1}"#,
                "unknown field `extra`",
            ),
            ("[1]", "labels: line 1: not a gold label"),
            (
                "{\"name\":\"a\",\"label\":\"A\"}\n{\"name\":\"a\",\"label\":\"B\"}",
                "labels: line 2: name \"a\" is labelled twice (first on line 1)",
            ),
            (
                "{\"name\":\"a\",\"label\":\"A\"}\n{\"name\":\"b\",\"label\":\"holds\"}",
                "labels: line 2: label holds after A on an earlier line",
            ),
            (
                r#"{"type":"verdict","name":"a","label":"A"}"#,
                "labels: line 1: a verdict record; verdicts go through panel-tally",
            ),
            ("\n\n", "labels: no gold labels"),
        ] {
            let err = format!("{:#}", read(text).unwrap_err());
            assert!(err.contains(want), "{text}: {err}");
        }
    }
}

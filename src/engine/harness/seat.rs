//! A seat: `HARNESS[:MODEL]`, resolved against the harness table, with its model family.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Result, anyhow, bail};

use super::{Harness, HarnessKind, Table, family_of_model};
use crate::engine::call::extract::Filter;

/// One seat of a panel, ready to launch.
#[derive(Clone, Debug)]
pub struct Seat {
    /// As the user wrote it.
    pub spec: String,
    pub harness: Arc<Harness>,
    pub model: Option<String>,
    /// The model family, when the harness, the model or the user tells it.
    pub family: Option<String>,
    pub filter: Option<Arc<Filter>>,
    pub usage: Option<Arc<Filter>>,
    /// The reviewer mode's filters: its messages, and its tool calls.
    pub reviewer_filter: Option<Arc<Filter>>,
    pub tool_calls: Option<Arc<Filter>>,
    /// The reviewer mode's filter for its session's id.
    pub session: Option<Arc<Filter>>,
}

/// The fewest single-character insertions, deletions and changes that turn `a` into `b`.
fn edits(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

impl Seat {
    /// Resolves `HARNESS[:MODEL]` (split at the first colon). `families` maps a seat as
    /// written to the family the user states for it.
    pub fn parse(spec: &str, table: &Table, families: &BTreeMap<String, String>) -> Result<Seat> {
        let (name, model) = match spec.split_once(':') {
            Some((h, m)) => (h, Some(m.to_string()).filter(|m| !m.is_empty())),
            None => (spec, None),
        };
        let harness = table.get(name).ok_or_else(|| {
            let names = table.names();
            let near = names
                .iter()
                .filter(|n| edits(n, name) <= 2)
                .min_by_key(|n| edits(n, name));
            let mean = near.map_or(String::new(), |n| format!("did you mean {n}? "));
            anyhow!(
                "--seat {}: no harness {name:?} ({mean}known: {}; add one with --harness-file)",
                crate::records::printable::inline(spec),
                names.join(", ")
            )
        })?;
        if harness.name == "exec" && model.is_none() {
            bail!(
                "--seat {spec}: exec needs the command to run, e.g. --seat 'exec:llm -m gpt-4o-mini'"
            );
        }
        if harness.kind == HarnessKind::Replay && model.is_none() {
            bail!(
                "--seat {spec}: replay needs the file of recorded answers, e.g. --seat replay:answers.json"
            );
        }
        let family = families.get(spec).cloned().or_else(|| {
            // A harness that runs other programs tells nothing about the model behind them.
            let model_family = match (&model, harness.name.as_str(), harness.kind) {
                (_, "exec", _) | (_, _, HarnessKind::Replay) => None,
                (Some(m), _, _) => family_of_model(m).map(str::to_string),
                (None, _, _) => None,
            };
            model_family.or_else(|| harness.family.clone())
        });
        let compile = |code: &Option<String>| -> Result<Option<Arc<Filter>>> {
            code.as_deref()
                .map(|c| Filter::compile(c).map(Arc::new))
                .transpose()
        };
        let reviewer = harness.reviewer.as_ref();
        Ok(Seat {
            spec: spec.to_string(),
            filter: compile(&harness.filter)?,
            usage: compile(&harness.usage)?,
            reviewer_filter: compile(&reviewer.and_then(|r| r.filter.clone()))?,
            tool_calls: compile(&reviewer.and_then(|r| r.tool_calls.clone()))?,
            session: compile(&reviewer.and_then(|r| r.session.clone()))?,
            harness: Arc::new(harness.clone()),
            model,
            family,
        })
    }

    /// The family, or the seat itself when no family is known: two identical seats are
    /// certainly one opinion.
    pub fn family_or_seat(&self) -> String {
        self.family
            .clone()
            .unwrap_or_else(|| format!("seat {}", self.spec))
    }

    /// The executable on PATH, for a seat that launches one.
    pub fn resolve_executable(&self, path_var: &str) -> Result<Option<PathBuf>> {
        if self.harness.kind == HarnessKind::Replay {
            // Recorded answers are the user's input: a bad file stops the panel before it starts.
            let file = self.model.as_deref().unwrap_or_default();
            let text = crate::engine::call::replay::read(
                Path::new(file),
                &format!("--seat {}: {file}", self.spec),
            )?;
            match crate::records::strict::value(&text) {
                Ok(serde_json::Value::Object(_)) => return Ok(None),
                Ok(_) => bail!(
                    "--seat {}: {file}: expected a JSON object of answers by name",
                    self.spec
                ),
                Err(e) => bail!("--seat {}: {file}: not JSON: {e}", self.spec),
            }
        }
        let exe = &self.harness.executable;
        find_on_path(exe, path_var).map(Some).ok_or_else(|| {
            let how = self
                .harness
                .install
                .as_deref()
                .map(|i| format!("; install it with `{i}`"))
                .unwrap_or_default();
            anyhow!("--seat {}: {exe} not found on PATH{how}", self.spec)
        })
    }
}

/// The first executable file called `name` in the PATH folders (or `name` itself when it holds a `/`).
pub fn find_on_path(name: &str, path_var: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let is_exe = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    // Absolute, since a judge runs in another folder: a relative PATH entry (or `./tool`) would
    // name nothing there.
    let found = if name.contains('/') {
        Some(PathBuf::from(name)).filter(|p| is_exe(p))
    } else {
        std::env::split_paths(path_var)
            .map(|dir| dir.join(name))
            .find(|p| is_exe(p))
    };
    found.and_then(|p| std::path::absolute(p).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seats_split_at_the_first_colon_and_know_their_family() {
        let t = Table::builtin();
        let none = BTreeMap::new();
        let s = Seat::parse("claude:haiku", &t, &none).unwrap();
        assert_eq!(
            (
                s.harness.name.as_str(),
                s.model.as_deref(),
                s.family.as_deref()
            ),
            ("claude", Some("haiku"), Some("anthropic"))
        );
        let s = Seat::parse("exec:llm -m x:y", &t, &none).unwrap();
        assert_eq!(s.model.as_deref(), Some("llm -m x:y"));
        assert_eq!(s.family, None);
        assert_eq!(s.family_or_seat(), "seat exec:llm -m x:y");
        let stated: BTreeMap<String, String> =
            [("exec:llm -m x:y".to_string(), "openai".to_string())].into();
        assert_eq!(
            Seat::parse("exec:llm -m x:y", &t, &stated)
                .unwrap()
                .family
                .as_deref(),
            Some("openai")
        );
        let err = Seat::parse("nope:x", &t, &none).unwrap_err().to_string();
        // Every row by name, in the table's order (a new row is named without an edit here).
        let known = format!("(known: {};", t.names().join(", "));
        assert!(
            err.starts_with(&format!("--seat nope:x: no harness \"nope\" {known}")),
            "{err}"
        );
        assert!(known.contains("claude, codex,") && known.ends_with("exec, replay;"));
    }

    /// Issue 45: "`claud:haiku` gets no \"did you mean claude\"".
    #[test]
    fn a_harness_name_one_slip_away_is_suggested() {
        let (t, none) = (Table::builtin(), BTreeMap::new());
        let err = Seat::parse("claud:haiku", &t, &none)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("no harness \"claud\" (did you mean claude? known: "),
            "{err}"
        );
        let err = Seat::parse("codx", &t, &none).unwrap_err().to_string();
        assert!(err.contains("(did you mean codex? "), "{err}");
        assert_eq!(edits("kitten", "sitting"), 3);
        let err = Seat::parse("\u{1b}[2Jx:y", &t, &none)
            .unwrap_err()
            .to_string();
        assert!(!err.contains('\u{1b}'), "{err}");
    }
}

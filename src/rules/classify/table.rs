//! The rules table: its type, reading a rules file into it, and compiling it for the rules.

use std::collections::BTreeMap;

use anyhow::{Result, anyhow, bail};
use serde::{Deserialize, Serialize};

use super::globs::{GlobSets, MAX_SETS};
use super::{ClassRules, flag_bit};

/// The thresholds and globs the classifier reads; its defaults are in [`super::defaults`].
/// `--print-rules` prints it; `--rules FILE` replaces keys of it, or with `"extend": true` adds
/// to them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClassTable {
    /// A PR is large past this many counted lines.
    pub large_lines: u64,
    /// The security-slice flag needs more counted lines than this.
    pub security_slice_lines: u64,
    /// PR kinds that count as a security slice whatever they touch.
    pub security_kinds: Vec<String>,
    /// Files whose lines are left out of the count (unless they alone pass `largeLines`).
    pub generated: Vec<String>,
    /// Touch flags: a flag is set by any changed path, or rename source, matching its globs.
    pub touches: BTreeMap<String, Vec<String>>,
    /// Touch flags that make a PR g10 at any size.
    pub strict: Vec<String>,
    /// Touch flags whose non-generated paths make a large PR a security slice.
    pub guard: Vec<String>,
}

/// A rules file: every key optional, plus whether it extends the table instead.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct TableFile {
    #[serde(default)]
    extend: bool,
    large_lines: Option<u64>,
    security_slice_lines: Option<u64>,
    security_kinds: Option<Vec<String>>,
    generated: Option<Vec<String>>,
    touches: Option<BTreeMap<String, Vec<String>>>,
    strict: Option<Vec<String>>,
    guard: Option<Vec<String>>,
}

/// Appends what `more` adds to `list`, keeping the order and no duplicates.
fn append(list: &mut Vec<String>, more: Vec<String>) {
    for item in more {
        if !list.contains(&item) {
            list.push(item);
        }
    }
}

impl ClassTable {
    /// Applies a rules file: each key it names replaces the table's, or with `"extend": true`
    /// adds to it (lists appended, numbers replaced). Touch flags count as keys of their own.
    pub fn apply_file(mut self, name: &str, text: &str) -> Result<ClassTable> {
        let file: TableFile = crate::records::strict::from_str(text)
            .map_err(|e| crate::records::facts::json_error(name, &e))?;
        if let Some(n) = file.large_lines {
            self.large_lines = n;
        }
        if let Some(n) = file.security_slice_lines {
            self.security_slice_lines = n;
        }
        let lists = [
            (&mut self.security_kinds, file.security_kinds),
            (&mut self.generated, file.generated),
            (&mut self.strict, file.strict),
            (&mut self.guard, file.guard),
        ];
        for (list, given) in lists {
            match given {
                Some(more) if file.extend => append(list, more),
                Some(new) => *list = new,
                None => {}
            }
        }
        // Touch flags are keyed one level down: a flag the file names is replaced (or added
        // to), and the flags it leaves out stay, so one flag can change alone.
        for (flag, globs) in file.touches.unwrap_or_default() {
            let list = self.touches.entry(flag).or_default();
            if file.extend {
                append(list, globs);
            } else {
                *list = globs;
            }
        }
        Ok(self)
    }

    /// Compiles the globs and checks that every flag named in `strict` and `guard` exists.
    pub fn compile(self) -> Result<ClassRules> {
        for (key, flags) in [("strict", &self.strict), ("guard", &self.guard)] {
            for flag in flags {
                if !self.touches.contains_key(flag) {
                    bail!(
                        "rules: {key} names the touch flag {flag:?}, which \"touches\" does not define"
                    );
                }
            }
        }
        if self.touches.len() >= MAX_SETS {
            bail!("rules: at most {} touch flags", MAX_SETS - 1);
        }
        // Set 0 is the generated globs; set i + 1 is touch flag i, in the table's order.
        let mut sets: Vec<&[String]> = vec![&self.generated];
        sets.extend(self.touches.values().map(Vec::as_slice));
        let globs = GlobSets::new(&sets).map_err(|e| anyhow!("rules: {e}"))?;
        let flags: Vec<String> = self.touches.keys().cloned().collect();
        let bits = |names: &[String]| -> u64 {
            flags
                .iter()
                .enumerate()
                .filter(|(_, f)| names.contains(f))
                .fold(0, |m, (i, _)| m | flag_bit(i))
        };
        Ok(ClassRules {
            globs,
            strict: bits(&self.strict),
            guard: bits(&self.guard),
            flags,
            table: self,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_files_replace_or_extend() {
        let base = ClassTable::default();
        let replaced = base
            .clone()
            .apply_file("r.json", r#"{"largeLines": 100, "generated": ["out/**"]}"#)
            .unwrap();
        assert_eq!(replaced.large_lines, 100);
        assert_eq!(replaced.generated, ["out/**"]);
        assert_eq!(replaced.touches, base.touches);
        let one_flag = base
            .clone()
            .apply_file(
                "r.json",
                r#"{"touches": {"dependency": ["deps.edn"], "tests": []}}"#,
            )
            .unwrap();
        assert_eq!(one_flag.touches["dependency"], ["deps.edn"]);
        assert!(one_flag.touches["tests"].is_empty());
        assert_eq!(one_flag.touches["policy"], base.touches["policy"]);
        let extended = base
            .clone()
            .apply_file(
                "r.json",
                r#"{"extend": true, "generated": ["out/**"], "touches": {"dependency": ["deps.edn"], "infra": ["terraform/**"]}}"#,
            )
            .unwrap();
        assert_eq!(extended.generated.len(), base.generated.len() + 1);
        assert!(extended.touches["dependency"].contains(&"deps.edn".to_string()));
        assert!(extended.touches["dependency"].contains(&"**/package.json".to_string()));
        assert_eq!(extended.touches["infra"], ["terraform/**"]);
        let err = base
            .clone()
            .apply_file("r.json", "{\n\"largeLine\": 3}")
            .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("r.json: line 2: unknown field `largeLine`"),
            "{err}"
        );
        let bad = base
            .apply_file("r.json", r#"{"strict": ["deps"]}"#)
            .unwrap();
        assert!(bad.compile().is_err());
    }

    #[test]
    fn printed_rules_read_back_as_the_same_table() {
        let text = serde_json::to_string(&ClassTable::default()).unwrap();
        let back = ClassTable {
            large_lines: 1,
            ..ClassTable::default()
        }
        .apply_file("r", &text)
        .unwrap();
        assert_eq!(back, ClassTable::default());
    }
}

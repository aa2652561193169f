//! What a judge's private HOME is furnished with before it starts: the user's configuration
//! files its row carries (their endpoints and models), the row's own files (the lockdown some
//! CLIs keep in their settings, with the values carried from the user's settings and those its
//! login needs merged in), and its login as the broker gives it ([`crate::engine::logins`]).
//! Each is written as a new file, the owner's alone, never through a link the judge left there
//! ([`crate::engine::beneath`]). Nothing else of the user's HOME reaches a judge.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::engine::beneath;
use crate::engine::harness::{Harness, Vars, expand_user_path, fill};
use crate::engine::logins::Given;

/// The largest configuration file carried.
const MAX_CARRIED: u64 = 1 << 20;

/// Where `harness`'s configuration files are in the user's HOME, in the row's order.
pub fn files(
    harness: &Harness,
    user_home: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Vec<PathBuf> {
    harness
        .config
        .iter()
        .map(|c| expand_user_path(&c.from, user_home, env))
        .collect()
}

pub use crate::engine::logins::store::present;

/// Whether a variable's name says it holds a login: a word of it is `KEY`, `TOKEN` or
/// `CREDENTIALS` (`ANTHROPIC_API_KEY`, `GH_TOKEN`, `GOOGLE_APPLICATION_CREDENTIALS`); a row's
/// other variables (endpoints, regions, switches) are not logins.
pub fn is_login_var(name: &str) -> bool {
    name.to_ascii_uppercase()
        .split('_')
        .any(|w| matches!(w, "KEY" | "TOKEN" | "CREDENTIALS"))
}

/// The user's files a row carries, read once: each one's place under the private HOME, its
/// bytes, and the JSON pointers kept (empty: the whole file).
pub struct CarriedFiles {
    files: Vec<(String, Vec<u8>, Vec<String>)>,
}

impl CarriedFiles {
    /// Reads the row's configuration files from the user's HOME; one the user does not have,
    /// or that is not a regular file, is left out.
    pub fn read(
        harness: &Harness,
        user_home: &Path,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> CarriedFiles {
        let files = harness
            .config
            .iter()
            .zip(files(harness, user_home, env))
            .filter(|(_, from)| present(from))
            .filter_map(|(c, from)| {
                let meta = fs::metadata(&from).ok()?;
                (meta.len() <= MAX_CARRIED).then_some(())?;
                let bytes = fs::read(&from).ok()?;
                Some((c.to.clone(), bytes, c.keep.clone()))
            })
            .collect();
        CarriedFiles { files }
    }

    /// Their text, for the endpoints they name (the user's own configuration): a file carried
    /// in part, only the values carried.
    pub fn texts(&self) -> impl Iterator<Item = String> + '_ {
        self.files.iter().map(|(_, b, keep)| match keep.is_empty() {
            true => String::from_utf8_lossy(b).into_owned(),
            false => {
                let v: Value = serde_json::from_slice(b).unwrap_or(Value::Null);
                let kept: Vec<String> = keep
                    .iter()
                    .filter_map(|p| v.pointer(p).map(Value::to_string))
                    .collect();
                kept.join("\n")
            }
        })
    }
}

/// Writes the private HOME's files: the carried ones, the row's (placeholders filled, the
/// carried values and the login's settings merged in), and the login's. Gives the texts of the
/// row's files as written, for the endpoints they name.
pub fn furnish(
    home: &Path,
    harness: &Harness,
    carried: &CarriedFiles,
    login: &Given,
    vars: &Vars,
) -> std::io::Result<Vec<String>> {
    for (to, bytes, keep) in &carried.files {
        if keep.is_empty() {
            beneath::write(home, Path::new(to), bytes)?;
        }
    }
    let mut texts = Vec::new();
    for (rel, template) in &harness.files {
        let mut text = fill(template, vars).unwrap_or_else(|| template.clone());
        let kept = carried
            .files
            .iter()
            .filter(|(to, _, keep)| to == rel && !keep.is_empty());
        let settings = login.settings.get(rel);
        if kept.clone().next().is_some() || settings.is_some() {
            text = merged(&text, kept, settings);
        }
        beneath::write(home, Path::new(rel), text.as_bytes())?;
        texts.push(text);
    }
    for (rel, bytes) in &login.files {
        beneath::write(home, Path::new(rel), bytes)?;
    }
    Ok(texts)
}

/// The row's JSON file `text` with the user's values at the kept pointers, then the login's
/// settings, merged in (the row's own keys win over the user's: its lockdown stays).
fn merged<'a>(
    text: &str,
    kept: impl Iterator<Item = &'a (String, Vec<u8>, Vec<String>)>,
    settings: Option<&Value>,
) -> String {
    let Ok(mut ours) = serde_json::from_str::<Value>(text) else {
        return text.to_string();
    };
    for (_, bytes, pointers) in kept {
        let Ok(theirs) = serde_json::from_slice::<Value>(bytes) else {
            continue;
        };
        for p in pointers {
            if let Some(v) = theirs.pointer(p) {
                let mut from_user = Value::Object(Default::default());
                let _ = crate::engine::logins::store::set(&mut from_user, p, v.clone());
                merge(&mut from_user, &ours);
                ours = from_user;
            }
        }
    }
    if let Some(s) = settings {
        merge(&mut ours, s);
    }
    ours.to_string()
}

/// The row's JSON file `text` with a login's settings merged in (text that is not JSON is left).
pub fn with_settings(text: &str, settings: &Value) -> String {
    merged(text, std::iter::empty(), Some(settings))
}

/// Merges `patch` into `into`, objects key by key, anything else replaced.
fn merge(into: &mut Value, patch: &Value) {
    match (into, patch) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                merge(a.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
        (into, patch) => *into = patch.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_login_variable_is_named_for_a_key_a_token_or_credentials() {
        for name in [
            "ANTHROPIC_API_KEY",
            "GH_TOKEN",
            "CLAUDE_CODE_OAUTH_TOKEN",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "my_key",
        ] {
            assert!(is_login_var(name), "{name}");
        }
        for name in [
            "ANTHROPIC_BASE_URL",
            "AWS_REGION",
            "CLAUDE_CODE_USE_BEDROCK",
            "KEYBOARD",
            "TOKENS_MAX",
            "npm_config_registry",
        ] {
            assert!(!is_login_var(name), "{name}");
        }
    }

    #[test]
    fn a_carried_file_is_a_regular_file_and_a_fifo_is_not_opened() {
        let dir = tempfile::tempdir().unwrap();
        let (file, fifo) = (dir.path().join("auth.json"), dir.path().join("fifo.json"));
        fs::write(&file, "{}").unwrap();
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert!(present(&file));
        assert!(!present(&fifo));
        assert!(!present(dir.path()));
        assert!(!present(&dir.path().join("none.json")));
    }

    /// Issue 35: "Coding Plan and Token Plan users keep their key in ~/.qwen/settings.json,
    /// which panel replaces with its own": the user's values at the kept pointers are carried
    /// into the row's file, whose own keys (its lockdown) stay.
    #[test]
    fn kept_values_and_a_login_s_settings_merge_into_the_row_s_file() {
        let ours =
            r#"{"tools":{"core":["none"]},"security":{"auth":{"selectedType":"gemini-api-key"}}}"#;
        let user = json!({"env": {"KEY": "v"}, "tools": {"core": ["shell"]}, "model": "m"});
        let kept = (
            "s.json".to_string(),
            user.to_string().into_bytes(),
            vec!["/env".to_string(), "/tools".to_string()],
        );
        let settings = json!({"security": {"auth": {"selectedType": "oauth-personal"}}});
        let text = merged(ours, std::iter::once(&kept), Some(&settings));
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["env"], json!({"KEY": "v"}));
        assert_eq!(
            v["tools"],
            json!({"core": ["none"]}),
            "the row's lockdown stays"
        );
        assert_eq!(v["security"]["auth"]["selectedType"], "oauth-personal");
        assert_eq!(v.get("model"), None, "only what is kept is carried");
    }
}

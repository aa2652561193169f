//! Harnesses as data: one row per command line tool, the same shape for the built-ins and for
//! the rows a user adds with a JSON file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow, bail};
use serde::{Deserialize, Serialize};

use crate::records::Status;

pub mod login;
mod seat;
pub use login::Login;
pub use seat::{Seat, find_on_path};

/// One harness: how to run a command line tool as a sealed judge and read its answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Harness {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// What locks the tool down, in a few words for people (the harness table in docs/guide.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lockdown: Option<String>,
    /// `process` (the default) or `replay` (recorded answers; launches nothing).
    #[serde(default)]
    pub kind: HarnessKind,
    /// The program, found on PATH unless it holds a `/`.
    #[serde(default)]
    pub executable: String,
    /// How to install the executable, for the message when it is missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub install: Option<String>,
    /// Whether this row was proven against the real tool.
    #[serde(default)]
    pub verified: bool,
    /// The arguments; see [`Arg`] for placeholders and optional groups.
    pub argv: Vec<Arg>,
    /// How the prompt reaches the tool.
    #[serde(default)]
    pub prompt: PromptVia,
    /// For a prompt too large for one argument: the value that replaces `{prompt}` (an empty
    /// string drops it) while the prompt goes to stdin. `null`: the tool has no other way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdin_prompt: Option<String>,
    /// Where the answer lands.
    #[serde(default)]
    pub answer: AnswerAt,
    /// jq filter that extracts the answer from stdout (JSON or JSON lines).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<String>,
    /// jq filter that reads usage from stdout into `{inputTokens, outputTokens, cachedTokens, costUsd}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<String>,
    /// Variables set for the judge; `{home}` and `{work}` name its private folders.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Variables carried in from the user's environment (logins, endpoints).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pass_env: Vec<String>,
    /// The variable of the user's environment that names the CLI's endpoint, for a CLI that
    /// does not read it itself: its value, an http or https URL, fills `{endpoint}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint_env: Option<String>,
    /// The variables its CLI reads for authorities to trust (`NODE_EXTRA_CA_CERTS`,
    /// `SSL_CERT_FILE`): a judge that holds a placeholder gets each set to a file of what the
    /// user trusts and the run's own authority, through which its proxy reads its requests.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ca_env: Vec<String>,
    /// Present when the CLI cannot answer without a login: a seat with none of `logins` is then
    /// not launched, unless the user sets one of these variables, which have the CLI log in a
    /// way no login of the row holds (a cloud's own credentials, the user's own endpoint).
    /// Absent: a seat without a login is launched and its CLI says what it lacks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub login_elsewhere: Option<Vec<String>>,
    /// The user's configuration files carried into the judge's private HOME (their endpoints
    /// and models; the base URLs in them are hosts its proxy lets through). Logins are not
    /// here: they are `logins`.
    #[serde(default, skip_serializing_if = "Vec::is_empty", alias = "credentials")]
    pub config: Vec<Carried>,
    /// The logins its users have, in the CLI's order of precedence (see [`Login`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub logins: Vec<Login>,
    /// Files written into the private HOME before the judge starts (path under HOME → text).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub files: BTreeMap<String, String>,
    /// The model family when the model name does not tell it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub family: Option<String>,
    /// More folders a confined judge reads and runs programs from, beyond the system and the
    /// executable's installation (`~/` is the user's HOME).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sandbox_read: Vec<String>,
    /// The hosts and ports its model service answers at, `HOST:PORT`: the only ones a confined
    /// judge's proxy lets it reach, with those of the base URLs in its environment and
    /// configuration and `--sandbox-allow`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub egress: Vec<String>,
    /// Words in the output that mean a known failure, checked in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<ErrorRule>,
    /// How the tool runs as a pull-request reviewer, when it can.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviewer: Option<ReviewerMode>,
    /// What the tool sends before its judge says anything, measured against the stand-in
    /// model server (benches/overhead.sh): the largest first request over its logins. A
    /// budget's estimate takes the example's prompt off it and adds the judge's own; a row
    /// without one is estimated at `budget::DEFAULT_OVERHEAD`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overhead: Option<Overhead>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
}

/// A row's measured overhead: the bytes of its first model request for a one-lens judge on
/// the seed's example, and how many model requests the judge made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Overhead {
    pub request_bytes: u64,
    pub requests: u32,
}

/// A pull-request reviewer must read the code: it runs in the checkout with the tool's read
/// tools, and without tools that write or run commands wherever the tool allows that. Its
/// answer is text (the last message), and its event stream shows the calls it made.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReviewerMode {
    pub argv: Vec<Arg>,
    #[serde(default)]
    pub answer: AnswerAt,
    /// jq filter that yields the reviewer's messages from stdout; the last one is its reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<String>,
    /// jq filter that yields one value per tool call the reviewer made (its name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<String>,
    /// jq filter that yields the id of the reviewer's session from stdout (the last one counts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The argv that resumes the session `{session}` with a short follow-up `{prompt}` (the
    /// correction of a refused verdict block), in the private HOME the first call used; empty
    /// when the tool cannot resume, and the follow-up is then a fresh call with the whole brief.
    /// It keeps every lockdown flag of `argv`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resume: Vec<Arg>,
    /// Variables set for a reviewer beside the row's own.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum HarnessKind {
    #[default]
    Process,
    Replay,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum PromptVia {
    /// In argv, where `{prompt}` stands (or as a file named by `{prompt_file}`).
    #[default]
    Argument,
    /// On standard input, which is then closed.
    Stdin,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum AnswerAt {
    #[default]
    Stdout,
    /// The file named by `{answer_file}`; stdout through the filter when it is missing.
    File,
}

/// One element of a harness's argv.
///
/// - `"text"`: always present; `{name}` placeholders are filled in (`prompt`, `prompt_file`,
///   `shared_file`, `schema`, `schema_file`, `answer_file`, `model`, `home`, `work`, `max_budget_usd`,
///   `endpoint`).
/// - `["--model", "{model}"]`: present only when every placeholder in it has a value.
/// - `{"whenEnv": "NAME", "args": [...]}`: present only when the user's environment sets NAME.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum Arg {
    Text(String),
    Group(Vec<String>),
    WhenEnv {
        #[serde(rename = "whenEnv")]
        when_env: String,
        args: Vec<String>,
    },
}

impl Arg {
    /// Whether the element (any of its words) mentions `text`.
    pub fn mentions(&self, text: &str) -> bool {
        match self {
            Arg::Text(t) => t.contains(text),
            Arg::Group(g) | Arg::WhenEnv { args: g, .. } => g.iter().any(|t| t.contains(text)),
        }
    }
}

impl<'de> Deserialize<'de> for Arg {
    /// By hand: serde's untagged form would read `["NAME", ["a"]]` as a `whenEnv` object by
    /// position. The JSON kind decides the variant instead.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Arg, D::Error> {
        use serde::de::Error;
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        struct WhenEnv {
            when_env: String,
            args: Vec<String>,
        }
        fn read<T: serde::de::DeserializeOwned, E: Error>(v: serde_json::Value) -> Result<T, E> {
            crate::records::strict::from_value(v).map_err(E::custom)
        }
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::String(t) => Ok(Arg::Text(t)),
            group @ serde_json::Value::Array(_) => read::<_, D::Error>(group).map(Arg::Group),
            obj @ serde_json::Value::Object(_) => {
                let w: WhenEnv = read::<_, D::Error>(obj)?;
                Ok(Arg::WhenEnv {
                    when_env: w.when_env,
                    args: w.args,
                })
            }
            _ => Err(D::Error::custom(
                "an argument is a string, a list of strings, or {\"whenEnv\", \"args\"}",
            )),
        }
    }
}

/// A file of the user's configuration carried into the judge's private HOME.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Carried {
    /// In the user's HOME: `~/…`, or `${VAR:-default}/…`.
    pub from: String,
    /// Relative to the judge's private HOME.
    pub to: String,
    /// For a JSON file the row writes itself (`files`): only the values at these JSON
    /// pointers are carried, into the row's file, which keeps the rest (its lockdown).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keep: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ErrorRule {
    pub status: Status,
    /// Case-insensitive substrings of stdout or stderr.
    #[serde(rename = "match")]
    pub matches: Vec<String>,
}

const BUILTIN: &str = include_str!("builtin.json");

/// The harness table: the built-in rows, then rows from files, a later row replacing an
/// earlier one of the same name.
#[derive(Clone, Debug)]
pub struct Table {
    rows: Vec<Harness>,
}

impl Table {
    pub fn builtin() -> Table {
        let rows: Vec<Harness> =
            serde_json::from_str(BUILTIN).expect("the built-in harness table is valid");
        Table { rows }
    }

    /// The built-ins, then every `*.json` in `$XDG_CONFIG_HOME/panel/harnesses/` (in name
    /// order), then the `--harness-file` files.
    pub fn load(files: &[PathBuf]) -> Result<Table> {
        let mut table = Table::builtin();
        for path in user_files()? {
            table.add_file(&path)?;
        }
        for path in files {
            table.add_file(path)?;
        }
        Ok(table)
    }

    /// Adds the rows of a file: one row object, or an array of them.
    pub fn add_file(&mut self, path: &Path) -> Result<()> {
        let text = crate::records::input::read_bounded(
            path,
            crate::records::input::MAX_SETTINGS,
            &path.display().to_string(),
        )?;
        let value = crate::records::strict::value(&text)
            .map_err(|e| anyhow!("{}: not JSON: {e}", path.display()))?;
        let rows = match value {
            serde_json::Value::Array(rows) => rows,
            row => vec![row],
        };
        for (i, mut row) in rows.into_iter().enumerate() {
            // An editor's pointer to schemas/harness.schema.json: for the editor, not a field.
            if let Some(obj) = row.as_object_mut() {
                obj.remove("$schema");
            }
            let name = row
                .get("name")
                .and_then(|n| n.as_str())
                .map(str::to_string)
                .unwrap_or_else(|| format!("row {}", i + 1));
            let harness: Harness = crate::records::strict::from_value(row)
                .map_err(|e| anyhow!("{}: harness {name}: {e}", path.display()))?;
            harness
                .check()
                .map_err(|e| anyhow!("{}: harness {name}: {e}", path.display()))?;
            self.rows.retain(|r| r.name != harness.name);
            self.rows.push(harness);
        }
        Ok(())
    }

    pub fn get(&self, name: &str) -> Option<&Harness> {
        self.rows.iter().find(|r| r.name == name)
    }

    pub fn rows(&self) -> &[Harness] {
        &self.rows
    }

    pub fn names(&self) -> Vec<&str> {
        self.rows.iter().map(|r| r.name.as_str()).collect()
    }

    /// The rows as panel-judge's help names them: the CLIs proven against the real one, those
    /// that are not, and the rows whose seat names a program or a file (`exec:COMMAND`).
    pub fn help(&self) -> String {
        let mut proven = Vec::new();
        let mut unverified = Vec::new();
        let mut generic = Vec::new();
        for row in &self.rows {
            let (head, rest) = row
                .description
                .split_once(": ")
                .unwrap_or((&row.description, ""));
            let form = format!("{}:", row.name);
            match rest.split_whitespace().find(|w| w.starts_with(&form)) {
                Some(spec) => generic.push(format!(
                    "{} ({})",
                    spec.trim_end_matches([',', '.']),
                    head.to_lowercase()
                )),
                None if row.verified => proven.push(row.name.clone()),
                None => unverified.push(format!("{} ({head})", row.name)),
            }
        }
        let mut parts = Vec::new();
        if !proven.is_empty() {
            parts.push(format!(
                "{}, each proven against the real CLI",
                and_list(&proven)
            ));
        }
        if !unverified.is_empty() {
            parts.push(format!(
                "{}, UNVERIFIED: built from their documentation, never run against the real CLI",
                and_list(&unverified)
            ));
        }
        parts.extend(generic);
        format!(
            "Built-in harnesses (--list-harnesses prints each row): {}.",
            parts.join("; ")
        )
    }
}

/// `a, b and c`.
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

fn user_files() -> Result<Vec<PathBuf>> {
    let base = match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => match std::env::var_os("HOME") {
            Some(home) => PathBuf::from(home).join(".config"),
            None => return Ok(Vec::new()),
        },
    };
    let dir = base.join("panel").join("harnesses");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(Vec::new());
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    Ok(files)
}

/// The placeholders argv, env and files may use. Besides the prompt, schema and answer paths,
/// the model and the judge's private folders (`home`, `work`): `install`, the CLI's installation
/// (`engine::sandbox::grants::installation`); `confined` and `unconfined`, empty, and present only
/// when panel's sandbox does or does not confine the judge (a group that holds one is used only
/// then); and in reviewer mode `checkout`, the folder reviewed, `git_dir`, where its git
/// data lives (the main repository's for a worktree), `forget`, empty and present only when
/// the reviewer's session is not kept for a resume (the group of a "keep no session" flag), and
/// in the resume argv `session`, the id of the session resumed.
pub const PLACEHOLDERS: &[&str] = &[
    "prompt",
    "prompt_file",
    "shared_file",
    "schema",
    "schema_file",
    "answer_file",
    "model",
    "home",
    "work",
    "max_budget_usd",
    "tier",
    "install",
    "checkout",
    "git_dir",
    "confined",
    "unconfined",
    "forget",
    "session",
    "endpoint",
];

impl Harness {
    /// Says which field of a row is wrong.
    pub fn check(&self) -> Result<()> {
        if self.name.is_empty()
            || !self
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            bail!("name: {:?} must be letters, digits, - or _", self.name);
        }
        if self.kind == HarnessKind::Process && self.executable.is_empty() {
            bail!("executable: missing");
        }
        let reviewer_argv = self
            .reviewer
            .iter()
            .flat_map(|r| r.argv.iter().chain(&r.resume));
        let all = self.argv.iter().chain(reviewer_argv).flat_map(|a| match a {
            Arg::Text(t) => vec![t.as_str()],
            Arg::Group(g) | Arg::WhenEnv { args: g, .. } => g.iter().map(String::as_str).collect(),
        });
        for text in all.chain(self.env.values().map(String::as_str)) {
            for name in placeholders(text) {
                if !PLACEHOLDERS.contains(&name) {
                    bail!(
                        "argv: unknown placeholder {{{name}}} (known: {})",
                        PLACEHOLDERS.join(", ")
                    );
                }
                if name == "endpoint" && self.endpoint_env.is_none() {
                    bail!("argv: {{endpoint}} needs endpointEnv, the variable that names it");
                }
            }
        }
        for e in &self.egress {
            crate::engine::sandbox::egress::Endpoint::parse(e)
                .map_err(|e| anyhow!("egress: {e}"))?;
        }
        // A variable that has the CLI log in elsewhere, or names its endpoint, must reach it.
        let elsewhere = self.login_elsewhere.iter().flatten();
        for v in elsewhere.chain(&self.endpoint_env) {
            if !self.pass_env.contains(v) {
                bail!("passEnv: {v} is named by loginElsewhere or endpointEnv but not carried");
            }
        }
        for l in &self.logins {
            l.check()?;
        }
        for c in &self.config {
            if !c.keep.is_empty() && !self.files.contains_key(&c.to) {
                bail!(
                    "config: {}: keep carries values into a file the row writes, and files has no {}",
                    c.from,
                    c.to
                );
            }
        }
        let mentions = |p: &str| self.argv_mentions(p);
        if self.kind == HarnessKind::Process
            && self.prompt == PromptVia::Argument
            && !mentions("{prompt}")
            && !mentions("{prompt_file}")
        {
            bail!(
                "argv: the prompt goes as an argument but argv has no {{prompt}} or {{prompt_file}}"
            );
        }
        if self.answer == AnswerAt::File && !mentions("{answer_file}") {
            bail!("argv: the answer lands in a file but argv has no {{answer_file}}");
        }
        if let Some(r) = &self.reviewer
            && !r.resume.is_empty()
        {
            let mentions = |p: &str| r.resume.iter().any(|a| a.mentions(p));
            if r.session.is_none() || !mentions("{session}") || !mentions("{prompt}") {
                bail!(
                    "reviewer.resume: a resume argv needs reviewer.session (the filter that reads the id) and both {{session}} and {{prompt}}"
                );
            }
        }
        let reviewer_filters = self.reviewer.as_ref().map(|r| {
            [
                ("reviewer.filter", &r.filter),
                ("reviewer.toolCalls", &r.tool_calls),
                ("reviewer.session", &r.session),
            ]
        });
        for (field, filter) in [("filter", &self.filter), ("usage", &self.usage)]
            .into_iter()
            .chain(reviewer_filters.into_iter().flatten())
        {
            if let Some(code) = filter {
                crate::engine::call::extract::Filter::compile(code)
                    .map_err(|e| anyhow!("{field}: {e:#}"))?;
            }
        }
        Ok(())
    }

    /// Whether any argument mentions `text` (a placeholder such as `{prompt_file}`).
    pub fn argv_mentions(&self, text: &str) -> bool {
        self.argv.iter().any(|a| a.mentions(text))
    }

    /// Whether the reviewer mode can resume a session.
    pub fn resumes(&self) -> bool {
        self.reviewer.as_ref().is_some_and(|r| !r.resume.is_empty())
    }

    /// Whether the tool itself caps spending (`--max-budget-usd` reaches it).
    pub fn caps_budget(&self) -> bool {
        self.argv_mentions("{max_budget_usd}")
    }

    /// Whether the tool is handed the answer's JSON Schema.
    pub fn takes_schema(&self) -> bool {
        self.argv_mentions("{schema")
    }

    /// The argv with every placeholder filled; optional groups whose values are missing left out.
    pub fn render_argv(&self, vars: &Vars, user_env: &dyn Fn(&str) -> bool) -> Result<Vec<String>> {
        self.render(&self.argv, vars, user_env)
    }

    /// Renders one argv template of this row (its own, or its reviewer mode's).
    pub fn render(
        &self,
        argv: &[Arg],
        vars: &Vars,
        user_env: &dyn Fn(&str) -> bool,
    ) -> Result<Vec<String>> {
        Ok(self
            .render_parts(argv, vars)?
            .into_iter()
            .filter(|p| p.when_env.is_none_or(user_env))
            .flat_map(|p| p.args)
            .collect())
    }

    /// Renders one argv template into its parts, in order: the arguments always given, and
    /// the `whenEnv` groups with the variable that decides each (a dry run lets the pasted
    /// command decide when it runs). Groups whose values are missing are left out.
    pub fn render_parts<'t>(&self, argv: &'t [Arg], vars: &Vars) -> Result<Vec<Part<'t>>> {
        let mut out: Vec<Part> = Vec::new();
        let always = |out: &mut Vec<Part<'t>>, args: Vec<String>| match out.last_mut() {
            Some(Part {
                when_env: None,
                args: last,
            }) => last.extend(args),
            _ => out.push(Part {
                when_env: None,
                args,
            }),
        };
        for arg in argv {
            match arg {
                Arg::Text(t) => {
                    let filled = fill(t, vars).ok_or_else(|| {
                        anyhow!(
                            "harness {}: {t:?} needs a value it was not given",
                            self.name
                        )
                    })?;
                    always(&mut out, vec![filled]);
                }
                Arg::Group(g) => {
                    if let Some(filled) =
                        g.iter().map(|t| fill(t, vars)).collect::<Option<Vec<_>>>()
                    {
                        always(&mut out, filled);
                    }
                }
                Arg::WhenEnv { when_env, args } => {
                    if let Some(filled) = args
                        .iter()
                        .map(|t| fill(t, vars))
                        .collect::<Option<Vec<_>>>()
                    {
                        out.push(Part {
                            when_env: Some(when_env),
                            args: filled,
                        });
                    }
                }
            }
        }
        Ok(out)
    }
}

/// Consecutive arguments of a rendered argv: given always, or only when the user's
/// environment sets `when_env` (to anything but the empty string).
#[derive(Clone, Debug, PartialEq)]
pub struct Part<'t> {
    pub when_env: Option<&'t str>,
    pub args: Vec<String>,
}

/// Values for the placeholders; a missing one leaves out any optional group that uses it.
/// The values of argv's placeholders; the prompt is borrowed, never copied.
pub type Vars<'a> = BTreeMap<&'static str, std::borrow::Cow<'a, str>>;

/// Fills `{name}` placeholders in one pass (a value is never re-read for placeholders).
/// `None` when a placeholder has no value.
pub fn fill(template: &str, vars: &Vars) -> Option<String> {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let (before, after) = rest.split_at(open);
        out.push_str(before);
        match after[1..].find('}') {
            Some(close) if is_name(&after[1..1 + close]) => {
                let name = &after[1..1 + close];
                out.push_str(vars.get(name)?);
                rest = &after[close + 2..];
            }
            _ => {
                out.push('{');
                rest = &after[1..];
            }
        }
    }
    out.push_str(rest);
    Some(out)
}

fn is_name(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_lowercase() || c == '_')
}

fn placeholders(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close) if is_name(&after[..close]) => {
                out.push(&after[..close]);
                rest = &after[close + 1..];
            }
            _ => rest = after,
        }
    }
    out
}

/// Expands `~/` and `${VAR:-default}` in a credential path against the user's environment.
pub fn expand_user_path(path: &str, home: &Path, env: &dyn Fn(&str) -> Option<String>) -> PathBuf {
    let mut text = path.to_string();
    while let Some(open) = text.find("${") {
        let Some(close) = text[open..].find('}') else {
            break;
        };
        let inner = &text[open + 2..open + close];
        let (name, default) = inner.split_once(":-").unwrap_or((inner, ""));
        let value = env(name)
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| default.to_string());
        text.replace_range(open..open + close + 1, &value);
    }
    match text.strip_prefix("~/") {
        Some(rest) => home.join(rest),
        None => PathBuf::from(text),
    }
}

/// A model family, inferred from a model name: the provider before a `/`, else words in it.
pub fn family_of_model(model: &str) -> Option<&'static str> {
    const FAMILIES: &[(&str, &[&str])] = &[
        (
            "anthropic",
            &["anthropic", "claude", "haiku", "sonnet", "opus"],
        ),
        (
            "openai",
            &["openai", "gpt", "chatgpt", "codex", "o1", "o3", "o4"],
        ),
        ("google", &["google", "gemini", "gemma", "vertex"]),
        ("alibaba", &["qwen", "alibaba", "dashscope"]),
        ("moonshot", &["kimi", "moonshot"]),
        ("xai", &["grok", "xai"]),
        ("meta", &["llama", "meta"]),
        (
            "mistral",
            &["mistral", "codestral", "devstral", "magistral"],
        ),
        ("deepseek", &["deepseek"]),
        ("zhipu", &["glm", "zhipu", "z-ai"]),
    ];
    let lower = model.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    // The provider prefix decides first: `google/gemini-2.5-pro`, `openrouter/anthropic/…`.
    let provider_words: Vec<&str> = match lower.rsplit_once('/') {
        Some((provider, _)) => provider.split('/').collect(),
        None => Vec::new(),
    };
    for candidates in [&provider_words, &words] {
        for (family, keys) in FAMILIES {
            if candidates.iter().any(|w| {
                keys.iter()
                    .any(|k| w == k || (k.len() > 2 && w.starts_with(k)))
            }) {
                return Some(family);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_help_names_every_row_of_the_table() {
        let mut t = Table::builtin();
        let text = t.help();
        for name in t.names() {
            assert!(text.contains(name), "{name}: {text}");
        }
        assert!(text.contains("exec:COMMAND (any program"), "{text}");
        let mut new = t.get("claude").unwrap().clone();
        (new.name, new.verified) = ("newcli".into(), false);
        new.description = "New CLI in print mode: nothing else".into();
        t.rows.push(new);
        assert!(
            t.help()
                .contains("and newcli (New CLI in print mode), UNVERIFIED"),
            "{}",
            t.help()
        );
    }

    fn vars(pairs: &[(&'static str, &str)]) -> Vars<'static> {
        pairs
            .iter()
            .map(|(k, v)| (*k, v.to_string().into()))
            .collect()
    }

    #[test]
    fn the_builtin_rows_are_valid() {
        for row in Table::builtin().rows() {
            row.check()
                .unwrap_or_else(|e| panic!("{}: {e:#}", row.name));
        }
    }

    /// Issue 45: "cursor's install hint puts `(not in a package registry)` inside the command to
    /// copy". Each row's install hint is a command and nothing else: a note goes in `notes`.
    #[test]
    fn an_install_hint_is_a_command_to_copy() {
        for row in Table::builtin().rows() {
            if let Some(install) = &row.install {
                let words = install.trim_end();
                assert!(!words.ends_with(')'), "{}: {install}", row.name);
                assert!(
                    !install.contains(" (") && !install.contains('\n'),
                    "{}: {install}",
                    row.name
                );
            }
        }
    }

    #[test]
    fn a_reviewer_keeps_its_session_only_when_it_may_be_resumed() {
        for name in ["claude", "codex"] {
            let h = Table::builtin().get(name).unwrap().clone();
            let r = h.reviewer.clone().unwrap();
            assert!(h.resumes(), "{name}");
            let base = [
                ("prompt", "P"),
                ("checkout", "/c"),
                ("install", "/i"),
                ("answer_file", "/a"),
                ("git_dir", "/g"),
                ("unconfined", ""),
            ];
            let forget = vars(&[base.as_slice(), &[("forget", "")]].concat());
            let keep = vars(&base);
            let first = |v: &Vars| h.render(&r.argv, v, &|_| false).unwrap();
            let flag = if name == "claude" {
                "--no-session-persistence"
            } else {
                "--ephemeral"
            };
            assert!(first(&forget).iter().any(|a| a == flag), "{name}");
            assert!(!first(&keep).iter().any(|a| a == flag), "{name}");
            // The resume argv names the session and keeps the first call's other flags.
            let resumed = h
                .render(
                    &r.resume,
                    &vars(&[base.as_slice(), &[("session", "S-1")]].concat()),
                    &|_| false,
                )
                .unwrap();
            assert!(resumed.iter().any(|a| a == "S-1"), "{name}: {resumed:?}");
            for a in first(&keep)
                .iter()
                .filter(|a| !["exec", "P", "--sandbox"].contains(&a.as_str()))
            {
                assert!(
                    resumed.contains(a),
                    "{name}: resumed without {a}: {resumed:?}"
                );
            }
        }
        // A resume argv without the filter that reads the id, or without {session}, is refused.
        let refused = |edit: &dyn Fn(&mut ReviewerMode)| {
            let mut h = Table::builtin().get("claude").unwrap().clone();
            edit(h.reviewer.as_mut().unwrap());
            h.check().unwrap_err().to_string()
        };
        assert!(refused(&|r| r.session = None).contains("reviewer.resume"));
        assert!(
            refused(&|r| r.resume.retain(|a| !a.mentions("{session}"))).contains("reviewer.resume")
        );
        assert!(
            refused(&|r| r.resume.push(Arg::Text("{nope}".into())))
                .contains("unknown placeholder {nope}")
        );
    }

    #[test]
    fn only_a_plain_word_is_a_session_id() {
        use crate::engine::call::ask::usable_session_id;
        assert!(usable_session_id("e22f9026-4833-4275-817e-aa457d7a2546"));
        assert!(usable_session_id("01a22ea0-9daf-7471-9edf-d7a364e76451"));
        for bad in [
            "",
            "-rm",
            "--model=x",
            "a b",
            "a/b",
            "../x",
            "a\nb",
            &"a".repeat(129),
        ] {
            assert!(!usable_session_id(bad), "{bad:?}");
        }
    }

    #[test]
    fn fill_replaces_once_and_leaves_other_braces() {
        let v = vars(&[("prompt", "say {model} {x}"), ("model", "haiku")]);
        assert_eq!(fill("{prompt}", &v).unwrap(), "say {model} {x}");
        assert_eq!(fill("a={model},{json}", &v), None);
        assert_eq!(fill("{\"a\":1}", &v).unwrap(), "{\"a\":1}");
        assert_eq!(fill("{ model }", &v).unwrap(), "{ model }");
    }

    #[test]
    fn optional_groups_drop_out_without_their_values() {
        let claude = Table::builtin().get("claude").unwrap().clone();
        let v = vars(&[("prompt", "P"), ("schema", "{}"), ("shared_file", "S")]);
        let argv = claude.render_argv(&v, &|_| false).unwrap();
        assert_eq!(
            argv,
            [
                "-p",
                "P",
                "--json-schema",
                "{}",
                "--tools",
                "",
                "--restricted",
                "--system-prompt-file",
                "S",
                "--disable-slash-commands",
                "--strict-mcp-config",
                "--no-session-persistence",
                "--output-format",
                "json"
            ]
        );
        let v = vars(&[
            ("prompt", "P"),
            ("schema", "{}"),
            ("shared_file", "S"),
            ("model", "haiku"),
            ("max_budget_usd", "0.05"),
        ]);
        let argv = claude
            .render_argv(&v, &|name| name == "ANTHROPIC_API_KEY")
            .unwrap();
        assert!(argv.windows(2).any(|w| w == ["--model", "haiku"]));
        assert!(argv.contains(&"--bare".to_string()));
        assert!(argv.ends_with(&["--max-budget-usd".to_string(), "0.05".to_string()]));
    }

    #[test]
    fn families_come_from_the_provider_then_the_name() {
        assert_eq!(family_of_model("haiku"), Some("anthropic"));
        assert_eq!(family_of_model("claude-sonnet-4-5"), Some("anthropic"));
        assert_eq!(family_of_model("gpt-5.6-luna"), Some("openai"));
        assert_eq!(family_of_model("google/gemini-2.5-pro"), Some("google"));
        assert_eq!(
            family_of_model("openrouter/anthropic/claude-3"),
            Some("anthropic")
        );
        assert_eq!(family_of_model("qwen3-coder-plus"), Some("alibaba"));
        assert_eq!(family_of_model("o3-mini"), Some("openai"));
        assert_eq!(family_of_model("opencode/big-pickle"), None);
        assert_eq!(family_of_model("mock-model"), None);
    }

    #[test]
    fn a_bad_row_names_its_field() {
        let dir = std::env::temp_dir().join(format!("panel-harness-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("bad.json");
        std::fs::write(
            &file,
            r#"{"name":"mine","executable":"x","argv":["{prompt}","{nope}"]}"#,
        )
        .unwrap();
        let err = Table::builtin().add_file(&file).unwrap_err().to_string();
        assert!(err.ends_with("harness mine: argv: unknown placeholder {nope} (known: prompt, prompt_file, shared_file, schema, schema_file, answer_file, model, home, work, max_budget_usd, tier, install, checkout, git_dir, confined, unconfined, forget, session, endpoint)"), "{err}");
        std::fs::write(
            &file,
            r#"{"name":"mine","executable":"x","argv":["{prompt}","--url={endpoint}"]}"#,
        )
        .unwrap();
        let err = Table::builtin().add_file(&file).unwrap_err().to_string();
        assert!(
            err.ends_with("{endpoint} needs endpointEnv, the variable that names it"),
            "{err}"
        );
        std::fs::write(
            &file,
            r#"{"name":"mine","executable":"x","argv":[],"promt":"stdin"}"#,
        )
        .unwrap();
        let err = Table::builtin().add_file(&file).unwrap_err().to_string();
        assert!(err.contains("harness mine: unknown field `promt`"), "{err}");
        // serde's untagged form read a whenEnv group from an array, by position.
        std::fs::write(
            &file,
            r#"{"name":"mine","executable":"x","argv":[["KEY",["--key","{model}"]]]}"#,
        )
        .unwrap();
        let err = Table::builtin().add_file(&file).unwrap_err().to_string();
        assert!(
            err.contains("harness mine: invalid type: sequence"),
            "{err}"
        );
        std::fs::write(
            &file,
            r#"{"name":"mine","executable":"x","argv":["{prompt}",["-m","{model}"],{"whenEnv":"KEY","args":["--key"]}]}"#,
        )
        .unwrap();
        Table::builtin().add_file(&file).unwrap();
        let row =
            r#"{"name":"mine","executable":"x","argv":[{"whenEnv":"KEY","args":["a"],"x":1}]}"#;
        std::fs::write(&file, row).unwrap();
        let err = Table::builtin().add_file(&file).unwrap_err().to_string();
        assert!(err.contains("harness mine: unknown field `x`"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn credential_paths_expand_home_and_variables() {
        let home = Path::new("/h");
        let env = |n: &str| (n == "CODEX_HOME").then(|| "/c".to_string());
        assert_eq!(
            expand_user_path("${CODEX_HOME:-~/.codex}/auth.json", home, &env),
            PathBuf::from("/c/auth.json")
        );
        assert_eq!(
            expand_user_path("${NOPE:-~/.codex}/auth.json", home, &env),
            PathBuf::from("/h/.codex/auth.json")
        );
    }
}

//! The command line of one attempt: argv rendered from the harness row's template, how the
//! prompt travels (argument, stdin or file), and the environment the judge sees: a few of the
//! user's variables, the harness's own, and private HOME, XDG folders and TMPDIR.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Result, anyhow};

use crate::engine::call::ask::{Job, Role, Session, Tier};
use crate::engine::call::context::Context;
use crate::engine::harness::{Arg, Harness, Part, PromptVia, Vars};
use crate::engine::run_folder::AttemptDirs;

/// Marks an argument to leave out of argv.
const DROPPED: &str = "\u{0}dropped\u{0}";

/// The longest single argument Linux passes (MAX_ARG_STRLEN, with its NUL).
pub const MAX_ARG: usize = 128 * 1024 - 1;

/// Variables of the user's environment every judge keeps: finding programs, the locale,
/// certificates and proxies. Everything else stays out unless a harness row asks for it.
const BASE_ENV: &[&str] = &[
    "PATH",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "TZ",
    "USER",
    "LOGNAME",
    "SHELL",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
];

/// An attempt's argv in its parts (see [`Part`]), and what goes to its stdin: the prompt,
/// when the row sends it there or it is too long for one argument.
pub struct Argv<'t> {
    pub parts: Vec<Part<'t>>,
    pub stdin: Option<Arc<String>>,
}

impl Argv<'_> {
    /// The words of argv, its `whenEnv` groups decided by `set` (whether a variable is set).
    pub fn words(self, set: &dyn Fn(&str) -> bool) -> Vec<String> {
        self.parts
            .into_iter()
            .filter(|p| p.when_env.is_none_or(set))
            .flat_map(|p| p.args)
            .collect()
    }
}

/// The values of argv's placeholders for one attempt of `job` in `dirs`; `confined` says
/// whether our walls confine it (the `{confined}` and `{unconfined}` groups).
pub fn vars<'a>(job: &'a Job, prompt: &'a str, dirs: &AttemptDirs, ctx: &Context) -> Vars<'a> {
    let path = |p: &Path| Cow::Owned(p.display().to_string());
    let mut v = Vars::new();
    v.insert("prompt", Cow::Borrowed(prompt));
    v.insert("prompt_file", path(&dirs.prompt_file()));
    v.insert("shared_file", path(&dirs.shared_file()));
    v.insert("schema", job.schema.to_string().into());
    v.insert("schema_file", path(&dirs.schema_file()));
    v.insert("answer_file", path(&dirs.answer_file()));
    v.insert("home", path(&dirs.home));
    v.insert("work", path(&dirs.work));
    // Empty, and present only when our own walls do (`{confined}`) or do not
    // (`{unconfined}`) confine the judge: a group that starts with one is used only then.
    // Codex's file-restricting sandbox mounts (bubblewrap), which Landlock forbids.
    let mark = if ctx.confined() {
        "confined"
    } else {
        "unconfined"
    };
    v.insert(mark, Cow::Borrowed(""));
    if let Some(m) = &job.seat.model {
        v.insert("model", Cow::Borrowed(m));
    }
    if let Ok(Some(url)) = endpoint(&job.seat.harness, &ctx.user_env) {
        v.insert("endpoint", Cow::Owned(url.to_string()));
    }
    if let Some(b) = ctx.opts.max_budget_usd {
        v.insert("max_budget_usd", b.to_string().into());
    }
    let exe = &job.seat.harness.executable;
    // Where a CLI that is not installed would be: its name, so a dry run still prints.
    let install = crate::engine::sandbox::grants::installation(exe, ctx.path_var())
        .map_or_else(|| Cow::Borrowed(exe.as_str()), |p| path(&p));
    v.insert("install", install);
    if let Role::Reviewer { checkout, session } = &job.role {
        v.insert("checkout", path(checkout));
        let git_dir = crate::engine::sandbox::grants::git_common_dir(checkout);
        v.insert("git_dir", path(&git_dir));
        match session {
            Session::Forget => {
                v.insert("forget", Cow::Borrowed(""));
            }
            Session::Keep => {}
            Session::Resume { id, .. } => {
                v.insert("session", Cow::Borrowed(id));
            }
        }
    }
    v
}

/// The endpoint the user names for a row whose CLI does not read it itself (its
/// `endpointEnv`), when set; an error when it is no http or https URL the CLI's configuration
/// can hold (a quote or a space would end its string).
pub fn endpoint<'e>(h: &Harness, env: &'e BTreeMap<String, String>) -> Result<Option<&'e str>> {
    let Some(name) = &h.endpoint_env else {
        return Ok(None);
    };
    let Some(url) = env.get(name).filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    let plain =
        !url.contains(|c: char| c.is_whitespace() || c.is_control() || "\"\\'`".contains(c));
    let scheme = url.starts_with("http://") || url.starts_with("https://");
    if !(plain && scheme && !crate::engine::sandbox::egress::urls(url).is_empty()) {
        anyhow::bail!(
            "{name} {:?} is no http or https URL {} can be given: set it to one, or unset it",
            crate::records::printable::one_line(url),
            h.name
        );
    }
    Ok(Some(url))
}

/// The system line of a judge whose row takes what its panel shares apart (`{shared_file}`),
/// when its prompt shares nothing: the row's system prompt is never empty.
pub const JUDGE_LINE: &str = "You are a judge. You answer the question you are given about the text you are given, and nothing else.";

/// How `job`'s prompt `whole`, whose first `shared` bytes every judge of its panel is sent
/// alike, reaches its CLI: what it is given as its prompt, and, for a row that takes the shared
/// part apart (its argv names `{shared_file}`, as claude's system prompt file, the part of its
/// request the provider caches), that file's text. Elsewhere the whole goes as the prompt,
/// shared part first, where a provider caches a prefix.
pub fn split(job: &Job, whole: Arc<String>, shared: usize) -> (Arc<String>, Option<String>) {
    let apart = template(job).is_ok_and(|t| t.iter().any(|a| a.mentions("{shared_file}")));
    match (apart, whole.get(..shared), whole.get(shared..)) {
        (false, ..) => (whole, None),
        (true, Some(common), Some(own)) if shared > 0 => {
            (Arc::new(own.to_string()), Some(common.to_string()))
        }
        (true, ..) => (whole, Some(JUDGE_LINE.to_string())),
    }
}

/// The argv template of `job`'s mode: the row's own, its reviewer mode's, or the resume of a
/// reviewer's session.
pub fn template(job: &Job) -> Result<&[Arg]> {
    let h = &job.seat.harness;
    let Role::Reviewer { session, .. } = &job.role else {
        return Ok(&h.argv);
    };
    match &h.reviewer {
        Some(r) if matches!(session, Session::Resume { .. }) && !r.resume.is_empty() => {
            Ok(&r.resume)
        }
        Some(_) if matches!(session, Session::Resume { .. }) => Err(anyhow!(
            "harness {} cannot resume a reviewer's session",
            h.name
        )),
        Some(r) => Ok(&r.argv),
        None => Err(anyhow!(
            "harness {} has no reviewer mode: it cannot review a pull request",
            h.name
        )),
    }
}

/// How the prompt reaches the harness: what stands for it in argv (`None`: itself) and what
/// goes to stdin; or why it cannot reach it.
pub fn route(job: &Job, prompt: &Arc<String>) -> Result<(Option<String>, Option<Arc<String>>)> {
    let h = &job.seat.harness;
    match h.prompt {
        PromptVia::Stdin => Ok((None, Some(Arc::clone(prompt)))),
        PromptVia::Argument if prompt.len() > MAX_ARG => match &h.stdin_prompt {
            // An empty stand-in drops the argument rather than passing "".
            Some(instead) => {
                let arg = if instead.is_empty() { DROPPED } else { instead };
                Ok((Some(arg.to_string()), Some(Arc::clone(prompt))))
            }
            None if h.argv_mentions("{prompt_file}") => Ok((None, None)),
            None => Err(anyhow!(
                "{}: the prompt is {} bytes, more than one argument carries (128 KiB), and {} takes it no other way",
                job.name,
                prompt.len(),
                h.name
            )),
        },
        PromptVia::Argument => Ok((None, None)),
    }
}

/// Renders `template` of `h` with `vars` into an [`Argv`] whose stdin is `stdin`.
pub fn render<'t>(
    h: &Harness,
    template: &'t [Arg],
    vars: &Vars,
    stdin: Option<Arc<String>>,
) -> Result<Argv<'t>> {
    let mut parts = h.render_parts(template, vars)?;
    for p in &mut parts {
        p.args.retain(|a| a != DROPPED);
    }
    Ok(Argv { parts, stdin })
}

/// The argv of one attempt of `job` in `dirs`, and how the prompt travels. `prompt_word`,
/// when given, stands in argv where the prompt would (a dry run's `"$prompt"`); the prompt
/// itself still decides how it travels. `login`, the kind of the login it is given, decides
/// the `{tier}` its provider is asked for.
pub fn of<'j>(
    job: &'j Job,
    prompt: &Arc<String>,
    dirs: &AttemptDirs,
    ctx: &Context,
    (prompt_word, login): (Option<&str>, Option<&str>),
) -> Result<Argv<'j>> {
    let (instead, stdin) = route(job, prompt)?;
    let mut vars = vars(job, prompt, dirs, ctx);
    if let Some(tier) = tier(&job.seat.harness, login, ctx.opts.tier) {
        vars.insert("tier", Cow::Borrowed(tier.as_str()));
    }
    if let Some(word) = instead.as_deref().or(prompt_word) {
        vars.insert("prompt", Cow::Owned(word.to_string()));
    }
    render(&job.seat.harness, template(job)?, &vars, stdin)
}

/// The tier asked of the provider of a judge of `h` given the login `kind`: `asked` where that
/// login offers it, else none (the standard tier, the `{tier}` group left out).
pub fn tier(h: &Harness, kind: Option<&str>, asked: Tier) -> Option<Tier> {
    let login = h.logins.iter().find(|l| Some(l.kind.as_str()) == kind)?;
    let offered = login.tiers.iter().any(|t| t == asked.as_str());
    (asked != Tier::Standard && offered).then_some(asked)
}

/// Checks that every job's prompt can reach its harness, before any starts.
pub fn check_prompts(jobs: &[Job], ctx: &Context) -> Result<()> {
    let dirs = AttemptDirs::new(
        Path::new("/nonexistent"),
        Path::new("/nonexistent/x"),
        "x",
        1,
    );
    for job in jobs {
        let whole = job.prompt.split();
        let (prompt, _) = split(job, Arc::new(whole.text), whole.shared);
        of(job, &prompt, &dirs, ctx, (None, None))?;
    }
    Ok(())
}

/// The environment of one attempt: the base variables, the harness's own, the private folders.
pub fn env(job: &Job, dirs: &AttemptDirs, ctx: &Context) -> Vec<(String, String)> {
    let mut env: BTreeMap<String, String> = BTreeMap::new();
    for name in carried_env(job, ctx) {
        if let Some(v) = ctx.user_env.get(&name) {
            env.insert(name, v.clone());
        }
    }
    env.extend(private_env(job, dirs, ctx));
    env.into_iter().collect()
}

/// The names of the user's variables a judge keeps: the base ones, the harness's, the user's.
pub fn carried_env(job: &Job, ctx: &Context) -> Vec<String> {
    BASE_ENV
        .iter()
        .map(|s| s.to_string())
        .chain(job.seat.harness.pass_env.iter().cloned())
        .chain(ctx.opts.pass_env.iter().cloned())
        .collect()
}

/// The variables set for a judge over the carried ones: its private HOME, XDG folders and
/// TMPDIR, and the harness's own (a reviewer's too), in the order they apply.
pub fn private_env(job: &Job, dirs: &AttemptDirs, ctx: &Context) -> Vec<(String, String)> {
    let h = &job.seat.harness;
    let home = dirs.home.display().to_string();
    let mut env = vec![
        ("HOME".to_string(), home.clone()),
        ("XDG_CONFIG_HOME".into(), format!("{home}/.config")),
        ("XDG_DATA_HOME".into(), format!("{home}/.local/share")),
        ("XDG_STATE_HOME".into(), format!("{home}/.local/state")),
        ("XDG_CACHE_HOME".into(), format!("{home}/.cache")),
        ("TMPDIR".into(), dirs.tmp.display().to_string()),
    ];
    if let Role::Reviewer { checkout, .. } = &job.role {
        // Git reads a checkout that is not the judge's own (a root caller's judge runs as
        // another id) only where protected configuration says so: the command scope.
        env.extend([
            ("GIT_CONFIG_COUNT".to_string(), "1".to_string()),
            ("GIT_CONFIG_KEY_0".into(), "safe.directory".into()),
            ("GIT_CONFIG_VALUE_0".into(), checkout.display().to_string()),
        ]);
    }
    let vars = vars(job, "", dirs, ctx);
    let reviewer_env = match (&job.role, &h.reviewer) {
        (Role::Reviewer { .. }, Some(r)) => Some(&r.env),
        _ => None,
    };
    for (k, v) in h.env.iter().chain(reviewer_env.into_iter().flatten()) {
        if let Some(v) = crate::engine::harness::fill(v, &vars) {
            env.push((k.clone(), v));
        }
    }
    env
}

/// Quotes a word for bash so it stays one word on one line.
pub fn shell_quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c))
    {
        return word.to_string();
    }
    if word.chars().any(|c| c.is_control()) {
        let mut out = String::from("$'");
        for c in word.chars() {
            match c {
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\r' => out.push_str("\\r"),
                '\\' => out.push_str("\\\\"),
                '\'' => out.push_str("\\'"),
                // Byte by byte: what bash makes of `\u` depends on the locale.
                c if c.is_control() => {
                    for b in c.encode_utf8(&mut [0; 4]).bytes() {
                        out.push_str(&format!("\\x{b:02x}"));
                    }
                }
                c => out.push(c),
            }
        }
        out.push('\'');
        return out;
    }
    format!("'{}'", word.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 45: a user's `OPENAI_BASE_URL` "reaches codex in the form codex reads (its provider
    /// configuration), or panel says at once, before launch, that it cannot".
    #[test]
    fn an_endpoint_is_an_http_url_the_cli_s_configuration_can_hold() {
        let codex = crate::engine::harness::Table::builtin()
            .get("codex")
            .unwrap()
            .clone();
        let env = |v: &str| BTreeMap::from([("OPENAI_BASE_URL".to_string(), v.to_string())]);
        let url = "http://127.0.0.1:11434/v1";
        assert_eq!(endpoint(&codex, &env(url)).unwrap(), Some(url));
        assert_eq!(endpoint(&codex, &env("")).unwrap(), None);
        for bad in [
            "127.0.0.1:11434",
            "ftp://x/",
            "http://x/\",name=\"evil",
            "http://x/ v1",
            "http://x/\u{1b}[2J",
            "https://",
        ] {
            let err = endpoint(&codex, &env(bad)).unwrap_err().to_string();
            assert!(err.starts_with("OPENAI_BASE_URL \""), "{bad:?}: {err}");
            assert!(!err.contains('\u{1b}'), "{err}");
        }
    }

    #[test]
    fn quoting_keeps_one_word_on_one_line() {
        assert_eq!(shell_quote("haiku"), "haiku");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote("a\nb's"), "$'a\\nb\\'s'");
        assert_eq!(shell_quote("\u{85}x\u{1b}"), "$'\\xc2\\x85x\\x1b'");
    }
}

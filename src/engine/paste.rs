//! A dry run's commands: each judge as a bash block that runs as pasted. It makes what the
//! launch makes (a private folder with HOME, TMPDIR and a working folder; the prompt, schema
//! and answer files; the harness row's files, which hold some harnesses' lockdown; the
//! user's configuration the row carries and its login as the broker gives it, unrefreshed), runs the harness with the
//! environment and argv the launch gives it, feeds the prompt the same way, prints where its
//! answer landed, and removes the folder however it ends. Everything comes from the row and
//! the same [`Attempt`] value a launch renders ([`Attempt::argv`], [`argv::private_env`]); the
//! private folder is `judge` in a marker that becomes `"$s"` in the block (never the job's
//! name, which may carry a pairwise judge's order).
//!
//! A pasted block runs outside panel's Landlock walls: it is rendered unconfined (a row's
//! `{unconfined}` groups, codex's own permission profile), and says so.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Result, bail};

use crate::engine::call::argv::{self, shell_quote};
use crate::engine::call::ask::{Job, Role};
use crate::engine::call::attempt::Attempt;
use crate::engine::call::context::Context;
use crate::engine::harness::login::JudgeRefresh;
use crate::engine::harness::{AnswerAt, Harness, HarnessKind, Login, Part};
use crate::engine::logins;
use crate::engine::run_folder::AttemptDirs;

/// Stands for the block's private folder (`"$s"`) in rendered text. No prompt, model or
/// schema holds a NUL byte (no command line could carry one), so none can forge it.
const FOLDER: &str = "\u{0}s\u{0}";
/// Stands for the prompt (`"$prompt"`).
const PROMPT: &str = "\u{0}p\u{0}";

/// The bash block that runs `job`'s first attempt as pasted (see the module's words).
pub fn block(job: &Job, ctx: &Context) -> Result<String> {
    let h = &job.seat.harness;
    let mut b = String::new();
    let _ = writeln!(
        b,
        "# judge {}, seat {} (harness {})",
        comment(&job.name),
        comment(&job.seat.spec),
        comment(&h.name)
    );
    if h.kind == HarnessKind::Replay {
        let _ = write!(
            b,
            "# replays {}: nothing to run",
            comment(job.seat.model.as_deref().unwrap_or(""))
        );
        return Ok(b);
    }
    let split = job.prompt.split();
    let shared = split.shared;
    let prompt = Arc::new(split.text);
    if prompt.contains('\0') {
        bail!(
            "{}: the prompt holds a NUL byte, which no command carries",
            job.name
        );
    }
    let len = prompt.len();
    let attempt = Attempt::new(
        job,
        1,
        (prompt, len, shared),
        (Path::new(""), &Path::new(FOLDER).join("judge")),
        ctx,
    );
    let (prompt, dirs) = (&attempt.prompt, &attempt.dirs);
    let login = chosen_login(h, job.seat.model.as_deref(), ctx).map(|l| l.kind.as_str());
    let argv = attempt.argv(Some(PROMPT), login)?;
    let (parts, stdin) = (argv.parts, argv.stdin);
    unconfined_note(&mut b, job);
    b.push_str("(\nset -eu\numask 077\n");
    b.push_str("s=$(mktemp -d \"${TMPDIR:-/tmp}/panel-sandbox.XXXXXX\")\n");
    b.push_str("trap 'rm -rf -- \"$s\"' EXIT\ntrap 'exit 130' INT\ntrap 'exit 143' TERM HUP\n");
    let login_env = private_files(&mut b, job, dirs, (prompt, attempt.shared.as_deref()), ctx);
    let _ = writeln!(b, "cd -- {}", word(&path(&attempt.cwd())));
    argv_array(&mut b, &parts);
    let mut env = launch_env(job, dirs, ctx);
    env.extend(login_env);
    let timeout = ctx.opts.timeout_secs.max(0.001);
    let run = format!(
        "timeout -k 1 {timeout} env -i -- {} {} \"${{a[@]}}\"",
        env.join(" "),
        shell_quote(&h.executable)
    );
    let feed = match stdin {
        Some(_) => "printf '%s' \"$prompt\" | ",
        None => "",
    };
    let from = if stdin.is_some() { "" } else { " < /dev/null" };
    match attempt.answer_at() {
        AnswerAt::Stdout => {
            let _ = write!(b, "{feed}{run}{from}\n)");
        }
        AnswerAt::File => {
            // As the launch reads it: the answer file, else standard output.
            let out = word(&path(&dirs.private.join("stdout")));
            let answer = word(&path(&dirs.answer_file()));
            let _ = write!(
                b,
                "status=0\n{feed}{run}{from} > {out} || status=$?\n\
                     if grep -q '[^[:space:]]' {answer}; then cat -- {answer}; else cat -- {out}; fi\n\
                     exit \"$status\"\n)"
            );
        }
    }
    Ok(b)
}

/// The block's opening words: it runs outside panel's walls, under the harness's own lockdown,
/// in a private folder; a reviewer's checkout is made first.
fn unconfined_note(b: &mut String, job: &Job) {
    let h = &job.seat.harness;
    b.push_str(
        "# Unconfined: panel's Landlock walls do not reach a pasted command; the harness's own lockdown holds it",
    );
    match &h.lockdown {
        Some(l) => {
            let _ = writeln!(b, ": {}.", comment(l));
        }
        None => b.push_str(".\n"),
    }
    let _ = writeln!(
        b,
        "# It runs in a private folder, removed when it ends, with the files and logins panel-judge gives it."
    );
    if let Role::Reviewer { checkout, .. } = &job.role {
        let _ = writeln!(
            b,
            "# It reviews the checkout at {}: make it first (a repository of the head alone: git init PATH, git -C PATH fetch REPO HEAD, git -C PATH checkout --detach HEAD).",
            comment(&checkout.display().to_string())
        );
    }
}

/// The private folder's files, as the launch makes them: HOME, TMPDIR and the working folder;
/// the prompt, schema and answer files; the logins; the harness row's files.
fn private_files(
    b: &mut String,
    job: &Job,
    dirs: &AttemptDirs,
    (prompt, shared): (&str, Option<&str>),
    ctx: &Context,
) -> Vec<String> {
    let h = &job.seat.harness;
    let folders = [&dirs.private, &dirs.home, &dirs.work, &dirs.tmp];
    let _ = writeln!(b, "mkdir -- {}", folders.map(|d| word(&path(d))).join(" "));
    let _ = writeln!(b, "prompt={}", shell_quote(prompt));
    let _ = writeln!(
        b,
        "printf '%s' \"$prompt\" > {}",
        word(&path(&dirs.prompt_file()))
    );
    if let Some(shared) = shared {
        let _ = writeln!(
            b,
            "printf '%s' {} > {}",
            shell_quote(shared),
            word(&path(&dirs.shared_file()))
        );
    }
    let _ = writeln!(
        b,
        "printf '%s' {} > {}",
        shell_quote(&job.schema.to_string()),
        word(&path(&dirs.schema_file()))
    );
    let _ = writeln!(b, ": > {}", word(&path(&dirs.answer_file())));
    config(b, job, dirs);
    let login_env = login(b, job, dirs, ctx);
    let login = chosen_login(h, job.seat.model.as_deref(), ctx);
    let vars = argv::vars(job, PROMPT, dirs, ctx);
    for (rel, text) in &h.files {
        let file = dirs.home.join(rel);
        let mut text = crate::engine::harness::fill(text, &vars).unwrap_or_else(|| text.clone());
        if let Some(s) = login.and_then(|l| l.settings.get(rel)) {
            text = crate::engine::carried::with_settings(&text, s);
        }
        if let Some(parent) = file.parent() {
            let _ = writeln!(b, "mkdir -p -- {}", word(&path(parent)));
        }
        let _ = writeln!(b, "printf '%s' {} > {}", word(&text), word(&path(&file)));
        kept_values(b, job, rel, &file);
    }
    login_env
}

/// The login a pasted block gives its judge: the one the row's order finds now (a command's is
/// asked when the block runs), as the broker gives it but never refreshed: a file's copy
/// without its refresh token (written by jq; without jq nothing is copied and the CLI says it is
/// not logged in), a token in its variable. Writes the statements that make its files and gives
/// the words it adds to the environment.
fn login(b: &mut String, job: &Job, dirs: &AttemptDirs, ctx: &Context) -> Vec<String> {
    let h = &job.seat.harness;
    let Some(l) = chosen_login(h, job.seat.model.as_deref(), ctx) else {
        return Vec::new();
    };
    let _ = writeln!(
        b,
        "# Its login ({}) as panel-judge gives it, without a refresh token and not refreshed: an expired one fails until its CLI is run once by itself.",
        comment(&l.kind)
    );
    let mut env: Vec<String> = l
        .set_env
        .iter()
        .map(|(k, v)| word(&format!("{k}={v}")))
        .collect();
    if let Some(name) = l
        .env
        .iter()
        .find(|n| ctx.user_env.get(*n).is_some_and(|v| !v.is_empty()))
    {
        if let Some(to) = l
            .to_env
            .as_ref()
            .filter(|t| is_identifier(t) && is_identifier(name))
        {
            env.push(format!("\"{to}=${{{name}}}\""));
        }
        return env;
    }
    if !l.command.is_empty() {
        let words = ctx
            .with_user(|user| logins::words(l, user))
            .unwrap_or_default();
        let cmd: Vec<String> = words.iter().map(|w| shell_quote(w)).collect();
        if let Some(to) = l.to_env.as_ref().filter(|t| is_identifier(t)) {
            // Asked when the block runs; no token, no variable, as the launch gives none.
            let _ = writeln!(b, "t=$({} 2>/dev/null | head -n 1)", cmd.join(" "));
            env.push(format!("${{t:+\"{to}=$t\"}}"));
        }
        return env;
    }
    let Some(file) = &l.file else {
        return env;
    };
    b.push_str(&user_path(file));
    let token = l.token.as_ref().or(l.refresh.as_ref().map(|r| &r.access));
    // Its `{/pointer}` words (the account a store names) are read now, as the broker reads them.
    let token = token.and_then(|p| ctx.with_user(|user| logins::pointer(l, p, user)));
    if let (Some(to), Some(p)) = (l.to_env.as_ref().filter(|t| is_identifier(t)), token) {
        let _ = writeln!(
            b,
            "t=$(jq -r {} < \"$f\" 2>/dev/null || :)",
            shell_quote(&jq_get(&p))
        );
        env.push(format!("\"{to}=$t\""));
    }
    if let Some(to) = &l.to {
        copy_login_file(b, l, &dirs.home.join(to), job.seat.model.as_deref());
    }
    env
}

/// Writes the statement that copies the login's file (`$f`) to `dest` in the judge's home:
/// edited by jq as [`judge_edits`] says (without jq nothing is copied), or whole when it says
/// nothing.
fn copy_login_file(b: &mut String, l: &Login, dest: &Path, model: Option<&str>) {
    let parent = dest.parent().map(|p| word(&path(p))).unwrap_or_default();
    let dest = word(&path(dest));
    let edits = judge_edits(l, model);
    let (copy, need_jq) = match edits.is_empty() {
        false => (
            format!(
                "jq -c {} < \"$f\" > {dest} || rm -f -- {dest}",
                shell_quote(&edits.join(" | "))
            ),
            " && command -v jq >/dev/null",
        ),
        true => (format!("cat -- \"$f\" > {dest} || rm -f -- {dest}"), ""),
    };
    let _ = writeln!(
        b,
        "if [ -f \"$f\" ] && [ -r \"$f\" ]{need_jq}; then mkdir -p -- {parent}; {copy}; fi"
    );
}

/// The jq edits that make a judge's copy of a login file: what the seat's CLI needs of it, its
/// refresh token as the row gives judges, and the row's settings for judges.
fn judge_edits(l: &Login, model: Option<&str>) -> Vec<String> {
    // Only what the seat's CLI needs of a file that holds more (every provider's login).
    let keep = logins::judge_keep(l, model).map(|keep| {
        let paths: Vec<String> = keep.iter().map(|p| jq_path(p)).collect();
        let paths = match paths.is_empty() {
            true => "empty".to_string(),
            false => paths.join(", "),
        };
        format!(
            ". as $s | reduce ({paths}) as $p ({{}}; ($s | getpath($p)) as $v \
             | if $v == null then . else setpath($p; $v) end)"
        )
    });
    let mut edits: Vec<String> = keep.into_iter().collect();
    edits.extend(l.refresh.iter().map(|r| {
        let at = jq_path(&r.refresh_token);
        match r.judge {
            JudgeRefresh::Drop => format!("delpaths([{at}])"),
            JudgeRefresh::Empty => format!("setpath({at}; \"\")"),
            JudgeRefresh::StandIn => format!(
                "setpath({at}; {})",
                serde_json::Value::from(crate::engine::logins::STAND_IN)
            ),
        }
    }));
    for (p, v) in &l.judge_set {
        edits.push(match v.is_null() {
            true => format!("delpaths([{}])", jq_path(p)),
            false => format!("setpath({}; {v})", jq_path(p)),
        });
    }
    edits
}

/// The login of `h` the user has now, as the broker would find it; a command login counts as
/// had (it is asked when the block runs).
fn chosen_login<'h>(h: &'h Harness, model: Option<&str>, ctx: &Context) -> Option<&'h Login> {
    ctx.with_user(|user| {
        logins::order(h, model, user).find(|l| match logins::had(l, user) {
            Some(place) => {
                let token = logins::kept_token(l, &place, user);
                logins::passed_over(l, token.as_deref()).is_none()
            }
            None => !l.command.is_empty() && logins::words(l, user).is_some(),
        })
    })
}

/// A JSON pointer as a jq path (`["a","b"]`).
fn jq_path(pointer: &str) -> String {
    let steps: Vec<serde_json::Value> = pointer
        .split('/')
        .skip(1)
        .map(|s| serde_json::Value::from(s.replace("~1", "/").replace("~0", "~")))
        .collect();
    serde_json::Value::from(steps).to_string()
}

/// A jq filter that reads the string at a pointer (a `*` step: any one key), or nothing.
fn jq_get(pointer: &str) -> String {
    let mut f = String::from("first(.");
    for s in pointer.split('/').skip(1) {
        match s {
            "*" => f.push_str(" | .[]?"),
            key => {
                let key = key.replace("~1", "/").replace("~0", "~");
                f.push_str(&format!(" | .[{}]?", serde_json::Value::from(key)));
            }
        }
    }
    f.push_str(" | strings) // empty");
    f
}

/// After the row's file at `rel` is written: the user's values its row carries into it (the
/// kept JSON pointers of a `config` file), merged in by jq when the block runs, the row's own
/// keys winning, as the launch merges them.
fn kept_values(b: &mut String, job: &Job, rel: &str, file: &Path) {
    for c in job
        .seat
        .harness
        .config
        .iter()
        .filter(|c| c.to == rel && !c.keep.is_empty())
    {
        b.push_str(&user_path(&c.from));
        let paths: Vec<String> = c.keep.iter().map(|p| jq_path(p)).collect();
        let pick = format!(
            "(reduce ({}) as $p ({{}}; ($u[0] | getpath($p)) as $v | if $v == null then . else setpath($p; $v) end)) * .",
            paths.join(", ")
        );
        let dest = word(&path(file));
        let _ = writeln!(
            b,
            "if [ -f \"$f\" ] && command -v jq >/dev/null && m=$(jq -c --slurpfile u \"$f\" {} {dest}); then printf '%s' \"$m\" > {dest}; fi",
            shell_quote(&pick)
        );
    }
}

/// The argv as the bash array `a`, its `whenEnv` groups decided by the environment the block
/// runs in.
fn argv_array(b: &mut String, parts: &[Part]) {
    let mut first = true;
    for part in parts {
        let words: Vec<String> = part.args.iter().map(|a| word(a)).collect();
        let op = if first { "=" } else { "+=" };
        match part.when_env {
            None => {
                let _ = writeln!(b, "a{op}({})", words.join(" "));
            }
            Some(name) if is_identifier(name) => {
                if first {
                    b.push_str("a=()\n");
                }
                let _ = writeln!(
                    b,
                    "if [ -n \"${{{name}-}}\" ]; then a+=({}); fi",
                    words.join(" ")
                );
            }
            // No shell variable has that name: the launch, reading the same
            // environment, finds it unset too.
            Some(_) if first => b.push_str("a=()\n"),
            Some(_) => continue,
        }
        first = false;
    }
    if first {
        b.push_str("a=()\n");
    }
}

/// The launch's environment: nothing of the user's but the carried variables, then the
/// private folder's.
fn launch_env(job: &Job, dirs: &AttemptDirs, ctx: &Context) -> Vec<String> {
    let mut env: Vec<String> = Vec::new();
    let mut carried = argv::carried_env(job, ctx);
    carried.retain(|n| is_identifier(n));
    carried.dedup();
    for name in carried {
        let set = format!("${{{name}+\"{name}=${name}\"}}");
        if !env.contains(&set) {
            env.push(set);
        }
    }
    for (k, v) in argv::private_env(job, dirs, ctx) {
        env.push(word(&format!("{k}={v}")));
    }
    env
}

/// Copies the user's configuration the row carries, as the launch does
/// ([`crate::engine::carried`]): a regular file of the user's, when there is one, into the
/// private HOME, the owner's alone (a file carried in part is merged into the row's own, below).
fn config(b: &mut String, job: &Job, dirs: &AttemptDirs) {
    for c in job.seat.harness.config.iter().filter(|c| c.keep.is_empty()) {
        let to = dirs.home.join(&c.to);
        b.push_str(&user_path(&c.from));
        let dest = word(&path(&to));
        let parent = to.parent().map(|p| word(&path(p))).unwrap_or_default();
        let _ = writeln!(
            b,
            "if [ -f \"$f\" ] && [ -r \"$f\" ]; then mkdir -p -- {parent}; cat -- \"$f\" > {dest} || rm -f -- {dest}; fi"
        );
    }
}

/// Statements that set `f` to a credential's path as
/// [`crate::engine::harness::expand_user_path`] reads it: `${VAR:-default}` from the
/// environment the block runs in, then a leading `~/` as `$HOME`.
fn user_path(from: &str) -> String {
    let mut b = String::from("f=''\n");
    let mut rest = from;
    while let Some(open) = rest.find("${") {
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        let literal = &rest[..open];
        if !literal.is_empty() {
            let _ = writeln!(b, "f=$f{}", shell_quote(literal));
        }
        let inner = &rest[open + 2..open + close];
        let (name, default) = inner.split_once(":-").unwrap_or((inner, ""));
        let default = shell_quote(default);
        if is_identifier(name) {
            let _ = writeln!(b, "v=${{{name}-}}; [ -n \"$v\" ] || v={default}; f=$f$v");
        } else {
            let _ = writeln!(b, "f=$f{default}");
        }
        rest = &rest[open + close + 1..];
    }
    if !rest.is_empty() {
        let _ = writeln!(b, "f=$f{}", shell_quote(rest));
    }
    b.push_str("case $f in '~/'*) f=$HOME/${f#'~/'} ;; esac\n");
    b
}

/// Text that may hold the markers, as one bash word: each marker becomes its variable.
fn word(text: &str) -> String {
    if text.is_empty() {
        return "''".into();
    }
    let mut out = String::new();
    let mut rest = text;
    loop {
        let next = [(FOLDER, "\"$s\""), (PROMPT, "\"$prompt\"")]
            .into_iter()
            .filter_map(|(m, v)| rest.find(m).map(|i| (i, m, v)))
            .min_by_key(|(i, _, _)| *i);
        match next {
            Some((i, marker, variable)) => {
                if i > 0 {
                    out.push_str(&shell_quote(&rest[..i]));
                }
                out.push_str(variable);
                rest = &rest[i + marker.len()..];
            }
            None => {
                if !rest.is_empty() {
                    out.push_str(&shell_quote(rest));
                }
                return out;
            }
        }
    }
}

fn path(p: &Path) -> String {
    p.display().to_string()
}

/// Text for a comment line: one line, control characters escaped.
fn comment(text: &str) -> String {
    crate::records::printable::one_line(text)
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bash(script: &str) -> String {
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(script)
            .env_remove("NOPE")
            .output()
            .unwrap();
        assert!(out.status.success(), "{script}\n{out:?}");
        String::from_utf8(out.stdout).unwrap()
    }

    #[test]
    fn markers_become_variables_and_the_rest_stays_quoted() {
        let w = word(&format!("{FOLDER}/a b/{PROMPT}'$(x)`y`"));
        assert_eq!(
            bash(&format!("s=/S; prompt=P; printf '%s' {w}")),
            "/S/a b/P'$(x)`y`"
        );
        assert_eq!(word(""), "''");
    }

    #[test]
    fn a_credential_path_reads_as_expand_user_path_reads_it() {
        let home = Path::new("/h");
        for (from, set) in [
            ("${CODEX_HOME:-~/.codex}/auth.json", Some("/c")),
            ("${CODEX_HOME:-~/.codex}/auth.json", None),
            ("~/.claude/.credentials.json", None),
            ("${OPENCODE_CONFIG:-~/.config/opencode/opencode.json}", None),
            ("${bad name:-~/x}/y", None),
        ] {
            let env = |n: &str| (n == "CODEX_HOME").then(|| set.map(String::from)).flatten();
            let want = crate::engine::harness::expand_user_path(from, home, &env);
            let export = set.map_or(String::new(), |v| format!("export CODEX_HOME={v}; "));
            let got = bash(&format!(
                "HOME=/h; unset CODEX_HOME OPENCODE_CONFIG; {export}{}printf '%s' \"$f\"",
                user_path(from)
            ));
            assert_eq!(got, want.display().to_string(), "{from}");
        }
    }
}

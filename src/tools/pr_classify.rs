//! `pr-classify`: size a pull request, set its touch flags and class, and plan its review panel.
//! A pure tool: it reads PR facts and writes records, and runs no model and no network.

use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{CommandFactory, Parser};

use crate::records::exit_status;
use crate::records::plan::{Headroom, PanelPlan};
use crate::rules::plan::{PlanPolicy, plan_panel};

pub use crate::records::class::{Class, PrClass};
pub use crate::records::facts::{ChangedFile, FactsInput, PrFacts};
pub use crate::rules::classify::{ClassRules, ClassTable, classify_pr};

/// Size a pull request and plan its review panel.
#[derive(Parser, Debug)]
#[command(name = "pr-classify", version)]
pub struct Args {
    /// PR facts as JSON, `gh pr view --json …` output, or `git diff --numstat` output; standard
    /// input when absent or `-`. The format is detected unless a flag names it.
    pub input: Option<String>,
    /// The input is `git diff --numstat` output (with or without -z); an empty one is an empty
    /// diff. With --raw too (git diff --raw --numstat), each file's mode is read: mode 120000
    /// lists the file under "links".
    #[arg(long, group = "format")]
    pub numstat: bool,
    /// The input is `gh pr view --json number,headRefOid,baseRefOid,files[,changedFiles,url]`
    /// output. gh lists at most 100 files: a list shorter than changedFiles (or of 100, without
    /// it) makes the size unread (g10); pr-review classifies a PR from its whole diff.
    #[arg(long, group = "format")]
    pub gh: bool,
    /// The input is PR facts: {repo, pr, head, base, kind, changedFiles: [{path, additions,
    /// deletions, previousPath, mode}]}.
    #[arg(long, group = "format")]
    pub facts: bool,
    /// The repository, where the input does not say (numstat, gh output without url) or to
    /// override it. Without it and without one in the input, GH_REPO is read, as gh does; a
    /// plan made inside a git repository then takes OWNER/NAME from its origin remote (or its
    /// only remote); without any remote and without --pr, the name is only a label of the
    /// members' names, local/FOLDER after the repository's folder.
    #[arg(long, value_name = "OWNER/NAME")]
    pub repo: Option<String>,
    /// The pull request number.
    #[arg(long, value_name = "N")]
    pub pr: Option<u64>,
    /// The head commit under review; a plan made inside a git repository takes its HEAD when
    /// neither this nor the input names one.
    #[arg(long, value_name = "SHA")]
    pub head: Option<String>,
    /// The base commit. A plan of HEAD made inside a git repository takes, when neither this
    /// nor the input names one, where HEAD left its branch's upstream (unless that is the
    /// branch's own copy on a remote), else the default branch (origin/HEAD's target,
    /// origin/main, main, origin/master or master).
    #[arg(long, value_name = "SHA")]
    pub base: Option<String>,
    /// The PR's kind (feature, fix, security, …); kind `security` can set the security-slice flag.
    #[arg(long, value_name = "KIND")]
    pub kind: Option<String>,
    /// The run holds or held a G10 hold: class g10 at any size.
    #[arg(long)]
    pub g10_hold: bool,
    /// A JSON rules file: its keys replace the defaults', or add to them with "extend": true.
    /// `seed` instead names the seed's exact lists: its 3 dependency and 8 generated globs in
    /// place of the wider defaults (a file named seed: ./seed).
    #[arg(long, value_name = "FILE|seed")]
    pub rules: Option<String>,
    /// Print the rules table in force as JSON and exit.
    #[arg(long)]
    pub print_rules: bool,
    /// Print the PR facts as read (numstat and gh output turned into facts) as JSON, and exit.
    #[arg(long, conflicts_with_all = ["is", "text"])]
    pub print_facts: bool,
    /// Also plan the review panel: a `plan` record after the `pr-class` record.
    #[arg(long)]
    pub plan: bool,
    /// A JSON policy file for the planner: its keys replace the defaults', or add to them with
    /// "extend": true.
    #[arg(long, value_name = "FILE")]
    pub policy: Option<String>,
    /// Print the planner policy in force as JSON and exit.
    #[arg(long)]
    pub print_policy: bool,
    /// No headroom for opus now: plan every opus member at its sonnet profile, marked degraded.
    #[arg(long)]
    pub no_opus: bool,
    /// Write a short summary for people instead of JSON records.
    #[arg(long, conflicts_with = "is")]
    pub text: bool,
    /// Write nothing; exit 0 when the PR is WHAT, 1 when not. WHAT: g10, standard, large,
    /// unread, security-slice, g10-hold, or a touch flag (dependency, authority, policy, security,
    /// tests).
    #[arg(long, value_name = "WHAT")]
    pub is: Option<String>,
}

pub use crate::tools::about::PR_CLASSIFY_DOC as DOC;

/// The clap definition of `pr-classify`.
pub fn command() -> clap::Command {
    Args::command()
        .long_about(crate::tools::about::pr_classify())
        .after_long_help(DOC.help())
}

fn read_text(path: &str) -> Result<String> {
    crate::records::input::read_bounded(
        std::path::Path::new(path),
        crate::records::input::MAX_SETTINGS,
        path,
    )
}

/// The rules table in force: the defaults, changed by `--rules`, or a preset it names.
pub fn load_rules(path: Option<&str>) -> Result<ClassRules> {
    if let Some(rules) = path.and_then(crate::rules::classify::defaults::preset) {
        return rules.compile();
    }
    match path {
        Some(p) => ClassTable::default()
            .apply_file(p, &read_text(p)?)?
            .compile()
            .with_context(|| p.to_string()),
        None => ClassTable::default().compile(),
    }
}

/// The planner policy in force: the defaults, changed by `--policy`.
pub fn load_policy(path: Option<&str>) -> Result<PlanPolicy> {
    match path {
        Some(p) => {
            let policy = PlanPolicy::default().apply_file(p, &read_text(p)?)?;
            policy.check().with_context(|| p.to_string())?;
            Ok(policy)
        }
        None => Ok(PlanPolicy::default()),
    }
}

/// What `--is` answers besides the touch flags.
const IS_NAMES: &[&str] = &[
    "g10",
    "standard",
    "large",
    "unread",
    "security-slice",
    "g10-hold",
];

/// The answer to `--is WHAT`, or an error for a name that means nothing.
pub fn is(cls: &PrClass, what: &str) -> Result<bool> {
    Ok(match what {
        "g10" => cls.class == Class::G10,
        "standard" => cls.class == Class::Standard,
        "large" => cls.large,
        "unread" => cls.changed_lines.is_none(),
        "security-slice" => cls.security_slice.is_some(),
        "g10-hold" => cls.g10_hold,
        flag if cls.touches.contains_key(flag) => cls.touched(flag),
        other => {
            let flags: Vec<&str> = cls.touches.keys().map(String::as_str).collect();
            bail!(
                "--is {other}: not one of {}, {}",
                IS_NAMES.join(", "),
                flags.join(", ")
            )
        }
    })
}

/// `GH_REPO`, which gh itself reads: `[HOST/]OWNER/REPO`.
fn gh_repo_env() -> Option<String> {
    let value = std::env::var("GH_REPO").ok()?;
    let parts: Vec<&str> = value.trim().split('/').collect();
    match parts.as_slice() {
        [.., owner, repo] if !owner.is_empty() && !repo.is_empty() => {
            Some(format!("{owner}/{repo}"))
        }
        _ => None,
    }
}

/// One line git prints in the current folder, or `None` outside a repository.
fn git(args: &[&str]) -> Option<String> {
    let lines = git_lines(args)?;
    match lines.as_slice() {
        [line] if !line.trim().is_empty() => Some(line.trim().to_string()),
        _ => None,
    }
}

/// The lines git prints in the current folder (none is an answer), or `None` when it fails.
fn git_lines(args: &[&str]) -> Option<Vec<String>> {
    let out = std::process::Command::new("git")
        .args(args)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    out.status
        .success()
        .then(|| text.lines().map(str::to_string).collect())
}

/// `OWNER/NAME` of a remote's URL (`https://github.com/acme/app.git`,
/// `git@github.com:acme/app`).
fn owner_name(url: &str) -> Option<String> {
    let path = url.trim_end_matches('/').trim_end_matches(".git");
    let mut parts = path.rsplit(['/', ':']);
    let name = parts.next().filter(|n| !n.is_empty())?;
    let owner = parts.next().filter(|o| !o.is_empty() && !o.contains('@'))?;
    Some(format!("{owner}/{name}"))
}

/// `local/FOLDER`, FOLDER the folder of the repository's git data (the same in each of its
/// worktrees), in the characters a member's name may hold.
fn local_label(common_dir: &str) -> String {
    let path = Path::new(common_dir.trim_end_matches('/'));
    let folder = match path.file_name().and_then(|f| f.to_str()) {
        Some(".git") => path.parent().and_then(|p| p.file_name()),
        _ => path.file_name(),
    };
    let folder = folder.map(|f| f.to_string_lossy()).unwrap_or_default();
    let folder = folder.strip_suffix(".git").unwrap_or(&folder);
    let clean: String = folder
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect();
    match clean.trim_matches('.') {
        "" => "local/repository".to_string(),
        _ => format!("local/{clean}"),
    }
}

/// What git says of the repository a plan is made in, for what it was not told.
struct RepoFacts {
    /// Why the repository has no name: none when it has one, or when not inside a repository.
    no_repo: Option<String>,
    /// Why there is no head commit.
    no_head: Option<String>,
}

/// The repository's name from its remotes: origin's URL, else the only remote's. Without any
/// remote, and without a PR number (whose repository is a real one), the name is only a label
/// of member and run names: `local/FOLDER`.
fn git_repo(pr: Option<u64>) -> Result<Option<String>, String> {
    let Some(remotes) = git_lines(&["remote"]) else {
        return Ok(None);
    };
    let remote = match remotes.as_slice() {
        [] => {
            return match pr {
                None => Ok(
                    git(&["rev-parse", "--path-format=absolute", "--git-common-dir"])
                        .map(|d| local_label(&d)),
                ),
                Some(n) => Err(format!(
                    "this repository has no remote to name pull request {n}'s"
                )),
            };
        }
        _ if remotes.iter().any(|r| r == "origin") => "origin",
        [only] => only.as_str(),
        more => return Err(format!("no origin remote among {}", more.join(", "))),
    };
    let url = git(&["remote", "get-url", remote]).unwrap_or_default();
    owner_name(&url)
        .map(Some)
        .ok_or_else(|| format!("the {remote} remote's URL {url:?} names no OWNER/NAME"))
}

/// The commit a plan of HEAD is reviewed against, where HEAD left: its branch's upstream
/// (unless that is the branch's own copy on a remote, which holds the branch's pushed commits,
/// not its base), else the default branch: origin/HEAD's target, origin/main, main,
/// origin/master, master, the first that shares a commit with HEAD.
fn git_base() -> Option<String> {
    let upstream = git(&["symbolic-ref", "-q", "--short", "HEAD"]).and_then(|branch| {
        let merge = git(&["config", &format!("branch.{branch}.merge")])?;
        (merge != format!("refs/heads/{branch}")).then(|| "@{upstream}".to_string())
    });
    let origin_head = git(&["symbolic-ref", "-q", "refs/remotes/origin/HEAD"]);
    upstream
        .into_iter()
        .chain(origin_head)
        .chain(
            [
                "refs/remotes/origin/main",
                "refs/heads/main",
                "refs/remotes/origin/master",
                "refs/heads/master",
            ]
            .map(String::from),
        )
        .find_map(|r| git(&["merge-base", &format!("{r}^{{commit}}"), "HEAD"]))
}

/// Puts the flags' facts over the input's; the repository falls back to `GH_REPO`. A plan
/// made inside the repository takes what it is not told from git, and says why what it could
/// not take is missing.
fn fill(facts: &mut PrFacts, args: &Args) -> RepoFacts {
    let set = |slot: &mut Option<String>, v: &Option<String>| {
        if v.is_some() {
            slot.clone_from(v);
        }
    };
    if args.pr.is_some() {
        facts.pr = args.pr;
    }
    set(&mut facts.repo, &args.repo);
    if facts.repo.is_none() {
        facts.repo = gh_repo_env();
    }
    set(&mut facts.head, &args.head);
    set(&mut facts.base, &args.base);
    let mut found = RepoFacts {
        no_repo: None,
        no_head: None,
    };
    if args.plan {
        if facts.repo.is_none() {
            match git_repo(facts.pr) {
                Ok(repo) => facts.repo = repo,
                Err(why) => found.no_repo = Some(why),
            }
        }
        let at_head = git(&["rev-parse", "--verify", "-q", "HEAD^{commit}"]);
        if facts.head.is_none() {
            facts.head.clone_from(&at_head);
            if at_head.is_none() && git(&["rev-parse", "--git-dir"]).is_some() {
                found.no_head = Some("HEAD has no commit yet".into());
            }
        }
        // The base of HEAD only: another head's is not where HEAD's branch left.
        if facts.base.is_none() && at_head.is_some() && facts.head == at_head {
            facts.base = git_base();
        }
    }
    set(&mut facts.kind, &args.kind);
    facts.g10_hold |= args.g10_hold;
    found
}

/// Every fact a plan made inside a repository lacks, each with why git could not give it and
/// how to give it, in one line (outside one, the planner's own message says to run inside).
fn plan_lacks(facts: &PrFacts, found: &RepoFacts) -> Option<String> {
    let mut lacks = Vec::new();
    if facts.repo.is_none()
        && let Some(why) = &found.no_repo
    {
        lacks.push(format!(
            "the repository (--repo OWNER/NAME, or GH_REPO): {why}"
        ));
    }
    if facts.head.is_none()
        && let Some(why) = &found.no_head
    {
        lacks.push(format!("the head commit (--head SHA): {why}"));
    }
    (!lacks.is_empty()).then(|| format!("a plan needs {}", lacks.join("; and ")))
}

/// Writes one value as a JSON line. Serialising first keeps a write error an `io::Error`, so a
/// closed pipe stays a quiet exit.
fn emit<T: serde::Serialize>(out: &mut impl Write, value: &T, pretty: bool) -> Result<()> {
    let mut bytes = if pretty {
        serde_json::to_vec_pretty(value)?
    } else {
        serde_json::to_vec(value)?
    };
    bytes.push(b'\n');
    out.write_all(&bytes)?;
    Ok(())
}

pub fn run(args: Args) -> Result<ExitCode> {
    let rules = load_rules(args.rules.as_deref())?;
    if let Some(what) = &args.is {
        // Refuse a name that means nothing before waiting on standard input.
        let flags: Vec<String> = rules.flags().map(str::to_string).collect();
        if !IS_NAMES.contains(&what.as_str()) && !flags.contains(what) {
            bail!(
                "--is {what}: not one of {}, {}",
                IS_NAMES.join(", "),
                flags.join(", ")
            );
        }
    }
    let policy = if args.plan || args.print_policy || args.policy.is_some() {
        Some(load_policy(args.policy.as_deref())?)
    } else {
        None
    };
    let mut out = std::io::BufWriter::new(crate::engine::output::stdout());
    if args.print_rules || args.print_policy {
        if args.print_rules {
            emit(&mut out, &rules.table, true)?;
        }
        if let Some(policy) = policy.filter(|_| args.print_policy) {
            emit(&mut out, &policy, true)?;
        }
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    let format = if args.numstat {
        FactsInput::Numstat
    } else if args.gh {
        FactsInput::Gh
    } else if args.facts {
        FactsInput::Facts
    } else {
        FactsInput::Detect
    };
    let (name, bytes) = crate::records::facts::read_input(args.input.as_deref().unwrap_or("-"))?;
    let mut facts = crate::records::facts::parse(&name, &bytes, format)?;
    drop(bytes);
    let found = fill(&mut facts, &args);
    if args.print_facts {
        emit(&mut out, &facts, false)?;
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    let cls = classify_pr(&facts, &rules);
    if let Some(what) = &args.is {
        let yes = is(&cls, what)?;
        // `--is` answers like grep: 0 yes, 1 no.
        let status = if yes {
            exit_status::PASS
        } else {
            exit_status::FAIL
        };
        return Ok(ExitCode::from(status));
    }
    if args.plan
        && let Some(lacks) = plan_lacks(&facts, &found)
    {
        bail!("{lacks}");
    }
    let plan = match &policy {
        Some(policy) if args.plan => Some(plan_panel(
            &cls,
            policy,
            Headroom {
                opus: !args.no_opus,
            },
        )?),
        _ => None,
    };
    if args.text {
        out.write_all(crate::records::printable::shown(&text(&cls, plan.as_ref())).as_bytes())?;
    } else {
        emit(&mut out, &cls, false)?;
        if let Some(plan) = &plan {
            emit(&mut out, plan, false)?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// A few paths, then how many more.
fn some_paths(paths: &[String]) -> String {
    const SHOWN: usize = 3;
    let mut s = paths[..paths.len().min(SHOWN)].join(", ");
    if paths.len() > SHOWN {
        let _ = write!(s, ", +{} more", paths.len() - SHOWN);
    }
    s
}

/// What the g10 class asks of the panel, and why this PR is in it.
fn g10_meaning(cls: &PrClass) -> String {
    let why: Vec<String> = cls
        .reasons
        .iter()
        .map(|r| match r.as_str() {
            "unread" => "its size is unread".to_string(),
            "large" => format!("it changes more than {} lines", cls.large_lines),
            "g10-hold" => "a G10 hold is held".to_string(),
            flag => format!("it touches {flag} paths, which are strict"),
        })
        .collect();
    format!(
        "g10 is the strict class ({}): its panel passes the g10 bar only on a MERGE with no \
         degraded member, an opus correctness member and the adversary's MERGE",
        why.join("; ")
    )
}

/// The short summary `--text` writes.
pub fn text(cls: &PrClass, plan: Option<&PanelPlan>) -> String {
    let mut s = String::new();
    write_class(&mut s, cls);
    write_size(&mut s, cls);
    write_flags(&mut s, cls);
    if let Some(plan) = plan {
        write_plan(&mut s, plan);
    }
    s
}

/// The summary's first lines: the PR, its class and why, and what g10 means.
fn write_class(s: &mut String, cls: &PrClass) {
    let mut title = match (&cls.repo, cls.pr) {
        (Some(r), Some(n)) => format!("{r}#{n}"),
        (Some(r), None) => r.clone(),
        (None, Some(n)) => format!("#{n}"),
        (None, None) => "the diff".into(),
    };
    if let Some(h) = &cls.head {
        let _ = write!(title, " at {}", h.chars().take(8).collect::<String>());
    }
    let why = if cls.reasons.is_empty() {
        String::new()
    } else {
        format!(" ({})", cls.reasons.join(", "))
    };
    let _ = writeln!(s, "{title}: {}{why}", cls.class.as_str());
    if cls.class == Class::G10 {
        let _ = writeln!(s, "  {}", g10_meaning(cls));
    }
}

/// The summary's size lines: the changed lines counted, or why they are unread, and the
/// binary files.
fn write_size(s: &mut String, cls: &PrClass) {
    let files = match cls.file_count {
        1 => "1 file".to_string(),
        n => format!("{n} files"),
    };
    match (cls.changed_lines, cls.generated_lines) {
        (Some(n), Some(g)) => {
            let _ = writeln!(
                s,
                "  {n} changed lines in {files} ({g} generated left out); {}",
                if cls.large {
                    format!("large (past {})", cls.large_lines)
                } else {
                    format!("not large ({} or fewer)", cls.large_lines)
                }
            );
        }
        _ if cls.list_incomplete => {
            let _ = writeln!(
                s,
                "  size unread: the list holds {files}, fewer than the PR changes (gh lists at \
                    most 100; classify from git diff --numstat)"
            );
        }
        _ => {
            let _ = writeln!(
                s,
                "  size unread in {files}: no line counts for {}",
                some_paths(&cls.unread_paths)
            );
        }
    }
    if !cls.binary_paths.is_empty() {
        let _ = writeln!(
            s,
            "  binary: {} (files of no lines, as GitHub counts them)",
            some_paths(&cls.binary_paths)
        );
    }
}

/// The summary's flag lines: the touch flags with their paths, the symbolic links and the
/// security slice.
fn write_flags(s: &mut String, cls: &PrClass) {
    let touched: Vec<String> = cls
        .touches
        .iter()
        .filter(|(_, p)| !p.is_empty())
        .map(|(f, p)| format!("{f} ({})", some_paths(p)))
        .collect();
    let _ = writeln!(
        s,
        "  touches: {}",
        if touched.is_empty() {
            "nothing flagged".to_string()
        } else {
            touched.join("; ")
        }
    );
    if !cls.links.is_empty() {
        let links: Vec<String> = cls
            .links
            .iter()
            .map(|p| crate::records::printable::inline(p).into_owned())
            .collect();
        let _ = writeln!(
            s,
            "  symbolic links: {} (a reviewer's checkout holds each as a plain file with its \
                target's text)",
            some_paths(&links)
        );
    }
    if let Some(slice) = &cls.security_slice {
        let guard = if slice.guard_paths.is_empty() {
            "kind security".to_string()
        } else {
            some_paths(&slice.guard_paths)
        };
        let _ = writeln!(
            s,
            "  security slice (advisory): {} lines past {}; {guard}",
            slice.lines, slice.cap
        );
    }
}

/// The summary's plan: its size and spend, then one aligned line per member.
fn write_plan(s: &mut String, plan: &PanelPlan) {
    let _ = writeln!(
        s,
        "plan: {} member{}, about {} points{}",
        plan.members.len(),
        if plan.members.len() == 1 { "" } else { "s" },
        plan.spend_estimate,
        if plan.headroom.opus {
            ""
        } else {
            "; no opus headroom"
        }
    );
    let w = |f: fn(&crate::records::plan::Member) -> usize| {
        plan.members.iter().map(f).max().unwrap_or(0)
    };
    let (ws, wp, wt) = (
        w(|m| m.shape.len()),
        w(|m| m.profile.len()),
        w(|m| m.seat.len()),
    );
    for m in &plan.members {
        let mut line = format!(
            "  {:ws$}  {:wp$}  {:wt$}  {}",
            m.shape,
            m.profile,
            m.seat,
            if m.blocking { "blocking" } else { "advisory" }
        );
        if let Some(from) = &m.downgraded_from {
            let _ = write!(
                line,
                "  ({} {from})",
                if m.degraded {
                    "degraded from"
                } else {
                    "one opus member: instead of"
                }
            );
        }
        let _ = writeln!(s, "{line}  [{}]", m.reason);
    }
}

#[cfg(test)]
mod tests {
    use super::{local_label, owner_name};

    #[test]
    fn a_remote_url_gives_owner_and_name() {
        for url in [
            "https://github.com/acme/app.git",
            "https://github.com/acme/app",
            "git@github.com:acme/app.git",
            "ssh://git@github.com/acme/app/",
        ] {
            assert_eq!(owner_name(url).as_deref(), Some("acme/app"), "{url}");
        }
        assert_eq!(owner_name("app"), None);
        assert_eq!(owner_name("git@host:app"), None);
    }

    #[test]
    fn a_repository_without_a_remote_is_labelled_after_its_folder() {
        for (dir, label) in [
            ("/src/app/.git", "local/app"),
            ("/src/app/.git/", "local/app"),
            ("/srv/app.git", "local/app"),
            ("/home/me/my app/.git", "local/my-app"),
            ("/.git", "local/repository"),
        ] {
            assert_eq!(local_label(dir), label, "{dir}");
        }
    }
}

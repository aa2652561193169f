//! The real CLIs as pull-request reviewers, run as a user runs them: `git diff --numstat |
//! pr-classify --plan`, then `panel-judge --contract pr --plan plan.json --repo REPO |
//! panel-tally --pr`, each CLI through its built-in reviewer row against the stand-in model
//! server, which plays the reviewer ([`Script`]): it asks the CLI, through the tools the CLI
//! offers, to read the changed file and to search for a symbol, reads the results, then answers.
//!
//! - a verdict block after those calls is `ok` and the panel says MERGE (exit 0);
//! - a FIX_FIRST with a `path:LINE — what` finding is exit 1 with the finding in the report;
//! - a block with no investigative call is `depth-floor`;
//! - a misaimed block (another head) is corrected by resuming the session that read the code:
//!   the server sees the correction arrive with the earlier conversation (its tool results and
//!   the misaimed block), and the member is `ok`, `"correction": "resumed"`;
//! - an opus model the server refuses is `model-refused` in the CLI's own words, and the member
//!   runs once more at its sonnet profile, degraded.
//!
//! The depth floor is read from the event stream the real CLI writes: each run asserts that the
//! tool calls our code read from it are exactly the calls the server scripted, so a CLI whose
//! stream format moves fails here. Also: every CLI in verdict mode against a refused model is
//! `model-refused` (the words each prints are checked against its row's rule).
//!
//! Gated like the other real-CLI tests (`PANEL_REAL_CLI=0` skips them). The table in docs/testing.md is
//! rendered from [`REVIEWERS`] and [`REFUSED`]:
//!
//!     UPDATE_GENERATED=1 cargo test --test real real_review

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::mockserver::{MockServer, Mode, Script, ScriptCall};
use crate::real_cli::real_cli;
use crate::real_judge::case;
use crate::sealed::{Kind, args_for, checkout_in, kind_of};
use crate::util::git;
use crate::util::{TempDir, bin, run_with_stdin};

/// The file the PR changes, and the symbol a reviewer searches for.
const CHANGED: &str = "src/lib.rs";
const SYMBOL: &str = "fn one";

/// A repository whose head commit (message `note`) changes [`CHANGED`], checked out at its
/// base: `(repo, base, head)`.
pub(crate) fn pr_repo_at(root: &Path, note: &str) -> (PathBuf, String, String) {
    pr_repo_with(root, note, "")
}

/// [`pr_repo_at`], the head's change adding `comment` (a line of its own) when not empty.
pub(crate) fn pr_repo_with(root: &Path, note: &str, comment: &str) -> (PathBuf, String, String) {
    let repo = root.join("repo");
    std::fs::create_dir_all(repo.join("src")).unwrap();
    git(&repo, &["-c", "init.defaultBranch=main", "init", "-q"]);
    std::fs::write(repo.join(CHANGED), "pub fn one() -> u32 { 1 }\n").unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-qm", "base"]);
    let base = git(&repo, &["rev-parse", "HEAD"]);
    let comment = match comment {
        "" => String::new(),
        c => format!("// {c}\n"),
    };
    std::fs::write(
        repo.join(CHANGED),
        format!("{comment}pub fn one() -> u32 {{ 2 }}\n"),
    )
    .unwrap();
    git(&repo, &["commit", "-qam", note]);
    let head = git(&repo, &["rev-parse", "HEAD"]);
    git(&repo, &["checkout", "-q", &base]);
    (repo, base, head)
}

/// What the scripted reviewer does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Play {
    /// Reads and searches, then MERGE.
    Merge,
    /// Reads and searches, then FIX_FIRST with one finding.
    FixFirst,
    /// MERGE without a single call.
    Blind,
    /// Reads and searches, then a block naming another head; the correction gets a good one.
    Misaimed,
    /// The opus seat's model is refused; at the sonnet seat it reads, searches, MERGE.
    OpusRefused,
}

/// Each play, its record's status (and correction), and panel-tally's exit status.
const PLAYS: [(Play, &str, &str, i32); 5] = [
    (Play::Merge, "read + search, MERGE", "ok", 0),
    (Play::FixFirst, "FIX_FIRST `path:LINE — what`", "ok", 1),
    (Play::Blind, "no investigative call", "depth-floor", 3),
    (
        Play::Misaimed,
        "misaimed block",
        "ok, correction resumed",
        0,
    ),
    (
        Play::OpusRefused,
        "opus refused",
        "ok at sonnet, degraded",
        0,
    ),
];

/// A CLI as a reviewer: its seats for the plan's two profiles (the opus one is refused by the
/// server in [`Play::OpusRefused`]) and the word in the opus seat's model the server refuses.
struct Reviewer {
    harness: &'static str,
    sonnet: &'static str,
    opus: &'static str,
}

const REVIEWERS: [Reviewer; 2] = [
    Reviewer {
        harness: "claude",
        sonnet: "claude:sonnet",
        opus: "claude:opus",
    },
    Reviewer {
        harness: "codex",
        sonnet: "codex:mock-model",
        opus: "codex:mock-opus",
    },
];

fn block(verdict: &str, head: &str) -> String {
    let tail = match verdict {
        "MERGE" => "CI-policy: unchanged\n".to_string(),
        _ => format!(
            "Defect class: wrong constant\nFindings:\n- {CHANGED}:1 — one() returns 2, not 1\n"
        ),
    };
    format!(
        "I read {CHANGED} and searched for `{SYMBOL}`.\n\nVerdict: {verdict}\nPR: acme/app#7\nHead: {head}\n{tail}"
    )
}

/// The words of the correction, as the brief writes them.
const CORRECTION: &str = "Your previous reply was refused";

/// The script of a play: a read of the changed file, then a search for the symbol, each
/// through the tool of that kind the CLI offers (its shell where it has no such tool).
fn script(play: Play, head: &str) -> Script {
    let verdict = if play == Play::FixFirst {
        "FIX_FIRST"
    } else {
        "MERGE"
    };
    let good = block(verdict, head);
    let (final_text, when) = match play {
        Play::Misaimed => (
            block("MERGE", &"f".repeat(40)),
            vec![(CORRECTION.to_string(), good)],
        ),
        _ => (good, Vec::new()),
    };
    Script {
        final_text: Some(final_text),
        when,
        plan: Box::new(move |tools, body| {
            if play == Play::Blind {
                return Vec::new();
            }
            let checkout = checkout_in(&body.to_string()).unwrap_or_default();
            let file = checkout.join(CHANGED).display().to_string();
            let offered = |kind: Kind| tools.iter().find(|(n, _)| kind_of(n) == Some(kind));
            let call = |label: &str, tool: &str, args: Value| ScriptCall {
                label: label.into(),
                tool: tool.into(),
                args,
            };
            let read = match (offered(Kind::Read), offered(Kind::Shell)) {
                (Some((n, s)), _) => call("read", n, args_for(s, Kind::Read, &file, "")),
                (None, Some((n, s))) => call(
                    "read",
                    n,
                    args_for(s, Kind::Shell, "", &format!("cat {CHANGED}")),
                ),
                _ => return Vec::new(),
            };
            let search = match (offered(Kind::Grep), offered(Kind::Shell)) {
                (Some((n, _)), _) => Some(call(
                    "search",
                    n,
                    json!({"pattern": SYMBOL, "path": checkout.display().to_string()}),
                )),
                (None, Some((n, s))) => Some(call(
                    "search",
                    n,
                    args_for(s, Kind::Shell, "", &format!("grep -rn '{SYMBOL}' src")),
                )),
                // Claude under --bare keeps Read alone: the search is a second read.
                _ => Some(call("search", &read.tool, read.args.clone())),
            };
            vec![vec![read], search.into_iter().collect()]
        }),
    }
}

/// One play's world: the user's HOME and variables for the CLI, the model server, the
/// repository and the plan pr-classify made of its diff.
struct Stage {
    server: MockServer,
    _tmp: TempDir,
    root: PathBuf,
    repo: PathBuf,
    head: String,
    plan: PathBuf,
    home: PathBuf,
    env: Vec<(&'static str, String)>,
    bindir: PathBuf,
}

impl Stage {
    fn new(r: &Reviewer, play: Play, bindir: &Path) -> Stage {
        let server = MockServer::start();
        let tmp = TempDir::new(&format!("real-review-{}-{play:?}", r.harness));
        let root = tmp.path().canonicalize().unwrap();
        let home = root.join("home");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(root.join("tmp")).unwrap();
        let env = (case(r.harness).user)(&home, &server.url());
        let (repo, base, head) = pr_repo_at(&root, "head");
        // As a user plans it: the diff's numbers through pr-classify, with the seats of a
        // policy file.
        let policy = root.join("policy.json");
        let mut policy_text = json!({"seats": {"bd-reviewer": r.sonnet, "reviewer": r.opus}});
        if play == Play::OpusRefused {
            // The one member at the opus profile, whose sonnet profile is bd-reviewer.
            policy_text["roles"] = json!({"standard": "reviewer", "g10": "reviewer"});
        }
        let policy_text = policy_text.to_string();
        std::fs::write(&policy, policy_text).unwrap();
        let numstat = git(&repo, &["diff", "--numstat", &base, &head]);
        let mut classify = Command::new(bin("pr-classify"));
        classify
            .args(["--numstat", "--plan", "--repo", "acme/app", "--pr", "7"])
            .args(["--head", &head, "--base", &base, "--policy"])
            .arg(&policy);
        let out = run_with_stdin(&mut classify, format!("{numstat}\n").as_bytes());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let plan = root.join("plan.json");
        std::fs::write(&plan, &out.stdout).unwrap();
        Stage {
            server,
            _tmp: tmp,
            root,
            repo,
            head,
            plan,
            home,
            env,
            bindir: bindir.to_path_buf(),
        }
    }

    fn panel_judge(&self) -> Output {
        let mut c = Command::new(bin("panel-judge"));
        c.args(["--contract", "pr", "--plan"])
            .arg(&self.plan)
            .arg("--repo")
            .arg(&self.repo)
            .args(["--timeout", "180", "--out"])
            .arg(self.root.join("run"));
        let env = self.env.iter().map(|(k, v)| (*k, v.as_str()));
        let tmp = self.root.join("tmp");
        crate::util::as_a_user(&mut c, &self.bindir, (&self.home, &tmp), env);
        c.output().unwrap()
    }

    fn panel_tally(&self, records: &[u8]) -> Output {
        let mut cmd = Command::new(bin("panel-tally"));
        cmd.args(["--pr", "--plan"]).arg(&self.plan);
        run_with_stdin(&mut cmd, records)
    }
}

/// Runs one play of one CLI and checks everything it promises.
fn play(r: &Reviewer, bindir: &Path, play: Play) {
    let s = Stage::new(r, play, bindir);
    s.server.set_script(script(play, &s.head));
    if play == Play::OpusRefused {
        s.server.refuse_model("opus");
    }
    let out = s.panel_judge();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    let what = format!("{} {play:?}", r.harness);
    assert_eq!(out.status.code(), Some(0), "{what}: {stderr}");
    let rec: Value = serde_json::from_str(stdout.lines().next().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{what}: {e}: {stdout}\n{stderr}"));
    let issued = s.server.issued();
    let offered = issued.iter().filter(|i| i.offered).count();
    let debug = format!("{what}: {rec}\nissued: {issued:?}\nstderr: {stderr}");
    // The calls our code read from the CLI's event stream are the calls the server scripted:
    // a CLI whose stream format moved reads none and fails here.
    let calls = rec["toolCalls"].as_array().unwrap();
    assert_eq!(calls.len(), offered, "{debug}");
    assert_eq!(
        offered,
        issued.len(),
        "a call of a tool not offered: {debug}"
    );
    if play != Play::Blind {
        assert_eq!(offered, 2, "{debug}");
        // The tools really ran in the checkout: their results carry the changed line.
        let results = s.server.tool_results();
        for i in &issued {
            let r = results.iter().find(|r| r.n == i.n);
            assert!(
                r.is_some_and(|r| r.text.contains("fn one() -> u32 { 2 }")),
                "{debug}\nresult of {}: {r:?}",
                i.call.label
            );
        }
    }
    let tally = s.panel_tally(stdout.as_bytes());
    let report = String::from_utf8_lossy(&tally.stdout);
    match play {
        Play::Merge | Play::Misaimed | Play::OpusRefused => {
            assert_eq!(
                (&rec["status"], &rec["verdict"]),
                (&json!("ok"), &json!("MERGE")),
                "{debug}"
            );
            assert_eq!(tally.status.code(), Some(0), "{debug}\n{report}");
        }
        Play::FixFirst => {
            assert_eq!(
                (&rec["status"], &rec["verdict"]),
                (&json!("ok"), &json!("FIX_FIRST")),
                "{debug}"
            );
            assert_eq!(tally.status.code(), Some(1), "{debug}\n{report}");
            assert!(report.contains(&format!("{CHANGED}:1")), "{report}");
            assert!(report.contains("one() returns 2, not 1"), "{report}");
        }
        Play::Blind => {
            assert_eq!(rec["status"], "depth-floor", "{debug}");
            assert_eq!(tally.status.code(), Some(3), "{debug}\n{report}");
        }
    }
    match play {
        Play::Misaimed => {
            assert_eq!(
                (&rec["corrected"], &rec["correction"]),
                (&json!(true), &json!("resumed")),
                "{debug}"
            );
            // The proof it resumed: the correction reached the model with the conversation
            // before it, the results of the calls and the misaimed block.
            let bodies: Vec<String> = s
                .server
                .generations()
                .iter()
                .map(|g| g.body.to_string())
                .collect();
            let correction: Vec<&String> =
                bodies.iter().filter(|b| b.contains(CORRECTION)).collect();
            assert!(!correction.is_empty(), "{debug}");
            for b in correction {
                assert!(b.contains("_pnl_0") && b.contains("_pnl_1"), "{debug}\n{b}");
                assert!(b.contains(&"f".repeat(40)), "{debug}\n{b}");
                // The correction alone, not the brief again after the history.
                assert_eq!(b.matches("checked out at ").count(), 1, "{debug}\n{b}");
            }
        }
        Play::OpusRefused => {
            assert_eq!(rec["degraded"], true, "{debug}");
            assert_eq!(rec["profile"], "bd-reviewer", "{debug}");
            assert_eq!(rec["seat"], r.sonnet, "{debug}");
            // The opus launch was refused in the CLI's own words: its row's rule read them.
            let member = rec["member"].as_str().unwrap();
            let first = s.root.join("run").join(member).join("attempt-1");
            let said = std::fs::read_to_string(first.join("stdout")).unwrap_or_default()
                + &std::fs::read_to_string(first.join("stderr")).unwrap_or_default();
            assert!(said.contains("opus"), "{debug}\n{said}");
            assert_eq!(rec["launches"], 2, "{debug}");
        }
        _ => assert_eq!(rec["corrected"], false, "{debug}"),
    }
}

fn reviewer(harness: &str) {
    let r = REVIEWERS.iter().find(|r| r.harness == harness).unwrap();
    let Some(exe) = real_cli(harness) else {
        return;
    };
    let bindir = exe.parent().unwrap();
    for (p, ..) in PLAYS {
        play(r, bindir, p);
    }
}

#[test]
fn claude_reviewer() {
    reviewer("claude");
}

#[test]
fn codex_reviewer() {
    reviewer("codex");
}

// ---------------------------------------------------------------- refused models, verdict mode

/// What each CLI's verdict judge is when the server refuses its model.
const REFUSED: [(&str, &str); 8] = [
    ("claude", "model-refused"),
    ("codex", "model-refused"),
    ("copilot", "model-refused"),
    ("opencode", "model-refused"),
    ("gemini", "model-refused"),
    ("qwen", "model-refused"),
    ("kimi", "model-refused"),
    ("llm", "model-refused"),
];

fn refused(harness: &str) {
    let Some(exe) = real_cli(harness) else {
        return;
    };
    let want = REFUSED.iter().find(|(h, _)| *h == harness).unwrap().1;
    let run = crate::real_judge::judge(
        case(harness),
        exe.parent().unwrap(),
        Mode::ModelRefused,
        60.0,
    );
    // Seen with --nocapture: the words each CLI prints for a refused model.
    println!("{harness} said:\n{}", run.said);
    assert_eq!(
        run.record["status"], want,
        "{harness}: {}\n{}\nthe CLI said:\n{}",
        run.record, run.stderr, run.said
    );
    assert!(
        !run.requests.is_empty(),
        "{harness}: never asked the server"
    );
}

#[test]
fn claude_model_refused() {
    refused("claude");
}

#[test]
fn codex_model_refused() {
    refused("codex");
}

#[test]
fn copilot_model_refused() {
    refused("copilot");
}

#[test]
fn opencode_model_refused() {
    refused("opencode");
}

#[test]
fn gemini_model_refused() {
    refused("gemini");
}

#[test]
fn qwen_model_refused() {
    refused("qwen");
}

#[test]
fn kimi_model_refused() {
    refused("kimi");
}

#[test]
fn llm_model_refused() {
    refused("llm");
}

const BEGIN: &str = "<!-- real CLI reviewers: begin (tests/real_review.rs renders it) -->\n";
const END: &str = "<!-- real CLI reviewers: end -->";

/// The table in docs/testing.md of what the reviewer tests hold each real CLI to, rendered from
/// [`REVIEWERS`], [`PLAYS`] and [`REFUSED`].
#[test]
fn readme_says_what_each_real_reviewer_is_held_to() {
    let mut out = String::from("| CLI | mode |");
    for (_, name, ..) in PLAYS {
        out.push_str(&format!(" {name} |"));
    }
    out.push_str(" model refused |\n|---|---|");
    out.push_str(&"---|".repeat(PLAYS.len() + 1));
    out.push('\n');
    for (harness, status) in REFUSED {
        let reviewer = REVIEWERS.iter().any(|r| r.harness == harness);
        if reviewer {
            out.push_str(&format!("| {harness} | pr reviewer |"));
            for (_, _, status, exit) in PLAYS {
                out.push_str(&format!(" {status}, panel-tally exit {exit} |"));
            }
            out.push_str(" — |\n");
        }
        out.push_str(&format!("| {harness} | verdict |"));
        out.push_str(&" — |".repeat(PLAYS.len()));
        out.push_str(&format!(" {status} |\n"));
    }
    crate::util::doc_section(BEGIN, END, &out, "real_review");
}

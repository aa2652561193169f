//! panel-judge against the stand-in harness CLIs (tests/standins), put first on PATH: the
//! lockdown argv, the private folders, closed stdin, and what each misbehaviour becomes.

use crate::util::Checked;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::tool::{Ran, Tool};
use crate::util::{TempDir, bin, files_under, root, stderr, stdout, with_standins};

/// A panel-judge run against stand-ins, with a fake user HOME and a call log.
pub struct Rig {
    pub tmp: TempDir,
}

impl Rig {
    pub fn new(tag: &str) -> Rig {
        let tmp = TempDir::new(tag);
        std::fs::create_dir_all(tmp.path().join("userhome")).unwrap();
        std::fs::create_dir_all(tmp.path().join("log")).unwrap();
        Rig { tmp }
    }

    pub fn user_home(&self) -> PathBuf {
        self.tmp.path().join("userhome")
    }

    pub fn log(&self) -> PathBuf {
        self.tmp.path().join("log")
    }

    /// panel-judge with the stand-ins first on PATH; `env` sets STANDIN_* variables.
    pub fn judge(&self, args: &[&str], env: &[(&str, &str)]) -> Ran {
        Tool::new("panel-judge")
            .standins(&self.log(), &[])
            .args(args)
            .arg(root().join("examples/answer.md"))
            .env("HOME", self.user_home())
            .envs(env.iter().copied())
            .run()
    }

    pub fn calls(&self) -> Vec<Value> {
        std::fs::read_to_string(self.log().join("calls.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

/// The argv a stand-in logged; long arguments it moved into files are read back.
fn argv(call: &Value) -> Vec<String> {
    call["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            let a = a.as_str().unwrap();
            match a.strip_prefix("@file:") {
                Some(path) => std::fs::read_to_string(path).unwrap(),
                None => a.to_string(),
            }
        })
        .collect()
}

fn has_pair(argv: &[String], a: &str, b: &str) -> bool {
    argv.windows(2).any(|w| w[0] == a && w[1] == b)
}

#[test]
fn claude_judges_run_locked_down_in_private_folders() {
    let rig = Rig::new("claude-lockdown");
    // A subscription login in the user's HOME is carried in, and nothing else of it.
    let creds = rig.user_home().join(".claude/.credentials.json");
    std::fs::create_dir_all(creds.parent().unwrap()).unwrap();
    std::fs::write(&creds, "{\"token\":\"t\"}").unwrap();
    std::fs::write(rig.user_home().join(".claude/CLAUDE.md"), "MEMORY").unwrap();
    let before = files_under(&rig.user_home());
    let out = rig.judge(&["--seat", "claude:haiku"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let recs = out.records();
    assert_eq!(recs.len(), 3);
    for r in &recs {
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["verdict"], "breaks");
        assert_eq!(r["family"], "anthropic");
        // What claude sends with the row's system prompt: the prompt and 2,769 bytes of its
        // own, at 4 bytes a token (the stand-in's measure of the real CLI), priced as Haiku 5.5.
        let input = r["usage"]["inputTokens"].as_u64().unwrap();
        assert!((900..1200).contains(&input), "{r}");
        assert!(r["usage"]["costUsd"].as_f64().unwrap() < 0.0002, "{r}");
    }
    let calls = rig.calls();
    assert_eq!(calls.len(), 3);
    let user_home = rig.user_home().display().to_string();
    for c in &calls {
        let a = argv(c);
        assert_eq!(a[0], "-p");
        // Its own part alone (issue 47): what the panel shares is its system prompt file.
        assert!(
            a[1].starts_with("Your lens, and the only question you answer:"),
            "{a:?}"
        );
        assert!(a.contains(&"--system-prompt-file".to_string()), "{a:?}");
        assert!(has_pair(&a, "--model", "haiku"));
        assert!(has_pair(&a, "--tools", ""), "{a:?}");
        // The second wall of claude's own: file tools confined to the working folder.
        assert!(a.contains(&"--restricted".to_string()), "{a:?}");
        assert!(a.contains(&"--no-session-persistence".to_string()));
        assert!(has_pair(&a, "--output-format", "json"));
        let schema: Value =
            serde_json::from_str(&a[a.iter().position(|x| x == "--json-schema").unwrap() + 1])
                .unwrap();
        assert_eq!(
            schema["required"],
            serde_json::json!(["verdict", "reason", "confidence"])
        );
        assert!(
            !a.contains(&"--bare".to_string()),
            "no API key: --bare would drop the login"
        );
        assert_eq!(c["stdin"], "devnull");
        assert_ne!(c["home"].as_str().unwrap(), user_home);
        assert!(!c["cwd"].as_str().unwrap().starts_with(&user_home));
        assert_eq!(c["env"]["DISABLE_TELEMETRY"], "1");
        assert_eq!(c["env"]["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"], "1");
    }
    // Each judge had its own HOME and folder.
    let homes: std::collections::HashSet<&str> =
        calls.iter().map(|c| c["home"].as_str().unwrap()).collect();
    assert_eq!(homes.len(), 3);
    // Nothing landed in the user's HOME; the login copies were not left anywhere.
    assert_eq!(files_under(&rig.user_home()), before);
    let run = PathBuf::from(recs[0]["run"].as_str().unwrap());
    assert!(files_under(&run).iter().all(|f| !f.contains("credentials")));
    for c in &calls {
        assert!(
            !Path::new(c["home"].as_str().unwrap()).exists(),
            "the private HOME is removed"
        );
    }
}

#[test]
fn claude_with_an_api_key_runs_bare() {
    let rig = Rig::new("claude-bare");
    let out = rig.judge(
        &["--seat", "claude:haiku", "--lens", "a=Q?"],
        &[("ANTHROPIC_API_KEY", "k")],
    );
    assert_eq!(out.records()[0]["status"], "ok", "{}", stderr(&out));
    let c = &rig.calls()[0];
    assert!(argv(c).contains(&"--bare".to_string()));
    // Issue 46: "never a live token or key": the key's place holds a placeholder.
    let key = c["env"]["ANTHROPIC_API_KEY"].as_str().unwrap_or_default();
    assert!(key.len() >= 32 && key != "k", "{key}");
}

#[test]
fn codex_judges_answer_through_the_last_message_file_with_stdin_closed() {
    let rig = Rig::new("codex");
    // Outside panel's sandbox, codex keeps its own file walls (inside, see below).
    let out = rig.judge(
        &[
            "--seat",
            "codex:gpt-5.6-luna",
            "--timeout",
            "20",
            "--sandbox",
            "off",
        ],
        &[("STANDIN_VERDICT", "holds")],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let recs = out.records();
    for r in &recs {
        assert_eq!(
            (r["status"].as_str(), r["verdict"].as_str()),
            (Some("ok"), Some("holds")),
            "{r}"
        );
        assert_eq!(r["family"], "openai");
        assert!(r["usage"]["inputTokens"].as_u64().is_some(), "{r}");
    }
    for c in rig.calls() {
        let a = argv(&c);
        assert_eq!(a[0], "exec");
        for flag in [
            "--ephemeral",
            "--skip-git-repo-check",
            "--ignore-rules",
            "--json",
        ] {
            assert!(a.contains(&flag.to_string()), "{flag}: {a:?}");
        }
        // A permission profile, never --sandbox (which would silently override it): commands
        // read the minimal system and codex's installation (the stand-in's folder) only.
        assert!(!a.iter().any(|x| x == "--sandbox" || x == "-s"), "{a:?}");
        assert!(
            has_pair(&a, "-c", "default_permissions=\"panel_judge\""),
            "{a:?}"
        );
        let standins = root().join("tests/standins").canonicalize().unwrap();
        assert!(
            has_pair(
                &a,
                "-c",
                &format!(
                    "permissions.panel_judge.filesystem={{\":minimal\"=\"read\", \"{}\"=\"read\"}}",
                    standins.display()
                )
            ),
            "{a:?}"
        );
        for tool in [
            "shell_tool",
            "unified_exec",
            "view_image",
            "multi_agent",
            "apps",
            "plugins",
        ] {
            assert!(has_pair(&a, "--disable", tool), "{tool}");
        }
        assert!(has_pair(&a, "-c", "web_search=\"disabled\""));
        assert_eq!(c["stdin"], "devnull");
        assert_eq!(
            c["env"]["CODEX_HOME"],
            format!("{}/.codex", c["home"].as_str().unwrap())
        );
        // The answer file is private to the judge (gone with its folders); the run folder
        // keeps a copy.
        let answer = &a[a.iter().position(|x| x == "--output-last-message").unwrap() + 1];
        assert!(!Path::new(answer).exists(), "{answer} outlived the run");
    }
    for r in &recs {
        let kept = Path::new(r["run"].as_str().unwrap())
            .join(r["judge"].as_str().unwrap())
            .join("attempt-1/answer");
        let kept = std::fs::read_to_string(&kept).unwrap();
        assert!(kept.contains(r#""verdict":"holds""#), "{kept}");
    }
    assert!(files_under(&rig.user_home()).is_empty());

    // Inside panel's sandbox codex's own (bubblewrap, which cannot nest in Landlock) gives way:
    // its commands reach only what panel's walls allow.
    if crate::util::landlock() {
        let rig = Rig::new("codex-confined");
        let out = rig.judge(
            &["--seat", "codex:gpt-5.6-luna", "--timeout", "20"],
            &[("STANDIN_VERDICT", "holds")],
        );
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        for c in rig.calls() {
            let a = argv(&c);
            assert!(has_pair(&a, "--sandbox", "danger-full-access"), "{a:?}");
            assert!(
                !a.iter().any(|x| x.starts_with("default_permissions")),
                "{a:?}"
            );
        }
        let recs = out.records();
        assert!(recs.iter().all(|r| r["status"] == "ok"), "{recs:?}");
    }
}

/// What each misbehaviour of a harness becomes, for claude and codex alike.
#[test]
fn every_fault_becomes_its_status() {
    let cases: &[(&str, &str, &str, u64)] = &[
        // mode, claude status, codex status, attempts (claude)
        ("prose", "unreadable", "unreadable", 2),
        ("fence", "ok", "ok", 1),
        ("invalid", "unreadable", "unreadable", 2),
        ("wrongschema", "unreadable", "unreadable", 2),
        ("fail", "failed", "failed", 2),
        ("error0", "failed", "failed", 2),
        ("validfail", "ok", "ok", 1),
        ("usage-limit", "usage-limit", "usage-limit", 1),
        ("usage-limit2", "usage-limit", "usage-limit", 1),
        ("killed", "failed", "failed", 2),
        ("prose-once", "ok", "ok", 2),
    ];
    for (mode, claude_status, codex_status, attempts) in cases {
        for (seat, want) in [
            ("claude:haiku", claude_status),
            ("codex:gpt-5", codex_status),
        ] {
            let rig = Rig::new("faults");
            let out = rig.judge(
                &["--seat", seat, "--lens", "a=Q?", "--timeout", "20"],
                &[("STANDIN_MODE", mode)],
            );
            assert_eq!(
                out.status.code(),
                Some(0),
                "{seat} {mode}: {}",
                stderr(&out)
            );
            let r = &out.records()[0];
            assert_eq!(r["status"], *want, "{seat} {mode}: {r}");
            if seat.starts_with("claude") {
                assert_eq!(r["attempts"], *attempts, "{seat} {mode}: {r}");
            }
            if *want != "ok" {
                assert_eq!(r["verdict"], Value::Null);
                let cause = r["cause"].as_str().unwrap();
                assert!(
                    !cause.is_empty() && !cause.contains('\n'),
                    "{seat} {mode}: {cause:?}"
                );
            }
        }
    }
}

#[test]
fn a_rate_limited_judge_waits_with_backoff_within_its_deadline_then_abstains() {
    let rig = Rig::new("rate");
    let t = Instant::now();
    let out = rig.judge(
        &["--seat", "claude:haiku", "--lens", "a=Q?", "--timeout", "5"],
        &[("STANDIN_MODE", "rate-limit")],
    );
    let r = &out.records()[0];
    assert_eq!(r["status"], "rate-limited", "{r}");
    // Asked at 0 s, 1 s and 3 s; waiting 4 s more would pass the 5 s deadline.
    assert_eq!(r["attempts"], 3, "{r}");
    let took = t.elapsed();
    assert!(
        took >= Duration::from_secs(3) && took < Duration::from_secs(8),
        "{took:?}"
    );
    // Once the limit lifts, the judge answers.
    let rig = Rig::new("rate-once");
    let out = rig.judge(
        &["--seat", "claude:haiku", "--lens", "a=Q?", "--timeout", "5"],
        &[("STANDIN_MODE", "rate-limit-once")],
    );
    let r = &out.records()[0];
    assert_eq!(
        (r["status"].as_str(), r["attempts"].as_u64()),
        (Some("ok"), Some(2)),
        "{r}"
    );
}

#[test]
fn a_flood_of_output_is_kept_whole_and_read_as_unreadable() {
    let rig = Rig::new("flood");
    let out = rig.judge(
        &["--seat", "claude:haiku", "--lens", "a=Q?", "--retries", "0"],
        &[("STANDIN_MODE", "flood")],
    );
    let r = &out.records()[0];
    assert_eq!(r["status"], "unreadable", "{r}");
    assert!(r["excerpt"].as_str().unwrap().len() < 1024);
    let run = PathBuf::from(r["run"].as_str().unwrap());
    let kept = std::fs::metadata(run.join("a/attempt-1/stdout"))
        .unwrap()
        .len();
    assert_eq!(
        kept, 104857600,
        "stdout is kept whole in the run folder, within --max-output"
    );
    let exit: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("a/attempt-1/exit.json")).unwrap())
            .unwrap();
    assert_eq!(
        exit["stdoutBytes"], 104857600u64,
        "every byte is read and counted"
    );
}

#[test]
fn hanging_judges_and_their_grandchildren_are_killed_at_the_deadline() {
    for mode in ["hang", "grandchild"] {
        for seat in ["claude:haiku", "codex:gpt-5"] {
            let rig = Rig::new("hang");
            let mark = crate::util::mark();
            let t = Instant::now();
            let out = rig.judge(
                &["--seat", seat, "--lens", "a=Q?", "--timeout", "1"],
                &[("STANDIN_MODE", mode), ("STANDIN_SLEEP", &mark)],
            );
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "{mode} {seat}: {:?}",
                t.elapsed()
            );
            let r = &out.records()[0];
            assert_eq!(r["status"], "timeout", "{mode} {seat}: {r}");
            assert_eq!(rig.calls().len(), 1, "{mode} {seat}: the stand-in ran");
            let grandchildren = std::fs::read_to_string(rig.log().join("grandchildren"));
            if mode == "grandchild" {
                assert!(grandchildren.is_ok_and(|g| !g.trim().is_empty()));
            }
            // Its sleeps, and its grandchild's, as this machine sees them.
            let left = crate::util::marked(&mark);
            assert!(
                left.is_empty(),
                "{mode} {seat}: {left:?} outlived its judge"
            );
        }
    }
}

/// `bin/judge-panel`, the seed script's replacement: same usage, same report, honest exits.
fn judge_panel(rig: &Rig, candidate: &Path, env: &[(&str, &str)]) -> Ran {
    let bins = bin("panel-judge").parent().unwrap().to_path_buf();
    Tool::at(root().join("bin/judge-panel"))
        .standins(&rig.log(), &[bins])
        .arg(candidate)
        .env("HOME", rig.user_home())
        .env_remove("JUDGE_MODEL")
        .env_remove("JUDGE_SEAT")
        .envs(env.iter().copied())
        .run()
}

#[test]
fn bin_judge_panel_reports_like_the_seed_script_and_exits_honestly() {
    let answer = root().join("examples/answer.md");
    let rig = Rig::new("judge-panel");
    let out = judge_panel(&rig, &answer, &[("JUDGE_MODEL", "sonnet")]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "unanimous breaks: {}",
        stderr(&out)
    );
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "correctness  breaks     IndexError on empty list");
    assert_eq!(lines[3], "");
    assert_eq!(lines[4], "PANEL: unanimous — all 3 say breaks.");
    assert!(lines[5].starts_with("verdicts: "), "{text}");
    assert!(
        rig.calls()
            .iter()
            .all(|c| argv(c).windows(2).any(|w| w == ["--model", "sonnet"]))
    );

    let rig = Rig::new("judge-panel-holds");
    let out = judge_panel(&rig, &answer, &[("STANDIN_VERDICT", "holds")]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));

    // One judge that never answers readably: no decision, exit 3.
    let rig = Rig::new("judge-panel-abstain");
    let out = judge_panel(
        &rig,
        &answer,
        &[
            ("STANDIN_VERDICT", "holds"),
            ("STANDIN_RULES", "Name the input=>prose"),
        ],
    );
    assert_eq!(out.status.code(), Some(3), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("PANEL: 0 breaks / 2 holds, and 1 judge(s) came back unreadable."),
        "{}",
        stdout(&out)
    );
    // The script's line for it: `printf '%-12s %-10s %s\n'` with the empty reason jq gave.
    assert!(
        stdout(&out).contains("\nedges        unreadable \n"),
        "{}",
        stdout(&out)
    );

    // No argument: the script's usage line and exit 2 (bash's ${1:?} would exit 1, "breaks").
    let out = Command::new(root().join("bin/judge-panel"))
        .checked_output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "usage: judge-panel <file-with-the-answer-under-review>\n"
    );
}

/// The seed's script's LENSES, word for word.
const SEED_LENSES: [(&str, &str); 3] = [
    (
        "correctness",
        "Does it do what it claims to do? Wrong logic only — not style, not naming.",
    ),
    (
        "edges",
        "What input breaks it? Empty, null, zero, duplicate, huge, concurrent. Name the input.",
    ),
    (
        "evidence",
        "Is every claim in the answer supported by what is in the answer? Flag anything asserted without support.",
    ),
];

/// The seed: "Limit the tally question to what the thing actually says; you can point where
/// the judge should look by using lenses." DESIGN §4: the default lenses are the seed's "with
/// the seed's own lesson applied", so they are not its words: `bin/judge-panel --help` quotes
/// both sets and says what differs, and JUDGE_SEED_LENSES=1 asks the seed's exact questions.
#[test]
fn bin_judge_panel_says_how_its_questions_differ_from_the_seeds() {
    let out = Command::new(root().join("bin/judge-panel"))
        .arg("--help")
        .checked_output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let help = stdout(&out);
    let ours = [
        "Does it do what it says it does? Judge the logic only: not style, not naming.",
        "Is there an input within what it says it handles (empty, zero, duplicate, huge, concurrent) that breaks it? Name the input. Inputs it never claims to handle do not count.",
        "Is every claim it makes supported by what the text itself shows? Name any claim made without support.",
    ];
    for (i, (name, seed)) in SEED_LENSES.iter().enumerate() {
        assert!(help.contains(&format!("{name:<12} {seed}\n")), "{help}");
        assert!(
            help.contains(&format!("{:<12} {}\n", "", ours[i])),
            "{help}"
        );
    }
    assert!(help.contains("edges no longer names null"), "{help}");

    let answer = root().join("examples/answer.md");
    let asked =
        |rig: &Rig| -> Vec<String> { rig.calls().iter().map(|c| argv(c).join("\n")).collect() };
    // Without it, the questions asked are the ones the help calls ours.
    let rig = Rig::new("judge-panel-our-lenses");
    let out = judge_panel(&rig, &answer, &[("STANDIN_VERDICT", "holds")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for q in ours {
        assert!(asked(&rig).iter().any(|p| p.contains(q)), "{q}");
    }
    let rig = Rig::new("judge-panel-seed-lenses");
    let out = judge_panel(
        &rig,
        &answer,
        &[("JUDGE_SEED_LENSES", "1"), ("STANDIN_VERDICT", "holds")],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let prompts = asked(&rig);
    assert_eq!(prompts.len(), 3, "{prompts:?}");
    for (_, seed) in SEED_LENSES {
        assert!(
            prompts.iter().any(|p| p.contains(seed)),
            "{seed}: {prompts:?}"
        );
    }
}

#[test]
fn the_readme_first_command_runs_offline() {
    let bins = bin("panel-judge").parent().unwrap().to_path_buf();
    let out = Command::new("bash")
        .args([
            "-c",
            "JUDGE_SEAT=replay:examples/answers.json bin/judge-panel examples/answer.md",
        ])
        .current_dir(root())
        .env(
            "PATH",
            format!(
                "{}:{}",
                bins.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .checked_output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("PANEL: unanimous — all 3 say breaks."),
        "{}",
        stdout(&out)
    );
}

/// panel-fleet's errors before any panel runs: one line and exit 2, never 1 ("a panel failed").
#[test]
fn bin_panel_fleet_refuses_with_one_line_and_exit_2() {
    crate::util::need("parallel");
    let tmp = TempDir::new("fleet-errors");
    let cand = tmp.path().join("a.md");
    std::fs::write(&cand, "It returns the sum.\n").unwrap();
    let (cand, under_file) = (
        cand.display().to_string(),
        format!("{}/out", cand.display()),
    );
    let bins = bin("panel-judge").parent().unwrap().display().to_string();
    let path = format!("{bins}:{}", std::env::var("PATH").unwrap_or_default());
    for (args, want) in [
        (
            vec![cand.as_str()],
            "panel-fleet: -o OUT is needed".to_string(),
        ),
        (vec!["-o", "out"], "panel-fleet: no candidates".to_string()),
        (
            vec!["-o", "out", "-a", "missing.txt"],
            "panel-fleet: -a missing.txt: cannot read".to_string(),
        ),
        (
            vec!["-o", under_file.as_str(), cand.as_str()],
            format!(
                "panel-fleet: -o {under_file}: cannot create directory '{cand}': Not a directory"
            ),
        ),
    ] {
        let out = Command::new(root().join("bin/panel-fleet"))
            .args(&args)
            .current_dir(tmp.path())
            .env("PATH", &path)
            // mkdir's own words, without the quotes of a UTF-8 locale.
            .env("LC_ALL", "C")
            .checked_output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert_eq!(stderr(&out), format!("{want}\n"), "{args:?}");
        assert!(stdout(&out).is_empty());
    }
}

/// SIGINT or SIGTERM to panel-fleet alone (as `kill` sends it; Ctrl-C reaches parallel too):
/// parallel ends every running panel, each judge is recorded as interrupted, nothing is left
/// running, and the fleet exits 130 or 143 at once, not after the panels' deadline. A judge that
/// ignores SIGTERM takes panel-judge its grace to end, which parallel must wait for. Two
/// ways it failed:
/// - A fleet started with SIGINT ignored (a background job of a script; a test run started so)
///   ran its panels to their deadline on SIGINT. It now stops as any other.
/// - On a loaded machine panel-judge got the KILL of parallel's stop sequence (5 s after the
///   SIGINT) in the middle of its own shutdown: records cut short, judges ended by their
///   supervisors after the fleet had exited. Here panel-judge gets no CPU for 8 s after the
///   signal, the extreme of a loaded machine; it is now given the time to finish.
/// - SIGHUP (a closed terminal or ssh session, sent to the fleet's whole process group) killed
///   the fleet at once, untallied, while parallel, whose own SIGHUP waits for the running
///   panels, ran them to their deadline. A signal to the group must reach the forwarder too,
///   and a second signal during the stop changes neither its speed nor its status.
/// - A second signal once parallel was gone, while the fleet counted what was decided (its
///   traps already reset), killed the fleet: no status but the signal's. A fast machine hit it
///   with a second signal 0.3 s after the first; here it comes during the tally itself.
#[test]
fn bin_panel_fleet_stopped_by_a_signal_ends_every_panel() {
    use panel::internals::GRACE;
    use std::os::unix::process::CommandExt;
    use wait_timeout::ChildExt;
    #[derive(PartialEq)]
    enum How {
        Plain,
        /// Started with SIGINT ignored.
        Ignoring,
        /// Each panel's panel-judge stopped (SIGSTOP) for 8 s from the signal.
        Starved,
        /// The signal to the fleet's whole process group, as a terminal's hangup sends it.
        Group,
        /// The signal, then SIGTERM to the whole group a moment later.
        Twice,
        /// The signal, then SIGTERM to the whole group while the fleet tallies.
        Late,
    }
    crate::util::need("parallel");
    let deaf = r#"exec:trap '' TERM; echo started >> "$STANDIN_LOG/calls.jsonl"; sleep 300 & wait"#;
    for (signal, code, seat, how) in [
        ("TERM", 143, "claude:haiku", How::Plain),
        ("INT", 130, "claude:haiku", How::Plain),
        ("INT", 130, deaf, How::Plain),
        ("INT", 130, "claude:haiku", How::Ignoring),
        ("INT", 130, "claude:haiku", How::Starved),
        ("HUP", 129, "claude:haiku", How::Plain),
        ("HUP", 129, "claude:haiku", How::Group),
        ("TERM", 143, "claude:haiku", How::Group),
        ("INT", 130, "claude:haiku", How::Twice),
        ("INT", 130, "claude:haiku", How::Late),
    ] {
        let tmp = TempDir::new(&format!("fleet-{signal}"));
        let log = tmp.path().join("log");
        std::fs::create_dir_all(tmp.path().join("c")).unwrap();
        std::fs::create_dir_all(&log).unwrap();
        let names = ["1.md", "2.md", "3.md"];
        for n in names {
            std::fs::write(tmp.path().join("c").join(n), format!("Candidate {n}.\n")).unwrap();
        }
        // For Late, a panel-tally first on PATH that says it started, then takes its time.
        let slow = tmp.path().join("slow");
        let tallying = tmp.path().join("tallying");
        std::fs::create_dir_all(&slow).unwrap();
        let wrapper = slow.join("panel-tally");
        std::fs::write(
            &wrapper,
            format!(
                "#!/bin/sh\n: > '{}'\nsleep 3\nexec '{}' \"$@\"\n",
                tallying.display(),
                bin("panel-tally").display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(
            &wrapper,
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        let mut more = vec![bin("panel-judge").parent().unwrap().to_path_buf()];
        if how == How::Late {
            more.insert(0, slow);
        }
        let fleet = root().join("bin/panel-fleet");
        // perl, as parallel needs it anyway: ignore SIGINT, then become the fleet (same pid).
        let mut cmd = if how == How::Ignoring {
            let mut c = Command::new("perl");
            c.args(["-e", "$SIG{INT} = 'IGNORE'; exec { $ARGV[0] } @ARGV or die"])
                .arg(&fleet);
            c
        } else {
            Command::new(&fleet)
        };
        // A group of its own, as a shell's job: the group's signals reach it alone.
        let mut child = with_standins(&mut cmd, &log, &more)
            .process_group(0)
            .current_dir(tmp.path())
            .args(["-o", "out", "-j", "2"])
            .args(names.map(|n| format!("c/{n}")))
            .args(["--", "--seat", seat, "--timeout", "120"])
            .env("STANDIN_MODE", "hang")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let case = format!(
            "{signal} {seat}{}",
            match how {
                How::Plain => "",
                How::Ignoring => " (SIGINT ignored at the start)",
                How::Starved => " (panel-judge starved for 8 s)",
                How::Group => " (to the whole process group)",
                How::Twice => " (then TERM to the whole process group)",
                How::Late => " (then TERM to the whole process group during the tally)",
            }
        );
        // Two panels of three judges each are waiting on their model.
        let calls = || {
            std::fs::read_to_string(log.join("calls.jsonl"))
                .unwrap_or_default()
                .lines()
                .count()
        };
        assert!(
            crate::util::wait_until(Duration::from_secs(60), || calls() >= 6),
            "{case}: the first two panels' judges did not all start within 60 s ({} did)",
            calls()
        );
        assert_eq!(calls(), 6, "{case}: the first two panels' judges started");
        let marker = format!("STANDIN_LOG={}", log.display());
        // A panel's process group, the shell of `panel-fleet --one` and its panel-judge (the
        // judges' supervisors lead groups of their own); stopped, no kernel rule resumes them.
        let mut frozen: Vec<String> = Vec::new();
        if how == How::Starved {
            for p in crate::util::processes_with_env(&marker) {
                let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
                let comm = std::fs::read_to_string(format!("/proc/{p}/comm")).unwrap_or_default();
                // A judge's supervisor, and its jail's first process, are panel-judge too.
                let cmdline = std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
                let supervisor = String::from_utf8_lossy(&cmdline).contains("__panel-supervise");
                let group = stat.rsplit(") ").next().and_then(|f| f.split(' ').nth(2));
                if let Some(group) = group
                    && comm.trim() == "panel-judge"
                    && !supervisor
                    && group != p.to_string()
                {
                    frozen.push(format!("-{group}"));
                }
            }
            assert_eq!(frozen.len(), 2, "{case}: two panels' groups");
        }
        // A group already gone (killed while stopped) takes no CONT.
        let signal_groups = |sig: &str| {
            for g in &frozen {
                let _ = Command::new("kill").args([sig, "--", g]).status();
            }
        };
        signal_groups("-STOP");
        let to_group = |sig: &str| {
            let sent = Command::new("kill")
                .args([&format!("-{sig}"), "--", &format!("-{}", child.id())])
                .status()
                .unwrap();
            assert!(sent.success(), "{case}: kill -{sig} to the group");
        };
        if how == How::Group {
            to_group(signal);
        } else {
            crate::util::kill(child.id(), signal);
        }
        if how == How::Twice {
            std::thread::sleep(Duration::from_millis(300));
            to_group("TERM");
        }
        if how == How::Late {
            assert!(
                crate::util::wait_until(Duration::from_secs(30), || tallying.exists()),
                "{case}: the fleet never tallied"
            );
            to_group("TERM");
        }
        if !frozen.is_empty() {
            std::thread::sleep(Duration::from_secs(8));
            signal_groups("-CONT");
        }
        // Well before the panels' deadline (120 s): parallel's own 15 s before its TERM, which
        // a machine running two suites at once stretched past 30 s.
        let ended = child.wait_timeout(Duration::from_secs(60)).unwrap();
        if ended.is_none() {
            // Everything of the fleet's, so that its pipes close and the test fails now.
            for p in crate::util::processes_with_env(&marker) {
                let _ = Command::new("kill")
                    .args(["-KILL", &p.to_string()])
                    .status();
            }
        }
        let out = child.wait_with_output().unwrap();
        assert!(
            ended.is_some(),
            "{case}: still running 60 s after the signal: {}",
            stderr(&out)
        );
        assert_eq!(out.status.code(), Some(code), "{case}: {}", stderr(&out));
        assert_eq!(
            stderr(&out).lines().last(),
            Some(
                "panel-fleet: stopped by a signal; the panels it ended are undecided: rerun to run them"
            ),
            "{case}"
        );
        // panel-judge ended its judges before it exited; a judge's supervisor would end what
        // is left within its grace, were panel-judge killed first.
        let left = || crate::util::processes_with_env(&marker);
        crate::util::wait_until(GRACE * 2, || left().is_empty());
        assert_eq!(left(), Vec::<u32>::new(), "{case}");
        // The panels it ended kept their judges' records, as interrupted, and look undecided.
        for n in &names[..2] {
            let dir = tmp.path().join("out").join(n);
            assert!(!dir.join("records.jsonl").exists(), "{case} {n}");
            let part = std::fs::read_to_string(dir.join("records.jsonl.part")).unwrap();
            let statuses: Vec<Value> = part
                .lines()
                .map(|l| serde_json::from_str::<Value>(l).unwrap()["status"].clone())
                .collect();
            assert_eq!(statuses, ["interrupted"; 3], "{case} {n}");
        }
        assert_eq!(calls(), 6, "{case}: the third panel never started");
    }
}

/// `bin/panel-fleet -S`: each panel runs on "another machine" through GNU parallel's ssh, the
/// candidate goes there with --transferfile (rsync over that ssh) and the panel's folder comes
/// back. The ssh is the real one, to an OpenSSH server the test starts on 127.0.0.1 whose
/// login is a folder of its own (tests/sshd.rs); where sshd cannot start, the stand-in
/// (tests/fixtures/fleet/ssh), whose remote is such a folder too, and the ledger says so.
#[test]
fn bin_panel_fleet_runs_panels_over_ssh_and_brings_them_back() {
    crate::util::need("parallel");
    crate::util::need("rsync");
    let tmp = TempDir::new("fleet-ssh");
    let (local, remote) = (tmp.path().join("local"), tmp.path().join("remote-home"));
    std::fs::create_dir_all(&remote).unwrap();
    let bins = bin("panel-judge").parent().unwrap().to_path_buf();
    let remote_path = crate::sshd::remote_path(&bins);
    const GROUP: &str = "ssh fleet";
    let sshd = match crate::sshd::start(&tmp.path().join("sshd"), &remote, &remote_path) {
        Ok(sshd) => {
            crate::util::ran(GROUP);
            Some(sshd)
        }
        Err(why) => {
            crate::util::skipped(
                GROUP,
                &why,
                &format!("fleet test: a stand-in ssh, not a real sshd: {why}"),
            );
            None
        }
    };
    let ssh_bin = sshd
        .as_ref()
        .map_or_else(|| root().join("tests/fixtures/fleet"), |s| s.bin.clone());
    let ssh_log = tmp.path().join("ssh.log");
    std::fs::create_dir_all(local.join("cands")).unwrap();
    std::fs::create_dir_all(tmp.path().join("userhome")).unwrap();
    let names = ["a.md", "b.md", "c.md", "d.md"];
    for (name, text) in names.iter().zip([
        "It returns the sum of a list.",
        "It is WRONG about empty lists.",
        "It returns 0 for an empty list.",
        "Its judges answer UNREADABLE prose.",
    ]) {
        std::fs::write(local.join("cands").join(name), format!("{text}\n")).unwrap();
    }
    let standin_log = tmp.path().join("standin-log");
    std::fs::create_dir_all(&standin_log).unwrap();
    let fleet = |rules: &str| {
        let mut cmd = Command::new(root().join("bin/panel-fleet"));
        let more = [ssh_bin.clone(), bins.clone(), root().join("bin")];
        // Relative paths, as panel-fleet asks of a run across machines.
        with_standins(&mut cmd, &standin_log, &more)
            .current_dir(&local)
            .args(["-o", "out", "-j", "2", "-S", "fakehost"])
            .args(names.map(|n| format!("cands/{n}")))
            .args(["--", "--seat", "claude:haiku", "--timeout", "60"])
            .env("HOME", tmp.path().join("userhome"))
            .env("FAKE_SSH_HOME", &remote)
            .env("FAKE_SSH_LOG", &ssh_log)
            // As on a machine with no login shell around the tests: the stand-in ssh gives
            // the remote command SHELL, as sshd does (parallel's remote worker needs it).
            .env_remove("SHELL")
            .env("STANDIN_VERDICT", "holds")
            .env("STANDIN_RULES", rules)
            .stdin(Stdio::null());
        cmd.checked_output().unwrap()
    };
    let log = || std::fs::read_to_string(&ssh_log).unwrap_or_default();
    let records = |name: &str| -> Vec<Value> {
        let text = std::fs::read_to_string(local.join("out").join(name).join("records.jsonl"))
            .unwrap_or_else(|e| panic!("{name}: no records came back: {e}"));
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };

    // d's judges never answer readably: its panel decides nothing (and runs again below).
    let out = fleet("WRONG=>breaks\nUNREADABLE=>prose");
    assert_eq!(out.status.code(), Some(1), "b breaks: {}", stderr(&out));
    for name in names {
        let recs = records(name);
        assert_eq!(recs.len(), 3, "{name}: one record per lens");
        assert!(recs.iter().all(|r| r["type"] == "verdict"), "{name}");
        // The run folder came back beside the records, and the panel ran in the remote home.
        assert!(
            local
                .join("out")
                .join(name)
                .join("run/verdicts.jsonl")
                .is_file()
        );
        assert!(
            recs.iter().all(|r| r["run"]
                .as_str()
                .unwrap()
                .starts_with(remote.to_str().unwrap())),
            "{name}: {recs:?}"
        );
    }
    let tally = std::fs::read_to_string(local.join("out/tally.jsonl")).unwrap();
    let tallies: Vec<Value> = tally
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for (name, outcome) in names
        .iter()
        .zip([Some(true), Some(false), Some(true), None])
    {
        let seal = records(name)[0]["candidate"].clone();
        let t = tallies
            .iter()
            .find(|t| t["type"] == "tally" && t["candidate"] == seal)
            .unwrap_or_else(|| panic!("{name}: not in the tally: {tally}"));
        assert_eq!(t["decided"], outcome.is_some(), "{name}: {t}");
        if let Some(passed) = outcome {
            assert_eq!(t["passed"], passed, "{name}: {t}");
        }
    }
    assert_eq!(stdout(&out), tally);
    // The stand-in ssh carried everything: the candidates there, the panels, their folders back.
    let calls = log();
    assert!(calls.lines().all(|l| l.starts_with("fakehost ")), "{calls}");
    assert!(calls.contains("rsync --server "), "{calls}");
    assert!(calls.contains("rsync --server --sender "), "{calls}");
    assert_eq!(calls.matches("GNU_Parallel_worker").count(), names.len());
    // The first run of d retried its unreadable judges.
    let retried = |run: &str| {
        local
            .join("out/d.md")
            .join(run)
            .join("correctness/attempt-2")
            .exists()
    };
    assert!(retried("run"));

    // A rerun skips the three decided panels; d runs again, over ssh, and its first run is
    // kept as run.1, not merged into the new one.
    let out = fleet("WRONG=>breaks");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("1 panels to run, 3 already decided"),
        "{}",
        stderr(&out)
    );
    let again = log()[calls.len()..].to_string();
    assert_eq!(again.matches("GNU_Parallel_worker").count(), 1, "{again}");
    assert!(again.contains("d.md") && !again.contains("a.md"), "{again}");
    assert!(records("d.md").iter().all(|r| r["verdict"] == "holds"));
    assert!(retried("run.1") && !retried("run"));
    assert!(!local.join("out/d.md/run.2").exists());
    let tally = std::fs::read_to_string(local.join("out/tally.jsonl")).unwrap();
    assert_eq!(
        tally
            .lines()
            .filter(|l| l.contains("\"decided\":true"))
            .count(),
        4
    );

    // A decided panel about a file that has changed since was skipped, its old verdict kept
    // for the new text. It runs again; its old run is kept as run.1.
    std::fs::write(local.join("cands/c.md"), "It is WRONG now.\n").unwrap();
    let calls = log();
    let out = fleet("WRONG=>breaks");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("1 panels to run, 3 already decided"),
        "{}",
        stderr(&out)
    );
    let again = log()[calls.len()..].to_string();
    assert!(again.contains("c.md") && !again.contains("d.md"), "{again}");
    assert!(records("c.md").iter().all(|r| r["verdict"] == "breaks"));
    assert!(local.join("out/c.md/run.1/verdicts.jsonl").is_file());
}

/// Issue 45: "the guide never says how to point codex at an endpoint". Each line of the guide's
/// endpoint block, run as written (its variables set, a dry run), gives the judge that
/// endpoint in the form its CLI reads: codex's as a provider of its configuration.
#[test]
fn the_guides_endpoint_commands_reach_each_cli_as_it_reads_them() {
    let guide = std::fs::read_to_string(root().join("docs/guide.md")).unwrap();
    let block = guide
        .split_once("<!-- endpoints -->")
        .and_then(|(_, rest)| rest.split_once("<!-- /endpoints -->"))
        .map(|(block, _)| block)
        .expect("the guide's endpoint block");
    let tmp = TempDir::new("endpoints");
    let lines: Vec<&str> = block
        .lines()
        .filter(|l| l.contains("panel-judge"))
        .collect();
    assert_eq!(lines.len(), 6, "{block}");
    for line in lines {
        let words: Vec<&str> = line.split_whitespace().collect();
        let at = words.iter().position(|w| *w == "panel-judge").unwrap();
        let vars: Vec<(&str, &str)> = words[..at]
            .iter()
            .map(|w| w.split_once('=').unwrap())
            .collect();
        let mut cmd = Command::new(bin("panel-judge"));
        with_standins(&mut cmd, &tmp.path().join("log"), &[]);
        for (k, v) in &vars {
            cmd.env(k, v);
        }
        let args = &words[at + 1..words.len() - 1];
        let out = cmd
            .args(args)
            .args(["--dry-run", "--lens", "a=Q?"])
            .arg(root().join("examples/answer.md"))
            .checked_output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{line}: {}", stderr(&out));
        let said = String::from_utf8_lossy(&out.stdout);
        let (name, url) = vars.iter().find(|(k, _)| k.ends_with("_BASE_URL")).unwrap();
        let reaches = match args[1].split(':').next().unwrap() {
            "codex" => said.contains(&format!("base_url=\"{url}\"")),
            // Carried by name into the judge's otherwise cleared environment.
            _ => said.contains(&format!("${{{name}+\"{name}=${name}\"}}")),
        };
        assert!(reaches, "{line}: {said}");
    }
}

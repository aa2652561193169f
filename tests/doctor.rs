//! `panel-judge --doctor` and `--list-harnesses` on this machine: each harness's program, its
//! version (a hanging or flooding one costs its deadline alone, and is ended), a login found by
//! where it is and never by its value, the walls; the harness table on a terminal, and its JSON
//! unchanged through a pipe.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::util::{
    Checked, TempDir, Tty, auto_walls, bin, mark, marked, on_a_terminal, root, stderr, stdout,
    wait_until, with_standins,
};

/// A key no output may show.
const SECRET: &str = "sk-ant-doctor-0123456789-secret";
/// A refresh token no output may show.
const SECRET_RT: &str = "rt-doctor-0123456789-secret";

/// A HOME with codex's login file, user rows in `$XDG_CONFIG_HOME/panel/harnesses/` whose
/// programs are in `bin/`: one missing, one that hangs, one that floods, one whose version line
/// carries control characters and the key, were it given one.
struct Machine {
    tmp: TempDir,
    hang: String,
}

impl Machine {
    fn new(tag: &str) -> Machine {
        let tmp = TempDir::new(tag);
        let home = tmp.path().join("home");
        // Logins as their CLIs keep them: codex's ChatGPT login expired (its access token's
        // `exp` passed), gemini's Google login live for an hour, kimi's expired with no refresh
        // token, qwen's OAuth login (which qwen itself refuses in print mode).
        let write = |rel: &str, text: &str| {
            let path = home.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        // {"exp": 1000000000} (2001)
        let jwt = "eyJhbGciOiJub25lIn0.eyJleHAiOjEwMDAwMDAwMDB9.sig";
        write(
            ".codex/auth.json",
            &json!({"tokens": {"id_token": jwt, "access_token": jwt, "refresh_token": SECRET_RT,
                "account_id": "a"}})
            .to_string(),
        );
        let hour = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64
            + 3_600_000;
        write(
            ".gemini/oauth_creds.json",
            &json!({"access_token": "ya29.x", "refresh_token": SECRET_RT, "expiry_date": hour})
                .to_string(),
        );
        write(
            ".kimi/credentials/kimi-code.json",
            &json!({"access_token": "at", "refresh_token": "", "expires_at": 1000.0}).to_string(),
        );
        write(
            ".qwen/oauth_creds.json",
            &json!({"access_token": "at"}).to_string(),
        );
        let bin = tmp.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let hang = mark();
        let script = |name: &str, body: &str| {
            use std::os::unix::fs::PermissionsExt;
            let file = bin.join(name);
            std::fs::write(&file, format!("#!/bin/sh\n{body}\n")).unwrap();
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
        };
        script("slow-cli", &format!("exec sleep {hang}"));
        script("flood-cli", "exec yes flood");
        script(
            "odd-cli",
            r#"printf 'odd 1.0 %s\033[2K\r\a\n' "$ANTHROPIC_API_KEY""#,
        );
        let rows = tmp.path().join("config/panel/harnesses");
        std::fs::create_dir_all(&rows).unwrap();
        let row = |name: &str, exe: &str, more: Value| {
            let mut r = json!({"name": name, "executable": exe, "argv": ["{prompt}"]});
            r.as_object_mut()
                .unwrap()
                .extend(more.as_object().unwrap().clone());
            std::fs::write(rows.join(format!("{name}.json")), r.to_string()).unwrap();
        };
        row(
            "absent",
            "no-such-cli-for-doctor",
            json!({"install": "pip install absent-cli"}),
        );
        row("slow", "slow-cli", json!({}));
        row("flood", "flood-cli", json!({}));
        row(
            "odd",
            "odd-cli",
            json!({"passEnv": ["ANTHROPIC_API_KEY"], "lockdown": "no\x1b[31m tools\nat all"}),
        );
        Machine { tmp, hang }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(bin("panel-judge"));
        cmd.args(args);
        with_standins(&mut cmd, &self.tmp.path().join("log"), &[self.bin()])
            .env("HOME", self.tmp.path().join("home"))
            .env("XDG_CONFIG_HOME", self.tmp.path().join("config"))
            .env("ANTHROPIC_API_KEY", SECRET)
            .stdin(Stdio::null());
        cmd
    }

    fn bin(&self) -> PathBuf {
        self.tmp.path().join("bin")
    }

    /// Runs the doctor; its output and how long it took.
    fn doctor(&self, args: &[&str]) -> (Output, Duration) {
        let started = Instant::now();
        let out = self.command(args).checked_output().unwrap();
        (out, started.elapsed())
    }
}

fn no_secret(out: &Output) {
    for (what, text) in [("stdout", stdout(out)), ("stderr", stderr(out))] {
        for secret in [SECRET, SECRET_RT] {
            assert!(!text.contains(secret), "a login's value on {what}: {text}");
        }
    }
}

/// Issue 25: "a status command, e.g. `panel-judge --doctor`, saying for each harness whether it
/// is installed, its version, whether a login or key is present (never printing it), and
/// whether the sandbox can be made on this kernel, as a table on a terminal and JSON with
/// `--json`".
#[test]
fn doctor_records_each_harness_and_the_walls() {
    let m = Machine::new("doctor-json");
    let (out, took) = m.doctor(&["--doctor", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    no_secret(&out);
    // A harness that hangs costs its own deadline (5 s), not the run: all are asked at once.
    assert!(took < Duration::from_secs(15), "took {took:?}");
    let recs: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let of = |name: &str| {
        recs.iter()
            .find(|r| r["type"] == "harness-status" && r["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {recs:?}"))
    };
    let claude = of("claude");
    assert_eq!(claude["installed"], true);
    assert_eq!(
        claude["path"],
        root().join("tests/standins/claude").display().to_string()
    );
    assert_eq!(claude["version"], "2.1.332 (Claude Code)");
    assert_eq!(claude["login"], true);
    assert_eq!(
        claude["loginUsed"],
        json!({"kind": "api-key", "at": "$ANTHROPIC_API_KEY", "usable": true, "refresh": false,
            "judgeHolds": "placeholder", "note": "sent as x-api-key; --bare is added"})
    );
    let home = m.tmp.path().join("home");
    // Issue 35: "`--doctor` tells the truth about logins: per harness, which login it found
    // (kind and place, never a value), whether it is usable through the walls, when its access
    // token expires, whether panel can refresh it, and the one command that fixes a login panel
    // cannot use."
    let codex = of("codex");
    assert_eq!(codex["version"], "codex-cli 0.171.0");
    let used = &codex["loginUsed"];
    assert_eq!(used["kind"], "chatgpt");
    assert_eq!(
        used["at"],
        home.join(".codex/auth.json").display().to_string()
    );
    assert_eq!(
        (&used["usable"], &used["refresh"], &used["expires"]),
        (
            &json!(true),
            &json!(true),
            &json!("2001-09-09T01:46:40.000000Z")
        )
    );
    assert_eq!(
        used["state"],
        "expired: panel refreshes it once before the judges start"
    );
    let gemini = &of("gemini")["loginUsed"];
    assert_eq!(
        (&gemini["kind"], &gemini["usable"]),
        (&json!("google"), &json!(true))
    );
    assert!(gemini["expires"].is_string(), "{gemini}");
    let kimi = &of("kimi")["loginUsed"];
    assert_eq!(
        (
            &kimi["kind"],
            &kimi["usable"],
            &kimi["refresh"],
            &kimi["fix"]
        ),
        (
            &json!("kimi-code"),
            &json!(false),
            &json!(false),
            &json!("kimi login")
        )
    );
    let qwen = &of("qwen")["loginUsed"];
    assert_eq!(
        (&qwen["kind"], &qwen["usable"]),
        (&json!("qwen-oauth"), &json!(false))
    );
    assert!(
        qwen["state"].as_str().unwrap().contains("refuses"),
        "{qwen}"
    );
    assert!(qwen["fix"].as_str().unwrap().contains("/auth"), "{qwen}");
    // Unverified rows say so.
    let cursor = of("cursor");
    assert_eq!(cursor["login"], false);
    // A user's row whose program is missing says so, and how to install it.
    let absent = of("absent");
    assert_eq!(absent["installed"], false);
    assert_eq!(absent["version"], Value::Null);
    assert_eq!(absent["install"], "pip install absent-cli");
    let slow = of("slow");
    assert_eq!(slow["installed"], true);
    assert_eq!(slow["version"], Value::Null);
    assert_eq!(
        slow["versionNote"],
        "no answer to --version in 5 s: stopped"
    );
    assert_eq!(
        of("flood")["versionNote"],
        "--version printed over 64 KiB: stopped"
    );
    // Its version line, escaped; the key was not in its environment.
    assert_eq!(of("odd")["version"], "odd 1.0 \\x1b[2K\\x0d\\x07");
    assert_eq!(of("odd")["loginUsed"]["at"], "$ANTHROPIC_API_KEY");
    // Nothing of the hanging one is left running.
    assert!(
        wait_until(Duration::from_secs(3), || marked(&m.hang).is_empty()),
        "left running: {:?}",
        marked(&m.hang)
    );
    // Last, the walls, as a run's records say them.
    let walls = recs.last().unwrap();
    assert_eq!(walls["type"], "sandbox-status", "{walls}");
    assert_eq!(walls["mode"], "auto");
    assert_eq!(walls["walls"], auto_walls());
    assert_eq!(
        walls["landlockAbi"].is_u64(),
        auto_walls().contains("landlock-abi-"),
        "{walls}"
    );
    assert_eq!(walls["jail"], auto_walls().starts_with("jail"), "{walls}");
}

#[test]
fn doctor_shows_a_table_that_says_what_is_missing() {
    let m = Machine::new("doctor-text");
    let (out, _) = m.doctor(&["--doctor"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    no_secret(&out);
    let text = stdout(&out);
    assert!(!text.contains('\x1b') && !text.contains('\r'), "{text:?}");
    let lines: Vec<&str> = text.lines().collect();
    let head = lines[0];
    assert!(
        head.starts_with("HARNESS") && head.contains("INSTALLED") && head.contains("LOGIN"),
        "{text}"
    );
    let row = |name: &str| {
        *lines
            .iter()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no {name} in {text}"))
    };
    // Columns sized to the cells: each row's version starts under VERSION.
    let at = head.find("VERSION").unwrap();
    assert!(
        row("claude")[at..].starts_with("2.1.332 (Claude Code)  "),
        "{text}"
    );
    assert!(
        row("odd")[at..].starts_with("odd 1.0 \\x1b[2K\\x0d\\x07  "),
        "{text}"
    );
    assert!(
        row("claude").ends_with("  api-key ($ANTHROPIC_API_KEY, usable)"),
        "{text}"
    );
    assert!(
        row("codex")
            .ends_with("  chatgpt (~/.codex/auth.json, expires 2001-09-09T01:46:40.000000Z)"),
        "{text}"
    );
    assert!(
        row("kimi").ends_with("  kimi-code (~/.kimi/credentials/kimi-code.json, not usable)"),
        "{text}"
    );
    assert!(row("agy").ends_with("  none"), "{text}");
    // Beneath the table, what each login needs said: kimi's cannot be used, and its fix.
    assert!(
        text.contains("\nkimi login: expired, and panel cannot refresh it; fix: kimi login\n"),
        "{text}"
    );
    assert!(row("absent").contains("not found"), "{text}");
    assert!(
        row("slow").contains("no answer to --version in 5 s: stopped"),
        "{text}"
    );
    assert!(
        text.contains("; not installed: absent\n  absent: pip install absent-cli\n"),
        "{text}"
    );
    assert!(
        text.contains(&format!("\nsandbox (--sandbox auto): {}\n", auto_walls())),
        "{text}"
    );
    assert!(text.contains("\n  jail: "), "{text}");
    // The mode given is the one asked about.
    let (out, _) = m.doctor(&["--doctor", "--sandbox", "off", "--json"]);
    let last = stdout(&out).lines().last().unwrap().to_string();
    let walls: Value = serde_json::from_str(&last).unwrap();
    assert_eq!(walls["mode"], json!("off"));
    // Issue 36: with --sandbox off, the limits a judge still gets, and those it does not.
    let said = walls["walls"].as_str().unwrap();
    assert!(
        said.starts_with("off; limits: ") && said.contains("disk 1 GiB watched"),
        "{said}"
    );
}

#[test]
fn doctor_refuses_bad_input_in_one_line() {
    let m = Machine::new("doctor-bad");
    for args in [
        &["--doctor", "--harness-file", "/no/such/rows.json"][..],
        &["--json"],
        &["--doctor", "--list-harnesses"],
    ] {
        let out = m.command(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stdout(&out).is_empty(), "{args:?}");
    }
    let out = m
        .command(&["--doctor", "--harness-file", "/no/such/rows.json"])
        .output()
        .unwrap();
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
}

/// The completions read the names from `--list-harnesses --json` through a pipe: that JSON
/// stays as it was, and gives the same bytes on a terminal.
#[test]
fn list_harnesses_is_the_same_json_through_a_pipe_and_with_json_on_a_terminal() {
    let m = Machine::new("list-json");
    let piped = m
        .command(&["--list-harnesses", "--json"])
        .checked_output()
        .unwrap();
    assert_eq!(piped.status.code(), Some(0), "{}", stderr(&piped));
    let rows: Value = serde_json::from_slice(&piped.stdout).unwrap();
    let mut want = serde_json::to_string_pretty(&rows).unwrap();
    want.push('\n');
    assert_eq!(stdout(&piped), want);
    assert!(stdout(&piped).contains("\n    \"name\": \"claude\",\n"));
    let (out, shown) = on_a_terminal(&mut m.command(&["--list-harnesses", "--json"]), Tty::Stdout);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(shown.replace("\r\n", "\n"), want);
}

/// Issue 25: "`--list-harnesses` as a table on a terminal", and through a pipe the same table.
#[test]
fn list_harnesses_is_a_table_on_a_terminal_and_through_a_pipe() {
    let m = Machine::new("list-table");
    let (out, shown) = on_a_terminal(&mut m.command(&["--list-harnesses"]), Tty::Stdout);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let shown = shown.replace("\r\n", "\n");
    let lines: Vec<&str> = shown.lines().collect();
    let head = lines[0];
    assert!(head.starts_with("NAME  "), "{shown}");
    let row = |name: &str| {
        *lines
            .iter()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no {name} in {shown}"))
    };
    // Every row of the table, built-in and the user's, in its order.
    let piped = m.command(&["--list-harnesses", "--json"]).output().unwrap();
    let rows: Vec<Value> = serde_json::from_slice(&piped.stdout).unwrap();
    let names: Vec<&str> = lines
        .iter()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    let want: Vec<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, want, "{shown}");
    assert!(
        want.ends_with(&["absent", "flood", "odd", "slow"]),
        "{want:?}"
    );
    let col = |h: &str| head.find(h).unwrap();
    let standin = root().join("tests/standins/claude").display().to_string();
    assert_eq!(&row("claude")[col("EXECUTABLE")..][..6], "claude");
    assert!(
        row("claude")[col("ON PATH")..].starts_with(&standin),
        "{shown}"
    );
    assert!(
        row("claude")[col("FAMILY")..].starts_with("anthropic "),
        "{shown}"
    );
    assert!(
        row("cursor")[col("VERIFIED")..].starts_with("no "),
        "{shown}"
    );
    assert!(
        row("absent")[col("ON PATH")..].starts_with("not found "),
        "{shown}"
    );
    assert!(
        row("replay")[col("EXECUTABLE")..].starts_with("- "),
        "{shown}"
    );
    // A user's row is user data: its control characters and newline are shown escaped.
    assert!(
        row("odd").ends_with("  no\\x1b[31m tools\\x0aat all"),
        "{shown:?}"
    );
    assert!(!shown.contains('\x1b'), "{shown:?}");
    assert!(stdout(&out).is_empty());
    // Through a pipe (`| less`), the same table: JSON only with --json.
    let piped = m.command(&["--list-harnesses"]).checked_output().unwrap();
    assert_eq!(piped.status.code(), Some(0), "{}", stderr(&piped));
    assert_eq!(stdout(&piped), shown);
}

/// Issue 35: "`--doctor` tells the truth about logins: per harness, which login it found (kind
/// and place, never a value), whether it is usable through the walls, … and the one command
/// that fixes a login panel cannot use". copilot's: the credential store's token of the account
/// config.json names (asked with secret-tool, here a stand-in), passed over to from a classic
/// `ghp_` token as copilot does; that token alone is not usable, and says why and the fix.
#[test]
fn doctor_tells_which_copilot_login_a_judge_gets() {
    let m = Machine::new("doctor-copilot");
    let home = m.tmp.path().join("home");
    let classic = "ghp_doctor0123456789classic";
    let stored = "gho_doctor0123456789stored";
    let script = |name: &str, body: &str| {
        use std::os::unix::fs::PermissionsExt;
        let file = m.bin().join(name);
        std::fs::write(&file, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    script(
        "secret-tool",
        &format!(
            r#"[ "$*" = "{}" ] && echo {stored}"#,
            "lookup service copilot-cli username https://github.com:octocat"
        ),
    );
    // Only the stand-ins and this machine's own folder: no gh, no other secret-tool.
    let path = format!(
        "{}:{}",
        root().join("tests/standins").display(),
        m.bin().display()
    );
    let copilot = |env: &[(&str, &str)]| -> (Value, String) {
        let mut json = m.command(&["--doctor", "--json"]);
        json.env("PATH", &path).envs(env.iter().copied());
        let out = json.checked_output().unwrap();
        let mut text = m.command(&["--doctor"]);
        text.env("PATH", &path).envs(env.iter().copied());
        let shown = text.checked_output().unwrap();
        for o in [&out, &shown] {
            assert_eq!(o.status.code(), Some(0), "{}", stderr(o));
            for s in [classic, stored] {
                assert!(
                    !stdout(o).contains(s) && !stderr(o).contains(s),
                    "{}",
                    stdout(o)
                );
            }
        }
        let rec = stdout(&out)
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find(|r| r["name"] == "copilot")
            .unwrap();
        (rec, stdout(&shown))
    };
    // A classic token alone: found, not usable, the fix said.
    let (rec, text) = copilot(&[("COPILOT_GITHUB_TOKEN", classic)]);
    let used = &rec["loginUsed"];
    assert_eq!(used["kind"], "env-token", "{rec}");
    assert_eq!(used["at"], "$COPILOT_GITHUB_TOKEN");
    assert_eq!(used["usable"], false);
    assert_eq!(used["fix"], "copilot login");
    let state = used["state"].as_str().unwrap();
    assert!(
        state.contains("begins ghp_") && state.contains("passes over"),
        "{rec}"
    );
    let looked = rec["lookedAt"].to_string();
    assert!(looked.contains("(gh is not on PATH)"), "{looked}");
    let line = text.lines().find(|l| l.starts_with("copilot ")).unwrap();
    assert!(
        line.contains("env-token ($COPILOT_GITHUB_TOKEN, not usable)"),
        "{text}"
    );
    assert!(
        text.contains("copilot login: its token begins ghp_"),
        "{text}"
    );
    assert!(text.contains("; fix: copilot login\n"), "{text}");
    // copilot login's account in the credential store: copilot passes the classic token over,
    // and so does panel.
    std::fs::create_dir_all(home.join(".copilot")).unwrap();
    std::fs::write(
        home.join(".copilot/config.json"),
        concat!(
            "// This file is managed automatically.\n",
            r#"{"lastLoggedInUser": {"host": "https://github.com", "login": "octocat"}}"#,
        ),
    )
    .unwrap();
    let (rec, text) = copilot(&[("COPILOT_GITHUB_TOKEN", classic)]);
    let used = &rec["loginUsed"];
    assert_eq!(used["kind"], "credential-store", "{rec}");
    assert_eq!(
        used["at"],
        "`secret-tool lookup service copilot-cli username https://github.com:octocat`"
    );
    assert_eq!(
        (&used["usable"], &used["fix"]),
        (&json!(true), &Value::Null)
    );
    assert_eq!(used["state"], Value::Null, "{rec}");
    assert!(
        used["note"]
            .as_str()
            .unwrap()
            .contains("never the credential store")
    );
    assert!(
        text.contains("credential-store (`secret-tool lookup"),
        "{text}"
    );
}

/// Issue 45: `--doctor` "waits 5 s on `gemini --version` with nothing on screen": on a terminal
/// it says how many CLIs answered and which it waits for, and clears the line when done.
#[test]
fn the_doctor_says_which_cli_it_waits_for() {
    let m = Machine::new("doctor-waits");
    let (out, shown) = on_a_terminal(&mut m.command(&["--doctor"]), Tty::Stderr);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    assert!(
        shown.contains("panel-judge: asking each CLI its version: ")
            && shown.contains("answered; waiting for slow"),
        "{shown:?}"
    );
    assert!(shown.ends_with("\r\x1b[2K"), "{shown:?}");
}

/// Issue 45: "A CLI that is installed but not logged in is launched anyway … `--doctor` knew
/// (`LOGIN none`) but names no fix". A claude and a gemini seat without a login are not
/// launched: each fails in one line naming where it looked and what logs in; the doctor names
/// it for every installed CLI without one; a CLI that logs in its own way is launched.
#[test]
fn a_cli_without_a_login_is_not_launched_and_the_doctor_names_what_logs_in() {
    let tmp = TempDir::new("no-login");
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let run = |args: &[&str], own: Option<&str>| {
        let mut cmd = Command::new(bin("panel-judge"));
        with_standins(&mut cmd, &tmp.path().join("log"), &[])
            .env_remove("PANEL_LOGIN_ELSEWHERE")
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", tmp.path().join("config"))
            .env("XDG_DATA_HOME", tmp.path().join("data"))
            .args(["--no-history"])
            .args(args)
            .stdin(Stdio::null());
        for v in [
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_AUTH_TOKEN",
            "CLAUDE_CODE_OAUTH_TOKEN",
        ] {
            cmd.env_remove(v);
        }
        for v in ["CLAUDE_CONFIG_DIR", "GEMINI_API_KEY", "GOOGLE_API_KEY"] {
            cmd.env_remove(v);
        }
        if let Some(rows) = own {
            cmd.env("PANEL_LOGIN_ELSEWHERE", rows);
        }
        cmd.checked_output().unwrap()
    };
    let seats = [
        "--seat",
        "claude:haiku",
        "--seat",
        "gemini",
        "--allow-correlated",
        "--lens",
        "a=Q?",
        "--retries",
        "2",
    ];
    let mut args = seats.to_vec();
    args.push("examples/answer.md");
    let out = run(&args, None);
    let calls = || std::fs::read_to_string(tmp.path().join("log/calls.jsonl")).unwrap_or_default();
    assert_eq!(calls(), "", "a CLI without a login was launched");
    let recs: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(recs.len(), 2, "{}", stdout(&out));
    // Records come as judges end: found by seat.
    let by = |seat: &str| recs.iter().find(|r| r["seat"] == seat).unwrap();
    for (rec, starts, fix) in [
        (
            by("claude:haiku"),
            "claude has no login (looked for $ANTHROPIC_API_KEY, ",
            "`claude /login`",
        ),
        (
            by("gemini"),
            "gemini has no login (looked for $GEMINI_API_KEY, ~/.gemini/oauth_creds.json)",
            "set GEMINI_API_KEY",
        ),
    ] {
        let cause = rec["cause"].as_str().unwrap();
        assert_eq!(rec["status"], "failed", "{rec}");
        assert_eq!(rec["attempts"], 1, "not asked again: {rec}");
        assert!(cause.starts_with(starts) && cause.contains(fix), "{cause}");
        assert!(!cause.contains('\n'), "{cause}");
    }
    let doctor = run(&["--doctor"], None);
    let text = stdout(&doctor);
    assert!(
        text.contains("claude login: none; to log in: `claude setup-token`, `claude /login`, or set ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN\n"),
        "{text}"
    );
    assert!(text.contains("gemini login: none; to log in: "), "{text}");
    // A CLI that logs in its own way is named, and launched.
    let out = run(&args, Some("claude"));
    assert_eq!(calls().lines().count(), 1, "{}", stdout(&out));
}

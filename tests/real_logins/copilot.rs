//! GitHub Copilot CLI's logins, as measured with copilot 1.0.102: a token in
//! `COPILOT_GITHUB_TOKEN`, `GH_TOKEN` or `GITHUB_TOKEN`; `copilot login`'s token in the system
//! credential store (the Secret Service: a headless gnome-keyring on a session bus the test
//! starts, as a desktop gives it) or, opted in, in `~/.copilot/config.json`; and gh's (`gh auth
//! token`). None of them expires or rotates. A judge gets the token copilot would use in
//! `COPILOT_GITHUB_TOKEN` and nothing else: the user's other accounts, the variables copilot
//! does not use, a classic `ghp_` token and the way to the credential store never reach it.
//!
//! Every call copilot makes is answered over TLS by the stand-ins: `api.github.com`'s
//! `/copilot_internal/user` (whose `endpoints.api` names the model host) and the model host's
//! `/models` by the token service's routes, held to the live token; the model call (OpenAI
//! Responses, as `supported_endpoints` asks) by the model server.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};

use super::{Case, World, check, have};
use crate::mockserver::Mode;
use crate::tokens::Family;

/// The account copilot last logged in with, and another the user has.
const LOGIN: &str = "octocat";
const OTHER: &str = "hubot";

fn copilot_family(login: &str) -> Family {
    Family::new(
        &format!("copilot-{login}"),
        Duration::from_secs(365 * 86_400),
    )
    .prefix("gho_")
    .fixed()
}

/// The token of the user's other account: live too (the user's own copilot asks about every
/// account it has), and never a judge's.
fn other_account(w: &mut World) -> String {
    let other = w.tokens.login(copilot_family(OTHER), false).access;
    w.hidden.push(other.clone());
    other
}

/// The user's GitHub login: its token, live at the stand-ins, which answer what copilot asks
/// before its model call: a `{}` user would do, but its `endpoints.api` names the model host.
fn logged_in(w: &mut World) -> String {
    let t = w.tokens.login(copilot_family(LOGIN), false);
    let (api, telemetry) = (
        "https://api.individual.githubcopilot.com",
        "https://telemetry.individual.githubcopilot.com",
    );
    w.tokens.route(
        "GET",
        "/copilot_internal/user",
        json!({"login": LOGIN, "chat_enabled": true, "copilot_plan": "individual",
            "endpoints": {"api": api, "telemetry": telemetry}}),
    );
    w.tokens.route("GET", "/models", models());
    w.env.push(("COPILOT_AUTO_UPDATE".into(), "false".into()));
    t.access
}

/// Copilot's model list, one model that takes the Responses API.
fn models() -> Value {
    json!({"object": "list", "data": [{
        "id": "gpt-5-mini", "name": "gpt-5-mini", "object": "model", "vendor": "Azure OpenAI",
        "version": "gpt-5-mini", "preview": false, "model_picker_enabled": true,
        "model_picker_category": "versatile", "is_chat_default": true, "is_chat_fallback": true,
        "policy": {"state": "enabled", "terms": ""},
        "billing": {"is_premium": false, "multiplier": 0},
        "supported_endpoints": ["/chat/completions", "/responses"],
        "capabilities": {"family": "gpt-5-mini", "object": "model_capabilities", "type": "chat",
            "tokenizer": "o200k_base",
            "limits": {"max_context_window_tokens": 200000, "max_output_tokens": 64000,
                "max_prompt_tokens": 128000},
            "supports": {"streaming": true, "tool_calls": true, "parallel_tool_calls": true,
                "structured_outputs": true}}}]})
}

/// `~/.copilot/config.json` as copilot writes it: two comment lines, then the accounts, the
/// last one used, and (when the user opted into plaintext) their tokens.
fn config(w: &World, tokens: Option<Value>) {
    let account = |login: &str| json!({"host": "https://github.com", "login": login});
    let mut v = serde_json::Map::new();
    if let Some(t) = tokens {
        v.insert("authTokens".into(), t);
    }
    v.insert(
        "loggedInUsers".into(),
        json!([account(OTHER), account(LOGIN)]),
    );
    v.insert("lastLoggedInUser".into(), account(LOGIN));
    let text = format!(
        "// User settings belong in settings.json.\n// This file is managed automatically.\n{}\n",
        serde_json::to_string_pretty(&v).unwrap()
    );
    w.write(".copilot/config.json", &text);
}

/// `COPILOT_GITHUB_TOKEN`, `GH_TOKEN`, `GITHUB_TOKEN`: the first set is copilot's; here
/// `GH_TOKEN`, with a CI's `GITHUB_TOKEN` beside it that no judge may get.
fn copilot_env_token(w: &mut World, _: bool) {
    let token = logged_in(w);
    w.env.push(("GH_TOKEN".into(), token));
    let actions = "ghs_the-workflow-token-no-judge-gets".to_string();
    w.env.push(("GITHUB_TOKEN".into(), actions.clone()));
    w.hidden.push(actions);
}

/// `copilot login` on a desktop: the token in the Secret Service under copilot's attributes
/// (two items, `…:github` and not), another account's beside it, and a classic token and
/// another in the variables, which copilot ignores for the stored login.
fn copilot_credential_store(w: &mut World, _: bool) {
    let token = logged_in(w);
    let bus = Bus::start(w);
    let other = other_account(w);
    for (login, secret) in [(OTHER, &other), (LOGIN, &token)] {
        for suffix in [":github", ""] {
            let user = format!("https://github.com:{login}{suffix}");
            bus.store(w, &["service", "copilot-cli", "username", &user], secret);
        }
    }
    config(w, None);
    // Both good tokens of the user's (the user's own copilot asks about them), which copilot
    // passes over for the stored login.
    let classic = w
        .tokens
        .login(copilot_family("classic").prefix("ghp_"), false);
    let gh_token = w.tokens.login(copilot_family("variable"), false);
    let (classic, gh_token) = (classic.access, gh_token.access);
    w.env.push(("COPILOT_GITHUB_TOKEN".into(), classic.clone()));
    w.env.push(("GH_TOKEN".into(), gh_token.clone()));
    w.hidden.extend([classic, gh_token, bus.address.clone()]);
    w.keep.push(Box::new(bus));
}

/// `copilot login` with `storeTokenPlaintext`: the tokens in config.json's `authTokens`, the
/// other account's first.
fn copilot_plaintext(w: &mut World, _: bool) {
    let token = logged_in(w);
    let other = other_account(w);
    let key = |login: &str, suffix: &str| format!("https://github.com:{login}{suffix}");
    let tokens = json!({
        key(OTHER, ":github"): {"token": other}, key(OTHER, ""): {"token": other},
        key(LOGIN, ":github"): {"token": token}, key(LOGIN, ""): {"token": token},
    });
    config(w, Some(tokens));
}

/// `gh auth login`: gh's token in its hosts.yml, asked with `gh auth token`.
fn copilot_gh(w: &mut World, _: bool) {
    let token = logged_in(w);
    let hosts = format!(
        "github.com:\n    oauth_token: {token}\n    user: {LOGIN}\n    git_protocol: https\n"
    );
    w.write(".config/gh/hosts.yml", &hosts);
}

/// A session bus and an unlocked gnome-keyring on it, headless, at a socket in the world's
/// folder; both ended, by their own ids, when the world goes.
struct Bus {
    address: String,
    pids: Vec<i32>,
}

impl Bus {
    fn start(w: &World) -> Bus {
        let address = format!("unix:path={}", w.root().join("bus").display());
        let out = w
            .command(Path::new("dbus-daemon"))
            .args(["--session", "--fork", "--nopidfile", "--print-address=1"])
            .arg("--print-pid=1")
            .arg(format!("--address={address}"))
            .stderr(Stdio::null())
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stdout).into_owned();
        let mut lines = said.lines();
        let (Some(address), Some(pid)) = (lines.next(), lines.next()) else {
            panic!("dbus-daemon said {said:?}");
        };
        let mut bus = Bus {
            address: address.to_string(),
            pids: vec![pid.trim().parse().unwrap()],
        };
        let status = bus.run(
            w,
            "gnome-keyring-daemon",
            &["--unlock", "--daemonize", "--components=secrets"],
            "the user's keyring password",
        );
        assert!(status.success(), "gnome-keyring-daemon: {status}");
        // The daemon claims its name on the bus a moment after it forks.
        let mut reply = String::new();
        let keyring = (0..100).find_map(|_| {
            let asked = bus
                .command(w, "dbus-send")
                .args([
                    "--session",
                    "--print-reply=literal",
                    "--dest=org.freedesktop.DBus",
                ])
                .args(["/", "org.freedesktop.DBus.GetConnectionUnixProcessID"])
                .arg("string:org.freedesktop.secrets")
                .stdout(Stdio::piped())
                .output()
                .unwrap();
            reply = String::from_utf8_lossy(&asked.stdout).into_owned();
            let pid = reply.split_whitespace().last().and_then(|p| p.parse().ok());
            pid.or_else(|| {
                std::thread::sleep(Duration::from_millis(50));
                None
            })
        });
        bus.pids.insert(
            0,
            keyring.unwrap_or_else(|| panic!("the keyring's id: {reply:?}")),
        );
        bus
    }

    /// A program of the user's, on this bus.
    fn command(&self, w: &World, program: &str) -> std::process::Command {
        let mut c = w.command(Path::new(program));
        c.env("DBUS_SESSION_BUS_ADDRESS", &self.address)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        c
    }

    /// Runs `program` with `input` on its standard input.
    fn run(
        &self,
        w: &World,
        program: &str,
        args: &[&str],
        input: &str,
    ) -> std::process::ExitStatus {
        let mut child = self
            .command(w, program)
            .args(args)
            .stdin(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(input.as_bytes()).unwrap();
        drop(stdin);
        child.wait().unwrap()
    }

    /// Keeps `secret` in the keyring under `attributes`, as copilot does.
    fn store(&self, w: &mut World, attributes: &[&str], secret: &str) {
        let mut args = vec!["store", "--label=copilot-cli"];
        args.extend(attributes);
        let status = self.run(w, "secret-tool", &args, secret);
        assert!(status.success(), "secret-tool store: {status}");
        if !w.env.iter().any(|(k, _)| k == "DBUS_SESSION_BUS_ADDRESS") {
            w.env
                .push(("DBUS_SESSION_BUS_ADDRESS".into(), self.address.clone()));
        }
    }
}

impl Drop for Bus {
    fn drop(&mut self) {
        use nix::sys::signal::{Signal, kill};
        for pid in &self.pids {
            let _ = kill(nix::unistd::Pid::from_raw(*pid), Signal::SIGTERM);
        }
    }
}

const COPILOT_OWN: &[&str] = &[
    "-p",
    "Say breaks.",
    "-s",
    "--no-auto-update",
    "--available-tools=none_at_all",
    "--model",
    "gpt-5-mini",
];

const fn copilot_case(kind: &'static str, user: fn(&mut World, bool)) -> Case {
    Case {
        cli: "copilot",
        kind,
        model: Some("gpt-5-mini"),
        family: None,
        user,
        store: None,
        own: COPILOT_OWN,
        // Prose: copilot answers it and exits 0; panel finds no verdict and asks again.
        fail_once: Mode::Prose,
    }
}

pub(crate) const CASES: &[Case] = &[
    copilot_case("env-token", copilot_env_token),
    copilot_case("credential-store", copilot_credential_store),
    copilot_case("plaintext", copilot_plaintext),
    copilot_case("gh", copilot_gh),
];

#[test]
fn copilot_env_token_login() {
    check(super::case("copilot", "env-token"));
}

#[test]
fn copilot_credential_store_login() {
    if have(&[
        "dbus-daemon",
        "dbus-send",
        "gnome-keyring-daemon",
        "secret-tool",
    ]) {
        check(super::case("copilot", "credential-store"));
    }
}

#[test]
fn copilot_plaintext_login() {
    check(super::case("copilot", "plaintext"));
}

#[test]
fn copilot_gh_login() {
    if have(&["gh"]) {
        check(super::case("copilot", "gh"));
    }
}

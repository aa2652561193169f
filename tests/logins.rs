//! The login broker with the stand-in CLIs (issue 35): a judge gets a live access token and no
//! refresh token; an expired login is refreshed once, over TLS through the user's own proxy,
//! and the user's store keeps the rotated token; and nothing a judge leaves in its HOME (links
//! to the user's login or to `/`, URLs, the paths in its errors) decides anything outside it.
//! The real CLIs meet the same in tests/real_logins/.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Value, json};

use crate::mockserver::{MockServer, Reply, Request};
use crate::tls::{ConnectProxy, TestCa};
use crate::tokens::{Family, Tokens};
use crate::tool::{Ran, Tool};
use crate::util::{TempDir, bin, kill, wait_until, with_standins};

/// A user with a Claude Pro/Max login (or codex's ChatGPT login), the stand-in token service
/// behind their proxy.
struct User {
    tmp: TempDir,
    home: PathBuf,
    tokens: std::sync::Arc<Tokens>,
    server: MockServer,
    proxy: ConnectProxy,
    ca: PathBuf,
    family: &'static str,
    /// The login's file under HOME, and the seat.
    file: &'static str,
    seat: &'static str,
}

impl User {
    fn new(tag: &str, expired: bool) -> User {
        User::claude(tag, expired, Duration::from_secs(8 * 3600))
    }

    /// A user with claude's login, whose access tokens live `lifetime`.
    fn claude(tag: &str, expired: bool, lifetime: Duration) -> User {
        let family = Family::new("claude", lifetime)
            .client("9d1c250a-e61b-44d9-88ed-5944d1962f5e")
            .prefix("sk-ant-oat01-");
        let mut u = User::start(tag, ".claude/.credentials.json", "claude:haiku");
        let t = u.tokens.login(family, expired);
        let ms = t
            .expires
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64;
        let creds = json!({"claudeAiOauth": {"accessToken": t.access, "refreshToken": t.refresh,
            "expiresAt": ms, "scopes": ["user:inference"], "subscriptionType": "max"}});
        u.write(&creds);
        u.family = "claude";
        u
    }

    /// A user with codex's ChatGPT login, its access token (a JWT) expired.
    fn codex(tag: &str) -> User {
        let mut u = User::start(tag, ".codex/auth.json", "codex:gpt-5");
        let t = u
            .tokens
            .login(Family::new("codex", Duration::from_secs(3600)), true);
        u.write(
            &json!({"OPENAI_API_KEY": null, "tokens": {"id_token": t.access,
            "access_token": t.access, "refresh_token": t.refresh, "account_id": "acct-test"},
            "last_refresh": "2026-01-01T00:00:00Z"}),
        );
        u.family = "codex";
        u
    }

    fn start(tag: &str, file: &'static str, seat: &'static str) -> User {
        let tmp = TempDir::new(tag);
        let home = tmp.path().join("home");
        std::fs::create_dir_all(home.join(file).parent().unwrap()).unwrap();
        let ca_dir = tmp.path().join("ca");
        std::fs::create_dir_all(&ca_dir).unwrap();
        let ca = TestCa::new(&ca_dir);
        let server = MockServer::start();
        server.speak_tls(&ca);
        let tokens = Tokens::new();
        server.set_front(tokens.front());
        let proxy = ConnectProxy::start(server.addr());
        User {
            home,
            tokens,
            server,
            proxy,
            ca: ca.pem().to_path_buf(),
            family: "",
            file,
            seat,
            tmp,
        }
    }

    /// The token endpoint answers a refresh (given the refresh token presented) with what
    /// `answer` gives, where it gives one; the stand-in service answers the rest.
    fn answer_refresh(&self, answer: impl Fn(&str) -> Option<Reply> + Send + Sync + 'static) {
        let inner = self.tokens.front();
        self.server.set_front(Arc::new(move |req: &Request| {
            let body: Value = serde_json::from_slice(&req.body).unwrap_or_default();
            if let Some(rt) = body["refresh_token"].as_str()
                && let Some(reply) = answer(rt)
            {
                return Some(reply);
            }
            inner(req)
        }));
    }

    /// Everything a run printed and left in its folder.
    fn everything(&self, out: &Output) -> String {
        fn walk(dir: &Path, all: &mut String) {
            for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let p = e.path();
                match p.is_dir() {
                    true => walk(&p, all),
                    false => all.push_str(&text(&std::fs::read(&p).unwrap_or_default())),
                }
            }
        }
        let mut all = format!("{}{}", text(&out.stdout), text(&out.stderr));
        walk(&self.tmp.path().join("run"), &mut all);
        all
    }

    fn write(&self, v: &Value) {
        std::fs::write(self.home.join(self.file), v.to_string()).unwrap();
    }

    fn store(&self) -> Vec<u8> {
        std::fs::read(self.home.join(self.file)).unwrap()
    }

    /// panel-judge on the claude stand-in as this user, `acts` the judge's hostile acts.
    fn judge(&self, extra: &[&str], acts: &str) -> Ran {
        let out = self.command(extra, acts).run();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains("\"status\":\"ok\""),
            "{stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// panel-judge as this user; `extra` may name its own `--timeout` and `--out`.
    fn command(&self, extra: &[&str], acts: &str) -> Tool {
        let candidate = self.tmp.path().join("work.md");
        std::fs::write(&candidate, "# first\n`first(xs)` returns `xs[0]`.\n").unwrap();
        let mut cmd = Tool::new("panel-judge");
        let unless = |flag: &'static str, value: PathBuf| {
            let given = extra.contains(&flag);
            [flag.into(), value].into_iter().filter(move |_| !given)
        };
        cmd.standins(&self.tmp.path().join("log"), &[])
            .env("HOME", &self.home)
            .env("PANEL_HISTORY", "off")
            .env("HTTPS_PROXY", self.proxy.url())
            .env("NODE_EXTRA_CA_CERTS", &self.ca)
            .env("STANDIN_DO", acts)
            .args(["--seat", self.seat, "--lens", "correctness=Does it hold?"])
            .args(["--retries", "0"])
            .args(unless("--timeout", "30".into()))
            .args(unless("--out", self.tmp.path().join("run")))
            .args(extra)
            .arg(&candidate);
        cmd
    }

    /// The lock folders of claude's that stand now: its refresh's, its configuration's (beside
    /// the folder's real path) and its store's.
    fn lock_folders(&self) -> Vec<PathBuf> {
        let real = self.home.canonicalize().unwrap();
        let all = [
            self.home.join(".claude/.oauth_refresh.lock"),
            real.join(".claude.lock"),
            self.home.join(".claude/.storage-write.lock"),
        ];
        all.into_iter().filter(|p| p.exists()).collect()
    }

    /// panel-judge started through `proxy` (its answer piped), once its refresh is under way:
    /// the proxy was asked for a tunnel.
    fn refreshing(&self, extra: &[&str], proxy: &ConnectProxy) -> Child {
        let mut cmd = self.command(extra, "");
        cmd.env("HTTPS_PROXY", proxy.url())
            .command()
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let child = cmd.command().spawn().unwrap();
        let asked = wait_until(Duration::from_secs(20), || !proxy.connects().is_empty());
        assert!(asked, "no refresh began");
        child
    }

    /// What the judge said on its standard error (kept in the run folder).
    fn judge_said(&self) -> String {
        let dir = self.tmp.path().join("run/correctness");
        std::fs::read_to_string(dir.join("attempt-1/stderr")).unwrap_or_default()
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Issue 35: "a judge gets what it needs to call the model and nothing it could use to mint
/// more: a live access token, in the file or variable its CLI reads, never the refresh token";
/// "when the access token expires before the judges' deadline, it is refreshed once per login
/// per run … and saved back into the user's store in the CLI's own format, atomically".
#[test]
fn an_expired_login_is_refreshed_once_and_the_judge_gets_no_refresh_token() {
    let u = User::new("login-broker", true);
    let before = u.store();
    let first_rt = u.tokens.live_refresh(u.family).unwrap();
    let out = u.judge(&[], "show .claude/.credentials.json");
    let refreshes = u.tokens.refreshes();
    assert_eq!(refreshes.len(), 1, "{refreshes:?}");
    let r = &refreshes[0];
    assert_eq!(
        (r.host.as_str(), r.path.as_str(), r.outcome.as_str()),
        ("platform.claude.com", "/v1/oauth/token", "ok"),
        "{r:?}"
    );
    assert_eq!(u.proxy.connects(), ["platform.claude.com:443"]);
    // The user's store: rewritten in claude's compact layout, with the rotated token.
    let after: Value = serde_json::from_slice(&u.store()).unwrap();
    let live = u.tokens.live_refresh(u.family).unwrap();
    assert_ne!(live, first_rt);
    assert_eq!(after["claudeAiOauth"]["refreshToken"], live.as_str());
    assert_eq!(after["claudeAiOauth"]["subscriptionType"], "max");
    assert!(!text(&u.store()).contains('\n'), "{}", text(&u.store()));
    assert_ne!(u.store(), before);
    // The judge's copy: a placeholder in the access token's place (issue 46: "Each judge
    // gets a random placeholder, per run, in the place and form its CLI reads, and never a
    // live token"), no refresh token at all.
    let said = u.judge_said();
    let access = after["claudeAiOauth"]["accessToken"].as_str().unwrap();
    assert!(!said.contains(access), "{said}");
    assert!(said.contains(r#""accessToken":"sk-ant-oat01-"#), "{said}");
    assert!(!said.contains("refreshToken"), "{said}");
    for rt in u.tokens.all_refresh(u.family) {
        for (what, t) in [
            ("stdout", text(&out.stdout)),
            ("stderr", text(&out.stderr)),
            ("the judge", said.clone()),
        ] {
            assert!(!t.contains(&rt), "{what} holds a refresh token: {t}");
        }
    }
}

/// Issue 35: "The cleanup of a judge's private HOME follows links the judge planted. A judge
/// that replaced its ~/.claude with a link to the user's real one made panel delete the user's
/// .credentials.json"; "the private HOME is cleaned without following any link".
#[test]
fn links_a_judge_plants_in_its_home_remove_nothing_of_the_user_s() {
    for walls in ["auto", "off"] {
        let u = User::new(&format!("login-links-{walls}"), false);
        let before = u.store();
        let acts = format!(
            "link .claude {}\nlink .config /",
            u.home.join(".claude").display()
        );
        u.judge(&["--sandbox", walls], &acts);
        assert_eq!(u.store(), before, "{walls}: the user's login was touched");
        assert!(Path::new("/etc/passwd").exists());
        // A fresh login is not refreshed.
        assert!(u.tokens.refreshes().is_empty(), "{walls}");
    }
}

/// Issue 35: "sandbox::refused reads URL paths in a judge's error (/user, /login, …) as file
/// paths and advises --sandbox-write /"; "refusal advice names a path only when a file-system
/// call on it was refused, and never advises granting / or HOME".
#[test]
fn a_judge_s_error_naming_url_paths_is_never_told_to_grant_the_root() {
    let tmp = TempDir::new("login-refused");
    let seat = "exec:cat >/dev/null; echo 'GET https://api.github.com/user: 401 Bad credentials' >&2; \
                echo 'POST /login failed' >&2; \
                echo \"Error: ENOENT: no such file or directory, open '/login'\" >&2; exit 1";
    let family = format!("{seat}=x");
    let out = Command::new(bin("panel-judge"))
        .env("PANEL_HISTORY", "off")
        .args(["--seat", seat, "--family", &family, "--lens", "a=Q?"])
        .args(["--retries", "0", "--timeout", "60"])
        .arg("--out")
        .arg(tmp.path().join("run"))
        .arg(crate::util::root().join("examples/answer.md"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    let record: Value = serde_json::from_str(stdout.lines().next().unwrap_or("{}")).unwrap();
    assert_eq!(record["status"], "failed", "{stdout}{}", text(&out.stderr));
    let cause = record["cause"].as_str().unwrap_or_default();
    for bad in [
        "--sandbox-write / ",
        "--sandbox-read / ",
        "--sandbox-write /)",
        "--sandbox-read /)",
    ] {
        assert!(!cause.contains(bad), "{cause}");
    }
}

/// Issue 35: "a judge gets … never the refresh token": a dry run's block, pasted and run,
/// gives its judge the login as panel-judge does (here unrefreshed), its refresh token left out;
/// the block itself never holds it.
#[test]
fn a_pasted_block_gives_the_login_without_its_refresh_token() {
    crate::util::need("jq");
    let u = User::new("login-paste", false);
    let mut creds: Value = serde_json::from_slice(&u.store()).unwrap();
    creds["mcpOAuth"] = json!({"srv": {"refreshToken": "mcp-rt-SECRET", "clientSecret": "cs"}});
    u.write(&creds);
    let rt = u.tokens.live_refresh(u.family).unwrap();
    let act = "show .claude/.credentials.json";
    let dry = u.command(&["--dry-run"], act).run();
    let block = text(&dry.stdout);
    assert!(dry.status.success(), "{}", text(&dry.stderr));
    assert!(!block.contains(&rt), "{block}");
    let mut run = Command::new("bash");
    with_standins(&mut run, &u.tmp.path().join("log"), &[])
        .env("HOME", &u.home)
        .env("STANDIN_DO", act)
        .arg("-c")
        .arg(&block)
        .stdin(Stdio::null());
    let ran = run.output().unwrap();
    let said = text(&ran.stderr);
    let store: Value = serde_json::from_slice(&u.store()).unwrap();
    let access = store["claudeAiOauth"]["accessToken"].as_str().unwrap();
    assert!(said.contains(access), "{said}");
    assert!(
        !said.contains(&rt) && !said.contains("refreshToken"),
        "{said}"
    );
    assert!(!said.contains("mcpOAuth"), "{said}");
    assert!(
        text(&ran.stdout).contains("breaks"),
        "{}",
        text(&ran.stdout)
    );
}

/// panel-judge as a user whose HOME is `home`, one seat, the judge doing `acts`; what it
/// printed, and what the judge said on its standard error.
fn judge_with(tmp: &TempDir, home: &Path, seat: &str, acts: &str) -> (Ran, String) {
    let candidate = tmp.path().join("work.md");
    std::fs::write(&candidate, "# first\n`first(xs)` returns `xs[0]`.\n").unwrap();
    let out = Tool::new("panel-judge")
        .standins(&tmp.path().join("log"), &[])
        .env("HOME", home)
        .env("PANEL_HISTORY", "off")
        .env("STANDIN_DO", acts)
        .args(["--seat", seat, "--lens", "correctness=Does it hold?"])
        .args(["--retries", "0", "--timeout", "30", "--out"])
        .arg(tmp.path().join("run"))
        .arg(&candidate)
        .run();
    let said = tmp.path().join("run/correctness/attempt-1/stderr");
    (out, std::fs::read_to_string(said).unwrap_or_default())
}

/// docs/design.md §8: "a judge holds nothing worth stealing": of a login file that holds more than the
/// seat's login (claude's MCP servers' OAuth logins; opencode's every provider's), a judge gets
/// its own login alone.
#[test]
fn a_judge_gets_its_own_login_alone_of_a_file_that_holds_others() {
    let u = User::new("login-keep-claude", false);
    let mut creds: Value = serde_json::from_slice(&u.store()).unwrap();
    creds["mcpOAuth"] = json!({"srv|1": {"accessToken": "mcp-at-SECRET",
        "refreshToken": "mcp-rt-SECRET", "clientSecret": "mcp-cs-SECRET"}});
    u.write(&creds);
    u.judge(&[], "show .claude/.credentials.json");
    let said = u.judge_said();
    let access = creds["claudeAiOauth"]["accessToken"].as_str().unwrap();
    // Its own login, a placeholder in its access token's place (issue 46).
    assert!(said.contains(r#""accessToken":"sk-ant-oat01-"#), "{said}");
    assert!(!said.contains(access), "{said}");
    assert!(
        !said.contains("SECRET") && !said.contains("mcpOAuth"),
        "{said}"
    );

    let tmp = TempDir::new("login-keep-opencode");
    let home = tmp.path().join("home");
    let dir = home.join(".local/share/opencode");
    std::fs::create_dir_all(&dir).unwrap();
    let far = 4_000_000_000_000u64;
    let auth = json!({
        "openai": {"type": "oauth", "access": "openai-access", "refresh": "openai-rt-SECRET",
            "expires": far},
        "anthropic": {"type": "oauth", "access": "ant-at-SECRET", "refresh": "ant-rt-SECRET",
            "expires": far},
        "github-copilot": {"type": "oauth", "refresh": "gho_SECRET", "access": "x", "expires": 0},
        "groq": {"type": "api", "key": "gsk_SECRET"}
    });
    std::fs::write(dir.join("auth.json"), auth.to_string()).unwrap();
    let acts = "show .local/share/opencode/auth.json";
    let (out, said) = judge_with(&tmp, &home, "opencode:openai/gpt-5", acts);
    let all = format!("{said}{}{}", text(&out.stdout), text(&out.stderr));
    assert!(said.contains(r#""access":"openai-"#), "{all}");
    assert!(!said.contains("openai-access"), "{all}");
    assert!(!all.contains("SECRET"), "{all}");
    for other in ["anthropic", "github-copilot", "groq"] {
        assert!(!said.contains(other), "{other}: {said}");
    }
}

/// docs/design.md §8, "its user's login stays theirs": a refresh writes back the store as it is when the
/// answer comes, so another login in the same file rotated while the endpoint was slow (an MCP
/// server's, by claude itself) is kept.
#[test]
fn a_refresh_keeps_what_another_login_in_the_file_rotated_meanwhile() {
    let u = User::new("login-meanwhile", true);
    let mut creds: Value = serde_json::from_slice(&u.store()).unwrap();
    creds["mcpOAuth"] = json!({"srv": {"refreshToken": "mcp-rt-1"}});
    u.write(&creds);
    let path = u.home.join(u.file);
    u.answer_refresh(move |_| {
        let mut v: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        v["mcpOAuth"]["srv"]["refreshToken"] = json!("mcp-rt-2");
        std::fs::write(&path, v.to_string()).unwrap();
        std::thread::sleep(Duration::from_millis(300));
        None
    });
    u.judge(&[], "");
    let after: Value = serde_json::from_slice(&u.store()).unwrap();
    assert_eq!(
        after["mcpOAuth"]["srv"]["refreshToken"], "mcp-rt-2",
        "{after}"
    );
    let live = u.tokens.live_refresh(u.family).unwrap();
    assert_eq!(after["claudeAiOauth"]["refreshToken"], live.as_str());
}

/// A token endpoint's answer is hostile input: an access token whose `exp` lies past every
/// clock (1e300) neither panics nor is saved, so no later run reads it.
#[test]
fn a_token_expiring_past_every_clock_is_refused_and_not_saved() {
    let u = User::codex("login-exp-1e300");
    let before = u.store();
    let jwt = format!(
        "{}.{}.sig",
        crate::tokens::b64url(br#"{"alg":"none"}"#),
        crate::tokens::b64url(br#"{"exp":1e300}"#)
    );
    u.answer_refresh(move |_| {
        let answer = json!({"access_token": jwt, "refresh_token": "rt-next", "id_token": jwt});
        Some(Reply::Json(200, answer, vec![]))
    });
    let out = u.command(&[], "").run();
    let all = u.everything(&out);
    assert!(
        !all.contains("panicked") && !all.contains("internal error"),
        "{all}"
    );
    assert_ne!(out.status.code(), Some(2), "{all}");
    assert_eq!(text(&u.store()), text(&before));
}

/// An endpoint's refusal is shown by its error words, never with the refresh token or a value
/// of the request it echoes back.
#[test]
fn a_refusal_echoing_the_refresh_token_shows_it_nowhere() {
    let u = User::new("login-echo", true);
    let rt = u.tokens.live_refresh(u.family).unwrap();
    u.answer_refresh(|rt| {
        let said = json!({"error": "invalid_grant",
            "error_description": format!("refresh token {rt} is not valid"),
            "message": "client 9d1c250a-e61b-44d9-88ed-5944d1962f5e refused"});
        Some(Reply::Json(400, said, vec![]))
    });
    let out = u.command(&[], "").run();
    let all = u.everything(&out);
    assert!(all.contains("invalid_grant"), "{all}");
    assert!(!all.contains(&rt), "{all}");
    assert!(!all.contains("9d1c250a-e61b"), "{all}");
}

/// An answer whose tokens are not strings writes nothing into the user's store.
#[test]
fn an_answer_with_tokens_that_are_not_strings_writes_nothing() {
    let u = User::new("login-wrong-type", true);
    let before = u.store();
    u.answer_refresh(|_| {
        let answer = json!({"access_token": "sk-ant-oat01-new", "refresh_token": {"no": 1},
            "expires_in": 3600});
        Some(Reply::Json(200, answer, vec![]))
    });
    let out = u.command(&[], "").run();
    assert_eq!(text(&u.store()), text(&before), "{}", u.everything(&out));
    let u = User::codex("login-wrong-type-codex");
    let before = u.store();
    u.answer_refresh(|_| {
        let exp = SystemTime::now() + Duration::from_secs(3600);
        let exp = exp.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
        let access = format!(
            "{}.{}.sig",
            crate::tokens::b64url(br#"{"alg":"none"}"#),
            crate::tokens::b64url(format!("{{\"exp\":{exp}}}").as_bytes())
        );
        let answer = json!({"access_token": access, "refresh_token": "rt-next", "id_token": 7});
        Some(Reply::Json(200, answer, vec![]))
    });
    let out = u.command(&[], "").run();
    assert_eq!(text(&u.store()), text(&before), "{}", u.everything(&out));
}

/// Issue 35: "refreshed once per login per run": a token the endpoint gives for less time
/// than the run's deadline is refreshed once, not once for each judge.
#[test]
fn a_login_is_refreshed_once_a_run_even_when_its_tokens_live_shorter_than_the_run() {
    let u = User::claude("login-short-lived", true, Duration::from_secs(60));
    u.judge(&["--lens", "style=Is it clear?"], "");
    let refreshes = u.tokens.refreshes();
    assert_eq!(refreshes.len(), 1, "{refreshes:?}");
    assert_eq!(u.tokens.reuses(), 0);
}

/// `child`'s output once it ends within `within`; `None` (and it killed) when it does not.
fn ended_within(mut child: Child, within: Duration) -> Option<Output> {
    let t = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t.elapsed() >= within {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Some(child.wait_with_output().unwrap())
}

/// The first record panel-judge printed.
fn record(out: &Output) -> Value {
    let stdout = text(&out.stdout);
    serde_json::from_str(stdout.lines().next().unwrap_or("{}")).unwrap_or_default()
}

/// Issue 46: an expired claude login and an `HTTPS_PROXY` that answers `CONNECT` a byte every
/// 2 s kept `panel-judge --timeout 10` refreshing past 45 s: the 30 s began only after the
/// tunnel. One 30 s deadline holds the whole refresh, the proxy's answer too.
#[test]
fn a_refresh_through_a_proxy_dripping_its_answer_ends_at_its_deadline() {
    let u = User::new("login-drip", true);
    let before = u.store();
    let proxy = ConnectProxy::dripping(Duration::from_secs(2));
    let t = Instant::now();
    let child = u.refreshing(&["--timeout", "10"], &proxy);
    let out = ended_within(child, Duration::from_secs(45)).expect("still refreshing after 45 s");
    let took = t.elapsed();
    eprintln!("a refresh through a dripping proxy ended after {took:.1?}");
    assert!(took < Duration::from_secs(35), "{took:?}");
    let r = record(&out);
    assert_eq!(r["status"], "failed", "{}", u.everything(&out));
    let cause = r["cause"].as_str().unwrap_or_default();
    assert!(cause.contains("no answer within 30 s"), "{cause}");
    assert_eq!(proxy.connects(), ["platform.claude.com:443"]);
    assert_eq!(u.store(), before);
    assert_eq!(u.lock_folders(), Vec::<PathBuf>::new());
}

/// Issue 46: SIGTERM and Ctrl-C were ignored while a refresh waited on a slow proxy. Each of
/// SIGINT, SIGTERM and SIGHUP ends the refresh within a second, every lock let go, and the tool
/// exits with its status for that signal.
#[test]
fn a_signal_ends_a_refresh_within_a_second() {
    for (signal, status) in [("INT", 130), ("TERM", 143), ("HUP", 129)] {
        let u = User::new(&format!("login-signal-{signal}"), true);
        let before = u.store();
        let proxy = ConnectProxy::dripping(Duration::from_secs(2));
        let child = u.refreshing(&[], &proxy);
        std::thread::sleep(Duration::from_millis(500));
        assert_eq!(
            u.lock_folders().len(),
            3,
            "{signal}: the refresh holds claude's locks"
        );
        let t = Instant::now();
        kill(child.id(), signal);
        let out = ended_within(child, Duration::from_secs(10))
            .unwrap_or_else(|| panic!("SIG{signal}: still refreshing after 10 s"));
        let took = t.elapsed();
        eprintln!("SIG{signal} ended panel-judge's refresh in {took:.2?}");
        assert!(took < Duration::from_secs(1), "SIG{signal}: {took:?}");
        assert_eq!(out.status.code(), Some(status), "{}", u.everything(&out));
        assert_eq!(
            record(&out)["status"],
            "interrupted",
            "{}",
            u.everything(&out)
        );
        assert_eq!(u.lock_folders(), Vec::<PathBuf>::new(), "SIG{signal}");
        assert_eq!(u.store(), before);
    }
}

/// Issue 46: a SIGKILL mid-refresh leaves claude's lock folders, and two waiters once took a
/// stale one over at once. Killed, its folders are left (nothing runs on a SIGKILL); once they
/// are stale, two runs that race for them refresh the login once, and leave none.
#[test]
fn lock_folders_a_killed_refresh_left_are_taken_over_by_one_run() {
    let u = User::new("login-killed", true);
    let proxy = ConnectProxy::dripping(Duration::from_secs(2));
    let child = u.refreshing(&[], &proxy);
    std::thread::sleep(Duration::from_millis(500));
    kill(child.id(), "KILL");
    assert!(ended_within(child, Duration::from_secs(5)).is_some());
    let left = u.lock_folders();
    assert_eq!(left.len(), 3, "{left:?}");
    // A while later: older than claude's staleness (a minute).
    let then = SystemTime::now() - Duration::from_secs(120);
    for dir in &left {
        std::fs::File::open(dir)
            .unwrap()
            .set_modified(then)
            .unwrap();
    }
    let runs: Vec<Child> = ["run-a", "run-b"]
        .map(|out| {
            let out = u.tmp.path().join(out);
            let mut cmd = u.command(&["--out", out.to_str().unwrap()], "");
            cmd.command().stdout(Stdio::piped()).spawn().unwrap()
        })
        .into_iter()
        .collect();
    for run in runs {
        let out = ended_within(run, Duration::from_secs(60)).expect("a run still waits");
        assert_eq!(record(&out)["status"], "ok", "{}", u.everything(&out));
    }
    let refreshes = u.tokens.refreshes();
    assert_eq!(refreshes.len(), 1, "{refreshes:?}");
    assert_eq!(
        (refreshes[0].outcome.as_str(), u.tokens.reuses()),
        ("ok", 0)
    );
    assert_eq!(u.lock_folders(), Vec::<PathBuf>::new());
}

/// Gives everything under `dir`, `dir` too, to `uid` (its group the same number).
fn give_to(dir: &Path, uid: u32) {
    std::os::unix::fs::lchown(dir, Some(uid), Some(uid)).unwrap();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        match e.file_type().unwrap().is_dir() {
            true => give_to(&e.path(), uid),
            false => std::os::unix::fs::lchown(e.path(), Some(uid), Some(uid)).unwrap(),
        }
    }
}

/// Everything under `dir` that is not `uid`'s.
fn not_owned_by(dir: &Path, uid: u32) -> Vec<String> {
    use std::os::unix::fs::MetadataExt;
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let m = e.path().symlink_metadata().unwrap();
        if m.uid() != uid {
            out.push(format!("{} ({})", e.path().display(), m.uid()));
        }
        if m.is_dir() {
            out.extend(not_owned_by(&e.path(), uid));
        }
    }
    out
}

/// Issue 46: a root caller (`sudo -E`) refreshing a user's login left the file root's, mode
/// 600: the user's own CLI could read it no more, and they were logged out. Written back, it
/// keeps its owner, group and mode, and nothing panel leaves beside it is root's.
#[test]
fn a_root_caller_leaves_a_user_s_login_theirs() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    if !crate::util::another_user(true) {
        return;
    }
    let u = User::new("login-root-caller", true);
    let owner = crate::util::own_uid(2);
    let path = u.home.join(u.file);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    give_to(&u.home, owner);
    u.judge(&[], "");
    assert_eq!(u.tokens.refreshes().len(), 1);
    let m = std::fs::metadata(&path).unwrap();
    assert_eq!((m.uid(), m.gid(), m.mode() & 0o777), (owner, owner, 0o640));
    let after: Value = serde_json::from_slice(&u.store()).unwrap();
    let live = u.tokens.live_refresh(u.family).unwrap();
    assert_eq!(after["claudeAiOauth"]["refreshToken"], live.as_str());
    assert_eq!(not_owned_by(&u.home, owner), Vec::<String>::new());
    // The user reads it as before.
    let read = Command::new("setpriv")
        .args([format!("--reuid={owner}"), format!("--regid={owner}")])
        .args(["--clear-groups", "cat"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(read.stdout, u.store(), "{}", text(&read.stderr));
}

/// Issue 46: where a login cannot be written back as its owner's (the caller is not root, the
/// file another user's), it is not refreshed at all: nothing spent, nothing written, and the
/// one line says why.
#[test]
fn a_login_another_user_owns_is_not_refreshed_by_a_caller_who_cannot_keep_it_theirs() {
    use std::os::unix::process::CommandExt;
    if !crate::util::another_user(false) {
        return;
    }
    let u = User::new("login-not-theirs", true);
    let (owner, caller) = (crate::util::own_uid(2), crate::util::own_uid(3));
    give_to(&u.home, owner);
    let before = u.store();
    let own = u.tmp.path().join("caller");
    std::fs::create_dir_all(own.join("tmp")).unwrap();
    give_to(&own, caller);
    let mut cmd = u.command(&["--out", own.join("run").to_str().unwrap()], "");
    cmd.env("TMPDIR", own.join("tmp"))
        .env("XDG_STATE_HOME", own.join("state"))
        .env("XDG_CACHE_HOME", own.join("cache"))
        .command()
        .uid(caller)
        .gid(caller);
    let out = cmd.run();
    let r = record(&out);
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert_eq!(r["status"], "failed", "{all}");
    let cause = r["cause"].as_str().unwrap_or_default();
    let whose = format!("belongs to uid {owner}, not to uid {caller} who runs panel");
    assert!(
        cause.contains("not refreshed") && cause.contains(&whose),
        "{cause}"
    );
    assert!(u.tokens.refreshes().is_empty() && u.proxy.connects().is_empty());
    assert_eq!(u.store(), before);
    assert_eq!(not_owned_by(&u.home, owner), Vec::<String>::new());
}

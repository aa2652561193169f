//! A login kept in the user's macOS Keychain: a generic password whose data is the JSON the
//! CLI keeps in its file elsewhere (Claude Code's Pro/Max login, service
//! `Claude Code-credentials`, account the user's name). It is read and written with the
//! `security` program, and never through its command line, which every user of the machine can
//! read: `find-generic-password … -w` prints the item, and a write is one
//! `add-generic-password -U … -X HEX` command on the standard input of `security -i`.

use std::path::PathBuf;

use anyhow::{Result, anyhow, bail};

use super::User;
use super::command;
use super::store::Stored;

/// Where `security` is when the user's PATH has none.
const SECURITY: &str = "/usr/bin/security";

/// The most a read prints: the item, hex-encoded (a login is a few kilobytes).
const MAX_OUTPUT: usize = 1 << 20;

/// `find-generic-password`'s exit code for an item that is not there.
const NOT_FOUND: i32 = 44;

/// The longest command line `security -i` takes whole: it reads lines into a 4 KiB buffer,
/// and runs what is past it as a command of its own.
const MAX_LINE: usize = 4000;

/// Room left on that line, before a refresh, for the tokens it brings to be longer.
const GROWTH: usize = 512;

/// One generic password of the user's login Keychain, and the `security` that reads it.
#[derive(Debug)]
pub struct Item {
    pub service: String,
    pub account: String,
    program: PathBuf,
}

impl Item {
    /// The item `service` of the user's: their account name (`$USER`, else the name of the
    /// uid panel runs as), read with the `security` on their PATH, else the system's.
    pub fn of(service: &str, user: &User) -> Result<Item> {
        let account = match user.var("USER") {
            Some(name) => name,
            None => {
                let uid = nix::unistd::geteuid();
                let me = nix::unistd::User::from_uid(uid).ok().flatten();
                me.map(|u| u.name).ok_or_else(|| {
                    anyhow!("no account name: $USER is not set, and uid {uid} has no name")
                })?
            }
        };
        quotable("the account name", &account)?;
        quotable("the service", service)?;
        let path = (user.env)("PATH").unwrap_or_default();
        let program = crate::engine::harness::find_on_path("security", &path)
            .unwrap_or_else(|| PathBuf::from(SECURITY));
        Ok(Item {
            service: service.to_string(),
            account,
            program,
        })
    }

    /// The JSON the item holds; `None` when the user has no such item.
    pub fn read(&self, user: &User) -> Result<Option<Stored>> {
        let args = ["find-generic-password", "-a", &self.account];
        let args = [&args[..], &["-s", &self.service, "-w"]].concat();
        let what = "security find-generic-password";
        let ran = command::run(&self.program, &args, b"", user, MAX_OUTPUT, what)?;
        match ran.code {
            Some(0) => {}
            Some(NOT_FOUND) => return Ok(None),
            Some(code) => bail!("{what} failed (exit code {code})"),
            None => bail!("{what} was killed"),
        }
        let mut text = String::from_utf8(ran.out).map_err(|_| anyhow!("{what} printed no text"))?;
        if text.ends_with('\n') {
            text.pop();
        }
        parse(text).map(Some)
    }

    /// Whether the item can be written back with a text as long as `text` and a little longer
    /// (the tokens a refresh brings), asked before a refresh spends a token.
    pub fn writable(&self, text: &str) -> Result<()> {
        let longest = self.line(text).len() + 2 * GROWTH;
        if longest > MAX_LINE {
            bail!(
                "written back it could be longer than `security -i` takes on one line ({MAX_LINE} bytes), and would be cut"
            );
        }
        Ok(())
    }

    /// Makes `text` the item's data (made when it is not there), then reads it back.
    pub fn write(&self, text: &str, user: &User) -> Result<()> {
        let line = self.line(text);
        if line.len() > MAX_LINE {
            bail!("too long for `security -i` to take on one line: not written");
        }
        let what = "security -i add-generic-password";
        let ran = command::run(
            &self.program,
            &["-i"],
            line.as_bytes(),
            user,
            64 << 10,
            what,
        )?;
        if ran.code != Some(0) {
            bail!("{what} failed{}", code_words(ran.code));
        }
        match self.read(user)? {
            Some(s) if s.text == text => Ok(()),
            _ => bail!("{what} left the item other than written"),
        }
    }

    /// The command that writes `text` as the item's data, hex-encoded: nothing in it to quote.
    fn line(&self, text: &str) -> String {
        format!(
            "add-generic-password -U -a \"{}\" -s \"{}\" -X {}\n",
            self.account,
            self.service,
            hex(text.as_bytes())
        )
    }
}

fn code_words(code: Option<i32>) -> String {
    code.map_or(" (killed)".into(), |c| format!(" (exit code {c})"))
}

/// Refuses what cannot stand between double quotes on a line `security -i` reads.
pub fn quotable(what: &str, value: &str) -> Result<()> {
    if value.is_empty()
        || value
            .chars()
            .any(|c| c == '"' || c == '\\' || c.is_control())
    {
        bail!(
            "{what} {value:?} cannot be written on a `security -i` line: empty, or a quote, backslash or control character in it"
        );
    }
    Ok(())
}

/// The item's data as JSON: as printed, or hex-encoded where `security` prints it so (data it
/// takes for binary; macOS 26 prints Claude Code's item so).
fn parse(text: String) -> Result<Stored> {
    let plain = serde_json::from_str(&text);
    let (text, value) = match plain {
        Ok(value) => (text, value),
        Err(e) => {
            let decoded = unhex(text.trim()).and_then(|b| String::from_utf8(b).ok());
            let value = decoded.as_deref().map(serde_json::from_str);
            match (decoded, value) {
                (Some(d), Some(Ok(v))) => (d, v),
                _ => bail!("the item is not JSON: {e}"),
            }
        }
    };
    Ok(Stored { text, value })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if text.is_empty() || !text.len().is_multiple_of(2) {
        return None;
    }
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let pairs = text.as_bytes().chunks(2);
    pairs
        .map(|p| Some(digit(p[0])? << 4 | digit(p[1])?))
        .collect()
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::path::Path;
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, SystemTime, UNIX_EPOCH};

    use serde_json::{Value, json};

    use super::super::{Broker, Given};
    use super::*;
    use crate::engine::harness::{Harness, Table};
    use crate::engine::sandbox::authority;

    const SERVICE: &str = "Claude Code-credentials";

    /// A Mac user of claude's row: their HOME, variables, and the stand-in `security` first on
    /// their PATH, its "keychain" a file in their HOME.
    struct Mac {
        dir: tempfile::TempDir,
        vars: Vec<(&'static str, String)>,
        row: Harness,
    }

    impl Mac {
        fn new() -> Mac {
            let dir = tempfile::tempdir().unwrap();
            let bin = dir.path().join("bin");
            std::fs::create_dir_all(&bin).unwrap();
            let standin =
                Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/keychain/security");
            std::os::unix::fs::symlink(standin, bin.join("security")).unwrap();
            let path = format!("{}:/usr/bin:/bin", bin.display());
            Mac {
                vars: vec![("PATH", path), ("USER", "alice".into())],
                row: Table::builtin().get("claude").unwrap().clone(),
                dir,
            }
        }

        fn file(&self, name: &str) -> std::path::PathBuf {
            self.dir.path().join(name)
        }

        /// Makes `v` the data of the user's item, as Claude Code writes it.
        fn item(&self, v: &Value) {
            let line = format!("alice\t{SERVICE}\t{}\n", hex(v.to_string().as_bytes()));
            std::fs::write(self.file(".standin-keychain"), line).unwrap();
        }

        /// The data of the user's item now.
        fn held(&self) -> Value {
            let kc = std::fs::read_to_string(self.file(".standin-keychain")).unwrap();
            let hex = kc
                .lines()
                .find_map(|l| l.strip_prefix(&format!("alice\t{SERVICE}\t")));
            serde_json::from_slice(&unhex(hex.unwrap()).unwrap()).unwrap()
        }

        /// Every command line the stand-in was run with, a line each.
        fn argv(&self) -> String {
            std::fs::read_to_string(self.file(".standin-keychain.argv")).unwrap_or_default()
        }

        fn misbehave(&self, how: &str) {
            std::fs::write(self.file(".standin-keychain.do"), how).unwrap();
        }

        /// claude's login file, as on Linux.
        fn creds_file(&self, v: &Value) {
            std::fs::create_dir_all(self.file(".claude")).unwrap();
            std::fs::write(self.file(".claude/.credentials.json"), v.to_string()).unwrap();
        }

        /// What `f` makes of this user, with the Keychain looked in where `keychain`.
        fn as_user<T>(&self, keychain: bool, f: impl FnOnce(&User) -> T) -> T {
            let env = |n: &str| {
                let found = self.vars.iter().find(|(k, _)| *k == n);
                found.map(|(_, v)| v.clone())
            };
            f(&User {
                env: &env,
                home: self.dir.path(),
                keychain,
            })
        }

        /// What a judge of the row gets, with the Keychain looked in where `keychain`.
        fn give_with(&self, broker: &Broker, keychain: bool) -> Result<Given, String> {
            let until = SystemTime::now() + Duration::from_secs(600);
            self.as_user(keychain, |user| {
                broker.give(&self.row, Some("haiku"), user, until, false)
            })
        }

        fn give(&self, broker: &Broker) -> Result<Given, String> {
            self.give_with(broker, true)
        }

        /// The row's refresh sent to `url`, its CA trusted.
        fn refresh_at(&mut self, ep: &TokenEndpoint) {
            for l in &mut self.row.logins {
                if let Some(r) = l.refresh.as_mut() {
                    r.url = ep.url.clone();
                }
            }
            let ca = ep.ca.display().to_string();
            self.vars.push(("NODE_EXTRA_CA_CERTS", ca));
        }
    }

    /// claude's Pro/Max login, its access token expiring `secs` from now.
    fn login(access: &str, refresh: &str, secs: i64) -> Value {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64;
        json!({"claudeAiOauth": {"accessToken": access, "refreshToken": refresh,
            "expiresAt": now + secs * 1000, "scopes": ["user:inference"],
            "subscriptionType": "max"}, "mcpOAuth": {"srv": {"accessToken": "mcp-secret"}}})
    }

    /// The login a judge was given: its copy of claude's file.
    fn copy(g: &Given) -> Value {
        assert_eq!(g.files[0].0, ".claude/.credentials.json");
        serde_json::from_slice(&g.files[0].1).unwrap()
    }

    /// No secret, nor its hex, on any command line `security` was run with.
    fn no_secret_in(argv: &str, secrets: &[&str]) {
        for s in secrets {
            assert!(!argv.contains(s), "{s} on a command line: {argv}");
            assert!(
                !argv.contains(&hex(s.as_bytes())),
                "{s}'s hex on a command line: {argv}"
            );
        }
    }

    /// A token endpoint on 127.0.0.1 speaking TLS with a certificate of its own authority,
    /// answering each refresh with what `answer` gives for the request's fields.
    struct TokenEndpoint {
        url: String,
        ca: std::path::PathBuf,
        asked: Arc<Mutex<Vec<Value>>>,
    }

    fn token_endpoint(
        dir: &Path,
        answer: impl Fn(&Value) -> Value + Send + 'static,
    ) -> TokenEndpoint {
        let keys = authority::make().unwrap();
        let ca = dir.join("ca.pem");
        std::fs::write(&ca, &keys.cert).unwrap();
        let config = authority::Issuer::new(&keys)
            .unwrap()
            .server_config("localhost");
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let asked = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&asked);
        std::thread::spawn(move || {
            for tcp in listener.incoming().flatten() {
                let conn = rustls::ServerConnection::new(Arc::clone(&config)).unwrap();
                let mut tls = rustls::StreamOwned::new(conn, tcp);
                let mut head = Vec::new();
                let mut b = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && tls.read(&mut b).is_ok_and(|n| n == 1) {
                    head.push(b[0]);
                }
                let text = String::from_utf8_lossy(&head).to_lowercase();
                let len = text
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length: "))
                    .map_or(0, |n| n.trim().parse().unwrap());
                let mut body = vec![0u8; len];
                let _ = tls.read_exact(&mut body);
                let fields: Value = serde_json::from_slice(&body).unwrap_or_default();
                let reply = answer(&fields).to_string();
                seen.lock().unwrap().push(fields);
                let _ = write!(
                    tls,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{reply}",
                    reply.len()
                );
                tls.conn.send_close_notify();
                let _ = tls.flush();
            }
        });
        TokenEndpoint {
            url: format!("https://localhost:{port}/v1/oauth/token"),
            ca,
            asked,
        }
    }

    fn answer(access: &str, refresh: &str) -> Value {
        json!({"access_token": access, "refresh_token": refresh, "expires_in": 28800,
            "scope": "user:inference user:profile"})
    }

    /// Issue 48: on macOS Claude Code keeps its Pro/Max login in the Keychain, and reads its
    /// file only when the Keychain has none; the item is read once a run.
    #[test]
    fn a_live_login_is_read_from_the_keychain_before_the_file() {
        let mac = Mac::new();
        mac.item(&login("kc-access", "kc-refresh", 8 * 3600));
        mac.creds_file(&login("file-access", "file-refresh", 8 * 3600));
        let broker = Broker::default();
        let g = mac.give(&broker).unwrap();
        assert_eq!(g.kind.as_deref(), Some("pro-max"));
        assert_eq!(copy(&g)["claudeAiOauth"]["accessToken"], "kc-access");
        assert!(
            copy(&g)["claudeAiOauth"].get("refreshToken").is_none(),
            "{}",
            copy(&g)
        );
        assert!(copy(&g).get("mcpOAuth").is_none(), "{}", copy(&g));
        mac.give(&broker).unwrap();
        let argv = mac.argv();
        assert_eq!(
            argv,
            format!("find-generic-password -a alice -s {SERVICE} -w\n"),
            "once a run"
        );
        no_secret_in(&argv, &["kc-access", "kc-refresh", "mcp-secret"]);
        let place = mac.as_user(true, |u| broker.find(&mac.row, None, u).unwrap().1);
        assert_eq!(place.to_string(), format!("the Keychain's \"{SERVICE}\""));
        // Elsewhere than macOS the Keychain is not looked in.
        let g = mac.give_with(&Broker::default(), false).unwrap();
        assert_eq!(copy(&g)["claudeAiOauth"]["accessToken"], "file-access");
        // No such item (exit 44), or one without the login (MCP servers' alone): the file.
        std::fs::write(mac.file(".standin-keychain"), "").unwrap();
        let g = mac.give(&Broker::default()).unwrap();
        assert_eq!(copy(&g)["claudeAiOauth"]["accessToken"], "file-access");
        mac.item(&json!({"mcpOAuth": {}}));
        let g = mac.give(&Broker::default()).unwrap();
        assert_eq!(copy(&g)["claudeAiOauth"]["accessToken"], "file-access");
        // Printed hex-encoded (macOS 26): read the same.
        mac.item(&login("kc-access", "kc-refresh", 8 * 3600));
        mac.misbehave("hex");
        let g = mac.give(&Broker::default()).unwrap();
        assert_eq!(copy(&g)["claudeAiOauth"]["accessToken"], "kc-access");
    }

    /// "where the access token expires before the judge's deadline, refresh ONCE a run …
    /// write back only if it still holds the refresh token spent", for a Keychain item as for
    /// a file: the answer goes back into the item, through `security -i`'s standard input.
    #[test]
    fn an_expired_keychain_login_is_refreshed_once_and_written_back() {
        let mut mac = Mac::new();
        mac.item(&login("old-access", "old-refresh", -3600));
        mac.creds_file(&login("file-access", "file-refresh", -3600));
        let file_before = std::fs::read(mac.file(".claude/.credentials.json")).unwrap();
        let ep = token_endpoint(mac.dir.path(), |_| answer("new-access", "new-refresh"));
        mac.refresh_at(&ep);
        let broker = Broker::default();
        let g = mac.give(&broker).unwrap();
        mac.give(&broker).unwrap();
        let asked = ep.asked.lock().unwrap().clone();
        assert_eq!(asked.len(), 1, "{asked:?}");
        assert_eq!(asked[0]["refresh_token"], "old-refresh");
        let held = mac.held();
        assert_eq!(held["claudeAiOauth"]["accessToken"], "new-access");
        assert_eq!(held["claudeAiOauth"]["refreshToken"], "new-refresh");
        assert_eq!(held["claudeAiOauth"]["subscriptionType"], "max");
        assert_eq!(held["mcpOAuth"]["srv"]["accessToken"], "mcp-secret");
        assert_eq!(
            std::fs::read(mac.file(".claude/.credentials.json")).unwrap(),
            file_before
        );
        // The judge: the new access token, no refresh token of any kind.
        let c = copy(&g);
        assert_eq!(c["claudeAiOauth"]["accessToken"], "new-access");
        let text = c.to_string();
        assert!(!text.contains("refresh"), "{text}");
        // One write, through standard input; no secret on any command line.
        let argv = mac.argv();
        assert_eq!(argv.lines().filter(|l| *l == "-i").count(), 1, "{argv}");
        no_secret_in(
            &argv,
            &[
                "old-access",
                "old-refresh",
                "new-access",
                "new-refresh",
                "mcp-secret",
            ],
        );
    }

    /// The user's own claude refreshed its login while panel's refresh was under way: panel
    /// writes nothing over it (the token it was answered would log them out) and uses theirs.
    #[test]
    fn a_write_that_loses_a_race_with_the_user_s_cli_writes_nothing() {
        let mut mac = Mac::new();
        mac.item(&login("old-access", "old-refresh", -3600));
        let keychain = mac.file(".standin-keychain");
        let theirs = login("their-access", "their-refresh", 8 * 3600);
        let line = format!("alice\t{SERVICE}\t{}\n", hex(theirs.to_string().as_bytes()));
        let ep = token_endpoint(mac.dir.path(), move |_| {
            // Their CLI wrote its own refresh into the item meanwhile.
            std::fs::write(&keychain, &line).unwrap();
            answer("panel-access", "panel-refresh")
        });
        mac.refresh_at(&ep);
        let g = mac.give(&Broker::default()).unwrap();
        assert_eq!(ep.asked.lock().unwrap().len(), 1);
        assert_eq!(mac.held(), theirs, "their login was written over");
        assert_eq!(copy(&g)["claudeAiOauth"]["accessToken"], "their-access");
        let argv = mac.argv();
        assert!(!argv.lines().any(|l| l == "-i"), "{argv}");
        no_secret_in(&argv, &["old-refresh", "their-refresh", "panel-refresh"]);
    }

    /// A `security` that is not there, fails, hangs, prints without end or prints no JSON: one
    /// line naming the item and no secret, and the login cannot be used, as a broken file.
    #[test]
    fn a_broken_security_says_so_in_one_line_and_the_login_cannot_be_used() {
        let cases = ["fail", "hang", "huge", "garbage", "absent", "account"];
        let said: Vec<(&str, Result<Given, String>)> = std::thread::scope(|s| {
            let runs: Vec<_> = cases
                .iter()
                .map(|how| {
                    s.spawn(move || {
                        let mut mac = Mac::new();
                        mac.item(&login("kc-access", "kc-refresh", 8 * 3600));
                        mac.creds_file(&login("file-access", "file-refresh", 8 * 3600));
                        match *how {
                            "absent" => mac.vars[0].1 = "/nowhere".into(),
                            "account" => mac.vars[1].1 = "al\"ice".into(),
                            other => mac.misbehave(other),
                        }
                        let t = std::time::Instant::now();
                        let g = mac.give(&Broker::default());
                        assert!(t.elapsed() < Duration::from_secs(20), "{how}");
                        (*how, g)
                    })
                })
                .collect();
            runs.into_iter().map(|r| r.join().unwrap()).collect()
        });
        for (how, given) in said {
            if how == "absent" && Path::new(SECURITY).exists() {
                eprintln!("absent: skipped: this machine has {SECURITY}");
                continue;
            }
            let why = given.expect_err(how);
            assert!(!why.contains('\n'), "{how}: {why}");
            assert!(
                why.contains(&format!("the Keychain's \"{SERVICE}\"")),
                "{how}: {why}"
            );
            assert!(why.contains("claude /login"), "{how}: {why}");
            for secret in ["kc-access", "kc-refresh", "file-access", "7777777"] {
                assert!(!why.contains(secret), "{how}: {why}");
            }
            eprintln!("{how}: {why}");
        }
    }

    /// A write `security -i` refuses, or one too long for its line: an error, never the secret
    /// on a command line instead; where it cannot fit, nothing is spent.
    #[test]
    fn a_write_security_refuses_is_an_error_and_too_long_a_one_spends_nothing() {
        let mut mac = Mac::new();
        mac.item(&login("old-access", "old-refresh", -3600));
        let ep = token_endpoint(mac.dir.path(), |_| answer("new-access", "new-refresh"));
        mac.refresh_at(&ep);
        mac.misbehave("write-fail");
        let why = mac.give(&Broker::default()).unwrap_err();
        assert!(
            why.contains("security -i add-generic-password failed"),
            "{why}"
        );
        assert!(!why.contains('\n') && !why.contains("new-refresh"), "{why}");
        mac.misbehave("");
        let mut big = login("old-access", "old-refresh", -3600);
        big["mcpOAuth"]["pad"] = json!("x".repeat(1800));
        mac.item(&big);
        let asked = ep.asked.lock().unwrap().len();
        let why = mac.give(&Broker::default()).unwrap_err();
        assert!(
            why.contains("not refreshed") && why.contains("security -i"),
            "{why}"
        );
        assert_eq!(ep.asked.lock().unwrap().len(), asked, "a token was spent");
        no_secret_in(&mac.argv(), &["old-refresh", "new-refresh"]);
    }

    #[test]
    fn a_row_s_keychain_needs_its_file_and_a_quotable_service() {
        let row = Table::builtin().get("claude").unwrap().clone();
        let pro = row.logins.iter().find(|l| l.kind == "pro-max").unwrap();
        assert_eq!(pro.keychain.as_deref(), Some(SERVICE));
        pro.check().unwrap();
        let mut bad = pro.clone();
        bad.keychain = Some("a\"b".into());
        assert!(bad.check().is_err());
        bad.keychain = Some("line\nbreak".into());
        assert!(bad.check().is_err());
        bad.keychain = Some(SERVICE.into());
        bad.file = None;
        bad.refresh = None;
        bad.env = vec!["X".into()];
        assert!(bad.check().unwrap_err().to_string().contains("keychain"));
        assert!(quotable("the account name", "alice").is_ok());
        assert!(quotable("the account name", "a\\b").is_err());
        assert_eq!(unhex(&hex(b"{\"a\":1}")).unwrap(), b"{\"a\":1}");
        assert_eq!(unhex("7g"), None);
    }
}

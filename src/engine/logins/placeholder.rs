//! A judge's stand-in credential (docs/design.md §8): random, new for every judge, in the form
//! its CLI reads (a token's own beginning kept, a JWT's claims kept and its signature not), and
//! worth nothing outside the judge's proxy, which swaps the live credential in on the model's
//! requests alone ([`crate::engine::sandbox::swap`]).

use crate::engine::harness::Harness;
use crate::engine::harness::login::{Credential, Login};
use crate::engine::sandbox::swap::{self, Model, Swap};

use serde_json::Value;

use super::{Given, LoginPlace, User, store};

/// A placeholder for `live`: its beginning up to its last `-` or `_` among the first 16
/// characters (`sk-ant-oat01-`, `gho_`), then random letters and digits, as long as it was
/// (at least 32 of them). A JWT keeps its header and claims, which a CLI reads (`exp`, its
/// account), with a random signature, which only the service checks.
pub fn placeholder(live: &str) -> String {
    let parts: Vec<&str> = live.split('.').collect();
    if parts.len() == 3 && live.starts_with("eyJ") {
        return format!(
            "{}.{}.{}",
            parts[0],
            parts[1],
            random(43.max(parts[2].len()))
        );
    }
    let head: String = live.chars().take(16).collect();
    let keep = head.rfind(['-', '_']).map_or(0, |i| i + 1);
    let rest = live.len().saturating_sub(keep).max(32);
    format!("{}{}", &live[..keep], random(rest))
}

/// `n` random letters and digits.
fn random(n: usize) -> String {
    const ABC: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut bytes = vec![0u8; n];
    getrandom::fill(&mut bytes).expect("the system's random source");
    bytes
        .iter()
        .map(|b| ABC[usize::from(*b) % ABC.len()] as char)
        .collect()
}

/// What a judge's proxy swaps for `placeholder`: `live`, on `credential`'s model endpoints (each
/// moved to where the user's variable says, where set).
pub fn swap(credential: &Credential, live: &str, placeholder: &str, user: &User) -> Swap {
    let models = credential.endpoints.iter().filter_map(|m| {
        let base = m.base_env.as_ref().and_then(|v| user.var(v));
        let (at, tls, path) = swap::base(base.as_deref().unwrap_or(&m.base)).ok()?;
        Some(Model {
            at,
            tls,
            methods: m.methods.clone(),
            paths: m.paths.iter().map(|p| format!("{path}{p}")).collect(),
        })
    });
    Swap {
        placeholder: placeholder.to_string(),
        live: live.to_string(),
        header: credential.header.clone(),
        models: models.collect(),
    }
}

/// The variables of `row`'s other logins than `login` (none of `login`'s own): a judge gets
/// none of them, whose values are the user's other credentials.
pub fn others_env(row: &Harness, login: Option<&Login>) -> Vec<String> {
    let own = login.map_or(&[][..], |l| &l.env[..]);
    let all = row.logins.iter().flat_map(|l| l.env.iter());
    let mut names: Vec<String> = all.filter(|n| !own.contains(n)).cloned().collect();
    names.sort();
    names.dedup();
    names
}

/// What a confined judge holds of `login`, as `--doctor` says it.
pub fn judge_holds(login: &Login) -> String {
    match (&login.swap, &login.live) {
        (Some(_), _) => "placeholder".into(),
        (None, Some(why)) => format!("live: {why}"),
        (None, None) => "live: its row names no endpoints to swap it in".into(),
    }
}

/// Puts a placeholder wherever `g` holds `login`'s live token (a variable, its file's copy),
/// and what its proxy swaps for it in `g.swaps`. A login whose token is not to be found in
/// what the judge gets keeps it live, and says why.
pub(super) fn stand_in(
    g: &mut Given,
    login: &Login,
    c: &Credential,
    place: &LoginPlace,
    user: &User,
) {
    let found = match place {
        LoginPlace::Env(name) => Some(name.clone()),
        _ => None,
    };
    let var = login.to_env.clone().or(found.clone());
    let token = var
        .as_ref()
        .and_then(|v| g.env.iter().find(|(k, _)| k == v).map(|(_, t)| t.clone()))
        .or_else(|| match place {
            LoginPlace::Env(name) => user.var(name),
            _ => None,
        });
    let (token, file) = match (token, g.files.first()) {
        (Some(t), _) => (t, None),
        (None, Some((to, bytes))) => match file_token(login, bytes) {
            Some(t) => (t, Some(to.clone())),
            None => {
                g.live = Some("its token is not where its row says, in its file".into());
                return;
            }
        },
        (None, None) => {
            g.live = Some("no token was found to swap".into());
            return;
        }
    };
    let ph = placeholder(&token);
    // The variable the user keeps it in holds the placeholder too, where the CLI reads
    // another (codex's OPENAI_API_KEY beside CODEX_API_KEY).
    for v in var.into_iter().chain(found) {
        g.env.retain(|(k, _)| *k != v);
        g.env.push((v, ph.clone()));
    }
    for (to, bytes) in g.files.iter_mut() {
        if file.as_ref().is_none_or(|f| f == to) {
            let text = String::from_utf8_lossy(bytes).replace(&token, &ph);
            *bytes = text.into_bytes();
        }
    }
    g.swaps.push(swap(c, &token, &ph, user));
}

/// The live token in a judge's copy of `login`'s file: at its access token's pointer, or its
/// token's.
fn file_token(login: &Login, bytes: &[u8]) -> Option<String> {
    let value: Value = serde_json::from_slice(bytes).ok()?;
    let pointer = login
        .refresh
        .as_ref()
        .map(|r| &r.access)
        .or(login.token.as_ref())?;
    let filled = store::fill(pointer, &value, true)?;
    store::lookup(&value, &filled)?.as_str().map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_placeholder_keeps_the_form_a_cli_reads_and_nothing_of_the_token() {
        let live = "sk-ant-oat01-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789";
        let p = placeholder(live);
        assert!(p.starts_with("sk-ant-oat01-"), "{p}");
        assert_eq!(p.len(), live.len());
        assert_ne!(p, placeholder(live), "new every time");
        assert!(placeholder("gho_16C7e42F292c6912E7710c838347Ae178B4a").starts_with("gho_"));
        // A key with no marked beginning keeps none of it.
        let bare = placeholder("0123456789abcdef0123456789abcdef");
        assert!(!bare.starts_with("0123"), "{bare}");
        // A JWT keeps its claims, never its signature.
        let jwt = "eyJhbGciOiJSUzI1NiJ9.eyJleHAiOjE3OTk5OTk5OTl9.c2lnbmF0dXJlLXRoYXQtaXMtc2VjcmV0";
        let p = placeholder(jwt);
        assert!(
            p.starts_with("eyJhbGciOiJSUzI1NiJ9.eyJleHAiOjE3OTk5OTk5OTl9."),
            "{p}"
        );
        assert!(!p.ends_with("c2lnbmF0dXJlLXRoYXQtaXMtc2VjcmV0"));
    }

    /// The rules of a built-in login's swap at each of its endpoints, as its proxy holds them
    /// for a user with no base URL of their own.
    fn rules_of(
        login: &Login,
    ) -> Vec<(
        Swap,
        Vec<(crate::engine::sandbox::egress::Endpoint, String)>,
    )> {
        let c = login.swap.as_ref().unwrap();
        let env = |_: &str| None;
        let user = User {
            env: &env,
            home: std::path::Path::new("/home/u"),
            keychain: false,
        };
        let s = swap(c, "LIVE-credential", "placeholder-0123456789", &user);
        let at: Vec<_> = s
            .models
            .iter()
            .map(|m| (m.at.clone(), format!("{} {}", m.methods[0], m.paths[0])))
            .collect();
        vec![(s, at)]
    }

    fn asked(s: &Swap, at: &crate::engine::sandbox::egress::Endpoint, line: &str) -> bool {
        let rules = crate::engine::sandbox::swap::EndpointRules {
            target: at,
            models: s
                .models
                .iter()
                .filter(|m| &m.at == at)
                .map(|m| (s, m))
                .collect(),
        };
        let head = format!(
            "{line} HTTP/1.1\r\nHost: {at}\r\n{}: Bearer placeholder-0123456789\r\n\r\n",
            s.header
        );
        rules.rewrite(head.as_bytes()).is_ok()
    }

    /// Issue 46: "A judge that sends its placeholder to a path outside its row's endpoints is
    /// refused, for every built-in row"; and every built-in login says what a judge holds of
    /// it: a placeholder, or why it keeps the live credential.
    #[test]
    fn every_built_in_login_swaps_on_its_model_paths_alone_or_says_why_not() {
        let table = crate::engine::harness::Table::builtin();
        let mut swapped = 0;
        for row in table.rows() {
            for login in &row.logins {
                let name = format!("{} {}", row.name, login.kind);
                if login.unusable.is_some() {
                    continue;
                }
                if login.swap.is_none() {
                    assert!(login.live.is_some(), "{name}: neither swap nor live");
                    continue;
                }
                assert!(
                    !row.ca_env.is_empty(),
                    "{name}: no variable to trust the proxy by"
                );
                for (s, at) in rules_of(login) {
                    for (endpoint, model_line) in at {
                        assert!(asked(&s, &endpoint, &model_line), "{name}: {model_line}");
                        for outside in [
                            "POST /panel-outside",
                            "GET /",
                            "POST /v1/files",
                            "DELETE /v1/messages",
                        ] {
                            assert!(
                                !asked(&s, &endpoint, outside),
                                "{name} {endpoint}: {outside}"
                            );
                        }
                    }
                }
                swapped += 1;
            }
        }
        assert!(swapped >= 30, "{swapped}");
    }

    /// Issue 46: "copilot never holds gh's token: a placeholder, and only Copilot's model
    /// endpoints let through …, never api.github.com's repository, gist or workflow APIs".
    #[test]
    fn copilot_s_placeholder_reaches_copilot_alone_never_github_s_other_apis() {
        let table = crate::engine::harness::Table::builtin();
        let row = table.get("copilot").unwrap();
        let github = crate::engine::sandbox::egress::Endpoint::parse("api.github.com:443").unwrap();
        for login in row.logins.iter().filter(|l| l.kind != "byok") {
            let (s, _) = rules_of(login).remove(0);
            assert!(
                asked(&s, &github, "GET /copilot_internal/user"),
                "{}",
                login.kind
            );
            for attack in [
                "GET /user/repos",
                "PUT /repos/o/r/contents/README.md",
                "POST /gists",
                "POST /repos/o/r/actions/workflows/ci.yml/dispatches",
                "PATCH /user",
                "GET /copilot_internal/../user/repos",
                "POST /copilot_internal/user",
            ] {
                assert!(!asked(&s, &github, attack), "{}: {attack}", login.kind);
            }
        }
    }
}

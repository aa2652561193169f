//! Codex's logins: "Sign in with ChatGPT" (`$CODEX_HOME/auth.json`, refreshed at
//! auth.openai.com, rotating, reuse refused; every call to chatgpt.com), `CODEX_API_KEY`, a key
//! stored by `codex login --with-api-key`, and `OPENAI_API_KEY` alone (which codex 0.171.0 sends
//! with no Authorization header: panel hands it on as `CODEX_API_KEY`).

use std::time::Duration;

use serde_json::json;

use super::{Case, World, check};
use crate::mockserver::Mode;
use crate::tokens::Family;

const ACCOUNT: &str = "acct-test";

fn chatgpt_family() -> Family {
    Family::new("codex", Duration::from_secs(7 * 24 * 3600)).client("app_EMoamEEZ73f0CkXaXp7hrann")
}

/// What chatgpt.com answers before the model call: the models (none: codex's own default),
/// and the account's routing, which codex will not go on without.
fn chatgpt_routes(w: &World) {
    w.tokens
        .route("GET", "/backend-api/codex/models", json!({"models": []}));
    w.tokens.route(
        "GET",
        "/backend-api/wham/accounts/check",
        json!({"accounts": [{"id": ACCOUNT, "workspace_backend_origin": "NO_CONSTRAINT",
            "account_routing_override": "NO_CONSTRAINT"}]}),
    );
}

/// A ChatGPT login: auth.json as codex writes it.
fn chatgpt(w: &mut World, expired: bool) {
    let t = w.tokens.login(chatgpt_family(), expired);
    // The id token carries the account's claims; the endpoint's first access token is one.
    let auth = json!({
        "OPENAI_API_KEY": null,
        "tokens": {"id_token": t.access, "access_token": t.access, "refresh_token": t.refresh,
            "account_id": ACCOUNT},
        "last_refresh": "2026-11-20T09:00:00.000000000Z"
    });
    w.write(
        ".codex/auth.json",
        &serde_json::to_string_pretty(&auth).unwrap(),
    );
    chatgpt_routes(w);
}

fn key_routes(w: &World, key: &str) {
    w.tokens.accept_key(key);
    w.tokens
        .route("GET", "/backend-api/codex/models", json!({"models": []}));
}

fn codex_api_key(w: &mut World, _: bool) {
    key_routes(w, "sk-codex-env-key");
    w.env
        .push(("CODEX_API_KEY".into(), "sk-codex-env-key".into()));
}

fn stored_key(w: &mut World, _: bool) {
    key_routes(w, "sk-codex-stored-key");
    let auth = json!({"auth_mode": "apikey", "OPENAI_API_KEY": "sk-codex-stored-key"});
    w.write(
        ".codex/auth.json",
        &serde_json::to_string_pretty(&auth).unwrap(),
    );
}

fn openai_key(w: &mut World, _: bool) {
    key_routes(w, "sk-openai-env-key");
    w.env
        .push(("OPENAI_API_KEY".into(), "sk-openai-env-key".into()));
}

const OWN: &[&str] = &[
    "exec",
    "Say breaks.",
    "--skip-git-repo-check",
    "--ephemeral",
];

const fn case(
    kind: &'static str,
    family: Option<fn() -> Family>,
    user: fn(&mut World, bool),
    own: &'static [&'static str],
) -> Case {
    Case {
        cli: "codex",
        kind,
        model: None,
        family,
        user,
        store: match family {
            Some(_) => Some((".codex/auth.json", "/tokens/refresh_token")),
            None => None,
        },
        own,
        // Codex retries a 500 itself; prose it hands on, and panel asks again.
        fail_once: Mode::Prose,
    }
}

pub(crate) const CASES: &[Case] = &[
    case("chatgpt", Some(chatgpt_family), chatgpt, OWN),
    case("codex-api-key", None, codex_api_key, OWN),
    case("stored-api-key", None, stored_key, OWN),
    // The user's own codex sends this key nowhere (0.171.0): only the judges are held to it.
    case("openai-api-key", None, openai_key, &[]),
];

#[test]
fn codex_chatgpt_login() {
    check(super::case("codex", "chatgpt"));
}

#[test]
fn codex_api_key_login() {
    check(super::case("codex", "codex-api-key"));
}

#[test]
fn codex_stored_api_key_login() {
    check(super::case("codex", "stored-api-key"));
}

#[test]
fn codex_openai_api_key_login() {
    check(super::case("codex", "openai-api-key"));
}

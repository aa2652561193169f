//! OpenCode's logins: "ChatGPT" in its auth.json (an OAuth entry refreshed at auth.openai.com,
//! rotating; every model call to chatgpt.com), a provider's key kept in auth.json, and a key
//! in the environment under the name another CLI gives it (`GEMINI_API_KEY`, which opencode
//! reads only as `GOOGLE_GENERATIVE_AI_API_KEY`).

use std::time::Duration;

use serde_json::json;

use super::{Case, World, check, ms};
use crate::mockserver::Mode;
use crate::tokens::Family;

const AUTH: &str = ".local/share/opencode/auth.json";

fn chatgpt_family() -> Family {
    Family::new("opencode", Duration::from_secs(10 * 24 * 3600))
        .client("app_EMoamEEZ73f0CkXaXp7hrann")
}

/// A ChatGPT login, as `opencode auth login` writes it.
fn chatgpt(w: &mut World, expired: bool) {
    let t = w.tokens.login(chatgpt_family(), expired);
    let auth = json!({"openai": {"type": "oauth", "refresh": t.refresh, "access": t.access,
        "expires": ms(t.expires), "accountId": "acct-test"}});
    w.write(AUTH, &serde_json::to_string_pretty(&auth).unwrap());
}

/// An OpenRouter key that `opencode auth login` keeps in auth.json.
fn stored_key(w: &mut World, _: bool) {
    w.tokens.accept_key("sk-or-stored");
    let auth = json!({"openrouter": {"type": "api", "key": "sk-or-stored"}});
    w.write(AUTH, &serde_json::to_string_pretty(&auth).unwrap());
}

/// A Google key exported as `GEMINI_API_KEY`, as gemini's users have it.
fn gemini_key(w: &mut World, _: bool) {
    w.tokens.accept_key("AIza-opencode-key");
    w.env
        .push(("GEMINI_API_KEY".into(), "AIza-opencode-key".into()));
}

const fn case(
    kind: &'static str,
    model: &'static str,
    family: Option<fn() -> Family>,
    user: fn(&mut World, bool),
    own: &'static [&'static str],
) -> Case {
    Case {
        cli: "opencode",
        kind,
        model: Some(model),
        family,
        user,
        store: match family {
            Some(_) => Some((AUTH, "/openai/refresh")),
            None => None,
        },
        own,
        // It backs off and retries a 500 past any short deadline; prose it hands on.
        fail_once: Mode::Prose,
    }
}

pub(crate) const CASES: &[Case] = &[
    case(
        "chatgpt",
        "openai/gpt-5.4",
        Some(chatgpt_family),
        chatgpt,
        &["run", "Say breaks.", "-m", "openai/gpt-5.4"],
    ),
    case(
        "openrouter-stored-key",
        "openrouter/qwen/qwen3-coder",
        None,
        stored_key,
        &["run", "Say breaks.", "-m", "openrouter/qwen/qwen3-coder"],
    ),
    // opencode itself does not read GEMINI_API_KEY: only the judges are held to this login.
    case(
        "gemini-key",
        "google/gemini-2.5-flash",
        None,
        gemini_key,
        &[],
    ),
];

#[test]
fn opencode_chatgpt_login() {
    check(super::case("opencode", "chatgpt"));
}

#[test]
fn opencode_stored_key_login() {
    check(super::case("opencode", "openrouter-stored-key"));
}

#[test]
fn opencode_gemini_key_login() {
    check(super::case("opencode", "gemini-key"));
}

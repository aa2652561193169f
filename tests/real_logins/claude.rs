//! Claude Code's logins: a Pro/Max login (`~/.claude/.credentials.json`, refreshed at
//! platform.claude.com, rotating), `claude setup-token`'s `CLAUDE_CODE_OAUTH_TOKEN`, and
//! `ANTHROPIC_API_KEY`.

use std::time::Duration;

use serde_json::json;

use super::{Case, World, check, ms};
use crate::mockserver::Mode;
use crate::tokens::Family;

fn claude_family() -> Family {
    Family::new("claude", Duration::from_secs(8 * 3600))
        .client("9d1c250a-e61b-44d9-88ed-5944d1962f5e")
        .prefix("sk-ant-oat01-")
}

/// A Pro/Max login: `~/.claude/.credentials.json`, as `claude /login` writes it.
fn claude_pro_max(w: &mut World, expired: bool) {
    let t = w.tokens.login(claude_family(), expired);
    let creds = json!({"claudeAiOauth": {
        "accessToken": t.access, "refreshToken": t.refresh, "expiresAt": ms(t.expires),
        "scopes": ["user:inference", "user:profile", "user:sessions:claude_code"],
        "subscriptionType": "max", "rateLimitTier": "default_claude_max_20x"
    }});
    w.write(".claude/.credentials.json", &creds.to_string());
    w.env.push(("CLAUDE_CODE_MAX_RETRIES".into(), "0".into()));
}

/// `claude setup-token`'s year-long token in `CLAUDE_CODE_OAUTH_TOKEN`.
fn claude_oauth_token(w: &mut World, _: bool) {
    let t = w.tokens.login(claude_family().fixed(), false);
    w.env.push(("CLAUDE_CODE_OAUTH_TOKEN".into(), t.access));
    w.env.push(("CLAUDE_CODE_MAX_RETRIES".into(), "0".into()));
}

fn claude_api_key(w: &mut World, _: bool) {
    w.tokens.accept_key("sk-ant-api03-test-key");
    w.env
        .push(("ANTHROPIC_API_KEY".into(), "sk-ant-api03-test-key".into()));
    w.env.push(("CLAUDE_CODE_MAX_RETRIES".into(), "0".into()));
}

const CLAUDE_OWN: &[&str] = &[
    "-p",
    "Say breaks.",
    "--output-format",
    "json",
    "--tools",
    "",
];

pub(crate) const CASES: &[Case] = &[
    Case {
        cli: "claude",
        kind: "pro-max",
        model: Some("haiku"),
        family: Some(claude_family),
        user: claude_pro_max,
        store: Some((".claude/.credentials.json", "/claudeAiOauth/refreshToken")),
        own: CLAUDE_OWN,
        fail_once: Mode::Error500,
    },
    Case {
        cli: "claude",
        kind: "oauth-token",
        model: Some("haiku"),
        family: None,
        user: claude_oauth_token,
        store: None,
        own: CLAUDE_OWN,
        fail_once: Mode::Error500,
    },
    Case {
        cli: "claude",
        kind: "api-key",
        model: Some("haiku"),
        family: None,
        user: claude_api_key,
        store: None,
        own: CLAUDE_OWN,
        fail_once: Mode::Error500,
    },
];

#[test]
fn claude_pro_max_login() {
    check(super::case("claude", "pro-max"));
}

#[test]
fn claude_oauth_token_login() {
    check(super::case("claude", "oauth-token"));
}

#[test]
fn claude_api_key_login() {
    check(super::case("claude", "api-key"));
}

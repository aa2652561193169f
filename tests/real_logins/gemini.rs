//! Gemini CLI's logins: a Google login (`~/.gemini/oauth_creds.json`, refreshed at
//! oauth2.googleapis.com, which never rotates it; every call to Code Assist at
//! cloudcode-pa.googleapis.com), chosen by the user's settings, and `GEMINI_API_KEY`.

use std::time::Duration;

use serde_json::json;

use super::{Case, World, check, ms};
use crate::mockserver::Mode;
use crate::tokens::Family;

const CLIENT: &str = "681255809395-oo8ft2oprdrnp9e3aqf6av3hmdib135j.apps.googleusercontent.com";

fn google_family() -> Family {
    Family::new("gemini", Duration::from_secs(3600))
        .client(CLIENT)
        .prefix("ya29.")
        .fixed()
}

/// What Google answers before the model call: the token's description (the user's own gemini
/// checks it at every start), the account, and Code Assist's tier and project.
fn google_routes(w: &World) {
    w.tokens.route(
        "POST",
        "/tokeninfo",
        json!({"azp": CLIENT, "aud": CLIENT, "sub": "1", "expires_in": "3000",
            "scope": "https://www.googleapis.com/auth/cloud-platform https://www.googleapis.com/auth/userinfo.email openid",
            "email": "user@example.com", "email_verified": "true", "access_type": "offline"}),
    );
    w.tokens.route(
        "GET",
        "/oauth2/v2/userinfo",
        json!({"id": "1", "email": "user@example.com", "verified_email": true}),
    );
    w.tokens.route(
        "POST",
        "/v1internal:loadCodeAssist",
        json!({"currentTier": {"id": "free-tier", "name": "Gemini Code Assist for individuals"},
            "allowedTiers": [{"id": "free-tier", "name": "free", "isDefault": true}],
            "cloudaicompanionProject": "stand-in-project-1"}),
    );
}

/// A Google login, as gemini writes it, chosen in the user's settings.
fn google(w: &mut World, expired: bool) {
    let t = w.tokens.login(google_family(), expired);
    let creds = json!({
        "access_token": t.access, "scope": "https://www.googleapis.com/auth/cloud-platform openid",
        "token_type": "Bearer", "expiry_date": ms(t.expires), "refresh_token": t.refresh
    });
    w.write(
        ".gemini/oauth_creds.json",
        &serde_json::to_string_pretty(&creds).unwrap(),
    );
    w.write(
        ".gemini/settings.json",
        &json!({"security": {"auth": {"selectedType": "oauth-personal"}}}).to_string(),
    );
    google_routes(w);
}

fn api_key(w: &mut World, _: bool) {
    w.tokens.accept_key("AIza-test-key");
    w.env
        .push(("GEMINI_API_KEY".into(), "AIza-test-key".into()));
}

const OWN: &[&str] = &[
    "-p",
    "Say breaks.",
    "-m",
    "gemini-2.5-flash",
    "-o",
    "json",
    "--skip-trust",
];

pub(crate) const CASES: &[Case] = &[
    Case {
        cli: "gemini",
        kind: "google",
        model: Some("gemini-2.5-flash"),
        family: Some(google_family),
        user: google,
        store: Some((".gemini/oauth_creds.json", "/refresh_token")),
        own: OWN,
        fail_once: Mode::Prose,
    },
    Case {
        cli: "gemini",
        kind: "api-key",
        model: Some("gemini-2.5-flash"),
        family: None,
        user: api_key,
        store: None,
        own: OWN,
        fail_once: Mode::Prose,
    },
];

#[test]
fn gemini_google_login() {
    check(super::case("gemini", "google"));
}

#[test]
fn gemini_api_key_login() {
    check(super::case("gemini", "api-key"));
}

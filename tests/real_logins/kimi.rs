//! Kimi's logins: Kimi Code's OAuth login (`~/.kimi/credentials/kimi-code.json`, named by
//! config.toml's `managed:kimi-code` provider; refreshed at auth.kimi.com, rotating), and a key
//! in config.toml.

use std::time::Duration;

use serde_json::json;

use super::{Case, World, check};
use crate::mockserver::Mode;
use crate::tokens::Family;

fn kimi_family() -> Family {
    Family::new("kimi", Duration::from_secs(15 * 60)).client("17e5f671-d194-4dfb-9706-5516cb48c098")
}

/// The provider and model `kimi login` writes into config.toml.
const OAUTH_CONFIG: &str = r#"default_model = "kimi-code/kimi-for-coding"

[models."kimi-code/kimi-for-coding"]
provider = "managed:kimi-code"
model = "kimi-for-coding"
max_context_size = 262144

[providers."managed:kimi-code"]
type = "kimi"
base_url = "https://api.kimi.com/coding/v1"
api_key = ""

[providers."managed:kimi-code".oauth]
storage = "file"
key = "oauth/kimi-code"
"#;

/// A Kimi Code login, as `kimi login` writes it.
fn kimi_code(w: &mut World, expired: bool) {
    let t = w.tokens.login(kimi_family(), expired);
    let secs = |t: std::time::SystemTime| {
        t.duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64()
    };
    let creds = json!({"access_token": t.access, "refresh_token": t.refresh,
        "expires_at": secs(t.expires), "scope": "kimi-code", "token_type": "Bearer",
        "expires_in": 900.0});
    w.write(".kimi/config.toml", OAUTH_CONFIG);
    w.write(".kimi/credentials/kimi-code.json", &creds.to_string());
}

/// A key `/setup` wrote into config.toml.
fn config_key(w: &mut World, _: bool) {
    w.tokens.accept_key("sk-kimi-config-key");
    w.write(
        ".kimi/config.toml",
        r#"default_model = "moonshot/kimi-k2"

[models."moonshot/kimi-k2"]
provider = "managed:moonshot-ai"
model = "kimi-k2"
max_context_size = 131072

[providers."managed:moonshot-ai"]
type = "kimi"
base_url = "https://api.moonshot.ai/v1"
api_key = "sk-kimi-config-key"
"#,
    );
}

const OWN: &[&str] = &[
    "--print",
    "-p",
    "Say breaks.",
    "--output-format",
    "stream-json",
];

pub(crate) const CASES: &[Case] = &[
    Case {
        cli: "kimi",
        kind: "kimi-code",
        model: None,
        family: Some(kimi_family),
        user: kimi_code,
        store: Some((".kimi/credentials/kimi-code.json", "/refresh_token")),
        own: OWN,
        fail_once: Mode::Prose,
    },
    Case {
        cli: "kimi",
        kind: "config-key",
        model: None,
        family: None,
        user: config_key,
        store: None,
        own: OWN,
        fail_once: Mode::Prose,
    },
];

#[test]
fn kimi_code_login() {
    check(super::case("kimi", "kimi-code"));
}

#[test]
fn kimi_config_key_login() {
    check(super::case("kimi", "config-key"));
}

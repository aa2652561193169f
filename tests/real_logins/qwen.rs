//! Qwen Code's logins: a Coding Plan or Token Plan key that `/auth` keeps in
//! `~/.qwen/settings.json` (its `env` and `modelProviders`), and `OPENAI_API_KEY`. Its Qwen OAuth
//! login is refused by qwen 0.24.4 itself (tests/doctor.rs holds what --doctor says of it).

use serde_json::json;

use super::{Case, World, check};
use crate::mockserver::Mode;

/// A plan's key and its model entry, as `/auth` writes them into the user's settings.
fn plan(w: &mut World, var: &str, key: &str, base: &str) {
    w.tokens.accept_key(key);
    let settings = json!({
        "env": {var: key},
        "modelProviders": {"openai": [{"id": "qwen3-coder-plus",
            "name": "[ModelStudio Coding Plan] qwen3-coder-plus", "baseUrl": base, "envKey": var}]},
        "security": {"auth": {"selectedType": "openai"}},
        "model": {"name": "qwen3-coder-plus"},
        "ui": {"theme": "the user's own, not carried"}
    });
    w.write(
        ".qwen/settings.json",
        &serde_json::to_string_pretty(&settings).unwrap(),
    );
}

fn coding_plan(w: &mut World, _: bool) {
    plan(
        w,
        "BAILIAN_CODING_PLAN_API_KEY",
        "sk-sp-coding-plan",
        "https://coding.dashscope.aliyuncs.com/v1",
    );
}

fn token_plan(w: &mut World, _: bool) {
    plan(
        w,
        "BAILIAN_TOKEN_PLAN_API_KEY",
        "sk-token-plan",
        "https://token-plan.ap-southeast-1.maas.aliyuncs.com/compatible-mode/v1",
    );
}

fn api_key(w: &mut World, _: bool) {
    w.tokens.accept_key("sk-qwen-openai-key");
    for (k, v) in [
        ("OPENAI_API_KEY", "sk-qwen-openai-key"),
        (
            "OPENAI_BASE_URL",
            "https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
        ),
        ("OPENAI_MODEL", "qwen3-coder-plus"),
    ] {
        w.env.push((k.into(), v.into()));
    }
}

const OWN: &[&str] = &["Say breaks.", "-o", "json"];

const fn case(kind: &'static str, user: fn(&mut World, bool)) -> Case {
    Case {
        cli: "qwen",
        kind,
        model: None,
        family: None,
        user,
        store: None,
        own: OWN,
        // Prose under --json-schema ends qwen with exit 1: panel asks again.
        fail_once: Mode::Prose,
    }
}

pub(crate) const CASES: &[Case] = &[
    case("coding-plan", coding_plan),
    case("token-plan", token_plan),
    case("api-key", api_key),
];

#[test]
fn qwen_coding_plan_login() {
    check(super::case("qwen", "coding-plan"));
}

#[test]
fn qwen_token_plan_login() {
    check(super::case("qwen", "token-plan"));
}

#[test]
fn qwen_api_key_login() {
    check(super::case("qwen", "api-key"));
}

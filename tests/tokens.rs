//! Stand-in token endpoints as the real services run them, for the login tests: each login is
//! a family of tokens with one live refresh token at a time. A refresh spends it and (where the
//! service rotates) issues the next; a spent one presented again is reuse: refused with
//! `invalid_grant`, and the whole family revoked, as OpenAI's and Anthropic's endpoints do, so
//! a broker (or a judge) that spends a token twice logs the user out, and the test sees it.
//! Every other request is held to a live access token of a family (or an accepted API key),
//! else it gets the API's own 401.
//!
//! A token request is any `POST` whose body (JSON or form) has `grant_type=refresh_token`: the
//! refresh token names its family, and the log keeps the host and path it came to, so a test
//! asserts the CLI's real endpoint.

#![allow(dead_code)]

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::mockserver::{Front, Reply, Request};

/// One login's tokens.
#[derive(Clone, Debug)]
pub struct Family {
    pub name: String,
    /// Whether a refresh issues a new refresh token (and spends the old one).
    pub rotates: bool,
    /// How long an access token lives.
    pub lifetime: Duration,
    /// The client id its CLI sends, when the test holds it to one.
    pub client_id: Option<String>,
    /// What an access token starts with (`sk-ant-oat01-`, `ya29.`); `None`: a JWT.
    pub prefix: Option<String>,
    live_refresh: Option<String>,
    spent: Vec<String>,
    revoked: bool,
}

/// One refresh as the endpoint saw it.
#[derive(Clone, Debug)]
pub struct Refreshed {
    pub family: String,
    pub host: String,
    pub path: String,
    pub client_id: Option<String>,
    /// `ok`, `reused`, `unknown`, `revoked`, `wrong client`.
    pub outcome: String,
}

/// A login the user has: what the endpoint issued.
#[derive(Clone, Debug)]
pub struct Issued {
    pub access: String,
    pub refresh: String,
    /// When the access token expires.
    pub expires: SystemTime,
}

#[derive(Default)]
struct State {
    families: Vec<Family>,
    /// Access token → its family and expiry.
    access: HashMap<String, (usize, SystemTime)>,
    keys: Vec<String>,
    refreshes: Vec<Refreshed>,
    /// Requests refused for their credentials: `host path: why`.
    refused: Vec<String>,
    /// Requests let through, by the family (or `key`) that carried them.
    served: BTreeMap<String, usize>,
    /// Answers to a login's own calls (`METHOD`, path suffix) → JSON.
    routes: Vec<(String, String, Value)>,
    counter: u64,
}

/// The stand-in token service.
#[derive(Default)]
pub struct Tokens {
    state: Mutex<State>,
    /// Whether requests other than token requests must carry a live credential.
    pub strict: bool,
}

impl Tokens {
    pub fn new() -> Arc<Tokens> {
        Arc::new(Tokens {
            state: Mutex::default(),
            strict: true,
        })
    }

    /// A new family for a login named `name`, and its first tokens; `expired` makes its access
    /// token one that expired an hour ago (the user last ran the CLI long ago).
    pub fn login(&self, family: Family, expired: bool) -> Issued {
        let mut st = self.state.lock().unwrap();
        st.families.push(family);
        let i = st.families.len() - 1;
        let refresh = new_token(&mut st, i, "rt");
        st.families[i].live_refresh = Some(refresh.clone());
        let expires = match expired {
            true => SystemTime::now() - Duration::from_secs(3600),
            false => SystemTime::now() + st.families[i].lifetime,
        };
        let access = access_token(&mut st, i, expires);
        Issued {
            access,
            refresh,
            expires,
        }
    }

    /// Lets requests carrying `key` (an API key) through.
    pub fn accept_key(&self, key: &str) {
        self.state.lock().unwrap().keys.push(key.to_string());
    }

    /// Answers `METHOD` requests whose path ends with `suffix` (before its query) with `body`.
    pub fn route(&self, method: &str, suffix: &str, body: Value) {
        let mut st = self.state.lock().unwrap();
        st.routes
            .push((method.to_string(), suffix.to_string(), body));
    }

    pub fn refreshes(&self) -> Vec<Refreshed> {
        self.state.lock().unwrap().refreshes.clone()
    }

    /// Refresh tokens presented again after they were spent.
    pub fn reuses(&self) -> usize {
        self.refreshes()
            .iter()
            .filter(|r| r.outcome == "reused")
            .count()
    }

    pub fn refused(&self) -> Vec<String> {
        self.state.lock().unwrap().refused.clone()
    }

    /// Requests let through for `family`.
    pub fn served(&self, family: &str) -> usize {
        *self.state.lock().unwrap().served.get(family).unwrap_or(&0)
    }

    /// The family's live refresh token (`None` once revoked).
    pub fn live_refresh(&self, family: &str) -> Option<String> {
        let st = self.state.lock().unwrap();
        let f = st.families.iter().find(|f| f.name == family)?;
        (!f.revoked).then(|| f.live_refresh.clone()).flatten()
    }

    /// Every refresh token the family was ever issued (to look for them where none may be).
    pub fn all_refresh(&self, family: &str) -> Vec<String> {
        let st = self.state.lock().unwrap();
        st.families
            .iter()
            .filter(|f| f.name == family)
            .flat_map(|f| f.spent.iter().chain(f.live_refresh.iter()).cloned())
            .collect()
    }

    /// Every credential a model request may carry: each access token issued, each key
    /// accepted (to look for them where a placeholder must be instead).
    pub fn all_credentials(&self) -> Vec<String> {
        let st = self.state.lock().unwrap();
        st.access.keys().chain(st.keys.iter()).cloned().collect()
    }

    pub fn revoked(&self, family: &str) -> bool {
        let st = self.state.lock().unwrap();
        st.families.iter().any(|f| f.name == family && f.revoked)
    }

    /// The handler the stand-in server asks first.
    pub fn front(self: &Arc<Tokens>) -> Front {
        let me = Arc::clone(self);
        Arc::new(move |req: &Request| me.handle(req))
    }

    fn handle(&self, req: &Request) -> Option<Reply> {
        let host = req.header("host").unwrap_or_default().to_string();
        let path = req.target.split('?').next().unwrap_or_default().to_string();
        let fields = fields(req);
        if req.method == "POST"
            && fields.get("grant_type").map(String::as_str) == Some("refresh_token")
        {
            return Some(self.refresh(&host, &path, &fields));
        }
        let mut st = self.state.lock().unwrap();
        let carried = credential(req);
        let who = carried.as_deref().and_then(|c| {
            if st.keys.iter().any(|k| k == c) {
                return Some("key".to_string());
            }
            let (i, exp) = st.access.get(c)?;
            let f = &st.families[*i];
            (!f.revoked && *exp > SystemTime::now()).then(|| f.name.clone())
        });
        match who {
            Some(w) => *st.served.entry(w).or_default() += 1,
            None if self.strict => {
                let why = match &carried {
                    None => "no credential",
                    Some(c) if st.access.contains_key(c) => "an expired or revoked access token",
                    Some(_) => "an unknown credential",
                };
                st.refused.push(format!("{host} {path}: {why}"));
                return Some(Reply::Json(401, unauthorized(&path, why), vec![]));
            }
            None => {}
        }
        let route = st
            .routes
            .iter()
            .find(|(m, s, _)| *m == req.method && path.ends_with(s.as_str()));
        route.map(|(_, _, body)| Reply::Json(200, body.clone(), vec![]))
    }

    fn refresh(&self, host: &str, path: &str, fields: &BTreeMap<String, String>) -> Reply {
        let mut st = self.state.lock().unwrap();
        let presented = fields.get("refresh_token").cloned().unwrap_or_default();
        let client_id = fields.get("client_id").cloned();
        let found = st.families.iter().position(|f| {
            f.live_refresh.as_deref() == Some(presented.as_str()) || f.spent.contains(&presented)
        });
        let log = |st: &mut State, family: &str, outcome: &str| {
            st.refreshes.push(Refreshed {
                family: family.to_string(),
                host: host.to_string(),
                path: path.to_string(),
                client_id: client_id.clone(),
                outcome: outcome.to_string(),
            })
        };
        let Some(i) = found else {
            log(&mut st, "?", "unknown");
            return Reply::Json(400, invalid_grant("unknown refresh token"), vec![]);
        };
        let name = st.families[i].name.clone();
        if st.families[i].revoked {
            log(&mut st, &name, "revoked");
            return Reply::Json(400, invalid_grant("the login was revoked"), vec![]);
        }
        if st.families[i].spent.contains(&presented) {
            // Reuse: the whole family goes, as the real services do.
            st.families[i].revoked = true;
            log(&mut st, &name, "reused");
            return Reply::Json(400, invalid_grant("refresh token was already used"), vec![]);
        }
        if let Some(want) = &st.families[i].client_id
            && client_id.as_deref() != Some(want.as_str())
        {
            log(&mut st, &name, "wrong client");
            return Reply::Json(400, json!({"error": "invalid_client"}), vec![]);
        }
        let rotates = st.families[i].rotates;
        let lifetime = st.families[i].lifetime;
        let expires = SystemTime::now() + lifetime;
        let access = access_token(&mut st, i, expires);
        let mut answer = json!({
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": lifetime.as_secs(),
            "scope": "user:inference user:profile openid profile email offline_access",
        });
        if rotates {
            let next = new_token(&mut st, i, "rt");
            st.families[i].spent.push(presented);
            st.families[i].live_refresh = Some(next.clone());
            answer["refresh_token"] = json!(next);
        }
        if st.families[i].prefix.is_none() {
            let jti = new_token(&mut st, i, "id");
            answer["id_token"] = json!(jwt(expires, &name, &jti));
        }
        log(&mut st, &name, "ok");
        Reply::Json(200, answer, vec![])
    }
}

fn new_token(st: &mut State, family: usize, kind: &str) -> String {
    st.counter += 1;
    let mut salt = [0u8; 8];
    getrandom::fill(&mut salt).unwrap();
    format!(
        "{kind}-{}-{}-{:016x}",
        st.families[family].name,
        st.counter,
        u64::from_le_bytes(salt)
    )
}

fn access_token(st: &mut State, family: usize, expires: SystemTime) -> String {
    let token = match st.families[family].prefix.clone() {
        Some(p) => format!("{p}{}", new_token(st, family, "at")),
        None => {
            let name = st.families[family].name.clone();
            let jti = new_token(st, family, "at");
            jwt(expires, &name, &jti)
        }
    };
    st.access.insert(token.clone(), (family, expires));
    token
}

/// An unsigned JWT expiring at `exp`, with the claims a ChatGPT login's tokens carry; `jti`
/// makes each one unique.
fn jwt(exp: SystemTime, family: &str, jti: &str) -> String {
    let exp = exp.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
    let claims = json!({
        "exp": exp,
        "iat": exp.saturating_sub(3600),
        "sub": format!("user-{family}"),
        "email": "user@example.com",
        "jti": jti,
        "https://api.openai.com/auth": {
            "chatgpt_account_id": "acct-test",
            "chatgpt_plan_type": "plus",
            "chatgpt_user_id": "user-test"
        }
    });
    format!(
        "{}.{}.sig",
        b64url(br#"{"alg":"none","typ":"JWT"}"#),
        b64url(claims.to_string().as_bytes())
    )
}

pub fn b64url(bytes: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..=chunk.len() {
            out.push(T[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

/// A request body's fields: a JSON object's strings, or a form's.
fn fields(req: &Request) -> BTreeMap<String, String> {
    if let Ok(Value::Object(o)) = serde_json::from_slice::<Value>(&req.body) {
        return o
            .into_iter()
            .filter_map(|(k, v)| v.as_str().map(|s| (k, s.to_string())))
            .collect();
    }
    String::from_utf8_lossy(&req.body)
        .split('&')
        .filter_map(|pair| {
            let (k, v) = pair.split_once('=')?;
            Some((unescape(k), unescape(v)))
        })
        .collect()
}

fn unescape(s: &str) -> String {
    let mut out = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            // Read as bytes: a body that is no form (copilot's compressed telemetry) may hold
            // `%` before a character of several bytes.
            b'%' if i + 2 < b.len() => {
                let hex = std::str::from_utf8(&b[i + 1..i + 3]).ok();
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(v) => {
                        out.push(v);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The credential a request carries: a bearer token (or GitHub's `token …`), an API key
/// header, or a `key` parameter.
fn credential(req: &Request) -> Option<String> {
    if let Some(v) = req.header("authorization") {
        let v = v.trim();
        let scheme = ["Bearer ", "bearer ", "token "];
        let token = scheme.iter().find_map(|s| v.strip_prefix(s)).unwrap_or(v);
        return Some(token.to_string());
    }
    for h in ["x-api-key", "x-goog-api-key", "api-key"] {
        if let Some(v) = req.header(h) {
            return Some(v.trim().to_string());
        }
    }
    let query = req.target.split_once('?')?.1;
    query
        .split('&')
        .find_map(|kv| kv.strip_prefix("key="))
        .map(str::to_string)
}

fn invalid_grant(why: &str) -> Value {
    json!({"error": "invalid_grant", "error_description": why})
}

/// A 401's body, in the shape of the API the path belongs to.
fn unauthorized(path: &str, why: &str) -> Value {
    if path.ends_with("/messages") || path.contains("/api/oauth") || path.contains("claude_code") {
        json!({"type": "error", "error": {"type": "authentication_error", "message": format!("OAuth token has expired ({why})")}})
    } else {
        json!({"error": {"message": format!("Unauthorized: {why}"), "type": "invalid_request_error", "code": "invalid_api_key"}})
    }
}

impl Family {
    /// A family named `name` that rotates, its access tokens living `lifetime`.
    pub fn new(name: &str, lifetime: Duration) -> Family {
        Family {
            name: name.to_string(),
            rotates: true,
            lifetime,
            client_id: None,
            prefix: None,
            live_refresh: None,
            spent: Vec::new(),
            revoked: false,
        }
    }

    pub fn client(mut self, id: &str) -> Family {
        self.client_id = Some(id.to_string());
        self
    }

    pub fn prefix(mut self, p: &str) -> Family {
        self.prefix = Some(p.to_string());
        self
    }

    pub fn fixed(mut self) -> Family {
        self.rotates = false;
        self
    }
}

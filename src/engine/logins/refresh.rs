//! A login's refresh, outside every wall: under the CLI's own lock, the store read again once
//! the lock is held, the refresh token spent once, and the answer written back in the CLI's own
//! format only where the store still holds the token spent. A store is a file or a Keychain
//! item ([`LoginPlace`]); the rules are the same for each.

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use anyhow::{Result, anyhow, bail};
use serde_json::Value;

use super::store::{self, Stored};
use super::{Live, LoginPlace, STAND_IN, User, dial, https, lock, needs_refresh};
use crate::engine::harness::login::{Body, LockKind, Login, Refresh, TimeAs};

/// The store `kept` as it is now, and when its access token expires.
pub(super) fn read_live(login: &Login, kept: &LoginPlace, user: &User) -> Result<Live> {
    let stored = match (kept, login.refresh.is_some() || login.token.is_some()) {
        (LoginPlace::File(path), false) => Stored::read_any(path)?,
        _ => kept.read(user)?,
    };
    Ok(live_of(login, stored))
}

/// A login held as `stored`, and when its access token expires.
pub(super) fn live_of(login: &Login, stored: Stored) -> Live {
    let expires = login.refresh.as_ref().and_then(|r| expiry(r, &stored));
    Live {
        token: None,
        stored: Some(stored),
        expires,
        refreshed: false,
    }
}

/// The login held as `live` in `kept`, refreshed where it expires too soon for a judge that
/// may run until `until`.
pub(super) fn fresh(
    login: &Login,
    kept: &LoginPlace,
    live: Live,
    user: &User,
    until: SystemTime,
) -> Result<Live> {
    match &login.refresh {
        Some(r) if needs_refresh(login, live.expires, until) => {
            let found = live.stored.as_ref().expect("a store's login");
            let live = refreshed(login, r, kept, found, user, until)?;
            Ok(Live {
                refreshed: true,
                ..live
            })
        }
        _ => Ok(live),
    }
}

/// When the access token in `stored` expires: its expiry field, else its own `exp` (a JWT).
pub(super) fn expiry(r: &Refresh, stored: &Stored) -> Option<SystemTime> {
    match &r.expires {
        Some(p) => store::read_time(stored.value.pointer(p)?, r.expires_as),
        None => store::jwt_expiry(stored.string(&r.access)?),
    }
}

/// Refreshes the login in `kept` (found as `found`) under its lock: read again once the lock
/// is held (another process may have refreshed it meanwhile), spend the refresh token once,
/// and write the answer back only where the store still holds the token spent.
fn refreshed(
    login: &Login,
    r: &Refresh,
    kept: &LoginPlace,
    found: &Stored,
    user: &User,
    until: SystemTime,
) -> Result<Live> {
    // Only the answer written back holds the token that replaces the one spent: where it
    // cannot be written as the store is found, nothing is spent (nor locked).
    kept.replaceable(found, user)
        .map_err(|e| anyhow!("not refreshed: {e:#}"))?;
    let stop: &dyn Fn() -> bool = &dial::stopping;
    let _held = match r.lock.is_empty() {
        true => {
            // panel's own, beside the login's file (a Keychain login's too).
            let path = user.path(login.file.as_deref().unwrap_or_default());
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            let beside = path.with_file_name(format!(".{name}.panel-lock"));
            vec![lock::take(
                &beside,
                LockKind::Flock,
                Duration::from_secs(60),
                stop,
            )?]
        }
        false => r
            .lock
            .iter()
            .map(|l| {
                let (at, stale) = (lock_path(&l.path, user), Duration::from_secs(l.stale));
                lock::take(&at, l.kind, stale, stop)
            })
            .collect::<Result<Vec<_>>>()?,
    };
    let now = read_live(login, kept, user)?;
    if !needs_refresh(login, now.expires, until) {
        return Ok(now);
    }
    let stored = now.stored.expect("a store's login");
    let spent = stored
        .string(&r.refresh_token)
        .filter(|t| !t.is_empty() && *t != STAND_IN)
        .ok_or_else(|| anyhow!("it holds no refresh token"))?
        .to_string();
    let answer = ask(r, &spent, user)?;
    let again = kept.read(user)?;
    if again.string(&r.refresh_token) != Some(spent.as_str()) {
        // The user's own CLI refreshed it meanwhile: theirs is the newer one.
        return read_live(login, kept, user);
    }
    // The answer goes into the store as it is now: what else in it changed meanwhile stays.
    let mut value = again.value.clone();
    apply(r, &answer, &mut value, SystemTime::now())?;
    let text = again.layout(&value);
    let new = Stored { text, value };
    if expiry(r, &new).is_none() {
        bail!(
            "{} answered a token whose expiry cannot be read",
            host_of(&r.url)
        );
    }
    // Written whole (a file renamed over, a Keychain item read back): what it holds now.
    kept.replace(&new.text, user)?;
    Ok(live_of(login, new))
}

/// Where a lock is: its template expanded, a `{real}` folder resolved to its real path.
fn lock_path(template: &str, user: &User) -> PathBuf {
    match template.split_once("{real}") {
        Some((dir, rest)) => {
            let dir = user.path(dir.trim_end_matches('/'));
            let real = std::fs::canonicalize(&dir).unwrap_or(dir);
            PathBuf::from(format!("{}{rest}", real.display()))
        }
        None => user.path(template),
    }
}

/// Asks the token endpoint for new tokens in exchange for `refresh`.
fn ask(r: &Refresh, refresh: &str, user: &User) -> Result<Value> {
    let fields: Vec<(String, String)> = r
        .request
        .iter()
        .map(|(k, v)| (k.clone(), v.replace("{refresh}", refresh)))
        .collect();
    let (kind, body) = match r.body {
        Body::Json => {
            let obj: serde_json::Map<String, Value> = fields
                .into_iter()
                .map(|(k, v)| (k, Value::String(v)))
                .collect();
            ("application/json", Value::Object(obj).to_string())
        }
        Body::Form => ("application/x-www-form-urlencoded", https::form(&fields)),
    };
    let mut headers: Vec<(String, String)> = vec![("Content-Type".into(), kind.into())];
    headers.extend(r.headers.iter().map(|(k, v)| (k.clone(), v.clone())));
    let (body, stop) = (body.as_bytes(), &dial::stopping);
    let answer = https::post(&r.url, &headers, body, user.env, https::TIMEOUT, stop)?;
    let value: Option<Value> = serde_json::from_slice(&answer.body).ok();
    if !(200..300).contains(&answer.status) {
        let sent = fields_sent(r, refresh);
        let words = value
            .as_ref()
            .map_or(String::new(), |v| refusal_words(v, &sent));
        bail!("{} answered {}{words}", host_of(&r.url), answer.status);
    }
    let value = value.ok_or_else(|| anyhow!("{} answered no JSON", host_of(&r.url)))?;
    if value.get("access_token").and_then(Value::as_str).is_none() {
        bail!("{} answered no access_token", host_of(&r.url));
    }
    if let Some(why) = ill_typed(r, &value) {
        bail!("{} answered {why}: nothing was saved", host_of(&r.url));
    }
    Ok(value)
}

/// The values a refresh request sends, its refresh token among them.
fn fields_sent(r: &Refresh, refresh: &str) -> Vec<String> {
    let values = r.request.values().map(|v| v.replace("{refresh}", refresh));
    values.chain([refresh.to_string()]).collect()
}

/// Why an answer cannot be saved in the user's store: its tokens must be strings, and the
/// other fields the row saves from it strings or numbers (nothing else is written in).
fn ill_typed(r: &Refresh, answer: &Value) -> Option<String> {
    let present = |k: &str| answer.get(k).filter(|v| !v.is_null());
    let token = ["access_token", "refresh_token", "id_token"]
        .into_iter()
        .find(|k| present(k).is_some_and(|v| !v.is_string()));
    if let Some(k) = token {
        return Some(format!("a {k} that is not a string"));
    }
    let saved = r.save.values().filter(|f| !f.starts_with('{'));
    let mut bad = saved.filter(|f| present(f).is_some_and(|v| !(v.is_string() || v.is_number())));
    bad.next()
        .map(|f| format!("a {f} that is neither a string nor a number"))
}

/// The OAuth error words of a refused refresh (`invalid_grant: refresh token already used`),
/// escaped and cut, every value the request sent (`sent`: the refresh token, the client id)
/// taken out: an endpoint that echoes them shows none.
fn refusal_words(v: &Value, sent: &[String]) -> String {
    let words = |k: &str| {
        v.get(k)
            .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_string))
    };
    let said: Vec<String> = ["error", "error_description", "message"]
        .iter()
        .filter_map(|k| words(k))
        .collect();
    if said.is_empty() {
        return String::new();
    }
    let mut text = said.join(": ");
    for value in sent.iter().filter(|s| s.len() >= 4) {
        text = text.replace(value.as_str(), "…");
    }
    let text = crate::records::printable::one_line(&text);
    format!(": {}", text.chars().take(200).collect::<String>())
}

fn host_of(url: &str) -> &str {
    let rest = url.strip_prefix("https://").unwrap_or(url);
    rest.split('/').next().unwrap_or(rest)
}

/// Writes an answer's tokens into the store's value: the access token, the refresh token when
/// a new one came (a login that does not rotate keeps its own), the expiry from `expires_in`,
/// and the row's other fields.
pub(super) fn apply(r: &Refresh, answer: &Value, value: &mut Value, now: SystemTime) -> Result<()> {
    let field = |k: &str| answer.get(k).filter(|v| !v.is_null()).cloned();
    store::set(value, &r.access, field("access_token").expect("checked"))?;
    if let Some(new) = field("refresh_token") {
        store::set(value, &r.refresh_token, new)?;
    }
    if let (Some(p), Some(secs)) = (&r.expires, field("expires_in").and_then(|v| v.as_f64())) {
        let at = now + Duration::from_secs_f64(secs.clamp(0.0, 1e9));
        store::set(value, p, store::write_time(at, r.expires_as))?;
    }
    for (pointer, from) in &r.save {
        let v = match from.as_str() {
            "{now}" => Some(store::write_time(now, r.expires_as)),
            "{now:rfc3339}" => Some(store::write_time(now, TimeAs::Rfc3339)),
            words if words.starts_with("{words:") => words
                .strip_prefix("{words:")
                .and_then(|w| w.strip_suffix('}'))
                .and_then(&field)
                .and_then(|v| {
                    v.as_str()
                        .map(|t| Value::from(t.split_whitespace().collect::<Vec<_>>()))
                }),
            key => field(key),
        };
        if let Some(v) = v {
            store::set(value, pointer, v)?;
        }
    }
    Ok(())
}

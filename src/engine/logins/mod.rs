//! The login broker (docs/design.md §8): a judge holds nothing worth stealing, and its user's
//! login stays theirs. Before a judge starts, the broker finds the login its row says the user
//! has ([`crate::engine::harness::login`], in the CLI's own order of precedence) in the user's
//! own store (a file, a variable, a command such as `gh auth token`, on macOS an item of their
//! Keychain, read with `security`, before the file). An access token that
//! would expire before the judge's deadline is refreshed once per login per run, here, outside
//! every wall, under the CLI's own lock where it has one, and the user's store is written back
//! in the CLI's own format, atomically, only if it still holds the refresh token spent. The
//! judge gets a live access token in the file or variable its CLI reads, and never the refresh
//! token: a file's copy carries [`STAND_IN`] in its place.

mod command;
mod dial;
pub mod https;
mod keychain;
mod lock;
mod missing;
pub mod placeholder;
mod refresh;
pub mod store;

pub use missing::{how_to_log_in, none_for};
pub use placeholder::judge_holds;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use anyhow::{Result, anyhow};
use serde_json::Value;

use crate::engine::harness::login::{JudgeRefresh, Login};
use crate::engine::harness::{Harness, expand_user_path};
use crate::engine::sandbox::egress::Endpoint;
use refresh::{expiry, fresh, live_of, read_live};
use store::Stored;

/// What a judge's copy of a login holds where the refresh token was: it refreshes nothing,
/// anywhere.
pub const STAND_IN: &str = "panel-stand-in-refresh-token-no-refresh-here";

/// How long a login command (`gh auth token`, `secret-tool lookup …`, `security …`) may take.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(10);

/// What a judge is given of its login.
#[derive(Clone, Debug, Default)]
pub struct Given {
    /// The kind of the login used, when one was found.
    pub kind: Option<String>,
    /// Files written under its private HOME: the path under HOME, and the bytes.
    pub files: Vec<(String, Vec<u8>)>,
    /// Variables set for it.
    pub env: Vec<(String, String)>,
    /// Hosts and ports it reaches with this login.
    pub egress: Vec<Endpoint>,
    /// Objects merged into the row's files (path under HOME → object).
    pub settings: BTreeMap<String, Value>,
    /// What its proxy swaps for the placeholders it holds (none: it holds the live login).
    pub swaps: Vec<crate::engine::sandbox::swap::Swap>,
    /// The variables of the user's other logins, which it does not get.
    pub withheld: Vec<String>,
    /// Why it holds the live credential, when it does.
    pub live: Option<String>,
}

/// Where a login was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoginPlace {
    Env(String),
    File(PathBuf),
    Command(String),
    /// A generic password of the user's login Keychain, by its service.
    Keychain(String),
}

impl std::fmt::Display for LoginPlace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoginPlace::Env(name) => write!(f, "${name}"),
            LoginPlace::File(path) => write!(f, "{}", path.display()),
            LoginPlace::Command(c) => write!(f, "`{c}`"),
            LoginPlace::Keychain(service) => write!(f, "the Keychain's \"{service}\""),
        }
    }
}

/// A refresh reads a login's JSON, asks whether it can be written back, and writes it back,
/// the same way for each place that keeps JSON: a file, or a Keychain item holding the same.
impl LoginPlace {
    /// The login's JSON as it is now.
    fn read(&self, user: &User) -> Result<Stored> {
        match self {
            LoginPlace::File(path) => Stored::read(path),
            LoginPlace::Keychain(service) => keychain::Item::of(service, user)?
                .read(user)?
                .ok_or_else(|| anyhow!("it is no longer in the Keychain")),
            LoginPlace::Env(_) | LoginPlace::Command(_) => Err(self.no_json()),
        }
    }

    /// Whether the JSON, as `now`, can be written back as it is found: asked before a
    /// refresh spends a token that only the written answer replaces.
    fn replaceable(&self, now: &Stored, user: &User) -> Result<()> {
        match self {
            LoginPlace::File(path) => store::replaceable(path),
            LoginPlace::Keychain(service) => keychain::Item::of(service, user)?.writable(&now.text),
            LoginPlace::Env(_) | LoginPlace::Command(_) => Err(self.no_json()),
        }
    }

    /// Writes `text` as the whole of the login's JSON.
    fn replace(&self, text: &str, user: &User) -> Result<()> {
        match self {
            LoginPlace::File(path) => store::replace(path, text),
            LoginPlace::Keychain(service) => keychain::Item::of(service, user)?.write(text, user),
            LoginPlace::Env(_) | LoginPlace::Command(_) => Err(self.no_json()),
        }
    }

    fn no_json(&self) -> anyhow::Error {
        anyhow!("a login in {self} is not kept as JSON")
    }
}

/// The user's environment and HOME, as the tool found them.
pub struct User<'a> {
    pub env: &'a dyn Fn(&str) -> Option<String>,
    pub home: &'a Path,
    /// Whether their Keychain is looked in (macOS's), before a login's file.
    pub keychain: bool,
}

impl User<'_> {
    fn var(&self, name: &str) -> Option<String> {
        (self.env)(name).filter(|v| !v.is_empty())
    }

    fn path(&self, template: &str) -> PathBuf {
        expand_user_path(template, self.home, self.env)
    }
}

/// One run's broker: what each login gave, found and refreshed at most once for the run.
#[derive(Default)]
pub struct Broker {
    /// By the place of the login: what it holds now, or why it cannot be used.
    live: Mutex<HashMap<String, LoginSlot>>,
    /// What each login command printed, asked once a run (`None`: no token).
    commands: Mutex<HashMap<Vec<String>, Option<String>>>,
    /// What each Keychain item held, by its service, read once a run (`None`: not there).
    items: Mutex<HashMap<String, Result<Option<Stored>, String>>>,
}

/// One login's place in the run: what it holds now, or why it cannot be used; `None` until
/// it is first asked for.
type LoginSlot = Arc<Mutex<Option<Result<Live, String>>>>;

/// A login as the run holds it.
#[derive(Clone, Debug)]
struct Live {
    /// The token (a variable's, a command's), or the store as it is now.
    token: Option<String>,
    stored: Option<Stored>,
    /// When its access token expires, when that is known.
    expires: Option<SystemTime>,
    /// Whether it was refreshed (or found refreshed) this run: its token is the freshest the
    /// run gets, even where it expires before a judge's deadline.
    refreshed: bool,
}

impl Broker {
    /// What a judge of `row` gets of its user's login, valid until `until` where a refresh can
    /// make it so. `Ok` with no kind: the user has none of the row's logins (the CLI says so).
    /// `swapping`: its proxy can swap a placeholder for the live credential (its walls stand).
    pub fn give(
        &self,
        row: &Harness,
        model: Option<&str>,
        user: &User,
        until: SystemTime,
        swapping: bool,
    ) -> Result<Given, String> {
        let Some((login, place, passed)) = self.find(row, model, user) else {
            return match none_for(row, model, user) {
                Some(why) => Err(why),
                None => Ok(Given {
                    withheld: placeholder::others_env(row, None),
                    ..Given::default()
                }),
            };
        };
        if let Some(why) = unusable(row, login, passed.as_deref()) {
            let fix = login
                .fix
                .as_ref()
                .map_or(String::new(), |f| format!("; {f}"));
            return Err(format!(
                "{}'s {} login ({place}): {why}{fix}",
                row.name, login.kind
            ));
        }
        let slot = self.slot(&place);
        let mut held = slot.lock().unwrap_or_else(|e| e.into_inner());
        let usable = match held.as_ref() {
            Some(Ok(live)) => live.refreshed || !needs_refresh(login, live.expires, until),
            Some(Err(_)) => true,
            None => false,
        };
        if !usable {
            *held = Some(self.bring(login, &place, user, until).map_err(|e| {
                let fix = login
                    .fix
                    .as_ref()
                    .map_or(String::new(), |f| format!("; `{f}` logs in again"));
                format!("{}'s {} login ({place}): {e:#}{fix}", row.name, login.kind)
            }));
        }
        let live = held.as_ref().expect("set above").clone()?;
        let mut g = given(login, &live, model);
        g.withheld = placeholder::others_env(row, Some(login));
        match (&login.swap, swapping) {
            (Some(c), true) => placeholder::stand_in(&mut g, login, c, &place, user),
            (Some(_), false) => g.live = Some("no walls: no proxy to swap it in".into()),
            (None, _) => {
                g.live = placeholder::judge_holds(login)
                    .strip_prefix("live: ")
                    .map(String::from)
            }
        }
        Ok(g)
    }

    /// The row's first login the user has for a seat of `model`, and where (see [`order`]).
    /// One whose token the CLI passes over is passed over, and given (with the beginning that
    /// passed it over) only when the user has no other.
    pub fn find<'r>(
        &self,
        row: &'r Harness,
        model: Option<&str>,
        user: &User,
    ) -> Option<(&'r Login, LoginPlace, Option<String>)> {
        let mut passed = None;
        for l in order(row, model, user) {
            match self.present(l, user) {
                Some((place, None)) => return Some((l, place, None)),
                Some((place, Some(prefix))) => {
                    passed.get_or_insert((l, place, Some(prefix)));
                }
                None => {}
            }
        }
        passed
    }

    /// Where the user keeps `login`, if they have it (a command's login is asked, once a run),
    /// and the beginning of its token that the CLI passes over, if it has one.
    fn present(&self, login: &Login, user: &User) -> Option<(LoginPlace, Option<String>)> {
        if let Some((place, token)) = self.in_keychain(login, user) {
            return Some((place, passed_over(login, token.as_deref())));
        }
        let (place, token) = match had(login, user) {
            Some(place) => {
                let token = kept_token(login, &place, user);
                (place, token)
            }
            None => {
                let words = words(login, user)?;
                let token = self.command(&words, user)?;
                (LoginPlace::Command(words.join(" ")), Some(token))
            }
        };
        Some((place, passed_over(login, token.as_deref())))
    }

    /// A login command's token, asked once a run.
    fn command(&self, command: &[String], user: &User) -> Option<String> {
        if command.is_empty() {
            return None;
        }
        let mut all = self.commands.lock().unwrap_or_else(|e| e.into_inner());
        all.entry(command.to_vec())
            .or_insert_with(|| command::token(command, user).ok())
            .clone()
    }

    /// Where `login` is in the user's Keychain, when it is looked in and holds the login (or
    /// cannot be read: the login is then there, and cannot be used), and its token.
    fn in_keychain(&self, login: &Login, user: &User) -> Option<(LoginPlace, Option<String>)> {
        let service = login.keychain.as_ref().filter(|_| user.keychain)?;
        let place = LoginPlace::Keychain(service.clone());
        match self.item(service, user) {
            Ok(None) => None,
            Ok(Some(s)) => {
                let has = login.has.as_ref().is_none_or(|p| pointed(&s, p).is_some());
                let token = login.token.as_ref().and_then(|p| pointed(&s, p));
                let token = token.and_then(Value::as_str).map(str::to_string);
                has.then_some((place, token))
            }
            Err(_) => Some((place, None)),
        }
    }

    /// What the Keychain item `service` holds, read once a run.
    fn item(&self, service: &str, user: &User) -> Result<Option<Stored>, String> {
        let mut all = self.items.lock().unwrap_or_else(|e| e.into_inner());
        let read = || keychain::Item::of(service, user)?.read(user);
        let held = all.entry(service.to_string());
        held.or_insert_with(|| read().map_err(|e| format!("{e:#}")))
            .clone()
    }

    /// Finds the login at `place` and, where it expires too soon, refreshes it.
    fn bring(
        &self,
        login: &Login,
        place: &LoginPlace,
        user: &User,
        until: SystemTime,
    ) -> Result<Live> {
        let token = |token| Live {
            token,
            stored: None,
            expires: None,
            refreshed: false,
        };
        match place {
            LoginPlace::Env(name) => Ok(token(user.var(name))),
            LoginPlace::Command(c) => {
                let t = words(login, user).and_then(|w| self.command(&w, user));
                Ok(token(Some(t.ok_or_else(|| anyhow!("{c} gave no token"))?)))
            }
            LoginPlace::File(_) => fresh(login, place, read_live(login, place, user)?, user, until),
            LoginPlace::Keychain(service) => {
                let found = self.item(service, user).map_err(|e| anyhow!(e))?;
                let found = found.ok_or_else(|| anyhow!("it is no longer in the Keychain"))?;
                fresh(login, place, live_of(login, found), user, until)
            }
        }
    }

    fn slot(&self, place: &LoginPlace) -> LoginSlot {
        let mut all = self.live.lock().unwrap_or_else(|e| e.into_inner());
        Arc::clone(all.entry(place.to_string()).or_default())
    }
}

/// Why `login` cannot reach a judge: the row says so, or its token begins with `passed`,
/// which the CLI passes over (and the user has no other login).
fn unusable(row: &Harness, login: &Login, passed: Option<&str>) -> Option<String> {
    login.unusable.clone().or_else(|| {
        passed.map(|p| {
            format!(
                "its token begins {p}, which {} passes over as if it were not set",
                row.name
            )
        })
    })
}

/// A row's logins for a seat of `model` (those of its provider, and those for every model), in
/// the order its CLI takes them: one the user's configuration chooses first (`prefer`), then
/// the row's order. With no model, every login.
pub fn order<'r>(
    row: &'r Harness,
    model: Option<&str>,
    user: &User,
) -> impl Iterator<Item = &'r Login> {
    let fits = move |l: &&Login| match (&l.models, model) {
        (Some(prefix), Some(m)) => m.starts_with(prefix.as_str()),
        _ => true,
    };
    let chosen = |l: &&Login| {
        l.prefer.as_ref().is_some_and(|p| {
            Stored::read(&user.path(&p.file))
                .is_ok_and(|s| store::lookup(&s.value, &p.at) == Some(&p.is))
        })
    };
    let first: Vec<&Login> = row.logins.iter().filter(fits).filter(chosen).collect();
    first.into_iter().chain(row.logins.iter().filter(fits))
}

/// Where the user keeps `login` in a variable or a file, if they do (a command is not asked).
pub fn had(login: &Login, user: &User) -> Option<LoginPlace> {
    if let Some(name) = login.env.iter().find(|n| user.var(n).is_some()) {
        return Some(LoginPlace::Env(name.clone()));
    }
    let path = user.path(login.file.as_ref()?);
    let has = match &login.has {
        Some(p) => Stored::read(&path).is_ok_and(|s| pointed(&s, p).is_some()),
        None => store::present(&path),
    };
    has.then_some(LoginPlace::File(path))
}

/// The value at one of a login's pointers into its store (not null), the pointer's
/// `{/pointer}` words filled from the store itself.
fn pointed<'s>(stored: &'s Stored, pointer: &str) -> Option<&'s Value> {
    let filled = store::fill(pointer, &stored.value, true)?;
    store::lookup(&stored.value, &filled).filter(|v| !v.is_null())
}

/// One of `login`'s pointers into its file, its `{/pointer}` words filled from the file as it
/// is now; `None` when the file or a value is not there.
pub fn pointer(login: &Login, pointer: &str, user: &User) -> Option<String> {
    if !pointer.contains("{/") {
        return Some(pointer.to_string());
    }
    let stored = Stored::read(&user.path(login.file.as_ref()?)).ok()?;
    store::fill(pointer, &stored.value, true)
}

/// The token the user keeps at `place` for `login`: a variable's value, a file's `token`.
pub fn kept_token(login: &Login, place: &LoginPlace, user: &User) -> Option<String> {
    match place {
        LoginPlace::Env(name) => user.var(name),
        LoginPlace::File(path) => {
            let stored = Stored::read(path).ok()?;
            let token = pointed(&stored, login.token.as_ref()?)?;
            token.as_str().map(str::to_string)
        }
        LoginPlace::Command(_) | LoginPlace::Keychain(_) => None,
    }
}

/// A command login's words, its `{/pointer}` words filled from its `values` file; `None` when
/// that file or one of its values is not there (the login is not).
pub fn words(login: &Login, user: &User) -> Option<Vec<String>> {
    let Some(values) = &login.values else {
        return Some(login.command.clone());
    };
    let values = Stored::read(&user.path(values)).ok()?.value;
    let words = login.command.iter().map(|w| store::fill(w, &values, false));
    words.collect::<Option<Vec<_>>>().filter(|w| !w.is_empty())
}

/// The beginning of `token` that `login`'s CLI passes over as if it were not set, if it has one.
pub fn passed_over(login: &Login, token: Option<&str>) -> Option<String> {
    let token = token?;
    let mut prefixes = login.pass_over.iter();
    prefixes.find(|p| token.starts_with(p.as_str())).cloned()
}

/// Whether an access token expiring at `expires` must be refreshed for a judge that may run
/// until `until`: the CLI would refresh it itself (within its margin) before then.
fn needs_refresh(login: &Login, expires: Option<SystemTime>, until: SystemTime) -> bool {
    let (Some(refresh), Some(expires)) = (&login.refresh, expires) else {
        return false;
    };
    expires
        .checked_sub(Duration::from_secs(refresh.margin))
        .is_none_or(|t| t <= until)
}

/// The JSON pointers a judge's copy of `login`'s file keeps for a seat of `model`, its
/// `{provider}` filled in (none for a seat with no provider); `None`: the whole file.
pub fn judge_keep(login: &Login, model: Option<&str>) -> Option<Vec<String>> {
    if login.judge_keep.is_empty() {
        return None;
    }
    let provider = model.and_then(|m| m.split_once('/')).map(|(p, _)| p);
    let step = provider.map(|p| p.replace('~', "~0").replace('/', "~1"));
    let fill = |p: &String| match (p.contains("{provider}"), &step) {
        (false, _) => Some(p.clone()),
        (true, Some(s)) => Some(p.replace("{provider}", s)),
        (true, None) => None,
    };
    Some(login.judge_keep.iter().filter_map(fill).collect())
}

/// Of a store's `value`, only what is at `keep`'s pointers.
fn only(value: &Value, keep: &[String]) -> Value {
    let mut out = Value::Object(Default::default());
    for p in keep {
        if let Some(v) = value.pointer(p) {
            let _ = store::set(&mut out, p, v.clone());
        }
    }
    out
}

/// What a judge of a seat of `model` gets of a login held as `live`.
fn given(login: &Login, live: &Live, model: Option<&str>) -> Given {
    let mut g = Given {
        kind: Some(login.kind.clone()),
        egress: login
            .egress
            .iter()
            .filter_map(|e| Endpoint::parse(e).ok())
            .collect(),
        settings: login.settings.clone(),
        env: login
            .set_env
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        ..Given::default()
    };
    let mut token = live.token.clone();
    if let Some(stored) = &live.stored {
        if let Some(p) = &login.token {
            token = pointed(stored, p)
                .and_then(Value::as_str)
                .map(str::to_string);
        }
        let keep = judge_keep(login, model).filter(|_| stored.value.is_object());
        let mut value = match &keep {
            Some(keep) => only(&stored.value, keep),
            None => stored.value.clone(),
        };
        if let Some(r) = &login.refresh {
            token = stored.string(&r.access).map(str::to_string);
            match r.judge {
                JudgeRefresh::Drop => store::remove(&mut value, &r.refresh_token),
                JudgeRefresh::Empty => {
                    let _ = store::set(&mut value, &r.refresh_token, Value::from(""));
                }
                JudgeRefresh::StandIn => {
                    let _ = store::set(&mut value, &r.refresh_token, Value::from(STAND_IN));
                }
            }
        }
        // Values the judge's copy holds instead (a refresh token no one refreshes with: none).
        let json = !value.is_null();
        for (pointer, v) in login.judge_set.iter().filter(|_| json) {
            match v.is_null() {
                true => store::remove(&mut value, pointer),
                false => {
                    let _ = store::set(&mut value, pointer, v.clone());
                }
            }
        }
        if let Some(to) = &login.to {
            let edited =
                login.refresh.is_some() || keep.is_some() || (json && !login.judge_set.is_empty());
            let bytes = match edited {
                true => stored.layout(&value).into_bytes(),
                false => stored.text.clone().into_bytes(),
            };
            g.files.push((to.clone(), bytes));
        }
    }
    if let (Some(var), Some(token)) = (&login.to_env, token) {
        g.env.push((var.clone(), token));
    }
    g
}

/// A login as `--doctor` reports it.
pub struct DoctorLogin {
    pub kind: String,
    pub place: LoginPlace,
    pub expires: Option<SystemTime>,
    /// Whether panel can refresh it: the row says how, and the store holds a refresh token.
    pub refreshable: bool,
    /// Why no judge gets it (the row says, or the CLI passes over its token).
    pub unusable: Option<String>,
}

/// The login `row`'s judges would get, without refreshing it.
pub fn found(row: &Harness, user: &User) -> Option<DoctorLogin> {
    let broker = Broker::default();
    let (login, place, passed) = broker.find(row, None, user)?;
    let stored = match &place {
        LoginPlace::File(path) => Stored::read(path).ok(),
        LoginPlace::Keychain(service) => broker.item(service, user).ok().flatten(),
        _ => None,
    };
    let (expires, refreshable) = match (stored, &login.refresh) {
        (Some(s), Some(r)) => (
            expiry(r, &s),
            s.string(&r.refresh_token).is_some_and(|t| !t.is_empty()),
        ),
        _ => (None, false),
    };
    Some(DoctorLogin {
        kind: login.kind.clone(),
        place,
        expires,
        refreshable,
        unusable: unusable(row, login, passed.as_deref()),
    })
}

#[cfg(test)]
mod tests {
    use super::refresh::apply;
    use super::*;
    use crate::engine::harness::Table;
    use crate::engine::harness::login::Prefer;
    use serde_json::json;
    use std::os::unix::fs::PermissionsExt;

    fn claude() -> Login {
        let row = crate::engine::harness::Table::builtin()
            .get("claude")
            .unwrap()
            .clone();
        row.logins
            .into_iter()
            .find(|l| l.kind == "pro-max")
            .unwrap()
    }

    fn stored(v: Value) -> Stored {
        Stored {
            text: v.to_string(),
            value: v,
        }
    }

    /// Issue 35: "saved back into the user's store in the CLI's own format": claude's answer
    /// becomes its `accessToken`, `refreshToken`, `expiresAt` (ms) and `scopes` (a list).
    #[test]
    fn an_answer_is_written_where_and_as_the_cli_keeps_it() {
        let login = claude();
        let r = login.refresh.as_ref().unwrap();
        let mut v = json!({"claudeAiOauth": {"accessToken": "a0", "refreshToken": "r0",
            "expiresAt": 1, "subscriptionType": "max"}, "mcpOAuth": {}});
        let now = std::time::UNIX_EPOCH + Duration::from_secs(1_000);
        let answer = json!({"access_token": "a1", "refresh_token": "r1", "expires_in": 3600,
            "scope": "user:inference user:profile"});
        apply(r, &answer, &mut v, now).unwrap();
        assert_eq!(
            v,
            json!({"claudeAiOauth": {"accessToken": "a1", "refreshToken": "r1",
                "expiresAt": 4_600_000u64, "subscriptionType": "max",
                "scopes": ["user:inference", "user:profile"]}, "mcpOAuth": {}})
        );
        // A login that does not rotate (Google's) keeps its refresh token.
        apply(r, &json!({"access_token": "a2"}), &mut v, now).unwrap();
        assert_eq!(v["claudeAiOauth"]["refreshToken"], "r1");
        assert_eq!(v["claudeAiOauth"]["accessToken"], "a2");
    }

    /// A file's JSON is read, checked and written back whole; a variable's or a command's
    /// login keeps no JSON, and says so rather than being refreshed.
    #[test]
    fn only_a_place_that_keeps_json_is_read_and_written_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("creds.json");
        std::fs::write(&path, r#"{"a": 1}"#).unwrap();
        let env = |_: &str| None;
        let user = User {
            env: &env,
            home: dir.path(),
            keychain: false,
        };
        let file = LoginPlace::File(path.clone());
        let now = file.read(&user).unwrap();
        file.replaceable(&now, &user).unwrap();
        file.replace(r#"{"a": 2}"#, &user).unwrap();
        assert_eq!(file.read(&user).unwrap().value, json!({"a": 2}));
        for (place, said) in [
            (
                LoginPlace::Env("X".into()),
                "a login in $X is not kept as JSON",
            ),
            (
                LoginPlace::Command("gh auth token".into()),
                "a login in `gh auth token` is not kept as JSON",
            ),
        ] {
            assert_eq!(place.read(&user).unwrap_err().to_string(), said);
            assert_eq!(
                place.replaceable(&now, &user).unwrap_err().to_string(),
                said
            );
            assert_eq!(place.replace("{}", &user).unwrap_err().to_string(), said);
        }
    }

    /// "a judge gets … a live access token … never the refresh token. Where a CLI insists on
    /// refreshing by itself, it gets a stand-in refresh token that works nowhere."
    #[test]
    fn a_judge_s_copy_holds_no_refresh_token() {
        let mut login = claude();
        let live = |v: Value| Live {
            token: None,
            stored: Some(stored(v)),
            expires: None,
            refreshed: false,
        };
        let creds = json!({"claudeAiOauth": {"accessToken": "a", "refreshToken": "SECRET"}});
        for (judge, want) in [
            (
                JudgeRefresh::Drop,
                json!({"claudeAiOauth": {"accessToken": "a"}}),
            ),
            (
                JudgeRefresh::Empty,
                json!({"claudeAiOauth": {"accessToken": "a", "refreshToken": ""}}),
            ),
            (
                JudgeRefresh::StandIn,
                json!({"claudeAiOauth": {"accessToken": "a", "refreshToken": STAND_IN}}),
            ),
        ] {
            login.refresh.as_mut().unwrap().judge = judge;
            let g = given(&login, &live(creds.clone()), None);
            let (to, bytes) = &g.files[0];
            assert_eq!(to, ".claude/.credentials.json");
            let copy: Value = serde_json::from_slice(bytes).unwrap();
            assert_eq!(copy, want, "{judge:?}");
        }
        // A file handed on without a refresh: its values set or taken out as the row says.
        let plain = Login {
            kind: "stored".into(),
            to: Some("a.json".into()),
            judge_set: [
                ("/refreshToken".to_string(), Value::Null),
                ("/x".into(), json!(0)),
            ]
            .into_iter()
            .collect(),
            ..Login::default()
        };
        let g = given(
            &plain,
            &live(json!({"accessToken": "a", "refreshToken": "SECRET"})),
            None,
        );
        let copy: Value = serde_json::from_slice(&g.files[0].1).unwrap();
        assert_eq!(copy, json!({"accessToken": "a", "x": 0}));
        // A token handed on in a variable.
        let env = Login {
            kind: "gh".into(),
            to_env: Some("COPILOT_GITHUB_TOKEN".into()),
            ..Login::default()
        };
        let g = given(
            &env,
            &Live {
                token: Some("gho_x".into()),
                stored: None,
                expires: None,
                refreshed: false,
            },
            None,
        );
        assert_eq!(
            g.env,
            [("COPILOT_GITHUB_TOKEN".to_string(), "gho_x".to_string())]
        );
    }

    /// "when the access token expires before the judges' deadline, it is refreshed": within
    /// the CLI's own margin counts as expired (it would refresh by itself).
    #[test]
    fn a_token_is_refreshed_when_it_would_expire_within_the_cli_s_margin_of_the_deadline() {
        let login = claude();
        let now = SystemTime::now();
        let until = now + Duration::from_secs(600);
        let at = |s: u64| Some(now + Duration::from_secs(s));
        assert!(needs_refresh(&login, at(600 + 300), until));
        assert!(needs_refresh(&login, at(10), until));
        assert!(!needs_refresh(&login, at(600 + 301), until));
        // Unknown expiry, or nothing to refresh with: left as it is.
        assert!(!needs_refresh(&login, None, until));
        assert!(!needs_refresh(&Login::default(), at(0), until));
    }

    /// `--doctor` reads a store as hostile input: kimi's `expires_at` of 1e300 is an expiry
    /// it cannot tell, not a panic.
    #[test]
    fn a_store_expiring_past_every_clock_is_found_with_no_expiry() {
        let dir = tempfile::tempdir().unwrap();
        let creds = dir.path().join(".kimi/credentials");
        fs_make(&creds);
        let store = json!({"access_token": "a", "refresh_token": "r", "expires_at": 1e300});
        std::fs::write(creds.join("kimi-code.json"), store.to_string()).unwrap();
        let row = Table::builtin().get("kimi").unwrap().clone();
        let env = |_: &str| None;
        let user = User {
            env: &env,
            home: dir.path(),
            keychain: false,
        };
        let f = found(&row, &user).unwrap();
        assert_eq!((f.kind.as_str(), f.expires), ("kimi-code", None));
    }

    /// A CLI whose configuration chooses its login (gemini's `selectedType`) has it chosen
    /// first; a CLI of many providers gives a seat its provider's login.
    #[test]
    fn the_login_a_seat_gets_follows_the_cli_s_own_choice() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path();
        std::fs::create_dir_all(home.join(".x")).unwrap();
        let key = Login {
            kind: "key".into(),
            env: vec!["X_KEY".into()],
            ..Login::default()
        };
        let file = Login {
            kind: "oauth".into(),
            file: Some("~/.x/creds.json".into()),
            prefer: Some(Prefer {
                file: "~/.x/settings.json".into(),
                at: "/auth".into(),
                is: json!("oauth"),
            }),
            ..Login::default()
        };
        let google = Login {
            kind: "google-key".into(),
            models: Some("google/".into()),
            env: vec!["G_KEY".into()],
            ..Login::default()
        };
        let row = Harness {
            logins: vec![key, file, google],
            ..crate::engine::harness::Table::builtin()
                .get("exec")
                .unwrap()
                .clone()
        };
        std::fs::write(home.join(".x/creds.json"), "{}").unwrap();
        let env = |k: &str| matches!(k, "X_KEY" | "G_KEY").then(|| "v".to_string());
        let user = User {
            env: &env,
            home,
            keychain: false,
        };
        let kind = |model: Option<&str>| {
            Broker::default()
                .find(&row, model, &user)
                .map(|(l, _, _)| l.kind.clone())
        };
        assert_eq!(kind(None).as_deref(), Some("key"));
        std::fs::write(home.join(".x/settings.json"), r#"{"auth":"oauth"}"#).unwrap();
        assert_eq!(kind(None).as_deref(), Some("oauth"));
        let only_google = Harness {
            logins: row.logins[2..].to_vec(),
            ..row.clone()
        };
        let found = |m| {
            Broker::default()
                .find(&only_google, m, &user)
                .map(|(l, _, _)| l.kind.clone())
        };
        assert_eq!(found(Some("google/gemini")).as_deref(), Some("google-key"));
        assert_eq!(found(Some("openai/gpt")), None);
    }

    /// A user of copilot's row: their HOME, variables and PATH (a folder of stand-in commands).
    struct Copilot {
        dir: tempfile::TempDir,
        vars: Vec<(&'static str, String)>,
    }

    impl Copilot {
        fn new() -> Copilot {
            let dir = tempfile::tempdir().unwrap();
            fs_make(&dir.path().join("bin"));
            let path = dir.path().join("bin").display().to_string();
            Copilot {
                dir,
                vars: vec![("PATH", path)],
            }
        }

        /// copilot's config.json, as `copilot login` writes it.
        fn config(&self, text: &str) {
            let path = self.dir.path().join(".copilot/config.json");
            fs_make(path.parent().unwrap());
            std::fs::write(path, text).unwrap();
        }

        /// A stand-in command on the user's PATH.
        fn command(&self, name: &str, script: &str) {
            let path = self.dir.path().join("bin").join(name);
            std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }

        fn give(&self) -> Result<Given, String> {
            let row = Table::builtin().get("copilot").unwrap().clone();
            let env = |n: &str| {
                let found = self.vars.iter().find(|(k, _)| *k == n);
                found.map(|(_, v)| v.clone())
            };
            let user = User {
                env: &env,
                home: self.dir.path(),
                keychain: false,
            };
            let found = found(&row, &user).map(|f| (f.kind, f.unusable));
            let given = Broker::default().give(&row, None, &user, SystemTime::now(), false);
            if let Ok(g) = &given {
                assert_eq!(g.kind.as_ref(), found.as_ref().map(|f| &f.0));
            }
            given
        }
    }

    fn fs_make(dir: &Path) {
        std::fs::create_dir_all(dir).unwrap();
    }

    /// copilot's login as a judge gets it: the token alone, in COPILOT_GITHUB_TOKEN.
    fn token_of(g: &Given) -> (Option<&str>, Vec<&str>) {
        let names = g.env.iter().map(|(k, _)| k.as_str()).collect();
        let token = g.env.iter().find(|(k, _)| k == "COPILOT_GITHUB_TOKEN");
        (token.map(|(_, v)| v.as_str()), names)
    }

    const TWO_ACCOUNTS: &str = r#"// User settings belong in settings.json.
// This file is managed automatically.
{
  "authTokens": {
    "https://github.com:first": { "token": "gho_first" },
    "https://github.com:octocat:github": { "token": "gho_last" },
    "https://github.com:octocat": { "token": "gho_last" }
  },
  "lastLoggedInUser": { "host": "https://github.com", "login": "octocat" }
}
"#;

    /// Measured with copilot 1.0.102: "all three env vars set ⇒ COPILOT_GITHUB_TOKEN used;
    /// GH_TOKEN+GITHUB_TOKEN ⇒ GH_TOKEN; env beats the stored login"; a judge gets the one
    /// token and no other.
    #[test]
    fn copilot_s_first_variable_wins_and_reaches_a_judge_alone() {
        let mut u = Copilot::new();
        u.config(TWO_ACCOUNTS);
        u.vars.push(("GITHUB_TOKEN", "ghs_actions".into()));
        u.vars.push(("GH_TOKEN", "gho_env".into()));
        let g = u.give().unwrap();
        assert_eq!(g.kind.as_deref(), Some("env-token"));
        assert_eq!(
            token_of(&g),
            (Some("gho_env"), vec!["COPILOT_GITHUB_TOKEN"])
        );
        assert!(g.files.is_empty());
        u.vars.push(("COPILOT_GITHUB_TOKEN", "github_pat_x".into()));
        assert_eq!(token_of(&u.give().unwrap()).0, Some("github_pat_x"));
        // A provider of one's own, with no GitHub login: its variables pass as they are.
        let mut u = Copilot::new();
        u.vars
            .push(("COPILOT_PROVIDER_BASE_URL", "http://127.0.0.1:1/v1".into()));
        let g = u.give().unwrap();
        assert_eq!((g.kind.as_deref(), g.env.len()), (Some("byok"), 0));
    }

    /// Measured with copilot 1.0.102: "A classic PAT (ghp_) in the first env var found makes
    /// it ignore the env vars entirely: COPILOT_GITHUB_TOKEN=ghp_… GH_TOKEN=gho_… + stored
    /// login ⇒ the stored login was used"; the stored login is the one `lastLoggedInUser`
    /// names.
    #[test]
    fn a_classic_token_is_passed_over_to_the_account_copilot_last_used() {
        let mut u = Copilot::new();
        u.config(TWO_ACCOUNTS);
        u.vars.push(("COPILOT_GITHUB_TOKEN", "ghp_classic".into()));
        u.vars.push(("GH_TOKEN", "gho_env".into()));
        let g = u.give().unwrap();
        assert_eq!(g.kind.as_deref(), Some("plaintext"));
        assert_eq!(
            token_of(&g),
            (Some("gho_last"), vec!["COPILOT_GITHUB_TOKEN"])
        );
        assert!(g.files.is_empty(), "never the file");
        // With no other login, no judge gets it, and the user is told why.
        let mut u = Copilot::new();
        u.vars.push(("GH_TOKEN", "ghp_classic".into()));
        let why = u.give().unwrap_err();
        assert!(why.contains("$GH_TOKEN") && why.contains("ghp_"), "{why}");
        assert!(
            why.contains("copilot login") && !why.contains("classic_"),
            "{why}"
        );
    }

    /// The credential store is asked for the account config.json names, with copilot's own
    /// attributes; without a `lastLoggedInUser` it is not asked; gh comes after it.
    #[test]
    fn the_credential_store_is_asked_for_the_last_account_then_gh() {
        let u = Copilot::new();
        u.command(
            "secret-tool",
            concat!(
                r#"[ "$*" = "lookup service copilot-cli username "#,
                r#"https://github.com:octocat:github" ] && echo gho_store"#
            ),
        );
        u.command(
            "gh",
            r#"[ "$*" = "auth token --hostname github.com" ] && echo gho_gh"#,
        );
        assert_eq!(u.give().unwrap().kind.as_deref(), Some("gh"));
        assert_eq!(token_of(&u.give().unwrap()).0, Some("gho_gh"));
        u.config(
            "{\"lastLoggedInUser\": {\"host\": \"https://github.com\", \"login\": \"octocat\"}}",
        );
        let g = u.give().unwrap();
        assert_eq!(g.kind.as_deref(), Some("credential-store"));
        assert_eq!(
            token_of(&g),
            (Some("gho_store"), vec!["COPILOT_GITHUB_TOKEN"])
        );
        // A login name that is not a string names no account.
        u.config("{\"lastLoggedInUser\": {\"host\": \"https://github.com\", \"login\": 7}}");
        assert_eq!(u.give().unwrap().kind.as_deref(), Some("gh"));
        // gh's classic token, alone: said, not handed on.
        u.command("gh", "echo ghp_classic");
        let why = u.give().unwrap_err();
        assert!(
            why.contains("gh auth token") && why.contains("ghp_"),
            "{why}"
        );
    }
}

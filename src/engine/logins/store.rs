//! A login's store as the CLI keeps it: a JSON file read whole, values at JSON pointers, the
//! moments in it as the CLI writes them, and the file written back in the CLI's own layout,
//! atomically and the user's alone.

use std::fs;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, anyhow, bail};
use serde_json::Value;

use crate::engine::harness::login::TimeAs;

/// The largest login file read: they are a few kilobytes.
const MAX_FILE: u64 = 1 << 20;

/// Whether a file is there to be read: a regular file (through a link) we can open. Looked at
/// before it is opened: opening a FIFO put there would wait for a writer.
pub fn present(path: &Path) -> bool {
    let regular = |p: &Path| fs::metadata(p).is_ok_and(|m| m.is_file());
    regular(path) && fs::File::open(path).is_ok()
}

/// A JSON store as read: its text (for its layout) and its value.
#[derive(Clone, Debug)]
pub struct Stored {
    pub text: String,
    pub value: Value,
}

impl Stored {
    /// Reads the JSON file at `path`: a regular file (through a link: a user's dotfiles may be
    /// links), at most [`MAX_FILE`] bytes.
    pub fn read(path: &Path) -> Result<Stored> {
        let meta = fs::metadata(path)?;
        if !meta.is_file() {
            bail!("{}: not a regular file", path.display());
        }
        if meta.len() > MAX_FILE {
            bail!("{}: larger than a login file can be", path.display());
        }
        let text = fs::read_to_string(path)?;
        // Whole lines of `//` comments before the JSON (copilot's config.json) are read past.
        let json: String = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let value = serde_json::from_str(&json)
            .map_err(|e| anyhow!("{}: not JSON: {e}", path.display()))?;
        Ok(Stored { text, value })
    }

    /// Reads a file handed on whole (a TOML configuration, a key file): JSON or not.
    pub fn read_any(path: &Path) -> Result<Stored> {
        Stored::read(path).or_else(|_| {
            let meta = fs::metadata(path)?;
            if !meta.is_file() || meta.len() > MAX_FILE {
                bail!("{}: not a login file", path.display());
            }
            Ok(Stored {
                text: fs::read_to_string(path)?,
                value: Value::Null,
            })
        })
    }

    /// The string at `pointer` (see [`lookup`]).
    pub fn string(&self, pointer: &str) -> Option<&str> {
        lookup(&self.value, pointer).and_then(Value::as_str)
    }

    /// The text of `value` laid out as this store's text is: indented when it was, with its
    /// final newline when it had one.
    pub fn layout(&self, value: &Value) -> String {
        let indented = self.text.trim_start().starts_with('{') && self.text.contains("\n ");
        let mut text = match indented {
            true => serde_json::to_string_pretty(value),
            false => serde_json::to_string(value),
        }
        .unwrap_or_default();
        if self.text.ends_with('\n') {
            text.push('\n');
        }
        text
    }
}

/// The value at a JSON pointer, where a `*` step stands for any one key or index: the first
/// whose value has the rest of the pointer.
pub fn lookup<'a>(value: &'a Value, pointer: &str) -> Option<&'a Value> {
    let star = pointer.match_indices("/*").map(|(i, _)| i).find(|&i| {
        let after = &pointer[i + 2..];
        after.is_empty() || after.starts_with('/')
    });
    let Some(i) = star else {
        return value.pointer(pointer);
    };
    let rest = &pointer[i + 2..];
    match value.pointer(&pointer[..i])? {
        Value::Object(m) => m.values().find_map(|c| lookup(c, rest)),
        Value::Array(a) => a.iter().find_map(|c| lookup(c, rest)),
        _ => None,
    }
}

/// `template` with each `{/pointer}` in it replaced by the string at that pointer of `value`,
/// written as one step of a JSON pointer when `step` is set (a key made of values, such as
/// copilot's `https://github.com:octocat`); `None` when one is not a string there.
pub fn fill(template: &str, value: &Value, step: bool) -> Option<String> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find("{/") {
        let close = open + rest[open..].find('}')?;
        out.push_str(&rest[..open]);
        let v = value.pointer(&rest[open + 1..close])?.as_str()?;
        match step {
            true => out.push_str(&v.replace('~', "~0").replace('/', "~1")),
            false => out.push_str(v),
        }
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    Some(out)
}

/// Sets the value at `pointer`, making the objects on the way.
pub fn set(value: &mut Value, pointer: &str, new: Value) -> Result<()> {
    let mut at = value;
    let mut keys = pointer.split('/').skip(1).peekable();
    while let Some(raw) = keys.next() {
        let key = raw.replace("~1", "/").replace("~0", "~");
        let Value::Object(map) = at else {
            bail!("{pointer}: not an object on the way");
        };
        if keys.peek().is_none() {
            map.insert(key, new);
            return Ok(());
        }
        at = map
            .entry(key)
            .or_insert_with(|| Value::Object(Default::default()));
    }
    bail!("{pointer}: an empty pointer")
}

/// Removes the value at `pointer`, if there is one.
pub fn remove(value: &mut Value, pointer: &str) {
    let Some((parent, key)) = pointer.rsplit_once('/') else {
        return;
    };
    let key = key.replace("~1", "/").replace("~0", "~");
    if let Some(Value::Object(map)) = value.pointer_mut(parent) {
        map.remove(&key);
    }
}

/// A moment read from a store as `how` writes it.
pub fn read_time(v: &Value, how: TimeAs) -> Option<SystemTime> {
    if let (TimeAs::UnixMs, Some(ms)) = (how, v.as_u64()) {
        return UNIX_EPOCH.checked_add(Duration::from_millis(ms));
    }
    let secs = match how {
        TimeAs::UnixMs => v.as_f64()? / 1000.0,
        TimeAs::UnixS => v.as_f64()?,
        TimeAs::Rfc3339 => {
            let (secs, nanos) = crate::engine::clock::parse_rfc3339(v.as_str()?)?;
            let secs = u64::try_from(secs).ok()?;
            return UNIX_EPOCH.checked_add(Duration::new(secs, nanos));
        }
    };
    since_epoch(secs)
}

/// The moment `secs` seconds after the epoch; `None` before it, or past what a clock holds
/// (a store's or an answer's 1e300).
fn since_epoch(secs: f64) -> Option<SystemTime> {
    UNIX_EPOCH.checked_add(Duration::try_from_secs_f64(secs).ok()?)
}

/// A moment written as `how` writes it.
pub fn write_time(t: SystemTime, how: TimeAs) -> Value {
    let since = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    match how {
        TimeAs::UnixMs => Value::from(since.as_millis() as u64),
        TimeAs::UnixS => Value::from(since.as_secs()),
        TimeAs::Rfc3339 => Value::from(rfc3339(since)),
    }
}

/// When a JWT expires: its payload's `exp`.
pub fn jwt_expiry(token: &str) -> Option<SystemTime> {
    let payload = token.split('.').nth(1)?;
    let bytes = base64url(payload)?;
    let claims: Value = serde_json::from_slice(&bytes).ok()?;
    since_epoch(claims.get("exp")?.as_f64()?)
}

/// Decodes unpadded (or padded) base64url.
fn base64url(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in text.trim_end_matches('=').bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' | b'+' => 62,
            b'_' | b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// `2026-12-03T14:46:58.123456Z` (UTC, microseconds, as codex writes it).
fn rfc3339(since: Duration) -> String {
    let secs = since.as_secs();
    let (days, rest) = ((secs / 86_400) as i64, secs % 86_400);
    let (y, m, d) = crate::engine::clock::civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:06}Z",
        rest / 3600,
        rest / 60 % 60,
        rest % 60,
        since.subsec_micros()
    )
}

/// Writes `text` as the whole of the user's store at `path`, atomically: a new file beside it,
/// then a rename over it. The new file is the caller's alone from its creation, then given the
/// store's owner, group and mode as found: a root caller leaves the user's file the user's. A
/// link at `path` is written through to the file it names, as the CLI's own writes are.
pub fn replace(path: &Path, text: &str) -> Result<()> {
    let mut new = Beside::make(path)?;
    let written = (|| -> std::io::Result<()> {
        new.file.write_all(text.as_bytes())?;
        new.file.sync_all()?;
        new.file
            .set_permissions(fs::Permissions::from_mode(new.mode))?;
        fs::rename(&new.tmp, &new.path)
    })();
    match written {
        Ok(()) => {
            new.renamed = true;
            Ok(())
        }
        Err(e) => Err(anyhow!("{}: cannot write: {e}", new.path.display())),
    }
}

/// Whether the store at `path` can be written back as it is found (its owner and group): asked
/// before a refresh spends a token that only the written answer replaces.
pub fn replaceable(path: &Path) -> Result<()> {
    Beside::make(path).map(drop)
}

/// A new file beside a store, given the store's owner and group; removed unless renamed.
struct Beside {
    /// The store's real path.
    path: PathBuf,
    tmp: PathBuf,
    file: fs::File,
    /// The store's mode.
    mode: u32,
    renamed: bool,
}

impl Beside {
    fn make(path: &Path) -> Result<Beside> {
        let path = fs::canonicalize(path).with_context(|| format!("{}", path.display()))?;
        let meta = fs::metadata(&path).with_context(|| format!("{}", path.display()))?;
        let me = nix::unistd::geteuid();
        if meta.uid() != me.as_raw() && !me.is_root() {
            bail!(
                "it belongs to {}, not to {} who runs panel, and written back it would be theirs no more (run panel as its owner)",
                who(meta.uid()),
                who(me.as_raw())
            );
        }
        let dir = path.parent().unwrap_or(Path::new("/"));
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let tmp = dir.join(format!(".{name}.panel-{:016x}", rand_u64()));
        let file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&tmp)
            .map_err(|e| anyhow!("{}: cannot write beside it: {e}", path.display()))?;
        let new = Beside {
            tmp,
            file,
            mode: meta.mode() & 0o777,
            renamed: false,
            path,
        };
        let made = new.file.metadata()?;
        if (made.uid(), made.gid()) != (meta.uid(), meta.gid()) {
            std::os::unix::fs::fchown(&new.file, Some(meta.uid()), Some(meta.gid())).map_err(
                |e| {
                    anyhow!(
                        "{}: what is written back cannot keep its owner and group ({}, gid {}): {e}",
                        new.path.display(),
                        who(meta.uid()),
                        meta.gid()
                    )
                },
            )?;
        }
        Ok(new)
    }
}

impl Drop for Beside {
    fn drop(&mut self) {
        if !self.renamed {
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

/// A user as a line names them: `alice (uid 1000)`, or `uid 1000`.
fn who(uid: u32) -> String {
    match nix::unistd::User::from_uid(uid.into()) {
        Ok(Some(u)) => format!("{} (uid {uid})", u.name),
        _ => format!("uid {uid}"),
    }
}

fn rand_u64() -> u64 {
    let mut b = [0u8; 8];
    let _ = getrandom::fill(&mut b);
    u64::from_le_bytes(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn moments_read_and_write_as_each_cli_keeps_them() {
        let t = UNIX_EPOCH + Duration::from_millis(1_764_773_218_123);
        assert_eq!(write_time(t, TimeAs::UnixMs), json!(1_764_773_218_123u64));
        assert_eq!(write_time(t, TimeAs::UnixS), json!(1_764_773_218u64));
        assert_eq!(
            write_time(t, TimeAs::Rfc3339),
            json!("2025-12-03T14:46:58.123000Z")
        );
        for how in [TimeAs::UnixMs, TimeAs::Rfc3339] {
            assert_eq!(read_time(&write_time(t, how), how), Some(t), "{how:?}");
        }
        // Offsets, no fraction, and what is not a moment.
        let at = |s: &str| read_time(&json!(s), TimeAs::Rfc3339);
        assert_eq!(
            at("2025-12-03T16:46:58+02:00"),
            Some(UNIX_EPOCH + Duration::from_secs(1_764_773_218))
        );
        assert_eq!(at("1970-01-01T00:00:00Z"), Some(UNIX_EPOCH));
        for bad in [
            "",
            "2025-12-03",
            "2025-12-03T16:46:58",
            "x025-12-03T16:46:58Z",
        ] {
            assert_eq!(at(bad), None, "{bad}");
        }
        assert_eq!(read_time(&json!(-5), TimeAs::UnixS), None);
        assert_eq!(read_time(&json!("12"), TimeAs::UnixMs), None);
    }

    #[test]
    fn a_jwt_expires_at_its_exp() {
        // {"alg":"none"} . {"exp":1764773218,"sub":"u"} . (no signature)
        let token = "eyJhbGciOiJub25lIn0.eyJleHAiOjE3NjQ3NzMyMTgsInN1YiI6InUifQ.";
        assert_eq!(
            jwt_expiry(token),
            Some(UNIX_EPOCH + Duration::from_secs(1_764_773_218))
        );
        for bad in ["", "a.b.c", "sk-abc", "eyJhbGciOiJub25lIn0.e30."] {
            assert_eq!(jwt_expiry(bad), None, "{bad}");
        }
    }

    /// A store or an answer is hostile input: a moment past every clock (kimi's `expires_at`
    /// of 1e300, a JWT's `exp`, an offset of a billion hours) is no moment, and no panic.
    #[test]
    fn a_moment_past_every_clock_is_unknown() {
        for how in [TimeAs::UnixS, TimeAs::UnixMs] {
            assert_eq!(read_time(&json!(1e300), how), None, "{how:?}");
            assert_eq!(read_time(&json!(1.7e308), how), None, "{how:?}");
        }
        assert_eq!(read_time(&json!(u64::MAX), TimeAs::UnixS), None);
        for text in [
            "2026-01-01T00:00:00+99999999999999999:00",
            "2026-01-01T00:00:00+999999999999999:00",
            "2026-01-01T00:00:00-99:999999999999999999",
        ] {
            assert_eq!(read_time(&json!(text), TimeAs::Rfc3339), None, "{text}");
        }
        // {"alg":"none"} . {"exp":1e300}
        assert_eq!(
            jwt_expiry("eyJhbGciOiJub25lIn0.eyJleHAiOjFlMzAwfQ.sig"),
            None
        );
    }

    #[test]
    fn a_star_step_is_the_first_key_that_has_the_rest() {
        let v = json!({"authTokens": {"https://github.com:me:github": {"token": "gho_1"},
            "https://github.com:me": {"token": "gho_1"}}, "list": [{"x": 1}, {"t": "a"}]});
        assert_eq!(lookup(&v, "/authTokens/*/token"), Some(&json!("gho_1")));
        assert_eq!(lookup(&v, "/list/*/t"), Some(&json!("a")));
        assert_eq!(lookup(&v, "/*/*/token"), Some(&json!("gho_1")));
        assert_eq!(lookup(&v, "/authTokens/*/none"), None);
        assert_eq!(lookup(&v, "/list/0/x"), Some(&json!(1)));
        // A key that merely starts with a star is a key.
        assert_eq!(lookup(&json!({"*a": 1}), "/*a"), Some(&json!(1)));
    }

    #[test]
    fn pointer_words_are_filled_from_values_and_escaped_as_a_step() {
        let v = json!({"last": {"host": "https://github.com", "login": "octo~cat"}, "n": 1});
        assert_eq!(
            fill("u {/last/host}:{/last/login}", &v, false).as_deref(),
            Some("u https://github.com:octo~cat")
        );
        let key = fill("/authTokens/{/last/host}:{/last/login}/token", &v, true).unwrap();
        assert_eq!(key, "/authTokens/https:~1~1github.com:octo~0cat/token");
        let tokens = json!({"authTokens": {"https://github.com:octo~cat": {"token": "gho_1"}}});
        assert_eq!(lookup(&tokens, &key), Some(&json!("gho_1")));
        // A value is not read again for words; what is not a string there fills nothing.
        let odd = json!({"a": "{/b}", "b": "no"});
        assert_eq!(fill("{/a}", &odd, false).as_deref(), Some("{/b}"));
        for missing in ["{/none}", "{/n}", "{/last}", "{/last/host"] {
            assert_eq!(fill(missing, &v, false), None, "{missing}");
        }
        assert_eq!(fill("plain {x}", &v, false).as_deref(), Some("plain {x}"));
    }

    #[test]
    fn a_value_is_set_at_a_pointer_making_the_way() {
        let mut v = json!({"a": {"b": 1}, "s": "x"});
        set(&mut v, "/a/b", json!(2)).unwrap();
        set(&mut v, "/c/d/e", json!("new")).unwrap();
        set(&mut v, "/a~1b", json!(true)).unwrap();
        assert_eq!(
            v,
            json!({"a": {"b": 2}, "s": "x", "c": {"d": {"e": "new"}}, "a/b": true})
        );
        assert!(set(&mut v, "/s/t", json!(1)).is_err());
    }

    #[test]
    fn a_store_keeps_its_layout_and_is_replaced_whole() {
        let dir = tempfile::tempdir().unwrap();
        let (pretty, compact) = (dir.path().join("p.json"), dir.path().join("c.json"));
        fs::write(&pretty, "{\n  \"a\": 1,\n  \"z\": 2\n}\n").unwrap();
        fs::write(&compact, "{\"z\":2,\"a\":1}").unwrap();
        fs::set_permissions(&pretty, fs::Permissions::from_mode(0o600)).unwrap();
        for (path, want) in [
            (&pretty, "{\n  \"a\": 1,\n  \"z\": 3\n}\n"),
            (&compact, "{\"z\":3,\"a\":1}"),
        ] {
            let s = Stored::read(path).unwrap();
            let mut v = s.value.clone();
            set(&mut v, "/z", json!(3)).unwrap();
            replace(path, &s.layout(&v)).unwrap();
            assert_eq!(fs::read_to_string(path).unwrap(), want);
        }
        // Through a link, to the file it names; nothing else is left beside it.
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&compact, &link).unwrap();
        replace(&link, "{}").unwrap();
        assert!(fs::symlink_metadata(&link).unwrap().is_symlink());
        assert_eq!(fs::read_to_string(&compact).unwrap(), "{}");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 3);
    }

    /// A root caller (`sudo -E`) once left a user's login root's, mode 600: their own CLI
    /// could read it no more. A store is written back with the owner, group and mode it had.
    #[test]
    fn a_store_is_written_back_with_its_owner_group_and_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".credentials.json");
        fs::write(&path, "{}").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
        let root = nix::unistd::geteuid().is_root();
        let owner = match root {
            true => (54_321, 54_322),
            false => {
                eprintln!(
                    "a_store_is_written_back_with_its_owner_group_and_mode: owner unchanged: not root"
                );
                let m = fs::metadata(&path).unwrap();
                (m.uid(), m.gid())
            }
        };
        std::os::unix::fs::chown(&path, Some(owner.0), Some(owner.1)).unwrap();
        replaceable(&path).unwrap();
        replace(&path, "{\"a\":1}").unwrap();
        let m = fs::metadata(&path).unwrap();
        assert_eq!(
            (m.uid(), m.gid(), m.mode() & 0o777),
            (owner.0, owner.1, 0o640)
        );
        assert_eq!(fs::read_to_string(&path).unwrap(), "{\"a\":1}");
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            1,
            "a file left beside"
        );
    }
}

//! What the walls refused a judge that failed, in words for its record's cause: the paths its
//! own error names that its walls hid or kept read-only, and the option that grants each. (The
//! hosts its proxy refused are in the proxy's log, [`super::egress::refusals`].)

use std::path::{Component, Path, PathBuf};

use super::Policy;
use crate::records::printable::inline;

/// At most this many paths are named.
const MAX: usize = 3;

/// The paths `said` (a failed judge's stderr) names in a file-system error that `policy` did
/// not let it have, each with what grants it. Decided from the words and the policy alone: no
/// call is made on a path a judge named (its existence, as the caller, is nothing to tell it),
/// and a path in a line without a file-system error (a URL's path, `GET /user`) is no path.
/// A path is read without its `.` and `..`, and a grant is never advised of `/`, the user's
/// HOME or a folder above it, or a folder that is in or holds one of HOME's [`KEYS`]: such a
/// path is named alone.
pub fn paths(said: &str, policy: &Policy, home: &Path) -> Vec<String> {
    let (read, write) = granted(policy);
    if read.is_empty() && write.is_empty() {
        return Vec::new();
    }
    let home = lexical(home);
    let under = |p: &Path, set: &[PathBuf]| set.iter().any(|g| p.starts_with(g));
    let mut out: Vec<String> = Vec::new();
    // Our own lines ("panel: cannot make the judge's jail: …") say what went wrong already.
    for line in said.lines().filter(|l| !l.starts_with("panel: ")) {
        let Some(error) = fs_error(line) else {
            continue;
        };
        // An error names what it could not have last ("prog: line 3: /x/log: Read-only …").
        let Some((path, dir)) = absolute_paths(line).pop() else {
            continue;
        };
        // The judge's words chose the path: a grant it would like is never advised.
        let advise = !never_advised(&dir, &home);
        let (shown, dir) = (
            inline(&path.to_string_lossy()).into_owned(),
            inline(&dir.to_string_lossy()).into_owned(),
        );
        let note = match (error, under(&path, &write), under(&path, &read)) {
            (_, true, _) => None,
            (FsError::ReadOnly | FsError::Denied, false, true) => Some(match advise {
                true => format!(
                    "{shown} is read-only to it (--sandbox-write {dir} lets it write there)"
                ),
                false => format!("{shown} is read-only to it"),
            }),
            (_, false, true) => None,
            (_, false, false) => Some(match advise {
                true => format!(
                    "{shown} is outside its walls (--sandbox-read {dir} shows it; --sandbox-write {dir} lets it write there)"
                ),
                false => format!("{shown} is outside its walls"),
            }),
        };
        if let Some(n) = note.filter(|n| !out.contains(n)) {
            out.push(n);
            if out.len() == MAX {
                return out;
            }
        }
    }
    out
}

/// Folders of HOME where keys, logins and credentials are kept: never advised to a judge,
/// whatever its error says (the CLIs' own logins reach a judge through the login broker, not a
/// grant).
const KEYS: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".password-store",
    ".netrc",
    ".pki",
    ".cargo",
    ".terraform.d",
    ".mozilla",
    ".config/gh",
    ".config/hub",
    ".config/glab-cli",
    ".config/gcloud",
    ".config/google-chrome",
    ".config/chromium",
    ".local/share/keyrings",
];

/// The folders of HOME where the harness rows' CLIs keep their logins and configuration, at
/// their default places (`~/.claude`, `~/.config/cursor`, …): read from the built-in rows, so
/// a new one's are never advised without an edit here.
fn login_folders() -> &'static [PathBuf] {
    static FOLDERS: std::sync::OnceLock<Vec<PathBuf>> = std::sync::OnceLock::new();
    FOLDERS.get_or_init(|| {
        let home = Path::new("/home");
        let table = crate::engine::harness::Table::builtin();
        let mut out: Vec<PathBuf> = (table.rows().iter())
            .flat_map(|row| {
                let files = row.logins.iter().filter_map(|l| l.file.as_deref());
                files.chain(row.config.iter().map(|c| c.from.as_str()))
            })
            .map(|p| crate::engine::harness::expand_user_path(p, home, &|_| None))
            .filter_map(|p| Some(p.parent()?.strip_prefix(home).ok()?.to_path_buf()))
            .filter(|d| d.components().next().is_some())
            .collect();
        out.sort();
        out.dedup();
        out
    })
}

/// Whether no grant of `dir` is advised: `/`, HOME or a folder above it, a folder in one of
/// HOME's [`KEYS`] or its CLIs' [`login_folders`], or one that holds one (`~/.config` holds
/// gh's login). Both are lexical.
fn never_advised(dir: &Path, home: &Path) -> bool {
    let keys = || {
        let keys = KEYS.iter().map(Path::new);
        keys.chain(login_folders().iter().map(PathBuf::as_path))
            .map(|k| home.join(k))
    };
    dir == Path::new("/")
        || home.starts_with(dir)
        || keys().any(|k| dir.starts_with(&k) || k.starts_with(dir))
}

/// `path` without `.` and `..` components, as its words say: each `..` takes away the folder
/// before it (none above `/`). No link is followed, nothing is looked up.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// The kinds of file-system error a line may say.
#[derive(Clone, Copy)]
enum FsError {
    Missing,
    ReadOnly,
    Denied,
}

/// The file-system error a line says, in the words the C library, Node and Python use.
fn fs_error(line: &str) -> Option<FsError> {
    const WORDS: &[(&str, FsError)] = &[
        ("No such file or directory", FsError::Missing),
        ("ENOENT", FsError::Missing),
        ("Read-only file system", FsError::ReadOnly),
        ("EROFS", FsError::ReadOnly),
        ("Permission denied", FsError::Denied),
        ("EACCES", FsError::Denied),
    ];
    WORDS
        .iter()
        .find(|(w, _)| line.contains(w))
        .map(|(_, e)| *e)
}

/// What the policy shows (or lets read) and lets write.
fn granted(policy: &Policy) -> (Vec<PathBuf>, Vec<PathBuf>) {
    if let Some(j) = &policy.jail {
        return (j.read.clone(), j.write.clone());
    }
    match &policy.confine {
        Some(r) => (r.rx.iter().chain(&r.ro).cloned().collect(), r.rw.clone()),
        None => (Vec::new(), Vec::new()),
    }
}

/// The absolute paths in a line of an error, without the quotes and punctuation around them,
/// each read without `.` and `..` ([`lexical`]) beside the folder to grant for it: the one it
/// is in, or itself when written as a folder (ending in `/`, `/.` or `/..`). Its words decide:
/// nothing is looked up.
fn absolute_paths(line: &str) -> Vec<(PathBuf, PathBuf)> {
    line.split(|c: char| c.is_whitespace() || "'\"`()[]{}<>,;".contains(c))
        .filter_map(|w| {
            // A sentence's full stop is no part of a path; a last `.` or `..` is.
            let w = w.trim_end_matches(':');
            let w = match w.ends_with("/.") || w.ends_with("/..") {
                true => w,
                false => w.trim_end_matches([':', '.']),
            };
            if !w.starts_with('/') || w.len() == 1 || w.starts_with("//") {
                return None;
            }
            let path = lexical(Path::new(w));
            if path.starts_with("/proc") || path.starts_with("/dev") {
                return None;
            }
            let folder = match w.ends_with('/') || w.ends_with("/.") || w.ends_with("/..") {
                true => path.clone(),
                false => path.parent().unwrap_or(Path::new("/")).to_path_buf(),
            };
            Some((path, folder))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::sandbox::jail::Jail;

    fn jailed(read: &[&Path], write: &[&Path]) -> Policy {
        Policy {
            jail: Some(Jail {
                read: read.iter().map(|p| p.to_path_buf()).collect(),
                write: write.iter().map(|p| p.to_path_buf()).collect(),
                ..Jail::default()
            }),
            ..Policy::default()
        }
    }

    /// Issue 22: "A judge that fails after the jail refused it something says so in its
    /// record's cause: the path or host it was refused, and the option that grants it".
    #[test]
    fn a_hidden_or_read_only_path_is_named_with_the_option_that_grants_it() {
        let (tool, private) = (Path::new("/opt/tool"), Path::new("/tmp/private"));
        let policy = jailed(&[Path::new("/usr"), tool], &[private]);
        let home = Path::new("/home/user");
        let said = "/usr/bin/env: '/home/user/.pyenv/shims/python3': No such file or directory
                    /opt/tool/judge.sh: line 3: /opt/tool/log.txt: Read-only file system
                    cannot open /tmp/private/x: Permission denied
";
        assert_eq!(
            paths(said, &policy, home),
            [
                "/home/user/.pyenv/shims/python3 is outside its walls (--sandbox-read /home/user/.pyenv/shims shows it; --sandbox-write /home/user/.pyenv/shims lets it write there)",
                "/opt/tool/log.txt is read-only to it (--sandbox-write /opt/tool lets it write there)",
            ]
        );
        // Nothing walled: nothing to say.
        assert!(paths(said, &Policy::default(), home).is_empty());
    }

    /// Issue 35: "sandbox::refused reads URL paths in a judge's error (/user, /login,
    /// /v1internal:listExperiments) as file paths and advises --sandbox-write /"; issue 36: "the
    /// retry note checks the paths a judge names in its error as the caller, and says whether
    /// each exists, inside folders the judge cannot see".
    #[test]
    fn a_url_s_path_is_no_path_and_slash_or_home_is_never_advised() {
        let policy = jailed(&[Path::new("/usr")], &[Path::new("/tmp/private")]);
        let home = Path::new("/home/user");
        let said = "GET https://api.github.com/user 401
POST /login failed: 403
                    Failed to fetch experiments: 404 /v1internal:listExperiments
                    open /secret: No such file or directory
                    open /home/user: Permission denied
                    open /home/x: Permission denied
                    touch: cannot touch '/home/user/.ssh/x': Read-only file system
                    open /home/user/.config/gh/hosts.yml: Permission denied
";
        // /secret would grant /, /home/user the HOME, /home/x a folder above it, the last two
        // a folder of HOME where keys and logins are kept: each is named alone.
        let named = |said: &str| paths(said, &policy, home);
        assert_eq!(
            named(said),
            [
                "/secret is outside its walls",
                "/home/user is outside its walls",
                "/home/x is outside its walls",
            ]
        );
        assert_eq!(
            named(&said.lines().skip(6).collect::<Vec<_>>().join("\n")),
            [
                "/home/user/.ssh/x is outside its walls",
                "/home/user/.config/gh/hosts.yml is outside its walls",
            ]
        );
        let said = "open /srv/data/x.json: No such file or directory
GET /srv/data/y 404
";
        assert_eq!(
            paths(said, &policy, home),
            [
                "/srv/data/x.json is outside its walls (--sandbox-read /srv/data shows it; --sandbox-write /srv/data lets it write there)"
            ]
        );
        // A hidden folder that exists and one that does not read alike: no look as the caller.
        let secret = tempfile::tempdir().unwrap();
        let there = format!(
            "open {}/a: No such file or directory",
            secret.path().display()
        );
        let gone = "open /nowhere/at/all/a: No such file or directory";
        let shape = |s: &str| {
            paths(s, &policy, home)[0]
                .split(" is ")
                .nth(1)
                .unwrap()
                .split(" (")
                .next()
                .unwrap()
                .to_string()
        };
        assert_eq!(shape(&there), shape(gone));
    }

    /// Every CLI's login and configuration folder, read from the harness rows: cursor's
    /// (`~/.config/cursor`, `~/.cursor`) and llm's were advised before, as no list named them.
    /// A CLI's whole folder is kept, not only the one its login file is in (`~/.kimi`, not
    /// `~/.kimi/credentials` alone).
    #[test]
    fn a_cli_s_login_folder_is_never_advised_as_its_row_names_it() {
        let policy = jailed(&[Path::new("/usr")], &[Path::new("/tmp/private")]);
        let home = Path::new("/home/user");
        for dir in [
            ".config/cursor",
            ".cursor",
            ".claude",
            ".codex",
            ".kimi/credentials",
            ".kimi/logs",
            ".gemini/tmp",
            ".local/share/opencode",
            ".config/opencode",
            ".config/io.datasette.llm",
        ] {
            let said = format!("open /home/user/{dir}/x.json: Read-only file system");
            assert_eq!(
                paths(&said, &policy, home),
                [format!("/home/user/{dir}/x.json is outside its walls")],
                "{dir}"
            );
        }
        // A folder of HOME no CLI keeps a login in is advised as before.
        let said = "open /home/user/notes/x.json: Read-only file system";
        assert_eq!(
            paths(said, &policy, home),
            [
                "/home/user/notes/x.json is outside its walls (--sandbox-read /home/user/notes shows it; --sandbox-write /home/user/notes lets it write there)"
            ]
        );
    }

    /// Issue 46: "Refusal advice through `..`": a hostile judge that names `~/x/..`, `/srv/..`
    /// or `~/x/../.ssh/id` would be advised a grant of HOME, of `/`, of its keys. A path is
    /// read as it lands, without `.` and `..`; no grant is advised of `/`, of HOME or above it,
    /// of a folder of keys or one that holds one; control characters are shown escaped.
    #[test]
    fn a_path_that_climbs_with_dots_is_read_where_it_lands_and_no_wide_grant_is_advised() {
        let policy = jailed(&[Path::new("/usr")], &[Path::new("/tmp/private")]);
        let home = Path::new("/home/user");
        let named = |said: &str| paths(said, &policy, home);
        for (said, lands) in [
            ("open /home/user/x/..: Permission denied", "/home/user"),
            ("open '/home/user/x/../': Permission denied", "/home/user"),
            ("stat /srv/..: No such file or directory", "/"),
            ("stat /srv/../.: No such file or directory", "/"),
            ("open /home/user/x/../.ssh/id: EACCES", "/home/user/.ssh/id"),
            ("open /home/user/./.gnupg/k: EACCES", "/home/user/.gnupg/k"),
            (
                "open /tmp/a/../../home/user/.aws/c: EACCES",
                "/home/user/.aws/c",
            ),
            // ~/.config holds gh's login, ~/.local/share the keyrings.
            (
                "open /home/user/q/../.config/x: EACCES",
                "/home/user/.config/x",
            ),
            (
                "open /home/user/.local/share/..: EACCES",
                "/home/user/.local",
            ),
            ("open /home/user/../x: EACCES", "/home/x"),
            ("open /home/user/../../../x: EACCES", "/x"),
        ] {
            assert_eq!(
                named(said),
                [format!("{lands} is outside its walls")],
                "{said}"
            );
        }
        // Under a read grant, read-only alone.
        let root = jailed(&[Path::new("/")], &[Path::new("/tmp/private")]);
        assert_eq!(
            paths(
                "touch: cannot touch '/etc/../home/user/.bashrc': Read-only file system",
                &root,
                home
            ),
            ["/home/user/.bashrc is read-only to it"]
        );
        // A path that climbs elsewhere is advised where it lands, a folder written as one
        // itself; /proc and /dev stay unnamed.
        assert_eq!(
            named("open /home/user/x/.: Permission denied"),
            [
                "/home/user/x is outside its walls (--sandbox-read /home/user/x shows it; --sandbox-write /home/user/x lets it write there)"
            ]
        );
        assert_eq!(
            named("open /srv/data/../other/x.json: No such file or directory"),
            [
                "/srv/other/x.json is outside its walls (--sandbox-read /srv/other shows it; --sandbox-write /srv/other lets it write there)"
            ]
        );
        assert!(named("open /srv/../proc/1/environ: EACCES").is_empty());
        assert!(named("open /tmp/../dev/mem: EACCES").is_empty());
        // A HOME given with dots is read the same.
        assert_eq!(
            paths(
                "open /home/user/x/..: EACCES",
                &policy,
                Path::new("/home/other/../user/")
            ),
            ["/home/user is outside its walls"]
        );
        // No control character of a path reaches the cause as it is.
        assert_eq!(
            named("open /srv/a\u{1b}c\u{7}\u{9b}b/y: EACCES"),
            [
                "/srv/a\\x1bc\\x07\\u{9b}b/y is outside its walls (--sandbox-read /srv/a\\x1bc\\x07\\u{9b}b shows it; --sandbox-write /srv/a\\x1bc\\x07\\u{9b}b lets it write there)"
            ]
        );
    }
}

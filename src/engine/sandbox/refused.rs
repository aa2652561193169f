//! What the walls refused a judge that failed, in words for its record's cause: the paths its
//! own error names that its walls hid or kept read-only, and the option that grants each. (The
//! hosts its proxy refused are in the proxy's log, [`super::egress::refusals`].)

use std::path::{Path, PathBuf};

use super::Policy;

/// At most this many paths are named.
const MAX: usize = 3;

/// The paths `said` (a failed judge's stderr) names in a file-system error that `policy` did
/// not let it have, each with what grants it. Decided from the words and the policy alone: no
/// call is made on a path a judge named (its existence, as the caller, is nothing to tell it),
/// a path in a line without a file-system error (a URL's path, `GET /user`) is no path, and `/`
/// or the user's HOME (or a folder above it) is never advised.
pub fn paths(said: &str, policy: &Policy, home: &Path) -> Vec<String> {
    let (read, write) = granted(policy);
    if read.is_empty() && write.is_empty() {
        return Vec::new();
    }
    let under = |p: &Path, set: &[PathBuf]| set.iter().any(|g| p.starts_with(g));
    let mut out: Vec<String> = Vec::new();
    // Our own lines ("panel: cannot make the judge's jail: …") say what went wrong already.
    for line in said.lines().filter(|l| !l.starts_with("panel: ")) {
        let Some(error) = fs_error(line) else {
            continue;
        };
        // An error names what it could not have last ("prog: line 3: /x/log: Read-only …").
        let Some(path) = absolute_paths(line).pop() else {
            continue;
        };
        let dir = folder_of(&path);
        if dir == Path::new("/") || home.starts_with(&dir) || hidden_in(&dir, home) {
            continue;
        }
        let note = match (error, under(&path, &write), under(&path, &read)) {
            (_, true, _) => None,
            (FsError::ReadOnly | FsError::Denied, false, true) => Some(format!(
                "{} is read-only to it (--sandbox-write {} lets it write there)",
                path.display(),
                dir.display()
            )),
            (_, false, true) => None,
            (_, false, false) => Some(format!(
                "{} is outside its walls (--sandbox-read {} shows it; --sandbox-write {} lets it write there)",
                path.display(),
                dir.display(),
                dir.display()
            )),
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

/// Folders of HOME where keys and logins are kept: never advised to a judge, whatever its
/// error says (the CLIs' own logins reach a judge through the login broker, not a grant).
const KEYS: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".password-store",
    ".netrc",
    ".config/gh",
    ".config/gcloud",
    ".claude",
    ".codex",
    ".gemini",
    ".copilot",
    ".kimi",
    ".qwen",
    ".local/share/opencode",
    ".local/share/keyrings",
];

/// Whether `dir` is in one of HOME's [`KEYS`] folders.
fn hidden_in(dir: &Path, home: &Path) -> bool {
    dir.strip_prefix(home)
        .is_ok_and(|rest| KEYS.iter().any(|k| rest.starts_with(k)))
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

/// The folder to grant for `path`: the one it is in (itself when it is written as a folder,
/// ending in `/`). Its words decide: nothing is looked up.
fn folder_of(path: &Path) -> PathBuf {
    match path.as_os_str().to_string_lossy().ends_with('/') {
        true => path.to_path_buf(),
        false => path.parent().unwrap_or(Path::new("/")).to_path_buf(),
    }
}

/// The absolute paths in a line of an error, without the quotes and punctuation around them.
fn absolute_paths(line: &str) -> Vec<PathBuf> {
    line.split(|c: char| c.is_whitespace() || "'\"`()[]{}<>,;".contains(c))
        .filter_map(|w| {
            let w = w.trim_end_matches([':', '.']);
            let ok = w.starts_with('/')
                && w.len() > 1
                && !w.starts_with("//")
                && !w.starts_with("/proc/")
                && !w.starts_with("/dev/");
            ok.then(|| PathBuf::from(w))
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
        // a folder of HOME where keys and logins are kept.
        assert!(paths(said, &policy, home).is_empty());
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
}

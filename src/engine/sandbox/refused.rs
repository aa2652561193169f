//! What the walls refused a judge that failed, in words for its record's cause: the paths its
//! own error names that its walls hid or kept read-only, and the option that grants each. (The
//! hosts its proxy refused are in the proxy's log, [`super::egress::refusals`].)

use std::path::{Path, PathBuf};

use super::Policy;

/// At most this many paths are named.
const MAX: usize = 3;

/// The paths `said` (a failed judge's stderr) names that `policy` did not let it have, each
/// with what grants it.
pub fn paths(said: &str, policy: &Policy) -> Vec<String> {
    let (read, write) = granted(policy);
    if read.is_empty() && write.is_empty() {
        return Vec::new();
    }
    let under = |p: &Path, set: &[PathBuf]| set.iter().any(|g| p.starts_with(g));
    let mut out: Vec<String> = Vec::new();
    // Our own lines ("panel: cannot make the judge's jail: …") say what went wrong already.
    for line in said.lines().filter(|l| !l.starts_with("panel: ")) {
        let read_only = line.contains("Read-only file system");
        // An error names what it could not have last ("prog: line 3: /x/log: Read-only …").
        let Some(path) = absolute_paths(line).pop() else {
            continue;
        };
        {
            let note = if under(&path, &write) {
                None
            } else if under(&path, &read) {
                (read_only || line.contains("Permission denied")).then(|| {
                    let dir = folder_of(&path);
                    format!(
                        "{} is read-only to it (--sandbox-write {} lets it write there)",
                        path.display(),
                        dir.display()
                    )
                })
            } else {
                // Hidden: what it named is there on this machine, or would be made in a folder
                // that is.
                let there = std::fs::symlink_metadata(&path).is_ok();
                let dir = folder_of(&path);
                match (there, dir.exists()) {
                    (true, _) => Some(format!(
                        "{} is not shown to it (--sandbox-read {} shows it)",
                        path.display(),
                        dir.display()
                    )),
                    (false, true) => Some(format!(
                        "{} is in a folder it may not write (--sandbox-write {} lets it)",
                        path.display(),
                        dir.display()
                    )),
                    (false, false) => None,
                }
            };
            if let Some(n) = note.filter(|n| !out.contains(n)) {
                out.push(n);
                if out.len() == MAX {
                    return out;
                }
            }
        }
    }
    out
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

/// The folder to grant for `path`: itself when it is a folder, else the one it is in.
fn folder_of(path: &Path) -> PathBuf {
    match path.is_dir() {
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
        let t = tempfile::tempdir().unwrap();
        let t = t.path().canonicalize().unwrap();
        let (tool, shim) = (t.join("tool"), t.join("pyenv/shims/python3"));
        std::fs::create_dir_all(&tool).unwrap();
        std::fs::create_dir_all(shim.parent().unwrap()).unwrap();
        std::fs::write(&shim, "").unwrap();
        let private = t.join("private");
        let policy = jailed(&[Path::new("/usr"), &tool], &[&private]);
        let said = format!(
            "/usr/bin/env: '{}': No such file or directory\n{}/judge.sh: line 3: {}/log.txt: Read-only file system\ncannot open {}/x: fine\n",
            shim.display(),
            tool.display(),
            tool.display(),
            private.display()
        );
        assert_eq!(
            paths(&said, &policy),
            [
                format!(
                    "{} is not shown to it (--sandbox-read {} shows it)",
                    shim.display(),
                    shim.parent().unwrap().display()
                ),
                format!(
                    "{}/log.txt is read-only to it (--sandbox-write {} lets it write there)",
                    tool.display(),
                    tool.display()
                ),
            ]
        );
        // Nothing walled: nothing to say.
        assert!(paths(&said, &Policy::default()).is_empty());
    }
}

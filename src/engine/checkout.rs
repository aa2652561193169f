//! The reviewers' checkout: a detached git worktree of the head, made for the run and removed
//! after it, and a snapshot that shows whether a reviewer changed it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};

/// Runs git in `dir`; its stdout, or an error with its stderr.
pub fn git(dir: &Path, args: &[&str]) -> Result<Vec<u8>> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .context("cannot run git")?;
    if !out.status.success() {
        bail!(
            "git {}: {}",
            args.join(" "),
            crate::records::text::one_line(&String::from_utf8_lossy(&out.stderr))
        );
    }
    Ok(out.stdout)
}

/// A detached worktree of one commit; removed (with `git worktree prune`) when dropped.
pub struct Worktree {
    repo: PathBuf,
    pub dir: PathBuf,
}

impl Worktree {
    /// `git worktree add --detach DIR HEAD`, refusing a head the repository does not hold.
    pub fn add(repo: &Path, dir: &Path, head: &str) -> Result<Worktree> {
        let commit = format!("{head}^{{commit}}");
        if git(repo, &["cat-file", "-e", &commit]).is_err() {
            bail!(
                "{}: the head {head} is not in this repository; fetch it first (git fetch origin pull/N/head)",
                repo.display()
            );
        }
        let d = dir.display().to_string();
        git(repo, &["worktree", "add", "--quiet", "--detach", &d, head])
            .with_context(|| format!("{}: cannot check out the head", repo.display()))?;
        let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
        Ok(Worktree {
            repo: repo.to_path_buf(),
            dir,
        })
    }
}

impl Drop for Worktree {
    fn drop(&mut self) {
        let d = self.dir.display().to_string();
        if git(&self.repo, &["worktree", "remove", "--force", &d]).is_err() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
        let _ = git(&self.repo, &["worktree", "prune"]);
    }
}

/// What a checkout holds: its HEAD and a hash of every file (tracked, untracked and ignored),
/// by path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    pub head: String,
    pub files: BTreeMap<String, String>,
}

/// Takes a snapshot of a checkout. The worktree's `.git` link file is left out; a change of
/// HEAD shows in `head`.
pub fn snapshot(dir: &Path) -> Result<Snapshot> {
    let head = String::from_utf8_lossy(&git(dir, &["rev-parse", "HEAD"])?)
        .trim()
        .to_string();
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries =
            std::fs::read_dir(&d).with_context(|| format!("{}: cannot read", d.display()))?;
        for e in entries {
            let e = e?;
            let path = e.path();
            let rel = path
                .strip_prefix(dir)
                .unwrap_or(&path)
                .display()
                .to_string();
            if rel == ".git" {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path)?;
            let digest = if meta.file_type().is_symlink() {
                format!("link:{}", std::fs::read_link(&path)?.display())
            } else if meta.is_dir() {
                stack.push(path);
                "dir".to_string()
            } else {
                use std::os::unix::fs::PermissionsExt;
                let bytes = std::fs::read(&path)
                    .with_context(|| format!("{}: cannot read", path.display()))?;
                format!(
                    "{:o}:{:x}",
                    meta.permissions().mode() & 0o111,
                    Sha256::digest(&bytes)
                )
            };
            files.insert(rel, digest);
        }
    }
    Ok(Snapshot { head, files })
}

/// What differs between two snapshots, a few paths named; `None` when nothing does.
pub fn changes(before: &Snapshot, after: &Snapshot) -> Option<String> {
    let mut what = Vec::new();
    if before.head != after.head {
        what.push(format!(
            "HEAD moved to {}",
            &after.head[..after.head.len().min(12)]
        ));
    }
    for (path, digest) in &after.files {
        match before.files.get(path) {
            None => what.push(format!("added {path}")),
            Some(d) if d != digest => what.push(format!("changed {path}")),
            _ => {}
        }
    }
    for path in before.files.keys() {
        if !after.files.contains_key(path) {
            what.push(format!("removed {path}"));
        }
    }
    if what.is_empty() {
        return None;
    }
    let n = what.len();
    what.truncate(5);
    let more = if n > 5 {
        format!(", +{} more", n - 5)
    } else {
        String::new()
    };
    Some(format!(
        "the reviewer changed its checkout: {}{more}",
        what.join(", ")
    ))
}

/// Whether `path` has line `line` at `commit` in `repo`, read with `git cat-file`; without
/// that commit, in the working tree of `repo`.
pub fn cites(repo: &Path, commit: &str, path: &str, line: u64) -> bool {
    if line == 0 || path.contains("..") || path.starts_with('/') {
        return false;
    }
    let at_head = git(repo, &["cat-file", "-e", &format!("{commit}^{{commit}}")]).is_ok();
    let text = if at_head {
        match git(repo, &["cat-file", "blob", &format!("{commit}:{path}")]) {
            Ok(bytes) => bytes,
            Err(_) => return false,
        }
    } else {
        match std::fs::read(repo.join(path)) {
            Ok(bytes) => bytes,
            Err(_) => return false,
        }
    };
    let lines = text.split(|&b| b == b'\n').count() as u64 - u64::from(text.ends_with(b"\n"));
    line <= lines
}

/// The changed files (`git diff --name-status`) and, when small enough, the diff, from base to
/// head; `None` parts when the base is not in the repository.
pub fn change(
    repo: &Path,
    base: Option<&str>,
    head: &str,
    max_diff: usize,
) -> crate::records::pr::Change {
    let mut c = crate::records::pr::Change {
        base: base.map(str::to_string),
        ..Default::default()
    };
    let Some(base) = base else { return c };
    if let Ok(out) = git(repo, &["diff", "--name-status", "-M", base, head]) {
        c.files = String::from_utf8_lossy(&out)
            .lines()
            .take(300)
            .map(|l| l.replace('\t', " "))
            .collect();
    }
    if let Ok(out) = git(repo, &["diff", "-M", base, head])
        && out.len() <= max_diff
    {
        c.diff = Some(String::from_utf8_lossy(&out).into_owned());
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(files: &[(&str, &str)]) -> Snapshot {
        Snapshot {
            head: "abc".into(),
            files: files
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect(),
        }
    }

    #[test]
    fn changes_name_what_moved() {
        let a = snap(&[("a", "1"), ("b", "2")]);
        assert_eq!(changes(&a, &a.clone()), None);
        let b = snap(&[("a", "9"), ("c", "3")]);
        let msg = changes(&a, &b).unwrap();
        assert!(
            msg.contains("changed a") && msg.contains("added c") && msg.contains("removed b"),
            "{msg}"
        );
        let mut moved = a.clone();
        moved.head = "def".into();
        assert!(changes(&a, &moved).unwrap().contains("HEAD moved"));
    }
}

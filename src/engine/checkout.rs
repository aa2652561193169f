//! The reviewers' checkout: a repository of its own holding the head and the base alone
//! (fetched from the user's, with none of its configuration, hooks or other refs, so no CI
//! token in `.git/config` and no other run's folder is there to read), checked out at the head
//! with every symbolic link written as a plain file, made for the run and removed after it; and
//! a snapshot that shows whether a reviewer changed it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};

use crate::records::pr::{Link, MAX_LINKS};

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
            crate::records::printable::one_line(&String::from_utf8_lossy(&out.stderr))
        );
    }
    Ok(out.stdout)
}

/// A checkout of one commit in a repository of its own; removed when dropped.
pub struct Worktree {
    pub dir: PathBuf,
}

/// How git checks out a stranger's code for reading. `core.symlinks=false` writes each
/// symbolic link as a plain file holding its target's text, so no path in the checkout leads
/// out of it to the user's files (docs/design.md §8: the candidate "may carry … symlinks to the
/// user's secrets"), and nothing (the reviewer, our snapshot, git itself) ever follows one.
/// `core.hooksPath=/dev/null`: no hook of the user's runs in the new checkout, where a hook
/// that reads the repository's own configuration would run the PR's commands.
pub const CHECKOUT_CONFIG: [&str; 4] = [
    "-c",
    "core.symlinks=false",
    "-c",
    "core.hooksPath=/dev/null",
];

impl Worktree {
    /// A new repository at `dir` (which must not exist) holding `head` and `base` of `repo`,
    /// its refs `refs/panel/head` and `refs/panel/base` alone, checked out detached at the head
    /// with [`CHECKOUT_CONFIG`]; refusing a head the repository does not hold, and a checkout
    /// that holds a symbolic link all the same.
    pub fn add(repo: &Path, dir: &Path, base: Option<&str>, head: &str) -> Result<Worktree> {
        let commit = |rev: &str| -> Result<String> {
            let out = git(repo, &["rev-parse", "--verify", "--quiet", &format!("{rev}^{{commit}}")])
                .map_err(|_| {
                    anyhow::anyhow!(
                        "{}: {rev} is not in this repository; fetch it first (git fetch origin pull/N/head)",
                        repo.display()
                    )
                })?;
            Ok(String::from_utf8_lossy(&out).trim().to_string())
        };
        let head_sha = commit(head)?;
        let base_sha = base.map(commit).transpose()?;
        let d = dir.display().to_string();
        git(
            Path::new("/"),
            &[
                "-c",
                "init.defaultBranch=panel",
                "init",
                "--quiet",
                "--template=",
                &d,
            ],
        )
        .with_context(|| format!("{d}: cannot make the reviewers' repository"))?;
        let tree = Worktree {
            dir: dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf()),
        };
        for (k, v) in [
            ("core.hooksPath", "/dev/null"),
            ("core.symlinks", "false"),
            ("gc.auto", "0"),
            ("maintenance.auto", "false"),
        ] {
            git(&tree.dir, &["config", k, v])?;
        }
        let source = repo.display().to_string();
        let mut refspecs = vec![format!("{head_sha}:refs/panel/head")];
        refspecs.extend(base_sha.map(|b| format!("{b}:refs/panel/base")));
        let mut args = vec![
            "fetch",
            "--quiet",
            "--no-tags",
            "--no-write-fetch-head",
            "--no-recurse-submodules",
            &source,
        ];
        args.extend(refspecs.iter().map(String::as_str));
        git(&tree.dir, &args).with_context(|| {
            format!(
                "{}: cannot fetch the head into the reviewers' repository",
                repo.display()
            )
        })?;
        let mut args = CHECKOUT_CONFIG.to_vec();
        args.extend(["checkout", "--quiet", "--detach", &head_sha]);
        git(&tree.dir, &args)
            .with_context(|| format!("{}: cannot check out the head", repo.display()))?;
        if let Some(link) = first_link(&tree.dir)? {
            bail!(
                "{}: the checkout of {head} holds a symbolic link, {}, though git was told to write links as plain files; no reviewer is started",
                repo.display(),
                crate::records::printable::inline(&link)
            );
        }
        Ok(tree)
    }
}

impl Drop for Worktree {
    fn drop(&mut self) {
        let _ = crate::engine::beneath::remove_tree(&self.dir);
    }
}

/// What a checkout holds: its HEAD and a hash of every file (tracked, untracked and ignored),
/// by path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    pub head: String,
    pub files: BTreeMap<String, String>,
}

/// Takes a snapshot of a checkout. Its `.git` is left out; a change of HEAD shows in `head`.
pub fn snapshot(dir: &Path) -> Result<Snapshot> {
    let head = String::from_utf8_lossy(&git(dir, &["rev-parse", "HEAD"])?)
        .trim()
        .to_string();
    let mut files = BTreeMap::new();
    walk(dir, |rel, path, meta| {
        let digest = if meta.file_type().is_symlink() {
            format!("link:{}", std::fs::read_link(path)?.display())
        } else if meta.is_dir() {
            "dir".to_string()
        } else {
            use std::os::unix::fs::PermissionsExt;
            let bytes =
                std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?;
            format!(
                "{:o}:{:x}",
                meta.permissions().mode() & 0o111,
                Sha256::digest(&bytes)
            )
        };
        files.insert(rel, digest);
        Ok(())
    })?;
    Ok(Snapshot { head, files })
}

/// The first symbolic link found under `dir`, by its path relative to `dir`.
fn first_link(dir: &Path) -> Result<Option<String>> {
    let mut link = None;
    walk(dir, |rel, _, meta| {
        if meta.file_type().is_symlink() {
            link.get_or_insert(rel);
        }
        Ok(())
    })?;
    Ok(link)
}

/// Visits everything under `dir` but its `.git`, with its path relative
/// to `dir` and its own metadata: a symbolic link is seen as a link, never followed.
fn walk(
    dir: &Path,
    mut visit: impl FnMut(String, &Path, &std::fs::Metadata) -> Result<()>,
) -> Result<()> {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries =
            std::fs::read_dir(&d).with_context(|| format!("{}: cannot read", d.display()))?;
        for e in entries {
            let path = e?.path();
            let rel = path
                .strip_prefix(dir)
                .unwrap_or(&path)
                .display()
                .to_string();
            if rel == ".git" {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path)?;
            visit(rel, &path, &meta)?;
            if meta.is_dir() {
                stack.push(path);
            }
        }
    }
    Ok(())
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
/// that commit, in the working tree of `repo`, where only a plain file inside it is read (a
/// link out of it, or to a device or a pipe, cites nothing).
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
        let inside = |root: PathBuf| {
            let file = repo.join(path).canonicalize().ok()?;
            let plain = std::fs::metadata(&file).ok()?.is_file();
            (plain && file.starts_with(root)).then_some(file)
        };
        match repo.canonicalize().ok().and_then(inside) {
            Some(file) => match std::fs::read(file) {
                Ok(bytes) => bytes,
                Err(_) => return false,
            },
            None => return false,
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
    let raw = git(
        repo,
        &["diff", "--raw", "-z", "--no-abbrev", "-M", base, head],
    )
    .ok()
    .and_then(|out| crate::records::facts::raw::parse_z(&out).ok())
    .unwrap_or_default();
    let links: Vec<_> = raw.into_iter().filter(|e| e.is_link()).collect();
    c.more_links = links.len().saturating_sub(MAX_LINKS);
    c.links = links
        .into_iter()
        .take(MAX_LINKS)
        .map(|e| link(repo, head, &e.path, &e.new_blob))
        .collect();
    c
}

/// The longest link target a brief shows; a real one is at most a path's length.
const MAX_TARGET: u64 = 1024;

/// A link at the head: its target read from its blob, and the file it names inside the
/// repository when the head holds one there.
fn link(repo: &Path, head: &str, path: &str, blob: &str) -> Link {
    let size = git(repo, &["cat-file", "-s", blob])
        .ok()
        .and_then(|s| String::from_utf8_lossy(&s).trim().parse::<u64>().ok())
        .unwrap_or(0);
    let target = (size <= MAX_TARGET)
        .then(|| git(repo, &["cat-file", "blob", blob]).ok())
        .flatten()
        .map(|b| String::from_utf8_lossy(&b).into_owned());
    let inside = target
        .as_deref()
        .and_then(|t| resolve(path, t))
        .filter(|p| git(repo, &["cat-file", "-e", &format!("{head}:{p}")]).is_ok());
    Link {
        path: path.to_string(),
        target,
        size,
        inside,
    }
}

/// Where a link at `path` whose target is `target` leads, read as text: the path inside the
/// repository, or `None` when it leaves it (an absolute target, or more `..` than folders).
pub fn resolve(path: &str, target: &str) -> Option<String> {
    if target.starts_with('/') {
        return None;
    }
    let mut parts: Vec<&str> = path.split('/').collect();
    parts.pop();
    for part in target.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
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

    #[test]
    fn a_link_target_resolves_inside_the_repository_or_leaves_it() {
        assert_eq!(
            resolve("docs/a.md", "../README.md").as_deref(),
            Some("README.md")
        );
        assert_eq!(
            resolve("docs/a.md", "./b/../c.md").as_deref(),
            Some("docs/c.md")
        );
        assert_eq!(
            resolve("docs/setup.md", "~/.aws/credentials").as_deref(),
            Some("docs/~/.aws/credentials")
        );
        for (path, target) in [
            ("docs/a.md", "../../x"),
            ("a.md", "../x"),
            ("docs/a.md", "/etc/passwd"),
            ("docs/a.md", ".."),
            ("docs/a/b.md", "../../../../home/u/.ssh/id_rsa"),
        ] {
            assert_eq!(resolve(path, target), None, "{path} -> {target}");
        }
    }

    fn scratch(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("panel-checkout-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("docs")).unwrap();
        dir
    }

    #[test]
    fn a_link_in_a_checkout_is_found_without_being_followed() {
        let dir = scratch("links");
        std::fs::write(dir.join("docs/a.md"), "a\n").unwrap();
        assert_eq!(first_link(&dir).unwrap(), None);
        std::os::unix::fs::symlink("/", dir.join("docs/root")).unwrap();
        assert_eq!(first_link(&dir).unwrap().as_deref(), Some("docs/root"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Without the commit, a finding is checked in the working tree: a link there that leaves
    /// it, or names a device, cites nothing, however many lines its target has.
    #[test]
    fn a_citation_through_a_link_out_of_the_working_tree_cites_nothing() {
        let dir = scratch("cites");
        let repo = dir.join("repo");
        std::fs::create_dir_all(&repo).unwrap();
        std::fs::write(dir.join("secret"), "1\n2\n3\n4\n5\n").unwrap();
        std::fs::write(repo.join("mine.md"), "1\n2\n3\n4\n5\n").unwrap();
        std::os::unix::fs::symlink(dir.join("secret"), repo.join("out.md")).unwrap();
        std::os::unix::fs::symlink("../secret", repo.join("up.md")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", repo.join("zero.md")).unwrap();
        std::os::unix::fs::symlink("mine.md", repo.join("in.md")).unwrap();
        let commit = "0".repeat(40);
        assert!(cites(&repo, &commit, "mine.md", 5));
        assert!(cites(&repo, &commit, "in.md", 5), "a link inside the tree");
        for link in ["out.md", "up.md", "zero.md"] {
            assert!(!cites(&repo, &commit, link, 3), "{link}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

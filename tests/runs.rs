//! Issue 25: "Every run leaves a `/tmp/panel.*` folder: 159 after an hour. Keep run folders
//! under one cache folder (`$XDG_CACHE_HOME/panel/runs`), and add a way to list and prune them,
//! e.g. `panel-tally --runs` and a `--keep DAYS` policy with a sane default."

use std::fs;
use std::path::{Path, PathBuf};

use crate::tool::{Ran, Tool};
use crate::util::{TempDir, root, stderr, stdout};

/// A cache, a temporary folder and a HOME of the test's own.
struct Rig {
    tmp: TempDir,
}

impl Rig {
    fn new(tag: &str) -> Rig {
        let b = Rig {
            tmp: TempDir::new(tag),
        };
        for d in ["cache", "tmp", "home"] {
            fs::create_dir_all(b.path(d)).unwrap();
        }
        b
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.tmp.path().join(rel)
    }

    fn runs(&self) -> PathBuf {
        self.path("cache/panel/runs")
    }

    /// `tool` with this box's cache, temporary folder and HOME.
    fn cmd(&self, tool: &str) -> Tool {
        let mut cmd = Tool::new(tool);
        cmd.current_dir(root())
            .env("XDG_CACHE_HOME", self.path("cache"))
            .env("HOME", self.path("home"))
            .env("TMPDIR", self.path("tmp"))
            .env("PANEL_HISTORY", "off")
            .env_remove("PANEL_KEEP_DAYS");
        cmd
    }

    /// One replayed panel with no --out, `more` options first.
    fn judge(&self, more: &[&str], env: &[(&str, &str)]) -> Ran {
        self.cmd("panel-judge")
            .args(more)
            .args([
                "--seat",
                "replay:examples/answers.json",
                "examples/answer.md",
            ])
            .envs(env.iter().copied())
            .run()
    }

    fn tally(&self, args: &[&str]) -> Ran {
        self.cmd("panel-tally").args(args).run()
    }

    /// The `panel.*` entries of the box's temporary folder.
    fn in_tmp(&self) -> Vec<String> {
        names(&self.path("tmp"))
            .into_iter()
            .filter(|n| n.starts_with("panel."))
            .collect()
    }
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Whether `name` is a run folder's name as panel gives it: `YYYYMMDDTHHMMSSZ-` and twelve hex.
fn our_name(name: &str) -> bool {
    let b = name.as_bytes();
    b.len() == 29
        && b[8] == b'T'
        && &name[15..17] == "Z-"
        && name[17..].bytes().all(|c| c.is_ascii_hexdigit())
}

/// A run folder of an old run, as panel names it, with a file in it.
fn old_run(runs: &Path, n: u8) -> PathBuf {
    let dir = runs.join(format!("20200101T00000{n}Z-00000000000{n}"));
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("verdicts.jsonl"), "{}\n").unwrap();
    dir
}

/// An old run folder that a live run holds (its lock, held until dropped).
fn held_run(runs: &Path, n: u8) -> (PathBuf, nix::fcntl::Flock<fs::File>) {
    let dir = old_run(runs, n);
    let file = fs::File::open(&dir).unwrap();
    let lock = nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusive).unwrap();
    (dir, lock)
}

#[test]
fn a_run_with_no_run_folder_goes_into_the_cache_and_none_into_the_temporary_folder() {
    let b = Rig::new("runs-cache");
    let out = b.judge(&[], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let recs = out.records();
    let run = PathBuf::from(recs[0]["run"].as_str().unwrap());
    let runs = b.runs().canonicalize().unwrap();
    assert_eq!(run.parent(), Some(runs.as_path()), "{}", run.display());
    let name = run.file_name().unwrap().to_str().unwrap();
    assert!(our_name(name), "{name}");
    assert!(run.join("verdicts.jsonl").is_file());
    assert!(
        stderr(&out).contains(&format!(
            "verdicts: {} (verdicts.jsonl sha256:",
            run.display()
        )),
        "{}",
        stderr(&out)
    );
    use std::os::unix::fs::PermissionsExt;
    for dir in [b.path("cache/panel"), b.runs(), run.clone()] {
        let mode = fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "{}", dir.display());
    }
    assert_eq!(b.in_tmp(), Vec::<String>::new());
    // The next run's name sorts after it.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let out = b.judge(&[], &[]);
    let next = PathBuf::from(out.records()[0]["run"].as_str().unwrap().to_string());
    assert!(next.file_name() > run.file_name(), "{}", next.display());
    assert_eq!(b.in_tmp(), Vec::<String>::new());
}

#[test]
fn with_no_cache_home_nor_home_the_run_folder_is_in_the_temporary_folder_said_once() {
    let b = Rig::new("runs-nohome");
    let mut cmd = b.cmd("panel-judge");
    cmd.env_remove("HOME").env_remove("XDG_CACHE_HOME").args([
        "--seat",
        "replay:examples/answers.json",
        "examples/answer.md",
    ]);
    let out = cmd.run();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let run = PathBuf::from(out.records()[0]["run"].as_str().unwrap());
    let tmp = b.path("tmp").canonicalize().unwrap();
    assert_eq!(run.parent(), Some(tmp.as_path()), "{}", run.display());
    let name = run.file_name().unwrap().to_str().unwrap();
    assert!(our_name(name.strip_prefix("panel.").unwrap()), "{name}");
    let err = stderr(&out);
    let said: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("no XDG_CACHE_HOME or HOME"))
        .collect();
    assert_eq!(said.len(), 1, "{}", stderr(&out));
    assert!(said[0].starts_with("panel-judge: "), "{}", said[0]);
    assert!(!b.path("home/.cache").exists());
}

/// Another user or a judge could plant a link where `panel` or `runs` goes: refused in one line
/// and exit 2, nothing written through it, by a run and by `--runs --keep`.
#[test]
fn a_link_planted_as_panel_or_runs_in_the_cache_is_refused() {
    for planted in ["panel", "panel/runs"] {
        let b = Rig::new("runs-link");
        let elsewhere = b.path("elsewhere");
        fs::create_dir_all(&elsewhere).unwrap();
        old_run(&elsewhere, 1);
        let before = names(&elsewhere);
        let link = b.path("cache").join(planted);
        fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
        let out = b.judge(&[], &[]);
        assert_eq!(out.status.code(), Some(2), "{planted}: {}", stderr(&out));
        assert_eq!(stdout(&out), "", "{planted}: nothing launched");
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with(&format!("panel-judge: {}: a symbolic link", link.display())),
            "{err}"
        );
        for args in [&["--runs", "--keep", "0"][..], &["--runs", "--json"]] {
            let out = b.tally(args);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
            assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
            assert_eq!(stdout(&out), "");
        }
        assert_eq!(
            names(&elsewhere),
            before,
            "{planted}: written through the link"
        );
        assert!(elsewhere.join("20200101T000001Z-000000000001").exists());
        assert_eq!(b.in_tmp(), Vec::<String>::new());
    }
}

#[test]
fn runs_lists_the_run_folders_and_keep_prunes_only_what_is_ours_and_free() {
    let b = Rig::new("runs-list");
    let out = b.judge(&[], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let run = PathBuf::from(out.records()[0]["run"].as_str().unwrap());
    let seal = stderr(&out)
        .lines()
        .find_map(|l| {
            l.strip_prefix("verdicts: ")?
                .rsplit_once("verdicts.jsonl ")?
                .1
                .strip_suffix(')')
                .map(String::from)
        })
        .expect("the closing line");
    let runs = b.runs().canonicalize().unwrap();
    let old = old_run(&runs, 1);
    let (held_dir, held) = held_run(&runs, 2);
    // Not ours: a name panel never gives, a link by our name, a file by our name.
    let foreign = runs.join("20200101T000000Z-my-notes");
    fs::create_dir_all(&foreign).unwrap();
    let target = b.path("target");
    fs::create_dir_all(&target).unwrap();
    fs::write(target.join("precious"), "x").unwrap();
    std::os::unix::fs::symlink(&target, runs.join("20200101T000003Z-000000000003")).unwrap();
    fs::write(runs.join("20200101T000004Z-000000000004"), "x").unwrap();

    let out = b.tally(&["--runs", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let listed = out.records();
    let paths: Vec<&str> = listed.iter().map(|r| r["path"].as_str().unwrap()).collect();
    let shown = |p: &Path| p.display().to_string();
    assert_eq!(
        paths,
        [shown(&run), shown(&held_dir), shown(&old)],
        "newest first"
    );
    let first = &listed[0];
    assert_eq!(first["type"], "run-folder");
    assert_eq!(first["ledger"], "verdicts.jsonl");
    assert_eq!(first["records"], 3);
    assert_eq!(first["judges"], 3);
    assert_eq!(first["seal"], seal.as_str());
    assert_eq!(first["live"], false);
    assert!(first["bytes"].as_u64().unwrap() > 0);
    assert!(first["ageSecs"].as_u64().unwrap() < 3600);
    assert_eq!(listed[1]["live"], true);
    assert_eq!(listed[2]["started"], "2020-01-01T00:00:01Z");
    assert_eq!(listed[2]["live"], false);

    let text = b.tally(&["--runs", "--format", "text"]);
    let lines: Vec<String> = stdout(&text).lines().map(String::from).collect();
    assert!(lines[0].starts_with("AGE  "), "{}", stdout(&text));
    assert!(lines[0].ends_with("PATH"), "{}", stdout(&text));
    assert!(lines[1].ends_with(&shown(&run)) && lines[1].contains("verdicts.jsonl (3)"));
    assert!(lines[2].contains(" live ") && lines[2].ends_with(&shown(&held_dir)));
    assert_eq!(lines.len(), 4);
    // Through a pipe, the same table: JSON lines only with --json.
    let piped = stdout(&b.tally(&["--runs"]));
    let piped: Vec<&str> = piped.lines().collect();
    assert_eq!(piped.len(), 4, "{piped:?}");
    assert_eq!(piped[0], lines[0]);
    assert!(piped[1].ends_with(&shown(&run)), "{piped:?}");

    // The default keep: the old free one goes, the rest stay.
    let out = b.tally(&["--runs", "--keep", "14", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let removed = out.records();
    assert_eq!(removed.len(), 1, "{}", stdout(&out));
    assert_eq!(removed[0]["path"], shown(&old).as_str());
    assert_eq!(removed[0]["removed"], true);
    assert!(
        stderr(&out).contains("removed 1 run folder(s)")
            && stderr(&out).contains("kept 1 in use, 1 newer"),
        "{}",
        stderr(&out)
    );
    assert!(!old.exists() && run.exists() && held_dir.exists());

    // 0: every one no live run holds; never what is not ours.
    let out = b.tally(&["--runs", "--keep", "0", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(out.records().len(), 1);
    assert!(!run.exists() && held_dir.exists());
    assert!(foreign.exists() && target.join("precious").exists());
    assert!(fs::symlink_metadata(runs.join("20200101T000003Z-000000000003")).is_ok());
    assert!(runs.join("20200101T000004Z-000000000004").is_file());
    drop(held);
    let out = b.tally(&["--runs", "--keep", "0"]);
    assert!(!held_dir.exists(), "{}", stderr(&out));
    let out = b.tally(&["--runs", "--json"]);
    assert_eq!(stdout(&out), "");
    assert!(
        stderr(&out).contains("no run folders in"),
        "{}",
        stderr(&out)
    );
}

/// Each run prunes: run folders of runs started `PANEL_KEEP_DAYS` (or `--keep-runs`, default
/// 14) days ago or more go, one a live run holds stays.
#[test]
fn a_new_run_removes_the_old_run_folders_by_the_keep_period() {
    let b = Rig::new("runs-prune");
    let runs = b.runs();
    fs::create_dir_all(&runs).unwrap();
    let old = old_run(&runs, 1);
    let (held_dir, held) = held_run(&runs, 2);
    // A keep period longer than their age keeps them.
    let out = b.judge(&[], &[("PANEL_KEEP_DAYS", "100000")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(old.exists());
    let out = b.judge(&["--keep-runs", "100000"], &[("PANEL_KEEP_DAYS", "1")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(old.exists(), "--keep-runs wins over PANEL_KEEP_DAYS");
    let out = b.judge(&[], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!old.exists() && held_dir.exists());
    assert_eq!(names(&runs).len(), 4, "{:?}", names(&runs));
    drop(held);
}

#[test]
fn a_bad_keep_is_one_line_and_exit_2() {
    let b = Rig::new("runs-bad");
    let old = old_run(&b.runs(), 1);
    let whole = "expected a whole number of days";
    for bad in ["x", "-1", "1.5", " 3", "99999999999", ""] {
        let out = b.tally(&["--runs", "--keep", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(stderr(&out).contains(whole), "{bad:?}: {}", stderr(&out));
        let out = b.judge(&["--keep-runs", bad], &[]);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(stderr(&out).contains(whole), "{bad:?}: {}", stderr(&out));
        if bad.is_empty() {
            continue;
        }
        let out = b.judge(&[], &[("PANEL_KEEP_DAYS", bad)]);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert_eq!(stdout(&out), "", "nothing launched");
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("panel-judge: PANEL_KEEP_DAYS="), "{err}");
        assert!(err.contains(whole), "{err}");
    }
    let out = b.tally(&["--keep", "3"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--runs"), "{}", stderr(&out));
    let out = b.tally(&["--runs", "--format", "markdown"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    assert!(old.exists(), "a bad keep removes nothing");
    // An empty PANEL_KEEP_DAYS is unset: the default keeps 14 days.
    let out = b.judge(&[], &[("PANEL_KEEP_DAYS", "")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!old.exists());
}

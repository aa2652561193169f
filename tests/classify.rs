//! pr-classify, run as a binary: the seed's example, the three inputs (one of them real
//! `git diff --numstat` output from a temporary repository), the exit statuses and the tables.

use crate::util::Checked;
use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::tool::{Ran, Tool};
use crate::util::{TempDir, root, stderr, stdout};

/// pr-classify outside any git repository (a plan made in one takes its origin and HEAD).
fn classify(args: &[&str], stdin: &str) -> Ran {
    Tool::new("pr-classify")
        .args(args)
        .current_dir("/")
        .env_remove("GH_REPO")
        .stdin(stdin)
        .run()
}

fn facts(files: Value) -> String {
    json!({"repo": "acme/app", "pr": 7, "head": "abc123", "base": "def456", "kind": "feature",
           "changedFiles": files})
    .to_string()
}

/// (shape, profile, seat, blocking, degraded) of each planned member.
fn members(plan: &Value) -> Vec<(String, String, String, bool, bool)> {
    plan["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["shape"].as_str().unwrap().into(),
                m["profile"].as_str().unwrap().into(),
                m["seat"].as_str().unwrap().into(),
                m["blocking"].as_bool().unwrap(),
                m["degraded"].as_bool().unwrap(),
            )
        })
        .collect()
}

fn member(
    shape: &str,
    profile: &str,
    seat: &str,
    blocking: bool,
    degraded: bool,
) -> (String, String, String, bool, bool) {
    (
        shape.into(),
        profile.into(),
        seat.into(),
        blocking,
        degraded,
    )
}

#[test]
fn the_seed_example_plans_correctness_and_adversary() {
    let input =
        facts(json!([{"path": ".github/workflows/ci.yml", "additions": 4, "deletions": 1}]));
    let recs = classify(&["--plan"], &input).ok().records();
    assert_eq!(recs.len(), 2);
    let (cls, plan) = (&recs[0], &recs[1]);
    assert_eq!(cls["type"], "pr-class");
    assert_eq!(cls["class"], "standard");
    assert_eq!(cls["changedLines"], 5);
    assert_eq!(
        cls["touches"]["policy"],
        json!([".github/workflows/ci.yml"])
    );
    assert_eq!(plan["type"], "plan");
    assert_eq!(
        members(plan),
        [
            member("correctness", "bd-reviewer", "claude:sonnet", true, false),
            member("adversary", "reviewer", "claude:opus", true, false),
        ]
    );
    assert_eq!(
        plan["members"][0]["name"],
        "rp-acme-app-7-abc123-correctness"
    );
    assert_eq!(plan["members"][1]["briefId"], "adversary");
    assert_eq!(
        (&plan["repo"], &plan["pr"], &plan["head"], &plan["base"]),
        (
            &json!("acme/app"),
            &json!(7),
            &json!("abc123"),
            &json!("def456")
        )
    );
    assert_eq!(plan["sonnetFor"], json!({"reviewer": "bd-reviewer"}));
}

#[test]
fn without_opus_headroom_the_adversary_is_degraded() {
    let input =
        facts(json!([{"path": ".github/workflows/ci.yml", "additions": 4, "deletions": 1}]));
    let recs = classify(&["--plan", "--no-opus"], &input).ok().records();
    assert_eq!(
        members(&recs[1]),
        [
            member("correctness", "bd-reviewer", "claude:sonnet", true, false),
            member("adversary", "bd-reviewer", "claude:sonnet", true, true),
        ]
    );
    assert_eq!(recs[1]["headroom"], json!({"opus": false}));
}

#[test]
fn line_count_boundaries() {
    for (lines, class) in [(399, "standard"), (400, "standard"), (401, "g10")] {
        let input = facts(json!([{"path": "src/a.rs", "additions": lines - 1, "deletions": 1}]));
        let cls = &classify(&[], &input).ok().records()[0];
        assert_eq!(cls["class"], class, "{lines}");
        assert_eq!(cls["large"], lines > 400, "{lines}");
    }
    // Generated lines: left out up to 400, counted in full past it.
    for (generated, counted, class) in [(400, 10, "standard"), (401, 411, "g10")] {
        let input = facts(json!([
            {"path": "src/a.rs", "additions": 10, "deletions": 0},
            {"path": "packages/core/api/core.d.ts", "additions": generated, "deletions": 0},
        ]));
        let cls = &classify(&[], &input).ok().records()[0];
        assert_eq!(
            (&cls["changedLines"], &cls["class"]),
            (&json!(counted), &json!(class))
        );
    }
}

#[test]
fn renames_from_and_into_generated_paths() {
    let from_generated = facts(
        json!([{"path": "packages/b/api/b.d.ts", "additions": 300, "deletions": 0,
        "previousPath": "packages/a/api/a.d.ts"}]),
    );
    let cls = &classify(&[], &from_generated).ok().records()[0];
    assert_eq!(
        (&cls["changedLines"], &cls["generatedLines"]),
        (&json!(0), &json!(300))
    );
    let into_generated = facts(
        json!([{"path": "packages/b/api/b.d.ts", "additions": 300, "deletions": 0,
        "previousPath": "src/b.d.ts"}]),
    );
    let cls = &classify(&[], &into_generated).ok().records()[0];
    assert_eq!(
        (&cls["changedLines"], &cls["generatedLines"]),
        (&json!(300), &json!(0))
    );
}

#[test]
fn an_unread_count_is_g10_and_sets_no_security_slice() {
    let input = json!({"repo": "acme/app", "pr": 7, "kind": "security", "changedFiles": [
        {"path": "src/auth/a.rs", "additions": 900, "deletions": 0},
        {"path": "logo.png", "additions": null, "deletions": null},
    ]})
    .to_string();
    let cls = &classify(&[], &input).ok().records()[0];
    assert_eq!(cls["class"], "g10");
    assert_eq!(cls["reasons"], json!(["unread"]));
    assert_eq!(cls["changedLines"], Value::Null);
    assert_eq!(cls["securitySlice"], Value::Null);
    assert_eq!(cls["unreadPaths"], json!(["logo.png"]));
    assert_eq!(classify(&["--is", "unread"], &input).status.code(), Some(0));
    assert_eq!(classify(&["--is", "large"], &input).status.code(), Some(1));
}

#[test]
fn security_slice_flag() {
    let input = facts(json!([
        {"path": "src/app.rs", "additions": 400, "deletions": 0},
        {"path": "src/security/check.rs", "additions": 1, "deletions": 0},
    ]));
    let cls = &classify(&[], &input).ok().records()[0];
    assert_eq!(
        cls["securitySlice"],
        json!({"lines": 401, "cap": 400, "guardPaths": ["src/security/check.rs"]})
    );
    let input = facts(json!([{"path": "src/app.rs", "additions": 401, "deletions": 0}]));
    let kinded = classify(&["--kind", "security", "--is", "security-slice"], &input);
    assert_eq!(kinded.status.code(), Some(0));
    assert_eq!(
        classify(&["--is", "security-slice"], &input).status.code(),
        Some(1)
    );
}

#[test]
fn is_answers_with_the_exit_status_alone() {
    let dep = facts(json!([{"path": "web/package.json", "additions": 1, "deletions": 1}]));
    let out = classify(&["--is", "g10"], &dep);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    assert_eq!(
        classify(&["--is", "dependency"], &dep).status.code(),
        Some(0)
    );
    assert_eq!(classify(&["--is", "large"], &dep).status.code(), Some(1));
    assert_eq!(classify(&["--is", "standard"], &dep).status.code(), Some(1));
    let small = facts(json!([{"path": "src/a.rs", "additions": 1, "deletions": 1}]));
    assert_eq!(classify(&["--is", "g10"], &small).status.code(), Some(1));
    assert_eq!(
        classify(&["--is", "g10", "--g10-hold"], &small)
            .status
            .code(),
        Some(0)
    );
    let out = classify(&["--is", "huge"], &small);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with("pr-classify: --is huge: not one of g10"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn gh_pr_view_output_as_it_is() {
    let gh = json!({"number": 7, "headRefOid": "0123456789abcdef", "baseRefOid": "fedcba",
        "url": "https://github.com/acme/app/pull/7",
        "files": [{"path": "src/lib.rs", "additions": 10, "deletions": 2, "changeType": "MODIFIED"},
                  {"path": "src/lib.test.ts", "additions": 5, "deletions": 0, "changeType": "ADDED"}]})
    .to_string();
    let recs = classify(&["--plan"], &gh).ok().records();
    assert_eq!(recs[0]["changedLines"], 17);
    assert_eq!(
        recs[1]["members"][1]["name"],
        "rp-acme-app-7-01234567-tests"
    );
    assert_eq!(
        members(&recs[1]),
        [
            member("correctness", "bd-reviewer", "claude:sonnet", true, false),
            member("tests", "bd-reviewer", "claude:sonnet", false, false),
        ]
    );
    // Without a repository in the input, a plan needs --repo; every missing fact is named.
    let bare = json!({"number": 7, "headRefOid": "abc", "files": []}).to_string();
    let out = classify(&["--plan"], &bare);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out).trim(),
        "pr-classify: a plan needs the repository (--repo OWNER/NAME, or GH_REPO); run inside the git repository to take them from its origin and HEAD"
    );
    let out = classify(&["--numstat", "--plan"], "1\t2\ta.rs\n");
    assert_eq!(
        stderr(&out).trim(),
        "pr-classify: a plan needs the repository (--repo OWNER/NAME, or GH_REPO) and the head commit (--head SHA); run inside the git repository to take them from its origin and HEAD"
    );
    let recs = classify(&["--plan", "--repo", "acme/app"], &bare)
        .ok()
        .records();
    assert_eq!(recs[1]["repo"], "acme/app");
    let with_env = Tool::new("pr-classify")
        .arg("--plan")
        .env("GH_REPO", "github.com/acme/web")
        .stdin(&bare)
        .run();
    assert_eq!(with_env.ok().records()[1]["repo"], "acme/web");
    // Classifying alone needs no repository.
    assert_eq!(classify(&[], &bare).ok().records()[0]["class"], "standard");
}

#[test]
fn malformed_input_is_one_line_naming_the_line() {
    let out = classify(&["--numstat"], "1\t2\ta.rs\nthree\t2\tb.rs\n");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "pr-classify: <stdin>: line 2: added count \"three\" is neither a number nor -\n"
    );
    let out = classify(
        &[],
        "{\"changedFiles\": [\n{\"path\": \"a\", \"additions\": -1}]}",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with("pr-classify: <stdin>: line 2: invalid value"),
        "{}",
        stderr(&out)
    );
    let out = classify(&[], "{\"type\":\"plan\"}");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("a plan record"), "{}", stderr(&out));
    let out = classify(&["/no/such/file"], "");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "pr-classify: /no/such/file: cannot open: No such file or directory (os error 2)\n"
    );
}

#[test]
fn an_empty_diff_needs_numstat_named() {
    assert_eq!(classify(&[], "").status.code(), Some(2));
    let cls = &classify(&["--numstat"], "").ok().records()[0];
    assert_eq!(
        (&cls["class"], &cls["changedLines"]),
        (&json!("standard"), &json!(0))
    );
}

#[test]
fn rules_print_and_read_back() {
    let printed = classify(&["--print-rules"], "");
    assert!(printed.status.success());
    let table: Value = serde_json::from_slice(&printed.stdout).unwrap();
    assert_eq!(table["largeLines"], 400);
    assert!(
        table["touches"]["dependency"]
            .as_array()
            .unwrap()
            .contains(&json!("**/package.json"))
    );
    let dir = TempDir::new("classify-rules");
    let path = dir.path().join("rules.json");
    std::fs::write(&path, &printed.stdout).unwrap();
    let again = classify(&["--rules", path.to_str().unwrap(), "--print-rules"], "");
    assert_eq!(again.stdout, printed.stdout);

    // Extend: one more dependency glob, the rest kept.
    std::fs::write(
        &path,
        r#"{"extend": true, "touches": {"dependency": ["**/deps.edn"]}}"#,
    )
    .unwrap();
    let clj = facts(json!([{"path": "svc/deps.edn", "additions": 1, "deletions": 0}]));
    let rules = path.to_str().unwrap();
    assert_eq!(
        classify(&["--rules", rules, "--is", "dependency"], &clj)
            .status
            .code(),
        Some(0)
    );
    let npm = facts(json!([{"path": "package.json", "additions": 1, "deletions": 0}]));
    assert_eq!(
        classify(&["--rules", rules, "--is", "dependency"], &npm)
            .status
            .code(),
        Some(0)
    );
    // Replace: the key given stands alone.
    std::fs::write(
        &path,
        r#"{"largeLines": 10, "touches": {"dependency": ["**/deps.edn"]}}"#,
    )
    .unwrap();
    assert_eq!(
        classify(&["--rules", rules, "--is", "dependency"], &npm)
            .status
            .code(),
        Some(1)
    );
    let eleven = facts(json!([{"path": "a.rs", "additions": 11, "deletions": 0}]));
    assert_eq!(
        classify(&["--rules", rules, "--is", "large"], &eleven)
            .status
            .code(),
        Some(0)
    );
    // A typo is an error, not a silent default.
    std::fs::write(&path, "{\"largeLine\": 10}").unwrap();
    let out = classify(&["--rules", rules, "--print-rules"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("line 1: unknown field `largeLine`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn policy_print_and_replace() {
    let printed = classify(&["--print-policy"], "");
    let policy: Value = serde_json::from_slice(&printed.stdout).unwrap();
    assert_eq!(
        policy["roles"],
        json!({"g10": "reviewer", "standard": "bd-reviewer"})
    );
    assert_eq!(policy["maxMembers"], 3);
    let dir = TempDir::new("classify-policy");
    let path = dir.path().join("policy.json");
    std::fs::write(
        &path,
        r#"{"extend": true, "seats": {"reviewer": "codex:gpt-5", "bd-reviewer": "opencode:google/gemini-2.5-pro"}}"#,
    )
    .unwrap();
    let input =
        facts(json!([{"path": ".github/workflows/ci.yml", "additions": 4, "deletions": 1}]));
    let recs = classify(&["--plan", "--policy", path.to_str().unwrap()], &input)
        .ok()
        .records();
    assert_eq!(
        members(&recs[1]),
        [
            member(
                "correctness",
                "bd-reviewer",
                "opencode:google/gemini-2.5-pro",
                true,
                false
            ),
            member("adversary", "reviewer", "codex:gpt-5", true, false),
        ]
    );
    let dir = TempDir::new("classify-policy");
    let path = dir.path().join("policy.json");
    std::fs::write(&path, r#"{"panel": []}"#).unwrap();
    let recs = classify(&["--plan", "--policy", path.to_str().unwrap()], &input)
        .ok()
        .records();
    assert_eq!(members(&recs[1]).len(), 1);
}

#[test]
fn text_summary() {
    let input =
        facts(json!([{"path": ".github/workflows/ci.yml", "additions": 4, "deletions": 1}]));
    let out = classify(&["--plan", "--text"], &input);
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(
        text.starts_with("acme/app#7 at abc123: standard\n"),
        "{text}"
    );
    assert!(
        text.contains("touches: policy (.github/workflows/ci.yml)"),
        "{text}"
    );
    assert!(
        text.contains("adversary    reviewer     claude:opus    blocking"),
        "{text}"
    );
    // A g10 class says what g10 asks and why this PR is in it.
    assert!(!text.contains("strict class"), "{text}");
    let input = facts(json!([
        {"path": "package.json", "additions": 1, "deletions": 0},
        {"path": "logo.png", "additions": null, "deletions": null},
    ]));
    let text = stdout(&classify(&["--text"], &input));
    assert!(
        text.contains(
            "  g10 is the strict class (its size is unread; it touches dependency paths, which are strict): \
             its panel passes the g10 bar only on a MERGE with no degraded member, an opus correctness \
             member and the adversary's MERGE\n"
        ),
        "{text}"
    );
}

/// Runs git in `dir` with a fixed identity and no user or system configuration.
fn git(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = Command::new("git")
        .args([
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "core.autocrlf=false",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "Panel Test")
        .env("GIT_AUTHOR_EMAIL", "panel@example.invalid")
        .env("GIT_COMMITTER_NAME", "Panel Test")
        .env("GIT_COMMITTER_EMAIL", "panel@example.invalid")
        .checked_output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", stderr(&out));
    out.stdout
}

fn write(dir: &Path, path: &str, body: &[u8]) {
    let path = dir.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, body).unwrap();
}

fn lines(n: usize, tag: &str) -> String {
    (0..n).map(|i| format!("{tag} line {i}\n")).collect()
}

/// A branch with a modification, an addition, a deletion, a binary file, renames in both of
/// git's notations (one with an empty side), and a path with a space.
fn branch_repo(dir: &Path) {
    git(dir, &["init", "-q"]);
    write(dir, "src/lib.rs", lines(50, "lib").as_bytes());
    write(dir, "src/old/mod.rs", lines(40, "mod").as_bytes());
    write(dir, "docs/guide.md", lines(30, "guide").as_bytes());
    write(dir, "notes.txt", lines(20, "notes").as_bytes());
    write(dir, "gone.txt", lines(12, "gone").as_bytes());
    write(dir, "top.rs", lines(25, "top").as_bytes());
    write(dir, "package.json", b"{\"name\": \"app\"}\n");
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "base"]);
    git(dir, &["checkout", "-q", "-b", "topic"]);
    // Modified: 3 added, 2 deleted.
    let mut lib = lines(48, "lib");
    lib.push_str("new a\nnew b\nnew c\n");
    write(dir, "src/lib.rs", lib.as_bytes());
    // Renamed across directories: src/{old => new}/mod.rs, with one line changed.
    let mut m = lines(39, "mod");
    m.push_str("changed\n");
    std::fs::remove_file(dir.join("src/old/mod.rs")).unwrap();
    write(dir, "src/new/mod.rs", m.as_bytes());
    // Renamed into a subfolder: docs/{ => v2}/guide.md.
    std::fs::remove_file(dir.join("docs/guide.md")).unwrap();
    write(dir, "docs/v2/guide.md", lines(30, "guide").as_bytes());
    // Renamed with no shared part: notes.txt => archive notes.txt (a space).
    std::fs::remove_file(dir.join("notes.txt")).unwrap();
    write(dir, "archive notes.txt", lines(20, "notes").as_bytes());
    // Deleted.
    std::fs::remove_file(dir.join("gone.txt")).unwrap();
    // Renamed out of a subfolder's sibling: top.rs => src/top.rs.
    std::fs::remove_file(dir.join("top.rs")).unwrap();
    write(dir, "src/top.rs", lines(25, "top").as_bytes());
    // Binary.
    write(
        dir,
        "assets/logo.png",
        &[0x89, b'P', b'N', b'G', 0, 1, 2, 3, 0, 255],
    );
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "topic"]);
}

#[test]
fn real_git_numstat_goes_straight_in() {
    let dir = TempDir::new("classify-git");
    branch_repo(dir.path());
    let numstat = git(dir.path(), &["diff", "--numstat", "-M", "main...topic"]);
    let numstat = String::from_utf8(numstat).unwrap();
    // The notations this test is about are really in git's output.
    assert!(numstat.contains("src/{old => new}/mod.rs"), "{numstat}");
    assert!(numstat.contains("docs/{ => v2}/guide.md"), "{numstat}");
    assert!(numstat.contains("-\t-\tassets/logo.png"), "{numstat}");

    let read = classify(&["--numstat", "--print-facts"], &numstat)
        .ok()
        .records();
    let mut files: Vec<(String, Option<String>, String, String)> = read[0]["changedFiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["previousPath"].as_str().map(String::from),
                f["additions"].to_string(),
                f["deletions"].to_string(),
            )
        })
        .collect();
    files.sort();
    let s = |x: &str| x.to_string();
    assert_eq!(
        files,
        vec![
            (s("archive notes.txt"), Some(s("notes.txt")), s("0"), s("0")),
            (s("assets/logo.png"), None, s("null"), s("null")),
            (
                s("docs/v2/guide.md"),
                Some(s("docs/guide.md")),
                s("0"),
                s("0")
            ),
            (s("gone.txt"), None, s("0"), s("12")),
            (s("src/lib.rs"), None, s("3"), s("2")),
            (
                s("src/new/mod.rs"),
                Some(s("src/old/mod.rs")),
                s("1"),
                s("1")
            ),
            (s("src/top.rs"), Some(s("top.rs")), s("0"), s("0")),
        ]
    );

    // The binary file is a file of no lines, as GitHub's files API counts it (0 and 0), so the
    // seed's "undefined when any file has no line counts" never meets it: 3+2 + 0+12 + 1+1 = 19.
    let head = String::from_utf8(git(dir.path(), &["rev-parse", "topic"])).unwrap();
    let head = head.trim();
    let recs = classify(
        &["--numstat", "--repo", "acme/app", "--head", head, "--plan"],
        &numstat,
    )
    .ok()
    .records();
    assert_eq!(recs[0]["class"], "standard");
    assert_eq!(recs[0]["reasons"], json!([]));
    assert_eq!(recs[0]["changedLines"], 19);
    assert_eq!(recs[0]["fileCount"], 7);
    assert_eq!(recs[0]["unreadPaths"], json!([]));
    assert_eq!(recs[0]["binaryPaths"], json!(["assets/logo.png"]));
    assert_eq!(recs[1]["head"], head);
    assert_eq!(
        recs[1]["members"][0]["name"],
        format!("rp-acme-app-{}-correctness", &head[..8])
    );

    // A count missing on one side is a fact missing, not a binary file: unread, g10.
    let half = numstat.replace("-\t-\tassets/logo.png", "-\t0\tassets/logo.png");
    let cls = &classify(&["--numstat"], &half).ok().records()[0];
    assert_eq!(
        (&cls["class"], &cls["reasons"], &cls["unreadPaths"]),
        (
            &json!("g10"),
            &json!(["unread"]),
            &json!(["assets/logo.png"])
        )
    );

    // -z output reads the same.
    let z = git(
        dir.path(),
        &["diff", "--numstat", "-z", "-M", "main...topic"],
    );
    let zread = Tool::new("pr-classify")
        .args(["--print-facts"])
        .stdin(&z)
        .run()
        .ok()
        .records();
    let sorted = |v: &Value| {
        let mut f: Vec<String> = v["changedFiles"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.to_string())
            .collect();
        f.sort();
        f
    };
    assert_eq!(sorted(&zread[0]), sorted(&read[0]));
}

#[test]
fn plain_git_log_numstat_reads_as_its_files_summed_per_path() {
    let dir = TempDir::new("classify-log");
    branch_repo(dir.path());
    // A second commit changes src/lib.rs again and adds a line to the binary file's neighbour.
    let mut lib = lines(48, "lib");
    lib.push_str("new a\nnew b\nnew c\nnew d\n");
    write(dir.path(), "src/lib.rs", lib.as_bytes());
    git(
        dir.path(),
        &[
            "commit",
            "-q",
            "-a",
            "-m",
            "again\n\n    indented body\n3\t1\tnot/a/file",
        ],
    );
    let log = String::from_utf8(git(dir.path(), &["log", "--numstat", "main..topic"])).unwrap();
    assert!(log.starts_with("commit "), "{log}");
    let out = classify(&["--print-facts"], &log);
    assert!(out.status.success(), "{}", stderr(&out));
    let read = &out.ok().records()[0]["changedFiles"];
    let lib: Vec<&Value> = read
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["path"] == "src/lib.rs")
        .collect();
    // Once, with both commits' counts: 3+2, then 1+0.
    assert_eq!(lib.len(), 1, "{read}");
    assert_eq!(
        (&lib[0]["additions"], &lib[0]["deletions"]),
        (&json!(4), &json!(2))
    );
    assert!(!read.to_string().contains("not/a/file"), "{read}");
    let with_format = String::from_utf8(git(
        dir.path(),
        &["log", "--numstat", "--format=", "main..topic"],
    ))
    .unwrap();
    assert_eq!(
        classify(&["--print-facts"], &with_format).ok().records(),
        out.ok().records()
    );
    // A line that is neither a commit's header, its message nor a file is still refused.
    let bad = log.replacen("src/lib.rs\n", "src/lib.rs\nstray words\n", 1);
    let out = classify(&[], &bad);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("not a numstat line"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_renamed_dependency_manifest_is_a_dependency_touch() {
    let dir = TempDir::new("classify-git-dep");
    let d = dir.path();
    git(d, &["init", "-q"]);
    write(
        d,
        "web/package.json",
        b"{\"name\": \"web\", \"version\": \"1.0.0\"}\n",
    );
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "base"]);
    git(d, &["mv", "web/package.json", "web/package.json.orig"]);
    git(d, &["commit", "-q", "-m", "move"]);
    let numstat = git(d, &["diff", "--numstat", "-M", "HEAD~1", "HEAD"]);
    let numstat = String::from_utf8(numstat).unwrap();
    assert!(numstat.contains("=>"), "{numstat}");
    let cls = &classify(&["--numstat"], &numstat).ok().records()[0];
    assert_eq!(cls["class"], "g10");
    assert_eq!(cls["reasons"], json!(["dependency"]));
    assert_eq!(cls["touches"]["dependency"], json!(["web/package.json"]));
}

fn fixture(name: &str) -> String {
    root()
        .join("tests/fixtures/classify")
        .join(name)
        .to_str()
        .unwrap()
        .to_string()
}

#[test]
fn fixture_seed_example_as_a_file_argument() {
    let recs = classify(&["--plan", &fixture("seed-example.json")], "")
        .ok()
        .records();
    assert_eq!(
        members(&recs[1]),
        [
            member("correctness", "bd-reviewer", "claude:sonnet", true, false),
            member("adversary", "reviewer", "claude:opus", true, false),
        ]
    );
}

#[test]
fn fixture_gh_output_of_a_dependency_and_auth_change() {
    let recs = classify(&["--plan", &fixture("gh-pr-view.json")], "")
        .ok()
        .records();
    let (cls, plan) = (&recs[0], &recs[1]);
    // 155 + 88 counted, the API report (17) left out; gh gives a binary file 0 and 0.
    assert_eq!(
        (&cls["changedLines"], &cls["generatedLines"]),
        (&json!(243), &json!(17))
    );
    assert_eq!(cls["class"], "g10");
    assert_eq!(cls["reasons"], json!(["dependency"]));
    assert_eq!(cls["touches"]["dependency"], json!(["pnpm-lock.yaml"]));
    assert_eq!(
        cls["touches"]["authority"],
        json!([
            "src/server/auth/session.ts",
            "src/server/auth/session.test.ts"
        ])
    );
    assert_eq!(
        cls["touches"]["tests"],
        json!(["src/server/auth/session.test.ts"])
    );
    assert_eq!(cls["securitySlice"], Value::Null);
    // g10: correctness takes the one opus seat; the adversary is planned at sonnet.
    assert_eq!(
        members(plan),
        [
            member("correctness", "reviewer", "claude:opus", true, false),
            member("adversary", "bd-reviewer", "claude:sonnet", true, false),
            member("tests", "bd-reviewer", "claude:sonnet", false, false),
        ]
    );
    assert_eq!(plan["members"][1]["downgradedFrom"], "reviewer");
    assert_eq!(
        plan["members"][0]["name"],
        "rp-acme-app-42-4be0f1d2-correctness"
    );
    assert_eq!(plan["spendEstimate"], 7);
}

#[test]
fn fixture_numstat_in_every_notation() {
    let read = classify(&["--print-facts", &fixture("numstat.txt")], "")
        .ok()
        .records();
    let files: Vec<(String, Option<String>, String)> = read[0]["changedFiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["previousPath"].as_str().map(String::from),
                format!("{}/{}", f["additions"], f["deletions"]),
            )
        })
        .collect();
    let s = |x: &str| x.to_string();
    assert_eq!(
        files,
        [
            (s("src/lib.rs"), None, s("12/3")),
            (s("assets/logo.png"), None, s("null/null")),
            (s("src/removed.rs"), None, s("0/40")),
            (s("docs/v2/guide.md"), Some(s("docs/guide.md")), s("0/0")),
            (
                s("src/strings.rs"),
                Some(s("src/util/strings.rs")),
                s("2/1")
            ),
            (
                s("crates/new/src/lib.rs"),
                Some(s("crates/old/src/lib.rs")),
                s("5/5")
            ),
            (s("README.md"), Some(s("README")), s("0/0")),
            (s("docs/café menu.md"), None, s("1/0")),
            (s("tests/a b.rs"), Some(s("tests/a\tb.rs")), s("3/3")),
            (s("web/package.json"), None, s("7/0")),
        ]
    );
    let cls = &classify(&[&fixture("numstat.txt")], "").ok().records()[0];
    // The binary logo is a file of no lines: only the manifest makes it g10.
    assert_eq!(cls["reasons"], json!(["dependency"]));
    assert_eq!(cls["binaryPaths"], json!(["assets/logo.png"]));
}

#[test]
fn fixture_rules_extend_with_a_new_flag() {
    let rules = fixture("rules-extend.json");
    let input = facts(json!([
        {"path": "terraform/main.tf", "additions": 3, "deletions": 0},
        {"path": "svc/project.clj", "additions": 1, "deletions": 0},
    ]));
    let cls = &classify(&["--rules", &rules], &input).ok().records()[0];
    assert_eq!(cls["touches"]["infra"], json!(["terraform/main.tf"]));
    assert_eq!(cls["reasons"], json!(["dependency"]));
    assert_eq!(
        classify(&["--rules", &rules, "--is", "infra"], &input)
            .status
            .code(),
        Some(0)
    );
}

/// Classify under the seed's exact lists (`--rules seed`).
fn seed(args: &[&str], input: &str) -> Value {
    let mut all = vec!["--rules", "seed"];
    all.extend_from_slice(args);
    classify(&all, input).ok().records().remove(0)
}

/// Seed 002, changedLineCount and touchesDependency under `--rules seed`: "the generated globs
/// (CAPABILITIES.md, site reference pages, the reference sidebar, the capabilities guide,
/// .codewatch/check.json and dead-exports.json, changesets, packages/*/api/*.d.ts reports) left
/// out; the lockfile and snapshots still count; undefined when any file has no line counts. A
/// rename counts as generated only when it came from a generated path too, and generated lines
/// that alone pass largeLines (400) count in full [...] A PR is large past largeLines of it."
/// "touchesDependency(files, rules?): true when a changed file, or the path it was renamed from,
/// matches ClassRules.dependency (pnpm-lock.yaml, pnpm-workspace.yaml, any package.json) [...]
/// such a PR is g10 at any size." securitySliceFlag: "past SECURITY_SLICE_LINES (400)
/// non-generated lines and is kind security or touches a non-generated security or authority
/// path; undefined otherwise, including an unread count."
#[test]
fn the_seed_preset_keeps_every_boundary_the_seed_states() {
    // The preset's lists are the seed's, exactly.
    let table: Value = serde_json::from_str(&stdout(&classify(
        &["--rules", "seed", "--print-rules"],
        "",
    )))
    .unwrap();
    assert_eq!(
        table["touches"]["dependency"],
        json!(["pnpm-lock.yaml", "pnpm-workspace.yaml", "**/package.json"])
    );
    assert_eq!(
        table["generated"],
        json!([
            "CAPABILITIES.md",
            "site/reference/**",
            "site/reference-sidebar.json",
            "site/guides/capabilities.md",
            ".codewatch/check.json",
            ".codewatch/dead-exports.json",
            ".changeset/*.md",
            "packages/*/api/*.d.ts",
        ])
    );
    let one = |path: &str, n: u64| facts(json!([{"path": path, "additions": n, "deletions": 0}]));
    // Large past 400 counted lines, not at it.
    for (n, class) in [(400, "standard"), (401, "g10")] {
        let cls = seed(&[], &one("src/a.rs", n));
        assert_eq!(
            (&cls["class"], &cls["large"]),
            (&json!(class), &json!(n > 400))
        );
    }
    // Each generated glob is left out; the lockfile and snapshots still count.
    for path in [
        "CAPABILITIES.md",
        "site/reference/cli/index.md",
        "site/reference-sidebar.json",
        "site/guides/capabilities.md",
        ".codewatch/check.json",
        ".codewatch/dead-exports.json",
        ".changeset/brave-fox.md",
        "packages/core/api/core.d.ts",
    ] {
        let cls = seed(&[], &one(path, 300));
        assert_eq!(
            (&cls["changedLines"], &cls["generatedLines"]),
            (&json!(0), &json!(300)),
            "{path}"
        );
    }
    for path in [
        "pnpm-lock.yaml",
        "src/__snapshots__/a.snap",
        "dist/app.min.js",
        "src/__generated__/types.ts",
    ] {
        let cls = seed(&[], &one(path, 300));
        assert_eq!(
            cls["changedLines"], 300,
            "{path}: counts under the seed's lists"
        );
    }
    // Generated lines that alone pass 400 count in full.
    for (generated, counted, class) in [(400, 10, "standard"), (401, 411, "g10")] {
        let input = facts(json!([
            {"path": "src/a.rs", "additions": 10, "deletions": 0},
            {"path": "CAPABILITIES.md", "additions": generated, "deletions": 0},
        ]));
        let cls = seed(&[], &input);
        assert_eq!(
            (&cls["changedLines"], &cls["class"]),
            (&json!(counted), &json!(class))
        );
    }
    // A rename is generated only when it came from a generated path too.
    for (from, counted) in [(".changeset/a.md", 0), ("notes/a.md", 300)] {
        let input = facts(
            json!([{"path": ".changeset/b.md", "additions": 300, "deletions": 0,
            "previousPath": from}]),
        );
        assert_eq!(seed(&[], &input)["changedLines"], counted, "{from}");
    }
    // Undefined when any file has no line counts.
    let unread = facts(json!([
        {"path": "src/a.rs", "additions": 1, "deletions": 0},
        {"path": "logo.png", "additions": null, "deletions": null},
    ]));
    let cls = seed(&["--kind", "security"], &unread);
    assert_eq!(
        (&cls["changedLines"], &cls["class"]),
        (&Value::Null, &json!("g10"))
    );
    assert_eq!(cls["securitySlice"], Value::Null);
    // The dependency list: the two pnpm files and any package.json, or a rename from one, g10 at
    // any size; the wider defaults' manifests are no dependency touch under the seed's list.
    for path in [
        "pnpm-lock.yaml",
        "pnpm-workspace.yaml",
        "package.json",
        "web/app/package.json",
    ] {
        let cls = seed(&[], &one(path, 1));
        assert_eq!(
            (&cls["class"], &cls["dependencyTouch"]),
            (&json!("g10"), &json!(true)),
            "{path}"
        );
    }
    let renamed = facts(
        json!([{"path": "web/manifest.json", "additions": 1, "deletions": 0,
        "previousPath": "web/package.json"}]),
    );
    assert_eq!(seed(&[], &renamed)["dependencyTouch"], true);
    for path in [
        "Cargo.toml",
        "go.mod",
        "yarn.lock",
        "web/pnpm-lock.yaml",
        "package.json.bak",
    ] {
        let cls = seed(&[], &one(path, 1));
        assert_eq!(
            (&cls["class"], &cls["dependencyTouch"]),
            (&json!("standard"), &json!(false)),
            "{path}"
        );
        // The wide defaults still hold.
        if path != "package.json.bak" {
            let cls = &classify(&[], &one(path, 1)).ok().records()[0];
            assert_eq!(cls["dependencyTouch"], true, "{path}");
        }
    }
    // The security slice: past 400 non-generated lines, and kind security or a non-generated
    // guard path.
    let sliced = |n: u64, guard: &str, kind: &[&str]| {
        let input = facts(json!([
            {"path": "src/app.rs", "additions": n, "deletions": 0},
            {"path": guard, "additions": 0, "deletions": 0},
        ]));
        seed(kind, &input)["securitySlice"].clone()
    };
    assert_eq!(sliced(401, "src/security/check.rs", &[])["lines"], 401);
    assert_eq!(sliced(400, "src/security/check.rs", &[]), Value::Null);
    assert_eq!(sliced(401, "README.md", &[]), Value::Null);
    assert_eq!(
        sliced(401, "README.md", &["--kind", "security"])["cap"],
        400
    );
}

/// Issue 25: "take the repository and head from the git repository it runs in when they are
/// not given".
#[test]
fn a_plan_made_inside_a_repository_takes_its_origin_and_head() {
    let tmp = TempDir::new("classify-git");
    let repo = tmp.path();
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .current_dir(repo)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", stderr(&out));
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    git(&["init", "-q"]);
    git(&["commit", "-q", "--allow-empty", "-m", "one"]);
    git(&["remote", "add", "origin", "git@github.com:acme/web.git"]);
    let head = git(&["rev-parse", "HEAD"]);
    let out = Tool::new("pr-classify")
        .args(["--numstat", "--plan"])
        .current_dir(repo)
        .env_remove("GH_REPO")
        .stdin(b"1\t2\tsrc/a.rs\n")
        .run();
    let recs = out.ok().records();
    assert_eq!(recs[1]["repo"], "acme/web", "{}", stderr(&out));
    assert_eq!(recs[1]["head"], head.as_str());
}

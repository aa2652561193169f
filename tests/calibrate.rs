//! bin/panel-calibrate: a panel over a shipped labelled set, end to end and offline, with the
//! set's recorded stand-in answers; its report as text, JSON and Markdown; its dry run; a set
//! that is not one.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::util::{Checked, TempDir, bin, root, stderr, stdout};

fn calibrate(args: &[&str], cwd: &Path) -> Output {
    let tools = bin("panel-judge").parent().unwrap().to_path_buf();
    Command::new(root().join("bin/panel-calibrate"))
        .args(args)
        .env(
            "PATH",
            format!(
                "{}:{}",
                tools.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .current_dir(cwd)
        .stdin(Stdio::null())
        .checked_output()
        .unwrap()
}

#[test]
fn the_shipped_pairwise_set_runs_offline_and_says_its_answers_are_a_stand_ins() {
    crate::util::need("jq");
    let tmp = TempDir::new("calibrate");
    let keep = tmp.path().join("kept");
    let keep_arg = keep.to_str().unwrap();
    let out = calibrate(&["--replay", "-j", "2", "-o", keep_arg], tmp.path());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with(
            "CALIBRATE: set llmbar-natural, 100 items: replayed answers of three stand-in judges"
        ),
        "{text}"
    );
    for want in [
        "LEDGER: 300 pairwise records, 100 panels, 3 judges",
        "100 labels, 100 labelled panels; 0 labels without records; 0 panels without a label",
        "judge instruction@replay:standin.json            100      100",
        "position-bias helpfulness@replay:standin.json: preferred the answer shown first in 200 of 200 answers",
        "best single judge (instruction@replay:standin.json)",
    ] {
        assert!(text.contains(want), "no {want:?} in\n{text}");
    }
    // docs/guide.md shows the report's end.
    let gold = format!(
        "{}\n",
        text[text.find("Against the gold labels").unwrap()..].trim_end()
    );
    crate::util::doc_section(
        "<!-- calibrate-example -->\n```\n",
        "```\n<!-- /calibrate-example -->",
        &gold,
        "calibrate::the_shipped",
    );
    // Everything kept: each item's files, records and run folder, and all the records.
    let records = std::fs::read_to_string(keep.join("records.jsonl")).unwrap();
    assert_eq!(records.lines().count(), 300);
    assert!(keep.join("items/natural-042/run/pairwise.jsonl").is_file());
    let question = std::fs::read_to_string(keep.join("items/natural-001/question.md")).unwrap();
    assert!(
        question.starts_with("Summarize the following content."),
        "{question}"
    );
    // The same run reads the same way, whichever judge of an item finished first: each item's
    // records go to the ledger in its judges' order, which numbers the judges.
    let judges: Vec<String> = records
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["judge"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    for item in judges.chunks(3) {
        assert_eq!(item, ["detail", "helpfulness", "instruction"]);
    }
}

#[test]
fn its_report_renders_in_markdown_and_as_records() {
    crate::util::need("jq");
    let tmp = TempDir::new("calibrate-md");
    let out = calibrate(
        &[
            "--replay",
            "--set",
            "summedits-sales-email",
            "--limit",
            "40",
            "--format",
            "markdown",
        ],
        tmp.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let md = stdout(&out);
    assert!(
        md.starts_with("> **Stand-in answers**: replayed answers of three stand-in judges"),
        "{md}"
    );
    for want in [
        "### 📒 Ledger: 40 panels, 3 judges",
        "#### Against the gold labels (positive: holds)",
        "| panel every judge must hold | 40 | 40 |",
        "<details><summary>3 judges against their best single judge and smaller panels, 40 labelled panels</summary>",
    ] {
        assert!(md.contains(want), "no {want:?} in\n{md}");
    }
    let mut html = String::new();
    pulldown_cmark::html::push_html(
        &mut html,
        pulldown_cmark::Parser::new_ext(&md, pulldown_cmark::Options::ENABLE_TABLES),
    );
    assert!(
        html.contains("<table>") && html.contains("<blockquote>"),
        "{html}"
    );
    let json = calibrate(
        &[
            "--replay",
            "--set",
            "summedits-sales-email",
            "--limit",
            "40",
            "--format",
            "json",
        ],
        tmp.path(),
    );
    let kinds: Vec<String> = stdout(&json)
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        kinds.last().map(String::as_str),
        Some("gold-summary"),
        "{kinds:?}"
    );
}

#[test]
fn its_gate_is_panel_tallys() {
    crate::util::need("jq");
    let tmp = TempDir::new("calibrate-gate");
    // 60 claims: the panel's kappa is 0.61 [0.28, 0.86].
    for (k, code, says) in [
        ("0.2", 0, "clears it (exit 0)"),
        ("0.9", 1, "is below it (exit 1)"),
        (
            "0.3",
            3,
            "more labelled candidates would settle it at the observed kappa (exit 3)",
        ),
    ] {
        let args = [
            "--replay",
            "--set",
            "summedits-sales-email",
            "--limit",
            "60",
            "-j",
            "2",
        ];
        let mut args = args.to_vec();
        args.extend(["--require-kappa", k]);
        let out = calibrate(&args, tmp.path());
        assert_eq!(out.status.code(), Some(code), "{k}: {}", stderr(&out));
        let text = stdout(&out);
        let gate = text
            .lines()
            .find(|l| l.starts_with("GATE: "))
            .unwrap_or_default();
        let head = format!("GATE: --require-kappa {k}: the panel's kappa 0.61 [0.28, 0.86] ");
        assert!(gate.starts_with(&head), "{text}");
        assert!(gate.contains(says), "{gate}");
    }
}

#[test]
fn a_dry_run_says_what_it_would_ask_and_runs_nothing() {
    crate::util::need("jq");
    let tmp = TempDir::new("calibrate-dry");
    let history = tmp.path().join("history.jsonl");
    std::fs::copy(root().join("examples/history.jsonl"), &history).unwrap();
    let out = Command::new(root().join("bin/panel-calibrate"))
        .args(["--dry-run", "--limit", "5", "claude:haiku", "codex:gpt-5"])
        .env("PANEL_HISTORY", &history)
        .env(
            "PATH",
            format!(
                "{}:{}",
                bin("panel-judge").parent().unwrap().display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .current_dir(tmp.path())
        .checked_output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    for want in [
        "panel-calibrate: set llmbar-natural (pairwise), 5 items, seats claude:haiku codex:gpt-5",
        "  20 calls to the models, about ",
        "  claude:haiku: about $",
        "for its 10 calls, at its mean $0.0028 a verdict in the history",
        "  codex:gpt-5: 10 calls; no cost of it in the history",
    ] {
        assert!(text.contains(want), "no {want:?} in\n{text}");
    }
    // Nothing ran: no run folder anywhere, no records.
    assert!(!text.contains("LEDGER"), "{text}");
}

#[test]
fn a_set_that_is_not_one_is_one_line_and_exit_2() {
    crate::util::need("jq");
    let tmp = TempDir::new("calibrate-bad");
    let set = tmp.path().join("set");
    std::fs::create_dir_all(&set).unwrap();
    std::fs::write(set.join("set.json"), r#"{"contract": "pairwise"}"#).unwrap();
    std::fs::write(
        set.join("labels.jsonl"),
        "{\"name\":\"x\",\"label\":\"A\"}\n",
    )
    .unwrap();
    let set_arg = set.to_str().unwrap();
    let out = tmp.path().join("out");
    let out_arg = out.to_str().unwrap();
    for (items, args, says) in [
        (
            "{\"name\":\"../x\",\"question\":\"q\",\"a\":\"a\",\"b\":\"b\"}\n",
            &["--replay"][..],
            "no standin.jsonl to replay",
        ),
        (
            "{\"name\":\"../x\",\"question\":\"q\",\"a\":\"a\",\"b\":\"b\"}\n",
            &["claude:haiku"],
            "its name must be one plain word",
        ),
        (
            "{\"name\":\"x\",\"question\":\"q\",\"a\":\"a\",\"b\":\"b\"}\n{\"name\":\"x\",\"question\":\"q\",\"a\":\"a\",\"b\":\"b\"}\n",
            &["claude:haiku"],
            "x is given twice",
        ),
        (
            "{\"name\":\"x\",\"question\":\"q\",\"a\":\"a\"}\n",
            &["claude:haiku"],
            "not a set's items (pairwise",
        ),
        ("not json\n", &["claude:haiku"], "not a set's items"),
        (
            "{\"name\":\"x\",\"question\":\"q\",\"a\":\"a\",\"b\":\"b\"}\n",
            &[],
            "give the panel's seats",
        ),
        (
            "{\"name\":\"x\",\"question\":\"q\",\"a\":\"a\",\"b\":\"b\"}\n",
            &["--limit", "0", "claude:haiku"],
            "take a whole number from 1",
        ),
        (
            "{\"name\":\"x\",\"question\":\"q\",\"a\":\"a\",\"b\":\"b\"}\n",
            &["--format", "html", "claude:haiku"],
            "--format html: text, markdown or json",
        ),
    ] {
        std::fs::write(set.join("items.jsonl"), items).unwrap();
        let mut all = vec!["--set", set_arg, "--dry-run", "-o", out_arg];
        all.extend_from_slice(args);
        let out = calibrate(&all, tmp.path());
        assert_eq!(
            out.status.code(),
            Some(2),
            "{items} {args:?}: {}",
            stdout(&out)
        );
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    // Nothing was written outside the items' own folder: a name is never a path.
    assert!(!out.join("x").exists() && !tmp.path().join("x").exists());
    let out = calibrate(&["--set", "no-such-set", "claude:haiku"], tmp.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no such set"), "{}", stderr(&out));
}

//! `panel-tally --ledger --gold`: a history read against gold labels. The figures are checked
//! against scikit-learn and statsmodels (stored reference values, and the packages themselves
//! when python3 can import them), and stand-in judges of known habits (benches/gold-gen.awk:
//! one wrong on 15 % of candidates, one that always says holds, one that always prefers the
//! answer shown first) give the figures they were built to give, within their intervals.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::util::{Checked, TempDir, bin, root, run_with_stdin, stderr, stdout};

/// A history and its labels from benches/gold-gen.awk at the settings `g` holds.
fn generated(g: &Value, dir: &Path, tag: &str) -> (PathBuf, PathBuf) {
    let (history, labels) = (
        dir.join(format!("{tag}.jsonl")),
        dir.join(format!("{tag}-labels.jsonl")),
    );
    let _ = std::fs::remove_file(&labels);
    let mut awk = Command::new("awk");
    for key in ["panels", "seed", "labelled", "pairwise"] {
        if let Some(v) = g.get(key) {
            awk.arg("-v").arg(format!("{key}={v}"));
        }
    }
    let out = awk
        .arg("-v")
        .arg(format!("labels={}", labels.display()))
        .arg("-f")
        .arg(root().join("benches/gold-gen.awk"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    std::fs::write(&history, out.stdout).unwrap();
    (history, labels)
}

fn ledger(args: &[&str], history: &Path, labels: &Path) -> Output {
    Command::new(bin("panel-tally"))
        .arg("--ledger")
        .arg("--gold")
        .arg(labels)
        .args(args)
        .arg(history)
        .checked_output()
        .unwrap()
}

/// The gold records of a `--json` run: `gold-agreement` by `scope name`, and the summary.
fn gold_of(out: &Output) -> (std::collections::BTreeMap<String, Value>, Value) {
    let mut by = std::collections::BTreeMap::new();
    let mut summary = Value::Null;
    for l in stdout(out).lines() {
        let v: Value = serde_json::from_str(l).unwrap();
        match v["type"].as_str() {
            Some("gold-agreement") => {
                by.insert(
                    format!(
                        "{} {}",
                        v["scope"].as_str().unwrap(),
                        v["name"].as_str().unwrap()
                    ),
                    v,
                );
            }
            Some("gold-summary") => summary = v,
            _ => {}
        }
    }
    (by, summary)
}

fn close(got: &Value, want: &Value, what: &str) {
    match (got.as_f64(), want.as_f64(), got.as_array(), want.as_array()) {
        (Some(g), Some(w), _, _) => assert!((g - w).abs() < 1e-9, "{what}: {g} against {w}"),
        (_, _, Some(g), Some(w)) => {
            assert_eq!(g.len(), w.len(), "{what}");
            for (i, (g, w)) in g.iter().zip(w).enumerate() {
                close(g, w, &format!("{what}[{i}]"));
            }
        }
        _ => assert_eq!(got, want, "{what}"),
    }
}

/// Our figures for one reference history against the reference's.
fn assert_reference(h: &Value, dir: &Path) {
    let (history, labels) = generated(&h["generator"], dir, "ref");
    let agree = h["agree"].as_u64().unwrap();
    let mut args = vec!["--json".to_string()];
    if agree > 0 {
        args.extend(["--agree".into(), agree.to_string()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = ledger(&args, &history, &labels);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let (by, summary) = gold_of(&out);
    let fields = [
        ("accuracy", "accuracy"),
        ("accuracyCi95", "accuracyCi95"),
        ("sensitivity", "sensitivity"),
        ("sensitivityCi95", "sensitivityCi95"),
        ("specificity", "specificity"),
        ("specificityCi95", "specificityCi95"),
        ("kappa", "kappa"),
    ];
    let judges = h["judges"].as_object().unwrap();
    assert!(!judges.is_empty());
    for (name, want) in judges {
        let got = &by[&format!("judge {name}")];
        for (ours, theirs) in fields {
            close(&got[ours], &want[theirs], &format!("{name} {ours}"));
        }
    }
    let panel = by.iter().find(|(k, _)| k.starts_with("panel ")).unwrap().1;
    for (ours, theirs) in fields {
        close(&panel[ours], &h["panel"][theirs], &format!("panel {ours}"));
    }
    close(
        &summary["corrected"]["corrected"],
        &h["corrected"],
        "corrected share",
    );
}

fn reference() -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(root().join("tests/fixtures/gold/reference.json")).unwrap(),
    )
    .unwrap()
}

#[test]
fn the_figures_equal_scikit_learn_and_statsmodels_on_the_reference_histories() {
    let dir = TempDir::new("gold-reference");
    for h in reference()["histories"].as_array().unwrap() {
        assert_reference(h, dir.path());
    }
}

#[test]
fn the_figures_equal_scikit_learn_and_statsmodels_run_here() {
    let have = Command::new("python3")
        .args(["-c", "import sklearn, statsmodels"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !have {
        crate::util::skipped(
            "gold-reference",
            "scikit-learn or statsmodels is not installed",
            "gold: the figures were checked against the stored reference only: no scikit-learn and statsmodels for python3 (pip install scikit-learn==1.6.1 statsmodels==0.14.4)",
        );
        return;
    }
    crate::util::ran("gold-reference");
    let dir = TempDir::new("gold-reference-py");
    for (g, agree) in [
        (json!({"panels": 600, "seed": 13, "labelled": 0.6}), 2),
        (json!({"panels": 500, "seed": 3, "labelled": 0.9}), 0),
        (
            json!({"panels": 400, "seed": 17, "labelled": 0.7, "pairwise": 1}),
            0,
        ),
    ] {
        let (history, labels) = generated(&g, dir.path(), "live");
        let out = Command::new("python3")
            .arg(root().join("tests/fixtures/gold/gold-reference.py"))
            .args([&history, &labels])
            .arg(agree.to_string())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let mut want: Value = serde_json::from_slice(&out.stdout).unwrap();
        want["generator"] = g;
        want["agree"] = json!(agree);
        assert_reference(&want, dir.path());
    }
}

/// The whole interval holds `x`.
fn holds(ci: &Value, x: f64, what: &str) {
    let (lo, hi) = (ci[0].as_f64().unwrap(), ci[1].as_f64().unwrap());
    assert!(lo <= x && x <= hi, "{what}: {x} outside [{lo}, {hi}]");
}

#[test]
fn stand_in_judges_give_the_figures_they_were_built_to_give() {
    let dir = TempDir::new("gold-standins");
    let g = json!({"panels": 3000, "seed": 41, "labelled": 0.5});
    let (history, labels) = generated(&g, dir.path(), "verdicts");
    let out = ledger(&["--json", "--agree", "2"], &history, &labels);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let (by, summary) = gold_of(&out);
    // Wrong on 15 % of candidates.
    let wrong = &by["judge correctness@claude:haiku"];
    holds(&wrong["accuracyCi95"], 0.85, "the judge wrong on 15 %");
    assert_eq!(wrong["abstained"], 0);
    // Always holds: every candidate that holds found, none that breaks; no better than chance.
    let always = &by["judge evidence@opencode:google/gemini-2.5-flash"];
    assert_eq!(
        (
            always["sensitivity"].as_f64(),
            always["specificity"].as_f64()
        ),
        (Some(1.0), Some(0.0))
    );
    assert_eq!(always["kappa"].as_f64(), Some(0.0));
    // Right 80 % when it answers; its timeouts (10 %) are counted apart, never as wrong.
    let late = &by["judge edges@codex:gpt-5-mini"];
    holds(&late["accuracyCi95"], 0.8, "the judge right 80 %");
    let share = late["abstained"].as_f64().unwrap() / late["labelled"].as_f64().unwrap();
    assert!((0.07..0.13).contains(&share), "{share}");
    assert_eq!(
        late["answered"].as_u64().unwrap() + late["abstained"].as_u64().unwrap(),
        late["labelled"].as_u64().unwrap()
    );
    // The unlabelled half holds 60 %: the corrected share finds it, where the panel's own
    // share (it passes what only two of three hold) does not.
    let c = &summary["corrected"];
    holds(&c["correctedCi95"], 0.6, "the corrected share");
    assert!(c["observed"].as_f64().unwrap() > 0.65, "{c}");

    let g = json!({"panels": 2000, "seed": 43, "pairwise": 1});
    let (history, labels) = generated(&g, dir.path(), "pairwise");
    let out = ledger(&["--json"], &history, &labels);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let (by, _) = gold_of(&out);
    holds(
        &by["judge instruction@claude:haiku"]["accuracyCi95"],
        0.85,
        "the judge right 85 %",
    );
    // Right 70 % in each order alone, so counted only when its two answers agree: right in
    // both (0.49) of agreeing (0.49 + 0.09).
    holds(
        &by["judge instruction@opencode:google/gemini-2.5-flash"]["accuracyCi95"],
        0.49 / 0.58,
        "the judge right 70 % each order",
    );
    // Always the first shown: never an answer that counts.
    let first = &by["judge instruction@codex:gpt-5-mini"];
    assert_eq!(
        (first["answered"].as_u64(), first["abstained"].as_u64()),
        (Some(0), Some(2000))
    );
    let stats: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|v: &Value| v["type"] == "judge-stats" && v["scope"] == "judge")
        .collect();
    let position = |name: &str| &stats.iter().find(|s| s["name"] == name).unwrap()["position"];
    let p = position("instruction@codex:gpt-5-mini");
    assert_eq!(
        (p["consistency"].as_f64(), p["firstShownRate"].as_f64()),
        (Some(0.0), Some(1.0))
    );
    let p = position("instruction@claude:haiku");
    assert_eq!(
        (p["consistency"].as_f64(), p["firstShownRate"].as_f64()),
        (Some(1.0), Some(0.5))
    );
    // Right 70 % in each order alone: the two agree 0.7² + 0.3² of the time.
    let p = position("instruction@opencode:google/gemini-2.5-flash");
    holds(&p["consistencyCi95"], 0.58, "consistency of the 70 % judge");
    holds(&p["firstShownRateCi95"], 0.5, "its first-shown rate");
    let flags = &stats
        .iter()
        .find(|s| s["name"] == "instruction@codex:gpt-5-mini")
        .unwrap()["flags"];
    assert_eq!(flags[0]["flag"], "position-bias", "{flags}");
}

#[test]
fn the_gate_exits_0_1_or_3() {
    let dir = TempDir::new("gold-gate");
    let (history, labels) = generated(
        &json!({"panels": 400, "seed": 7, "labelled": 0.5}),
        dir.path(),
        "h",
    );
    let (small, small_labels) = generated(&json!({"panels": 30, "seed": 7}), dir.path(), "small");
    for (args, h, l, code, says) in [
        (
            &["--agree", "2", "--require-kappa", "0.4"][..],
            &history,
            &labels,
            0,
            "clears it (exit 0)",
        ),
        (
            &["--agree", "2", "--require-kappa", "0.9"],
            &history,
            &labels,
            1,
            "is below it (exit 1)",
        ),
        (
            &["--agree", "2", "--require-accuracy", "0.75"],
            &history,
            &labels,
            0,
            "clears it",
        ),
        (
            &["--agree", "2", "--require-accuracy", "0.97"],
            &history,
            &labels,
            1,
            "is below it",
        ),
        (
            &["--agree", "2", "--require-kappa", "0.6"],
            &small,
            &small_labels,
            3,
            "more labelled candidates would settle it at the observed kappa (exit 3)",
        ),
        (
            &["--agree", "2", "--require-accuracy", "0.8"],
            &small,
            &small_labels,
            3,
            "more labelled candidates would settle it at the observed accuracy (exit 3)",
        ),
    ] {
        let out = ledger(args, h, l);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {}", stderr(&out));
        let text = stdout(&out);
        let gate = text
            .lines()
            .find(|l| l.starts_with("GATE: "))
            .unwrap_or_else(|| panic!("{text}"));
        assert!(gate.contains(says), "{args:?}: {gate}");
    }
    // The record says the same, and how many more labels.
    let out = ledger(
        &["--json", "--agree", "2", "--require-kappa", "0.6"],
        &small,
        &small_labels,
    );
    assert_eq!(out.status.code(), Some(3));
    let gate = &gold_of(&out).1["gate"];
    assert_eq!(
        (gate["figure"].as_str(), gate["result"].as_str()),
        (Some("kappa"), Some("straddles"))
    );
    assert!(gate["moreLabels"].as_u64().unwrap() > 0, "{gate}");
}

#[test]
fn labels_and_panels_left_unmatched_are_counted_and_named() {
    let dir = TempDir::new("gold-unmatched");
    let (history, labels) = generated(&json!({"panels": 20, "seed": 3}), dir.path(), "h");
    let mut text = std::fs::read_to_string(&labels).unwrap();
    // Two labels no panel is about, one of them named with control characters; and the last
    // panel loses its label.
    text.push_str("{\"name\":\"gone\\u001b[2J\",\"label\":\"breaks\"}\n");
    text.push_str("{\"candidate\":\"sha256:ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff\",\"label\":\"holds\"}\n");
    let text: Vec<&str> = text
        .lines()
        .filter(|l| !l.contains("0000000000000014\""))
        .collect();
    std::fs::write(&labels, text.join("\n")).unwrap();
    // A panel about a candidate whose seal is not one, with control characters in it.
    let mut records = std::fs::read_to_string(&history).unwrap();
    let last = records.lines().last().unwrap().to_string();
    let seal = format!("sha256:{:064x}", 20);
    let hostile = last
        .replace(&seal, "sha256:x\\u001b[2J")
        .replace("gold-0000019", "gold-hostile");
    records.push_str(&hostile);
    records.push('\n');
    std::fs::write(&history, records).unwrap();
    let out = ledger(&["--json"], &history, &labels);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let s = gold_of(&out).1;
    assert_eq!(
        (s["labels"].as_u64(), s["labelledPanels"].as_u64()),
        (Some(21), Some(19))
    );
    assert_eq!(s["labelsWithoutRecords"], 2);
    assert_eq!(s["labelsWithoutRecordsNamed"][0], "name \"gone\\u{1b}[2J\"");
    assert_eq!(s["panelsWithoutLabel"], 2);
    assert!(
        s["panelsWithoutLabelNamed"][0]
            .as_str()
            .unwrap()
            .ends_with("0014"),
        "{s}"
    );
    assert_eq!(s["panelsWithoutLabelNamed"][1], "sha256:x\u{1b}[2J");
    let out = ledger(&[], &history, &labels);
    let text = stdout(&out);
    assert!(
        text.contains("2 labels without records (name \"gone\\u{1b}[2J\", sha256:ffff"),
        "{text}"
    );
    assert!(text.contains("sha256:x\\x1b[2J"), "{text}");
    assert!(!text.contains('\x1b'), "{text}");
}

#[test]
fn labels_found_by_name_match_the_records_panel_judge_named() {
    let dir = TempDir::new("gold-name");
    let out = Command::new(bin("panel-judge"))
        .args([
            "--seat",
            "replay:examples/answers.json",
            "--name",
            "answer-1",
            "--out",
        ])
        .arg(dir.path().join("run"))
        .arg("examples/answer.md")
        .current_dir(root())
        .checked_output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let records = stdout(&out);
    assert!(
        records.lines().all(|l| l.contains("\"name\":\"answer-1\"")),
        "{records}"
    );
    let labels = dir.path().join("labels.jsonl");
    std::fs::write(&labels, "{\"name\":\"answer-1\",\"label\":\"breaks\"}\n").unwrap();
    let out = run_with_stdin(
        Command::new(bin("panel-tally"))
            .arg("--ledger")
            .arg("--json")
            .arg("--gold")
            .arg(&labels)
            .arg("-"),
        records.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let (by, s) = gold_of(&out);
    assert_eq!(
        (
            s["labelledPanels"].as_u64(),
            s["labelsWithoutRecords"].as_u64()
        ),
        (Some(1), Some(0))
    );
    // The recorded panel breaks on one lens of three: every judge must hold, so it fails, as
    // the label says.
    assert_eq!(
        by.iter().find(|(k, _)| k.starts_with("panel ")).unwrap().1["correct"],
        1
    );
}

#[test]
fn a_bad_labels_file_or_gate_is_one_line_and_exit_2() {
    let dir = TempDir::new("gold-bad");
    let (history, _) = generated(&json!({"panels": 5, "seed": 3}), dir.path(), "h");
    let (pairwise, _) = generated(
        &json!({"panels": 5, "seed": 3, "pairwise": 1}),
        dir.path(),
        "p",
    );
    let labels = dir.path().join("bad.jsonl");
    for (text, args, history, says) in [
        (
            "{\"name\":\"a\",\"label\":\"maybe\"}\n",
            &[][..],
            &history,
            "bad.jsonl: line 1: not a gold label: unknown variant `maybe`",
        ),
        (
            "{\"name\":\"a\",\"label\":\"A\"}\n{\"name\":\"a\",\"label\":\"B\"}\n",
            &[],
            &history,
            "line 2: name \"a\" is labelled twice (first on line 1)",
        ),
        (
            "{\"name\":\"a\",\"label\":\"A\"}\n",
            &[],
            &history,
            "--gold: the labels are A/B preferences but the records are verdicts",
        ),
        (
            "{\"name\":\"a\",\"label\":\"holds\"}\n",
            &[],
            &pairwise,
            "--gold: the labels are holds/breaks verdicts but the records are pairwise preferences",
        ),
        (
            "{\"name\":\"a\",\"label\":\"holds\"}\n",
            &["--require-kappa", "1.5"],
            &history,
            "--require-kappa 1.5: a kappa is from -1 to 1",
        ),
        (
            "{\"name\":\"a\",\"label\":\"holds\"}\n",
            &["--require-accuracy", "-0.1"],
            &history,
            "--require-accuracy -0.1: a share is from 0 to 1",
        ),
        ("", &[], &history, "bad.jsonl: no gold labels"),
    ] {
        std::fs::write(&labels, text).unwrap();
        let out = ledger(args, history, &labels);
        assert_eq!(out.status.code(), Some(2), "{text}: {}", stdout(&out));
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(says), "{err}");
    }
    // Standard input cannot hold both the labels and the records.
    let out = run_with_stdin(
        Command::new(bin("panel-tally")).args(["--ledger", "--gold", "-", "-"]),
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--gold -: the records are read from standard input already"),
        "{}",
        stderr(&out)
    );
    // A gate needs labels.
    let out = Command::new(bin("panel-tally"))
        .args(["--ledger", "--require-kappa", "0.5"])
        .arg(&history)
        .checked_output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_markdown_report_shows_the_gold_section() {
    let dir = TempDir::new("gold-markdown");
    let (history, labels) = generated(
        &json!({"panels": 200, "seed": 9, "labelled": 0.5}),
        dir.path(),
        "h",
    );
    let out = ledger(
        &[
            "--format",
            "markdown",
            "--agree",
            "2",
            "--require-kappa",
            "0.3",
        ],
        &history,
        &labels,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    for want in [
        "#### Against the gold labels (positive: holds)",
        "| panel &#45;-agree 2: 2 judges must hold",
        "against their best single judge and smaller panels",
        "Corrected share of holds over",
        "**GATE: --require-kappa 0.3",
    ] {
        assert!(text.contains(want), "no {want:?} in\n{text}");
    }
}

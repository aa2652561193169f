//! `panel-tally --ledger`: a history of verdicts read as a ledger of its judges.

use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::tool::records;
use crate::util::{TempDir, bin, root, run_with_stdin, stderr, stdout};

const HISTORY: &str = "examples/history.jsonl";

fn ledger(args: &[&str], input: &[u8]) -> Output {
    run_with_stdin(
        Command::new(bin("panel-tally"))
            .arg("--ledger")
            .args(args)
            .arg("-")
            .env_remove("NO_COLOR"),
        input,
    )
}

fn history() -> Output {
    let out = Command::new(bin("panel-tally"))
        .args(["--ledger", HISTORY])
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    out
}

/// One verdict record: `seat`, `lens`, an answer (`holds`, `breaks`, or a status), a run.
fn rec(seat: &str, lens: &str, answer: &str, run: &str) -> Value {
    let (verdict, status) = match answer {
        "holds" | "breaks" => (json!(answer), "ok"),
        s => (Value::Null, s),
    };
    json!({
        "type": "verdict", "judge": format!("{lens}@{seat}"), "lens": lens, "seat": seat,
        "harness": "claude", "family": "anthropic", "candidate": format!("sha256:{run}"),
        "verdict": verdict, "status": status, "durationMs": 1000,
        "usage": {"inputTokens": 100, "outputTokens": 10, "costUsd": 0.01},
        "panelSize": 2, "run": run,
    })
}

fn jsonl(records: &[Value]) -> Vec<u8> {
    records
        .iter()
        .map(|r| format!("{r}\n"))
        .collect::<String>()
        .into_bytes()
}

#[test]
fn the_example_history_shows_the_heat_map_and_the_flags() {
    let out = history();
    let text = stdout(&out);
    assert!(text.starts_with("LEDGER: "), "{text}");
    for want in [
        "Agreement beyond chance (Cohen's kappa",
        "██",
        "redundant     correctness@claude:haiku & correctness@claude:sonnet: kappa ",
        "abstains      edges@codex:gpt-5-mini: no verdict on ",
        "contrarian    edges@claude:haiku: against the others' majority on ",
        "Canaries (known answers, not counted in panels)",
        "overall: Fleiss' kappa 0.28 [0.20, 0.37], Krippendorff's alpha 0.23 [0.15, 0.31]",
        "Smaller panels",
    ] {
        assert!(text.contains(want), "no {want:?} in\n{text}");
    }
    // The judge that holds 97 % of the time is not flagged on 96 verdicts: its interval
    // reaches below 95 %.
    assert!(!text.contains("rubber-stamp"), "{text}");
    // Not on a terminal: no colour, whatever NO_COLOR says.
    assert!(!text.contains('\x1b'), "{text}");
}

#[test]
fn the_readme_shows_the_example_report() {
    let text = stdout(&history());
    crate::util::doc_section(
        "<!-- ledger-example -->\n```\n",
        "```\n<!-- /ledger-example -->",
        &text,
        "ledger::the_readme",
    );
}

#[test]
fn json_gives_judge_pair_and_summary_records() {
    let out = Command::new(bin("panel-tally"))
        .args(["--ledger", "--json", HISTORY])
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let recs = records(&out);
    let kinds = |k: &str| recs.iter().filter(|r| r["type"] == k).count();
    assert_eq!(
        kinds("judge-stats"),
        5 + 4 + 3,
        "5 judges, 4 seats, 3 families"
    );
    assert_eq!(kinds("pair-agreement"), 10);
    let summary = recs.last().unwrap();
    assert_eq!(summary["type"], "ledger-summary");
    let panels = summary["panels"].as_u64().unwrap();
    let sum = ["pass", "fail", "noDecision"]
        .iter()
        .map(|k| summary[k].as_u64().unwrap())
        .sum::<u64>();
    assert_eq!(sum, panels);
    assert!(summary["canaries"].as_u64().unwrap() > 0);
    // The canaries count in records, never in panels: the judges' panels add up without them.
    let history = std::fs::read_to_string(root().join(HISTORY)).unwrap();
    let canaries = history.lines().filter(|l| l.contains("\"canary\"")).count() as u64;
    assert_eq!(summary["canaries"].as_u64().unwrap(), canaries);
    let sat: u64 = recs
        .iter()
        .filter(|r| r["type"] == "judge-stats" && r["scope"] == "judge")
        .map(|r| r["panels"].as_u64().unwrap())
        .sum();
    assert_eq!(sat + canaries, summary["records"].as_u64().unwrap());
    let seat = recs
        .iter()
        .find(|r| r["scope"] == "seat" && r["name"] == "claude:sonnet")
        .unwrap();
    assert!(seat["canary"]["seen"].as_u64().unwrap() > 0, "{seat}");
    let pair = recs.iter().find(|r| r["type"] == "pair-agreement").unwrap();
    for field in ["sharedPanels", "bothAnswered", "kappa", "aIndex", "table"] {
        assert!(pair.get(field).is_some(), "{field} in {pair}");
    }
    let sub = &summary["subPanels"][0];
    assert!(sub["matchRate"].as_f64().unwrap() >= 0.95, "{sub}");
    assert!(sub["keep"].as_array().unwrap().len() < sub["panel"].as_array().unwrap().len());
}

#[test]
fn pairs_agreeing_always_are_redundant_and_kappa_counts_disagreement() {
    // 40 panels of two judges: a and b agree on all, half holds and half breaks.
    let mut recs = Vec::new();
    for p in 0..40 {
        let v = if p % 2 == 0 { "holds" } else { "breaks" };
        let run = format!("r{p}");
        recs.push(rec("claude:haiku", "a", v, &run));
        recs.push(rec("codex:x", "a", v, &run));
    }
    let out = ledger(&["--json"], &jsonl(&recs));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let recs = records(&out);
    let pair = recs.iter().find(|r| r["type"] == "pair-agreement").unwrap();
    assert_eq!(pair["kappa"], 1.0);
    assert_eq!(pair["sharedPanels"], 40);
    assert_eq!(pair["flags"][0]["flag"], "redundant");
    // The same judges, one always answering against the other: kappa -1, no flag.
    let mut recs = Vec::new();
    for p in 0..40 {
        let (v, w) = if p % 2 == 0 {
            ("holds", "breaks")
        } else {
            ("breaks", "holds")
        };
        let run = format!("r{p}");
        recs.push(rec("claude:haiku", "a", v, &run));
        recs.push(rec("codex:x", "a", w, &run));
    }
    let out = ledger(&["--json"], &jsonl(&recs));
    let recs = records(&out);
    let pair = recs.iter().find(|r| r["type"] == "pair-agreement").unwrap();
    assert_eq!(pair["kappa"], -1.0);
    assert_eq!(pair["flags"], json!([]));
}

#[test]
fn panels_whose_records_are_apart_are_counted_as_when_together() {
    let mut together = Vec::new();
    for p in 0..6 {
        let run = format!("r{p}");
        together.push(rec("s1", "a", "holds", &run));
        together.push(rec("s2", "a", if p < 2 { "breaks" } else { "holds" }, &run));
    }
    // Every panel's first record, then every panel's second.
    let mut apart: Vec<Value> = together.iter().step_by(2).cloned().collect();
    apart.extend(together.iter().skip(1).step_by(2).cloned());
    let a = ledger(&["--json"], &jsonl(&together));
    let b = ledger(&["--json"], &jsonl(&apart));
    assert_eq!(a.status.code(), Some(0), "{}", stderr(&a));
    assert_eq!(stdout(&a), stdout(&b));
    let summary = records(&a).pop().unwrap();
    assert_eq!(summary["panels"], 6);
}

#[test]
fn a_canary_is_scored_per_seat_and_never_sits_on_a_panel() {
    let mut recs = vec![rec("s1", "a", "holds", "r1"), rec("s2", "a", "holds", "r1")];
    for (seat, said, expected) in [
        ("s1", "holds", "holds"),
        ("s1", "holds", "breaks"),
        ("s1", "timeout", "breaks"),
        ("s2", "breaks", "breaks"),
    ] {
        let mut c = rec(seat, "a", said, "r1");
        c["canary"] = json!(expected);
        recs.push(c);
    }
    let out = ledger(&["--json"], &jsonl(&recs));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let recs = records(&out);
    let seat = |name: &str| {
        recs.iter()
            .find(|r| r["scope"] == "seat" && r["name"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(
        seat("s1")["canary"],
        json!({"seen": 3, "hits": 1, "wrong": 1, "abstained": 1, "hitRate": 1.0 / 3.0,
               "hitRateCi95": [0.06149194472039615, 0.7923403991979523]})
    );
    assert_eq!(seat("s1")["panels"], 1);
    assert_eq!(seat("s1")["abstained"], 0);
    assert_eq!(seat("s2")["canary"]["hits"], 1);
    let summary = recs.last().unwrap();
    assert_eq!(
        (summary["panels"].clone(), summary["canaries"].clone()),
        (json!(1), json!(4))
    );
    assert_eq!(summary["pass"], 1);
    // A canary's answer is holds or breaks.
    let mut bad = rec("s1", "a", "holds", "r1");
    bad["canary"] = json!("maybe");
    let out = ledger(&[], &jsonl(&[bad]));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("it must be holds or breaks"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn anything_but_a_verdict_record_is_refused_in_one_line() {
    let mut input = jsonl(&[rec("s1", "a", "holds", "r1")]);
    input.extend_from_slice(b"{\"type\":\"review\",\"reviewer\":\"x\"}\n");
    let out = ledger(&[], &input);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "panel-tally: <stdin>: line 2: a review record; reviews go through panel-merge\n"
    );
    assert!(stdout(&out).is_empty());
    let out = ledger(&[], b"");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    // --svg is the ledger's.
    let out = run_with_stdin(
        Command::new(bin("panel-tally")).args(["--svg", "x.svg"]),
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
}

const HOSTILE: &str = "</svg><script>alert(1)</script>&amp;\x1b[2J\r\nPANEL: pass";

fn hostile_history() -> Vec<u8> {
    let mut recs = Vec::new();
    for p in 0..4 {
        let run = format!("r{p}");
        recs.push(rec(HOSTILE, HOSTILE, "holds", &run));
        recs.push(rec("s2", "a&b", "breaks", &run));
    }
    jsonl(&recs)
}

#[test]
fn hostile_names_break_neither_the_terminal_nor_the_picture() {
    let dir = TempDir::new("ledger-hostile");
    let svg = dir.path().join("ledger.svg");
    let out = ledger(&["--svg", svg.to_str().unwrap()], &hostile_history());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(!text.contains('\x1b') && !text.contains('\r'), "{text:?}");
    assert!(!text.lines().any(|l| l.starts_with("PANEL:")), "{text}");
    assert!(text.contains("\\x1b[2J\\x0d\\x0aPANEL: pass"), "{text}");
    let picture = std::fs::read_to_string(&svg).unwrap();
    assert_eq!(picture.matches("</svg>").count(), 1, "{picture}");
    assert!(picture.trim_end().ends_with("</svg>"));
    assert!(!picture.contains("<script"), "{picture}");
    assert!(
        !picture.chars().any(|c| c.is_control() && c != '\n'),
        "{picture:?}"
    );
    // Every & starts an entity.
    for (i, _) in picture.match_indices('&') {
        let rest = &picture[i..];
        assert!(
            ["&amp;", "&lt;", "&gt;", "&quot;", "&#39;"]
                .iter()
                .any(|e| rest.starts_with(e)),
            "{}",
            &rest[..rest.len().min(20)]
        );
    }
    assert!(picture.contains("&lt;/svg&gt;&lt;script&gt;"), "{picture}");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&svg).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}

#[test]
fn the_picture_is_never_written_through_a_link() {
    let dir = TempDir::new("ledger-link");
    let target = dir.path().join("precious");
    std::fs::write(&target, "keep me").unwrap();
    let link = dir.path().join("ledger.svg");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let out = ledger(&["--svg", link.to_str().unwrap()], &hostile_history());
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).starts_with("panel-tally: --svg "),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me");
}

/// Renders `svg` to a PNG with a headless chromium, if one is installed.
fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser"]
        .into_iter()
        .find(|c| crate::util::on_path(c))
}

#[test]
fn the_picture_renders_in_a_browser() {
    let Some(browser) = chromium() else {
        crate::util::skipped(
            "chromium",
            "chromium is not installed",
            "ledger: the SVG picture was not rendered: no chromium on PATH (apt-get install chromium)",
        );
        return;
    };
    crate::util::ran("chromium");
    let dir = TempDir::new("ledger-svg");
    let svg = dir.path().join("ledger.svg");
    let out = Command::new(bin("panel-tally"))
        .args(["--ledger", HISTORY, "--svg"])
        .arg(&svg)
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let png = dir.path().join("shot.png");
    let status = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--window-size=900,700",
        ])
        .arg(format!(
            "--user-data-dir={}",
            dir.path().join("profile").display()
        ))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", svg.display()))
        .output()
        .unwrap();
    let shot = std::fs::read(&png)
        .unwrap_or_else(|_| panic!("no screenshot: {}", String::from_utf8_lossy(&status.stderr)));
    assert_eq!(&shot[..8], b"\x89PNG\r\n\x1a\n");
    // A page that failed to parse shows chromium's error text, a blank one compresses to
    // almost nothing; the heat map and the bars are colour.
    assert!(shot.len() > 10_000, "{} bytes", shot.len());
    // The DOM chromium built: an SVG, not its XML error page.
    let dom = Command::new(browser)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--dump-dom"])
        .arg(format!(
            "--user-data-dir={}",
            dir.path().join("profile").display()
        ))
        .arg(format!("file://{}", svg.display()))
        .output()
        .unwrap();
    let dom = stdout(&dom);
    assert!(
        dom.contains("<svg") && dom.contains("class=\"cell\""),
        "{dom}"
    );
    assert!(!dom.contains("parsererror"), "{dom}");
}

/// `--format markdown` for the ledger too: the summary first, a table of judges, each flag's
/// evidence in a section; a judge's name from a record is shown with no Markdown or HTML in it.
#[test]
fn the_ledger_as_markdown_shows_the_judges_and_escapes_their_names() {
    let mut recs = Vec::new();
    for p in 0..40 {
        let run = format!("r{p}");
        let answer = if p % 2 == 0 { "holds" } else { "breaks" };
        recs.push(rec("claude:haiku", "a</details>@someone", answer, &run));
        recs.push(rec("codex:gpt-5", "b", answer, &run));
    }
    let out = ledger(&["--format", "markdown"], &jsonl(&recs));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with("### 📒 Ledger: 40 panels, 2 judges"),
        "{text}"
    );
    assert!(text.contains("| judge | panels | holds rate |"), "{text}");
    assert!(text.contains("redundant"), "{text}");
    assert_eq!(
        text.matches("<details>").count(),
        text.matches("</details>").count(),
        "{text}"
    );
    assert!(
        !text.contains("</details>@") && !text.contains("@someone"),
        "{text}"
    );
}

/// A history for the alpha references: the shipped one, or benches/ledger-gen.awk's.
fn reference_history(h: &Value, dir: &TempDir) -> std::path::PathBuf {
    if let Some(path) = h["path"].as_str() {
        return root().join(path);
    }
    let (panels, seed) = (&h["generator"]["panels"], &h["generator"]["seed"]);
    let out = Command::new("awk")
        .args([
            "-v",
            &format!("panels={panels}"),
            "-v",
            &format!("seed={seed}"),
        ])
        .arg("-f")
        .arg(root().join("benches/ledger-gen.awk"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let path = dir.path().join(format!("gen-{panels}-{seed}.jsonl"));
    std::fs::write(&path, out.stdout).unwrap();
    path
}

fn summary_of(path: &std::path::Path, args: &[&str]) -> (Vec<Value>, Value) {
    let out = Command::new(bin("panel-tally"))
        .args(["--ledger", "--json"])
        .args(args)
        .arg(path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let mut recs = records(&out);
    let summary = recs.pop().unwrap();
    (recs, summary)
}

/// The overall and per-lens alpha of a summary against the reference's, within 1e-9.
fn assert_alphas(summary: &Value, want: &Value, what: &str) {
    let close = |got: &Value, want: &Value, of: &str| match (got.as_f64(), want.as_f64()) {
        (Some(g), Some(w)) => assert!((g - w).abs() < 1e-9, "{what} {of}: {g} against {w}"),
        _ => assert_eq!(got, want, "{what} {of}"),
    };
    close(&summary["alpha"], &want["alpha"], "alpha");
    let lenses = summary["byLens"].as_array().unwrap();
    assert_eq!(
        lenses.len(),
        want["byLens"].as_object().unwrap().len(),
        "{what}"
    );
    for l in lenses {
        let lens = l["lens"].as_str().unwrap();
        close(&l["alpha"], &want["byLens"][lens], lens);
    }
}

#[test]
fn alpha_equals_the_krippendorff_package_on_the_reference_histories() {
    let fixture: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("tests/fixtures/ledger/krippendorff.json")).unwrap(),
    )
    .unwrap();
    let dir = TempDir::new("ledger-alpha");
    for h in fixture["histories"].as_array().unwrap() {
        let (_, summary) = summary_of(&reference_history(h, &dir), &[]);
        assert_alphas(&summary, h, &h.to_string());
    }
}

#[test]
fn alpha_equals_the_krippendorff_package_run_here() {
    let have = Command::new("python3")
        .args(["-c", "import krippendorff"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !have {
        crate::util::skipped(
            "krippendorff",
            "the krippendorff package is not installed",
            "ledger: alpha was checked against the stored reference only: no krippendorff for python3 (pip install krippendorff==0.8.1)",
        );
        return;
    }
    crate::util::ran("krippendorff");
    let dir = TempDir::new("ledger-alpha-py");
    for h in [
        json!({"path": HISTORY}),
        json!({"generator": {"panels": 400, "seed": 3}}),
        json!({"generator": {"panels": 2000, "seed": 29}}),
    ] {
        let path = reference_history(&h, &dir);
        let out = Command::new("python3")
            .arg(root().join("tests/fixtures/ledger/alpha-reference.py"))
            .arg(&path)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let want: Value = serde_json::from_slice(&out.stdout).unwrap();
        let (_, summary) = summary_of(&path, &[]);
        assert_alphas(&summary, &want, &h.to_string());
    }
}

fn inside(x: &Value, ci: &Value) -> bool {
    let (x, lo, hi) = (
        x.as_f64().unwrap(),
        ci[0].as_f64().unwrap(),
        ci[1].as_f64().unwrap(),
    );
    lo <= x && x <= hi && lo < hi
}

#[test]
fn intervals_hold_their_figures_and_come_out_the_same_every_time() {
    let path = root().join(HISTORY);
    let (recs, summary) = summary_of(&path, &[]);
    assert_eq!(summary["bootstrapReplicates"], 1000);
    assert!(
        inside(&summary["alpha"], &summary["alphaCi95"]),
        "{summary}"
    );
    assert!(
        inside(&summary["fleissKappa"], &summary["fleissKappaCi95"]),
        "{summary}"
    );
    let lens = &summary["byLens"][0];
    assert!(inside(&lens["alpha"], &lens["alphaCi95"]), "{lens}");
    assert!(inside(&lens["kappa"], &lens["kappaCi95"]), "{lens}");
    for p in recs.iter().filter(|r| r["type"] == "pair-agreement") {
        assert!(inside(&p["agreement"], &p["agreementCi95"]), "{p}");
        if p["kappa"].is_f64() {
            assert!(inside(&p["kappa"], &p["kappaCi95"]), "{p}");
        }
    }
    for j in recs.iter().filter(|r| r["scope"] == "judge") {
        assert!(inside(&j["holdsRate"], &j["holdsRateCi95"]), "{j}");
    }
    let seat = recs.iter().find(|r| r["scope"] == "seat").unwrap();
    assert!(
        inside(&seat["canary"]["hitRate"], &seat["canary"]["hitRateCi95"]),
        "{seat}"
    );
    // Byte for byte the same output on a second run; another replicate count moves the
    // intervals, never the figures.
    let again = |args: &[&str]| {
        let out = Command::new(bin("panel-tally"))
            .args(["--ledger", "--json"])
            .args(args)
            .arg(&path)
            .output()
            .unwrap();
        stdout(&out)
    };
    assert_eq!(again(&[]), again(&[]));
    let (_, fewer) = summary_of(&path, &["--bootstrap", "200"]);
    assert_eq!(fewer["alpha"], summary["alpha"]);
    assert_ne!(fewer["alphaCi95"], summary["alphaCi95"]);
    // Every report format shows alpha beside Fleiss' kappa, with their intervals.
    let text = stdout(&history());
    assert!(
        text.contains("overall: Fleiss' kappa 0.28 [")
            && text.contains("Krippendorff's alpha 0.23 ["),
        "{text}"
    );
    let md = Command::new(bin("panel-tally"))
        .args(["--ledger", "--format", "markdown"])
        .arg(&path)
        .output()
        .unwrap();
    let md = stdout(&md);
    assert!(
        md.contains("Fleiss' kappa 0.28 [") && md.contains("Krippendorff's alpha 0.23 ["),
        "{md}"
    );
}

#[test]
fn a_flag_needs_its_whole_interval_past_the_threshold() {
    // Judge a holds on every one of `n` panels but `breaks_on`; judge b answers at random.
    let history = |n: usize, breaks_on: usize, same: usize| {
        let mut recs = Vec::new();
        for p in 0..n {
            let run = format!("r{p}");
            let b = if (p * 7919) % 3 == 0 {
                "breaks"
            } else {
                "holds"
            };
            // c copies b on the first `same` panels, then says the other word.
            let c = match (p < same, b) {
                (true, _) => b,
                (false, "holds") => "breaks",
                _ => "holds",
            };
            let a = if p < breaks_on { "breaks" } else { "holds" };
            for (seat, answer) in [("s1", a), ("s2", b), ("s3", c)] {
                let mut r = rec(seat, "l", answer, &run);
                r["panelSize"] = json!(3);
                recs.push(r);
            }
        }
        let out = ledger(&["--json"], &jsonl(&recs));
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        records(&out)
    };
    let flags = |recs: &[Value], flag: &str| -> Vec<String> {
        recs.iter()
            .flat_map(|r| r["flags"].as_array().cloned().unwrap_or_default())
            .filter(|f| f["flag"] == flag)
            .map(|f| f["evidence"].as_str().unwrap().to_string())
            .collect()
    };
    // 200 panels, all holds: the interval's low end (98.1 %) is past 95 %.
    let recs = history(200, 0, 200);
    let stamp = flags(&recs, "rubber-stamp");
    assert_eq!(stamp.len(), 1, "{recs:?}");
    assert!(
        stamp[0].contains("95 % interval 98.1 %–100.0 %"),
        "{stamp:?}"
    );
    // b and c agree on all 200: kappa 1, its interval too.
    let red = flags(&recs, "redundant");
    assert!(
        red.iter()
            .any(|e| e.starts_with("kappa 1.00 (95 % interval 1.00–1.00)")),
        "{red:?}"
    );
    // 97 of 100 holds: the point is past 95 %, its interval (91.5 %–99.0 %) is not.
    let recs = history(100, 3, 100);
    assert_eq!(flags(&recs, "rubber-stamp"), Vec::<String>::new());
    // b and c agree on 34 of 36: kappa past 0.8, but not the low end of its interval.
    let recs = history(36, 0, 34);
    let pair = recs
        .iter()
        .find(|r| r["type"] == "pair-agreement" && r["a"] == "l@s2")
        .unwrap();
    assert!(pair["kappa"].as_f64().unwrap() >= 0.8, "{pair}");
    assert!(pair["kappaCi95"][0].as_f64().unwrap() < 0.8, "{pair}");
    assert_eq!(pair["flags"], json!([]), "{pair}");
}

/// Hostile figures: durations and tokens near u64's end sum without a wrap or a panic (a
/// debug build said "internal error: attempt to add with overflow", exit 2), and a panel
/// with fewer records than its panelSize counts the judges it lacks as missing, at the
/// default threshold and with --agree (its two holds passed it).
#[test]
fn the_ledger_counts_huge_figures_and_short_panels_without_guessing() {
    let mut a = rec("claude:haiku", "a", "holds", "r1");
    let mut b = rec("codex:gpt", "a", "holds", "r1");
    for r in [&mut a, &mut b] {
        r["durationMs"] = json!(u64::MAX);
        r["usage"]["inputTokens"] = json!(u64::MAX);
        r["usage"]["outputTokens"] = json!(u64::MAX);
    }
    let out = ledger(&["--json"], &jsonl(&[a.clone(), b.clone()]));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let summary = |out: &Output| {
        records(out)
            .into_iter()
            .find(|v| v["type"] == "ledger-summary")
            .unwrap()
    };
    assert_eq!(summary(&out)["pass"], 1);
    let t = run_with_stdin(
        Command::new(bin("panel-tally")).arg("--json"),
        &jsonl(&[a.clone(), b.clone()]),
    );
    assert_eq!(t.status.code(), Some(0), "{}", stderr(&t));
    // Five judges said, two recorded.
    for r in [&mut a, &mut b] {
        r["panelSize"] = json!(5);
    }
    for args in [
        &["--json"][..],
        &["--json", "--agree", "2"],
        &["--json", "--agree", "3"],
    ] {
        let out = ledger(args, &jsonl(&[a.clone(), b.clone()]));
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        let s = summary(&out);
        let want = if args.contains(&"2") { (1, 0) } else { (0, 1) };
        assert_eq!(
            (s["pass"].clone(), s["noDecision"].clone()),
            (json!(want.0), json!(want.1)),
            "{args:?}: {s}"
        );
    }
}

/// `panel-tally --ledger` with the history of `state` (XDG_STATE_HOME) and no PANEL_HISTORY.
fn ledger_of_history(state: &std::path::Path, args: &[&str]) -> Output {
    Command::new(bin("panel-tally"))
        .arg("--ledger")
        .args(args)
        .env_remove("PANEL_HISTORY")
        .env("XDG_STATE_HOME", state)
        .current_dir(state)
        .output()
        .unwrap()
}

/// "`panel-tally --ledger` without a file reads nothing, though the README says the history is
/// what it reads": with no file it reads the history panel-judge appends to, as --history does.
#[test]
fn without_a_file_the_ledger_reads_the_history() {
    let tmp = TempDir::new("ledger-history");
    let state = tmp.path().join("state");
    std::fs::create_dir_all(state.join("panel")).unwrap();
    std::fs::copy(root().join(HISTORY), state.join("panel/history.jsonl")).unwrap();
    let out = ledger_of_history(&state, &["--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let from_file = Command::new(bin("panel-tally"))
        .args(["--ledger", "--json", HISTORY])
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(stdout(&out), stdout(&from_file));
    assert_eq!(stderr(&out), "");
    // Standard input is read when named, `-`, or when it is a pipe (as ripgrep decides).
    let records = std::fs::read(root().join(HISTORY)).unwrap();
    for args in [&["--ledger", "--json", "-"][..], &["--ledger", "--json"]] {
        let piped = run_with_stdin(
            Command::new(bin("panel-tally"))
                .args(args)
                .env("XDG_STATE_HOME", tmp.path().join("none")),
            &records,
        );
        assert_eq!(stdout(&piped), stdout(&from_file), "{}", stderr(&piped));
    }
    // No history: one line, exit 2.
    for (var, want) in [
        ("off", "none is kept (PANEL_HISTORY=off)"),
        ("/no/such/history.jsonl", "no history there"),
    ] {
        let out = Command::new(bin("panel-tally"))
            .arg("--ledger")
            .env("PANEL_HISTORY", var)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
        assert!(stderr(&out).contains(want), "{}", stderr(&out));
    }
}

/// "The history mixes every run on the machine, with no way to keep to one's own": --since,
/// --seat, --run and --candidate keep the ledger to some of its panels, each kept whole.
#[test]
fn the_ledger_keeps_to_a_time_a_seat_a_run_or_a_candidate() {
    let tmp = TempDir::new("ledger-select");
    let state = tmp.path().join("state");
    std::fs::create_dir_all(state.join("panel")).unwrap();
    // Three panels: an old run, a run of now (both named as panel names run folders, and gone),
    // and an --out folder that is still there.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let stamp = Command::new("date")
        .args(["-u", "-d", &format!("@{now}"), "+%Y%m%dT%H%M%SZ"])
        .output()
        .unwrap();
    let stamp = String::from_utf8(stamp.stdout).unwrap();
    let old = "/gone/panel/runs/20200101T000000Z-0123456789ab".to_string();
    let new = format!("/gone/panel/runs/{}-abcdef012345", stamp.trim());
    let out_dir = tmp.path().join("out").display().to_string();
    std::fs::create_dir_all(&out_dir).unwrap();
    let work = tmp.path().join("work");
    std::fs::create_dir_all(work.join("docs")).unwrap();
    std::fs::write(work.join("docs/page.md"), "the page\n").unwrap();
    let page = format!("sha256:{}", crate::util::sha256_hex(b"the page\n"));
    let panel = |run: &str, seats: [&str; 2], candidate: &str| {
        seats.map(|s| {
            let mut r = rec(s, "correctness", "holds", run);
            r["candidate"] = candidate.into();
            r
        })
    };
    let mut recs = Vec::new();
    recs.extend(panel(&old, ["claude:haiku", "codex:gpt-5"], "sha256:aa01"));
    recs.extend(panel(&new, ["claude:sonnet", "codex:gpt-5"], &page));
    recs.extend(panel(
        &out_dir,
        ["claude:haiku", "opencode:x"],
        "sha256:bb02",
    ));
    // A canary of the old run goes with it.
    let mut canary = rec("claude:haiku", "correctness", "breaks", &old);
    canary["judge"] = "canary-1".into();
    canary["canary"] = "breaks".into();
    canary["candidate"] = "sha256:cc03".into();
    recs.push(canary);
    std::fs::write(state.join("panel/history.jsonl"), jsonl(&recs)).unwrap();

    // What a filtered ledger counts: its records, panels, canaries, and the seats in it.
    let kept = |args: &[&str]| -> (u64, u64, u64, Vec<String>) {
        let out = ledger_of_history(&state, &[&["--json"][..], args].concat());
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        let recs = records(&out);
        let s = recs.iter().find(|r| r["type"] == "ledger-summary").unwrap();
        let seats = recs
            .iter()
            .filter(|r| r["scope"] == "seat")
            .map(|r| r["name"].as_str().unwrap().to_string())
            .collect();
        let n = |k: &str| s[k].as_u64().unwrap();
        (n("records"), n("panels"), n("canaries"), seats)
    };
    let seats = |s: &[&str]| s.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(kept(&[]).0, 7);
    assert_eq!(
        kept(&["--seat", "claude:haiku"]),
        (
            5,
            2,
            1,
            seats(&["claude:haiku", "codex:gpt-5", "opencode:x"])
        )
    );
    assert_eq!(
        kept(&["--seat", "claude:sonnet", "--seat", "opencode:x"]).1,
        2
    );
    assert_eq!(
        kept(&["--run", "0123456789ab"]),
        (3, 1, 1, seats(&["claude:haiku", "codex:gpt-5"]))
    );
    assert_eq!(kept(&["--run", "20200101T000000Z-0123456789ab"]).0, 3);
    assert_eq!(kept(&["--run", &old]).0, 3);
    assert_eq!(kept(&["--run", &out_dir, "--run", &new]).1, 2);
    // --since: a run's time is in its folder's name, gone or not; else the folder's own time.
    assert_eq!(kept(&["--since", "1h"]).1, 2);
    assert_eq!(kept(&["--since", "24h", "--seat", "codex:gpt-5"]).1, 1);
    assert_eq!(kept(&["--since", "2019-12-31"]).1, 3);
    assert_eq!(kept(&["--since", "2020-01-01T00:00:01Z"]).1, 2);
    // A candidate: a file (its seal), a folder of work (its files' seals), a seal's start.
    let file = work.join("docs/page.md");
    assert_eq!(
        kept(&["--candidate", file.to_str().unwrap()]),
        (2, 1, 0, seats(&["claude:sonnet", "codex:gpt-5"]))
    );
    let work = work.to_str().unwrap();
    assert_eq!(kept(&["--candidate", work]).1, 1);
    assert_eq!(
        kept(&["--candidate", "aa01"]),
        (3, 1, 1, seats(&["claude:haiku", "codex:gpt-5"]))
    );
    assert_eq!(
        kept(&["--candidate", work, "--candidate", "sha256:bb"]).1,
        2
    );

    // Bad values, and a filter that keeps nothing: one line, exit 2.
    for (args, want) in [
        (&["--since", "yesterday"][..], "not an RFC 3339 time"),
        (&["--since", "7y"], "nor an age (30m, 12h, 7d)"),
        (&["--seat", ":haiku"], "not a seat"),
        (&["--run", ""], "not a run"),
        (&["--candidate", "no-such-thing"], "no such file or folder"),
        (&["--seat", "claude:opus"], "no panel kept by"),
        (
            &["--candidate", work, "--seat", "claude:haiku"],
            "no panel kept by",
        ),
    ] {
        let out = ledger_of_history(&state, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert_eq!(
            stderr(&out).lines().count(),
            1,
            "{args:?}: {}",
            stderr(&out)
        );
        assert!(stderr(&out).contains(want), "{args:?}: {}", stderr(&out));
        assert_eq!(stdout(&out), "");
    }
    // The same filters read standard input, named.
    let piped = run_with_stdin(
        Command::new(bin("panel-tally")).args(["--ledger", "--json", "--run", "0123456789ab", "-"]),
        &jsonl(&recs),
    );
    assert_eq!(piped.status.code(), Some(0), "{}", stderr(&piped));
    assert!(
        stdout(&piped).contains("\"records\":3,"),
        "{}",
        stdout(&piped)
    );
    // And --history keeps to them as well.
    let out = Command::new(bin("panel-tally"))
        .args([
            "--history",
            "--run",
            "0123456789ab",
            "--seat",
            "claude:haiku",
        ])
        .env_remove("PANEL_HISTORY")
        .env("XDG_STATE_HOME", &state)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("== 2020-01-01T00:00:00Z candidate "),
        "{}",
        stdout(&out)
    );
    assert_eq!(stdout(&out).matches("\n== ").count(), 0, "{}", stdout(&out));
}

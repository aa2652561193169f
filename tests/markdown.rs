//! `panel-tally --format markdown`: each report kind as a pull request's comment, its structure
//! whatever the records say, rendered to HTML (and, where chromium is, to a screenshot).
//!
//! The examples under examples/markdown/ are the inputs; their `.md` renderings are committed
//! and never drift:
//!
//!     UPDATE_GENERATED=1 cargo test --test integration markdown
//!
//! and `UPDATE_SCREENSHOTS=1` writes the screenshots docs/guide.md shows.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::{TempDir, bin, root, skipped, stderr, stdout};

/// The text a hostile reason carries in the examples, as it must be shown: every character.
const SHOWN: &[&str] = &[
    "</details><details open><summary>",
    "@maintainer",
    "#123",
    "![x](http://evil.example/x.png)",
    "<img src=http://evil.example/y.png>",
    "`n | 0`",
];

/// One report kind of the examples: its name, panel-tally's arguments, the exit status.
struct Kind {
    name: &'static str,
    args: &'static [&'static str],
    status: i32,
    /// `<details>` sections it must hold.
    sections: usize,
}

const KINDS: &[Kind] = &[
    Kind {
        name: "verdicts",
        args: &["examples/markdown/verdicts.jsonl"],
        status: 1,
        sections: 3,
    },
    Kind {
        name: "each",
        args: &["--each", "examples/markdown/each.jsonl"],
        status: 1,
        sections: 5,
    },
    Kind {
        name: "reviews",
        args: &["examples/markdown/reviews.jsonl"],
        status: 1,
        sections: 5,
    },
    Kind {
        name: "synthesis",
        args: &["examples/markdown/synthesis.jsonl"],
        status: 1,
        sections: 4,
    },
    Kind {
        name: "pr",
        args: &[
            "--pr",
            "--plan",
            "examples/markdown/pr-plan.jsonl",
            "examples/markdown/pr-verdicts.jsonl",
        ],
        status: 0,
        sections: 1,
    },
    Kind {
        name: "ledger",
        args: &["--ledger", "examples/markdown/ledger.jsonl"],
        status: 0,
        sections: 2,
    },
    Kind {
        name: "gold",
        args: &[
            "--ledger",
            "--gold",
            "examples/markdown/gold-labels.jsonl",
            "examples/markdown/ledger.jsonl",
        ],
        status: 0,
        sections: 3,
    },
    Kind {
        name: "pairwise",
        args: &["examples/markdown/pairwise.jsonl"],
        status: 0,
        sections: 1,
    },
];

/// panel-tally's Markdown of one kind, checked for its exit status.
fn markdown_of(kind: &Kind) -> String {
    let out = Command::new(bin("panel-tally"))
        .current_dir(root())
        .args(["--format", "markdown"])
        .args(kind.args)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(kind.status),
        "{}: {}",
        kind.name,
        stderr(&out)
    );
    stdout(&out)
}

/// GitHub-flavoured Markdown to HTML, as far as pulldown-cmark goes (tables, strikethrough).
fn html_of(md: &str) -> String {
    use pulldown_cmark::{Options, Parser, html};
    let mut out = String::new();
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    html::push_html(&mut out, Parser::new_ext(md, options));
    out
}

/// The text an HTML page shows: its tags dropped, its character references decoded, its
/// zero-width spaces gone.
fn shown_text(html: &str) -> String {
    let mut text = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            c if !in_tag => text.push(c),
            _ => {}
        }
    }
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        let tail = &rest[i + 1..];
        let end = tail.find(';').filter(|&e| e < 10);
        let decoded = end.and_then(|e| match &tail[..e] {
            "lt" => Some('<'),
            "gt" => Some('>'),
            "amp" => Some('&'),
            "quot" => Some('"'),
            n if n.starts_with('#') => n[1..].parse().ok().and_then(char::from_u32),
            _ => None,
        });
        match (decoded, end) {
            (Some(c), Some(e)) => {
                out.push(c);
                rest = &tail[e + 1..];
            }
            _ => {
                out.push('&');
                rest = tail;
            }
        }
    }
    out.push_str(rest);
    out
}

/// `html` without what its `<code>` elements hold.
fn outside_code(html: &str) -> String {
    let mut out = String::new();
    let mut rest = html;
    while let Some(i) = rest.find("<code>") {
        out.push_str(&rest[..i]);
        let end = rest[i..].find("</code>").expect("a <code> is closed");
        rest = &rest[i + end + "</code>".len()..];
    }
    out + rest
}

/// What is wrong with `md` as a comment: unbalanced sections, a tag, image or link that the
/// records put there, a mention or issue reference GitHub would act on.
fn structure_faults(md: &str, sections: usize) -> Vec<String> {
    let mut faults = Vec::new();
    let (open, close) = (
        md.matches("<details>").count(),
        md.matches("</details>").count(),
    );
    if open != sections || close != sections {
        faults.push(format!(
            "{open} <details> and {close} </details> in the Markdown, {sections} wanted"
        ));
    }
    // Balanced in order: never a close before its open.
    let mut depth = 0i32;
    for line in md.lines() {
        depth += line.matches("<details>").count() as i32;
        depth -= line.matches("</details>").count() as i32;
        if !(0..=1).contains(&depth) {
            faults.push(format!("sections nest or close early at {line:?}"));
        }
    }
    let html = html_of(md);
    for tag in ["<img", "<a ", "<script", "<details open", "<h1"] {
        if html.contains(tag) {
            faults.push(format!("{tag} in the HTML"));
        }
    }
    if html.matches("<details>").count() != sections {
        faults.push(format!(
            "{} sections in the HTML",
            html.matches("<details>").count()
        ));
    }
    // GitHub reads no mention or reference inside `code`: a name is shown there as it is.
    let text: Vec<char> = shown_text(&outside_code(&html)).chars().collect();
    for (i, c) in text.iter().enumerate() {
        let next = text.get(i + 1).copied().unwrap_or(' ');
        if (*c == '@' && (next.is_alphanumeric() || next == '_'))
            || (*c == '#' && next.is_ascii_digit())
        {
            let around: String = text[i.saturating_sub(10)..(i + 12).min(text.len())]
                .iter()
                .collect();
            faults.push(format!("a live {c} in {around:?}"));
        }
    }
    faults
}

#[test]
fn each_report_kind_is_a_safe_comment_that_shows_the_hostile_text() {
    for kind in KINDS {
        let md = markdown_of(kind);
        // The decision comes first.
        assert!(
            md.starts_with("### ") || md.starts_with("## "),
            "{}: {md}",
            kind.name
        );
        let faults = structure_faults(&md, kind.sections);
        assert!(faults.is_empty(), "{}: {faults:#?}\n{md}", kind.name);
        // The hostile reason is shown, every character of it.
        let shown = shown_text(&html_of(&md)).replace('\u{200b}', "");
        for piece in SHOWN {
            assert!(
                shown.contains(piece),
                "{}: {piece:?} is not shown:\n{shown}",
                kind.name
            );
        }
    }
}

#[test]
fn the_structure_check_catches_what_it_must() {
    // The checks themselves: each fault the escaping prevents is found when it is there.
    let good = "<details><summary>x</summary>\n\nbody\n\n</details>\n";
    assert!(structure_faults(good, 1).is_empty());
    for bad in [
        "<details><summary>x</summary>\n\n</details></details>\n",
        "<details><summary>x</summary>\n\ncc @someone\n\n</details>\n",
        "<details><summary>x</summary>\n\nsee #12\n\n</details>\n",
        "<details><summary>x</summary>\n\n![x](http://e/x.png)\n\n</details>\n",
        "<details><summary>x</summary>\n\n[x](http://e/)\n\n</details>\n",
    ] {
        assert!(!structure_faults(bad, 1).is_empty(), "{bad}");
    }
}

/// A judge's name is shown in `<code>`, so that the name copied from the comment is the name:
/// no zero-width space after its `@`, and still no mention.
#[test]
fn a_judges_name_copies_as_it_is() {
    let name = "correctness@claude-haiku";
    let records = std::fs::read_to_string(root().join("examples/markdown/verdicts.jsonl"))
        .unwrap()
        .replace(
            "\"judge\":\"correctness\"",
            &format!("\"judge\":\"{name}\""),
        );
    let out = crate::util::run_with_stdin(
        Command::new(bin("panel-tally")).args(["--format", "markdown"]),
        records.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let html = html_of(&stdout(&out));
    let copied: Vec<String> = html
        .split("<code>")
        .skip(1)
        .map(|c| shown_text(&c[..c.find("</code>").unwrap()]))
        .collect();
    // The table's cell and the reason's summary.
    assert_eq!(copied.iter().filter(|c| *c == name).count(), 2, "{html}");
    assert!(structure_faults(&stdout(&out), 3).is_empty());
}

#[test]
fn each_puts_the_decision_over_all_panels_first() {
    let md = markdown_of(&KINDS[1]);
    let first = md.lines().next().unwrap();
    assert_eq!(first, "## ❌ Panels: fail");
    assert!(
        md.contains("**PANELS: 1 passed, 1 failed, 0 undecided**"),
        "{md}"
    );
    let panels: Vec<usize> = md.match_indices("### ").map(|(i, _)| i).collect();
    assert_eq!(panels.len(), 2, "{md}");
    assert!(md[panels[1]..].starts_with("### ✅ Panel: pass"), "{md}");
}

#[test]
fn format_json_is_the_json_flag_and_the_two_cannot_be_mixed() {
    let run = |args: &[&str]| {
        Command::new(bin("panel-tally"))
            .current_dir(root())
            .args(args)
            .arg("examples/markdown/verdicts.jsonl")
            .output()
            .unwrap()
    };
    let (flag, format) = (run(&["--json"]), run(&["--format", "json"]));
    assert_eq!(flag.status.code(), Some(1));
    assert_eq!(stdout(&flag), stdout(&format));
    assert!(stdout(&flag).starts_with("{\"type\":\"tally\""));
    let text = run(&["--format", "text"]);
    assert_eq!(stdout(&text), stdout(&run(&[])));
    let mixed = run(&["--json", "--format", "markdown"]);
    assert_eq!(mixed.status.code(), Some(2), "{}", stderr(&mixed));
    let view = run(&["--view", "writer", "--format", "markdown"]);
    assert_eq!(view.status.code(), Some(2), "{}", stderr(&view));
}

#[test]
fn the_example_renderings_do_not_drift() {
    let update = std::env::var_os("UPDATE_GENERATED").is_some();
    let mut stale = Vec::new();
    for kind in KINDS {
        let path = root().join(format!("examples/markdown/{}.md", kind.name));
        let md = markdown_of(kind);
        if std::fs::read_to_string(&path).ok().as_deref() != Some(md.as_str()) {
            if update {
                std::fs::write(&path, &md).unwrap();
            } else {
                stale.push(path.display().to_string());
            }
        }
    }
    let guide = std::fs::read_to_string(root().join("docs/guide.md")).unwrap();
    let shown = format!("```markdown\n{}```", markdown_of(&KINDS[0]));
    assert!(
        guide.contains(&shown),
        "docs/guide.md shows another verdicts.md: update it"
    );
    assert!(
        stale.is_empty(),
        "stale {stale:?}: run `UPDATE_GENERATED=1 cargo test --test integration markdown` and commit them"
    );
}

/// A page that shows `html` as GitHub shows a comment, every section open.
fn page(html: &str) -> String {
    format!(
        "<!doctype html><meta charset=utf-8><style>\
         body{{font:14px/1.5 -apple-system,'Segoe UI',Helvetica,Arial,sans-serif;color:#1f2328;\
         margin:16px;max-width:880px}}\
         table{{border-collapse:collapse;margin:8px 0}}th,td{{border:1px solid #d1d9e0;padding:4px 12px}}\
         th{{background:#f6f8fa}}details{{margin:6px 0}}summary{{cursor:pointer}}\
         code{{background:#eff1f3;padding:1px 4px;border-radius:4px}}h2,h3{{margin:8px 0}}\
         </style><div class=comment>{}</div>",
        html.replace("<details>", "<details open>")
    )
}

/// A chromium, when this machine has one.
fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|name| {
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
                .map(|d| d.join(name))
                .find(|p| p.is_file())
        })
}

/// A headless screenshot of `html_file` into `png`, `height` pixels tall.
fn screenshot(chromium: &Path, html_file: &Path, png: &Path, height: usize) {
    let out = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            &format!("--screenshot={}", png.display()),
            &format!("--window-size=920,{height}"),
        ])
        .arg(format!("file://{}", html_file.display()))
        .env("HOME", html_file.parent().unwrap())
        .output()
        .unwrap();
    assert!(out.status.success(), "chromium: {}", stderr(&out));
}

#[test]
fn each_report_kind_renders_in_a_browser() {
    let Some(chromium) = chromium() else {
        skipped(
            "chromium",
            "no chromium",
            "markdown: no chromium on PATH; the report screenshots are not taken (apt-get install chromium)",
        );
        return;
    };
    let dir = TempDir::new("markdown-shots");
    let keep = std::env::var_os("UPDATE_SCREENSHOTS").is_some();
    for kind in KINDS {
        let html = page(&html_of(&markdown_of(kind)));
        let file = dir.path().join(format!("{}.html", kind.name));
        std::fs::write(&file, &html).unwrap();
        let png = dir.path().join(format!("{}.png", kind.name));
        // Tall enough for the open sections; the page is white below them.
        let count = |tag: &str| html.matches(tag).count();
        let height =
            120 + 40 * count("<tr>") + 48 * (count("<p>") + count("<details") + count("<h"));
        screenshot(&chromium, &file, &png, height);
        let bytes = std::fs::read(&png).unwrap();
        assert!(
            bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
            "{}: not a PNG",
            kind.name
        );
        // A blank page compresses to a few kilobytes; a rendered report does not.
        assert!(bytes.len() > 10_000, "{}: {} bytes", kind.name, bytes.len());
        if keep {
            std::fs::copy(
                &png,
                root().join(format!("examples/markdown/{}.png", kind.name)),
            )
            .unwrap();
        }
    }
}

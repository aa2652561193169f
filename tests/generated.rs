//! The man pages and completions are generated from the clap definitions, panel(7) from its
//! source in the library, the record schemas from the record types; all are committed, and
//! this test fails when they drift. Refresh them with:
//!
//!     UPDATE_GENERATED=1 cargo test --test integration generated

use std::path::PathBuf;

use clap_complete::Shell;

use crate::util::root;

fn tools() -> Vec<(clap::Command, &'static panel::tools::docs::ToolDoc)> {
    vec![
        (panel::tools::judge::command(), &panel::tools::judge::DOC),
        (panel::tools::tally::command(), &panel::tools::tally::DOC),
        (panel::tools::merge::command(), &panel::tools::merge::DOC),
        (panel::tools::vote::command(), &panel::tools::vote::DOC),
        (
            panel::tools::pr_classify::command(),
            &panel::tools::pr_classify::DOC,
        ),
    ]
}

/// Every generated file and what it must hold.
fn rendered() -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    // The five tools, and the bash tools (their shape in panel::tools::scripts): the same page
    // but for DESCRIPTION, which a bash tool's page takes from its own --help, and OPTIONS,
    // which that help already describes.
    let scripts = panel::tools::scripts::commands();
    let script_names: Vec<String> = scripts.iter().map(|(c, _)| c.get_name().into()).collect();
    for (mut cmd, doc) in tools().into_iter().chain(scripts) {
        cmd.build();
        let name = cmd.get_name().to_string();
        // clap's own sections, then our EXIT STATUS and EXAMPLES.
        let page = clap_mangen::Man::new(cmd.clone());
        let mut man = Vec::new();
        page.render_title(&mut man).unwrap();
        page.render_name_section(&mut man).unwrap();
        page.render_synopsis_section(&mut man).unwrap();
        if script_names.contains(&name) {
            let about = cmd.get_about().unwrap().to_string();
            let description = panel::tools::scripts::description_roff(&script_help(&name), &about);
            man.extend_from_slice(description.as_bytes());
        } else {
            page.render_description_section(&mut man).unwrap();
            page.render_options_section(&mut man).unwrap();
        }
        if cmd.get_subcommands().next().is_some() {
            page.render_subcommands_section(&mut man).unwrap();
        }
        man.extend_from_slice(doc.roff().as_bytes());
        man.extend_from_slice(panel::tools::docs::see_also(&name).as_bytes());
        page.render_version_section(&mut man).unwrap();
        out.push((root().join("man").join(format!("{name}.1")), man));
        out.extend(completions(&mut cmd));
    }
    out.push((
        root().join("man/panel.7"),
        panel::tools::suite_page::page().into_bytes(),
    ));
    for s in panel::tools::schemas::schemas() {
        out.push((
            root().join("schemas").join(s.file_name()),
            s.text().into_bytes(),
        ));
    }
    out
}

/// A tool's completions for bash, zsh and fish; an option whose value is a seat completes the
/// harness names.
fn completions(cmd: &mut clap::Command) -> Vec<(PathBuf, Vec<u8>)> {
    let name = cmd.get_name().to_string();
    let seats = panel::tools::completions::seat_options(cmd);
    let mut out = Vec::new();
    for (shell, file) in [
        (Shell::Bash, format!("{name}.bash")),
        (Shell::Zsh, format!("_{name}")),
        (Shell::Fish, format!("{name}.fish")),
    ] {
        let mut buf = Vec::new();
        clap_complete::generate(shell, cmd, &name, &mut buf);
        let script = String::from_utf8(buf).unwrap();
        let script =
            panel::tools::completions::with_harness_names(&shell.to_string(), &script, &seats)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        out.push((root().join("completions").join(file), script.into_bytes()));
    }
    out
}

/// What `bin/NAME --help` prints.
fn script_help(name: &str) -> String {
    let out = std::process::Command::new(root().join("bin").join(name))
        .arg("--help")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{name} --help");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn clap_definitions_are_sound() {
    for (cmd, _) in tools() {
        cmd.debug_assert();
    }
}

#[test]
fn man_pages_and_completions_match_the_clap_definitions() {
    let update = std::env::var_os("UPDATE_GENERATED").is_some();
    let mut stale = Vec::new();
    for (path, want) in rendered() {
        if std::fs::read(&path).ok().as_deref() == Some(&want[..]) {
            continue;
        }
        if update {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &want).unwrap();
        } else {
            stale.push(path.strip_prefix(root()).unwrap().display().to_string());
        }
    }
    // A schema file no record type renders any more is stale too.
    let rendered: Vec<PathBuf> = rendered().into_iter().map(|(p, _)| p).collect();
    for entry in std::fs::read_dir(root().join("schemas")).unwrap().flatten() {
        if !rendered.contains(&entry.path()) {
            if update {
                std::fs::remove_file(entry.path()).unwrap();
            } else {
                stale.push(format!("schemas/{}", entry.file_name().to_string_lossy()));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "stale generated files {stale:?}: run `UPDATE_GENERATED=1 cargo test --test integration generated` and commit them"
    );
}

/// The harness table in docs/guide.md, rendered from the built-in rows (src/engine/harness/builtin.json).
fn harness_table() -> String {
    let rows: Vec<serde_json::Value> = serde_json::from_str(
        &std::fs::read_to_string(root().join("src/engine/harness/builtin.json")).unwrap(),
    )
    .unwrap();
    let cut = |text: &str, n: usize| -> String {
        if text.chars().count() <= n {
            text.to_string()
        } else {
            format!("{}…", text.chars().take(n).collect::<String>())
        }
    };
    // A table cell: pipes escaped, so Markdown keeps the columns.
    let cell = |text: &str| text.replace('|', "\\|");
    let mut out = String::from(
        "| harness | executable | proven on the real CLI | schema | answer | lockdown | logins, in the CLI's order |\n\
         | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    for r in &rows {
        let s = |k: &str| r[k].as_str().unwrap_or_default();
        let argv = r["argv"].to_string();
        let schema = if argv.contains("{schema") {
            "yes"
        } else {
            "in the prompt"
        };
        let proven = if r["verified"] == true {
            "yes"
        } else {
            "**no** (not installable here; built from its documentation)"
        };
        let answer = match (s("answer"), s("filter")) {
            ("file", "") => "file".to_string(),
            ("file", f) => format!("file through `{}`", cell(&cut(f, 60))),
            (_, "") => "stdout".to_string(),
            (_, f) => format!("stdout through `{}`", cell(&cut(f, 60))),
        };
        // Its logins in the CLI's own order, a refreshed one marked.
        let logins: Vec<String> = r["logins"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|l| {
                let kind = l["kind"].as_str().unwrap();
                match l.get("refresh").is_some() {
                    true => format!("`{kind}` (refreshed)"),
                    false => format!("`{kind}`"),
                }
            })
            .collect();
        let login = match logins.is_empty() {
            true => "—".to_string(),
            false => logins.join(", "),
        };
        let exe = match s("executable") {
            "" => "—",
            e => e,
        };
        out.push_str(&format!(
            "| {} | `{exe}` | {proven} | {schema} | {answer} | {} | {login} |\n",
            s("name"),
            cell(s("lockdown")),
        ));
    }
    out
}

#[test]
fn the_readme_harness_table_is_the_built_in_rows() {
    crate::util::doc_section(
        "<!-- harness-table -->\n",
        "<!-- /harness-table -->",
        &harness_table(),
        "generated",
    );
}

/// Issue 25: "Every tool answers `--help` and `-h` with exit 0": the bash tools too (getopts
/// alone took `--help` for an illegal option).
#[test]
fn every_bash_tool_answers_help_with_exit_0() {
    for entry in std::fs::read_dir(crate::util::root().join("bin")).unwrap() {
        let tool = entry.unwrap().path();
        for flag in ["--help", "-h"] {
            let out = std::process::Command::new(&tool)
                .arg(flag)
                .stdin(std::process::Stdio::null())
                .output()
                .unwrap();
            let name = tool.file_name().unwrap().to_string_lossy();
            assert_eq!(
                out.status.code(),
                Some(0),
                "{name} {flag}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(
                String::from_utf8_lossy(&out.stdout).contains("Usage"),
                "{name} {flag}"
            );
        }
    }
}

/// The options a script's `--help` names: the `--long` and `-s` words of its `Usage:` line and
/// those that start a line (an options table, a paragraph about one), `-h`/`--help` left out.
fn options_named(help: &str) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    for line in help.lines() {
        let words: Vec<&str> = if line.starts_with("Usage:") {
            line.split_whitespace().collect()
        } else {
            line.split_whitespace().take(1).collect()
        };
        for w in words {
            let w = w.trim_matches(|c| c == '[' || c == ']' || c == ',' || c == '.');
            let long = w.strip_prefix("--").is_some_and(|r| {
                r.len() > 1 && r.chars().all(|c| c.is_ascii_lowercase() || c == '-')
            });
            let short = w.len() == 2
                && w.starts_with('-')
                && w.chars().nth(1).is_some_and(|c| c.is_ascii_alphabetic());
            if (long || short) && w != "-h" && w != "--help" {
                out.insert(w.to_string());
            }
        }
    }
    out
}

/// Issue 25: "Every tool … has a man page and completions": the bash tools too, generated
/// from a shape (panel::tools::scripts) that is checked against each script's own --help.
#[test]
fn every_bash_tool_has_a_man_page_and_completions_that_match_its_help() {
    for (cmd, _) in panel::tools::scripts::commands() {
        let name = cmd.get_name().to_string();
        for file in [
            format!("man/{name}.1"),
            format!("completions/{name}.bash"),
            format!("completions/_{name}"),
            format!("completions/{name}.fish"),
        ] {
            assert!(root().join(&file).is_file(), "{file} is missing");
        }
        let help = script_help(&name);
        assert_eq!(
            help.lines().next().map(|l| l.trim_end_matches('.')),
            cmd.get_about().map(|a| a.to_string()).as_deref(),
            "{name}: its --help's first line is the page's NAME"
        );
        let mut shape = std::collections::BTreeSet::new();
        for arg in cmd.get_arguments() {
            if let Some(long) = arg.get_long().filter(|l| *l != "help") {
                shape.insert(format!("--{long}"));
            }
            if let Some(short) = arg.get_short().filter(|s| *s != 'h') {
                shape.insert(format!("-{short}"));
            }
        }
        assert_eq!(
            shape,
            options_named(&help),
            "{name}: the options of its shape (src/tools/scripts.rs) and of its --help"
        );
        let page = std::fs::read_to_string(root().join(format!("man/{name}.1"))).unwrap();
        assert!(page.contains(".SH \"EXIT STATUS\""), "{name}");
    }
}

/// Issue 25: "`--seat` completes harness names (from `--list-harnesses`), not file names".
/// Bash's completion is run as bash runs it, with the built panel-judge on PATH, in a folder
/// whose files start like the harness names; zsh's and fish's call the same list.
#[test]
fn a_seat_completes_the_harness_names_not_file_names() {
    let tmp = crate::util::TempDir::new("seat-completion");
    std::fs::write(tmp.path().join("cfile"), "").unwrap();
    let bin = crate::util::bin("panel-judge");
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for (tool, words) in [
        ("panel-judge", "panel-judge --seat c"),
        ("panel-vote", "panel-vote --judge c"),
        ("panel-merge", "panel-merge --seat c"),
        ("review-battery", "review-battery --seat c"),
    ] {
        let script = format!(
            "source {file}
             f=$(complete -p {tool} | sed -n 's/.*-F \\([^ ]*\\) .*/\\1/p')
             COMP_LINE='{words}'; COMP_POINT=${{#COMP_LINE}}
             read -ra COMP_WORDS <<<\"$COMP_LINE\"; COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1))
             \"$f\" {tool} c \"${{COMP_WORDS[COMP_CWORD-1]}}\"
             printf '%s\\n' \"${{COMPREPLY[@]}}\" | sort
",
            file = crate::util::sh_word(&root().join(format!("completions/{tool}.bash")))
        );
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(&script)
            .current_dir(tmp.path())
            .env("PATH", &path)
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "claude\ncodex\ncopilot\ncursor\n",
            "{tool}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    for tool in ["panel-judge", "panel-vote", "panel-merge", "review-battery"] {
        let zsh = std::fs::read_to_string(root().join(format!("completions/_{tool}"))).unwrap();
        assert!(zsh.contains(":_panel_harnesses' \\\n"), "_{tool}");
        let fish =
            std::fs::read_to_string(root().join(format!("completions/{tool}.fish"))).unwrap();
        let seat = fish
            .lines()
            .find(|l| l.contains(" -l seat ") || l.contains(" -l judge "))
            .unwrap();
        assert!(seat.ends_with(" -f -a \"(__panel_harnesses)\""), "{seat}");
    }
}

/// Issue 25: "Give the suite one install path for everything … binaries, bash tools, man
/// pages, completions for bash, zsh and fish."
#[test]
fn one_install_puts_every_tool_page_and_completion_where_they_are_looked_for() {
    let tmp = crate::util::TempDir::new("install");
    let prefix = tmp.path().join("prefix");
    let built = crate::util::bin("panel-judge");
    let out = std::process::Command::new(root().join("scripts/install"))
        .arg("--prefix")
        .arg(&prefix)
        .arg("--built")
        .arg(built.parent().unwrap())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tools = [
        "panel-judge",
        "panel-tally",
        "panel-merge",
        "panel-vote",
        "pr-classify",
    ];
    let mut want: Vec<String> = Vec::new();
    for t in tools {
        want.push(format!("bin/{t}"));
        want.push(format!("share/man/man1/{t}.1"));
        want.push(format!("share/bash-completion/completions/{t}"));
        want.push(format!("share/zsh/site-functions/_{t}"));
        want.push(format!("share/fish/vendor_completions.d/{t}.fish"));
    }
    for t in [
        "judge-panel",
        "review-battery",
        "pr-review",
        "panel-fleet",
        "panel-calibrate",
    ] {
        want.push(format!("bin/{t}"));
        want.push(format!("share/man/man1/{t}.1"));
        want.push(format!("share/bash-completion/completions/{t}"));
        want.push(format!("share/zsh/site-functions/_{t}"));
        want.push(format!("share/fish/vendor_completions.d/{t}.fish"));
    }
    want.push("share/man/man7/panel.7".into());
    // What gives the judges their jail back where AppArmor refuses user namespaces: the doctor
    // names it there.
    want.push("share/panel/apparmor".into());
    for set in ["llmbar-natural", "summedits-sales-email"] {
        for f in [
            "items.jsonl",
            "labels.jsonl",
            "set.json",
            "standin.jsonl",
            "LICENSE",
            "SOURCE",
        ] {
            want.push(format!("share/panel/gold/{set}/{f}"));
        }
    }
    for w in want {
        assert!(prefix.join(&w).is_file(), "{w} was not installed");
    }
    // What it installed runs.
    let help = std::process::Command::new(prefix.join("bin/panel-fleet"))
        .arg("--help")
        .output()
        .unwrap();
    assert_eq!(help.status.code(), Some(0));
    // panel-calibrate finds the installed sets beside it, away from the checkout.
    let dry = std::process::Command::new(prefix.join("bin/panel-calibrate"))
        .args(["--dry-run", "--replay", "--limit", "2"])
        .env(
            "PATH",
            format!(
                "{}:{}",
                prefix.join("bin").display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert_eq!(
        dry.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&dry.stderr)
    );
    assert!(String::from_utf8_lossy(&dry.stdout).contains("2 items"));
}

/// Issue 25: "Put the user's path first in a README of at most about 250 lines: what it is, the
/// two set-up commands, the pipelines, isolation in a paragraph, where to read more."
#[test]
fn the_readme_is_the_users_path_first() {
    let readme = std::fs::read_to_string(crate::util::root().join("README.md")).unwrap();
    assert!(
        readme.lines().count() <= 250,
        "{} lines",
        readme.lines().count()
    );
    let heads: Vec<&str> = readme.lines().filter(|l| l.starts_with("## ")).collect();
    let at = |h: &str| {
        heads
            .iter()
            .position(|x| *x == h)
            .unwrap_or_else(|| panic!("no {h}"))
    };
    assert!(at("## Set up") < at("## The pipelines"));
    assert!(at("## The pipelines") < at("## Isolation"));
    assert!(at("## Isolation") < at("## Read more"));
    // The first command is the one-liner that installs and runs the example offline.
    let first = readme
        .split("```bash\n")
        .nth(1)
        .unwrap()
        .lines()
        .next()
        .unwrap();
    assert!(
        first.starts_with("cargo install --locked --path . && ") && first.contains("replay:"),
        "{first}"
    );
    // Every page it sends the reader to is there.
    for word in readme.split(['`', ' ', '(', ')', ',', ';', ':']) {
        if word.starts_with("docs/") && word.ends_with(".md") && !word.contains('*') {
            assert!(crate::util::root().join(word).is_file(), "{word}");
        }
    }
}

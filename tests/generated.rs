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
            panel::tools::classify::command(),
            &panel::tools::classify::DOC,
        ),
    ]
}

/// Every generated file and what it must hold.
fn rendered() -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for (mut cmd, doc) in tools() {
        cmd.build();
        let name = cmd.get_name().to_string();
        // clap's own sections, then our EXIT STATUS and EXAMPLES.
        let page = clap_mangen::Man::new(cmd.clone());
        let mut man = Vec::new();
        page.render_title(&mut man).unwrap();
        page.render_name_section(&mut man).unwrap();
        page.render_synopsis_section(&mut man).unwrap();
        page.render_description_section(&mut man).unwrap();
        page.render_options_section(&mut man).unwrap();
        if cmd.get_subcommands().next().is_some() {
            page.render_subcommands_section(&mut man).unwrap();
        }
        man.extend_from_slice(doc.roff().as_bytes());
        man.extend_from_slice(panel::tools::docs::see_also(&name).as_bytes());
        page.render_version_section(&mut man).unwrap();
        out.push((root().join("man").join(format!("{name}.1")), man));
        for (shell, file) in [
            (Shell::Bash, format!("{name}.bash")),
            (Shell::Zsh, format!("_{name}")),
            (Shell::Fish, format!("{name}.fish")),
        ] {
            let mut buf = Vec::new();
            clap_complete::generate(shell, &mut cmd, &name, &mut buf);
            out.push((root().join("completions").join(file), buf));
        }
    }
    out.push((
        root().join("man/panel.7"),
        panel::tools::docs::suite_page().into_bytes(),
    ));
    for s in panel::tools::schemas::schemas() {
        out.push((
            root().join("schemas").join(s.file_name()),
            s.text().into_bytes(),
        ));
    }
    out
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

/// The README's harness table, rendered from the built-in rows (src/engine/harness/builtin.json).
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
        "| harness | executable | proven on the real CLI | schema | answer | lockdown | login carried in |\n\
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
        let files: Vec<String> = r["credentials"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| format!("`{}`", c["from"].as_str().unwrap()))
            .collect();
        let vars: Vec<String> = r["passEnv"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|v| format!("`{}`", v.as_str().unwrap()))
            .collect();
        let more = if vars.len() > 4 { " …" } else { "" };
        let vars = vars.into_iter().take(4).collect::<Vec<_>>().join(", ");
        let login = match (files.is_empty(), vars.is_empty()) {
            (true, true) => "—".to_string(),
            (false, true) => files.join(", "),
            (true, false) => format!("{vars}{more}"),
            (false, false) => format!("{}; {vars}{more}", files.join(", ")),
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
    crate::util::readme_section(
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
    for t in ["judge-panel", "review-battery", "pr-review", "panel-fleet"] {
        want.push(format!("bin/{t}"));
    }
    want.push("share/man/man7/panel.7".into());
    for w in want {
        assert!(prefix.join(&w).is_file(), "{w} was not installed");
    }
    // What it installed runs.
    let help = std::process::Command::new(prefix.join("bin/panel-fleet"))
        .arg("--help")
        .output()
        .unwrap();
    assert_eq!(help.status.code(), Some(0));
}

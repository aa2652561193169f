//! The man pages and completions are generated from the clap definitions and committed; this
//! test fails when they drift. Refresh them with:
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
            std::fs::write(&path, &want).unwrap();
        } else {
            stale.push(path.strip_prefix(root()).unwrap().display().to_string());
        }
    }
    assert!(
        stale.is_empty(),
        "stale generated files {stale:?}: run `UPDATE_GENERATED=1 cargo test --test integration generated` and commit them"
    );
}

//! The bash tools in `bin/` (judge-panel, review-battery, pr-review, panel-fleet,
//! panel-calibrate), described
//! as clap commands so that their man pages and completions are generated, and drift-tested,
//! as the five binaries' are. The scripts parse their own arguments; these commands are only
//! their shape (options, values, operands), and a test checks that each option here is one the
//! script's `--help` names and the other way round. A page's DESCRIPTION is the script's own
//! `--help` text ([`description_roff`]), so the page and the help cannot disagree.

use clap::{Arg, ArgAction, Command, ValueHint};

use crate::tools::docs::{SCRIPTS, ToolDoc, escape};

/// One script's command: its name, the one line it is about (NAME), and no version flag (the
/// scripts take none).
fn script(name: &'static str) -> Command {
    let about = SCRIPTS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, what)| *what)
        .unwrap_or_default();
    Command::new(name)
        .about(about.trim_end_matches('.'))
        .version(env!("CARGO_PKG_VERSION"))
        .disable_version_flag(true)
}

/// An option that takes one value.
fn option(long: &'static str, value: &'static str, help: &'static str) -> Arg {
    Arg::new(long)
        .long(long)
        .value_name(value)
        .action(ArgAction::Set)
        .help(help)
}

/// judge-panel's shape: one candidate, no options.
pub fn judge_panel() -> Command {
    script("judge-panel").arg(
        Arg::new("candidate")
            .value_name("FILE")
            .required(true)
            .value_hint(ValueHint::FilePath)
            .help("The file containing the answer under review"),
    )
}

/// review-battery's shape.
pub fn review_battery() -> Command {
    script("review-battery")
        .arg(
            option(
                "seat",
                "SEAT",
                "A reviewer's seat, HARNESS[:MODEL]; one per reviewer, in order",
            )
            .action(ArgAction::Append)
            .required(true),
        )
        .arg(option(
            "judge",
            "SEAT",
            "The judge: a seat, or replay:FILE for recorded decisions",
        ))
        .arg(
            option(
                "writer",
                "CMD",
                "The command that changes CANDIDATE between rounds (run with bash -c)",
            )
            .value_hint(ValueHint::CommandString),
        )
        .arg(
            option("brief", "FILE", "The brief the work was written to")
                .value_hint(ValueHint::FilePath),
        )
        .arg(option(
            "stage",
            "NAME",
            "Names the reviewers NAME-1, NAME-2, … (default: review)",
        ))
        .arg(option(
            "writer-family",
            "FAM",
            "The writer's model family: no reviewer may share it",
        ))
        .arg(option(
            "merge-seat",
            "SEAT",
            "The seat that groups the findings (default first: the first --seat; code: in code)",
        ))
        .arg(option(
            "agree",
            "N",
            "How many reviewers must pass the work (default: all)",
        ))
        .arg(option(
            "max-rounds",
            "N",
            "Stop after N rounds (default: 5; 0: no cap)",
        ))
        .arg(
            option("run", "DIR", "Keep every round's records under DIR")
                .value_hint(ValueHint::DirPath),
        )
        .arg(
            Arg::new("candidate")
                .value_name("CANDIDATE")
                .required(true)
                .value_hint(ValueHint::FilePath)
                .help("The work under review"),
        )
}

/// pr-review's shape.
pub fn pr_review() -> Command {
    script("pr-review")
        .arg(
            Arg::new("comment")
                .long("comment")
                .action(ArgAction::SetTrue)
                .help("Also post the verdict on the PR as one comment, edited by the next run"),
        )
        .arg(option(
            "base",
            "REF",
            "The checked-out branch's base (default: its upstream, else the default branch)",
        ))
        .arg(option(
            "repo",
            "OWNER/NAME",
            "The repository (default: GH_REPO, the origin remote, else local/FOLDER without a \
                remote)",
        ))
        .arg(
            Arg::new("pr")
                .value_name("PR")
                .help("The pull request's number (default: the checked-out branch)"),
        )
}

/// panel-fleet's shape: getopts' short options, the candidates, and panel-judge's options
/// after `--`.
pub fn panel_fleet() -> Command {
    let short = |id: &'static str, c: char, value: &'static str, help: &'static str| {
        Arg::new(id)
            .short(c)
            .value_name(value)
            .action(ArgAction::Set)
            .help(help)
    };
    script("panel-fleet")
        .arg(
            short(
                "out",
                'o',
                "OUT",
                "Where each candidate's panel lands: OUT/<name>/records.jsonl and OUT/<name>/run",
            )
            .required(true)
            .value_hint(ValueHint::DirPath),
        )
        .arg(short(
            "jobs",
            'j',
            "JOBS",
            "Panels at once on each machine (default 4)",
        ))
        .arg(
            short(
                "sshlogin",
                'S',
                "SSHLOGIN",
                "Run panels on this machine too (repeatable; ':' is here)",
            )
            .action(ArgAction::Append)
            .value_hint(ValueHint::Hostname),
        )
        .arg(
            short("list", 'a', "LIST", "A file of candidate paths, one a line")
                .value_hint(ValueHint::FilePath),
        )
        .arg(
            Arg::new("no-progress")
                .long("no-progress")
                .action(ArgAction::SetTrue)
                .help("Draw no status line on a terminal (panels done, judges running, time left)"),
        )
        .arg(
            Arg::new("candidates")
                .value_name("CANDIDATE")
                .num_args(0..)
                .value_hint(ValueHint::FilePath)
                .help("The candidates, one panel each"),
        )
        .arg(
            Arg::new("panel_judge")
                .value_name("PANEL-JUDGE-OPTIONS")
                .num_args(0..)
                .last(true)
                .allow_hyphen_values(true)
                .help("Options every panel-judge is given"),
        )
}

/// panel-calibrate's shape: its options, the seats, and panel-judge's options after `--`.
pub fn panel_calibrate() -> Command {
    let flag = |long: &'static str, help: &'static str| {
        Arg::new(long)
            .long(long)
            .action(ArgAction::SetTrue)
            .help(help)
    };
    let short = |id: &'static str, c: char, value: &'static str, help: &'static str| {
        Arg::new(id)
            .short(c)
            .value_name(value)
            .action(ArgAction::Set)
            .help(help)
    };
    script("panel-calibrate")
        .arg(
            option(
                "set",
                "SET",
                "The labelled set: llmbar-natural (the default), summedits-sales-email, or a \
                    folder",
            )
            .value_hint(ValueHint::DirPath),
        )
        .arg(flag(
            "replay",
            "The set's recorded stand-in answers in place of seats, offline (made from the labels, \
                not by a model)",
        ))
        .arg(flag(
            "dry-run",
            "Say what the run would ask and cost, and run nothing",
        ))
        .arg(option("limit", "N", "The set's first N items only"))
        .arg(
            option(
                "orders",
                "ORDERS",
                "Pairwise: both (the default) or alternate",
            )
            .value_parser(["both", "alternate"]),
        )
        .arg(option(
            "agree",
            "N",
            "The panel's threshold, as panel-tally --agree N",
        ))
        .arg(option(
            "require-kappa",
            "K",
            "The gate on the panel's kappa with the labels: exit 0, 1 or 3",
        ))
        .arg(option(
            "require-accuracy",
            "A",
            "The gate on the panel's accuracy",
        ))
        .arg(
            option("format", "FORM", "text (the default), markdown or json")
                .value_parser(["text", "markdown", "json"]),
        )
        .arg(
            short(
                "out",
                'o',
                "DIR",
                "Keep the records and every item's run in DIR",
            )
            .value_hint(ValueHint::DirPath),
        )
        .arg(short("jobs", 'j', "JOBS", "Items at once (default 1)"))
        .arg(
            Arg::new("seats")
                .value_name("SEAT")
                .num_args(0..)
                .help("The panel's seats, HARNESS[:MODEL]"),
        )
        .arg(
            Arg::new("panel_judge")
                .value_name("PANEL-JUDGE-OPTIONS")
                .num_args(0..)
                .last(true)
                .allow_hyphen_values(true)
                .help("Options every panel-judge is given"),
        )
}

/// Every bash tool's command and its EXIT STATUS and EXAMPLES.
pub fn commands() -> Vec<(Command, &'static ToolDoc)> {
    vec![
        (judge_panel(), &JUDGE_PANEL_DOC),
        (review_battery(), &REVIEW_BATTERY_DOC),
        (pr_review(), &PR_REVIEW_DOC),
        (panel_fleet(), &PANEL_FLEET_DOC),
        (panel_calibrate(), &PANEL_CALIBRATE_DOC),
    ]
}

pub const PANEL_CALIBRATE_DOC: ToolDoc = ToolDoc {
    exit_status: &[
        (
            "0",
            "The report was printed; with a gate, the panel's figure clears it (its interval's low \
                end reaches it).",
        ),
        (
            "1",
            "With a gate: the panel's figure is below it (its interval's high end is).",
        ),
        (
            "2",
            "Usage error, a set that cannot be read, or a panel that could not run (its item \
                named).",
        ),
        (
            "3",
            "With a gate: the interval straddles it; the report says about how many more labelled \
                candidates would settle it.",
        ),
    ],
    examples: &[
        (
            "Offline: the shipped LLMBar pairs with the recorded stand-in answers, as Markdown",
            "panel-calibrate --replay --format markdown",
        ),
        (
            "What a real panel over the set would cost, before it runs",
            "panel-calibrate --dry-run claude:haiku codex:gpt-5-mini gemini",
        ),
        (
            "Gate a CI job on the panel's agreement with people",
            "panel-calibrate --set summedits-sales-email --agree 2 --require-kappa 0.6 \
                claude:haiku codex:gpt-5-mini gemini",
        ),
    ],
};

const STOPPED: (&str, &str) = (
    "130, 143",
    "Stopped by SIGINT or SIGTERM: the running judges ended and recorded as interrupted.",
);

pub const JUDGE_PANEL_DOC: ToolDoc = ToolDoc {
    exit_status: &[
        ("0", "The panel holds: every judge said holds."),
        ("1", "The panel breaks: a judge said breaks."),
        ("2", "Usage error, or a tool of the pipeline failed."),
        (
            "3",
            "No decision: missing verdicts (abstentions, timeouts) could have changed it.",
        ),
    ],
    examples: &[
        (
            "The seed's panel on an answer, with Claude's haiku",
            "judge-panel answer.md",
        ),
        (
            "Offline, with recorded answers",
            "JUDGE_SEAT=replay:examples/answers.json judge-panel examples/answer.md",
        ),
    ],
};

pub const REVIEW_BATTERY_DOC: ToolDoc = ToolDoc {
    exit_status: &[
        (
            "0",
            "The work stands: the judge skipped every finding, nothing was left, or every reviewer \
                passed it.",
        ),
        (
            "1",
            "Findings are left when the rounds stop (the rounds ran out, or there is no --writer).",
        ),
        ("2", "Usage error, or a tool failed (one line names it)."),
        ("3", "Missing answers left it undecided."),
        STOPPED,
    ],
    examples: &[(
        "Three reviewers, a judge, and a writer that edits the page between rounds",
        "review-battery --seat claude:sonnet --seat codex:gpt-5.6-luna --seat \
            opencode:google/gemini-2.5-pro --judge claude:opus --writer './rewrite.sh' page.md",
    )],
};

pub const PR_REVIEW_DOC: ToolDoc = ToolDoc {
    exit_status: &[
        ("0", "MERGE."),
        ("1", "FIX_FIRST."),
        (
            "2",
            "An error before a verdict: one line names the step that failed (gh's, git's, a \
                tool's). A comment that cannot be posted is exit 2 after the verdict is printed.",
        ),
        ("3", "No verdict, or a timeout."),
        STOPPED,
    ],
    examples: &[
        ("Review pull request 7", "pr-review 7"),
        (
            "Review it and post (or edit) the verdict comment",
            "pr-review --comment 7",
        ),
        (
            "Review the checked-out branch against its base",
            "pr-review",
        ),
        (
            "Review it with git alone, naming its base and repository",
            "pr-review --base main --repo acme/app",
        ),
    ],
};

pub const PANEL_FLEET_DOC: ToolDoc = ToolDoc {
    exit_status: &[
        (
            "0, 1, 3",
            "panel-tally --each's status over every panel: 0 every panel passed, 1 at least one \
                decided against, 3 none against and at least one undecided.",
        ),
        (
            "2",
            "An error before the panels (one line), or panels that could not run (named in \
                OUT/joblog).",
        ),
        STOPPED,
    ],
    examples: &[
        (
            "A panel per page, four at once, one tally at the end",
            "panel-fleet -o out docs/*.md -- --seat claude:haiku",
        ),
        (
            "Across two machines, from a list",
            "panel-fleet -o out -S : -S build2 -a pages.txt -- --seat claude:haiku",
        ),
    ],
};

/// A script's `--help` text as the DESCRIPTION of its page: the lines NAME and SYNOPSIS
/// already say (the one it is about, its `Usage:`) left out, paragraphs filled, and indented
/// lines (tables of options and lenses) kept as they are.
pub fn description_roff(help: &str, about: &str) -> String {
    let mut out = String::from(".SH DESCRIPTION\n");
    let mut indented = false;
    let mut paragraph = false;
    for line in help.lines() {
        let line = line.trim_end();
        let said = line.trim_end_matches('.') == about || line.starts_with("Usage:");
        if said {
            continue;
        }
        if line.is_empty() {
            if indented {
                out.push_str(".fi\n");
                indented = false;
            }
            paragraph = false;
            continue;
        }
        if !paragraph {
            out.push_str(".PP\n");
            paragraph = true;
        }
        let indent = line.starts_with(' ');
        if indent != indented {
            out.push_str(if indent { ".nf\n" } else { ".fi\n" });
            indented = indent;
        }
        // A line of a filled paragraph cannot start with a space (roff would break there).
        out.push_str(&escape(line));
        out.push('\n');
    }
    if indented {
        out.push_str(".fi\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_help_text_becomes_filled_paragraphs_and_kept_tables() {
        let help = "Does a thing.\nUsage: x [--y]\n\nSome words\nand more.\n  --y  a value\n.dot\n";
        assert_eq!(
            description_roff(help, "Does a thing"),
            ".SH DESCRIPTION\n.PP\nSome words\nand more.\n.nf\n  \\-\\-y  a value\n.fi\n\\&.dot\n"
        );
    }

    #[test]
    fn every_script_is_about_something_and_sound() {
        for (cmd, _) in commands() {
            assert!(cmd.get_about().is_some(), "{}", cmd.get_name());
            cmd.debug_assert();
        }
    }
}

//! panel(7), the suite's own man page: its tools and pipelines, its records (as their JSON
//! Schemas describe them, hence the `schemas` feature), its exit statuses, files and environment.

use crate::tools::docs::{SCRIPTS, TOOLS, escape};

/// panel(7): the suite, its pipelines, records, exit statuses, files and environment.
pub fn page() -> String {
    let mut out = format!(
        ".TH panel 7 \"panel {}\"\n.SH NAME\npanel \\- {}\n",
        env!("CARGO_PKG_VERSION"),
        escape(
            "a suite of tools that ask a panel of sealed LLM judges about one piece of work, and \
                count what they say in code"
        )
    );
    out.push_str(".SH DESCRIPTION\n");
    para(&mut out, DESCRIPTION);
    tools_section(&mut out);
    pipelines_section(&mut out);
    records_section(&mut out);
    out.push_str(".SH \"EXIT STATUS\"\n");
    para(&mut out, "The same in every tool:");
    items(&mut out, SUITE_EXIT_STATUS);
    out.push_str(".SH FILES\n");
    items(&mut out, FILES);
    out.push_str(".SH ENVIRONMENT\n");
    items(&mut out, ENVIRONMENT);
    out.push_str(".SH \"SEE ALSO\"\n");
    let refs: Vec<String> = TOOLS
        .iter()
        .chain(SCRIPTS)
        .map(|(name, _)| format!("\\fB{}\\fR(1)", escape(name)))
        .collect();
    out.push_str(&refs.join(", "));
    out.push_str(", \\fBjq\\fR(1), \\fBgh\\fR(1)\n");
    out
}

/// A paragraph of the suite page.
fn para(out: &mut String, text: &str) {
    out.push_str(".PP\n");
    out.push_str(&escape(text));
    out.push('\n');
}

/// A tagged paragraph: the tag in bold, the text indented below it.
fn item(out: &mut String, tag: &str, text: &str) {
    out.push_str(&format!(".TP\n\\fB{}\\fR\n{}\n", escape(tag), escape(text)));
}

/// `(tag, text)` rows, one tagged paragraph each.
fn items(out: &mut String, rows: &[(&str, &str)]) {
    for (tag, text) in rows {
        item(out, tag, text);
    }
}

/// A command, set as typed.
fn code(out: &mut String, text: &str) {
    out.push_str(&format!(".PP\n.RS 4\n.nf\n{}\n.fi\n.RE\n", escape(text)));
}

/// DESCRIPTION: what the suite is, in one paragraph.
const DESCRIPTION: &str = "Five small tools read and write JSON lines and compose with pipes, jq, \
    grep and gh. One of them, panel-judge, starts the judges: each runs its harness (a command \
    line tool such as claude, codex or opencode) in a fresh private folder, confined, under a \
    timeout, with the candidate frozen and fenced. The others count, merge and vote in plain code. \
    Nothing a judge says is guessed: an answer that does not meet its contract is an abstention, \
    and an abstention that could change the outcome leaves the panel without a decision.";

/// TOOLS: the five tools, then the bash tools that compose them.
fn tools_section(out: &mut String) {
    out.push_str(".SH TOOLS\n");
    for (name, what) in TOOLS {
        item(out, &format!("{name}(1)"), what);
    }
    para(
        out,
        "Five bash tools compose them into the documented pipelines, each with its man page and \
            completions:",
    );
    for (name, what) in SCRIPTS {
        item(out, &format!("{name}(1)"), what);
    }
}

/// PIPELINES: a verdict panel, a synthesised review and a pull request, as typed.
fn pipelines_section(out: &mut String) {
    out.push_str(".SH PIPELINES\n");
    para(out, "A verdict panel: each judge says holds or breaks.");
    code(
        out,
        "panel-judge --seat claude:haiku answer.md | panel-tally",
    );
    para(
        out,
        "A synthesised review: reviews, merged, cross-voted, judged, counted.",
    );
    code(
        out,
        "seats=(--seat claude:sonnet --seat codex:gpt-5.6-luna --seat \
            opencode:google/gemini-2.5-pro)\npanel-judge --contract review \"${seats[@]}\" page.md \
            \\\n  | panel-merge | panel-vote \"${seats[@]}\" --candidate page.md --judge \
            claude:opus | panel-tally",
    );
    para(
        out,
        "A pull request: classified, planned, reviewed, counted.",
    );
    code(
        out,
        "gh pr view 7 --json number,headRefOid,baseRefOid,files,changedFiles,url | pr-classify \
            --gh --plan > plan.json\npanel-judge --contract pr --plan plan.json --repo . | \
            panel-tally --pr --plan plan.json",
    );
    para(
        out,
        "The bash tools judge-panel, review-battery, pr-review and panel-fleet run these \
            pipelines; scripts/install in the source installs them with the five tools, every man \
            page and the completions for bash, zsh and fish.",
    );
}

/// RECORDS: every record type a tool writes, as its schema describes it.
fn records_section(out: &mut String) {
    out.push_str(".SH RECORDS\n");
    para(
        out,
        "Every line a tool writes on standard output is one compact JSON record, and every record \
            carries its \"type\". Field names are camelCase. A tool handed a record of another \
            type refuses it in one line that names the tool the record is meant for. The records, \
            by type:",
    );
    for s in crate::tools::schemas::schemas() {
        if ["harness", "pr-facts", "gold"].contains(&s.name) {
            continue;
        }
        let what = s.schema["description"].as_str().unwrap_or_default();
        item(out, s.name, what);
    }
    para(
        out,
        "Each record type has a JSON Schema (draft 2020-12) in the source's schemas/ folder, \
            schemas/TYPE.schema.json, generated from the record types. \
            schemas/pr-facts.schema.json describes the PR facts pr-classify reads (and \
            --print-facts writes), schemas/gold.schema.json a line of the gold labels panel-tally \
            --ledger --gold reads, and schemas/harness.schema.json a harness row.",
    );
}

/// EXIT STATUS: the statuses every tool shares.
const SUITE_EXIT_STATUS: &[(&str, &str)] = &[
    (
        "0",
        "Passed, or done (a tool that decides nothing: panel-judge, panel-merge, pr-classify).",
    ),
    (
        "1",
        "The panel decided against the work: breaks, revise, FIX_FIRST.",
    ),
    (
        "2",
        "Usage or input error: one line on standard error, tool: what: why, naming the file and \
            line of a bad record.",
    ),
    (
        "3",
        "No decision: answers were missing (abstentions, timeouts, missing judges) and could have \
            changed the outcome.",
    ),
    (
        "128+N",
        "Stopped by signal N (130 for SIGINT, 143 for SIGTERM): every judge's processes ended, the \
            finished records written. A closed pipe (panel-judge | head -1) is a quiet 0.",
    ),
];

/// FILES: the harness rows, the history, the run folders and the slot files.
const FILES: &[(&str, &str)] = &[
    (
        "$XDG_CONFIG_HOME/panel/harnesses/*.json",
        "Harness rows added to the built-in table, in name order ($XDG_CONFIG_HOME defaults to \
            ~/.config); then the files of --harness-file. A file holds one row or an array of \
            rows, and a later row replaces an earlier one of the same name. panel-judge \
            --list-harnesses prints the table; schemas/harness.schema.json describes a row.",
    ),
    (
        "$XDG_STATE_HOME/panel/history.jsonl",
        "The history panel-judge keeps of its runs (--history FILE or PANEL_HISTORY names another, \
            --no-history or PANEL_HISTORY=off keeps none); $XDG_STATE_HOME defaults to \
            ~/.local/state when unset, empty or relative.",
    ),
    (
        "$XDG_CACHE_HOME/panel/runs/*",
        "The run folders of the tools that launch judges (--out DIR names another): every judge's \
            prompt, exact argv, raw output, error output and record, 0700, locked while its run \
            lives, named on standard error with its ledger's sha256 (on a terminal whose records \
            go down a pipe, left to the report that reads them). Each is named by the UTC second \
            its run started and random characters (20261202T173135Z-3f9a1c0d22e4), so names sort \
            by time; $XDG_CACHE_HOME defaults to ~/.cache when unset, empty or relative, and with \
            neither it nor HOME the run folder is $TMPDIR/panel.NAME, said on standard error. \
            panel and runs are made 0700, and a symbolic link, another user's folder or one others \
            may write there is refused (exit 2). Each run that makes one removes the run folders \
            of runs started 14 days ago or more (--keep-runs DAYS, PANEL_KEEP_DAYS), never one a \
            live run holds, a name panel does not give, a link or another user's folder; \
            panel-tally --runs lists them, and --keep DAYS removes at once.",
    ),
    (
        "$XDG_RUNTIME_DIR/panel-slots-UID",
        "The slot files that hold --harness-cap across runs (in the temporary folder without \
            $XDG_RUNTIME_DIR).",
    ),
];

/// ENVIRONMENT: the variables the tools read.
const ENVIRONMENT: &[(&str, &str)] = &[
    (
        "PANEL_PASS_ENV",
        "Comma-separated variables carried into every judge's otherwise cleared environment, \
            beside --pass-env.",
    ),
    (
        "PANEL_LOGIN_ELSEWHERE",
        "Comma-separated harness names whose CLI logs in a way of its own (a helper, a company's \
            sign-in): their seats are launched without a login panel knows, where otherwise a seat \
            without one fails before launch with what logs in.",
    ),
    (
        "PANEL_HARNESS_CAP",
        "Comma-separated HARNESS=N: at most N judges of that harness at once, beside \
            --harness-cap.",
    ),
    (
        "PANEL_SANDBOX_READ",
        "Folders (colon-separated) a confined judge may read, beside --sandbox-read.",
    ),
    (
        "PANEL_SANDBOX_WRITE",
        "Folders (colon-separated) a confined judge may write, beside --sandbox-write.",
    ),
    (
        "PANEL_KEEP_DAYS",
        "Days the run folders in $XDG_CACHE_HOME/panel/runs are kept (default 14), as --keep-runs \
            says; empty is unset.",
    ),
    (
        "PANEL_HISTORY",
        "The history file panel-judge appends its verdict records to, in place of \
            $XDG_STATE_HOME/panel/history.jsonl; off keeps none.",
    ),
    (
        "NO_COLOR",
        "When set and not empty, the progress line on a terminal and the ledger's heat map are \
            drawn without colour.",
    ),
    (
        "PANEL_ROUND",
        "The round a replay harness answers for, from 1, when its recorded answers are a list.",
    ),
    (
        "GH_REPO",
        "The repository ([HOST/]OWNER/NAME, as gh reads it) pr-classify takes when neither the \
            facts nor --repo name one.",
    ),
    (
        "XDG_CONFIG_HOME, HOME",
        "Where the user's harness rows are found; HOME is where a harness's credential files are \
            copied from.",
    ),
    (
        "XDG_CACHE_HOME",
        "Where the run folders go ($XDG_CACHE_HOME/panel/runs; ~/.cache when unset, empty or \
            relative).",
    ),
    (
        "XDG_RUNTIME_DIR, TMPDIR",
        "Where the slot files go; TMPDIR holds the judges' private folders, and the run folders \
            when there is neither XDG_CACHE_HOME nor HOME.",
    ),
    (
        "PATH",
        "Where a harness's executable is found, unless its row names a path.",
    ),
];

//! What each tool's man page says beyond its options: the exit statuses and the examples.
//! The same text closes `--help`, so the page and the help cannot disagree.

/// The man-page sections a tool adds to its clap definition.
pub struct ToolDoc {
    /// `(status, meaning)` rows of EXIT STATUS.
    pub exit_status: &'static [(&'static str, &'static str)],
    /// `(what it does, the command)` rows of EXAMPLES.
    pub examples: &'static [(&'static str, &'static str)],
}

impl ToolDoc {
    /// The text that closes `--help`.
    pub fn help(&self) -> String {
        let mut out = String::from("Exit status:\n");
        for (code, meaning) in self.exit_status {
            out.push_str(&format!("  {code}  {meaning}\n"));
        }
        out.push_str("\nExamples:\n");
        for (what, cmd) in self.examples {
            out.push_str(&format!("  # {what}\n  {cmd}\n"));
        }
        out
    }

    /// The EXIT STATUS and EXAMPLES sections in roff.
    pub fn roff(&self) -> String {
        let mut out = String::from(".SH \"EXIT STATUS\"\n");
        for (code, meaning) in self.exit_status {
            out.push_str(&format!(".TP\n\\fB{code}\\fR\n{}\n", escape(meaning)));
        }
        out.push_str(".SH EXAMPLES\n");
        for (what, cmd) in self.examples {
            out.push_str(&format!(
                ".PP\n{}\n.PP\n.RS 4\n.nf\n{}\n.fi\n.RE\n",
                escape(what),
                escape(cmd)
            ));
        }
        out
    }
}

/// The bash tools, each with what it does: the first line of its `--help`, its page's NAME, and
/// its line in the suite page.
pub const SCRIPTS: &[(&str, &str)] = &[
    (
        "judge-panel",
        "Three sealed judges, one answer, one verdict each, counted in code.",
    ),
    (
        "review-battery",
        "Rounds of review, merge, vote and judge on one piece of work, with a writer that changes \
            the work between rounds.",
    ),
    (
        "pr-review",
        "Review a pull request with its planned panel: classify, plan, launch the reviewers, \
            aggregate.",
    ),
    (
        "panel-fleet",
        "A panel per candidate over a corpus, on GNU parallel, here or across machines; one tally \
            at the end.",
    ),
    (
        "panel-calibrate",
        "Runs a panel over a labelled set and prints its report against the labels.",
    ),
];

/// Escapes text for roff: backslashes, and a leading dot or quote that roff would read as a
/// request.
pub fn escape(text: &str) -> String {
    text.lines()
        .map(|l| {
            let l = l.replace('\\', "\\e").replace('-', "\\-");
            if l.starts_with('.') || l.starts_with('\'') {
                format!("\\&{l}")
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The exit statuses of a tool that decides nothing.
pub const FILTER_EXIT: &[(&str, &str)] = &[
    ("0", "Done."),
    (
        "2",
        "Usage or input error: one line on standard error names the file and line.",
    ),
];

/// The five tools, each with what it does: the suite page's TOOLS and every page's SEE ALSO.
pub const TOOLS: &[(&str, &str)] = &[
    (
        "panel-judge",
        "Asks each judge of a panel, sealed, about one frozen candidate and writes one record per \
            judge: a verdict (the default contract), a review (--contract review), or a pr-verdict \
            per plan member (--contract pr). The one tool that starts harness processes.",
    ),
    (
        "panel-tally",
        "Counts a panel's records in code: verdicts into the seed's report or a tally record \
            (--json), reviews by a threshold, panel-vote's stream into its synthesis, pr-verdict \
            records into the PR panel's verdict (--pr).",
    ),
    (
        "panel-merge",
        "Merges the reviewers' findings into one list, crediting every reviewer that raised each; \
            --seat lets one seat group them.",
    ),
    (
        "panel-vote",
        "Has each reviewer vote once on the merged findings it did not raise, applies the votes in \
            code, and with --judge asks a judge seat to act on or skip each finding left.",
    ),
    (
        "pr-classify",
        "Turns a pull request's facts (JSON, git diff --numstat, or gh pr view --json) into its \
            class and flags, and with --plan into its panel plan.",
    ),
];

/// The SEE ALSO section of a tool's page: the suite page, then the other tools and the bash
/// tools.
pub fn see_also(tool: &str) -> String {
    let mut refs = vec!["\\fBpanel\\fR(7)".to_string()];
    refs.extend(
        TOOLS
            .iter()
            .chain(SCRIPTS)
            .filter(|(name, _)| *name != tool)
            .map(|(name, _)| format!("\\fB{}\\fR(1)", escape(name))),
    );
    format!(".SH \"SEE ALSO\"\n{}\n", refs.join(", "))
}

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

/// Escapes text for roff: backslashes, and a leading dot or quote that roff would read as a request.
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

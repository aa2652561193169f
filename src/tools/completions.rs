//! What the generated completions do beyond clap's: an option whose value is a seat
//! (HARNESS[:MODEL]) completes the harness names `panel-judge --list-harnesses` prints (the
//! built-in rows and the user's own), not file names.
//!
//! clap_complete writes each shell's script from the clap definition; [`with_harness_names`]
//! then gives each seat option its action, and adds the one shell function that lists the
//! names. A seat option the script does not complete as clap writes it is an error, so a
//! change in clap's output cannot quietly leave a seat completing file names.

/// The value names that say an option takes a seat.
fn is_seat_value(value: &str) -> bool {
    value == "SEAT" || value.starts_with("SEAT|") || value == "HARNESS[:MODEL]"
}

/// The long names of `cmd`'s options (its subcommands' too) whose value is a seat.
pub fn seat_options(cmd: &clap::Command) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut stack = vec![cmd];
    while let Some(c) = stack.pop() {
        for arg in c.get_arguments() {
            let seat = arg
                .get_value_names()
                .is_some_and(|v| v.iter().any(|v| is_seat_value(v)));
            if let (true, Some(long)) = (seat, arg.get_long())
                && !out.iter().any(|o| o == long)
            {
                out.push(long.to_string());
            }
        }
        stack.extend(c.get_subcommands());
    }
    out.sort();
    out
}

/// The harness names, one a line, from `panel-judge --list-harnesses --json` (a JSON array of rows,
/// each row's `"name"` four spaces in): in bash and zsh, a sed over it.
const NAMES_SED: &str = r#"command panel-judge --list-harnesses --json 2>/dev/null | sed -n 's/^    "name": "\([^"]*\)",\{0,1\}$/\1/p'"#;

/// `script` (clap_complete's for `shell`: "bash", "zsh" or "fish") with every option of
/// `seats` completing harness names. Names complete without a space after them in bash and
/// zsh, so that `:MODEL` can follow.
pub fn with_harness_names(shell: &str, script: &str, seats: &[String]) -> anyhow::Result<String> {
    if seats.is_empty() {
        return Ok(script.to_string());
    }
    let (out, done) = match shell {
        "bash" => bash_harness_names(script, seats),
        "zsh" => zsh_harness_names(script, seats)?,
        "fish" => fish_harness_names(script, seats),
        other => anyhow::bail!("{other}: no harness completion for this shell"),
    };
    for s in seats {
        if !done.contains(&s.as_str()) {
            anyhow::bail!("{shell}: --{s} is not completed as clap writes a plain option");
        }
    }
    Ok(out)
}

/// bash's script with `seats` completing harness names, and the seats it found to complete.
fn bash_harness_names<'a>(script: &str, seats: &'a [String]) -> (String, Vec<&'a str>) {
    let mut out = String::with_capacity(script.len() + 512);
    let mut done: Vec<&str> = Vec::new();
    out.push_str(&format!(
        "# The harness names a seat (HARNESS[:MODEL]) starts with.\n_panel_harnesses() \
            {{\n    {NAMES_SED}\n}}\n\n"
    ));
    let mut seat = None;
    for line in script.split_inclusive('\n') {
        let text = line.trim();
        if let Some(s) = seat.take()
            && text == r#"COMPREPLY=($(compgen -f "${cur}"))"#
        {
            let indent = &line[..line.len() - line.trim_start().len()];
            out.push_str(&format!(
                "{indent}COMPREPLY=($(compgen -W \"$(_panel_harnesses)\" -- \
                    \"${{cur}}\"))\n{indent}compopt -o nospace 2>/dev/null\n"
            ));
            done.push(s);
            continue;
        }
        seat = seats
            .iter()
            .find(|s| text == format!("--{s})"))
            .map(|s| s.as_str());
        out.push_str(line);
    }
    (out, done)
}

/// zsh's script with `seats` completing harness names, and the seats it found to complete.
fn zsh_harness_names<'a>(
    script: &str,
    seats: &'a [String],
) -> anyhow::Result<(String, Vec<&'a str>)> {
    let mut out = String::with_capacity(script.len() + 512);
    let mut done: Vec<&str> = Vec::new();
    let helper = format!(
        "(( $+functions[_panel_harnesses] )) ||\n_panel_harnesses() {{\n    local -a \
            names\n    names=(${{(f)\"$({NAMES_SED})\"}})\n    compadd -S '' -a \
            names\n}}\n\n"
    );
    let mut pending: Option<&str> = None;
    let mut helper_added = false;
    for line in script.split_inclusive('\n') {
        if !helper_added && line.starts_with("if [ \"$funcstack[1]\"") {
            out.push_str(&helper);
            helper_added = true;
        }
        if pending.is_none() {
            // A spec starts with its quote, then an optional `*` and exclusions.
            let spec = line.trim_start_matches('\'').trim_start_matches('*');
            let spec = match spec.strip_prefix('(') {
                Some(rest) => rest.split_once(')').map_or(spec, |(_, r)| r),
                None => spec,
            };
            pending = seats
                .iter()
                .find(|s| spec.starts_with(&format!("--{s}=[")))
                .map(|s| s.as_str());
        }
        match pending {
            Some(s) if line.trim_end().ends_with(":_default' \\") => {
                let at = line.rfind(":_default'").expect("found above");
                out.push_str(&line[..at]);
                out.push_str(":_panel_harnesses");
                out.push_str(&line[at + ":_default".len()..]);
                done.push(s);
                pending = None;
            }
            _ => out.push_str(line),
        }
    }
    if !helper_added {
        anyhow::bail!("zsh: no closing `if [ \"$funcstack[1]\"` block to add the helper before");
    }
    Ok((out, done))
}

/// fish's script with `seats` completing harness names, and the seats it found to complete.
fn fish_harness_names<'a>(script: &str, seats: &'a [String]) -> (String, Vec<&'a str>) {
    let mut out = String::with_capacity(script.len() + 512);
    let mut done: Vec<&str> = Vec::new();
    out.push_str(
        "# The harness names a seat (HARNESS[:MODEL]) starts with.\nfunction \
            __panel_harnesses\n    command panel-judge --list-harnesses --json 2>/dev/null \
            | string replace -rf '^    \"name\": \"([^\"]*)\",?$' '$1'\nend\n\n",
    );
    for line in script.split_inclusive('\n') {
        let seat = seats
            .iter()
            .find(|s| line.starts_with("complete -c ") && line.contains(&format!(" -l {s} -")));
        match seat {
            Some(s) if line.trim_end().ends_with(" -r") => {
                out.push_str(line.trim_end());
                out.push_str(" -f -a \"(__panel_harnesses)\"\n");
                done.push(s);
            }
            _ => out.push_str(line),
        }
    }
    (out, done)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seats() -> Vec<String> {
        vec!["seat".into()]
    }

    #[test]
    fn bash_completes_a_seat_from_the_harness_list() {
        let script = "_x() {\n            case \"${prev}\" in\n                \
            --seat)\n                    COMPREPLY=($(compgen -f \"${cur}\"))\n                    \
            return 0\n                    ;;\n                --out)\n                    \
            COMPREPLY=($(compgen -f \"${cur}\"))\n";
        let out = with_harness_names("bash", script, &seats()).unwrap();
        assert!(out.starts_with("# The harness names"), "{out}");
        assert!(
            out.contains(
                "--seat)\n                    COMPREPLY=($(compgen -W \
            \"$(_panel_harnesses)\" -- \"${cur}\"))\n                    compopt -o nospace \
            2>/dev/null\n                    return 0\n"
            ),
            "{out}"
        );
        assert!(
            out.ends_with("--out)\n                    COMPREPLY=($(compgen -f \"${cur}\"))\n")
        );
    }

    #[test]
    fn zsh_and_fish_complete_a_seat_from_the_harness_list() {
        let zsh = "_x() {\n_arguments \\\n'*--seat=[A seat]:SEAT:_default' \\\n'--out=[A \
            dir]:DIR:_default' \\\n}\nif [ \"$funcstack[1]\" = \"_x\" ]; then\n";
        let out = with_harness_names("zsh", zsh, &seats()).unwrap();
        assert!(
            out.contains(
                "'*--seat=[A seat]:SEAT:_panel_harnesses' \\\n'--out=[A dir]:DIR:_default'"
            ),
            "{out}"
        );
        assert!(out.contains("_panel_harnesses() {\n"), "{out}");
        let fish = "complete -c x -l seat -d 'A seat' -r\ncomplete -c x -l seats-x -d 'no' -r\n";
        let out = with_harness_names("fish", fish, &seats()).unwrap();
        assert!(
            out.ends_with(
                "complete -c x -l seat -d 'A seat' -r -f -a \
            \"(__panel_harnesses)\"\ncomplete -c x -l seats-x -d 'no' -r\n"
            ),
            "{out}"
        );
    }

    #[test]
    fn a_seat_option_clap_writes_otherwise_is_an_error() {
        let err = with_harness_names("bash", "--seat)\n  odd\n", &seats()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "bash: --seat is not completed as clap writes a plain option"
        );
    }
}

complete -c panel-tally -l format -d 'The report\'s form: `text` (the seed\'s report), `json` (one tally record per panel) or `markdown` (GitHub-flavoured: the decision, a table, each reason in a <details>; for a pull request\'s comment or a job summary). Text read from the records is escaped for Markdown and HTML: it cannot mention anyone, link an issue or load an image' -r -f -a "text\t''
json\t''
markdown\t''"
complete -c panel-tally -l agree -d 'Holds needed to pass [default: every judge of the panel, abstainers included]. With it the text report ends with the decision: `decision: pass (2 of 3 say holds; --agree 2)`' -r
complete -c panel-tally -l plan -d 'Pull requests: the plan the records answer (pr-classify --plan)' -r
complete -c panel-tally -l repo -d 'Pull requests: the git repository where an advisory finding\'s path:line must exist, read at the plan\'s head (git cat-file), or in the working tree when the head is not there' -r -F
complete -c panel-tally -l fix-proof -d 'Pull requests: what the fix-proof check said of the tests: a verdict (ok, vacuous, no-tests, error, untrusted, unread) or its fix-proof/v1 line (a line that does not parse or names another head is ignored: unread). Vacuous, no-tests and error make the tests member block' -r
complete -c panel-tally -l view -d 'panel-vote\'s stream: print one part of it instead of the report, and exit 0: `writer` (the findings that go back, each with the judge\'s reason), `skips` (the findings the judge skipped, with its reasons) or `decisions` (the judge\'s decision records, JSON lines)' -r -f -a "writer\t''
skips\t''
decisions\t''"
complete -c panel-tally -l reader -d 'How verdicts are read: `threads` parse a few blocks ahead of the counting on up to four threads; `plain` reads line by line on this one (for a machine that limits threads)' -r -f -a "threads\t''
plain\t''"
complete -c panel-tally -l svg -d 'With --ledger: also write the heat map and a bar per judge as a standalone SVG picture' -r -F
complete -c panel-tally -l bootstrap -d 'With --ledger: bootstrap replicates for the kappas\' and alpha\'s 95 % intervals (panels resampled with replacement, from the fixed seed 0x70616e656c, so the same history gives the same intervals). Shares (holds, canary hits, sub-panel matches) take Wilson\'s interval' -r
complete -c panel-tally -l keep -d 'With --runs: remove now the run folders whose runs started DAYS or more days ago (0: every one), and list those removed. A folder a live run holds, a name panel does not give, a symbolic link or another user\'s folder is never removed. Exit 2 when one could not be removed' -r
complete -c panel-tally -l json -d 'Print one tally record (JSON) per panel instead of the text report: `--format json`'
complete -c panel-tally -l each -d 'Count many panels in one stream: one tally per candidate, then a summary'
complete -c panel-tally -l last-wins -d 'A judge with records from two runs (a rerun of the abstainers) counts once, by its later record; without it, a judge counted twice is an error (exit 2) naming both runs'
complete -c panel-tally -l pr -d 'Pull requests: aggregate pr-verdict records (panel-judge --contract pr) by the plan into the panel\'s MERGE, FIX_FIRST, no-verdict or timeout'
complete -c panel-tally -l require-canaries -d 'A seat that missed its canary (panel-judge --canary), or has no canary record, does not count: its verdicts become abstentions (status canary-missed), and the panel may become undecided (exit 3)'
complete -c panel-tally -l ledger -d 'Read a history of verdict records from many panels as a ledger of its judges: their agreement (Cohen\'s and Fleiss\' kappa, drawn as a heat map, and Krippendorff\'s alpha), who adds nothing, who rubber-stamps, who abstains, and the smallest sub-panel that decided as the full one, each figure with its 95 % interval. Fleiss\' kappa applies when every panel kept all its judges; when judges abstain (timeouts, unreadable replies), read Krippendorff\'s alpha, which counts an abstention as missing rather than as a smaller panel. A flag is raised only when its whole interval is past the threshold. With --json: judge-stats, pair-agreement and ledger-summary records. Exit 0'
complete -c panel-tally -l runs -d 'List the run folders the tools that launch judges made where no --out named one ($XDG_CACHE_HOME/panel/runs, ~/.cache when XDG_CACHE_HOME is unset, empty or relative), newest first: age, size, judges, the ledger and its records, whether a live run holds it, and its path. A table on a terminal (or --format text), else one run-folder record per line (or --json). Exit 0'
complete -c panel-tally -s h -l help -d 'Print help (see more with \'--help\')'
complete -c panel-tally -s V -l version -d 'Print version'

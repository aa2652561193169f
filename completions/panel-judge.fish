# The harness names a seat (HARNESS[:MODEL]) starts with.
function __panel_harnesses
    command panel-judge --list-harnesses 2>/dev/null | string replace -rf '^    "name": "([^"]*)",?$' '$1'
end

complete -c panel-judge -l seat -d 'A seat, HARNESS[:MODEL] (repeatable), e.g. claude:haiku, codex:gpt-5.6-luna, exec:\'llm -m gpt-4o-mini\', replay:answers.json' -r -f -a "(__panel_harnesses)"
complete -c panel-judge -l lens -d 'A lens, NAME=QUESTION (repeatable). Default: correctness, edges, evidence' -r
complete -c panel-judge -l lenses -d 'A file of lenses, one NAME=QUESTION (or the seed script\'s NAME|QUESTION) per line' -r -F
complete -c panel-judge -l contract -d 'What the judges answer' -r -f -a "verdict\t'{"verdict": "holds"|"breaks", "reason", "confidence"}: one verdict record per judge'
review\t'{"decision": "pass"|"revise", "findings": [...]}: one review record per reviewer, for panel-merge'
pr\t'A pull request\'s planned panel (--plan, --repo): one pr-verdict record per member, for panel-tally --pr'"
complete -c panel-judge -l stage -d 'Reviews: the stage the reviewers are named after (<stage>-1, <stage>-2, … in seat order)' -r
complete -c panel-judge -l brief -d 'Reviews: the brief the work was written to, shown to every reviewer' -r -F
complete -c panel-judge -l writer-family -d 'Reviews: the writer\'s model family; a reviewer of the same family is refused' -r
complete -c panel-judge -l plan -d 'Pull requests: the plan from pr-classify --plan (its pr-class record may come first); `-` reads standard input' -r
complete -c panel-judge -l repo -d 'Pull requests: the git repository that holds the head; each reviewer reads a detached checkout of it' -r -F
complete -c panel-judge -l earlier -d 'Pull requests: pr-verdict records of this PR\'s earlier rounds (repeatable; JSON lines, oldest first): their FIX_FIRSTs are shown to every reviewer, who answers with an Earlier findings: checklist' -r
complete -c panel-judge -l fix-proof -d 'Pull requests: what the fix-proof check said of the tests: a verdict (ok, vacuous, no-tests, error, untrusted, unread) or its fix-proof/v1 line. The tests brief shows its verdict, counts and flags; error, untrusted or unread asks every reviewer for FIX_FIRST unless it names an added test that fails on the base' -r
complete -c panel-judge -l canary -d 'Verdicts: ask each seat, beside the panel, about FILE, whose answer is known to be holds or breaks (repeatable). One canary judge per seat and canary, on the panel\'s first lens; its record carries `"canary"`, the expected verdict, and panel-tally reports a seat that missed it' -r
complete -c panel-judge -l history -d 'Verdicts: append every verdict record (canaries too) to FILE [default: $PANEL_HISTORY, else $XDG_STATE_HOME/panel/history.jsonl, with ~/.local/state when XDG_STATE_HOME is unset, empty or relative; PANEL_HISTORY=off keeps none]. A panel of `replay:` seats alone keeps none unless FILE or PANEL_HISTORY names one' -r -F
complete -c panel-judge -l agree -d 'Verdicts and reviews: N holds (or passes) pass the panel, as for panel-tally --agree N; what --stop-when-decided and --cascade stop by [default: every judge]' -r
complete -c panel-judge -l cascade-order -d '--cascade\'s order: given (the judges\' order), or cost: the seats by their mean cost per answer in the history (PANEL_HISTORY, --history), cheapest first, where it has them' -r -f -a "given\t'As the judges are listed (lens by seat, as given)'
cost\t'Cheapest seat first, by the history\'s mean cost per answer'"
complete -c panel-judge -l out -d 'The run folder that keeps every prompt, argv, output and record (default: a new folder in $XDG_CACHE_HOME/panel/runs, ~/.cache/panel/runs when XDG_CACHE_HOME is unset, empty or relative; see --keep-runs). It must be new or empty and your own (the PR panel takes its own up again); it is made 0700 and locked while the run lives' -r -F
complete -c panel-judge -l keep-runs -d 'How many days the run folders in $XDG_CACHE_HOME/panel/runs are kept: a run that makes one there removes those whose runs started DAYS or more days ago, but never one a live run holds, nor anything else (default 14; also PANEL_KEEP_DAYS). panel-tally --runs lists them' -r
complete -c panel-judge -l timeout -d 'Seconds one attempt of a seat may take (a wait for a --harness-cap slot included) before it and every process it started are ended' -r
complete -c panel-judge -l retries -d 'How many times an unreadable or failed answer is asked for again' -r
complete -c panel-judge -l jobs -d 'How many seats run at once (default: all that the open-file limit allows)' -r
complete -c panel-judge -l max-budget-usd -d 'A spending cap in USD per call, passed to the harnesses that enforce one' -r
complete -c panel-judge -l harness-file -d 'A JSON file of harness rows that add to or replace the built-in ones (repeatable)' -r -F
complete -c panel-judge -l family -d 'State a seat\'s model family, SEAT=FAMILY (repeatable), e.g. \'exec:llm -m x=openai\'' -r
complete -c panel-judge -l pass-env -d 'Carry this variable of your environment into every seat (repeatable; also PANEL_PASS_ENV, comma-separated)' -r
complete -c panel-judge -l harness-cap -d 'At most N judges of HARNESS at once across every panel-judge on this machine, HARNESS=N (repeatable; also PANEL_HARNESS_CAP, comma-separated)' -r
complete -c panel-judge -l sandbox -d 'How each judge is walled in: auto, a jail of its own (namespaces, a read-only root of what its harness needs, no route out but its proxy) with Landlock inside, falling back to Landlock alone, each with one warning, where the kernel cannot; required, the jail or launch nothing; landlock, Landlock alone; off' -r -f -a "auto\t'A jail of its own with Landlock inside where the kernel can; else Landlock alone, or nothing, each with one warning line and said in every record'
required\t'The jail, or launch nothing (exit 2)'
landlock\t'Landlock alone, as auto falls back to where the kernel forbids namespaces'
off\t'No walls of ours (the supervisor still ends what a judge leaves running)'"
complete -c panel-judge -l sandbox-read -d 'A folder a confined judge may also read and run programs from (repeatable; also PANEL_SANDBOX_READ, colon-separated)' -r -F
complete -c panel-judge -l sandbox-write -d 'A folder a confined judge may also write to, e.g. a log your exec: seat keeps (repeatable; also PANEL_SANDBOX_WRITE, colon-separated)' -r -F
complete -c panel-judge -l sandbox-allow -d 'A host and port a confined judge\'s proxy also lets it reach, HOST:PORT (repeatable; also PANEL_SANDBOX_ALLOW, comma-separated). Its row\'s model service, and the base URLs in its environment and configuration, are allowed already; nothing the prompt names ever is' -r
complete -c panel-judge -l max-output -d 'The most standard output one attempt of a seat may write, kept byte for byte in the run folder (bytes, or K, M, G, T: 64M, 1G). Past it the seat is stopped, with every process it started, and recorded output-limit, an abstention. Its events are read as they arrive, so memory does not grow with it' -r
complete -c panel-judge -l cross -d 'Run every lens on every seat'
complete -c panel-judge -l allow-correlated -d 'Run two judges that share a lens and a model family anyway (one opinion paid for twice)'
complete -c panel-judge -l no-history -d 'Keep no history of this run'
complete -c panel-judge -l stop-when-decided -d 'Once the answers in decide the panel whatever the judges still out say, end those judges (their whole group, as at the deadline) and launch no more. Each judge left out gets a record, status cancelled, verdict null, its cause saying what decided the panel; canaries are always asked. Never the default: a split\'s reasons are the finding. A PR panel (--contract pr) stops on its first blocking FIX_FIRST, which fails it whatever the others say; each member left out is a pr-verdict record, status cancelled, its reason naming the member that decided. There stopping costs the findings the members left out would have raised, which the fix needs: a second round may find what they would have'
complete -c panel-judge -l cascade -d 'Launch, in the order given, only as many judges as could decide the panel (for --agree N, the smaller of N and size + 1 - N), then more only while it is undecided; implies --stop-when-decided. Cost falls; wall time can grow, since a later judge waits for the earlier ones'
complete -c panel-judge -l dry-run -d 'Print each judge as a bash block to paste into a script, and launch nothing. A block makes what the launch makes (a private folder from mktemp -d with HOME, TMPDIR and a working folder; the prompt, schema and answer files; the harness\'s own files, which hold the lockdown of gemini, qwen and kimi; the logins, copied the owner\'s alone), runs the exact command with the same environment and prompt, prints the answer (the answer file where the harness writes one, else its output) and removes the folder however it ends; its status is the harness\'s. Blocks are separated by a blank line. A pasted block runs outside panel\'s Landlock walls and says so: it is the unconfined command (codex shows its own permission profile, which inside panel\'s walls gives way)'
complete -c panel-judge -l list-harnesses -d 'Print the harness table and exit: on a terminal a table (each row\'s program, found on PATH or not, its model family, whether it was proven against the real CLI, its lockdown); elsewhere, or with --json, the rows as JSON, what a harness file holds'
complete -c panel-judge -l doctor -d 'Check this machine and exit 0 (2 on bad input), launching no judge: for each harness, whether its program is on PATH, the first line of its `--version` (5 seconds each, all at once), and whether a login is there: which of its key variables are set (their names, never a value) and which of its credential files are present; then the walls judges get here under --sandbox: the Landlock ABI, whether a jail can be made and why not. A table; with --json one harness-status record per harness and a sandbox-status record'
complete -c panel-judge -l json -d 'With --list-harnesses, JSON on a terminal too; with --doctor, records instead of the table'
complete -c panel-judge -s h -l help -d 'Print help (see more with \'--help\')'
complete -c panel-judge -s V -l version -d 'Print version'

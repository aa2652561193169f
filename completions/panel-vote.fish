# The harness names a seat (HARNESS[:MODEL]) starts with.
function __panel_harnesses
    command panel-judge --list-harnesses --json 2>/dev/null | string replace -rf '^    "name": "([^"]*)",?$' '$1'
end

# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_panel_vote_global_optspecs
    string join \n candidate= brief= seat= reads= stop-when-decided cascade agree= judge= round= json out= keep-runs= timeout= retries= jobs= max-budget-usd= budget-usd= tier= prices= estimate harness-file= family= pass-env= harness-cap= sandbox= sandbox-read= sandbox-write= sandbox-allow= max-output= judge-memory= judge-processes= judge-disk= h/help V/version
end

function __fish_panel_vote_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_panel_vote_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_panel_vote_using_subcommand
    set -l cmd (__fish_panel_vote_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c panel-vote -n "__fish_panel_vote_needs_command" -l candidate -d 'The work under review, shown to every voter and to the judge' -r
complete -c panel-vote -n "__fish_panel_vote_needs_command" -l brief -d 'The brief the work was written to, shown to every voter and to the judge' -r
complete -c panel-vote -n "__fish_panel_vote_needs_command" -l seat -d 'A seat the reviewers sat on, HARNESS[:MODEL] (repeatable): the --seat options panel-judge was given. Each reviewer votes on its own seat, which must be one of these; a reviewer record on any other seat is an input error, and nothing is launched' -r -f -a "(__panel_harnesses)"
complete -c panel-vote -n "__fish_panel_vote_needs_command" -l reads -d 'A voter\'s seat that declares read tools (repeatable; one of the --seat options): its voter works in a folder holding a copy of the work, with its harness\'s read tools (its reviewer mode: claude, codex), and may read the work to check a claim before it votes' -r -f -a "(__panel_harnesses)"
complete -c panel-vote -n "__fish_panel_vote_needs_command" -l agree -d 'How many reviewers must pass the work for the panel to pass (default: all)' -r
complete -c panel-vote -n "__fish_panel_vote_needs_command" -l judge -d 'A judge that acts on or skips each finding left: a seat (HARNESS[:MODEL]), or replay:FILE to replay recorded decisions' -r -f -a "(__panel_harnesses)"
complete -c panel-vote -n "__fish_panel_vote_needs_command" -l round -d 'The round, counting from 1: picks the answer a replay:FILE judge gives' -r
complete -c panel-vote -n "__fish_panel_vote_needs_command" -l out -d 'The run folder that keeps every prompt, argv, output and record (default: a new folder in $XDG_CACHE_HOME/panel/runs, ~/.cache/panel/runs when XDG_CACHE_HOME is unset, empty or relative; see --keep-runs). It must be new or empty and your own (the PR panel takes its own up again); it is made 0700 and locked while the run lives' -r -F
complete -c panel-vote -n "__fish_panel_vote_needs_command" -l keep-runs -d 'How many days the run folders in $XDG_CACHE_HOME/panel/runs are kept: a run that makes one there removes those whose runs started DAYS or more days ago, but never one a live run holds, nor anything else (default 14; also PANEL_KEEP_DAYS). panel-tally --runs lists them' -r
complete -c panel-vote -n "__fish_panel_vote_needs_command" -l timeout -d 'Seconds one attempt of a seat may take (a wait for a --harness-cap slot included) before it and every process it started are ended' -r
complete -c panel-vote -n "__fish_panel_vote_needs_command" -l retries -d 'How many times an unreadable or failed answer is asked for again' -r
complete -c panel-vote -n "__fish_panel_vote_needs_command" -l jobs -d 'How many seats run at once (default: all that the open-file limit allows)' -r
complete -c panel-vote -n "__fish_panel_vote_needs_command" -l max-budget-usd -d 'A spending cap in USD per call, passed to the harnesses that enforce one' -r
complete -c panel-vote -n "__fish_panel_vote_needs_command" -l budget-usd -d 'A budget in USD for the whole run (also PANEL_BUDGET_USD). Each judge\'s cost is estimated before it is launched (its prompt\'s bytes and its row\'s measured overhead at 4 bytes a token, every input token at the uncached price; the history\'s median answer length for its seat, else 500 tokens); a judge whose estimate would take what is spent and in flight past the budget is never launched, but recorded cancelled with the cause, and the panel is decided or not without it. What a judge cost is its harness\'s figure, else its tokens priced, else its estimate; its record\'s usage keeps estimateUsd beside costUsd. A harness\'s figure is taken only when it is a finite number at least 0 and, where the model has a price, at most 10 times its tokens priced (else its estimate) plus $0.01; else its tokens priced count, and the usage\'s costNote says why. A seat whose model has no price is named and its judges not launched (recorded cancelled), the others run. PANEL_BUDGET_FILE names a file the sums are kept in, shared by every run that names it (panel-fleet\'s panels): a regular file (never a link, a FIFO or a device) that holds {"spent": USD, "inFlight": USD}, each a finite number at least 0, or nothing yet; any other is one line and exit 2 before a judge starts, and is left as it is' -r
complete -c panel-vote -n "__fish_panel_vote_needs_command" -l tier -d 'The service tier asked of a judge\'s provider where its login offers more than one: `flex` is OpenAI\'s flex processing (codex with an API key), at half the price and slower; a seat whose login offers no flex runs at the standard tier. The record\'s usage says `"tier": "flex"` where it was asked, and its cost is priced at the tier\'s price' -r -f -a "standard\t'The provider\'s default'
flex\t'OpenAI\'s flex processing: the Batch API\'s price (half), answered synchronously but slower, and at times refused with 429 "Resource Unavailable" (waited out as a rate limit)'"
complete -c panel-vote -n "__fish_panel_vote_needs_command" -l prices -d 'A price file overlaid on the shipped table (also PANEL_PRICES): {"models": {MODEL: {"aliases": [...], "input": USD, "cacheRead": USD, "output": USD (per million tokens), "date": "YYYY-MM-DD", "source": "..."}}, "families": {FAMILY: MODEL}}. A seat that names no model is priced as its family\'s model there. A price is at most 100000 USD a million tokens; the file is read to 4 MiB at most' -r -F
complete -c panel-vote -n "__fish_panel_vote_needs_command" -l harness-file -d 'A JSON file of harness rows that add to or replace the built-in ones (repeatable)' -r -F
complete -c panel-vote -n "__fish_panel_vote_needs_command" -l family -d 'State a seat\'s model family, SEAT=FAMILY (repeatable), e.g. \'exec:llm -m x=openai\'' -r
complete -c panel-vote -n "__fish_panel_vote_needs_command" -l pass-env -d 'Carry this variable of your environment into every seat (repeatable; also PANEL_PASS_ENV, comma-separated)' -r
complete -c panel-vote -n "__fish_panel_vote_needs_command" -l harness-cap -d 'At most N judges of HARNESS at once across every panel-judge on this machine, HARNESS=N (repeatable; also PANEL_HARNESS_CAP, comma-separated)' -r
complete -c panel-vote -n "__fish_panel_vote_needs_command" -l sandbox -d 'How each judge is walled in: auto, a jail of its own (namespaces, a read-only root of what its harness needs, no route out but its proxy) with Landlock inside, falling back to Landlock alone, each with one warning, where the kernel cannot; required, the jail or launch nothing; landlock, Landlock alone; off' -r -f -a "auto\t'A jail of its own with Landlock inside where the kernel can; else Landlock alone, or nothing, each with one warning line and said in every record. On macOS a Seatbelt profile'
required\t'The jail (on macOS Seatbelt), or launch nothing (exit 2)'
landlock\t'Landlock alone, as auto falls back to where the kernel forbids namespaces (Linux)'
off\t'No walls of ours (the supervisor still ends what a judge leaves running)'"
complete -c panel-vote -n "__fish_panel_vote_needs_command" -l sandbox-read -d 'A folder a confined judge may also read and run programs from (repeatable; also PANEL_SANDBOX_READ, colon-separated)' -r -F
complete -c panel-vote -n "__fish_panel_vote_needs_command" -l sandbox-write -d 'A folder a confined judge may also write to, e.g. a log your exec: seat keeps (repeatable; also PANEL_SANDBOX_WRITE, colon-separated)' -r -F
complete -c panel-vote -n "__fish_panel_vote_needs_command" -l sandbox-allow -d 'A host and port a confined judge\'s proxy also lets it reach, HOST:PORT (repeatable; also PANEL_SANDBOX_ALLOW, comma-separated). Its row\'s model service, and the base URLs in its environment and configuration, are allowed already; nothing the prompt names ever is' -r
complete -c panel-vote -n "__fish_panel_vote_needs_command" -l max-output -d 'The most standard output one attempt of a seat may write, kept byte for byte in the run folder (bytes, or K, M, G, T: 64M, 1G). Past it the seat is stopped, with every process it started, and recorded output-limit, an abstention. Its events are read as they arrive, so memory does not grow with it' -r
complete -c panel-vote -n "__fish_panel_vote_needs_command" -l judge-memory -d 'The most memory one judge may hold with all it starts, a size (512M, 4G) or off (default 2G; also PANEL_JUDGE_MEMORY). In a cgroup where panel can make one (as root, or in the cgroups systemd delegates to your user session) it counts the judge\'s files too, and a judge past it is ended; else it bounds each process alone (RLIMIT_DATA, with memfd and System V shared memory refused, which it does not count). A judge that meets it is recorded failed, "memory limit 2 GiB reached"' -r
complete -c panel-vote -n "__fish_panel_vote_needs_command" -l judge-processes -d 'The most processes and threads one judge may run at once, a count or off (default 512; also PANEL_JUDGE_PROCESSES): a fork bomb stops there, not at the machine\'s limit. Held by its cgroup, else in its jail\'s own user namespace; not held with Landlock alone' -r
complete -c panel-vote -n "__fish_panel_vote_needs_command" -l judge-disk -d 'The most one judge may write, a size or off (default 1G; also PANEL_JUDGE_DISK): in a jail its private folder (HOME, TMPDIR, working folder), /tmp and /dev/shm share one file system of that size in memory, never the caller\'s disk; without one no file of it grows past the size, and a judge whose private folder holds more, looked at each second, is ended ("disk 1 GiB watched")' -r
complete -c panel-vote -n "__fish_panel_vote_needs_command" -l stop-when-decided -d 'Once the votes in fix the fate of every finding a voter still out was shown, whatever it would vote, end that voter (its whole group, as at the deadline) or never launch it. Its vote records say cancelled, their cause what the votes in fixed; a voter left out is no missing vote, so it disputes nothing. Never the default: a split\'s reasons are the finding, and a voter left out gives none'
complete -c panel-vote -n "__fish_panel_vote_needs_command" -l cascade -d 'Ask voters only as they are needed (implies --stop-when-decided): at first, for each finding, as many of the voters shown it, in reviewer order, as could fix its fate; then more only while a fate is open. Cost can fall while wall time grows'
complete -c panel-vote -n "__fish_panel_vote_needs_command" -l json -d 'With --estimate, one JSON object instead of the table'
complete -c panel-vote -n "__fish_panel_vote_needs_command" -l estimate -d 'Print each judge\'s estimate (model, input and output tokens, USD), the total and what a budget would let in, and launch nothing (a table; JSON with --json). A seat whose model has no price is shown unknown, and the rest priced'
complete -c panel-vote -n "__fish_panel_vote_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c panel-vote -n "__fish_panel_vote_needs_command" -s V -l version -d 'Print version'
complete -c panel-vote -n "__fish_panel_vote_needs_command" -a "apply" -d 'Apply votes already collected: reviewer, finding, merge and vote records in, the same output out. Launches nothing; a judge must be replay:FILE'
complete -c panel-vote -n "__fish_panel_vote_needs_command" -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c panel-vote -n "__fish_panel_vote_using_subcommand apply" -l agree -d 'How many reviewers must pass the work for the panel to pass (default: all)' -r
complete -c panel-vote -n "__fish_panel_vote_using_subcommand apply" -l judge -d 'A judge that acts on or skips each finding left: a seat (HARNESS[:MODEL]), or replay:FILE to replay recorded decisions' -r -f -a "(__panel_harnesses)"
complete -c panel-vote -n "__fish_panel_vote_using_subcommand apply" -l round -d 'The round, counting from 1: picks the answer a replay:FILE judge gives' -r
complete -c panel-vote -n "__fish_panel_vote_using_subcommand apply" -s h -l help -d 'Print help'
complete -c panel-vote -n "__fish_panel_vote_using_subcommand help; and not __fish_seen_subcommand_from apply help" -f -a "apply" -d 'Apply votes already collected: reviewer, finding, merge and vote records in, the same output out. Launches nothing; a judge must be replay:FILE'
complete -c panel-vote -n "__fish_panel_vote_using_subcommand help; and not __fish_seen_subcommand_from apply help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'

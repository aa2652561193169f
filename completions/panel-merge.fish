# The harness names a seat (HARNESS[:MODEL]) starts with.
function __panel_harnesses
    command panel-judge --list-harnesses 2>/dev/null | string replace -rf '^    "name": "([^"]*)",?$' '$1'
end

complete -c panel-merge -l seat -d 'Ask this seat (HARNESS[:MODEL]) to group the findings instead of grouping them in code. It is never taken from the records: for the seed\'s merging seat, the first reviewer\'s, give the first --seat that panel-judge was given' -r -f -a "(__panel_harnesses)"
complete -c panel-merge -l out -d 'The run folder that keeps every prompt, argv, output and record (default: a new folder in $XDG_CACHE_HOME/panel/runs, ~/.cache/panel/runs when XDG_CACHE_HOME is unset, empty or relative; see --keep-runs). It must be new or empty and your own (the PR panel takes its own up again); it is made 0700 and locked while the run lives' -r -F
complete -c panel-merge -l keep-runs -d 'How many days the run folders in $XDG_CACHE_HOME/panel/runs are kept: a run that makes one there removes those whose runs started DAYS or more days ago, but never one a live run holds, nor anything else (default 14; also PANEL_KEEP_DAYS). panel-tally --runs lists them' -r
complete -c panel-merge -l timeout -d 'Seconds one attempt of a seat may take (a wait for a --harness-cap slot included) before it and every process it started are ended' -r
complete -c panel-merge -l retries -d 'How many times an unreadable or failed answer is asked for again' -r
complete -c panel-merge -l jobs -d 'How many seats run at once (default: all that the open-file limit allows)' -r
complete -c panel-merge -l max-budget-usd -d 'A spending cap in USD per call, passed to the harnesses that enforce one' -r
complete -c panel-merge -l harness-file -d 'A JSON file of harness rows that add to or replace the built-in ones (repeatable)' -r -F
complete -c panel-merge -l family -d 'State a seat\'s model family, SEAT=FAMILY (repeatable), e.g. \'exec:llm -m x=openai\'' -r
complete -c panel-merge -l pass-env -d 'Carry this variable of your environment into every seat (repeatable; also PANEL_PASS_ENV, comma-separated)' -r
complete -c panel-merge -l harness-cap -d 'At most N judges of HARNESS at once across every panel-judge on this machine, HARNESS=N (repeatable; also PANEL_HARNESS_CAP, comma-separated)' -r
complete -c panel-merge -l sandbox -d 'How each judge is walled in: auto, a jail of its own (namespaces, a read-only root of what its harness needs, no route out but its proxy) with Landlock inside, falling back to Landlock alone, each with one warning, where the kernel cannot; required, the jail or launch nothing; landlock, Landlock alone; off' -r -f -a "auto\t'A jail of its own with Landlock inside where the kernel can; else Landlock alone, or nothing, each with one warning line and said in every record'
required\t'The jail, or launch nothing (exit 2)'
landlock\t'Landlock alone, as auto falls back to where the kernel forbids namespaces'
off\t'No walls of ours (the supervisor still ends what a judge leaves running)'"
complete -c panel-merge -l sandbox-read -d 'A folder a confined judge may also read and run programs from (repeatable; also PANEL_SANDBOX_READ, colon-separated)' -r -F
complete -c panel-merge -l sandbox-write -d 'A folder a confined judge may also write to, e.g. a log your exec: seat keeps (repeatable; also PANEL_SANDBOX_WRITE, colon-separated)' -r -F
complete -c panel-merge -l sandbox-allow -d 'A host and port a confined judge\'s proxy also lets it reach, HOST:PORT (repeatable; also PANEL_SANDBOX_ALLOW, comma-separated). Its row\'s model service, and the base URLs in its environment and configuration, are allowed already; nothing the prompt names ever is' -r
complete -c panel-merge -l max-output -d 'The most standard output one attempt of a seat may write, kept byte for byte in the run folder (bytes, or K, M, G, T: 64M, 1G). Past it the seat is stopped, with every process it started, and recorded output-limit, an abstention. Its events are read as they arrive, so memory does not grow with it' -r
complete -c panel-merge -l judge-memory -d 'The most memory one judge may hold with all it starts, a size (512M, 4G) or off (default 2G; also PANEL_JUDGE_MEMORY). In a cgroup where panel can make one (as root, or in the cgroups systemd delegates to your user session) it counts the judge\'s files too, and a judge past it is ended; else it bounds each process alone (RLIMIT_DATA). A judge that meets it is recorded failed, "memory limit 2 GiB reached"' -r
complete -c panel-merge -l judge-processes -d 'The most processes and threads one judge may run at once, a count or off (default 512; also PANEL_JUDGE_PROCESSES): a fork bomb stops there, not at the machine\'s limit. Held by its cgroup, else in its jail\'s own user namespace; not held with Landlock alone' -r
complete -c panel-merge -l judge-disk -d 'The most one jailed judge may write, a size or off (default 1G; also PANEL_JUDGE_DISK): its private folder (HOME, TMPDIR, working folder), /tmp and /dev/shm share one file system of that size in memory, never the caller\'s disk. Not held without a jail' -r
complete -c panel-merge -s h -l help -d 'Print help (see more with \'--help\')'
complete -c panel-merge -s V -l version -d 'Print version'

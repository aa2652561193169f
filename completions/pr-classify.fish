complete -c pr-classify -l repo -d 'The repository, where the input does not say (numstat, gh output without url) or to override it. Without it and without one in the input, GH_REPO is read, as gh does; a plan made inside a git repository then takes OWNER/NAME from its origin remote (or its only remote); without any remote and without --pr, the name is only a label of the members\' names, local/FOLDER after the repository\'s folder' -r
complete -c pr-classify -l pr -d 'The pull request number' -r
complete -c pr-classify -l head -d 'The head commit under review; a plan made inside a git repository takes its HEAD when neither this nor the input names one' -r
complete -c pr-classify -l base -d 'The base commit. A plan of HEAD made inside a git repository takes, when neither this nor the input names one, where HEAD left its branch\'s upstream (unless that is the branch\'s own copy on a remote), else the default branch (origin/HEAD\'s target, origin/main, main, origin/master or master)' -r
complete -c pr-classify -l kind -d 'The PR\'s kind (feature, fix, security, …); kind `security` can set the security-slice flag' -r
complete -c pr-classify -l rules -d 'A JSON rules file: its keys replace the defaults\', or add to them with "extend": true. `seed` instead names the seed\'s exact lists: its 3 dependency and 8 generated globs in place of the wider defaults (a file named seed: ./seed)' -r
complete -c pr-classify -l policy -d 'A JSON policy file for the planner: its keys replace the defaults\', or add to them with "extend": true' -r
complete -c pr-classify -l is -d 'Write nothing; exit 0 when the PR is WHAT, 1 when not. WHAT: g10, standard, large, unread, security-slice, g10-hold, or a touch flag (dependency, authority, policy, security, tests)' -r
complete -c pr-classify -l numstat -d 'The input is `git diff --numstat` output (with or without -z); an empty one is an empty diff. With --raw too (git diff --raw --numstat), each file\'s mode is read: mode 120000 lists the file under "links"'
complete -c pr-classify -l gh -d 'The input is `gh pr view --json number,headRefOid,baseRefOid,files[,changedFiles,url]` output. gh lists at most 100 files: a list shorter than changedFiles (or of 100, without it) makes the size unread (g10); pr-review classifies a PR from its whole diff'
complete -c pr-classify -l facts -d 'The input is PR facts: {repo, pr, head, base, kind, changedFiles: [{path, additions, deletions, previousPath, mode}]}'
complete -c pr-classify -l g10-hold -d 'The run holds or held a G10 hold: class g10 at any size'
complete -c pr-classify -l print-rules -d 'Print the rules table in force as JSON and exit'
complete -c pr-classify -l print-facts -d 'Print the PR facts as read (numstat and gh output turned into facts) as JSON, and exit'
complete -c pr-classify -l plan -d 'Also plan the review panel: a `plan` record after the `pr-class` record'
complete -c pr-classify -l print-policy -d 'Print the planner policy in force as JSON and exit'
complete -c pr-classify -l no-opus -d 'No headroom for opus now: plan every opus member at its sonnet profile, marked degraded'
complete -c pr-classify -l text -d 'Write a short summary for people instead of JSON records'
complete -c pr-classify -s h -l help -d 'Print help (see more with \'--help\')'
complete -c pr-classify -s V -l version -d 'Print version'

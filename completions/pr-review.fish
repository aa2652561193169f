complete -c pr-review -l base -d 'The checked-out branch\'s base (default: its upstream, else the default branch)' -r
complete -c pr-review -l repo -d 'The repository (default: GH_REPO, the origin remote, else local/FOLDER without a remote)' -r
complete -c pr-review -l comment -d 'Also post the verdict on the PR as one comment, edited by the next run'
complete -c pr-review -s h -l help -d 'Print help'

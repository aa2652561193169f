complete -c pr-review -l comment -d 'Also post the verdict on the PR as one comment, edited by the next run'
complete -c pr-review -s h -l help -d 'Print help'

complete -c panel-merge -l seat -d 'Ask this seat (HARNESS[:MODEL]) to group the findings instead of grouping them in code; `first` uses the first reviewer\'s seat' -r
complete -c panel-merge -l run -d 'The run folder that keeps the merging seat\'s prompt and answer' -r -F
complete -c panel-merge -l timeout -d 'Seconds the merging seat may take' -r
complete -c panel-merge -l retries -d 'How many times an unreadable grouping is asked for again' -r
complete -c panel-merge -s h -l help -d 'Print help (see more with \'--help\')'
complete -c panel-merge -s V -l version -d 'Print version'

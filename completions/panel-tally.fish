complete -c panel-tally -s h -l help -d 'Print help (see more with \'--help\')'
complete -c panel-tally -s V -l version -d 'Print version'

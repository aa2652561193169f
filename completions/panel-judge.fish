complete -c panel-judge -s h -l help -d 'Print help (see more with \'--help\')'
complete -c panel-judge -s V -l version -d 'Print version'

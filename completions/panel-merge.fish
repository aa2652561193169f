complete -c panel-merge -s h -l help -d 'Print help (see more with \'--help\')'
complete -c panel-merge -s V -l version -d 'Print version'

complete -c pr-classify -s h -l help -d 'Print help (see more with \'--help\')'
complete -c pr-classify -s V -l version -d 'Print version'

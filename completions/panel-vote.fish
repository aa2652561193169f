complete -c panel-vote -s h -l help -d 'Print help (see more with \'--help\')'
complete -c panel-vote -s V -l version -d 'Print version'

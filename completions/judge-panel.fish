complete -c judge-panel -s h -l help -d 'Print help'

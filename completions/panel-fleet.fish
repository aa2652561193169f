complete -c panel-fleet -s o -d 'Where each candidate\'s panel lands: OUT/<name>/records.jsonl and OUT/<name>/run' -r -f -a "(__fish_complete_directories)"
complete -c panel-fleet -s j -d 'Panels at once on each machine (default 4)' -r
complete -c panel-fleet -s S -d 'Run panels on this machine too (repeatable; \':\' is here)' -r -f -a "(__fish_print_hostnames)"
complete -c panel-fleet -s a -d 'A file of candidate paths, one a line' -r -F
complete -c panel-fleet -l no-progress -d 'Draw no status line on a terminal (panels done, judges running, time left)'
complete -c panel-fleet -s h -l help -d 'Print help'

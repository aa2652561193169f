complete -c panel-tally -l agree -d 'Holds needed to pass [default: every judge of the panel, abstainers included]' -r
complete -c panel-tally -l json -d 'Print one tally record (JSON) per panel instead of the text report'
complete -c panel-tally -l each -d 'Count many panels in one stream: one tally per candidate, then a summary'
complete -c panel-tally -s h -l help -d 'Print help (see more with \'--help\')'
complete -c panel-tally -s V -l version -d 'Print version'

complete -c panel-calibrate -l set -d 'The labelled set: llmbar-natural (the default), summedits-sales-email, or a folder' -r -f -a "(__fish_complete_directories)"
complete -c panel-calibrate -l limit -d 'The set\'s first N items only' -r
complete -c panel-calibrate -l orders -d 'Pairwise: both (the default) or alternate' -r -f -a "both\t''
alternate\t''"
complete -c panel-calibrate -l agree -d 'The panel\'s threshold, as panel-tally --agree N' -r
complete -c panel-calibrate -l require-kappa -d 'The gate on the panel\'s kappa with the labels: exit 0, 1 or 3' -r
complete -c panel-calibrate -l require-accuracy -d 'The gate on the panel\'s accuracy' -r
complete -c panel-calibrate -l format -d 'text (the default), markdown or json' -r -f -a "text\t''
markdown\t''
json\t''"
complete -c panel-calibrate -s o -d 'Keep the records and every item\'s run in DIR' -r -f -a "(__fish_complete_directories)"
complete -c panel-calibrate -s j -d 'Items at once (default 1)' -r
complete -c panel-calibrate -l replay -d 'The set\'s recorded stand-in answers in place of seats, offline (made from the labels, not by a model)'
complete -c panel-calibrate -l dry-run -d 'Say what the run would ask and cost, and run nothing'
complete -c panel-calibrate -s h -l help -d 'Print help'

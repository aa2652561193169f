# The harness names a seat (HARNESS[:MODEL]) starts with.
function __panel_harnesses
    command panel-judge --list-harnesses --json 2>/dev/null | string replace -rf '^    "name": "([^"]*)",?$' '$1'
end

complete -c review-battery -l seat -d 'A reviewer\'s seat, HARNESS[:MODEL]; one per reviewer, in order' -r -f -a "(__panel_harnesses)"
complete -c review-battery -l judge -d 'The judge: a seat, or replay:FILE for recorded decisions' -r -f -a "(__panel_harnesses)"
complete -c review-battery -l writer -d 'The command that changes CANDIDATE between rounds (run with bash -c)' -r -f -a "(__fish_complete_command)"
complete -c review-battery -l brief -d 'The brief the work was written to' -r -F
complete -c review-battery -l stage -d 'Names the reviewers NAME-1, NAME-2, … (default: review)' -r
complete -c review-battery -l writer-family -d 'The writer\'s model family: no reviewer may share it' -r
complete -c review-battery -l merge-seat -d 'The seat that groups the findings (default first: the first --seat; code: in code)' -r -f -a "(__panel_harnesses)"
complete -c review-battery -l agree -d 'How many reviewers must pass the work (default: all)' -r
complete -c review-battery -l max-rounds -d 'Stop after N rounds (default: 5; 0: no cap)' -r
complete -c review-battery -l run -d 'Keep every round\'s records under DIR' -r -f -a "(__fish_complete_directories)"
complete -c review-battery -s h -l help -d 'Print help'

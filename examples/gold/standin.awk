# Writes the recorded answers of a stand-in panel over a labelled set, for
# `panel-calibrate --replay`: three stand-in judges of known habits, one line a candidate
# ({"name": …, "answers": {JOB: ANSWER, …}}, what a replay seat answers by job name). They are
# made from the gold labels by a seeded generator (Park-Miller), not by any model: they show
# what the report says of judges whose habits are known.
#   pairwise (the set's set.json says "pairwise"), each judge asked in both orders:
#     instruction   prefers the better answer 85 % of the time, the same in both orders
#     helpfulness   always prefers the answer shown first
#     detail        right 65 % in each order on its own
#   verdicts:
#     consistency   wrong on 15 % of candidates
#     fluency       always says holds
#     figures       right 75 % of the time
# Usage: awk -v contract=pairwise [-v seed=7] -f standin.awk SET/labels.jsonl > SET/standin.jsonl
function rnd() { state = (state * 16807) % 2147483647; return state / 2147483647 }
function other(v) {
    if (v == "holds") return "breaks"
    if (v == "breaks") return "holds"
    return (v == "A") ? "B" : "A"
}
function verdict(v, why) {
    return sprintf("{\"verdict\":\"%s\",\"reason\":\"stand-in: %s\",\"confidence\":0.8}", v, why)
}
# The answer of a judge preferring `said` when shown `order`: first or second as shown.
function preferred(said, order, why,    shown_first) {
    shown_first = (order == "ab") ? "A" : "B"
    return sprintf("{\"preferred\":\"%s\",\"reason\":\"stand-in: %s\",\"confidence\":0.8}", (said == shown_first) ? "first" : "second", why)
}
function pairwise_line(name, truth,    i, r) {
    r = (rnd() < 0.85) ? truth : other(truth)
    printf "{\"name\":\"%s\",\"answers\":{", name
    printf "\"instruction.ab\":%s,\"instruction.ba\":%s,", preferred(r, "ab", "right 85 %"), preferred(r, "ba", "right 85 %")
    printf "\"helpfulness.ab\":%s,\"helpfulness.ba\":%s,", preferred("A", "ab", "the first shown"), preferred("B", "ba", "the first shown")
    printf "\"detail.ab\":%s,", preferred((rnd() < 0.65) ? truth : other(truth), "ab", "right 65 % each order")
    printf "\"detail.ba\":%s}}\n", preferred((rnd() < 0.65) ? truth : other(truth), "ba", "right 65 % each order")
}
function verdict_line(name, truth) {
    printf "{\"name\":\"%s\",\"answers\":{", name
    printf "\"consistency\":%s,", verdict((rnd() < 0.15) ? other(truth) : truth, "wrong on 15 %")
    printf "\"fluency\":%s,", verdict("holds", "always holds")
    printf "\"figures\":%s}}\n", verdict((rnd() < 0.75) ? truth : other(truth), "right 75 %")
}
BEGIN { if (seed == "") seed = 7; state = seed }
{
    if (!match($0, /"name": *"[^"]*"/)) { print "standin.awk: line " NR ": no name" > "/dev/stderr"; exit 2 }
    name = substr($0, RSTART, RLENGTH); sub(/^"name": *"/, "", name); sub(/"$/, "", name)
    if (!match($0, /"label": *"[^"]*"/)) { print "standin.awk: line " NR ": no label" > "/dev/stderr"; exit 2 }
    truth = substr($0, RSTART, RLENGTH); sub(/^"label": *"/, "", truth); sub(/"$/, "", truth)
    if (contract == "pairwise") pairwise_line(name, truth)
    else verdict_line(name, truth)
}

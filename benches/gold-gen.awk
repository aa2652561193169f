# Writes a history of panels whose candidates have known answers, and their gold labels, from a
# seeded generator (Park-Miller, the same numbers under any awk), for panel-tally --ledger --gold.
# Each panel has three judges of known habits.
#   verdicts (the default): the truth is holds for 60 % of the candidates
#     correctness@claude:haiku                   wrong on 15 % of candidates
#     evidence@opencode:google/gemini-2.5-flash  always says holds
#     edges@codex:gpt-5-mini                     right 80 %, and times out on 10 % of panels
#   pairwise=1: the better answer is A for 42 % of the pairs (as in LLMBar's Natural set);
#   each judge is shown both orders
#     instruction@claude:haiku                   prefers the better answer 85 % of the time,
#                                                the same in both orders
#     instruction@codex:gpt-5-mini               always prefers the answer shown first
#     instruction@opencode:google/gemini-2.5-flash  right 70 % in each order on its own
# A candidate's label is written to the file `labels` (when given) with chance `labelled`
# (default 1); the rest are the unlabelled history.
# Usage: awk -v panels=200 -v seed=7 -v labels=labels.jsonl [-v labelled=0.5] [-v pairwise=1] \
#          -f benches/gold-gen.awk > history.jsonl
function rnd() { state = (state * 16807) % 2147483647; return state / 2147483647 }
function other(v) {
    if (v == "holds") return "breaks"
    if (v == "breaks") return "holds"
    return (v == "A") ? "B" : "A"
}
function head(j, p, lens) {
    return sprintf("{\"type\":\"%s\",\"judge\":\"%s@%s\",\"lens\":\"%s\",\"seat\":\"%s\",\"harness\":\"%s\",\"model\":\"%s\",\"family\":\"%s\",\"candidate\":\"sha256:%064x\"", pairwise ? "pairwise" : "verdict", lens, H[j], lens, S[j], H[j], M[j], F[j], p + 1)
}
function tail(ms, run) {
    return sprintf("\"attempts\":1,\"durationMs\":%d,\"usage\":{\"inputTokens\":%d,\"outputTokens\":%d,\"costUsd\":%.6f},\"panelSize\":3,\"run\":\"%s\",\"sandbox\":\"landlock-abi-6\"}", ms, 1500 + int(rnd() * 1000), 50 + int(rnd() * 100), 0.001 + rnd() * 0.004, run)
}
function verdict(j, truth, p, run,    v) {
    if (j == 1) v = (rnd() < 0.15) ? other(truth) : truth
    if (j == 2) v = "holds"
    if (j == 3) {
        v = (rnd() < 0.8) ? truth : other(truth)
        if (rnd() < 0.1) {
            printf "%s,\"verdict\":null,\"reason\":null,\"confidence\":null,\"status\":\"timeout\",\"cause\":\"no answer within 120 s\",%s\n", head(j, p, L[j]), tail(120000, run)
            return
        }
    }
    printf "%s,\"verdict\":\"%s\",\"reason\":\"r\",\"confidence\":0.8,\"status\":\"ok\",%s\n", head(j, p, L[j]), v, tail(2000 + int(rnd() * 8000), run)
}
# One order's answer: the preference, in the user's names.
function order(shown, said) {
    return sprintf("{\"shown\":\"%s\",\"verdict\":\"%s\",\"reason\":\"r\",\"confidence\":0.8,\"status\":\"ok\",\"attempts\":1,\"durationMs\":3000}", shown, said)
}
function pair(j, truth, p, run,    ab, ba, v, st) {
    if (j == 1) { ab = (rnd() < 0.85) ? truth : other(truth); ba = ab }
    if (j == 2) { ab = "A"; ba = "B" }
    if (j == 3) { ab = (rnd() < 0.7) ? truth : other(truth); ba = (rnd() < 0.7) ? truth : other(truth) }
    if (ab == ba) { v = "\"" ab "\""; st = "ok" } else { v = "null"; st = "position-inconsistent" }
    printf "%s,\"a\":\"a.md\",\"b\":\"b.md\",\"verdict\":%s,\"reason\":null,\"confidence\":null,\"status\":\"%s\",\"orders\":[%s,%s],%s\n", head(j, p, "instruction"), v, st, order("AB", ab), order("BA", ba), tail(6000, run)
}
BEGIN {
    if (panels == "") panels = 200
    if (seed == "") seed = 7
    if (labelled == "") labelled = 1
    state = seed
    if (pairwise) {
        split("claude codex opencode", H, " ")
        split("claude:haiku codex:gpt-5-mini opencode:google/gemini-2.5-flash", S, " ")
    } else {
        split("correctness evidence edges", L, " ")
        split("claude opencode codex", H, " ")
        split("claude:haiku opencode:google/gemini-2.5-flash codex:gpt-5-mini", S, " ")
    }
    for (j = 1; j <= 3; j++) { M[j] = S[j]; sub(/^[a-z]*:/, "", M[j]) }
    F["claude"] = "anthropic"; F["codex"] = "openai"; F["opencode"] = "google"
    for (j = 1; j <= 3; j++) F[j] = F[H[j]]
    for (p = 0; p < panels; p++) {
        run = sprintf("/runs/gold-%07d", p)
        if (pairwise) truth = (rnd() < 0.42) ? "A" : "B"
        else truth = (rnd() < 0.6) ? "holds" : "breaks"
        lab = rnd() < labelled
        if (labels != "" && lab)
            printf "{\"candidate\":\"sha256:%064x\",\"label\":\"%s\"}\n", p + 1, truth > labels
        for (j = 1; j <= 3; j++) {
            if (pairwise) pair(j, truth, p, run)
            else verdict(j, truth, p, run)
        }
    }
}

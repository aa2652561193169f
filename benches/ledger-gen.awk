# Writes a history of verdict records as panel-judge writes them, from a seeded generator
# (Park-Miller, the same numbers under any awk), panel after panel, until PANELS panels are
# written. Each panel judges one candidate that truly holds (70 %) or breaks, with five judges
# of known habits, so that a ledger has something to find:
#   correctness@claude:haiku       right 90 % of the time
#   correctness@claude:sonnet      copies haiku's answer 90 % of the time (one judge, two costumes)
#   edges@codex:gpt-5-mini         right 85 %, but times out or is unreadable 30 % of the time
#   evidence@opencode:google/...   says holds 97 % of the time, whatever the candidate
#   edges@claude:haiku             right 40 % of the time (worse than a coin)
# Every tenth panel also carries one canary record per seat (a candidate of known answer,
# marked "canary"). One panel in five has only the first three judges.
# With -v labels=FILE, each candidate's truth is also written to FILE as its gold label
# (panel-tally --ledger --gold FILE).
# Usage: awk -v panels=200 -v seed=7 [-v labels=FILE] -f ledger-gen.awk > history.jsonl
function rnd() { state = (state * 16807) % 2147483647; return state / 2147483647 }
function judge(j, truth, p, size,    v, st, cause, ms, lens, seat, harness, model, family, name, inp, outp, cost, usage, reason) {
    lens = L[j]; seat = S[j]; harness = H[j]; model = M[j]; family = F[j]
    name = lens "@" seat
    gsub(/[^A-Za-z0-9._@-]/, "-", name)
    st = "ok"; cause = ""
    if (j == 1) v = (rnd() < 0.9) ? truth : other(truth)
    if (j == 2) v = (rnd() < 0.9) ? first : ((rnd() < 0.9) ? truth : other(truth))
    if (j == 3) {
        v = (rnd() < 0.85) ? truth : other(truth)
        if (rnd() < 0.3) { st = (rnd() < 0.7) ? "timeout" : "unreadable" }
    }
    if (j == 4) v = (rnd() < 0.97) ? "holds" : "breaks"
    if (j == 5) v = (rnd() < 0.4) ? truth : other(truth)
    if (j == 1) first = v
    ms = int(T[j] * (0.5 + rnd() + rnd() * rnd() * 2))
    inp = 1400 + int(rnd() * 1600); outp = 40 + int(rnd() * 160)
    cost = (inp * PI[j] + outp * PO[j]) / 1000000
    usage = sprintf(",\"usage\":{\"inputTokens\":%d,\"outputTokens\":%d,\"costUsd\":%.6f}", inp, outp, cost)
    reason = (v == "holds") ? "The answer states its bound and the code keeps it." : "The empty input raises where the answer promises None."
    if (st == "timeout") {
        ms = 120000
        printf "{\"type\":\"verdict\",\"judge\":\"%s\",\"lens\":\"%s\",\"seat\":\"%s\",\"harness\":\"%s\",\"model\":\"%s\",\"family\":\"%s\",\"candidate\":\"sha256:%064x\",\"verdict\":null,\"reason\":null,\"confidence\":null,\"status\":\"timeout\",\"cause\":\"no answer within 120 s\",\"attempts\":1,\"durationMs\":%d,\"panelSize\":%d,\"run\":\"%s\",\"sandbox\":\"landlock-abi-6\"%s}\n", name, lens, seat, harness, model, family, p + 1, ms, size, run, canary
    } else if (st == "unreadable") {
        printf "{\"type\":\"verdict\",\"judge\":\"%s\",\"lens\":\"%s\",\"seat\":\"%s\",\"harness\":\"%s\",\"model\":\"%s\",\"family\":\"%s\",\"candidate\":\"sha256:%064x\",\"verdict\":null,\"reason\":null,\"confidence\":null,\"status\":\"unreadable\",\"cause\":\"no JSON object meets the verdict contract\",\"excerpt\":\"I think it mostly works\",\"attempts\":2,\"durationMs\":%d%s,\"panelSize\":%d,\"run\":\"%s\",\"sandbox\":\"landlock-abi-6\"%s}\n", name, lens, seat, harness, model, family, p + 1, ms, usage, size, run, canary
    } else {
        printf "{\"type\":\"verdict\",\"judge\":\"%s\",\"lens\":\"%s\",\"seat\":\"%s\",\"harness\":\"%s\",\"model\":\"%s\",\"family\":\"%s\",\"candidate\":\"sha256:%064x\",\"verdict\":\"%s\",\"reason\":\"%s\",\"confidence\":%.2f,\"status\":\"ok\",\"attempts\":1,\"durationMs\":%d%s,\"panelSize\":%d,\"run\":\"%s\",\"sandbox\":\"landlock-abi-6\"%s}\n", name, lens, seat, harness, model, family, p + 1, v, reason, 0.6 + rnd() * 0.4, ms, usage, size, run, canary
    }
}
function other(v) { return (v == "holds") ? "breaks" : "holds" }
BEGIN {
    if (panels == "") panels = 200
    if (seed == "") seed = 7
    state = seed
    split("correctness correctness edges evidence edges", L, " ")
    split("claude:haiku claude:sonnet codex:gpt-5-mini opencode:google/gemini-2.5-flash claude:haiku", S, " ")
    split("claude claude codex opencode claude", H, " ")
    split("haiku sonnet gpt-5-mini google/gemini-2.5-flash haiku", M, " ")
    split("anthropic anthropic openai google anthropic", F, " ")
    split("4200 9800 15000 6100 4200", T, " ")
    split("1 3 0.25 0.3 1", PI, " ")
    split("5 15 2 2.5 5", PO, " ")
    for (p = 0; p < panels; p++) {
        truth = (rnd() < 0.7) ? "holds" : "breaks"
        if (labels != "") printf "{\"candidate\":\"sha256:%064x\",\"label\":\"%s\"}\n", p + 1, truth > labels
        size = (p % 5 == 4) ? 3 : 5
        run = sprintf("/home/me/.cache/panel/runs/panel.%07d", p)
        canary = ""
        for (j = 1; j <= size; j++) judge(j, truth, p, size)
        if (p % 10 == 9) {
            known = (rnd() < 0.5) ? "holds" : "breaks"
            canary = ",\"canary\":\"" known "\""
            for (j = 1; j <= size; j++) if (j != 5) judge(j, known, p + 1000000000, size)
        }
    }
}

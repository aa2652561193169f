# Writes verdict records as panel-judge would, panels of SIZE judges each with the records of a
# panel together, until LINES records are written (the last panel may be smaller). Every 7th
# judge times out; one verdict in five is breaks.
# With -v out=DIR (one panel), also writes DIR/<judge>.json as the seed script's judges left
# them: the verdict object, or junk for a judge that gave none (then unreadable, not timed
# out, as the script would see it); the records' run is then DIR.
# Usage: awk -v lines=1000000 -v size=3 -f tally-gen.awk > verdicts.jsonl
BEGIN {
    if (size == "") size = 3
    if (lines == "") lines = size
    split("correctness edges evidence", lens, " ")
    split("claude:haiku codex:gpt-5-mini opencode:google/gemini-2.5-flash", seat, " ")
    split("claude openai google", family, " ")
    split("claude codex opencode", harness, " ")
    gone = (out != "") ? "unreadable" : "timeout"
    # The script's report has an empty reason for an unreadable judge; ours shows its cause
    # (a deliberate difference), so one panel's unreadable records carry none.
    cause = (out != "") ? "null" : "\"no answer within 120 s\""
    n = 0
    for (p = 0; n < lines; p++) {
        this = (lines - n < size) ? lines - n : size
        seal = sprintf("sha256:%064x", p)
        run = (out != "") ? out : sprintf("/tmp/panel-run.%08d", p)
        for (j = 0; j < this; j++) {
            k = j % 3 + 1
            # One panel's names fit the script's 12-byte column, so its report is ours byte
            # for byte (a longer name widens our column; a deliberate difference).
            name = (out != "") ? sprintf("%.4s-%d", lens[k], j) : sprintf("%s-%d", lens[k], j)
            if ((p * size + j) % 7 == 6) {
                if (out != "") { f = sprintf("%s/%s.json", out, name); print "I could not finish in time" > f; close(f) }
                printf "{\"type\":\"verdict\",\"judge\":\"%s\",\"lens\":\"%s\",\"seat\":\"%s\",\"harness\":\"%s\",\"family\":\"%s\",\"candidate\":\"%s\",\"verdict\":null,\"reason\":null,\"confidence\":null,\"status\":\"%s\",\"cause\":%s,\"attempts\":1,\"durationMs\":120000,\"panelSize\":%d,\"run\":\"%s\"}\n", name, lens[k], seat[k], harness[k], family[k], seal, gone, cause, this, run
            } else {
                v = ((p + j) % 5 == 0) ? "breaks" : "holds"
                if (out != "") { f = sprintf("%s/%s.json", out, name); printf "{\"verdict\":\"%s\",\"reason\":\"The answer states its bound and the loop keeps it.\",\"confidence\":0.8}\n", v > f; close(f) }
                printf "{\"type\":\"verdict\",\"judge\":\"%s\",\"lens\":\"%s\",\"seat\":\"%s\",\"harness\":\"%s\",\"family\":\"%s\",\"candidate\":\"%s\",\"verdict\":\"%s\",\"reason\":\"The answer states its bound and the loop keeps it.\",\"confidence\":0.8,\"status\":\"ok\",\"attempts\":1,\"durationMs\":4210,\"usage\":{\"inputTokens\":1520,\"outputTokens\":48,\"cachedTokens\":1024,\"costUsd\":0.0021},\"panelSize\":%d,\"run\":\"%s\"}\n", name, lens[k], seat[k], harness[k], family[k], seal, v, this, run
            }
            n++
        }
    }
}

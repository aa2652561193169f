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
    n = 0
    for (p = 0; n < lines; p++) {
        this = (lines - n < size) ? lines - n : size
        seal = sprintf("sha256:%064x", p)
        run = (out != "") ? out : sprintf("/tmp/panel-run.%08d", p)
        for (j = 0; j < this; j++) {
            k = j % 3 + 1
            if ((p * size + j) % 7 == 6) {
                if (out != "") { f = sprintf("%s/%s-%d.json", out, lens[k], j); print "I could not finish in time" > f; close(f) }
                printf "{\"type\":\"verdict\",\"judge\":\"%s-%d\",\"lens\":\"%s\",\"seat\":\"%s\",\"harness\":\"%s\",\"family\":\"%s\",\"candidate\":\"%s\",\"verdict\":null,\"reason\":null,\"confidence\":null,\"status\":\"%s\",\"cause\":\"no answer within 120 s\",\"attempts\":1,\"durationMs\":120000,\"panelSize\":%d,\"run\":\"%s\"}\n", lens[k], j, lens[k], seat[k], harness[k], family[k], seal, gone, this, run
            } else {
                v = ((p + j) % 5 == 0) ? "breaks" : "holds"
                if (out != "") { f = sprintf("%s/%s-%d.json", out, lens[k], j); printf "{\"verdict\":\"%s\",\"reason\":\"The answer states its bound and the loop keeps it.\",\"confidence\":0.8}\n", v > f; close(f) }
                printf "{\"type\":\"verdict\",\"judge\":\"%s-%d\",\"lens\":\"%s\",\"seat\":\"%s\",\"harness\":\"%s\",\"family\":\"%s\",\"candidate\":\"%s\",\"verdict\":\"%s\",\"reason\":\"The answer states its bound and the loop keeps it.\",\"confidence\":0.8,\"status\":\"ok\",\"attempts\":1,\"durationMs\":4210,\"usage\":{\"inputTokens\":1520,\"outputTokens\":48,\"cachedTokens\":1024,\"costUsd\":0.0021},\"panelSize\":%d,\"run\":\"%s\"}\n", lens[k], j, lens[k], seat[k], harness[k], family[k], seal, v, this, run
            }
            n++
        }
    }
}

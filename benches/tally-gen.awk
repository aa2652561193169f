# Writes verdict records as panel-judge would: PANELS panels of SIZE judges each, the records of
# each panel together, until LINES records are written (the last panel may be smaller).
# Usage: awk -v lines=1000000 -v size=3 -f tally-gen.awk
BEGIN {
    if (size == "") size = 3
    if (lines == "") lines = size
    split("correctness edges evidence", lens, " ")
    split("claude:haiku codex:gpt-5-mini opencode:google/gemini-2.5-flash", seat, " ")
    split("claude openai google", family, " ")
    split("claude codex opencode", harness, " ")
    n = 0
    for (p = 0; n < lines; p++) {
        this = (lines - n < size) ? lines - n : size
        seal = sprintf("sha256:%064x", p)
        run = sprintf("/tmp/panel-run.%08d", p)
        for (j = 0; j < this; j++) {
            k = j % 3 + 1
            if ((p * size + j) % 7 == 6) {
                printf "{\"type\":\"verdict\",\"judge\":\"%s-%d\",\"lens\":\"%s\",\"seat\":\"%s\",\"harness\":\"%s\",\"family\":\"%s\",\"candidate\":\"%s\",\"verdict\":null,\"reason\":null,\"confidence\":null,\"status\":\"timeout\",\"cause\":\"no answer within 120 s\",\"attempts\":1,\"durationMs\":120000,\"panelSize\":%d,\"run\":\"%s\"}\n", lens[k], j, lens[k], seat[k], harness[k], family[k], seal, this, run
            } else {
                v = ((p + j) % 5 == 0) ? "breaks" : "holds"
                printf "{\"type\":\"verdict\",\"judge\":\"%s-%d\",\"lens\":\"%s\",\"seat\":\"%s\",\"harness\":\"%s\",\"family\":\"%s\",\"candidate\":\"%s\",\"verdict\":\"%s\",\"reason\":\"The answer states its bound and the loop keeps it.\",\"confidence\":0.8,\"status\":\"ok\",\"attempts\":1,\"durationMs\":4210,\"usage\":{\"inputTokens\":1520,\"outputTokens\":48,\"cachedTokens\":1024,\"costUsd\":0.0021},\"panelSize\":%d,\"run\":\"%s\"}\n", lens[k], j, lens[k], seat[k], harness[k], family[k], seal, v, this, run
            }
            n++
        }
    }
}

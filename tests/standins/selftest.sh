#!/usr/bin/env bash
# Self-check for the stand-ins: every CLI x every mode with the sealed argv of
# harnesses.md, plus stdin, logging, state, -once, grandchild and timing checks.
# Usage: tests/standins/selftest.sh [-v] [CLI...]
set -u
VERBOSE=0
[[ ${1-} == -v ]] && { VERBOSE=1; shift; }
_s=${BASH_SOURCE[0]}
while [[ -L $_s ]]; do _l=$(readlink "$_s"); [[ $_l == /* ]] && _s=$_l || _s=${_s%/*}/$_l; done
[[ $_s == */* ]] && HERE=$(cd "${_s%/*}" && pwd) || HERE=$PWD
command -v jq >/dev/null || { echo "selftest: jq is required" >&2; exit 2; }

T=$(mktemp -d "${TMPDIR:-/tmp}/standin-selftest.XXXXXX")
trap 'cleanup' EXIT
cleanup() {
  if [[ -f $T/log/grandchildren ]]; then
    while read -r p; do kill "$p" 2>/dev/null; done <"$T/log/grandchildren"
  fi
  rm -rf "$T"
}
export PATH=$HERE:$PATH
# The checks below pass each CLI all kinds of argv on purpose; the lockdown check, on by default,
# is checked on its own at the end.
export HOME=$T/home STANDIN_LOG=$T/log STANDIN_LOCKDOWN=off
unset STANDIN_MODE STANDIN_RULES STANDIN_VERDICT STANDIN_REASON CODEX_HOME COPILOT_HOME GEMINI_CLI_HOME \
  CLAUDE_CONFIG_DIR XDG_CONFIG_HOME XDG_DATA_HOME XDG_STATE_HOME XDG_CACHE_HOME LLM_USER_PATH
mkdir -p "$HOME" "$T/work"
cd "$T/work" || exit 2
SCHEMA='{"type":"object","properties":{"verdict":{"type":"string","enum":["holds","breaks"]},"reason":{"type":"string"},"confidence":{"type":"number"}},"required":["verdict","reason","confidence"],"additionalProperties":false}'
printf '%s' "$SCHEMA" >"$T/schema.json"
printf 'version: 1\nagent:\n  name: judge\n  system_prompt_path: ./system.md\n  tools: []\n' >"$T/judge.yaml"

PASS=0 FAIL=0
ok() { PASS=$((PASS + 1)); ((VERBOSE)) && printf 'ok   %s\n' "$1"; return 0; }
bad() { FAIL=$((FAIL + 1)); printf 'FAIL %s\n' "$1"; [[ -n ${2-} ]] && printf '     %s\n' "$2"; return 0; }
check() { # NAME CONDITION-RESULT(0/1) [DETAIL]
  if [[ $2 == 0 ]]; then ok "$1"; else bad "$1" "${3-}"; fi
}

# ------------------------------------------------------------------ sealed argv per CLI/variant
# sealed CLI VARIANT PROMPT -> ARGV array
sealed() {
  local cli=$1 v=$2 p=$3
  case $cli/$v in
    claude/text) ARGV=(claude -p "$p" --model haiku --json-schema "$SCHEMA" --tools "" --no-session-persistence --bare) ;;
    claude/json) ARGV=(claude -p "$p" --model haiku --json-schema "$SCHEMA" --tools "" --no-session-persistence --bare --output-format json --max-budget-usd 0.05) ;;
    codex/text|codex/json)
      ARGV=(codex exec "$p" --output-schema "$T/schema.json" -o "$T/codex-out.txt" -s read-only --ephemeral
        --skip-git-repo-check --ignore-rules --ignore-user-config
        --disable shell_tool --disable unified_exec --disable goals --disable multi_agent
        --disable view_image --disable image_generation --disable tool_suggest --disable apps
        --disable sleep_tool -c 'web_search="disabled"' -c analytics.enabled=false
        -c check_for_update_on_startup=false --disable plugins --disable remote_plugin
        --disable in_app_updates --disable plugin_sharing --disable skill_mcp_dependency_install -m mock-model)
      [[ $v == json ]] && ARGV+=(--json) ;;
    copilot/text) ARGV=(copilot -p "$p" -s --no-auto-update --available-tools=none_at_all --no-custom-instructions --disable-builtin-mcps --no-ask-user --model mock-model) ;;
    copilot/json) ARGV=(copilot -p "$p" -s --no-auto-update --available-tools=none_at_all --no-custom-instructions --disable-builtin-mcps --no-ask-user --output-format json) ;;
    opencode/text) ARGV=(opencode run "$p" -m mock/mock-model --pure --title judge) ;;
    opencode/json) ARGV=(opencode run "$p" -m mock/mock-model --pure --title judge --format json) ;;
    gemini/text) ARGV=(gemini -p "$p" -m gemini-2.5-flash --skip-trust) ;;
    gemini/json) ARGV=(gemini -p "$p" -m gemini-2.5-flash --skip-trust -o json) ;;
    qwen/text) ARGV=(qwen "$p" --auth-type openai -m mock-model --json-schema "@$T/schema.json" --chat-recording false --approval-mode default --max-tool-calls 0) ;;
    qwen/json) ARGV=(qwen "$p" --auth-type openai -m mock-model --json-schema "@$T/schema.json" --chat-recording false --approval-mode default --max-tool-calls 0 -o json) ;;
    kimi/json) ARGV=(kimi --print -p "$p" --output-format stream-json --agent-file "$T/judge.yaml" -m mock) ;;
    kimi/text) ARGV=(kimi --quiet -p "$p" --agent-file "$T/judge.yaml") ;;
    agent/json) ARGV=(agent -p "$p" --mode ask --trust --output-format json) ;;
    agent/text) ARGV=(agent -p "$p" --mode ask --trust) ;;
    agy/json) ARGV=(agy -p "$p" --json-schema "$SCHEMA" --output-format json) ;;
    agy/text) ARGV=(agy -p "$p" --output-format text) ;;
    llm/text) ARGV=(llm prompt -m gpt-4o-mini --schema "$SCHEMA" --no-log "$p") ;;
    llm/json) ARGV=(llm -m gpt-4o-mini -s "You are a judge" --schema "$SCHEMA" -n -x "$p") ;;
  esac
}
# answer CLI VARIANT <stdout  -> the answer text the panel parser would look at
answer() {
  case $1/$2 in
    claude/json|agy/json) jq -r 'if .structured_output then (.structured_output|tojson) else .result end' ;;
    codex/json) jq -rs '.[]|select(.type=="item.completed" and .item.type=="agent_message")|.item.text' ;;
    copilot/json) jq -rs '.[]|select(.type=="assistant.message")|.data.content' ;;
    opencode/json) jq -rs '.[]|select(.type=="text")|.part.text' ;;
    gemini/json) jq -r '.response' ;;
    qwen/json) jq -r '.[]|select(.type=="result")|if .structured_result then (.structured_result|tojson) else .result end' ;;
    kimi/json) jq -rs '.[]|select(.role=="assistant")|.content' ;;
    agent/json) jq -r '.result' ;;
    *) cat ;;
  esac
}
# run_cli: runs "${ARGV[@]}" with stdin /dev/null -> OUT ERR RC
run_cli() {
  "${ARGV[@]}" >"$T/out" 2>"$T/err" </dev/null
  RC=$?
  OUT=$(<"$T/out"); ERR=$(<"$T/err")
}
verdict_of() { jq -r 'if type=="object" then (.verdict // .answer // "none") else "none" end' 2>/dev/null <<<"$1" || echo notjson; }
fail_code() { case $1 in kimi) echo 75 ;; *) echo 1 ;; esac; }

CLIS=(claude codex copilot opencode gemini qwen kimi agent agy llm)
(($#)) && CLIS=("$@")
MODES=(ok holds prose fence invalid wrongschema fail error0 validfail usage-limit rate-limit)

for cli in "${CLIS[@]}"; do
  for v in text json; do
    for mode in "${MODES[@]}"; do
      name="$cli/$v/$mode"
      sealed "$cli" "$v" "Judge the claim: first(xs) never raises. Reply with JSON."
      STANDIN_MODE=$mode run_cli
      A=$(answer "$cli" "$v" <<<"$OUT" 2>/dev/null)
      V=$(verdict_of "$A")
      schema_strict=0
      [[ $cli == qwen ]] && schema_strict=1
      case $mode in
        ok) check "$name" "$([[ $RC == 0 && $V == breaks ]] && jq -e '.confidence==0.9 and (.reason|type=="string")' >/dev/null <<<"$A"; echo $?)" "rc=$RC answer=$A err=${ERR:0:200}" ;;
        holds) check "$name" "$([[ $RC == 0 && $V == holds ]]; echo $?)" "rc=$RC answer=$A" ;;
        prose)
          if ((schema_strict)); then
            check "$name" "$([[ $RC == 1 && -z $OUT && $ERR == *'plain text instead of calling the structured_output tool'* ]]; echo $?)" "rc=$RC out=$OUT err=$ERR"
          else
            check "$name" "$([[ $RC == 0 && $V == notjson && -n $A && $A != *'{'* ]]; echo $?)" "rc=$RC answer=$A"
          fi ;;
        fence)
          if ((schema_strict)); then
            check "$name" "$([[ $RC == 1 && -z $OUT ]]; echo $?)" "rc=$RC out=$OUT"
          elif [[ $cli/$v == llm/json ]]; then  # llm -x extracts the fenced block
            check "$name" "$([[ $RC == 0 && $V == breaks ]]; echo $?)" "rc=$RC answer=$A"
          else
            check "$name" "$([[ $RC == 0 && $A == '```json'* && $V == notjson ]]; echo $?)" "rc=$RC answer=$A"
          fi ;;
        invalid) check "$name" "$([[ $RC == 0 && $V == maybe ]]; echo $?)" "rc=$RC answer=$A" ;;
        wrongschema) check "$name" "$([[ $RC == 0 && $V == yes ]]; echo $?)" "rc=$RC answer=$A" ;;
        fail)
          fc=$(fail_code "$cli")
          case $cli in
            claude)
              if [[ $v == text ]]; then
                c=$([[ $RC == 1 && $OUT == 'API Error: Connection refused'* ]]; echo $?)
              else
                c=$([[ $RC == 1 ]] && jq -e '.is_error==true and (.result|startswith("API Error: Connection refused"))' >/dev/null <<<"$OUT"; echo $?)
              fi ;;
            kimi) c=$([[ $RC == 75 && $OUT == 'Connection error.' ]]; echo $?) ;;
            codex)
              if [[ $v == text ]]; then c=$([[ $RC == 1 && $ERR == *'ERROR: '* && -z $OUT ]]; echo $?)
              else c=$([[ $RC == 1 ]] && jq -se 'map(.type)|index("turn.failed")' >/dev/null <<<"$OUT"; echo $?); fi ;;
            *) c=$([[ $RC == "$fc" && -n $ERR && $V != breaks ]]; echo $?) ;;
          esac
          check "$name" "$c" "rc=$RC out=${OUT:0:200} err=${ERR:0:200}" ;;
        error0)
          if [[ $cli/$v == claude/text ]]; then
            c=$([[ $RC == 0 && $OUT == 'API Error: 500 {"type":"error"'* ]]; echo $?)
          else
            c=$([[ $RC == 0 && $V != breaks && $V != holds && ( -n $OUT ) ]]; echo $?)
          fi
          check "$name" "$c" "rc=$RC out=${OUT:0:200}" ;;
        validfail)
          check "$name" "$([[ $RC == $(fail_code "$cli") && $V == breaks ]]; echo $?)" "rc=$RC answer=$A" ;;
        usage-limit)
          c=$([[ $RC != 0 && $V != breaks ]] && grep -qiE 'limit|quota' <<<"$OUT$ERR"; echo $?)
          if [[ $cli/$v == claude/text ]]; then c=$([[ $RC == 1 && $OUT == 'Claude AI usage limit reached|1767225600' ]]; echo $?); fi
          if [[ $cli/$v == codex/text ]]; then c=$([[ $RC == 1 && $ERR == *"ERROR: You've hit your usage limit."*'try again at 3:15 PM.'* ]]; echo $?); fi
          check "$name" "$c" "rc=$RC out=${OUT:0:200} err=${ERR:0:200}" ;;
        rate-limit)
          c=$([[ $RC != 0 && $V != breaks ]] && grep -qiE '429|rate' <<<"$OUT$ERR"; echo $?)
          if [[ $cli/$v == claude/text ]]; then c=$([[ $RC == 1 && $OUT == 'API Error: 429 {"type":"error","error":{"type":"rate_limit_error"'* ]]; echo $?); fi
          if [[ $cli/$v == codex/text ]]; then c=$([[ $RC == 1 && $ERR == *'ERROR: exceeded retry limit, last status: 429 Too Many Requests'* ]]; echo $?); fi
          check "$name" "$c" "rc=$RC out=${OUT:0:200} err=${ERR:0:200}" ;;
      esac
    done
  done

  # ---- modes that do not answer normally (text variant)
  P="Judge the $cli claim (process modes)."
  sealed "$cli" text "$P"
  # flood: 100 MiB on stdout, exit 0
  n=$(STANDIN_MODE=flood "${ARGV[@]}" </dev/null 2>/dev/null | wc -c); rc=${PIPESTATUS[0]}
  check "$cli/flood" "$([[ $rc == 0 && $n == 104857600 ]]; echo $?)" "rc=$rc bytes=$n"
  # hang
  STANDIN_MODE=hang timeout 1 "${ARGV[@]}" </dev/null >/dev/null 2>&1; rc=$?
  check "$cli/hang" "$([[ $rc == 124 ]]; echo $?)" "rc=$rc"
  # killed
  { STANDIN_MODE=killed "${ARGV[@]}" </dev/null >/dev/null 2>&1; rc=$?; } 2>/dev/null
  check "$cli/killed" "$([[ $rc == 137 ]]; echo $?)" "rc=$rc"
  # sleep:N
  t0=$EPOCHREALTIME
  STANDIN_MODE=sleep:0.3 run_cli
  t1=$EPOCHREALTIME; el=$(((${t1/./} - ${t0/./}) / 1000))
  check "$cli/sleep:0.3" "$([[ $RC == 0 && $el -ge 300 && $(verdict_of "$(answer "$cli" text <<<"$OUT")") == breaks ]]; echo $?)" "rc=$RC elapsed=${el}ms"
  # grandchild: stand-in hangs and leaves a grandchild holding stdout
  before=$(wc -l 2>/dev/null <"$STANDIN_LOG/grandchildren" || echo 0)
  STANDIN_MODE=grandchild timeout 1 "${ARGV[@]}" </dev/null >"$T/gc.out" 2>/dev/null; rc=$?
  gc=$(tail -n 1 "$STANDIN_LOG/grandchildren" 2>/dev/null)
  after=$(wc -l 2>/dev/null <"$STANDIN_LOG/grandchildren" || echo 0)
  check "$cli/grandchild" "$([[ $rc == 124 && $after -gt $before && -n $gc ]] && kill -0 "$gc" 2>/dev/null; echo $?)" "rc=$rc gc=$gc"
  [[ -n $gc ]] && kill "$gc" 2>/dev/null
  # grandchild-exit: valid answer, exit 0, grandchild still holds the pipe
  STANDIN_MODE=grandchild-exit run_cli
  gc=$(tail -n 1 "$STANDIN_LOG/grandchildren" 2>/dev/null)
  check "$cli/grandchild-exit" "$([[ $RC == 0 && $(verdict_of "$(answer "$cli" text <<<"$OUT")") == breaks ]] && kill -0 "$gc" 2>/dev/null; echo $?)" "rc=$RC gc=$gc"
  [[ -n $gc ]] && kill "$gc" 2>/dev/null
  # prose-once: first call misbehaves, a retry (same prompt + "Your previous answer" line) answers
  P1="Judge once for $cli: lens edges."
  sealed "$cli" text "$P1"; STANDIN_MODE=prose-once run_cli
  V1=$(verdict_of "$(answer "$cli" text <<<"$OUT")")
  sealed "$cli" text "$P1"$'\n\nYour previous answer was not valid JSON. Reply with the JSON object only.'
  STANDIN_MODE=prose-once run_cli
  V2=$(verdict_of "$(answer "$cli" text <<<"$OUT")")
  check "$cli/prose-once" "$([[ $V1 != breaks && $V2 == breaks && $RC == 0 ]]; echo $?)" "first=$V1 second=$V2 rc=$RC"
  # unknown flag -> usage error, exit 2
  sealed "$cli" text "x"
  "${ARGV[@]}" --definitely-not-a-flag </dev/null >/dev/null 2>"$T/err"; rc=$?
  check "$cli/unknown-flag" "$([[ $rc == 2 && -s $T/err ]]; echo $?)" "rc=$rc err=$(head -c 200 "$T/err")"
done

# ------------------------------------------------------------------ CLI specific checks
has() { local c; for c in "${CLIS[@]}"; do [[ $c == "$1" ]] && return 0; done; return 1; }
lastlog() { tail -n 1 "$STANDIN_LOG/calls.jsonl"; }

if has codex; then
  sealed codex text "Judge stdin."
  timeout 2 "${ARGV[@]}" < <(sleep 5) >/dev/null 2>"$T/err"; rc=$?
  check "codex/stdin-open-pipe-hangs" "$([[ $rc == 124 ]] && grep -q 'Reading additional input from stdin...' "$T/err"; echo $?)" "rc=$rc"
  timeout 2 "${ARGV[@]}" </dev/null >/dev/null 2>"$T/err"; rc=$?
  check "codex/stdin-devnull-returns" "$([[ $rc == 0 ]] && grep -q 'Reading additional input from stdin...' "$T/err"; echo $?)" "rc=$rc"
  echo "extra context" | timeout 2 "${ARGV[@]}" >/dev/null 2>&1; rc=$?
  check "codex/stdin-block" "$([[ $rc == 0 ]] && lastlog | jq -e '.stdin=="pipe" and (.prompt|endswith("<stdin>\nextra context\n\n</stdin>"))' >/dev/null; echo $?)" "$(lastlog | head -c 300)"
  echo "prompt from stdin" | codex exec - --ephemeral >/dev/null 2>&1; rc=$?
  check "codex/exec-dash" "$([[ $rc == 0 ]] && lastlog | jq -e '.prompt=="prompt from stdin\n"' >/dev/null; echo $?)" "$(lastlog | head -c 300)"
  sealed codex text "Judge -o."; rm -f "$T/codex-out.txt"; run_cli
  check "codex/-o-file" "$([[ $RC == 0 && $(<"$T/codex-out.txt") == "$OUT" ]]; echo $?)" "out=$OUT file=$(cat "$T/codex-out.txt" 2>/dev/null)"
  rm -rf "$HOME/.codex"
  codex exec "persist" --skip-git-repo-check </dev/null >/dev/null 2>&1
  n=$(find "$HOME/.codex/sessions" -name 'rollout-*.jsonl' 2>/dev/null | wc -l)
  check "codex/state-rollout" "$([[ $n == 1 && -e $HOME/.codex/state_5.sqlite ]]; echo $?)" "rollouts=$n"
  run_cli   # --ephemeral
  n=$(find "$HOME/.codex/sessions" -name 'rollout-*.jsonl' 2>/dev/null | wc -l)
  check "codex/state-ephemeral" "$([[ $n == 1 ]]; echo $?)" "rollouts=$n"
  CODEX_HOME=$T/ch codex exec "x" --ephemeral </dev/null >/dev/null 2>&1
  check "codex/CODEX_HOME" "$([[ -e $T/ch/state_5.sqlite ]]; echo $?)"
  codex exec "a" "b" </dev/null >/dev/null 2>&1; rc=$?
  check "codex/two-prompts-usage-error" "$([[ $rc == 2 ]]; echo $?)" "rc=$rc"
  codex exec "a" -s nope </dev/null >/dev/null 2>&1; rc=$?
  check "codex/bad-sandbox" "$([[ $rc == 2 ]]; echo $?)" "rc=$rc"
  codex exec "a" --output-schema "$T/missing.json" </dev/null >/dev/null 2>&1; rc=$?
  check "codex/missing-schema-file" "$([[ $rc == 1 ]]; echo $?)" "rc=$rc"
fi

if has claude; then
  sealed claude text "Judge pipe."
  t0=$EPOCHREALTIME
  "${ARGV[@]}" < <(sleep 6) >"$T/out" 2>"$T/err"; rc=$?
  t1=$EPOCHREALTIME; el=$(((${t1/./} - ${t0/./}) / 1000))
  check "claude/stdin-open-pipe-waits-3s" "$([[ $rc == 0 && $el -ge 2900 && $el -lt 5000 ]] && grep -q 'Warning: no stdin data received in 3s, proceeding without it...' "$T/err"; echo $?)" "rc=$rc elapsed=${el}ms"
  echo "prompt via stdin" | claude -p --no-session-persistence >"$T/out" 2>/dev/null; rc=$?
  check "claude/prompt-from-stdin" "$([[ $rc == 0 ]] && lastlog | jq -e '.prompt=="prompt via stdin\n" and .stdin=="pipe"' >/dev/null; echo $?)" "$(lastlog | head -c 300)"
  claude -p --no-session-persistence <"$T/judge.yaml" >/dev/null 2>&1
  check "claude/stdin-file" "$(lastlog | jq -e '.stdin=="file"' >/dev/null; echo $?)"
  claude -p --no-session-persistence </dev/null >/dev/null 2>&1; rc=$?
  check "claude/no-prompt" "$([[ $rc == 1 ]]; echo $?)" "rc=$rc"
  claude -p --tools "" "swallowed by --tools" </dev/null >/dev/null 2>&1; rc=$?
  check "claude/variadic-tools-eats-prompt" "$([[ $rc == 1 ]]; echo $?)" "rc=$rc"
  claude -p "x" --output-format stream-json </dev/null >/dev/null 2>&1; rc=$?
  check "claude/stream-json-needs-verbose" "$([[ $rc == 1 ]]; echo $?)" "rc=$rc"
  claude -p "x" --output-format stream-json --verbose --json-schema "$SCHEMA" </dev/null >"$T/out" 2>/dev/null; rc=$?
  check "claude/stream-json" "$([[ $rc == 0 ]] && jq -se '.[-1].type=="result" and .[-1].structured_output.verdict=="breaks"' <"$T/out" >/dev/null; echo $?)"
  rm -rf "$HOME/.claude" "$HOME/.claude.json"
  sealed claude text "Judge state."; run_cli
  check "claude/state-no-persistence" "$([[ -f $HOME/.claude.json && ! -d $HOME/.claude/projects ]]; echo $?)"
  claude -p "persist me" </dev/null >/dev/null 2>&1
  n=$(find "$HOME/.claude/projects/${PWD//[^a-zA-Z0-9]/-}" -name '*.jsonl' 2>/dev/null | wc -l)
  check "claude/state-session" "$([[ $n == 1 ]]; echo $?)" "n=$n"
  sealed claude json "Judge prose json."; STANDIN_MODE=prose run_cli
  check "claude/json-prose-no-structured_output" "$(jq -e '(has("structured_output")|not) and .is_error==false and .subtype=="success"' >/dev/null <<<"$OUT"; echo $?)" "$OUT"
  sealed claude text "usage2"; STANDIN_MODE=usage-limit2 run_cli
  check "claude/usage-limit2" "$([[ $RC == 1 && $OUT == "You've hit your limit · resets 3pm (UTC)" ]]; echo $?)" "rc=$RC out=$OUT"
fi

if has opencode; then
  sealed opencode text "Judge oc stdin."
  timeout 2 "${ARGV[@]}" < <(sleep 5) >/dev/null 2>&1; rc=$?
  check "opencode/stdin-open-pipe-hangs" "$([[ $rc == 124 ]]; echo $?)" "rc=$rc"
  XDG_DATA_HOME=$T/xdg-data "${ARGV[@]}" </dev/null >/dev/null 2>&1
  check "opencode/state-xdg" "$([[ -e $T/xdg-data/opencode/opencode.db ]]; echo $?)"
fi
if has gemini; then
  gemini -p "x" </dev/null >/dev/null 2>&1; rc=$?
  check "gemini/untrusted-55" "$([[ $rc == 55 ]]; echo $?)" "rc=$rc"
  GEMINI_CLI_TRUST_WORKSPACE=true gemini -p "x" </dev/null >/dev/null 2>&1; rc=$?
  check "gemini/trust-env" "$([[ $rc == 0 ]]; echo $?)" "rc=$rc"
  n=$(find "$HOME/.gemini/tmp" -path '*/chats/session-*.jsonl' 2>/dev/null | wc -l)
  check "gemini/state" "$([[ $n -ge 1 ]]; echo $?)" "n=$n"
fi
if has kimi; then
  kimi -p "x" --output-format stream-json </dev/null >/dev/null 2>"$T/err"; rc=$?
  check "kimi/needs-print" "$([[ $rc == 2 ]] && grep -q 'Output format is only supported for print UI' "$T/err"; echo $?)" "rc=$rc"
  sealed kimi json "k"; run_cli
  check "kimi/resume-hint-stderr" "$([[ $ERR == *'To resume this session: kimi -r '* ]]; echo $?)"
  n=$(find "$HOME/.kimi/sessions" -name context.jsonl | wc -l)
  check "kimi/state" "$([[ $n -ge 1 ]]; echo $?)"
fi
if has agent; then
  agent -p "x" --output-format json </dev/null >/dev/null 2>"$T/err"; rc=$?
  check "agent/needs-trust" "$([[ $rc == 1 ]] && grep -q 'Workspace Trust Required' "$T/err"; echo $?)" "rc=$rc"
fi
if has agy; then
  agy -p "x" --json-schema "$SCHEMA" </dev/null >/dev/null 2>&1; rc=$?
  check "agy/schema-needs-json" "$([[ $rc != 0 ]]; echo $?)" "rc=$rc"
fi
if has copilot; then
  copilot -p "x" --no-auto-update </dev/null >"$T/out" 2>/dev/null
  check "copilot/stats-without-silent" "$(grep -q 'Total usage est' "$T/out"; echo $?)"
  sealed copilot text "c"; run_cli
  check "copilot/two-newlines" "$([[ $(tail -c 2 "$T/out" | od -An -c | tr -d ' ') == '\n\n' ]]; echo $?)"
  n=$(find "$HOME/.copilot/session-state" -name events.jsonl | wc -l)
  check "copilot/state" "$([[ $n -ge 1 ]]; echo $?)"
fi

# ------------------------------------------------------------------ rules, log, parallel, timing
if has claude && has codex; then
  export STANDIN_RULES=$'lens: edges=>prose\nlens: evidence=>holds\nlens: hang=>hang'
  claude -p "Judge. lens: edges" --no-session-persistence </dev/null >"$T/o1" 2>/dev/null
  claude -p "Judge. lens: evidence" --no-session-persistence </dev/null >"$T/o2" 2>/dev/null
  claude -p "Judge. lens: correctness" --no-session-persistence </dev/null >"$T/o3" 2>/dev/null
  check "rules" "$([[ $(verdict_of "$(<"$T/o1")") == notjson && $(verdict_of "$(<"$T/o2")") == holds && $(verdict_of "$(<"$T/o3")") == breaks ]]; echo $?)"
  unset STANDIN_RULES

  # Pairwise preferences: the first shown, whatever the order; the answer holding a text,
  # first or second as shown.
  pw=$'Which is better?\n<<<FIRST-n\nGrey waves\nFIRST-n>>>\n<<<SECOND-n\nprose\nSECOND-n>>>'
  wp=$'Which is better?\n<<<FIRST-n\nprose\nFIRST-n>>>\n<<<SECOND-n\nGrey waves\nSECOND-n>>>'
  pref() { jq -r '.preferred // "none"' 2>/dev/null <<<"$1" || echo notjson; }
  STANDIN_MODE=first claude -p "$wp" --no-session-persistence </dev/null >"$T/o1" 2>/dev/null
  STANDIN_MODE='prefer:Grey waves' claude -p "$pw" --no-session-persistence </dev/null >"$T/o2" 2>/dev/null
  STANDIN_MODE='prefer:Grey waves' claude -p "$wp" --no-session-persistence </dev/null >"$T/o3" 2>/dev/null
  check "pairwise" "$([[ $(pref "$(<"$T/o1")") == first && $(pref "$(<"$T/o2")") == first && $(pref "$(<"$T/o3")") == second ]]; echo $?)" "$(cat "$T/o1" "$T/o2" "$T/o3")"

  long=$(printf 'x%.0s' {1..6000})
  claude -p "$long" --no-session-persistence </dev/null >/dev/null 2>&1
  l=$(lastlog)
  pf=$(jq -r '.promptFile // empty' <<<"$l")
  check "log/long-prompt-file" "$([[ ${#l} -lt 4096 && -n $pf && $(<"$pf") == "$long" ]]; echo $?)" "len=${#l} pf=$pf"

  big=$(printf 'y%.0s' {1..1000})
  OPENCODE_CONFIG_CONTENT=$big$big claude -p "$big" --json-schema "{\"a\":\"$big\"}" --append-system-prompt "$big" --settings "$big" --no-session-persistence </dev/null >/dev/null 2>&1
  l=$(lastlog)
  check "log/4KiB-fallback" "$([[ ${#l} -lt 4096 ]] && jq -e '(.promptFile|type=="string") and (.env.OPENCODE_CONFIG_CONTENT|startswith("@file:")) and ([.argv[]|select(startswith("@file:"))]|length==4)' >/dev/null <<<"$l"; echo $?)" "len=${#l} $(head -c 300 <<<"$l")"

  ANTHROPIC_BASE_URL=http://127.0.0.1:1 CLAUDE_CODE_X=1 NOT_LOGGED=1 claude -p "env" --no-session-persistence </dev/null >/dev/null 2>&1
  check "log/env" "$(lastlog | jq -e '.env.ANTHROPIC_BASE_URL=="http://127.0.0.1:1" and .env.CLAUDE_CODE_X=="1" and (.env|has("NOT_LOGGED")|not) and .env.HOME==env.HOME and .home==env.HOME and (.pid|type=="number") and (.pgid|type=="number") and .cwd==env.PWD' >/dev/null; echo $?)" "$(lastlog | head -c 400)"

  : >"$T/par.before"; b=$(wc -l <"$STANDIN_LOG/calls.jsonl")
  t0=$EPOCHREALTIME
  for i in $(seq 1 16); do
    claude -p "parallel $i" --json-schema "$SCHEMA" --no-session-persistence --output-format json </dev/null >"$T/par.c$i" 2>/dev/null &
    codex exec "parallel $i" --ephemeral --skip-git-repo-check -o "$T/par.x$i" </dev/null >/dev/null 2>&1 &
  done
  wait
  t1=$EPOCHREALTIME; el=$(((${t1/./} - ${t0/./}) / 1000))
  a=$(wc -l <"$STANDIN_LOG/calls.jsonl")
  good=0
  for i in $(seq 1 16); do
    jq -e '.structured_output.verdict=="breaks"' "$T/par.c$i" >/dev/null 2>&1 && good=$((good + 1))
    [[ $(verdict_of "$(cat "$T/par.x$i" 2>/dev/null)") == breaks ]] && good=$((good + 1))
  done
  check "parallel-32" "$([[ $((a - b)) == 32 && $good == 32 ]] && tail -n 32 "$STANDIN_LOG/calls.jsonl" | jq -e . >/dev/null; echo $?)" "lines=$((a - b)) good=$good"
  printf 'info parallel: 32 stand-ins (16 claude + 16 codex) in %s ms\n' "$el"

  for c in claude codex; do
    sealed "$c" text "timing"
    t0=$EPOCHREALTIME
    for i in 1 2 3 4 5 6 7 8 9 10; do "${ARGV[@]}" </dev/null >/dev/null 2>&1; done
    t1=$EPOCHREALTIME; el=$(((${t1/./} - ${t0/./}) / 10000))
    printf 'info timing: %s ok path %s ms per call (sequential average of 10)\n' "$c" "$el"
    check "$c/timing<100ms" "$([[ $el -lt 100 ]]; echo $?)" "${el}ms"
  done
fi

# JSON escaping of awkward text (prompt in the log, reason in the answer)
if has claude; then
  tricky=$'quote " backslash \\ tab \t cr \r nl\n ctrl \001\037 del \177 dollar $HOME `tick` \u00e9\u4e2d \U0001F600 end'
  STANDIN_REASON=$'reason with "quotes"\nand \\ slash' STANDIN_VERDICT=holds \
    claude -p "$tricky" --json-schema "$SCHEMA" --output-format json --no-session-persistence </dev/null >"$T/out" 2>/dev/null
  check "escape/prompt-in-log" "$(lastlog | jq -e --arg p "$tricky" '.prompt==$p' >/dev/null; echo $?)" "$(lastlog | head -c 300)"
  check "escape/reason" "$(jq -e '.structured_output.verdict=="holds" and .structured_output.reason=="reason with \"quotes\"\nand \\ slash" and (.result|fromjson|.verdict=="holds")' "$T/out" >/dev/null; echo $?)" "$(head -c 300 "$T/out")"
  claude -p "closed stdin" --no-session-persistence <&- >/dev/null 2>&1; rc=$?
  check "stdin/closed" "$([[ $rc == 0 ]] && lastlog | jq -e '.stdin=="closed"' >/dev/null; echo $?)" "rc=$rc $(lastlog | head -c 200)"
  claude -p "devnull stdin" --no-session-persistence </dev/null >/dev/null 2>&1
  check "stdin/devnull" "$(lastlog | jq -e '.stdin=="devnull" and .stdinText==""' >/dev/null; echo $?)"
fi

# symlinked stand-in (lib.sh found through the link) and no-log operation
mkdir -p "$T/bin"; ln -s "$HERE/claude" "$T/bin/claude"
( cd "$T" && PATH=$T/bin:$PATH; claude -p "via symlink" --no-session-persistence </dev/null >"$T/out" 2>&1 ); rc=$?
check "symlink" "$([[ $rc == 0 && $(verdict_of "$(<"$T/out")") == breaks ]]; echo $?)" "rc=$rc out=$(head -c 200 "$T/out")"
( unset STANDIN_LOG; export TMPDIR=$T/tmp; mkdir -p "$TMPDIR"
  STANDIN_MODE=fence-once claude -p "nolog once" </dev/null >"$T/o1" 2>/dev/null
  STANDIN_MODE=fence-once claude -p "nolog once" </dev/null >"$T/o2" 2>/dev/null )
check "once-without-log" "$([[ $(<"$T/o1") == '```json'* && $(verdict_of "$(<"$T/o2")") == breaks && -d $T/tmp/standin-counters ]]; echo $?)"

# the lockdown check is on unless STANDIN_LOCKDOWN=off: claude without --tools "" refuses
if has claude; then
  ( unset STANDIN_LOCKDOWN; claude -p "no lockdown" --no-session-persistence </dev/null >"$T/out" 2>"$T/err" ); rc=$?
  check "lockdown/default-refuses" "$([[ $rc == 9 && $(<"$T/err") == *'lockdown missing: --tools ""'* ]]; echo $?)" "rc=$rc $(head -c 200 "$T/err")"
  ( unset STANDIN_LOCKDOWN; claude -p "locked down" --tools "" --no-session-persistence </dev/null >"$T/out" 2>/dev/null ); rc=$?
  check "lockdown/default-answers" "$([[ $rc == 0 && $(verdict_of "$(<"$T/out")") == breaks ]]; echo $?)" "rc=$rc"
fi

# qwen: its settings.json's deny list, which --bare does not read; --exclude-tools is read always
if has qwen; then
  Q=(qwen "locked down" --json-schema "$SCHEMA" --approval-mode default --max-tool-calls 0 -o json)
  mkdir -p "$T/qh/.qwen"; printf '{"permissions":{"deny":["run_shell_command"]}}' >"$T/qh/.qwen/settings.json"
  ( unset STANDIN_LOCKDOWN; HOME=$T/qh "${Q[@]}" </dev/null >"$T/out" 2>"$T/err" ); rc=$?
  check "lockdown/qwen-settings" "$([[ $rc == 0 ]]; echo $?)" "rc=$rc $(head -c 200 "$T/err")"
  ( unset STANDIN_LOCKDOWN; HOME=$T/qh "${Q[@]}" --bare </dev/null >"$T/out" 2>"$T/err" ); rc=$?
  check "lockdown/qwen-bare-refuses" "$([[ $rc == 9 && $(<"$T/err") == *'lockdown missing: --exclude-tools'* ]]; echo $?)" "rc=$rc $(head -c 200 "$T/err")"
  ( unset STANDIN_LOCKDOWN; HOME=$T/qh "${Q[@]}" --bare --exclude-tools edit,run_shell_command </dev/null >"$T/out" 2>"$T/err" ); rc=$?
  check "lockdown/qwen-bare-excluded" "$([[ $rc == 0 ]]; echo $?)" "rc=$rc $(head -c 200 "$T/err")"
fi

# every log line is valid JSON and below 4 KiB
n=$(wc -l <"$STANDIN_LOG/calls.jsonl")
check "log/all-lines-json" "$(jq -e . "$STANDIN_LOG/calls.jsonl" >/dev/null 2>&1; echo $?)"
check "log/all-lines<4KiB" "$(awk 'length($0) >= 4096 { bad=1 } END { exit bad }' "$STANDIN_LOG/calls.jsonl"; echo $?)"
printf 'selftest: %d passed, %d failed (%d logged calls)\n' "$PASS" "$FAIL" "$n"
((FAIL == 0))

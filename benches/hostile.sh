#!/usr/bin/env bash
# Bounded work on hostile output: what one judge's reply and one large candidate cost.
#
# 1. Replies of 16 MiB (what is held and read whole) shaped to make an extractor work: unclosed braces,
#    nesting past any answer, a million small objects, one string of escapes, a quoted verdict
#    repeated. Goal: each costs panel-judge at most 1 s and 64 MiB more than a one-line reply.
# 2. A 30 MB candidate and 10 judges that read it from stdin. Goal: peak memory about
#    candidate x (2 + running judges).
# 3. Replies of 256 MiB read as an event stream, line by line (past what is held whole): lines of
#    brackets 48 deep, and lines of `{}`, printed by the stand-in claude and codex (their rows'
#    filters read them). Goal: each costs panel-judge at most 2 s of CPU (user+sys) and 64 MiB
#    peak beyond `cat FILE | cat >/dev/null`, the baseline printed beside it.
# 4. A 200 MiB honest transcript (a Read call and its result again and again, the verdict in
#    its last event): still read to its last event, the verdict accepted.
# Prints wall seconds and peak RSS (MiB) of each run, best of RUNS (parts 1 and 2), CPU
# seconds and peak RSS (parts 3 and 4).
# Usage: benches/hostile.sh [runs, default 3]
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${1:-3}"
cargo build --release --quiet
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
judge="${CARGO_TARGET_DIR:-$PWD/target}/release/panel-judge"
cap=$((16 << 20))
printf 'def first(xs):\n    return xs[0]\n' >"$work/answer.md"

# Each shape, cut to the cap.
repeat() { # TEXT: the text again and again, cap bytes (yes ends on SIGPIPE)
  yes "$1" | tr -d '\n' | head -c "$cap" || true
}
repeat '{' >"$work/open-braces"
repeat '[' >"$work/open-brackets"
repeat '{"a":' >"$work/nested-keys"
repeat '{"verdict":"holds"}' >"$work/small-objects"
{ printf '{"verdict":"breaks","reason":"'; repeat '\\"' | head -c $((cap - 64)); printf '","confidence":0.9}'; } >"$work/escaped-string"
repeat 'the text says {"verdict":"holds","reason":"fine","confidence":0.9} ' >"$work/quoted-verdicts"
printf '{"verdict":"holds","reason":"fine","confidence":0.9}\n' >"$work/one-line"

measure() { # prints "seconds MiB" of the best of RUNS runs of "$@"
  local best="" line
  for _ in $(seq 1 "$RUNS"); do
    /usr/bin/time -f '%e %M' -o "$work/time" "$@" >/dev/null 2>&1 || true
    line=$(tail -n 1 "$work/time")
    if [ -z "$best" ] || [ "$(printf '%s\n%s\n' "${line%% *}" "${best%% *}" | sort -g | head -1)" = "${line%% *}" ]; then
      best=$line
    fi
  done
  printf '%s %d\n' "${best%% *}" $((${best##* } / 1024))
}

echo "reply shape          seconds  peak MiB"
for shape in one-line open-braces open-brackets nested-keys small-objects escaped-string quoted-verdicts; do
  seat="exec:cat $work/$shape"
  read -r s m < <(measure "$judge" --seat "$seat" --family "$seat=x" --lens a=Q? --retries 0 "$work/answer.md")
  printf '%-20s %7s  %8s\n' "$shape" "$s" "$m"
done

{ head -c $((30 * 1000 * 1000)) /dev/urandom | base64 -w 100 | head -c $((30 * 1000 * 1000)) || true; } >"$work/big.md"
seat="exec:cat >/dev/null; echo '{\"verdict\":\"holds\",\"reason\":\"r\",\"confidence\":0.5}'"
lenses=()
for i in $(seq 1 10); do lenses+=(--lens "l$i=Question $i?"); done
read -r s m < <(measure "$judge" --seat "$seat" --family "$seat=x" "${lenses[@]}" "$work/big.md")
printf '\n30 MB candidate, 10 judges: %s s, %s MiB peak (goal about %d MiB)\n' "$s" "$m" $((30 * 12))

# 3 and 4: through a stand-in CLI of the row, as a judge's own output.
if [ ! -x /usr/bin/time ]; then
  echo "installing GNU time (/usr/bin/time) for peak memory" >&2
  apt-get install -y -qq time >/dev/null || sudo apt-get install -y -qq time >/dev/null
fi
big=$((256 << 20))
flood() { # LINE: the line again and again, 256 MiB
  yes "$1" | head -c "$big" || true
}
flood "$(printf '%*s' 48 '' | tr ' ' '[')$(printf '%*s' 48 '' | tr ' ' ']')" >"$work/brackets-lines"
flood '{}' >"$work/empty-lines"
{
  printf '{"type":"system","subtype":"init","session_id":"s","tools":["Read"]}\n'
  content=$({ yes 'fn main() { println!(\"a line of the file being read\"); }\n' || true; } | head -n 4096 | tr -d '\n')
  call='{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Read","input":{"file_path":"/src/main.rs"}}]},"session_id":"s"}'
  result="{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"tool_use_id\":\"toolu_1\",\"type\":\"tool_result\",\"content\":\"$content\"}]},\"session_id\":\"s\"}"
  pair="$call"$'\n'"$result"
  n=$(((200 << 20) / (${#pair} + 1)))
  for _ in $(seq 1 "$n"); do printf '%s\n' "$pair"; done
  answer='{\"verdict\":\"holds\",\"reason\":\"read to the end\",\"confidence\":0.8}'
  printf '{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"%s"}]}}\n' "$answer"
  printf '{"type":"result","subtype":"success","is_error":false,"result":"%s","usage":{"input_tokens":7,"output_tokens":11}}\n' "$answer"
} >"$work/honest-transcript"

cpu() { # prints "cpu-seconds MiB" of the run of "$@" with the least CPU of RUNS
  local best="" line
  for _ in $(seq 1 "$RUNS"); do
    rm -rf "$work/run"
    /usr/bin/time -f '%U %S %M' -o "$work/time" "$@" >"$work/record" 2>/dev/null || true
    line=$(tail -n 1 "$work/time" | awk '{ printf "%.2f %d", $1 + $2, $3 / 1024 }')
    if [ -z "$best" ] || [ "$(printf '%s\n%s\n' "${line%% *}" "${best%% *}" | sort -g | head -1)" = "${line%% *}" ]; then
      best=$line
    fi
  done
  printf '%s\n' "$best"
}

export PATH="$PWD/tests/standins:$PATH" STANDIN_STDIN_WAIT=0
export PANEL_PASS_ENV=STANDIN_MODE,STANDIN_STDIN_WAIT PANEL_SANDBOX_READ="$PWD/tests/standins:$work"
unset ANTHROPIC_API_KEY OPENAI_API_KEY CODEX_API_KEY
# The stand-ins need no login, but no claude or codex judge is launched without one: made-up
# keys (a placeholder is all a walled judge holds of them anyway).
export CLAUDE_CODE_OAUTH_TOKEN=sk-ant-oat01-hostile-bench CODEX_API_KEY=sk-hostile-bench
printf '\n256 MiB replies read as events   CPU s  peak MiB  (goal: 2 s and 64 MiB beyond cat | cat)\n'
for shape in brackets-lines empty-lines; do
  read -r s m < <(cpu sh -c 'cat "$1" | cat >/dev/null' sh "$work/$shape")
  printf '%-15s cat | cat           %6s  %8s\n' "$shape" "$s" "$m"
  for seat in claude:haiku codex; do
    read -r s m < <(STANDIN_MODE="transcript:$work/$shape" cpu "$judge" --seat "$seat" --lens a=Q? \
      --retries 0 --max-output 1G --timeout 300 --sandbox off --out "$work/run" "$work/answer.md")
    printf '%-15s %-18s %6s  %8s  %s\n' "$shape" "$seat" "$s" "$m" "$(grep -o '"status":"[a-z-]*"' "$work/record" | head -1)"
  done
done
read -r s m < <(cpu sh -c 'cat "$1" | cat >/dev/null' sh "$work/honest-transcript")
printf '\n200 MiB honest transcript: cat | cat %s s CPU, %s MiB\n' "$s" "$m"
read -r s m < <(STANDIN_MODE="transcript:$work/honest-transcript" cpu "$judge" --seat claude:haiku \
  --lens a=Q? --retries 0 --max-output 1G --timeout 300 --sandbox off --out "$work/run" "$work/answer.md")
grep -q '"verdict":"holds"' "$work/record" || {
  echo "the verdict in the last event was not accepted: $(head -c 600 "$work/record")" >&2
  exit 1
}
printf 'panel-judge, claude:haiku: %s s CPU, %s MiB peak, verdict in its last event accepted\n' "$s" "$m"

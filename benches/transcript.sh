#!/usr/bin/env bash
# A transcript of any size: a 200 MiB claude stream-json transcript (a Read call and its
# result echoing a 256 KiB file, again and again) whose verdict is in its last event, printed
# by the stand-in claude (`STANDIN_MODE=transcript:FILE`) to one panel-judge judge.
# Goal: the verdict is accepted at most 1 s after the time it takes to read the transcript
# through a pipe (`cat FILE | cat >/dev/null`), with panel-judge at most 64 MiB resident.
# Prints the baseline, panel-judge's wall seconds and peak RSS (best of RUNS), and the ratio.
# Usage: benches/transcript.sh [MiB, default 200] [runs, default 3]
set -euo pipefail
cd "$(dirname "$0")/.."
MIB="${1:-200}"
RUNS="${2:-3}"
if [ ! -x /usr/bin/time ]; then
  echo "installing GNU time (/usr/bin/time) for peak memory" >&2
  apt-get install -y -qq time >/dev/null || sudo apt-get install -y -qq time >/dev/null
fi
cargo build --release --quiet
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
judge="${CARGO_TARGET_DIR:-$PWD/target}/release/panel-judge"
printf 'def first(xs):\n    return xs[0]\n' >"$work/answer.md"

# The transcript, in claude's stream-json shape.
file="$work/stream.jsonl"
content=$({ yes 'fn main() { println!(\"a line of the file being read\"); }\n' || true; } | head -n 4096 | tr -d '\n')
call='{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Read","input":{"file_path":"/src/main.rs"}}]},"session_id":"s"}'
result="{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"tool_use_id\":\"toolu_1\",\"type\":\"tool_result\",\"content\":\"$content\"}]},\"session_id\":\"s\"}"
pair="$call"$'\n'"$result"
{
  printf '{"type":"system","subtype":"init","session_id":"s","tools":["Read"]}\n'
  n=$(((MIB << 20) / (${#pair} + 1)))
  for _ in $(seq 1 "$n"); do printf '%s\n' "$pair"; done
  answer='{\"verdict\":\"holds\",\"reason\":\"read to the end\",\"confidence\":0.8}'
  printf '{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"%s"}]}}\n' "$answer"
  printf '{"type":"result","subtype":"success","is_error":false,"result":"%s","usage":{"input_tokens":7,"output_tokens":11}}\n' "$answer"
} >"$file"
size=$(stat -c %s "$file")

best() { # the smallest first field of the lines on stdin, with its line
  sort -g | head -1
}

for _ in $(seq 1 "$RUNS"); do
  /usr/bin/time -f '%e' -o "$work/t" sh -c 'cat "$1" | cat >/dev/null' sh "$file"
  tail -n 1 "$work/t"
done | best >"$work/baseline"
baseline=$(cat "$work/baseline")

export PATH="$PWD/tests/standins:$PATH" STANDIN_MODE="transcript:$file" STANDIN_STDIN_WAIT=0
export PANEL_PASS_ENV=STANDIN_MODE,STANDIN_STDIN_WAIT PANEL_SANDBOX_READ="$PWD/tests/standins:$work"
unset ANTHROPIC_API_KEY
for _ in $(seq 1 "$RUNS"); do
  rm -rf "$work/run"
  /usr/bin/time -v -o "$work/v" "$judge" --seat claude:haiku --lens a=Q? --retries 0 \
    --out "$work/run" "$work/answer.md" >"$work/record" 2>/dev/null || true
  grep -q '"status":"ok","verdict":"holds"\|"verdict":"holds"' "$work/record" || {
    echo "the verdict was not accepted: $(cat "$work/record")" >&2
    exit 1
  }
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s }' "$work/v")
  rss=$(awk -F': ' '/Maximum resident set size/ { print int($2 / 1024) }' "$work/v")
  printf '%s %s\n' "$wall" "$rss"
done | best >"$work/judge"
read -r wall rss <"$work/judge"

printf 'transcript: %d MiB (%d bytes), verdict in its last event\n' "$MIB" "$size"
printf 'baseline (cat | cat): %s s\n' "$baseline"
printf 'panel-judge: %s s, %s MiB peak RSS (goal: at most %s + 1 s, 64 MiB)\n' "$wall" "$rss" "$baseline"
awk -v w="$wall" -v b="$baseline" 'BEGIN { printf "ratio: %.2fx the baseline, %.2f s over it\n", w / b, w - b }'

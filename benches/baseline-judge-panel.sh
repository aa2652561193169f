#!/usr/bin/env bash
# The baseline for benches/fanout.sh: the seed's scripts/judge-panel.sh (seed 001), unchanged in
# what it runs (one `claude -p` per lens in the background, `wait`, then jq over each file),
# with its lens list read from a file so the benchmark can ask for 32 judges.
# Usage: baseline-judge-panel.sh <candidate> <lenses file: NAME|QUESTION per line>
set -euo pipefail
CANDIDATE="$1"
JUDGE_MODEL="${JUDGE_MODEL:-haiku}"
OUT="$(mktemp -d)"
mapfile -t LENSES < "$2"
SCHEMA='{"type":"object","properties":{
"verdict":{"type":"string","enum":["holds","breaks"]},
"reason":{"type":"string"},
"confidence":{"type":"number"}},
"required":["verdict","reason","confidence"],"additionalProperties":false}'
for lens in "${LENSES[@]}"; do
  name="${lens%%|*}"
  question="${lens#*|}"
  claude -p "You are one judge on a panel. Judge through this lens only: $question
--- ANSWER UNDER REVIEW ---
$(cat "$CANDIDATE")" \
    --model "$JUDGE_MODEL" \
    --json-schema "$SCHEMA" \
    --tools "" \
    --no-session-persistence \
    > "$OUT/$name.json" &
done
wait
breaks=0 holds=0 abstained=0
for f in "$OUT"/*.json; do
  verdict=$(jq -r '.verdict // "unreadable"' "$f" 2>/dev/null || echo unreadable)
  reason=$(jq -r '.reason // ""' "$f" 2>/dev/null || true)
  printf '%-12s %-10s %s\n' "$(basename "$f" .json)" "$verdict" "$reason"
  case "$verdict" in
    breaks) breaks=$((breaks + 1)) ;;
    holds) holds=$((holds + 1)) ;;
    *) abstained=$((abstained + 1)) ;;
  esac
done
echo "PANEL: $breaks breaks / $holds holds, $abstained abstained"
echo "verdicts: $OUT"

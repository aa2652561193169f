#!/usr/bin/env bash
# The baseline for benches/fanout.sh: the seed's scripts/judge-panel.sh (seed 001, kept byte for
# byte in tests/fixtures/seed-judge-panel.sh), with its three lenses replaced by the lines of a
# file so the benchmark can ask for 32 judges; every other line runs as it is (one `claude -p`
# per lens in the background, `wait`, then jq over each file).
# Usage: baseline-judge-panel.sh <candidate> <lenses file: NAME|QUESTION per line>
set -euo pipefail
candidate=${1:?usage: baseline-judge-panel.sh <candidate> <lenses file>}
lenses=${2:?usage: baseline-judge-panel.sh <candidate> <lenses file>}
seed="$(dirname "$0")/../tests/fixtures/seed-judge-panel.sh"
script=$(awk '
  /^LENSES=\($/ { print "mapfile -t LENSES < \"$LENSES_FILE\""; skip = 1; replaced = 1; next }
  skip { if ($0 == ")") skip = 0; next }
  { print }
  END { if (!replaced) exit 1 }' "$seed") || { echo "baseline-judge-panel.sh: no LENSES=( list in $seed" >&2; exit 2; }
LENSES_FILE=$lenses exec bash -c "$script" judge-panel.sh "$candidate"

#!/usr/bin/env bash
# The fleet recipe measured with stand-in judges: N candidates x 3 judges through bin/panel-fleet
# on this machine; wall time, the overhead over the judges' own time, the peak memory of each
# stage (panel-judge per panel, the whole parallel run, the final panel-tally --each), and a
# rerun that must skip every decided panel.
#
# Usage: benches/fleet.sh [N] [JOBS] [STANDIN_MODE]     (defaults: 1000 16 sleep:0.2)
# PANEL_TALLY=path/to/panel-tally uses another panel-tally (e.g. a branch's build).
set -euo pipefail
n=${1:-1000}
jobs=${2:-16}
mode=${3:-sleep:0.2}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
command -v parallel >/dev/null || {
  echo "fleet.sh: GNU parallel is needed (apt-get install parallel)" >&2
  exit 2
}
cargo build --release --quiet
bindir=$(mktemp -d)
trap 'rm -rf "$bindir"' EXIT
for b in panel-judge panel-tally; do ln -s "${CARGO_TARGET_DIR:-$root/target}/release/$b" "$bindir/$b"; done
[ -n "${PANEL_TALLY:-}" ] && ln -sf "$(realpath "$PANEL_TALLY")" "$bindir/panel-tally"
export PATH="$root/tests/standins:$bindir:$root/bin:$PATH"
export STANDIN_MODE=$mode STANDIN_VERDICT=holds PANEL_PASS_ENV=STANDIN_MODE,STANDIN_VERDICT
export PANEL_FLEET_TIME=1

work=${FLEET_WORK:-$(mktemp -d /tmp/fleet.XXXXXX)}
mkdir -p "$work/cands"
for i in $(seq -f '%04g' 1 "$n"); do
  printf 'Candidate %s.\nThe function returns the sum of a list; an empty list gives 0.\n' "$i" >"$work/cands/c$i.md"
done
ls "$work"/cands/*.md >"$work/list"

run() {
  /usr/bin/time -f '%e %M' -o "$work/$1.time" \
    panel-fleet -o "$work/out" -j "$jobs" -a "$work/list" -- --seat claude:haiku --timeout 60 \
    >/dev/null 2>"$work/$1.stderr" || true
}
run first
read -r wall fleet_kib < <(tail -n 1 "$work/first.time")

# Each panel's wall and peak, and the judges' own time (the slowest judge of each panel).
panel_stats=$(tail -q -n 1 "$work"/out/*/time | awk '{w+=$1; if($2+0>m+0)m=$2; k+=$2} END {printf "%.3f %d %d", w/NR, m, k/NR}')
read -r panel_wall judge_peak judge_mean <<<"$panel_stats"
judge_own=$(cat "$work"/out/*/records.jsonl | grep -o '"durationMs":[0-9]*' | cut -d: -f2 |
  awk -v n="$n" '{s+=$1} END {printf "%.3f", s/NR/1000}')
records=$(cat "$work"/out/*/records.jsonl | wc -l)
ok=$(cat "$work"/out/*/records.jsonl | grep -c '"status":"ok"' || true)
ideal=$(awk -v t="$judge_own" -v n="$n" -v j="$jobs" 'BEGIN {printf "%.2f", t*n/j}')
sleep_s=${mode#sleep:}
floor=$(awk -v t="$sleep_s" -v n="$n" -v j="$jobs" 'BEGIN {printf "%.2f", t*n/j}')

# The final stage alone, under time: every record, counted per candidate.
set +e
/usr/bin/time -f '%e %M' -o "$work/tally.time" \
  sh -c "cat '$work'/out/*/records.jsonl | panel-tally --each --json > '$work/tally.jsonl'" 2>"$work/tally.stderr"
tally_status=$?
set -e
read -r tally_wall tally_kib < <(tail -n 1 "$work/tally.time")

run rerun
read -r rerun_wall _ < <(tail -n 1 "$work/rerun.time")
rerun_todo=$(wc -l <"$work/out/todo")

cat <<EOF
fleet: $n candidates x 3 judges (STANDIN_MODE=$mode), parallel -j $jobs, $(nproc) cores
records written            $records ($ok ok)
wall, whole run            ${wall}s
judge's own time (mean)    ${judge_own}s per judge (durationMs); ideal wall at -j $jobs: ${ideal}s (sleep alone: ${floor}s)
overhead                   $(awk -v w="$wall" -v i="$ideal" 'BEGIN {printf "%.2fs (%.0f%%) over the judges own time", w-i, 100*(w-i)/i}')
panel-judge per panel      ${panel_wall}s wall; peak RSS max $((judge_peak / 1024)) MiB, mean $((judge_mean / 1024)) MiB
whole fleet run            peak RSS of its largest process $((fleet_kib / 1024)) MiB
panel-tally --each --json  ${tally_wall}s, peak RSS $((tally_kib / 1024)) MiB, exit $tally_status: $(head -c 200 "$work/tally.stderr")
rerun (resume)             ${rerun_wall}s, $rerun_todo panels run again
work folder                $work
EOF

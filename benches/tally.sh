#!/usr/bin/env bash
# Benchmarks of panel-tally, in a release build, on inputs written into a temporary folder:
#   1. one panel of 1,000 judges: the seed script's counting loop (bash and two jq runs per
#      answer file) against panel-tally on the same verdicts; the two reports must be equal;
#   2. 1,000,000 verdict lines from 333,334 panels through `panel-tally --each --json`: time
#      and peak memory (GNU time's "Maximum resident set size"), read line by line.
# BASELINE=DIR (a target folder with an earlier release build, e.g. of main 465973ef) runs its
# panel-tally on the same stream in the same run, side by side.
# Usage: benches/tally.sh            (JUDGES=1000 LINES=1000000 SIZE=3 to change the inputs)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
JUDGES=${JUDGES:-1000}
LINES=${LINES:-1000000}
SIZE=${SIZE:-3}

command -v jq >/dev/null || { echo "tally.sh: jq is needed for the seed script" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "tally.sh: GNU time (/usr/bin/time) is needed" >&2; exit 2; }

cargo build --release --quiet --manifest-path "$root/Cargo.toml" --bin panel-tally
bin="${CARGO_TARGET_DIR:-$root/target}/release/panel-tally"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Seconds, with nanoseconds, since the epoch.
now() { date +%s.%N; }
# The difference of two `now`s, divided by $3 (default 1).
span() { awk -v a="$1" -v b="$2" -v n="${3:-1}" 'BEGIN { printf "%.6f", (b - a) / n }'; }

# 1. The script's loop against panel-tally, on one panel of $JUDGES answers.
out="$tmp/out"
mkdir "$out"
awk -v lines="$JUDGES" -v size="$JUDGES" -v out="$out" -f "$here/tally-gen.awk" >"$tmp/panel.jsonl"
t0=$(now)
LC_ALL=C bash "$root/tests/fixtures/seed-tally.sh" "$out" >"$tmp/script.txt"
t1=$(now)
script_s=$(span "$t0" "$t1")
"$bin" "$tmp/panel.jsonl" >"$tmp/tally.txt" || true
# Our report adds a `sides:` line after a split, which the script has none of (a deliberate
# difference, in panel-tally(1)); every other byte must be the script's.
grep -v '^sides: ' "$tmp/tally.txt" >"$tmp/tally-seed-lines.txt" || true
cmp -s "$tmp/script.txt" "$tmp/tally-seed-lines.txt" || {
    echo "tally.sh: panel-tally's report differs from the script's:" >&2
    diff "$tmp/script.txt" "$tmp/tally-seed-lines.txt" | head -5 >&2
    exit 1
}
runs=50
t0=$(now)
for _ in $(seq "$runs"); do "$bin" "$tmp/panel.jsonl" >/dev/null || true; done
t1=$(now)
tally_s=$(span "$t0" "$t1" "$runs")

# 2. A stream of $LINES verdicts from panels of $SIZE judges.
awk -v lines="$LINES" -v size="$SIZE" -f "$here/tally-gen.awk" >"$tmp/stream.jsonl"
panels=$(( (LINES + SIZE - 1) / SIZE ))
bytes=$(wc -c <"$tmp/stream.jsonl")
cat "$tmp/stream.jsonl" >/dev/null # into the page cache, so the first run is not a disk benchmark
/usr/bin/time -v "$bin" --each --json "$tmp/stream.jsonl" >/dev/null 2>"$tmp/time.txt" || true
# Once more, untimed, for the closing summary record.
{ "$bin" --each --json "$tmp/stream.jsonl" || true; } | tail -n 1 >"$tmp/summary.json"
if [ -n "${BASELINE:-}" ]; then
	/usr/bin/time -v "$BASELINE/release/panel-tally" --each --json "$tmp/stream.jsonl" >/dev/null 2>"$tmp/base.txt" || true
	/usr/bin/time -v "$BASELINE/release/panel-tally" --each --json --reader plain "$tmp/stream.jsonl" >/dev/null 2>"$tmp/baseplain.txt" || true
fi
field() { sed -n "s/^[[:space:]]*$2: //p" "$tmp/$1.txt"; }
wall=$(field time 'Elapsed (wall clock) time (h:mm:ss or m:ss)')
user=$(field time 'User time (seconds)')
sys=$(field time 'System time (seconds)')
rss_kb=$(field time 'Maximum resident set size (kbytes)')

printf '\n%-52s %12s\n' "benchmark" "result"
printf '%-52s %12s\n' "seed script loop, $JUDGES answer files (bash + jq)" "$(awk -v a="$script_s" 'BEGIN { printf "%.2f s", a }')"
printf '%-52s %12s\n' "panel-tally, the same $JUDGES verdicts (mean of $runs)" "$(awk -v a="$tally_s" 'BEGIN { printf "%.1f ms", a * 1000 }')"
printf '%-52s %12s\n' "  speed-up (same report, byte for byte)" "$(awk -v a="$script_s" -v b="$tally_s" 'BEGIN { printf "%.0fx", a / b }')"
printf '%-52s %12s\n' "panel-tally --each --json, $LINES lines" "$wall wall"
printf '%-52s %12s\n' "  ($panels panels, $((bytes / 1048576)) MiB in)" "${user} s user"
printf '%-52s %12s\n' "" "${sys} s sys"
printf '%-52s %12s\n' "  peak resident memory" "$((rss_kb / 1024)) MiB"
if [ -n "${BASELINE:-}" ]; then
	for b in base baseplain; do
		label="  baseline"
		[ "$b" = baseplain ] && label="  baseline --reader plain"
		printf '%-52s %12s\n' "$label" "$(field "$b" 'Elapsed (wall clock) time (h:mm:ss or m:ss)') wall"
		printf '%-52s %12s\n' "" "$(( $(field "$b" 'Maximum resident set size (kbytes)') / 1024 )) MiB"
	done
fi
printf '%-52s %s\n' "  closing record" "$(cat "$tmp/summary.json")"

#!/usr/bin/env bash
# Benchmark of panel-tally --ledger, in a release build: a history of about RECORDS verdict
# records from a seeded generator (benches/ledger-gen.awk: panels of five judges and of three,
# canaries every tenth panel), read once into the page cache, then timed with GNU time: wall
# clock, CPU and peak resident memory ("Maximum resident set size"). The same history at a
# tenth of the size shows that memory does not grow with the records.
# The ledger's 95 % intervals are on, as by default (--bootstrap 1000): the goal is 2.5 s and
# 64 MiB for a million records.
# With --gold, every candidate of the history also has its gold label (the generator's truth),
# and the ledger reads it against them (--gold, --agree 3, a gate on kappa): the goal is 3 s
# and 64 MiB for a million labelled records.
# Usage: benches/ledger.sh [--gold]   (RECORDS=1000000 SEED=7 to change the input)
set -euo pipefail
gold=""
case ${1:-} in
--gold) gold=1 ;;
"") ;;
*) echo "usage: benches/ledger.sh [--gold]" >&2; exit 2 ;;
esac

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
RECORDS=${RECORDS:-1000000}
SEED=${SEED:-7}

[ -x /usr/bin/time ] || { echo "ledger.sh: GNU time (/usr/bin/time) is needed" >&2; exit 2; }

cargo build --release --quiet --manifest-path "$root/Cargo.toml" --bin panel-tally
bin="${CARGO_TARGET_DIR:-$root/target}/release/panel-tally"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A panel is 4.9 records on average (four panels of five, one of three, a canary per seat
# every tenth).
panels=$(( RECORDS * 10 / 49 ))
awk -v panels="$panels" -v seed="$SEED" ${gold:+-v labels="$tmp/big-labels.jsonl"} -f "$here/ledger-gen.awk" >"$tmp/big.jsonl"
awk -v panels="$(( panels / 10 ))" -v seed="$SEED" ${gold:+-v labels="$tmp/small-labels.jsonl"} -f "$here/ledger-gen.awk" >"$tmp/small.jsonl"
lines=$(wc -l <"$tmp/big.jsonl")
bytes=$(wc -c <"$tmp/big.jsonl")
cat "$tmp/big.jsonl" >/dev/null

field() { sed -n "s/^[[:space:]]*$2: //p" "$tmp/$1.txt"; }
# With --gold: the labels, the threshold and a gate (its exit status is the gate's, 0, 1 or 3).
args() { [ -z "$gold" ] || printf '%s\n' --gold "$tmp/$1-labels.jsonl" --agree 3 --require-kappa 0.5; }
mapfile -t big < <(args big)
mapfile -t small < <(args small)
/usr/bin/time -v "$bin" --ledger "${big[@]}" "$tmp/big.jsonl" >"$tmp/report.txt" 2>"$tmp/big.txt" || [ -n "$gold" ]
/usr/bin/time -v "$bin" --ledger --json "${big[@]}" "$tmp/big.jsonl" >/dev/null 2>"$tmp/json.txt" || [ -n "$gold" ]
/usr/bin/time -v "$bin" --ledger "${small[@]}" "$tmp/small.jsonl" >/dev/null 2>"$tmp/small.txt" || [ -n "$gold" ]

printf '\n%-52s %14s\n' "benchmark" "result"
printf '%-52s %14s\n' "panel-tally --ledger, $lines records" "$(field big 'Elapsed (wall clock) time (h:mm:ss or m:ss)') wall"
printf '%-52s %14s\n' "  ($panels panels, $((bytes / 1048576)) MiB in)" "$(field big 'User time (seconds)') s user"
printf '%-52s %14s\n' "  peak resident memory" "$(( $(field big 'Maximum resident set size (kbytes)') / 1024 )) MiB"
printf '%-52s %14s\n' "  the same with --json" "$(field json 'Elapsed (wall clock) time (h:mm:ss or m:ss)') wall"
printf '%-52s %14s\n' "  a tenth of the history: peak resident memory" "$(( $(field small 'Maximum resident set size (kbytes)') / 1024 )) MiB"
printf '%-52s %s\n' "  the report's first line" "$(head -n 1 "$tmp/report.txt")"
if [ -n "$gold" ]; then
	printf '%-52s %s\n' "  labels" "$(wc -l <"$tmp/big-labels.jsonl")"
	printf '%-52s %s\n' "  the panel against the labels" "$(grep -m 1 '^  panel ' "$tmp/report.txt" | tr -s ' ')"
	printf '%-52s %s\n' "  the gate" "$(grep -m 1 '^GATE: ' "$tmp/report.txt")"
fi

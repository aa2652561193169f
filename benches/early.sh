#!/usr/bin/env bash
# Early decisions: a history of 3-judge panels with known habits, replayed through stand-in
# judges that answer as the history says, after their recorded durations (scaled down), three
# ways under --agree 2: every judge, --stop-when-decided, --cascade. Reports side by side the
# judges launched, judge-seconds, tokens and cost spent, wall time, and the decisions that
# differ from the full panel's (which must be none).
# The history: each panel's candidate holds (70 %) or breaks; each judge is right 93 % of the
# time, so about four panels in five are unanimous; durations and usage as benches/ledger-gen.awk
# draws them (Park-Miller, the same numbers under any awk).
# Also --cascade --cascade-order cost, ordered by the history's mean cost per seat.
# Goal: --cascade spends at most 0.75 of the full panel's cost; --stop-when-decided finishes
# no later than the full panel. In the order given the two dearest seats come first, and the
# first wave they make costs more than 0.75 by itself (the floor printed): the goal is one of
# the order, met by --cascade-order cost.
# Usage: benches/early.sh [panels, default 40] [seed, default 7]
set -euo pipefail
cd "$(dirname "$0")/.."
PANELS="${1:-40}"
SEED="${2:-7}"
# PANEL_BIN: a folder of built binaries to use instead of a release build.
bin="${PANEL_BIN:-${CARGO_TARGET_DIR:-$PWD/target}/release}"
[ -n "${PANEL_BIN:-}" ] || cargo build --release --quiet
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# history.tsv: panel, judge (1..3), verdict, durationMs, inputTokens, outputTokens, costUsd.
awk -v panels="$PANELS" -v seed="$SEED" '
function rnd() { state = (state * 16807) % 2147483647; return state / 2147483647 }
BEGIN {
    state = seed; T[1] = 900; T[2] = 1400; T[3] = 2600
    PI[1] = 0.8; PO[1] = 4; PI[2] = 3; PO[2] = 15; PI[3] = 0.25; PO[3] = 2
    for (p = 1; p <= panels; p++) {
        truth = (rnd() < 0.7) ? "holds" : "breaks"
        for (j = 1; j <= 3; j++) {
            v = (rnd() < 0.93) ? truth : (truth == "holds" ? "breaks" : "holds")
            ms = int(T[j] * (0.5 + rnd() + rnd() * rnd() * 2))
            inp = 1400 + int(rnd() * 1600); outp = 40 + int(rnd() * 160)
            printf "%d\t%d\t%s\t%d\t%d\t%d\t%.6f\n", p, j, v, ms, inp, outp, (inp * PI[j] + outp * PO[j]) / 1000000
        }
    }
}' > "$work/history.tsv"

# The stand-in: answers as the history says for judge $1 of the panel, whose verdicts and
# durations come in $BENCH_PANEL ("v1 ms1 v2 ms2 v3 ms3": a judge reads no file outside its
# walls), after a tenth of its recorded duration.
cat > "$work/judge.sh" <<'EOF'
#!/usr/bin/env bash
cat >/dev/null
read -r -a said <<<"$BENCH_PANEL"
v=${said[$((2 * $1 - 2))]} ms=${said[$((2 * $1 - 1))]}
sleep "$(printf '%d.%04d' $((ms / 10000)) $((ms % 10000)))"
printf '{"verdict":"%s","reason":"as recorded","confidence":0.8}\n' "$v"
EOF
chmod +x "$work/judge.sh"
printf 'def first(xs):\n    """Return xs[0], or None when xs is empty."""\n    return xs[0]\n' > "$work/answer.md"

export PANEL_PASS_ENV=BENCH_PANEL
seats=()
for j in 1 2 3; do seats+=(--seat "exec:$work/judge.sh $j" --family "exec:$work/judge.sh $j=f$j"); done

# The history as panel-judge keeps it, for --cascade-order cost (the seats' mean costs).
awk -F'\t' -v w="$work" '{ printf "{\"type\":\"verdict\",\"seat\":\"exec:%s/judge.sh %d\",\"status\":\"ok\",\"usage\":{\"costUsd\":%s}}\n", w, $2, $7 }' "$work/history.tsv" > "$work/history.jsonl"

modes=(all stop cascade cascade-cost)
flags_of() {
    case $1 in
    all) flags=(--no-history) ;;
    stop) flags=(--no-history --agree 2 --stop-when-decided) ;;
    cascade) flags=(--no-history --agree 2 --cascade) ;;
    cascade-cost) flags=(--agree 2 --cascade --cascade-order cost --history "$work/replayed.jsonl") ;;
    esac
}
for mode in "${modes[@]}"; do
    : > "$work/$mode.jsonl"
    : > "$work/$mode.decisions"
    echo 0 > "$work/$mode.wall"
done
# Panel by panel, the four ways one after the other: a machine whose load changes meets them
# alike.
for p in $(seq 1 "$PANELS"); do
    BENCH_PANEL=$(awk -F'\t' -v p="$p" '$1 == p { printf "%s %d ", $3, $4 }' "$work/history.tsv")
    for mode in "${modes[@]}"; do
        flags_of "$mode"
        cp "$work/history.jsonl" "$work/replayed.jsonl"
        start=$(date +%s.%N)
        BENCH_PANEL=$BENCH_PANEL "$bin/panel-judge" --lens 'a=Is it right?' "${seats[@]}" "${flags[@]}" "$work/answer.md" 2>/dev/null > "$work/panel.jsonl"
        end=$(date +%s.%N)
        awk -v w="$(cat "$work/$mode.wall")" -v s="$start" -v e="$end" 'BEGIN { printf "%.3f\n", w + e - s }' > "$work/$mode.wall.new"
        mv "$work/$mode.wall.new" "$work/$mode.wall"
        cat "$work/panel.jsonl" >> "$work/$mode.jsonl"
        code=0
        "$bin/panel-tally" --agree 2 < "$work/panel.jsonl" > /dev/null || code=$?
        echo "$p $code" >> "$work/$mode.decisions"
    done
done

# What each mode spent: a judge launched pays its recorded tokens and cost in full (a judge
# ended mid-answer is billed for its prompt at the least; counting it whole is the cautious
# side); judge-seconds as the records measured them.
printf '%-20s %8s %14s %10s %10s %9s %10s\n' mode launched judge-seconds tokens cost-usd wall-s decisions
for mode in "${modes[@]}"; do
    jq -r --arg m "$mode" '[.judge, .status, .attempts, .durationMs] | @tsv' "$work/$mode.jsonl" > "$work/$mode.rows"
    # Panel by panel: the n-th record block of 3 is panel n.
    awk -F'\t' -v hist="$work/history.tsv" '
        BEGIN { while ((getline l < hist) > 0) { split(l, f, "\t"); tok[f[1] "," f[2]] = f[5] + f[6]; cost[f[1] "," f[2]] = f[7] } }
        { p = int((NR - 1) / 3) + 1; j = $1; sub(/.*judge\.sh-/, "", j); sub(/[^0-9].*/, "", j)
          if ($3 > 0) { launched++; t += tok[p "," j]; c += cost[p "," j] }
          ms += $4 }
        END { printf "%d %.1f %d %.6f\n", launched, ms / 1000, t, c }' "$work/$mode.rows" > "$work/$mode.spent"
    read -r launched secs tokens cost < "$work/$mode.spent"
    differ=$(join <(sort "$work/all.decisions") <(sort "$work/$mode.decisions") | awk '$2 != $3' | wc -l)
    printf '%-20s %8s %14s %10s %10s %9s %10s\n' "$mode" "$launched" "$secs" "$tokens" "$cost" "$(cat "$work/$mode.wall")" "$differ differ"
done
unanimous=$(awk -F'\t' '{ v[$1] = v[$1] $3 } END { for (p in v) { n++; if (v[p] == "holdsholdsholds" || v[p] == "breaksbreaksbreaks") u++ } printf "%d of %d", u, n }' "$work/history.tsv")
echo "unanimous panels in the history: $unanimous"
read -r _ _ _ full < "$work/all.spent"
read -r _ _ _ cas < "$work/cascade.spent"
read -r _ _ _ cheap < "$work/cascade-cost.spent"
# A cascade asks min(N, size - N + 1) = 2 judges first, whatever they will say: in the order
# given, the first two seats of every panel, its floor.
floor=$(awk -F'\t' '$2 <= 2 { w += $7 } { a += $7 } END { printf "%.3f", w / a }' "$work/history.tsv")
awk -v f="$full" -v c="$cas" -v cc="$cheap" -v fl="$floor" -v sw="$(cat "$work/stop.wall")" -v aw="$(cat "$work/all.wall")" 'BEGIN {
    printf "cascade cost / full cost: %.3f in the order given (its first wave alone: %.3f), by cost order %.3f (goal <= 0.75)\n", c / f, fl, cc / f
    printf "stop-when-decided wall / full wall: %.3f (goal <= 1)\n", sw / aw }'

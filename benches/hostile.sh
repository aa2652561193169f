#!/usr/bin/env bash
# Bounded work on hostile output: what one judge's reply and one large candidate cost.
#
# 1. Replies of 16 MiB (what is held and read whole) shaped to make an extractor work: unclosed braces,
#    nesting past any answer, a million small objects, one string of escapes, a quoted verdict
#    repeated. Goal: each costs panel-judge at most 1 s and 64 MiB more than a one-line reply.
# 2. A 30 MB candidate and 10 judges that read it from stdin. Goal: peak memory about
#    candidate x (2 + running judges).
# Prints wall seconds and peak RSS (MiB) of each run, best of RUNS.
# Usage: benches/hostile.sh [runs, default 3]
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${1:-3}"
cargo build --release --quiet
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
judge="$PWD/target/release/panel-judge"
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

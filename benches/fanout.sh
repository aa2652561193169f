#!/usr/bin/env bash
# Fan-out: N stand-in claude judges that each take 1 s, through `panel-judge | panel-tally`
# and through the seed's script (benches/baseline-judge-panel.sh: seed 001's own, with 32
# lenses), wall time of each.
# Goal: our wall time <= 1.10 s for 32 judges, i.e. under 2 ms of overhead per judge.
# And the cost of the walls: the sh seat in its jail (--sandbox auto) and under Landlock alone
# (--sandbox landlock) against --sandbox off; goal at most 3 ms a judge for the jail.
# And the launch path itself: 32 judges that answer at once, jailed, against the spawn floor
# (32 bare sh doing the same at once); goal at most 2 times the floor (median of 7).
# And what a judge's share costs (its cgroup, its disk carried in and out, its rlimits): the
# same 32 jailed judges with the default limits against --judge-memory/-processes/-disk off;
# goal under 1 ms a judge.
# And, run as root, the same Landlock-alone panel as a user (nobody): no cgroup, so each judge's
# CPU is held by its niceness and its session's autogroup, which the kernel lets a user set once
# a tenth of a second (judges starting together wait their turn).
# Usage: benches/fanout.sh [N judges, default 32] [runs, default 5]
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-32}"
RUNS="${2:-5}"
cargo build --release --quiet
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export PATH="$PWD/tests/standins:${CARGO_TARGET_DIR:-$PWD/target}/release:$PATH"
export STANDIN_MODE=sleep:1 STANDIN_STDIN_WAIT=0
export PANEL_PASS_ENV=STANDIN_MODE,STANDIN_STDIN_WAIT
# The stand-in needs no login, but no claude judge is launched without one: a made-up token
# (a placeholder is all a walled judge holds of it anyway).
export CLAUDE_CODE_OAUTH_TOKEN=${CLAUDE_CODE_OAUTH_TOKEN:-sk-ant-oat01-fanout-bench}
for i in $(seq 1 "$N"); do echo "lens$i|Is claim $i of the answer right?"; done > "$work/lenses"
printf 'def first(xs):\n    """Return xs[0], or None when xs is empty."""\n    return xs[0]\n' > "$work/answer.md"

# Both must produce a whole report before their times mean anything.
check=$(panel-judge --seat claude:haiku --lenses "$work/lenses" "$work/answer.md" 2>/dev/null | panel-tally || true)
grep -q "PANEL: unanimous — all $N say breaks." <<<"$check" || { echo "panel-judge | panel-tally did not report $N verdicts:" >&2; echo "$check" >&2; exit 1; }
check=$(benches/baseline-judge-panel.sh "$work/answer.md" "$work/lenses")
grep -q "PANEL: unanimous — all $N say breaks." <<<"$check" || { echo "the baseline did not report $N verdicts:" >&2; echo "$check" >&2; exit 1; }

best() { sort -n | head -1; }
time_of() { # prints wall seconds of one run of "$@"
  local t0 t1
  t0=$(date +%s.%N)
  "$@" > /dev/null 2>&1 || true
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }'
}
# The same panel with the lightest judge there is (sh running sleep), to show what the tool
# itself costs apart from starting a bash stand-in.
light="exec:cat >/dev/null; sleep 1; echo '{\"verdict\":\"breaks\",\"reason\":\"r\",\"confidence\":0.9}'"
ours=() base=() bare=() open=() lock=() user=()
as_user=()
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1 && command -v runuser >/dev/null; then
  chmod 755 "$work"
  as_user=(runuser -u nobody -- env PANEL_HISTORY=off TMPDIR=/tmp HOME=/tmp PATH="$PATH")
fi
for _ in $(seq 1 "$RUNS"); do
  ours+=("$(time_of bash -c "panel-judge --seat claude:haiku --lenses '$work/lenses' '$work/answer.md' | panel-tally")")
  base+=("$(time_of benches/baseline-judge-panel.sh "$work/answer.md" "$work/lenses")")
  bare+=("$(time_of bash -c "panel-judge --sandbox auto --seat \"\$0\" --lenses '$work/lenses' '$work/answer.md' | panel-tally" "$light")")
  lock+=("$(time_of bash -c "panel-judge --sandbox landlock --seat \"\$0\" --lenses '$work/lenses' '$work/answer.md' | panel-tally" "$light")")
  open+=("$(time_of bash -c "panel-judge --sandbox off --seat \"\$0\" --lenses '$work/lenses' '$work/answer.md' | panel-tally" "$light")")
  if [ ${#as_user[@]} -gt 0 ]; then
    user+=("$(time_of "${as_user[@]}" bash -c "panel-judge --sandbox landlock --seat \"\$0\" --lenses '$work/lenses' '$work/answer.md' | panel-tally" "$light")")
  fi
done
# The launch path: judges that answer at once, and the same work as bare processes.
now="exec:cat >/dev/null; echo '{\"verdict\":\"breaks\",\"reason\":\"r\",\"confidence\":0.9}'"
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
floor=() fast=() fast_off=() unlimited=()
no_share="--judge-memory off --judge-processes off --judge-disk off"
for _ in $(seq 1 7); do
  floor+=("$(time_of bash -c 'for i in $(seq 1 "$0"); do sh -c "cat >/dev/null; echo x" </dev/null >/dev/null & done; wait' "$N")")
  fast+=("$(time_of bash -c "panel-judge --sandbox auto --seat \"\$0\" --lenses '$work/lenses' '$work/answer.md' >/dev/null" "$now")")
  fast_off+=("$(time_of bash -c "panel-judge --sandbox off --seat \"\$0\" --lenses '$work/lenses' '$work/answer.md' >/dev/null" "$now")")
  unlimited+=("$(time_of bash -c "panel-judge --sandbox auto $no_share --seat \"\$0\" --lenses '$work/lenses' '$work/answer.md' >/dev/null" "$now")")
done
o=$(printf '%s\n' "${ours[@]}" | best)
b=$(printf '%s\n' "${base[@]}" | best)
e=$(printf '%s\n' "${bare[@]}" | best)
f=$(printf '%s\n' "${open[@]}" | best)
l=$(printf '%s\n' "${lock[@]}" | best)
fl=$(printf '%s\n' "${floor[@]}" | median)
fa=$(printf '%s\n' "${fast[@]}" | median)
fo=$(printf '%s\n' "${fast_off[@]}" | median)
fu=$(printf '%s\n' "${unlimited[@]}" | median)
printf 'judges: %s, each answering after 1 s; best of %s runs; load average %s\n' "$N" "$RUNS" "$(cut -d' ' -f1 /proc/loadavg)"
printf '%-44s %8.3f s\n' "panel-judge | panel-tally (stand-in claude)" "$o" "seed script (baseline, stand-in claude)" "$b" "panel-judge | panel-tally (sh seat, jail)" "$e" "the same, --sandbox landlock" "$l" "the same, --sandbox off" "$f"
printf '%-44s %8.2f x\n' "baseline / ours" "$(awk -v o="$o" -v b="$b" 'BEGIN { print b / o }')"
printf '%-44s %8.2f ms\n' "overhead per judge (stand-in claude)" "$(awk -v o="$o" -v n="$N" 'BEGIN { print (o - 1) * 1000 / n }')"
printf '%-44s %8.2f ms\n' "overhead per judge (sh seat)" "$(awk -v o="$e" -v n="$N" 'BEGIN { print (o - 1) * 1000 / n }')"
printf '%-44s %8.3f x\n' "sh seat: --sandbox auto / --sandbox off" "$(awk -v a="$e" -v f="$f" 'BEGIN { print a / f }')"
printf '%-44s %8.2f ms\n' "the jail per judge (auto - off)" "$(awk -v a="$e" -v f="$f" -v n="$N" 'BEGIN { print (a - f) * 1000 / n }')"
printf '%-44s %8.2f ms\n' "Landlock alone per judge (landlock - off)" "$(awk -v a="$l" -v f="$f" -v n="$N" 'BEGIN { print (a - f) * 1000 / n }')"
if [ ${#user[@]} -gt 0 ]; then
  u=$(printf '%s\n' "${user[@]}" | best)
  printf '%-44s %8.3f s\n' "the same, --sandbox landlock, as nobody" "$u"
  printf '%-44s %8.2f ms\n' "as a user, per judge (landlock - off)" "$(awk -v a="$u" -v f="$f" -v n="$N" 'BEGIN { print (a - f) * 1000 / n }')"
fi
printf '%-44s %8.3f s\n' "$N bare sh at once (the spawn floor, median)" "$fl" "$N jailed judges answering at once (median)" "$fa" "the same, --sandbox off (median)" "$fo"
printf '%-44s %8.2f x\n' "jailed launch path / spawn floor" "$(awk -v a="$fa" -v f="$fl" 'BEGIN { print a / f }')"
printf '%-44s %8.2f x\n' "unwalled launch path / spawn floor" "$(awk -v a="$fo" -v f="$fl" 'BEGIN { print a / f }')"
printf '%-44s %8.3f s\n' "the same jailed, no share limits (median)" "$fu"
printf '%-44s %8.2f ms\n' "the share per judge (defaults - off)" "$(awk -v a="$fa" -v u="$fu" -v n="$N" 'BEGIN { print (a - u) * 1000 / n }')"
printf 'each judge: %s\n' "$(panel-judge --sandbox auto --seat "$now" --lenses "$work/lenses" "$work/answer.md" 2>/dev/null | head -1 | jq -r .sandbox)"

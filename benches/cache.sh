#!/usr/bin/env bash
# What a panel pays for its input once the provider's prompt cache counts (issue 47): 3 and 5
# lenses on a 24 KB and a 100 KB candidate, through the real claude and the real codex with an
# API key, against the stand-in model server, which caches as the providers do
# (tests/mockserver/cache.rs: Anthropic's breakpoints, 20-block lookback and TTLs; OpenAI's
# automatic prefixes in 128-token steps; 1,024 tokens at least; an entry readable only once the
# answer of the request that wrote it has begun; tokens estimated as bytes / 4).
# Each case runs the seed's way, one independent call per lens all at once (claude: the seed's
# script, benches/baseline-judge-panel.sh; codex: `codex exec` with the seed's prompt and
# schema, one per lens in the background), and as one panel-judge with the same lenses, each in
# a server (so a cache) of its own: the tests in tests/real_cache.rs, which print the `CACHE`
# lines. Cost is cache-weighted input tokens over every model request: uncached input + 1.25 x
# 5-minute cache writes (2 x for 1-hour ones) + 0.1 x cache reads; OpenAI writes are free, so
# uncached + 0.1 x cached.
# Goal: with 3 lenses, panel-judge costs at most 0.55 of the 3 independent calls (every
# candidate size, both CLIs). The script exits 1 when a measure fails, not when the goal is
# missed: it reports either way.
# Usage: benches/cache.sh [CLI...]   (default: claude codex)
# Needs the real CLIs: PANEL_HARNESS_DIR (default /opt/panel-harnesses, scripts/install-harnesses).
set -euo pipefail
cd "$(dirname "$0")/.."
export PANEL_HARNESS_DIR="${PANEL_HARNESS_DIR:-/opt/panel-harnesses}"
clis=("$@")
[ ${#clis[@]} -gt 0 ] || clis=(claude codex)
log="$(mktemp)"
lines="$(mktemp)"
trap 'rm -f "$log" "$lines"' EXIT
cargo test --quiet --locked --test real --no-run 2>/dev/null
status=0
for cli in "${clis[@]}"; do
  if ! cargo test --quiet --locked --test real "real_cache::$cli" -- --exact --nocapture --include-ignored >"$log" 2>&1; then
    status=1
    grep -E 'panicked|assertion|seed.s' "$log" | sed "s/^/  $cli: /" >&2 || true
  fi
  if grep '^CACHE' "$log" >>"$lines"; then :; else echo "CACHE $cli: not measured (not installed?)" >&2; fi
done
printf '%-7s %6s %9s %11s %11s %7s\n' cli lenses candidate "seed's way" panel-judge ratio
# CACHE <cli> lenses=N candidate=KB  seed W (...)  panel-judge W (...)  ratio=R
awk '{
  split($3, n, "="); split($4, kb, "="); seed = $6
  for (i = 7; i <= NF; i++) if ($i == "panel-judge") ours = $(i + 1)
  split($NF, r, "=")
  printf "%-7s %6s %9s %11s %11s %7s\n", $2, n[2], kb[2], seed, ours, r[2]
}' "$lines"
echo
awk '$3 == "lenses=3" {
  split($NF, r, "="); n++
  if (r[2] + 0 > 0.55) { miss++; worst = (r[2] + 0 > worst) ? r[2] + 0 : worst }
} END {
  if (n == 0) { print "GOAL: not measured"; exit }
  if (miss) printf "GOAL (3 lenses at most 0.55 of 3 independent calls): not met, %d of %d cases over, the worst x%.2f\n", miss, n, worst
  else printf "GOAL (3 lenses at most 0.55 of 3 independent calls): met in all %d cases\n", n
}' "$lines"
echo "(details: cache-weighted input tokens, uncached / written / read, requests)"
sed 's/^CACHE /  /' "$lines"
exit "$status"

#!/usr/bin/env bash
# A newcomer's build: `cargo install --locked --path .` from a fresh clone, with a target folder
# and an install root of its own (dependencies downloaded already: the registry's cache is
# kept, as after a first `cargo fetch`), timed wall-clock. BASELINE=REV builds that revision
# the same way first, so the two figures come from one machine in one sitting.
# Usage: benches/build.sh [REV, default HEAD]      (BASELINE=REV to time another beside it)
# ROUNDS=N builds them N times, alternating (this machine's speed drifts by half between
# sittings: compare within one, and trust the CPU seconds more than the wall's).
# Prints one line a build: the revision, its wall seconds, its user and system CPU seconds,
# and its binaries' total size. KEEP=1
# keeps the clones and their target folders (named on stderr), for the other benches to run
# each build: CARGO_TARGET_DIR=DIR/target benches/tally.sh, from DIR/src.
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:-HEAD}
work=$(mktemp -d)
if [ -n "${KEEP:-}" ]; then
	echo "build.sh: the builds are kept in $work" >&2
else
	trap 'rm -rf "$work"' EXIT
fi

build() { # REV NAME
	local dir=$work/$2
	git clone -q . "$dir/src"
	git -C "$dir/src" checkout -q "$1"
	(cd "$dir/src" && cargo fetch --locked -q)
	(cd "$dir/src" && CARGO_TARGET_DIR=$dir/target /usr/bin/time -f '%e %U %S' -o "$dir/time" \
		cargo install --locked --quiet --path . --root "$dir/root" 2>"$dir/err") || {
		echo "build.sh: $1 did not build: $(tail -n 1 "$dir/err")" >&2
		exit 1
	}
	read -r wall user sys <"$dir/time"
	printf '%-12s %6.1f s  CPU %6.1f s user %5.1f s sys  %s bytes\n' "$(git rev-parse --short "$1")" \
		"$wall" "$user" "$sys" "$(cat "$dir"/root/bin/* | wc -c)"
}

for round in $(seq "${ROUNDS:-1}"); do
	[ -z "${BASELINE:-}" ] || build "$BASELINE" "baseline-$round"
	build "$rev" "build-$round"
done

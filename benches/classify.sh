#!/usr/bin/env bash
# Benchmark: pr-classify on the numstat of a 100,000-file diff, made by git in a temporary
# repository (modified, added, deleted, renamed and binary files), against the time git
# itself takes to produce that numstat. The target is 0.3 s for pr-classify.
#
#   benches/classify.sh            # 100,000 files
#   FILES=20000 benches/classify.sh
set -euo pipefail
cd "$(dirname "$0")/.."
FILES=${FILES:-100000}
RUNS=${RUNS:-5}

cargo build --release --quiet --bin pr-classify
BIN=$PWD/target/release/pr-classify

WORK=$(mktemp -d "${TMPDIR:-/tmp}/panel-bench-classify.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.invalid
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.invalid
g() { git -C "$WORK/repo" -c init.defaultBranch=main -c commit.gpgsign=false "$@"; }

now() { echo "$EPOCHREALTIME"; }
# Best wall time of $RUNS runs of a command, in seconds.
best() {
    local best=999999 t0 t1 dt
    for _ in $(seq "$RUNS"); do
        t0=$(now)
        "$@" >/dev/null
        t1=$(now)
        dt=$(echo "$t1 - $t0" | bc -l)
        if (($(echo "$dt < $best" | bc -l))); then best=$dt; fi
    done
    printf '%.3f' "$best"
}

echo "making a repository of $FILES files in $WORK/repo ..." >&2
t0=$(now)
mkdir -p "$WORK/repo"
g init -q
# The tree: 100 files a folder, with a few dependency manifests and tests among them.
(
    cd "$WORK/repo"
    for ((i = 0; i < FILES; i++)); do
        d=$((i / 100))
        case $((i % 100)) in
            0) f="pkg$d/package.json" ;;
            1) f="pkg$d/tests/t$i.rs" ;;
            *) f="pkg$d/src/f$i.rs" ;;
        esac
        ((i % 100 == 0)) && mkdir -p "pkg$d/src" "pkg$d/tests"
        printf 'line one of %s\nline two\nline three\n' "$i" >"$f"
    done
)
g add -A
g commit -q -m base
# The change: most files modified, some deleted, some renamed unchanged, some added, some binary.
(
    cd "$WORK/repo"
    for ((i = 0; i < FILES; i++)); do
        d=$((i / 100))
        case $((i % 100)) in
            0) f="pkg$d/package.json" ;;
            1) f="pkg$d/tests/t$i.rs" ;;
            *) f="pkg$d/src/f$i.rs" ;;
        esac
        case $((i % 50)) in
            7) rm "$f" ;;
            8) mkdir -p "pkg$d/moved" && mv "$f" "pkg$d/moved/" ;;
            9) printf '\x89PNG\0\1\2%s' "$i" >"pkg$d/src/img$i.png" ;;
            *) printf 'line one of %s\nchanged\nline three\nadded\n' "$i" >"$f" ;;
        esac
    done
)
g add -A
g commit -q -m change
echo "made in $(echo "$(now) - $t0" | bc -l | xargs printf '%.1f') s" >&2

HEAD_SHA=$(g rev-parse HEAD)
g diff --numstat -M HEAD~1 HEAD >"$WORK/numstat.txt"
LINES=$(wc -l <"$WORK/numstat.txt")

t_git=$(best g diff --numstat -M HEAD~1 HEAD)
classify() { "$BIN" --numstat --repo acme/app --head "$HEAD_SHA" --plan "$WORK/numstat.txt"; }
t_classify=$(best classify)
pipeline() { g diff --numstat -M HEAD~1 HEAD | "$BIN" --numstat --repo acme/app --head "$HEAD_SHA" --plan; }
t_pipe=$(best pipeline)

echo "numstat lines:                        $LINES"
echo "git diff --numstat -M (best of $RUNS):      ${t_git} s"
echo "pr-classify --numstat --plan (best of $RUNS): ${t_classify} s"
echo "the two in a pipe (best of $RUNS):          ${t_pipe} s"
echo "pr-classify / git diff:               $(echo "$t_classify / $t_git" | bc -l | xargs printf '%.3f')"
if (($(echo "$t_classify <= 0.3" | bc -l))); then
    echo "target 0.3 s: met"
else
    echo "target 0.3 s: MISSED"
    exit 1
fi

#!/usr/bin/env bash
# The seed's review battery, offline: three recorded reviewers (stage `write`), findings merged
# by the first reviewer's seat (its recorded `merge` answer), votes and reviews replayed from answers.json by asker name (write-1, vote-write-1, …),
# the judge's decisions replayed from judge.json, and a stand-in writer. Needs the panel tools
# on PATH (cargo install --path .) and panel-judge's replay:FILE seats.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/review-battery-example.XXXXXX")"
cp "$here/page.md" "$work/page.md"
answers="replay:$here/answers.json"
exec "$here/../../bin/review-battery" \
	--stage write \
	--seat "$answers" --seat "$answers" --seat "$answers" \
	--brief "$here/brief.md" \
	--judge "replay:$here/judge.json" \
	--writer "$(printf %q "$here/writer.sh")" \
	--run "$work/records" \
	"$work/page.md"

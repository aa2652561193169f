#!/usr/bin/env bash
# A stand-in writer for the offline run: it reads the findings it is given and puts the
# recorded second draft in place of the page.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
echo "writer: round $PANEL_ROUND: acting on:" >&2
cat >&2
cp "$here/page-2.md" "$PANEL_CANDIDATE"

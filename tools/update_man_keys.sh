#!/usr/bin/env bash
# tools/update_man_keys.sh [BUILD_DIR] - rewrite the KEY TABLE section of
# doc/ibsm.conf.5 from ibsm's key table (config/keys.c, config/key_notes.c).
#
# The table comes from cfg_man_table(), written out by the unit test
# tests/unit/check_conf_read (built in BUILD_DIR, default build/asan),
# which also fails when the page and the code disagree.  The text between
# the BEGIN KEY TABLE and END KEY TABLE comment lines is replaced (or the
# line @@TABLE@@, the first time).
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$top/build/asan}
page=$top/doc/ibsm.conf.5
tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp.page"' EXIT

make -s -C "$build" tests/unit/check_conf_read >&2
IBSM_MAN_TABLE_OUT=$tmp CK_RUN_CASE=conf_read "$build/tests/unit/check_conf_read" \
	>/dev/null 2>&1 || true
[ -s "$tmp" ] || { echo "update_man_keys: no table from check_conf_read" >&2; exit 1; }
awk -v tbl="$tmp" '
	function put() { while ((getline l < tbl) > 0) print l; close(tbl) }
	/^\.\\" BEGIN KEY TABLE/ { put(); skip = 1; next }
	skip && /^\.\\" END KEY TABLE/ { skip = 0; next }
	skip { next }
	/^@@TABLE@@$/ { put(); next }
	{ print }
' "$page" > "$tmp.page"
if cmp -s "$page" "$tmp.page"; then
	echo "doc/ibsm.conf.5: key table up to date"
else
	cp "$tmp.page" "$page"
	echo "doc/ibsm.conf.5: key table rewritten"
fi

#!/usr/bin/env bash
# tests/fn_length.sh - functions of the product code longer than MAX
# lines (default 150): one line each, "LINES FILE:LINE NAME", longest
# first; exit 1 when there is one.
#
# A function starts at a "{" in column 0 and ends at the next "}" in
# column 0 (the project's style); its name is the last line before it
# that opens a parameter list in column 0.
set -uo pipefail
max=${1:-150}
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top" || exit 2
long=$(find mad model routing partitions config sm tools -name '*.c' | sort |
while read -r f; do
	awk -v max="$max" -v f="$f" '
	/^[A-Za-z_].*\(/ { sig = $0 }
	/^\{/ { start = NR; name = sig }
	/^\}/ && start {
		n = NR - start + 1
		if (n > max) {
			match(name, /[A-Za-z_0-9]+\(/)
			printf "%4d %s:%d %s\n", n, f, start,
			       substr(name, RSTART, RLENGTH - 1)
		}
		start = 0
	}' "$f"
done | sort -rn)
if [ -n "$long" ]; then
	echo "$long"
	exit 1
fi
exit 0

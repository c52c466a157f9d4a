#!/bin/sh
# check_format_doc.sh FORMAT_H FORMAT_MD - every chunk tag format.h defines
# has its row in doc/format.md's table, and the table names no other.
set -u
tags_h=$(sed -n "s/.*FMT_TAG('\(.\)', '\(.\)', '\(.\)', '\(.\)').*/\1\2\3\4/p" "$1" | sort -u)
tags_md=$(sed -n 's/^| `\([A-Z][A-Z][A-Z][A-Z]\)` |.*/\1/p' "$2" | sort -u)
[ -n "$tags_h" ] || { echo "FAIL: no chunk tags found in $1"; exit 1; }
if [ "$tags_h" != "$tags_md" ]; then
	echo "FAIL: chunk tags in format.h and doc/format.md differ:"
	echo "  format.h:  " $tags_h
	echo "  format.md: " $tags_md
	exit 1
fi
echo "ok: " $tags_h

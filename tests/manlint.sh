#!/bin/sh
# manlint.sh GROFF PAGE - the man page renders without a single warning
# (what `man -l PAGE` shows, checked strictly: all warnings enabled).
out=$("$1" -man -Tutf8 -ww -z "$2" 2>&1) || { printf '%s\n' "$out"; exit 1; }
if [ -n "$out" ]; then
	printf '%s\n' "$out"
	exit 1
fi

#!/bin/bash
# tests/readme_check.sh PREFIX - run every command of the README and of the
# pages in doc/ that uses an installed vmsampler (the indented lines that
# start with `vmsampler`, `cc` or `./follow`),
# as written, in that order (README.md, then the pages in the order of
# DOC_PAGES below), against an installation in PREFIX
# (scripts/install.sh PREFIX), in a scratch directory.  /usr/local in a
# command becomes PREFIX, and /dev/shm/vmsampler a ring in the scratch
# directory (not to disturb a sampler of this machine).  A command that
# samples until stopped runs for a few seconds (exit status 124 from timeout
# is its normal end); any other failure fails the check, with the command.
# scripts/test.sh runs it, so that the README cannot rot.
set -uo pipefail
PREFIX=$(cd "${1:?usage: $0 PREFIX}" && pwd)
SRC=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/vms-readme.XXXXXX)
bg=()
cleanup() {
	for p in "${bg[@]}"; do kill -TERM "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	rm -rf "$work"
}
trap cleanup EXIT
export PATH="$PREFIX/bin:$PATH"
libdir=$(dirname "$(find "$PREFIX" -name vmsampler.pc | head -1)")
[ -d "$libdir" ] || { echo "readme_check: no vmsampler.pc under $PREFIX" >&2; exit 1; }
export PKG_CONFIG_PATH="$libdir"
export LD_LIBRARY_PATH="$(dirname "$libdir")"
cp -r "$SRC/examples" "$work/"
# the recorded runs the README's commands read (run from the top of the tree)
mkdir -p "$work/tests/fixtures" && cp -r "$SRC/tests/fixtures/runs" "$work/tests/fixtures/"
# every page of doc/ with commands, in the order a reader meets them
DOC_PAGES="install statistics export analysis interference performance reliability testing"
pages=("$SRC/README.md")
for p in $DOC_PAGES; do pages+=("$SRC/doc/$p.md"); done
for f in "$SRC"/doc/*.md; do
	case " $DOC_PAGES ARCHITECTURE DESIGN " in *" $(basename "$f" .md) "*) ;; *)
		echo "readme_check: doc/$(basename "$f") is not in DOC_PAGES" >&2; exit 1 ;;
	esac
done
cd "$work" || exit 1

n=0 fail=0
while IFS= read -r line; do
	cmd=${line#    }
	cmd=${cmd//\/usr\/local/$PREFIX}
	cmd=${cmd//\/dev\/shm\/vmsampler/$work/ring}
	n=$((n + 1))
	if [[ $cmd =~ \&[[:space:]]*(#.*)?$ ]]; then
		# one sampler at a time, as a reader of the README runs them
		for p in "${bg[@]}"; do kill -TERM "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
		bg=()
		bash -c "exec ${cmd%%&*}" >/dev/null 2>"bg$n.err" &
		bg+=($!)
		for _ in $(seq 50); do [ -e "$work/ring" ] && break; sleep 0.1; done
		sleep 1
		if ! kill -0 "${bg[0]}" 2>/dev/null; then
			wait "${bg[0]}"
			echo "FAILED (exit $? at once, in the background): $cmd" >&2
			sed 's/^/    /' "bg$n.err" >&2
			fail=$((fail + 1))
			bg=()
			continue
		fi
		echo "ok (running in the background) $cmd"
		continue
	fi
	timeout 4 bash -c "$cmd" >"out$n" 2>"err$n"
	rc=$?
	if [ "$rc" = 0 ] || [ "$rc" = 124 ]; then
		echo "ok ($rc) $cmd"
	else
		echo "FAILED ($rc): $cmd" >&2
		sed 's/^/    /' "err$n" >&2
		fail=$((fail + 1))
	fi
done < <(grep -hE '^    (vmsampler |cc |\./follow )' "${pages[@]}")
[ "$n" -ge 10 ] || { echo "readme_check: only $n commands found in the README" >&2; exit 1; }
echo "readme_check: $((n - fail))/$n commands of the README and doc/ work"
[ "$fail" = 0 ]

#!/bin/bash
# scripts/build-matrix.sh - configure and build the option combinations a
# user will try:
#
#   - -Dbuildtype=debug, release and plain, tests disabled, every feature
#     as found (auto): debug and plain compile at -O0, where gcc calls what
#     it inlines when it optimizes (floor() from libm in src/common/fmt.c:
#     issue 23, item 10: `meson setup -Dbuildtype=debug -Dtests=disabled`
#     did not link);
#   - each feature disabled, one at a time (libvirt, perf, export,
#     remote_write, capng, systemd, zstd, bpf, man), at -O0 (debug).
#
# -Dfuzz (clang, libFuzzer) and -Dstatic (its own stage in test.sh) are not
# in it.  Each configuration builds what `ninja` builds (the programs, the
# library, the fuzz replays and benchmarks that are built by default), not
# the tests.
#
# The debug combinations share one build directory (debug/), configured
# in turn with each combination's whole set of options (every other
# feature put back to its default), so that ninja compiles again only
# what the combination changes: a feature reaches the code through
# vms_build.h (10 of the ~100 sources) and its dependency's flags, and a
# compile whose command line and inputs are the same as the last
# configuration's gives the same object (ninja compares both; that is what
# an incremental build relies on).  Before each build, `ninja -t
# cleandead` removes what the previous configuration built and this one
# does not (its generated headers, programs, man pages), so that what one
# configuration leaves cannot hide what another lacks.  plain and release
# (other compiler flags: nothing to share) have a directory each.
#
#   scripts/build-matrix.sh [DIR]    build directories under DIR (default
#                                    build-matrix/ in the tree; kept: a
#                                    second run has nothing to do for plain
#                                    and release, and goes through the
#                                    debug ones again)
#
# Exits non-zero at the first configuration that does not configure or
# build, with its command line and errors; prints one line per
# configuration, the compile and link steps it took and the time taken.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=${1:-$ROOT/build-matrix}
mkdir -p "$DIR"

feats=(libvirt perf export remote_write capng systemd zstd bpf man)
# each feature's default (meson_options.txt), put back after the
# combination that turned it off
declare -A def
while read -r n v; do
	def[$n]=$v
done < <(meson introspect --buildoptions "$ROOT/meson.build" |
	python3 -c 'import json, sys
for o in json.load(sys.stdin):
    print(o["name"], o["value"])')

configs=("debug -Dbuildtype=debug -Dtests=disabled")
for f in "${feats[@]}"; do
	configs+=("no-$f -Dbuildtype=debug -Dtests=disabled -D$f=disabled")
done
configs+=(
	"plain -Dbuildtype=plain -Dtests=disabled"
	"release -Dbuildtype=release -Dtests=disabled"
)

t0=$SECONDS
for c in "${configs[@]}"; do
	read -r name opts <<<"$c"
	log=$DIR/$name.log
	case $name in plain|release) b=$DIR/$name ;; *) b=$DIR/debug ;; esac
	t=$SECONDS
	# the whole set: this combination's options, every feature it does
	# not name at its default
	all=$opts
	for f in "${feats[@]}"; do
		[[ " $opts " == *" -D$f="* ]] || all="$all -D$f=${def[$f]}"
	done
	# shellcheck disable=SC2086 # all is a list of options
	if [ ! -f "$b/build.ninja" ]; then
		meson setup "$b" "$ROOT" $all >"$log" 2>&1 ||
			{ echo "build-matrix: $name: meson setup $opts failed:" >&2; tail -n 30 "$log" >&2; exit 1; }
	else
		{ meson configure "$b" $all && ninja -C "$b" build.ninja; } >"$log" 2>&1 ||
			{ echo "build-matrix: $name: meson configure $all failed:" >&2; tail -n 30 "$log" >&2; exit 1; }
	fi
	ninja -C "$b" -t cleandead >>"$log" 2>&1
	steps=$(ninja -C "$b" -n 2>/dev/null | grep -c '^\[' || true)
	ninja -C "$b" >>"$log" 2>&1 ||
		{ echo "build-matrix: $name: meson setup $opts: ninja failed:" >&2
		  grep -E -A4 'error|FAILED|undefined' "$log" | head -n 40 >&2; exit 1; }
	printf '  %-16s %-50s %4d steps %3d s\n' "$name" "$opts" "$steps" $((SECONDS - t))
done
echo "build-matrix: ${#configs[@]} configurations built in $((SECONDS - t0)) s"

#!/bin/bash
# scripts/build-matrix.sh - configure and build the option combinations a
# user will try, each in a build directory of its own (nothing shared:
# what one configuration leaves cannot hide what another lacks):
#
#   - -Dbuildtype=debug, release and plain, tests disabled, every feature
#     as found (auto): debug and plain compile at -O0, where gcc calls what
#     it inlines when it optimizes (floor() from libm in src/common/fmt.c:
#     issue 23, item 10: `meson setup -Dbuildtype=debug -Dtests=disabled`
#     did not link);
#   - each feature disabled, one at a time (libvirt, perf, export,
#     remote_write, capng, systemd, zstd, man), at -O0 (debug).
#
# -Dfuzz (clang, libFuzzer) and -Dstatic (its own stage in test.sh) are not
# in it.  Each configuration builds what `ninja` builds (the programs, the
# library, the fuzz replays and benchmarks that are built by default), not
# the tests: that is the cost of a compile at -O0, a few seconds of CPU.
#
#   scripts/build-matrix.sh [DIR]    build directories under DIR (default
#                                    build-matrix/ in the tree; kept, so
#                                    that a second run only relinks)
#
# Exits non-zero at the first configuration that does not configure or
# build, with its command line and errors; prints one line per
# configuration and the time taken.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=${1:-$ROOT/build-matrix}
mkdir -p "$DIR"

configs=(
	"debug -Dbuildtype=debug -Dtests=disabled"
	"release -Dbuildtype=release -Dtests=disabled"
	"plain -Dbuildtype=plain -Dtests=disabled"
)
for f in libvirt perf export remote_write capng systemd zstd bpf man; do
	configs+=("no-$f -Dbuildtype=debug -Dtests=disabled -D$f=disabled")
done

t0=$SECONDS
for c in "${configs[@]}"; do
	read -r name opts <<<"$c"
	b=$DIR/$name
	log=$DIR/$name.log
	t=$SECONDS
	# shellcheck disable=SC2086 # opts is a list of options
	if [ ! -f "$b/build.ninja" ]; then
		meson setup "$b" "$ROOT" $opts >"$log" 2>&1 ||
			{ echo "build-matrix: $name: meson setup $opts failed:" >&2; tail -n 30 "$log" >&2; exit 1; }
	fi
	ninja -C "$b" >>"$log" 2>&1 ||
		{ echo "build-matrix: $name: meson setup $opts: ninja failed:" >&2
		  grep -E -A4 'error|FAILED|undefined' "$log" | head -n 40 >&2; exit 1; }
	printf '  %-16s %-60s %3d s\n' "$name" "$opts" $((SECONDS - t))
done
echo "build-matrix: ${#configs[@]} configurations built in $((SECONDS - t0)) s"

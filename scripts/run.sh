#!/bin/bash
# scripts/run.sh [vmsampler options] - install what is missing, build, and
# run the main job: sample every second into out.csv until Ctrl-C.
#   ./scripts/run.sh                      (= vmsampler -i 1s -o out.csv)
#   ./scripts/run.sh -i 100ms -n 600 -o run.vms
. "$(dirname "$0")/lib.sh"
apt_install $BUILD_PKGS
need_libperf
# its own build directory: test.sh's build/ has other options (tests,
# werror), and sharing one made each rebuild the other's
build build-run --buildtype=release -Dperf=enabled
[ $# -gt 0 ] || set -- -i 1s -o out.csv
echo "== $ROOT/build-run/vmsampler $*  (Ctrl-C to stop)"
exec "$ROOT/build-run/vmsampler" "$@"

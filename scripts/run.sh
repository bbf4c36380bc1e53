#!/bin/bash
# scripts/run.sh [vmsampler options] - install what is missing, build, and
# run the main job: sample every second into out.csv until Ctrl-C.
#   ./scripts/run.sh                      (= vmsampler -i 1s -o out.csv)
#   ./scripts/run.sh -i 100ms -n 600 -o run.vms
. "$(dirname "$0")/lib.sh"
apt_install $BUILD_PKGS
need_libperf
build build --buildtype=release -Dperf=enabled
[ $# -gt 0 ] || set -- -i 1s -o out.csv
echo "== $ROOT/build/vmsampler $*  (Ctrl-C to stop)"
exec "$ROOT/build/vmsampler" "$@"

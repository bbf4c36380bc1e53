#!/bin/bash
# scripts/test.sh - install what is missing, build, and run the whole test
# suite: unit tests and fuzz-corpus replay (plain and ASan+UBSan builds,
# warnings as errors), the minimal host-only build, and the integration
# tests against the live /proc (vs sar).
. "$(dirname "$0")/lib.sh"
apt_install $BUILD_PKGS $TEST_PKGS
need_libperf
t0=$SECONDS

# CI must not skip what it can run: the e2e test fails if sysstat is missing
export VMS_REQUIRE_E2E=1

echo "== build (werror): unit tests, fuzz corpora, man pages, e2e against sar and perf stat"
build build -Dwerror=true -Dtests=enabled -Dperf=enabled
meson test -C "$ROOT/build" --print-errorlogs --no-rebuild

echo "== ASan+UBSan build: unit tests and fuzz corpora"
build build-asan -Dwerror=true -Dtests=enabled -Dperf=enabled -Db_sanitize=address,undefined
meson test -C "$ROOT/build-asan" --print-errorlogs --no-rebuild --suite unit --suite fuzz

echo "== ThreadSanitizer: the live ring's seqlock under the in-process stress test"
if [ ! -f "$ROOT/build-tsan/build.ninja" ]; then
	meson setup "$ROOT/build-tsan" "$ROOT" -Dtests=enabled -Db_sanitize=thread -Db_lundef=false >/dev/null
fi
ninja -C "$ROOT/build-tsan" tests/stress_ring >/dev/null
TSAN_OPTIONS=halt_on_error=1 VMS_STRESS_FRAMES=200000 "$ROOT/build-tsan/tests/stress_ring" threads

echo "== minimal host-only build (no libvirt, no perf, no tests)"
build build-min -Dwerror=true -Dlibvirt=disabled -Dperf=disabled -Dtests=disabled -Dman=disabled --buildtype=release
"$ROOT/build-min/vmsampler" -i 10ms -n 3 -o - >/dev/null

echo "== all tests passed in $((SECONDS - t0)) s"

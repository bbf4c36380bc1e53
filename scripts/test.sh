#!/bin/bash
# scripts/test.sh - install what is missing, build, and run the whole test
# suite: unit tests and fuzz-corpus replay (plain and ASan+UBSan builds,
# warnings as errors), the build without libvirt (with its unit tests), the
# minimal host-only build, and the integration tests on real guests
# (tests/vmlab: libvirtd and 3 TCG guests, plus transient guests that the
# tests make and remove), and vmsampler.service in a Debian guest under
# systemd (tests/pkg/systemd-guest.sh).
#
# What this script brings up it takes down again; libvirtd and guests that
# were running before are left running.  VMS_SKIP_INTEGRATION=1 skips the
# integration stage and the systemd guest (a machine that cannot run guests).
. "$(dirname "$0")/lib.sh"
apt_install $BUILD_PKGS $TEST_PKGS
need_libperf
t0=$SECONDS
# each stage says when it began (seconds since the start): where CI's time goes
stage() { echo "== [$((SECONDS - t0)) s] $*"; }

# meson test runs as many tests at once as there are CPUs (2 on CI's
# machine); the longest of the tests that run beside others mostly wait
# (CPU time of their wall time, measured: agent-retry 0.7 of 41 s,
# source_vm 0.6 of 44 s, fullfs 3.9 of 52 s, mixin 9.6 of 64 s, the
# 60-s receiver outage of export_rw), each holding one of the 2 places
# meanwhile.  One more place than CPUs; the tests that measure the
# machine (e2e, bpf_interf, priv, follow, ...) run alone as before
# (is_parallel: false), whatever this number.
jobs=$(($(nproc) + 1))

# CI must not skip what it can run: the e2e test fails if sysstat is missing
export VMS_REQUIRE_E2E=1
# ... and the export test fails without Debian's prometheus (TEST_PKGS)
export VMS_REQUIRE_PROMETHEUS=1
# ... nor the tests on InfluxDB, Prometheus and VictoriaMetrics
export VMS_REQUIRE_TSDB=1

stage "build (werror): unit tests, fuzz corpora, man pages, e2e against sar and perf stat"
# the Python package's tests: matplotlib from Debian, pyarrow, pandas and
# duckdb in a venv (from PyPI), made while the build compiles (pip waits
# for the network much of its time)
mkdir -p "$ROOT/build"
py_venv "$ROOT/build/pyvenv" &
venv=$!
trap 'kill $venv 2>/dev/null || true' EXIT  # the build failed: the venv does not outlive it
build build -Dwerror=true -Dtests=enabled -Dperf=enabled -Dlibvirt=enabled -Dexport=enabled -Dremote_write=enabled -Dbpf=enabled
wait $venv
trap - EXIT
# the tests that need root, perf counters, the counting allocator, the
# interference BPF program and the Python package's modules run here:
# their skip would be a failure (tests/testutil.h, vms_skip;
# tests/test_py_lib.py, require)
VMS_REQUIRE_PERF=1 VMS_REQUIRE_ROOT=1 VMS_REQUIRE_NOALLOC=1 VMS_REQUIRE_PY=1 VMS_REQUIRE_BPF=1 \
	meson test -C "$ROOT/build" --print-errorlogs --no-rebuild --num-processes "$jobs"

stage "ASan+UBSan build: unit tests and fuzz corpora"
build build-asan -Dwerror=true -Dtests=enabled -Dperf=enabled -Dlibvirt=enabled -Db_sanitize=address,undefined
# (under ASan the sanitizer owns malloc: the no-allocation tests cannot
# count, and their binaries report SKIP, their other tests having passed)
VMS_REQUIRE_PERF=1 VMS_REQUIRE_ROOT=1 VMS_REQUIRE_BPF=1 \
	meson test -C "$ROOT/build-asan" --print-errorlogs --no-rebuild --num-processes "$jobs" --suite unit --suite fuzz

stage "ThreadSanitizer: the live ring's seqlock under the in-process stress test"
if [ ! -f "$ROOT/build-tsan/build.ninja" ]; then
	meson setup "$ROOT/build-tsan" "$ROOT" -Dtests=enabled -Db_sanitize=thread -Db_lundef=false >/dev/null
fi
ninja -C "$ROOT/build-tsan" tests/stress_ring >/dev/null
TSAN_OPTIONS=halt_on_error=1 VMS_STRESS_FRAMES=200000 "$ROOT/build-tsan/tests/stress_ring" threads

stage "build without libvirt and its unit tests"
build build-nolibvirt -Dwerror=true -Dtests=enabled -Dlibvirt=disabled
VMS_REQUIRE_PERF=1 VMS_REQUIRE_ROOT=1 VMS_REQUIRE_NOALLOC=1 \
	meson test -C "$ROOT/build-nolibvirt" --print-errorlogs --no-rebuild --num-processes "$jobs" --suite unit

stage "release build with everything (what run.sh makes), warnings as errors"
build build-release --buildtype=release -Dwerror=true -Dperf=enabled -Dlibvirt=enabled -Dtests=disabled
"$ROOT/build-release/vmsampler" -i 10ms -n 3 -o - >/dev/null

stage "the option combinations users try: debug/release/plain without tests, each feature off in turn"
# scripts/build-matrix.sh: 12 configurations, at -O0 but for release (what
# gcc inlines when it optimizes is called there: libm's floor() did not
# link at -O0); the 10 debug ones in turn in build-matrix/debug, each
# compiling again only what its options change (ninja -t cleandead first)
"$ROOT/scripts/build-matrix.sh" "$ROOT/build-matrix"

stage "scripts/install.sh into a temporary prefix; every command of the README and doc/ against it"
prefix=$(mktemp -d /tmp/vms-prefix.XXXXXX)
"$ROOT/scripts/install.sh" "$prefix"
bash "$ROOT/tests/readme_check.sh" "$prefix" | tail -n 1
rm -rf "$prefix"

stage "minimal host-only build (no libvirt, no perf, no libcap-ng, no libsystemd, no zstd, no tests)"
build build-min -Dwerror=true -Dlibvirt=disabled -Dperf=disabled -Dbpf=disabled -Dtests=disabled -Dman=disabled \
	-Dcapng=disabled -Dsystemd=disabled -Dzstd=disabled --buildtype=release
"$ROOT/build-min/vmsampler" -i 10ms -n 3 -o - >/dev/null
# sd_notify without libsystemd: notify.c writes the datagrams itself
VMS_BIN="$ROOT/build-min/vmsampler" python3 "$ROOT/tests/test_notify.py" 2>&1 | tail -n 1
# user: without libcap-ng is one line and exit status 2
# (its exit status 2 is the point: not in a pipeline under pipefail)
rc=0
msg=$("$ROOT/build-min/vmsampler" --user nobody -n 1 -o - 2>&1 >/dev/null) || rc=$?
[ "$rc" = 2 ] && [ "$(printf '%s\n' "$msg" | wc -l)" = 1 ] && [[ $msg == *'this build has no libcap-ng'* ]] ||
	{ echo "build-min: user: without libcap-ng is not refused in one line with exit 2 (exit $rc): $msg" >&2; exit 1; }
# rotation without libzstd: rotate works, compress: zstd is one line and
# exit 2, a .zst input says this build cannot read it
VMS_BIN="$ROOT/build-min/vmsampler" python3 "$ROOT/tests/test_rotate.py" 2>&1 | tail -n 1

stage "static host-only build (-Dstatic=true), run in tests/vmlab's busybox guest (tests/static)"
# the guest is booted by QEMU directly (no libvirt): tests/vmlab's kernel and
# initramfs (make-guest.sh, run by the test when they are missing) with the
# static vmsampler added; required here (VMS_REQUIRE_MINIMAL=1) unless the
# integration stage is skipped (a machine that cannot boot guests: a SKIP)
apt_install qemu-system-x86 qemu-utils busybox-static cpio file
build build-static -Dstatic=true -Dwerror=true -Dtests=disabled
[ "${VMS_SKIP_INTEGRATION:-0}" = 1 ] || export VMS_REQUIRE_MINIMAL=1
log=$ROOT/build-static/static-tests.log
meson test -C "$ROOT/build-static" --suite static --no-rebuild --verbose >"$log" 2>&1 ||
	{ tail -n 60 "$log" >&2; exit 1; }
grep -E '^(static: |kernel=)' "$log"  # the size and what the guest did, how long it took

stage "the unit files: systemd-analyze verify and security (offline)"
systemd-analyze verify "$ROOT/build/vmsampler.service" "$ROOT/build/vmsampler-export.service" 2>&1 |
	grep -v -e 'is not executable' -e "Command 'man " || true
for u in vmsampler vmsampler-export; do
	systemd-analyze security --offline=yes "$ROOT/build/$u.service" | tail -n 1
done

stage "Debian packages: build from a clean clone, lintian, install, upgrade, purge"
debs=$(mktemp -d /tmp/vms-debs.XXXXXX)
bash "$ROOT/tests/pkg/test_deb.sh" "$debs"

# a guest (TCG) like the integration stage's, hence the same switch
if [ "${VMS_SKIP_INTEGRATION:-0}" != 1 ]; then
	stage "vmsampler.service under a real systemd: a Debian 12 guest (TCG)"
	# the same .debs (test_deb.sh built them from a clean clone of HEAD)
	VMS_GUEST_DEBS=$debs bash "$ROOT/tests/pkg/systemd-guest.sh"
fi
rm -rf "$debs"

if [ "${VMS_SKIP_INTEGRATION:-0}" = 1 ]; then
	stage "integration tests skipped (VMS_SKIP_INTEGRATION=1)"
else
	stage "integration tests on real guests"
	t1=$SECONDS
	need_root
	"$ROOT/build/vmsampler" --version | grep -qx 'libvirt: yes' || {
		echo "the build has no libvirt support: cannot run the integration tests" >&2
		exit 1
	}
	# tests/vmlab/session.sh: one run at a time on this machine (a lock;
	# a second run waits), leftovers of a run that was killed are taken
	# over and removed, and what this run starts (or took over) is taken
	# down at the end, whatever fails
	bash "$ROOT/tests/vmlab/session.sh" -- \
		env VMS_REQUIRE_INTEGRATION=1 meson test -C "$ROOT/build" --setup integration --print-errorlogs \
		--no-rebuild --num-processes 1
	echo "== integration tests took $((SECONDS - t1)) s"
fi

echo "== all tests passed in $((SECONDS - t0)) s"

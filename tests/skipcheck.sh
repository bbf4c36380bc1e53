#!/bin/bash
# skipcheck.sh BIN SWITCH [nobody] - a test that cannot run is a SKIP (exit
# 77), and a failure where the switch that scripts/test.sh sets says it
# must run: BIN, made to meet its skip (as user nobody: no perf counters,
# no root; or built with ASan: no counting allocator), exits 77 without
# SWITCH and fails (not 0, not 77) with SWITCH=1.  Also: no test calls
# cmocka's bare skip() (a pass to meson), only vms_skip() (testutil.h).
set -u
bin=$1 switch=$2 as=${3:-}
bare=$(grep -nE '(^|[^_[:alnum:]])skip\(\);' "${VMS_SRCDIR:?}"/tests/*.c | grep -v 'vms_skip')
[ -z "$bare" ] || { echo "a bare skip() passes for meson; use vms_skip (testutil.h): $bare"; exit 1; }
run=("$bin")
if [ "$as" = nobody ]; then
	[ "$(id -u)" = 0 ] && command -v setpriv >/dev/null || { echo "needs root and setpriv"; exit 77; }
	run=(setpriv --reuid=nobody --regid=nogroup --clear-groups "$bin")
fi
go() { env -u VMS_REQUIRE_PERF -u VMS_REQUIRE_ROOT -u VMS_REQUIRE_NOALLOC "$@" "${run[@]}" >/dev/null 2>&1; }
go; free=$?
go "$switch=1"; required=$?
echo "$(basename "$bin")${as:+ as $as}: exit $free; with $switch=1: exit $required"
[ "$free" = 77 ] || { echo "expected 77 (SKIP)"; exit 1; }
[ "$required" != 0 ] && [ "$required" != 77 ] || { echo "expected a failure"; exit 1; }
echo "skips are SKIPs, and failures where required"

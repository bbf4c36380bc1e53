#!/bin/bash
# skipcheck.sh TEST_PERF - a test that cannot run is a SKIP (exit 77), and a
# failure where the switch that scripts/test.sh sets says it must run:
# test_perf as user nobody (no perf counters, no root) exits 77 without
# VMS_REQUIRE_PERF and fails (not 0, not 77) with VMS_REQUIRE_PERF=1.
set -u
bin=$1
[ "$(id -u)" = 0 ] && command -v setpriv >/dev/null || { echo "needs root and setpriv"; exit 77; }
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups env -u VMS_REQUIRE_PERF -u VMS_REQUIRE_ROOT "$@" "$bin" >/dev/null 2>&1; }
as_nobody; free=$?
as_nobody VMS_REQUIRE_PERF=1; required=$?
echo "test_perf as nobody: exit $free; with VMS_REQUIRE_PERF=1: exit $required"
[ "$free" = 77 ] || { echo "expected 77 (SKIP)"; exit 1; }
[ "$required" != 0 ] && [ "$required" != 77 ] || { echo "expected a failure"; exit 1; }
echo "skips are SKIPs, and failures where required"

#!/bin/bash
# pyskipcheck.sh - a Python test file whose tests cannot all run is a real
# SKIP for meson (exit 77, tests/test_py_lib.py main), not unittest's exit 0
# that meson counts as a pass, and a failure where VMS_REQUIRE_PY=1 says it
# must run.  test_py_sweep.py with report_gen out of reach (VMS_BUILD set to
# an empty directory): its synthetic-run tests skip.
set -u
py=${1:?python3} t=${VMS_SRCDIR:?}/tests/test_py_sweep.py
empty=$(mktemp -d)
trap 'rm -rf "$empty"' EXIT
go() { env -u VMS_REQUIRE_PY VMS_BUILD="$empty" "$@" "$py" "$t" >"$empty/log" 2>&1; }
go; free=$?
go VMS_REQUIRE_PY=1; required=$?
echo "test_py_sweep.py without report_gen: exit $free; with VMS_REQUIRE_PY=1: exit $required"
[ "$free" = 77 ] || { echo "expected 77 (SKIP)"; tail -n 20 "$empty/log"; exit 1; }
[ "$required" != 0 ] && [ "$required" != 77 ] || { echo "expected a failure"; exit 1; }
echo "skipped Python tests are SKIPs, and failures where required"

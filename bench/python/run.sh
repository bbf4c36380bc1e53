#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/python/run.sh - what the Python package's plot and parquet cost, and
# how that grows with frames and with columns: synthetic runs at 1 s written
# by bench/report/report_gen (the sampler's own binary sink), 21,600 and
# 43,200 frames with 60 VMs, and a day (86,400 frames) with 15, 30 and 60
# VMs.  Goals of issue 11 for the day with 60 VMs: plot <= 60 s and <= 1 GiB
# resident, parquet <= 60 s.
#
#   bench/python/run.sh [BUILD_DIR] [PYTHON]
#
# BUILD_DIR defaults to build/, PYTHON to BUILD_DIR/pyvenv/bin/python3 (the
# venv scripts/test.sh makes: numpy, matplotlib, pyarrow, pandas).  Each
# figure is the median of REPS (default 1) runs of /usr/bin/time -f '%e %M':
# wall seconds and the largest resident set size (the plot's includes its
# `vmsampler dump --rates` child: /usr/bin/time reports the largest of the
# process and its waited-for children).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${1:-$ROOT/build}
PY=${2:-$B/pyvenv/bin/python3}
REPS=${REPS:-1}
command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (Debian: apt-get install time)" >&2; exit 1; }
[ -x "$PY" ] || { echo "no $PY: run scripts/test.sh once (it makes the venv) or give PYTHON" >&2; exit 1; }
ninja -C "$B" >/dev/null
ninja -C "$B" report_gen >/dev/null
T=$(mktemp -d /tmp/vms-py-bench.XXXXXX)
trap 'rm -rf "$T"' EXIT
export VMS_BIN=$B/vmsampler PYTHONPATH=$ROOT/python

echo "# $(date -u +%FT%TZ) $(uname -r), $(nproc) CPUs:$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

. "$ROOT/bench/timeit.sh"
measure() { timeit '%.1f s, %.0f MiB' "$@"; }

echo
echo "| input | columns | .vms MB | plot (PNG) | parquet (long) | parquet --wide |"
echo "|---|---:|---:|---|---|---|"
row() { # frames vms
	local f=$T/r-$1-$2.vms info cols
	info=$("$B/report_gen" -n "$1" -m "$2" "$f")
	cols=$(echo "$info" | awk '{print $(NF - 1)}')
	printf '| %s frames, %s VMs | %s | %s | %s | %s | %s |\n' "$1" "$2" "$cols" "$(($(stat -c %s "$f") / 1000000))" \
		"$(measure "$PY" -m vmsampler plot "$f" -o "$T/p.png")" \
		"$(measure "$PY" -m vmsampler parquet "$f" "$T/p.parquet")" \
		"$(measure "$PY" -m vmsampler parquet --wide "$f" "$T/w.parquet")"
	rm -f "$f" "$T"/p.png "$T"/*.parquet
}
row 21600 60
row 43200 60
row 86400 15
row 86400 30
row 86400 60
echo
echo "# load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"

#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/python/load.sh - what vmsampler.load() and `python3 -m vmsampler
# parquet` cost on large streams, against the file's size and against
# `vmsampler report` on the same file in the same run (issue 23, item 9).
#
#   bench/python/load.sh [BUILD_DIR] [PYTHON]
#   OLD=DIR bench/python/load.sh ...   also main's loader: DIR is the python/
#                                      directory of another checkout (before)
#   BIG=1 bench/python/load.sh ...     also the day of 60 VMs at ~4,400
#                                      columns (86,400 frames, ~0.8 GB)
#
# The inputs are written by bench/report/report_gen (the sampler's own
# binary sink, VMs stopping and restarting: several schema generations):
#   report_gen -n 45000 -m 3 -c 8 s45k.vms        # the issue's 45k frames x ~290 columns
#   report_gen -n 86400 -m 60 --vcpus 13 day.vms  # BIG=1: a day at 60 VMs, 4,401 columns
# BUILD_DIR defaults to build/, PYTHON to BUILD_DIR/pyvenv/bin/python3
# (numpy, pandas, pyarrow: scripts/test.sh makes it).  Each figure is one
# run (REPS to change) of /usr/bin/time: wall seconds, CPU seconds (user +
# system: on a shared machine the wall time says more about the others)
# and peak resident set; "x file" is the peak RSS over the file's size.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${1:-$ROOT/build}
PY=${2:-$B/pyvenv/bin/python3}
[ -x "$PY" ] || { echo "no $PY: run scripts/test.sh once (it makes the venv) or give PYTHON" >&2; exit 1; }
ninja -C "$B" >/dev/null
ninja -C "$B" report_gen >/dev/null
T=$(mktemp -d /tmp/vms-pyload-bench.XXXXXX)
trap 'rm -rf "$T"' EXIT
export VMS_BIN=$B/vmsampler
. "$ROOT/bench/timeit.sh"

echo "# $(date -u +%FT%TZ) $(uname -r), $(nproc) CPUs, load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| input | .vms MB | what | wall s | CPU s | peak RSS MiB | x file |"
echo "|---|---:|---|---:|---:|---:|---:|"

LOAD='import sys, json, vmsampler; c = json.loads(sys.argv[2]); df = vmsampler.load(sys.argv[1], **({"columns": c} if c else {})); df[list(df.columns)[-1]]'
OLDLOAD='import sys, json, vmsampler; c = json.loads(sys.argv[2]); df = vmsampler.load(sys.argv[1]); df = df[c] if c else df'
row() { # name file what cmd...
	local name=$1 f=$2 what=$3 mb out wall mib cpu
	shift 3
	mb=$(awk -v s="$(stat -c %s "$f")" 'BEGIN {printf "%.1f", s / 1e6}')
	out=$(timeit '%s %s %s' "$@")
	read -r wall mib cpu <<<"$out"
	printf '| %s | %s | %s | %.1f | %.1f | %.0f | %.1f |\n' "$name" "$mb" "$what" "$wall" "$cpu" "$mib" \
		"$(awk -v m="$mib" -v s="$(stat -c %s "$f")" 'BEGIN {print m * 1048576 / s}')"
}
bench() { # name file
	local name=$1 f=$2
	row "$name" "$f" '`vmsampler report`' "$B/vmsampler" report "$f"
	if [ -n "${OLD:-}" ]; then
		row "$name" "$f" 'load(), main' env PYTHONPATH="$OLD" "$PY" -c "$OLDLOAD" "$f" '[]'
		row "$name" "$f" 'load()[2 columns], main' env PYTHONPATH="$OLD" "$PY" -c "$OLDLOAD" "$f" \
			'["cpu.all.user", "load.1m"]'
	fi
	row "$name" "$f" 'import vmsampler, pandas (the floor)' env PYTHONPATH="$ROOT/python" "$PY" -c \
		'import vmsampler, pandas, numpy'
	row "$name" "$f" 'load(), all columns' env PYTHONPATH="$ROOT/python" "$PY" -c "$LOAD" "$f" '[]'
	row "$name" "$f" 'load(columns=2)' env PYTHONPATH="$ROOT/python" "$PY" -c "$LOAD" "$f" \
		'["cpu.all.user", "load.1m"]'
	row "$name" "$f" 'load(columns=vm.*.cpu_time)' env PYTHONPATH="$ROOT/python" "$PY" -c "$LOAD" "$f" \
		'["vm.*.cpu_time"]'
	row "$name" "$f" 'parquet (long)' env PYTHONPATH="$ROOT/python" "$PY" -m vmsampler parquet "$f" "$T/o.parquet"
	row "$name" "$f" 'parquet --wide' env PYTHONPATH="$ROOT/python" "$PY" -m vmsampler parquet --wide "$f" "$T/o.parquet"
	rm -f "$T/o.parquet"
}

"$B/report_gen" -n 45000 -m 3 -c 8 "$T/s45k.vms" >/dev/null
bench "45,000 frames, 293 columns" "$T/s45k.vms"
rm -f "$T/s45k.vms"
if [ "${BIG:-0}" = 1 ]; then
	OLD='' "$B/report_gen" -n 86400 -m 60 --vcpus 13 "$T/day.vms" >/dev/null
	OLD='' bench "86,400 frames, 60 VMs, 4,401 columns" "$T/day.vms"
fi
echo
echo "# load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"

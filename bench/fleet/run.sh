#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/fleet/run.sh [--build DIR] [--hosts N] [--seconds S] [--victoria BIN]: the long run
# of tests/test_fleet.py (issue 25 item 8): N simulated hosts (default 50;
# real samplers at 1 s, each with a proc root naming it) for S seconds
# (default 120), each pushed with `export --file --remote-write
# --rw-cursor` into one VictoriaMetrics and one Prometheus (Debian's,
# started on 127.0.0.1), receivers and a few exporters killed and
# restarted mid-run, every frame checked once; then a 60-VM host
# (bench/report/report_gen -m 60, 3600 frames) pushed with --no-follow.
# --victoria BIN (or VMS_VICTORIA=BIN): that VictoriaMetrics binary instead
# of Debian's 1.79, e.g. v1.151 built from its Go module (bench/fleet/
# build-victoria.sh).  Prints the FLEET and SIXTY lines (JSON: the figures
# of doc/export.md, "A fleet", and bench/RESULTS.md).  No root; about 4
# minutes.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
BUILD=$SRC/build HOSTS=50 SECONDS_=120
while [ $# -gt 0 ]; do
	case $1 in
	--build) BUILD=$(cd "$2" && pwd); shift 2 ;;
	--hosts) HOSTS=$2; shift 2 ;;
	--seconds) SECONDS_=$2; shift 2 ;;
	--victoria) VMS_VICTORIA=$(realpath "$2"); export VMS_VICTORIA; shift 2 ;;
	*) echo "usage: $0 [--build DIR] [--hosts N] [--seconds S] [--victoria BIN]" >&2; exit 2 ;;
	esac
done
echo "# $(date -u +%FT%TZ) commit $(git -C "$SRC" rev-parse --short HEAD) hosts $HOSTS seconds $SECONDS_" \
	"nproc $(nproc) load $(cut -d' ' -f1-3 /proc/loadavg) victoria ${VMS_VICTORIA:-victoria-metrics}"
VMS_BIN=$BUILD/vmsampler VMS_BUILD=$BUILD VMS_REQUIRE_TSDB=1 VMS_FLEET_HOSTS=$HOSTS VMS_FLEET_SECONDS=$SECONDS_ \
	python3 "$SRC/tests/test_fleet.py" --full Fleet SixtyVMs 2>&1 | grep -E '^(FLEET|SIXTY) |^(OK|FAILED)|Error'

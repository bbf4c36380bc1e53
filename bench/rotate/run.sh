#!/bin/bash
# bench/rotate/run.sh - what compress: zstd costs and gains, and that the
# ticks stay on time while a large file is compressed (issue 13).
#
#   bench/rotate/run.sh [BUILD_DIR]
#
# 1. Ratio and CPU: bench_compress (the sampler's own compressor, zstd
#    level 3, and libvmsampler reading every value back) on the recorded
#    run of tests/fixtures/runs/, on a host-only run sampled here
#    (100 ms, N_HOST frames) and on bench/report's synthetic day (24 h at
#    1 s, 60 VMs: 418 MB).
# 2. Lateness: the sampler at 10 ms for N_LATE frames, twice, each with
#    the synthetic day as a closed file a previous run left in the output
#    directory: with compress: zstd (the child compresses it during the
#    run, at nice 10) and with compress: none (nothing compressed: the
#    baseline of the same run on the same machine).  The frames' own
#    late_ns and missed_ticks (dump) say how late each tick was: those
#    taken while the child was compressing, against the whole baseline.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${1:-$ROOT/build}
N_HOST=${N_HOST:-1200}
N_LATE=${N_LATE:-2000}
ninja -C "$B" >/dev/null
ninja -C "$B" bench_compress report_gen >/dev/null
T=$(mktemp -d /tmp/vms-rotate-bench.XXXXXX)
trap 'rm -rf "$T"' EXIT
printf 'sources:\n  libvirt: {enabled: false}\n  perf: {enabled: false}\n' > "$T/host.yaml"
"$B/report_gen" "$T/day-60vm.vms" >/dev/null
"$B/vmsampler" -q -c "$T/host.yaml" -i 100ms -n "$N_HOST" -o "$T/host-100ms.vms"

echo "## compression (zstd level 3), $(date -u +%FT%TZ), $(nproc) CPUs"
"$B/bench_compress" "$ROOT"/tests/fixtures/runs/*.vms "$T/host-100ms.vms" "$T/day-60vm.vms" |
	sed "s|$ROOT/||; s|$T/||"

late_run() { # $1: zstd|none
	local d="$T/late-$1"
	mkdir -p "$d"
	cp "$T/day-60vm.vms" "$d/run-20200101T000000Z.vms"
	local t0
	t0=$(date +%s%N)
	"$B/vmsampler" -q -c "$T/host.yaml" -i 10ms -n "$N_LATE" --rotate 1d --compress "$1" -o "$d/run.vms" &
	local pid=$! t1=0
	# when the leftover is compressed (zstd): its .vms is gone
	while kill -0 $pid 2>/dev/null; do
		if [ "$t1" = 0 ] && [ ! -e "$d/run-20200101T000000Z.vms" ]; then t1=$(date +%s%N); fi
		sleep 0.02
	done
	wait $pid
	local f
	f=$(ls "$d"/run-*.vms* | grep -v 20200101 | head -1)
	"$B/vmsampler" dump "$f" > "$d/dump.csv" 2>/dev/null # (new interfaces: wide CSV warns)
	python3 - "$d/dump.csv" "$1" "$t0" "$t1" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
mode, t0, t1 = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
from datetime import datetime
def t(r):
    return int(datetime.fromisoformat(r['time']).timestamp() * 1e9)
sel = rows if mode == 'none' or not t1 else [r for r in rows if t0 <= t(r) <= t1]
late = sorted(int(r['late_ns']) for r in sel)
q = lambda p: late[min(len(late) - 1, int(p * len(late)))] / 1e6
missed = sum(int(r['missed_ticks']) for r in sel)
lost = sum(int(r['lost_frames']) for r in rows)
what = 'compress: none (baseline, all frames)' if mode == 'none' else \
    'compress: zstd, frames while the child compressed (%.1f s)' % ((t1 - t0) / 1e9)
print('| %s | %d | %.3f | %.3f | %.3f | %.3f | %d | %d |' % (what, len(sel), q(0.5), q(0.99), q(0.999), late[-1] / 1e6, missed, lost))
EOF
}
echo
echo "## tick lateness at 10 ms while the synthetic day (418 MB) is compressed"
echo "| run | frames | late p50 ms | p99 ms | p99.9 ms | max ms | missed ticks | lost frames (run) |"
echo "|---|---|---|---|---|---|---|---|"
late_run none
late_run zstd
ls -la "$T/late-zstd" | sed "s|$T/||" >&2

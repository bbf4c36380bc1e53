#!/bin/bash
# bench/live/run.sh - what the live ring costs, next to what a
# node_exporter scrape costs, measured in the same run on this machine.
#
#   bench/live/run.sh [BUILD_DIR]     (default build; prints a report)
#
# 1. reader cost per frame (bench_live reader): copy+validate, the
#    library's next(), zero-copy validate-only, for 2,000 and 200 columns;
# 2. writer cost per frame (bench_live writer) with 0 and 4 readers;
# 3. the real sampler at 10 ms: its own CPU per frame (self_cpu_ns) and
#    lateness without --ring, with --ring, with --ring and 4 `vmsampler
#    tail` readers;
# 4. node_exporter (Debian prometheus-node-exporter) on 127.0.0.1, scraped
#    with curl: CPU per scrape of the exporter and of curl;
# 5. strace -c of a consumer (examples/follow.c) reading every frame of a
#    running `vmsampler --ring`.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${1:-$ROOT/build}
ninja -C "$B" >/dev/null && ninja -C "$B" bench_live >/dev/null
V=$B/vmsampler
T=$(mktemp -d /dev/shm/vms-bench.XXXXXX)
trap 'rm -rf "$T"; [ -n "${NE:-}" ] && kill "$NE" 2>/dev/null || true' EXIT
echo "# $(date -u +%FT%TZ) $(uname -r), $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"

echo "## 1. reader"
"$B/bench_live" reader 2000 400
"$B/bench_live" reader 200 400

echo "## 2. writer (2000 columns)"
for r in 0 4 0 4; do "$B/bench_live" writer 2000 20000 $r 2>/dev/null; done

echo "## 3. the sampler at 10 ms, 1000 frames (mean per frame from its own columns)"
sampler() { # label, extra args...
	local label=$1
	shift
	"$V" -q -i 10ms -n 1000 -o "$T/s.vms" "$@"
	"$V" dump "$T/s.vms" | awk -F, -v l="$label" 'NR == 1 {for (i = 1; i <= NF; i++) c[$i] = i; next}
		NR > 2 {cpu += $c["self_cpu_ns"]; late += $c["late_ns"]; n++}
		END {printf "  %-28s self_cpu %7.1f us/frame, late %6.1f us (mean of %d)\n", l, cpu / n / 1000, late / n / 1000, n}'
}
run_with_readers() { # n
	local n=$1 pids=()
	rm -f "$T/ring"
	"$V" -q -i 10ms -n 1000 -o "$T/s.vms" --ring "$T/ring" &
	local sp=$!
	while [ ! -e "$T/ring" ]; do sleep 0.01; done
	for i in $(seq "$n"); do "$V" tail "$T/ring" --new > /dev/null 2>&1 & pids+=($!); done
	wait "$sp"
	for p in "${pids[@]}"; do wait "$p" || true; done
	"$V" dump "$T/s.vms" | awk -F, -v l="--ring, $n tail readers" 'NR == 1 {for (i = 1; i <= NF; i++) c[$i] = i; next}
		NR > 2 {cpu += $c["self_cpu_ns"]; late += $c["late_ns"]; m++}
		END {printf "  %-28s self_cpu %7.1f us/frame, late %6.1f us (mean of %d)\n", l, cpu / m / 1000, late / m / 1000, m}'
}
for rep in 1 2; do
	sampler "no ring file"
	rm -f "$T/ring"
	sampler "--ring, no readers" --ring "$T/ring"
	run_with_readers 4
done

echo "## 4. node_exporter scrape (127.0.0.1:9199, 50 scrapes)"
if command -v prometheus-node-exporter >/dev/null; then
	prometheus-node-exporter --web.listen-address=127.0.0.1:9199 >/dev/null 2>&1 &
	NE=$!
	for i in $(seq 50); do curl -sf -o /dev/null http://127.0.0.1:9199/metrics && break; sleep 0.1; done
	python3 - "$NE" <<'PY'
import os, resource, subprocess, sys
pid = int(sys.argv[1])
hz = os.sysconf('SC_CLK_TCK')
def cpu(p):
    f = open('/proc/%d/stat' % p).read().rsplit(')', 1)[1].split()
    return (int(f[11]) + int(f[12])) / hz
for _ in range(5):
    subprocess.run(['curl', '-sf', '-o', '/dev/null', 'http://127.0.0.1:9199/metrics'], check=True)
n = 50
c0, r0 = cpu(pid), resource.getrusage(resource.RUSAGE_CHILDREN)
size = 0
for _ in range(n):
    out = subprocess.run(['curl', '-sf', 'http://127.0.0.1:9199/metrics'], check=True, capture_output=True).stdout
    size = len(out)
c1, r1 = cpu(pid), resource.getrusage(resource.RUSAGE_CHILDREN)
ne = (c1 - c0) / n * 1000
cu = ((r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)) / n * 1000
print('  node_exporter: %.2f ms CPU per scrape; curl (the scraper): %.2f ms CPU per scrape; %d bytes per scrape'
      % (ne, cu, size))
PY
	kill "$NE"
	wait "$NE" 2>/dev/null || true
	NE=
else
	echo "  prometheus-node-exporter is not installed (apt-get install prometheus-node-exporter)"
fi

echo "## 5. strace -c of a consumer of every frame (examples/follow.c)"
cc -O2 "$ROOT/examples/follow.c" -I"$ROOT/include" -L"$B" -lvmsampler -Wl,-rpath,"$B" -o "$T/follow"
rm -f "$T/ring"
"$V" -q -i 10ms -n 500 -o /dev/null --ring "$T/ring" &
sp=$!
while [ ! -e "$T/ring" ]; do sleep 0.01; done
strace -c -o "$T/strace" "$T/follow" "$T/ring" 'cpu.all.*' > "$T/follow.out" 2> "$T/follow.err" || true
wait "$sp"
echo "  frames printed: $(wc -l < "$T/follow.out") (seq $(head -1 "$T/follow.out" | cut -d' ' -f1) to $(tail -1 "$T/follow.out" | cut -d' ' -f1)), $(tail -1 "$T/follow.err")"
sed 's/^/  /' "$T/strace"

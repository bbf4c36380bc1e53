#!/bin/bash
# bench/report/run.sh - what `vmsampler report --summary` costs on a day of
# a virtualization host: a synthetic 24 h run at 1 s with 60 VMs (86,400
# frames, about 2,400 columns, written by report_gen with the sampler's own
# binary sink), then the same with 1/4 and 1/2 of the frames and of the VMs.
# Goal: the full day in at most 10 s and 64 MiB of resident memory.
#
#   bench/report/run.sh [BUILD_DIR] [DIR]   measure (files under DIR, default
#                                           a temporary directory in /tmp,
#                                           removed at the end)
#   bench/report/run.sh --make-only DIR [BUILD_DIR]
#                                           only write the full day as
#                                           DIR/day-60vm.vms and print its path
#
# Each figure is the median of REPS (default 3) runs of /usr/bin/time -f
# '%e %M': wall seconds and maximum resident set size.  The file is read
# from the page cache (it was just written).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
REPS=${REPS:-3}

if [ "${1:-}" = --make-only ]; then
	DIR=${2:?usage: $0 --make-only DIR [BUILD_DIR]}
	B=${3:-$ROOT/build}
	ninja -C "$B" report_gen >/dev/null
	mkdir -p "$DIR"
	"$B/report_gen" "$DIR/day-60vm.vms" >/dev/null
	echo "$DIR/day-60vm.vms"
	exit 0
fi

B=${1:-$ROOT/build}
ninja -C "$B" >/dev/null
ninja -C "$B" report_gen >/dev/null
if [ -n "${2:-}" ]; then
	T=$2
	mkdir -p "$T"
else
	T=$(mktemp -d /tmp/vms-report-bench.XXXXXX)
	trap 'rm -rf "$T"' EXIT
fi
V=$B/vmsampler
command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (Debian: apt-get install time)" >&2; exit 1; }

echo "# $(date -u +%FT%TZ) $(uname -r), $(nproc) CPUs:$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
echo "# build: $B ($(meson introspect --buildoptions "$B" 2>/dev/null | python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="buildtype"][0])' 2>/dev/null || echo '?')), load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

# median of REPS runs: "seconds MiB"
. "$ROOT/bench/timeit.sh"
measure() { timeit '%6.2f s %6.1f MiB\n' "$V" report "$@"; }

printf '%-28s %8s %8s %9s   %-22s %-22s\n' file frames columns size "report --summary" "report --summary --vm"
row() { # frames vms
	local f=$T/r-$1-$2.vms
	local info
	info=$("$B/report_gen" -n "$1" -m "$2" "$f")
	local cols
	cols=$(echo "$info" | awk '{print $(NF - 1)}')
	printf '%-28s %8s %8s %8sM   %-22s %-22s\n' "$1 frames, $2 VMs" "$1" "$cols" \
		"$(($(stat -c %s "$f") / 1048576))" "$(measure "$f" --summary)" "$(measure "$f" --summary --vm)"
	rm -f "$f"
}
row 21600 60
row 43200 60
row 86400 15
row 86400 30
row 86400 60

echo
echo "# the full day again, for the goal (10 s, 64 MiB)"
"$B/report_gen" "$T/day.vms" >/dev/null
read -r s _ mib _ < <(measure "$T/day.vms" --summary --vm)
echo "report --summary --vm: $s s, $mib MiB: $(awk -v s="$s" -v m="$mib" 'BEGIN {print (s <= 10 && m <= 64) ? "within the goal" : "OVER the goal"}')"
echo "# for comparison: dump (decoding and writing every value as CSV) and dump --rates"
for a in "" --rates; do
	/usr/bin/time -f "dump $a: %e s %M KB" "$V" dump "$T/day.vms" $a >/dev/null 2>"$T/t.err" || true
	tail -n 1 "$T/t.err"
done
rm -f "$T/day.vms"

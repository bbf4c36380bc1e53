#!/bin/bash
# scripts/record-vmlab-run.sh OUT.vms [SECONDS] - a real run on the project's
# own guests, with markers: the README's figure and the plotting tests'
# recorded run are made from it (as root, on a machine that runs
# tests/vmlab).
#
# Under tests/vmlab/session.sh (libvirtd and vms-001..003, light load,
# taken down afterwards): vmsampler samples every second for SECONDS
# (default 120) with a shared ring; at 1/6 of the run three busy guests
# (vms-901..903) are started, at 1/2 they are destroyed, each step marked
# with `vmsampler mark`.
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUT.vms [SECONDS]}")
secs=${2:-120}
src=$(cd "$(dirname "$0")/.." && pwd)
bin=${VMSAMPLER:-$src/build/vmsampler}
if [ -z "${VMS_VMLAB_SESSION:-}" ]; then
	exec bash "$src/tests/vmlab/session.sh" -- env VMSAMPLER="$bin" bash "$0" "$out" "$secs"
fi
ring=$(mktemp -u /dev/shm/vms-record.XXXXXX)
rm -f "$out"
"$bin" -q -i 1s -n "$secs" -o "$out" --ring "$ring" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -f "$ring" "$ring.ctl"' EXIT
for _ in $(seq 100); do [ -S "$ring.ctl" ] && break; sleep 0.1; done
sleep $((secs / 6))
"$bin" mark --ring "$ring" "3 busy guests start"
LOAD=busy bash "$src/tests/vmlab/up.sh" 3 901 >/dev/null
"$bin" mark --ring "$ring" "3 busy guests up"
sleep $((secs / 2 - secs / 6))
"$bin" mark --ring "$ring" "busy guests destroyed"
bash "$src/tests/vmlab/down.sh" vms-901 vms-902 vms-903 >/dev/null
wait $pid
trap - EXIT
rm -f "$ring" "$ring.ctl"
echo "recorded $out: $("$bin" dump "$out" | tail -n +2 | wc -l) frames, $("$bin" dump --events "$out" | grep -c ',mark,') marks"

#!/bin/bash
# facts.sh [SECTION...] - re-measure the facts in FACTS.md on real guests.
# Needs libvirtd and guests vms-001..003 running (setup.sh; LOAD=light up.sh 3).
# Sections: a b c d e f g h (default: all). Output goes to stdout; each command is
# echoed with a "$ " prefix before its output.
#
# Section g SIGSTOPs vms-003 for about two minutes; section h kills and restarts
# libvirtd (guests keep running).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
vmlab_need_root
PROBE=$VMLAB_STATE/bin/vmlab-probe
WATCH=$VMLAB_STATE/bin/vmlab-connwatch
export VMLAB_PIDFILE
GUESTS=(vms-001 vms-002 vms-003)
V="virsh -c $VMLAB_URI"
if [ ! -x "$PROBE" ] || [ ! -x "$WATCH" ]; then vmlab_die "probe tools missing: run setup.sh"; fi
for g in "${GUESTS[@]}"; do
  [ "$(vmlab_virsh domstate "$g" 2>/dev/null)" = running ] || vmlab_die "$g not running: LOAD=light up.sh 3"
done
pid_of() { cat "/run/libvirt/qemu/$1.pid"; }
run() { echo "\$ $*"; "$@" 2>&1 || echo "(exit $?)"; }
# ms elapsed running "$@", output kept
timed() {
  local t0 rc=0; t0=$(vmlab_now_ms)
  echo "\$ $*"
  "$@" 2>&1 || rc=$?
  echo "(exit $rc after $(( $(vmlab_now_ms) - t0 )) ms)"
}
sections=${*:-a b c d e f g h}

for s in $sections; do
echo; echo "################ section $s ################"
case $s in
a)
  run grep cgroup /proc/mounts
  for g in "${GUESTS[@]}"; do echo "\$ cat /proc/$(pid_of "$g")/cgroup   # $g"; cat "/proc/$(pid_of "$g")/cgroup"; done
  P=$(pid_of vms-001)
  echo "# per-thread cgroup2 / cgroup1-cpu placement of vms-001 ($P)"
  for t in /proc/"$P"/task/*; do
    printf '%-7s %-16s %s | %s\n' "${t##*/}" "$(cat "$t/comm")" "$(grep '^0::' "$t/cgroup")" "$(grep ':cpu:' "$t/cgroup")"
  done
  D=$(grep '^0::' "/proc/$P/cgroup" | cut -d: -f3); D=${D%/emulator}
  for h in unified cpu cpuacct memory blkio cpuset freezer pids devices; do
    if [ -d "/sys/fs/cgroup/$h$D" ]; then
      echo "\$ ls /sys/fs/cgroup/$h$D"; find "/sys/fs/cgroup/$h$D" -mindepth 1 -maxdepth 1 -printf '%f\n' | sort | tr '\n' ' '; echo
    else echo "# /sys/fs/cgroup/$h$D does not exist"; fi
  done
  run cat "/sys/fs/cgroup/unified$D/cgroup.type" "/sys/fs/cgroup/unified$D/vcpu0/cgroup.type" "/sys/fs/cgroup/unified$D/emulator/cgroup.type"
  run cat /sys/fs/cgroup/unified/cgroup.subtree_control "/sys/fs/cgroup/unified$D/cpu.stat"
  echo "# cgroup files vs virsh domstats --cpu-total, back to back (virsh costs ~20-40 ms)"
  for g in "${GUESTS[@]}"; do
    D=$(grep '^0::' "/proc/$(pid_of "$g")/cgroup" | cut -d: -f3); D=${D%/emulator}
    echo "# $g: cgroup2 cpu.stat (usec):"; grep -E 'usage|user|system' "/sys/fs/cgroup/unified$D/cpu.stat" | tr '\n' ' '; echo
    vmlab_virsh domstats --cpu-total --raw "$g" | grep -E 'cpu\.(time|user|system)=' | tr '\n' ' '; echo
  done
  echo "# exact comparison, C API, files read right before (A) and after (B) the call"
  run "$PROBE" -n 3 -i 200 cpu "${GUESTS[@]}"
  run "$PROBE" -f suspend -n 2 cpu "${GUESTS[@]}"
  ;;
b)
  P=$(pid_of vms-001)
  echo "# threads of vms-001 (pid $P): tid comm schedstat(run_ns wait_ns timeslices)"
  for t in /proc/"$P"/task/*; do printf '%-7s %-16s %s\n' "${t##*/}" "$(cat "$t/comm")" "$(cat "$t/schedstat")"; done
  run $V qemu-monitor-command vms-001 --hmp 'info cpus'
  run $V qemu-monitor-command vms-001 '{"execute":"query-cpus-fast"}'
  run grep -A3 '<vcpus>' /run/libvirt/qemu/vms-001.xml
  run $V vcpuinfo vms-001
  run grep -c se.statistics.wait_sum "/proc/$P/task/$P/sched"
  run "$PROBE" -n 2 -i 200 vcpu "${GUESTS[@]}"
  run "$PROBE" -f suspend -n 2 vcpu "${GUESTS[@]}"
  ;;
c)
  run grep -E 'vmst|vmsbr|Inter|face' /proc/net/dev
  run $V domstats --interface --raw "${GUESTS[@]}"
  run "$PROBE" -n 2 -i 200 net "${GUESTS[@]}"
  run "$PROBE" -f stop -n 2 net "${GUESTS[@]}"
  ;;
d)
  echo "# two reads 30 s apart per guest; compare the deltas"
  run "$PROBE" -n 2 -i 30000 block vms-001
  run "$PROBE" -n 2 -i 1000 block vms-002 vms-003
  for g in "${GUESTS[@]}"; do run grep -c TICK "$VMLAB_STATE/console/$g.log"; run tail -1 "$VMLAB_STATE/console/$g.log"; done
  ;;
e)
  run "$PROBE" -n 2 -i 200 mem "${GUESTS[@]}"
  for g in "${GUESTS[@]}"; do
    P=$(pid_of "$g"); D=$(grep ':memory:' "/proc/$P/cgroup" | cut -d: -f3)
    echo "# $g: statm=$(cat "/proc/$P/statm")  $(grep -E 'VmRSS|RssAnon|RssFile|RssShmem' "/proc/$P/status" | tr -s ' \t' ' ' | tr '\n' ' ')"
    echo "# $g: memory.usage_in_bytes=$(cat "/sys/fs/cgroup/memory$D/memory.usage_in_bytes") $(grep -E '^(rss|cache|mapped_file) ' "/sys/fs/cgroup/memory$D/memory.stat" | tr '\n' ' ')"
  done
  run $V domstats --balloon --raw vms-001
  run $V dommemstat vms-001
  ;;
f)
  X=/run/libvirt/qemu/vms-001.xml
  run grep -nE "<domstatus|<monitor |<vcpu id=|<libDir|<domain type=|<name>|<uuid>|<partition>|<source file=|<target dev=|<source bridge=|<mac address=|<alias name='(net|virtio-disk|balloon)" "$X"
  run ls /run/libvirt/qemu/
  printf '%s\n' "\$ tr '\\0' '\\n' < /proc/$(pid_of vms-001)/cmdline | grep -A1 -E '^-(name|uuid|netdev|accel|m|smp)\$'"
  tr '\0' '\n' < "/proc/$(pid_of vms-001)/cmdline" | grep -A1 -E '^-(name|uuid|netdev|accel|m|smp)$'
  run $V domuuid vms-001
  run $V domiflist vms-001
  run $V domblklist vms-001
  ;;
g)
  echo "# cost per group, C API, one connection, 3 guests, 50 calls each"
  for grp in state cpu vcpu net block balloon state,cpu,vcpu,net,block,balloon all; do
    "$PROBE" bench "$grp" 50
  done
  echo "# cost per group, virsh (new process + connection each call), 10 calls each"
  L=$(cat "$VMLAB_PIDFILE")
  for grp in --state --cpu-total --vcpu --interface --block --balloon ""; do
    c0=$(awk '{print $14+$15}' "/proc/$L/stat"); t0=$(vmlab_now_ms)
    cpu=$( { TIMEFORMAT='%U %S'; time (for _ in 1 2 3 4 5 6 7 8 9 10; do virsh -c "$VMLAB_URI" domstats --raw $grp >/dev/null; done); } 2>&1 )
    t1=$(vmlab_now_ms); c1=$(awk '{print $14+$15}' "/proc/$L/stat")
    echo "virsh domstats ${grp:-(all groups)}: wall $(( (t1 - t0) / 10 )) ms/call; virsh CPU user+sys $(echo "$cpu" | awk '{printf "%.1f", ($1+$2)*100}') ms/call; libvirtd CPU $(( c1 - c0 )) ms/call"
  done
  echo "# QEMU-side CPU caused by one stats call: vms-001 suspended (vCPUs paused), VM cgroup2 usage"
  echo "# read right before and after each virsh call, 30 calls per group"
  D=/sys/fs/cgroup/unified$(grep '^0::' "/proc/$(pid_of vms-001)/cgroup" | cut -d: -f3); D=${D%/emulator}
  vmlab_virsh suspend vms-001 >/dev/null; sleep 1
  for grp in --state --interface --cpu-total --vcpu --balloon --block; do
    tot=0
    for _ in $(seq 30); do
      a=$(awk '/usage_usec/{print $2}' "$D/cpu.stat")
      virsh -c "$VMLAB_URI" domstats $grp vms-001 >/dev/null
      b=$(awk '/usage_usec/{print $2}' "$D/cpu.stat")
      tot=$((tot + b - a))
    done
    echo "domstats $grp: VM cgroup usage +$((tot / 30)) us per call"
  done
  vmlab_virsh resume vms-001 >/dev/null

  echo "# vms-003 SIGSTOPped"
  P3=$(pid_of vms-003)
  trap 'kill -CONT "$P3" 2>/dev/null' EXIT
  run kill -STOP "$P3"
  timed timeout 20 virsh -c "$VMLAB_URI" domstats --raw --state --interface vms-003
  timed timeout 20 virsh -c "$VMLAB_URI" domstats --raw --nowait --balloon --block vms-003
  echo "# the libvirtd worker of the killed call still waits on QEMU's monitor and holds the domain job"
  timed timeout 20 virsh -c "$VMLAB_URI" domstats --raw --balloon --block vms-003
  timed timeout 40 virsh -c "$VMLAB_URI" domstats --raw --balloon --block vms-003
  timed timeout 20 virsh -c "$VMLAB_URI" domstats --raw --nowait --balloon --block
  timed timeout 20 virsh -c "$VMLAB_URI" domstats --raw --cpu-total vms-003
  timed timeout 20 virsh -c "$VMLAB_URI" domstats --raw --nowait --cpu-total vms-003
  timed timeout 20 virsh -c "$VMLAB_URI" list
  timed timeout 20 virsh -c "$VMLAB_URI" domstats --raw --balloon --block vms-001
  echo "# a client that waits: start one without timeout, SIGCONT QEMU 5 s later"
  t0=$(vmlab_now_ms)
  (virsh -c "$VMLAB_URI" domstats --raw --balloon vms-003 | grep -E 'balloon.(current|rss)' ; echo "(blocked call returned after $(( $(vmlab_now_ms) - t0 )) ms)") &
  sleep 5
  run kill -CONT "$P3"
  wait
  trap - EXIT
  timed virsh -c "$VMLAB_URI" domstats --raw --balloon --block vms-003
  run grep -E 'cannot acquire|Timed out' "$VMLAB_LIBVIRTD_LOG"
  ;;
h)
  L=$(cat "$VMLAB_PIDFILE")
  declare -A before
  for g in "${GUESTS[@]}"; do before[$g]=$(pid_of "$g"); done
  echo "# guests before: $(for g in "${GUESTS[@]}"; do printf '%s=pid %s ' "$g" "${before[$g]}"; done); libvirtd pid $L"
  "$WATCH" -i 200 -t 40 -k > /tmp/vmlab-connwatch.$$ 2>&1 &
  W=$!
  sleep 3
  echo "\$ kill -KILL $L   # libvirtd, at ~3 s"; kill -KILL "$L"
  sleep 5
  run "$VMLAB_DIR/daemon.sh" start
  sleep 6
  echo "\$ daemon.sh restart   # graceful (SIGTERM), at ~15 s"
  "$VMLAB_DIR/daemon.sh" restart
  wait "$W" || true
  echo "\$ vmlab-connwatch -i 200 -t 40 -k   # ran across both"; cat /tmp/vmlab-connwatch.$$; rm -f /tmp/vmlab-connwatch.$$
  run $V list
  for g in "${GUESTS[@]}"; do
    echo "# $g: qemu pid before ${before[$g]}, after $(pid_of "$g"), state $(awk '{print $3}' "/proc/$(pid_of "$g")/stat")"
  done
  run $V domstats --raw --cpu-total --balloon --block vms-001
  ;;
*) vmlab_die "unknown section $s" ;;
esac
done

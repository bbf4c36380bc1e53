#!/bin/bash
# up.sh N [FIRST] - define and start guests vms-FIRST .. vms-(FIRST+N-1) (FIRST defaults
# to 1, so `up.sh 3; up.sh 7 4` gives vms-001..010), PARALLEL at a time, and wait until
# each prints the readiness line on its serial console.  A guest that is already
# running is left alone.
#
# Each guest: TCG (<domain type='qemu'>), VCPUS vCPU, MEM MiB, direct kernel boot of
# the cached guest image, virtio disk (qcow2 overlay, cache='none'), virtio NIC on tap
# vmst<i> in the host-only bridge, virtio balloon with a stats period, serial console
# to $VMLAB_STATE/console/NAME.log.
#
# Knobs (environment):
#   LOAD=light      idle | light | busy | spin   (guest workload, see guest/init;
#                   spin: a pure loop per vCPU, CPU-bound)
#   PERIOD=5        seconds between light-load rounds
#   PARALLEL=4      guests booted at once (TCG boot is ~5 CPU-s per guest)
#   MEM=128         MiB per guest (80 is the minimum that boots)
#   VCPUS=1         vCPUs per guest
#   TB=32           TCG translation cache MiB (QEMU's default reserves 1 GiB)
#   STATS_PERIOD=5  virtio-balloon stats period (s)
#   VIRT=qemu       libvirt domain type; kvm does not boot a stock kernel on this host
#   BOOT_TIMEOUT=300  seconds to wait for the readiness line
#   WAIT=1          0: do not wait for the readiness line
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
vmlab_need_root

N=${1:?usage: up.sh N [FIRST]}
FIRST=${2:-1}
LOAD=${LOAD:-light}; PERIOD=${PERIOD:-5}; PARALLEL=${PARALLEL:-4}
MEM=${MEM:-128}; VCPUS=${VCPUS:-1}; TB=${TB:-32}; STATS_PERIOD=${STATS_PERIOD:-5}
VIRT=${VIRT:-qemu}; BOOT_TIMEOUT=${BOOT_TIMEOUT:-300}; WAIT=${WAIT:-1}
case $LOAD in idle|light|busy|spin) ;; *) vmlab_die "LOAD must be idle, light, busy or spin";; esac
if [ "$N" -lt 1 ] || [ "$FIRST" -lt 1 ] || [ $((FIRST + N - 1)) -gt 999 ]; then
  vmlab_die "guest indexes must be 1..999"
fi

G=$VMLAB_STATE/guest
for f in vmlinuz initrd.img disk0.qcow2; do [ -s "$G/$f" ] || vmlab_die "$G/$f missing: run setup.sh"; done
virsh -c "$VMLAB_URI" version >/dev/null 2>&1 || vmlab_die "libvirtd does not answer on $VMLAB_URI: run daemon.sh start"
mkdir -p "$VMLAB_STATE"/{disks,console,xml}
vmlab_bridge_up

domain_xml() { # domain_xml INDEX NAME
  local i=$1 name=$2 tcg=""
  [ "$VIRT" = qemu ] && tcg="<tcg><tb-cache unit='MiB'>$TB</tb-cache></tcg>"
  cat <<XML
<domain type='$VIRT'>
  <name>$name</name>
  <memory unit='MiB'>$MEM</memory>
  <vcpu>$VCPUS</vcpu>
  <os>
    <type arch='x86_64' machine='pc'>hvm</type>
    <kernel>$G/vmlinuz</kernel>
    <initrd>$G/initrd.img</initrd>
    <cmdline>console=ttyS0 panic=-1 no_timer_check quiet vms.name=$name vms.load=$LOAD vms.period=$PERIOD vms.ip=$VMLAB_NET.$((i / 250)).$((i % 250 + 2))/16 vms.peer=$VMLAB_NET.0.1</cmdline>
  </os>
  <features><acpi/>$tcg</features>
  <!-- panic=-1 reboots a panicking guest; on_reboot=destroy turns that into 'shut off'.
       no_timer_check: under TCG on a loaded host the kernel's IO-APIC timer
       check (x86_late_time_init) can miss its ticks and panic the boot
       ("IO-APIC + timer doesn't work"); a fresh CI run lost a guest so -->
  <on_poweroff>destroy</on_poweroff>
  <on_reboot>destroy</on_reboot>
  <on_crash>destroy</on_crash>
  <devices>
    <emulator>/usr/bin/qemu-system-x86_64</emulator>
    <disk type='file' device='disk'>
      <driver name='qemu' type='qcow2' cache='none'/>
      <source file='$VMLAB_STATE/disks/$name.qcow2'/>
      <target dev='vda' bus='virtio'/>
    </disk>
    <interface type='bridge'>
      <mac address='52:54:00:d1:$(printf '%02x:%02x' $((i / 256)) $((i % 256)))'/>
      <source bridge='$VMLAB_BRIDGE'/>
      <target dev='vmst$i'/>
      <model type='virtio'/>
      <rom enabled='no'/>
    </interface>
    <controller type='usb' model='none'/>
    <serial type='file'>
      <source path='$VMLAB_STATE/console/$name.log' append='off'/>
      <target port='0'/>
    </serial>
    <memballoon model='virtio'>
      <stats period='$STATS_PERIOD'/>
    </memballoon>
  </devices>
</domain>
XML
}

start_one() { # start_one INDEX ; prints one result line, returns non-zero on failure
  # a guest whose kernel died during boot is started once more (TCG on a
  # loaded host; the console tail is printed either way)
  start_try "$1" 1 || { [ $? = 2 ] && echo "$(vmlab_name "$1"): starting it once more" >&2 && start_try "$1" 2; }
}

start_try() { # start_try INDEX ATTEMPT ; 2: the domain stopped during boot
  local i=$1 attempt=$2 name t0 t_def t_start state log
  name=$(vmlab_name "$i")
  log=$VMLAB_STATE/console/$name.log
  state=$(vmlab_virsh domstate "$name" 2>/dev/null || true)
  if [ "$state" = running ]; then echo "$name already running"; return 0; fi
  if [ -n "$state" ]; then   # defined but not running: start over
    vmlab_virsh destroy "$name" >/dev/null 2>&1 || true
    vmlab_virsh undefine "$name" >/dev/null
  fi
  t0=$(vmlab_now_ms)
  rm -f "$log" "$VMLAB_STATE/disks/$name.qcow2"
  qemu-img create -q -f qcow2 -b "$G/disk0.qcow2" -F qcow2 "$VMLAB_STATE/disks/$name.qcow2"
  domain_xml "$i" "$name" > "$VMLAB_STATE/xml/$name.xml"
  vmlab_virsh define "$VMLAB_STATE/xml/$name.xml" >/dev/null
  t_def=$(vmlab_now_ms)
  vmlab_virsh start "$name" >/dev/null
  t_start=$(vmlab_now_ms)
  if [ "$WAIT" = 1 ]; then
    until grep -q "$VMLAB_READY" "$log" 2>/dev/null; do
      if [ "$(vmlab_virsh domstate "$name" 2>/dev/null)" != running ]; then
        echo "$name: FAILED, domain stopped during boot; console tail:" >&2
        tail -5 "$log" >&2 2>/dev/null || true
        tail -3 "/var/log/libvirt/qemu/$name.log" >&2 2>/dev/null || true
        [ "$attempt" = 1 ] && return 2
        return 1
      fi
      if [ $(( $(vmlab_now_ms) - t_start )) -gt $((BOOT_TIMEOUT * 1000)) ]; then
        echo "$name: FAILED, no $VMLAB_READY after ${BOOT_TIMEOUT}s" >&2
        return 1
      fi
      sleep 0.2
    done
  fi
  printf '%s up: define %s, start %s, boot %s, total %s\n' "$name" \
    "$(vmlab_fmt_ms $((t_def - t0)))" "$(vmlab_fmt_ms $((t_start - t_def)))" \
    "$(vmlab_fmt_ms $(( $(vmlab_now_ms) - t_start )))" "$(vmlab_fmt_ms $(( $(vmlab_now_ms) - t0 )))"
}

T0=$(vmlab_now_ms)
echo "starting $N guest(s) from $(vmlab_name "$FIRST"): LOAD=$LOAD PERIOD=$PERIOD MEM=$MEM VCPUS=$VCPUS PARALLEL=$PARALLEL"
fail=0 running=0
for i in $(seq "$FIRST" $((FIRST + N - 1))); do
  start_one "$i" &
  running=$((running + 1))
  if [ "$running" -ge "$PARALLEL" ]; then wait -n || fail=$((fail + 1)); running=$((running - 1)); fi
done
while [ "$running" -gt 0 ]; do wait -n || fail=$((fail + 1)); running=$((running - 1)); done
echo "up.sh: $((N - fail))/$N guest(s) up in $(vmlab_fmt_ms $(( $(vmlab_now_ms) - T0 )))"
[ "$fail" -eq 0 ] || vmlab_die "$fail guest(s) failed to come up"

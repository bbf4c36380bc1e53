# lib.sh - shared settings and helpers for the vmlab harness. Sourced, not run.
# shellcheck shell=bash disable=SC2034  # the globals are used by the scripts that source this
#
# Every knob can be overridden from the environment.

VMLAB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VMLAB_STATE=${VMLAB_STATE:-/var/lib/vmsampler-vmlab}   # cached guest image, disks, consoles
VMLAB_URI=${VMLAB_URI:-qemu:///system}
VMLAB_BRIDGE=${VMLAB_BRIDGE:-vmsbr0}                   # host-only bridge, never has an uplink
VMLAB_NET=${VMLAB_NET:-10.211}                         # /16 on the bridge: host is .0.1
VMLAB_PIDFILE=${VMLAB_PIDFILE:-/run/vmsampler-vmlab-libvirtd.pid}
VMLAB_LIBVIRTD_LOG=${VMLAB_LIBVIRTD_LOG:-/var/log/libvirt/libvirtd.log}
VMLAB_PREFIX=vms-                                      # guest names: vms-001, vms-002, ...
VMLAB_READY=VMSAMPLER-GUEST-READY                      # line the guest prints on its serial console

export VMLAB_STATE VMLAB_URI

vmlab_die()  { echo "vmlab: ERROR: $*" >&2; exit 1; }
vmlab_log()  { echo "vmlab: $*"; }
vmlab_need_root() { [ "$(id -u)" = 0 ] || vmlab_die "must run as root"; }

# Monotonic-enough wall clock in milliseconds.
vmlab_now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
# vmlab_fmt_ms MS -> "12.3 s"
vmlab_fmt_ms() { printf '%d.%01d s' $(( $1 / 1000 )) $(( ($1 % 1000) / 100 )); }

# Step timer: vmlab_step "name"; ...; vmlab_step_done
vmlab_step() { VMLAB_STEP_NAME=$*; VMLAB_STEP_T0=$(vmlab_now_ms); echo "== $VMLAB_STEP_NAME"; }
vmlab_step_done() {
  local dt=$(( $(vmlab_now_ms) - VMLAB_STEP_T0 ))
  echo "   done: $VMLAB_STEP_NAME ($(vmlab_fmt_ms "$dt"))"
  VMLAB_TIMINGS+=("$(printf '%-55s %s' "$VMLAB_STEP_NAME" "$(vmlab_fmt_ms "$dt")")")
}
vmlab_timings() { local l; echo "== timings"; for l in "${VMLAB_TIMINGS[@]}"; do echo "   $l"; done; }
VMLAB_TIMINGS=()

# virsh against the system URI, quiet.
vmlab_virsh() { virsh -q -c "$VMLAB_URI" "$@"; }

# Guest name for index i: vms-001
vmlab_name() { printf '%s%03d' "$VMLAB_PREFIX" "$1"; }

# Host-only bridge: an address for the host, no uplink port, no NAT, no forwarding.
# Guests get static addresses and no default route, so no frame leaves this machine.
vmlab_bridge_up() {
  if ! ip link show "$VMLAB_BRIDGE" >/dev/null 2>&1; then
    ip link add "$VMLAB_BRIDGE" type bridge
    ip addr add "$VMLAB_NET.0.1/16" dev "$VMLAB_BRIDGE"
  fi
  ip link set "$VMLAB_BRIDGE" up
  [ "$(cat /proc/sys/net/ipv4/ip_forward)" = 0 ] \
    || echo "vmlab: WARNING: net.ipv4.ip_forward=1; the bridge has no uplink, but forwarding is on" >&2
}
vmlab_bridge_down() {
  if ip link show "$VMLAB_BRIDGE" >/dev/null 2>&1; then ip link del "$VMLAB_BRIDGE" && echo "bridge $VMLAB_BRIDGE deleted"; fi
}

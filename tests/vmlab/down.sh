#!/bin/bash
# down.sh [--all] [NAME...] - destroy and undefine every vms-* guest, or only the NAMEs
# given, PARALLEL at a time (default 8), and delete their overlay disks and console logs.
#   --all   also stop libvirtd (daemon.sh stop) and delete the host-only bridge.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
vmlab_need_root
PARALLEL=${PARALLEL:-8}
ALL=0 ONLY=()
for a in "$@"; do
  case $a in
    --all) ALL=1 ;;
    "$VMLAB_PREFIX"*) ONLY+=("$a") ;;
    *) echo "usage: $0 [--all] [${VMLAB_PREFIX}NNN ...]" >&2; exit 2 ;;
  esac
done

remove_one() {
  local name=$1
  vmlab_virsh destroy "$name" >/dev/null 2>&1 || true      # fails if already shut off
  if vmlab_virsh undefine "$name" >/dev/null; then
    rm -f "$VMLAB_STATE/disks/$name.qcow2" "$VMLAB_STATE/console/$name.log"
    echo "removed $name"
  else
    echo "$name: undefine FAILED" >&2; return 1
  fi
}

T0=$(vmlab_now_ms)
fail=0 n=0
if virsh -c "$VMLAB_URI" version >/dev/null 2>&1; then
  names=$(vmlab_virsh list --all --name | grep "^$VMLAB_PREFIX" || true)
  if [ ${#ONLY[@]} -gt 0 ]; then
    names=$(echo "$names" | grep -Fx -f <(printf '%s\n' "${ONLY[@]}") || true)
  fi
  running=0
  for name in $names; do
    n=$((n + 1))
    remove_one "$name" &
    running=$((running + 1))
    if [ "$running" -ge "$PARALLEL" ]; then wait -n || fail=$((fail + 1)); running=$((running - 1)); fi
  done
  while [ "$running" -gt 0 ]; do wait -n || fail=$((fail + 1)); running=$((running - 1)); done
  echo "down.sh: removed $((n - fail))/$n guest(s) in $(vmlab_fmt_ms $(( $(vmlab_now_ms) - T0 )))"
else
  echo "libvirtd not answering; no guests removed"
  left=$(pgrep -f "guest=$VMLAB_PREFIX" || true)
  [ -z "$left" ] || echo "WARNING: QEMU processes still running without libvirtd: $left" >&2
fi
if [ "$ALL" = 1 ]; then
  "$VMLAB_DIR/daemon.sh" stop
  vmlab_bridge_down
fi
[ "$fail" -eq 0 ] || vmlab_die "$fail guest(s) could not be removed"

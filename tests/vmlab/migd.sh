#!/bin/bash
# migd.sh start DIR NAME UUID | stop DIR | uri DIR - a private libvirtd for
# live-migration tests (MIGRATION.md): its own mount and UTS namespaces, so
# its own hostname (NAME) and host UUID, and its own /run/libvirt,
# /var/lib/libvirt, /etc/libvirt, /var/cache/libvirt and /var/log/libvirt,
# all under DIR.  It never touches the shared lab daemon (qemu:///system):
# two of them on one machine are two "hosts" that libvirt migrates between.
#
#   start  runs libvirtd in the foreground inside the namespaces as a child
#          of this script, which exits once the daemon answers on
#          DIR/run/libvirt-sock; prints "URI PID" (pid of libvirtd)
#   stop   kills every process of the daemon's mount namespace (libvirtd
#          and its QEMUs), waits until they are gone; idempotent
#   uri    the URI of the daemon under DIR
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
vmlab_need_root

uri() { echo "qemu+unix:///system?socket=$1/run/libvirt-sock"; }

# pids whose mount namespace is the one recorded in DIR/mntns
ns_pids() {
  local ns p
  [ -s "$1/mntns" ] || return 0
  ns=$(cat "$1/mntns")
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/ns/mnt" 2>/dev/null)" = "$ns" ] && echo "${p#/proc/}"
  done
  return 0
}

do_start() {
  local dir=$1 name=$2 uuid=$3 t0 pid
  mkdir -p "$dir"/{run,lib,etc/qemu,cache,log}
  dir=$(cd "$dir" && pwd)
  # the lab's qemu.conf (root, no security driver, stdio to a file), and no
  # cgroups: two daemons number their domains from 1, and "qemu-1-NAME"
  # would be the same cgroup on both sides
  cp /etc/libvirt/qemu.conf "$dir/etc/qemu.conf"
  echo 'cgroup_controllers = [ ]' >>"$dir/etc/qemu.conf"
  # and QEMU in the daemon's mount namespace, not one of its own (the
  # default): stop finds every process of the daemon by that namespace
  echo 'namespaces = [ ]' >>"$dir/etc/qemu.conf"
  cat >"$dir/etc/libvirtd.conf" <<CONF
unix_sock_group = "root"
unix_sock_ro_perms = "0700"
unix_sock_rw_perms = "0700"
auth_unix_ro = "none"
auth_unix_rw = "none"
host_uuid = "$uuid"
log_outputs = "3:file:/var/log/libvirt/libvirtd.log"
CONF
  # QEMU's capabilities, probed by the lab daemon already (~8 s otherwise)
  cp -a /var/cache/libvirt/qemu "$dir/cache/" 2>/dev/null || true
  mkdir -p /run/libvirt
  t0=$(vmlab_now_ms)
  # shellcheck disable=SC2016
  unshare -m -u --propagation private -- /bin/sh -c '
    set -e
    hostname "$1"
    mount --bind "$2/run" /run/libvirt
    mount --bind "$2/lib" /var/lib/libvirt
    mount --bind "$2/etc" /etc/libvirt
    mount --bind "$2/cache" /var/cache/libvirt
    mount --bind "$2/log" /var/log/libvirt
    exec /usr/sbin/libvirtd --pid-file="$2/libvirtd.pid"' sh "$name" "$dir" \
    </dev/null >"$dir/log/stdout" 2>&1 9>&- &
  pid=$!
  echo "$pid" >"$dir/pid"
  until [ -S "$dir/run/libvirt-sock" ] && virsh -q -c "$(uri "$dir")" version >/dev/null 2>&1; do
    kill -0 "$pid" 2>/dev/null || { tail -5 "$dir/log/libvirtd.log" "$dir/log/stdout" >&2; vmlab_die "private libvirtd $name exited"; }
    [ $(( $(vmlab_now_ms) - t0 )) -lt 60000 ] || vmlab_die "private libvirtd $name did not answer in 60 s"
    sleep 0.1
  done
  # libvirtd's own pid file: the process in the namespaces
  pid=$(cat "$dir/libvirtd.pid")
  readlink "/proc/$pid/ns/mnt" >"$dir/mntns" || vmlab_die "no namespace of libvirtd $pid"
  [ "$(cat "$dir/mntns")" != "$(readlink /proc/self/ns/mnt)" ] || vmlab_die "libvirtd $pid is not in a namespace of its own"
  echo "$(uri "$dir") $pid"
}

do_stop() {
  local dir=$1 pids t0 f p
  [ -d "$dir" ] || return 0
  t0=$(vmlab_now_ms)
  # QEMUs by their pid files too (a daemon configured otherwise)
  for f in "$dir"/run/qemu/*.pid; do
    [ -s "$f" ] || continue
    p=$(cat "$f")
    tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q "^/usr/bin/qemu-system" && kill -KILL "$p" 2>/dev/null
  done
  while pids=$(ns_pids "$dir") && [ -n "$pids" ]; do
    # shellcheck disable=SC2086
    kill -KILL $pids 2>/dev/null || true
    [ $(( $(vmlab_now_ms) - t0 )) -lt 30000 ] || vmlab_die "processes of $dir survive SIGKILL: $pids"
    sleep 0.05
  done
  # the daemon, if it died before its namespace was recorded
  if [ -s "$dir/pid" ] && kill -0 "$(cat "$dir/pid")" 2>/dev/null; then
    kill -KILL "$(cat "$dir/pid")" 2>/dev/null || true
  fi
  rm -f "$dir/mntns"
}

case "${1:-}" in
  start) [ $# = 4 ] || { echo "usage: $0 start DIR NAME UUID" >&2; exit 2; }; do_start "$2" "$3" "$4" ;;
  stop)  [ $# = 2 ] || { echo "usage: $0 stop DIR" >&2; exit 2; }; do_stop "$2" ;;
  uri)   [ $# = 2 ] || { echo "usage: $0 uri DIR" >&2; exit 2; }; uri "$(cd "$2" && pwd)" ;;
  *) echo "usage: $0 start DIR NAME UUID | stop DIR | uri DIR" >&2; exit 2 ;;
esac

#!/bin/bash
# daemon.sh start|stop|restart|status - run libvirtd by hand, without systemd.
#
# PID 1 on the CI machine is not systemd: no units, no socket activation. We run
# the monolithic libvirtd (Debian 12 ships no virtqemud) as a daemon with our own
# pidfile.  qemu.conf has stdio_handler="file", so virtlogd is not needed.
#
#   start    start if not running; wait until qemu:///system answers (first start
#            probes QEMU capabilities: ~8 s; later starts use the cache: <1 s)
#   stop     SIGTERM, wait until the process is really gone (SIGKILL after
#            STOP_TIMEOUT s, default 30); running guests are NOT stopped (see down.sh)
#   restart  stop + start
#   status   exit 0 and print pid + domains if running, exit 3 if not
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
vmlab_need_root
STOP_TIMEOUT=${STOP_TIMEOUT:-30}
START_TIMEOUT=${START_TIMEOUT:-60}

# pid of the libvirtd we manage, or empty
daemon_pid() {
  local pid
  [ -s "$VMLAB_PIDFILE" ] || return 0
  pid=$(cat "$VMLAB_PIDFILE")
  # the pidfile may be stale (SIGKILL leaves it behind); check it is libvirtd
  if alive "$pid" && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = libvirtd ]; then echo "$pid"; fi
}

# true while pid has not exited. An exited libvirtd stays a zombie for ~1.5 s here
# because PID 1 (not systemd/init) reaps late; a zombie whose threads are all gone
# has exited and released its sockets and pidfile lock.
alive() {
  local st n
  st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$st" ] || return 1
  n=$(find "/proc/$1/task" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
  [ "$st" != Z ] || [ "$n" -gt 1 ]
}
# libvirtd processes that are not (exited) zombies
live_libvirtds() { ps -eo pid=,stat=,comm= | awk '$3 == "libvirtd" && $2 !~ /^Z/ {print $1}'; }

do_start() {
  local pid t0 other
  pid=$(daemon_pid)
  if [ -n "$pid" ]; then echo "libvirtd already running (pid $pid)"; return 0; fi
  other=$(live_libvirtds)
  [ -z "$other" ] || vmlab_die "a libvirtd not started by daemon.sh is running (pid $other); stop it first"
  rm -f "$VMLAB_PIDFILE"
  mkdir -p /run/libvirt "$(dirname "$VMLAB_LIBVIRTD_LOG")"
  t0=$(vmlab_now_ms)
  /usr/sbin/libvirtd --daemon --pid-file="$VMLAB_PIDFILE" \
    || vmlab_die "libvirtd failed to start; see $VMLAB_LIBVIRTD_LOG"
  while ! virsh -c "$VMLAB_URI" version >/dev/null 2>&1; do
    if [ $(( $(vmlab_now_ms) - t0 )) -gt $((START_TIMEOUT * 1000)) ]; then
      tail -5 "$VMLAB_LIBVIRTD_LOG" >&2 || true
      vmlab_die "libvirtd did not answer on $VMLAB_URI within ${START_TIMEOUT}s; see $VMLAB_LIBVIRTD_LOG"
    fi
    [ -n "$(daemon_pid)" ] || [ $(( $(vmlab_now_ms) - t0 )) -lt 2000 ] \
      || vmlab_die "libvirtd exited during start-up; see $VMLAB_LIBVIRTD_LOG"
    sleep 0.1
  done
  echo "libvirtd pid $(daemon_pid) answering on $VMLAB_URI after $(vmlab_fmt_ms $(( $(vmlab_now_ms) - t0 )))"
}

do_stop() {
  local pid t0
  pid=$(daemon_pid)
  if [ -z "$pid" ]; then echo "libvirtd not running"; rm -f "$VMLAB_PIDFILE"; return 0; fi
  t0=$(vmlab_now_ms)
  kill -TERM "$pid" 2>/dev/null || true
  while alive "$pid"; do
    if [ $(( $(vmlab_now_ms) - t0 )) -gt $((STOP_TIMEOUT * 1000)) ]; then
      echo "libvirtd (pid $pid) ignored SIGTERM for ${STOP_TIMEOUT}s, sending SIGKILL" >&2
      kill -KILL "$pid" 2>/dev/null || true
      while alive "$pid"; do sleep 0.05; done
      break
    fi
    sleep 0.05
  done
  rm -f "$VMLAB_PIDFILE"
  echo "libvirtd (pid $pid) stopped after $(vmlab_fmt_ms $(( $(vmlab_now_ms) - t0 ))) (guests keep running)"
}

do_status() {
  local pid
  pid=$(daemon_pid)
  if [ -z "$pid" ]; then echo "libvirtd not running"; return 3; fi
  echo "libvirtd running (pid $pid)"
  virsh -c "$VMLAB_URI" list --all
}

case "${1:-}" in
  start)   do_start ;;
  stop)    do_stop ;;
  restart) do_stop; do_start ;;
  status)  do_status ;;
  *) echo "usage: $0 start|stop|restart|status" >&2; exit 2 ;;
esac

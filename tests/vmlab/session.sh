#!/bin/bash
# session.sh -- CMD [ARG...]: run CMD with the lab up (libvirtd and the stable
# guests vms-001..003, LOAD=light), one session at a time on this machine, and
# take down what the session started, whatever happens.
#
#   - One at a time: the integration tests share one libvirtd and fixed guest
#     names, so two runs at once break each other.  A session holds an flock on
#     $VMLAB_LOCK for its whole life; a second one says so in one line and
#     waits (VMLAB_LOCK_TIMEOUT seconds, default 3600).  CMD runs with
#     VMS_VMLAB_LOCKED=1, so that the tests (itlib.need) do not take the lock a
#     second time; run alone, each test takes it itself.
#   - Ownership: $VMLAB_OWNER records what the session started (libvirtd, the
#     stable guests).  A clean end removes it; a session that was killed
#     (SIGKILL, a lost machine) leaves it behind, and the next session, which
#     now holds the lock, takes that over and removes it at its end.  What was
#     running before any session (a lab started by hand) is left running.
#   - Transient guests (vms-9NN, made by tests that stop or kill a guest) are
#     always a session's own: left-overs are removed at the start and at the
#     end.
# The exit status is CMD's (or 1 if the lab could not be brought up).
set -uo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
vmlab_need_root
[ "${1:-}" = -- ] && shift
[ $# -gt 0 ] || { echo "usage: $0 -- CMD [ARG...]" >&2; exit 2; }

VMLAB_LOCK=${VMLAB_LOCK:-/run/lock/vmsampler-vmlab.lock}
VMLAB_OWNER=${VMLAB_OWNER:-/run/vmsampler-vmlab.owner}
STABLE="vms-001 vms-002 vms-003"

mkdir -p "$(dirname "$VMLAB_LOCK")"
# fd 9 holds the lock: every command below runs with it closed (9>&-), or
# the libvirtd it starts (a daemon that outlives us) would hold it forever
exec 9>>"$VMLAB_LOCK"
if ! flock -n 9; then
	echo "vmlab: another integration session holds $VMLAB_LOCK ($(cat "$VMLAB_OWNER" 2>/dev/null || echo 'starting')); waiting for it"
	flock -w "${VMLAB_LOCK_TIMEOUT:-3600}" 9 || vmlab_die "gave up waiting for $VMLAB_LOCK"
fi
export VMS_VMLAB_LOCKED=1 VMS_VMLAB_SESSION=$$

transients() { vmlab_virsh list --all --name 2>/dev/null | grep -E "^${VMLAB_PREFIX}9[0-9][0-9]$" || true; }

own_daemon=0 own_stable=0
if [ -s "$VMLAB_OWNER" ]; then
	# we hold the lock, so the session that wrote it is gone without its
	# clean-up: what it owned is ours now
	read -r _ old_pid own_daemon own_stable <"$VMLAB_OWNER" || true
	echo "vmlab: taking over what a session that did not end (pid ${old_pid:-?}) left: libvirtd=${own_daemon:-0} guests=${own_stable:-0}"
	own_daemon=${own_daemon:-0} own_stable=${own_stable:-0}
	# its processes (a test's sampler outlives a SIGKILLed runner): they
	# carry VMS_VMLAB_SESSION=<its pid> in their environment
	for e in /proc/[0-9]*/environ; do
		p=${e#/proc/}
		p=${p%/environ}
		[ "$p" != $$ ] || continue
		# (the braces: a process gone since the glob fails the redirection,
		# whose message 2>/dev/null on tr alone would not silence)
		if { tr '\0' '\n' <"$e"; } 2>/dev/null | grep -qx "VMS_VMLAB_SESSION=${old_pid:-none}"; then
			echo "vmlab: killing pid $p ($(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-80)), left by that session"
			kill -KILL "$p" 2>/dev/null || true
		fi
	done
fi
bash "$VMLAB_DIR/daemon.sh" status >/dev/null 2>&1 9>&- || own_daemon=1
running=$(vmlab_virsh list --name 2>/dev/null | grep -cxE 'vms-00[123]' || true)
[ "$running" = 3 ] || own_stable=1
echo "session $$ $own_daemon $own_stable" >"$VMLAB_OWNER"

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	local t
	t=$(transients)
	# shellcheck disable=SC2086
	[ -z "$t" ] || bash "$VMLAB_DIR/down.sh" $t >/dev/null 2>&1 9>&- || true
	if [ "$own_daemon" = 1 ]; then
		# every guest of our libvirtd, then libvirtd and the bridge
		bash "$VMLAB_DIR/down.sh" --all >/dev/null 2>&1 9>&- || true
	elif [ "$own_stable" = 1 ]; then
		# shellcheck disable=SC2086
		bash "$VMLAB_DIR/down.sh" $STABLE >/dev/null 2>&1 9>&- || true
	fi
	left=$(pgrep -f "guest=${VMLAB_PREFIX}" || true)
	if [ "$own_daemon" = 1 ] && [ -n "$left" ]; then
		echo "vmlab: QEMU processes left without libvirtd: $left; killing them" >&2
		# shellcheck disable=SC2086
		kill -KILL $left 2>/dev/null || true
	fi
	rm -f "$VMLAB_OWNER"
	echo "vmlab: session ended (libvirtd $([ "$own_daemon" = 1 ] && echo stopped || echo 'left running'), guests $([ "$own_stable" = 1 ] && echo removed || echo 'left running'))"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

bash "$VMLAB_DIR/setup.sh" 9>&- | grep -E '^(==|   done|vmlab)' || true
bash "$VMLAB_DIR/daemon.sh" start >/dev/null 9>&- || exit 1
t=$(transients)
if [ -n "$t" ]; then
	echo "vmlab: removing left-over transient guests:" $t
	# shellcheck disable=SC2086
	bash "$VMLAB_DIR/down.sh" $t >/dev/null 9>&- || exit 1
fi
LOAD=light bash "$VMLAB_DIR/up.sh" 3 9>&- || exit 1
"$@" 9>&-

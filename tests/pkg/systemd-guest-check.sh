#!/bin/bash
# tests/pkg/systemd-guest-check.sh - runs INSIDE the Debian guest that
# tests/pkg/systemd-guest.sh boots (as vms-guest-check.service, root, once
# the system is up): installs the .debs under the real systemd and checks
# vmsampler.service and vmsampler-export.service against readings of
# their own (systemd's properties, the journal, /proc/PID/status, the
# files).  Results go to the second serial port (/dev/ttyS1) between
# "=== VMS-GUEST BEGIN" and "=== VMS-GUEST END failures=N", one "ok:",
# "FAIL:" or "info:" per line; the data directory and the journal go out
# as a tar on /dev/vdb for the host to decode; then the guest powers off.
# /root/vms-guest.env (written by the host) sets CAP_MASK, the capability
# mask the documented set makes, computed from the host's
# linux/capability.h.
set -u
exec >/dev/ttyS1 2>&1
. /root/vms-guest.env
nfail=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; nfail=$((nfail + 1)); }
info() { echo "info: $*"; }
prop() { systemctl show -P "$2" "$1"; }
# a systemd timestamp property in µs since the epoch (realtime)
prop_us() { date -u -d "$(systemctl show --timestamp=us+utc -P "$2" "$1" | sed 's/^[A-Za-z]* //')" +%s%6N; }
# the journal lines of the unit's current (or last) invocation
# (its processes' lines, and systemd's about it)
jlines() {
	local id
	id=$(prop "$1" InvocationID)
	journalctl -q -o cat _SYSTEMD_INVOCATION_ID="$id" + INVOCATION_ID="$id"
}
# wait_for SECONDS CMD...: CMD polled every 0.2 s until it succeeds
wait_for() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ $SECONDS -lt $end ] || return 1
		sleep 0.2
	done
}
finish() {
	mkdir -p /root/out
	journalctl -q -o short-monotonic -u vmsampler -u vmsampler-export >/root/out/journal.txt 2>&1
	cp -a /var/lib/vmsampler /root/out/data
	tar -C /root/out -cf /dev/vdb . && sync
	echo "=== VMS-GUEST END failures=$nfail"
	sync
	systemctl poweroff --no-block
}
trap finish EXIT
CONF=/etc/vmsampler/vmsampler.yaml
DATA=/var/lib/vmsampler
echo "=== VMS-GUEST BEGIN"
info "$(systemctl --version | head -n 1), kernel $(uname -r), $(nproc) CPUs"
state=$(systemctl is-system-running --wait)
info "system $state after $(awk '{print $1}' /proc/uptime) s; failed units: $(systemctl list-units --failed --plain --no-legend | awk '{print $1}' | tr '\n' ' ')"

# --- the package, installed under the real systemd: its postinst creates
# the user and starts the enabled unit with the shipped configuration
t=$SECONDS
if dpkg -i /root/debs/libvmsampler0_*.deb /root/debs/vmsampler_*.deb >/root/dpkg.log 2>&1; then
	ok "dpkg -i in $((SECONDS - t)) s"
else
	tail -n 20 /root/dpkg.log
	fail "dpkg -i"
	exit 1
fi
VUID=$(id -u vmsampler) VGID=$(id -g vmsampler)
[ "$(systemctl is-enabled vmsampler)" = enabled ] && wait_for 30 systemctl is-active -q vmsampler &&
	ok "postinst: vmsampler.service enabled and active (uid $VUID)" ||
	fail "postinst: vmsampler.service $(systemctl is-enabled vmsampler) $(systemctl is-active vmsampler)"
info "journal of the start by postinst: $(jlines vmsampler.service | tr '\n' '|')"

# --- user and capabilities: /proc/PID/status of the main process (and
# its threads and children) against the documented set
check_creds() { # check_creds PID WHAT MASK
	local st=/proc/$1/status uid gid
	uid=$(awk '/^Uid:/{print $2,$3,$4,$5}' "$st")
	gid=$(awk '/^Gid:/{print $2,$3,$4,$5}' "$st")
	[ "$uid" = "$VUID $VUID $VUID $VUID" ] && [ "$gid" = "$VGID $VGID $VGID $VGID" ] ||
		{ fail "$2: Uid $uid Gid $gid, not vmsampler ($VUID/$VGID)"; return; }
	local bad=""
	for f in CapPrm CapEff CapAmb CapBnd; do
		v=$(awk -v f="$f:" '$1==f{print $2}' "$st")
		[ $((16#$v)) = $(($3)) ] || bad="$bad $f=$v"
	done
	[ "$(awk '/^NoNewPrivs:/{print $2}' "$st")" = 1 ] || bad="$bad NoNewPrivs=0"
	[ "$(awk '/^Seccomp:/{print $2}' "$st")" = 2 ] || bad="$bad Seccomp!=2"
	[ -z "$bad" ] && ok "$2: uid/gid vmsampler, CapPrm=CapEff=CapAmb=CapBnd=$(printf '%#x' "$3"), NoNewPrivs 1, seccomp filter" ||
		fail "$2: expected all caps $(printf '%#x' "$3"):$bad"
}
pid=$(prop vmsampler MainPID)
check_creds "$pid" "vmsampler main process $pid" "$CAP_MASK"
for tsk in /proc/"$pid"/task/*; do
	[ "${tsk##*/}" = "$pid" ] || check_creds "$pid/task/${tsk##*/}" "thread ${tsk##*/}" "$CAP_MASK"
done
for c in $(cat /proc/"$pid"/task/*/children 2>/dev/null); do
	check_creds "$c" "child $c ($(tr '\0' ' ' </proc/"$c"/cmdline))" "$CAP_MASK"
done

# --- READY: systemctl start returns once systemd has READY=1 (Type=notify);
# the first frame is taken after the process started and before systemd
# marked the unit active, and the file holds it at that moment
systemctl stop vmsampler
rm -f "$DATA"/*.vms*
systemctl start vmsampler
t_start=$(prop_us vmsampler ExecMainStartTimestamp)
t_active=$(prop_us vmsampler ActiveEnterTimestamp)
frames_at_ready=$(vmsampler dump "$DATA/vmsampler.vms" 2>/dev/null | tail -n +2 | wc -l)
first=$(vmsampler dump "$DATA/vmsampler.vms" 2>/dev/null | sed -n 2p | cut -d, -f2)
t_first=$(date -u -d "$first" +%s%6N 2>/dev/null || echo 0)
status=$(prop vmsampler StatusText)
if [ "$(prop vmsampler Type)" = notify ] && [ "$t_start" -lt "$t_first" ] && [ "$t_first" -le "$t_active" ] &&
	[ "$frames_at_ready" -ge 1 ] && [ -n "$status" ]; then
	ok "READY: process start +$((t_first - t_start)) µs first frame +$((t_active - t_first)) µs active; $frames_at_ready frame(s) in the file at READY; STATUS=$status"
else
	fail "READY: start $t_start first frame $t_first ($first) active $t_active, frames at READY $frames_at_ready, STATUS='$status'"
fi

# --- rotation and the watchdog: a drop-in shortens WatchdogSec to 5 s and
# the configuration rotates every 2 s
mkdir -p /run/systemd/system/vmsampler.service.d
printf '[Service]\nWatchdogSec=5s\n' >/run/systemd/system/vmsampler.service.d/test.conf
cp "$CONF" /root/vmsampler.yaml.orig
printf 'rotate: 2s\nkeep: 1d\n' >>"$CONF"
cp "$CONF" /root/vmsampler.yaml.good
systemctl daemon-reload
systemctl restart vmsampler
pid=$(prop vmsampler MainPID)
nr0=$(prop vmsampler NRestarts)
[ "$(prop vmsampler WatchdogUSec)" = 5s ] || fail "WatchdogUSec $(prop vmsampler WatchdogUSec), not 5s"
w1=$(prop vmsampler WatchdogTimestampMonotonic)
sleep 20 # four watchdog periods
w2=$(prop vmsampler WatchdogTimestampMonotonic)
if systemctl is-active -q vmsampler && [ "$(prop vmsampler MainPID)" = "$pid" ] && [ "$(prop vmsampler NRestarts)" = "$nr0" ] &&
	[ "$w2" -gt "$w1" ]; then
	ok "watchdog: alive after 20 s = 4 x WatchdogSec=5s, same PID $pid, last WATCHDOG=1 $(((w2 - w1) / 1000)) ms after the first reading"
else
	fail "watchdog: active=$(systemctl is-active vmsampler) PID $pid -> $(prop vmsampler MainPID), NRestarts $nr0 -> $(prop vmsampler NRestarts), WatchdogTimestamp $w1 -> $w2"
fi
mapfile -t rot < <(ls "$DATA"/vmsampler-2*.vms 2>/dev/null)
good=0
for f in "${rot[@]:0:${#rot[@]}-1}"; do # the closed ones
	n=$(vmsampler dump "$f" 2>/root/dump.err | tail -n +2 | wc -l)
	[ "$n" -ge 1 ] && [ ! -s /root/dump.err ] && good=$((good + 1))
done
[ ${#rot[@]} -ge 5 ] && [ "$good" = $((${#rot[@]} - 1)) ] &&
	ok "rotate: 2s: ${#rot[@]} files in 20 s, the $good closed ones decode on their own: $(basename -a "${rot[@]}" | tr '\n' ' ')" ||
	fail "rotate: ${#rot[@]} files, $good closed ones decode cleanly: ${rot[*]}"
info "first frames of ${rot[0]##*/}:"
vmsampler dump "${rot[0]}" | head -n 4 | cut -c1-160

# --- a bad configuration at reload: ExecReload checks it first; nothing
# changes (same process, still writing) and the error is in the journal
printf 'interval: 1s\noutput: %s/vmsampler.vms\nrotate: soon\n' "$DATA" >"$CONF"
col=$(($(sed -n 3p "$CONF" | grep -bo soon | cut -d: -f1) + 1)) # 1-based column of the bad value
before=$(cat "$DATA"/vmsampler-2*.vms | wc -c)
has_line() { jlines vmsampler.service | grep -qF "$CONF:3:$col:"; }
if systemctl reload vmsampler 2>/dev/null; then
	fail "reload with a bad configuration succeeded"
else
	wait_for 10 sh -c "[ \$(cat $DATA/vmsampler-2*.vms | wc -c) -gt $before ]" # still writing
	after=$(cat "$DATA"/vmsampler-2*.vms | wc -c)
	wait_for 10 has_line
	line=$(jlines vmsampler.service | grep -F "$CONF:3:$col:")
	if [ -n "$line" ] && systemctl is-active -q vmsampler && [ "$(prop vmsampler MainPID)" = "$pid" ] && [ "$after" -gt "$before" ]; then
		ok "reload, bad configuration: refused, same PID, still writing ($before -> $after bytes); journal: $line"
	else
		fail "reload, bad configuration: journal '$line', active $(systemctl is-active vmsampler), PID $(prop vmsampler MainPID), bytes $before -> $after"
	fi
fi
# SIGHUP straight to the process (kill -HUP, logrotate's way) only reopens
# the output: the configuration is not read, nothing changes
systemctl kill -s HUP --kill-whom=main vmsampler
sleep 1
systemctl is-active -q vmsampler && [ "$(prop vmsampler MainPID)" = "$pid" ] &&
	ok "kill -HUP with a bad configuration on disk: same PID, active" || fail "kill -HUP: $(systemctl is-active vmsampler)"
cp /root/vmsampler.yaml.good "$CONF"
systemctl reload vmsampler && [ "$(prop vmsampler MainPID)" = "$pid" ] &&
	ok "reload, good configuration: accepted, same PID" || fail "reload with the good configuration"

# --- the watchdog is real: a stopped process is killed by systemd
# (Result=watchdog) and restarted (Restart=on-failure)
kill -STOP "$pid"
t=$SECONDS
if wait_for 30 sh -c "[ \"\$(systemctl show -P Result vmsampler)\" = watchdog ]"; then
	ok "SIGSTOP: Result=watchdog after $((SECONDS - t)) s; journal: $(journalctl -q -o cat -u vmsampler | grep -F 'Watchdog timeout' | tail -n 1)"
else
	fail "SIGSTOP: Result=$(prop vmsampler Result) after $((SECONDS - t)) s"
fi
if wait_for 40 sh -c "systemctl is-active -q vmsampler && [ \"\$(systemctl show -P NRestarts vmsampler)\" -gt $nr0 ]"; then
	ok "restarted after the watchdog kill: PID $(prop vmsampler MainPID), NRestarts $(prop vmsampler NRestarts)"
else
	fail "not restarted: $(systemctl is-active vmsampler), NRestarts $(prop vmsampler NRestarts)"
fi
sleep 3

# --- export: no capability at all, /metrics from the live ring
systemctl start vmsampler-export
epid=$(prop vmsampler-export MainPID)
get_metrics() {
	exec 3<>/dev/tcp/127.0.0.1/9465 || return 1
	printf 'GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n' >&3
	cat <&3 >/root/metrics.txt
	exec 3<&-
	grep -q '^HTTP/1.[01] 200' /root/metrics.txt && grep -q '^vmsampler_' /root/metrics.txt
}
if [ "$epid" -gt 0 ] && wait_for 20 get_metrics 2>/dev/null; then
	ok "export: HTTP 200, $(grep -c '^[a-z]' /root/metrics.txt) samples, $(grep -c '^# TYPE' /root/metrics.txt) metrics"
	check_creds "$epid" "vmsampler-export process $epid" 0
	grep -E '^(vmsampler_|node_)' /root/metrics.txt | head -n 5 | sed 's/^/info:   /'
else
	fail "export: $(systemctl is-active vmsampler-export), $(head -c 300 /root/metrics.txt 2>/dev/null)"
	jlines vmsampler-export.service | tail -n 5
fi
systemctl stop vmsampler-export

# --- stop: exit 0 and the last file complete
systemctl stop vmsampler
last=$(ls "$DATA"/vmsampler-2*.vms | tail -n 1)
n=$(vmsampler dump "$last" 2>/root/dump.err | tail -n +2 | wc -l)
if [ "$(prop vmsampler Result)" = success ] && [ "$(prop vmsampler ExecMainCode)" = 1 ] && [ "$(prop vmsampler ExecMainStatus)" = 0 ] &&
	[ "$n" -ge 1 ] && [ ! -s /root/dump.err ]; then
	ok "stop: exited 0 (Result=success), the last file ${last##*/} decodes cleanly ($n frames)"
else
	fail "stop: Result=$(prop vmsampler Result) code $(prop vmsampler ExecMainCode) status $(prop vmsampler ExecMainStatus); ${last##*/}: $n frames, $(cat /root/dump.err)"
fi
info "journal of the last run: $(jlines vmsampler.service | tr '\n' '|')"

# --- a configuration error at start: the unit fails (exit 2, not
# restarted) with file:line:col in the journal
printf 'interval: 1s\noutput: %s/vmsampler.vms\nrotate: soon\n' "$DATA" >"$CONF"
systemctl start vmsampler 2>/dev/null && fail "start with a bad configuration succeeded"
nr=$(prop vmsampler NRestarts) # (a manual start resets it)
sleep 7 # past RestartSec=5s
line=$(jlines vmsampler.service | grep -F "$CONF:3:$col:")
if [ "$(systemctl is-active vmsampler)" = failed ] && [ "$(prop vmsampler ExecMainStatus)" = 2 ] &&
	[ "$(prop vmsampler Result)" = exit-code ] && [ -n "$line" ] && [ "$(prop vmsampler NRestarts)" = "$nr" ]; then
	ok "bad configuration at start: failed, exit 2, not restarted; journal: $line"
else
	fail "bad configuration at start: $(systemctl is-active vmsampler) status $(prop vmsampler ExecMainStatus) Result $(prop vmsampler Result) NRestarts $nr -> $(prop vmsampler NRestarts); journal: $(jlines vmsampler.service | tr '\n' '|')"
fi
cp /root/vmsampler.yaml.good "$CONF"
systemctl reset-failed vmsampler

# --- perf: Debian's kernels default to perf_event_paranoid 3, where
# CAP_PERFMON does not open perf events; at 2 (upstream's default) it does
for p in 3 2; do
	echo "$p" >/proc/sys/kernel/perf_event_paranoid
	systemctl restart vmsampler
	wait_for 10 sh -c "journalctl -q -o cat INVOCATION_ID=$(prop vmsampler InvocationID) | grep -q '^Started'"
	off=$(jlines vmsampler.service | grep -c 'perf: host event .* unavailable')
	# the line says why: CAP_SYS_ADMIN only at 3, and the sysctl that helps
	hint=$(jlines vmsampler.service | grep -c 'perf: host event .* unavailable.*perf_event_paranoid is 3 .*only CAP_SYS_ADMIN opens perf events; kernel.perf_event_paranoid=2')
	eval "hint$p=$hint"
	info "perf_event_paranoid $p: $off host perf events unavailable to the service: $(jlines vmsampler.service | grep 'perf: host event' | head -n 1)"
	eval "off$p=$off"
done
[ "$off3" -gt 0 ] && [ "$hint3" = "$off3" ] && [ "$off2" = 0 ] &&
	ok "perf: off for the service at perf_event_paranoid 3 (Debian's default, each line naming CAP_SYS_ADMIN and the sysctl), on at 2 with CAP_PERFMON" ||
	fail "perf: host events off at paranoid 3: $off3 (lines naming CAP_SYS_ADMIN: $hint3), at 2: $off2"
systemctl stop vmsampler
cp /root/vmsampler.yaml.orig "$CONF"
rm -rf /run/systemd/system/vmsampler.service.d
systemctl daemon-reload
systemctl reset-failed vmsampler

# --- systemd-analyze security, as the real systemd sees the units
for u in vmsampler.service vmsampler-export.service; do
	info "systemd-analyze security: $(systemd-analyze security "$u" 2>&1 | tail -n 1)"
done

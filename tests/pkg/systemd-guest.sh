#!/bin/bash
# tests/pkg/systemd-guest.sh - vmsampler.service under a real systemd.
# This machine's PID 1 is not systemd, so the packages built from the
# committed HEAD (dpkg-buildpackage, as tests/pkg/test_deb.sh builds them)
# are installed in a small Debian 12 guest booted with QEMU (TCG), and
# tests/pkg/systemd-guest-check.sh checks there, against systemd's own
# readings, /proc/PID/status and the files: the postinst starts the
# enabled unit; READY=1 after the first frame (Type=notify); user
# vmsampler with exactly the documented capabilities; frames; rotation;
# WATCHDOG=1 past four WatchdogSec periods (5 s by a drop-in) and a SIGSTOPped sampler
# killed by the watchdog and restarted; a bad configuration at reload
# refused (nothing changes, file:line:col in the journal) and at start
# (the unit fails with exit 2, not restarted); stop with exit 0 and the
# last file complete; vmsampler-export without capabilities serving
# /metrics; systemd-analyze security.  The host then decodes the data
# directory the guest hands back on a second disk.
#
# The guest's root file system is built with mmdebstrap from Debian's
# archive (systemd, udev, the cloud kernel with an initramfs-tools
# initramfs, what the .debs depend on), cached as a tarball under
# $STATE keyed by its inputs, and made into an ext4 image with mke2fs -d
# (no loop mount).  No libvirt, no tests/vmlab: qemu-system-x86_64 directly,
# the guest has no network.  As root; about 2 minutes (TCG), a stage of
# scripts/test.sh; doc/install.md, "Under a real systemd", has its last result.
#
#   tests/pkg/systemd-guest.sh [WORKDIR]    (default: a temporary directory)
#   VMS_GUEST_STATE=/var/lib/vmsampler-sdguest (the cached root tarball)
#   VMS_GUEST_DEBS=DIR: use the .debs in DIR instead of building them
set -euo pipefail
. "$(dirname "$0")/../../scripts/lib.sh"
. "$(dirname "$0")/lib.sh"
t0=$SECONDS
HERE=$(cd "$(dirname "$0")" && pwd)
STATE=${VMS_GUEST_STATE:-/var/lib/vmsampler-sdguest}
W=${1:-$(mktemp -d /tmp/vms-sdguest.XXXXXX)}
KEEP=${1:-}
QPID=
fail() { echo "systemd-guest: FAIL: $*" >&2; exit 1; }
ok() { echo "systemd-guest: ok: $*"; }
cleanup() {
	[ -z "$QPID" ] || kill "$QPID" 2>/dev/null || true
	[ -n "$KEEP" ] || rm -rf "$W"
}
trap cleanup EXIT
mkdir -p "$STATE" "$W"
apt_install mmdebstrap qemu-system-x86 e2fsprogs

# 1. the packages
if [ -n "${VMS_GUEST_DEBS:-}" ]; then
	cp "$VMS_GUEST_DEBS"/vmsampler_*.deb "$VMS_GUEST_DEBS"/libvmsampler0_*.deb "$W/"
else
	build_debs "$W"
fi

# 2. the guest's root: what the .debs need comes from their Depends
# (first alternative, no version), so the guest installs them offline
deps=$(for d in "$W"/vmsampler_*.deb "$W"/libvmsampler0_*.deb; do dpkg-deb -f "$d" Depends; done |
	tr ',' '\n' | sed -E 's/\|.*//; s/\(.*\)//; s/[[:space:]]//g' | grep -v '^libvmsampler0$' | grep . | sort -u | tr '\n' ,)
BASE_PKGS="systemd,systemd-sysv,udev,dbus,kmod,initramfs-tools,linux-image-cloud-amd64,zstd,${deps%,}"
MIRRORS=("deb http://deb.debian.org/debian bookworm main"
	"deb http://deb.debian.org/debian bookworm-updates main"
	"deb http://deb.debian.org/debian-security bookworm-security main")
# what the customize hook does (part of the cache key)
HOOK='echo vms-guest >"$1/etc/hostname"
echo "/dev/vda / ext4 rw,errors=remount-ro 0 1" >"$1/etc/fstab"
systemctl --root="$1" mask apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer fstrim.timer >/dev/null 2>&1 || true
rm -f "$1"/var/cache/apt/archives/*.deb "$1"/var/lib/apt/lists/*_Packages'
key=$(printf '%s\n' "$BASE_PKGS" "${MIRRORS[@]}" "$HOOK" | sha256sum | cut -c1-16)
BASE=$STATE/root-$key.tar
if [ -s "$BASE" ]; then
	ok "guest root cached: $BASE"
else
	echo "== mmdebstrap bookworm ($BASE_PKGS)"
	t1=$SECONDS
	mmdebstrap --mode=root --format=tar --variant=apt --include="$BASE_PKGS" --customize-hook="$HOOK" \
		bookworm "$BASE.new" "${MIRRORS[@]}" >"$W/mmdebstrap.log" 2>&1 || { tail -30 "$W/mmdebstrap.log"; fail "mmdebstrap"; }
	mv "$BASE.new" "$BASE"
	# older roots of other inputs go
	find "$STATE" -maxdepth 1 -name 'root-*.tar' ! -name "${BASE##*/}" -delete
	ok "guest root built in $((SECONDS - t1)) s: $(du -h "$BASE" | cut -f1)"
fi

# 3. the disk: the root, the .debs, the check and its unit
R=$W/root
mkdir -p "$R"
tar -C "$R" --numeric-owner -xpf "$BASE"
mkdir -p "$R/root/debs"
cp "$W"/vmsampler_*.deb "$W"/libvmsampler0_*.deb "$R/root/debs/"
install -m 0755 "$HERE/systemd-guest-check.sh" "$R/usr/local/sbin/vms-guest-check"
# the documented capabilities (doc/install.md, "Which privilege each part
# needs"), as a mask from the kernel's header on this host
CAPS="CAP_PERFMON CAP_SYS_PTRACE CAP_DAC_READ_SEARCH"
mask=0
# (the section in a variable: `sed | grep -q` under pipefail fails when grep
# exits at its first match while sed still writes, as a fresh CI run met)
table=$(sed -n '/^### Which privilege each part needs/,/^## /p' "$ROOT/doc/install.md")
for c in $CAPS; do
	[[ $table == *"$c"* ]] || fail "$c is not in doc/install.md's privilege table"
	n=$(awk -v c="$c" '$1=="#define" && $2==c {print $3}' /usr/include/linux/capability.h)
	[ -n "$n" ] || fail "$c is not in linux/capability.h"
	mask=$((mask | (1 << n)))
done
echo "CAP_MASK=$mask" >"$R/root/vms-guest.env"
cat >"$R/etc/systemd/system/vms-guest-check.service" <<'EOF'
[Unit]
Description=vmsampler checks under systemd (tests/pkg/systemd-guest.sh)
After=basic.target
[Service]
Type=exec
ExecStart=/usr/local/sbin/vms-guest-check
[Install]
WantedBy=multi-user.target
EOF
ln -sf /etc/systemd/system/vms-guest-check.service "$R/etc/systemd/system/multi-user.target.wants/vms-guest-check.service"
KVER=$(ls "$R/lib/modules" | sort -V | tail -n 1)
cp "$R/boot/vmlinuz-$KVER" "$R/boot/initrd.img-$KVER" "$W/"
truncate -s 2G "$W/disk.img"
mke2fs -q -t ext4 -L vmsroot -d "$R" -F "$W/disk.img" || fail "mke2fs -d"
rm -rf "$R"
truncate -s 256M "$W/out.raw"

# 4. boot: TCG, the console on the first serial port, the results on the second
echo "== booting the guest (kernel $KVER, TCG)"
t2=$SECONDS
# one vCPU: with two, the guest's perf reads of another CPU's events wait
# for an IPI that TCG's other vCPU thread can leave unanswered for minutes
# (a soft lockup in perf_event_read, "timer handling issue on cpu=0",
# seen once in CI); the checks need no second CPU.  A boot and the checks
# take 2-4 min: 15 min is a hang.
timeout 900 qemu-system-x86_64 -accel tcg,thread=multi -cpu max -smp 1 -m 1536 -nodefaults -display none \
	-no-reboot -kernel "$W/vmlinuz-$KVER" -initrd "$W/initrd.img-$KVER" \
	-append "root=/dev/vda rw console=ttyS0 panic=-1" \
	-drive file="$W/disk.img",if=virtio,format=raw,cache=unsafe -drive file="$W/out.raw",if=virtio,format=raw \
	-serial file:"$W/console.log" -serial file:"$W/result.log" &
QPID=$!
wait "$QPID" || { tail -40 "$W/console.log"; fail "qemu exited with $? after $((SECONDS - t2)) s"; }
QPID=
guest_s=$((SECONDS - t2))
tr -d '\r' <"$W/result.log" >"$W/result.txt"
sed -n '/^=== VMS-GUEST BEGIN/,/^=== VMS-GUEST END/p' "$W/result.txt"
grep -q '^=== VMS-GUEST END failures=0$' "$W/result.txt" || { tail -30 "$W/console.log"; fail "the checks in the guest (above)"; }
ok "checks in the guest: $(grep -c '^ok:' "$W/result.txt") passed, boot to power-off $guest_s s"

# 5. the data directory as the guest left it, decoded here: every rotated
# file alone, the seq of consecutive files of a run without a gap
mkdir -p "$W/out"
tar -C "$W/out" -xf "$W/out.raw" || fail "no tar on the guest's second disk"
dpkg-deb -x "$W"/vmsampler_*.deb "$W/x"
dpkg-deb -x "$W"/libvmsampler0_*.deb "$W/x"
dump() { LD_LIBRARY_PATH=$W/x/usr/lib/x86_64-linux-gnu "$W/x/usr/libexec/vmsampler-tools" dump "$@"; }
prev_last= files=0 frames=0 runs=0 torn=0
for f in "$W"/out/data/vmsampler-2*.vms; do
	if ! dump "$f" >"$W/d.csv" 2>"$W/d.err" || [ -s "$W/d.err" ]; then
		torn=$((torn + 1)) # the file of the run the watchdog killed may end torn
		echo "  ${f##*/}: $(head -c 200 "$W/d.err")"
	fi
	n=$(tail -n +2 "$W/d.csv" | wc -l)
	[ "$n" -ge 1 ] || fail "${f##*/}: no frame"
	first=$(sed -n 2p "$W/d.csv" | cut -d, -f1)
	last=$(tail -n 1 "$W/d.csv" | cut -d, -f1)
	if [ -z "$prev_last" ] || [ "$first" != $((prev_last + 1)) ]; then
		[ "$first" = 1 ] || fail "${f##*/} starts at seq $first after $prev_last: frames lost between files"
		runs=$((runs + 1))
	fi
	prev_last=$last files=$((files + 1)) frames=$((frames + n))
done
[ "$files" -ge 5 ] && [ "$torn" -le 1 ] || fail "$files rotated files, $torn torn"
ok "decoded here: $files rotated files of $runs runs, $frames frames, seq without a gap within each run, $torn torn (the watchdog's kill)"
echo "systemd-guest: all passed in $((SECONDS - t0)) s (guest $guest_s s)"

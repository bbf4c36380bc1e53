#!/bin/bash
# check_static.sh VMSAMPLER TEST_GUEST_PY - the -Dstatic=true build (issue 13,
# "Minimal image"): VMSAMPLER is a static executable (file(1), ldd(1) and
# its ELF program headers say so: no interpreter, no shared library), with
# none of what needs shared libraries (--version), and it samples: 3 rows
# of the host's /proc, the user: key looks the user up in /etc/passwd
# without glibc's NSS (root: a run; an unknown user: one line, exit 2).
# Then the guest test's SKIP: without QEMU it exits 77, and 1 when
# VMS_REQUIRE_MINIMAL=1 makes it required.
set -uo pipefail
bin=$1 guest=$2
fails=0
no() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

f=$(file -L "$bin")
[[ $f == *'statically linked'* ]] || no "file(1) does not say statically linked: $f"
l=$(ldd "$bin" 2>&1)
[[ $l == *'not a dynamic executable'* ]] || no "ldd(1) finds shared libraries: $l"
h=$(readelf -lW "$bin")
! grep -q 'INTERP' <<<"$h" || no "it has a program interpreter"
! readelf -dW "$bin" | grep -q NEEDED || no "it needs shared libraries: $(readelf -dW "$bin" | grep NEEDED)"

v=$("$bin" --version)
for k in libvirt export 'remote write' libcap-ng libsystemd; do
	grep -qx "$k: no" <<<"$v" || no "--version does not say '$k: no': $v"
done

out=$("$bin" -i 10ms -n 3 -o - 2>/dev/null) || no "vmsampler -i 10ms -n 3 -o - exited $?"
[ "$(wc -l <<<"$out")" = 4 ] || no "not a header and 3 rows: $(wc -l <<<"$out") lines"
ncpu=$(grep -c '^cpu[0-9]' /proc/stat)
ncol=$(head -n 1 <<<"$out" | tr , '\n' | grep -c '^cpu\.[0-9]*\.user$')
[ "$ncol" = "$ncpu" ] || no "cpu.N.user for $ncol CPUs, /proc/stat has $ncpu"

if [ "$(id -u)" = 0 ]; then
	"$bin" --user root -i 10ms -n 1 -o - >/dev/null || no "--user root (started as root) exited $?"
fi
rc=0
msg=$("$bin" --user no-such-user-vms -i 10ms -n 1 -o - 2>&1 >/dev/null) || rc=$?
[ "$rc" = 2 ] && [ "$msg" = "vmsampler: user: no user 'no-such-user-vms'" ] ||
	no "an unknown user: exit $rc, '$msg'"

rc=0
env -u VMS_REQUIRE_MINIMAL VMS_QEMU=/nonexistent/qemu VMS_BIN="$bin" python3 "$guest" >/dev/null 2>&1 || rc=$?
[ "$rc" = 77 ] || no "the guest test without QEMU exits $rc, not 77 (SKIP)"
rc=0
VMS_REQUIRE_MINIMAL=1 VMS_QEMU=/nonexistent/qemu VMS_BIN="$bin" python3 "$guest" >/dev/null 2>&1 || rc=$?
[ "$rc" = 1 ] || no "the guest test without QEMU, VMS_REQUIRE_MINIMAL=1, exits $rc, not 1"

[ "$fails" = 0 ] || exit 1
s=$(mktemp)
strip -o "$s" "$bin"
echo "static: $(stat -c %s "$bin") bytes, $(stat -c %s "$s") stripped; ${f#*: }"
rm -f "$s"

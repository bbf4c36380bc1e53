#!/bin/bash
# tests/pkg/test_deb.sh - the Debian packages from a clean clone: build
# (dpkg-buildpackage -us -uc -b after apt-get build-dep), lintian (no
# errors), install with apt-get, check files, user, units and a run as
# the service user, upgrade to a higher version, purge, and check that
# nothing is left behind.  As root, on Debian 12; scripts/test.sh runs it
# in a stage of its own.  Everything it installs is purged at the end,
# whatever fails.  It builds the committed HEAD of the work tree.
#
#   tests/pkg/test_deb.sh [WORKDIR]     (default: a temporary directory)
set -euo pipefail
. "$(dirname "$0")/../../scripts/lib.sh"
. "$(dirname "$0")/lib.sh"
t0=$SECONDS
W=${1:-$(mktemp -d /tmp/vms-deb.XXXXXX)}
KEEP=${1:+1} # a WORKDIR given is the caller's: its .debs are kept for it
PKGS="vmsampler libvmsampler0 libvmsampler-dev python3-vmsampler"
fail() { echo "test_deb: FAIL: $*" >&2; exit 1; }
ok() { echo "test_deb: ok: $*"; }
cleanup() {
	apt-get purge -y -q $PKGS >/dev/null 2>&1 || true
	[ -n "$KEEP" ] || rm -rf "$W"
}
trap cleanup EXIT
for p in $PKGS; do
	if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q installed; then
		fail "$p is installed already: this test installs and purges it"
	fi
done
getent passwd vmsampler >/dev/null && fail "a user vmsampler exists already"

build_debs "$W"

echo "== lintian"
lintian --no-tag-display-limit "$W"/vmsampler_*.changes >"$W/lintian.log" 2>&1 || true
errors=$(grep -c '^E: ' "$W/lintian.log" || true)
warnings=$(grep -c '^W: ' "$W/lintian.log" || true)
grep -E '^(E|W): ' "$W/lintian.log" | sed 's/^/  /' || true
[ "$errors" = 0 ] || fail "lintian: $errors errors"
ok "lintian: 0 errors, $warnings warnings"

echo "== apt-get install ./*.deb"
(cd "$W" && apt-get install -y -q ./vmsampler_*.deb ./libvmsampler0_*.deb ./libvmsampler-dev_*.deb \
	./python3-vmsampler_*.deb >"$W/install.log" 2>&1) || { tail -20 "$W/install.log"; fail "install"; }
for f in /usr/bin/vmsampler /usr/libexec/vmsampler-virt /usr/libexec/vmsampler-tools \
	/lib/systemd/system/vmsampler.service /lib/systemd/system/vmsampler-export.service \
	/usr/lib/sysusers.d/vmsampler.conf /usr/lib/tmpfiles.d/vmsampler.conf /etc/logrotate.d/vmsampler \
	/etc/vmsampler/vmsampler.yaml /usr/share/man/man1/vmsampler.1.gz /usr/share/man/man5/vmsampler.yaml.5.gz \
	/usr/include/vmsampler/reader.h; do
	[ -e "$f" ] || fail "$f is not installed"
done
dpkg-query -W -f='${Conffiles}\n' vmsampler | grep -q '/etc/vmsampler/vmsampler.yaml' || fail "the config is no conffile"
IFS=: read -r _ _ uid _ _ home shell < <(getent passwd vmsampler) || fail "no user vmsampler"
[ "$uid" -lt 1000 ] && [ "$home" = /var/lib/vmsampler ] && [ "$shell" = /usr/sbin/nologin ] ||
	fail "user vmsampler: uid $uid home $home shell $shell"
[ "$(stat -c '%U:%G %a' /var/lib/vmsampler)" = "vmsampler:vmsampler 750" ] || fail "/var/lib/vmsampler: $(stat -c '%U:%G %a' /var/lib/vmsampler)"
ver=$(/usr/bin/vmsampler --version)
echo "$ver" | grep -qx 'libcap-ng: yes' && echo "$ver" | grep -qx 'libsystemd: yes' && echo "$ver" | grep -qx 'libvirt: yes' ||
	fail "vmsampler --version: $ver"
if pkg-config --exists libperf; then echo "$ver" | grep -qx 'perf: yes' || fail "built without perf"; fi
systemd-analyze verify /lib/systemd/system/vmsampler.service /lib/systemd/system/vmsampler-export.service ||
	fail "systemd-analyze verify"
ok "files, conffile, user (uid $uid), data directory, units verified; $(echo "$ver" | tr '\n' ' ')"

# the library and the Python package as their users see them
printf '#include <vmsampler/reader.h>\nint main(void){struct vms_reader *r; return vms_reader_open(&r, "/nonexistent", 0) == 0;}\n' >"$W/t.c"
cc -o "$W/t" "$W/t.c" $(pkg-config --cflags --libs vmsampler) || fail "cannot link against libvmsampler"
/usr/bin/python3 -c 'import vmsampler, vmsampler.cli' || fail "import vmsampler"

# the service's configuration, started as root: it switches to vmsampler
# (user:) keeping only the measured capabilities, writes as vmsampler
/usr/bin/vmsampler -c /etc/vmsampler/vmsampler.yaml -i 100ms -n 5 --ring /var/lib/vmsampler/ring.test \
	-o /var/lib/vmsampler/test.vms 2>"$W/run.err" || { cat "$W/run.err"; fail "the sampler as vmsampler"; }
[ "$(stat -c %U /var/lib/vmsampler/test.vms)" = vmsampler ] || fail "output not written as vmsampler"
n=$(/usr/bin/vmsampler dump /var/lib/vmsampler/test.vms | tail -n +2 | wc -l)
[ "$n" = 5 ] || fail "dump: $n frames, not 5"
ok "a run from root with user: vmsampler wrote 5 frames as vmsampler"

echo "== upgrade to a higher version (the same packages repacked as 0.1.0+up1)"
echo "# a local change" >>/etc/vmsampler/vmsampler.yaml
mkdir -p "$W/up"
for d in "$W"/vmsampler_*.deb "$W"/libvmsampler0_*.deb "$W"/libvmsampler-dev_*.deb "$W"/python3-vmsampler_*.deb; do
	x=$W/up/x
	rm -rf "$x"
	dpkg-deb -R "$d" "$x"
	sed -i -E 's/^Version: .*/Version: 0.1.0+up1/; s/\(= 0\.1\.0\)/(= 0.1.0+up1)/' "$x/DEBIAN/control"
	dpkg-deb -b -Zxz "$x" "$W/up/" >/dev/null
done
(cd "$W/up" && apt-get install -y -q ./*.deb >"$W/upgrade.log" 2>&1) || { tail -20 "$W/upgrade.log"; fail "upgrade"; }
[ "$(dpkg-query -W -f='${Version}' vmsampler)" = 0.1.0+up1 ] || fail "not upgraded"
grep -q '^# a local change' /etc/vmsampler/vmsampler.yaml || fail "the upgrade lost the local change of the conffile"
[ "$(getent passwd vmsampler | cut -d: -f3)" = "$uid" ] || fail "the user changed"
[ -f /var/lib/vmsampler/test.vms ] || fail "the upgrade removed the data"
ok "upgraded to 0.1.0+up1: conffile change kept, same user, data kept"

echo "== purge"
apt-get purge -y -q $PKGS >"$W/purge.log" 2>&1 || { tail -20 "$W/purge.log"; fail "purge"; }
left=""
for f in /var/lib/vmsampler /etc/vmsampler /etc/logrotate.d/vmsampler /lib/systemd/system/vmsampler.service \
	/lib/systemd/system/vmsampler-export.service /etc/systemd/system/multi-user.target.wants/vmsampler.service \
	/usr/lib/sysusers.d/vmsampler.conf /usr/lib/tmpfiles.d/vmsampler.conf /usr/bin/vmsampler \
	/usr/libexec/vmsampler-virt /usr/include/vmsampler /run/vmsampler; do
	[ -e "$f" ] || [ -L "$f" ] && left="$left $f"
done
ls /var/lib/systemd/deb-systemd-helper-enabled 2>/dev/null | grep -q vmsampler && left="$left deb-systemd-helper-enabled/vmsampler*"
getent passwd vmsampler >/dev/null && left="$left user:vmsampler"
getent group vmsampler >/dev/null && left="$left group:vmsampler"
dpkg -l $PKGS 2>/dev/null | grep -q '^[ri][ic] ' && left="$left dpkg-status"
[ -z "$left" ] || fail "left behind after purge:$left"
ok "purged: no files, units, user, group or data left"
echo "test_deb: all passed in $((SECONDS - t0)) s"

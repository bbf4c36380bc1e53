#!/bin/bash
# setup.sh - bring the vmlab test bed up from nothing on Debian 12 (root, no systemd).
# Idempotent: re-running skips what is already done.  Each step is timed.
#
#   1. packages (apt-get --no-install-recommends; never libvirt-daemon-system,
#      which pulls in systemd)
#   2. users/groups that Debian's libvirt build expects
#   3. /etc/libvirt/qemu.conf + libvirtd.conf for a root-only box without systemd
#   4. host-only bridge $VMLAB_BRIDGE
#   5. guest image (cached in $VMLAB_STATE/guest) - see make-guest.sh
#   6. C probe tools (tools/*.c -> $VMLAB_STATE/bin)
#   7. libvirtd, started by daemon.sh
#
# Environment: VMLAB_STATE (default /var/lib/vmsampler-vmlab), KPKG (pin guest kernel).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
vmlab_need_root
export DEBIAN_FRONTEND=noninteractive
T0=$(vmlab_now_ms)
trap 'echo "vmlab: setup FAILED in step: ${VMLAB_STEP_NAME:-?}" >&2' ERR

PKGS=(
  qemu-system-x86 qemu-utils             # QEMU (TCG) + qemu-img
  libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients
  libvirt-dev pkg-config gcc libc6-dev   # the sampler and tools/*.c link libvirt
  busybox-static cpio gzip               # guest initramfs
  iproute2 procps                        # ip, pgrep
)

vmlab_step "packages"
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "   installing: ${missing[*]}"
  apt-get update -qq || vmlab_die "apt-get update failed"
  apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends --no-upgrade \
    "${missing[@]}" >/dev/null || vmlab_die "apt-get install ${missing[*]} failed"
else
  echo "   all ${#PKGS[@]} packages present"
fi
# apt-cache needs package lists to find the guest kernel; fetch them if there are none
if [ -z "$(ls /var/lib/apt/lists/*_Packages 2>/dev/null)" ] && [ ! -s "$VMLAB_STATE/guest/STAMP" ]; then
  apt-get update -qq || vmlab_die "apt-get update failed"
fi
vmlab_step_done

vmlab_step "users and groups"
# libvirtd resolves its compiled-in default qemu user/group (libvirt-qemu) before it
# reads qemu.conf, and refuses to start without them. libvirt-daemon-system would
# create them, but it depends on systemd.
getent group kvm           >/dev/null || groupadd -r kvm
getent group libvirt       >/dev/null || groupadd -r libvirt
getent group libvirt-qemu  >/dev/null || groupadd -r libvirt-qemu
getent passwd libvirt-qemu >/dev/null || useradd -r -g libvirt-qemu -G kvm \
  -d /var/lib/libvirt -s /usr/sbin/nologin -c "Libvirt Qemu" libvirt-qemu
vmlab_step_done

vmlab_step "libvirt configuration"
mkdir -p /etc/libvirt /var/log/libvirt /var/lib/libvirt/qemu
write_conf() { # write_conf FILE < content ; keeps the distro file once as FILE.dist
  local f=$1 new; new=$(cat)
  [ -f "$f" ] && [ ! -f "$f.dist" ] && ! grep -q '^# vmsampler vmlab' "$f" && cp "$f" "$f.dist"
  if [ "$(cat "$f" 2>/dev/null)" != "$new" ]; then printf '%s\n' "$new" > "$f"; echo "   wrote $f"; fi
}
write_conf /etc/libvirt/qemu.conf <<'CONF'
# vmsampler vmlab: QEMU driver for a root-only CI machine without systemd
user = "root"               # QEMU runs as root: no chown of images
group = "root"
dynamic_ownership = 0
security_driver = "none"    # no AppArmor/SELinux here
stdio_handler = "file"      # QEMU stdout/stderr to /var/log/libvirt/qemu/NAME.log, no virtlogd
CONF
write_conf /etc/libvirt/libvirtd.conf <<'CONF'
# vmsampler vmlab: local UNIX socket only, root only, log warnings to a file
unix_sock_group = "root"
unix_sock_ro_perms = "0700"
unix_sock_rw_perms = "0700"
auth_unix_ro = "none"
auth_unix_rw = "none"
log_outputs = "3:file:/var/log/libvirt/libvirtd.log"
CONF
vmlab_step_done

vmlab_step "host-only bridge $VMLAB_BRIDGE"
vmlab_bridge_up
vmlab_step_done

vmlab_step "guest image"
"$VMLAB_DIR/make-guest.sh"
vmlab_step_done

vmlab_step "probe tools"
mkdir -p "$VMLAB_STATE/bin"
for c in "$VMLAB_DIR"/tools/*.c; do
  [ -e "$c" ] || continue
  b=$VMLAB_STATE/bin/$(basename "$c" .c)
  if [ ! -x "$b" ] || [ "$c" -nt "$b" ]; then
    # shellcheck disable=SC2046
    gcc -O2 -Wall -Wextra -pthread -o "$b" "$c" $(pkg-config --cflags --libs libvirt) \
      || vmlab_die "cannot build $c"
    echo "   built $b"
  fi
done
vmlab_step_done

vmlab_step "libvirtd"
"$VMLAB_DIR/daemon.sh" start
vmlab_step_done

vmlab_timings
echo "setup complete in $(vmlab_fmt_ms $(( $(vmlab_now_ms) - T0 ))) (state: $VMLAB_STATE)"

#!/bin/bash
# make-guest.sh - build (or reuse) the tiny test guest under $VMLAB_STATE/guest:
#   vmlinuz      Debian bookworm "cloud" kernel, unpacked from the archive's .deb
#   initrd.img   busybox-static + virtio modules + guest/init (the workload)
#   disk0.qcow2  64 MiB template data disk; up.sh gives each guest a qcow2 overlay
# The result is cached: it is rebuilt only when the kernel package, guest/init or
# this script change (see guest/STAMP).  Pin the kernel with KPKG=linux-image-...
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
vmlab_need_root

BUILD=$VMLAB_STATE/build
OUT=$VMLAB_STATE/guest
mkdir -p "$BUILD" "$OUT"
cd "$BUILD"

# 1. Which kernel: what the cloud-kernel metapackage points at today, else the cached one.
KPKG=${KPKG:-$(apt-cache depends --important linux-image-cloud-amd64 2>/dev/null \
               | awk '/Depends: linux-image-[0-9]/{print $2; exit}')}
if [ -z "$KPKG" ]; then
  # shellcheck disable=SC2012
  KPKG=$(ls linux-image-*-cloud-amd64_*.deb 2>/dev/null | sed 's/_.*//' | sort -V | tail -1)
fi
[ -n "$KPKG" ] || vmlab_die "cannot find a linux-image-*-cloud-amd64 package (run apt-get update)"

STAMP="kpkg=$KPKG init=$(sha256sum "$VMLAB_DIR/guest/init" | cut -c1-16) script=$(sha256sum "$0" | cut -c1-16)"
if [ -f "$OUT/STAMP" ] && [ "$(cat "$OUT/STAMP")" = "$STAMP" ] \
   && [ -s "$OUT/vmlinuz" ] && [ -s "$OUT/initrd.img" ] && [ -s "$OUT/disk0.qcow2" ]; then
  echo "guest image cached: $STAMP"
  exit 0
fi

if ! ls "${KPKG}"_*.deb >/dev/null 2>&1; then
  # stale package lists name a .deb the archive has dropped: refresh once and retry
  apt-get download "$KPKG" >/dev/null 2>&1 \
    || { apt-get update -qq && apt-get download "$KPKG" >/dev/null; } \
    || vmlab_die "apt-get download $KPKG failed"
fi
DEB=$(printf '%s\n' "${KPKG}"_*.deb | sort -V | tail -1)
rm -rf kroot initramfs
mkdir kroot
dpkg -x "$DEB" kroot
KVER=$(ls kroot/lib/modules)
cp "kroot/boot/vmlinuz-$KVER" "$OUT/vmlinuz.new"

# 2. initramfs. virtio, virtio_pci, virtio_blk, virtio_net and virtio_balloon are
#    modules (=m) in Debian's config, so they go in, in dependency order.
mkdir -p initramfs/{bin,sbin,etc,proc,sys,dev,tmp,run,lib/modules}
cp /bin/busybox initramfs/bin/busybox
for a in $(initramfs/bin/busybox --list); do
  # busybox lists itself; a busybox -> busybox symlink makes the kernel fail with ELOOP
  [ "$a" = busybox ] || ln -s busybox "initramfs/bin/$a"
done
MODS="drivers/virtio/virtio_ring drivers/virtio/virtio
      drivers/virtio/virtio_pci_modern_dev drivers/virtio/virtio_pci_legacy_dev
      drivers/virtio/virtio_pci net/core/failover drivers/net/net_failover
      drivers/net/virtio_net drivers/block/virtio_blk drivers/virtio/virtio_balloon"
: > initramfs/lib/modules/load-order
for m in $MODS; do
  src=kroot/lib/modules/$KVER/kernel/$m.ko
  if [ -f "$src" ]; then cp "$src" initramfs/lib/modules/
  elif [ -f "$src.xz" ]; then xz -dc "$src.xz" > "initramfs/lib/modules/$(basename "$m").ko"
  else vmlab_die "module $m not found in $KPKG"; fi
  echo "$(basename "$m").ko" >> initramfs/lib/modules/load-order
done
install -m 0755 "$VMLAB_DIR/guest/init" initramfs/init
(cd initramfs && find . | cpio -o -H newc --quiet | gzip -1) > "$OUT/initrd.img.new"

# 3. Template disk: the guest writes raw blocks to /dev/vda, no filesystem needed.
[ -s "$OUT/disk0.qcow2" ] || qemu-img create -q -f qcow2 "$OUT/disk0.qcow2" 64M

mv "$OUT/vmlinuz.new" "$OUT/vmlinuz"
mv "$OUT/initrd.img.new" "$OUT/initrd.img"
rm -rf kroot initramfs
echo "$STAMP" > "$OUT/STAMP"
echo "guest image built: kernel $KVER, initrd $(stat -c %s "$OUT/initrd.img") bytes"

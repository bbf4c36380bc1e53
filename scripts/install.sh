#!/bin/bash
# scripts/install.sh [PREFIX] - install what is missing, build the release
# configuration (what run.sh makes) and install it under PREFIX (default
# /usr/local): vmsampler in PREFIX/bin, its agent vmsampler-virt in
# PREFIX/libexec (where vmsampler looks for it), libvmsampler with its
# header and pkg-config file, the man pages, the example configuration in
# PREFIX/share/doc/vmsampler.  Then every command of the README works as
# written.  Uninstall: ninja -C build-run uninstall (build-install for
# another PREFIX).
. "$(dirname "$0")/lib.sh"
PREFIX=${1:-/usr/local}
apt_install $BUILD_PKGS
need_libperf
# run.sh's directory for the default prefix; another prefix gets its own
if [ "$PREFIX" = /usr/local ]; then dir=build-run; else dir=build-install; fi
build "$dir" --buildtype=release -Dperf=enabled --prefix="$PREFIX"
echo "== installing into $PREFIX"
log=$ROOT/$dir.log
meson install -C "$ROOT/$dir" --no-rebuild >"$log" 2>&1 || { tail -n 20 "$log" >&2; exit 1; }
# the shared library's cache (Debian's ld.so.conf lists /usr/local/lib/<triplet>)
if [ "$(id -u)" = 0 ]; then ldconfig; fi
echo "== installed: $(command -v vmsampler 2>/dev/null || echo "$PREFIX/bin/vmsampler") ($("$PREFIX/bin/vmsampler" --version | head -1))"

#!/bin/bash
# scripts/build-libperf.sh [PREFIX] - build libperf (the kernel's tools/lib/perf)
# from Debian's linux-source-6.1 package and install it where meson's
# dependency('libperf') finds it through pkg-config.
#
# Debian 12 packages no libperf (apt-cache search libperf: only GNUstep and ROS
# hits; linux-perf ships none), so the project builds it.  scripts/lib.sh runs
# this only when `pkg-config --exists libperf` fails: a distribution's libperf
# is used when there is one.
#
#   PREFIX      default $LIBPERF_PREFIX, else /usr/local.  Installed there:
#                 include/perf/*.h
#                 lib/libperf.a          (with libapi.a merged in, see below)
#                 lib/pkgconfig/libperf.pc
#               /usr/local/lib/pkgconfig is on pkg-config's default path; for
#               another PREFIX set PKG_CONFIG_PATH=PREFIX/lib/pkgconfig.
#   LIBPERF_WORK  download and build directory (default /var/tmp/vmsampler-libperf)
#
# Only the static archive is installed, so `-lperf` links it statically and
# vmsampler runs without LD_LIBRARY_PATH.  libperf.a alone is not enough to
# link (its fdarray__* come from tools/lib/api), so libapi.a's objects are
# merged into it; the .pc file then stays correct as generated.
#
# Idempotent: when PREFIX already holds this version it returns at once.
# Takes 10-16 s otherwise (download 1 s, unpacking tools/ from the .tar.xz
# 7 s, compiling 2-7 s).  Needs gcc, make, xz-utils, binutils (apt-get installs
# them when missing; run as root for that and for a PREFIX under /usr).
set -euo pipefail

PREFIX=${1:-${LIBPERF_PREFIX:-/usr/local}}
WORK=${LIBPERF_WORK:-/var/tmp/vmsampler-libperf}
PKG=linux-source-6.1
# What a finished install records: a rebuild happens when this changes.
STAMP_DIR=$PREFIX/share/vmsampler-libperf
log() { echo "== build-libperf: $*" >&2; }

have_all() {
	[ -f "$PREFIX/lib/libperf.a" ] && [ -f "$PREFIX/lib/pkgconfig/libperf.pc" ] &&
		[ -f "$PREFIX/include/perf/evlist.h" ] && [ -f "$STAMP_DIR/version" ]
}

if have_all; then
	log "libperf $(cat "$STAMP_DIR/version") already in $PREFIX"
	exit 0
fi

missing=()
for tool in gcc make xz ar dpkg-deb; do
	command -v "$tool" >/dev/null || missing+=("$tool")
done
if [ ${#missing[@]} -gt 0 ]; then
	log "installing the build tools (missing: ${missing[*]})"
	apt-get install -y -q --no-install-recommends --no-upgrade gcc make xz-utils binutils >/dev/null
fi

mkdir -p "$WORK"
cd "$WORK"
deb=$(ls ${PKG}_*.deb 2>/dev/null | sort -V | tail -n1 || true)
if [ -z "$deb" ]; then
	log "downloading $PKG"
	# The sandbox user _apt cannot write to $WORK: download as root.
	if ! apt-get download -q -o APT::Sandbox::User=root "$PKG" >/dev/null 2>&1; then
		apt-get update -qq
		apt-get download -q -o APT::Sandbox::User=root "$PKG" >/dev/null
	fi
	deb=$(ls ${PKG}_*.deb | sort -V | tail -n1)
fi
version=${deb#${PKG}_}
version=${version%_all.deb}
src=$WORK/src-$version/$PKG
if [ ! -f "$src/tools/lib/perf/Makefile" ]; then
	log "unpacking tools/ of $PKG $version"
	rm -rf "$WORK/src-$version"
	mkdir -p "$WORK/src-$version"
	# only the kernel tarball from the package, and only what
	# tools/lib/perf builds from
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$WORK/src-$version" "./usr/src/$PKG.tar.xz"
	tar -xJf "$WORK/src-$version/usr/src/$PKG.tar.xz" -C "$WORK/src-$version" \
		"$PKG/tools/lib" "$PKG/tools/include" "$PKG/tools/build" \
		"$PKG/tools/scripts" "$PKG/tools/arch"
	rm -rf "$WORK/src-$version/usr"
fi

log "compiling libperf from $PKG $version"
# prefix= at build time too: the .pc file is generated with it (without it,
# an empty prefix).  libdir_relative=lib: the default is lib64 on x86_64,
# which pkg-config does not search under /usr/local.  Plain `make install`
# would also build the man pages and fails without asciidoc.
mk=(make -C "$src/tools/lib/perf" prefix="$PREFIX" libdir_relative=lib)
"${mk[@]}" -j"$(nproc)" libs >/dev/null
obj=$src/tools/lib/perf
[ -f "$obj/libperf.a" ] && [ -f "$src/tools/lib/api/libapi.a" ]

# one archive with libperf's and libapi's objects
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'create %s\naddlib %s\naddlib %s\nsave\nend\n' "$tmp/libperf.a" "$obj/libperf.a" \
	"$src/tools/lib/api/libapi.a" | ar -M
ranlib "$tmp/libperf.a"

log "installing into $PREFIX"
install -d -m 755 "$PREFIX/lib" "$PREFIX/lib/pkgconfig" "$STAMP_DIR"
"${mk[@]}" install_headers install_pkgconfig >/dev/null
install -m 644 "$tmp/libperf.a" "$PREFIX/lib/libperf.a"
# a shared libperf from an earlier install would win over the archive
rm -f "$PREFIX/lib/libperf.so" "$PREFIX/lib/libperf.so".*
echo "$version" >"$STAMP_DIR/version"
have_all
log "done: $PREFIX/lib/libperf.a, $PREFIX/lib/pkgconfig/libperf.pc"

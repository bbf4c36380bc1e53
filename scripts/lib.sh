# scripts/lib.sh - shared by run.sh and test.sh (sourced, not executed).
# Installs only what is missing, so a second run does not touch apt.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export DEBIAN_FRONTEND=noninteractive

# Debian packages needed to build and run the sampler (libvirt-dev and
# libxml2-dev: the per-VM agent vmsampler-virt; libmicrohttpd-dev and
# zlib1g-dev: vmsampler export's HTTP server and gzip).
BUILD_PKGS="gcc meson ninja-build pkg-config libyaml-dev libvirt-dev libxml2-dev make xz-utils binutils"
BUILD_PKGS="$BUILD_PKGS libmicrohttpd-dev zlib1g-dev"
# ... remote write (src/tools/remote_write.c): protobuf-c and its compiler,
# snappy, libcurl
BUILD_PKGS="$BUILD_PKGS libprotobuf-c-dev protobuf-c-compiler libsnappy-dev libcurl4-openssl-dev"
# ... the user: key (libcap-ng) and sd_notify (libsystemd), both optional;
# systemd for systemd-analyze verify and security on the units
BUILD_PKGS="$BUILD_PKGS libcap-ng-dev libsystemd-dev systemd"
# ... compress: zstd of rotated files and reading .zst (libzstd, optional)
BUILD_PKGS="$BUILD_PKGS libzstd-dev"
# ... and to run the whole test suite (the integration tests' libvirtd,
# QEMU and guest image come from tests/vmlab/setup.sh; libvirt-clients for
# virsh, which agent-testdrv also uses with libvirt's test driver).
TEST_PKGS="libcmocka-dev sysstat tzdata python3 groff-base linux-perf python3-pandas libvirt-clients"
# ... and the Python package's figures (python3-matplotlib) and its test
# venv (python3-venv: pyarrow, pandas, duckdb come from PyPI, see py_venv)
TEST_PKGS="$TEST_PKGS python3-matplotlib python3-venv"
# ... and the time-series databases the tests start: Prometheus (and
# promtool) that scrapes vmsampler export (tests/test_export.py), InfluxDB
# 1.6, Prometheus 2.42 and VictoriaMetrics 1.79 that take tail's line
# protocol and remote write (tests/test_tsdb.py), and jq
TEST_PKGS="$TEST_PKGS influxdb prometheus victoria-metrics jq"
# ... node_exporter beside export (tests/test_node_exporter.py: the same
# names carry the same values) and, with the libvirt exporter, the cost
# per scrape of the peers (bench/export/peers.sh)
TEST_PKGS="$TEST_PKGS prometheus-node-exporter prometheus-libvirt-exporter"
# ... the privilege test (setpriv, useradd) and the Debian packages
# (tests/pkg/test_deb.sh: dpkg-buildpackage, lintian, pybuild)
TEST_PKGS="$TEST_PKGS util-linux passwd dpkg-dev debhelper dh-python python3-all python3-setuptools"
TEST_PKGS="$TEST_PKGS pybuild-plugin-pyproject lintian devscripts equivs fakeroot"
# ... the .zst of rotated files: Debian's zstd decompresses them for the
# comparison (tests/test_rotate.py), python3-zstandard for the Python loader
TEST_PKGS="$TEST_PKGS zstd python3-zstandard"
# ... the systemd guest (tests/pkg/systemd-guest.sh): its root file system
# from Debian's archive, its ext4 image from a directory, QEMU to boot it
TEST_PKGS="$TEST_PKGS mmdebstrap e2fsprogs qemu-system-x86"
# ... the interference source's eBPF program (issue 26, -Dbpf): clang
# -target bpf, bpftool (vmlinux.h and the skeleton), libbpf; the test
# build requires it (-Dbpf=enabled, VMS_REQUIRE_BPF)
TEST_PKGS="$TEST_PKGS clang libbpf-dev bpftool"

need_root() {
	if [ "$(id -u)" != 0 ]; then
		echo "this step installs Debian packages: run as root (or with sudo)" >&2
		exit 1
	fi
}

# apt_install PKG... : install the packages that are not installed yet
apt_install() {
	local missing=()
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	need_root
	echo "== installing: ${missing[*]}"
	apt-get update -qq
	apt-get install -y -q -o DPkg::Lock::Timeout=600 --no-install-recommends --no-upgrade "${missing[@]}" >/dev/null
}

# libperf (the perf source): Debian 12 does not package it, so it is built
# from linux-source-6.1 into /usr/local (scripts/build-libperf.sh, about
# 10 s the first time).  A libperf that pkg-config already knows, from a
# distribution or an earlier run, is used as it is.
need_libperf() {
	if pkg-config --exists libperf; then
		return 0
	fi
	need_root
	"$ROOT/scripts/build-libperf.sh"
}

# build DIR [meson options...]
build() {
	local dir=$1
	shift
	local log=$ROOT/$dir.log
	if [ ! -f "$ROOT/$dir/build.ninja" ]; then
		echo "== $dir: configuring (meson setup $*)"
		meson setup "$ROOT/$dir" "$ROOT" "$@" >"$log" 2>&1 || { tail -n 40 "$log" >&2; exit 1; }
	else
		meson configure "$ROOT/$dir" "$@" >"$log" 2>&1 || { tail -n 40 "$log" >&2; exit 1; }
	fi
	# one line that says what it does (the full log in $dir.log); the
	# errors when it fails
	local todo
	todo=$(ninja -C "$ROOT/$dir" -n 2>/dev/null | grep -c '^\[' || true)
	if [ "${todo:-0}" -gt 0 ]; then
		echo "== $dir: building ($todo steps; log in $dir.log)"
	fi
	ninja -C "$ROOT/$dir" >"$log" 2>&1 || { grep -E -A3 'error|FAILED' "$log" | head -n 60 >&2; exit 1; }
}

# py_venv DIR: the venv the Python package's tests use for what Debian 12
# does not package (pyarrow; duckdb): python3 -m venv, then pip install
# './python[parquet,duckdb]' from PyPI, which also reinstalls the package
# from the work tree every time (log in DIR.log)
py_venv() {
	local dir=$1
	if [ ! -x "$dir/bin/python3" ]; then
		echo "== $dir: a venv for the Python package's tests (pyarrow, pandas, duckdb from PyPI)"
		/usr/bin/python3 -m venv "$dir" >"$dir.log" 2>&1 || { cat "$dir.log" >&2; exit 1; }
	fi
	"$dir/bin/pip" install -q --disable-pip-version-check "$ROOT/python[parquet,duckdb]" >"$dir.log" 2>&1 ||
		{ tail -n 30 "$dir.log" >&2; exit 1; }
	rm -rf "$ROOT/python/build" "$ROOT"/python/*.egg-info
}

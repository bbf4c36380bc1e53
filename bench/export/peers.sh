#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/export/peers.sh [--build DIR] [--guests N] [--rounds R] [--window S]:
# CPU per scrape of `vmsampler export --listen` against node_exporter + the
# libvirt exporter (Debian's prometheus-node-exporter and
# prometheus-libvirt-exporter) for the same quantities, at N libvirt guests
# (default 60).  Root; about 9 minutes at 60 guests.
#
# Runs itself inside a vmlab session (tests/vmlab/session.sh: one user of
# the lab at a time, libvirtd and vms-001..003 up, taken down at its end),
# then:
#   1. bench/export/peers.py on the 3 stable guests, 1 round of 3 s windows:
#      a check that everything starts before the guests are booted;
#   2. tests/vmlab/up.sh: vms-004..N with LOAD=idle, 4 booting at a time
#      (as bench/vm/bench.py does), and 60 s for the boots to settle;
#   3. bench/export/peers.py (R rounds of 4 windows of S seconds: idle,
#      export, node_exporter, libvirt exporter), its table on stdout;
#   4. vms-004..N taken down, whatever happened.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
BUILD=$SRC/build GUESTS=60 ROUNDS=2 WINDOW=30
while [ $# -gt 0 ]; do
	case $1 in
	--build) BUILD=$(cd "$2" && pwd); shift 2 ;;
	--guests) GUESTS=$2; shift 2 ;;
	--rounds) ROUNDS=$2; shift 2 ;;
	--window) WINDOW=$2; shift 2 ;;
	*) echo "usage: $0 [--build DIR] [--guests N] [--rounds R] [--window S]" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "peers.sh: run as root (libvirtd, guests)" >&2; exit 2; }
[ "$GUESTS" -ge 3 ] || { echo "peers.sh: --guests is at least 3" >&2; exit 2; }
for b in prometheus-node-exporter prometheus-libvirt-exporter; do
	command -v $b >/dev/null || { echo "peers.sh: $b is not installed (scripts/lib.sh TEST_PKGS)" >&2; exit 2; }
done
if [ -z "${VMS_VMLAB_LOCKED:-}" ]; then
	exec bash "$SRC/tests/vmlab/session.sh" -- "$0" --build "$BUILD" --guests "$GUESTS" --rounds "$ROUNDS" --window "$WINDOW"
fi

extra() { for i in $(seq 4 "$GUESTS"); do printf 'vms-%03d ' "$i"; done; }
down() { [ "$GUESTS" -le 3 ] || bash "$SRC/tests/vmlab/down.sh" $(extra) >/dev/null 2>&1 || true; }
trap down EXIT

echo "== check on the 3 stable guests"
python3 "$HERE/peers.py" --build "$BUILD" --rounds 1 --window 3 >/dev/null
if [ "$GUESTS" -gt 3 ]; then
	echo "== up: vms-004..$(printf '%03d' "$GUESTS")"
	LOAD=idle PARALLEL=4 bash "$SRC/tests/vmlab/up.sh" $((GUESTS - 3)) 4 >/dev/null
	sleep 60
fi
echo "== measuring ($(date -u +%H:%M:%S) UTC, commit $(git -C "$SRC" rev-parse --short HEAD))"
python3 "$HERE/peers.py" --build "$BUILD" --rounds "$ROUNDS" --window "$WINDOW"

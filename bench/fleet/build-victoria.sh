#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/fleet/build-victoria.sh [DIR] [VERSION]: VictoriaMetrics single-node
# (default v1.151.0) built from its Go module with `go install`, into DIR
# (default ./victoria-bin), with its version stamped where the release
# build stamps it (lib/buildinfo.Version: `-version`, vm_app_version), for
# bench/fleet/run.sh --victoria DIR/victoria-metrics and tests/test_fleet.py
# (VMS_VICTORIA).  Needs Go >= 1.26 (GO=, default go on PATH, else
# /usr/local/go/bin/go) and the Go module proxy; CI uses Debian's 1.79.
# Measured here (2 cores shared, cold module cache): 4 min 27 s.
set -euo pipefail
dir=$(realpath -m "${1:-victoria-bin}")
ver=${2:-v1.151.0}
go=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
mkdir -p "$dir"
GOBIN=$dir "$go" install \
	-ldflags "-X github.com/VictoriaMetrics/VictoriaMetrics/lib/buildinfo.Version=victoria-metrics-$ver" \
	"github.com/VictoriaMetrics/VictoriaMetrics/app/victoria-metrics@$ver"
"$dir/victoria-metrics" -version

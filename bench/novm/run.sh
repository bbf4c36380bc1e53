#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/novm/run.sh - what the default build (libvirt and perf compiled in)
# pays per sample on a host without libvirtd and without VMs, against the
# host-only build (issue 15).  See bench/novm/README.md.
#
#   bench/novm/run.sh [-i INTERVAL] [-a N1] [-b N2] NAME=DIR[:perf-off]... HOSTNAME=HOSTDIR
#
# Each NAME=DIR is a configuration: DIR holds a vmsampler (and, for a build
# with libvirt, its agent vmsampler-virt next to it); ":perf-off" adds
# sources.perf.enabled: false.  The last one is the reference of the ratios
# (the host-only build).  CPU per sample is the marginal cost: perf stat's
# task-clock of the whole process tree (the sampler and its agent) for N2
# samples minus that for N1 samples, over N2-N1, so that the start (the agent
# loading libvirt, the first declarations) cancels out.  "No libvirtd" is a
# libvirt URI whose socket does not exist (sources.libvirt.uri): a libvirtd
# running on the machine does not matter.  REPS (default 3) repetitions,
# the order of the configurations rotating between them; printed: every
# figure, the medians and their ratios to the last configuration.  The
# output goes to /dev/null: the sinks are not what is measured here.
set -eu
iv=10ms n1=100 n2=600
while getopts i:a:b: o; do
	case $o in
	i) iv=$OPTARG ;;
	a) n1=$OPTARG ;;
	b) n2=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] || { echo "usage: $0 [-i INTERVAL] [-a N1] [-b N2] NAME=DIR[:perf-off]... HOSTNAME=HOSTDIR" >&2; exit 2; }
reps=${REPS:-3}
tmp=$(mktemp -d /tmp/vms-novm.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

names=() bins=() confs=()
for c in "$@"; do
	name=${c%%=*} dir=${c#*=} perf=on
	case $dir in *:perf-off) dir=${dir%:perf-off} perf=off ;; esac
	[ -x "$dir/vmsampler" ] || { echo "$dir/vmsampler: not found" >&2; exit 2; }
	conf=-
	if [ -x "$dir/vmsampler-virt" ]; then
		conf=$tmp/$name.yaml
		printf 'sources:\n  libvirt: {uri: "qemu+unix:///system?socket=%s/no-libvirtd-sock"}\n' "$tmp" > "$conf"
		[ $perf = on ] || printf '  perf: {enabled: false}\n' >> "$conf"
	fi
	names+=("$name") bins+=("$dir/vmsampler") confs+=("$conf")
done
nc=${#names[@]}

# task-clock in ms of one run of N samples
clock() { # bin conf n
	local conf=()
	[ "$2" = - ] || conf=(-c "$2")
	perf stat -x, -e task-clock -o "$tmp/ps" -- "$1" "${conf[@]}" -i "$iv" -n "$3" -o /dev/null 2>/dev/null
	awk -F, '/task-clock/ {print $1; exit}' "$tmp/ps"
}

echo "interval $iv, marginal CPU of samples $n1 to $n2, $reps repetitions, $(nproc) CPUs"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$reps"); do
	for k in $(seq 0 $((nc - 1))); do
		i=$(( (k + r) % nc ))
		a=$(clock "${bins[$i]}" "${confs[$i]}" "$n1")
		b=$(clock "${bins[$i]}" "${confs[$i]}" "$n2")
		awk -v i="$i" -v a="$a" -v b="$b" -v d=$((n2 - n1)) \
			'BEGIN {printf "%d %.1f\n", i, (b - a) * 1000 / d}' >> "$tmp/per"
	done
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| configuration | µs CPU per sample (each repetition) | median | / ${names[$((nc - 1))]} |"
echo "|---|---|---|---|"
awk -v names="${names[*]}" -v nc="$nc" '{v[$1] = v[$1] " " $2} END {
	split(names, nm, " ")
	for (i = 0; i < nc; i++) {
		n = split(v[i], x, " ")
		for (p = 2; p <= n; p++)   # insertion sort (mawk has no asort)
			for (q = p; q > 1 && x[q - 1] + 0 > x[q] + 0; q--) { t = x[q]; x[q] = x[q - 1]; x[q - 1] = t }
		m[i] = n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2
	}
	for (i = 0; i < nc; i++)
		printf "| %s |%s | %.1f | %.2f |\n", nm[i + 1], v[i], m[i], m[i] / m[nc - 1]
}' "$tmp/per"

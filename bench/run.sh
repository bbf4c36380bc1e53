#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/run.sh - the core overhead benchmark of issue 2, in one run.
#
#   sudo bench/run.sh            (root: network namespaces and tracefs)
#
# Measures vmsampler (CSV and binary), the floor program (bench/floor.c,
# fair and original variants) and sadc (sysstat) at the machine's own
# interface count and in private network namespaces with 5 and 65
# interfaces, then prints a Markdown table (also written, with every raw
# number, under bench/results/<date>/).  See bench/README.md for what each
# column means and how it is measured.  Takes about 22 minutes.
#
# Knobs (environment):
#   CONFIGS="host 5 65"   interface configurations to run
#   REPS=3                repetitions of the 10 ms CPU runs
#   N1=100 N2=1100        samples of the short and long 10 ms runs
#   S1=5 S2=65            samples of the short and long 1 s runs
#   CG1=100 CG2=600       samples of the callgrind runs (10 ms samplers)
#   SCG1=3 SCG2=13        samples of the callgrind runs of sadc (1 s)
#   TRN=600 TRSKIP=100    samples and start-up skip of the traced runs (10 ms)
#   STRN=20 STRSKIP=5     the same for sadc (1 s)
#   QUIET_MAX=20          wait until the machine is at most this % busy ...
#   WAIT_MAX=900          ... for at most this many seconds per config
#   RESULTS=DIR           where to write (default bench/results/<date>)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
CONFIGS=${CONFIGS:-"host 5 65"}
REPS=${REPS:-3}
N1=${N1:-100}
N2=${N2:-1100}
S1=${S1:-5}
S2=${S2:-65}
CG1=${CG1:-100}
CG2=${CG2:-600}
SCG1=${SCG1:-3}
SCG2=${SCG2:-13}
TRN=${TRN:-600}
TRSKIP=${TRSKIP:-100}
STRN=${STRN:-20}
STRSKIP=${STRSKIP:-5}
QUIET_MAX=${QUIET_MAX:-20}
WAIT_MAX=${WAIT_MAX:-900}
STAMP=$(date -u +%Y%m%d-%H%M%S)
RES=${RESULTS:-$HERE/results/$STAMP}
BUILD=$ROOT/build-bench
SADC=${SADC:-/usr/lib/sysstat/sadc}
SADC_ACT=A_NULL,A_CPU,A_PCSW,A_DISK,A_NET_DEV
SAMPLERS="csv bin floor floor-a sadc"

die() { echo "run.sh: $*" >&2; exit 1; }
log() { echo "== $*" >&2; }

[ "$(id -u)" = 0 ] || die "run as root (network namespaces, tracefs)"
for t in ip valgrind python3 meson ninja strip "${CC:-cc}"; do
	command -v "$t" >/dev/null || die "missing: $t"
done
[ -x "$SADC" ] || die "missing: $SADC (apt-get install sysstat)"

mkdir -p "$RES/bin" "$RES/out" "$RES/cg" "$RES/trace"
RUNS=$RES/runs.txt
: >"$RUNS"
ln -sfn "$(basename "$RES")" "$HERE/results/latest" 2>/dev/null || true

# ---- build ------------------------------------------------------------------
log "building (host-only release) in $BUILD"
if [ ! -f "$BUILD/build.ninja" ]; then
	meson setup "$BUILD" "$ROOT" --buildtype=release -Dlibvirt=disabled -Dperf=disabled \
		-Dtests=disabled >"$RES/build.log"
fi
ninja -C "$BUILD" vmsampler >>"$RES/build.log"
CFLAGS_B=(-O3 -D_GNU_SOURCE -Wall -Wextra) # -O3: what meson's release build uses
for p in floor runner calib; do
	${CC:-cc} "${CFLAGS_B[@]}" -o "$RES/bin/$p" "$HERE/$p.c"
done
cp "$BUILD/vmsampler" "$RES/bin/vmsampler"
VMS=$RES/bin/vmsampler
FLOOR=$RES/bin/floor
RUNNER=$RES/bin/runner
strip -o "$RES/bin/vmsampler.stripped" "$VMS"
strip -o "$RES/bin/floor.stripped" "$FLOOR"
strip -o "$RES/bin/sadc.stripped" "$SADC"
for s in vmsampler floor sadc; do
	echo "kind=size sampler=$s bytes=$(stat -c %s "$RES/bin/$s.stripped")" >>"$RUNS"
done

# ---- the machine ------------------------------------------------------------
cpu_busy() { # cpu_busy FILE: write the "cpu" line of /proc/stat
	head -1 /proc/stat >"$1"
}
busy_pct() { # busy_pct BEFORE AFTER: % of all CPUs busy between the two
	python3 - "$1" "$2" <<'EOF'
import sys
a = [int(x) for x in open(sys.argv[1]).read().split()[1:]]
b = [int(x) for x in open(sys.argv[2]).read().split()[1:]]
d = [y - x for x, y in zip(a, b)]
idle = d[3] + d[4]
tot = sum(d[:8])
print('%.1f' % (100.0 * (tot - idle) / tot if tot else 0))
EOF
}
{
	echo "date_utc=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "command=$0 $*"
	echo "knobs=CONFIGS='$CONFIGS' REPS=$REPS N1=$N1 N2=$N2 S1=$S1 S2=$S2 CG1=$CG1 CG2=$CG2 SCG1=$SCG1 SCG2=$SCG2 TRN=$TRN TRSKIP=$TRSKIP STRN=$STRN STRSKIP=$STRSKIP"
	echo "commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)$(git -C "$ROOT" diff --quiet 2>/dev/null || echo -dirty)"
	echo "kernel=$(uname -r)"
	echo "cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') x $(nproc)"
	echo "mem_kb=$(awk '/MemTotal/{print $2}' /proc/meminfo)"
	echo "cpu_accounting=$(zcat /proc/config.gz 2>/dev/null | grep -E '^CONFIG_(TICK_CPU_ACCOUNTING|VIRT_CPU_ACCOUNTING_GEN|HZ)=' | tr '\n' ' ')"
	echo "sadc=$("$SADC" -V 2>&1 | head -1)"
	echo "valgrind=$(valgrind --version)"
	echo "cc=$(${CC:-cc} --version | head -1)"
	echo "host_ifaces=$(($(wc -l </proc/net/dev) - 2))"
	echo "loadavg_start=$(cat /proc/loadavg)"
} >"$RES/env.txt"
ps -eo pid,pcpu,etime,comm --sort=-pcpu | head -15 >"$RES/top_start.txt"

# ---- network namespaces and the trace instance ------------------------------
NS_PREFIX=vmsbench$$
TRACE=/sys/kernel/tracing/instances/vmsbench$$
cleanup() {
	set +e
	for c in $CONFIGS; do
		[ "$c" = host ] || ip netns del "${NS_PREFIX}_$c" 2>/dev/null
	done
	[ -d "$TRACE" ] && { echo 0 >"$TRACE/tracing_on"; rmdir "$TRACE"; }
}
trap cleanup EXIT
trap 'exit 130' INT TERM

make_ns() { # make_ns NAME IFACES: lo + (IFACES-1) veth ends, all up
	local ns=$1 n=$2 i
	ip netns add "$ns"
	ip -n "$ns" link set lo up
	for ((i = 1; i + 1 < n; i += 2)); do
		ip -n "$ns" link add "v$i" type veth peer name "v$((i + 1))"
		ip -n "$ns" link set "v$i" up
		ip -n "$ns" link set "v$((i + 1))" up
	done
	if ((i < n)); then # an odd count: one more pair, one end moved out
		die "interface counts must be odd (lo + veth pairs): $n"
	fi
}
for c in $CONFIGS; do
	[ "$c" = host ] || make_ns "${NS_PREFIX}_$c" "$c"
done

HAVE_TRACE=0
if [ -d /sys/kernel/tracing/instances ] && mkdir "$TRACE" 2>/dev/null; then
	echo 0 >"$TRACE/tracing_on"
	echo mono >"$TRACE/trace_clock"
	echo 16384 >"$TRACE/buffer_size_kb"
	echo 1 >"$TRACE/events/raw_syscalls/sys_enter/enable"
	echo 1 >"$TRACE/events/raw_syscalls/sys_exit/enable"
	echo 1 >"$TRACE/events/sched/sched_switch/enable"
	HAVE_TRACE=1
else
	log "no tracefs instance: the user/sys split is left out"
fi

# ---- running one sampler ----------------------------------------------------
# cmdline SAMPLER INTERVAL(10ms|1s) N OUTBASE [PHASE_NS] -> the argv, one
# per line.  PHASE_NS: the first tick that long after a wall-clock multiple
# of the interval (vmsampler: --align, phase 0 only; floor: -p).
cmdline() {
	local s=$1 iv=$2 n=$3 o=$4 ph=${5:-} ns
	local -a va=() fa=()
	[ "$iv" = 1s ] && ns=1000000000 || ns=10000000
	if [ -n "$ph" ]; then
		va=(--align="$iv")
		fa=(-p "$ph")
	fi
	case $s in
	csv) printf '%s\n' "$VMS" -i "$iv" -n "$n" "${va[@]}" -o "$o.csv" ;;
	bin) printf '%s\n' "$VMS" -i "$iv" -n "$n" "${va[@]}" -o "$o.vms" ;;
	floor) printf '%s\n' "$FLOOR" "${fa[@]}" "$ns" "$n" "$o.csv" ;;
	floor-a) printf '%s\n' "$FLOOR" -a "${fa[@]}" "$ns" "$n" "$o.csv" ;;
	sadc) rm -f "$o.sa"; printf '%s\n' "$SADC" -S "$SADC_ACT" 1 "$n" "$o.sa" ;;
	esac
}
outfile() { # outfile SAMPLER OUTBASE
	case $1 in bin) echo "$2.vms" ;; sadc) echo "$2.sa" ;; *) echo "$2.csv" ;; esac
}
in_ns() { # in_ns CONFIG CMD...: run CMD in the config's namespace
	local c=$1
	shift
	if [ "$c" = host ]; then "$@"; else ip netns exec "${NS_PREFIX}_$c" "$@"; fi
}
# measure CONFIG PHASE SAMPLER INTERVAL N REP [runner options]: one run, one line in runs.txt
measure() {
	local c=$1 ph=$2 s=$3 iv=$4 n=$5 rep=$6
	shift 6
	local o=$RES/out/$c.$ph.$s.$n.$rep
	local -a cmd
	mapfile -t cmd < <(cmdline "$s" "$iv" "$n" "$o")
	cpu_busy "$RES/.b0"
	local kv
	kv=$(in_ns "$c" "$RUNNER" "$@" -- "${cmd[@]}" 2>>"$RES/stderr.txt") || {
		echo "run.sh: failed: $c $ph $s $iv $n: $kv" >&2
		return 1
	}
	cpu_busy "$RES/.b1"
	echo "kind=run cfg=$c phase=$ph sampler=$s iv=$iv n=$n rep=$rep $kv busy_pct=$(busy_pct "$RES/.b0" "$RES/.b1") out_bytes=$(stat -c %s "$(outfile "$s" "$o")")" >>"$RUNS"
	echo "$kv"
}

# pair CONFIG SAMPLER N REP: SAMPLER (phase 0) and the floor (phase 5 ms)
# at 10 ms, at the same time; two lines in runs.txt
pair() {
	local c=$1 x=$2 n=$3 rep=$4 s o pids=()
	cpu_busy "$RES/.p0"
	for s in "$x" floor; do
		o=$RES/out/$c.pair10.$x.$s.$n.$rep
		local ph=0
		[ "$s" = floor ] && ph=5000000
		mapfile -t cmd < <(cmdline "$s" 10ms "$n" "$o" "$ph")
		in_ns "$c" "$RUNNER" -- "${cmd[@]}" >"$o.kv" 2>>"$RES/stderr.txt" &
		pids+=($!)
	done
	wait "${pids[@]}"
	cpu_busy "$RES/.p1"
	local b
	b=$(busy_pct "$RES/.p0" "$RES/.p1")
	for s in "$x" floor; do
		o=$RES/out/$c.pair10.$x.$s.$n.$rep
		echo "kind=run cfg=$c phase=pair10 pair=$x sampler=$s iv=10ms n=$n rep=$rep $(cat "$o.kv") busy_pct=$b out_bytes=$(stat -c %s "$(outfile "$s" "$o")")" >>"$RUNS"
	done
}

# wait_quiet CONFIG: wait until the machine is at most QUIET_MAX % busy
wait_quiet() {
	local c=$1 waited=0 b
	while :; do
		cpu_busy "$RES/.q0"
		sleep 5
		cpu_busy "$RES/.q1"
		b=$(busy_pct "$RES/.q0" "$RES/.q1")
		if python3 -c "import sys; sys.exit(0 if $b <= $QUIET_MAX else 1)"; then
			break
		fi
		if ((waited >= WAIT_MAX)); then
			log "still $b% busy after ${waited}s: measuring anyway (see busy_pct in runs.txt)"
			break
		fi
		log "machine $b% busy (> $QUIET_MAX%): waiting ($waited s so far)"
		ps -eo pid,pcpu,etime,comm --sort=-pcpu | head -6 >>"$RES/top_waits.txt"
		sleep 25
		waited=$((waited + 30))
	done
	echo "kind=quiet cfg=$c busy_pct=$b waited_s=$waited loadavg=$(cut -d' ' -f1-3 /proc/loadavg | tr ' ' ,)" >>"$RUNS"
}

# ---- calibration of the traced user time ------------------------------------
if ((HAVE_TRACE)); then
	log "calibrating the traced user time"
	for i in 1 2 3; do
		echo >"$TRACE/trace"
		kv=$("$RUNNER" -T "$TRACE" -- "$RES/bin/calib")
		pid=${kv#pid=}
		pid=${pid%% *}
		cp "$TRACE/trace" "$RES/trace/calib.$i.txt"
		echo "kind=calib rep=$i $(python3 "$HERE/tracesplit.py" "$RES/trace/calib.$i.txt" "$pid" 100)" >>"$RUNS"
		gzip -f "$RES/trace/calib.$i.txt"
	done
fi

# ---- the configurations ----------------------------------------------------
for c in $CONFIGS; do
	ifaces=$(($(in_ns "$c" cat /proc/net/dev | wc -l) - 2))
	echo "kind=config cfg=$c ifaces=$ifaces" >>"$RUNS"
	log "config $c: $ifaces interfaces"
	wait_quiet "$c"

	# CPU at 10 ms: N1 and N2 samples, REPS times, samplers interleaved
	for ((rep = 1; rep <= REPS; rep++)); do
		for s in csv bin floor floor-a; do
			log "$c: cpu 10ms $s rep $rep"
			measure "$c" cpu10 "$s" 10ms "$N1" "$rep" >/dev/null
			measure "$c" cpu10 "$s" 10ms "$N2" "$rep" >/dev/null
		done
	done

	# which interfaces vmsampler's output covers (compared in report.py
	# with the interfaces of the namespace)
	hdr=$(head -1 "$RES/out/$c.cpu10.csv.$N2.1.csv")
	echo "kind=coverage cfg=$c sampler=csv ifaces=$(tr , '\n' <<<"$hdr" | grep '^net\.' |
		sed 's/\.[^.]*$//' | sort -u | wc -l)" >>"$RUNS"

	# CPU at 10 ms side by side with the floor: the runs above are alone,
	# and a run's cost moves by 10-20 % with what the rest of the machine
	# does at the time (a shared VM); a sampler and the floor sampling at
	# the same time, 5 ms apart (so never at the same moment), see the
	# same machine, and their ratio is steady to a few per cent.
	for ((rep = 1; rep <= REPS; rep++)); do
		for s in csv bin floor-a; do
			log "$c: cpu 10ms $s beside the floor, rep $rep"
			pair "$c" "$s" "$N1" "$rep"
			pair "$c" "$s" "$N2" "$rep"
		done
	done

	# CPU at 1 s: all five at once, started 200 ms apart so that they never
	# run at the same moment (each takes well under 200 ms per sample).
	# -R: the runners also read the samplers' exact Rss every 20 ms (the
	# reading is charged to the runner, not to the sampler)
	for n in $S1 $S2; do
		log "$c: cpu 1s, $n samples (all samplers, staggered)"
		cpu_busy "$RES/.g0"
		pids=()
		for s in $SAMPLERS; do
			o=$RES/out/$c.cpu1s.$s.$n.1
			mapfile -t cmd < <(cmdline "$s" 1s "$n" "$o")
			in_ns "$c" "$RUNNER" -R -- "${cmd[@]}" >"$o.kv" 2>>"$RES/stderr.txt" &
			pids+=($!)
			sleep 0.2
		done
		wait "${pids[@]}"
		cpu_busy "$RES/.g1"
		b=$(busy_pct "$RES/.g0" "$RES/.g1")
		for s in $SAMPLERS; do
			o=$RES/out/$c.cpu1s.$s.$n.1
			echo "kind=run cfg=$c phase=cpu1s sampler=$s iv=1s n=$n rep=1 $(cat "$o.kv") busy_pct=$b out_bytes=$(stat -c %s "$(outfile "$s" "$o")")" >>"$RUNS"
		done
	done

	# user-space instructions (callgrind)
	for s in $SAMPLERS; do
		if [ "$s" = sadc ]; then iv=1s ns1=$SCG1 ns2=$SCG2; else iv=10ms ns1=$CG1 ns2=$CG2; fi
		for n in $ns1 $ns2; do
			log "$c: callgrind $s $n samples"
			o=$RES/out/$c.cg.$s.$n.1
			f=$RES/cg/callgrind.out.$c.$s.$n
			mapfile -t cmd < <(cmdline "$s" "$iv" "$n" "$o")
			in_ns "$c" valgrind --tool=callgrind --callgrind-out-file="$f" "${cmd[@]}" \
				2>"$RES/cg/valgrind.$c.$s.$n.log"
			ir=$(awk '/^totals:/{print $2}' "$f")
			echo "kind=cg cfg=$c sampler=$s n=$n ir=$ir" >>"$RUNS"
		done
	done

	# user/sys split (ftrace) and the exact resident set (smaps_rollup)
	for s in $SAMPLERS; do
		if [ "$s" = sadc ]; then iv=1s n=$STRN skip=$STRSKIP; else iv=10ms n=$TRN skip=$TRSKIP; fi
		log "$c: traced $s"
		if ((HAVE_TRACE)); then
			echo >"$TRACE/trace"
			# inside the namespace, `ip netns exec` has mounted a fresh /sys
			# without tracefs: reach ours through this shell's root
			kv=$(measure "$c" trace "$s" "$iv" "$n" 1 -R -T "/proc/$$/root$TRACE")
			pid=${kv#pid=}
			pid=${pid%% *}
			t=$RES/trace/$c.$s.txt
			cp "$TRACE/trace" "$t"
			echo "kind=split cfg=$c sampler=$s $(python3 "$HERE/tracesplit.py" "$t" "$pid" "$skip")" >>"$RUNS"
			gzip -f "$t"
		else
			measure "$c" trace "$s" "$iv" "$n" 1 -R >/dev/null
		fi
	done
done

echo "loadavg_end=$(cat /proc/loadavg)" >>"$RES/env.txt"
echo "date_end_utc=$(date -u +%Y-%m-%dT%H:%M:%SZ)" >>"$RES/env.txt"
ps -eo pid,pcpu,etime,comm --sort=-pcpu | head -15 >"$RES/top_end.txt"
rm -f "$RES"/.[bgpq][01]
python3 "$HERE/report.py" "$RES" | tee "$RES/table.md"

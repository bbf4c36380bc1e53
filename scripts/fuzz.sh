#!/bin/bash
# scripts/fuzz.sh [SECONDS_PER_TARGET] - build every fuzz target with clang's
# libFuzzer, ASan and UBSan (build-fuzz/, -Dfuzz=enabled) and run each for
# SECONDS (default 60) on a scratch copy of its corpus (fuzz/corpus/NAME; the
# committed corpus is not changed: `meson test` replays it).  Prints, per
# target, the executions, executions per second, coverage and features at the
# end.  A crash, a leak, a timeout or an out-of-memory fails the script; the
# input is kept in fuzz-crashes/NAME/ to be added to the corpus with the fix.
. "$(dirname "$0")/lib.sh"
SECS=${1:-60}
apt_install $BUILD_PKGS clang libclang-rt-14-dev libcmocka-dev
need_libperf
dir=build-fuzz
if [ ! -f "$ROOT/$dir/build.ninja" ]; then
	echo "== $dir: configuring (clang, libFuzzer, ASan+UBSan)"
	CC=clang meson setup "$ROOT/$dir" "$ROOT" -Dfuzz=enabled -Dtests=disabled -Dman=disabled \
		-Db_sanitize=address,undefined -Db_lundef=false >"$ROOT/$dir.log" 2>&1 \
		|| { tail -n 30 "$ROOT/$dir.log" >&2; exit 1; }
fi
echo "== $dir: building"
ninja -C "$ROOT/$dir" >"$ROOT/$dir.log" 2>&1 || { grep -E -A3 'error|FAILED' "$ROOT/$dir.log" | head -n 40 >&2; exit 1; }

scratch=$(mktemp -d /tmp/vms-fuzz.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
crashes=$ROOT/fuzz-crashes
# the targets run side by side, one per CPU (each libFuzzer process is
# single-threaded: one after the other, CI's 2 CPUs were half idle), each
# for its SECS; the results are printed in the targets' order
par=$(nproc)
names=()
for src in "$ROOT"/fuzz/fuzz_*.c; do
	name=$(basename "$src" .c)
	name=${name#fuzz_}
	bin=$ROOT/$dir/fuzz/fuzz-$name
	[ -x "$bin" ] || { echo "no $bin" >&2; exit 1; }
	names+=("$name")
	mkdir -p "$scratch/$name" "$crashes/$name"
	cp -r "$ROOT/fuzz/corpus/$name/." "$scratch/$name/" 2>/dev/null || true
	dict=()
	[ -f "$ROOT/fuzz/$name.dict" ] && dict=(-dict="$ROOT/fuzz/$name.dict")
	while [ "$(jobs -rp | wc -l)" -ge "$par" ]; do wait -n || true; done
	# (a crash is reported below with the others, not by set -e)
	(
		rc=0
		ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
			"$bin" "$scratch/$name" "${dict[@]}" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 \
			-artifact_prefix="$crashes/$name/" -print_final_stats=1 >"$scratch/$name.log" 2>&1 || rc=$?
		echo "$rc" >"$scratch/$name.rc"
	) &
done
wait
printf '%-11s %10s %9s %6s %6s  %s\n' target runs exec/s cov ft result
failed=0
for name in "${names[@]}"; do
	log=$scratch/$name.log
	rc=$(cat "$scratch/$name.rc" 2>/dev/null || echo '?')
	runs=$(awk '/stat::number_of_executed_units/ {print $2}' "$log")
	eps=$(awk '/stat::average_exec_per_sec/ {print $2}' "$log")
	cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | awk '{print $2}')
	ft=$(grep -oE 'ft: [0-9]+' "$log" | tail -1 | awk '{print $2}')
	if [ "$rc" = 0 ]; then
		res=ok
		rmdir "$crashes/$name" 2>/dev/null || true
	else
		res="FAILED (exit $rc; input in fuzz-crashes/$name/)"
		failed=$((failed + 1))
		grep -E 'ERROR|SUMMARY|runtime error' "$log" | head -n 5 >&2
	fi
	printf '%-11s %10s %9s %6s %6s  %s\n' "$name" "${runs:-?}" "${eps:-?}" "${cov:-?}" "${ft:-?}" "$res"
done
rmdir "$crashes" 2>/dev/null || true
[ "$failed" = 0 ] || { echo "fuzz: $failed target(s) failed" >&2; exit 1; }
echo "fuzz: every target ran ${SECS} s clean"

# SPDX-License-Identifier: MIT
# bench/timeit.sh - sourced by the benchmarks' scripts.
#
# timeit FMT CMD...: REPS (default 1) runs of CMD under /usr/bin/time, its
# output discarded; prints FMT (printf) with the median wall seconds (by
# time), the largest resident set size seen, in MiB, and the CPU seconds
# (user + system) of the median run (a FMT may leave the last out).  A run that fails
# prints its stderr and ends the script's measurement with status 1.
timeit() {
	local fmt=$1 i tf
	shift
	command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (Debian: apt-get install time)" >&2; return 1; }
	tf=$(mktemp /tmp/vms-timeit.XXXXXX)
	for i in $(seq "${REPS:-1}"); do
		/usr/bin/time -o "$tf" -f '%e %M %U %S' "$@" >/dev/null 2>"$tf.err" || { cat "$tf.err" >&2; exit 1; }
		tail -n 1 "$tf"
	done | sort -n | awk -v n="${REPS:-1}" -v fmt="$fmt" '{t[NR] = $1; m[NR] = $2; c[NR] = $3 + $4} END {
		mx = 0; for (i = 1; i <= NR; i++) if (m[i] > mx) mx = m[i]
		printf fmt, t[int((n + 1) / 2)], mx / 1024, c[int((n + 1) / 2)] }'
	local rc=${PIPESTATUS[0]}
	rm -f "$tf" "$tf.err"
	return "$rc"
}

/* SPDX-License-Identifier: MIT */
/* report.h - `vmsampler report`: sar's sections (CPU, queue, tasks and
 * interrupts, disks, interfaces) and a per-VM section from a binary stream
 * or a live ring, per interval with Average rows, or summarized (min, avg,
 * max, p95), as text or JSON.
 *
 *   vmsampler report FILE.vms|RING [--interval N] [--from T] [--to T]
 *                    [--summary] [--vm] [--json]
 *
 * Every number comes from the rates of `dump --rates` (src/lib/rates.c): a
 * row over several frames sums each rate's terms (vms_rate_term), which
 * is sar's "counters at the end minus at the start over the whole time".
 * Exit status: 0 (also after a torn tail, reported on stderr), 1 for a
 * damaged or foreign input (the report covers what was read before the
 * damage) or an I/O error, 2 for a usage error.  See vmsampler(1). */
#ifndef VMS_REPORT_H
#define VMS_REPORT_H

#include <stdint.h>

/* argv[0] is "report". */
int vms_report_main(int argc, char **argv);

/* A time given with --from / --to (and report --window): seconds from
 * the first frame, a time (YYYY-MM-DDTHH:MM[:SS[.frac]][Z|+HH:MM], local
 * without a zone) or a time of day HH:MM[:SS] on the first frame's date. */
struct vms_tspec {
	enum { VMS_T_NONE, VMS_T_REL, VMS_T_ABS, VMS_T_TOD } kind;
	double rel;      /* seconds from the first frame */
	int64_t abs_ns;  /* VMS_T_ABS, and VMS_T_TOD once resolved */
	double tod;      /* seconds since local midnight */
	const char *text;
};
/* 0 or -EINVAL */
int vms_report_parse_time(const char *s, struct vms_tspec *t);
/* A time of day becomes a time on the (local) date of t0_real. */
void vms_report_resolve_tod(struct vms_tspec *t, int64_t t0_real);

#endif

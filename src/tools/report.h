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

/* argv[0] is "report". */
int vms_report_main(int argc, char **argv);

#endif

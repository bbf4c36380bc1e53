/* SPDX-License-Identifier: MIT */
/* report_intf.h - `vmsampler report --interference FILE`: whom each VM's
 * vCPUs waited behind over a window of a run (the interference source's
 * columns, doc/interference.md), as a victim x culprit table (seconds of
 * run delay, share of the victim's run delay) and a noisy-neighbour
 * ranking (for each culprit, the delay it caused other VMs, and to
 * whom), as text, CSV (victim,culprit,seconds,share) or JSON.
 *
 *   vmsampler report --interference FILE [--from T] [--to T | --window W]
 *                    [--format text|csv|json]
 *
 * The numbers are the counters' deltas over the window's intervals, from
 * libvmsampler's rate stream (resets, missing values and generations
 * handled as in every reader).  See vmsampler(1), REPORT. */
#ifndef VMS_REPORT_INTF_H
#define VMS_REPORT_INTF_H

#include <stdbool.h>

/* argv as report's (argv[0] "report"): does it ask for --interference? */
bool vms_report_intf_wanted(int argc, char **argv);
/* report --interference; the exit status. */
int vms_report_intf_main(int argc, char **argv);

#endif

/* SPDX-License-Identifier: MIT */
/* compare.h - `vmsampler report --compare A.vms B.vms` and `vmsampler
 * report FILE --window W1 --window W2`: each quantity of the report (host
 * CPU states, queue and load, tasks and interrupts, disks, interfaces,
 * memory, paging and pressure) and each VM's (CPU, steal, run delay,
 * throttling, block and network rates, IPC) in two runs or two windows:
 * mean, p50, p95 and max in each, the difference, and whether it is real
 * (a block bootstrap interval, stats.h), as text, CSV or JSON.  See
 * vmsampler(1), REPORT. */
#ifndef VMS_COMPARE_H
#define VMS_COMPARE_H

#include <stdbool.h>

/* argv as report's (argv[0] "report"); report's main calls it when it
 * meets --compare or --window. */
int vms_compare_main(int argc, char **argv);
/* argv asks for a comparison */
bool vms_compare_wanted(int argc, char **argv);

#endif

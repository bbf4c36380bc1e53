/* SPDX-License-Identifier: MIT */
/* cpuirq.h - each CPU's busy and interrupt time per tick, from the
 * per-CPU lines of /proc/stat (the file shared with procstat: one read a
 * tick), for the interference estimates (doc/interference.md):
 *   busy  user + nice + system + irq + softirq (guest time is inside user)
 *   irq   irq + softirq
 * in ns (USER_HZ ticks x 10^9 / USER_HZ).  Reading allocates nothing. */
#ifndef VMS_CPUIRQ_H
#define VMS_CPUIRQ_H

#include <stdbool.h>
#include <stdint.h>

#include "procfile.h"

struct vms_cpuirq {
	struct vms_procfile *stat;
	unsigned ncpu;           /* the highest cpuN line + 1 */
	uint64_t tick_ns;
	uint64_t *busy, *irq;    /* [ncpu] as last read, in ticks */
	uint64_t *dbusy, *dirq;  /* [ncpu] this tick's, ns (0: not known) */
	bool have;               /* a read succeeded before */
};

/* Open /proc/stat under proc_dirfd and size for its CPUs.  0 or -errno
 * (-ENOENT: no per-CPU lines). */
int vms_cpuirq_open(struct vms_cpuirq *c, int proc_dirfd);
/* This tick's deltas into dbusy, dirq (read again only for a new tick
 * index); false when there are none (the first read, a failed read).
 * Damaged lines are counted in *parse_errors. */
bool vms_cpuirq_read(struct vms_cpuirq *c, uint64_t tick, uint32_t *parse_errors);
void vms_cpuirq_close(struct vms_cpuirq *c);

#endif

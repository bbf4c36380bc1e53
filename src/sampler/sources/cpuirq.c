/* SPDX-License-Identifier: MIT */
/* cpuirq.c - each CPU's busy and interrupt time per tick (cpuirq.h). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpuirq.h"
#include "cursor.h"
#include "parse.h"

#define CPUIRQ_MAX_CPU 8192

int vms_cpuirq_open(struct vms_cpuirq *c, int proc_dirfd)
{
	memset(c, 0, sizeof(*c));
	long hz = sysconf(_SC_CLK_TCK);
	c->tick_ns = 1000000000ull / (uint64_t)(hz > 0 ? hz : 100);
	int r = vms_procfile_shared_open(&c->stat, proc_dirfd, "stat", 4096);
	if (r < 0)
		return r;
	struct vms_cur cur;
	struct vms_stat_line sl;
	vms_cur_init(&cur, c->stat->buf, c->stat->len);
	while ((r = vms_stat_next(&cur, &sl)) != 0)
		if (r > 0 && sl.key == VMS_STAT_CPU && sl.cpu < CPUIRQ_MAX_CPU && sl.cpu >= c->ncpu)
			c->ncpu = sl.cpu + 1;
	if (!c->ncpu)
		return -ENOENT;
	c->busy = calloc(c->ncpu, sizeof(*c->busy));
	c->irq = calloc(c->ncpu, sizeof(*c->irq));
	c->dbusy = calloc(c->ncpu, sizeof(*c->dbusy));
	c->dirq = calloc(c->ncpu, sizeof(*c->dirq));
	if (!c->busy || !c->irq || !c->dbusy || !c->dirq)
		return -ENOMEM;
	return 0;
}

bool vms_cpuirq_read(struct vms_cpuirq *c, uint64_t tick, uint32_t *parse_errors)
{
	for (unsigned i = 0; i < c->ncpu; i++)
		c->dbusy[i] = c->dirq[i] = 0;
	if (vms_procfile_shared_read(c->stat, tick) < 0) {
		c->have = false;
		return false;
	}
	struct vms_cur cur;
	struct vms_stat_line sl;
	int r;
	vms_cur_init(&cur, c->stat->buf, c->stat->len);
	while ((r = vms_stat_next(&cur, &sl)) != 0) {
		if (r < 0) {
			(*parse_errors)++;
			continue;
		}
		if (sl.key != VMS_STAT_CPU || sl.cpu >= c->ncpu || sl.nfields < 7)
			continue;
		/* user nice system idle iowait irq softirq */
		uint64_t irq = sl.v[5] + sl.v[6], busy = sl.v[0] + sl.v[1] + sl.v[2] + irq;
		if (c->have && busy >= c->busy[sl.cpu] && irq >= c->irq[sl.cpu]) {
			c->dbusy[sl.cpu] = (busy - c->busy[sl.cpu]) * c->tick_ns;
			c->dirq[sl.cpu] = (irq - c->irq[sl.cpu]) * c->tick_ns;
		}
		c->busy[sl.cpu] = busy;
		c->irq[sl.cpu] = irq;
	}
	bool had = c->have;
	c->have = true;
	return had;
}

void vms_cpuirq_close(struct vms_cpuirq *c)
{
	free(c->busy);
	free(c->irq);
	free(c->dbusy);
	free(c->dirq);
	if (c->stat)
		vms_procfile_shared_close(c->stat);
	memset(c, 0, sizeof(*c));
}

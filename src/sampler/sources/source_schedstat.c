/* SPDX-License-Identifier: MIT */
/* source_schedstat.c - /proc/schedstat: per CPU, the time it ran tasks,
 * the time tasks waited on its run queue and the time slices it ran.
 *
 * Columns sched.N.time, sched.N.delay (ns) and sched.N.slices, counters,
 * one triple per CPU line in the file's order (the kernel lists the
 * online CPUs).  A kernel built without CONFIG_SCHEDSTATS has no file:
 * open fails with ENOENT, the host says so in one line and the other
 * sources keep sampling.  A version whose cpu lines are not known
 * (parse.h: 15 to 17) is a parse error each tick and no column is
 * declared (or, if it changes under a schema, every column is missing);
 * a damaged cpu line is a parse error and its CPU's columns are missing,
 * a CPU given twice too (the first line is kept).  A CPU
 * that comes or goes is a new schema. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "procfile.h"
#include "source.h"

struct schedstat {
	struct vms_procfile f;
	uint32_t *cpu;  /* the CPUs declared, in file order */
	uint8_t *seen;  /* this tick: the CPU's line was read */
	unsigned ncpu;
};

static int ss_open(struct vms_source *src, const struct vms_source_env *env)
{
	(void)env;
	struct schedstat *p = src->priv;
	return vms_procfile_open(&p->f, src->proc_dirfd, "schedstat", 4096);
}

static void ss_forget(struct schedstat *p)
{
	free(p->cpu);
	free(p->seen);
	p->cpu = NULL;
	p->seen = NULL;
	p->ncpu = 0;
}

static int ss_declare(struct vms_source *src, struct vms_schema_builder *b, const struct vms_source_env *env)
{
	(void)env;
	const struct vms_coldef ns = {.kind = VMS_KIND_COUNTER, .unit = VMS_UNIT_NS, .wrap_bits = 64};
	const struct vms_coldef count = {.kind = VMS_KIND_COUNTER, .unit = VMS_UNIT_COUNT, .wrap_bits = 64};
	struct schedstat *p = src->priv;
	struct vms_schedstat_cpu l;
	struct vms_cur c;
	unsigned version, cap;
	int r;

	ss_forget(p);
	r = vms_procfile_read(&p->f);
	if (r < 0)
		return r;
	vms_cur_init(&c, p->f.buf, p->f.len);
	r = vms_schedstat_version(&c, &version);
	if (r == -EPROTONOSUPPORT)
		return 0; /* no columns: each sample counts a parse error */
	if (r < 0)
		return r == -ENODATA ? -ENODATA : -EINVAL;
	/* a cpu line is at least 22 bytes ("cpu0" and 9 numbers) */
	cap = (unsigned)(p->f.len / 22 + 1);
	p->cpu = malloc(cap * sizeof(*p->cpu));
	p->seen = malloc(cap);
	if (!p->cpu || !p->seen)
		return -ENOMEM;
	while ((r = vms_schedstat_next(&c, &l)) != 0) {
		if (r < 0)
			continue; /* a damaged line declares nothing */
		bool dup = false;
		for (unsigned i = 0; i < p->ncpu && !dup; i++)
			dup = p->cpu[i] == l.cpu;
		if (dup || p->ncpu == cap)
			continue;
		p->cpu[p->ncpu++] = l.cpu;
	}
	for (unsigned i = 0; i < p->ncpu; i++) {
		char ent[16];
		snprintf(ent, sizeof(ent), "%u", p->cpu[i]);
		vms_schema_addc(b, &ns, VMS_G_SCHED, ent, NULL, "time");
		vms_schema_addc(b, &ns, VMS_G_SCHED, ent, NULL, "delay");
		vms_schema_addc(b, &count, VMS_G_SCHED, ent, NULL, "slices");
	}
	if (b->err)
		return b->err;
	return p->ncpu ? 0 : -ENODATA;
}

/* The index of CPU cpu among the declared, looked for first at `hint`
 * (the lines come in the declared order), or -1. */
static int ss_find(const struct schedstat *p, uint32_t cpu, unsigned hint)
{
	if (hint < p->ncpu && p->cpu[hint] == cpu)
		return (int)hint;
	for (unsigned i = 0; i < p->ncpu; i++)
		if (p->cpu[i] == cpu)
			return (int)i;
	return -1;
}

static int ss_sample(struct vms_source *src, uint64_t *slots, struct vms_tick_ctx *t)
{
	struct schedstat *p = src->priv;
	struct vms_schedstat_cpu l;
	struct vms_cur c;
	unsigned version, next = 0, bad = 0;
	int r = vms_procfile_read(&p->f);
	if (r < 0)
		return r;
	vms_slots_none(slots, 3 * p->ncpu);
	vms_cur_init(&c, p->f.buf, p->f.len);
	if (vms_schedstat_version(&c, &version) < 0) {
		t->parse_errors++; /* a format not known: nothing believed */
		return 0;
	}
	if (!p->ncpu)
		return VMS_RESCHEMA; /* declared under a version not known */
	memset(p->seen, 0, p->ncpu);
	while ((r = vms_schedstat_next(&c, &l)) != 0) {
		if (r < 0) {
			bad++;
			t->parse_errors++;
			continue;
		}
		int i = ss_find(p, l.cpu, next);
		if (i < 0)
			return VMS_RESCHEMA; /* a CPU came online */
		if (p->seen[i]) {
			bad++; /* the same CPU twice: keep the first */
			t->parse_errors++;
			continue;
		}
		p->seen[i] = 1;
		next = (unsigned)i + 1;
		slots[3 * i] = l.run_ns;
		slots[3 * i + 1] = l.wait_ns;
		slots[3 * i + 2] = l.slices;
	}
	if (!bad && memchr(p->seen, 0, p->ncpu))
		return VMS_RESCHEMA; /* a CPU went offline */
	return 0;
}

static void ss_close(struct vms_source *src)
{
	struct schedstat *p = src->priv;
	vms_procfile_close(&p->f);
	ss_forget(p);
}

VMS_SOURCE_OPS(schedstat, ss);

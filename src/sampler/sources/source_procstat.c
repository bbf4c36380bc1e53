/* SPDX-License-Identifier: MIT */
/* source_procstat.c - /proc/stat: CPU time, context switches, forks,
 * interrupts, runnable and blocked tasks.
 *
 * Columns exist only for what this kernel prints: the cpu fields of its
 * `cpu` line (a 7-field kernel has no steal or guest column), the CPUs that
 * are online (an offline CPU has no line; when the set changes, sample()
 * asks for a new schema), and the keyed lines that are there (2.6.29 has
 * no softirq line).  cpu.all is the kernel's own total line; it is never
 * checked against the sum of the cpuN lines, which can be larger (the
 * kernel sums per-CPU counters without a lock). */
#include <stdlib.h>
#include <string.h>

#include "entity.h"
#include "parse.h"
#include "procfile.h"
#include "source.h"

/* CPU numbers at or above this are not believed (NR_CPUS is at most 8192
 * today); such a line counts as malformed. */
#define PS_MAX_CPU 65536u

/* keyed lines, in column order */
static const struct {
	enum vms_stat_key key;
	const char *name;
	bool gauge;
} ps_keys[] = {
	{VMS_STAT_CTXT, "ctxt", false},
	{VMS_STAT_PROCESSES, "processes", false},
	{VMS_STAT_INTR, "intr", false},
	{VMS_STAT_SOFTIRQ, "softirq", false},
	{VMS_STAT_PROCS_RUNNING, "procs_running", true},
	{VMS_STAT_PROCS_BLOCKED, "procs_blocked", true},
};
#define PS_NKEY (VMS_STAT_SOFTIRQ + 1)

struct procstat {
	struct vms_procfile f;
	bool per_cpu;
	/* the entities, slot -1 if not declared: cpu.all, the keyed lines
	 * (by enum vms_stat_key), then the CPUs by number; nwant: those
	 * declared */
	struct vms_enttab tab;
	uint32_t ncpu_map;          /* CPU entities */
};

static struct vms_ent *ps_all(struct procstat *p)
{
	return &p->tab.ent[0];
}

static struct vms_ent *ps_key(struct procstat *p, unsigned key)
{
	return &p->tab.ent[1 + key];
}

static struct vms_ent *ps_cpu(struct procstat *p, uint32_t cpu)
{
	return &p->tab.ent[1 + PS_NKEY + cpu];
}

static void ps_forget(struct procstat *p)
{
	vms_enttab_free(&p->tab);
	p->ncpu_map = 0;
}

static int ps_open(struct vms_source *src, const struct vms_source_env *env)
{
	(void)env;
	struct procstat *p = src->priv;
	ps_forget(p);
	p->per_cpu = src->sconf && src->sconf->per_cpu;
	return vms_procfile_open(&p->f, src->proc_dirfd, "stat", 4096);
}

/* "cpu3 ..." when per-CPU columns are off: skipped without parsing. */
static bool is_cpun_line(const struct vms_cur *c)
{
	return vms_cur_left(c) > 3 && memcmp(c->p, "cpu", 3) == 0 &&
	       vms_is_digit(c->p[3]);
}

static int ps_declare(struct vms_source *src, struct vms_schema_builder *b, const struct vms_source_env *env)
{
	(void)env;
	const struct vms_coldef tick = {.kind = VMS_KIND_COUNTER, .unit = VMS_UNIT_TICKS,
					.wrap_bits = 64};
	const struct vms_coldef count = {.kind = VMS_KIND_COUNTER, .unit = VMS_UNIT_COUNT,
					.wrap_bits = 64};
	const struct vms_coldef tasks = {.kind = VMS_KIND_GAUGE, .unit = VMS_UNIT_TASKS};
	struct procstat *p = src->priv;
	struct vms_stat_line sl;
	struct vms_cur c;
	uint32_t maxcpu = 0, slot = 0;
	bool anycpu = false;
	int r;

	ps_forget(p);
	r = vms_procfile_read(&p->f);
	if (r < 0)
		return r;

	/* pass 1: which lines exist, and the highest CPU number */
	vms_cur_init(&c, p->f.buf, p->f.len);
	while ((r = vms_stat_next(&c, &sl)) != 0) {
		if (r < 0)
			continue; /* a damaged line declares nothing */
		if (sl.key == VMS_STAT_CPU && p->per_cpu && sl.cpu < PS_MAX_CPU) {
			if (sl.cpu >= maxcpu)
				maxcpu = sl.cpu;
			anycpu = true;
		}
	}
	r = vms_enttab_reset(&p->tab, 1 + PS_NKEY + (anycpu ? maxcpu + 1 : 0), 0);
	if (r < 0)
		return r;
	while (vms_enttab_add(&p->tab, NULL, 0, NULL, 0))
		;
	p->ncpu_map = anycpu ? maxcpu + 1 : 0;

	/* pass 2: note each entity (the first line wins over duplicates) */
	vms_cur_init(&c, p->f.buf, p->f.len);
	while ((r = vms_stat_next(&c, &sl)) != 0) {
		struct vms_ent *e = NULL;
		if (r < 0)
			continue;
		if (sl.key == VMS_STAT_CPU_ALL)
			e = ps_all(p);
		else if (sl.key == VMS_STAT_CPU && sl.cpu < p->ncpu_map)
			e = ps_cpu(p, sl.cpu);
		else if (sl.key != VMS_STAT_OTHER && sl.key != VMS_STAT_CPU)
			e = ps_key(p, sl.key);
		if (e && e->slot < 0) {
			e->slot = 0; /* placed below, in column order */
			e->nfields = (uint8_t)sl.nfields;
		}
	}

	/* columns: cpu.all, cpu.N in CPU order, then the keyed lines */
	struct vms_ent *all = ps_all(p);
	if (all->slot >= 0) {
		all->slot = (int32_t)slot;
		all->ncols = all->nfields;
		for (unsigned f = 0; f < all->nfields; f++)
			vms_schema_addc(b, &tick, VMS_G_CPU, "all", NULL, vms_stat_cpu_field_names[f]);
		slot += all->nfields;
		p->tab.nwant++;
	}
	for (uint32_t n = 0; n < p->ncpu_map; n++) {
		struct vms_ent *e = ps_cpu(p, n);
		if (e->slot < 0)
			continue;
		e->slot = (int32_t)slot;
		e->ncols = e->nfields;
		char cpu[16];
		snprintf(cpu, sizeof(cpu), "%u", n);
		for (unsigned f = 0; f < e->nfields; f++)
			vms_schema_addc(b, &tick, VMS_G_CPU, cpu, NULL, vms_stat_cpu_field_names[f]);
		slot += e->nfields;
		p->tab.nwant++;
	}
	for (unsigned k = 0; k < VMS_ARRAY_SIZE(ps_keys); k++) {
		struct vms_ent *e = ps_key(p, ps_keys[k].key);
		if (e->slot < 0)
			continue;
		e->slot = (int32_t)slot++;
		e->ncols = 1;
		vms_schema_addc(b, ps_keys[k].gauge ? &tasks : &count, VMS_G_STAT, NULL, NULL, ps_keys[k].name);
		p->tab.nwant++;
	}
	if (b->err)
		return b->err;
	return p->tab.nwant ? 0 : -ENODATA;
}

static int ps_sample(struct vms_source *src, uint64_t *slots, struct vms_tick_ctx *t)
{
	struct procstat *p = src->priv;
	struct vms_stat_line sl;
	struct vms_cur c;
	struct vms_enttab *tab = &p->tab;
	int r;

	r = vms_enttab_read(tab, &p->f, &c);
	if (r < 0)
		return r;
	for (;;) {
		struct vms_ent *e;
		if (!p->per_cpu && is_cpun_line(&c)) {
			vms_cur_skip_line(&c);
			continue;
		}
		r = vms_stat_next(&c, &sl);
		if (r == 0)
			break;
		if (r < 0) {
			vms_enttab_bad(tab, t);
			continue;
		}
		switch (sl.key) {
		case VMS_STAT_OTHER:
			continue;
		case VMS_STAT_CPU_ALL:
			e = ps_all(p);
			break;
		case VMS_STAT_CPU:
			if (!p->per_cpu)
				continue; /* one the fast skip missed (" cpu3 ...") */
			if (sl.cpu >= PS_MAX_CPU) {
				vms_enttab_bad(tab, t);
				continue;
			}
			if (sl.cpu >= p->ncpu_map)
				return VMS_RESCHEMA; /* a CPU came online */
			e = ps_cpu(p, sl.cpu);
			break;
		default:
			e = ps_key(p, sl.key);
			break;
		}
		if (VMS_UNLIKELY(e->slot < 0))
			return VMS_RESCHEMA; /* a line we did not declare */
		if (VMS_UNLIKELY(vms_ent_seen(tab, e))) {
			vms_enttab_bad(tab, t); /* the same entity twice: keep the first */
			continue;
		}
		if (sl.key == VMS_STAT_CPU_ALL || sl.key == VMS_STAT_CPU) {
			if (VMS_UNLIKELY(sl.nfields != e->nfields)) {
				/* a cut line that still has 4+ fields: not believed */
				vms_enttab_bad(tab, t);
				continue;
			}
			memcpy(slots + e->slot, sl.v, e->nfields * sizeof(uint64_t));
		} else {
			slots[e->slot] = sl.v[0];
		}
		vms_enttab_mark(tab, e);
	}
	/* something declared was not read: a damaged line explains it, else
	 * the entity is gone (a CPU went offline: VMS_RESCHEMA) */
	return vms_enttab_end(tab, slots);
}

static void ps_close(struct vms_source *src)
{
	struct procstat *p = src->priv;
	vms_procfile_close(&p->f);
	ps_forget(p);
}

VMS_SOURCE_OPS(procstat, ps);

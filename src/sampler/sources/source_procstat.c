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

#include "parse.h"
#include "procfile.h"
#include "source.h"

/* CPU numbers at or above this are not believed (NR_CPUS is at most 8192
 * today); such a line counts as malformed. */
#define PS_MAX_CPU 65536u

struct ps_ent {
	int32_t slot;     /* first column of the entity, -1: not declared */
	uint8_t nfields;  /* CPU lines: fields declared */
	uint32_t seen;    /* stamp of the last sample that filled it */
};

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
	struct ps_ent all;
	struct ps_ent key[PS_NKEY]; /* indexed by enum vms_stat_key */
	struct ps_ent *cpu;         /* indexed by CPU number */
	uint32_t ncpu_map;          /* entries in cpu[] */
	uint32_t nent;              /* entities declared (all, CPUs, keys) */
	uint32_t stamp;
};

static void ps_forget(struct procstat *p)
{
	free(p->cpu);
	p->cpu = NULL;
	p->ncpu_map = 0;
	p->nent = 0;
	p->all = (struct ps_ent){.slot = -1};
	for (unsigned k = 0; k < PS_NKEY; k++)
		p->key[k] = (struct ps_ent){.slot = -1};
}

static int ps_open(struct vms_source *src)
{
	struct procstat *p = src->priv;
	p->f = (struct vms_procfile)VMS_PROCFILE_INIT;
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

static int ps_declare(struct vms_source *src, struct vms_schema_builder *b)
{
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
	if (anycpu) {
		p->ncpu_map = maxcpu + 1;
		p->cpu = malloc(p->ncpu_map * sizeof(*p->cpu));
		if (!p->cpu) {
			p->ncpu_map = 0;
			return -ENOMEM;
		}
		for (uint32_t i = 0; i < p->ncpu_map; i++)
			p->cpu[i] = (struct ps_ent){.slot = -1};
	}

	/* pass 2: note each entity (the first line wins over duplicates) */
	vms_cur_init(&c, p->f.buf, p->f.len);
	while ((r = vms_stat_next(&c, &sl)) != 0) {
		struct ps_ent *e = NULL;
		if (r < 0)
			continue;
		if (sl.key == VMS_STAT_CPU_ALL)
			e = &p->all;
		else if (sl.key == VMS_STAT_CPU && sl.cpu < p->ncpu_map)
			e = &p->cpu[sl.cpu];
		else if (sl.key != VMS_STAT_OTHER && sl.key != VMS_STAT_CPU)
			e = &p->key[sl.key];
		if (e && e->slot < 0) {
			e->slot = 0; /* placed below, in column order */
			e->nfields = (uint8_t)sl.nfields;
		}
	}

	/* columns: cpu.all, cpu.N in CPU order, then the keyed lines */
	if (p->all.slot >= 0) {
		p->all.slot = (int32_t)slot;
		for (unsigned f = 0; f < p->all.nfields; f++)
			vms_schema_addf(b, &tick, "cpu.all.%s", vms_stat_cpu_field_names[f]);
		slot += p->all.nfields;
		p->nent++;
	}
	for (uint32_t n = 0; n < p->ncpu_map; n++) {
		struct ps_ent *e = &p->cpu[n];
		if (e->slot < 0)
			continue;
		e->slot = (int32_t)slot;
		for (unsigned f = 0; f < e->nfields; f++)
			vms_schema_addf(b, &tick, "cpu.%u.%s", n, vms_stat_cpu_field_names[f]);
		slot += e->nfields;
		p->nent++;
	}
	for (unsigned k = 0; k < VMS_ARRAY_SIZE(ps_keys); k++) {
		struct ps_ent *e = &p->key[ps_keys[k].key];
		if (e->slot < 0)
			continue;
		e->slot = (int32_t)slot++;
		vms_schema_addf(b, ps_keys[k].gauge ? &tasks : &count, "stat.%s", ps_keys[k].name);
		p->nent++;
	}
	if (b->err)
		return b->err;
	return p->nent ? 0 : -ENODATA;
}

static void ps_none(uint64_t *slots, const struct ps_ent *e, unsigned n)
{
	if (e->slot >= 0)
		vms_slots_none(slots + e->slot, n);
}

static int ps_sample(struct vms_source *src, uint64_t *slots, struct vms_tick_ctx *t)
{
	struct procstat *p = src->priv;
	struct vms_stat_line sl;
	struct vms_cur c;
	uint32_t stamp, seen = 0, bad = 0;
	int r;

	r = vms_procfile_read(&p->f);
	if (r < 0)
		return r;
	stamp = ++p->stamp;
	if (VMS_UNLIKELY(stamp == 0))
		stamp = p->stamp = 1; /* 0 is "never seen" */
	vms_cur_init(&c, p->f.buf, p->f.len);
	for (;;) {
		struct ps_ent *e;
		if (!p->per_cpu && is_cpun_line(&c)) {
			vms_cur_skip_line(&c);
			continue;
		}
		r = vms_stat_next(&c, &sl);
		if (r == 0)
			break;
		if (r < 0) {
			bad++;
			t->parse_errors++;
			continue;
		}
		switch (sl.key) {
		case VMS_STAT_OTHER:
			continue;
		case VMS_STAT_CPU_ALL:
			e = &p->all;
			break;
		case VMS_STAT_CPU:
			if (!p->per_cpu)
				continue; /* one the fast skip missed (" cpu3 ...") */
			if (sl.cpu >= PS_MAX_CPU) {
				bad++;
				t->parse_errors++;
				continue;
			}
			if (sl.cpu >= p->ncpu_map)
				return VMS_RESCHEMA; /* a CPU came online */
			e = &p->cpu[sl.cpu];
			break;
		default:
			e = &p->key[sl.key];
			break;
		}
		if (VMS_UNLIKELY(e->slot < 0))
			return VMS_RESCHEMA; /* a line we did not declare */
		if (VMS_UNLIKELY(e->seen == stamp)) {
			bad++; /* the same entity twice: keep the first */
			t->parse_errors++;
			continue;
		}
		if (sl.key == VMS_STAT_CPU_ALL || sl.key == VMS_STAT_CPU) {
			if (VMS_UNLIKELY(sl.nfields != e->nfields)) {
				/* a cut line that still has 4+ fields: not believed */
				bad++;
				t->parse_errors++;
				continue;
			}
			memcpy(slots + e->slot, sl.v, e->nfields * sizeof(uint64_t));
		} else {
			slots[e->slot] = sl.v[0];
		}
		e->seen = stamp;
		seen++;
	}
	if (VMS_LIKELY(seen == p->nent))
		return 0;
	/* something declared was not read: a damaged line explains it, else
	 * the entity is gone (a CPU went offline) */
	if (p->nent - seen > bad)
		return VMS_RESCHEMA;
	if (p->all.seen != stamp)
		ps_none(slots, &p->all, p->all.nfields);
	for (uint32_t n = 0; n < p->ncpu_map; n++)
		if (p->cpu[n].seen != stamp)
			ps_none(slots, &p->cpu[n], p->cpu[n].nfields);
	for (unsigned k = 0; k < PS_NKEY; k++)
		if (p->key[k].seen != stamp)
			ps_none(slots, &p->key[k], 1);
	return 0;
}

static void ps_close(struct vms_source *src)
{
	struct procstat *p = src->priv;
	if (!p)
		return;
	vms_procfile_close(&p->f);
	free(p->cpu);
	p->cpu = NULL;
	p->ncpu_map = 0;
}

VMS_SOURCE_OPS(procstat, ps);

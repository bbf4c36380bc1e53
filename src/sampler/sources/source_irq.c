/* SPDX-License-Identifier: MIT */
/* source_irq.c - /proc/interrupts and /proc/softirqs: interrupts and
 * softirqs per vector and per CPU.
 *
 * Two sources over one shape of file (parse_irq.c): a header naming the
 * CPU of each column, then one line per vector.
 *   interrupts  as `sar -I` counts them (sysstat rd_stats.c
 *               read_stat_irq): intr.all.sum, every count of the file;
 *               intr.N.sum, CPU N's counts over every line;
 *               intr.all.V, vector V over every CPU; with per_cpu,
 *               intr.N.V, vector V on CPU N.  A line that is not per
 *               CPU (x86's ERR and MIS: one number) has only intr.all.V,
 *               and counts in intr.all.sum but in no CPU's sum (sar adds
 *               it to the first CPU's).
 *   softirqs    softirq.all.V, vector V over every CPU, and with per_cpu
 *               softirq.N.V (`mpstat -I SCPU`).  Their sum over the
 *               vectors is the softirq line of /proc/stat (stat.softirq).
 * N is the CPU's number from the header, not the column's position (an
 * offline CPU has no column).  The kernel keeps each count in 32 bits: so
 * are the columns declared (wrap_bits 32), the sums too (a sum of 32-bit
 * counters drops by 2^32 when one of them wraps, which the readers' wrap
 * rule undoes).  The vectors are the entities (entity.h); a vector that
 * appears or goes away, or a change of the online CPUs, is a new schema.
 * A damaged line is counted and its columns are empty, and so are the
 * sums it would have been part of: a sum is never short of a line. */
#include <stdlib.h>
#include <string.h>

#include "entity.h"
#include "parse.h"
#include "procfile.h"
#include "source.h"

#define IRQ_PERCPU 1u /* bits: the line has one count per column */

struct irqfile {
	struct vms_procfile f;
	struct vms_enttab tab;    /* the vectors, in file order */
	uint32_t *cpu;            /* the columns' CPUs at declare time */
	uint32_t *hdr;            /* the tick's header (ncpu + 1: one more says "changed") */
	uint64_t *v;              /* one line's counts */
	unsigned ncpu;
	bool per_cpu;             /* columns per CPU and vector */
	bool sums;                /* interrupts: the sum columns, slots 0 .. ncpu */
};


static void irq_forget(struct irqfile *p)
{
	vms_enttab_free(&p->tab);
	free(p->cpu);
	free(p->hdr);
	free(p->v);
	p->cpu = p->hdr = NULL;
	p->v = NULL;
	p->ncpu = 0;
}

static int irq_open(struct vms_source *src, const char *path, bool sums)
{
	struct irqfile *p = src->priv;
	p->per_cpu = src->sconf && src->sconf->per_cpu;
	p->sums = sums;
	return vms_procfile_open(&p->f, src->proc_dirfd, path, 4096);
}

static void irq_close(struct vms_source *src)
{
	struct irqfile *p = src->priv;
	vms_procfile_close(&p->f);
	irq_forget(p);
}

/* The entity's line is at the cursor: its prefix (blanks and name), then
 * the colon. */
static bool irq_match(const struct vms_cur *c, const struct vms_ent *e)
{
	return vms_cur_left(c) > e->prefix_len && memcmp(c->p, e->prefix, e->prefix_len) == 0 &&
	       c->p[e->prefix_len] == ':';
}

struct irq_parse {
	struct vms_irq_line l;
	uint64_t *v;
	unsigned ncpu;
};

static int irq_parse(struct vms_cur *c, void *line, const char **name, size_t *len)
{
	struct irq_parse *ip = line;
	int r = vms_irq_next(c, ip->v, ip->ncpu, &ip->l);
	*name = ip->l.name;
	*len = ip->l.name_len;
	return r;
}

static int irq_declare(struct vms_source *src, struct vms_schema_builder *b, const char *pfx)
{
	const struct vms_coldef count = {.kind = VMS_KIND_COUNTER, .unit = VMS_UNIT_COUNT,
					 .wrap_bits = 32};
	struct irqfile *p = src->priv;
	struct vms_cur c;
	unsigned ncpu;
	uint32_t slot = 0;
	int r;

	irq_forget(p);
	r = vms_enttab_scan(&p->tab, &p->f, &c);
	if (r < 0)
		return r;
	/* the header: its columns can be no more than the line's length / 4 */
	size_t cap = p->f.len / 4 + 1;
	p->cpu = malloc(cap * sizeof(*p->cpu));
	if (!p->cpu)
		return -ENOMEM;
	r = vms_irq_header(&c, p->cpu, (unsigned)cap, &ncpu);
	if (r < 0)
		return r == -ENODATA ? -ENODATA : -EINVAL;
	p->ncpu = ncpu;
	p->hdr = malloc((ncpu + 1) * sizeof(*p->hdr));
	p->v = malloc(ncpu * sizeof(*p->v));
	if (!p->hdr || !p->v)
		return -ENOMEM;

	struct irq_parse ip = {.v = p->v, .ncpu = ncpu};
	for (;;) {
		const char *start = c.p;
		const char *name;
		size_t len;
		r = irq_parse(&c, &ip, &name, &len);
		if (r == 0)
			break;
		if (r < 0)
			continue; /* a damaged line declares nothing */
		struct vms_ent *e = vms_enttab_add(&p->tab, start, (size_t)(name + len - start), name, len);
		if (!e)
			return -ENOMEM;
		e->bits = ip.l.n == ncpu ? IRQ_PERCPU : 0;
		e->nfields = (uint8_t)(ip.l.n == ncpu ? 0 : ip.l.n);
	}
	p->tab.nwant = p->tab.n;

	if (p->sums) {
		vms_schema_addf(b, &count, "%s.all.sum", pfx);
		for (unsigned i = 0; i < ncpu; i++)
			vms_schema_addf(b, &count, "%s.%u.sum", pfx, p->cpu[i]);
		slot = 1 + ncpu;
	}
	for (uint32_t i = 0; i < p->tab.n; i++) {
		struct vms_ent *e = &p->tab.ent[i];
		if (vms_enttab_dup(&p->tab, e))
			continue; /* a second line of the same name: not sampled */
		int nl = (int)e->name_len;
		e->slot = (int32_t)slot;
		e->ncols = 1;
		vms_schema_addf(b, &count, "%s.all.%.*s", pfx, nl, e->name);
		if (p->per_cpu && (e->bits & IRQ_PERCPU)) {
			for (unsigned k = 0; k < ncpu; k++)
				vms_schema_addf(b, &count, "%s.%u.%.*s", pfx, p->cpu[k], nl, e->name);
			e->ncols += ncpu;
		}
		slot += e->ncols;
	}
	if (b->err)
		return b->err;
	return slot ? 0 : -ENODATA;
}

static int irq_sample(struct vms_source *src, uint64_t *slots, struct vms_tick_ctx *t)
{
	struct irqfile *p = src->priv;
	struct vms_enttab *tab = &p->tab;
	struct irq_parse ip = {.v = p->v, .ncpu = p->ncpu};
	struct vms_cur c;
	struct vms_ent *e;
	enum vms_ent_step st;
	uint32_t pos = 0;
	unsigned n;

	int r = vms_enttab_read(tab, &p->f, &c);
	if (r < 0)
		return r;
	r = vms_irq_header(&c, p->hdr, p->ncpu + 1, &n);
	if (r == -E2BIG || (r == 1 && (n != p->ncpu || memcmp(p->hdr, p->cpu, n * sizeof(*p->cpu)))))
		return VMS_RESCHEMA; /* a CPU went on- or offline */
	if (r < 0)
		return -EINVAL; /* no header: nothing here can be placed */
	uint64_t *sum = p->sums ? slots : NULL;
	if (sum)
		memset(sum, 0, (1 + p->ncpu) * sizeof(*sum));
	while ((st = vms_enttab_next(tab, &pos, &c, t, irq_match, irq_parse, &ip, &e)) != VMS_ENT_END) {
		if (st == VMS_ENT_NEW)
			return VMS_RESCHEMA; /* a new vector */
		if (st == VMS_ENT_SKIPPED)
			continue;
		bool percpu = ip.l.n == p->ncpu;
		if (VMS_UNLIKELY(percpu != !!(e->bits & IRQ_PERCPU) ||
				 (!percpu && ip.l.n != e->nfields))) {
			vms_enttab_bad(tab, t); /* a cut line: not believed */
			continue;
		}
		vms_enttab_mark(tab, e);
		if (e->slot < 0)
			continue;
		uint64_t all = 0;
		for (unsigned k = 0; k < ip.l.n; k++)
			all += ip.v[k];
		slots[e->slot] = all;
		if (e->ncols > 1)
			memcpy(slots + e->slot + 1, ip.v, p->ncpu * sizeof(*ip.v));
		if (sum) {
			sum[0] += all;
			if (percpu)
				for (unsigned k = 0; k < p->ncpu; k++)
					sum[1 + k] += ip.v[k];
		}
	}
	r = vms_enttab_end(tab, slots);
	if (r == 0 && sum && tab->nbad)
		vms_slots_none(sum, 1 + p->ncpu); /* short of a damaged line */
	return r;
}

/* ---- interrupts and softirqs ----------------------------------------------- */

/* The two sources of the one format: each its file, its columns' prefix,
 * and whether it has the sum columns (interrupts: slots 0 .. ncpu). */
#define IRQ_SOURCE(id, file, pfx, sums)                                                  \
	static int id##_open(struct vms_source *src, const struct vms_source_env *env)     \
	{                                                                                    \
		(void)env;                                                                   \
		return irq_open(src, file, sums);                                            \
	}                                                                                    \
	static int id##_declare(struct vms_source *src, struct vms_schema_builder *b,       \
				const struct vms_source_env *env)                            \
	{                                                                                    \
		(void)env;                                                                   \
		return irq_declare(src, b, pfx);                                             \
	}                                                                                    \
	VMS_SOURCE_OPS_FAMILY(id, struct irqfile, id, irq)

IRQ_SOURCE(interrupts, "interrupts", "intr", true);
IRQ_SOURCE(softirqs, "softirqs", "softirq", false);

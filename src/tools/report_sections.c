/* SPDX-License-Identifier: MIT */
/* report_sections.c - `vmsampler report`'s sections (sar's, and the VMs'),
 * their columns by the rate columns' catalogue identity, and the map from
 * a rate plan to them (report_int.h). */
#include "report_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define R(l, g, o) {l, VMS_G_##g, NULL, o, K_RATE}
#define G(l, g, o) {l, VMS_G_##g, NULL, o, K_GAUGE}
#define P(l, e, o) {l, VMS_G_PSI, e, o, K_RATE}
const struct section rpt_sections[S_N] = {
	[S_CPU] = {"cpu", "CPU", "all", 10,
		   {R("%usr", CPU, "%usr"), R("%nice", CPU, "%nice"), R("%sys", CPU, "%sys"),
		    R("%iowait", CPU, "%iowait"), R("%steal", CPU, "%steal"), R("%irq", CPU, "%irq"),
		    R("%soft", CPU, "%soft"), R("%guest", CPU, "%guest"), R("%gnice", CPU, "%gnice"),
		    R("%idle", CPU, "%idle")}},
	[S_QUEUE] = {"queue", NULL, NULL, 6,
		     {{"runq-sz", VMS_G_LOAD, NULL, "runnable", K_RUNQ}, G("plist-sz", LOAD, "tasks"),
		      G("ldavg-1", LOAD, "1m"), G("ldavg-5", LOAD, "5m"), G("ldavg-15", LOAD, "15m"),
		      G("blocked", STAT, "procs_blocked")}},
	[S_TASK] = {"task", NULL, NULL, 3,
		    {R("proc/s", STAT, "proc/s"), R("cswch/s", STAT, "cswch/s"), R("intr/s", STAT, "intr/s")}},
	[S_DISK] = {"disk", "DEV", NULL, 10,
		    {R("tps", DISK, "tps"), R("r/s", DISK, "r/s"), R("w/s", DISK, "w/s"),
		     R("rkB/s", DISK, "rkB/s"), R("wkB/s", DISK, "wkB/s"), R("dkB/s", DISK, "dkB/s"),
		     R("areq-sz", DISK, "areq-sz"), R("aqu-sz", DISK, "aqu-sz"), R("await", DISK, "await"),
		     R("%util", DISK, "%util")}},
	[S_NET] = {"net", "IFACE", NULL, 7,
		   {R("rxpck/s", NET, "rxpck/s"), R("txpck/s", NET, "txpck/s"), R("rxkB/s", NET, "rxkB/s"),
		    R("txkB/s", NET, "txkB/s"), R("rxcmp/s", NET, "rxcmp/s"), R("txcmp/s", NET, "txcmp/s"),
		    R("rxmcst/s", NET, "rxmcst/s")}},
	/* host memory: sar -B, -W, -r, -S and -q PSI (rates.c) */
	[S_PAGING] = {"paging", NULL, NULL, 9,
		      {R("pgpgin/s", VMSTAT, "pgpgin/s"), R("pgpgout/s", VMSTAT, "pgpgout/s"),
		       R("fault/s", VMSTAT, "pgfault/s"), R("majflt/s", VMSTAT, "pgmajfault/s"),
		       R("pgfree/s", VMSTAT, "pgfree/s"), R("pgscank/s", VMSTAT, "pgscank/s"),
		       R("pgscand/s", VMSTAT, "pgscand/s"), R("pgsteal/s", VMSTAT, "pgsteal/s"),
		       R("%vmeff", VMSTAT, "%vmeff")}},
	[S_SWAPPING] = {"swapping", NULL, NULL, 2,
			{R("pswpin/s", VMSTAT, "pswpin/s"), R("pswpout/s", VMSTAT, "pswpout/s")}},
	[S_MEMORY] = {"memory", NULL, NULL, 11,
		      {G("kbmemfree", MEM, "kbmemfree"), G("kbavail", MEM, "kbavail"),
		       G("kbmemused", MEM, "kbmemused"), G("%memused", MEM, "%memused"),
		       G("kbbuffers", MEM, "kbbuffers"), G("kbcached", MEM, "kbcached"),
		       G("kbcommit", MEM, "kbcommit"), G("%commit", MEM, "%commit"),
		       G("kbactive", MEM, "kbactive"), G("kbinact", MEM, "kbinact"), G("kbdirty", MEM, "kbdirty")}},
	[S_SWAPSPACE] = {"swapspace", NULL, NULL, 5,
			 {G("kbswpfree", MEM, "kbswpfree"), G("kbswpused", MEM, "kbswpused"),
			  G("%swpused", MEM, "%swpused"), G("kbswpcad", MEM, "kbswpcad"),
			  G("%swpcad", MEM, "%swpcad")}},
	[S_PSI] = {"pressure", NULL, NULL, 6,
		   {P("%scpu", "cpu", "%some"), P("%sio", "io", "%some"), P("%fio", "io", "%full"),
		    P("%smem", "memory", "%some"), P("%fmem", "memory", "%full"), P("%firq", "irq", "%full")}},
	[S_VM] = {"vm", "VM", NULL, 10,
		  {R("%cpu", VM, "%cpu"), R("%steal", VM, "%steal"), R("dlyms/s", VM, "dlyms/s"),
		   R("rxkB/s", VM, "rxkB/s"), R("txkB/s", VM, "txkB/s"), R("rkB/s", VMIO, "rkB/s"),
		   R("wkB/s", VMIO, "wkB/s"), G("kbballoon", VMBALLOON, "current"), R("%cap", VM, "%cap"),
		   R("%thrtl", VM, "%thrtl")}},
};
#undef R
#undef G
#undef P

/* The section, column and entity of a rate column, if the report shows
 * it. */
static bool match(const struct report *R, const struct vms_rate_col *pc, unsigned *sec, unsigned *ci,
		  const char **ent, size_t *entlen)
{
	if (pc->sub[0])
		return false; /* a vCPU's, a tap's, a guest disk's */
	for (unsigned s = 0; s < S_N; s++) {
		const struct section *S = &rpt_sections[s];
		if (s == S_VM && !R->vm)
			continue;
		/* -P N|ALL (sar): the CPU section's entities; else a section's own */
		const char *only = s == S_CPU && R->cpus ? R->cpus : S->only;
		if (only && strcmp(only, "ALL") != 0 && strcmp(pc->entity, only) != 0)
			continue;
		for (unsigned c = 0; c < S->ncols; c++) {
			const struct rspec *rs = &S->c[c];
			if (pc->group != rs->group || strcmp(pc->out, rs->out) != 0 ||
			    (rs->ent && strcmp(pc->entity, rs->ent) != 0))
				continue;
			*sec = s;
			*ci = c;
			*ent = S->entcol ? pc->entity : "";
			*entlen = strlen(*ent);
			return true;
		}
	}
	return false;
}

/* The rcol of (sec, ci, entity), created at first sight (-ENOMEM). */
static int32_t rcol_get(struct report *R, unsigned sec, unsigned ci, const char *ename, size_t el,
			const struct vms_rate_col *def, const struct vms_schema *sch)
{
	uint32_t e;
	for (e = 0; e < R->nents; e++)
		if (R->ents[e].sec == sec && strlen(R->ents[e].name) == el &&
		    memcmp(R->ents[e].name, ename, el) == 0)
			break;
	if (e == R->nents) {
		struct rent *n = rpt_grow(R->ents, &R->capents, R->nents, sizeof(*n));
		if (!n)
			return -ENOMEM;
		R->ents = n;
		char *nm = strndup(ename, el);
		if (!nm)
			return -ENOMEM;
		struct rent *x = &R->ents[R->nents++];
		*x = (struct rent){.sec = sec, .name = nm};
		for (unsigned c = 0; c < MAXC; c++)
			x->col[c] = -1;
	}
	struct rent *x = &R->ents[e];
	if (x->col[ci] >= 0)
		return x->col[ci];
	struct rcol *n = rpt_grow(R->rcols, &R->caprc, R->nrc, sizeof(*n));
	if (!n)
		return -ENOMEM;
	R->rcols = n;
	struct rcol *c = &R->rcols[R->nrc];
	uint8_t kind = rpt_sections[sec].c[ci].kind;
	*c = (struct rcol){.ent = e, .ci = (uint8_t)ci, .kind = kind, .def = *def,
			   .row = {NAN, 0}, .avg = {NAN, 0}, .glast = NAN, .v = NAN};
	c->def.name = NULL;
	c->def.xs = NULL;
	if (kind == K_RATE)
		c->prec = 2;
	else if (kind == K_RUNQ)
		c->prec = 0;
	else
		c->prec = def->op == VMS_ROP_GEXPR ? def->field
			  : def->op == VMS_ROP_GAUGE && def->a >= 0 && sch->cols[def->a].scale > 0
				  ? sch->cols[def->a].scale
				  : 0;
	c->active = (R->mask >> sec) & 1;
	c->scale = rpt_pow10i(c->prec);
	if (R->mode == M_SUMMARY && !(c->q.h = calloc(LLB_N, sizeof(*c->q.h))))
		return -ENOMEM;
	if (c->active) {
		uint32_t *a = rpt_grow(R->act, &R->capact, R->nact, sizeof(*a));
		if (!a)
			return -ENOMEM;
		R->act = a;
		R->act[R->nact++] = R->nrc;
	}
	x->col[ci] = (int32_t)R->nrc;
	return (int32_t)R->nrc++;
}

void rpt_genmap_free(struct genmap *g)
{
	free(g->sel);
	free(g->rc);
	free(g->t);
	free(g->in);
	memset(g, 0, sizeof(*g));
}

/* The report's columns among those of the plan of st (just renewed for
 * schema s); st is then to keep the last values of their inputs only. */
int rpt_genmap_build(struct report *R, struct genmap *g, struct vms_rate_stream *st,
			const struct vms_schema *s)
{
	rpt_genmap_free(g);
	g->plan = st->plan;
	size_t n = g->plan->ncols ? g->plan->ncols : 1;
	g->sel = malloc(n * sizeof(*g->sel));
	g->rc = malloc(n * sizeof(*g->rc));
	g->t = malloc(n * sizeof(*g->t));
	if (!g->sel || !g->rc || !g->t)
		return -ENOMEM;
	g->sch = s;
	for (uint32_t k = 0; k < g->plan->ncols; k++) {
		const struct vms_rate_col *pc = &g->plan->cols[k];
		unsigned sec, ci;
		const char *en;
		size_t el;
		if (!match(R, pc, &sec, &ci, &en, &el))
			continue;
		/* a gauge where a rate is expected (or the reverse): not ours */
		if ((rpt_sections[sec].c[ci].kind == K_RATE) ==
		    (pc->op == VMS_ROP_GAUGE || pc->op == VMS_ROP_GEXPR))
			continue;
		R->seen |= 1u << sec;
		if (!((R->mask >> sec) & 1))
			continue;
		int32_t rc = rcol_get(R, sec, ci, en, el, pc, s);
		if (rc < 0)
			return rc;
		if (!R->rcols[rc].active)
			continue;
		g->sel[g->n] = k;
		g->rc[g->n++] = (uint32_t)rc;
	}
	/* the schema columns those read: the only ones whose last values
	 * and intervals are kept */
	bool *used = calloc(s->ncols ? s->ncols : 1, sizeof(*used));
	g->in = malloc((s->ncols ? s->ncols : 1) * sizeof(*g->in));
	if (!used || !g->in) {
		free(used);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < g->n; i++)
		vms_rate_inputs(g->plan, g->sel[i], used);
	for (uint32_t i = 0; i < s->ncols; i++)
		if (used[i])
			g->in[g->nin++] = i;
	free(used);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/* compare.c - report --compare and report --window (compare.h).
 *
 * Each side (a file, and a window in it or all of it) is read once with
 * libvmsampler's rates (the numbers of `dump --rates`, as report's): each
 * rate column the comparison knows (quantity_of, by its catalogue
 * identity) becomes a series of
 * per-interval values of one (quantity, entity), kept with the interval
 * it belongs to; a window keeps the intervals that begin at or after its
 * start and end at or before its end (report's --from/--to: a row begins
 * at the first frame in the range), a mark being the time of the first
 * MARK event of that text: window.h, the windows of report --interference
 * too.  The two sides' series are then matched (VMs by UUID, the column
 * key, then by name), summarized and tested
 * (stats.h), and printed. */
#include "compare.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "lineproto.h"
#include "log.h"
#include "catalog.h"
#include "rates.h"
#include "reader_int.h"
#include "report.h"
#include "sink.h"
#include "stats.h"
#include "tool.h"
#include "window.h"
#include <vmsampler/reader.h>

/* ---- what is compared ---------------------------------------------------------- */

/* The quantities, in the order they are printed, by the rate columns'
 * catalogue identity (struct vms_rate_col, as report's sections): a rate
 * column of group GROUP that is OUT and has no sub-entity (not a vCPU's,
 * a tap's, a guest disk's).  ent NULL: each entity of the group is one
 * (a CPU, disk, interface or VM); else the host's, that one entity ("" in
 * a group without entities), shown as "host".  role: 0 the value, 1 and
 * 2 the numerator and denominator of a ratio (IPC). */
struct qrule {
	const char *quantity;
	uint8_t group; /* enum vms_group */
	const char *ent, *out;
	uint8_t role;
};

#define E(q, g, o) {q, VMS_G_##g, NULL, o, 0}
#define H(q, g, e, o) {q, VMS_G_##g, e, o, 0}
static const struct qrule qrules[] = {
	E("cpu.%usr", CPU, "%usr"), E("cpu.%nice", CPU, "%nice"), E("cpu.%sys", CPU, "%sys"),
	E("cpu.%iowait", CPU, "%iowait"), E("cpu.%steal", CPU, "%steal"), E("cpu.%irq", CPU, "%irq"),
	E("cpu.%soft", CPU, "%soft"), E("cpu.%guest", CPU, "%guest"), E("cpu.%idle", CPU, "%idle"),
	H("queue.runq-sz", LOAD, "", "runnable"), H("queue.plist-sz", LOAD, "", "tasks"),
	H("queue.ldavg-1", LOAD, "", "1m"), H("queue.blocked", STAT, "", "procs_blocked"),
	H("task.proc/s", STAT, "", "proc/s"), H("task.cswch/s", STAT, "", "cswch/s"),
	H("task.intr/s", STAT, "", "intr/s"),
	E("disk.tps", DISK, "tps"), E("disk.rkB/s", DISK, "rkB/s"), E("disk.wkB/s", DISK, "wkB/s"),
	E("disk.aqu-sz", DISK, "aqu-sz"), E("disk.await", DISK, "await"), E("disk.%util", DISK, "%util"),
	E("net.rxpck/s", NET, "rxpck/s"), E("net.txpck/s", NET, "txpck/s"), E("net.rxkB/s", NET, "rxkB/s"),
	E("net.txkB/s", NET, "txkB/s"),
	H("memory.kbmemused", MEM, "", "kbmemused"), H("memory.%memused", MEM, "", "%memused"),
	H("memory.kbavail", MEM, "", "kbavail"), H("memory.%commit", MEM, "", "%commit"),
	H("paging.fault/s", VMSTAT, "", "pgfault/s"), H("paging.majflt/s", VMSTAT, "", "pgmajfault/s"),
	H("paging.pgscank/s", VMSTAT, "", "pgscank/s"), H("swapping.pswpin/s", VMSTAT, "", "pswpin/s"),
	H("swapping.pswpout/s", VMSTAT, "", "pswpout/s"),
	H("pressure.%scpu", PSI, "cpu", "%some"), H("pressure.%sio", PSI, "io", "%some"),
	H("pressure.%fio", PSI, "io", "%full"), H("pressure.%smem", PSI, "memory", "%some"),
	H("pressure.%fmem", PSI, "memory", "%full"),
	E("vm.%cpu", VM, "%cpu"), E("vm.%steal", VM, "%steal"), E("vm.dlyms/s", VM, "dlyms/s"),
	E("vm.%thrtl", VM, "%thrtl"), E("vm.%cap", VM, "%cap"), E("vm.rkB/s", VMIO, "rkB/s"),
	E("vm.wkB/s", VMIO, "wkB/s"), E("vm.rxkB/s", VM, "rxkB/s"), E("vm.txkB/s", VM, "txkB/s"),
	{"vm.ipc", VMS_G_VMPERF, NULL, "instructions/s", 1}, {"vm.ipc", VMS_G_VMPERF, NULL, "cycles/s", 2},
};
#undef E
#undef H
#define NRULES (sizeof(qrules) / sizeof(qrules[0]))

/* A VM's quantity: its group is one of the catalogue's vm.<name>.* */
static bool vm_group(unsigned g)
{
	return strcmp(vms_catalog[g].head, "vm.") == 0;
}

/* The one place that maps a rate column to what it measures: the rule
 * (index into qrules) and the entity (a CPU, disk, interface or VM
 * name, "host"), or -1 when the comparison leaves the column out. */
static int quantity_of(const struct vms_rate_col *c, const char **ent)
{
	if (!c || c->sub[0])
		return -1; /* a vCPU's, a tap's, a block device's */
	for (unsigned i = 0; i < NRULES; i++) {
		const struct qrule *q = &qrules[i];
		if (c->group != q->group || strcmp(c->out, q->out) != 0 || (q->ent && strcmp(c->entity, q->ent) != 0))
			continue;
		*ent = q->ent ? "host" : c->entity;
		return (int)i;
	}
	return -1;
}

/* ---- the two sides ------------------------------------------------------------- */

struct series {
	unsigned rule;     /* the first qrules index of its quantity */
	char *ent, *uuid;  /* uuid: a VM's key, "" otherwise */
	double *v;
	uint32_t *iv;      /* the interval of each value */
	size_t n, cap;
	/* a ratio's parts in the current frame */
	double num, den;
	uint64_t fnum, fden;
	/* the window's values, summary */
	double *w;
	size_t nw;
	struct vms_stats_summary s;
	int peer;          /* the other side's series, -1 */
};

struct ival {
	uint64_t m0, m1;
	int64_t r0, r1;
	bool in;
};

#define HOST_KEYS 6
static const char *const host_keys[HOST_KEYS] = {"hostname", "kernel", "cpus_online", "vmsampler_version",
						 "machine_id", "cpu_model"};

struct side {
	const char *path;
	struct vms_window win; /* win.text NULL: the whole run (window.h) */
	char *host[HOST_KEYS];
	bool t0_set;
	uint64_t t0_mono;
	int64_t t0_real;
	struct ival *iv;
	size_t niv;
	uint32_t capiv;
	struct series *s;
	size_t ns;
	uint32_t caps;
	size_t nin;        /* intervals in the window */
	double span_s;     /* their total length */
	char err[600];
};

static int series_get(struct side *S, unsigned rule, const char *ent, size_t el, const char *uuid)
{
	for (size_t i = 0; i < S->ns; i++)
		if (strcmp(qrules[S->s[i].rule].quantity, qrules[rule].quantity) == 0 &&
		    strlen(S->s[i].ent) == el && memcmp(S->s[i].ent, ent, el) == 0 &&
		    strcmp(S->s[i].uuid, uuid) == 0)
			return (int)i;
	struct series *n = vms_grow_array(S->s, &S->caps, (uint32_t)S->ns + 1, sizeof(*n), 16);
	if (!n)
		return -ENOMEM;
	S->s = n;
	struct series *x = &S->s[S->ns];
	*x = (struct series){.rule = rule, .peer = -1, .fnum = UINT64_MAX, .fden = UINT64_MAX};
	/* the first rule of the quantity names it */
	while (x->rule > 0 && strcmp(qrules[x->rule - 1].quantity, qrules[rule].quantity) == 0)
		x->rule--;
	x->ent = strndup(ent, el);
	x->uuid = strdup(uuid);
	if (!x->ent || !x->uuid) {
		free(x->ent);
		free(x->uuid);
		return -ENOMEM;
	}
	return (int)S->ns++;
}

static int series_push(struct series *x, uint32_t iv, double v)
{
	if (x->n == x->cap) {
		size_t c = x->cap ? x->cap * 2 : 64;
		double *nv = realloc(x->v, c * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		x->v = nv;
		uint32_t *ni = realloc(x->iv, c * sizeof(*ni));
		if (!ni)
			return -ENOMEM;
		x->iv = ni;
		x->cap = c;
	}
	x->v[x->n] = v;
	x->iv[x->n++] = iv;
	return 0;
}

/* the key (UUID) of VM `name` in the current schema: any of its columns' */
static const char *vm_key(struct vms_reader *rd, const char *name)
{
	const struct vms_schema *sch = vms_rdr_schema(rd);
	for (uint32_t i = 0; sch && i < sch->ncols; i++) {
		const struct vms_col *c = &sch->cols[i];
		if (c->key[0] && vm_group(c->group) && strcmp(c->entity, name) == 0)
			return c->key;
	}
	return "";
}

/* per rate column of the current schema: its series (-1) and role */
struct rmap {
	int32_t *ser;
	uint8_t *role;
	uint32_t n;
};

static int remap(struct side *S, struct vms_reader *rd, struct rmap *m)
{
	uint32_t n = vms_reader_nrates(rd);
	free(m->ser);
	free(m->role);
	m->ser = malloc((n ? n : 1) * sizeof(*m->ser));
	m->role = malloc(n ? n : 1);
	m->n = n;
	if (!m->ser || !m->role)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		const char *ent;
		int q = quantity_of(vms_rdr_rate_col(rd, i), &ent);
		m->ser[i] = -1;
		m->role[i] = 0;
		if (q < 0)
			continue;
		const char *uuid = vm_group(qrules[q].group) ? vm_key(rd, ent) : "";
		int s = series_get(S, (unsigned)q, ent, strlen(ent), uuid);
		if (s < 0)
			return s;
		m->ser[i] = s;
		m->role[i] = qrules[q].role;
	}
	return 0;
}

static int read_side(struct side *S)
{
	struct vms_reader *rd;
	int r = vms_reader_open(&rd, S->path, 0);
	if (r < 0) {
		snprintf(S->err, sizeof(S->err), "%s", rd ? vms_reader_error(rd) : strerror(-r));
		vms_reader_close(rd);
		return r;
	}
	if ((r = vms_reader_rates_enable(rd)) < 0) {
		vms_reader_close(rd);
		return r;
	}
	vms_rdr_want_events(rd, true);
	struct rmap m = {0};
	uint64_t pm = 0, nf = 0;
	int64_t pr = 0;
	while ((r = vms_reader_next(rd)) > 0) {
		if (r == 2) {
			vms_window_mark(&S->win, vms_rdr_event(rd));
			continue;
		}
		uint64_t tm = vms_reader_time_mono_ns(rd);
		int64_t tr = vms_reader_time_real_ns(rd);
		if (!S->t0_set) {
			S->t0_set = true;
			S->t0_mono = tm;
			S->t0_real = tr;
			vms_window_start(&S->win, tm, tr);
			for (unsigned k = 0; k < HOST_KEYS; k++) {
				const char *v = vms_reader_host(rd, host_keys[k]);
				S->host[k] = v ? strdup(v) : NULL;
			}
		}
		if (vms_reader_schema_changed(rd) && (r = remap(S, rd, &m)) < 0)
			break;
		if (nf++ && vms_reader_rate_interval(rd) > 0) {
			struct ival *n = vms_grow_array(S->iv, &S->capiv, (uint32_t)S->niv + 1, sizeof(*n), 16);
			if (!n) {
				r = -ENOMEM;
				break;
			}
			S->iv = n;
			uint32_t ivx = (uint32_t)S->niv;
			S->iv[S->niv++] = (struct ival){pm, tm, pr, tr, false};
			for (uint32_t i = 0; i < m.n; i++) {
				double v;
				if (m.ser[i] < 0 || vms_reader_rate(rd, i, &v) < 0 || isnan(v))
					continue;
				struct series *x = &S->s[m.ser[i]];
				if (m.role[i] == 0) {
					if ((r = series_push(x, ivx, v)) < 0)
						break;
					continue;
				}
				if (m.role[i] == 1) {
					x->num = v;
					x->fnum = nf;
				} else {
					x->den = v;
					x->fden = nf;
				}
				if (x->fnum == nf && x->fden == nf && x->den > 0 && (r = series_push(x, ivx, x->num / x->den)) < 0)
					break;
			}
			if (r < 0)
				break;
		}
		pm = tm;
		pr = tr;
	}
	free(m.ser);
	free(m.role);
	if (r == -ENOMEM)
		snprintf(S->err, sizeof(S->err), "%s: %s", S->path, strerror(ENOMEM));
	else if (r < 0 || (r == 0 && !vms_reader_eof(rd)))
		snprintf(S->err, sizeof(S->err), "%s", vms_reader_error(rd));
	else if (vms_reader_error(rd)[0])
		vms_warn("%s", vms_reader_error(rd));
	vms_reader_close(rd);
	return r < 0 ? r : 0;
}

/* ---- windows ------------------------------------------------------------------- */

/* The intervals in S's window (window.h's rule, as report --interference)
 * and each series' values in them. */
static int window(struct side *S)
{
	int r;
	if ((r = vms_window_check(&S->win, S->path, S->err, sizeof(S->err))) < 0)
		return r;
	S->nin = 0;
	S->span_s = 0;
	for (size_t i = 0; i < S->niv; i++) {
		struct ival *v = &S->iv[i];
		v->in = vms_window_in(&S->win, v->m0, v->r0, v->m1, v->r1) == 0;
		if (v->in) {
			S->nin++;
			S->span_s += (double)(v->m1 - v->m0) / 1e9;
		}
	}
	for (size_t k = 0; k < S->ns; k++) {
		struct series *x = &S->s[k];
		x->w = malloc((x->n ? x->n : 1) * sizeof(*x->w));
		if (!x->w)
			return -ENOMEM;
		for (size_t i = 0; i < x->n; i++)
			if (S->iv[x->iv[i]].in)
				x->w[x->nw++] = x->v[i];
		if ((r = vms_stats_summary(x->w, x->nw, &x->s)) < 0)
			return r;
	}
	return 0;
}

static void side_free(struct side *S)
{
	for (unsigned k = 0; k < HOST_KEYS; k++)
		free(S->host[k]);
	for (size_t i = 0; i < S->ns; i++) {
		free(S->s[i].ent);
		free(S->s[i].uuid);
		free(S->s[i].v);
		free(S->s[i].iv);
		free(S->s[i].w);
	}
	free(S->s);
	free(S->iv);
	vms_window_free(&S->win);
}

/* ---- matching and the table ---------------------------------------------------- */

struct row {
	int a, b; /* series of each side, -1: only in the other */
	struct vms_boot_ci ci;
	double rel;  /* delta / |a mean| (NaN when that is 0) */
	double rank; /* |delta| / max(|a mean|, |b mean|) */
};

static bool same_q(const struct series *x, const struct series *y)
{
	return x->rule == y->rule;
}

/* VMs by UUID (both known), then anything by name; a series without a
 * value in its window is not there */
static void match_all(struct side *A, struct side *B)
{
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < A->ns; i++) {
			struct series *x = &A->s[i];
			if (x->peer >= 0 || !x->nw || (pass == 0 && !x->uuid[0]))
				continue;
			for (size_t k = 0; k < B->ns; k++) {
				struct series *y = &B->s[k];
				if (y->peer >= 0 || !y->nw || !same_q(x, y))
					continue;
				if (pass == 0 ? strcmp(x->uuid, y->uuid) == 0 : strcmp(x->ent, y->ent) == 0) {
					x->peer = (int)k;
					y->peer = (int)i;
					break;
				}
			}
		}
}

struct cmp {
	struct side a, b;
	enum { F_TEXT, F_CSV, F_JSON } format;
	struct vms_boot_opt opt;
	struct row *rows;
	size_t nrows;
	char warn[4][300];
	unsigned nwarn;
	FILE *out;
};

static int build_rows(struct cmp *C)
{
	struct side *A = &C->a, *B = &C->b;
	match_all(A, B);
	C->rows = calloc(A->ns + B->ns + 1, sizeof(*C->rows));
	if (!C->rows)
		return -ENOMEM;
	for (size_t i = 0; i < A->ns; i++)
		if (A->s[i].nw)
			C->rows[C->nrows++] = (struct row){.a = (int)i, .b = A->s[i].peer};
	for (size_t k = 0; k < B->ns; k++)
		if (B->s[k].nw && B->s[k].peer < 0)
			C->rows[C->nrows++] = (struct row){.a = -1, .b = (int)k};
	/* stable, by quantity: the entities in the order they appeared */
	for (size_t i = 1; i < C->nrows; i++) {
		struct row t = C->rows[i];
		unsigned q = t.a >= 0 ? A->s[t.a].rule : B->s[t.b].rule;
		size_t j = i;
		for (; j > 0; j--) {
			const struct row *p = &C->rows[j - 1];
			if ((p->a >= 0 ? A->s[p->a].rule : B->s[p->b].rule) <= q)
				break;
			C->rows[j] = *p;
		}
		C->rows[j] = t;
	}
	for (size_t i = 0; i < C->nrows; i++) {
		struct row *w = &C->rows[i];
		w->ci = (struct vms_boot_ci){NAN, NAN, NAN, 0, 0, false};
		w->rel = w->rank = NAN;
		if (w->a < 0 || w->b < 0)
			continue;
		const struct series *x = &A->s[w->a], *y = &B->s[w->b];
		int r = vms_stats_boot_diff(x->w, x->nw, y->w, y->nw, &C->opt, &w->ci);
		if (r < 0)
			return r;
		double ma = fabs(x->s.mean), mb = fabs(y->s.mean), mx = ma > mb ? ma : mb;
		w->rel = ma > 0 ? w->ci.delta / ma : NAN;
		w->rank = mx > 0 ? fabs(w->ci.delta) / mx : 0;
	}
	return 0;
}

/* ---- provenance ----------------------------------------------------------------- */

static double mean_interval(const struct side *S)
{
	return S->nin ? S->span_s / (double)S->nin : NAN;
}

/* what differs between the sides that makes the comparison suspect */
static void warnings(struct cmp *C)
{
	const struct side *A = &C->a, *B = &C->b;
	double ia = mean_interval(A), ib = mean_interval(B);
	if (ia > 0 && ib > 0 && fabs(ia - ib) > 0.1 * (ia < ib ? ia : ib))
		snprintf(C->warn[C->nwarn++], sizeof(C->warn[0]),
			 "the intervals differ: %.3f s in A, %.3f s in B (rates of different spans)", ia, ib);
	const char *ha = A->host[0], *hb = B->host[0], *ma = A->host[4], *mb = B->host[4];
	if (!ha || !hb)
		snprintf(C->warn[C->nwarn++], sizeof(C->warn[0]), "no host identity recorded in %s%s%s",
			 !ha ? "A" : "", !ha && !hb ? " and " : "", !hb ? "B" : "");
	else if (strcmp(ha, hb) != 0 || (ma && mb && strcmp(ma, mb) != 0))
		snprintf(C->warn[C->nwarn++], sizeof(C->warn[0]), "different hosts: %s (machine-id %s) and %s (machine-id %s)",
			 ha, ma ? ma : "?", hb, mb ? mb : "?");
	/* host quantities measured in one only: different sources or columns */
	size_t only[2] = {0, 0};
	const char *first[2] = {NULL, NULL};
	for (size_t i = 0; i < C->nrows; i++) {
		const struct row *w = &C->rows[i];
		int side = w->a < 0 ? 1 : w->b < 0 ? 0 : -1;
		if (side < 0)
			continue;
		const struct series *x = side ? &B->s[w->b] : &A->s[w->a];
		if (vm_group(qrules[x->rule].group))
			continue; /* a VM in one run only: listed, not a warning */
		if (!only[side]++)
			first[side] = qrules[x->rule].quantity;
	}
	for (int s = 0; s < 2; s++)
		if (only[s])
			snprintf(C->warn[C->nwarn++], sizeof(C->warn[0]),
				 "the sources or columns differ: %zu host quantities only in %c (%s...)", only[s],
				 s ? 'B' : 'A', first[s]);
}

/* ---- output ---------------------------------------------------------------------- */

static void jnum(FILE *o, double v)
{
	if (isfinite(v))
		fprintf(o, "%.10g", v);
	else
		fputs("null", o);
}

/* a number of the table: "%.4f", or "" (CSV) / "-" (text) */
static void num(FILE *o, double v, const char *none, int width)
{
	if (isfinite(v))
		fprintf(o, "%*.4f", width, v);
	else
		fprintf(o, "%*s", width, none);
}

static const char *side_name(const struct cmp *C, const struct row *w)
{
	return w->a >= 0 ? C->a.s[w->a].ent : C->b.s[w->b].ent;
}

static const char *row_q(const struct cmp *C, const struct row *w)
{
	return qrules[w->a >= 0 ? C->a.s[w->a].rule : C->b.s[w->b].rule].quantity;
}

static const struct vms_stats_summary *sum_of(const struct side *S, int i)
{
	return i >= 0 ? &S->s[i].s : NULL;
}

static void print_csv(struct cmp *C)
{
	FILE *o = C->out;
	fputs("quantity,entity,a_mean,b_mean,delta,ci_low,ci_high,real\n", o);
	for (size_t i = 0; i < C->nrows; i++) {
		const struct row *w = &C->rows[i];
		const struct vms_stats_summary *sa = sum_of(&C->a, w->a), *sb = sum_of(&C->b, w->b);
		fprintf(o, "%s,%s,", row_q(C, w), side_name(C, w));
		num(o, sa ? sa->mean : NAN, "", 0);
		putc(',', o);
		num(o, sb ? sb->mean : NAN, "", 0);
		putc(',', o);
		num(o, w->ci.delta, "", 0);
		putc(',', o);
		num(o, w->ci.lo, "", 0);
		putc(',', o);
		num(o, w->ci.hi, "", 0);
		fprintf(o, ",%d\n", w->ci.real ? 1 : 0);
	}
}

static size_t *ranking(const struct cmp *C, size_t *n)
{
	size_t *k = malloc((C->nrows ? C->nrows : 1) * sizeof(*k));
	*n = 0;
	if (!k)
		return NULL;
	for (size_t i = 0; i < C->nrows; i++)
		if (C->rows[i].ci.real)
			k[(*n)++] = i;
	/* insertion sort, largest relative change first, stable */
	for (size_t i = 1; i < *n; i++) {
		size_t t = k[i], j = i;
		for (; j > 0 && C->rows[k[j - 1]].rank < C->rows[t].rank; j--)
			k[j] = k[j - 1];
		k[j] = t;
	}
	return k;
}

static void json_summary(FILE *o, const struct vms_stats_summary *s)
{
	if (!s) {
		fputs("null", o);
		return;
	}
	fprintf(o, "{\"n\":%zu,\"mean\":", s->n);
	jnum(o, s->mean);
	fputs(",\"p50\":", o);
	jnum(o, s->p50);
	fputs(",\"p95\":", o);
	jnum(o, s->p95);
	fputs(",\"max\":", o);
	jnum(o, s->max);
	putc('}', o);
}

static void json_side(struct cmp *C, const struct side *S)
{
	FILE *o = C->out;
	fputs("{\"file\":", o);
	vms_json_put(o, S->path);
	fputs(",\"window\":", o);
	if (S->win.text)
		vms_json_put(o, S->win.text);
	else
		fputs("null", o);
	fputs(",\"host\":{", o);
	bool any = false;
	for (unsigned k = 0; k < HOST_KEYS; k++) {
		if (!S->host[k])
			continue;
		fprintf(o, "%s\"%s\":", any ? "," : "", host_keys[k]);
		vms_json_put(o, S->host[k]);
		any = true;
	}
	fprintf(o, "},\"intervals\":%zu,\"interval_s\":", S->nin);
	jnum(o, mean_interval(S));
	putc('}', o);
}

static void print_json(struct cmp *C)
{
	FILE *o = C->out;
	fputs("{\"a\":", o);
	json_side(C, &C->a);
	fputs(",\"b\":", o);
	json_side(C, &C->b);
	fprintf(o, ",\n\"method\":\"circular block bootstrap, percentile interval of the difference of means\","
		   "\"level\":%g,\"replicates\":%u,\"seed\":%" PRIu64 ",\"warnings\":[",
		C->opt.level, C->opt.B, C->opt.seed);
	for (unsigned i = 0; i < C->nwarn; i++) {
		if (i)
			putc(',', o);
		vms_json_put(o, C->warn[i]);
	}
	fputs("],\n\"rows\":[", o);
	for (size_t i = 0; i < C->nrows; i++) {
		const struct row *w = &C->rows[i];
		const struct series *x = w->a >= 0 ? &C->a.s[w->a] : &C->b.s[w->b];
		fprintf(o, "%s\n{\"quantity\":", i ? "," : "");
		vms_json_put(o, qrules[x->rule].quantity);
		fputs(",\"entity\":", o);
		vms_json_put(o, x->ent);
		if (x->uuid[0]) {
			fputs(",\"uuid\":", o);
			vms_json_put(o, x->uuid);
		}
		fprintf(o, ",\"in\":\"%s\",\"a\":", w->a < 0 ? "b" : w->b < 0 ? "a" : "both");
		json_summary(o, sum_of(&C->a, w->a));
		fputs(",\"b\":", o);
		json_summary(o, sum_of(&C->b, w->b));
		fputs(",\"delta\":", o);
		jnum(o, w->ci.delta);
		fputs(",\"rel\":", o);
		jnum(o, w->rel);
		fputs(",\"ci_low\":", o);
		jnum(o, w->ci.lo);
		fputs(",\"ci_high\":", o);
		jnum(o, w->ci.hi);
		fprintf(o, ",\"block\":[%zu,%zu],\"real\":%s}", w->ci.block_a, w->ci.block_b,
			w->ci.real ? "true" : "false");
	}
	fputs("],\n\"ranking\":[", o);
	size_t n;
	size_t *k = ranking(C, &n);
	for (size_t i = 0; k && i < n; i++)
		fprintf(o, "%s%zu", i ? "," : "", k[i]);
	free(k);
	fputs("]}\n", o);
}

static void text_side(struct cmp *C, char which, const struct side *S)
{
	FILE *o = C->out;
	fprintf(o, "%c: %s", which, S->path);
	if (S->win.text)
		fprintf(o, "  window %s", S->win.text);
	fprintf(o, "  %zu intervals of %.3f s\n   host %s  kernel %s  %s CPUs  vmsampler %s\n", S->nin,
		mean_interval(S), S->host[0] ? S->host[0] : "?", S->host[1] ? S->host[1] : "?",
		S->host[2] ? S->host[2] : "?", S->host[3] ? S->host[3] : "?");
}

static void text_row(struct cmp *C, const struct row *w)
{
	FILE *o = C->out;
	const struct vms_stats_summary *sa = sum_of(&C->a, w->a), *sb = sum_of(&C->b, w->b);
	fprintf(o, "%-18s %-12s", row_q(C, w), side_name(C, w));
	if (!sa || !sb) {
		fprintf(o, "  only in %c\n", sa ? 'A' : 'B');
		return;
	}
	num(o, sa->mean, "-", 11);
	num(o, sb->mean, "-", 11);
	num(o, w->ci.delta, "-", 11);
	if (isfinite(w->rel))
		fprintf(o, " %+8.1f%%", 100 * w->rel);
	else
		fprintf(o, " %9s", "-");
	putc(' ', o);
	num(o, w->ci.lo, "-", 11);
	num(o, w->ci.hi, "-", 11);
	fprintf(o, " %4s", w->ci.real ? "*" : "");
	num(o, sa->p50, "-", 11);
	num(o, sa->p95, "-", 11);
	num(o, sa->max, "-", 11);
	num(o, sb->p50, "-", 11);
	num(o, sb->p95, "-", 11);
	num(o, sb->max, "-", 11);
	putc('\n', o);
}

static void print_text(struct cmp *C)
{
	FILE *o = C->out;
	fputs("vmsampler report --compare\n", o);
	text_side(C, 'A', &C->a);
	text_side(C, 'B', &C->b);
	for (unsigned i = 0; i < C->nwarn; i++)
		fprintf(o, "warning: %s\n", C->warn[i]);
	fprintf(o, "Real: the %g %% interval of mean(B) - mean(A) excludes 0 (circular block bootstrap, %u replicates, seed %" PRIu64 ")\n",
		100 * C->opt.level, C->opt.B, C->opt.seed);
	static const char head[] =
		"%-18s %-12s %11s %11s %11s %9s  %11s%11s %4s %11s%11s%11s%11s%11s%11s\n";
	size_t n;
	size_t *k = ranking(C, &n);
	fprintf(o, "\nLargest real changes (%zu):\n", n);
	if (n)
		fprintf(o, head, "quantity", "entity", "A mean", "B mean", "delta", "change", "ci_low", "ci_high",
			"real", "A p50", "A p95", "A max", "B p50", "B p95", "B max");
	for (size_t i = 0; k && i < n; i++)
		text_row(C, &C->rows[k[i]]);
	free(k);
	fputs("\nAll:\n", o);
	fprintf(o, head, "quantity", "entity", "A mean", "B mean", "delta", "change", "ci_low", "ci_high", "real",
		"A p50", "A p95", "A max", "B p50", "B p95", "B max");
	for (size_t i = 0; i < C->nrows; i++)
		text_row(C, &C->rows[i]);
}

/* ---- main ------------------------------------------------------------------------- */

static const char usage_text[] =
	"Usage: vmsampler report --compare A.vms B.vms [--window W [--window W]] [OPTIONS]\n"
	"       vmsampler report FILE.vms --window W1 --window W2 [OPTIONS]\n"
	"Compare two runs, or two windows of one run: for each host quantity of the\n"
	"report and each VM's (matched by UUID, then name), the mean, p50, p95 and\n"
	"max in each, the difference and whether it is real (a circular block\n"
	"bootstrap interval of the difference of means that excludes 0).\n"
	"\n"
	"      --compare       A.vms B.vms: the two runs (with --window: W1 in A,\n"
	"                      W2 in B; one --window applies to both)\n"
	"      --window=W      FROM..TO: each end a time in --from's forms (seconds\n"
	"                      from the first frame, HH:MM[:SS], a date and time),\n"
	"                      mark:TEXT (the first mark of that text), or empty\n"
	"                      (the start or the end of the run)\n"
	"      --format=FMT    text (default), csv (quantity,entity,a_mean,b_mean,\n"
	"                      delta,ci_low,ci_high,real) or json\n"
	"      --json          --format=json\n"
	"      --seed=N        the bootstrap's seed (default 1)\n"
	"      --replicates=N  bootstrap replicates (default 1000, 100..100000)\n"
	"      --level=P       the interval's confidence (default 0.95)\n"
	"  -h, --help          show this help\n"
	"\n"
	"Exit status: 0 success, 1 damaged input or an I/O error, 2 usage or\n"
	"configuration error (also a mark that is not in the run, an input that is\n"
	"missing or not a vmsampler stream).  See vmsampler(1).\n";

bool vms_compare_wanted(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			return false;
		if (strcmp(argv[i], "--compare") == 0 || strncmp(argv[i], "--window", 8) == 0)
			return true;
	}
	return false;
}

int vms_compare_main(int argc, char **argv)
{
	bool compare = false, json = false;
	const char *win[2] = {NULL, NULL};
	unsigned nwin = 0;
	const struct vms_tool_opt opts[] = {
		{"compare", no_argument, 'C', NULL, &compare},
		{"window", required_argument, 'W', NULL, NULL},
		{"format", required_argument, 'F', NULL, NULL},
		{"json", no_argument, 'j', NULL, &json},
		{"seed", required_argument, 's', NULL, NULL},
		{"replicates", required_argument, 'B', NULL, NULL},
		{"level", required_argument, 'L', NULL, NULL},
		{NULL, 0, 0, NULL, NULL},
	};
	static const char *const help[] = {usage_text, NULL};
	static const char *const formats[] = {"text", "csv", "json", NULL};
	struct vms_tool_cmd cmd = {.tool = "report", .shortopts = ":h", .opts = opts, .help = help};
	struct cmp C = {.out = stdout, .opt = {.B = 1000, .seed = 1, .level = 0.95}};
	int c;
	while ((c = vms_tool_next(&cmd, argc, argv)) > 0) {
		uint64_t v;
		char *e;
		switch (c) {
		case 'W':
			if (nwin == 2)
				return vms_tool_usage("report", "--window at most twice", optarg);
			win[nwin++] = optarg;
			break;
		case 'F':
			if ((c = vms_tool_pick(optarg, formats)) < 0)
				return vms_tool_usage("report", "--format wants text, csv or json", optarg);
			C.format = c;
			json = false;
			break;
		case 's':
			if (vms_tool_parse_u64(optarg, &C.opt.seed) < 0)
				return vms_tool_usage("report", "--seed wants a non-negative integer", optarg);
			break;
		case 'B':
			if (vms_tool_parse_u64(optarg, &v) < 0 || v < 100 || v > 100000)
				return vms_tool_usage("report", "--replicates wants an integer from 100 to 100000", optarg);
			C.opt.B = (unsigned)v;
			break;
		case 'L':
			errno = 0;
			C.opt.level = strtod(optarg, &e);
			if (errno || *e || !(C.opt.level >= 0.5 && C.opt.level < 1))
				return vms_tool_usage("report", "--level wants a number in [0.5, 1)", optarg);
			break;
		}
	}
	if (c < 0)
		return cmd.rc;
	if (json)
		C.format = F_JSON;
	int nfiles = argc - optind;
	if (compare && nfiles != 2)
		return vms_tool_usage("report", "--compare wants two files, A and B", NULL);
	if (!compare && nfiles != 1)
		return vms_tool_usage("report", nfiles ? "--window wants one FILE (or --compare A B)" : "missing FILE", NULL);
	if (!compare && nwin != 2)
		return vms_tool_usage("report", "a comparison within one run wants two --window", NULL);
	C.a.path = argv[optind];
	C.b.path = argv[compare ? optind + 1 : optind];
	for (unsigned i = 0; i < 2; i++) {
		const char *w = win[nwin == 1 ? 0 : i];
		int r = w ? vms_window_parse(&(i ? &C.b : &C.a)->win, w) : 0;
		if (r < 0) {
			side_free(&C.a);
			side_free(&C.b);
			if (r == -ENOMEM) {
				vms_err("%s", strerror(ENOMEM));
				return 1;
			}
			return vms_tool_usage("report", "bad --window (FROM..TO: a time, mark:TEXT or nothing at each end)", w);
		}
	}
	signal(SIGPIPE, SIG_IGN);
	int rc = 0, r = 0;
	/* one file for two windows is read twice: simple, and the sides
	 * stay independent */
	for (unsigned i = 0; i < 2 && r >= 0; i++) {
		struct side *S = i ? &C.b : &C.a;
		if ((r = read_side(S)) < 0) {
			vms_err("%s", S->err[0] ? S->err : strerror(-r));
			rc = vms_tool_input_status(r, S->t0_set); /* missing, foreign: 2 */
		} else if ((r = window(S)) < 0) {
			vms_err("%s", S->err[0] ? S->err : strerror(-r));
			rc = r == -ENOENT ? 2 : 1;
		}
	}
	if (r >= 0 && (r = build_rows(&C)) < 0) {
		vms_err("%s", strerror(-r));
		rc = 1;
	}
	if (r >= 0) {
		warnings(&C);
		for (unsigned i = 0; i < C.nwarn && C.format != F_TEXT; i++)
			vms_warn("%s", C.warn[i]);
		if (C.format == F_CSV)
			print_csv(&C);
		else if (C.format == F_JSON)
			print_json(&C);
		else
			print_text(&C);
		if (!C.a.nin || !C.b.nin)
			vms_warn("no interval in %s%s%s", !C.a.nin ? "A" : "", !C.a.nin && !C.b.nin ? " and " : "",
				 !C.b.nin ? "B" : "");
		if (vms_tool_flush(C.out) < 0)
			rc = 1;
	}
	free(C.rows);
	side_free(&C.a);
	side_free(&C.b);
	return rc;
}

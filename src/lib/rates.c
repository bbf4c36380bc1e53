/* SPDX-License-Identifier: MIT */
/* rates.c - the rates of one interval, or of several (vms_rate_term), by a
 * rate plan (rates_plan.c says which rates, from which counters, after
 * sysstat), and the one rate stream every reader uses (frame pairs to
 * rates, with the previous values kept per column).
 *
 * Δt is per column: the time since the last frame in which the column
 * had a value, not since the previous frame.  A source sampled every N
 * ticks, or a slow per-VM value that comes every minute, gets its rate
 * over its own interval; a value that is missing in some frames does not
 * empty the rates after it.  Several inputs of one output must share
 * their Δt (they do when one source writes them), else it is empty.
 *
 * Wraps and resets (all counters but the CPU fields of
 * rates_plan.c): a decrease of
 * a counter whose wrap width w is below 64 is a wrap, Δ = cur + 2^w -
 * prev; so is a decrease of a 64-bit counter whose previous value was
 * below 2^32, with w = 32 (a 32-bit kernel: iostat.c write_basic_stat
 * masks such a Δ with 0xffffffff).  The row gets VMS_RATE_WRAP.  Any other
 * decrease is a reset (sa_common.c: an interface unregistered and
 * registered again): the columns that read that counter are empty and the
 * row gets VMS_RATE_RESET.  Sysstat's %-style "0 when it went backwards"
 * (iostat's r/s etc.) is not used: a wrap is computed, a reset is shown
 * as unknown rather than as a false 0.
 *
 * Several intervals (vms_rate_term, for `vmsampler report`): each output
 * is a ratio n / d of sums of Δs (Δt for a rate), so the value over
 * several intervals is the ratio of the summed terms: sar's "counters at
 * the end minus at the start over the whole time", with wraps and resets
 * handled in each interval (an interval with a reset adds nothing). */
#include "rates.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* ---- computing one interval --------------------------------------------- */

struct ctx {
	const struct vms_schema *s;
	const uint64_t *pv, *cv;
	const double *dt; /* per column */
	unsigned flags;
};

/* The interval of column i (seconds), 0 if it has none. */
static double col_dt(const struct ctx *x, int32_t i)
{
	return x->dt[i];
}

/* The common interval of the inputs of one output (b, c may be -1), 0 if
 * they differ or there is none. */
static double common_dt(const struct ctx *x, int32_t a, int32_t b, int32_t c)
{
	double d = col_dt(x, a);
	if ((b >= 0 && col_dt(x, b) != d) || (c >= 0 && col_dt(x, c) != d))
		return 0;
	return d > 0 && isfinite(d) ? d : 0;
}

/* Δ of counter column i over the interval: true and *d, or false (no
 * column, a value missing, or a reset). */
static bool cdelta(struct ctx *x, int32_t i, uint64_t *d)
{
	if (i < 0)
		return false;
	uint64_t p = x->pv[i], c = x->cv[i];
	if (p == VMS_NONE || c == VMS_NONE)
		return false;
	if (c >= p) {
		*d = c - p;
		return true;
	}
	unsigned w = x->s->cols[i].wrap_bits;
	if (w > 0 && w < 64) {
		*d = (c - p) & ((UINT64_C(1) << w) - 1);
		x->flags |= VMS_RATE_WRAP;
		return true;
	}
	if (p <= UINT32_MAX) {
		/* a 64-bit column that a 32-bit kernel fills */
		*d = (c - p) & UINT32_MAX;
		x->flags |= VMS_RATE_WRAP;
		return true;
	}
	x->flags |= VMS_RATE_RESET;
	return false;
}

/* One CPU line: the ticks behind sysstat's percentages (see the top of
 * this file); the percentage is dv[k] / total * 100. */
static void cpu_group(struct vms_cpu_group *g, const struct ctx *x)
{
	const uint64_t *pv = x->pv, *cv = x->cv;
	int64_t p[VMS_CF_N], c[VMS_CF_N];
	double d = -1;
	g->ok = false;
	for (int k = 0; k < VMS_CF_N; k++) {
		if (g->f[k] < 0) {
			p[k] = c[k] = 0; /* the kernel has no such field */
			continue;
		}
		if (d < 0)
			d = col_dt(x, g->f[k]);
		if (col_dt(x, g->f[k]) != d)
			return; /* fields of different frames */
		uint64_t a = pv[g->f[k]], b = cv[g->f[k]];
		if (a == VMS_NONE || b == VMS_NONE || a > INT64_MAX || b > INT64_MAX)
			return;
		p[k] = (int64_t)a;
		c[k] = (int64_t)b;
	}
#define D(k) (c[k] > p[k] ? (uint64_t)(c[k] - p[k]) : 0)
	int64_t uc = c[VMS_CF_USER] - c[VMS_CF_GUEST], up = p[VMS_CF_USER] - p[VMS_CF_GUEST];
	int64_t nc = c[VMS_CF_NICE] - c[VMS_CF_GUEST_NICE], np = p[VMS_CF_NICE] - p[VMS_CF_GUEST_NICE];
	int64_t du, dn;
	if (__builtin_sub_overflow(uc, up, &du) || __builtin_sub_overflow(nc, np, &dn))
		return; /* guest time above user time by more than any kernel counts (a fuzzer's) */
	uint64_t ishift = 0;
	if (c[VMS_CF_USER] >= p[VMS_CF_USER] && du < 0)
		ishift += 0 - (uint64_t)du;
	if (c[VMS_CF_NICE] >= p[VMS_CF_NICE] && dn < 0)
		ishift += 0 - (uint64_t)dn;
	g->total = D(VMS_CF_USER) + D(VMS_CF_NICE) + D(VMS_CF_SYSTEM) + D(VMS_CF_IOWAIT) +
		   D(VMS_CF_IDLE) + D(VMS_CF_STEAL) + D(VMS_CF_IRQ) + D(VMS_CF_SOFTIRQ) + ishift;
	g->dv[VMS_CPU_USR] = du < 0 ? 0 : (uint64_t)du;
	g->dv[VMS_CPU_NICE] = dn < 0 ? 0 : (uint64_t)dn;
	g->dv[VMS_CPU_SYS] = D(VMS_CF_SYSTEM);
	g->dv[VMS_CPU_IOWAIT] = D(VMS_CF_IOWAIT);
	g->dv[VMS_CPU_IRQ] = D(VMS_CF_IRQ);
	g->dv[VMS_CPU_SOFT] = D(VMS_CF_SOFTIRQ);
	g->dv[VMS_CPU_STEAL] = D(VMS_CF_STEAL);
	g->dv[VMS_CPU_GUEST] = D(VMS_CF_GUEST);
	g->dv[VMS_CPU_GNICE] = D(VMS_CF_GUEST_NICE);
	g->dv[VMS_CPU_IDLE] = D(VMS_CF_IDLE);
#undef D
	g->ok = true;
}

/* The term of plan column c over the interval of x. */
static struct vms_rate_term term(struct vms_rate_plan *p, struct ctx *x, const struct vms_rate_col *c)
{
	struct vms_rate_term t = {NAN, 0};
	const uint64_t *cur = x->cv;
	uint64_t da = 0, db = 0, dc = 0;
	double dt_s;
	switch (c->op) {
	case VMS_ROP_GAUGE:
		if (cur[c->a] != VMS_NONE)
			t = (struct vms_rate_term){vms_unscale((double)cur[c->a], c->scale), 1};
		break;
	case VMS_ROP_PER_S:
		dt_s = common_dt(x, c->a, c->b, c->c);
		if (dt_s > 0 && cdelta(x, c->a, &da) && (c->b < 0 || cdelta(x, c->b, &db)) &&
		    (c->c < 0 || cdelta(x, c->c, &dc)))
			t = (struct vms_rate_term){(double)da + (double)db + (double)dc, dt_s};
		break;
	case VMS_ROP_PCT_OF:
		if (common_dt(x, c->a, c->b, -1) > 0 && cdelta(x, c->a, &da) && cdelta(x, c->b, &db))
			t = (struct vms_rate_term){(double)da, (double)da + (double)db};
		break;
	case VMS_ROP_PER_OP:
		if (common_dt(x, c->a, c->b, -1) > 0 && cdelta(x, c->a, &da) && cdelta(x, c->b, &db))
			t = (struct vms_rate_term){(double)da, (double)db};
		break;
	case VMS_ROP_CPU: {
		struct vms_cpu_group *g = &p->cpu[c->grp];
		if (g->stamp != p->stamp) {
			cpu_group(g, x);
			g->stamp = p->stamp;
		}
		if (g->ok)
			t = (struct vms_rate_term){(double)g->dv[c->field], (double)g->total};
		break;
	}
	case VMS_ROP_SUM: {
		/* one interval for every input */
		unsigned n = (unsigned)c->nnum + c->nden;
		dt_s = col_dt(x, c->xs[0]);
		if (!(dt_s > 0 && isfinite(dt_s)))
			break;
		double sn = 0, sd = 0;
		for (unsigned k = 0; k < n; k++) {
			if (col_dt(x, c->xs[k]) != dt_s || !cdelta(x, c->xs[k], &da))
				return t;
			if (k < c->nnum)
				sn += (double)da;
			else
				sd += (double)da;
		}
		t = (struct vms_rate_term){sn, c->nden ? sd : dt_s};
		break;
	}
	case VMS_ROP_CAP: {
		/* the quota and period at the frame; none: no cap */
		uint64_t q = cur[c->b], per = cur[c->c];
		dt_s = col_dt(x, c->a);
		if (q == VMS_NONE || per == VMS_NONE || q == 0 || q >= UINT64_MAX - 1 || !(dt_s > 0) ||
		    !cdelta(x, c->a, &da))
			break;
		t = (struct vms_rate_term){(double)da * (double)per / (double)q, dt_s * 1e9};
		break;
	}
	case VMS_ROP_GEXPR: {
		/* at the frame: the gauges' current values (a term n / 1, so that
		 * a sum of terms is the mean, as for VMS_ROP_GAUGE) */
		double v[2] = {0, 0};
		for (unsigned k = 0; k < (unsigned)c->nnum + c->nden; k++) {
			int32_t i = c->xs[k] < 0 ? ~c->xs[k] : c->xs[k];
			if (cur[i] == VMS_NONE)
				return t;
			double g = vms_unscale((double)cur[i], x->s->cols[i].scale);
			v[k >= c->nnum] += c->xs[k] < 0 ? -g : g;
		}
		if (v[0] < 0)
			v[0] = 0;
		if (!c->nden)
			v[1] = 1;
		t = (struct vms_rate_term){v[1] > 0 ? v[0] * c->mul / v[1] : 0, 1};
		break;
	}
	}
	return t;
}

double vms_rate_value(const struct vms_rate_col *c, const struct vms_rate_term *t)
{
	if (isnan(t->n))
		return NAN;
	switch (c->op) {
	case VMS_ROP_GAUGE:
	case VMS_ROP_GEXPR:
		return t->d == 1 ? t->n : t->n / t->d; /* a sum: the mean */
	case VMS_ROP_PER_S:
	case VMS_ROP_CAP:
		return t->d > 0 ? t->n * c->mul / t->d : NAN;
	case VMS_ROP_PCT_OF:
		return t->d != 0 ? t->n / t->d * 100 : 0;
	case VMS_ROP_PER_OP:
	case VMS_ROP_SUM:
		return t->d != 0 ? t->n * c->mul / t->d : 0;
	case VMS_ROP_CPU:
		if (t->d == 0)
			/* tickless: a CPU idles; "all" cannot be (mpstat.c, pr_stats.c) */
			return c->field == VMS_CPU_IDLE && !c->cpu_all ? 100 : 0;
		return t->n / t->d * 100;
	}
	return NAN;
}

unsigned vms_rate_terms_dt(struct vms_rate_plan *p, const uint64_t *prev, const uint64_t *cur,
			   const double *dt, const uint32_t *sel, uint32_t nsel,
			   struct vms_rate_term *t)
{
	struct ctx x = {.s = p->schema, .pv = prev, .cv = cur, .dt = dt};
	p->stamp++;
	if (!sel)
		nsel = p->ncols;
	for (uint32_t i = 0; i < nsel; i++)
		t[i] = term(p, &x, &p->cols[sel ? sel[i] : i]);
	return x.flags;
}

unsigned vms_rate_compute_dt(struct vms_rate_plan *p, const uint64_t *prev, const uint64_t *cur,
			     const double *dt, double *out)
{
	struct ctx x = {.s = p->schema, .pv = prev, .cv = cur, .dt = dt};
	p->stamp++;
	for (uint32_t k = 0; k < p->ncols; k++) {
		struct vms_rate_term t = term(p, &x, &p->cols[k]);
		out[k] = vms_rate_value(&p->cols[k], &t);
	}
	return x.flags;
}

double vms_unscale(double v, int scale)
{
	for (int s = 0; s < scale; s++)
		v /= 10;
	for (int s = 0; s > scale; s--)
		v *= 10;
	return v;
}

int32_t vms_rate_prev_col(const struct vms_schema *ps, const struct vms_schema *s, uint32_t i)
{
	int32_t j = -1;
	if (ps == s)
		return (int32_t)i;
	else if (ps && i < ps->ncols && strcmp(ps->cols[i].name, s->cols[i].name) == 0)
		j = (int32_t)i;
	else if (ps)
		j = vms_schema_find(ps, s->cols[i].name);
	/* a column whose meaning changed is not a continuation */
	if (j >= 0 && (ps->cols[j].kind != s->cols[i].kind ||
		       ps->cols[j].scale != s->cols[i].scale || strcmp(ps->cols[j].key, s->cols[i].key)))
		j = -1;
	return j;
}

int vms_rate_last_align(struct vms_rate_last *l, const struct vms_schema *s)
{
	if (l->sch == s)
		return 0;
	size_t n = s->ncols ? s->ncols : 1;
	uint64_t *v = malloc(n * sizeof(*v)), *t = malloc(n * sizeof(*t));
	double *dt = calloc(n, sizeof(*dt));
	if (!v || !t || !dt) {
		free(v);
		free(t);
		free(dt);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < s->ncols; i++) {
		int32_t j = l->sch ? vms_rate_prev_col(l->sch, s, i) : -1;
		v[i] = j >= 0 ? l->v[j] : VMS_NONE;
		t[i] = j >= 0 ? l->t[j] : 0;
	}
	vms_rate_last_free(l);
	l->v = v;
	l->t = t;
	l->dt = dt;
	l->sch = s;
	return 0;
}

void vms_rate_last_dt(struct vms_rate_last *l, uint64_t t_mono_ns)
{
	for (uint32_t i = 0; i < l->sch->ncols; i++)
		l->dt[i] = l->t[i] && t_mono_ns > l->t[i] ? (double)(t_mono_ns - l->t[i]) / 1e9 : 0;
}

void vms_rate_last_put(struct vms_rate_last *l, const struct vms_frame *f)
{
	for (uint32_t i = 0; i < f->ncols; i++)
		if (f->v[i] != VMS_NONE) {
			l->v[i] = f->v[i];
			l->t[i] = f->t_mono_ns;
		}
}

void vms_rate_last_dt_some(struct vms_rate_last *l, uint64_t t_mono_ns, const uint32_t *cols, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++) {
		uint32_t i = cols[k];
		l->dt[i] = l->t[i] && t_mono_ns > l->t[i] ? (double)(t_mono_ns - l->t[i]) / 1e9 : 0;
	}
}

void vms_rate_last_put_some(struct vms_rate_last *l, const struct vms_frame *f, const uint32_t *cols,
			    uint32_t n)
{
	for (uint32_t k = 0; k < n; k++) {
		uint32_t i = cols[k];
		if (f->v[i] != VMS_NONE) {
			l->v[i] = f->v[i];
			l->t[i] = f->t_mono_ns;
		}
	}
}

void vms_rate_inputs(const struct vms_rate_plan *p, uint32_t k, bool *used)
{
	const struct vms_rate_col *c = &p->cols[k];
	if (c->op == VMS_ROP_CPU) {
		for (int f = 0; f < VMS_CF_N; f++)
			if (p->cpu[c->grp].f[f] >= 0)
				used[p->cpu[c->grp].f[f]] = true;
		return;
	}
	if (c->op == VMS_ROP_SUM || c->op == VMS_ROP_GEXPR) {
		for (unsigned i = 0; i < (unsigned)c->nnum + c->nden; i++)
			used[c->xs[i] < 0 ? ~c->xs[i] : c->xs[i]] = true;
		return;
	}
	if (c->a >= 0)
		used[c->a] = true;
	if (c->b >= 0)
		used[c->b] = true;
	if (c->c >= 0)
		used[c->c] = true;
}

void vms_rate_last_free(struct vms_rate_last *l)
{
	free(l->v);
	free(l->t);
	free(l->dt);
	memset(l, 0, sizeof(*l));
}

/* ---- one rate stream ---------------------------------------------------------- */

int vms_rate_stream_schema(struct vms_rate_stream *st, const struct vms_schema *s)
{
	if (s == st->sch && st->plan)
		return 0;
	int e = vms_rate_plan_renew(&st->plan, s);
	if (e < 0)
		return e;
	st->sch = s;
	return 1;
}

/* One frame: the interval since the previous one (values into out, or the
 * terms of sel into t), then f remembered. */
static int step(struct vms_rate_stream *st, const struct vms_frame *f, const uint32_t *sel, uint32_t nsel,
		struct vms_rate_term *t, double *out)
{
	const struct vms_schema *s = st->sch;
	struct vms_rate_last *l = &st->last;
	st->dt = 0;
	st->flags = 0;
	if (!st->have_prev)
		vms_rate_last_free(l); /* a new stream: nothing carries over */
	int e = vms_rate_last_align(l, s);
	if (e < 0)
		return e;
	bool ended = st->have_prev;
	if (ended) {
		if (st->in)
			vms_rate_last_dt_some(l, f->t_mono_ns, st->in, st->nin);
		else
			vms_rate_last_dt(l, f->t_mono_ns);
		st->dt = f->t_mono_ns > st->pt_mono ? (double)(f->t_mono_ns - st->pt_mono) / 1e9 : 0;
		st->flags = out ? vms_rate_compute_dt(st->plan, l->v, f->v, l->dt, out)
				: vms_rate_terms_dt(st->plan, l->v, f->v, l->dt, sel, nsel, t);
		if (s != st->psch || f->missed_ticks || f->lost_frames || (f->flags & VMS_FRAME_GAP) ||
		    f->seq != st->pseq + 1 || st->dt <= 0)
			st->flags |= VMS_RATE_GAP;
	}
	if (st->in)
		vms_rate_last_put_some(l, f, st->in, st->nin);
	else
		vms_rate_last_put(l, f);
	st->pseq = f->seq;
	st->pt_mono = f->t_mono_ns;
	st->psch = s;
	st->have_prev = true;
	return ended;
}

int vms_rate_stream_values(struct vms_rate_stream *st, const struct vms_frame *f, double *out)
{
	return step(st, f, NULL, 0, NULL, out);
}

int vms_rate_stream_terms(struct vms_rate_stream *st, const struct vms_frame *f, const uint32_t *sel,
			  uint32_t nsel, struct vms_rate_term *t)
{
	return step(st, f, sel, nsel, t, NULL);
}

void vms_rate_stream_restart(struct vms_rate_stream *st)
{
	st->have_prev = false;
}

void vms_rate_stream_free(struct vms_rate_stream *st)
{
	vms_rate_plan_free(st->plan);
	vms_rate_last_free(&st->last);
	memset(st, 0, sizeof(*st));
}

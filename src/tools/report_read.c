/* SPDX-License-Identifier: MIT */
/* report_read.c - the readings of `vmsampler report` (report_int.h).
 *
 * The input is read once per section in text and JSON (sar prints one
 * section after the other, each with its Average), once for --summary,
 * and again while a p95 is not yet known to its last printed digit: a
 * regular file is reopened (and read up to the frames the first reading
 * saw, so a file that grows meanwhile gives the same report), standard
 * input, a FIFO or a live ring are first copied into memory (a ring as
 * the binary stream of the frames it holds at that moment).
 *
 * Rows.  A row is one frame's interval, or with --interval N the frames
 * of N seconds (a row ends at the first frame at least N seconds, less
 * half an interval, after it started; a last row shorter than that is
 * left out, as sar does).  Rates over a row are the sums of each
 * interval's terms (rates.h, vms_rate_term): what sar computes from the
 * counters at the row's ends, with wraps and resets handled in each
 * interval.  Gauges show their last value in the row.  The Average row
 * is computed the same way over every row: rates as sar's Average (the
 * whole span), gauges as the mean of the rows (sar's queue averages).
 *
 * --summary: per column the min, the avg (the Average row), the max and
 * the p95 (nearest rank: the smallest row value that at least 95 % of the
 * rows do not exceed) of the rows.  The p95 is exact to the printed
 * digit: values are keys (the value as printed, times 10^digits); a
 * log-linear histogram of the keys in the first reading, then linear ones
 * over the bucket holding the p95's rank, narrow it down to one key in a
 * few readings, in memory bounded by the number of columns. */
#include "report_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

void *rpt_grow(void *p, uint32_t *cap, uint32_t n, size_t size)
{
	if (n < *cap)
		return p;
	uint32_t c = *cap ? *cap * 2 : 16;
	void *q = realloc(p, (size_t)c * size);
	if (q)
		*cap = c;
	return q;
}

double rpt_pow10i(int prec)
{
	double s = 1;
	for (int i = 0; i < prec; i++)
		s *= 10;
	return s;
}

/* The key of v: v as printed with prec digits, times 10^prec (as
 * vms_fmt_double rounds it; scale is 10^prec). */
static uint64_t key_of(double v, double scale)
{
	if (!(v > 0))
		return 0;
	double r = v * scale + 0.5; /* positive: truncation is floor() (no libm here) */
	return r >= 9.2e18 ? (uint64_t)9.2e18 : (uint64_t)r;
}

/* log-linear bucket of a key, and the keys of a bucket */
static uint32_t llb(uint64_t k)
{
	if (k < 64)
		return (uint32_t)k;
	int e = 63 - __builtin_clzll(k);
	return 64 + (uint32_t)(e - 6) * 64 + (uint32_t)((k >> (e - 6)) & 63);
}

static void llb_range(uint32_t b, uint64_t *lo, uint64_t *hi)
{
	if (b < 64) {
		*lo = *hi = b;
		return;
	}
	unsigned e = (b - 64) / 64 + 6, sub = (b - 64) % 64;
	*lo = (uint64_t)(64 + sub) << (e - 6);
	*hi = *lo + (UINT64_C(1) << (e - 6)) - 1;
}

#define TOL_NS 1000000 /* 1 ms: a frame taken a little after the time given */

/* -1 before --from, 0 in the range, 1 after --to */
static int in_range(const struct report *R, const struct vms_frame *f)
{
	double rel = ((double)f->t_mono_ns - (double)R->t0_mono) / 1e9;
	if ((R->from.kind == VMS_T_REL && rel * 1e9 < R->from.rel * 1e9 - TOL_NS) ||
	    (R->from.kind == VMS_T_ABS && f->t_real_ns < R->from.abs_ns - TOL_NS))
		return -1;
	if ((R->to.kind == VMS_T_REL && rel * 1e9 > R->to.rel * 1e9 + TOL_NS) ||
	    (R->to.kind == VMS_T_ABS && f->t_real_ns > R->to.abs_ns + TOL_NS))
		return 1;
	return 0;
}

static void row_reset(struct report *R)
{
	for (uint32_t i = 0; i < R->nact; i++) {
		struct rcol *c = &R->rcols[R->act[i]];
		c->row = (struct vms_rate_term){NAN, 0};
		c->glast = NAN;
	}
	for (uint32_t e = 0; e < R->nents; e++)
		R->ents[e].present = false;
}

/* Count the buffered keys: into the log-linear histogram (the summary's
 * reading) or the linear one over [lo, hi] (the next ones). */
static void keys_flush(struct rcol *c, bool loglin)
{
	struct qstate *q = &c->q;
	if (loglin) {
		for (uint32_t i = 0; i < q->nkb; i++)
			q->h[llb(q->kb[i])]++;
	} else {
		u128 w = (u128)(q->hi - q->lo) + 1;
		for (uint32_t i = 0; i < q->nkb; i++) {
			uint64_t k = q->kb[i];
			if (k < q->lo)
				q->below++;
			else if (k <= q->hi)
				q->h[(uint32_t)((u128)(k - q->lo) * q->nb / w)]++;
		}
	}
	q->nkb = 0;
}

static void key_add(struct rcol *c, bool loglin)
{
	struct qstate *q = &c->q;
	uint64_t one;
	if (!q->kb && !(q->kb = malloc(KB_N * sizeof(*q->kb)))) {
		/* no buffer: count it now */
		one = key_of(c->v, c->scale);
		q->kb = &one;
		q->nkb = 1;
		keys_flush(c, loglin);
		q->kb = NULL;
		return;
	}
	q->kb[q->nkb++] = key_of(c->v, c->scale);
	if (q->nkb == KB_N)
		keys_flush(c, loglin);
}

static void stats_add(struct rcol *c)
{
	double v = c->v;
	if (isnan(v))
		return;
	if (!c->n || v < c->min)
		c->min = v;
	if (!c->n || v > c->max)
		c->max = v;
	c->n++;
	if (c->q.h)
		key_add(c, true);
}

static void refine_add(struct rcol *c)
{
	if (!isnan(c->v) && c->q.h)
		key_add(c, false);
}

/* Print the events read before the frame `ord` of the range: those read
 * after frame ord - 1 have ord - 1 (the first reading, which meets them
 * after that row is printed, and the next ones place them alike). */
void rpt_events_upto(struct report *R, uint64_t ord)
{
	for (; R->ev_next < R->nev && R->evs[R->ev_next].ord < ord; R->ev_next++)
		if (R->mode == M_TEXT)
			rpt_text_event(R, &R->evs[R->ev_next]);
}

double rpt_avg_value(const struct rcol *c)
{
	if (c->kind == K_RATE)
		return vms_rate_value(&c->def, &c->avg);
	return c->gn ? c->gsum / (double)c->gn : NAN;
}

/* The end of a row: frames a (start) to b (end), b the ord-th of the range. */
static void row_end(struct report *R, const struct pos *a, const struct pos *b, uint64_t ord)
{
	if (!R->ms_set) {
		R->ms = (double)(b->t_mono - a->t_mono) < 0.9995e9;
		R->ms_set = true;
	}
	if (!R->rows)
		R->first = *a;
	R->last = *b;
	R->rows++;
	for (uint32_t i = 0; i < R->nact; i++) {
		struct rcol *c = &R->rcols[R->act[i]];
		double v;
		if (c->kind == K_RATE) {
			v = vms_rate_value(&c->def, &c->row);
		} else {
			v = c->glast;
			if (c->kind == K_RUNQ && !isnan(v))
				v = v >= 1 ? v - 1 : 0; /* sar: not the process that reads it */
		}
		c->v = v;
		if (R->mode == M_REFINE) {
			refine_add(c);
			continue;
		}
		if (c->kind == K_RATE) {
			vms_rate_term_add(&c->avg, &c->row);
		} else if (!isnan(v)) {
			c->gsum += v;
			c->gn++;
		}
		if (R->mode == M_SUMMARY)
			stats_add(c);
	}
	if (R->mode == M_TEXT || R->mode == M_JSON)
		for (unsigned s = 0; s < S_N; s++)
			if ((R->mask >> s) & 1)
				rpt_print_row(R, s, a, b, ord);
	row_reset(R);
}

static void add_event(struct report *R, const struct vms_event *e, uint64_t ord)
{
	uint32_t cap = (uint32_t)R->capev;
	struct ev *n = rpt_grow(R->evs, &cap, (uint32_t)R->nev, sizeof(*n));
	if (!n)
		return; /* an event less: said nowhere, but memory is gone anyway */
	R->evs = n;
	R->capev = cap;
	R->evs[R->nev++] = (struct ev){*e, ord};
}

static void pos_of(struct pos *p, const struct vms_frame *f)
{
	p->t_mono = f->t_mono_ns;
	p->t_real = f->t_real_ns;
}

/* Read the input once: rows of the sections in mask.  0, or -errno with
 * R->err set (the first reading: it is the report's failure). */
int rpt_run_pass(struct report *R, enum mode mode, unsigned mask)
{
	struct vms_reader *rd;
	int r = R->mem ? vms_reader_open_mem(&rd, R->mem, R->memlen, 0) : vms_reader_open(&rd, R->in, 0);
	bool first = R->npass++ == 0;
	if (r < 0) {
		snprintf(R->err, sizeof(R->err), "%s", vms_reader_error(rd));
		vms_reader_close(rd);
		return r;
	}
	vms_rdr_want_events(rd, first);
	R->mode = mode;
	R->mask = mask;
	R->rows = 0;
	R->ev_next = 0;
	R->hdr = false;
	R->nact = 0;
	if (R->nrc > R->capact) {
		uint32_t *a = realloc(R->act, R->nrc * sizeof(*a));
		if (!a) {
			vms_reader_close(rd);
			snprintf(R->err, sizeof(R->err), "%s", strerror(ENOMEM));
			return -ENOMEM;
		}
		R->act = a;
		R->capact = R->nrc;
	}
	for (uint32_t i = 0; i < R->nrc; i++) {
		struct rcol *c = &R->rcols[i];
		c->active = ((mask >> R->ents[c->ent].sec) & 1) && (mode != M_REFINE || (c->q.h && !c->q.done));
		if (c->active)
			R->act[R->nact++] = i;
		c->q.below = 0;
		if (mode == M_REFINE)
			continue; /* the first reading's averages stay */
		c->avg = (struct vms_rate_term){NAN, 0};
		c->gsum = 0;
		c->gn = 0;
	}
	for (uint32_t e = 0; e < R->nents; e++)
		R->ents[e].rows = 0;
	row_reset(R);

	struct genmap gm = {0};
	struct vms_rate_stream st = {0};
	struct pos start = {0}, cur;
	bool base = false;
	uint64_t streams = 1, nf = 0, ord = 0;
	while (!(R->counted && nf >= R->nframes) && (r = vms_reader_next(rd)) > 0) {
		if (r == 2) {
			if (base)
				add_event(R, vms_rdr_event(rd), ord);
			continue;
		}
		nf++;
		const struct vms_frame *f = vms_reader_frame(rd);
		const struct vms_schema *s = vms_rdr_schema(rd);
		if (vms_rdr_streams(rd) > streams) {
			/* a new stream (the sampler started again): no interval
			 * across; a row begun before it ends there */
			streams = vms_rdr_streams(rd);
			if (base && ord > 0 && cur.t_mono != start.t_mono)
				row_end(R, &start, &cur, ord);
			base = false;
		}
		if (!R->t0_set) {
			R->t0_set = true;
			R->t0_mono = f->t_mono_ns;
			R->t0_real = f->t_real_ns;
			vms_report_resolve_tod(&R->from, f->t_real_ns);
			vms_report_resolve_tod(&R->to, f->t_real_ns);
		}
		int w = in_range(R, f);
		if (w < 0)
			continue;
		if (w > 0)
			break;
		if ((r = vms_rate_stream_schema(&st, s)) > 0 && (r = rpt_genmap_build(R, &gm, &st, s)) == 0) {
			st.in = gm.in;
			st.nin = gm.nin;
		}
		if (r < 0)
			break;
		if (!base)
			vms_rate_stream_restart(&st);
		if ((r = vms_rate_stream_terms(&st, f, gm.sel, gm.n, gm.t)) < 0)
			break;
		if (!base) {
			pos_of(&start, f);
			cur = start;
			base = true;
			row_reset(R);
			continue;
		}
		ord++;
		for (uint32_t i = 0; i < gm.n; i++) {
			struct rcol *c = &R->rcols[gm.rc[i]];
			R->ents[c->ent].present = true;
			if (c->kind == K_RATE)
				vms_rate_term_add(&c->row, &gm.t[i]);
			else if (!isnan(gm.t[i].n))
				c->glast = gm.t[i].n;
		}
		double dt = ((double)f->t_mono_ns - (double)cur.t_mono) / 1e9;
		pos_of(&cur, f);
		double el = ((double)cur.t_mono - (double)start.t_mono) / 1e9;
		if (R->interval <= 0 || el + dt / 2 >= R->interval) {
			row_end(R, &start, &cur, ord);
			start = cur;
		}
		if (R->out && ferror(R->out)) {
			R->oerr = true;
			R->oerrno = errno;
			break;
		}
	}
	if (r < 0 && first) {
		if (r == -ESRCH)
			snprintf(R->warn, sizeof(R->warn), "%s: %s", R->in, vms_reader_error(rd));
		else
			snprintf(R->err, sizeof(R->err), "%s: %s; the report covers the frames before it", R->in,
				 r == -ENOMEM ? strerror(ENOMEM) : vms_reader_error(rd));
	} else if (first && vms_reader_error(rd)[0]) {
		snprintf(R->warn, sizeof(R->warn), "%s: %s", R->in, vms_reader_error(rd)); /* a torn tail */
	}
	if (first) {
		R->nframes = nf;
		R->counted = true;
	}
	for (uint32_t i = 0; i < R->nact; i++) {
		struct rcol *c = &R->rcols[R->act[i]];
		if (c->q.h && c->q.nkb)
			keys_flush(c, mode == M_SUMMARY);
	}
	vms_rate_stream_free(&st);
	rpt_genmap_free(&gm);
	vms_reader_close(rd);
	return r < 0 && r != -ESRCH ? r : 0;
}

static int slurp_fd(struct report *R, int fd)
{
	size_t cap = 1 << 16, len = 0;
	uint8_t *b = malloc(cap);
	if (!b)
		return -ENOMEM;
	for (;;) {
		if (len == cap) {
			uint8_t *n = realloc(b, cap * 2);
			if (!n) {
				free(b);
				return -ENOMEM;
			}
			b = n;
			cap *= 2;
		}
		ssize_t n = read(fd, b + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = -errno;
			free(b);
			return e;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	R->mem = b;
	R->memlen = len;
	return 0;
}

static int mem_reserve(struct report *R, size_t *cap, size_t need)
{
	if (R->memlen + need <= *cap)
		return 0;
	size_t c = *cap ? *cap : 1 << 16;
	while (c < R->memlen + need)
		c *= 2;
	uint8_t *n = realloc(R->mem, c);
	if (!n)
		return -ENOMEM;
	R->mem = n;
	*cap = c;
	return 0;
}

/* The frames a ring holds now, as a binary stream in memory. */
static int capture_ring(struct report *R, struct vms_reader *rd)
{
	size_t cap = 0;
	uint64_t *prev = NULL;
	const struct vms_schema *cur = NULL;
	int r = mem_reserve(R, &cap, VMS_FMT_HEADER_SIZE);
	if (r < 0)
		return r;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	R->memlen += vms_bin_header_enc(R->mem, (int64_t)now.tv_sec * 1000000000LL + now.tv_nsec);
	while ((r = vms_reader_next(rd)) > 0) {
		const struct vms_schema *s = vms_rdr_schema(rd);
		const struct vms_frame *f = vms_reader_frame(rd);
		bool key = false, kf;
		if (s != cur) {
			if ((r = mem_reserve(R, &cap, vms_bin_schema_size(s))) < 0)
				break;
			R->memlen += vms_bin_schema_enc(R->mem + R->memlen, s);
			free(prev);
			prev = calloc(s->ncols ? s->ncols : 1, sizeof(*prev));
			if (!prev) {
				r = -ENOMEM;
				break;
			}
			cur = s;
			key = true;
		}
		if ((r = mem_reserve(R, &cap, vms_bin_data_max(f->ncols))) < 0)
			break;
		R->memlen += vms_bin_data_enc(R->mem + R->memlen, f, prev, key, &kf);
	}
	free(prev);
	if (r == -ESRCH || (r == 0 && vms_reader_error(rd)[0]))
		snprintf(R->warn, sizeof(R->warn), "%s: %s", R->in, vms_reader_error(rd));
	else if (r < 0)
		snprintf(R->err, sizeof(R->err), "%s: %s", R->in,
			 r == -ENOMEM ? strerror(ENOMEM) : vms_reader_error(rd));
	return r == -ESRCH ? 0 : r;
}

/* Decide how the input is read again: reopened (a regular file) or a
 * copy in memory. */
int rpt_open_input(struct report *R)
{
	struct stat st;
	if (!R->ring && (strcmp(R->in, "-") == 0 || (stat(R->in, &st) == 0 && !S_ISREG(st.st_mode)))) {
		int fd = strcmp(R->in, "-") == 0 ? STDIN_FILENO : open(R->in, O_RDONLY | O_CLOEXEC);
		int r = fd < 0 ? -errno : slurp_fd(R, fd);
		if (fd > STDIN_FILENO)
			close(fd);
		if (r < 0)
			snprintf(R->err, sizeof(R->err), "%s: %s", R->in, strerror(-r));
		return r;
	}
	struct vms_reader *rd;
	int r = vms_reader_open(&rd, R->in, 0);
	if (r < 0) {
		snprintf(R->err, sizeof(R->err), "%s", vms_reader_error(rd));
	} else if (vms_reader_kind(rd) == VMS_READER_RING) {
		r = capture_ring(R, rd);
	} else if (R->ring) {
		snprintf(R->err, sizeof(R->err), "%s: not a vmsampler ring (a binary stream: give it without --ring)",
			 R->in);
		r = -EINVAL;
	}
	vms_reader_close(rd);
	return r;
}

/* After a reading: the bucket that holds each unresolved p95; true while
 * some p95 is still a range of keys. */
static bool refine_step(struct report *R, bool loglin)
{
	bool more = false;
	for (uint32_t i = 0; i < R->nrc; i++) {
		struct rcol *c = &R->rcols[i];
		struct qstate *q = &c->q;
		if (!q->h || q->done)
			continue;
		uint64_t cum = loglin ? 0 : q->below;
		uint32_t nb = loglin ? LLB_N : q->nb, b;
		for (b = 0; b < nb && cum + q->h[b] < q->rank; b++)
			cum += q->h[b];
		if (b == nb) {
			/* the rows changed between readings: cannot happen with
			 * the same input; settle for the top of the range */
			q->lo = q->hi;
		} else if (loglin) {
			llb_range(b, &q->lo, &q->hi);
		} else {
			u128 w = (u128)(q->hi - q->lo) + 1;
			uint64_t lo = q->lo + (uint64_t)((w * b + nb - 1) / nb);
			uint64_t hi = q->lo + (uint64_t)((w * (b + 1) + nb - 1) / nb) - 1;
			q->lo = lo;
			q->hi = hi;
		}
		free(q->h);
		q->h = NULL;
		if (q->lo == q->hi)
			q->done = true;
		else
			more = true;
	}
	return more;
}

/* Buckets for the next reading over each unresolved range. */
static int refine_alloc(struct report *R)
{
	uint32_t open = 0;
	for (uint32_t i = 0; i < R->nrc; i++)
		open += R->rcols[i].n && !R->rcols[i].q.done;
	uint32_t per = open ? QBUDGET / open : 0;
	if (per < 4096)
		per = 4096;
	for (uint32_t i = 0; i < R->nrc; i++) {
		struct qstate *q = &R->rcols[i].q;
		if (!R->rcols[i].n || q->done)
			continue;
		uint64_t w = q->hi - q->lo + 1;
		q->nb = w < per ? (uint32_t)w : per;
		q->h = calloc(q->nb, sizeof(*q->h));
		if (!q->h)
			return -ENOMEM;
	}
	return 0;
}

int rpt_summarize(struct report *R)
{
	/* min, max, the averages and a log-linear histogram of each column */
	int r = rpt_run_pass(R, M_SUMMARY, R->only);
	if (r < 0 || R->oerr)
		return r;
	for (uint32_t i = 0; i < R->nrc; i++) {
		struct rcol *c = &R->rcols[i];
		c->q.rank = (c->n * 95 + 99) / 100;
		c->q.done = !c->n;
		if (!c->n) {
			free(c->q.h);
			c->q.h = NULL;
		}
	}
	/* then linear histograms over the p95's bucket, until one key */
	bool more = refine_step(R, true);
	for (unsigned k = 0; more && k < QPASSES; k++) {
		if ((r = refine_alloc(R)) < 0 || (r = rpt_run_pass(R, M_REFINE, R->only)) < 0)
			return r;
		more = refine_step(R, false);
	}
	return 0;
}

/* SPDX-License-Identifier: MIT */
/* rates_csv.c - the CSV writer of `dump --rates` (rates_csv.h): the rows
 * of libvmsampler's rate stream (src/lib/rates.c), which computes them; a
 * sink, so in the tools, not in the library. */
#include "rates_csv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "fmt.h"
#include "log.h"

#define RATES_META "seq,time,t_mono_ns,interval_s,rate_flags"
#define RATE_DIGITS 2     /* sysstat prints two decimals */
#define FIELD_MAX 32      /* one formatted value */

struct vms_rates {
	struct vms_out out;
	char **names;         /* the header's derived columns */
	uint32_t nnames, capnames;
	bool header_done;
	uint64_t rows;
	struct vms_rate_stream st; /* the plan of the current generation, the intervals */
	int32_t *map;         /* names[i] -> plan column, -1 */
	double *vals;
};

int vms_rates_open(struct vms_rates **out, const char *path, unsigned how)
{
	struct vms_rates *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	int e = vms_out_open(&r->out, path, how, 1 << 16);
	if (e < 0) {
		free(r);
		return e;
	}
	*out = r;
	return 0;
}

static int find_name(const struct vms_rates *r, const char *n)
{
	for (uint32_t i = 0; i < r->nnames; i++)
		if (strcmp(r->names[i], n) == 0)
			return (int)i;
	return -1;
}

static int add_names(struct vms_rates *r, const struct vms_rate_plan *p)
{
	for (uint32_t k = 0; k < p->ncols; k++) {
		if (find_name(r, p->cols[k].name) >= 0)
			continue;
		if (r->nnames == r->capnames) {
			uint32_t cap = r->capnames ? r->capnames * 2 : 64;
			char **n = realloc(r->names, cap * sizeof(*n));
			if (!n)
				return -ENOMEM;
			r->names = n;
			r->capnames = cap;
		}
		r->names[r->nnames] = strdup(p->cols[k].name);
		if (!r->names[r->nnames])
			return -ENOMEM;
		r->nnames++;
	}
	return 0;
}

int vms_rates_declare(struct vms_rates *r, const struct vms_schema *s)
{
	struct vms_rate_plan *p;
	int e = vms_rate_plan_new(s, &p);
	if (e < 0)
		return e;
	e = add_names(r, p);
	vms_rate_plan_free(p);
	return e;
}

/* Write everything buffered (a reader may block). */
static int put(struct vms_rates *r, size_t need, char **p)
{
	int e = vms_out_ensure(&r->out, need);
	if (e < 0)
		return e;
	if (vms_out_room(&r->out) < need) {
		e = vms_out_drain(&r->out);
		if (e < 0)
			return e;
	}
	*p = vms_out_reserve(&r->out, need);
	return 0;
}

static int write_header(struct vms_rates *r)
{
	size_t need = sizeof(RATES_META) + 4;
	for (uint32_t i = 0; i < r->nnames; i++)
		need += vms_csv_field_max(r->names[i]) + 1;
	char *p, *st;
	int e = put(r, need, &p);
	if (e < 0)
		return e;
	st = p;
	memcpy(p, RATES_META, sizeof(RATES_META) - 1);
	p += sizeof(RATES_META) - 1;
	for (uint32_t i = 0; i < r->nnames; i++) {
		*p++ = ',';
		p = vms_csv_field(p, r->names[i]);
	}
	*p++ = '\r';
	*p++ = '\n';
	vms_out_advance(&r->out, (size_t)(p - st));
	vms_out_end_record(&r->out);
	r->header_done = true;
	return 0;
}

/* A new generation (its plan in r->st): the header map. */
static int switch_schema(struct vms_rates *r, const struct vms_schema *s)
{
	const struct vms_rate_plan *p = r->st.plan;
	int e;
	if (!r->header_done && r->nnames == 0) {
		e = add_names(r, p);
		if (e < 0)
			return e;
	}
	free(r->map);
	free(r->vals);
	r->map = calloc(r->nnames ? r->nnames : 1, sizeof(*r->map));
	r->vals = calloc(p->ncols ? p->ncols : 1, sizeof(*r->vals));
	if (!r->map || !r->vals)
		return -ENOMEM;
	uint32_t shown = 0;
	for (uint32_t i = 0; i < r->nnames; i++) {
		r->map[i] = -1;
		for (uint32_t k = 0; k < p->ncols; k++)
			if (strcmp(r->names[i], p->cols[k].name) == 0) {
				r->map[i] = (int32_t)k;
				shown++;
				break;
			}
	}
	if (shown < p->ncols)
		vms_warn("rates: schema generation %u adds %u columns that the header (fixed) cannot show",
			 s->gen, p->ncols - shown);
	return 0;
}

int vms_rates_frame(struct vms_rates *r, const struct vms_schema *s, const struct vms_frame *f)
{
	int e;
	if (f->ncols != s->ncols)
		return -EINVAL;
	e = vms_rate_stream_schema(&r->st, s);
	if (e > 0)
		e = switch_schema(r, s);
	if (e < 0)
		return e;
	if (!r->header_done) {
		e = write_header(r);
		if (e < 0)
			return e;
	}
	/* an interval needs two frames */
	e = vms_rate_stream_values(&r->st, f, r->vals);
	if (e <= 0)
		return e;
	double dt = r->st.dt;
	unsigned flags = r->st.flags;

	char *p, *st;
	e = put(r, 2 * VMS_CSV_META_MAX + (size_t)r->nnames * FIELD_MAX + 4, &p);
	if (e < 0)
		return e;
	st = p;
	p = vms_fmt_u64(p, f->seq);
	*p++ = ',';
	p = vms_fmt_time(p, f->t_real_ns, vms_local_gmtoff(f->t_real_ns));
	*p++ = ',';
	p = vms_fmt_u64(p, f->t_mono_ns);
	*p++ = ',';
	if (dt > 0)
		p = vms_fmt_double(p, dt, 6);
	*p++ = ',';
	p = vms_fmt_u64(p, flags);
	for (uint32_t i = 0; i < r->nnames; i++) {
		*p++ = ',';
		int32_t k = r->map[i];
		if (k < 0)
			continue;
		const struct vms_rate_col *c = &r->st.plan->cols[k];
		if (c->op == VMS_ROP_GAUGE)
			p = vms_csv_value(p, f->v[c->a], c->scale); /* exact */
		else if (!isnan(r->vals[k]))
			p = vms_fmt_double(p, r->vals[k], c->op == VMS_ROP_GEXPR ? c->field : RATE_DIGITS);
	}
	*p++ = '\r';
	*p++ = '\n';
	vms_out_advance(&r->out, (size_t)(p - st));
	vms_out_end_record(&r->out);
	r->rows++;
	return 0;
}

void vms_rates_restart(struct vms_rates *r)
{
	vms_rate_stream_restart(&r->st);
}

uint64_t vms_rates_rows(const struct vms_rates *r)
{
	return r->rows;
}

int vms_rates_close(struct vms_rates *r)
{
	if (!r)
		return 0;
	int e = vms_out_close(&r->out);
	for (uint32_t i = 0; i < r->nnames; i++)
		free(r->names[i]);
	free(r->names);
	vms_rate_stream_free(&r->st);
	free(r->map);
	free(r->vals);
	free(r);
	return e;
}

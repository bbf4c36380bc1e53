/* SPDX-License-Identifier: MIT */
/* sink_csv.c - RFC 4180 CSV.
 *
 * Wide layout (default): a header once, one row per frame.  When the
 * schema changes mid-run the output stays rectangular:
 *   - a regular file rolls over: out.csv, then out.g2.csv, out.g3.csv ...
 *     each with its own header (announced on stderr);
 *   - stdout or a pipe keeps the first header: a column that vanished is
 *     written empty, a new one is left out (announced once on stderr; use
 *     the long layout or the binary format to keep them).
 * Long layout (csv_layout: long): seq,time,...,column,value, one row per
 * value; its shape never changes. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "csv.h"
#include "fmt.h"
#include "log.h"
#include "sink.h"

struct csv {
	struct vms_out out;
	char *cur_path;      /* file being written (rolls) */
	bool rolls;          /* regular file: roll on schema change */
	bool long_layout;
	bool header_done;
	int32_t gmtoff;
	int64_t gmtoff_until; /* re-check the local offset after this */
	/* stdout projection onto the first header */
	char **names;        /* first generation's column names */
	uint32_t nnames;
	int32_t *map;        /* names[i] -> column in the current schema, -1 */
	int8_t *scale;
};

static int32_t offset_at(struct csv *c, int64_t t)
{
	if (t >= c->gmtoff_until || t < c->gmtoff_until - 2 * 900 * (int64_t)VMS_NSEC_PER_SEC) {
		c->gmtoff = vms_local_gmtoff(t);
		/* re-check at the next quarter hour (offset changes happen there) */
		int64_t q = 900 * (int64_t)VMS_NSEC_PER_SEC;
		c->gmtoff_until = (t / q + 1) * q;
	}
	return c->gmtoff;
}

static int csv_open(struct vms_sink *s)
{
	struct csv *c = s->priv;
	struct stat st;
	c->long_layout = s->csv_layout == VMS_CSV_LONG;
	const char *path = vms_sink_target(s);
	int r = vms_out_open(&c->out, path, vms_sink_out_how(s, VMS_OUT_CSV), 1 << 16);
	if (r < 0)
		return r;
	c->rolls = strcmp(path, "-") != 0 && fstat(c->out.fd, &st) == 0 && S_ISREG(st.st_mode);
	c->cur_path = strdup(path);
	return c->cur_path ? 0 : -ENOMEM;
}

static size_t row_max(const struct vms_schema *sch, uint32_t nvals)
{
	(void)sch;
	return VMS_CSV_META_MAX + (size_t)nvals * VMS_CSV_VALUE_MAX + 2;
}

/* The most a frame of sch takes in the long layout: a row per column,
 * each with the frame's fields, the column's name and its value.  A frame
 * is one record (written whole or not at all), so the buffer must hold
 * one: with 64 KiB, a frame of more than ~800 columns (a host with 70
 * taps) never fitted, and no frame was ever written. */
static size_t long_frame_max(const struct vms_schema *sch)
{
	size_t n = 0;
	for (uint32_t i = 0; i < sch->ncols; i++)
		n += VMS_CSV_META_MAX + vms_csv_field_max(sch->cols[i].name) + VMS_CSV_VALUE_MAX + 4;
	return n;
}

static char *roll_name(const char *path, uint32_t gen)
{
	const char *slash = strrchr(path, '/');
	const char *dot = strrchr(slash ? slash + 1 : path, '.');
	size_t stem = dot ? (size_t)(dot - path) : strlen(path);
	size_t n = strlen(path) + 16;
	char *p = malloc(n);
	if (!p)
		return NULL;
	char num[16];
	*vms_fmt_u64(num, gen) = '\0';
	memcpy(p, path, stem);
	p[stem] = '\0';
	strcat(p, ".g");
	strcat(p, num);
	strcat(p, dot ? dot : "");
	return p;
}

static int put_header(struct csv *c, const struct vms_schema *sch)
{
	size_t need = sizeof(VMS_CSV_META) + 32;
	if (c->long_layout) {
		need += 16;
	} else {
		for (uint32_t i = 0; i < sch->ncols; i++)
			need += vms_csv_field_max(sch->cols[i].name) + 1;
	}
	int r = vms_out_ensure(&c->out, need + (c->long_layout ? long_frame_max(sch) : row_max(sch, sch->ncols)));
	if (r < 0)
		return r;
	r = vms_out_drain(&c->out);
	if (r < 0)
		return r;
	char *p = vms_out_reserve(&c->out, need), *s = p;
	memcpy(p, VMS_CSV_META, sizeof(VMS_CSV_META) - 1);
	p += sizeof(VMS_CSV_META) - 1;
	if (c->long_layout) {
		memcpy(p, ",column,value", 13);
		p += 13;
	} else {
		for (uint32_t i = 0; i < sch->ncols; i++) {
			*p++ = ',';
			p = vms_csv_field(p, sch->cols[i].name);
		}
	}
	*p++ = '\r';
	*p++ = '\n';
	vms_out_advance(&c->out, (size_t)(p - s));
	vms_out_end_record(&c->out);
	c->header_done = true;
	return 0;
}

static void free_projection(struct csv *c)
{
	for (uint32_t i = 0; i < c->nnames; i++)
		free(c->names[i]);
	free(c->names);
	free(c->map);
	free(c->scale);
	c->names = NULL;
	c->map = NULL;
	c->scale = NULL;
	c->nnames = 0;
}

/* Remember the first header's names (stdout keeps them). */
static int keep_names(struct csv *c, const struct vms_schema *sch)
{
	free_projection(c);
	c->names = calloc(sch->ncols ? sch->ncols : 1, sizeof(*c->names));
	c->map = calloc(sch->ncols ? sch->ncols : 1, sizeof(*c->map));
	c->scale = calloc(sch->ncols ? sch->ncols : 1, sizeof(*c->scale));
	if (!c->names || !c->map || !c->scale)
		return -ENOMEM;
	c->nnames = sch->ncols;
	for (uint32_t i = 0; i < sch->ncols; i++) {
		c->names[i] = strdup(sch->cols[i].name);
		if (!c->names[i])
			return -ENOMEM;
		c->map[i] = (int32_t)i;
		c->scale[i] = sch->cols[i].scale;
	}
	return 0;
}

static int project(struct csv *c, const struct vms_schema *sch)
{
	uint32_t kept = 0;
	for (uint32_t i = 0; i < c->nnames; i++) {
		c->map[i] = vms_schema_find(sch, c->names[i]);
		kept += c->map[i] >= 0;
	}
	if (kept < sch->ncols)
		vms_warn("schema generation %u adds %u columns that stdout CSV cannot show "
			 "(the header is fixed); use csv_layout: long or the binary format",
			 sch->gen, sch->ncols - kept);
	return 0;
}

static int csv_begin(struct vms_sink *s, const struct vms_schema *sch)
{
	struct csv *c = s->priv;
	int r;

	if (c->long_layout) {
		if (!c->header_done && c->out.written == 0)
			return put_header(c, sch);
		r = vms_out_ensure(&c->out, long_frame_max(sch) + 4096);
		c->header_done = true;
		return r;
	}
	if (!c->header_done) {
		if (c->out.written > 0 && c->names) {
			/* reopened (SIGHUP) into a non-empty file: same header */
			c->header_done = true;
			return project(c, sch);
		}
		r = keep_names(c, sch);
		if (r < 0)
			return r;
		return put_header(c, sch);
	}
	if (c->rolls) {
		char *np = roll_name(s->path, sch->gen);
		if (!np)
			return -ENOMEM;
		/* what the old file could not take is counted as lost on the
		 * new one's first frame (the frames belong to the old header) */
		r = vms_sink_close_out(s, &c->out);
		if (r < 0)
			vms_err("output %s: %s; the frames it could not take are counted as lost",
				c->cur_path, strerror(-r));
		r = vms_out_open(&c->out, np, vms_sink_out_how(s, VMS_OUT_CSV), 1 << 16);
		if (r < 0) {
			free(np);
			return r;
		}
		vms_info("schema generation %u (%u columns): CSV continues in %s", sch->gen, sch->ncols, np);
		free(c->cur_path);
		c->cur_path = np;
		r = keep_names(c, sch);
		if (r < 0)
			return r;
		return put_header(c, sch);
	}
	r = vms_out_ensure(&c->out, row_max(sch, c->nnames) + 4096);
	if (r < 0)
		return r;
	return project(c, sch);
}

static int csv_write(struct vms_sink *s, const struct vms_schema *sch, const struct vms_frame *f)
{
	struct csv *c = s->priv;
	int32_t off = offset_at(c, f->t_real_ns);

	if (c->long_layout) {
		if (!vms_ledger_room(&s->ledger, c->out.committed))
			return -EAGAIN;
		char meta[VMS_CSV_META_MAX];
		size_t ml = (size_t)(vms_csv_meta_as(meta, f, vms_sink_frame_flags(s, f),
						     vms_sink_lost_frames(s, f), off) - meta);
		for (uint32_t i = 0; i < f->ncols; i++) {
			size_t need = ml + vms_csv_field_max(sch->cols[i].name) + VMS_CSV_VALUE_MAX + 4;
			char *p = vms_out_reserve(&c->out, need), *st = p;
			if (!p) {
				vms_out_cancel_record(&c->out);
				return -EAGAIN;
			}
			memcpy(p, meta, ml);
			p += ml;
			*p++ = ',';
			p = vms_csv_field(p, sch->cols[i].name);
			*p++ = ',';
			p = vms_csv_value(p, f->v[i], sch->cols[i].scale);
			*p++ = '\r';
			*p++ = '\n';
			vms_out_advance(&c->out, (size_t)(p - st));
		}
		vms_out_end_record(&c->out);
		vms_ledger_add(&s->ledger, c->out.written + c->out.len, f->seq);
		return 0;
	}
	if (!vms_ledger_room(&s->ledger, c->out.committed))
		return -EAGAIN;
	char *p = vms_out_reserve(&c->out, row_max(sch, c->nnames)), *st = p;
	if (!p)
		return -EAGAIN;
	p = vms_csv_meta_as(p, f, vms_sink_frame_flags(s, f), vms_sink_lost_frames(s, f), off);
	for (uint32_t i = 0; i < c->nnames; i++) {
		*p++ = ',';
		int32_t k = c->map[i];
		if (k >= 0 && (uint32_t)k < f->ncols)
			p = vms_csv_value(p, f->v[k], sch->cols[k].scale);
	}
	*p++ = '\r';
	*p++ = '\n';
	vms_out_advance(&c->out, (size_t)(p - st));
	vms_out_end_record(&c->out);
	vms_ledger_add(&s->ledger, c->out.written + c->out.len, f->seq);
	return 0;
}

static int csv_flush(struct vms_sink *s)
{
	struct csv *c = s->priv;
	return vms_out_flush(&c->out);
}

static int csv_reopen(struct vms_sink *s)
{
	struct csv *c = s->priv;
	/* stdout, a pipe: nothing to reopen; rotation: the next file */
	const char *path = s->file && c->rolls ? s->file : c->cur_path;
	int r = vms_sink_reopen_out(s, &c->out, c->rolls, path, VMS_OUT_CSV, 1 << 16);
	if (r != 0)
		return r;
	if (path != c->cur_path) {
		char *np = strdup(path);
		if (np) {
			free(c->cur_path);
			c->cur_path = np;
		}
	}
	/* a rotated file starts over with a header; an untouched one goes on */
	c->header_done = false;
	return 0;
}

static int csv_close(struct vms_sink *s)
{
	struct csv *c = s->priv;
	int r = vms_sink_close_out(s, &c->out);
	free(c->cur_path);
	free_projection(c);
	return r;
}

static int csv_pollfd(struct vms_sink *s)
{
	struct csv *c = s->priv;
	return vms_out_pending(&c->out) ? c->out.fd : -1;
}

static uint64_t csv_bytes(struct vms_sink *s)
{
	struct csv *c = s->priv;
	return c->out.written + c->out.len;
}

/* Rotated, wide CSV starts a new file for a new generation: its header
 * is fixed (long CSV has the columns in its rows). */
static bool csv_newgen_file(const struct vms_sink *s)
{
	return s->csv_layout == VMS_CSV_WIDE;
}

VMS_SINK_OPS(csv, .newgen_file = csv_newgen_file);

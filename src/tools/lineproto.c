/* SPDX-License-Identifier: MIT */
#include "lineproto.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "fmt.h"

#define DOUBLE_DIGITS 6
/* the widest value: "-" 20 digits "." 6 digits, or a fixed u64 with its point */
#define VAL_MAX (VMS_FMT_U64_MAX + DOUBLE_DIGITS + 4)

/* ---- escaping ----------------------------------------------------------- */

bool vms_lp_name_ok(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f || *s == '\\')
			return false;
	return true;
}

char *vms_lp_esc_measurement(char *p, const char *s)
{
	for (; *s; s++) {
		if (*s == ',' || *s == ' ')
			*p++ = '\\';
		*p++ = *s;
	}
	return p;
}

char *vms_lp_esc_key(char *p, const char *s)
{
	for (; *s; s++) {
		if (*s == ',' || *s == ' ' || *s == '=')
			*p++ = '\\';
		*p++ = *s;
	}
	return p;
}

size_t vms_lp_esc_max(const char *s)
{
	return 2 * strlen(s);
}

char *vms_json_string(char *p, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	*p++ = '"';
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			*p++ = '\\';
			*p++ = (char)c;
		} else if (c < 0x20 || c == 0x7f) {
			memcpy(p, "\\u00", 4);
			p[4] = hex[c >> 4];
			p[5] = hex[c & 15];
			p += 6;
		} else {
			*p++ = (char)c; /* UTF-8 passes as it is */
		}
	}
	*p++ = '"';
	return p;
}

size_t vms_json_string_max(const char *s)
{
	return 6 * strlen(s) + 2;
}

void vms_json_put(FILE *o, const char *s)
{
	char buf[512];
	char *b = vms_json_string_max(s) < sizeof(buf) ? buf : malloc(vms_json_string_max(s) + 1);
	if (!b) {
		fputs("null", o);
		return;
	}
	*vms_json_string(b, s) = '\0';
	fputs(b, o);
	if (b != buf)
		free(b);
}

/* ---- the mapping ---------------------------------------------------------- */

static int put(char *dst, size_t cap, const char *s, size_t n)
{
	if (n >= cap)
		return -EINVAL;
	memcpy(dst, s, n);
	dst[n] = '\0';
	return 0;
}

/* s with dots as underscores into the field */
static int put_field(struct vms_lp_place *o, const char *pre, const char *s)
{
	int n = snprintf(o->field, sizeof(o->field), "%s%s", pre, s);
	if (n < 0 || (size_t)n >= sizeof(o->field))
		return -EINVAL;
	for (char *q = o->field; *q; q++)
		if (*q == '.')
			*q = '_';
	return 0;
}

static int tag(struct vms_lp_place *o, int t, const char *key, const char *v)
{
	o->tag[t].key = key;
	return put(o->tag[t].value, sizeof(o->tag[t].value), v, strlen(v));
}

/* A VM's column: domain and uuid tags, then by group. */
static int map_vm(struct vms_lp_place *o, const char *name, const struct vms_colid *id, const char *key)
{
	if (tag(o, 0, "domain", id->entity) < 0 || tag(o, 1, "uuid", key ? key : "") < 0)
		return -EINVAL;
	switch (id->group) {
	case VMS_G_VCPU:
	case VMS_G_VMLVVCPU:
		strcpy(o->measurement, "vm_vcpu");
		if (tag(o, 2, "vcpu", id->sub) < 0)
			return -EINVAL;
		return put_field(o, id->group == VMS_G_VMLVVCPU ? "lv_" : "", id->field);
	case VMS_G_VMNET:
	case VMS_G_VMBLOCK:
		strcpy(o->measurement, id->group == VMS_G_VMNET ? "vm_net" : "vm_block");
		if (tag(o, 2, "device", id->sub) < 0)
			return -EINVAL;
		return put_field(o, "", id->field);
	}
	/* what follows the VM's name: its group's middle part and the field */
	strcpy(o->measurement, "vm");
	return put_field(o, "", name + strlen(vms_catalog[id->group].head) + strlen(id->entity) + 1);
}

static int map(const char *name, const struct vms_colid *id, const char *key, struct vms_lp_place *o);

int vms_lp_map(const char *name, const struct vms_colid *id, const char *key, struct vms_lp_place *o)
{
	int r = map(name, id, key, o);
	/* InfluxDB drops a field named time (its reserved key) */
	if (r == 0 && strcmp(o->field, "time") == 0)
		strcpy(o->field, "time_");
	return r;
}

static int map(const char *name, const struct vms_colid *id, const char *key, struct vms_lp_place *o)
{
	memset(o, 0, sizeof(*o));
	if (!id || id->group == VMS_G_NONE) {
		/* not in the catalogue: GROUP.REST as it comes, unless GROUP is
		 * one of the catalogue's (a name of its that does not fit it) */
		const char *dot = strchr(name, '.'); /* a column without identity */
		if (!dot || dot == name || !dot[1] || vms_catalog_group(name, (size_t)(dot - name)) != VMS_G_NONE)
			return -EINVAL;
		if (put(o->measurement, sizeof(o->measurement), name, (size_t)(dot - name)) < 0)
			return -EINVAL;
		return put_field(o, "", dot + 1);
	}
	const struct vms_catgroup *g = &vms_catalog[id->group];
	if (strcmp(g->head, "vm.") == 0)
		return map_vm(o, name, id, key);
	/* the host's groups: measurement and head are the group's name */
	if (put(o->measurement, sizeof(o->measurement), g->name, strlen(g->name)) < 0)
		return -EINVAL;
	switch (id->group) {
	case VMS_G_CPU:
	case VMS_G_PERF:
		o->tag[0].key = "cpu";
		if (strcmp(id->entity, "all") == 0)
			strcpy(o->tag[0].value, "cpu-total");
		else if (snprintf(o->tag[0].value, sizeof(o->tag[0].value), "%s%s",
				  strncmp(id->entity, "cpu", 3) == 0 ? "" : "cpu", id->entity) >=
			 (int)sizeof(o->tag[0].value))
			return -EINVAL;
		return put_field(o, "", id->field);
	case VMS_G_DISK:
	case VMS_G_NET:
		if (tag(o, 0, "device", id->entity) < 0)
			return -EINVAL;
		return put(o->field, sizeof(o->field), id->field, strlen(id->field));
	}
	return put_field(o, "", name + strlen(g->head));
}

/* ---- layouts -------------------------------------------------------------- */

struct lp_group {
	char *prefix;      /* "cpu,host=h,cpu=cpu0 " escaped, with the space */
	size_t plen;
	uint32_t *cols;    /* the columns of this line, in schema order */
	uint32_t n, cap;
};

struct lp_col {
	char *key;         /* the escaped field key with "=", or the JSON member name with ':' */
	size_t klen;
};

struct vms_lp {
	enum vms_lp_format fmt;
	uint32_t ncols, skipped;
	struct lp_col *cols;
	struct lp_group *groups;
	uint32_t ngroups, capgroups;
	char *meta_prefix; /* "vmsampler,host=h " */
	size_t meta_plen;
	size_t max;        /* bytes of a frame at most, without extras */
};

void vms_lp_free(struct vms_lp *lp)
{
	if (!lp)
		return;
	for (uint32_t i = 0; i < lp->ncols; i++)
		free(lp->cols[i].key);
	for (uint32_t g = 0; g < lp->ngroups; g++) {
		free(lp->groups[g].prefix);
		free(lp->groups[g].cols);
	}
	free(lp->cols);
	free(lp->groups);
	free(lp->meta_prefix);
	free(lp);
}

uint32_t vms_lp_skipped(const struct vms_lp *lp)
{
	return lp->skipped;
}

static char *line_prefix(const char *measurement, const char *host, const struct vms_lp_place *pl)
{
	size_t need = vms_lp_esc_max(measurement) + 8;
	if (host && *host)
		need += 6 + vms_lp_esc_max(host);
	for (int t = 0; pl && t < 3; t++)
		if (pl->tag[t].key && pl->tag[t].value[0])
			need += 2 + vms_lp_esc_max(pl->tag[t].key) + vms_lp_esc_max(pl->tag[t].value);
	char *s = malloc(need), *p = s;
	if (!s)
		return NULL;
	p = vms_lp_esc_measurement(p, measurement);
	if (host && *host) {
		memcpy(p, ",host=", 6);
		p = vms_lp_esc_key(p + 6, host);
	}
	/* tags in key order, as InfluxDB prefers them (cpu, device, domain,
	 * uuid, vcpu are already in order within each mapping) */
	for (int t = 0; pl && t < 3; t++) {
		if (!pl->tag[t].key || !pl->tag[t].value[0])
			continue;
		*p++ = ',';
		p = vms_lp_esc_key(p, pl->tag[t].key);
		*p++ = '=';
		p = vms_lp_esc_key(p, pl->tag[t].value);
	}
	*p++ = ' ';
	*p = '\0';
	return s;
}

static bool place_ok(const struct vms_lp_place *pl)
{
	if (!vms_lp_name_ok(pl->measurement) || !vms_lp_name_ok(pl->field))
		return false;
	for (int t = 0; t < 3; t++)
		if (pl->tag[t].key && !vms_lp_name_ok(pl->tag[t].value))
			return false;
	return true;
}

static int add_influx_col(struct vms_lp *lp, uint32_t i, const char *name, const struct vms_colid *id,
			  const char *key, const char *host)
{
	struct vms_lp_place pl;
	if (vms_lp_map(name, id, key, &pl) < 0 || !place_ok(&pl)) {
		lp->skipped++;
		return 0;
	}
	char *prefix = line_prefix(pl.measurement, host, &pl);
	if (!prefix)
		return -ENOMEM;
	/* columns of one line are mostly neighbours: look at the last group first */
	uint32_t g = lp->ngroups;
	if (g && strcmp(lp->groups[g - 1].prefix, prefix) == 0)
		g--;
	else
		for (g = 0; g < lp->ngroups; g++)
			if (strcmp(lp->groups[g].prefix, prefix) == 0)
				break;
	if (g == lp->ngroups) {
		if (lp->ngroups == lp->capgroups) {
			uint32_t cap = lp->capgroups ? 2 * lp->capgroups : 16;
			struct lp_group *ng = realloc(lp->groups, cap * sizeof(*ng));
			if (!ng) {
				free(prefix);
				return -ENOMEM;
			}
			lp->groups = ng;
			lp->capgroups = cap;
		}
		lp->groups[g] = (struct lp_group){.prefix = prefix, .plen = strlen(prefix)};
		lp->ngroups++;
		lp->max += lp->groups[g].plen + VMS_FMT_U64_MAX + 3;
	} else {
		free(prefix);
	}
	struct lp_group *gr = &lp->groups[g];
	if (gr->n == gr->cap) {
		uint32_t cap = gr->cap ? 2 * gr->cap : 8;
		uint32_t *nc = realloc(gr->cols, cap * sizeof(*nc));
		if (!nc)
			return -ENOMEM;
		gr->cols = nc;
		gr->cap = cap;
	}
	gr->cols[gr->n++] = i;
	char *k = malloc(vms_lp_esc_max(pl.field) + 2);
	if (!k)
		return -ENOMEM;
	char *e = vms_lp_esc_key(k, pl.field);
	*e++ = '=';
	*e = '\0';
	lp->cols[i].key = k;
	lp->cols[i].klen = (size_t)(e - k);
	lp->max += lp->cols[i].klen + VAL_MAX + 2;
	return 0;
}

static int add_json_col(struct vms_lp *lp, uint32_t i, const char *name)
{
	char *k = malloc(vms_json_string_max(name) + 3);
	if (!k)
		return -ENOMEM;
	char *e = k;
	*e++ = ',';
	e = vms_json_string(e, name);
	*e++ = ':';
	*e = '\0';
	lp->cols[i].key = k;
	lp->cols[i].klen = (size_t)(e - k);
	lp->max += lp->cols[i].klen + VAL_MAX;
	return 0;
}

int vms_lp_new(struct vms_lp **out, enum vms_lp_format fmt, uint32_t ncols, const char *const *names,
	       const struct vms_colid *ids, const char *const *keys, const char *host)
{
	*out = NULL;
	struct vms_lp *lp = calloc(1, sizeof(*lp));
	if (!lp)
		return -ENOMEM;
	lp->fmt = fmt;
	lp->ncols = ncols;
	lp->cols = calloc(ncols ? ncols : 1, sizeof(*lp->cols));
	if (!lp->cols) {
		vms_lp_free(lp);
		return -ENOMEM;
	}
	if (host && !vms_lp_name_ok(host))
		host = NULL; /* cannot be a tag: none (tail refuses it first) */
	int r = 0;
	for (uint32_t i = 0; i < ncols && r == 0; i++)
		r = fmt == VMS_LP_INFLUX ? add_influx_col(lp, i, names[i], ids ? &ids[i] : NULL, keys ? keys[i] : NULL, host)
					 : add_json_col(lp, i, names[i]);
	if (r == 0 && fmt == VMS_LP_INFLUX && !(lp->meta_prefix = line_prefix("vmsampler", host, NULL)))
		r = -ENOMEM;
	if (r < 0) {
		vms_lp_free(lp);
		return r;
	}
	lp->meta_plen = lp->meta_prefix ? strlen(lp->meta_prefix) : 0;
	/* the meta line or members: 12 numbers with their names */
	lp->max += lp->meta_plen + 16 * (VMS_FMT_U64_MAX + 24) + 8;
	*out = lp;
	return 0;
}

size_t vms_lp_max(const struct vms_lp *lp, uint32_t nextra)
{
	return lp->max + (size_t)nextra * (VAL_MAX + 6 * 32 + 8);
}

/* ---- values --------------------------------------------------------------- */

/* One value as the format writes it; NULL if it has none. */
static char *value(char *p, const struct vms_lp_val *v, bool influx)
{
	switch (v->type) {
	case VMS_LP_UINT:
		/* InfluxDB 1.x integers are signed 64-bit */
		if (influx && v->u > (uint64_t)INT64_MAX)
			return NULL;
		p = vms_fmt_u64(p, v->u);
		if (influx)
			*p++ = 'i';
		return p;
	case VMS_LP_FIXED:
		return vms_fmt_fixed(p, v->u, v->scale);
	case VMS_LP_DOUBLE:
		if (!isfinite(v->d))
			return NULL;
		if (v->d < 1e12 && v->d > -1e12)
			return vms_fmt_double(p, v->d, DOUBLE_DIGITS);
		/* beyond what fixed digits carry: shortest exact form */
		return p + snprintf(p, VAL_MAX, "%.17g", v->d);
	default:
		return NULL;
	}
}

static char *i64(char *p, int64_t v)
{
	if (v < 0) {
		*p++ = '-';
		return vms_fmt_u64(p, (uint64_t)0 - (uint64_t)v);
	}
	return vms_fmt_u64(p, (uint64_t)v);
}

static char *member(char *p, bool influx, bool first, const char *name, uint64_t v)
{
	if (!first)
		*p++ = ',';
	size_t n = strlen(name);
	if (!influx)
		*p++ = '"';
	memcpy(p, name, n);
	p += n;
	if (!influx)
		*p++ = '"';
	*p++ = influx ? '=' : ':';
	p = vms_fmt_u64(p, v);
	if (influx)
		*p++ = 'i';
	return p;
}

/* The frame's own fields (names need no escaping); dropped: values the
 * line protocol could not carry in this frame. */
static char *meta_fields(char *p, bool influx, const struct vms_lp_meta *m, uint64_t dropped)
{
	if (!influx) {
		p = member(p, false, true, "seq", m->seq);
		memcpy(p, ",\"t_wall_ns\":", 13);
		p = i64(p + 13, m->t_wall_ns);
		p = member(p, false, false, "t_mono_ns", m->t_mono_ns);
	} else {
		p = member(p, true, true, "seq", m->seq);
		p = member(p, true, false, "t_mono_ns", m->t_mono_ns);
	}
	p = member(p, influx, false, "gen", m->gen);
	p = member(p, influx, false, "flags", m->flags);
	p = member(p, influx, false, "missed_ticks", m->missed_ticks);
	p = member(p, influx, false, "lost_frames", m->lost_frames);
	p = member(p, influx, false, "late_ns", m->late_ns);
	p = member(p, influx, false, "self_cpu_ns", m->self_cpu_ns);
	p = member(p, influx, false, "reader_lost", m->reader_lost);
	if (influx)
		p = member(p, true, false, "dropped_values", dropped);
	for (uint32_t i = 0; i < m->nextra; i++) {
		char *q = p;
		*q++ = ',';
		if (influx) {
			q = vms_lp_esc_key(q, m->extra_name[i]);
			*q++ = '=';
		} else {
			q = vms_json_string(q, m->extra_name[i]);
			*q++ = ':';
		}
		q = value(q, &m->extra[i], influx);
		if (q)
			p = q;
	}
	return p;
}

char *vms_lp_frame(const struct vms_lp *lp, char *p, const struct vms_lp_meta *m,
		   const struct vms_lp_val *vals)
{
	if (lp->fmt == VMS_LP_JSON) {
		*p++ = '{';
		p = meta_fields(p, false, m, 0);
		for (uint32_t i = 0; i < lp->ncols; i++) {
			if (vals[i].type == VMS_LP_NONE)
				continue;
			char *q = p;
			memcpy(q, lp->cols[i].key, lp->cols[i].klen);
			q = value(q + lp->cols[i].klen, &vals[i], false);
			if (q)
				p = q;
		}
		*p++ = '}';
		*p++ = '\n';
		return p;
	}
	char ts[VMS_FMT_U64_MAX + 3], *te = ts;
	*te++ = ' ';
	te = i64(te, m->t_wall_ns);
	*te++ = '\n';
	size_t tslen = (size_t)(te - ts);
	uint64_t dropped = 0;
	for (uint32_t g = 0; g < lp->ngroups; g++) {
		const struct lp_group *gr = &lp->groups[g];
		char *line = p, *q = p + gr->plen;
		memcpy(line, gr->prefix, gr->plen);
		bool any = false;
		for (uint32_t k = 0; k < gr->n; k++) {
			uint32_t i = gr->cols[k];
			if (vals[i].type == VMS_LP_NONE)
				continue;
			char *f = q + (any ? 1 : 0);
			memcpy(f, lp->cols[i].key, lp->cols[i].klen);
			char *e = value(f + lp->cols[i].klen, &vals[i], true);
			if (!e) {
				dropped += vals[i].type == VMS_LP_UINT; /* too big for an integer field */
				continue;
			}
			if (any)
				*q = ',';
			q = e;
			any = true;
		}
		if (!any)
			continue; /* no field, no line */
		memcpy(q, ts, tslen);
		p = q + tslen;
	}
	memcpy(p, lp->meta_prefix, lp->meta_plen);
	p = meta_fields(p + lp->meta_plen, true, m, dropped);
	memcpy(p, ts, tslen);
	return p + tslen;
}

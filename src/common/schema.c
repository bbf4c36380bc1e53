/* SPDX-License-Identifier: MIT */
#include "schema.h"
#include "grow.h"
#include "name.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void vms_schema_builder_init(struct vms_schema_builder *b)
{
	memset(b, 0, sizeof(*b));
}

void vms_schema_builder_free(struct vms_schema_builder *b)
{
	free(b->cols);
	free(b->strings);
	vms_schema_builder_init(b);
}

void vms_schema_builder_source(struct vms_schema_builder *b, uint16_t idx)
{
	b->base = b->ncols;
	b->source = idx;
}

/* Strings are stored as offsets while building (the buffer moves).  The
 * n bytes at s are stored escaped by the rule of name.h if `esc`, or if
 * they are not valid UTF-8 without control characters. */
static int add_string(struct vms_schema_builder *b, const char *s, size_t n, bool esc, size_t *off)
{
	size_t len = esc || !vms_name_valid(s, n) ? vms_name_escape(b->strings, 0, s, n) : n;
	if (b->slen + len + 1 > b->scap) {
		char *ns = vms_grow(b->strings, &b->scap, b->slen + len + 1, 1024);
		if (!ns)
			return -ENOMEM;
		b->strings = ns;
	}
	if (len == n)
		memcpy(b->strings + b->slen, s, n);
	else
		vms_name_escape(b->strings + b->slen, len + 1, s, n);
	b->strings[b->slen + len] = '\0';
	*off = b->slen;
	b->slen += len + 1;
	return 0;
}

/* One column: its name, key and identity's parts escaped if `esc`
 * (sources), or only if they are not valid (decoders: names written
 * escaped stay as they are).  The parts escape as the name does, so that
 * they stay its parts. */
static int add_col(struct vms_schema_builder *b, const struct vms_coldef *def, const char *name, size_t n,
		   bool esc, const struct vms_colid *id)
{
	size_t off[5];
	int r;
	if (b->err)
		return b->err;
	if (esc && vms_name_escape(NULL, 0, name, n) > VMS_COL_NAME_MAX) {
		r = -ENAMETOOLONG;
		goto fail;
	}
	if (b->ncols == b->cap) {
		struct vms_col *nc = vms_grow_array(b->cols, &b->cap, b->ncols + 1, sizeof(*nc), 64);
		if (!nc) {
			r = -ENOMEM;
			goto fail;
		}
		b->cols = nc;
	}
	const char *str[5] = {name, def->key ? def->key : "", id->entity, id->sub, id->field};
	for (int k = 0; k < 5; k++) {
		r = add_string(b, str[k], k ? strlen(str[k]) : n, esc, &off[k]);
		if (r < 0)
			goto fail;
	}
	b->cols[b->ncols] = (struct vms_col){
		.name = (const char *)(uintptr_t)off[0],
		.key = (const char *)(uintptr_t)off[1],
		.kind = def->kind,
		.unit = def->unit,
		.wrap_bits = def->wrap_bits,
		.scale = def->scale,
		.source = b->source,
		.group = id->group,
		.field_id = id->field_id,
		.entity = (const char *)(uintptr_t)off[2],
		.sub = (const char *)(uintptr_t)off[3],
		.field = (const char *)(uintptr_t)off[4],
	};
	return (int)(b->ncols++ - b->base);
fail:
	b->err = r;
	return r;
}

/* Append a column named `name` whose identity is derived from the name. */
static int add_derived(struct vms_schema_builder *b, const struct vms_coldef *def, const char *name, size_t n,
		       bool esc)
{
	char parts[VMS_COL_NAME_MAX + 3];
	struct vms_colid id;
	vms_catalog_derive(name, &id, parts, sizeof(parts));
	return add_col(b, def, name, n, esc, &id);
}

int vms_schema_addf(struct vms_schema_builder *b, const struct vms_coldef *def, const char *fmt, ...)
{
	char name[VMS_COL_NAME_MAX + 1];
	va_list ap;

	if (b->err)
		return b->err;
	va_start(ap, fmt);
	int n = vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(name))
		return b->err = -ENAMETOOLONG;
	return add_derived(b, def, name, (size_t)n, true);
}

int vms_schema_addc(struct vms_schema_builder *b, const struct vms_coldef *def, unsigned group,
		    const char *entity, const char *sub, const char *field)
{
	char name[VMS_COL_NAME_MAX + 1];
	if (b->err)
		return b->err;
	int n = vms_colname(name, sizeof(name), group, entity, sub, field);
	if (n < 0)
		return b->err = n;
	struct vms_colid id = {.group = (uint8_t)group,
			       .field_id = (uint16_t)vms_catalog_field(group, field),
			       .entity = entity ? entity : "",
			       .sub = sub ? sub : "",
			       .field = field};
	struct vms_coldef d = *def;
	const struct vms_catfield *f = vms_catalog_entry(group, id.field_id);
	if (f) {
		/* the catalogue says what the field is */
		if ((d.kind && d.kind != f->kind) || (d.unit && d.unit != f->unit))
			return b->err = -EINVAL;
		d.kind = f->kind;
		d.unit = f->unit;
	} else if (!vms_catalog[group].open) {
		return b->err = -EINVAL; /* not a field of its group */
	}
	return add_col(b, &d, name, (size_t)n, true, &id);
}

int vms_schema_finish(struct vms_schema_builder *b, uint32_t gen, int64_t t_real_ns,
		      struct vms_schema **out)
{
	if (b->err)
		return b->err;
	struct vms_schema *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	if (!b->strings && add_string(b, "", 0, false, &(size_t){0}) < 0) {
		free(s);
		return -ENOMEM;
	}
	s->gen = gen;
	s->ncols = b->ncols;
	s->t_real_ns = t_real_ns;
	s->refs = 1;
	s->cols = b->cols;
	s->strings = b->strings;
	for (uint32_t i = 0; i < s->ncols; i++) {
		s->cols[i].name = s->strings + (uintptr_t)s->cols[i].name;
		s->cols[i].key = s->strings + (uintptr_t)s->cols[i].key;
		s->cols[i].entity = s->strings + (uintptr_t)s->cols[i].entity;
		s->cols[i].sub = s->strings + (uintptr_t)s->cols[i].sub;
		s->cols[i].field = s->strings + (uintptr_t)s->cols[i].field;
	}
	b->cols = NULL;
	b->strings = NULL;
	vms_schema_builder_free(b);
	*out = s;
	return 0;
}

int vms_schema_new(uint32_t gen, int64_t t_real_ns, uint32_t ncols, const struct vms_col *cols,
		   struct vms_schema **out)
{
	struct vms_schema_builder b;
	vms_schema_builder_init(&b);
	for (uint32_t i = 0; i < ncols; i++) {
		const struct vms_col *c = &cols[i];
		const struct vms_coldef d = {
			.kind = c->kind,
			.unit = c->unit,
			.wrap_bits = c->wrap_bits,
			.scale = c->scale,
			.key = c->key,
		};
		b.source = c->source;
		if (c->field) {
			const struct vms_colid id = {c->group, c->field_id, c->entity, c->sub, c->field};
			add_col(&b, &d, c->name, strlen(c->name), false, &id);
		} else {
			add_derived(&b, &d, c->name, strlen(c->name), false);
		}
	}
	int r = vms_schema_finish(&b, gen, t_real_ns, out);
	vms_schema_builder_free(&b);
	return r;
}

bool vms_schema_same_columns(const struct vms_schema *a, const struct vms_schema *b)
{
	if (a->ncols != b->ncols)
		return false;
	for (uint32_t i = 0; i < a->ncols; i++) {
		const struct vms_col *x = &a->cols[i], *y = &b->cols[i];
		if (x->kind != y->kind || x->unit != y->unit || x->wrap_bits != y->wrap_bits ||
		    x->scale != y->scale || x->source != y->source || strcmp(x->name, y->name) != 0 ||
		    strcmp(x->key, y->key) != 0 || x->group != y->group || x->field_id != y->field_id ||
		    strcmp(x->entity, y->entity) != 0 || strcmp(x->sub, y->sub) != 0 ||
		    strcmp(x->field, y->field) != 0)
			return false;
	}
	return true;
}

int vms_schema_find(const struct vms_schema *s, const char *name)
{
	for (uint32_t i = 0; i < s->ncols; i++)
		if (strcmp(s->cols[i].name, name) == 0)
			return (int)i;
	return -ENOENT;
}

struct vms_schema *vms_schema_ref(struct vms_schema *s)
{
	if (s)
		s->refs++;
	return s;
}

void vms_schema_unref(struct vms_schema *s)
{
	if (!s || --s->refs > 0)
		return;
	free(s->cols);
	free(s->strings);
	free(s);
}

void vms_schema_unref_n(struct vms_schema *const *s, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		vms_schema_unref(s[i]);
}

const char *vms_unit_name(unsigned unit)
{
	static const char *const names[] = {
		[VMS_UNIT_NONE] = "",          [VMS_UNIT_COUNT] = "count", [VMS_UNIT_TICKS] = "ticks",
		[VMS_UNIT_NS] = "ns",          [VMS_UNIT_US] = "us",       [VMS_UNIT_MS] = "ms",
		[VMS_UNIT_BYTES] = "bytes",    [VMS_UNIT_KIB] = "KiB",     [VMS_UNIT_SECTORS] = "sectors",
		[VMS_UNIT_PAGES] = "pages",    [VMS_UNIT_TASKS] = "tasks", [VMS_UNIT_LOAD] = "load",
		[VMS_UNIT_STATE] = "state",    [VMS_UNIT_NS_EPOCH] = "ns_epoch",
	};
	return unit < VMS_ARRAY_SIZE(names) && names[unit] ? names[unit] : "?";
}

const char *vms_kind_name(unsigned kind)
{
	static const char *const names[] = {[VMS_KIND_COUNTER] = "counter", [VMS_KIND_GAUGE] = "gauge"};
	return kind < VMS_ARRAY_SIZE(names) && names[kind] ? names[kind] : "?";
}

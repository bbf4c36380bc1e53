/* SPDX-License-Identifier: MIT */
/* schema.h - the columns of one generation, and how sources declare them.
 *
 * Column names are hierarchical and stable: cpu.all.user, cpu.3.steal,
 * disk.sda.rd_ios, net.eth0.rx_bytes, vm.<name>.cpu_time.  A schema is
 * immutable once built; a change of entities builds a new one with the
 * next generation number.  Schemas are reference counted because frames of
 * an older generation may still wait in the ring for a slow sink. */
#ifndef VMS_SCHEMA_H
#define VMS_SCHEMA_H

#include "catalog.h"
#include "vms.h"
#include <vmsampler/format.h>

/* The longest column name, in bytes (the binary format's limit). */
#define VMS_COL_NAME_MAX 511

struct vms_col {
	const char *name; /* owned by the schema */
	const char *key;  /* entity key ("" if none), owned by the schema */
	uint8_t kind;     /* enum vms_kind */
	uint8_t unit;     /* enum vms_unit */
	uint8_t wrap_bits; /* counters: 32 or 64; gauges: 0 */
	int8_t scale;     /* value = raw / 10^scale */
	uint16_t source;  /* index of the declaring source in the loop */
	/* its identity (catalog.h): group VMS_G_NONE and "" parts if the
	 * catalogue does not know it; the strings are owned by the schema */
	uint8_t group;     /* enum vms_group */
	uint16_t field_id; /* index in the group's fields, or VMS_FIELD_OPEN */
	const char *entity, *sub, *field;
};

struct vms_hostid;
struct vms_schema {
	uint32_t gen;
	uint32_t ncols;
	int64_t t_real_ns; /* when it was built */
	int refs;
	/* the host it was built on (the loop's, which outlives its schemas;
	 * NULL for a decoded schema): sinks write it as the HOST record */
	const struct vms_hostid *host;
	struct vms_col *cols;
	char *strings; /* all names and keys */
};

/* What a source says about one column. */
struct vms_coldef {
	uint8_t kind;
	uint8_t unit;
	uint8_t wrap_bits;
	int8_t scale;
	const char *key; /* NULL for none */
};

struct vms_schema_builder {
	struct vms_col *cols;
	uint32_t ncols, cap;
	char *strings;
	size_t slen, scap;
	uint32_t base;    /* first column of the source now declaring */
	uint16_t source;  /* its index */
	int err;          /* sticky -errno */
};

void vms_schema_builder_init(struct vms_schema_builder *b);
void vms_schema_builder_free(struct vms_schema_builder *b);
/* Start declaring for source `idx`: its columns follow contiguously. */
void vms_schema_builder_source(struct vms_schema_builder *b, uint16_t idx);
/* Declare one column named by printf(fmt, ...), escaped by the rule of
 * name.h (as is its key): the arguments are the names as they come, each
 * entity's name fitted by vms_name_fit() first; its identity is derived
 * from the name (vms_catalog_derive: for tests).  Returns its index
 * relative to the source's first column, or -errno (also sticky in b->err:
 * a source may declare many columns and check b->err once). */
int vms_schema_addf(struct vms_schema_builder *b, const struct vms_coldef *def,
		    const char *fmt, ...) VMS_PRINTF(3, 4);
/* Declare one column by its identity (catalog.h): group, entity and sub
 * (NULL or "" for none; as they come, each fitted by vms_name_fit()
 * first, and escaped here by the rule of name.h), field; its name is
 * vms_colname() of them.  A
 * field the catalogue lists takes its kind and unit from there (def's
 * must be 0 or the same: -EINVAL otherwise).  Returns as vms_schema_addf. */
int vms_schema_addc(struct vms_schema_builder *b, const struct vms_coldef *def, unsigned group,
		    const char *entity, const char *sub, const char *field);
/* Columns declared so far by the current source. */
static inline uint32_t vms_schema_builder_count(const struct vms_schema_builder *b)
{
	return b->ncols - b->base;
}
/* Turn the builder into a schema with generation `gen` (the builder is
 * left empty).  Returns 0 or -errno. */
int vms_schema_finish(struct vms_schema_builder *b, uint32_t gen, int64_t t_real_ns,
		      struct vms_schema **out);
/* True if both have the same columns (names, keys, attributes, order). */
bool vms_schema_same_columns(const struct vms_schema *a, const struct vms_schema *b);
/* Index of the column named `name`, or -ENOENT. Linear; not for the tick. */
int vms_schema_find(const struct vms_schema *s, const char *name);

struct vms_schema *vms_schema_ref(struct vms_schema *s);
void vms_schema_unref(struct vms_schema *s);
/* vms_schema_unref() of the n schemas of s (the array itself is kept). */
void vms_schema_unref_n(struct vms_schema *const *s, uint32_t n);

/* Build a schema directly (decoders): takes ownership of nothing; copies.
 * A name or key that is not valid UTF-8 without control characters (a
 * file of an older sampler) is escaped by the rule of name.h.  A column
 * whose field is NULL gets the identity derived from its name (data
 * written before the identity was carried). */
int vms_schema_new(uint32_t gen, int64_t t_real_ns, uint32_t ncols, const struct vms_col *cols,
		   struct vms_schema **out);

const char *vms_unit_name(unsigned unit);
const char *vms_kind_name(unsigned kind);

#endif

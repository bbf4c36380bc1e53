/* SPDX-License-Identifier: MIT */
/* entity.h - the table of entities of a source (a disk, an interface, a
 * CPU), each found by its key in the tick and stamped when read.
 *
 * declare() fills the table (vms_enttab_reset() sizes it: it may
 * allocate); the tick does not allocate: vms_enttab_begin() takes a new
 * stamp, vms_enttab_mark() notes each entity read, vms_enttab_bad() each
 * damaged line, and vms_enttab_end() decides: every entity read, or the
 * missing ones explained by damaged lines (their columns become
 * VMS_NONE), or an entity went away (VMS_RESCHEMA).  An entity the tick
 * finds that is not in the table is the source's VMS_RESCHEMA. */
#ifndef VMS_ENTITY_H
#define VMS_ENTITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cursor.h"
#include "procfile.h"
#include "source.h"

struct vms_ent {
	const char *prefix;  /* named: the line up to its key, NUL-terminated */
	const char *name;    /* named: NUL-terminated */
	uint32_t prefix_len, name_len;
	int32_t slot;        /* first column, -1: not sampled */
	uint32_t ncols;      /* columns from slot (VMS_NONE when not read) */
	uint32_t seen;       /* stamp of the last tick that read it */
	uint8_t nfields;     /* fields its line had at declare time */
	uint8_t bits;        /* the source's own marks */
};

struct vms_enttab {
	struct vms_ent *ent; /* in file (or column) order */
	uint32_t n, cap;
	uint32_t nwant;      /* the entities a tick should read (set by the source) */
	char *str;           /* prefixes and names */
	size_t str_len, str_cap;
	uint32_t stamp;      /* of the current tick; 0 is "never seen" */
	uint32_t nseen, nbad; /* this tick */
};

/* Empty the table (nwant 0) and size it for cap entities and strcap bytes of
 * prefixes and names.  0 or -ENOMEM (then the table is empty). */
int vms_enttab_reset(struct vms_enttab *t, uint32_t cap, size_t strcap);
void vms_enttab_free(struct vms_enttab *t);
/* vms_enttab_reset() for one entity per line of text[0..len), each with
 * at most `copies` copies of its line (prefix, name) and their NULs. */
int vms_enttab_reset_lines(struct vms_enttab *t, const char *text, size_t len, unsigned copies);

/* A new entity (slot -1): NULL when the table is full.  Without a prefix
 * it has no name (found by index: a CPU number).  With a prefix
 * (plen bytes), the prefix is copied and name (nlen bytes) must lie in it;
 * the name is copied too unless it ends the prefix. */
struct vms_ent *vms_enttab_add(struct vms_enttab *t, const char *prefix, size_t plen,
			       const char *name, size_t nlen);

static inline bool vms_ent_name_is(const struct vms_ent *e, const char *name, size_t len)
{
	return e->name_len == len && memcmp(e->name, name, len) == 0;
}

/* An entity before e has e's name (a second line of the same name). */
bool vms_enttab_dup(const struct vms_enttab *t, const struct vms_ent *e);

/* The tick. */
static inline void vms_enttab_begin(struct vms_enttab *t)
{
	if (VMS_UNLIKELY(++t->stamp == 0))
		t->stamp = 1;
	t->nseen = t->nbad = 0;
}

static inline void vms_enttab_mark(struct vms_enttab *t, struct vms_ent *e)
{
	e->seen = t->stamp;
	t->nseen++;
}

static inline bool vms_ent_seen(const struct vms_enttab *t, const struct vms_ent *e)
{
	return e->seen == t->stamp;
}

/* A damaged line: counted in the tick's parse errors. */
static inline void vms_enttab_bad(struct vms_enttab *t, struct vms_tick_ctx *tc)
{
	t->nbad++;
	tc->parse_errors++;
}

/* A damaged line where the entity at *pos was expected: counted, and that
 * entity passed (the next line is matched against the one after it). */
static inline void vms_enttab_damaged(struct vms_enttab *t, uint32_t *pos, struct vms_tick_ctx *tc)
{
	vms_enttab_bad(t, tc);
	(*pos)++;
}

/* The entity of that name the tick has not read yet (not where it was at
 * declare time: one was added or removed before it).  NULL with *known
 * set: every entity of that name was read already. */
struct vms_ent *vms_enttab_find(struct vms_enttab *t, const char *name, size_t len, bool *known);

/* Declare's start for a source reading its own file f: the table emptied,
 * f read again, the table sized for its lines (one prefix copy each: the
 * line up to its key), c on f's text. */
static inline int vms_enttab_scan(struct vms_enttab *t, struct vms_procfile *f, struct vms_cur *c)
{
	vms_enttab_free(t);
	int r = vms_procfile_read(f);
	if (r < 0)
		return r;
	r = vms_enttab_reset_lines(t, f->buf, f->len, 1);
	if (r < 0)
		return r;
	vms_cur_init(c, f->buf, f->len);
	return 0;
}

/* The tick's start for a source reading its own file f: f read again,
 * the table's tick begun, c on f's text. */
static inline int vms_enttab_read(struct vms_enttab *t, struct vms_procfile *f, struct vms_cur *c)
{
	int r = vms_procfile_read(f);
	if (r < 0)
		return r;
	vms_enttab_begin(t);
	vms_cur_init(c, f->buf, f->len);
	return 0;
}

/* The entity expected at *pos when the tick does not sample it and the
 * line at the cursor is its (`match`): that line is stepped over unparsed
 * and *pos moves past it.  NULL otherwise. */
static inline struct vms_ent *vms_enttab_skip(struct vms_enttab *t, uint32_t *pos, struct vms_cur *c,
					      bool (*match)(const struct vms_cur *, const struct vms_ent *))
{
	struct vms_ent *e = *pos < t->n ? &t->ent[*pos] : NULL;
	if (!e || e->slot >= 0 || vms_ent_seen(t, e) || !match(c, e))
		return NULL;
	vms_cur_skip_line(c);
	vms_enttab_mark(t, e);
	(*pos)++;
	return e;
}

/* The entity of the line named name (len bytes): the one expected at *pos
 * (lines come in the order of declare time) or else vms_enttab_find()'s;
 * *pos moves past it.  NULL: *res is VMS_RESCHEMA (a new entity) or 0
 * (one more line of an entity already read: counted as damaged). */
static inline struct vms_ent *vms_enttab_line(struct vms_enttab *t, uint32_t *pos,
					      const char *name, size_t len,
					      struct vms_tick_ctx *tc, int *res)
{
	struct vms_ent *e = *pos < t->n ? &t->ent[*pos] : NULL;
	if (!e || vms_ent_seen(t, e) || !vms_ent_name_is(e, name, len)) {
		bool known;
		e = vms_enttab_find(t, name, len, &known);
		if (!e) {
			*res = known ? 0 : VMS_RESCHEMA;
			if (known)
				vms_enttab_bad(t, tc);
			return NULL;
		}
	}
	*pos = (uint32_t)(e - t->ent) + 1;
	return e;
}

/* The tick's loop over a file of keyed lines (diskstats, netdev, meminfo,
 * vmstat): the next line.  parse() is the source's line parser (1, 0 at
 * the end, -errno for a damaged line; on 1 it names the line's key).
 *   VMS_ENT_LINE     *out is the line's entity (not marked yet), the
 *                    parser's output in `line`
 *   VMS_ENT_SKIPPED  *out is an entity the tick does not sample, its line
 *                    stepped over unparsed (vms_enttab_skip: `match`)
 *   VMS_ENT_NEW      an entity the table does not have: VMS_RESCHEMA
 *   VMS_ENT_END      no more lines
 * A damaged line, or one more line of an entity already read, is counted
 * (vms_enttab_bad) and passed over. */
enum vms_ent_step { VMS_ENT_END, VMS_ENT_LINE, VMS_ENT_SKIPPED, VMS_ENT_NEW };
typedef int vms_ent_parse_fn(struct vms_cur *c, void *line, const char **name, size_t *len);
static inline enum vms_ent_step vms_enttab_next(struct vms_enttab *t, uint32_t *pos, struct vms_cur *c,
						struct vms_tick_ctx *tc,
						bool (*match)(const struct vms_cur *, const struct vms_ent *),
						vms_ent_parse_fn *parse, void *line, struct vms_ent **out)
{
	for (;;) {
		struct vms_ent *e = vms_enttab_skip(t, pos, c, match);
		if (e) {
			*out = e;
			return VMS_ENT_SKIPPED;
		}
		const char *name = NULL;
		size_t len = 0;
		int r = parse(c, line, &name, &len);
		if (r == 0)
			return VMS_ENT_END;
		if (r < 0) {
			vms_enttab_damaged(t, pos, tc);
			continue;
		}
		e = vms_enttab_line(t, pos, name, len, tc, &r);
		if (e) {
			*out = e;
			return VMS_ENT_LINE;
		}
		if (r)
			return VMS_ENT_NEW;
	}
}

/* After the tick's lines: 0, or VMS_RESCHEMA when more entities are
 * missing than damaged lines explain.  The columns of the missing ones
 * are set to VMS_NONE. */
static inline int vms_enttab_end(struct vms_enttab *t, uint64_t *slots)
{
	if (VMS_LIKELY(t->nseen == t->nwant))
		return 0;
	if (t->nwant - t->nseen > t->nbad)
		return VMS_RESCHEMA;
	for (uint32_t i = 0; i < t->n; i++) {
		const struct vms_ent *e = &t->ent[i];
		if (e->slot >= 0 && e->seen != t->stamp)
			vms_slots_none(slots + e->slot, e->ncols);
	}
	return 0;
}

#endif

/* SPDX-License-Identifier: MIT */
/* source_mem.c - /proc/meminfo and /proc/vmstat: host memory, paging,
 * swapping, reclaim, compaction and OOM kills.
 *
 * Two sources over one shape of file, "key value" lines (parse_mem.c):
 *   meminfo  every line the kernel prints, mem.<key> with the key as
 *            printed but "(" as "_" and without ")" (Active(anon) ->
 *            mem.Active_anon): gauges, in bytes for the lines in kB, as
 *            counts for those without a unit (HugePages_Total).
 *   vmstat   the lines selected by sources.vmstat.include / exclude
 *            (globs; the default set is in config.c), vmstat.<key>:
 *            the kernel's nr_* lines are gauges, the rest counters
 *            (event counts since boot; nr_dirtied, nr_written and the
 *            nr_tlb_* and nr_foll_pin_* events are counters too).
 * The lines are the entities (entity.h): a key that appears is a new
 * schema, one that goes away too; the tick expects the lines in the order
 * of declare time and passes over the ones it does not sample with one
 * memcmp each.  Nothing here converts or derives: sar -r's kbmemused or
 * sar -B's pgscank/s are computed by the readers (src/lib/rates.c). */
#include <stdio.h>
#include <string.h>

#include "entity.h"
#include "parse.h"
#include "procfile.h"
#include "source.h"

#define KV_KB 1u       /* bits: the line's unit is kB */
#define KV_BADNAME 2u  /* bits: a key too long for a column: counted at every tick */

typedef int kv_next_fn(struct vms_cur *c, struct vms_kv_line *out);

/* meminfo's and vmstat's state: the file, its keys, and how to read a
 * line of it */
struct kvfile {
	struct vms_procfile f;
	struct vms_enttab tab;
	kv_next_fn *next;         /* its line parser (parse_mem.h) */
	bool (*match)(const struct vms_cur *, const struct vms_ent *);
};

/* meminfo and vmstat share their private state's layout */

static int kv_open(struct vms_source *src, const char *path, kv_next_fn *next,
		   bool (*match)(const struct vms_cur *, const struct vms_ent *))
{
	struct kvfile *p = src->priv;
	p->next = next;
	p->match = match;
	return vms_procfile_open(&p->f, src->proc_dirfd, path, 8192);
}

static void kv_close(struct vms_source *src)
{
	struct kvfile *p = src->priv;
	vms_procfile_close(&p->f);
	vms_enttab_free(&p->tab);
}

/* The entities of the file (every well-formed line, in file order). */
static int kv_scan(struct kvfile *p)
{
	struct vms_kv_line kv;
	struct vms_cur c;
	int r;

	r = vms_enttab_scan(&p->tab, &p->f, &c);
	if (r < 0)
		return r;
	while ((r = p->next(&c, &kv)) != 0) {
		if (r < 0)
			continue; /* a damaged line declares nothing */
		struct vms_ent *e = vms_enttab_add(&p->tab, kv.key, kv.key_len, kv.key, kv.key_len);
		if (!e)
			return -ENOMEM;
		e->bits = kv.kb ? KV_KB : 0;
	}
	p->tab.nwant = p->tab.n;
	return 0;
}

/* The line at the cursor is the entity's: its key, then `sep`. */
static bool kv_match(const struct vms_cur *c, const struct vms_ent *e, char sep)
{
	return vms_cur_left(c) > e->prefix_len && memcmp(c->p, e->prefix, e->prefix_len) == 0 &&
	       c->p[e->prefix_len] == sep;
}

static bool mi_match(const struct vms_cur *c, const struct vms_ent *e)
{
	return kv_match(c, e, ':');
}

static bool vs_match(const struct vms_cur *c, const struct vms_ent *e)
{
	return kv_match(c, e, ' ');
}

/* A line as the entity table reads it in the tick: the family's parser
 * and what it read. */
struct kv_read {
	kv_next_fn *next;
	struct vms_kv_line kv;
};

static int kv_parse(struct vms_cur *c, void *line, const char **name, size_t *len)
{
	struct kv_read *rd = line;
	int r = rd->next(c, &rd->kv);
	*name = rd->kv.key;
	*len = rd->kv.key_len;
	return r;
}

static int kv_sample(struct vms_source *src, uint64_t *slots, struct vms_tick_ctx *t)
{
	struct kvfile *p = src->priv;
	struct vms_enttab *tab = &p->tab;
	struct kv_read rd = {.next = p->next};
	struct vms_cur c;
	struct vms_ent *e;
	enum vms_ent_step st;
	uint32_t pos = 0;

	int r = vms_enttab_read(tab, &p->f, &c);
	if (r < 0)
		return r;
	while ((st = vms_enttab_next(tab, &pos, &c, t, p->match, kv_parse, &rd, &e)) != VMS_ENT_END) {
		if (st == VMS_ENT_NEW)
			return VMS_RESCHEMA; /* a new key */
		if (st == VMS_ENT_SKIPPED) {
			t->parse_errors += !!(e->bits & KV_BADNAME);
			continue;
		}
		if (VMS_UNLIKELY(rd.kv.kb != !!(e->bits & KV_KB))) {
			/* the unit changed under the column: not believed */
			vms_enttab_bad(tab, t);
			continue;
		}
		vms_enttab_mark(tab, e);
		t->parse_errors += !!(e->bits & KV_BADNAME);
		if (e->slot >= 0)
			slots[e->slot] = rd.kv.v;
	}
	return vms_enttab_end(tab, slots); /* VMS_RESCHEMA: a key went away */
}

/* What a key's column is: its definition and its name (*name: the key,
 * or the column's name written into buf, VMS_KV_KEY_MAX + 1 bytes); NULL:
 * no column. */
typedef const struct vms_coldef *kv_col_fn(const struct vms_source *src, struct vms_ent *e, char *buf,
					   const char **name);

/* Scan the file and declare a column of group g for each key col() keeps
 * (of a key's lines the first: a second one is not sampled).  How many
 * columns, or -errno. */
static int kv_declare(struct vms_source *src, struct vms_schema_builder *b, enum vms_group g, kv_col_fn *col)
{
	struct kvfile *p = src->priv;
	char buf[VMS_KV_KEY_MAX + 1];
	uint32_t slot = 0;

	int r = kv_scan(p);
	if (r < 0)
		return r;
	for (uint32_t i = 0; i < p->tab.n; i++) {
		struct vms_ent *e = &p->tab.ent[i];
		const char *name;
		if (vms_enttab_dup(&p->tab, e))
			continue; /* a second line of the same key: not sampled */
		const struct vms_coldef *d = col(src, e, buf, &name);
		if (!d)
			continue;
		e->slot = (int32_t)slot++;
		e->ncols = 1;
		vms_schema_addc(b, d, g, NULL, NULL, name);
	}
	return b->err ? b->err : (int)slot;
}

/* ---- meminfo -------------------------------------------------------------- */

static int mi_open(struct vms_source *src, const struct vms_source_env *env)
{
	(void)env;
	return kv_open(src, "meminfo", vms_meminfo_next, mi_match);
}

/* "Active(anon)" -> "Active_anon" into out (cap bytes): false if it does
 * not fit. */
static bool mi_colname(const char *key, size_t len, char *out, size_t cap)
{
	size_t o = 0;
	for (size_t i = 0; i < len; i++) {
		if (key[i] == ')')
			continue;
		if (o + 1 >= cap)
			return false;
		out[o++] = key[i] == '(' ? '_' : key[i];
	}
	out[o] = '\0';
	return true;
}

/* kB values are bytes (the parser scales them), the others counts; a key
 * whose column cannot be named is counted as damaged at each sample. */
static const struct vms_coldef *mi_col(const struct vms_source *src, struct vms_ent *e, char *buf, const char **name)
{
	static const struct vms_coldef bytes = {.kind = VMS_KIND_GAUGE, .unit = VMS_UNIT_BYTES};
	static const struct vms_coldef count = {.kind = VMS_KIND_GAUGE, .unit = VMS_UNIT_COUNT};
	(void)src;
	if (!mi_colname(e->name, e->name_len, buf, VMS_KV_KEY_MAX + 1)) {
		e->bits |= KV_BADNAME;
		return NULL;
	}
	*name = buf;
	return (e->bits & KV_KB) ? &bytes : &count;
}

static int mi_declare(struct vms_source *src, struct vms_schema_builder *b, const struct vms_source_env *env)
{
	(void)env;
	int n = kv_declare(src, b, VMS_G_MEM, mi_col);
	if (n < 0)
		return n;
	return n ? 0 : -ENODATA;
}

VMS_SOURCE_OPS_FAMILY(meminfo, struct kvfile, mi, kv);

/* ---- vmstat --------------------------------------------------------------- */

static int vs_open(struct vms_source *src, const struct vms_source_env *env)
{
	(void)env;
	return kv_open(src, "vmstat", vms_vmstat_next, vs_match);
}

static bool has_prefix(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

/* nr_* are the kernel's node and zone state (pages, a few in kB): gauges,
 * but for the ones that only count up; and workingset_nodes, the one state
 * item whose name has no nr_ (the shadow nodes now: it goes down, which a
 * fresh CI run saw between two reads of test_source_mem's test_live). */
static bool vs_gauge(const char *key)
{
	if (strcmp(key, "workingset_nodes") == 0)
		return true;
	if (!has_prefix(key, "nr_"))
		return false;
	return strcmp(key, "nr_dirtied") != 0 && strcmp(key, "nr_written") != 0 &&
	       !has_prefix(key, "nr_tlb_") && !has_prefix(key, "nr_foll_pin_");
}

/* The keys the configuration selects; pgpgin and pgpgout in KiB (the
 * kernel prints sectors / 2). */
static const struct vms_coldef *vs_col(const struct vms_source *src, struct vms_ent *e, char *buf, const char **name)
{
	static const struct vms_coldef gauge = {.kind = VMS_KIND_GAUGE, .unit = VMS_UNIT_COUNT};
	static const struct vms_coldef count = {.kind = VMS_KIND_COUNTER, .unit = VMS_UNIT_COUNT,
						.wrap_bits = 64};
	static const struct vms_coldef kib = {.kind = VMS_KIND_COUNTER, .unit = VMS_UNIT_KIB, .wrap_bits = 64};
	const struct vms_source_conf *sc = src->sconf;
	(void)buf;
	if (sc && !vms_globs_select(&sc->include, &sc->exclude, e->name))
		return NULL;
	*name = e->name;
	if (vs_gauge(e->name))
		return &gauge;
	if (strcmp(e->name, "pgpgin") == 0 || strcmp(e->name, "pgpgout") == 0)
		return &kib;
	return &count;
}

static int vs_declare(struct vms_source *src, struct vms_schema_builder *b, const struct vms_source_env *env)
{
	(void)env;
	int n = kv_declare(src, b, VMS_G_VMSTAT, vs_col);
	return n < 0 ? n : 0;
}

VMS_SOURCE_OPS_FAMILY(vmstat, struct kvfile, vs, kv);

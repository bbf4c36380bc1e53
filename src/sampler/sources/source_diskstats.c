/* SPDX-License-Identifier: MIT */
/* source_diskstats.c - /proc/diskstats: I/O counters per block device.
 *
 * Whole disks by default, partitions when configured, then the include and
 * exclude globs.  Which devices are partitions is decided from the file
 * alone (a fixture proc root has no /sys): a 4-field line (2.6.0-2.6.24
 * partition format), or a name that is another device's name plus digits
 * ("sda1" of "sda"), or plus "p" and digits when that name ends in a digit
 * ("nvme0n1p1", "mmcblk0p1", "nbd11p1") - but not "mmcblk0boot0", "md0",
 * "dm-0", or "nbd11" of "nbd1".
 *
 * Each device gets the columns its line has (11, 15 or 17 fields; 4-field
 * lines get rd_ios rd_sectors wr_ios wr_sectors).  The tick expects the
 * lines in the order seen at declare time: one memcmp of the line's
 * "major minor name" prefix per device, so lines of devices that are not
 * sampled are passed over without reading their numbers. */
#include <stdlib.h>
#include <string.h>

#include <limits.h>

#include "name.h"
#include "entity.h"
#include "parse.h"
#include "procfile.h"
#include "source.h"

/* The entities are the lines, in file order: prefix is the line up to the
 * end of the name, nfields 4, 11, 15 or 17, and bits: */
#define DK_PARTITION 1u
#define DK_TOOLONG 2u /* a name longer than a file name: skipped, counted */

struct diskstats {
	struct vms_procfile f;
	struct vms_enttab tab;
};

/* Column attributes per field. */
static const struct vms_coldef dk_def[VMS_DISK_FIELDS] = {
#define CNT {.kind = VMS_KIND_COUNTER, .unit = VMS_UNIT_COUNT, .wrap_bits = 64}
#define SEC {.kind = VMS_KIND_COUNTER, .unit = VMS_UNIT_SECTORS, .wrap_bits = 64}
#define MS {.kind = VMS_KIND_COUNTER, .unit = VMS_UNIT_MS, .wrap_bits = 32}
	CNT, CNT, SEC, MS,    /* rd_ios rd_merges rd_sectors rd_ticks */
	CNT, CNT, SEC, MS,    /* wr_* */
	{.kind = VMS_KIND_GAUGE, .unit = VMS_UNIT_COUNT}, /* in_flight */
	MS, MS,               /* io_ticks time_in_queue */
	CNT, CNT, SEC, MS,    /* dc_* */
	CNT, MS,              /* fl_ios fl_ticks */
#undef CNT
#undef SEC
#undef MS
};

/* The fields a line of n fields has, in column order. */
static const uint8_t dk_fields4[] = {0, 2, 4, 6};

static unsigned dk_ncols(unsigned nfields)
{
	return nfields == 4 ? 4 : nfields;
}

static unsigned dk_field(unsigned nfields, unsigned i)
{
	return nfields == 4 ? dk_fields4[i] : i;
}

static int dk_open(struct vms_source *src, const struct vms_source_env *env)
{
	(void)env;
	struct diskstats *p = src->priv;
	return vms_procfile_open(&p->f, src->proc_dirfd, "diskstats", 4096);
}

/* Is `name` the name of a partition of the device `disk`? */
static bool dk_part_of(const char *name, size_t len, const char *disk, size_t dlen)
{
	if (dlen >= len || memcmp(name, disk, dlen) != 0)
		return false;
	if (vms_is_digit(disk[dlen - 1]))
		return name[dlen] == 'p' && vms_all_digits(name + dlen + 1, len - dlen - 1);
	return vms_all_digits(name + dlen, len - dlen);
}

static void dk_classify(struct vms_enttab *t)
{
	for (uint32_t i = 0; i < t->n; i++) {
		struct vms_ent *e = &t->ent[i];
		bool part = e->nfields == 4;
		for (uint32_t j = 0; j < t->n && !part; j++)
			part = j != i &&
			       dk_part_of(e->name, e->name_len, t->ent[j].name, t->ent[j].name_len);
		if (part)
			e->bits |= DK_PARTITION;
	}
}

static int dk_declare(struct vms_source *src, struct vms_schema_builder *b, const struct vms_source_env *env)
{
	(void)env;
	struct diskstats *p = src->priv;
	const struct vms_source_conf *sc = src->sconf;
	struct vms_disk_line dl;
	struct vms_cur c;
	uint32_t slot = 0;
	int r;

	/* each prefix is at most its line, plus a NUL */
	r = vms_enttab_scan(&p->tab, &p->f, &c);
	if (r < 0)
		return r;
	for (;;) {
		const char *ls = c.p;
		r = vms_diskstats_next(&c, &dl);
		if (r == 0)
			break;
		if (r < 0)
			continue; /* a damaged line declares nothing */
		struct vms_ent *e = vms_enttab_add(&p->tab, ls, (size_t)(dl.name + dl.name_len - ls),
						   dl.name, dl.name_len);
		e->nfields = (uint8_t)dl.nfields;
	}
	dk_classify(&p->tab);

	p->tab.nwant = p->tab.n; /* every line, sampled or not */
	for (uint32_t i = 0; i < p->tab.n; i++) {
		struct vms_ent *e = &p->tab.ent[i];
		if (e->name_len > NAME_MAX) {
			/* no block device has such a name (it is a file in /sys):
			 * a damaged line, skipped and counted at every sample,
			 * not a column name that stops the start */
			e->bits |= DK_TOOLONG;
			continue;
		}
		if (vms_enttab_dup(&p->tab, e))
			continue; /* a second line of the same name: not sampled */
		if ((e->bits & DK_PARTITION) && !(sc && sc->partitions))
			continue;
		if (sc && !vms_globs_select(&sc->include, &sc->exclude, e->name))
			continue;
		unsigned n = dk_ncols(e->nfields);
		char part[VMS_NAME_PART_MAX + 1];
		vms_name_fit(part, VMS_NAME_PART_MAX, e->name, e->name_len);
		e->slot = (int32_t)slot;
		e->ncols = n;
		for (unsigned k = 0; k < n; k++) {
			unsigned f = dk_field(e->nfields, k);
			vms_schema_addc(b, &dk_def[f], VMS_G_DISK, part, NULL, vms_disk_field_names[f]);
		}
		slot += n;
	}
	return b->err;
}

/* The line at the cursor is the expected device's (same major, minor and
 * name, then a blank). */
static bool dk_prefix_match(const struct vms_cur *c, const struct vms_ent *e)
{
	return vms_cur_left(c) > e->prefix_len && memcmp(c->p, e->prefix, e->prefix_len) == 0 &&
	       (c->p[e->prefix_len] == ' ' || c->p[e->prefix_len] == '\t');
}

static int dk_parse(struct vms_cur *c, void *line, const char **name, size_t *len)
{
	struct vms_disk_line *dl = line;
	int r = vms_diskstats_next(c, dl);
	*name = dl->name;
	*len = dl->name_len;
	return r;
}

static int dk_sample(struct vms_source *src, uint64_t *slots, struct vms_tick_ctx *t)
{
	struct diskstats *p = src->priv;
	struct vms_disk_line dl;
	struct vms_cur c;
	struct vms_enttab *tab = &p->tab;
	struct vms_ent *e;
	enum vms_ent_step st;
	uint32_t pos = 0;
	int r;

	r = vms_enttab_read(tab, &p->f, &c);
	if (r < 0)
		return r;
	while ((st = vms_enttab_next(tab, &pos, &c, t, dk_prefix_match, dk_parse, &dl, &e)) != VMS_ENT_END) {
		if (st == VMS_ENT_NEW)
			return VMS_RESCHEMA; /* a new device */
		if (st == VMS_ENT_SKIPPED) {
			t->parse_errors += !!(e->bits & DK_TOOLONG);
			continue;
		}
		if (VMS_UNLIKELY(e->slot >= 0 && dl.nfields != e->nfields)) {
			/* a cut line that still has a valid count: not believed */
			vms_enttab_bad(tab, t);
			continue;
		}
		vms_enttab_mark(tab, e);
		t->parse_errors += !!(e->bits & DK_TOOLONG);
		if (e->slot < 0)
			continue;
		uint64_t *s = slots + e->slot;
		if (e->nfields == 4) {
			s[0] = dl.v[0];
			s[1] = dl.v[2];
			s[2] = dl.v[4];
			s[3] = dl.v[6];
		} else {
			memcpy(s, dl.v, e->nfields * sizeof(uint64_t));
		}
	}
	return vms_enttab_end(tab, slots); /* VMS_RESCHEMA: a device went away */
}

static void dk_close(struct vms_source *src)
{
	struct diskstats *p = src->priv;
	vms_procfile_close(&p->f);
	vms_enttab_free(&p->tab);
}

VMS_SOURCE_OPS(diskstats, dk);

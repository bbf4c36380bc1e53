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

#include "parse.h"
#include "procfile.h"
#include "source.h"

struct dk_ent {
	const char *prefix;  /* the line up to the end of the name, NUL-terminated */
	const char *name;    /* the tail of prefix */
	uint32_t prefix_len, name_len;
	uint8_t nfields;     /* 4, 11, 15 or 17 */
	bool partition;
	bool selected;
	bool toolong;        /* a name longer than a file name: skipped, counted */
	int32_t slot;        /* first column, -1 if not sampled */
	uint32_t seen;       /* stamp of the last sample that read it */
};

struct diskstats {
	struct vms_procfile f;
	struct dk_ent *ent;  /* in file order */
	uint32_t nent;
	char *str;           /* prefixes and names */
	uint32_t stamp;
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

static void dk_forget(struct diskstats *p)
{
	free(p->ent);
	free(p->str);
	p->ent = NULL;
	p->str = NULL;
	p->nent = 0;
}

static int dk_open(struct vms_source *src)
{
	struct diskstats *p = src->priv;
	p->f = (struct vms_procfile)VMS_PROCFILE_INIT;
	return vms_procfile_open(&p->f, src->proc_dirfd, "diskstats", 4096);
}

static bool all_digits(const char *s, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!vms_is_digit(s[i]))
			return false;
	return true;
}

/* Is `name` the name of a partition of the device `disk`? */
static bool dk_part_of(const char *name, size_t len, const char *disk, size_t dlen)
{
	if (dlen >= len || memcmp(name, disk, dlen) != 0)
		return false;
	if (vms_is_digit(disk[dlen - 1]))
		return name[dlen] == 'p' && all_digits(name + dlen + 1, len - dlen - 1);
	return all_digits(name + dlen, len - dlen);
}

static void dk_classify(struct diskstats *p)
{
	for (uint32_t i = 0; i < p->nent; i++) {
		struct dk_ent *e = &p->ent[i];
		e->partition = e->nfields == 4;
		for (uint32_t j = 0; j < p->nent && !e->partition; j++)
			if (j != i &&
			    dk_part_of(e->name, e->name_len, p->ent[j].name, p->ent[j].name_len))
				e->partition = true;
	}
}

static int dk_declare(struct vms_source *src, struct vms_schema_builder *b)
{
	struct diskstats *p = src->priv;
	const struct vms_source_conf *sc = src->sconf;
	struct vms_disk_line dl;
	struct vms_cur c;
	uint32_t nlines = 1, slot = 0;
	size_t soff = 0;
	int r;

	dk_forget(p);
	r = vms_procfile_read(&p->f);
	if (r < 0)
		return r;
	const char *fend = p->f.buf + p->f.len;
	for (const char *q = p->f.buf; (q = memchr(q, '\n', (size_t)(fend - q))); q++)
		nlines++;
	p->ent = calloc(nlines, sizeof(*p->ent));
	/* each prefix is at most its line, plus a NUL */
	p->str = malloc(p->f.len + nlines);
	if (!p->ent || !p->str) {
		dk_forget(p);
		return -ENOMEM;
	}

	vms_cur_init(&c, p->f.buf, p->f.len);
	for (;;) {
		const char *ls = c.p;
		r = vms_diskstats_next(&c, &dl);
		if (r == 0)
			break;
		if (r < 0)
			continue; /* a damaged line declares nothing */
		struct dk_ent *e = &p->ent[p->nent++];
		size_t plen = (size_t)(dl.name + dl.name_len - ls);
		char *s = p->str + soff;
		memcpy(s, ls, plen);
		s[plen] = '\0';
		soff += plen + 1;
		e->prefix = s;
		e->prefix_len = (uint32_t)plen;
		e->name = s + plen - dl.name_len;
		e->name_len = (uint32_t)dl.name_len;
		e->nfields = (uint8_t)dl.nfields;
		e->slot = -1;
	}
	dk_classify(p);

	for (uint32_t i = 0; i < p->nent; i++) {
		struct dk_ent *e = &p->ent[i];
		bool dup = false;
		if (e->name_len > NAME_MAX) {
			/* no block device has such a name (it is a file in /sys):
			 * a damaged line, skipped and counted at every sample,
			 * not a column name that stops the start */
			e->toolong = true;
			continue;
		}
		for (uint32_t j = 0; j < i && !dup; j++)
			dup = p->ent[j].name_len == e->name_len &&
			      memcmp(p->ent[j].name, e->name, e->name_len) == 0;
		if (dup)
			continue; /* a second line of the same name: not sampled */
		if (e->partition && !(sc && sc->partitions))
			continue;
		if (sc && !vms_globs_select(&sc->include, &sc->exclude, e->name))
			continue;
		e->selected = true;
		e->slot = (int32_t)slot;
		unsigned n = dk_ncols(e->nfields);
		for (unsigned k = 0; k < n; k++) {
			unsigned f = dk_field(e->nfields, k);
			vms_schema_addf(b, &dk_def[f], "disk.%s.%s", e->name,
					vms_disk_field_names[f]);
		}
		slot += n;
	}
	return b->err;
}

/* The line at the cursor is the expected device's (same major, minor and
 * name, then a blank). */
static bool dk_prefix_match(const struct vms_cur *c, const struct dk_ent *e)
{
	return vms_cur_left(c) > e->prefix_len && memcmp(c->p, e->prefix, e->prefix_len) == 0 &&
	       (c->p[e->prefix_len] == ' ' || c->p[e->prefix_len] == '\t');
}

static bool dk_name_is(const struct dk_ent *e, const struct vms_disk_line *dl)
{
	return e->name_len == dl->name_len && memcmp(e->name, dl->name, dl->name_len) == 0;
}

/* A device not where it was at declare time (one was added or removed
 * before it): the first of that name not yet read in this sample.  NULL
 * with *known set: every device of that name was read already. */
static struct dk_ent *dk_lookup(struct diskstats *p, const struct vms_disk_line *dl, uint32_t stamp,
				bool *known)
{
	*known = false;
	for (uint32_t i = 0; i < p->nent; i++) {
		if (!dk_name_is(&p->ent[i], dl))
			continue;
		if (p->ent[i].seen != stamp)
			return &p->ent[i];
		*known = true;
	}
	return NULL;
}

static int dk_sample(struct vms_source *src, uint64_t *slots, struct vms_tick_ctx *t)
{
	struct diskstats *p = src->priv;
	struct vms_disk_line dl;
	struct vms_cur c;
	uint32_t stamp, pos = 0, seen = 0, bad = 0;
	int r;

	r = vms_procfile_read(&p->f);
	if (r < 0)
		return r;
	stamp = ++p->stamp;
	if (VMS_UNLIKELY(stamp == 0))
		stamp = p->stamp = 1; /* 0 is "never seen" */
	vms_cur_init(&c, p->f.buf, p->f.len);
	for (;;) {
		struct dk_ent *e = pos < p->nent ? &p->ent[pos] : NULL;
		if (e && !e->selected && e->seen != stamp && dk_prefix_match(&c, e)) {
			vms_cur_skip_line(&c);
			t->parse_errors += e->toolong;
			e->seen = stamp;
			seen++;
			pos++;
			continue;
		}
		r = vms_diskstats_next(&c, &dl);
		if (r == 0)
			break;
		if (r < 0) {
			bad++;
			t->parse_errors++;
			pos++;
			continue;
		}
		if (!e || e->seen == stamp || !dk_name_is(e, &dl)) {
			bool known;
			e = dk_lookup(p, &dl, stamp, &known);
			if (!e && !known)
				return VMS_RESCHEMA; /* a new device */
			if (!e) {
				/* one more line of a device already read: damaged */
				bad++;
				t->parse_errors++;
				continue;
			}
		}
		pos = (uint32_t)(e - p->ent) + 1;
		if (VMS_UNLIKELY(e->selected && dl.nfields != e->nfields)) {
			/* a cut line that still has a valid count: not believed */
			bad++;
			t->parse_errors++;
			continue;
		}
		e->seen = stamp;
		seen++;
		t->parse_errors += e->toolong;
		if (!e->selected)
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
	if (VMS_LIKELY(seen == p->nent))
		return 0;
	if (p->nent - seen > bad)
		return VMS_RESCHEMA; /* a device went away */
	for (uint32_t i = 0; i < p->nent; i++) {
		struct dk_ent *e = &p->ent[i];
		if (e->selected && e->seen != stamp)
			vms_slots_none(slots + e->slot, dk_ncols(e->nfields));
	}
	return 0;
}

static void dk_close(struct vms_source *src)
{
	struct diskstats *p = src->priv;
	if (!p)
		return;
	vms_procfile_close(&p->f);
	dk_forget(p);
}

VMS_SOURCE_OPS(diskstats, dk);

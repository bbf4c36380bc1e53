/* SPDX-License-Identifier: MIT */
/* test_source_diskstats.c - the diskstats source driven through its ops
 * against proc-root directories, as the loop drives it.
 *
 * Which devices are whole disks and which are partitions is checked
 * against PCP's disk.dev / disk.partitions listings (EXPECTED.md section
 * 4) for every PCP fixture, and PCP's disk.all against the sum of the
 * sampled columns.  Every sampled value is checked against an independent
 * reader of the same file (strtok_r + strtoull).  The allocator is wrapped
 * (-Wl,--wrap) to prove that sample() never allocates. */
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#include "allocwrap.h"
#include "source.h"
#include "srcdrv.h"

extern const struct vms_source_ops vms_source_diskstats;

#define read_disk(name, len) fixture_root_read(name, "diskstats", len)
#define put(dir, data, len) drv_put(dir, "diskstats", data, len)

/* ---- an independent reader ------------------------------------------------ */

static const char *const fields[] = {
	"rd_ios", "rd_merges", "rd_sectors", "rd_ticks", "wr_ios", "wr_merges", "wr_sectors",
	"wr_ticks", "in_flight", "io_ticks", "time_in_queue", "dc_ios", "dc_merges", "dc_sectors",
	"dc_ticks", "fl_ios", "fl_ticks",
};

/* "disk.<name>.<field>" -> name and field index */
static void split_col(const char *col, char *name, size_t cap, int *fi)
{
	assert_int_equal(strncmp(col, "disk.", 5), 0);
	const char *dot = strrchr(col, '.');
	assert_true(dot > col + 5);
	snprintf(name, cap, "%.*s", (int)(dot - col - 5), col + 5);
	*fi = -1;
	for (int i = 0; i < 17; i++)
		if (strcmp(dot + 1, fields[i]) == 0)
			*fi = i;
	assert_true(*fi >= 0);
}

/* The value of a column from the file: the line whose 3rd token is the
 * name; for 4-number lines, rd_ios rd_sectors wr_ios wr_sectors are its
 * 1st to 4th numbers. */
static bool ref_value(const char *file, size_t len, const char *col, uint64_t *out)
{
	char name[256];
	int fi;
	bool found = false;
	split_col(col, name, sizeof(name), &fi);
	char *copy = strndup(file, len), *save = NULL;
	for (char *ln = strtok_r(copy, "\n", &save); ln && !found; ln = strtok_r(NULL, "\n", &save)) {
		char *s2 = NULL, *tok[32];
		unsigned n = 0;
		for (char *t = strtok_r(ln, " ", &s2); t && n < 32; t = strtok_r(NULL, " ", &s2))
			tok[n++] = t;
		if (n < 4 || strcmp(tok[2], name))
			continue;
		int at = fi;
		if (n - 3 == 4) {
			static const int four[] = {0, -1, 1, -1, 2, -1, 3};
			at = fi < 7 ? four[fi] : -1;
			assert_true(at >= 0); /* no other column for a 4-field line */
		}
		assert_true((unsigned)at < n - 3);
		*out = strtoull(tok[3 + at], NULL, 10);
		found = true;
	}
	free(copy);
	return found;
}

#define check_all(d, file, len) drv_check_all(d, ref_value, file, len)
#define check_fixture(d, name) drv_check_fixture(d, ref_value, name, "diskstats")
/* the devices that have columns, in column order, as "a b c" */
#define devices(d, out, cap) drv_entities(d, "disk.", ".rd_ios", out, cap)

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sort a space-separated list (in place). */
static void sort_words(char *s)
{
	char *w[512], *save = NULL, *copy = strdup(s);
	unsigned n = 0;
	for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save))
		w[n++] = t;
	qsort(w, n, sizeof(w[0]), cmp_str);
	size_t o = 0;
	s[0] = '\0';
	for (unsigned i = 0; i < n; i++)
		o += (size_t)sprintf(s + o, "%s%s", i ? " " : "", w[i]);
	free(copy);
}

/* Words of `all` not in `minus` / not matching any of the globs. */
static void words_minus(const char *all, const char *minus, const char *const *globs, char *out)
{
	char *copy = strdup(all), *save = NULL;
	size_t o = 0;
	out[0] = '\0';
	for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		bool drop = false;
		if (minus) {
			char pat[300];
			snprintf(pat, sizeof(pat), " %s ", t);
			char m[4096];
			snprintf(m, sizeof(m), " %s ", minus);
			drop = strstr(m, pat) != NULL;
		}
		for (unsigned g = 0; globs && globs[g] && !drop; g++)
			drop = fnmatch(globs[g], t, 0) == 0;
		if (!drop)
			o += (size_t)sprintf(out + o, "%s%s", o ? " " : "", t);
	}
	free(copy);
}

/* ---- PCP ------------------------------------------------------------------ */

/* EXPECTED.md section 4: the names PCP lists under disk.dev, disk.partitions,
 * and (by kernel name, via hinv.map.*) disk.dm / disk.md; and disk.all, PCP's
 * sum over disk.dev, in file-column order. */
static const struct {
	const char *fixture, *dev, *partitions, *dm_md, *all;
} pcp[] = {
	{"pcp-blkdev001-partitions", "sda",
	 "sda1 sda10 sda2 sda3 sda4 sda5 sda6 sda7 sda8 sda9", "dm-0",
	 "1132105 127625 95048962 12125298 1541331 2624311 178999432 520526656 0 15011617 532716500"},
	{"pcp-blkdev002-cciss-c12d11", "cciss/c12d11 sda", "", "dm-0",
	 "1132650 127645 95561506 12125397 1575717 2624333 178999688 520527531 1 15012258 532718191"},
	{"pcp-blkdev004-md", "sda sdb", "", "md0 md1",
	 "3264210 355250 180097924 34250596 4082662 6248622 457998864 1141053312 1 40023234 1165433000"},
	{"pcp-blkdev006-nbd",
	 "nbd0 nbd1 nbd10 nbd11 nbd12 nbd13 nbd14 nbd15 nbd2 nbd3 nbd4 nbd5 nbd6 nbd7 nbd8 nbd9 sda sdb",
	 "nbd11p1 nbd11p2 sda1 sda2 sda3", "",
	 "16505440 78056 108318902 43047892 98781026 67668396 126878242 101099540 0 31517648 69598188"},
	{"pcp-blkdev007-20fields-zram", "sda sdb sdc vda", "vda1 vda2", "",
	 "21600 90 3157138 14541 27085 2670 1876409 42614 0 35343 67946 0 0 0 0 2532 10786"},
};

/* What PCP keeps out of disk.dev in these listings: ram*, loop*, sr*
 * ("PCP omits ram*, loop*, sr*"), dm-* and md* (disk.dm, disk.md), and
 * zram0, absent from blkdev-007's disk.dev. */
static const char *const pcp_elsewhere[] = {"ram*", "loop*", "sr*", "dm-*", "md*", "zram*", NULL};

static void test_pcp_classification(void **state)
{
	(void)state;
	char whole[4096], all[4096], parts[4096], got[4096], want[4096];
	for (unsigned k = 0; k < VMS_ARRAY_SIZE(pcp); k++) {
		char r[256];
		snprintf(r, sizeof(r), "roots/%s", pcp[k].fixture);

		/* whole disks (the default) */
		struct drv *d = drv_new(root(r), &vms_source_diskstats);
		assert_int_equal(drv_declare(d), 0);
		devices(d, whole, sizeof(whole));
		words_minus(whole, NULL, pcp_elsewhere, got);
		sort_words(got);
		snprintf(want, sizeof(want), "%s", pcp[k].dev);
		sort_words(want);
		if (strcmp(got, want))
			fail_msg("%s: whole disks [%s], PCP disk.dev [%s]", pcp[k].fixture, got, want);
		/* dm and md devices are whole devices too */
		char *dm = strdup(pcp[k].dm_md), *save = NULL;
		for (char *t = strtok_r(dm, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
			char c[300];
			snprintf(c, sizeof(c), "disk.%s.rd_ios", t);
			assert_true(vms_schema_find(d->schema, c) >= 0);
		}
		free(dm);

		/* PCP's disk.all = the sum of our disk.dev columns */
		assert_int_equal(drv_sample(d), 0);
		assert_int_equal(d->parse_errors, 0);
		check_fixture(d, pcp[k].fixture);
		uint64_t sum[17] = {0}, wantsum[17];
		char *s = (char *)pcp[k].all, *end;
		unsigned nf = 0;
		for (; nf < 17; nf++, s = end) {
			wantsum[nf] = strtoull(s, &end, 10);
			if (end == s)
				break;
		}
		char *devs = strdup(pcp[k].dev);
		save = NULL;
		for (char *t = strtok_r(devs, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
			for (unsigned f = 0; f < nf; f++) {
				char c[300];
				snprintf(c, sizeof(c), "disk.%s.%s", t, fields[f]);
				int i = vms_schema_find(d->schema, c);
				assert_true(i >= 0);
				sum[f] += d->slots[i];
			}
		}
		free(devs);
		for (unsigned f = 0; f < nf; f++)
			assert_int_equal(sum[f], wantsum[f]);
		drv_close(d);

		/* with partitions: exactly PCP's disk.partitions are added */
		d = drv_new(root(r), &vms_source_diskstats);
		d->sconf.partitions = true;
		assert_int_equal(drv_declare(d), 0);
		devices(d, all, sizeof(all));
		words_minus(all, whole, NULL, parts);
		sort_words(parts);
		snprintf(want, sizeof(want), "%s", pcp[k].partitions);
		sort_words(want);
		if (strcmp(parts, want))
			fail_msg("%s: partitions [%s], PCP disk.partitions [%s]", pcp[k].fixture, parts, want);
		assert_int_equal(drv_sample(d), 0);
		check_fixture(d, pcp[k].fixture);
		drv_close(d);
	}
}

/* The other fixtures: partitions by the kernel's naming, as their
 * provenance describes the devices. */
static const struct {
	const char *fixture, *partitions;
} other[] = {
	/* "mmcblk0p1..p8, mmcblk0boot0/boot1, mmcblk1 SD card" */
	{"android-i5-mmcblk", "mmcblk0p1 mmcblk0p2 mmcblk0p3 mmcblk0p4 mmcblk0p5 mmcblk0p6 mmcblk0p7 "
			      "mmcblk0p8 mmcblk1p1 mmcblk1p2 mmcblk1p3"},
	{"atlas-ec2-xvd-md0", ""},
	/* nbd10..nbd15 are not partitions of nbd1 */
	{"d2000-embedded-oldspacing-mtd", ""},
	{"goprocinfo-md2-over-2e32", "sda1 sdb1 sdc1 sdc2 sdc5 sdd1 sde1 sdf1 sdg1 sdh1 sdi1 sdj1 sdk1 sdl1"},
	/* 4-field lines */
	{"lkml-2.5.70-short-partitions-inflight-wrap", "hda1 hda2"},
	/* sdaa..sdbr are not partitions of sda */
	{"pcp-bigsys-hpbl920-107dev", ""},
	{"pcp-cgroups004-18fields-over-2e32", "sda1 sda2"},
	{"procfs-mixed-fieldcounts", "sda1 sda2 sda3 sda4 mmcblk0p1 mmcblk0p2 vda1 vda2 nvme0n1p1 "
				     "nvme0n1p2 sdb1 sdb2 sdc1 sdc2"},
	/* sds is damaged (14 numbers) */
	{"sysstat-root1-discard-short-line", "sda1 sda2 sda3 sda4 sda5 sda6 sda7 sda8 sda9 sda10 "
					     "sda11 sda12"},
};

static void test_other_classification(void **state)
{
	(void)state;
	char whole[8192], all[8192], parts[8192], want[8192];
	for (unsigned k = 0; k < VMS_ARRAY_SIZE(other); k++) {
		char r[256];
		snprintf(r, sizeof(r), "roots/%s", other[k].fixture);
		struct drv *d = drv_new(root(r), &vms_source_diskstats);
		assert_int_equal(drv_declare(d), 0);
		devices(d, whole, sizeof(whole));
		drv_close(d);
		d = drv_new(root(r), &vms_source_diskstats);
		d->sconf.partitions = true;
		assert_int_equal(drv_declare(d), 0);
		devices(d, all, sizeof(all));
		words_minus(all, whole, NULL, parts);
		sort_words(parts);
		snprintf(want, sizeof(want), "%s", other[k].partitions);
		sort_words(want);
		if (strcmp(parts, want))
			fail_msg("%s: partitions [%s], want [%s]", other[k].fixture, parts, want);
		/* and every value of every device, partitions included */
		assert_int_equal(drv_sample(d), 0);
		assert_int_equal(d->parse_errors, k == VMS_ARRAY_SIZE(other) - 1 ? 1 : 0);
		check_fixture(d, other[k].fixture);
		drv_close(d);
	}
}


/* ---- columns ---------------------------------------------------------------- */

static const struct vms_col *column(const struct drv *d, const char *name)
{
	int i = vms_schema_find(d->schema, name);
	if (i < 0)
		fail_msg("no column %s", name);
	return &d->schema->cols[i];
}

static void test_columns(void **state)
{
	(void)state;
	/* 17 fields: kinds, units and wrap widths */
	struct drv *d = drv_new(root("roots/pcp-blkdev007-20fields-zram"), &vms_source_diskstats);
	assert_int_equal(drv_declare(d), 0);
	for (unsigned f = 0; f < 17; f++) {
		char n[64];
		snprintf(n, sizeof(n), "disk.vda.%s", fields[f]);
		const struct vms_col *c = column(d, n);
		assert_int_equal(d->schema->cols[f].source, 0);
		assert_string_equal(d->schema->cols[f].name + strlen("disk.sr0."), fields[f]); /* sr0 first */
		if (f == 8) { /* in_flight */
			assert_int_equal(c->kind, VMS_KIND_GAUGE);
			assert_int_equal(c->unit, VMS_UNIT_COUNT);
			assert_int_equal(c->wrap_bits, 0);
		} else if (strstr(fields[f], "ticks") || f == 10) {
			assert_int_equal(c->kind, VMS_KIND_COUNTER);
			assert_int_equal(c->unit, VMS_UNIT_MS);
			assert_int_equal(c->wrap_bits, 32); /* printed as %u */
		} else if (strstr(fields[f], "sectors")) {
			assert_int_equal(c->kind, VMS_KIND_COUNTER);
			assert_int_equal(c->unit, VMS_UNIT_SECTORS);
			assert_int_equal(c->wrap_bits, 64);
		} else {
			assert_int_equal(c->kind, VMS_KIND_COUNTER);
			assert_int_equal(c->unit, VMS_UNIT_COUNT);
			assert_int_equal(c->wrap_bits, 64);
		}
	}
	assert_int_equal(d->schema->ncols, 11 * 17 - 2 * 17); /* 11 lines, vda1 vda2 not */
	drv_close(d);

	/* 11 and 15 fields in one file; 4-field partitions */
	d = drv_new(root("roots/procfs-mixed-fieldcounts"), &vms_source_diskstats);
	assert_int_equal(drv_declare(d), 0);
	assert_true(vms_schema_find(d->schema, "disk.sda.time_in_queue") >= 0);
	assert_int_equal(vms_schema_find(d->schema, "disk.sda.dc_ios"), -ENOENT);
	assert_true(vms_schema_find(d->schema, "disk.sdb.dc_ticks") >= 0);
	assert_int_equal(vms_schema_find(d->schema, "disk.sdb.fl_ios"), -ENOENT);
	assert_true(vms_schema_find(d->schema, "disk.sdc.fl_ticks") >= 0);
	assert_int_equal(drv_sample(d), 0);
	/* procfs: sdc FlushRequestsCompleted = 127, TimeSpentFlushing = 182 */
	assert_int_equal(val(d, "disk.sdc.fl_ios"), 127);
	assert_int_equal(val(d, "disk.sdc.fl_ticks"), 182);
	/* node_exporter: sdb discarded_sectors 1.925173784e+09 */
	assert_int_equal(val(d, "disk.sdb.dc_sectors"), 1925173784);
	drv_close(d);

	d = drv_new(root("roots/lkml-2.5.70-short-partitions-inflight-wrap"), &vms_source_diskstats);
	d->sconf.partitions = true;
	assert_int_equal(drv_declare(d), 0);
	assert_int_equal(d->schema->ncols, 11 + 4 + 4 + 11);
	assert_string_equal(d->schema->cols[11].name, "disk.hda1.rd_ios");
	assert_string_equal(d->schema->cols[12].name, "disk.hda1.rd_sectors");
	assert_string_equal(d->schema->cols[13].name, "disk.hda1.wr_ios");
	assert_string_equal(d->schema->cols[14].name, "disk.hda1.wr_sectors");
	assert_int_equal(drv_sample(d), 0);
	/* "'hda1 4 8 1 2'", "in-flight = 4294967234" */
	assert_int_equal(d->slots[11], 4);
	assert_int_equal(d->slots[12], 8);
	assert_int_equal(d->slots[13], 1);
	assert_int_equal(d->slots[14], 2);
	assert_int_equal(val(d, "disk.hda.in_flight"), 4294967234u);
	drv_close(d);

	/* a 4-field line is a partition even without its disk in the file */
	char *dir = tmpdir_make();
	const char *four = "   3     0 hdx 1 2 3 4 5 6 7 8 9 10 11\n   3    65 hdq7 4 8 1 2\n";
	put(dir, four, strlen(four));
	d = drv_new(dir, &vms_source_diskstats);
	assert_int_equal(drv_declare(d), 0);
	assert_int_equal(d->schema->ncols, 11);
	assert_int_equal(vms_schema_find(d->schema, "disk.hdq7.rd_ios"), -ENOENT);
	drv_close(d);
	tmpdir_free(dir);

	/* '/' in a name */
	d = drv_new(root("roots/pcp-blkdev002-cciss-c12d11"), &vms_source_diskstats);
	assert_int_equal(drv_declare(d), 0);
	assert_int_equal(drv_sample(d), 0);
	/* PCP disk.dev cciss/c12d11: 545 20 512544 ... inflight 1 */
	assert_int_equal(val(d, "disk.cciss/c12d11.rd_ios"), 545);
	assert_int_equal(val(d, "disk.cciss/c12d11.in_flight"), 1);
	drv_close(d);
}

/* ---- configuration ---------------------------------------------------------- */

static void test_globs(void **state)
{
	(void)state;
	char got[4096];
	/* the configuration's defaults: whole disks without ram* and loop* */
	struct drv *d = drv_new(root("roots/procfs-mixed-fieldcounts"), &vms_source_diskstats);
	vms_globs_add(&d->sconf.exclude, "ram*");
	vms_globs_add(&d->sconf.exclude, "loop*");
	assert_int_equal(drv_declare(d), 0);
	devices(d, got, sizeof(got));
	assert_string_equal(got, "sda dm-0 dm-1 dm-2 dm-3 dm-4 dm-5 mmcblk0 fd0 vda sr0 nvme0n1 sdb sdc");
	for (int i = 0; i < 3; i++) {
		assert_int_equal(drv_sample(d), 0);
		assert_int_equal(d->parse_errors, 0);
		check_fixture(d, "procfs-mixed-fieldcounts");
	}
	drv_close(d);

	/* include sd*, partitions on, exclude sda4 and *2 */
	d = drv_new(root("roots/procfs-mixed-fieldcounts"), &vms_source_diskstats);
	d->sconf.partitions = true;
	vms_globs_add(&d->sconf.include, "sd*");
	vms_globs_add(&d->sconf.exclude, "sda4");
	vms_globs_add(&d->sconf.exclude, "*2");
	assert_int_equal(drv_declare(d), 0);
	devices(d, got, sizeof(got));
	assert_string_equal(got, "sda sda1 sda3 sdb sdb1 sdc sdc1");
	assert_int_equal(drv_sample(d), 0);
	check_fixture(d, "procfs-mixed-fieldcounts");
	drv_close(d);

	/* nothing selected: no columns, not an error */
	d = drv_new(root("roots/procfs-mixed-fieldcounts"), &vms_source_diskstats);
	vms_globs_add(&d->sconf.include, "xvd*");
	assert_int_equal(drv_declare(d), 0);
	assert_int_equal(d->schema->ncols, 0);
	assert_int_equal(drv_sample(d), 0);
	drv_close(d);
}

/* ---- changes between samples ---------------------------------------------- */


/* A fixture with lines edited: each edit replaces the line whose name
 * (3rd token) is `name` by `with` ("" removes it); name NULL appends. */
struct edit {
	const char *name, *with;
};

static char *edited(const char *fixture, const struct edit *e, unsigned n, size_t *len)
{
	size_t flen;
	char *b = read_disk(fixture, &flen);
	char *out = malloc(flen + 4096);
	size_t o = 0;
	for (char *ln = b; ln < b + flen;) {
		char *nl = memchr(ln, '\n', (size_t)(b + flen - ln));
		size_t l = nl ? (size_t)(nl - ln) + 1 : (size_t)(b + flen - ln);
		char nm[128];
		assert_int_equal(sscanf(ln, "%*u %*u %127s", nm), 1);
		bool done = false;
		for (unsigned i = 0; i < n && !done; i++) {
			if (e[i].name && strcmp(e[i].name, nm) == 0) {
				o += (size_t)sprintf(out + o, "%s", e[i].with);
				done = true;
			}
		}
		if (!done) {
			memcpy(out + o, ln, l);
			o += l;
		}
		ln += l;
	}
	for (unsigned i = 0; i < n; i++)
		if (!e[i].name)
			o += (size_t)sprintf(out + o, "%s", e[i].with);
	free(b);
	*len = o;
	return out;
}

static void put_edited(const char *dir, const char *fixture, const struct edit *e, unsigned n)
{
	size_t len;
	char *s = edited(fixture, e, n, &len);
	put(dir, s, len);
	free(s);
}

static void test_damaged_and_changed(void **state)
{
	(void)state;
	static const struct {
		const char *fixture;
		struct edit e[2];
		int ret;
		uint32_t errors;
		const char *none; /* columns "disk.<none>." must be VMS_NONE */
	} cases[] = {
		/* a bad number: sda missing this tick, everything else kept */
		{"pcp-blkdev006-nbd", {{"sda", "   8       0 sda 2459644 5323 93377586 72681x16 8130708 8627863 69995546 6318632 0 4568324 13586540\n"}},
		 0, 1, "sda"},
		/* a 15-field line cut to 11: a valid count, not the declared one */
		{"pcp-cgroups004-18fields-over-2e32", {{"sda", "   8       0 sda 27523831 1295805 586854814 17424054 568885910 10599894 25998432284 785424271 0 26860770 591648282\n"}},
		 0, 1, "sda"},
		/* cut to 3 numbers */
		{"pcp-blkdev006-nbd", {{"nbd11", "  43     176 nbd11 32634 1040 7868930\n"}}, 0, 1, "nbd11"},
		/* a damaged line of a device that is not sampled is not even read */
		{"pcp-blkdev006-nbd", {{"loop3", "   7       3 loop3 0 0 x\n"}}, 0, 0, NULL},
		/* the same device with another minor: it is still that device */
		{"pcp-blkdev006-nbd", {{"loop0", "   7      99 loop0 0 0 0 0 0 0 0 0 0 0 0\n"},
				       {"sdb", "   8      99 sdb 14013162 71693 7072386 35660252 90650281 59040528 56882504 94780180 0 26902588 55891420\n"}},
		 0, 0, NULL},
		/* gone without a trace: a sampled device, and one that is not */
		{"pcp-blkdev006-nbd", {{"sdb", ""}}, VMS_RESCHEMA, 0, NULL},
		{"pcp-blkdev006-nbd", {{"loop3", ""}}, VMS_RESCHEMA, 0, NULL},
		/* one damaged line cannot explain two missing devices */
		{"pcp-blkdev006-nbd", {{"sda", "   8 0 sda x\n"}, {"sdb", ""}}, VMS_RESCHEMA, 0, NULL},
		/* new devices, sampled or not */
		{"pcp-blkdev006-nbd", {{NULL, "   8      32 sdc 1 2 3 4 5 6 7 8 9 10 11\n"}}, VMS_RESCHEMA, 0, NULL},
		{"pcp-blkdev006-nbd", {{NULL, "   7       8 loop8 0 0 0 0 0 0 0 0 0 0 0\n"}}, VMS_RESCHEMA, 0, NULL},
		/* a new name that starts with a device's "major minor name" */
		{"pcp-blkdev006-nbd", {{"loop0", "   7       0 loop0x 0 0 0 0 0 0 0 0 0 0 0\n"}}, VMS_RESCHEMA, 0, NULL},
		/* one more line of a device already read: damaged, the first counts */
		{"pcp-blkdev006-nbd", {{"sdb", "   8      16 sdb 14013162 71693 7072386 35660252 90650281 59040528 56882504 94780180 0 26902588 55891420\n   8      16 sdb 1 2 3 4 5 6 7 8 9 10 11\n"}},
		 0, 1, NULL},
		{"pcp-blkdev006-nbd", {{"loop1", "   7       1 loop1 x\n   7       1 loop1 0 0 0 0 0 0 0 0 0 0 0\n"}},
		 0, 1, NULL},
		/* a damaged line for a new device is only damaged */
		{"pcp-blkdev006-nbd", {{NULL, "   8      32 sdc 1 2 3\n"}}, 0, 1, NULL},
	};
	char *dir = tmpdir_make();
	for (unsigned i = 0; i < VMS_ARRAY_SIZE(cases); i++) {
		put_edited(dir, cases[i].fixture, NULL, 0);
		struct drv *d = drv_new(dir, &vms_source_diskstats);
		vms_globs_add(&d->sconf.exclude, "ram*");
		vms_globs_add(&d->sconf.exclude, "loop*");
		assert_int_equal(drv_declare(d), 0);
		assert_int_equal(drv_sample(d), 0);
		unsigned ne = cases[i].e[1].with ? 2 : 1;
		put_edited(dir, cases[i].fixture, cases[i].e, ne);
		/* (a failed sample: a new declaration settles it) */
		unsigned none = drv_case_check(d, i, cases[i].ret, cases[i].errors, ref_value, cases[i].fixture,
					       "diskstats", "disk", cases[i].none);
		if (cases[i].ret == 0)
			assert_true(cases[i].none ? none >= 11 : none == 0);
		drv_close(d);
	}
	tmpdir_free(dir);
}

/* A device name longer than a file name (NAME_MAX: no /sys/block entry
 * can have it) used to stop the start ("File name too long" from the
 * column name); now that line is skipped and counted at every sample, and
 * the other devices are sampled as the fixture says. */
static void test_name_too_long(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	size_t n;
	char *orig = read_disk("pcp-blkdev001-partitions", &n);
	char longname[600];
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	char *text = malloc(n + sizeof(longname) + 64);
	int k = snprintf(text, n + sizeof(longname) + 64, "   8      99 %s 1 2 3 4 5 6 7 8 9 10 11\n", longname);
	memcpy(text + k, orig, n);
	put(dir, text, (size_t)k + n);
	struct drv *d = drv_new(dir, &vms_source_diskstats);
	assert_int_equal(drv_declare(d), 0);
	for (int round = 0; round < 2; round++) {
		assert_int_equal(drv_sample(d), 0);
		assert_int_equal(d->parse_errors, 1);
		assert_int_equal(drv_check_none(d, ref_value, orig, n, NULL), 0);
		for (uint32_t c = 0; c < d->schema->ncols; c++)
			assert_null(strstr(d->schema->cols[c].name, "xxxx"));
	}
	assert_true(col(d, "disk.sda.rd_ios") >= 0);
	drv_close(d);
	free(text);
	free(orig);
	tmpdir_free(dir);
}

static void test_reordered_and_fixed(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	/* all lines in reverse order: same devices, found by name */
	size_t len;
	char *b = read_disk("procfs-mixed-fieldcounts", &len);
	put(dir, b, len);
	struct drv *d = drv_new(dir, &vms_source_diskstats);
	d->sconf.partitions = true;
	assert_int_equal(drv_declare(d), 0);
	char *rev = malloc(len + 1);
	size_t o = 0;
	for (const char *end = b + len; end > b;) {
		const char *s = end - 1;
		while (s > b && s[-1] != '\n')
			s--;
		memcpy(rev + o, s, (size_t)(end - s));
		o += (size_t)(end - s);
		end = s;
	}
	assert_int_equal(o, len);
	put(dir, rev, len);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(drv_sample(d), 0);
		assert_int_equal(d->parse_errors, 0);
		check_all(d, b, len);
	}
	free(rev);
	free(b);
	drv_close(d);

	/* sysstat's damaged sds line, then a whole one: a new device */
	b = read_disk("sysstat-root1-discard-short-line", &len);
	put(dir, b, len);
	d = drv_new(dir, &vms_source_diskstats);
	assert_int_equal(drv_declare(d), 0);
	assert_int_equal(vms_schema_find(d->schema, "disk.sds.rd_ios"), -ENOENT);
	assert_int_equal(drv_sample(d), 0);
	assert_int_equal(d->parse_errors, 1);
	check_all(d, b, len);
	const struct edit fix = {"sds", "  65      32 sds 386 416 8554 100 727 820 8746 3902 0 762 7902 0 0 0 0\n"};
	put_edited(dir, "sysstat-root1-discard-short-line", &fix, 1);
	assert_int_equal(drv_sample(d), VMS_RESCHEMA);
	assert_int_equal(drv_declare(d), 0);
	assert_int_equal(drv_sample(d), 0);
	assert_int_equal(d->parse_errors, 0);
	/* iostat: sds kB_read 4277, kB_wrtn 4373 (kB = sectors / 2) */
	assert_int_equal(val(d, "disk.sds.rd_sectors") / 2, 4277);
	assert_int_equal(val(d, "disk.sds.wr_sectors") / 2, 4373);
	free(b);
	drv_close(d);
	tmpdir_free(dir);
}

static void test_no_allocation(void **state)
{
	(void)state;
	static const char *const roots[] = {"roots/procfs-mixed-fieldcounts", "roots/pcp-bigsys-hpbl920-107dev",
					    "roots/sysstat-root1-discard-short-line"};
	for (unsigned k = 0; k < VMS_ARRAY_SIZE(roots); k++) {
		struct drv *d = drv_new(root(roots[k]), &vms_source_diskstats);
		vms_globs_add(&d->sconf.exclude, "ram*");
		vms_globs_add(&d->sconf.exclude, "loop*");
		assert_int_equal(drv_declare(d), 0);
		uint32_t errs;
		assert_int_equal(drv_sample_allocs(d, 1000, false, &errs), 0);
		assert_int_equal(errs, k == 2 ? 1000 : 0); /* sds */
		drv_close(d);
	}
}

static void test_open_close(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	drv_open_missing(dir, &vms_source_diskstats);
	/* an empty file: no devices */
	drv_put_expect(dir, "diskstats", &vms_source_diskstats, "", 0, false, 0, NULL);
	/* no sconf at all: every device */
	size_t len;
	char *b = read_disk("pcp-blkdev004-md", &len);
	drv_put_expect(dir, "diskstats", &vms_source_diskstats, b, len, true, 5 * 11, ref_value);
	free(b);
	tmpdir_free(dir);
}

VMS_TEST_MAIN(NULL, NULL,
	test_pcp_classification, test_other_classification, test_columns, test_globs,
	test_damaged_and_changed, test_name_too_long, test_reordered_and_fixed, test_no_allocation,
	test_open_close)

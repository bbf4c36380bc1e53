/* SPDX-License-Identifier: MIT */
/* test_source_schedstat.c - the schedstat source driven through its ops
 * against proc roots, as the loop drives it.
 *
 * roots/procfs-schedstat-v15 (the real file of prometheus/procfs, its
 * provenance in tests/fixtures/PROVENANCE.md) gives the values of
 * ../shared/fixtures/proc/EXPECTED.md: cpu0 2045936778163039 /
 * 343796328169361 / 4767485306, cpu1 1904686152592476 / 364107263788241 /
 * 5145567945 (running ns, waiting ns, timeslices).  Then: a root without
 * the file (a kernel without CONFIG_SCHEDSTATS, like this host), an
 * unknown version, damaged and repeated lines, CPUs on- and offline, and
 * that sample() never allocates (the allocator is wrapped); and the
 * binary, enabled on a root without the file: one line, the other sources
 * sampled. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#include "allocwrap.h"
#include "runbin.h"
#include "source.h"
#include "srcdrv.h"

extern const struct vms_source_ops vms_source_schedstat;

#define FIX "procfs-schedstat-v15"

static void want_values(const struct drv *d)
{
	assert_int_equal(val(d, "sched.0.time"), 2045936778163039ull);
	assert_int_equal(val(d, "sched.0.delay"), 343796328169361ull);
	assert_int_equal(val(d, "sched.0.slices"), 4767485306ull);
	assert_int_equal(val(d, "sched.1.time"), 1904686152592476ull);
	assert_int_equal(val(d, "sched.1.delay"), 364107263788241ull);
	assert_int_equal(val(d, "sched.1.slices"), 5145567945ull);
}

static void test_fixture(void **state)
{
	(void)state;
	struct drv *d = drv_new(root("roots/" FIX), &vms_source_schedstat);
	assert_int_equal(drv_declare(d), 0);
	assert_int_equal(d->schema->ncols, 6);
	static const char *const names[] = {"sched.0.time", "sched.0.delay", "sched.0.slices",
					    "sched.1.time", "sched.1.delay", "sched.1.slices"};
	for (unsigned i = 0; i < 6; i++) {
		const struct vms_col *c = &d->schema->cols[i];
		assert_string_equal(c->name, names[i]);
		assert_int_equal(c->kind, VMS_KIND_COUNTER);
		assert_int_equal(c->unit, i % 3 == 2 ? VMS_UNIT_COUNT : VMS_UNIT_NS);
	}
	assert_int_equal(drv_sample(d), 0);
	assert_int_equal(d->parse_errors, 0);
	want_values(d);
	drv_close(d);
}

static void test_missing(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	drv_open_missing(dir, &vms_source_schedstat);
	/* a version line and no CPU: nothing to declare */
	drv_put(dir, "schedstat", "version 15\ntimestamp 1\n", 24);
	struct drv *d = drv_new(dir, &vms_source_schedstat);
	assert_int_equal(drv_declare(d), -ENODATA);
	drv_close(d);
	tmpdir_free(dir);
}

static char *fixture_text(size_t *len)
{
	return fixture_root_read(FIX, "schedstat", len);
}

/* The fixture with its first occurrence of `from` replaced by `to`. */
static size_t edited(char *out, size_t cap, const char *from, const char *to)
{
	size_t len;
	char *b = fixture_text(&len);
	char *at = strstr(b, from);
	assert_non_null(at);
	int n = snprintf(out, cap, "%.*s%s%s", (int)(at - b), b, to, at + strlen(from));
	assert_true(n > 0 && (size_t)n < cap);
	free(b);
	return (size_t)n;
}

/* After a good declaration, the file changes: what the sample says. */
static void test_changes(void **state)
{
	(void)state;
	static const struct {
		const char *from, *to;
		int ret;
		uint32_t errors;
		const char *none; /* "0.", "1.": that CPU's columns missing; "*": all */
	} cases[] = {
		/* an unknown version: nothing believed, counted */
		{"version 15", "version 18", 0, 1, "*"},
		{"version 15", "version x", 0, 1, "*"},
		/* the same file under version 16 and 17: the same cpu lines */
		{"version 15", "version 17", 0, 0, NULL},
		/* a damaged cpu line: counted, its CPU missing, the other read */
		{"cpu1 518377256", "cpu1 x", 0, 1, "1."},
		{" 5145567945\n", "\n", 0, 1, "1."},
		{"cpu0 498494191", "cpu0 498494191 7", 0, 1, "0."},
		/* an unknown line */
		{"timestamp", "garbage", 0, 1, NULL},
		/* a CPU twice: the first kept, the second counted */
		{"cpu1 518377256", "cpu0 1 2 3 4 5 6 7 8 9\ncpu1 518377256", 0, 1, NULL},
		/* a CPU came online, went offline, another in its place */
		{"cpu1 518377256", "cpu2 1 2 3 4 5 6 7 8 9\ncpu1 518377256", VMS_RESCHEMA, 0, NULL},
		{"cpu1 518377256", "xcpu1 518377256", 0, 1, "1."},
		{"cpu1 ", "cpu5 ", VMS_RESCHEMA, 0, NULL},
	};
	char *dir = tmpdir_make();
	for (unsigned i = 0; i < VMS_ARRAY_SIZE(cases); i++) {
		size_t len;
		char *b = fixture_text(&len);
		drv_put(dir, "schedstat", b, len);
		free(b);
		struct drv *d = drv_new(dir, &vms_source_schedstat);
		assert_int_equal(drv_declare(d), 0);
		char text[2048];
		size_t n = edited(text, sizeof(text), cases[i].from, cases[i].to);
		drv_put(dir, "schedstat", text, n);
		if (drv_sample_case(d, i, cases[i].ret, cases[i].errors)) {
			assert_int_equal(d->schema->ncols, 6);
			for (uint32_t c = 0; c < 6; c++) {
				const char *name = d->schema->cols[c].name;
				const char *none = cases[i].none;
				bool missing = none && (strcmp(none, "*") == 0 || strncmp(name + 6, none, 2) == 0);
				if (missing != (d->slots[c] == VMS_NONE))
					fail_msg("case %u: %s %llu", i, name, (unsigned long long)d->slots[c]);
			}
			if (!cases[i].none)
				want_values(d);
			else if (strcmp(cases[i].none, "1.") == 0)
				assert_int_equal(val(d, "sched.0.delay"), 343796328169361ull);
			else if (strcmp(cases[i].none, "0.") == 0)
				assert_int_equal(val(d, "sched.1.delay"), 364107263788241ull);
		} else {
			/* the new schema has the CPUs the file has */
			assert_int_equal(drv_declare(d), 0);
			assert_int_equal(drv_sample(d), 0);
			assert_int_equal(d->parse_errors, 0);
			assert_true(col(d, "sched.1.delay") >= 0 || col(d, "sched.5.delay") >= 0);
			assert_int_equal(val(d, "sched.0.delay"), 343796328169361ull);
		}
		drv_close(d);
	}

	/* declared under an unknown version: no column, a parse error each
	 * tick; the known version back: a new schema with the columns */
	size_t n;
	char text[2048];
	n = edited(text, sizeof(text), "version 15", "version 99");
	drv_put(dir, "schedstat", text, n);
	struct drv *d = drv_new(dir, &vms_source_schedstat);
	assert_int_equal(drv_declare(d), 0);
	assert_int_equal(d->schema->ncols, 0);
	assert_int_equal(drv_sample(d), 0);
	assert_int_equal(d->parse_errors, 1);
	char *b = fixture_text(&n);
	drv_put(dir, "schedstat", b, n);
	free(b);
	assert_int_equal(drv_sample(d), VMS_RESCHEMA);
	assert_int_equal(drv_declare(d), 0);
	assert_int_equal(drv_sample(d), 0);
	want_values(d);
	drv_close(d);
	tmpdir_free(dir);
}

static void test_no_allocation(void **state)
{
	(void)state;
	struct drv *d = drv_new(root("roots/" FIX), &vms_source_schedstat);
	assert_int_equal(drv_declare(d), 0);
	uint32_t errs;
	assert_int_equal(drv_sample_allocs(d, 1000, false, &errs), 0);
	assert_int_equal(errs, 0);
	drv_close(d);
	/* the wrap works: declare does allocate */
	d = drv_new(root("roots/" FIX), &vms_source_schedstat);
	assert_true(drv_declare_allocs(d) > 0);
	drv_close(d);
}

/* This host's file, where the kernel has it: every CPU's line read. */
static void test_live(void **state)
{
	(void)state;
	if (access("/proc/schedstat", R_OK) != 0)
		vms_skip(NULL, "no /proc/schedstat here (a kernel without CONFIG_SCHEDSTATS)");
	struct drv *d = drv_new("/proc", &vms_source_schedstat);
	assert_int_equal(drv_declare(d), 0);
	assert_int_equal(drv_sample(d), 0);
	assert_int_equal(d->parse_errors, 0);
	assert_true(val(d, "sched.0.time") > 0);
	drv_close(d);
}

/* The binary with the source enabled on a proc root without the file
 * (a kernel without CONFIG_SCHEDSTATS): exactly one line names it, every
 * frame is written with the other sources' columns (procstat's, from the
 * root's stat) and none of it.  And on the fixture root, its columns. */
static void test_binary(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	char cfg[512], out[512];
	snprintf(cfg, sizeof(cfg), "%s/c.yaml", dir);
	snprintf(out, sizeof(out), "%s/out.csv", dir);
	FILE *f = fopen(cfg, "w");
	assert_non_null(f);
	fputs("sources:\n  schedstat: {enabled: true}\n", f);
	fclose(f);
	struct run_result r;
	const char *const args[] = {"-c", cfg, "--proc-root", root("roots/node_exporter-8cpu-guest"), "-n", "3",
				    "-i", "100ms", "-o", out, NULL};
	run_bin(&r, 0, args);
	assert_int_equal(r.status, 0);
	unsigned n = 0;
	for (const char *p = r.err; (p = strstr(p, "schedstat")); p++)
		n++;
	if (n != 1 || !strstr(r.err, "source schedstat unavailable: No such file or directory\n"))
		fail_msg("stderr: %s", r.err);
	size_t len;
	char *csv = read_whole(out, &len);
	assert_non_null(csv);
	assert_int_equal(count_lines(csv), 1 + 3);
	assert_non_null(strstr(csv, ",cpu.0.user,"));
	assert_null(strstr(csv, "sched."));
	free(csv);
	run_result_free(&r);

	const char *const args2[] = {"-c", cfg, "--proc-root", root("roots/" FIX), "-n", "2", "-i", "100ms",
				     "-o", out, NULL};
	unlink(out);
	run_bin(&r, 0, args2);
	assert_int_equal(r.status, 0);
	assert_null(strstr(r.err, "schedstat"));
	csv = read_whole(out, &len);
	assert_non_null(csv);
	assert_non_null(strstr(csv, ",sched.0.time,sched.0.delay,sched.0.slices,sched.1.time,"));
	assert_non_null(strstr(csv, ",2045936778163039,343796328169361,4767485306,1904686152592476,"
				    "364107263788241,5145567945,"));
	free(csv);
	run_result_free(&r);
	tmpdir_free(dir);
}

VMS_TEST_MAIN(NULL, NULL, test_fixture, test_missing, test_changes, test_no_allocation, test_live, test_binary)

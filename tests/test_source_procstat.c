/* SPDX-License-Identifier: MIT */
/* test_source_procstat.c - the procstat source driven through its ops
 * against proc-root directories, as the loop drives it.
 *
 * Every sampled value is checked against an independent reader of the
 * same file (strtok_r + strtoull); percentages against sysstat's mpstat
 * (EXPECTED.md); entity changes against the sysstat root1 -> root2 ->
 * root3 -> root5 series (CPUs going offline and back).  The allocator is
 * wrapped (-Wl,--wrap) to prove that sample() never allocates. */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#include "allocwrap.h"
#include "source.h"
#include "srcdrv.h"

extern const struct vms_source_ops vms_source_procstat;

static struct drv *drv_stat(const char *dir, bool per_cpu)
{
	const struct vms_source_conf sc = {.per_cpu = per_cpu};
	return drv_new_conf(dir, &vms_source_procstat, &sc);
}

/* ---- an independent reader ------------------------------------------------ */

/* The value a column should have, read from the file with strtok/strtoull:
 * cpu.all.F / cpu.N.F -> the F-th number of the "cpu"/"cpuN" line;
 * stat.K -> the first number of the "K" line. */
static bool ref_value(const char *file, size_t len, const char *colname, uint64_t *out)
{
	static const char *const fields[] = {"user", "nice", "system", "idle", "iowait",
					     "irq", "softirq", "steal", "guest", "guest_nice"};
	char key[80], ent[64], field[64];
	int fi = 0;
	if (sscanf(colname, "cpu.%63[^.].%63s", ent, field) == 2) {
		snprintf(key, sizeof(key), "cpu%s", strcmp(ent, "all") ? ent : "");
		fi = -1;
		for (int i = 0; i < 10; i++)
			if (strcmp(field, fields[i]) == 0)
				fi = i;
		assert_true(fi >= 0);
	} else {
		assert_int_equal(sscanf(colname, "stat.%63s", key), 1);
	}
	char *copy = strndup(file, len), *save = NULL;
	bool found = false;
	for (char *ln = strtok_r(copy, "\n", &save); ln && !found; ln = strtok_r(NULL, "\n", &save)) {
		char *s2 = NULL;
		char *k = strtok_r(ln, " ", &s2);
		if (!k || strcmp(k, key))
			continue;
		char *t = NULL;
		for (int i = 0; i <= fi; i++)
			t = strtok_r(NULL, " ", &s2);
		if (t) {
			*out = strtoull(t, NULL, 10);
			found = true;
		}
	}
	free(copy);
	return found;
}

/* Every column equals the reference reading of `file`. */
#define check_all(d, file, len) drv_check_all(d, ref_value, file, len)
#define check_fixture(d, name) drv_check_fixture(d, ref_value, name, "stat")
#define read_stat(name, len) fixture_root_read(name, "stat", len)

/* ---- tests ------------------------------------------------------------------- */

static void test_root1_columns_and_values(void **state)
{
	(void)state;
	struct drv *d = drv_stat(root("roots/sysstat-root1-9cpu"), true);
	assert_int_equal(drv_declare(d), 0);
	/* 10 cpu fields for cpu and cpu0..8, then 6 keyed lines */
	assert_int_equal(d->schema->ncols, 10 + 9 * 10 + 6);
	assert_string_equal(d->schema->cols[0].name, "cpu.all.user");
	assert_string_equal(d->schema->cols[9].name, "cpu.all.guest_nice");
	assert_string_equal(d->schema->cols[10].name, "cpu.0.user");
	assert_string_equal(d->schema->cols[99].name, "cpu.8.guest_nice");
	static const char *const keys[] = {"stat.ctxt", "stat.processes", "stat.intr",
					   "stat.softirq", "stat.procs_running", "stat.procs_blocked"};
	for (unsigned k = 0; k < 6; k++)
		assert_string_equal(d->schema->cols[100 + k].name, keys[k]);
	const struct vms_col *c = &d->schema->cols[col(d, "cpu.3.steal")];
	assert_int_equal(c->kind, VMS_KIND_COUNTER);
	assert_int_equal(c->unit, VMS_UNIT_TICKS);
	assert_int_equal(c->wrap_bits, 64);
	c = &d->schema->cols[col(d, "stat.intr")];
	assert_int_equal(c->kind, VMS_KIND_COUNTER);
	assert_int_equal(c->wrap_bits, 64);
	c = &d->schema->cols[col(d, "stat.procs_blocked")];
	assert_int_equal(c->kind, VMS_KIND_GAUGE);
	assert_int_equal(c->unit, VMS_UNIT_TASKS);

	assert_int_equal(drv_sample(d), 0);
	assert_int_equal(d->parse_errors, 0);
	size_t len;
	char *file = read_stat("sysstat-root1-9cpu", &len);
	check_all(d, file, len);
	free(file);

	/* mpstat's "all" row from the sampled columns (EXPECTED.md section 3):
	 * %usr 1.49 %nice 39.91 %sys 0.83 %idle 56.00 */
	static const char *const f8[] = {"user", "nice", "system", "idle", "iowait",
					 "irq", "softirq", "steal"};
	double tot = 0;
	char n[64];
	for (unsigned i = 0; i < 8; i++) {
		snprintf(n, sizeof(n), "cpu.all.%s", f8[i]);
		tot += (double)val(d, n);
	}
	assert_int_equal(llround(val(d, "cpu.all.user") * 1e4 / tot), 149);
	assert_int_equal(llround(val(d, "cpu.all.nice") * 1e4 / tot), 3991);
	assert_int_equal(llround(val(d, "cpu.all.system") * 1e4 / tot), 83);
	assert_int_equal(llround(val(d, "cpu.all.idle") * 1e4 / tot), 5600);
	/* and cpu8: %idle 99.19 */
	tot = 0;
	for (unsigned i = 0; i < 8; i++) {
		snprintf(n, sizeof(n), "cpu.8.%s", f8[i]);
		tot += (double)val(d, n);
	}
	assert_int_equal(llround(val(d, "cpu.8.idle") * 1e4 / tot), 9919);
	drv_close(d);
}

/* Write `data` over the stat file of a temp root (in place: the source
 * keeps the file open, as it keeps /proc/stat open). */
#define put(dir, data, len) drv_put(dir, "stat", data, len)

static void put_fixture(const char *dir, const char *name)
{
	size_t len;
	char *b = read_stat(name, &len);
	put(dir, b, len);
	free(b);
}

static void test_offline_series(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	put_fixture(dir, "sysstat-root1-9cpu");
	struct drv *d = drv_stat(dir, true);
	assert_int_equal(drv_declare(d), 0);
	assert_int_equal(d->schema->ncols, 106);
	assert_int_equal(drv_sample(d), 0);
	check_fixture(d, "sysstat-root1-9cpu");

	/* root2: cpu8 went offline -> the set changed */
	put_fixture(dir, "sysstat-root2-cpu8-offline");
	assert_int_equal(drv_sample(d), VMS_RESCHEMA);
	assert_int_equal(drv_declare(d), 0);
	assert_int_equal(d->schema->ncols, 10 + 8 * 10 + 6);
	assert_int_equal(col(d, "cpu.8.user"), -ENOENT);
	assert_int_equal(drv_sample(d), 0);
	assert_int_equal(d->parse_errors, 0);
	check_fixture(d, "sysstat-root2-cpu8-offline");
	/* the same set again: no new schema */
	assert_int_equal(drv_sample(d), 0);

	/* root3: cpu6 offline too; cpu7 stays cpu7 */
	put_fixture(dir, "sysstat-root3-cpu6-cpu8-offline");
	assert_int_equal(drv_sample(d), VMS_RESCHEMA);
	assert_int_equal(drv_declare(d), 0);
	assert_int_equal(d->schema->ncols, 10 + 7 * 10 + 6);
	assert_int_equal(col(d, "cpu.6.user"), -ENOENT);
	assert_true(col(d, "cpu.7.user") >= 0);
	assert_int_equal(drv_sample(d), 0);
	check_fixture(d, "sysstat-root3-cpu6-cpu8-offline");

	/* root5: all back; steal/guest/guest_nice on cpu8 "(100 150 25)" */
	put_fixture(dir, "sysstat-root5-guest-steal");
	assert_int_equal(drv_sample(d), VMS_RESCHEMA);
	assert_int_equal(drv_declare(d), 0);
	assert_int_equal(d->schema->ncols, 106);
	assert_int_equal(drv_sample(d), 0);
	check_fixture(d, "sysstat-root5-guest-steal");
	assert_int_equal(val(d, "cpu.8.steal"), 100);
	assert_int_equal(val(d, "cpu.8.guest"), 150);
	assert_int_equal(val(d, "cpu.8.guest_nice"), 25);
	assert_int_equal(val(d, "cpu.all.steal"), 100);

	drv_close(d);
	tmpdir_free(dir);
}

static void test_not_per_cpu(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	put_fixture(dir, "sysstat-root1-9cpu");
	struct drv *d = drv_stat(dir, false);
	assert_int_equal(drv_declare(d), 0);
	assert_int_equal(d->schema->ncols, 10 + 6);
	assert_int_equal(col(d, "cpu.0.user"), -ENOENT);
	assert_int_equal(drv_sample(d), 0);
	check_fixture(d, "sysstat-root1-9cpu");
	/* CPUs going offline change nothing without per-CPU columns */
	put_fixture(dir, "sysstat-root3-cpu6-cpu8-offline");
	assert_int_equal(drv_sample(d), 0);
	check_fixture(d, "sysstat-root3-cpu6-cpu8-offline");
	/* and their lines are not even parsed: a damaged cpuN line is not seen;
	 * nor is a CPU line with a leading blank, which the skip does not catch
	 * (found by fuzz_sources: it asked for a new schema at every sample) */
	const char *s = "cpu  1 2 3 4 5 6 7 8 9 10\ncpu0 damaged\n cpu1 1 2 3 4\nctxt 1\nprocesses 2\n"
			"intr 3 0 0\nprocs_running 4\nprocs_blocked 5\nsoftirq 6 0 0\n";
	put(dir, s, strlen(s));
	assert_int_equal(drv_sample(d), 0);
	assert_int_equal(d->parse_errors, 0);
	check_all(d, s, strlen(s));
	drv_close(d);
	tmpdir_free(dir);
}

static void test_old_kernels(void **state)
{
	(void)state;
	/* 7 fields: no steal, guest, guest_nice columns at all */
	struct drv *d = drv_stat(root("roots/sysstat-root6-7fields-old-kernel"), true);
	assert_int_equal(drv_declare(d), 0);
	assert_int_equal(d->schema->ncols, 7 + 10 * 7 + 6);
	assert_int_equal(col(d, "cpu.all.steal"), -ENOENT);
	assert_int_equal(col(d, "cpu.all.guest"), -ENOENT);
	assert_int_equal(col(d, "cpu.9.guest_nice"), -ENOENT);
	assert_true(col(d, "cpu.9.softirq") >= 0);
	assert_int_equal(drv_sample(d), 0);
	check_fixture(d, "sysstat-root6-7fields-old-kernel");
	drv_close(d);

	/* 2.6.29: 9 fields (guest, no guest_nice), no softirq line */
	d = drv_stat(root("roots/android-2.6.29-9fields-nosoftirq"), true);
	assert_int_equal(drv_declare(d), 0);
	assert_int_equal(d->schema->ncols, 9 + 9 + 5);
	assert_true(col(d, "cpu.0.guest") >= 0);
	assert_int_equal(col(d, "cpu.0.guest_nice"), -ENOENT);
	assert_int_equal(col(d, "stat.softirq"), -ENOENT);
	assert_int_equal(drv_sample(d), 0);
	check_fixture(d, "android-2.6.29-9fields-nosoftirq");
	drv_close(d);

	/* 9 fields x 480 CPUs */
	d = drv_stat(root("roots/pcp-bigsys-hpbl920-480cpu"), true);
	assert_int_equal(drv_declare(d), 0);
	assert_int_equal(d->schema->ncols, 9 + 480 * 9 + 6);
	assert_int_equal(drv_sample(d), 0);
	check_fixture(d, "pcp-bigsys-hpbl920-480cpu");
	drv_close(d);
}

static void test_race_and_nonl(void **state)
{
	(void)state;
	/* "aggregate user 3700 < cpu0 user 3701": both kept, no complaint */
	struct drv *d = drv_stat(root("roots/metrix-1cpu-vm-agg-lt-cpu0"), true);
	assert_int_equal(drv_declare(d), 0);
	assert_int_equal(drv_sample(d), 0);
	assert_int_equal(d->parse_errors, 0);
	assert_int_equal(val(d, "cpu.all.user"), 3700);
	assert_int_equal(val(d, "cpu.0.user"), 3701);
	drv_close(d);

	/* no trailing newline after the softirq line */
	d = drv_stat(root("roots/gopsutil-issue424-4cpu-guest"), true);
	assert_int_equal(drv_declare(d), 0);
	assert_true(col(d, "stat.softirq") >= 0);
	assert_int_equal(drv_sample(d), 0);
	check_fixture(d, "gopsutil-issue424-4cpu-guest");
	drv_close(d);

	/* > 2^32 */
	d = drv_stat(root("roots/pcp-cgroups004-softirq-over-2e32"), true);
	assert_int_equal(drv_declare(d), 0);
	assert_int_equal(drv_sample(d), 0);
	assert_int_equal(val(d, "stat.softirq"), 9998885674ull);
	check_fixture(d, "pcp-cgroups004-softirq-over-2e32");
	drv_close(d);
}

/* root1 with one line replaced (or removed when `with` is NULL) */
static char *root1_edit(const char *line_prefix, const char *with, size_t *len)
{
	return fixture_edit("sysstat-root1-9cpu", "stat", line_prefix, with, len);
}

static void test_damaged_lines(void **state)
{
	(void)state;
	static const struct {
		const char *prefix, *with;
		int ret;
		const char *none; /* the columns prefix that must be VMS_NONE */
		uint32_t errors;
	} cases[] = {
		/* a bad number: cpu3 missing this tick, everything else kept */
		{"cpu3 ", "cpu3 7806 553715 3681 14x836 5620 4344 1709 0 0 0\n", 0, "cpu.3.", 1},
		/* cut to 5 fields: a valid count, but not the declared one */
		{"cpu3 ", "cpu3 7806 553715 3681 141836 5620\n", 0, "cpu.3.", 1},
		/* cut to 3 fields */
		{"cpu ", "cpu  96005 2578701 53845\n", 0, "cpu.all.", 1},
		{"ctxt", "ctxt 130465866x\n", 0, "stat.ctxt", 1},
		{"procs_blocked", "procs_blocked\n", 0, "stat.procs_blocked", 1},
		/* the same line twice: the second is counted, the first kept */
		{"ctxt", "ctxt 130465866\nctxt 5\n", 0, NULL, 1},
		/* gone without a trace: an entity vanished */
		{"cpu3 ", NULL, VMS_RESCHEMA, NULL, 0},
		{"procs_running", NULL, VMS_RESCHEMA, NULL, 0},
		/* a CPU we have not declared */
		{"cpu8 ", "cpu8 1414 28 1441 711404 2605 264 28 0 0 0\ncpu9 1 2 3 4 5 6 7 8 9 10\n",
		 VMS_RESCHEMA, NULL, 0},
		/* a CPU number nobody has: damaged, not a new entity */
		{"cpu8 ", "cpu8 1414 28 1441 711404 2605 264 28 0 0 0\ncpu70000 1 2 3 4\n", 0, NULL, 1},
		/* a line that was not there at declare time */
		{"btime", "btime 1\nwibble 7\n", 0, NULL, 0},
	};
	char *dir = tmpdir_make();
	for (unsigned i = 0; i < VMS_ARRAY_SIZE(cases); i++) {
		put_fixture(dir, "sysstat-root1-9cpu");
		struct drv *d = drv_stat(dir, true);
		assert_int_equal(drv_declare(d), 0);
		size_t len;
		char *s = root1_edit(cases[i].prefix, cases[i].with, &len);
		put(dir, s, len);
		if (drv_sample_case(d, i, cases[i].ret, cases[i].errors)) {
			size_t n;
			char *orig = read_stat("sysstat-root1-9cpu", &n);
			unsigned none = drv_check_none(d, ref_value, orig, n, cases[i].none);
			if (cases[i].none)
				assert_true(none >= 1);
			free(orig);
		}
		free(s);
		drv_close(d);
	}
	tmpdir_free(dir);
}

static void test_line_appears(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	put_fixture(dir, "android-2.6.29-9fields-nosoftirq");
	struct drv *d = drv_stat(dir, true);
	assert_int_equal(drv_declare(d), 0);
	assert_int_equal(drv_sample(d), 0);
	/* a softirq line shows up: it needs a column */
	size_t len;
	char *b = read_stat("android-2.6.29-9fields-nosoftirq", &len);
	char *s = malloc(len + 64);
	memcpy(s, b, len);
	int n = snprintf(s + len, 64, "softirq 42 1 2 3\n");
	put(dir, s, len + (size_t)n);
	assert_int_equal(drv_sample(d), VMS_RESCHEMA);
	assert_int_equal(drv_declare(d), 0);
	assert_int_equal(drv_sample(d), 0);
	assert_int_equal(val(d, "stat.softirq"), 42);
	free(s);
	free(b);
	drv_close(d);
	tmpdir_free(dir);
}

static void test_no_allocation(void **state)
{
	(void)state;
	static const char *const roots[] = {"roots/procfs-8cpu", "roots/sysstat-root1-9cpu",
					    "roots/pcp-bigsys-hpbl920-480cpu"};
	for (unsigned k = 0; k < VMS_ARRAY_SIZE(roots); k++) {
		struct drv *d = drv_stat(root(roots[k]), true);
		assert_int_equal(drv_declare(d), 0);
		uint32_t errs;
		assert_int_equal(drv_sample_allocs(d, 1000, false, &errs), 0);
		assert_int_equal(errs, 0);
		drv_close(d);
	}
	/* the wrap works: declare does allocate */
	struct drv *d = drv_stat(root("roots/sysstat-root1-9cpu"), true);
	assert_true(drv_declare_allocs(d) > 0);
	drv_close(d);
}

static void test_open_close(void **state)
{
	(void)state;
	/* no stat file: open fails, close still works (half-opened source) */
	char *dir = tmpdir_make();
	drv_open_missing(dir, &vms_source_procstat);
	struct drv *d;
	/* a file with nothing we know: declare says so */
	put(dir, "btime 5\nwibble\n", 15);
	d = drv_stat(dir, true);
	assert_int_equal(drv_declare(d), -ENODATA);
	drv_close(d);
	/* close right after open, without declare */
	put_fixture(dir, "sysstat-root1-9cpu");
	d = drv_stat(dir, true);
	drv_close(d);
	tmpdir_free(dir);
}

VMS_TEST_MAIN(NULL, NULL,
	test_root1_columns_and_values, test_offline_series, test_not_per_cpu, test_old_kernels,
	test_race_and_nonl, test_damaged_lines, test_line_appears, test_no_allocation,
	test_open_close)

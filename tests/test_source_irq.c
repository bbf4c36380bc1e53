/* SPDX-License-Identifier: MIT */
/* test_source_irq.c - the interrupts and softirqs sources driven through
 * their ops against proc roots, as the loop drives them.
 *
 * Every sampled value is checked against an independent reader of the
 * same file (strtok_r + strtoull, summing as sysstat's read_stat_irq
 * does: intr.all.V the sum of line V, intr.N.V the count in CPU N's column,
 * intr.N.sum CPU N's column over the per-CPU lines, intr.all.sum every
 * count; the first line of a vector named twice); entity changes (a CPU offline, a vector new or gone) against
 * edits of the sysstat root1 files; damaged lines; and that sample()
 * never allocates (the allocator is wrapped). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "allocwrap.h"
#include "source.h"
#include "srcdrv.h"

extern const struct vms_source_ops vms_source_interrupts;
extern const struct vms_source_ops vms_source_softirqs;

static struct drv *drv_irq(const char *dir, const struct vms_source_ops *ops, bool per_cpu)
{
	const struct vms_source_conf sc = {.per_cpu = per_cpu};
	return drv_new_conf(dir, ops, &sc);
}

/* ---- an independent reader ------------------------------------------------ */

/* P.E.V with P "intr" or "softirq", E "all" or a CPU number, V a vector
 * name or "sum". */
static bool ref_value(const char *file, size_t len, const char *colname, uint64_t *out)
{
	char ent[32], vec[64];
	const char *dot = strchr(colname, '.');
	assert_non_null(dot);
	assert_int_equal(sscanf(dot + 1, "%31[^.].%63s", ent, vec), 2);
	bool all = strcmp(ent, "all") == 0, sum = strcmp(vec, "sum") == 0;
	long cpu = all ? -1 : strtol(ent, NULL, 10);
	char *copy = strndup(file, len), *save = NULL;
	long cols[1024];
	unsigned ncol = 0;
	uint64_t v = 0;
	bool found = false, header = true;
	for (char *ln = strtok_r(copy, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save)) {
		char *s2 = NULL, *t = strtok_r(ln, " ", &s2);
		if (!t)
			continue;
		if (header) {
			for (; t; t = strtok_r(NULL, " ", &s2))
				cols[ncol++] = strtol(t + 3, NULL, 10);
			header = false;
			continue;
		}
		t[strlen(t) - 1] = '\0'; /* the colon */
		if (!sum && strcmp(t, vec) != 0)
			continue;
		uint64_t row[1024];
		unsigned n = 0;
		while (n < ncol && (t = strtok_r(NULL, " ", &s2))) {
			char *end;
			row[n] = strtoull(t, &end, 10);
			if (*end)
				break;
			n++;
		}
		for (unsigned k = 0; k < n; k++) {
			/* a line that is not per CPU is in no CPU's sum */
			if (all || (cols[k] == cpu && n == ncol)) {
				v += row[k];
				found = true;
			}
		}
		if (!sum)
			break; /* a second line of the vector is not sampled */
	}
	free(copy);
	*out = v;
	return found || sum;
}

#define check_fixture(d, file) drv_check_fixture(d, ref_value, "sysstat-root1-irq", file)

static void put_fixture(const char *dir, const char *file)
{
	size_t len;
	char *b = fixture_root_read("sysstat-root1-irq", file, &len);
	drv_put(dir, file, b, len);
	free(b);
}

/* ---- tests ------------------------------------------------------------------- */

static void test_interrupts_root1(void **state)
{
	(void)state;
	struct drv *d = drv_irq(root("roots/sysstat-root1-irq"), &vms_source_interrupts, false);
	assert_int_equal(drv_declare(d), 0);
	/* the sums (all and 9 CPUs), then the 43 vectors over all CPUs */
	assert_int_equal(d->schema->ncols, 1 + 9 + 43);
	assert_string_equal(d->schema->cols[0].name, "intr.all.sum");
	assert_string_equal(d->schema->cols[1].name, "intr.0.sum");
	assert_string_equal(d->schema->cols[9].name, "intr.8.sum");
	assert_string_equal(d->schema->cols[10].name, "intr.all.0");
	assert_string_equal(d->schema->cols[52].name, "intr.all.PIW");
	const struct vms_col *c = &d->schema->cols[col(d, "intr.all.LOC")];
	assert_int_equal(c->kind, VMS_KIND_COUNTER);
	assert_int_equal(c->unit, VMS_UNIT_COUNT);
	assert_int_equal(c->wrap_bits, 32);
	assert_int_equal(drv_sample(d), 0);
	assert_int_equal(d->parse_errors, 0);
	check_fixture(d, "interrupts");
	/* by hand from the file: LOC over the 9 CPUs; CPU8's column */
	assert_int_equal(val(d, "intr.all.LOC"), 11058684ull + 12156804 + 8152650 + 9149572 + 12959122 +
							 10942492 + 13539420 + 12490140 + 12345);
	assert_int_equal(val(d, "intr.8.sum"), 10 + 147 + 12345 + 147 + 54321 + 23456 + 34567 + 33);
	drv_close(d);

	/* per CPU: 41 per-CPU vectors x 9 CPUs more (not ERR, MIS) */
	d = drv_irq(root("roots/sysstat-root1-irq"), &vms_source_interrupts, true);
	assert_int_equal(drv_declare(d), 0);
	assert_int_equal(d->schema->ncols, 1 + 9 + 43 + 41 * 9);
	assert_int_equal(col(d, "intr.3.ERR"), -ENOENT);
	assert_true(col(d, "intr.all.ERR") >= 0);
	assert_int_equal(drv_sample(d), 0);
	check_fixture(d, "interrupts");
	assert_int_equal(val(d, "intr.3.16"), 10536);
	assert_int_equal(val(d, "intr.6.34"), 756140);
	drv_close(d);
}

static void test_softirqs_root1(void **state)
{
	(void)state;
	struct drv *d = drv_irq(root("roots/sysstat-root1-irq"), &vms_source_softirqs, true);
	assert_int_equal(drv_declare(d), 0);
	assert_int_equal(d->schema->ncols, 10 * 10);
	assert_string_equal(d->schema->cols[0].name, "softirq.all.HI");
	assert_string_equal(d->schema->cols[1].name, "softirq.0.HI");
	assert_int_equal(col(d, "softirq.all.sum"), -ENOENT);
	assert_int_equal(drv_sample(d), 0);
	check_fixture(d, "softirqs");
	assert_int_equal(val(d, "softirq.4.TASKLET"), 113740);
	assert_int_equal(val(d, "softirq.all.RCU"), 95400 + 96858 + 94798 + 107438 + 101042 + 104438 +
							    97178 + 103719 + 1);
	drv_close(d);
	d = drv_irq(root("roots/sysstat-root1-irq"), &vms_source_softirqs, false);
	assert_int_equal(drv_declare(d), 0);
	assert_int_equal(d->schema->ncols, 10);
	assert_int_equal(drv_sample(d), 0);
	check_fixture(d, "softirqs");
	drv_close(d);
}

static void test_changes_and_damage(void **state)
{
	(void)state;
	static const struct {
		const char *prefix, *with;
		int ret;
		uint32_t errors;
		const char *none; /* the vector whose columns are empty */
	} cases[] = {
		/* CPU8 went offline */
		{"", "CPU0 CPU1 CPU2 CPU3 CPU4 CPU5 CPU6 CPU7\n", VMS_RESCHEMA, 0, NULL},
		/* a CPU came online */
		{"", "CPU0 CPU1 CPU2 CPU3 CPU4 CPU5 CPU6 CPU7 CPU8 CPU9\n", VMS_RESCHEMA, 0, NULL},
		/* the same count of CPUs, another set */
		{"", "CPU0 CPU1 CPU2 CPU3 CPU4 CPU5 CPU6 CPU7 CPU9\n", VMS_RESCHEMA, 0, NULL},
		/* no header: nothing can be placed */
		{"", "junk\n", -EINVAL, 0, NULL},
		/* a new vector */
		{"NMI:", "NMI: 1 2 3 4 5 6 7 8 9\nNEW: 1 2 3 4 5 6 7 8 9\n", VMS_RESCHEMA, 0, NULL},
		/* a vector went away */
		{"LOC:", NULL, VMS_RESCHEMA, 0, NULL},
		/* a damaged line: counted, its columns and the sums empty */
		{"LOC:", "LOC: 1 2 x\n", 0, 1, "LOC"},
		/* a cut per-CPU line: not believed */
		{"LOC:", "LOC: 1 2 3\n", 0, 1, "LOC"},
		/* a line of one number that now has two */
		{"ERR:", "ERR: 1 2\n", 0, 1, "ERR"},
		/* the same vector twice: the second counted, the first kept */
		{"NMI:", "NMI: 1 2 3 4 5 6 7 8 9\nNMI: 1 2 3 4 5 6 7 8 9\n", 0, 1, NULL},
	};
	char *dir = tmpdir_make();
	for (unsigned i = 0; i < VMS_ARRAY_SIZE(cases); i++) {
		put_fixture(dir, "interrupts");
		struct drv *d = drv_irq(dir, &vms_source_interrupts, true);
		assert_int_equal(drv_declare(d), 0);
		size_t len;
		char *s = fixture_edit("sysstat-root1-irq", "interrupts", cases[i].prefix, cases[i].with, &len);
		drv_put(dir, "interrupts", s, len);
		if (drv_sample_case(d, i, cases[i].ret, cases[i].errors)) {
			for (uint32_t c = 0; c < d->schema->ncols; c++) {
				const char *name = d->schema->cols[c].name;
				const char *v = strrchr(name, '.') + 1;
				bool none = cases[i].errors &&
					    (strcmp(v, "sum") == 0 || (cases[i].none && strcmp(v, cases[i].none) == 0));
				if (none) {
					if (d->slots[c] != VMS_NONE)
						fail_msg("case %u: %s not empty", i, name);
					continue;
				}
				uint64_t want;
				assert_true(ref_value(s, len, name, &want));
				if (d->slots[c] != want)
					fail_msg("case %u: %s %llu, want %llu", i, name,
						 (unsigned long long)d->slots[c], (unsigned long long)want);
			}
		} else if (cases[i].ret == VMS_RESCHEMA) {
			/* the new schema has what the file has */
			assert_int_equal(drv_declare(d), 0);
			assert_int_equal(drv_sample(d), 0);
			assert_int_equal(d->parse_errors, 0);
			drv_check_all(d, ref_value, s, len);
		}
		free(s);
		drv_close(d);
	}
	tmpdir_free(dir);
}

static void test_no_allocation(void **state)
{
	(void)state;
	static const char *const roots[] = {"roots/sysstat-root1-irq", "roots/procfs-irq"};
	const struct vms_source_ops *ops[] = {&vms_source_interrupts, &vms_source_softirqs};
	for (unsigned k = 0; k < VMS_ARRAY_SIZE(roots); k++) {
		for (unsigned o = 0; o < 2; o++) {
			struct drv *d = drv_irq(root(roots[k]), ops[o], true);
			assert_int_equal(drv_declare(d), 0);
			uint32_t errs;
			assert_int_equal(drv_sample_allocs(d, 1000, false, &errs), 0);
			assert_int_equal(errs, 0);
			drv_close(d);
		}
	}
	/* the wrap works: declare does allocate */
	struct drv *d = drv_irq(root("roots/sysstat-root1-irq"), &vms_source_interrupts, true);
	assert_true(drv_declare_allocs(d) > 0);
	drv_close(d);
}

/* This host's files: declared and sampled; the sums add up. */
static void test_live(void **state)
{
	(void)state;
	struct drv *d = drv_irq("/proc", &vms_source_interrupts, true);
	assert_int_equal(drv_declare(d), 0);
	assert_int_equal(drv_sample(d), 0);
	assert_int_equal(d->parse_errors, 0);
	uint64_t all = 0, cpus = 0;
	for (uint32_t c = 0; c < d->schema->ncols; c++) {
		const char *name = d->schema->cols[c].name;
		if (strncmp(name, "intr.all.", 9) == 0 && strcmp(name, "intr.all.sum") != 0)
			all += d->slots[c];
		else if (strcmp(strrchr(name, '.'), ".sum") == 0 && strcmp(name, "intr.all.sum") != 0)
			cpus += d->slots[c];
	}
	assert_int_equal(val(d, "intr.all.sum"), all);
	assert_true(cpus <= all);
	drv_close(d);
	d = drv_irq("/proc", &vms_source_softirqs, true);
	assert_int_equal(drv_declare(d), 0);
	assert_int_equal(drv_sample(d), 0);
	assert_true(val(d, "softirq.all.TIMER") > 0);
	drv_close(d);
}

static void test_open_close(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	drv_open_missing(dir, &vms_source_interrupts);
	drv_open_missing(dir, &vms_source_softirqs);
	/* a header and no line: nothing to declare */
	drv_put(dir, "softirqs", "    CPU0 CPU1\n", 14);
	struct drv *d = drv_irq(dir, &vms_source_softirqs, true);
	assert_int_equal(drv_declare(d), -ENODATA);
	drv_close(d);
	/* close right after open */
	put_fixture(dir, "interrupts");
	d = drv_irq(dir, &vms_source_interrupts, true);
	drv_close(d);
	tmpdir_free(dir);
}

VMS_TEST_MAIN(NULL, NULL, test_interrupts_root1, test_softirqs_root1, test_changes_and_damage,
	      test_no_allocation, test_live, test_open_close)

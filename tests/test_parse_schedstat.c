/* SPDX-License-Identifier: MIT */
/* test_parse_schedstat.c - /proc/schedstat (parse_schedstat.c) on the
 * real file roots/procfs-schedstat-v15/schedstat (provenance in
 * tests/fixtures/PROVENANCE.md): the values are those of
 * ../shared/fixtures/proc/EXPECTED.md (prometheus/procfs' TestSchedstat,
 * node_exporter's e2e output of the same file):
 *   cpu0 running 2045936778163039 ns, waiting 343796328169361 ns,
 *        timeslices 4767485306;
 *   cpu1 1904686152592476 / 364107263788241 / 5145567945.
 * Then the versions, and malformed lines: each refused alone, the lines
 * around it still read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "parse.h"

static void test_fixture(void **state)
{
	(void)state;
	size_t len;
	char *buf = fixture_root_read("procfs-schedstat-v15", "schedstat", &len);
	struct vms_cur c;
	struct vms_schedstat_cpu l;
	unsigned version;
	vms_cur_init(&c, buf, len);
	assert_int_equal(vms_schedstat_version(&c, &version), 1);
	assert_int_equal(version, 15);
	assert_int_equal(vms_schedstat_next(&c, &l), 1);
	assert_int_equal(l.cpu, 0);
	assert_int_equal(l.run_ns, 2045936778163039ull);
	assert_int_equal(l.wait_ns, 343796328169361ull);
	assert_int_equal(l.slices, 4767485306ull);
	assert_int_equal(vms_schedstat_next(&c, &l), 1);
	assert_int_equal(l.cpu, 1);
	assert_int_equal(l.run_ns, 1904686152592476ull);
	assert_int_equal(l.wait_ns, 364107263788241ull);
	assert_int_equal(l.slices, 5145567945ull);
	assert_int_equal(vms_schedstat_next(&c, &l), 0);
	free(buf);
}

static void test_versions(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		int want;
		unsigned version;
	} cases[] = {
		{"version 15\n", 1, 15},
		{"version 16\n", 1, 16},
		{"version 17\n", 1, 17},
		{"version 14\n", -EPROTONOSUPPORT, 14},
		{"version 18\n", -EPROTONOSUPPORT, 18},
		{"version 4294967296\n", -EINVAL, 0},
		{"version\n", -EINVAL, 0},
		{"version 15 x\n", -EINVAL, 0},
		{"version x\n", -EINVAL, 0},
		{"timestamp 1\n", -EINVAL, 0},
		{"cpu0 0 0 0 0 0 0 1 2 3\n", -EINVAL, 0},
		{"", -ENODATA, 0},
	};
	for (unsigned i = 0; i < VMS_ARRAY_SIZE(cases); i++) {
		struct vms_cur c;
		unsigned v = 99;
		vms_cur_init(&c, cases[i].text, strlen(cases[i].text));
		int r = vms_schedstat_version(&c, &v);
		if (r != cases[i].want || v != cases[i].version)
			fail_msg("case %u (%s): %d version %u, want %d version %u", i, cases[i].text, r, v,
				 cases[i].want, cases[i].version);
	}
}

/* Each bad line between two good ones: refused (-EINVAL, -ERANGE), and
 * the good lines on either side still read. */
static void test_malformed(void **state)
{
	(void)state;
	static const struct {
		const char *line;
		int want;
	} bad[] = {
		{"cpu2 1 2 3 4 5 6 7 8\n", -EINVAL},           /* 8 numbers */
		{"cpu2 1 2 3 4 5 6 7 8 9 10\n", -EINVAL},      /* 10 numbers */
		{"cpu2 1 2 3 4 5 6 7 x 9\n", -EINVAL},
		{"cpu2 1 2 3 4 5 6 7 -8 9\n", -EINVAL},
		{"cpu2 1 2 3 4 5 6 18446744073709551616 8 9\n", -ERANGE},
		{"cpu 1 2 3 4 5 6 7 8 9\n", -EINVAL},          /* no number */
		{"cpu02 1 2 3 4 5 6 7 8 9\n", -EINVAL},        /* a leading zero */
		{"cpu4294967296 1 2 3 4 5 6 7 8 9\n", -ERANGE},
		{"cpux 1 2 3 4 5 6 7 8 9\n", -EINVAL},
		{"cpu2\n", -EINVAL},
		{"cpu2 1 2 3 4 5 6 7 8 9 junk\n", -EINVAL},
		{"garbage\n", -EINVAL},
		{"\n", -EINVAL},
	};
	for (unsigned i = 0; i < VMS_ARRAY_SIZE(bad); i++) {
		char text[256];
		int n = snprintf(text, sizeof(text),
				 "version 15\ntimestamp 4\ncpu0 1 2 3 4 5 6 70 80 90\n"
				 "domain0 00000003 1 2 3\n%scpu3 1 2 3 4 5 6 71 81 91\n",
				 bad[i].line);
		struct vms_cur c;
		struct vms_schedstat_cpu l;
		unsigned v;
		vms_cur_init(&c, text, (size_t)n);
		assert_int_equal(vms_schedstat_version(&c, &v), 1);
		assert_int_equal(vms_schedstat_next(&c, &l), 1);
		assert_int_equal(l.cpu, 0);
		assert_int_equal(l.wait_ns, 80);
		int r = vms_schedstat_next(&c, &l);
		if (r != bad[i].want)
			fail_msg("case %u (%s): %d, want %d", i, bad[i].line, r, bad[i].want);
		assert_int_equal(vms_schedstat_next(&c, &l), 1);
		assert_int_equal(l.cpu, 3);
		assert_int_equal(l.run_ns, 71);
		assert_int_equal(l.wait_ns, 81);
		assert_int_equal(l.slices, 91);
		assert_int_equal(vms_schedstat_next(&c, &l), 0);
	}
	/* a last line without its newline, blanks at its end, tabs */
	const char *t = "version 15\ncpu7\t1 2 3 4 5 6 7 8 18446744073709551615  ";
	struct vms_cur c;
	struct vms_schedstat_cpu l;
	unsigned v;
	vms_cur_init(&c, t, strlen(t));
	assert_int_equal(vms_schedstat_version(&c, &v), 1);
	assert_int_equal(vms_schedstat_next(&c, &l), 1);
	assert_int_equal(l.cpu, 7);
	assert_int_equal(l.slices, UINT64_MAX);
	assert_int_equal(vms_schedstat_next(&c, &l), 0);
}

VMS_TEST_MAIN(NULL, NULL, test_fixture, test_versions, test_malformed)

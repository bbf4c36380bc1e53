/* SPDX-License-Identifier: MIT */
/* /proc/loadavg on real files (tests/fixtures/loadavg, provenance in
 * tests/fixtures/PROVENANCE.md): the values are the ones each file's text
 * shows, as its source repository's own test expects them (EXPECTED.md
 * quotes procfs and node_exporter); malformed lines are refused, and so is
 * a running count above the total (fuzz_loadavg found the parser took
 * "5/3"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "parse.h"

struct want {
	const char *name;
	uint64_t l1, l5, l15, running, total, last_pid;
};

static const struct want wants[] = {
	{"atlas-no-trailing-newline", 29, 6, 2, 1, 659, 19214},
	{"goprocinfo", 1, 2, 5, 1, 135, 11975},
	{"node_exporter", 21, 37, 39, 1, 719, 19737},
	{"procfs", 2, 4, 5, 1, 497, 11947},
	{"sysstat-root1", 316, 324, 343, 4, 956, 27015},
	{"zte-modem", 279, 123, 85, 3, 119, 1351},
};

static void test_fixtures(void **state)
{
	(void)state;
	for (size_t i = 0; i < VMS_ARRAY_SIZE(wants); i++) {
		const struct want *w = &wants[i];
		char rel[128];
		size_t len;
		snprintf(rel, sizeof(rel), "loadavg/%s", w->name);
		char *buf = fixture_read(rel, &len);
		struct vms_loadavg la;
		assert_int_equal(vms_parse_loadavg(buf, len, &la), 0);
		assert_int_equal(la.load[0], w->l1);
		assert_int_equal(la.load[1], w->l5);
		assert_int_equal(la.load[2], w->l15);
		assert_int_equal(la.running, w->running);
		assert_int_equal(la.total, w->total);
		assert_int_equal(la.last_pid, w->last_pid);
		free(buf);
	}
}

static void test_malformed(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"",
		"0.00 0.01 0.05 5/3 12345\n", /* running > total */
		"0.00 0.01 0.05 18446744073709551615/0 1\n",
		"0.00 0.01 1/2 3\n",
		"0.00 0.01 0.05 1-2 3\n",
		"0.00 0.01 0.05 1/2 3 extra\n",
		"x 0.01 0.05 1/2 3\n",
	};
	struct vms_loadavg la;
	for (size_t i = 0; i < VMS_ARRAY_SIZE(bad); i++)
		if (vms_parse_loadavg(bad[i], strlen(bad[i]), &la) != -EINVAL)
			fail_msg("case %zu accepted: %s", i, bad[i]);
	/* equal is fine: every thread running */
	assert_int_equal(vms_parse_loadavg("1.00 1.00 1.00 3/3 7\n", 21, &la), 0);
	assert_int_equal(la.running, 3);
}

VMS_TEST_MAIN(NULL, NULL,
	test_fixtures, test_malformed)

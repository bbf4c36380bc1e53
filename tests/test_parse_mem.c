/* SPDX-License-Identifier: MIT */
/* /proc/meminfo, /proc/vmstat and /proc/pressure/<resource> on real files
 * (tests/fixtures/mem, provenance in tests/fixtures/PROVENANCE.md): every
 * line of each file against an independent reader (sscanf), the number
 * of lines per kernel (2.6.29 has 31 meminfo lines, 4.18 47, 5.x 50), a
 * few values as the file shows them, and malformed lines refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "parse.h"

/* The reference: "Key: N kB" / "Key: N" / "key N" with sscanf.  Returns
 * the lines compared. */
static unsigned check_kv(const char *rel, bool meminfo)
{
	size_t len;
	char *buf = fixture_read(rel, &len);
	char *copy = strndup(buf, len), *save = NULL;
	struct vms_cur c;
	struct vms_kv_line kv;
	unsigned n = 0;
	vms_cur_init(&c, buf, len);
	for (char *ln = strtok_r(copy, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save)) {
		char key[128], unit[8] = "";
		unsigned long long v;
		int f = meminfo ? sscanf(ln, "%127[^:]: %llu %7s", key, &v, unit) : sscanf(ln, "%127s %llu", key, &v);
		assert_true(f >= 2);
		int r = meminfo ? vms_meminfo_next(&c, &kv) : vms_vmstat_next(&c, &kv);
		if (r != 1)
			fail_msg("%s: line %u '%s': %d", rel, n + 1, ln, r);
		if (kv.key_len != strlen(key) || memcmp(kv.key, key, kv.key_len) != 0)
			fail_msg("%s: key '%.*s', want '%s'", rel, (int)kv.key_len, kv.key, key);
		bool kb = strcmp(unit, "kB") == 0;
		assert_int_equal(kv.kb, kb);
		assert_int_equal(kv.v, kb ? v * 1024 : v);
		n++;
	}
	assert_int_equal(meminfo ? vms_meminfo_next(&c, &kv) : vms_vmstat_next(&c, &kv), 0);
	free(copy);
	free(buf);
	return n;
}

/* The value of key in the file, through the parser. */
static bool kv_get(const char *rel, bool meminfo, const char *key, struct vms_kv_line *out)
{
	size_t len;
	char *buf = fixture_read(rel, &len);
	struct vms_cur c;
	int r;
	bool found = false;
	vms_cur_init(&c, buf, len);
	while (!found && (r = meminfo ? vms_meminfo_next(&c, out) : vms_vmstat_next(&c, out)) != 0)
		found = r > 0 && out->key_len == strlen(key) && memcmp(out->key, key, out->key_len) == 0;
	free(buf);
	return found;
}

static void test_meminfo_fixtures(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		unsigned lines;
	} f[] = {
		{"android-2.6.29", 31}, {"zte-modem-4.1.25", 36}, {"procfs", 45},
		{"coreos-4.18", 47},   {"sysstat-root1", 50},   {"sysstat-root2", 50},
		{"sysstat-root6", 50}, {"sysstat-root7", 50},
	};
	char rel[128];
	for (size_t i = 0; i < VMS_ARRAY_SIZE(f); i++) {
		snprintf(rel, sizeof(rel), "mem/%s/meminfo", f[i].name);
		assert_int_equal(check_kv(rel, true), f[i].lines);
	}
	/* as the files show them */
	struct vms_kv_line kv;
	assert_true(kv_get("mem/sysstat-root1/meminfo", true, "MemTotal", &kv));
	assert_int_equal(kv.v, UINT64_C(8144960) * 1024);
	assert_true(kv_get("mem/sysstat-root1/meminfo", true, "Active(anon)", &kv));
	assert_int_equal(kv.v, UINT64_C(2734888) * 1024);
	assert_true(kv_get("mem/sysstat-root1/meminfo", true, "HugePages_Total", &kv));
	assert_false(kv.kb);
	assert_int_equal(kv.v, 0);
	assert_true(kv_get("mem/sysstat-root1/meminfo", true, "Hugepagesize", &kv));
	assert_true(kv.kb);
	assert_int_equal(kv.v, 2048 * 1024);
	/* 34359738367 kB: 2^45 - 1024 bytes, well past 32 bits */
	assert_true(kv_get("mem/coreos-4.18/meminfo", true, "VmallocTotal", &kv));
	assert_int_equal(kv.v, UINT64_C(34359738367) * 1024);
	/* 2.6.29 has no MemAvailable (3.14) and no HugePages lines */
	assert_false(kv_get("mem/android-2.6.29/meminfo", true, "MemAvailable", &kv));
	assert_false(kv_get("mem/android-2.6.29/meminfo", true, "HugePages_Total", &kv));
	assert_true(kv_get("mem/zte-modem-4.1.25/meminfo", true, "MemAvailable", &kv));
	assert_int_equal(kv.v, UINT64_C(40016) * 1024);
}

static void test_vmstat_fixtures(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		unsigned lines;
	} f[] = {
		{"zte-modem-4.1.25", 82}, {"coreos-4.18", 133}, {"sysstat-root1", 142},
		{"sysstat-root2", 142},   {"sysstat-root6", 142}, {"sysstat-root7", 140},
	};
	char rel[128];
	for (size_t i = 0; i < VMS_ARRAY_SIZE(f); i++) {
		snprintf(rel, sizeof(rel), "mem/%s/vmstat", f[i].name);
		assert_int_equal(check_kv(rel, false), f[i].lines);
	}
	struct vms_kv_line kv;
	assert_true(kv_get("mem/sysstat-root1/vmstat", false, "pgpgin", &kv));
	assert_int_equal(kv.v, 2685938);
	assert_true(kv_get("mem/sysstat-root2/vmstat", false, "pgsteal_anon", &kv));
	assert_int_equal(kv.v, 10);
	/* before 4.8, reclaim is counted per zone */
	assert_false(kv_get("mem/zte-modem-4.1.25/vmstat", false, "pgscan_kswapd", &kv));
	assert_true(kv_get("mem/zte-modem-4.1.25/vmstat", false, "pgscan_kswapd_normal", &kv));
	assert_int_equal(kv.v, 36293);
}

static void psi_file(const char *rel, struct vms_psi_line *l, unsigned *n)
{
	size_t len;
	char *buf = fixture_read(rel, &len);
	struct vms_cur c;
	int r;
	*n = 0;
	vms_cur_init(&c, buf, len);
	while ((r = vms_psi_next(&c, &l[*n])) != 0) {
		assert_int_equal(r, 1);
		assert_true(++*n <= 2);
	}
	free(buf);
}

static void test_psi_fixtures(void **state)
{
	(void)state;
	struct vms_psi_line l[3];
	unsigned n;
	/* a kernel before 5.13: cpu has only a some line */
	psi_file("mem/sysstat-root1/pressure/cpu", l, &n);
	assert_int_equal(n, 1);
	assert_false(l[0].full);
	assert_int_equal(l[0].total, 1473177);
	assert_int_equal(l[0].avg[0], 0);
	psi_file("mem/sysstat-root1/pressure/io", l, &n);
	assert_int_equal(n, 2);
	assert_false(l[0].full);
	assert_int_equal(l[0].avg[0], 45);
	assert_int_equal(l[0].avg[1], 34);
	assert_int_equal(l[0].avg[2], 20);
	assert_int_equal(l[0].total, 96242289);
	assert_true(l[1].full);
	assert_int_equal(l[1].avg[1], 33);
	assert_int_equal(l[1].total, 92732851);
	psi_file("mem/procfs/pressure/memory", l, &n);
	assert_int_equal(n, 2);
	assert_int_equal(l[0].avg[2], 385);
	assert_int_equal(l[0].total, 15);
	assert_int_equal(l[1].avg[2], 495);
	assert_int_equal(l[1].total, 25);
}

static void test_malformed(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		int meminfo; /* 1 meminfo, 0 vmstat, 2 pressure */
		int want;
	} bad[] = {
		{"MemTotal 8144960 kB\n", 1, -EINVAL},          /* no colon */
		{"MemTotal: kB\n", 1, -EINVAL},                 /* no number */
		{"MemTotal: 12 MB\n", 1, -EINVAL},              /* another unit */
		{"MemTotal: 12 kB x\n", 1, -EINVAL},
		{"MemTotal: -12 kB\n", 1, -EINVAL},
		{": 12 kB\n", 1, -EINVAL},                      /* no key */
		{"Mem Total: 12 kB\n", 1, -EINVAL},
		{"MemTotal: 18014398509481984 kB\n", 1, -ERANGE}, /* 2^54 kB: 2^64 bytes */
		{"MemTotal: 18446744073709551616\n", 1, -ERANGE},
		{"pgpgin\n", 0, -EINVAL},
		{"pgpgin 12 13\n", 0, -EINVAL},
		{"pgpgin: 12\n", 0, -EINVAL},
		{"pg(pgin) 12\n", 0, -EINVAL},
		{"pgpgin 1x\n", 0, -EINVAL},
		{"pgpgin 99999999999999999999\n", 0, -ERANGE},
		{"half avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", 2, -EINVAL},
		{"some avg10=0.00 avg60=0.00 total=0\n", 2, -EINVAL},
		{"some avg10=0.00 avg60=0.00 avg300=0.00\n", 2, -EINVAL},
		{"some avg10=0.001 avg60=0.00 avg300=0.00 total=0\n", 2, -EINVAL},
		{"some avg10=0.00 avg60=0.00 avg300=0.00 total=12 x\n", 2, -EINVAL},
		{"some avg10=0.00 avg60=0.00 avg300=0.00 total=-1\n", 2, -EINVAL},
	};
	for (size_t i = 0; i < VMS_ARRAY_SIZE(bad); i++) {
		struct vms_cur c;
		struct vms_kv_line kv;
		struct vms_psi_line pl;
		vms_cur_init(&c, bad[i].text, strlen(bad[i].text));
		int r = bad[i].meminfo == 1 ? vms_meminfo_next(&c, &kv)
			: bad[i].meminfo == 0 ? vms_vmstat_next(&c, &kv)
					      : vms_psi_next(&c, &pl);
		if (r != bad[i].want)
			fail_msg("case %zu '%s': %d, want %d", i, bad[i].text, r, bad[i].want);
		/* the cursor is past the damaged line: the next one parses */
		assert_true(vms_cur_eof(&c));
	}
	/* a damaged line between two good ones: skipped, the next one read */
	const char *t = "MemTotal: 1 kB\nMemFree: x kB\nBuffers: 3 kB\n";
	struct vms_cur c;
	struct vms_kv_line kv;
	vms_cur_init(&c, t, strlen(t));
	assert_int_equal(vms_meminfo_next(&c, &kv), 1);
	assert_int_equal(vms_meminfo_next(&c, &kv), -EINVAL);
	assert_int_equal(vms_meminfo_next(&c, &kv), 1);
	assert_int_equal(kv.v, 3072);
	assert_int_equal(vms_meminfo_next(&c, &kv), 0);
	/* no trailing newline, blank lines passed over */
	t = "\npgpgin 5\n\n  \npgpgout 7";
	vms_cur_init(&c, t, strlen(t));
	assert_int_equal(vms_vmstat_next(&c, &kv), 1);
	assert_int_equal(kv.v, 5);
	assert_int_equal(vms_vmstat_next(&c, &kv), 1);
	assert_int_equal(kv.v, 7);
	assert_int_equal(vms_vmstat_next(&c, &kv), 0);
}

VMS_TEST_MAIN(NULL, NULL,
	test_meminfo_fixtures, test_vmstat_fixtures, test_psi_fixtures, test_malformed)

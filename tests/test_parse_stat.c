/* SPDX-License-Identifier: MIT */
/* test_parse_stat.c - vms_stat_next() against real /proc/stat files.
 *
 * Expected values are other projects' readings of the same files
 * (../shared/fixtures/proc/EXPECTED.md, quoted at each assertion), facts
 * stated by the fixture's provenance (tests/fixtures/PROVENANCE.md), or
 * computed from the file by an independent reader written here
 * (strtok_r + strtoull: slow, simple, and sharing no code with the parser). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "parse.h"

/* A fixture as an exact-size heap buffer, so ASan catches any read past
 * its end (the parser gets (buf, len), never a NUL terminator). */
#define load(name, len) fixture_exact(name, "stat", len)

/* Everything the parser read from one file. */
struct stat_file {
	bool have_all;
	struct vms_stat_line all;
	unsigned ncpu;
	struct vms_stat_line cpu[512];  /* in file order */
	bool have[VMS_STAT_SOFTIRQ + 1];
	uint64_t val[VMS_STAT_SOFTIRQ + 1];
	unsigned lines, other, errors;
};

static void parse_buf(const char *buf, size_t len, struct stat_file *sf)
{
	struct vms_cur c;
	struct vms_stat_line sl;
	int r;

	memset(sf, 0, sizeof(*sf));
	vms_cur_init(&c, buf, len);
	while ((r = vms_stat_next(&c, &sl)) != 0) {
		sf->lines++;
		if (r < 0) {
			assert_true(r == -EINVAL || r == -ERANGE);
			sf->errors++;
			continue;
		}
		assert_int_equal(r, 1);
		switch (sl.key) {
		case VMS_STAT_OTHER:
			sf->other++;
			break;
		case VMS_STAT_CPU_ALL:
			sf->have_all = true;
			sf->all = sl;
			break;
		case VMS_STAT_CPU:
			assert_true(sf->ncpu < VMS_ARRAY_SIZE(sf->cpu));
			sf->cpu[sf->ncpu++] = sl;
			break;
		default:
			sf->have[sl.key] = true;
			sf->val[sl.key] = sl.v[0];
			break;
		}
	}
	assert_true(vms_cur_eof(&c));
}

static void parse_fixture(const char *name, struct stat_file *sf)
{
	size_t len;
	char *buf = load(name, &len);
	parse_buf(buf, len, sf);
	free(buf);
}

static const struct vms_stat_line *cpu_n(const struct stat_file *sf, uint32_t n)
{
	for (unsigned i = 0; i < sf->ncpu; i++)
		if (sf->cpu[i].cpu == n)
			return &sf->cpu[i];
	fail_msg("cpu%u not parsed", n);
	return NULL;
}

/* seconds as printed by node_exporter -> USER_HZ ticks (100/s on that host,
 * EXPECTED.md "Conventions") */
static uint64_t ticks(double seconds)
{
	return (uint64_t)llround(seconds * 100.0);
}

static const char *const stat_fixtures[] = {
	"android-2.6.29-9fields-nosoftirq",
	"atlas-ec2-3cpu-steal-t1",
	"atlas-ec2-8cpu",
	"gopsutil-issue424-4cpu-guest",
	"metrix-1cpu-vm-agg-lt-cpu0",
	"node_exporter-8cpu-guest",
	"pcp-bigsys-hpbl920-480cpu",
	"pcp-cgroups004-softirq-over-2e32",
	"pcp-cpufreq001-8cpu-2024",
	"pcp-meminfo002-32cpu-idle-over-2e32",
	"pcp-meminfo004-vm-steal-4cpu",
	"pcp-meminfo007-vm-steal-8cpu",
	"procfs-8cpu",
	"sysstat-root1-9cpu",
	"sysstat-root2-cpu8-offline",
	"sysstat-root3-cpu6-cpu8-offline",
	"sysstat-root5-guest-steal",
	"sysstat-root6-7fields-old-kernel",
	"telegraf-16cpu-t0",
	"telegraf-16cpu-t1",
	"zte-modem-4.1.25-2cpu",
};

/* ---- prometheus/procfs, node_exporter ------------------------------------ */

static void test_procfs_8cpu(void **state)
{
	(void)state;
	struct stat_file *sf = malloc(sizeof(*sf));
	parse_fixture("procfs-8cpu", sf);
	assert_int_equal(sf->errors, 0);
	/* procfs TestStat: CPUTotal.User = 301854/userHZ */
	assert_true(sf->have_all);
	assert_int_equal(sf->all.nfields, 10);
	assert_int_equal(sf->all.v[0], 301854);
	/* CPU[7].SoftIRQ = 31/userHZ */
	assert_int_equal(sf->ncpu, 8);
	assert_int_equal(cpu_n(sf, 7)->v[6], 31);
	/* IRQTotal = 73777505 (the intr line is ~130 kB of per-IRQ counts) */
	assert_int_equal(sf->val[VMS_STAT_INTR], 73777505);
	assert_int_equal(sf->val[VMS_STAT_CTXT], 38014093);
	assert_int_equal(sf->val[VMS_STAT_PROCESSES], 26442);
	assert_int_equal(sf->val[VMS_STAT_PROCS_RUNNING], 2);
	assert_int_equal(sf->val[VMS_STAT_PROCS_BLOCKED], 1);
	/* SoftIRQTotal = 5057579 */
	assert_int_equal(sf->val[VMS_STAT_SOFTIRQ], 5057579);
	/* btime is not ours */
	assert_int_equal(sf->other, 1);
	free(sf);
}

static void test_node_exporter_guest(void **state)
{
	(void)state;
	struct stat_file *sf = malloc(sizeof(*sf));
	parse_fixture("node_exporter-8cpu-guest", sf);
	assert_int_equal(sf->errors, 0);
	assert_int_equal(sf->ncpu, 8);
	/* node_cpu_seconds_total cpu0: user 444.9, nice 0.19, system 210.45,
	 * idle 10870.69, iowait 2.2, irq 0.01, softirq 34.1, steal 0;
	 * node_cpu_guest_seconds_total cpu0: user 0.02, nice 0.01 */
	const double cpu0[10] = {444.9, 0.19, 210.45, 10870.69, 2.2, 0.01, 34.1, 0, 0.02, 0.01};
	/* cpu7: user 290.98, nice 2.68, system 101.64, idle 11392.82, iowait 5.55,
	 * irq 0, softirq 0.31, steal 0; guest user 0.09, nice 0.08 */
	const double cpu7[10] = {290.98, 2.68, 101.64, 11392.82, 5.55, 0, 0.31, 0, 0.09, 0.08};
	for (unsigned f = 0; f < 10; f++) {
		assert_int_equal(cpu_n(sf, 0)->v[f], ticks(cpu0[f]));
		assert_int_equal(cpu_n(sf, 7)->v[f], ticks(cpu7[f]));
	}
	/* node_intr_total 8885917; node_context_switches_total 38014093;
	 * node_forks_total 26442; node_procs_running 2; node_procs_blocked 0 */
	assert_int_equal(sf->val[VMS_STAT_INTR], 8885917);
	assert_int_equal(sf->val[VMS_STAT_CTXT], 38014093);
	assert_int_equal(sf->val[VMS_STAT_PROCESSES], 26442);
	assert_int_equal(sf->val[VMS_STAT_PROCS_RUNNING], 2);
	assert_true(sf->have[VMS_STAT_PROCS_BLOCKED]);
	assert_int_equal(sf->val[VMS_STAT_PROCS_BLOCKED], 0);
	free(sf);
}

/* ---- sysstat: mpstat from root1 ----------------------------------------- */

/* mpstat's first report (since boot), EXPECTED.md section 3: rows all, 0..8;
 * columns %usr %nice %sys %iowait %irq %soft %steal %guest %gnice %idle. */
static const struct {
	int cpu; /* -1: all */
	double pct[10];
} mpstat_root1[] = {
	{-1, {1.49, 39.91, 0.83, 0.94, 0.43, 0.40, 0.00, 0.00, 0.00, 56.00}},
	{0, {1.48, 46.19, 0.81, 0.59, 0.45, 1.34, 0.00, 0.00, 0.00, 49.15}},
	{1, {1.54, 50.59, 0.87, 0.75, 0.48, 0.65, 0.00, 0.00, 0.00, 45.12}},
	{2, {0.81, 78.78, 0.40, 1.03, 0.62, 0.19, 0.00, 0.00, 0.00, 18.18}},
	{3, {1.09, 77.04, 0.51, 0.78, 0.60, 0.24, 0.00, 0.00, 0.00, 19.73}},
	{4, {1.78, 40.97, 1.11, 1.30, 0.48, 0.74, 0.00, 0.00, 0.00, 53.62}},
	{5, {1.73, 42.97, 0.93, 1.10, 0.43, 0.15, 0.00, 0.00, 0.00, 52.69}},
	{6, {2.49, 8.42, 1.41, 1.51, 0.49, 0.15, 0.00, 0.00, 0.00, 85.53}},
	{7, {2.27, 14.07, 1.27, 1.02, 0.29, 0.14, 0.00, 0.00, 0.00, 80.95}},
	{8, {0.20, 0.00, 0.20, 0.36, 0.04, 0.00, 0.00, 0.00, 0.00, 99.19}},
};

/* mpstat column -> our field index */
static const unsigned mpstat_field[10] = {0, 1, 2, 4, 5, 6, 7, 8, 9, 3};

static void test_sysstat_mpstat(void **state)
{
	(void)state;
	struct stat_file *sf = malloc(sizeof(*sf));
	parse_fixture("sysstat-root1-9cpu", sf);
	assert_int_equal(sf->errors, 0);
	assert_int_equal(sf->ncpu, 9); /* "(9 CPU)" */
	for (unsigned i = 0; i < VMS_ARRAY_SIZE(mpstat_root1); i++) {
		const struct vms_stat_line *l =
			mpstat_root1[i].cpu < 0 ? &sf->all : cpu_n(sf, (uint32_t)mpstat_root1[i].cpu);
		assert_int_equal(l->nfields, 10);
		/* EXPECTED.md: %x = x / (user+nice+system+idle+iowait+irq+softirq+steal) * 100,
		 * printed with two decimals */
		double tot = 0;
		for (unsigned f = 0; f < 8; f++)
			tot += (double)l->v[f];
		for (unsigned k = 0; k < 10; k++) {
			double pct = (double)l->v[mpstat_field[k]] * 100.0 / tot;
			assert_int_equal(llround(pct * 100.0), llround(mpstat_root1[i].pct[k] * 100.0));
		}
		if (mpstat_root1[i].cpu < 0) {
			/* iostat avg-cpu %system = sys + irq + soft = 1.67 */
			double sys = (double)(l->v[2] + l->v[5] + l->v[6]) * 100.0 / tot;
			assert_int_equal(llround(sys * 100.0), 167);
		}
	}
	free(sf);
}

/* ---- field counts, offline CPUs, races, big counters -------------------- */

static void test_field_counts(void **state)
{
	(void)state;
	struct stat_file *sf = malloc(sizeof(*sf));

	/* 7 fields (PROVENANCE: "only 7 cpu fields ... 10 CPUs (cpu0-9)") */
	parse_fixture("sysstat-root6-7fields-old-kernel", sf);
	assert_int_equal(sf->errors, 0);
	assert_int_equal(sf->all.nfields, 7);
	assert_int_equal(sf->ncpu, 10);
	for (unsigned i = 0; i < sf->ncpu; i++) {
		assert_int_equal(sf->cpu[i].cpu, i);
		assert_int_equal(sf->cpu[i].nfields, 7);
		/* absent fields are never zero */
		for (unsigned f = 7; f < 10; f++)
			assert_true(sf->cpu[i].v[f] == VMS_NONE);
	}

	/* 9 fields, 1 CPU, no softirq line (PROVENANCE: "NO softirq line (pre-2.6.31)") */
	parse_fixture("android-2.6.29-9fields-nosoftirq", sf);
	assert_int_equal(sf->errors, 0);
	assert_int_equal(sf->all.nfields, 9);
	assert_int_equal(sf->ncpu, 1);
	assert_int_equal(sf->cpu[0].nfields, 9);
	assert_true(sf->cpu[0].v[9] == VMS_NONE);
	assert_false(sf->have[VMS_STAT_SOFTIRQ]);
	assert_true(sf->have[VMS_STAT_INTR]);

	/* 9 fields, 480 CPUs cpu0..cpu479 */
	parse_fixture("pcp-bigsys-hpbl920-480cpu", sf);
	assert_int_equal(sf->errors, 0);
	assert_int_equal(sf->all.nfields, 9);
	assert_int_equal(sf->ncpu, 480);
	for (unsigned i = 0; i < sf->ncpu; i++) {
		assert_int_equal(sf->cpu[i].cpu, i);
		assert_int_equal(sf->cpu[i].nfields, 9);
	}

	/* 10 fields */
	parse_fixture("zte-modem-4.1.25-2cpu", sf);
	assert_int_equal(sf->errors, 0);
	assert_int_equal(sf->all.nfields, 10);
	assert_int_equal(sf->ncpu, 2);
	free(sf);
}

static void test_offline_cpus(void **state)
{
	(void)state;
	struct stat_file *sf = malloc(sizeof(*sf));
	/* PROVENANCE: root2 "CPU8 offline so cpu8 line absent (cpu0-7 only)" */
	parse_fixture("sysstat-root2-cpu8-offline", sf);
	assert_int_equal(sf->errors, 0);
	assert_int_equal(sf->ncpu, 8);
	for (unsigned i = 0; i < 8; i++)
		assert_int_equal(sf->cpu[i].cpu, i);
	/* root3: "cpu6 and cpu8 offline -> numbering gap cpu5,cpu7" */
	parse_fixture("sysstat-root3-cpu6-cpu8-offline", sf);
	assert_int_equal(sf->errors, 0);
	assert_int_equal(sf->ncpu, 7);
	assert_int_equal(sf->cpu[5].cpu, 5);
	assert_int_equal(sf->cpu[6].cpu, 7);
	/* root5: "steal/guest/guest_nice non-zero on aggregate and cpu8 (100 150 25)" */
	parse_fixture("sysstat-root5-guest-steal", sf);
	assert_int_equal(sf->ncpu, 9);
	assert_int_equal(sf->all.v[7], 100);
	assert_int_equal(sf->all.v[8], 150);
	assert_int_equal(sf->all.v[9], 25);
	assert_int_equal(cpu_n(sf, 8)->v[7], 100);
	assert_int_equal(cpu_n(sf, 8)->v[8], 150);
	assert_int_equal(cpu_n(sf, 8)->v[9], 25);
	free(sf);
}

static void test_total_smaller_than_cpu(void **state)
{
	(void)state;
	struct stat_file *sf = malloc(sizeof(*sf));
	/* PROVENANCE: "aggregate user 3700 < cpu0 user 3701 (real kernel
	 * summation race)"; "steal 7".  Both are kept as read. */
	parse_fixture("metrix-1cpu-vm-agg-lt-cpu0", sf);
	assert_int_equal(sf->errors, 0);
	assert_int_equal(sf->all.v[0], 3700);
	assert_int_equal(cpu_n(sf, 0)->v[0], 3701);
	assert_int_equal(sf->all.v[7], 7);
	free(sf);
}

static void test_steal_guest_big(void **state)
{
	(void)state;
	struct stat_file *sf = malloc(sizeof(*sf));
	/* "softirq total 9998885674 (> 2^32)" */
	parse_fixture("pcp-cgroups004-softirq-over-2e32", sf);
	assert_int_equal(sf->val[VMS_STAT_SOFTIRQ], 9998885674ull);
	/* "aggregate idle 7249304504 (> 2^32), guest 797809" */
	parse_fixture("pcp-meminfo002-32cpu-idle-over-2e32", sf);
	assert_int_equal(sf->all.v[3], 7249304504ull);
	assert_int_equal(sf->all.v[8], 797809);
	assert_int_equal(sf->ncpu, 32);
	/* "steal non-zero on every CPU (aggregate 2173)", 8 CPUs */
	parse_fixture("atlas-ec2-8cpu", sf);
	assert_int_equal(sf->all.v[7], 2173);
	assert_int_equal(sf->ncpu, 8);
	for (unsigned i = 0; i < 8; i++)
		assert_true(sf->cpu[i].v[7] > 0);
	/* "3 CPU lines (cpu0-2), steal 2192" */
	parse_fixture("atlas-ec2-3cpu-steal-t1", sf);
	assert_int_equal(sf->ncpu, 3);
	assert_int_equal(sf->all.v[7], 2192);
	/* "steal non-zero on all 4 CPUs (474 total)" */
	parse_fixture("pcp-meminfo004-vm-steal-4cpu", sf);
	assert_int_equal(sf->all.v[7], 474);
	for (unsigned i = 0; i < 4; i++)
		assert_true(cpu_n(sf, i)->v[7] > 0);
	free(sf);
}

static void test_no_trailing_newline(void **state)
{
	(void)state;
	struct stat_file *sf = malloc(sizeof(*sf));
	/* "4 CPUs, ... file has NO trailing newline after the last (softirq)
	 * line" */
	size_t len;
	char *buf = load("gopsutil-issue424-4cpu-guest", &len);
	assert_true(len > 0 && buf[len - 1] != '\n');
	parse_buf(buf, len, sf);
	assert_int_equal(sf->errors, 0);
	assert_int_equal(sf->ncpu, 4);
	assert_true(sf->have[VMS_STAT_SOFTIRQ]);
	/* the independent reader gives the last line's first number */
	const char *last = (const char *)memrchr(buf, '\n', len) + 1;
	assert_int_equal(strncmp(last, "softirq ", 8), 0);
	assert_int_equal(sf->val[VMS_STAT_SOFTIRQ], strtoull(last + 8, NULL, 10));
	/* PROVENANCE calls 5892 the "guest" total, but it is the 8th number of
	 * the cpu line, which every kernel since 2.6.11 prints as steal */
	assert_int_equal(sf->all.v[7], 5892);
	assert_int_equal(sf->all.v[8], 0);
	free(buf);
	free(sf);
}

/* ---- every fixture against an independent reader ------------------------ */

static void ref_check(const char *name)
{
	size_t len;
	char *buf = load(name, &len);
	char *copy = malloc(len + 1);
	memcpy(copy, buf, len);
	copy[len] = '\0';
	struct vms_cur c;
	struct vms_stat_line sl;
	char *save = NULL;
	unsigned lines = 0;

	vms_cur_init(&c, buf, len);
	for (char *ln = strtok_r(copy, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save)) {
		char *s2 = NULL;
		char *key = strtok_r(ln, " ", &s2);
		uint64_t v[64];
		unsigned n = 0;
		for (char *t = strtok_r(NULL, " ", &s2); t && n < 64; t = strtok_r(NULL, " ", &s2))
			v[n++] = strtoull(t, NULL, 10);
		assert_int_equal(vms_stat_next(&c, &sl), 1);
		lines++;
		if (strcmp(key, "cpu") == 0 || (strncmp(key, "cpu", 3) == 0 && key[3] >= '0' && key[3] <= '9')) {
			assert_int_equal(sl.key, key[3] ? VMS_STAT_CPU : VMS_STAT_CPU_ALL);
			if (key[3])
				assert_int_equal(sl.cpu, strtoul(key + 3, NULL, 10));
			assert_int_equal(sl.nfields, n < 10 ? n : 10);
			for (unsigned f = 0; f < sl.nfields; f++)
				assert_int_equal(sl.v[f], v[f]);
		} else if (!strcmp(key, "ctxt") || !strcmp(key, "processes") || !strcmp(key, "intr") ||
			   !strcmp(key, "softirq") || !strcmp(key, "procs_running") ||
			   !strcmp(key, "procs_blocked")) {
			assert_int_not_equal(sl.key, VMS_STAT_OTHER);
			assert_int_equal(sl.v[0], v[0]);
		} else {
			assert_int_equal(sl.key, VMS_STAT_OTHER);
		}
	}
	assert_int_equal(vms_stat_next(&c, &sl), 0);
	assert_true(lines > 4);
	free(copy);
	free(buf);
}

static void test_all_fixtures_reference(void **state)
{
	(void)state;
	for (unsigned i = 0; i < VMS_ARRAY_SIZE(stat_fixtures); i++)
		ref_check(stat_fixtures[i]);
}

/* ---- malformed input ------------------------------------------------------ */

/* Each case: one bad line between two good ones.  The bad one must come back
 * as -EINVAL/-ERANGE, and the good line after it must still be read. */
static void test_malformed(void **state)
{
	(void)state;
	static const struct {
		const char *line;
		int err;
	} bad[] = {
		{"cpu  1 2 3", -EINVAL},               /* fewer than 4 fields */
		{"cpu", -EINVAL},
		{"cpu0", -EINVAL},
		{"cpu1x 1 2 3 4", -EINVAL},
		{"cpu01 1 2 3 4", -EINVAL},            /* not a CPU number */
		{"cpu99999999999 1 2 3 4", -ERANGE},
		{"cpu  1 2 x 4 5", -EINVAL},
		{"cpu  1 2 3 4 5 6 7 8 9 10 11x", -EINVAL}, /* the ignored tail is still checked */
		{"cpu  1 2 -3 4", -EINVAL},
		{"cpu  1 2 3 18446744073709551616", -ERANGE}, /* 2^64 */
		{"ctxt", -EINVAL},
		{"ctxt 12 13", -EINVAL},
		{"ctxt 12x", -EINVAL},
		{"ctxt 99999999999999999999999", -ERANGE},
		{"processes -1", -EINVAL},
		{"procs_running", -EINVAL},
		{"intr", -EINVAL},
		{"intr x 1 2", -EINVAL},
		{"softirq 1x 2", -EINVAL},
	};
	char buf[256];
	for (unsigned i = 0; i < VMS_ARRAY_SIZE(bad); i++) {
		int n = snprintf(buf, sizeof(buf), "ctxt 5\n%s\nprocesses 7\n", bad[i].line);
		struct vms_cur c;
		struct vms_stat_line sl;
		vms_cur_init(&c, buf, (size_t)n);
		assert_int_equal(vms_stat_next(&c, &sl), 1);
		assert_int_equal(sl.key, VMS_STAT_CTXT);
		assert_int_equal(sl.v[0], 5);
		int r = vms_stat_next(&c, &sl);
		if (r != bad[i].err)
			fail_msg("\"%s\": got %d, want %d", bad[i].line, r, bad[i].err);
		assert_int_equal(vms_stat_next(&c, &sl), 1);
		assert_int_equal(sl.key, VMS_STAT_PROCESSES);
		assert_int_equal(sl.v[0], 7);
		assert_int_equal(vms_stat_next(&c, &sl), 0);
	}
}

static void test_odd_but_valid(void **state)
{
	(void)state;
	struct vms_cur c;
	struct vms_stat_line sl;
	/* 11 and 12 fields (a future kernel): the first 10 are read */
	const char *s = "cpu  1 2 3 4 5 6 7 8 9 10 11 12\ncpu12 1 2 3 4\n"
			"cpufreq 1 2\ncpu-x 1 2 3 4\ncpu/1 1 2 3 4\ncpu\xb1 1 2 3 4\n"
			"btime 17\n\npage 5 6\nintr 42";
	vms_cur_init(&c, s, strlen(s));
	assert_int_equal(vms_stat_next(&c, &sl), 1);
	assert_int_equal(sl.key, VMS_STAT_CPU_ALL);
	assert_int_equal(sl.nfields, 10);
	for (unsigned f = 0; f < 10; f++)
		assert_int_equal(sl.v[f], f + 1);
	/* 4 fields (2.4 kernels) */
	assert_int_equal(vms_stat_next(&c, &sl), 1);
	assert_int_equal(sl.key, VMS_STAT_CPU);
	assert_int_equal(sl.cpu, 12);
	assert_int_equal(sl.nfields, 4);
	assert_true(sl.v[4] == VMS_NONE);
	/* not ours: cpufreq, "cpu-x", "cpu/1", "cpu\xb1" (bytes either side of
	 * the digits, and one with the high bit set), btime, an empty line, page */
	for (int i = 0; i < 7; i++) {
		assert_int_equal(vms_stat_next(&c, &sl), 1);
		assert_int_equal(sl.key, VMS_STAT_OTHER);
	}
	/* the last line has no newline */
	assert_int_equal(vms_stat_next(&c, &sl), 1);
	assert_int_equal(sl.key, VMS_STAT_INTR);
	assert_int_equal(sl.v[0], 42);
	assert_int_equal(vms_stat_next(&c, &sl), 0);
	/* an empty buffer */
	vms_cur_init(&c, s, 0);
	assert_int_equal(vms_stat_next(&c, &sl), 0);
}

static void test_truncated(void **state)
{
	(void)state;
	/* the file cut at every byte: each prefix reads as good lines and at
	 * most one damaged last line, never a crash */
	size_t len;
	char *full = load("sysstat-root1-9cpu", &len);
	for (size_t cut = 0; cut <= len; cut++) {
		char *buf = malloc(cut ? cut : 1);
		memcpy(buf, full, cut);
		struct vms_cur c;
		struct vms_stat_line sl;
		unsigned errors = 0;
		int r;
		vms_cur_init(&c, buf, cut);
		while ((r = vms_stat_next(&c, &sl)) != 0)
			if (r < 0)
				errors++;
		assert_true(errors <= 1);
		free(buf);
	}
	free(full);
}

/* ---- the cursor helpers this parser family added -------------------------- */

static void test_cursor_helpers(void **state)
{
	(void)state;
	struct vms_cur c;
	const char *s = "ab:c:d\nxy";
	vms_cur_init(&c, s, strlen(s));
	assert_int_equal(vms_cur_peek(&c), 'a');
	assert_ptr_equal(vms_cur_rfind(&c, ':'), s + 4);
	assert_ptr_equal(vms_cur_rfind(&c, 'y'), s + 8);
	assert_null(vms_cur_rfind(&c, 'q'));
	vms_cur_skip_line(&c);
	assert_ptr_equal(c.p, s + 7);
	assert_null(vms_cur_rfind(&c, ':'));
	vms_cur_skip_line(&c);
	assert_true(vms_cur_eof(&c));
	assert_int_equal(vms_cur_peek(&c), -1);
	assert_null(vms_cur_rfind(&c, 'x'));
	vms_cur_skip_line(&c); /* at the end: stays there */
	assert_ptr_equal(c.p, s + 9);
}

/* vms_cur_u64_list against vms_cur_u64 called in a loop: same numbers,
 * same count, same error. */
static void u64_loop(const char *s, uint64_t *v, unsigned max, unsigned *n, int *err)
{
	struct vms_cur c;
	vms_cur_init(&c, s, strlen(s));
	*n = 0;
	for (;;) {
		vms_cur_skip_blank(&c);
		if (vms_cur_eof(&c) || *c.p == '\n')
			break;
		uint64_t x = vms_cur_u64(&c);
		if (!vms_cur_ok(&c))
			break;
		if (*n < max)
			v[*n] = x;
		(*n)++;
	}
	*err = c.err;
}

static void test_cursor_u64_list(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		unsigned n; /* numbers before the end or the error */
		int err;
	} cases[] = {
		{"", 0, 0},
		{"   \t ", 0, 0},
		{"0", 1, 0},
		{" 1 22\t333   4444 ", 4, 0},
		{"1 2\n3 4", 2, 0}, /* stops at a newline */
		{"9999999999999999999 18446744073709551615", 2, 0},  /* 19 and 20 digits */
		{"18446744073709551616", 0, -ERANGE},                 /* 2^64 */
		{"99999999999999999999999999", 0, -ERANGE},
		{"00000000000000000000000000042 7", 2, 0},           /* 29 digits, fits */
		{"1 123456789012345678901234x", 1, -ERANGE},         /* overflow first, as vms_cur_u64 */
		{"1 00000000000000000000012x", 1, -EINVAL},
		{"1 2 3x 4", 2, -EINVAL},
		{"1 -2", 1, -EINVAL},
		{"1 2:3", 1, -EINVAL},
		{"1 2 3 4 5 6 7 8 9 10 11 12", 12, 0}, /* more than max: counted */
	};
	for (unsigned i = 0; i < VMS_ARRAY_SIZE(cases); i++) {
		uint64_t a[4] = {0}, b[4] = {0};
		unsigned na, nb;
		int eb;
		struct vms_cur c;
		vms_cur_init(&c, cases[i].s, strlen(cases[i].s));
		na = vms_cur_u64_list(&c, a, 4);
		u64_loop(cases[i].s, b, 4, &nb, &eb);
		if (na != cases[i].n || c.err != cases[i].err)
			fail_msg("\"%s\": %u numbers, error %d", cases[i].s, na, c.err);
		assert_int_equal(na, nb);
		assert_int_equal(c.err, eb);
		assert_memory_equal(a, b, sizeof(a));
	}
	/* every length from 1 to 26 digits, at every offset from the start of
	 * an exact-size buffer, followed by each kind of end: the word-wide
	 * path and the byte path must agree with vms_cur_u64 everywhere */
	static const char *const tails[] = {"", " ", "\t7", "\n9", "x", ":", "  12345678901 3"};
	char line[96];
	for (unsigned len = 1; len <= 26; len++) {
		for (unsigned off = 0; off < 9; off++) {
			for (unsigned t = 0; t < VMS_ARRAY_SIZE(tails); t++) {
				unsigned k = 0;
				for (unsigned i = 0; i < off; i++)
					line[k++] = i % 3 ? ' ' : '\t';
				for (unsigned i = 0; i < len; i++)
					line[k++] = (char)('0' + (len == 20 ? (unsigned)("18446744073709551615"[i] - '0')
									   : (i * 7 + len) % 10));
				k += (unsigned)sprintf(line + k, "%s", tails[t]);
				char *exact = malloc(k);
				memcpy(exact, line, k);
				uint64_t a[4] = {0}, b[4] = {0};
				struct vms_cur c;
				vms_cur_init(&c, exact, k);
				unsigned na = vms_cur_u64_list(&c, a, 4), nb;
				int eb;
				line[k] = '\0';
				u64_loop(line, b, 4, &nb, &eb);
				if (na != nb || c.err != eb || memcmp(a, b, sizeof(a)))
					fail_msg("len %u off %u tail %u: %u/%d vs %u/%d", len, off, t, na, c.err, nb, eb);
				if (len < 20 && t < 4) {
					assert_int_equal(na, t == 0 || t == 1 || t == 3 ? 1 : 2);
					assert_true(a[0] == strtoull(line, NULL, 10));
				}
				free(exact);
			}
		}
	}

	/* the values themselves, from strtoull */
	const char *s = "7 18446744073709551615 00000000000000000000000000042 9999999999999999999";
	uint64_t v[4];
	struct vms_cur c;
	vms_cur_init(&c, s, strlen(s));
	assert_int_equal(vms_cur_u64_list(&c, v, 4), 4);
	assert_true(vms_cur_ok(&c) && vms_cur_eof(&c));
	char *e = (char *)s;
	for (unsigned i = 0; i < 4; i++)
		assert_true(v[i] == strtoull(e, &e, 10));
}

VMS_TEST_MAIN(NULL, NULL,
	test_procfs_8cpu, test_node_exporter_guest, test_sysstat_mpstat, test_field_counts,
	test_offline_cpus, test_total_smaller_than_cpu, test_steal_guest_big,
	test_no_trailing_newline, test_all_fixtures_reference, test_malformed, test_odd_but_valid,
	test_truncated, test_cursor_helpers, test_cursor_u64_list)

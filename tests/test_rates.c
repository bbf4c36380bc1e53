/* SPDX-License-Identifier: MIT */
/* dump --rates: sysstat's own expected outputs for its root1 test files
 * (iostat -x, iostat, mpstat -P ALL), reproduced to the printed two
 * decimals; then wraps, resets, gaps, missing values and schema changes. */
#include "testutil.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binutil.h"
#include "rates.h"
#include "rates_csv.h"
#include "ring.h"
#include "schema.h"



static void table_read(struct table *t, const char *path)
{
	size_t len;
	char *text = (char *)slurp(path, &len);
	assert_non_null(text);
	text[len] = '\0';
	table_parse(t, text);
}

/* ---- sysstat root1 ---------------------------------------------------------- */

static const char *const cpu_f[] = {"user", "nice", "system", "idle", "iowait",
				    "irq", "softirq", "steal", "guest", "guest_nice"};
static const char *const disk_f[] = {
	"rd_ios", "rd_merges", "rd_sectors", "rd_ticks", "wr_ios", "wr_merges", "wr_sectors",
	"wr_ticks", "in_flight", "io_ticks", "time_in_queue", "dc_ios", "dc_merges", "dc_sectors",
	"dc_ticks", "fl_ios", "fl_ticks",
};

/* Columns and values from /proc/stat and /proc/diskstats text, declared
 * the way the sources do (ticks wrap at 32 bits, in_flight is a gauge). */
struct frames {
	struct vms_schema *s;
	uint64_t vals[1024];
	uint32_t n;
};

static void add_col(struct vms_schema_builder *b, struct frames *fr, uint64_t v, uint8_t kind,
		    uint8_t wrap, const char *group, const char *a, const char *c)
{
	struct vms_coldef d = {.kind = kind, .unit = VMS_UNIT_COUNT, .wrap_bits = wrap};
	assert_true(vms_schema_addf(b, &d, "%s.%s.%s", group, a, c) >= 0);
	fr->vals[fr->n++] = v;
}

static void root1_frames(struct frames *fr)
{
	struct vms_schema_builder b;
	char line[8192];
	vms_schema_builder_init(&b);
	fr->n = 0;
	FILE *f = fopen(fixture_path("rates/sysstat-root1/stat"), "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char name[32];
		unsigned long long v[10];
		if (strncmp(line, "cpu", 3) != 0)
			continue;
		int n = sscanf(line, "%31s %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", name, &v[0],
			       &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]);
		assert_int_equal(n, 11);
		const char *id = strcmp(name, "cpu") == 0 ? "all" : name + 3;
		for (int k = 0; k < 10; k++)
			add_col(&b, fr, v[k], VMS_KIND_COUNTER, 64, "cpu", id, cpu_f[k]);
	}
	fclose(f);
	f = fopen(fixture_path("rates/sysstat-root1/diskstats"), "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char name[64];
		unsigned long long v[17];
		unsigned maj, min;
		int n = sscanf(line, "%u %u %63s %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu",
			       &maj, &min, name, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7],
			       &v[8], &v[9], &v[10], &v[11], &v[12], &v[13], &v[14], &v[15], &v[16]);
		int stats = n - 3;
		/* 11, 15 (discards) or 17 (flushes) stats; a 14-stat line is
		 * read as 11, as iostat does */
		int use = stats >= 17 ? 17 : stats >= 15 ? 15 : stats >= 11 ? 11 : 0;
		for (int k = 0; k < use; k++) {
			bool ticks = strstr(disk_f[k], "ticks") || strcmp(disk_f[k], "time_in_queue") == 0;
			add_col(&b, fr, v[k], k == 8 ? VMS_KIND_GAUGE : VMS_KIND_COUNTER,
				k == 8 ? 0 : ticks ? 32 : 64, "disk", name, disk_f[k]);
		}
	}
	fclose(f);
	assert_int_equal(vms_schema_finish(&b, 1, 0, &fr->s), 0);
	vms_schema_builder_free(&b);
}

/* uptime in ns, from "7192.55 29212.05" */
static uint64_t root1_uptime_ns(void)
{
	size_t len;
	char *u = fixture_read("rates/sysstat-root1/uptime", &len);
	unsigned long s, cs;
	assert_non_null(u);
	assert_int_equal(sscanf(u, "%lu.%2lu", &s, &cs), 2);
	free(u);
	return (uint64_t)s * 1000000000ull + (uint64_t)cs * 10000000ull;
}

/* The "since boot" report: one interval from all-zero counters at t = 0
 * to the files' values at t = uptime. */
static void root1_rates(struct table *out)
{
	struct frames fr;
	root1_frames(&fr);
	struct vms_frame *f0 = calloc(1, vms_frame_size(fr.n)), *f1 = calloc(1, vms_frame_size(fr.n));
	f0->seq = 1;
	f1->seq = 2;
	f0->gen = f1->gen = 1;
	f0->ncols = f1->ncols = fr.n;
	f0->t_mono_ns = 1000;
	f1->t_mono_ns = 1000 + root1_uptime_ns();
	for (uint32_t i = 0; i < fr.n; i++) {
		f0->v[i] = 0;
		f1->v[i] = fr.vals[i];
	}
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/root1-rates.csv", test_tmp);
	struct vms_rates *r;
	assert_int_equal(vms_rates_open(&r, path, VMS_OUT_CSV), 0);
	assert_int_equal(vms_rates_frame(r, fr.s, f0), 0);
	assert_int_equal(vms_rates_frame(r, fr.s, f1), 0);
	assert_int_equal(vms_rates_rows(r), 1);
	assert_int_equal(vms_rates_close(r), 0);
	table_read(out, path);
	assert_int_equal(out->nrows, 1);
	assert_string_equal(table_get(out, 0, "interval_s"), "7192.550000");
	assert_string_equal(table_get(out, 0, "rate_flags"), "0");
	free(f0);
	free(f1);
	vms_schema_unref(fr.s);
}

/* Compare a whitespace-separated sysstat report (header line starting
 * with `Device`) with our row; `rename` maps their names to ours. */
static unsigned compare_iostat(const struct table *t, const char *file, const char *const *rename)
{
	size_t len;
	char *text = fixture_read(file, &len);
	char *hdr[64], *save = NULL, *line;
	unsigned nh = 0, compared = 0, rows = 0;
	assert_non_null(text);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *tok[64], *s2 = NULL;
		unsigned n = 0;
		for (char *w = strtok_r(line, " \t", &s2); w && n < 64; w = strtok_r(NULL, " \t", &s2))
			tok[n++] = w;
		if (n && strcmp(tok[0], "Device") == 0) {
			memcpy(hdr, tok, n * sizeof(*tok));
			nh = n;
			continue;
		}
		if (!nh || n != nh)
			continue;
		rows++;
		for (unsigned i = 1; i < n; i++) {
			const char *col = hdr[i];
			for (unsigned k = 0; rename && rename[k]; k += 2)
				if (strcmp(rename[k], col) == 0)
					col = rename[k + 1];
			if (strcmp(col, "-") == 0)
				continue; /* not a rate */
			char name[128];
			snprintf(name, sizeof(name), "disk.%s.%s", tok[0], col);
			const char *ours = table_get(t, 0, name);
			if (!ours) {
				/* a field this kernel line does not have: sysstat
				 * prints 0, we have no column (no faked zeros) */
				if (strcmp(tok[i], "0.00") != 0)
					fail_msg("%s: sysstat %s, no column here", name, tok[i]);
				continue;
			}
			if (strcmp(ours, tok[i]) != 0)
				fail_msg("%s: sysstat %s, ours %s", name, tok[i], ours);
			compared++;
		}
	}
	assert_int_equal(rows, 5); /* sda sdb sdq sdr sds */
	free(text);
	return compared;
}

static void test_sysstat_iostat(void **state)
{
	(void)state;
	struct table t;
	root1_rates(&t);
	unsigned n = compare_iostat(&t, "rates/sysstat-root1/expected.iostat-x-0", NULL);
	/* 5 disks x (r w: 12, aqu-sz, %util) + 4 disks x 6 discard columns */
	assert_int_equal(n, 5 * 14 + 4 * 6);
	/* tps, kB_read/s, kB_wrtn/s for 5 disks, kB_dscd/s for 4; the
	 * kB_read etc. totals since boot are not rates */
	static const char *const basic[] = {"kB_read/s", "rkB/s", "kB_wrtn/s", "wkB/s", "kB_dscd/s",
					    "dkB/s", "kB_read", "-", "kB_wrtn", "-", "kB_dscd", "-", NULL};
	n = compare_iostat(&t, "rates/sysstat-root1/expected.iostat-0", basic);
	assert_int_equal(n, 5 * 3 + 4);
	table_free(&t);
}

static void test_sysstat_mpstat(void **state)
{
	(void)state;
	struct table t;
	root1_rates(&t);
	size_t len;
	char *text = fixture_read("rates/sysstat-root1/expected.mpstat-T-JSON", &len);
	static const char *const keys[] = {"usr", "nice", "sys", "iowait", "irq",
					   "soft", "steal", "guest", "gnice", "idle"};
	unsigned cpus = 0, compared = 0;
	assert_non_null(text);
	for (char *p = strstr(text, "{\"cpu\": \""); p; p = strstr(p + 1, "{\"cpu\": \"")) {
		char id[16];
		assert_int_equal(sscanf(p, "{\"cpu\": \"%15[^\"]\"", id), 1);
		cpus++;
		for (size_t k = 0; k < VMS_ARRAY_SIZE(keys); k++) {
			char key[32], want[32], name[64];
			snprintf(key, sizeof(key), "\"%s\": ", keys[k]);
			char *q = strstr(p, key);
			assert_non_null(q);
			assert_int_equal(sscanf(q + strlen(key), "%31[0-9.]", want), 1);
			snprintf(name, sizeof(name), "cpu.%s.%%%s", id, keys[k]);
			const char *ours = table_get(&t, 0, name);
			assert_non_null(ours);
			if (strcmp(ours, want) != 0)
				fail_msg("%s: mpstat %s, ours %s", name, want, ours);
			compared++;
		}
	}
	assert_int_equal(cpus, 10);
	assert_int_equal(compared, 100);
	free(text);
	table_free(&t);
}

/* ---- wraps, resets, gaps, missing values, generations ---------------------- */

#define C64(n) {n, VMS_KIND_COUNTER, VMS_UNIT_COUNT, 64, 0}
#define C32(n) {n, VMS_KIND_COUNTER, VMS_UNIT_MS, 32, 0}

static const struct colspec s1[] = {
	C64("disk.sda.rd_ios"), C32("disk.sda.rd_ticks"), C64("net.eth0.rx_bytes"),
	C64("net.eth0.rx_packets"), C64("stat.ctxt"), {"load.1m", VMS_KIND_GAUGE, VMS_UNIT_LOAD, 0, 2},
	C64("vm.a.cpu_time"), C64("cpu.1.user"), C64("cpu.1.nice"), C64("cpu.1.system"),
	C64("cpu.1.idle"), C64("cpu.1.iowait"), C64("cpu.1.irq"), C64("cpu.1.softirq"),
};
/* generation 2: stat.ctxt gone, disk.sdb appeared */
static const struct colspec s2[] = {
	C64("disk.sda.rd_ios"), C32("disk.sda.rd_ticks"), C64("disk.sdb.rd_ios"),
	C64("net.eth0.rx_bytes"), C64("net.eth0.rx_packets"),
	{"load.1m", VMS_KIND_GAUGE, VMS_UNIT_LOAD, 0, 2}, C64("vm.a.cpu_time"), C64("cpu.1.user"),
	C64("cpu.1.nice"), C64("cpu.1.system"), C64("cpu.1.idle"), C64("cpu.1.iowait"),
	C64("cpu.1.irq"), C64("cpu.1.softirq"),
};

#define N VMS_VALUE_NONE
#define S 1000000000ull
static const struct {
	uint64_t seq, t, missed;
	int gen;
	uint64_t v[14];
} seqn[] = {
	/* rd_ios rd_ticks rx_bytes pkts ctxt load vm user nice sys idle iowait irq soft */
	{1, 10 * S, 0, 1, {100, 4294967196u, 4294966272u, 10, 1000, 316, 0, 100, 0, 50, 800, 10, 0, 0}},
	/* +2 s: rd_ticks and rx_bytes wrap (32-bit, and 64-bit below 2^32),
	 * iowait goes back (counts as 0, no flag) */
	{2, 12 * S, 0, 1, {110, 50, 1024, 12, 1100, 320, 5 * S, 150, 0, 60, 880, 5, 0, 0}},
	/* +1 s: rx_bytes jumps to 2^40 (a plain increase) */
	{3, 13 * S, 0, 1, {120, 60, 1ull << 40, 14, 1200, 321, 6 * S, 150, 0, 60, 880, 5, 0, 0}},
	/* +1 s: rx_bytes back to 7 from above 2^32: a reset */
	{4, 14 * S, 0, 1, {130, 70, 7, 16, 1300, N, 7 * S, 160, 0, 60, 970, 5, 0, 0}},
	/* +2 s after 1 missed tick; rd_ios missing */
	{5, 16 * S, 1, 1, {N, 80, 2055, 20, 1400, 322, 8 * S, 170, 0, 70, 1050, 5, 0, 0}},
	/* seq jump (a lost frame) */
	{7, 17 * S, 0, 1, {140, 90, 3079, 21, 1500, 323, 9 * S, 180, 0, 70, 1140, 5, 0, 0}},
	/* generation 2, +1 s */
	{8, 18 * S, 0, 2, {150, 100, 500, 4103, 22, 324, 10 * S, 190, 0, 80, 1220, 5, 0, 0}},
	/* +1 s */
	{9, 19 * S, 0, 2, {160, 120, 510, 5127, 23, 325, 11 * S, 200, 0, 80, 1310, 5, 0, 0}},
};
#undef N

static void test_rates_edge_cases(void **state)
{
	(void)state;
	struct vms_schema *g1 = mk_schema(1, s1, VMS_ARRAY_SIZE(s1));
	struct vms_schema *g2 = mk_schema(2, s2, VMS_ARRAY_SIZE(s2));
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/edge.csv", test_tmp);
	struct vms_rates *r;
	assert_int_equal(vms_rates_open(&r, path, VMS_OUT_CSV), 0);
	assert_int_equal(vms_rates_declare(r, g1), 0);
	assert_int_equal(vms_rates_declare(r, g2), 0);
	struct vms_frame *f = calloc(1, vms_frame_size(16));
	for (size_t i = 0; i < VMS_ARRAY_SIZE(seqn); i++) {
		struct vms_schema *s = seqn[i].gen == 1 ? g1 : g2;
		*f = (struct vms_frame){.seq = seqn[i].seq, .t_mono_ns = seqn[i].t, .gen = s->gen,
					.missed_ticks = (uint32_t)seqn[i].missed, .ncols = s->ncols};
		memcpy(f->v, seqn[i].v, s->ncols * sizeof(uint64_t));
		assert_int_equal(vms_rates_frame(r, s, f), 0);
	}
	assert_int_equal(vms_rates_close(r), 0);
	struct table t;
	table_read(&t, path);
	assert_int_equal(t.nrows, VMS_ARRAY_SIZE(seqn) - 1);
	/* the header is the union of both generations, in order of appearance */
	assert_string_equal(t.head[5], "disk.sda.r/s");
	assert_null(table_get(&t, 0, "disk.sda.tps")); /* no write columns */
	assert_non_null(table_get(&t, 0, "disk.sdb.r/s"));
	assert_non_null(table_get(&t, 0, "stat.cswch/s"));
	assert_null(table_get(&t, 0, "cpu.1.%steal")); /* a 7-field kernel: no steal column */

	/* row 0 (seq 2): wraps */
	assert_string_equal(table_get(&t, 0, "rate_flags"), "1");
	assert_string_equal(table_get(&t, 0, "interval_s"), "2.000000");
	assert_string_equal(table_get(&t, 0, "disk.sda.r/s"), "5.00");      /* 10 / 2 */
	assert_string_equal(table_get(&t, 0, "disk.sda.r_await"), "15.00"); /* (2^32 - 4294967196 + 50) / 10 */
	assert_string_equal(table_get(&t, 0, "net.eth0.rxkB/s"), "1.00");   /* 2048 / 1024 / 2 */
	assert_string_equal(table_get(&t, 0, "net.eth0.rxpck/s"), "1.00");
	assert_string_equal(table_get(&t, 0, "stat.cswch/s"), "50.00");
	assert_string_equal(table_get(&t, 0, "load.1m"), "3.20");
	/* a VM's CPU time as a percentage of one CPU: 5 s in 2 s */
	assert_null(table_get(&t, 0, "vm.a.cpu_time/s"));
	assert_string_equal(table_get(&t, 0, "vm.a.%cpu"), "250.00");
	/* cpu: user 50, sys 10, idle 80, iowait went back (0): total 140 */
	assert_string_equal(table_get(&t, 0, "cpu.1.%usr"), "35.71");
	assert_string_equal(table_get(&t, 0, "cpu.1.%sys"), "7.14");
	assert_string_equal(table_get(&t, 0, "cpu.1.%iowait"), "0.00");
	assert_string_equal(table_get(&t, 0, "cpu.1.%idle"), "57.14");

	/* row 1 (seq 3): plain, 64-bit increase to 2^40 */
	assert_string_equal(table_get(&t, 1, "rate_flags"), "0");
	/* tickless CPU: nothing moved -> %idle 100 (mpstat) */
	assert_string_equal(table_get(&t, 1, "cpu.1.%usr"), "0.00");
	assert_string_equal(table_get(&t, 1, "cpu.1.%idle"), "100.00");

	/* row 2 (seq 4): reset of rx_bytes: empty, flag 2; a missing gauge */
	assert_string_equal(table_get(&t, 2, "rate_flags"), "2");
	assert_string_equal(table_get(&t, 2, "net.eth0.rxkB/s"), "");
	assert_string_equal(table_get(&t, 2, "net.eth0.rxpck/s"), "2.00");
	assert_string_equal(table_get(&t, 2, "load.1m"), "");
	assert_string_equal(table_get(&t, 2, "disk.sda.r/s"), "10.00");

	/* row 3 (seq 5): a missed tick: gap; rd_ios missing: empty */
	assert_string_equal(table_get(&t, 3, "rate_flags"), "4");
	assert_string_equal(table_get(&t, 3, "disk.sda.r/s"), "");
	assert_string_equal(table_get(&t, 3, "disk.sda.r_await"), "");
	assert_string_equal(table_get(&t, 3, "net.eth0.rxkB/s"), "1.00"); /* (2055 - 7) / 1024 / 2 */

	/* row 4 (seq 7 after 5): a lost frame: gap; rd_ios was missing in
	 * the previous frame: the rate is over its real interval, since seq
	 * 4 (10 ios in 3 s), not empty */
	assert_string_equal(table_get(&t, 4, "rate_flags"), "4");
	assert_string_equal(table_get(&t, 4, "disk.sda.r/s"), "3.33");
	/* rd_ticks was there in seq 5: its Δ spans another interval than
	 * rd_ios's, so no ratio of the two */
	assert_string_equal(table_get(&t, 4, "disk.sda.r_await"), "");

	/* row 5 (seq 8): the new generation: gap; continuing columns are
	 * rates across it, new ones empty, vanished ones empty */
	assert_string_equal(table_get(&t, 5, "rate_flags"), "4");
	assert_string_equal(table_get(&t, 5, "disk.sda.r/s"), "10.00");
	assert_string_equal(table_get(&t, 5, "disk.sdb.r/s"), "");
	assert_string_equal(table_get(&t, 5, "stat.cswch/s"), "");
	assert_string_equal(table_get(&t, 5, "net.eth0.rxkB/s"), "1.00");

	/* row 6 (seq 9): the new column has its first rate */
	assert_string_equal(table_get(&t, 6, "rate_flags"), "0");
	assert_string_equal(table_get(&t, 6, "disk.sdb.r/s"), "10.00");
	assert_string_equal(table_get(&t, 6, "disk.sda.r_await"), "2.00"); /* 20 ms / 10 */
	table_free(&t);
	free(f);
	vms_schema_unref(g1);
	vms_schema_unref(g2);
}

/* Without a declared union the first generation's header stays and later
 * ones are projected onto it. */
static void test_rates_projection(void **state)
{
	(void)state;
	struct vms_schema *g1 = mk_schema(1, s1, VMS_ARRAY_SIZE(s1));
	struct vms_schema *g2 = mk_schema(2, s2, VMS_ARRAY_SIZE(s2));
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/proj.csv", test_tmp);
	struct vms_rates *r;
	assert_int_equal(vms_rates_open(&r, path, VMS_OUT_CSV), 0);
	struct vms_frame *f = calloc(1, vms_frame_size(16));
	for (size_t i = 5; i < VMS_ARRAY_SIZE(seqn); i++) {
		struct vms_schema *s = seqn[i].gen == 1 ? g1 : g2;
		*f = (struct vms_frame){.seq = seqn[i].seq, .t_mono_ns = seqn[i].t, .gen = s->gen,
					.ncols = s->ncols};
		memcpy(f->v, seqn[i].v, s->ncols * sizeof(uint64_t));
		assert_int_equal(vms_rates_frame(r, s, f), 0);
	}
	assert_int_equal(vms_rates_close(r), 0);
	struct table t;
	table_read(&t, path);
	assert_int_equal(t.nrows, 2);
	assert_null(table_get(&t, 0, "disk.sdb.r/s"));
	assert_string_equal(table_get(&t, 0, "stat.cswch/s"), "");
	assert_string_equal(table_get(&t, 1, "disk.sda.r/s"), "10.00");
	table_free(&t);
	free(f);
	vms_schema_unref(g1);
	vms_schema_unref(g2);
}


/* ---- per-VM columns, and columns that come every Nth frame ------------------- */

#define G64(n) {n, VMS_KIND_GAUGE, VMS_UNIT_BYTES, 0, 0}
static const struct colspec svm[] = {
	C64("vm.web01.cpu_time"), C64("vm.web01.cpu_user"), C64("vm.web01.cpu_system"),
	C64("vm.web01.vcpu0.time"), C64("vm.web01.vcpu0.delay"), C64("vm.web01.vcpu0.slices"),
	C64("vm.web01.net.vnet3.rx_bytes"), C64("vm.web01.net.vnet3.rx_packets"),
	C64("vm.web01.net.vnet3.tx_bytes"), C64("vm.web01.io.read_bytes"), C64("vm.web01.io.write_bytes"),
	G64("vm.web01.mem.rss"), C64("vm.web01.block.vda.rd_bytes"), C64("vm.web01.lv.vcpu0.delay"),
	C64("stat.ctxt"),
};

static void test_rates_vm_and_every(void **state)
{
	(void)state;
	struct vms_schema *g = mk_schema(1, svm, VMS_ARRAY_SIZE(svm));
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/vm.csv", test_tmp);
	struct vms_rates *r;
	assert_int_equal(vms_rates_open(&r, path, VMS_OUT_CSV), 0);
	struct vms_frame *f = calloc(1, vms_frame_size(16));
	const uint64_t N = VMS_VALUE_NONE;
	for (uint64_t i = 0; i < 7; i++) {
		*f = (struct vms_frame){.seq = i + 1, .t_mono_ns = (10 + i) * S, .gen = 1, .ncols = g->ncols};
		uint64_t v[] = {
			/* 0.5 s of CPU per s: 0.3 user, 0.2 system */
			i * 500000000, i * 300000000, i * 200000000,
			/* the vCPU ran 0.4 s and waited 0.1 s per s, 100 slices */
			i * 400000000, i * 100000000, i * 100,
			/* 2048 bytes and 4 packets in, 1024 bytes out per s */
			i * 2048, i * 4, i * 1024,
			/* 1 MiB read and 0.5 MiB written per s */
			i * 1048576, i * 524288,
			/* a gauge read every 3rd frame (mem.rss: detail_interval) */
			i % 3 == 0 ? 200000000 + i : N,
			/* a slow counter: every 3rd frame (i = 0, 3, 6), +3 MiB each time */
			i % 3 == 0 ? i * 1048576 : N,
			/* the crosscheck copy: generic rules */
			i * 100000000,
			/* a source with every: 2 (i = 0, 2, 4, 6): 1000 switches per s */
			i % 2 == 0 ? i * 1000 : N,
		};
		memcpy(f->v, v, sizeof(v));
		assert_int_equal(vms_rates_frame(r, g, f), 0);
	}
	assert_int_equal(vms_rates_close(r), 0);
	struct table t;
	table_read(&t, path);
	assert_int_equal(t.nrows, 6);
	for (unsigned row = 0; row < 6; row++) {
		assert_string_equal(table_get(&t, row, "vm.web01.%cpu"), "50.00");
		assert_string_equal(table_get(&t, row, "vm.web01.%usr"), "30.00");
		assert_string_equal(table_get(&t, row, "vm.web01.%sys"), "20.00");
		assert_string_equal(table_get(&t, row, "vm.web01.vcpu0.%run"), "40.00");
		assert_string_equal(table_get(&t, row, "vm.web01.vcpu0.%steal"), "10.00");
		assert_string_equal(table_get(&t, row, "vm.web01.vcpu0.slices/s"), "100.00");
		assert_string_equal(table_get(&t, row, "vm.web01.net.vnet3.rxkB/s"), "2.00");
		assert_string_equal(table_get(&t, row, "vm.web01.net.vnet3.rxpck/s"), "4.00");
		assert_string_equal(table_get(&t, row, "vm.web01.net.vnet3.txkB/s"), "1.00");
		assert_string_equal(table_get(&t, row, "vm.web01.io.rkB/s"), "1024.00");
		assert_string_equal(table_get(&t, row, "vm.web01.io.wkB/s"), "512.00");
		assert_string_equal(table_get(&t, row, "vm.web01.lv.vcpu0.delay/s"), "100000000.00");
		/* a gauge as it is, in the frames that have it: not held, not
		 * interpolated */
		const char *rss = table_get(&t, row, "vm.web01.mem.rss");
		char want[32] = "";
		if ((row + 1) % 3 == 0)
			snprintf(want, sizeof(want), "%u", 200000000 + row + 1);
		assert_non_null(rss);
		assert_string_equal(rss, want);
		/* the slow counter: over its 3 s, in the frames that have it */
		const char *b = table_get(&t, row, "vm.web01.block.vda.rd_bytes/s");
		assert_string_equal(b, (row + 1) % 3 == 0 ? "1048576.00" : "");
		/* every 2nd frame: over 2 s */
		const char *c = table_get(&t, row, "stat.cswch/s");
		assert_string_equal(c, (row + 1) % 2 == 0 ? "1000.00" : "");
		assert_string_equal(table_get(&t, row, "interval_s"), "1.000000");
	}
	assert_null(table_get(&t, 0, "vm.web01.cpu_time/s"));
	table_free(&t);
	free(f);
	vms_schema_unref(g);
}

VMS_TEST_MAIN(tmp_setup, tmp_teardown,
	test_sysstat_iostat, test_sysstat_mpstat, test_rates_edge_cases, test_rates_projection,
	test_rates_vm_and_every)

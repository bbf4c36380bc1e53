/* SPDX-License-Identifier: MIT */
/* test_source_mem.c - the meminfo, vmstat and psi sources driven through
 * their ops against proc-root directories (tests/fixtures/mem, real files
 * of kernels 2.6.29 to 5.x, provenance in tests/fixtures/PROVENANCE.md)
 * and against this machine's /proc, as the loop drives them.
 *
 * Every sampled value is checked against an independent reader of the
 * same text (sscanf); on the live /proc the test reads the kernel's file
 * itself just before and just after the source's read: a counter must lie
 * between the two readings, a gauge equal them when they agree.  The
 * allocator is wrapped (-Wl,--wrap) to prove that sample() never
 * allocates. */
#include <fcntl.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#include "allocwrap.h"
#include "config.h"
#include "rates.h"
#include "source.h"
#include "srcdrv.h"

extern const struct vms_source_ops vms_source_meminfo;
extern const struct vms_source_ops vms_source_vmstat;
extern const struct vms_source_ops vms_source_psi;

/* ---- an independent reader ------------------------------------------------ */

/* mem.X: the meminfo line whose key, with "(" as "_" and without ")", is
 * X, in bytes if its unit is kB; vmstat.X: the line "X N". */
static bool ref_kv(const char *file, size_t len, const char *colname, uint64_t *out)
{
	bool mem = strncmp(colname, "mem.", 4) == 0;
	const char *want = colname + (mem ? 4 : 7);
	if (!mem)
		assert_true(strncmp(colname, "vmstat.", 7) == 0);
	char *copy = strndup(file, len), *save = NULL;
	bool found = false;
	for (char *ln = strtok_r(copy, "\n", &save); ln && !found; ln = strtok_r(NULL, "\n", &save)) {
		char key[128], name[128], unit[8] = "";
		unsigned long long v;
		if (mem ? sscanf(ln, "%127[^:]: %llu %7s", key, &v, unit) < 2 : sscanf(ln, "%127s %llu", key, &v) != 2)
			continue;
		size_t o = 0;
		for (const char *k = key; *k; k++)
			if (*k != ')')
				name[o++] = *k == '(' ? '_' : *k;
		name[o] = '\0';
		if (strcmp(mem ? name : key, want) == 0) {
			*out = strcmp(unit, "kB") == 0 ? v * 1024 : v;
			found = true;
		}
	}
	free(copy);
	return found;
}

/* psi.R.K.total: "K ... total=N" of <dir>/pressure/R. */
static bool ref_psi(const char *dir, const char *colname, uint64_t *out)
{
	char res[16], kind[8], path[4096];
	assert_int_equal(sscanf(colname, "psi.%15[^.].%7[^.].total", res, kind), 2);
	snprintf(path, sizeof(path), "%s/pressure/%s", dir, res);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	char line[256];
	bool found = false;
	while (!found && fgets(line, sizeof(line), f)) {
		char k[8];
		unsigned long long t;
		const char *tot = strstr(line, "total=");
		if (sscanf(line, "%7s", k) == 1 && strcmp(k, kind) == 0 && tot && sscanf(tot, "total=%llu", &t) == 1) {
			*out = t;
			found = true;
		}
	}
	fclose(f);
	return found;
}

static unsigned file_lines(const char *rel)
{
	size_t len;
	char *b = fixture_read(rel, &len);
	unsigned n = 0;
	for (size_t i = 0; i < len; i++)
		n += b[i] == '\n';
	free(b);
	return n;
}

static void check_kv_fixture(const struct drv *d, const char *rel)
{
	size_t len;
	char *b = fixture_read(rel, &len);
	drv_check_all(d, ref_kv, b, len);
	free(b);
}

/* The default vmstat selection (config.c), as the loop would pass it. */
static struct drv *drv_vmstat(const char *dir, bool all)
{
	struct vms_source_conf sc = {0};
	if (all)
		assert_int_equal(vms_globs_add(&sc.include, "*"), 0);
	else
		for (unsigned i = 0; i < VMS_VMSTAT_NDEFAULT; i++)
			assert_int_equal(vms_globs_add(&sc.include, vms_vmstat_default[i]), 0);
	return drv_new_conf(dir, &vms_source_vmstat, &sc);
}

static const char *const fixtures[] = {
	"android-2.6.29", "zte-modem-4.1.25", "procfs", "coreos-4.18",
	"sysstat-root1",  "sysstat-root2",    "sysstat-root6", "sysstat-root7",
};

/* ---- tests ------------------------------------------------------------------- */

static void test_meminfo_fixtures(void **state)
{
	(void)state;
	char rel[128];
	for (size_t i = 0; i < VMS_ARRAY_SIZE(fixtures); i++) {
		snprintf(rel, sizeof(rel), "mem/%s", fixtures[i]);
		struct drv *d = drv_new(root(rel), &vms_source_meminfo);
		assert_int_equal(drv_declare(d), 0);
		snprintf(rel, sizeof(rel), "mem/%s/meminfo", fixtures[i]);
		/* one column per line: every field this kernel prints, no more */
		assert_int_equal(d->schema->ncols, file_lines(rel));
		assert_int_equal(drv_sample(d), 0);
		assert_int_equal(d->parse_errors, 0);
		check_kv_fixture(d, rel);
		for (uint32_t c = 0; c < d->schema->ncols; c++)
			assert_int_equal(d->schema->cols[c].kind, VMS_KIND_GAUGE);
		drv_close(d);
	}
	struct drv *d = drv_new(root("mem/sysstat-root1"), &vms_source_meminfo);
	assert_int_equal(drv_declare(d), 0);
	assert_int_equal(drv_sample(d), 0);
	assert_int_equal(val(d, "mem.MemTotal"), UINT64_C(8144960) * 1024);
	assert_int_equal(val(d, "mem.Active_anon"), UINT64_C(2734888) * 1024);
	assert_int_equal(val(d, "mem.Inactive_file"), UINT64_C(1686264) * 1024);
	assert_int_equal(d->schema->cols[col(d, "mem.MemTotal")].unit, VMS_UNIT_BYTES);
	assert_int_equal(d->schema->cols[col(d, "mem.HugePages_Total")].unit, VMS_UNIT_COUNT);
	assert_int_equal(d->schema->cols[col(d, "mem.Hugepagesize")].unit, VMS_UNIT_BYTES);
	assert_true(col(d, "mem.Active(anon)") < 0);
	drv_close(d);
	/* 2.6.29: no MemAvailable column, rather than a 0 */
	d = drv_new(root("mem/android-2.6.29"), &vms_source_meminfo);
	assert_int_equal(drv_declare(d), 0);
	assert_true(col(d, "mem.MemAvailable") < 0);
	assert_true(col(d, "mem.Shmem") < 0);
	assert_true(col(d, "mem.MemFree") >= 0);
	drv_close(d);
}

static void test_vmstat_selection(void **state)
{
	(void)state;
	static const char *const vfix[] = {"zte-modem-4.1.25", "coreos-4.18", "sysstat-root1", "sysstat-root7"};
	char rel[128];
	for (size_t i = 0; i < VMS_ARRAY_SIZE(vfix); i++) {
		snprintf(rel, sizeof(rel), "mem/%s", vfix[i]);
		struct drv *all = drv_vmstat(root(rel), true), *def = drv_vmstat(root(rel), false);
		assert_int_equal(drv_declare(all), 0);
		assert_int_equal(drv_declare(def), 0);
		snprintf(rel, sizeof(rel), "mem/%s/vmstat", vfix[i]);
		assert_int_equal(all->schema->ncols, file_lines(rel));
		/* the default: exactly the lines its patterns match, in file order */
		size_t len;
		char *b = fixture_read(rel, &len), *save = NULL;
		uint32_t n = 0;
		for (char *ln = strtok_r(b, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save)) {
			*strchr(ln, ' ') = '\0';
			bool want = false;
			for (unsigned k = 0; k < VMS_VMSTAT_NDEFAULT; k++)
				want |= fnmatch(vms_vmstat_default[k], ln, 0) == 0;
			if (!want)
				continue;
			char name[160];
			snprintf(name, sizeof(name), "vmstat.%s", ln);
			assert_string_equal(def->schema->cols[n].name, name);
			n++;
		}
		free(b);
		assert_int_equal(def->schema->ncols, n);
		assert_int_equal(drv_sample(all), 0);
		assert_int_equal(drv_sample(def), 0);
		check_kv_fixture(all, rel);
		check_kv_fixture(def, rel);
		drv_close(all);
		drv_close(def);
	}
	/* kinds and units */
	struct drv *d = drv_vmstat(root("mem/sysstat-root1"), true);
	assert_int_equal(drv_declare(d), 0);
	const struct vms_col *c = d->schema->cols;
	assert_int_equal(c[col(d, "vmstat.nr_free_pages")].kind, VMS_KIND_GAUGE);
	assert_int_equal(c[col(d, "vmstat.nr_dirtied")].kind, VMS_KIND_COUNTER);
	/* the state item without nr_: it goes down (a live test saw it) */
	assert_int_equal(c[col(d, "vmstat.workingset_nodes")].kind, VMS_KIND_GAUGE);
	assert_int_equal(c[col(d, "vmstat.workingset_refault")].kind, VMS_KIND_COUNTER);
	assert_int_equal(c[col(d, "vmstat.pgfault")].kind, VMS_KIND_COUNTER);
	assert_int_equal(c[col(d, "vmstat.pgfault")].wrap_bits, 64);
	assert_int_equal(c[col(d, "vmstat.pgpgin")].unit, VMS_UNIT_KIB);
	assert_int_equal(c[col(d, "vmstat.oom_kill")].kind, VMS_KIND_COUNTER);
	drv_close(d);
	/* the default on 4.1: reclaim per zone matches the globs */
	d = drv_vmstat(root("mem/zte-modem-4.1.25"), false);
	assert_int_equal(drv_declare(d), 0);
	assert_int_equal(drv_sample(d), 0);
	assert_int_equal(val(d, "vmstat.pgscan_kswapd_normal"), 36293);
	assert_true(col(d, "vmstat.pgscan_kswapd") < 0);
	assert_true(col(d, "vmstat.oom_kill") < 0); /* 4.13+ */
	assert_true(col(d, "vmstat.nr_free_pages") < 0);
	drv_close(d);
}

static void check_psi(const struct drv *d, const char *dir)
{
	for (uint32_t i = 0; i < d->schema->ncols; i++) {
		uint64_t want;
		const char *n = d->schema->cols[i].name;
		if (!ref_psi(dir, n, &want))
			fail_msg("column %s has no line", n);
		if (d->slots[i] != want)
			fail_msg("%s = %llu, file says %llu", n, (unsigned long long)d->slots[i],
				 (unsigned long long)want);
	}
}

static void test_psi_fixtures(void **state)
{
	(void)state;
	static const struct {
		const char *name, *cols;
	} f[] = {
		/* before 5.13 cpu has no full line; no irq file before 6.1 */
		{"mem/sysstat-root1", "psi.cpu.some.total psi.memory.some.total psi.memory.full.total "
				      "psi.io.some.total psi.io.full.total"},
		{"mem/procfs", "psi.cpu.some.total psi.memory.some.total psi.memory.full.total "
			       "psi.io.some.total psi.io.full.total"},
	};
	for (size_t i = 0; i < VMS_ARRAY_SIZE(f); i++) {
		struct drv *d = drv_new(root(f[i].name), &vms_source_psi);
		assert_int_equal(drv_declare(d), 0);
		char names[512] = "";
		for (uint32_t c = 0; c < d->schema->ncols; c++) {
			strcat(names, c ? " " : "");
			strcat(names, d->schema->cols[c].name);
			assert_int_equal(d->schema->cols[c].kind, VMS_KIND_COUNTER);
			assert_int_equal(d->schema->cols[c].unit, VMS_UNIT_US);
		}
		assert_string_equal(names, f[i].cols);
		assert_int_equal(drv_sample(d), 0);
		check_psi(d, root(f[i].name));
		drv_close(d);
	}
	/* a kernel without PSI (sysstat's root6: no /proc/pressure): the
	 * source does not open, so there is no column at all */
	drv_open_missing(root("mem/sysstat-root6"), &vms_source_psi);
}

/* text written as <dir>/<file>, then a sample: it returns want, and
 * when that is 0, counts errs damaged lines. */
static void edit(struct drv *d, const char *dir, const char *file, const char *text, int want, uint32_t errs)
{
	drv_put(dir, file, text, strlen(text));
	assert_int_equal(drv_sample(d), want);
	if (want == 0)
		assert_int_equal(d->parse_errors, errs);
}

/* A driver of ops on <dir>/<file> holding text: ncols columns, sampled. */
static struct drv *start(const char *dir, const char *file, const char *text, struct drv *d,
			 const struct vms_source_ops *ops, uint32_t ncols)
{
	drv_put(dir, file, text, strlen(text));
	if (!d)
		d = drv_new(dir, ops);
	assert_int_equal(drv_declare(d), 0);
	assert_int_equal(d->schema->ncols, ncols);
	assert_int_equal(drv_sample(d), 0);
	return d;
}

/* A file of the source in a temporary proc root: the edits of a tick. */
static void test_changes(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	const char *mi = "MemTotal: 100 kB\nMemFree: 50 kB\nHugePages_Total: 2\n";
	struct drv *d = start(dir, "meminfo", mi, NULL, &vms_source_meminfo, 3);
	assert_int_equal(val(d, "mem.MemFree"), 51200);
	/* a damaged line: its column is missing, counted, the others read */
	edit(d, dir, "meminfo", "MemTotal: 100 kB\nMemFree: 5x0 kB\nHugePages_Total: 3\n", 0, 1);
	assert_true(val(d, "mem.MemFree") == VMS_NONE);
	assert_int_equal(val(d, "mem.HugePages_Total"), 3);
	assert_int_equal(val(d, "mem.MemTotal"), 102400);
	/* the unit changed under a column: not believed */
	edit(d, dir, "meminfo", "MemTotal: 100 kB\nMemFree: 50\nHugePages_Total: 3\n", 0, 1);
	assert_true(val(d, "mem.MemFree") == VMS_NONE);
	/* a key given twice: the first is kept, the second counted */
	edit(d, dir, "meminfo", "MemTotal: 100 kB\nMemFree: 50 kB\nMemFree: 60 kB\nHugePages_Total: 3\n", 0, 1);
	assert_int_equal(val(d, "mem.MemFree"), 51200);
	/* a new key (a newer kernel's, or a driver's): a new schema */
	const char *e4 = "MemTotal: 100 kB\nMemFree: 50 kB\nMemAvailable: 70 kB\nHugePages_Total: 3\n";
	edit(d, dir, "meminfo", e4, VMS_RESCHEMA, 0);
	start(dir, "meminfo", e4, d, NULL, 4);
	assert_int_equal(val(d, "mem.MemAvailable"), 71680);
	/* a key gone without a damaged line: a new schema too */
	edit(d, dir, "meminfo", mi, VMS_RESCHEMA, 0);
	start(dir, "meminfo", mi, d, NULL, 3);
	drv_close(d);

	/* vmstat: a line it does not sample changes nothing; a new one does */
	const char *vs = "nr_free_pages 5\npgfault 10\npgmajfault 1\n";
	drv_put(dir, "vmstat", vs, strlen(vs));
	d = drv_vmstat(dir, false);
	assert_int_equal(drv_declare(d), 0);
	assert_int_equal(d->schema->ncols, 2);
	edit(d, dir, "vmstat", "nr_free_pages 7\npgfault 12\npgmajfault x\n", 0, 1);
	assert_int_equal(val(d, "vmstat.pgfault"), 12);
	assert_true(val(d, "vmstat.pgmajfault") == VMS_NONE);
	edit(d, dir, "vmstat", "nr_free_pages 7\npgfault 12\npgmajfault 2\noom_kill 0\n", VMS_RESCHEMA, 0);
	drv_close(d);

	/* psi: a damaged line is missing and counted; a full line that
	 * appears (or goes) is a new schema */
	const char *p0 = "some avg10=0.00 avg60=0.00 avg300=0.00 total=10\n";
	d = start(dir, "pressure/cpu", p0, NULL, &vms_source_psi, 1);
	assert_int_equal(val(d, "psi.cpu.some.total"), 10);
	edit(d, dir, "pressure/cpu", "some avg10=0.00 avg60=0.00 avg300=0.00 total=1x\n", 0, 1);
	assert_true(val(d, "psi.cpu.some.total") == VMS_NONE);
	const char *p2 = "some avg10=0.00 avg60=0.00 avg300=0.00 total=12\n"
			 "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
	edit(d, dir, "pressure/cpu", p2, VMS_RESCHEMA, 0);
	start(dir, "pressure/cpu", p2, d, NULL, 2);
	assert_int_equal(val(d, "psi.cpu.full.total"), 0);
	edit(d, dir, "pressure/cpu", p0, VMS_RESCHEMA, 0);
	drv_close(d);
	tmpdir_free(dir);
}

static void test_no_allocation(void **state)
{
	(void)state;
	uint32_t errs;
	struct drv *d[4] = {
		drv_new(root("mem/sysstat-root1"), &vms_source_meminfo),
		drv_vmstat(root("mem/sysstat-root1"), true),
		drv_vmstat(root("mem/zte-modem-4.1.25"), false),
		drv_new(root("mem/sysstat-root1"), &vms_source_psi),
	};
	for (unsigned k = 0; k < VMS_ARRAY_SIZE(d); k++) {
		test_allocs = 0;
		assert_int_equal(drv_declare(d[k]), 0);
		assert_true(test_allocs > 0); /* the wrap works: declare does allocate */
		assert_int_equal(drv_sample_allocs(d[k], 1000, true, &errs), 0);
		assert_int_equal(errs, 0);
		drv_close(d[k]);
	}
}

/* ---- rates over the sources' own columns --------------------------------------- */

/* sysstat's root1 -> root2 (31.17 s apart by their /proc/uptime): the
 * sources sample each root, and src/lib/rates.c's outputs equal the
 * formulas of rates.c's header (sysstat's) applied to the files' numbers,
 * read here by the test's own reader. */
static void sample_root(const char *dir, uint64_t *v, struct vms_col *cols, uint32_t *n, bool keep_cols)
{
	struct drv *d[3] = {
		drv_new(dir, &vms_source_meminfo),
		drv_vmstat(dir, false),
		drv_new(dir, &vms_source_psi),
	};
	*n = 0;
	for (unsigned k = 0; k < 3; k++) {
		assert_int_equal(drv_declare(d[k]), 0);
		assert_int_equal(drv_sample(d[k]), 0);
		for (uint32_t i = 0; i < d[k]->schema->ncols; i++) {
			if (keep_cols) {
				cols[*n] = d[k]->schema->cols[i];
				cols[*n].name = strdup(cols[*n].name);
				cols[*n].key = "";
				cols[*n].field = NULL; /* the identity: derived from the name */
			}
			v[(*n)++] = d[k]->slots[i];
		}
		drv_close(d[k]);
	}
}

static double rate_of(const struct vms_rate_plan *p, const double *out, const char *name)
{
	for (uint32_t k = 0; k < p->ncols; k++)
		if (strcmp(p->cols[k].name, name) == 0)
			return out[k];
	fail_msg("no rate column %s", name);
	return 0;
}

static uint64_t kv_of(const char *root_name, const char *file, const char *colname)
{
	size_t len;
	uint64_t v;
	char *b = fixture_readf(&len, "%s/%s", root_name, file);
	assert_true(ref_kv(b, len, colname, &v));
	free(b);
	return v;
}

static void test_rates(void **state)
{
	(void)state;
	static struct vms_col cols[512];
	uint64_t v1[512], v2[512];
	uint32_t n1, n2;
	char d1[4096], d2[4096];
	snprintf(d1, sizeof(d1), "%s", root("mem/sysstat-root1"));
	snprintf(d2, sizeof(d2), "%s", root("mem/sysstat-root2"));
	sample_root(d1, v1, cols, &n1, true);
	sample_root(d2, v2, cols, &n2, false);
	assert_int_equal(n1, n2);
	struct vms_schema *s;
	assert_int_equal(vms_schema_new(1, 0, n1, cols, &s), 0);
	for (uint32_t i = 0; i < n1; i++)
		free((char *)cols[i].name);
	struct vms_rate_plan *p;
	assert_int_equal(vms_rate_plan_new(s, &p), 0);
	double dt[512], out[1024];
	const double DT = 7223.72 - 7192.55;
	for (uint32_t i = 0; i < n1; i++)
		dt[i] = DT;
	assert_true(p->ncols <= VMS_ARRAY_SIZE(out));
	assert_int_equal(vms_rate_compute_dt(p, v1, v2, dt, out), 0);

	const char *r1 = "mem/sysstat-root1", *r2 = "mem/sysstat-root2";
	uint64_t a, b;
#define NEAR(x, want) do { double x_ = (x), w_ = (want); \
	if (!(x_ - w_ < 1e-9 * (1 + w_) && w_ - x_ < 1e-9 * (1 + w_))) \
		fail_msg("%s = %.9f, want %.9f", #x, x_, w_); } while (0)
	/* PSI: Δtotal (µs) / 10^4 / Δt */
	uint64_t t1, t2;
	assert_true(ref_psi(d1, "psi.io.some.total", &t1) && ref_psi(d2, "psi.io.some.total", &t2));
	assert_int_equal(t2 - t1, 96968324 - 96242289);
	NEAR(rate_of(p, out, "psi.io.%some"), (double)(t2 - t1) / 1e4 / DT);
	assert_true(ref_psi(d1, "psi.cpu.some.total", &t1) && ref_psi(d2, "psi.cpu.some.total", &t2));
	NEAR(rate_of(p, out, "psi.cpu.%some"), (double)(t2 - t1) / 1e4 / DT);
	assert_true(ref_psi(d1, "psi.memory.full.total", &t1) && ref_psi(d2, "psi.memory.full.total", &t2));
	NEAR(rate_of(p, out, "psi.memory.%full"), (double)(t2 - t1) / 1e4 / DT);
	/* vmstat counters per second; sar -B's sums */
	a = kv_of(r1, "vmstat", "vmstat.pgfault");
	b = kv_of(r2, "vmstat", "vmstat.pgfault");
	NEAR(rate_of(p, out, "vmstat.pgfault/s"), (double)(b - a) / DT);
	a = kv_of(r1, "vmstat", "vmstat.pgsteal_anon") + kv_of(r1, "vmstat", "vmstat.pgsteal_file");
	b = kv_of(r2, "vmstat", "vmstat.pgsteal_anon") + kv_of(r2, "vmstat", "vmstat.pgsteal_file");
	assert_int_equal(b - a, 17);
	NEAR(rate_of(p, out, "vmstat.pgsteal/s"), 17 / DT);
	NEAR(rate_of(p, out, "vmstat.pgscank/s"), 0);
	NEAR(rate_of(p, out, "vmstat.pgscand/s"), 0);
	NEAR(rate_of(p, out, "vmstat.%vmeff"), 0); /* nothing scanned: 0, as sar */
	/* sar -r, -S at the frame (root2's meminfo) */
	double T = (double)kv_of(r2, "meminfo", "mem.MemTotal"), A = (double)kv_of(r2, "meminfo", "mem.MemAvailable");
	double C = (double)kv_of(r2, "meminfo", "mem.Committed_AS"), ST = (double)kv_of(r2, "meminfo", "mem.SwapTotal");
	double SF = (double)kv_of(r2, "meminfo", "mem.SwapFree");
	NEAR(rate_of(p, out, "mem.kbmemfree"), (double)kv_of(r2, "meminfo", "mem.MemFree") / 1024);
	NEAR(rate_of(p, out, "mem.kbmemused"), (T - A) / 1024);
	NEAR(rate_of(p, out, "mem.kbmemused"), 8144960 - 4389516); /* as the file shows it, in kB */
	NEAR(rate_of(p, out, "mem.%memused"), (T - A) / T * 100);
	NEAR(rate_of(p, out, "mem.%commit"), C / (T + ST) * 100);
	NEAR(rate_of(p, out, "mem.kbcached"), 2821596);
	NEAR(rate_of(p, out, "mem.kbswpused"), (ST - SF) / 1024);
	NEAR(rate_of(p, out, "mem.%swpused"), (ST - SF) / ST * 100);
	NEAR(rate_of(p, out, "mem.%swpcad"), 0); /* no swap used: 0, as sar */
#undef NEAR
	/* a missing input: no value, not 0 */
	uint32_t mf = (uint32_t)vms_schema_find(s, "mem.MemAvailable");
	uint64_t keep = v2[mf];
	v2[mf] = VMS_NONE;
	vms_rate_compute_dt(p, v1, v2, dt, out);
	assert_true(isnan(rate_of(p, out, "mem.kbmemused")));
	assert_true(isnan(rate_of(p, out, "mem.kbavail")));
	assert_false(isnan(rate_of(p, out, "mem.kbmemfree")));
	v2[mf] = keep;
	vms_rate_plan_free(p);
	vms_schema_unref(s);

	/* a kernel before 4.8: per-zone reclaim summed; no MemAvailable on
	 * 2.6.29: no kbmemused, kbavail, %memused columns at all */
	n1 = 0;
	struct drv *dz = drv_vmstat(root("mem/zte-modem-4.1.25"), false);
	assert_int_equal(drv_declare(dz), 0);
	assert_int_equal(drv_sample(dz), 0);
	assert_int_equal(vms_rate_plan_new(dz->schema, &p), 0);
	bool found = false;
	for (uint32_t k = 0; k < p->ncols; k++) {
		if (strcmp(p->cols[k].name, "vmstat.pgscank/s") != 0)
			continue;
		found = true;
		assert_int_equal(p->cols[k].nnum, 2); /* pgscan_kswapd_normal, _movable */
		assert_string_equal(dz->schema->cols[p->cols[k].xs[0]].name, "vmstat.pgscan_kswapd_normal");
		assert_string_equal(dz->schema->cols[p->cols[k].xs[1]].name, "vmstat.pgscan_kswapd_movable");
	}
	assert_true(found);
	for (uint32_t k = 0; k < p->ncols; k++)
		if (strcmp(p->cols[k].name, "vmstat.pgscand/s") == 0)
			for (unsigned x = 0; x < p->cols[k].nnum; x++)
				assert_null(strstr(dz->schema->cols[p->cols[k].xs[x]].name, "throttle"));
	vms_rate_plan_free(p);
	drv_close(dz);
	struct drv *da = drv_new(root("mem/android-2.6.29"), &vms_source_meminfo);
	assert_int_equal(drv_declare(da), 0);
	assert_int_equal(vms_rate_plan_new(da->schema, &p), 0);
	for (uint32_t k = 0; k < p->ncols; k++) {
		assert_string_not_equal(p->cols[k].name, "mem.kbmemused");
		assert_string_not_equal(p->cols[k].name, "mem.kbavail");
	}
	vms_rate_plan_free(p);
	drv_close(da);
}

/* ---- the live /proc -------------------------------------------------------------- */

static char *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	size_t cap = 1 << 16;
	char *b = malloc(cap);
	ssize_t n;
	*len = 0;
	assert_non_null(b);
	while ((n = read(fd, b + *len, cap - *len)) > 0) {
		*len += (size_t)n;
		assert_true(*len < cap);
	}
	close(fd);
	return b;
}

/* The source sampled between two readings of the file by the test (n
 * times): every counter between them; every gauge equal to them when
 * they agree, at least once per column and in at least half of the
 * readings where they agree (a gauge can move and come back between two
 * reads). */
static void live_check(struct drv *d, const char *file, const char *psi_dir)
{
	uint32_t nc = d->schema->ncols;
	unsigned *stable = calloc(nc, sizeof(*stable)), *exact = calloc(nc, sizeof(*exact));
	assert_non_null(stable);
	assert_non_null(exact);
	for (unsigned it = 0; it < 50; it++) {
		uint64_t a[256], b[256];
		size_t la, lb;
		char *ta = NULL, *tb = NULL;
		assert_true(nc <= 256);
		if (psi_dir) {
			for (uint32_t i = 0; i < nc; i++)
				assert_true(ref_psi(psi_dir, d->schema->cols[i].name, &a[i]));
		} else {
			ta = slurp(file, &la);
		}
		assert_int_equal(drv_sample(d), 0);
		assert_int_equal(d->parse_errors, 0);
		if (psi_dir) {
			for (uint32_t i = 0; i < nc; i++)
				assert_true(ref_psi(psi_dir, d->schema->cols[i].name, &b[i]));
		} else {
			tb = slurp(file, &lb);
			for (uint32_t i = 0; i < nc; i++) {
				if (!ref_kv(ta, la, d->schema->cols[i].name, &a[i]) ||
				    !ref_kv(tb, lb, d->schema->cols[i].name, &b[i]))
					fail_msg("%s: no line for %s", file, d->schema->cols[i].name);
			}
		}
		for (uint32_t i = 0; i < nc; i++) {
			const struct vms_col *c = &d->schema->cols[i];
			uint64_t s = d->slots[i];
			if (c->kind == VMS_KIND_COUNTER) {
				if (s < a[i] || s > b[i])
					fail_msg("%s = %llu, not between the readings %llu and %llu", c->name,
						 (unsigned long long)s, (unsigned long long)a[i],
						 (unsigned long long)b[i]);
				stable[i]++;
				exact[i]++;
			} else if (a[i] == b[i]) {
				stable[i]++;
				exact[i] += s == a[i];
			}
		}
		free(ta);
		free(tb);
	}
	unsigned compared = 0;
	for (uint32_t i = 0; i < nc; i++) {
		if (stable[i] && (exact[i] == 0 || exact[i] * 2 < stable[i]))
			fail_msg("%s equals the file in %u of the %u readings that agree", d->schema->cols[i].name,
				 exact[i], stable[i]);
		compared += stable[i] > 0;
	}
	/* the comparison happened: nearly every column held still at least once */
	if (compared * 10 < nc * 9)
		fail_msg("%s: only %u of %u columns compared", file, compared, nc);
	free(stable);
	free(exact);
}

static void test_live(void **state)
{
	(void)state;
	struct drv *d = drv_new("/proc", &vms_source_meminfo);
	assert_int_equal(drv_declare(d), 0);
	size_t len;
	char *t = slurp("/proc/meminfo", &len);
	assert_non_null(t);
	unsigned lines = 0;
	for (size_t i = 0; i < len; i++)
		lines += t[i] == '\n';
	free(t);
	assert_int_equal(d->schema->ncols, lines);
	live_check(d, "/proc/meminfo", NULL);
	drv_close(d);

	d = drv_vmstat("/proc", true);
	assert_int_equal(drv_declare(d), 0);
	live_check(d, "/proc/vmstat", NULL);
	drv_close(d);

	if (access("/proc/pressure", F_OK) != 0) {
		/* a kernel without PSI: the source does not open */
		drv_open_missing("/proc", &vms_source_psi);
		return;
	}
	d = drv_new("/proc", &vms_source_psi);
	assert_int_equal(drv_declare(d), 0);
	assert_true(d->schema->ncols >= 1);
	live_check(d, NULL, "/proc");
	drv_close(d);
}

VMS_TEST_MAIN(NULL, NULL,
	test_meminfo_fixtures, test_vmstat_selection, test_psi_fixtures, test_changes,
	test_no_allocation, test_rates, test_live)

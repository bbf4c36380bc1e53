/* SPDX-License-Identifier: MIT */
/* `vmsampler report` with the real binary ($VMS_BIN), against readings it
 * does not make itself:
 *   - a file recorded by the real sampler on a proc root made from the
 *     fixtures (sysstat's root1 stat, diskstats, meminfo, vmstat and
 *     pressure files, its net/dev, a loadavg), whose counters the test advances between ticks (with a
 *     32-bit wrap, an interface reset, a malformed loadavg): every number
 *     of every row equals `dump --rates`'s for that column as printed; the
 *     Average rows and --interval rows equal sar's formulas (sysstat
 *     rd_stats.c, pr_stats.c: counters at the end minus at the start over
 *     the time between) computed here from the raw counters of `dump`; the
 *     queue averages equal the mean of the rows; --summary's min, max and
 *     p95 equal those of dump's rates, its avg the Average row;
 *   - sysstat's own expected outputs for its root1 files (iostat -x,
 *     iostat, mpstat): the disk and CPU columns;
 *   - the per-VM section on a run of bench/report/report_gen (VMs that stop
 *     and start, slow balloon values) against dump --rates, and its totals
 *     against the per-vCPU and per-tap rates;
 *   - a live ring gives the report of the file written alongside;
 *   - usage errors, a damaged file, a torn tail; the man page's REPORT
 *     section names the options of `report --help`. */
#include "testutil.h"

#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <vmsampler/reader.h>

#include "binutil.h"
#include "fmt.h"
#include "ring.h"
#include "runbin.h"
#include "schema.h"
#include "sink.h"

static int setup(void **state)
{
	return getenv("VMS_BIN") ? tmp_setup(state) : -1;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* `vmsampler ARGS...` with its output (NULL-terminated args). */
#define RUN(r, ...) run_bin(r, 0, (const char *const[]){__VA_ARGS__, NULL})

/* ---- a CSV table (dump's output) --------------------------------------------- */

/* `vmsampler dump FILE [--rates]` as a table */
static void dump_table(struct table *t, const char *file, bool rates)
{
	struct run_result r;
	if (rates)
		RUN(&r, "dump", file, "--rates");
	else
		RUN(&r, "dump", file);
	assert_int_equal(r.status, 0);
	free(r.err);
	table_parse(t, r.out);
}

/* ---- report's text ---------------------------------------------------------------- */

enum rkind { R_ROW, R_AVG, R_MIN, R_SAVG, R_MAX, R_P95 };

struct rline {
	enum rkind kind;
	char sec[16];   /* cpu queue task disk net vm */
	char time[32];  /* R_ROW: the row's end, as printed */
	char ent[64];   /* "" for queue and task */
	unsigned n;
	char *label[12];
	char *val[12];
};

struct rep {
	char *text;
	struct rline *l;
	unsigned n, cap;
	unsigned events;
};

static unsigned words(char *s, char **w, unsigned max)
{
	unsigned n = 0;
	for (char *save = NULL, *t = strtok_r(s, " \n", &save); t; t = strtok_r(NULL, " \n", &save))
		if (n < max)
			w[n++] = t;
	return n;
}

/* The text of `vmsampler report`: its sections, rows and summaries. */
static void rep_parse(struct rep *R, char *text)
{
	memset(R, 0, sizeof(*R));
	R->text = text;
	char *lines[100000];
	unsigned nl = 0;
	for (char *save = NULL, *l = strtok_r(text, "\n", &save); l && nl < 100000; l = strtok_r(NULL, "\n", &save))
		lines[nl++] = l;
	assert_true(nl < 100000);
	char *hdr[16] = {0};
	unsigned nh = 0;
	bool ent = false;
	const char *sec = "";
	for (unsigned i = 1; i < nl; i++) { /* line 0: the title */
		if (strstr(lines[i], " EVENT ")) {
			R->events++;
			continue;
		}
		char *w[16];
		unsigned n = words(lines[i], w, 16);
		if (!n || strcmp(w[0], "Events:") == 0)
			continue;
		/* the sections without an entity, by their first column */
		static const char *const one[][2] = {{"runq-sz", "queue"},    {"proc/s", "task"},
						     {"pgpgin/s", "paging"},  {"pswpin/s", "swapping"},
						     {"kbmemfree", "memory"}, {"kbswpfree", "swapspace"},
						     {"%scpu", "pressure"}};
		const char *onesec = NULL;
		for (size_t s = 0; s < VMS_ARRAY_SIZE(one) && n > 1; s++)
			if (!strcmp(w[1], one[s][0]))
				onesec = one[s][1];
		bool header = onesec || !strcmp(w[1], "CPU") || !strcmp(w[1], "DEV") || !strcmp(w[1], "IFACE") ||
			      !strcmp(w[1], "VM");
		if (header) {
			ent = !onesec;
			sec = onesec                 ? onesec
			      : !strcmp(w[1], "CPU") ? "cpu"
			      : !strcmp(w[1], "DEV") ? "disk"
			      : !strcmp(w[1], "IFACE") ? "net"
						       : "vm";
			nh = n - 1 - ent;
			memcpy(hdr, w + 1 + ent, nh * sizeof(*w));
			continue;
		}
		assert_true(nh > 0);
		if (R->n == R->cap) {
			R->cap = R->cap ? R->cap * 2 : 256;
			R->l = realloc(R->l, R->cap * sizeof(*R->l));
		}
		struct rline *x = &R->l[R->n++];
		memset(x, 0, sizeof(*x));
		x->kind = !strcmp(w[0], "Average:") ? R_AVG : !strcmp(w[0], "min") ? R_MIN : !strcmp(w[0], "avg") ? R_SAVG
			  : !strcmp(w[0], "max") ? R_MAX : !strcmp(w[0], "p95") ? R_P95 : R_ROW;
		snprintf(x->sec, sizeof(x->sec), "%s", sec);
		snprintf(x->time, sizeof(x->time), "%s", w[0]);
		snprintf(x->ent, sizeof(x->ent), "%s", ent ? w[1] : "");
		if (n - 1 - ent != nh)
			fail_msg("report line with %u values under %u columns", n - 1 - ent, nh);
		x->n = nh;
		for (unsigned k = 0; k < nh; k++) {
			x->label[k] = hdr[k];
			x->val[k] = w[1 + ent + k];
		}
	}
}

static void rep_free(struct rep *R)
{
	free(R->text);
	free(R->l);
}

static void report(struct rep *R, const char *const *args)
{
	struct run_result r;
	run_bin(&r, 0, args);
	if (r.status != 0)
		fail_msg("report exit %d: %s", r.status, r.err);
	free(r.err);
	rep_parse(R, r.out);
}

static const struct rline *rep_find(const struct rep *R, enum rkind k, const char *sec, const char *ent)
{
	for (unsigned i = 0; i < R->n; i++)
		if (R->l[i].kind == k && !strcmp(R->l[i].sec, sec) && !strcmp(R->l[i].ent, ent))
			return &R->l[i];
	return NULL;
}

/* The dump --rates column of a report column (vmsampler(1) REPORT);
 * *runq: report shows it minus 1 (sar's runq-sz). */
static void dump_name(const struct rline *x, const char *label, char *out, size_t cap, bool *runq)
{
	static const char *const q[][2] = {{"runq-sz", "load.runnable"}, {"plist-sz", "load.tasks"},
					   {"ldavg-1", "load.1m"},       {"ldavg-5", "load.5m"},
					   {"ldavg-15", "load.15m"},     {"blocked", "stat.procs_blocked"},
					   {"proc/s", "stat.proc/s"},    {"cswch/s", "stat.cswch/s"},
					   {"intr/s", "stat.intr/s"}};
	static const char *const m[][2] = {
		{"pgpgin/s", "vmstat.pgpgin/s"},   {"pgpgout/s", "vmstat.pgpgout/s"}, {"fault/s", "vmstat.pgfault/s"},
		{"majflt/s", "vmstat.pgmajfault/s"}, {"pgfree/s", "vmstat.pgfree/s"}, {"pgscank/s", "vmstat.pgscank/s"},
		{"pgscand/s", "vmstat.pgscand/s"}, {"pgsteal/s", "vmstat.pgsteal/s"}, {"%vmeff", "vmstat.%vmeff"},
		{"pswpin/s", "vmstat.pswpin/s"},   {"pswpout/s", "vmstat.pswpout/s"}, {"%scpu", "psi.cpu.%some"},
		{"%sio", "psi.io.%some"},          {"%fio", "psi.io.%full"},          {"%smem", "psi.memory.%some"},
		{"%fmem", "psi.memory.%full"},     {"%firq", "psi.irq.%full"},
	};
	*runq = !strcmp(label, "runq-sz");
	if (!strcmp(x->sec, "memory") || !strcmp(x->sec, "swapspace")) {
		snprintf(out, cap, "mem.%s", label); /* sar -r, -S: mem.kbmemfree ... */
		return;
	}
	if (!strcmp(x->sec, "paging") || !strcmp(x->sec, "swapping") || !strcmp(x->sec, "pressure")) {
		for (size_t i = 0; i < VMS_ARRAY_SIZE(m); i++)
			if (!strcmp(m[i][0], label)) {
				snprintf(out, cap, "%s", m[i][1]);
				return;
			}
		fail_msg("no column for %s", label);
	}
	if (!strcmp(x->sec, "queue") || !strcmp(x->sec, "task")) {
		for (size_t i = 0; i < VMS_ARRAY_SIZE(q); i++)
			if (!strcmp(q[i][0], label)) {
				snprintf(out, cap, "%s", q[i][1]);
				return;
			}
		fail_msg("no column for %s", label);
	}
	const char *l = label;
	if (!strcmp(x->sec, "vm")) {
		l = !strcmp(label, "rkB/s")       ? "io.rkB/s"
		    : !strcmp(label, "wkB/s")     ? "io.wkB/s"
		    : !strcmp(label, "kbballoon") ? "balloon.current"
						  : label;
	}
	snprintf(out, cap, "%s.%s.%s", x->sec, x->ent, l);
}

/* The row of a rates table whose time prints as report's row label. */
static int row_at(const struct table *t, const char *label)
{
	int tc = table_col(t, "time");
	size_t ll = strlen(label);
	for (unsigned r = 0; r < t->nrows; r++) {
		const char *iso = table_cell(t, r, tc); /* 2026-11-23T00:01:00.000123+00:00 */
		char lab[16];
		snprintf(lab, sizeof(lab), "%.8s.%.3s", iso + 11, iso + 20);
		if (strncmp(lab, label, ll) == 0 && (ll == 8 || ll == 12))
			return (int)r;
	}
	return -1;
}

/* Every value of every row of the report equals dump's for the column
 * (runq-sz: load.runnable - 1); "-" where dump has nothing.  Returns the
 * values compared. */
static unsigned rows_vs_dump(const struct rep *R, const struct table *t, const char *only_sec)
{
	unsigned compared = 0;
	for (unsigned i = 0; i < R->n; i++) {
		const struct rline *x = &R->l[i];
		if (x->kind != R_ROW || (only_sec && strcmp(x->sec, only_sec)))
			continue;
		int row = row_at(t, x->time);
		if (row < 0)
			fail_msg("report row %s: no such row in dump --rates", x->time);
		for (unsigned k = 0; k < x->n; k++) {
			char name[256], want[64];
			bool runq;
			dump_name(x, x->label[k], name, sizeof(name), &runq);
			int c = table_col(t, name);
			const char *d = c >= 0 ? table_cell(t, (unsigned)row, c) : "";
			snprintf(want, sizeof(want), "%s", *d ? d : "-");
			if (runq && *d)
				snprintf(want, sizeof(want), "%llu", strtoull(d, NULL, 10) ? strtoull(d, NULL, 10) - 1 : 0);
			if (strcmp(want, x->val[k]) != 0)
				fail_msg("%s %s %s: report %s, dump --rates %s", x->time, x->ent, x->label[k],
					 x->val[k], want);
			compared++;
		}
	}
	return compared;
}

/* v printed with prec digits, as report prints it */
static const char *fmt(double v, int prec)
{
	static char b[8][48];
	static int k;
	k = (k + 1) % 8;
	*vms_fmt_double(b[k], v, prec) = '\0';
	return b[k];
}

/* ---- a recorded run: the real sampler on a proc root the test advances ---------- */

#define NF 14         /* frames */
static unsigned iv_ms; /* their interval: 200 ms, 500 at a second try */
#define RESET_K 10    /* enp6s0's counters start again at this snapshot */
#define BADLOAD_K 11  /* a malformed loadavg at this one */
#define CLEAN_K 9     /* frames 1..9 have neither */

static uint64_t mix(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ull;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

/* the increment of counter `key` at snapshot j, between lo and lo + span */
static uint64_t inc(unsigned j, uint64_t key, uint64_t lo, uint64_t span)
{
	return lo + (span ? mix(key * 1000003u + j) % span : 0);
}

/* the sum of its increments up to snapshot k */
static uint64_t cum(unsigned k, uint64_t key, uint64_t lo, uint64_t span)
{
	uint64_t s = 0;
	for (unsigned j = 1; j <= k; j++)
		s += inc(j, key, lo, span);
	return s;
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

struct buf {
	char *p;
	size_t len, cap;
};

static void bput(struct buf *b, const char *fmtstr, ...) VMS_PRINTF(2, 3);
static void bput(struct buf *b, const char *fmtstr, ...)
{
	va_list ap;
	for (;;) {
		va_start(ap, fmtstr);
		int n = vsnprintf(b->p + b->len, b->cap - b->len, fmtstr, ap);
		va_end(ap);
		if ((size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		b->cap = b->cap * 2 + (size_t)n + 256;
		b->p = realloc(b->p, b->cap);
		assert_non_null(b->p);
	}
}

/* Write a file in place (the sampler keeps it open): one write(2). */
static void put_file(const char *dir, const char *name, const struct buf *b)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, b->p, b->len), (ssize_t)b->len);
	close(fd);
}

static char *base_stat, *base_disk, *base_net, *base_mem, *base_vmstat;

/* CPU fields' increments per snapshot: user nice system idle iowait irq
 * softirq steal guest guest_nice (guest inside user) */
static uint64_t cpu_inc_cum(unsigned k, uint64_t line, int f)
{
	static const uint64_t lo[10] = {20, 0, 5, 40, 0, 0, 0, 0, 0, 0}, span[10] = {60, 3, 30, 80, 6, 3, 5, 2, 0, 0};
	if (f == 8)
		return cum(k, line * 16 + 0, lo[0], span[0]) / 2; /* half the user time is guest */
	return cum(k, line * 16 + (uint64_t)f, lo[f], span[f]);
}

static bool listed(const char *key, const char *const *keys, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(key, keys[i]))
			return true;
	return false;
}

/* The value of meminfo's `key` (kB) at snapshot k, if it moves. */
static bool mem_rule(const char *key, unsigned long long v, unsigned k, unsigned long long *out)
{
	static const char *const moving[] = {"MemFree:", "MemAvailable:", "Cached:", "Dirty:", "Committed_AS:",
					     "Active:", "Inactive:", "SwapCached:"};
	if (!strcmp(key, "SwapFree:"))
		*out = v - 1000 * k;
	else if (listed(key, moving, VMS_ARRAY_SIZE(moving)))
		*out = v + mix(hash_str(key) + k) % 50000;
	else
		return false;
	return true;
}

/* The value of vmstat's counter `key` at snapshot k, if it counts. */
static bool vmstat_rule(const char *key, unsigned long long v, unsigned k, unsigned long long *out)
{
	static const char *const up[] = {"pgpgin", "pgpgout", "pswpin", "pswpout", "pgfault", "pgmajfault", "pgfree",
					 "pgscan_kswapd", "pgscan_direct", "pgsteal_anon", "pgsteal_file", "oom_kill"};
	if (!listed(key, up, VMS_ARRAY_SIZE(up)))
		return false;
	*out = v + cum(k, hash_str(key) & 0xffff, 0, 900);
	return true;
}

/* The "key value[ unit]" lines of base at snapshot k: rule's values where
 * it has one, the others as they are. */
static void keyed(struct buf *b, const char *base, unsigned k,
		  bool (*rule)(const char *, unsigned long long, unsigned, unsigned long long *), const char *unit)
{
	char *save, *copy = strdup(base);
	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char key[64];
		unsigned long long v, nv;
		if (sscanf(l, "%63s %llu", key, &v) == 2 && rule(key, v, k, &nv))
			bput(b, "%s %llu%s\n", key, nv, unit);
		else
			bput(b, "%s\n", l);
	}
	free(copy);
}

static void render(const char *dir, unsigned k)
{
	struct buf b = {0};
	char *save, *copy;

	/* stat: sysstat's root1, advanced */
	copy = strdup(base_stat);
	unsigned ln = 0;
	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save), ln++) {
		char name[32];
		unsigned long long v[10];
		if (!strncmp(l, "cpu", 3) && sscanf(l, "%31s %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", name,
						     &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8],
						     &v[9]) == 11) {
			bput(&b, "%s", name);
			for (int f = 0; f < 10; f++)
				bput(&b, " %llu", v[f] + cpu_inc_cum(k, ln, f));
			bput(&b, "\n");
		} else if (!strncmp(l, "intr ", 5) || !strncmp(l, "softirq ", 8) || !strncmp(l, "ctxt ", 5) ||
			   !strncmp(l, "processes ", 10)) {
			char *sp = strchr(l, ' ');
			unsigned long long first = strtoull(sp + 1, &sp, 10);
			uint64_t lo = l[0] == 'p' ? 0 : 200, span = l[0] == 'p' ? 8 : 3000;
			bput(&b, "%.*s %llu%s\n", (int)(strchr(l, ' ') - l), l,
			     first + cum(k, hash_str(l) & 0xffff, lo, span), sp);
		} else if (!strncmp(l, "procs_running ", 14)) {
			bput(&b, "procs_running %u\n", 1 + (k * 7) % 5);
		} else if (!strncmp(l, "procs_blocked ", 14)) {
			bput(&b, "procs_blocked %u\n", k % 3);
		} else {
			bput(&b, "%s\n", l);
		}
	}
	free(copy);
	put_file(dir, "stat", &b);
	b.len = 0;

	/* diskstats: every device's fields advanced; sda's rd_ticks wraps */
	copy = strdup(base_disk);
	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		unsigned maj, min;
		char name[64];
		unsigned long long v[17];
		int n = sscanf(l, "%u %u %63s %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu",
			       &maj, &min, name, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9],
			       &v[10], &v[11], &v[12], &v[13], &v[14], &v[15], &v[16]);
		assert_true(n >= 7);
		uint64_t h = hash_str(name) & 0xffffff;
		uint64_t rd = cum(k, h, 5, 40), wr = cum(k, h + 1, 2, 30), dc = cum(k, h + 2, 0, 3),
			 busy = cum(k, h + 3, 10, 150);
		uint64_t add[17] = {rd, rd / 8, rd * 16 + cum(k, h + 4, 0, 64), rd * 2 + cum(k, h + 5, 0, 9), wr,
				    wr / 3, wr * 24 + cum(k, h + 6, 0, 128), wr * 3 + cum(k, h + 7, 0, 11), 0, busy,
				    busy * 2 + cum(k, h + 8, 0, 50), dc, 0, dc * 256, dc * 4, cum(k, h + 9, 0, 2),
				    cum(k, h + 10, 0, 4)};
		bput(&b, "%4u %7u %s", maj, min, name);
		for (int f = 0; f < n - 3; f++) {
			uint64_t x = v[f] + add[f];
			if (f == 8)
				x = (k + h) % 4; /* in_flight */
			if (f == 3 && !strcmp(name, "sda"))
				x = (v[f] + add[f] + 4294967296ull - 623970 - 150) & 0xffffffffu; /* wraps at k = 2 or 3 */
			if (f == 3 || f == 7 || f == 9 || f == 10 || f == 14 || f == 16)
				x &= 0xffffffffu; /* unsigned int in the kernel */
			bput(&b, " %llu", (unsigned long long)x);
		}
		bput(&b, "\n");
	}
	free(copy);
	put_file(dir, "diskstats", &b);
	b.len = 0;

	/* net/dev: packets and bytes; enp6s0 starts again from 0 at RESET_K */
	copy = strdup(base_net);
	ln = 0;
	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save), ln++) {
		char *colon = strchr(l, ':');
		if (ln < 2 || !colon) {
			bput(&b, "%s\n", l);
			continue;
		}
		char name[64];
		snprintf(name, sizeof(name), "%.*s", (int)(colon - l), l);
		char *nm = name + strspn(name, " ");
		unsigned long long v[16];
		char *p = colon + 1;
		for (int f = 0; f < 16; f++)
			v[f] = strtoull(p, &p, 10);
		uint64_t h = hash_str(nm) & 0xffffff;
		bool reset = !strcmp(nm, "enp6s0") && k >= RESET_K;
		unsigned from = reset ? RESET_K - 1 : 0;
		uint64_t rp = cum(k, h, 20, 200) - cum(from, h, 20, 200), tp = cum(k, h + 1, 10, 150) - cum(from, h + 1, 10, 150);
		uint64_t add[16] = {rp * 600 + cum(k, h + 2, 0, 900) - cum(from, h + 2, 0, 900), rp, 0, 0, 0, 0, 0,
				    cum(k, h + 3, 0, 3) - cum(from, h + 3, 0, 3),
				    tp * 500 + cum(k, h + 4, 0, 700) - cum(from, h + 4, 0, 700), tp, 0, 0, 0, 0, 0, 0};
		/* enp6s0 above 2^32 until its reset: a drop from below would
		 * be a 32-bit kernel's wrap (rates.c) */
		uint64_t high = !strcmp(nm, "enp6s0") && !reset ? 1ull << 33 : 0;
		bput(&b, "%s:", name);
		for (int f = 0; f < 16; f++)
			bput(&b, " %llu", (reset ? 3 : v[f] + high) + (unsigned long long)add[f]);
		bput(&b, "\n");
	}
	free(copy);
	put_file(dir, "net/dev", &b);
	b.len = 0;

	/* meminfo: the gauges of sar -r and -S move, swap is used; vmstat:
	 * paging, swapping, faults and reclaim count up */
	keyed(&b, base_mem, k, mem_rule, " kB");
	put_file(dir, "meminfo", &b);
	b.len = 0;
	keyed(&b, base_vmstat, k, vmstat_rule, "");
	put_file(dir, "vmstat", &b);
	b.len = 0;

	/* pressure: the stall totals, within the interval (µs) */
	static const char *const res[] = {"cpu", "io", "memory"};
	for (size_t i = 0; i < VMS_ARRAY_SIZE(res); i++) {
		bput(&b, "some avg10=0.00 avg60=0.00 avg300=0.00 total=%llu\n",
		     (unsigned long long)(1000000 * i + cum(k, 77 + i, 0, 90000)));
		if (i)
			bput(&b, "full avg10=0.00 avg60=0.00 avg300=0.00 total=%llu\n",
			     (unsigned long long)(cum(k, 88 + i, 0, 40000)));
		char name[32];
		snprintf(name, sizeof(name), "pressure/%s", res[i]);
		put_file(dir, name, &b);
		b.len = 0;
	}

	/* loadavg */
	if (k == BADLOAD_K)
		bput(&b, "garbage\n");
	else
		bput(&b, "%u.%02u %u.%02u %u.%02u %u/%u %u\n", 1 + k % 3, (k * 37) % 100, 2, (k * 11) % 100, 2,
		     50 + k, 1 + (k * 5) % 7, 900 + (k * 13) % 40, 27000 + k);
	put_file(dir, "loadavg", &b);
	free(b.p);
}

static char rec_path[PATH_MAX];

/* Record NF frames at iv_ms with the real sampler into path, the proc root
 * advanced to the next snapshot as soon as each frame is in the file.
 * False if a frame does not hold its snapshot (the sampler read a file
 * while it was rewritten: this machine stalled for a whole interval). */
static bool record_once(const char *path)
{
	const char *root = tp("proc");
	char root_copy[PATH_MAX];
	snprintf(root_copy, sizeof(root_copy), "%s", root);
	mkdir(root_copy, 0755);
	char netdir[PATH_MAX + 16];
	snprintf(netdir, sizeof(netdir), "%s/net", root_copy);
	mkdir(netdir, 0755);
	snprintf(netdir, sizeof(netdir), "%s/pressure", root_copy);
	mkdir(netdir, 0755);
	render(root_copy, 0);
	unlink(path);

	char n[16], iv[16];
	snprintf(n, sizeof(n), "%d", NF);
	snprintf(iv, sizeof(iv), "%ums", iv_ms);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDWR);
		dup2(devnull, 0);
		dup2(devnull, 1);
		const char *bin = getenv("VMS_BIN");
		execl(bin, bin, "-q", "-i", iv, "-n", n, "-o", path, "--proc-root", root_copy, (char *)NULL);
		_exit(127);
	}
	struct vms_reader *rd = NULL;
	uint64_t seen = 0;
	for (int spin = 0; spin < 60000 && seen < NF; spin++) {
		if (!rd && vms_reader_open(&rd, path, VMS_READER_FOLLOW) < 0) {
			vms_reader_close(rd);
			rd = NULL;
			sleep_ms(1);
			continue;
		}
		int r = vms_reader_next(rd);
		assert_true(r >= 0);
		if (r == 0) {
			sleep_ms(1);
			continue;
		}
		seen = vms_reader_seq(rd);
		if (seen < NF)
			render(root_copy, (unsigned)seen);
	}
	vms_reader_close(rd);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(seen, NF);

	struct table raw;
	dump_table(&raw, path, false);
	assert_int_equal(raw.nrows, NF);
	int cu = table_col(&raw, "cpu.all.user");
	assert_true(cu >= 0 && table_col(&raw, "net.enp6s0.rx_packets") >= 0);
	bool ok = true;
	for (unsigned k = 0; k < NF && ok; k++) {
		char want[32];
		snprintf(want, sizeof(want), "%llu", 96005ull + (unsigned long long)cpu_inc_cum(k, 0, 0));
		if (strcmp(table_cell(&raw, k, cu), want)) {
			print_message("frame %u: cpu.all.user %s, the test wrote %s: the recording raced\n", k + 1,
				      table_cell(&raw, k, cu), want);
			ok = false;
		}
	}
	table_free(&raw);
	return ok;
}

static const char *recorded(void)
{
	if (rec_path[0])
		return rec_path;
	size_t len;
	base_stat = fixture_read("rates/sysstat-root1/stat", &len);
	base_disk = fixture_read("rates/sysstat-root1/diskstats", &len);
	base_net = fixture_read("roots/sysstat-root1-virbr/net/dev", &len);
	base_mem = fixture_read("mem/sysstat-root1/meminfo", &len);
	base_vmstat = fixture_read("mem/sysstat-root1/vmstat", &len);
	assert_true(base_stat && base_disk && base_net && base_mem && base_vmstat);
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/rec.vms", test_tmp);
	bool ok = false;
	for (unsigned t = 0; t < 2 && !ok; t++) {
		iv_ms = t ? 500 : 200;
		ok = record_once(path);
	}
	free(base_stat);
	free(base_disk);
	free(base_net);
	free(base_mem);
	free(base_vmstat);
	if (!ok)
		fail_msg("could not record a run whose frames hold what the test wrote");
	snprintf(rec_path, sizeof(rec_path), "%s", path);
	return rec_path;
}

/* ---- sar's formulas, from the raw counters of `dump` ------------------------------- */

static bool absent; /* a column the file does not have (sysstat counts it as 0) */

static double rawv(const struct table *raw, unsigned row, const char *name, bool *ok)
{
	int c = table_col(raw, name);
	if (c < 0) {
		absent = true;
		return 0;
	}
	if (!*table_cell(raw, row, c)) {
		*ok = false;
		return 0;
	}
	return strtod(table_cell(raw, row, c), NULL);
}

/* Δ of a counter from row a to row b (32-bit ones modulo 2^32) */
static double delta(const struct table *raw, unsigned a, unsigned b, const char *name, bool *ok)
{
	double x = rawv(raw, a, name, ok), y = rawv(raw, b, name, ok);
	bool w32 = strstr(name, "ticks") || strstr(name, "time_in_queue");
	if (w32 && y < x)
		y += 4294967296.0;
	return y - x;
}

static double delta_of(const struct table *raw, unsigned a, unsigned b, const char *sec, const char *ent,
		       const char *f, bool *ok)
{
	char n[128];
	snprintf(n, sizeof(n), "%s.%s.%s", sec, ent, f);
	return delta(raw, a, b, n, ok);
}

/* sar -r and -S at frame `row` (sysstat at c1eb661ab208, pr_stats.c
 * print_ram_memory_stats, print_swap_memory_stats): the value and its
 * printed decimals; the raw meminfo columns are in bytes. */
static double memv(const struct table *raw, unsigned row, const char *col, int *prec, bool *ok)
{
#define M(k) (rawv(raw, row, "mem." k, ok) / 1024)
	static const char *const kb[][2] = {{"kbmemfree", "MemFree"},    {"kbavail", "MemAvailable"},
					    {"kbbuffers", "Buffers"},    {"kbcached", "Cached"},
					    {"kbcommit", "Committed_AS"}, {"kbactive", "Active"},
					    {"kbinact", "Inactive"},     {"kbdirty", "Dirty"},
					    {"kbswpfree", "SwapFree"},   {"kbswpcad", "SwapCached"}};
	double tot = M("MemTotal"), avail = M("MemAvailable"), st = M("SwapTotal"), sf = M("SwapFree");
	*prec = 0;
	for (size_t i = 0; i < VMS_ARRAY_SIZE(kb); i++)
		if (!strcmp(col, kb[i][0])) {
			char n[64];
			snprintf(n, sizeof(n), "mem.%s", kb[i][1]);
			return rawv(raw, row, n, ok) / 1024;
		}
	if (!strcmp(col, "kbmemused"))
		return tot - avail;
	if (!strcmp(col, "kbswpused"))
		return st - sf;
	*prec = 2;
	if (!strcmp(col, "%memused"))
		return tot ? (tot - avail) / tot * 100 : 0;
	if (!strcmp(col, "%commit"))
		return tot + st ? M("Committed_AS") / (tot + st) * 100 : 0;
	if (!strcmp(col, "%swpused"))
		return st ? (st - sf) / st * 100 : 0;
	if (!strcmp(col, "%swpcad"))
		return st - sf ? M("SwapCached") / (st - sf) * 100 : 0;
#undef M
	fail_msg("no formula for memory %s", col);
	return 0;
}

static bool mem_gauges(const char *sec)
{
	return !strcmp(sec, "memory") || !strcmp(sec, "swapspace");
}

/* The value sar prints for (section, entity, column) over the frames a..b
 * (rows of the raw table): rd_stats.c, pr_stats.c of sysstat 12.6 (the
 * host memory's of c1eb661ab208, as rates.c). */
static double sar(const struct table *raw, unsigned a, unsigned b, const char *sec, const char *ent,
		  const char *col, bool *ok)
{
	double dt = (strtod(table_cell(raw, b, table_col(raw, "t_mono_ns")), NULL) -
		     strtod(table_cell(raw, a, table_col(raw, "t_mono_ns")), NULL)) / 1e9;
	*ok = true;
	absent = false;
#define D(f) delta_of(raw, a, b, sec, ent, f, ok)
	if (!strcmp(sec, "cpu")) {
		double u = D("user"), ni = D("nice"), sy = D("system"), id = D("idle"), io = D("iowait"),
		       irq = D("irq"), so = D("softirq"), st = D("steal"), g = D("guest"), gn = D("guest_nice");
		double tot = u + ni + sy + id + io + irq + so + st; /* guest is inside user */
		static const char *const names[] = {"%usr", "%nice", "%sys", "%iowait", "%steal",
						    "%irq", "%soft", "%guest", "%gnice", "%idle"};
		double v[] = {u - g, ni - gn, sy, io, st, irq, so, g, gn, id};
		for (size_t i = 0; i < VMS_ARRAY_SIZE(names); i++)
			if (!strcmp(col, names[i]))
				return v[i] / tot * 100;
	}
	if (!strcmp(sec, "task")) {
		const char *f = !strcmp(col, "proc/s") ? "stat.processes" : !strcmp(col, "cswch/s") ? "stat.ctxt" : "stat.intr";
		return delta(raw, a, b, f, ok) / dt;
	}
	if (!strcmp(sec, "disk")) {
		double rd = D("rd_ios"), wr = D("wr_ios"), dc = D("dc_ios"), ios = rd + wr + dc;
		if (!strcmp(col, "tps"))
			return ios / dt;
		if (!strcmp(col, "r/s"))
			return rd / dt;
		if (!strcmp(col, "w/s"))
			return wr / dt;
		if (!strcmp(col, "rkB/s"))
			return D("rd_sectors") / 2 / dt;
		if (!strcmp(col, "wkB/s"))
			return D("wr_sectors") / 2 / dt;
		if (!strcmp(col, "dkB/s"))
			return D("dc_sectors") / 2 / dt;
		if (!strcmp(col, "areq-sz"))
			return ios ? (D("rd_sectors") + D("wr_sectors") + D("dc_sectors")) / ios / 2 : 0;
		if (!strcmp(col, "aqu-sz"))
			return D("time_in_queue") / dt / 1000;
		if (!strcmp(col, "await"))
			return ios ? (D("rd_ticks") + D("wr_ticks") + D("dc_ticks")) / ios : 0;
		if (!strcmp(col, "%util"))
			return D("io_ticks") / dt / 10;
	}
	if (!strcmp(sec, "paging") || !strcmp(sec, "swapping")) {
		static const char *const m[][2] = {{"pgpgin/s", "pgpgin"},   {"pgpgout/s", "pgpgout"},
						   {"fault/s", "pgfault"},   {"majflt/s", "pgmajfault"},
						   {"pgfree/s", "pgfree"},   {"pgscank/s", "pgscan_kswapd"},
						   {"pgscand/s", "pgscan_direct"}, {"pswpin/s", "pswpin"},
						   {"pswpout/s", "pswpout"}};
		double steal = delta(raw, a, b, "vmstat.pgsteal_anon", ok) + delta(raw, a, b, "vmstat.pgsteal_file", ok);
		double scan = delta(raw, a, b, "vmstat.pgscan_kswapd", ok) + delta(raw, a, b, "vmstat.pgscan_direct", ok);
		if (!strcmp(col, "pgsteal/s"))
			return steal / dt;
		if (!strcmp(col, "%vmeff"))
			return scan ? steal / scan * 100 : 0;
		for (size_t i = 0; i < VMS_ARRAY_SIZE(m); i++)
			if (!strcmp(col, m[i][0])) {
				char n[64];
				snprintf(n, sizeof(n), "vmstat.%s", m[i][1]);
				return delta(raw, a, b, n, ok) / dt;
			}
	}
	if (!strcmp(sec, "pressure")) {
		/* pr_stats.c print_psi*_stats: Δtotal / (100 * itv), itv in 1/100 s */
		static const char *const m[][2] = {{"%scpu", "psi.cpu.some.total"}, {"%sio", "psi.io.some.total"},
						   {"%fio", "psi.io.full.total"},   {"%smem", "psi.memory.some.total"},
						   {"%fmem", "psi.memory.full.total"}, {"%firq", "psi.irq.full.total"}};
		for (size_t i = 0; i < VMS_ARRAY_SIZE(m); i++)
			if (!strcmp(col, m[i][0]))
				return delta(raw, a, b, m[i][1], ok) / (100 * dt * 100);
	}
	if (mem_gauges(sec)) {
		int prec;
		return memv(raw, b, col, &prec, ok);
	}
	if (!strcmp(sec, "net")) {
		static const char *const m[][2] = {{"rxpck/s", "rx_packets"}, {"txpck/s", "tx_packets"},
						   {"rxkB/s", "rx_bytes"},    {"txkB/s", "tx_bytes"},
						   {"rxcmp/s", "rx_compressed"}, {"txcmp/s", "tx_compressed"},
						   {"rxmcst/s", "rx_multicast"}};
		for (size_t i = 0; i < VMS_ARRAY_SIZE(m); i++)
			if (!strcmp(col, m[i][0]))
				return D(m[i][1]) / dt / (strstr(col, "kB") ? 1024 : 1);
	}
#undef D
	fail_msg("no formula for %s %s", sec, col);
	return 0;
}

/* report's printed value is sar's value, rounded as printed (the same
 * formula in another order of operations may differ in the last bit) */
static void assert_printed(const char *what, const char *got, double want, int prec)
{
	double g = strtod(got, NULL), unit = prec == 2 ? 0.01 : 1;
	if (!strcmp(got, fmt(want, prec)))
		return;
	/* only at a rounding boundary: the exact value within 1e-9 of it */
	double frac = want / unit - floor(want / unit);
	if (fabs(g - want) <= unit && fabs(frac - 0.5) < 1e-6)
		return;
	fail_msg("%s: report %s, sar's formula %.6f (%s)", what, got, want, fmt(want, prec));
}

/* The raw table's row with the report row's time */
static unsigned raw_row(const struct table *raw, const char *label)
{
	int r = row_at(raw, label);
	if (r < 0)
		fail_msg("no frame at %s", label);
	return (unsigned)r;
}

/* ---- tests ---------------------------------------------------------------------------- */

/* Every number of every row is dump --rates's for its column. */
static void test_rows_vs_dump(void **state)
{
	(void)state;
	const char *f = recorded();
	struct rep R;
	struct table t;
	report(&R, (const char *const[]){"report", f, NULL});
	dump_table(&t, f, true);
	assert_int_equal(t.nrows, NF - 1);
	unsigned n = rows_vs_dump(&R, &t, NULL);
	/* at least CPU 10, queue 6, task 3, 5 disks x 10, 6 interfaces x 7,
	 * paging 9, swapping 2, memory 11, swap space 5, pressure 6 per row */
	assert_true(n >= (NF - 1) * (10 + 6 + 3 + 50 + 42 + 9 + 2 + 11 + 5 + 6));
	/* the reset and the malformed loadavg show as unknown, never 0 */
	bool reset_seen = false, missing_seen = false;
	for (unsigned i = 0; i < R.n; i++) {
		const struct rline *x = &R.l[i];
		if (x->kind == R_ROW && !strcmp(x->ent, "enp6s0") && !strcmp(x->val[0], "-"))
			reset_seen = true;
		if (x->kind == R_ROW && !strcmp(x->sec, "queue") && !strcmp(x->val[2], "-"))
			missing_seen = true;
	}
	assert_true(reset_seen && missing_seen);
	/* rows for the 6 sections, and Average rows */
	assert_non_null(rep_find(&R, R_AVG, "cpu", "all"));
	assert_non_null(rep_find(&R, R_AVG, "queue", ""));
	assert_non_null(rep_find(&R, R_AVG, "task", ""));
	assert_non_null(rep_find(&R, R_AVG, "disk", "sda"));
	assert_non_null(rep_find(&R, R_AVG, "net", "lo"));
	assert_null(rep_find(&R, R_ROW, "vm", "")); /* no VM columns */
	static const char *const mem[] = {"paging", "swapping", "memory", "swapspace", "pressure"};
	for (size_t i = 0; i < VMS_ARRAY_SIZE(mem); i++)
		assert_non_null(rep_find(&R, R_AVG, mem[i], ""));
	/* no irq pressure file: its column prints "-", not 0 */
	const struct rline *pr = rep_find(&R, R_ROW, "pressure", "");
	assert_string_equal(pr->label[5], "%firq");
	assert_string_equal(pr->val[5], "-");
	assert_string_not_equal(pr->val[0], "0.00"); /* %scpu moved */
	rep_free(&R);
	table_free(&t);
}

/* The Average rows over a span without resets are sar's: counters at the
 * end minus at the start over the time between; the queue's are the mean
 * of the rows. */
static void test_average_is_sars(void **state)
{
	(void)state;
	const char *f = recorded();
	struct table raw;
	dump_table(&raw, f, false);
	char to[32];
	snprintf(to, sizeof(to), "%.3f",
		 (strtod(table_cell(&raw, CLEAN_K - 1, table_col(&raw, "t_mono_ns")), NULL) -
		  strtod(table_cell(&raw, 0, table_col(&raw, "t_mono_ns")), NULL)) / 1e9);
	struct rep R;
	report(&R, (const char *const[]){"report", f, "--to", to, NULL});
	unsigned checked = 0, rows = 0;
	for (unsigned i = 0; i < R.n; i++) {
		const struct rline *x = &R.l[i];
		rows += x->kind == R_ROW && !strcmp(x->sec, "cpu");
		if (x->kind != R_AVG)
			continue;
		for (unsigned k = 0; k < x->n; k++) {
			char what[128];
			snprintf(what, sizeof(what), "Average %s %s %s", x->sec, x->ent, x->label[k]);
			bool ok;
			if (!strcmp(x->sec, "queue")) {
				/* sar: the mean of the values at the rows' ends */
				static const char *const q[] = {"load.runnable", "load.tasks", "load.1m", "load.5m",
								"load.15m", "stat.procs_blocked"};
				double s = 0;
				for (unsigned r = 1; r < CLEAN_K; r++) {
					double v = rawv(&raw, r, q[k], &ok);
					s += k == 0 ? (v >= 1 ? v - 1 : 0) : v;
				}
				assert_printed(what, x->val[k], s / (CLEAN_K - 1), k >= 2 && k <= 4 ? 2 : 0);
			} else if (mem_gauges(x->sec)) {
				/* gauges: the mean of the rows' values (sar's Average) */
				double s = 0;
				int prec = 0;
				for (unsigned r = 1; r < CLEAN_K; r++)
					s += memv(&raw, r, x->label[k], &prec, &ok);
				assert_true(ok);
				assert_printed(what, x->val[k], s / (CLEAN_K - 1), prec);
			} else {
				double v = sar(&raw, 0, CLEAN_K - 1, x->sec, x->ent, x->label[k], &ok);
				assert_true(ok);
				if (absent && !strcmp(x->val[k], "-") &&
				    (strstr(x->label[k], "dkB") || !strcmp(x->label[k], "%firq")))
					continue; /* no discard fields, no irq pressure: no column */
				assert_printed(what, x->val[k], v, 2);
			}
			checked++;
		}
	}
	assert_int_equal(rows, CLEAN_K - 1);
	assert_true(checked >= 10 + 6 + 3 + 50 + 42 + 9 + 2 + 11 + 5 + 5);
	rep_free(&R);
	table_free(&raw);
}

/* --interval: each row is sar's over its frames; the last, shorter one is
 * left out; the Average covers the rows. */
static void test_interval_rows(void **state)
{
	(void)state;
	const char *f = recorded();
	struct table raw;
	dump_table(&raw, f, false);
	struct rep R;
	char to[32], iv[32];
	snprintf(to, sizeof(to), "%.3f",
		 (strtod(table_cell(&raw, CLEAN_K - 1, table_col(&raw, "t_mono_ns")), NULL) -
		  strtod(table_cell(&raw, 0, table_col(&raw, "t_mono_ns")), NULL)) / 1e9);
	snprintf(iv, sizeof(iv), "%.1f", 3 * iv_ms / 1000.0);
	report(&R, (const char *const[]){"report", f, "--to", to, "--interval", iv, NULL});
	/* frames 1..9: rows end at frames 4 and 7; 7..9 is too short */
	unsigned ends[2] = {3, 6}, nrow = 0, checked = 0;
	for (unsigned i = 0; i < R.n; i++) {
		const struct rline *x = &R.l[i];
		if (x->kind == R_ROW && !strcmp(x->sec, "cpu")) {
			assert_true(nrow < 2);
			assert_int_equal(raw_row(&raw, x->time), ends[nrow]);
			nrow++;
		}
		if ((x->kind != R_ROW && x->kind != R_AVG) || !strcmp(x->sec, "queue"))
			continue;
		unsigned b = x->kind == R_AVG ? ends[1] : raw_row(&raw, x->time);
		unsigned a = x->kind == R_AVG ? 0 : b - 3;
		for (unsigned k = 0; k < x->n; k++) {
			bool ok;
			char what[128];
			snprintf(what, sizeof(what), "%s %s %s %s", x->time, x->sec, x->ent, x->label[k]);
			int prec = 2;
			double v;
			if (mem_gauges(x->sec) && x->kind == R_AVG) /* the mean of the rows */
				v = (memv(&raw, ends[0], x->label[k], &prec, &ok) +
				     memv(&raw, ends[1], x->label[k], &prec, &ok)) / 2;
			else if (mem_gauges(x->sec)) /* the value at the row's end */
				v = memv(&raw, b, x->label[k], &prec, &ok);
			else
				v = sar(&raw, a, b, x->sec, x->ent, x->label[k], &ok);
			assert_true(ok);
			if (absent && !strcmp(x->val[k], "-") &&
			    (strstr(x->label[k], "dkB") || !strcmp(x->label[k], "%firq")))
				continue;
			assert_printed(what, x->val[k], v, prec);
			checked++;
		}
	}
	assert_int_equal(nrow, 2);
	assert_true(checked >= 3 * (10 + 3 + 50 + 42));
	/* the queue shows the gauges at the rows' ends */
	const struct rline *q = rep_find(&R, R_ROW, "queue", "");
	bool ok;
	assert_non_null(q);
	assert_string_equal(q->val[1], fmt(rawv(&raw, ends[0], "load.tasks", &ok), 0));
	rep_free(&R);
	table_free(&raw);
}

/* --summary: min, max and p95 (nearest rank) of dump's rows, avg the
 * Average row; the same over --from (an ISO time as the CSV prints it). */
static void test_summary(void **state)
{
	(void)state;
	const char *f = recorded();
	struct table t, raw;
	dump_table(&t, f, true);
	dump_table(&raw, f, false);
	struct rep S, R;
	report(&S, (const char *const[]){"report", f, "--summary", NULL});
	report(&R, (const char *const[]){"report", f, NULL});
	unsigned checked = 0;
	for (unsigned i = 0; i < S.n; i++) {
		const struct rline *x = &S.l[i];
		if (x->kind == R_ROW || x->kind == R_AVG)
			fail_msg("--summary printed a row");
		for (unsigned k = 0; k < x->n; k++) {
			char name[256];
			bool runq;
			dump_name(x, x->label[k], name, sizeof(name), &runq);
			if (x->kind == R_SAVG) {
				const struct rline *a = rep_find(&R, R_AVG, x->sec, x->ent);
				assert_non_null(a);
				assert_string_equal(x->val[k], a->val[k]);
				continue;
			}
			/* the rows' values as dump prints them */
			int c = table_col(&t, name);
			if (c < 0 && !strcmp(x->val[k], "-"))
				continue; /* a column the input does not have (no irq pressure) */
			assert_true(c >= 0);
			double v[NF];
			unsigned n = 0;
			for (unsigned r = 0; r < t.nrows; r++) {
				const char *s = table_cell(&t, r, c);
				if (*s)
					v[n++] = runq ? fmax(strtod(s, NULL) - 1, 0) : strtod(s, NULL);
			}
			assert_true(n > 0);
			for (unsigned p = 1; p < n; p++) /* sort */
				for (unsigned q = p; q > 0 && v[q - 1] > v[q]; q--) {
					double z = v[q];
					v[q] = v[q - 1];
					v[q - 1] = z;
				}
			double want = x->kind == R_MIN ? v[0] : x->kind == R_MAX ? v[n - 1] : v[(n * 95 + 99) / 100 - 1];
			int prec = strchr(x->val[k], '.') ? 2 : 0;
			if (strcmp(x->val[k], fmt(want, prec)))
				fail_msg("%s %s %s %s: report %s, from dump's rows %s", x->time, x->sec, x->ent,
					 x->label[k], x->val[k], fmt(want, prec));
			checked++;
		}
	}
	assert_true(checked >= 3 * (10 + 6 + 3 + 50 + 42));
	rep_free(&S);
	rep_free(&R);

	/* --from at frame 3, as the CSV prints its time: rows end at 4..NF */
	char from[64];
	snprintf(from, sizeof(from), "%s", table_cell(&raw, 2, table_col(&raw, "time")));
	report(&R, (const char *const[]){"report", f, "--from", from, NULL});
	unsigned rows = 0;
	for (unsigned i = 0; i < R.n; i++)
		if (R.l[i].kind == R_ROW && !strcmp(R.l[i].sec, "cpu")) {
			assert_int_equal(raw_row(&raw, R.l[i].time), 3 + rows);
			rows++;
		}
	assert_int_equal(rows, NF - 3);
	rep_free(&R);
	/* and as a time of day, to the same frames */
	snprintf(from, sizeof(from), "%.12s", table_cell(&raw, 2, table_col(&raw, "time")) + 11);
	report(&R, (const char *const[]){"report", f, "--from", from, "--to", "100", NULL});
	rows = 0;
	for (unsigned i = 0; i < R.n; i++)
		rows += R.l[i].kind == R_ROW && !strcmp(R.l[i].sec, "cpu");
	assert_int_equal(rows, NF - 3);
	rep_free(&R);
	table_free(&t);
	table_free(&raw);
}

/* ---- sysstat's root1 ------------------------------------------------------------------- */

static const char *const cpu_f[] = {"user", "nice", "system", "idle", "iowait",
				    "irq", "softirq", "steal", "guest", "guest_nice"};
static const char *const disk_f[] = {
	"rd_ios", "rd_merges", "rd_sectors", "rd_ticks", "wr_ios", "wr_merges", "wr_sectors",
	"wr_ticks", "in_flight", "io_ticks", "time_in_queue", "dc_ios", "dc_merges", "dc_sectors",
	"dc_ticks", "fl_ios", "fl_ticks",
};

/* root1's counters since boot as a two-frame stream (0 at t = 0, the
 * files' values at t = uptime), written by the binary sink; also the
 * await and areq-sz of sar's formula from the diskstats text itself. */
struct root1_disk {
	char name[64];
	double await, areq;
};

static const char *root1_file(struct root1_disk *dk, unsigned *ndk)
{
	static char path[PATH_MAX];
	struct vms_schema_builder b;
	uint64_t vals[1024];
	uint32_t n = 0;
	char line[8192];
	vms_schema_builder_init(&b);
	FILE *f = fopen(fixture_path("rates/sysstat-root1/stat"), "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char name[32];
		unsigned long long v[10];
		if (strncmp(line, "cpu ", 4) != 0)
			continue;
		assert_int_equal(sscanf(line, "%31s %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", name, &v[0],
					&v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]),
				 11);
		for (int k = 0; k < 10; k++) {
			struct vms_coldef d = {.kind = VMS_KIND_COUNTER, .unit = VMS_UNIT_TICKS, .wrap_bits = 64};
			vms_schema_addf(&b, &d, "cpu.all.%s", cpu_f[k]);
			vals[n++] = v[k];
		}
	}
	fclose(f);
	f = fopen(fixture_path("rates/sysstat-root1/diskstats"), "r");
	assert_non_null(f);
	*ndk = 0;
	while (fgets(line, sizeof(line), f)) {
		char name[64];
		unsigned long long v[17];
		unsigned maj, min;
		int k = sscanf(line, "%u %u %63s %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu",
			       &maj, &min, name, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9],
			       &v[10], &v[11], &v[12], &v[13], &v[14], &v[15], &v[16]);
		int stats = k - 3, use = stats >= 17 ? 17 : stats >= 15 ? 15 : stats >= 11 ? 11 : 0;
		for (int i = 0; i < use; i++) {
			bool ticks = strstr(disk_f[i], "ticks") || !strcmp(disk_f[i], "time_in_queue");
			struct vms_coldef d = {.kind = i == 8 ? VMS_KIND_GAUGE : VMS_KIND_COUNTER,
					       .unit = VMS_UNIT_COUNT,
					       .wrap_bits = i == 8 ? 0 : ticks ? 32 : 64};
			vms_schema_addf(&b, &d, "disk.%s.%s", name, disk_f[i]);
			vals[n++] = v[i];
		}
		/* sar -d: nr_ios = rd + wr + dc (rd_stats.c read_diskstats_disk) */
		double dc = use >= 15 ? (double)v[11] : 0, dct = use >= 15 ? (double)v[14] : 0,
		       dcs = use >= 15 ? (double)v[13] : 0, ios = (double)v[0] + (double)v[4] + dc;
		snprintf(dk[*ndk].name, sizeof(dk[*ndk].name), "%s", name);
		dk[*ndk].await = ios ? ((double)v[3] + (double)v[7] + dct) / ios : 0;
		dk[*ndk].areq = ios ? ((double)v[2] + (double)v[6] + dcs) / ios / 2 : 0;
		(*ndk)++;
	}
	fclose(f);
	struct vms_schema *s;
	assert_int_equal(vms_schema_finish(&b, 1, 0, &s), 0);
	vms_schema_builder_free(&b);

	size_t len;
	char *up = fixture_read("rates/sysstat-root1/uptime", &len);
	unsigned long sec, cs;
	assert_int_equal(sscanf(up, "%lu.%2lu", &sec, &cs), 2);
	free(up);
	struct vms_frame *f0 = calloc(1, vms_frame_size(n)), *f1 = calloc(1, vms_frame_size(n));
	*f0 = (struct vms_frame){.seq = 1, .gen = 1, .ncols = n, .t_mono_ns = 1000, .t_real_ns = 1590969600000000000LL};
	*f1 = *f0;
	f1->seq = 2;
	f1->t_mono_ns = 1000 + (uint64_t)sec * 1000000000ull + (uint64_t)cs * 10000000ull;
	f1->t_real_ns = f0->t_real_ns + (int64_t)(f1->t_mono_ns - f0->t_mono_ns);
	memcpy(f1->v, vals, n * sizeof(*vals));

	snprintf(path, sizeof(path), "%s/root1.vms", test_tmp);
	struct vms_sink sk = {.ops = &vms_sink_bin, .path = path, .force = true};
	sk.priv = calloc(1, vms_sink_bin.priv_size);
	assert_int_equal(vms_sink_bin.open(&sk), 0);
	assert_int_equal(vms_sink_bin.begin(&sk, s), 0);
	assert_int_equal(vms_sink_bin.write(&sk, s, f0), 0);
	assert_int_equal(vms_sink_bin.write(&sk, s, f1), 0);
	assert_int_equal(vms_sink_bin.close(&sk), 0);
	free(sk.priv);
	free(f0);
	free(f1);
	vms_schema_unref(s);
	return path;
}

/* a whitespace report of sysstat's: the row of `dev`, by column name */
static bool sysstat_value(const char *file, const char *dev, const char *colname, char *out, size_t cap)
{
	size_t len;
	char *text = fixture_read(file, &len);
	char *hdr[64], *save = NULL;
	unsigned nh = 0;
	bool found = false;
	assert_non_null(text);
	for (char *line = strtok_r(text, "\n", &save); line && !found; line = strtok_r(NULL, "\n", &save)) {
		char *w[64];
		unsigned n = words(line, w, 64);
		if (n && !strcmp(w[0], "Device")) {
			memcpy(hdr, w, n * sizeof(*w));
			nh = n;
			continue;
		}
		if (!nh || n != nh || strcmp(w[0], dev))
			continue;
		for (unsigned i = 1; i < n; i++)
			if (!strcmp(hdr[i], colname)) {
				snprintf(out, cap, "%s", w[i]);
				found = true;
			}
	}
	free(text);
	return found;
}

static void test_sysstat_root1(void **state)
{
	(void)state;
	struct root1_disk dk[64];
	unsigned ndk;
	const char *f = root1_file(dk, &ndk);
	struct rep R;
	report(&R, (const char *const[]){"report", f, NULL});
	/* disks: iostat -x's and iostat's values, to the printed digit */
	static const char *const devs[] = {"sda", "sdb", "sdq", "sdr", "sds"};
	static const char *const same[][2] = {{"r/s", "r/s"},       {"w/s", "w/s"},       {"rkB/s", "rkB/s"},
					      {"wkB/s", "wkB/s"},   {"dkB/s", "dkB/s"},   {"aqu-sz", "aqu-sz"},
					      {"%util", "%util"},   {"tps", "tps"}};
	unsigned checked = 0;
	for (size_t d = 0; d < VMS_ARRAY_SIZE(devs); d++) {
		const struct rline *x = rep_find(&R, R_ROW, "disk", devs[d]);
		assert_non_null(x);
		for (unsigned k = 0; k < x->n; k++) {
			char want[32];
			for (size_t s = 0; s < VMS_ARRAY_SIZE(same); s++) {
				if (strcmp(same[s][0], x->label[k]))
					continue;
				const char *file = strcmp(x->label[k], "tps") ? "rates/sysstat-root1/expected.iostat-x-0"
									      : "rates/sysstat-root1/expected.iostat-0";
				if (!sysstat_value(file, devs[d], same[s][1], want, sizeof(want))) {
					/* no discard fields on this line: no column here */
					assert_string_equal(x->val[k], "-");
					continue;
				}
				if (!strcmp(x->val[k], "-") && !strcmp(want, "0.00"))
					continue; /* a field this line does not have: sysstat
						   * prints 0, report has no column (no faked 0) */
				if (strcmp(x->val[k], want))
					fail_msg("%s %s: report %s, sysstat %s", devs[d], x->label[k], x->val[k], want);
				checked++;
			}
			/* await and areq-sz: sar's formula over the diskstats line;
			 * and iostat's per-direction values agree with it to
			 * their rounding */
			for (unsigned i = 0; i < ndk; i++) {
				if (strcmp(dk[i].name, devs[d]))
					continue;
				if (!strcmp(x->label[k], "await") || !strcmp(x->label[k], "areq-sz")) {
					bool aw = !strcmp(x->label[k], "await");
					assert_printed(x->label[k], x->val[k], aw ? dk[i].await : dk[i].areq, 2);
					char rs[32], ws[32], ds[32], ra[32], wa[32], da[32];
					assert_true(sysstat_value("rates/sysstat-root1/expected.iostat-x-0", devs[d], "r/s", rs, 32));
					sysstat_value("rates/sysstat-root1/expected.iostat-x-0", devs[d], "w/s", ws, 32);
					bool hasd = sysstat_value("rates/sysstat-root1/expected.iostat-x-0", devs[d], "d/s", ds, 32);
					sysstat_value("rates/sysstat-root1/expected.iostat-x-0", devs[d], aw ? "r_await" : "rareq-sz", ra, 32);
					sysstat_value("rates/sysstat-root1/expected.iostat-x-0", devs[d], aw ? "w_await" : "wareq-sz", wa, 32);
					sysstat_value("rates/sysstat-root1/expected.iostat-x-0", devs[d], aw ? "d_await" : "dareq-sz", da, 32);
					double r = atof(rs), w = atof(ws), dd = hasd ? atof(ds) : 0;
					double mix_ = (r * atof(ra) + w * atof(wa) + dd * (hasd ? atof(da) : 0)) / (r + w + dd);
					/* printed to 0.01: a relative error of 0.005 / rate at most */
					double tol = 0.01 + mix_ * 0.005 * (1 / fmax(r, 0.01) + 1 / fmax(w + dd, 0.01)) * 2;
					if (fabs(atof(x->val[k]) - mix_) > tol)
						fail_msg("%s %s: report %s, iostat's directions give %.3f", devs[d], x->label[k],
							 x->val[k], mix_);
					checked++;
				}
			}
		}
	}
	assert_int_equal(checked, 5 * (8 + 2) - 1); /* sds has no discard fields */
	/* CPU all: mpstat's "all" (the same definitions as sar -u ALL) */
	size_t len;
	char *text = fixture_read("rates/sysstat-root1/expected.mpstat-T-JSON", &len);
	char *p = strstr(text, "{\"cpu\": \"all\"");
	assert_non_null(p);
	const struct rline *c = rep_find(&R, R_ROW, "cpu", "all");
	assert_non_null(c);
	for (unsigned k = 0; k < c->n; k++) {
		char key[32], want[32];
		snprintf(key, sizeof(key), "\"%s\": ", c->label[k] + 1);
		char *q = strstr(p, key);
		assert_non_null(q);
		assert_int_equal(sscanf(q + strlen(key), "%31[0-9.]", want), 1);
		if (strcmp(c->val[k], want))
			fail_msg("cpu all %s: report %s, mpstat %s", c->label[k], c->val[k], want);
	}
	free(text);
	rep_free(&R);
}

/* ---- per VM ------------------------------------------------------------------------------ */

static void test_vm_section(void **state)
{
	(void)state;
	const char *gen = getenv("VMS_REPORT_GEN");
	assert_non_null(gen);
	const char *f = tp("vms.vms");
	char *argv[] = {(char *)gen, "-n", "400", "-m", "4", "-i", "1000", "-c", "8", (char *)f, NULL};
	assert_int_equal(run_cmd(argv, NULL, tp("gen.out"), tp("gen.err")), 0);
	struct rep R;
	struct table t;
	report(&R, (const char *const[]){"report", f, "--vm", NULL});
	dump_table(&t, f, true);
	unsigned n = rows_vs_dump(&R, &t, "vm");
	/* 4 VMs (and a late one) x 8 columns over ~400 rows, less their gaps */
	assert_true(n > 399 * 4 * 8 * 9 / 10);
	/* the lifecycle events are between the rows, in every section */
	assert_int_equal(R.events % 6, 0);
	assert_true(R.events >= 8 * 6);
	/* a VM's totals are its vCPUs' and taps' rates */
	unsigned checked = 0;
	for (unsigned i = 0; i < R.n; i++) {
		const struct rline *x = &R.l[i];
		if (x->kind != R_ROW || strcmp(x->sec, "vm") || !strcmp(x->val[1], "-"))
			continue;
		int row = row_at(&t, x->time);
		char name[128];
		double s = 0;
		unsigned nv = 0;
		for (unsigned k = 0; k < 16; k++) {
			snprintf(name, sizeof(name), "vm.%s.vcpu%u.%%steal", x->ent, k);
			int c = table_col(&t, name);
			if (c < 0)
				break;
			s += atof(table_cell(&t, (unsigned)row, c));
			nv++;
		}
		assert_true(nv == 2);
		if (fabs(atof(x->val[1]) - s / nv) > 0.0101)
			fail_msg("%s %s %%steal %s, the mean of its vCPUs' %.3f", x->time, x->ent, x->val[1], s / nv);
		for (unsigned k = 0; k < 16 && strcmp(x->val[3], "-") != 0; k++) {
			snprintf(name, sizeof(name), "vm.%s.net.vnet%u.rxkB/s", x->ent, k);
			int c = table_col(&t, name);
			if (c >= 0 && fabs(atof(x->val[3]) - atof(table_cell(&t, (unsigned)row, c))) > 0.0051)
				fail_msg("%s %s rxkB/s %s, its tap %s", x->time, x->ent, x->val[3],
					 table_cell(&t, (unsigned)row, c));
		}
		checked++;
	}
	assert_true(checked > 300 * 4);
	rep_free(&R);
	table_free(&t);

	/* the summary has each VM, and the p95 of each column is dump's */
	report(&R, (const char *const[]){"report", f, "--vm", "--summary", NULL});
	assert_non_null(rep_find(&R, R_P95, "vm", "web-01"));
	assert_non_null(rep_find(&R, R_P95, "vm", "late-05"));
	rep_free(&R);
}

/* ---- a ring -------------------------------------------------------------------------------- */

static void test_ring(void **state)
{
	(void)state;
	const char *ring = tp("ring"), *f = tp("ring.vms");
	struct run_result r;
	RUN(&r, "-q", "-i", "20ms", "-n", "30", "-o", f, "--ring", ring, "--proc-root", fixture_path("vms"));
	assert_int_equal(r.status, 0);
	run_result_free(&r);
	struct run_result a, b, c;
	RUN(&a, "report", "--ring", ring, "--summary");
	RUN(&b, "report", f, "--summary");
	RUN(&c, "report", ring, "--summary");
	assert_int_equal(a.status, 0);
	assert_int_equal(b.status, 0);
	assert_int_equal(c.status, 0);
	/* the same report but for the title (the source's name) */
	assert_string_equal(strchr(a.out, '\n'), strchr(b.out, '\n'));
	assert_string_equal(strchr(c.out, '\n'), strchr(b.out, '\n'));
	assert_non_null(strstr(b.out, "ldavg-1"));
	run_result_free(&a);
	run_result_free(&b);
	run_result_free(&c);
	/* --ring on a file */
	RUN(&a, "report", "--ring", f);
	assert_int_equal(a.status, 2); /* a configuration error (vmsampler(1), EXIT STATUS) */
	assert_non_null(strstr(a.err, "not a vmsampler ring"));
	run_result_free(&a);
}

/* ---- errors ------------------------------------------------------------------------------- */

static void test_errors(void **state)
{
	(void)state;
	const char *f = recorded();
	static const char *const bad[][7] = {
		{"report", NULL},
		{"report", "a.vms", "b.vms", NULL},
		{"report", "--bogus", "x", NULL},
		{"report", "-i", "0", "x", NULL},
		{"report", "--interval", "1q", "x", NULL},
		{"report", "--from", "yesterday", "x", NULL},
		{"report", "--to", "25:00", "x", NULL},
		{"report", "--from", "10", "--to", "5", "x", NULL},
		{"report", "--ring", "r", "x", NULL},
		{"report", "x", "--interval", NULL},
	};
	for (size_t i = 0; i < VMS_ARRAY_SIZE(bad); i++) {
		struct run_result r;
		run_bin(&r, 0, bad[i]);
		if (r.status != 2 || count_lines(r.err) != 1 || !strstr(r.err, "Try 'vmsampler report --help'"))
			fail_msg("case %zu: exit %d, stderr: %s", i, r.status, r.err);
		run_result_free(&r);
	}
	struct run_result r;
	RUN(&r, "report", tp("nonexistent.vms"));
	assert_int_equal(r.status, 2); /* a missing input: a configuration error */
	assert_int_equal(count_lines(r.err), 1);
	run_result_free(&r);

	/* damage in the middle: what was read before it, where it stopped, 1 */
	size_t len;
	uint8_t *b = slurp(f, &len);
	uint8_t *d = malloc(len);
	memcpy(d, b, len);
	d[len * 2 / 3] ^= 0x55;
	spit(tp("damaged.vms"), d, len);
	RUN(&r, "report", tp("damaged.vms"));
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.err, "offset"));
	assert_non_null(strstr(r.err, "the report covers the frames before it"));
	struct rep R;
	rep_parse(&R, r.out);
	unsigned rows = 0;
	for (unsigned i = 0; i < R.n; i++)
		rows += R.l[i].kind == R_ROW && !strcmp(R.l[i].sec, "cpu");
	assert_true(rows > 0 && rows < NF - 1);
	assert_non_null(rep_find(&R, R_AVG, "cpu", "all"));
	rep_free(&R);
	free(r.err);
	/* JSON says it too */
	RUN(&r, "report", tp("damaged.vms"), "--json");
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, "\"error\":\""));
	run_result_free(&r);

	/* a torn tail: the complete frames, a warning, 0 */
	spit(tp("torn.vms"), b, len - 7);
	RUN(&r, "report", tp("torn.vms"), "--summary");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.err, "torn tail"));
	assert_non_null(strstr(r.out, "Summary:"));
	run_result_free(&r);
	/* standard input */
	char *argv[] = {getenv("VMS_BIN"), "report", "-", "--json", NULL};
	assert_int_equal(run_cmd(argv, f, tp("stdin.out"), tp("stdin.err")), 0);
	char *js = read_whole(tp("stdin.out"), NULL);
	assert_non_null(strstr(js, "\"name\":\"disk\""));
	assert_non_null(strstr(js, "\"error\":null"));
	free(js);
	free(b);
	free(d);
}

/* ---- the man page ----------------------------------------------------------------------- */

/* `report --help` and the REPORT section of vmsampler.1 name the same long
 * options; `vmsampler --help` names report. */
static void test_manpage(void **state)
{
	(void)state;
	struct run_result r;
	RUN(&r, "report", "--help");
	assert_int_equal(r.status, 0);
	char help[64][32], man[64][32];
	unsigned nh = 0, nm = 0;
	for (char *save = NULL, *l = strtok_r(r.out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		const char *p = l + strspn(l, " ");
		if (p == l || *p != '-')
			continue;
		const char *o = strstr(p, "--");
		assert_non_null(o);
		snprintf(help[nh++], 32, "%.*s", (int)strcspn(o + 2, "= "), o + 2);
	}
	run_result_free(&r);
	char *page = read_whole(src_path("man/vmsampler.1"), NULL);
	assert_non_null(page);
	char *sec = strstr(page, "\n.SH REPORT\n");
	assert_non_null(sec);
	char *end = strstr(sec + 1, "\n.SH ");
	*end = '\0';
	char prev[512] = "";
	for (char *save = NULL, *l = strtok_r(sec, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (!strcmp(prev, ".TP"))
			for (char *p = l; (p = strstr(p, "\\-\\-")); p += 4) {
				size_t n = strspn(p + 4, "abcdefghijklmnopqrstuvwxyz-");
				snprintf(man[nm++], 32, "%.*s", (int)n, p + 4);
				break;
			}
		snprintf(prev, sizeof(prev), "%s", l);
	}
	free(page);
	assert_true(nh >= 8);
	for (unsigned i = 0; i < nh; i++) {
		bool found = false;
		for (unsigned k = 0; k < nm; k++)
			found |= !strcmp(help[i], man[k]);
		if (!found)
			fail_msg("report --help has --%s, vmsampler.1 REPORT does not", help[i]);
	}
	for (unsigned k = 0; k < nm; k++) {
		bool found = false;
		for (unsigned i = 0; i < nh; i++)
			found |= !strcmp(help[i], man[k]);
		if (!found)
			fail_msg("vmsampler.1 REPORT has --%s, report --help does not", man[k]);
	}
	RUN(&r, "--help");
	assert_non_null(strstr(r.out, "vmsampler report"));
	run_result_free(&r);
}

VMS_TEST_MAIN(setup, tmp_teardown, test_rows_vs_dump, test_average_is_sars, test_interval_rows, test_summary,
	      test_sysstat_root1, test_vm_section, test_ring, test_errors, test_manpage)

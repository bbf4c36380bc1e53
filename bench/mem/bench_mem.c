/* SPDX-License-Identifier: MIT */
/* bench_mem.c - CPU cost of the host memory sources' tick (issue 14; not
 * a test).
 *
 *   bench_mem [-a] [-n TICKS] [-r ROUNDS] [-p PROC_ROOT]
 *   (built in build/bench/mem/; see bench/mem/README.md)
 *
 * The sources meminfo, vmstat (its default selection; -a: every line,
 * include ["*"]) and psi, opened and
 * declared as the loop does, against a floor that does only what any
 * sampler of the same files must: pread each file (kept open) to its end
 * and parse every number in it into an array (no names, no validation, no
 * selection).  ROUNDS rounds (default 21), each TICKS ticks (default 2000)
 * of the sources then TICKS of the floor, back to back at full speed on
 * one CPU; per round the CPU time (CLOCK_THREAD_CPUTIME_ID) per tick of
 * each and their ratio; printed: the median of the rounds' ratios, with
 * the medians of the per-tick times.  The heap allocations of the
 * sources' ticks are counted (malloc interposed; must be 0). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "alloccount.h"
#include "benchstat.h"
#include "config.h"
#include "source.h"

extern const struct vms_source_ops vms_source_meminfo;
extern const struct vms_source_ops vms_source_vmstat;
extern const struct vms_source_ops vms_source_psi;


/* ---- the floor ------------------------------------------------------------ */

#define NF 6
static int ffd[NF];
static unsigned nff;
static char fbuf[NF][65536];
static uint64_t fvals[4096];

static size_t floor_tick(void)
{
	size_t n = 0;
	for (unsigned i = 0; i < nff; i++) {
		ssize_t len = 0, r;
		while ((r = pread(ffd[i], fbuf[i] + len, sizeof(fbuf[i]) - (size_t)len, len)) > 0)
			len += r;
		for (const char *p = fbuf[i], *e = fbuf[i] + len; p < e && n < 4096;) {
			if (*p >= '0' && *p <= '9') {
				uint64_t v = 0;
				while (p < e && *p >= '0' && *p <= '9')
					v = v * 10 + (uint64_t)(*p++ - '0');
				fvals[n++] = v;
			} else {
				p++;
			}
		}
	}
	return n;
}

/* ---- the sources ------------------------------------------------------------ */

struct src {
	struct vms_source s;
	struct vms_source_conf sc;
};

static bool all_vmstat;

/* these sources read no clock, queue no events and see no VM set */
static const struct vms_source_env no_env = {0};

static int src_open(struct src *x, const struct vms_source_ops *ops, int dirfd)
{
	memset(x, 0, sizeof(*x));
	x->sc.enabled = true;
	if (ops == &vms_source_vmstat && all_vmstat)
		vms_globs_add(&x->sc.include, "*");
	else if (ops == &vms_source_vmstat)
		for (unsigned i = 0; i < VMS_VMSTAT_NDEFAULT; i++)
			vms_globs_add(&x->sc.include, vms_vmstat_default[i]);
	x->s.ops = ops;
	x->s.sconf = &x->sc;
	x->s.proc_dirfd = dirfd;
	x->s.priv = calloc(1, ops->priv_size);
	if (!x->s.priv || ops->open(&x->s, &no_env) < 0)
		return -1;
	struct vms_schema_builder b;
	vms_schema_builder_init(&b);
	vms_schema_builder_source(&b, 0);
	int r = ops->declare(&x->s, &b, &no_env);
	x->s.ncols = vms_schema_builder_count(&b);
	vms_schema_builder_free(&b);
	return r;
}

int main(int argc, char **argv)
{
	unsigned ticks = 2000, rounds = 21;
	const char *root = "/proc";
	int o;
	while ((o = getopt(argc, argv, "an:r:p:")) != -1) {
		if (o == 'a')
			all_vmstat = true;
		else if (o == 'n')
			ticks = (unsigned)atoi(optarg);
		else if (o == 'r')
			rounds = (unsigned)atoi(optarg);
		else if (o == 'p')
			root = optarg;
		else
			return 2;
	}
	int dirfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0 || !ticks || !rounds) {
		perror(root);
		return 1;
	}
	const struct vms_source_ops *ops[3] = {&vms_source_meminfo, &vms_source_vmstat, &vms_source_psi};
	struct src s[3];
	unsigned ns = 0, ncols = 0;
	for (unsigned i = 0; i < 3; i++) {
		if (src_open(&s[ns], ops[i], dirfd) < 0) {
			fprintf(stderr, "source %s not available here: left out of both sides\n", ops[i]->name);
			continue;
		}
		ncols += s[ns].s.ncols;
		ns++;
	}
	static const char *const files[] = {"meminfo", "vmstat", "pressure/cpu", "pressure/memory", "pressure/io",
					    "pressure/irq"};
	for (unsigned i = 0; i < NF; i++) {
		bool psi = i >= 2;
		bool have = false;
		for (unsigned k = 0; k < ns; k++)
			have |= s[k].s.ops == (psi ? &vms_source_psi : ops[i]);
		int fd = have ? openat(dirfd, files[i], O_RDONLY | O_CLOEXEC) : -1;
		if (fd >= 0)
			ffd[nff++] = fd;
	}
	uint64_t *slots = calloc(ncols + 1, sizeof(*slots));
	double *rs = calloc(rounds, sizeof(double)), *ts = calloc(rounds, sizeof(double)),
	       *tf = calloc(rounds, sizeof(double));
	if (!slots || !rs || !ts || !tf)
		return 1;
	struct vms_tick_ctx t = {.idx = 1};
	size_t nv = 0;
	unsigned long tick_allocs = 0;
	for (unsigned r = 0; r < rounds; r++) {
		uint64_t a = bench_cpu_ns();
		allocs = 0;
		armed = 1;
		for (unsigned i = 0; i < ticks; i++) {
			uint64_t *sl = slots;
			t.idx++;
			for (unsigned k = 0; k < ns; k++) {
				if (s[k].s.ops->sample(&s[k].s, sl, &t) != 0)
					return 1;
				sl += s[k].s.ncols;
			}
		}
		armed = 0;
		tick_allocs += allocs;
		uint64_t b = bench_cpu_ns();
		for (unsigned i = 0; i < ticks; i++)
			nv = floor_tick();
		uint64_t c = bench_cpu_ns();
		ts[r] = (double)(b - a) / ticks;
		tf[r] = (double)(c - b) / ticks;
		rs[r] = ts[r] / tf[r];
	}
	printf("sources: %u (%u columns); floor: %u files, %zu numbers a tick\n", ns, ncols, nff, nv);
	printf("sources %.2f us/tick, floor %.2f us/tick, ratio %.3f (median of %u rounds of %u ticks); "
	       "parse errors %u; allocations in the ticks %lu\n",
	       bench_median(ts, rounds) / 1000, bench_median(tf, rounds) / 1000, bench_median(rs, rounds), rounds, ticks,
	       t.parse_errors, tick_allocs);
	return tick_allocs ? 1 : 0;
}

/* SPDX-License-Identifier: MIT */
/* bench_read.c - what one read of the interference account costs
 * (vms_interf_read, bpf_interf.h): by batches (BPF_MAP_LOOKUP_BATCH)
 * against the per-entry walk (get_next_key + lookup, the fallback), in
 * the same run, the account map filled from user space to each size
 * asked (default 3600 and 16384, the map's size: 60 victims, each
 * behind 60 culprits, then full).  Needs root (it loads the program).
 *
 *   sudo build/bench/interf/bench_read [reads] [entries...]
 *
 * Prints per size: entries, µs per read both ways (median of 5 runs of
 * `reads` reads each, alternated), the ratio.  Its entries (victims from
 * 200000) are dropped at the end. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bpf_interf.h"

enum { VBASE = 200000, NV = 60, MAXE = 16384 };

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static struct vms_interf_ent buf[MAXE];

/* µs per read: the median of 5 runs of reads reads each */
static double per_read(struct vms_interf *x, bool walk, unsigned reads, unsigned *n)
{
	double run[5];
	vms_interf_walk_only(x, walk);
	for (int r = 0; r < 5; r++) {
		double t0 = now_us();
		for (unsigned i = 0; i < reads; i++)
			vms_interf_read(x, buf, MAXE, n);
		run[r] = (now_us() - t0) / reads;
	}
	qsort(run, 5, sizeof(*run), cmp_d);
	return run[2];
}

int main(int argc, char **argv)
{
	char err[256];
	struct vms_interf *x;
	unsigned reads = argc > 1 ? (unsigned)atoi(argv[1]) : 100;
	unsigned sizes[8] = {3600, MAXE}, ns = 2;
	if (argc > 2)
		for (ns = 0; ns < 8 && (int)ns + 2 < argc; ns++)
			sizes[ns] = (unsigned)atoi(argv[ns + 2]);
	if (vms_interf_open(&x, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench_read: %s\n", err);
		return 2;
	}
	unsigned put = 0, n0;
	vms_interf_read(x, buf, MAXE, &n0);
	printf("%8s %12s %12s %8s\n", "entries", "batch_us", "walk_us", "ratio");
	for (unsigned s = 0; s < ns; s++) {
		/* the next entries up to sizes[s] in all (or a full map) */
		while (n0 + put < sizes[s]) {
			struct vms_interf_ent e = {.victim = VBASE + put % NV, .kind = INTERF_HOST,
						   .id = 1 + put / NV, .ns = 1000 + put};
			if (vms_interf_account_add(x, &e) < 0)
				break;
			put++;
		}
		unsigned nb, nw;
		double w = per_read(x, true, reads, &nw), b = per_read(x, false, reads, &nb);
		printf("%8u %12.1f %12.1f %8.1f\n", nb, b, w, w / b);
		if (nb != nw)
			fprintf(stderr, "bench_read: %u entries by batches, %u walking\n", nb, nw);
	}
	for (uint32_t v = VBASE; v < VBASE + NV; v++)
		vms_interf_forget_account(x, v, NULL, 0);
	vms_interf_close(x);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/* benchstat.h - what the C micro-benchmarks (bench/mem, bench/netdev)
 * share: the thread's CPU time and the median of a round's figures. */
#ifndef VMS_BENCHSTAT_H
#define VMS_BENCHSTAT_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/* CPU time of the calling thread, user and system, in ns. */
static inline uint64_t bench_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline int bench_cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The median of v[0..n) (sorts v). */
static inline double bench_median(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), bench_cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif

/* SPDX-License-Identifier: MIT */
/* stats.h - the statistics of `vmsampler report --compare`: a series'
 * summary (mean, p50, p95, max) and whether the difference of the means
 * of two series of per-interval values is real, by a circular block
 * bootstrap that keeps their autocorrelation.
 *
 * Everything here is reproducible to the bit from the series and the
 * seed, and is written so that python/vmsampler/compare.py computes the
 * same numbers with numpy (the same PRNG streams, the same indices, the
 * same order statistics): change one, change the other. */
#ifndef VMS_STATS_H
#define VMS_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vms_stats_summary {
	size_t n;
	double mean, p50, p95, max; /* NaN when n is 0 */
};

/* Mean (summed in order), p50 and p95 by nearest rank (the smallest
 * value that at least 50 % / 95 % of the values do not exceed: rank
 * ceil(q n), as report --summary's p95) and the maximum of x[0..n).
 * NaN values are left out.  0 or -ENOMEM. */
int vms_stats_summary(const double *x, size_t n, struct vms_stats_summary *out);

/* Nearest-rank quantile of a sorted array of n > 0 values, q in (0, 1]. */
double vms_stats_rank(const double *sorted, size_t n, double q);

/* The PRNG: splitmix64 (Steele, Lea, Flood 2014), one stream per state. */
uint64_t vms_stats_next(uint64_t *state);
/* A uniform double in [0, 1): the top 53 bits of the next draw. */
double vms_stats_unif(uint64_t *state);

/* The block length for the circular block bootstrap of the mean of
 * x[0..n) (no NaN): Politis and White (2004) with the correction of
 * Patton, Politis and White (2009), rounded to an integer in [1,
 * ceil(min(3 sqrt(n), n / 3))]; 1 for fewer than 8 values or a constant
 * series. */
size_t vms_stats_block_len(const double *x, size_t n);

struct vms_boot_opt {
	unsigned B;     /* replicates (0: 1000) */
	uint64_t seed;  /* (0 is a seed like any other) */
	double level;   /* confidence level (0: 0.95) */
	size_t block_a; /* block lengths (0: vms_stats_block_len) */
	size_t block_b;
};

struct vms_boot_ci {
	double delta;         /* mean(b) - mean(a) */
	double lo, hi;        /* the interval; NaN when it cannot be had */
	size_t block_a, block_b;
	bool real;            /* the interval excludes 0 */
};

#define VMS_BOOT_MIN_N 5 /* fewer values in a series: no interval */

/* The quantile p (in (0.5, 1)) of Student's t with nu degrees of freedom:
 * exact below 3, a Cornish-Fisher expansion above (within 0.004). */
double vms_stats_t_quantile(double p, double nu);

/* Circular block bootstrap percentile interval of mean(b) - mean(a):
 * a and b are resampled independently (two runs, or two windows far
 * enough apart), replicate r of series s (0 a, 1 b) from the splitmix64
 * stream whose state starts at seed ^ (0x9e3779b97f4a7c15 * (2 r + s +
 * 1)); a replicate of a series of n values with blocks of L takes
 * ceil(n / L) starts floor(unif * n) and the values at (start + i) mod
 * n, i < L, in order, cut to n; its mean is summed in that order.  The
 * interval is delta + c (d(k) - delta), delta + c (d(B - 1 - k) - delta)
 * of the B sorted differences d, k = floor(B (1 - level) / 2), c = t(p,
 * nu) / z(p), p = 1 - (1 - level) / 2, nu the Welch-Satterthwaite degrees
 * of freedom of the two sides' replicate-mean variances (each the mean
 * square about their mean, summed in order) with max(1, floor(n / L) - 1)
 * each (c = 1 when both variances are 0).  The block length, unless
 * given, is vms_stats_block_len(), at least ceil(n^(1/3)) for a series
 * that is not constant.  NaN values must have been left out.  0,
 * -EINVAL (a bad option), -ENOMEM. */
int vms_stats_boot_diff(const double *a, size_t na, const double *b, size_t nb,
			const struct vms_boot_opt *opt, struct vms_boot_ci *out);

#endif

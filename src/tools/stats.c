/* SPDX-License-Identifier: MIT */
/* stats.c - summaries and the block bootstrap of report --compare
 * (stats.h).
 *
 * Why a circular block bootstrap of the difference of means.  The values
 * compared are per-interval rates of one run: consecutive intervals are
 * correlated (a load lasts longer than one interval, a load average is
 * a moving average), so a test that takes them as independent (t test,
 * iid bootstrap) is too sure of itself: with an AR(1) coefficient of 0.7
 * its 95 % interval covers the true difference only about 60 % of the
 * time (tests/test_stats.c measures it).  Resampling blocks of
 * consecutive values keeps the dependence within a block; the circular
 * variant (Politis and Romano 1992) gives every value the same weight,
 * so the bootstrap mean is the sample mean, and of the block schemes it
 * has the smaller error of the variance for a block length chosen as
 * well (Lahiri 1999), and integer blocks make the draws easy to repeat
 * exactly in Python.  The block length is chosen from the data (Politis
 * and White 2004, corrected by Patton, Politis and White 2009), since a
 * fixed one is either too short for a slow series or needlessly wide for
 * a noisy one.  The interval is the percentile one; means rather than
 * medians because a rate's mean over a window is what the window did
 * (the total divided by the time) and the mean's bootstrap is the one
 * whose theory holds for dependent data.
 *
 * Short series (doc/statistics.md, "Comparing runs", has the
 * measurements).  With 20 intervals a side the percentile interval alone
 * marked 9 % of iid null comparisons real and 21 % of AR(1) 0.5 ones
 * (nominal 5 %): the data-chosen block is too short when there are too
 * few lags to see the dependence, and the percentile interval behaves as
 * if the variance of the mean were known, whereas it is estimated from
 * about n / L blocks.  Two corrections: the block is at least
 * ceil(n^(1/3)) (the order of the optimal block for the variance of the
 * mean, Hall, Horowitz and Jing 1995) unless the series is constant; and
 * the interval's half-widths around the difference are widened by
 * t(nu) / z at the level, nu the Welch-Satterthwaite degrees of freedom
 * of the two bootstrap variances with floor(n / L) - 1 for each side (a
 * series of n / L nearly independent block means), which is 1 for long
 * series. */
#include "stats.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

double vms_stats_rank(const double *sorted, size_t n, double q)
{
	double r = ceil(q * (double)n - 1e-9);
	size_t k = r < 1 ? 1 : (size_t)r;
	return sorted[(k > n ? n : k) - 1];
}

int vms_stats_summary(const double *x, size_t n, struct vms_stats_summary *out)
{
	*out = (struct vms_stats_summary){0, NAN, NAN, NAN, NAN};
	double *s = malloc((n ? n : 1) * sizeof(*s));
	if (!s)
		return -ENOMEM;
	size_t m = 0;
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		if (!isnan(x[i])) {
			s[m++] = x[i];
			sum += x[i];
		}
	if (m) {
		qsort(s, m, sizeof(*s), cmp_double);
		out->n = m;
		out->mean = sum / (double)m;
		out->p50 = vms_stats_rank(s, m, 0.50);
		out->p95 = vms_stats_rank(s, m, 0.95);
		out->max = s[m - 1];
	}
	free(s);
	return 0;
}

uint64_t vms_stats_next(uint64_t *state)
{
	uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

double vms_stats_unif(uint64_t *state)
{
	return (double)(vms_stats_next(state) >> 11) * 0x1.0p-53;
}

/* the flat-top lag window of Politis and Romano (1995) */
static double flat_top(double t)
{
	t = fabs(t);
	return t <= 0.5 ? 1.0 : t <= 1.0 ? 2.0 * (1.0 - t) : 0.0;
}

/* (1/n) sum of (x[t] - m)(x[t - k] - m), t = k..n-1, summed in order */
static double acov(const double *x, size_t n, double m, size_t k)
{
	double s = 0;
	for (size_t t = k; t < n; t++)
		s += (x[t] - m) * (x[t - k] - m);
	return s / (double)n;
}

size_t vms_stats_block_len(const double *x, size_t n)
{
	if (n < 8)
		return 1;
	double dn = (double)n, sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += x[i];
	double m = sum / dn;
	double r0 = acov(x, n, m, 0);
	if (!(r0 > 0))
		return 1;
	const size_t kn = 5; /* max(5, sqrt(log10 n)): 5 below n = 10^25 */
	size_t mmax = (size_t)ceil(sqrt(dn)) + kn;
	if (mmax > n - 1)
		mmax = n - 1;
	double bmax = ceil(fmin(3 * sqrt(dn), dn / 3));
	double thr = 2 * sqrt(log10(dn) / dn);
	/* mhat: the first lag j whose KN autocorrelations j..j+KN-1 are all
	 * insignificant; else the last significant one */
	size_t mhat = 0, last_sig = 0;
	double *rho = malloc((mmax + 1) * sizeof(*rho));
	if (!rho)
		return 1;
	for (size_t k = 1; k <= mmax; k++) {
		rho[k] = acov(x, n, m, k) / r0;
		if (fabs(rho[k]) >= thr)
			last_sig = k;
	}
	for (size_t j = 1; j + kn - 1 <= mmax && !mhat; j++) {
		size_t k = 0;
		while (k < kn && fabs(rho[j + k]) < thr)
			k++;
		if (k == kn)
			mhat = j;
	}
	free(rho);
	if (!mhat)
		mhat = last_sig;
	size_t M = 2 * mhat > mmax ? mmax : 2 * mhat;
	if (M == 0)
		return 1;
	double G = 0, g0 = r0;
	for (size_t k = 1; k <= M; k++) {
		double lam = flat_top((double)k / (double)M), rk = acov(x, n, m, k);
		G += 2 * lam * (double)k * rk;
		g0 += 2 * lam * rk;
	}
	double dcb = 4.0 / 3.0 * g0 * g0;
	if (!(dcb > 0) || G == 0)
		return 1;
	double b = cbrt(2 * G * G / dcb) * cbrt(dn);
	b = floor(b + 0.5);
	if (!(b >= 1))
		return 1;
	return (size_t)(b > bmax ? bmax : b);
}

/* the standard normal quantile of p in (0.5, 1): bisection on erfc, the
 * same steps as compare.py's */
static double norm_q(double p)
{
	double lo = 0, hi = 40;
	for (int i = 0; i < 200; i++) {
		double mid = (lo + hi) / 2;
		if (0.5 * erfc(-mid / sqrt(2.0)) < p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

double vms_stats_t_quantile(double p, double nu)
{
	if (nu < 2)
		return tan(M_PI * (p - 0.5)); /* exact for 1 degree of freedom */
	if (nu < 3)
		return (2 * p - 1) / sqrt(2 * p * (1 - p)); /* exact for 2 */
	/* Cornish-Fisher (Abramowitz and Stegun 26.7.5): within 0.004 at 3
	 * degrees of freedom, 0.0003 at 5 */
	double z = norm_q(p), z2 = z * z;
	double g1 = (z2 + 1) * z / 4;
	double g2 = ((5 * z2 + 16) * z2 + 3) * z / 96;
	double g3 = (((3 * z2 + 19) * z2 + 17) * z2 - 15) * z / 384;
	double g4 = ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) * z / 92160;
	return z + g1 / nu + g2 / (nu * nu) + g3 / (nu * nu * nu) + g4 / (nu * nu * nu * nu);
}

/* the block length used for x: the data's, at least ceil(n^(1/3)) unless
 * x is constant */
static size_t use_len(const double *x, size_t n)
{
	size_t L = vms_stats_block_len(x, n);
	bool constant = true;
	for (size_t i = 1; i < n && constant; i++)
		constant = x[i] == x[0];
	size_t f = (size_t)ceil(cbrt((double)n) - 1e-9);
	return constant || L >= f ? L : f;
}

/* the variance of v[0..B): the mean, then the mean square about it, summed
 * in order */
static double var_of(const double *v, unsigned B)
{
	double m = 0, s = 0;
	for (unsigned r = 0; r < B; r++)
		m += v[r];
	m /= B;
	for (unsigned r = 0; r < B; r++)
		s += (v[r] - m) * (v[r] - m);
	return s / B;
}

/* the mean of one circular block bootstrap replicate of x[0..n) */
static double replicate(const double *x, size_t n, size_t L, uint64_t *st)
{
	double sum = 0;
	size_t got = 0;
	while (got < n) {
		size_t start = (size_t)(vms_stats_unif(st) * (double)n);
		for (size_t i = 0; i < L && got < n; i++, got++)
			sum += x[(start + i) % n];
	}
	return sum / (double)n;
}

int vms_stats_boot_diff(const double *a, size_t na, const double *b, size_t nb,
			const struct vms_boot_opt *opt, struct vms_boot_ci *out)
{
	unsigned B = opt->B ? opt->B : 1000;
	double level = opt->level > 0 ? opt->level : 0.95;
	if (level >= 1 || B < 20)
		return -EINVAL;
	*out = (struct vms_boot_ci){NAN, NAN, NAN, 0, 0, false};
	if (!na || !nb)
		return 0;
	double sa = 0, sb = 0;
	for (size_t i = 0; i < na; i++)
		sa += a[i];
	for (size_t i = 0; i < nb; i++)
		sb += b[i];
	out->delta = sb / (double)nb - sa / (double)na;
	if (na < VMS_BOOT_MIN_N || nb < VMS_BOOT_MIN_N)
		return 0;
	size_t La = opt->block_a ? opt->block_a : use_len(a, na);
	size_t Lb = opt->block_b ? opt->block_b : use_len(b, nb);
	if (La > na)
		La = na;
	if (Lb > nb)
		Lb = nb;
	out->block_a = La;
	out->block_b = Lb;
	double *d = malloc(3 * (size_t)B * sizeof(*d));
	if (!d)
		return -ENOMEM;
	double *ma = d + B, *mb = d + 2 * (size_t)B;
	for (unsigned r = 0; r < B; r++) {
		uint64_t s0 = opt->seed ^ (UINT64_C(0x9e3779b97f4a7c15) * (2 * (uint64_t)r + 1));
		uint64_t s1 = opt->seed ^ (UINT64_C(0x9e3779b97f4a7c15) * (2 * (uint64_t)r + 2));
		ma[r] = replicate(a, na, La, &s0);
		mb[r] = replicate(b, nb, Lb, &s1);
		d[r] = mb[r] - ma[r];
	}
	/* the small-sample widening (top of this file) */
	double va = var_of(ma, B), vb = var_of(mb, B), c = 1;
	if (va + vb > 0) {
		double fa = (double)(na / La > 2 ? na / La - 1 : 1), fb = (double)(nb / Lb > 2 ? nb / Lb - 1 : 1);
		double nu = (va + vb) * (va + vb) / (va * va / fa + vb * vb / fb);
		double p = 1 - (1 - level) / 2;
		c = vms_stats_t_quantile(p, nu) / norm_q(p);
	}
	qsort(d, B, sizeof(*d), cmp_double);
	size_t k = (size_t)floor((double)B * (1 - level) / 2 + 1e-9);
	out->lo = out->delta + c * (d[k] - out->delta);
	out->hi = out->delta + c * (d[B - 1 - k] - out->delta);
	out->real = out->lo > 0 || out->hi < 0;
	free(d);
	return 0;
}

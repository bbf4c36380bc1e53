/* SPDX-License-Identifier: MIT */
#include "fmt.h"

#include <math.h>
#include <string.h>
#include <time.h>

static const char digit_pairs[201] = "00010203040506070809"
				     "10111213141516171819"
				     "20212223242526272829"
				     "30313233343536373839"
				     "40414243444546474849"
				     "50515253545556575859"
				     "60616263646566676869"
				     "70717273747576777879"
				     "80818283848586878889"
				     "90919293949596979899";

static unsigned ndigits(uint64_t v)
{
	unsigned n = 1;
	for (;;) {
		if (v < 10)
			return n;
		if (v < 100)
			return n + 1;
		if (v < 1000)
			return n + 2;
		if (v < 10000)
			return n + 3;
		v /= 10000;
		n += 4;
	}
}

/* Two digits per division, written from the end (the CSV sink formats
 * every value of every frame with this). */
char *vms_fmt_u64(char *p, uint64_t v)
{
	unsigned n = ndigits(v);
	char *e = p + n;
	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);
		v /= 100;
		e -= 2;
		memcpy(e, digit_pairs + 2 * r, 2);
	}
	if (v >= 10) {
		e -= 2;
		memcpy(e, digit_pairs + 2 * v, 2);
	} else {
		*--e = (char)('0' + v);
	}
	return p + n;
}

char *vms_fmt_fixed(char *p, uint64_t v, int scale)
{
	if (scale <= 0)
		return vms_fmt_u64(p, v);
	char tmp[VMS_FMT_U64_MAX + 2];
	int n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n <= scale)
		tmp[n++] = '0';
	while (n) {
		if (n == scale)
			*p++ = '.';
		*p++ = tmp[--n];
	}
	return p;
}

static char *two(char *p, unsigned v)
{
	*p++ = (char)('0' + v / 10);
	*p++ = (char)('0' + v % 10);
	return p;
}

/* days since 1970-01-01 -> civil date (H. Hinnant's algorithm) */
static void civil(int64_t z, int *y, unsigned *m, unsigned *d)
{
	z += 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned doe = (unsigned)(z - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t yy = (int64_t)yoe + era * 400;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned mp = (5 * doy + 2) / 153;
	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = (int)(yy + (*m <= 2));
}

char *vms_fmt_time(char *p, int64_t t_real_ns, int32_t gmtoff_s)
{
	int64_t ns = t_real_ns + (int64_t)gmtoff_s * (int64_t)VMS_NSEC_PER_SEC;
	int64_t secs = ns / (int64_t)VMS_NSEC_PER_SEC;
	int64_t rem = ns % (int64_t)VMS_NSEC_PER_SEC;
	if (rem < 0) {
		rem += (int64_t)VMS_NSEC_PER_SEC;
		secs--;
	}
	int64_t days = secs / 86400, sod = secs % 86400;
	if (sod < 0) {
		sod += 86400;
		days--;
	}
	int y;
	unsigned mo, d;
	civil(days, &y, &mo, &d);
	if (y < 0 || y > 9999)
		y = 0;
	p = two(p, (unsigned)y / 100);
	p = two(p, (unsigned)y % 100);
	*p++ = '-';
	p = two(p, mo);
	*p++ = '-';
	p = two(p, d);
	*p++ = 'T';
	p = two(p, (unsigned)(sod / 3600));
	*p++ = ':';
	p = two(p, (unsigned)(sod / 60 % 60));
	*p++ = ':';
	p = two(p, (unsigned)(sod % 60));
	*p++ = '.';
	unsigned us = (unsigned)(rem / 1000);
	for (int i = 5; i >= 0; i--) {
		p[i] = (char)('0' + us % 10);
		us /= 10;
	}
	p += 6;
	int32_t off = gmtoff_s;
	*p++ = off < 0 ? '-' : '+';
	if (off < 0)
		off = -off;
	p = two(p, (unsigned)(off / 3600));
	*p++ = ':';
	p = two(p, (unsigned)(off / 60 % 60));
	return p;
}

int32_t vms_local_gmtoff(int64_t t_real_ns)
{
	time_t t = (time_t)(t_real_ns / (int64_t)VMS_NSEC_PER_SEC);
	struct tm tm;
	if (!localtime_r(&t, &tm))
		return 0;
	return (int32_t)tm.tm_gmtoff;
}

char *vms_fmt_double(char *p, double v, int prec)
{
	if (!isfinite(v))
		return p;
	if (v < 0) {
		*p++ = '-';
		v = -v;
	}
	double scale = 1;
	for (int i = 0; i < prec; i++)
		scale *= 10;
	double r = floor(v * scale + 0.5);
	if (r >= 1.8e19) { /* beyond u64: rare, fall back to coarse digits */
		return vms_fmt_u64(p, UINT64_MAX);
	}
	return vms_fmt_fixed(p, (uint64_t)r, prec);
}

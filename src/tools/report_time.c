/* SPDX-License-Identifier: MIT */
/* report_time.c - the times of --from, --to and --window (report.h). */
#include "report_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>

int rpt_parse_num(const char *s, double *v, const char **end)
{
	char *e;
	errno = 0;
	if (!(*s >= '0' && *s <= '9'))
		return -EINVAL;
	*v = strtod(s, &e);
	if (errno || !isfinite(*v))
		return -EINVAL;
	*end = e;
	return 0;
}

/* "HH:MM[:SS[.frac]]" into seconds; the rest of s must be empty */
static int parse_tod(const char *s, double *sec, const char **rest)
{
	unsigned h, m, n = 0;
	double sc = 0;
	if (sscanf(s, "%2u:%2u%n", &h, &m, (int *)&n) != 2 || n != 5 || h > 23 || m > 59)
		return -EINVAL;
	s += 5;
	if (*s == ':') {
		const char *e;
		if (!(s[1] >= '0' && s[1] <= '9' && s[2] >= '0' && s[2] <= '9') ||
		    rpt_parse_num(s + 1, &sc, &e) < 0 || sc >= 61)
			return -EINVAL;
		s = e;
	}
	*sec = h * 3600.0 + m * 60.0 + sc;
	*rest = s;
	return 0;
}

int vms_report_parse_time(const char *s, struct vms_tspec *t)
{
	const char *e;
	double v;
	t->text = s;
	/* seconds from the first frame */
	if (rpt_parse_num(s, &v, &e) == 0 && (*e == '\0' || strcmp(e, "s") == 0)) {
		t->kind = VMS_T_REL;
		t->rel = v;
		return 0;
	}
	/* a time of day */
	if (parse_tod(s, &v, &e) == 0 && *e == '\0') {
		t->kind = VMS_T_TOD;
		t->tod = v;
		return 0;
	}
	/* YYYY-MM-DD[T ]HH:MM[:SS[.frac]][Z|+HH:MM|-HH:MM] */
	int y, mo, d, n = 0;
	if (sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &n) != 3 || n != 10 || (s[10] != 'T' && s[10] != ' ') ||
	    mo < 1 || mo > 12 || d < 1 || d > 31)
		return -EINVAL;
	if (parse_tod(s + 11, &v, &e) < 0)
		return -EINVAL;
	struct tm tm = {.tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_isdst = -1};
	long whole = (long)v; /* no libm in vmsampler-tools */
	tm.tm_hour = (int)(whole / 3600);
	tm.tm_min = (int)(whole % 3600 / 60);
	tm.tm_sec = (int)(whole % 60);
	time_t secs;
	if (*e == '\0') {
		secs = mktime(&tm); /* local time */
		if (secs == (time_t)-1)
			return -EINVAL;
	} else {
		int off = 0;
		if (strcmp(e, "Z") != 0) {
			unsigned oh, om;
			int k = 0;
			if ((e[0] != '+' && e[0] != '-') || sscanf(e + 1, "%2u:%2u%n", &oh, &om, &k) != 2 ||
			    k != 5 || e[6] != '\0' || oh > 23 || om > 59)
				return -EINVAL;
			off = (int)(oh * 3600 + om * 60) * (e[0] == '-' ? -1 : 1);
		}
		secs = timegm(&tm) - off;
	}
	t->kind = VMS_T_ABS;
	t->abs_ns = (int64_t)secs * 1000000000LL + (int64_t)((v - (double)whole) * 1e9 + 0.5);
	return 0;
}

/* a time of day on the first frame's (local) date */
void vms_report_resolve_tod(struct vms_tspec *t, int64_t t0_real)
{
	if (t->kind != VMS_T_TOD)
		return;
	time_t s = (time_t)(t0_real / 1000000000LL);
	struct tm tm;
	localtime_r(&s, &tm);
	long whole = (long)t->tod;
	tm.tm_hour = (int)(whole / 3600);
	tm.tm_min = (int)(whole % 3600 / 60);
	tm.tm_sec = (int)(whole % 60);
	tm.tm_isdst = -1;
	t->abs_ns = (int64_t)mktime(&tm) * 1000000000LL + (int64_t)((t->tod - (double)whole) * 1e9 + 0.5);
	t->kind = VMS_T_ABS;
}

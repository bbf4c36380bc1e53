/* SPDX-License-Identifier: MIT */
/* fmt.h - hand-written number and time formatting (no stdio, no locale,
 * no allocation): used by the CSV sink in the tick and by dump. */
#ifndef VMS_FMT_H
#define VMS_FMT_H

#include "vms.h"

#define VMS_FMT_U64_MAX 20   /* digits of UINT64_MAX */
#define VMS_FMT_TIME_MAX 32  /* "2026-11-22T07:46:01.123456+05:30" */

/* Decimal digits of v at p; returns the end. */
char *vms_fmt_u64(char *p, uint64_t v);
/* v / 10^scale with exactly `scale` fraction digits ("0.21"); scale 0 is
 * plain decimal. */
char *vms_fmt_fixed(char *p, uint64_t v, int scale);
/* ISO 8601 local time with microseconds and the UTC offset gmtoff_s. */
char *vms_fmt_time(char *p, int64_t t_real_ns, int32_t gmtoff_s);
/* The local UTC offset (seconds east) in effect at t_real_ns.  Calls
 * localtime_r: not for the tick. */
int32_t vms_local_gmtoff(int64_t t_real_ns);
/* A double with `prec` fraction digits, rounded half away from zero;
 * for rates (reader side). Non-finite values give "". */
char *vms_fmt_double(char *p, double v, int prec);

#endif

/* SPDX-License-Identifier: MIT */
/* parse_schedstat.c - /proc/schedstat (parse.h): the version line, then
 * the cpu lines; the timestamp and domain lines are passed over (one
 * memchr each, never tokenised). */
#include <string.h>

#include "parse.h"

#define SCHEDSTAT_CPU_FIELDS 9

static bool starts(const struct vms_cur *l, const char *k, size_t n)
{
	return vms_cur_left(l) >= n && memcmp(l->p, k, n) == 0;
}

int vms_schedstat_version(struct vms_cur *c, unsigned *version)
{
	struct vms_cur l;
	*version = 0;
	if (!vms_cur_line(c, &l))
		return -ENODATA;
	if (!starts(&l, "version ", 8))
		return -EINVAL;
	l.p += 8;
	uint64_t v = vms_cur_u64(&l);
	if (!vms_cur_ok(&l) || !vms_cur_rest_blank(&l) || v > UINT32_MAX)
		return -EINVAL;
	*version = (unsigned)v;
	return v >= VMS_SCHEDSTAT_VERSION_MIN && v <= VMS_SCHEDSTAT_VERSION_MAX ? 1 : -EPROTONOSUPPORT;
}

int vms_schedstat_next(struct vms_cur *c, struct vms_schedstat_cpu *out)
{
	struct vms_cur l;
	for (;;) {
		if (!vms_cur_line(c, &l))
			return 0;
		if (starts(&l, "domain", 6) || starts(&l, "timestamp ", 10))
			continue;
		if (!starts(&l, "cpu", 3))
			return -EINVAL;
		break;
	}
	const char *d = l.p + 3, *e = d;
	while (e < l.end && *e != ' ' && *e != '\t')
		e++;
	int r = vms_cpu_number(d, (size_t)(e - d), &out->cpu);
	if (r < 0)
		return r;
	l.p = e;
	uint64_t v[SCHEDSTAT_CPU_FIELDS];
	unsigned n = vms_cur_u64_list(&l, v, SCHEDSTAT_CPU_FIELDS);
	if (!vms_cur_ok(&l))
		return l.err == -ERANGE ? -ERANGE : -EINVAL;
	if (n != SCHEDSTAT_CPU_FIELDS || !vms_cur_rest_blank(&l))
		return -EINVAL;
	out->run_ns = v[6];
	out->wait_ns = v[7];
	out->slices = v[8];
	return 1;
}

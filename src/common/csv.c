/* SPDX-License-Identifier: MIT */
#include "csv.h"

#include <string.h>

#include "fmt.h"

size_t vms_csv_field_max(const char *s)
{
	return 2 * strlen(s) + 2;
}

char *vms_csv_field(char *p, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		size_t n = strlen(s);
		memcpy(p, s, n);
		return p + n;
	}
	*p++ = '"';
	for (; *s; s++) {
		if (*s == '"')
			*p++ = '"';
		*p++ = *s;
	}
	*p++ = '"';
	return p;
}

char *vms_csv_meta(char *p, const struct vms_frame *f, int32_t gmtoff_s)
{
	return vms_csv_meta_as(p, f, f->flags, f->lost_frames, gmtoff_s);
}

char *vms_csv_meta_as(char *p, const struct vms_frame *f, uint32_t flags, uint32_t lost_frames,
		      int32_t gmtoff_s)
{
	p = vms_fmt_u64(p, f->seq);
	*p++ = ',';
	p = vms_fmt_time(p, f->t_real_ns, gmtoff_s);
	*p++ = ',';
	p = vms_fmt_u64(p, f->t_mono_ns);
	*p++ = ',';
	p = vms_fmt_u64(p, f->gen);
	*p++ = ',';
	p = vms_fmt_u64(p, flags);
	*p++ = ',';
	p = vms_fmt_u64(p, f->missed_ticks);
	*p++ = ',';
	p = vms_fmt_u64(p, lost_frames);
	*p++ = ',';
	p = vms_fmt_u64(p, f->late_ns);
	*p++ = ',';
	p = vms_fmt_u64(p, f->self_cpu_ns);
	return p;
}

char *vms_csv_value(char *p, uint64_t v, int scale)
{
	if (v == VMS_NONE)
		return p;
	return vms_fmt_fixed(p, v, scale);
}

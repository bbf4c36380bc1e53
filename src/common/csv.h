/* SPDX-License-Identifier: MIT */
/* csv.h - RFC 4180 rows for frames (shared by the CSV sink and dump). */
#ifndef VMS_CSV_H
#define VMS_CSV_H

#include "fmt.h"
#include "schema.h"
#include <vmsampler/ring.h>

/* The frame columns every wide or long row starts with. */
#define VMS_CSV_META "seq,time,t_mono_ns,gen,flags,missed_ticks,lost_frames,late_ns,self_cpu_ns"

/* Append s as one CSV field (quoted when it holds , " CR or LF). */
char *vms_csv_field(char *p, const char *s);
/* Bytes a field for s can take at most. */
size_t vms_csv_field_max(const char *s);
/* Frame meta fields (VMS_CSV_META order), without a trailing comma. */
char *vms_csv_meta(char *p, const struct vms_frame *f, int32_t gmtoff_s);
/* The same with flags and lost_frames given (an output's own gaps: see
 * sink.h) instead of f's. */
char *vms_csv_meta_as(char *p, const struct vms_frame *f, uint32_t flags, uint32_t lost_frames,
		      int32_t gmtoff_s);
/* One value: empty if missing, else decimal with the column's scale. */
char *vms_csv_value(char *p, uint64_t v, int scale);
/* Upper bound of a meta prefix and of one value field. */
#define VMS_CSV_META_MAX (9 * 21 + VMS_FMT_TIME_MAX + 16)
#define VMS_CSV_VALUE_MAX 24

#endif

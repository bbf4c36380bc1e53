/* SPDX-License-Identifier: MIT */
/* rates_csv.h - the CSV writer of `dump --rates`, over libvmsampler's rate
 * stream (src/lib/rates.h). */
#ifndef VMS_RATES_CSV_H
#define VMS_RATES_CSV_H

#include "rates.h"

/* Output: seq,time,t_mono_ns,interval_s,rate_flags, then the derived
 * columns.  interval_s is the time since the previous frame; each rate is
 * over its own columns' interval (since the last frame that had them).  The header is the union of the derived columns of every
 * generation added with vms_rates_declare() before the first frame (dump
 * pre-scans a seekable input); without that, the first generation's
 * columns, and later generations are projected onto them (new columns
 * left out with a warning, vanished ones empty) like the CSV sink does on
 * stdout.  One row per frame after the first (a row is an interval). */
struct vms_rates;

int vms_rates_open(struct vms_rates **out, const char *path, unsigned how);
/* Add the derived columns of s to the header (before the first frame). */
int vms_rates_declare(struct vms_rates *r, const struct vms_schema *s);
/* Feed the next frame (s must stay valid until the next call). */
int vms_rates_frame(struct vms_rates *r, const struct vms_schema *s, const struct vms_frame *f);
/* Forget the previous frame (a new stream starts: no interval across). */
void vms_rates_restart(struct vms_rates *r);
/* Rows written so far. */
uint64_t vms_rates_rows(const struct vms_rates *r);
/* Flush and close; returns the first error. */
int vms_rates_close(struct vms_rates *r);

#endif

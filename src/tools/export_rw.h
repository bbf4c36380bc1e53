/* SPDX-License-Identifier: MIT */
/* export_rw.h - `vmsampler export --remote-write`: every frame of a .vms
 * file or of a live ring pushed with Prometheus remote write
 * (remote_write.h), under the names, labels and units of metrics.h (the
 * series a scrape of /metrics gives, at every frame), with staleness
 * markers for series that end, and for a file a durable cursor so that a
 * restart resumes right after the last frame the receiver acknowledged.
 *
 * The cursor (a small text file, replaced by rename after each batch):
 *   vmsampler-export-cursor 1
 *   url URL                       the receiver it counts for
 *   dev D ino I                   the file it was made on (informative)
 *   first SEQ TIME_NS MONO_NS     the file's first frame: its identity
 *   acked N SEQ TIME_NS           the N first frames were acknowledged,
 *                                 the Nth being SEQ at TIME_NS
 *   inflight M                    frames up to M were being sent (M >= N)
 * A restart reads the file from its first frame (so that held values,
 * sums and staleness are what an uninterrupted run has), sends nothing up
 * to frame N, and makes its first request end exactly at frame M: a
 * request the receiver took but whose acknowledgement the cursor missed
 * goes again whole, which Prometheus refuses whole (out of order, HTTP
 * 400: counted, nothing lost). */
#ifndef VMS_EXPORT_RW_H
#define VMS_EXPORT_RW_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vms_mopts;

#define VMS_XRW_BATCH_FRAMES 60              /* --rw-batch default */
#define VMS_XRW_BATCH_BYTES (4u << 20)       /* and the protobuf's size bound */

struct vms_xrw_conf {
	const char *url;
	const char *input;      /* a .vms file or a ring */
	bool follow;            /* a file: wait for more at its end */
	const char *cursor;     /* a file only: the cursor's path, or NULL */
	unsigned batch_frames;  /* 0: VMS_XRW_BATCH_FRAMES */
	size_t batch_bytes;     /* 0: VMS_XRW_BATCH_BYTES */
	const char *username, *password, *bearer, *ca_file;
	double user_hz;
	const struct vms_mopts *mopts; /* names and families (NULL: the defaults) */
	volatile sig_atomic_t *stop;
	/* the exporter's own counters, VMS_MMETA_RW_* of a VMS_MMETA_N
	 * array, updated with atomic stores (for /metrics), or NULL */
	uint64_t *stats;
	/* external labels, "KEY=VALUE" (valid names, checked by the caller),
	 * on every series that has no label KEY of its own (Prometheus'
	 * external_labels); instance, unless given here, is the hostname the
	 * input recorded (or, without one, this machine's, said once) */
	const char *const *labels;
	unsigned nlabels;
};

/* Push until stopped, the end of the input (a ring whose writer exited,
 * a file not followed), or a failure: 0, 1 a failure (said on stderr),
 * 2 a usage error (a cursor of another receiver). */
int vms_xrw_run(const struct vms_xrw_conf *c);

#endif

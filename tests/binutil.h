/* SPDX-License-Identifier: MIT */
/* binutil.h - helpers for the binary-stream tests: synthetic schemas and
 * frames, driving a sink the way the loop does, files in and out. */
#ifndef VMS_BINUTIL_H
#define VMS_BINUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "schema.h"
#include "sink.h"
#include <vmsampler/ring.h>

struct colspec {
	const char *name;
	uint8_t kind, unit, wrap_bits;
	int8_t scale;
};

struct vms_schema *mk_schema(uint32_t gen, const struct colspec *cols, uint32_t n);

/* A run of frames: frame i belongs to schema sch[i]. */
struct run {
	struct vms_frame **f;
	struct vms_schema **sch; /* borrowed from schemas[] */
	size_t n;
	struct vms_schema *schemas[8];
	unsigned nschemas;
};

/* Three generations (6, 7 and 200 columns), n frames in total, with
 * missing values, counters near 2^64, a 32-bit wrap and a difference of
 * exactly 2^63 (which forces a keyframe). */
void run_make(struct run *r, size_t n);
void run_free(struct run *r);

/* Feed frames [from, to) of r through ops into path, begin()ing at each
 * schema change; events (every 37th frame) if the sink takes them.  The
 * sink is opened and closed here.  Returns close()'s result. */
int feed_sink(const struct vms_sink_ops *ops, const char *path, const struct run *r, size_t from,
	      size_t to, bool events);

/* Whole file into memory (malloc'ed), *len its size. */
uint8_t *slurp(const char *path, size_t *len);
void spit(const char *path, const void *data, size_t len);
/* slurp, and a decoder opened on it (asserted); free the buffer after. */
struct vms_bin_dec;
uint8_t *slurp_dec(const char *path, size_t *len, struct vms_bin_dec *d);
/* True if both files exist with the same bytes. */
bool same_file(const char *a, const char *b);
/* Compare a decoded frame with an original (meta and values). */
void assert_frame_eq(const struct vms_frame *a, const struct vms_frame *b);

/* Run a command with stdin (NULL: inherited), stdout and stderr from and to
 * files; returns its exit status (or 128 + signal). */
int run_cmd(char *const argv[], const char *in, const char *out, const char *err);

#endif

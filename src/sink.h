/* SPDX-License-Identifier: MIT */
/* sink.h - what a sink is.
 *
 * A sink turns frames into bytes on an output.  It is a reader of the
 * ring: the loop hands it committed frames in order and it formats each
 * into its buffered output (struct vms_out).  A sink never blocks the
 * tick: when its buffer has no room, write() returns -EAGAIN and the frame
 * stays in the ring until the output drains.
 *   open(s)               open the output (s->path, s->conf). 0 or -errno.
 *   begin(s, schema)      a new generation starts with the next frame
 *                         (write the header / a SCHEMA record, or roll to
 *                         a new file).  May allocate.
 *   write(s, schema, f)   append frame f; 0 or -EAGAIN (no room; nothing
 *                         was appended) or -errno.  Must not allocate.
 *   event(s, ev)          optional: record an event.
 *   flush(s)              non-blocking write-out: 0, -EAGAIN (data kept),
 *                         -errno.
 *   reopen(s)             SIGHUP: blocking flush, reopen the path (log
 *                         rotation); the next frame is preceded by a new
 *                         begin().
 *   close(s)              blocking flush and close; returns the first
 *                         error.
 */
#ifndef VMS_SINK_H
#define VMS_SINK_H

#include "config.h"
#include "out.h"
#include "schema.h"
#include <vmsampler/ring.h>

struct vms_event {
	uint32_t type;       /* enum vms_event_type */
	uint32_t gen;
	uint64_t before_seq; /* happened before the frame with this seq */
	uint64_t t_mono_ns;
	int64_t t_real_ns;
	char subject[80];
	char detail[160];
};

struct vms_sink;

struct vms_sink_ops {
	const char *name;
	size_t priv_size;
	int (*open)(struct vms_sink *s);
	int (*begin)(struct vms_sink *s, const struct vms_schema *schema);
	int (*write)(struct vms_sink *s, const struct vms_schema *schema, const struct vms_frame *f);
	int (*event)(struct vms_sink *s, const struct vms_event *ev);
	int (*flush)(struct vms_sink *s);
	/* SIGHUP: close the file and open the path again.  Returns the new
	 * open's error; the old file's close error goes to s->old_err and
	 * the seq of the last frame wholly in the old file to s->durable_seq
	 * (0: none, or not known) */
	int (*reopen)(struct vms_sink *s);
	int (*close)(struct vms_sink *s);
	/* fd to poll for POLLOUT while flush() returns -EAGAIN, or -1 */
	int (*pollfd)(struct vms_sink *s);
};

struct vms_sink {
	const struct vms_sink_ops *ops;
	void *priv;
	const struct vms_config *conf;
	const char *path; /* "-" for stdout */
	/* managed by the loop */
	uint64_t next_seq;   /* next frame to hand over */
	uint64_t next_event; /* next event id to hand over */
	uint32_t gen;        /* generation begun (0: none yet) */
	uint64_t lost;       /* frames overwritten before this sink got them */
	uint64_t lost_pending; /* ... not yet told: on the next frame written */
	uint64_t first_seq;  /* the first frame handed to the current file (0: none yet) */
	uint64_t durable_seq; /* set by reopen(): see there */
	int old_err;         /* set by reopen(): see there */
	bool reopen_failed;  /* the new file did not open: tried again at each drain */
	int last_err;
	bool failed;
};

extern const struct vms_sink_ops vms_sink_csv;
extern const struct vms_sink_ops vms_sink_bin;

/* vms_out_open()'s `how` for this sink: `how`, and VMS_OUT_FORCE when the
 * configuration says --force. */
static inline unsigned vms_sink_out_how(const struct vms_sink *s, unsigned how)
{
	return how | (s->conf && s->conf->force ? VMS_OUT_FORCE : 0);
}

/* The sink for a format (VMS_FORMAT_CSV / VMS_FORMAT_BIN). */
const struct vms_sink_ops *vms_sink_for_format(int format);

#endif

/* SPDX-License-Identifier: MIT */
/* sink.h - what a sink is.
 *
 * A sink turns frames into bytes on an output.  It is a reader of the
 * ring: the loop hands it committed frames in order and it formats each
 * into its buffered output (struct vms_out).  A sink never blocks the
 * tick: when its buffer has no room, write() returns -EAGAIN and the frame
 * stays in the ring until the output drains.
 *   open(s)               open the output (s->path; s->force, s->csv_layout). 0 or -errno.
 *   begin(s, schema)      a new generation starts with the next frame
 *                         (write the header / a SCHEMA record, or roll to
 *                         a new file).  May allocate.
 *   write(s, schema, f)   append frame f; 0 or -EAGAIN (no room; nothing
 *                         was appended) or -errno.  Must not allocate.
 *   event(s, ev)          optional: record an event.
 *   flush(s)              non-blocking write-out: 0, -EAGAIN (data kept),
 *                         -errno.
 *   reopen(s)             SIGHUP (log rotation): open the path again
 *                         (appending); if that works, close the file
 *                         being written (vms_sink_close_out(); its error
 *                         goes to s->close_err) and go on in the new one,
 *                         whose next frame is preceded by a new begin().
 *                         0: reopened; 1: nothing to reopen (stdout, a
 *                         pipe); -errno: the path cannot be opened and
 *                         the old file is kept.  Never blocks on a pipe.
 *   close(s)              blocking flush and close; returns the first
 *                         error.
 *   bytes(s)              the size of the file being written, with what
 *                         is buffered (rotation by size).
 *   newgen_file(s)        optional: when the output is rotated, true if a
 *                         new generation should start a new file (wide
 *                         CSV, whose header cannot change).  The sink's
 *                         own decision; without it, only the rotation's
 *                         time and size do.
 * The file opened (and reopened) is s->file when set (rotation names each
 * file), else s->path.
 *
 * Lost frames.  A frame that never reaches an output (overwritten in the
 * ring while the output was slow or failing, or dropped with a buffer that
 * could not be written when its file was closed) is counted on the next
 * frame that output gets: the loop sets s->gap to the seqs missing before
 * the frame it hands over, and the sink writes lost_frames = f->lost_frames
 * + s->gap (and the GAP flag) instead of the ring frame's own fields: each
 * output has its own gaps.  To know which frames a failed write dropped,
 * a sink notes the end offset of each frame's record in s->ledger
 * (vms_ledger_room() before appending, vms_ledger_add() after) and closes
 * a file with vms_sink_close_out().
 */
#ifndef VMS_SINK_H
#define VMS_SINK_H

#include "out.h"
#include "schema.h"
#include <vmsampler/format.h>
#include <vmsampler/ring.h>

/* Output formats and CSV layouts (the configuration's format and csv keys). */
enum vms_format { VMS_FORMAT_AUTO = 0, VMS_FORMAT_CSV, VMS_FORMAT_BIN };
enum vms_csv_layout { VMS_CSV_WIDE = 0, VMS_CSV_LONG };

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
	int (*reopen)(struct vms_sink *s);
	int (*close)(struct vms_sink *s);
	/* fd to poll for POLLOUT while flush() returns -EAGAIN, or -1 */
	int (*pollfd)(struct vms_sink *s);
	uint64_t (*bytes)(struct vms_sink *s);
	bool (*newgen_file)(const struct vms_sink *s);
};

/* Frames whose records are in an output's buffer or in flight: the end
 * offset of each record in the output (struct vms_out: written + len after
 * the record) and its seq, oldest first.  Fixed size: a sink that finds it
 * full waits (-EAGAIN) as when its buffer is full; 1024 records of at
 * least 64 bytes cover a 64 KiB buffer. */
#define VMS_LEDGER_CAP 1024u
struct vms_ledger {
	uint64_t end[VMS_LEDGER_CAP];
	uint64_t seq[VMS_LEDGER_CAP];
	uint32_t head, n;
	uint64_t done_seq; /* last frame known to be in the output whole */
};

struct vms_sink {
	const struct vms_sink_ops *ops;
	void *priv;
	bool force;          /* may overwrite a file that is not a vmsampler output (--force) */
	enum vms_csv_layout csv_layout;
	const char *path; /* "-" for stdout */
	const char *file; /* the file to open, when not path (rotation; not owned) */
	/* managed by the loop */
	uint64_t next_seq;   /* next frame to hand over */
	uint64_t next_event; /* next event id to hand over */
	uint32_t gen;        /* generation begun (0: none yet) */
	uint64_t lost;       /* frames that never reached this output (total) */
	/* the last frame handed to the output (0: none yet); lowered by
	 * vms_sink_close_out() to the last one that reached the file when a
	 * closing file dropped the rest */
	uint64_t out_seq;
	uint64_t gap;        /* frames missing before the one being written */
	uint64_t file_frames; /* frames written to the file open now */
	int last_err;
	bool failed;
	/* the sink's */
	int close_err;       /* reopen(): closing the previous file failed so */
	struct vms_ledger ledger;
};

/* lost_frames and flags as this output writes frame f (see "Lost frames"). */
static inline uint32_t vms_sink_lost_frames(const struct vms_sink *s, const struct vms_frame *f)
{
	uint64_t n = (uint64_t)f->lost_frames + s->gap;
	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}
static inline uint32_t vms_sink_frame_flags(const struct vms_sink *s, const struct vms_frame *f)
{
	return s->gap ? f->flags | VMS_FRAME_GAP : f->flags;
}

/* True if one more frame fits the ledger, after retiring the frames whose
 * records end at or before `committed` (vms_out's end of the last whole
 * record written). */
bool vms_ledger_room(struct vms_ledger *lg, uint64_t committed);
/* Note frame seq's record, which ends at offset end. */
void vms_ledger_add(struct vms_ledger *lg, uint64_t end, uint64_t seq);
/* Close o (vms_out_close) and account for what it could not write: when
 * the close failed, the frames whose records did not reach the file whole
 * are dropped and s->out_seq goes back to the last one that did (the loop
 * then writes them again from the ring if it still holds them, or counts
 * them as lost).  Returns vms_out_close()'s result. */
int vms_sink_close_out(struct vms_sink *s, struct vms_out *o);
/* Make n (just opened, nothing appended yet) the output o, which was
 * closed with vms_sink_close_out().  n was opened before o was closed: if
 * they are the same file, what the close wrote or truncated moved its end,
 * so n's offsets are taken again from the file. */
void vms_sink_adopt_out(struct vms_out *o, struct vms_out *n);
/* reopen() of a sink writing o: when `reopenable` is false (stdout, a
 * pipe), o is flushed (never blocking) and 1 returned; else `path` is
 * opened again with vms_out_open(how | VMS_OUT_APPEND, bufsize) and, if it
 * could be, replaces o (0), or o goes on (its -errno). */
int vms_sink_reopen_out(struct vms_sink *s, struct vms_out *o, bool reopenable, const char *path, unsigned how,
			size_t bufsize);

/* The ops table vms_sink_<id> of the sink named "<id>": its private state
 * is struct <id>, its ops <id>_open, _begin, _write, _flush, _reopen,
 * _close, _pollfd and _bytes; the optional ones follow as designated
 * initializers (.event = bin_event). */
#define VMS_SINK_OPS(id, ...)                                               \
	const struct vms_sink_ops vms_sink_##id = {                          \
		.name = #id,                                                 \
		.priv_size = sizeof(struct id),                              \
		.open = id##_open,                                           \
		.begin = id##_begin,                                         \
		.write = id##_write,                                         \
		.flush = id##_flush,                                         \
		.reopen = id##_reopen,                                       \
		.close = id##_close,                                         \
		.pollfd = id##_pollfd,                                       \
		.bytes = id##_bytes,                                         \
		__VA_ARGS__                                                  \
	}

extern const struct vms_sink_ops vms_sink_csv;
extern const struct vms_sink_ops vms_sink_bin;

/* vms_out_open()'s `how` for this sink: `how`, and VMS_OUT_FORCE when the
 * configuration says --force. */
static inline unsigned vms_sink_out_how(const struct vms_sink *s, unsigned how)
{
	return how | (s->force ? VMS_OUT_FORCE : 0);
}

/* The file a sink opens: s->file, else s->path. */
static inline const char *vms_sink_target(const struct vms_sink *s)
{
	return s->file ? s->file : s->path;
}

/* The sink for a format (VMS_FORMAT_CSV / VMS_FORMAT_BIN). */
const struct vms_sink_ops *vms_sink_for_format(int format);

#endif

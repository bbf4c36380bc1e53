/* SPDX-License-Identifier: MIT */
/* out.h - a buffered output stream with record boundaries.
 *
 * Sinks append whole records (a CSV row, a binary record) to the buffer;
 * vms_out_flush() writes without blocking when the fd is non-blocking
 * (pipes, sockets) and keeps what it could not write.  Writes never
 * reorder or drop bytes, so a record is either entirely in the file or
 * (after a fatal error) cut off at the end; vms_out_close() then truncates
 * a regular file back to the last complete record, so nothing already
 * written is ever corrupted. */
#ifndef VMS_OUT_H
#define VMS_OUT_H

#include <signal.h>
#include <sys/types.h>

#include "vms.h"

struct vms_out {
	int fd;
	bool owns_fd;
	bool is_reg;        /* regular file: can truncate to a boundary */
	char *path;         /* NULL for stdout / a given fd */
	char *buf;
	size_t cap, len;    /* buffered bytes */
	size_t rec_start;   /* buffer offset where the open record starts */
	uint64_t written;   /* bytes handed to the kernel */
	uint64_t committed; /* file offset of the end of the last whole record written */
	uint64_t bq[256];   /* record ends (absolute byte counts) not yet written */
	uint64_t bq_tag[256]; /* the tag each of those records was ended with */
	unsigned bq_head, bq_n;
	uint64_t committed_tag; /* the last nonzero tag of a record wholly written */
	int saved_flags;    /* fd flags to restore at close (-1: untouched) */
	int err;            /* last hard error (-errno), 0 if none */
};

/* How vms_out_open() treats what is already at the path.  Without
 * VMS_OUT_APPEND an existing non-empty file is truncated only if it is an
 * output of the same kind (VMS_OUT_BIN: starts with the .vms magic;
 * VMS_OUT_CSV: starts with vmsampler's "seq,time," header) or with
 * VMS_OUT_FORCE.  Never, even forced: a vmsampler ring (live or not: its
 * readers have it mapped), a file registered with vms_out_protect() (a
 * reader's own input), or a regular file owned by another user than the
 * effective one (safefile.h: they could alter what is written).  A
 * symbolic link in the last component is not followed unless forced. */
#define VMS_OUT_APPEND 0x1u
#define VMS_OUT_FORCE  0x2u
#define VMS_OUT_BIN    0x4u
#define VMS_OUT_CSV    0x8u

/* Set by the SIGINT/SIGTERM handler that main() installs for start-up:
 * an output's open that waits for the reader of a FIFO gives up with
 * -EINTR.  (Files read at start-up are never FIFOs: safefile.h.) */
extern volatile sig_atomic_t vms_out_stop;

/* Open `path` ("-" = stdout) for writing, as `how` says (VMS_OUT_*).
 * Regular files are opened O_CLOEXEC (O_APPEND when appending); a FIFO
 * waits for its reader (SIGINT/SIGTERM end the wait: -EINTR); stdout and
 * FIFOs are set non-blocking if they are pipes or sockets.  A refusal is
 * -EEXIST (not ours, or another user's), -ELOOP (a link), -EBUSY (a ring,
 * the input):
 * vms_out_strerror() says why. */
int vms_out_open(struct vms_out *o, const char *path, unsigned how, size_t bufsize);
/* The same checks, for a caller that wants a bare fd (O_WRONLY|O_CLOEXEC). */
int vms_out_open_fd(const char *path, unsigned how);
/* The message for an error of vms_out_open(): the refusal's reason, or
 * strerror(). */
const char *vms_out_strerror(int err);
/* No output of this process may truncate or append to this file (dump's
 * input, as stat() gives it).  0, or -ENOSPC when too many are. */
struct stat;
int vms_out_protect(const struct stat *st);
/* True for the errors that refuse an existing file (exit status 2). */
static inline bool vms_out_refused(int err)
{
	return err == -EEXIST || err == -ELOOP || err == -EBUSY;
}
/* Wrap an existing fd (not owned). */
int vms_out_fdopen(struct vms_out *o, int fd, size_t bufsize);
/* Room left in the buffer. */
static inline size_t vms_out_room(const struct vms_out *o) { return o->cap - o->len; }
/* Reserve n bytes at the end of the buffer (NULL if no room). */
static inline char *vms_out_reserve(struct vms_out *o, size_t n)
{
	return o->cap - o->len >= n ? o->buf + o->len : NULL;
}
/* Account n bytes written into the reserved area. */
static inline void vms_out_advance(struct vms_out *o, size_t n) { o->len += n; }
/* Make sure a record of n bytes can fit into an empty buffer (may
 * reallocate; call at schema changes, not per frame). */
int vms_out_ensure(struct vms_out *o, size_t n);
/* Append bytes; -ENOBUFS if they do not fit. */
int vms_out_put(struct vms_out *o, const void *p, size_t n);
/* Mark the end of a record (everything appended since the last mark). */
void vms_out_end_record(struct vms_out *o);
/* The same, with a tag (a frame's seq) that committed_tag takes once the
 * record is wholly written: after a write error, the last frame that is
 * in the file.  (If more than 256 records wait, the oldest boundaries are
 * forgotten and committed_tag can lag behind: never ahead.) */
void vms_out_end_record_tag(struct vms_out *o, uint64_t tag);
/* Forget everything appended since the last end_record (a record that
 * did not fit). */
void vms_out_cancel_record(struct vms_out *o);
/* Write what can be written without blocking.  0 when the buffer is
 * empty, -EAGAIN when data remains (retry when the fd is writable),
 * other -errno on hard errors (ENOSPC, EPIPE, EIO...: data is kept). */
int vms_out_flush(struct vms_out *o);
/* Blocking flush (for exit and SIGHUP); 0 or -errno. */
int vms_out_drain(struct vms_out *o);
/* Flush, truncate a regular file to its last whole record if a flush
 * failed, close. Returns the first error. */
int vms_out_close(struct vms_out *o);
/* True if data is waiting for the fd. */
static inline bool vms_out_pending(const struct vms_out *o) { return o->len > 0; }

#endif

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
	unsigned bq_head, bq_n;
	int saved_flags;    /* fd flags to restore at close (-1: untouched) */
	int err;            /* last hard error (-errno), 0 if none */
};

/* Open `path` ("-" = stdout) for writing: create/truncate (append=false) or
 * append.  Regular files are opened O_APPEND|O_CLOEXEC; stdout is set
 * non-blocking if it is a pipe or socket. */
int vms_out_open(struct vms_out *o, const char *path, bool append, size_t bufsize);
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

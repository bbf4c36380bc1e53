/* SPDX-License-Identifier: MIT */
/* ring.h - the preallocated frame ring (single writer). Layout and memory
 * ordering: include/vmsampler/ring.h. */
#ifndef VMS_RING_H
#define VMS_RING_H

#include "vms.h"
#include <sys/types.h>
#include <vmsampler/ring.h>

struct vms_ring {
	struct vms_ring_header *hdr;
	uint8_t *slots;
	size_t map_len;
	uint32_t mask;
	uint32_t slot_size;
	uint32_t slot_cols;
	uint64_t next_seq; /* seq the next vms_ring_begin() writes */
	struct vms_ring_event *events; /* the event area (shared rings), or NULL */
	uint32_t ev_mask;
	struct vms_frame *open; /* frame being written, or NULL */
	/* a shared file ring (ring_file.c); all NULL/0 for an anonymous one */
	char *path;        /* where it lives (owned) */
	char *tmp;         /* built by vms_ring_create_like, not yet installed */
	uint64_t interval_ns;
	uint32_t mode;
	bool readonly;     /* a reader's view: never written, never closed */
};

/* Options of a shared file ring. */
struct vms_ring_file_opts {
	uint32_t mode;        /* file mode (default 0640) */
	uint64_t interval_ns; /* stored in the header for readers' liveness checks */
};

/* Sizes of a ring (ring.c, shared with ring_file.c). */
struct vms_ring_layout {
	uint32_t slot_count, slot_size;
	size_t schema_cap, header_size, len;
	size_t event_off; /* 0: no event area (a ring in the sampler's own memory) */
};
/* Entries of a shared ring's event area. */
#define VMS_RING_NEVENTS 128
int vms_ring_layout(struct vms_ring_layout *lay, uint32_t slot_count, uint32_t slot_cols,
		    size_t schema_bytes);
/* Set up r over a fresh zeroed mapping m of lay->len bytes. */
void vms_ring_init_mapping(struct vms_ring *r, void *m, const struct vms_ring_layout *lay,
			   uint32_t slot_cols);

/* Anonymous ring of `slot_count` (rounded up to a power of two, >= 2)
 * slots of `slot_cols` values each. 0 or -errno. */
int vms_ring_create(struct vms_ring *r, uint32_t slot_count, uint32_t slot_cols);
/* Unmap.  A shared file ring that was not superseded is marked
 * VMS_RING_F_CLOSED (the writer exited cleanly); the file stays. */
void vms_ring_destroy(struct vms_ring *r);

/* ---- shared file rings (ring_file.c) --------------------------------------- */

/* Create the ring as a file at path, safely: a symbolic link at path
 * (-ELOOP), anything that is not a vmsampler ring (-EEXIST), or a ring
 * whose writer is alive (-EBUSY) is refused and left alone; a ring left
 * by a writer that is gone is replaced atomically.  The file is built
 * under a temporary name and renamed into place.  `schema_bytes` sizes
 * the schema area.  On failure err holds one line saying why. */
int vms_ring_create_file(struct vms_ring *r, const char *path, uint32_t slot_count,
			 uint32_t slot_cols, size_t schema_bytes, const struct vms_ring_file_opts *o,
			 char *err, size_t errlen);
/* A new, empty ring like `old` (anonymous or a file under a temporary
 * name beside it) with slot_cols values per slot and room for a schema
 * of schema_bytes.  Install it with vms_ring_install(). */
int vms_ring_create_like(struct vms_ring *nr, const struct vms_ring *old, uint32_t slot_cols,
			 size_t schema_bytes);
/* Replace *old by *nr: a file ring is renamed over the old path and the
 * old one marked VMS_RING_F_SUPERSEDED for its readers; the old mapping
 * is released and *old becomes the new ring.  0 or -errno (then *nr is
 * destroyed and *old untouched). */
int vms_ring_install(struct vms_ring *old, struct vms_ring *nr);
/* True if frames of ncols values and a schema of schema_bytes fit this
 * ring. */
bool vms_ring_fits(const struct vms_ring *r, uint32_t ncols, size_t schema_bytes);
/* Writer: publish a schema (before the first frame of its generation).
 * The ring does not know what a schema is: the caller writes len bytes
 * (binfmt.h's vms_bin_ring_publish: a file header and a SCHEMA record)
 * into the area begin returns, then end makes them visible to readers as
 * generation gen (the schema area's seqlock, vmsampler/ring.h).  begin
 * returns NULL for an anonymous ring or when len does not fit (then
 * nothing is published: do not call end). */
void *vms_ring_schema_begin(struct vms_ring *r, size_t len);
void vms_ring_schema_end(struct vms_ring *r, uint32_t gen, size_t len);
/* Map an existing ring file read-only and check its header.  0, or
 * -errno with a reason in err: -ENOTSUP another version, -EBADMSG not a
 * ring or an inconsistent header. */
int vms_ring_open_read(struct vms_ring *r, const char *path, char *err, size_t errlen);
/* The same over a copy in memory (a snapshot; tests and fuzzing). */
int vms_ring_view_mem(struct vms_ring *r, const void *data, size_t len, char *err, size_t errlen);
/* Copy the schema area (consistent, see vmsampler/ring.h) into buf.
 * Returns its length, -EAGAIN (being written: retry), -ENOBUFS (buf too
 * small) or -EBADMSG. */
ssize_t vms_ring_read_schema(const struct vms_ring *r, void *buf, size_t cap, uint32_t *gen);

/* Writer: the frame for seq r->next_seq, in its slot (marked as being
 * written).  Calling begin again before commit returns the same frame. */
struct vms_frame *vms_ring_begin(struct vms_ring *r);
/* Writer: publish the open frame; returns its seq. */
uint64_t vms_ring_commit(struct vms_ring *r);

/* Last committed seq (0 if none). */
uint64_t vms_ring_last(const struct vms_ring *r);
/* In-process reader: the committed frame `seq`, or NULL if it is not yet
 * written or already overwritten. */
const struct vms_frame *vms_ring_get(const struct vms_ring *r, uint64_t seq);
/* Cross-process reader: copy frame `seq` into dst (capacity dst_cols
 * values) and validate it.  0, -EAGAIN (not written yet), -ESTALE
 * (already overwritten: the reader fell behind), -EBUSY (torn: the slot
 * was overwritten while it was copied; dst is garbage), -ENOBUFS (dst too
 * small). */
int vms_ring_read(const struct vms_ring *r, uint64_t seq, struct vms_frame *dst, uint32_t dst_cols);
/* Reader without a copy: frame seq in its slot.  0 and *f, or -EAGAIN /
 * -ESTALE / -EBUSY as vms_ring_read().  What the caller reads from *f is
 * only valid if vms_ring_view_check() says so afterwards. */
int vms_ring_view(const struct vms_ring *r, uint64_t seq, const struct vms_frame **f);
/* 0 if the slot of seq still holds it (what was read through the view is
 * whole), -ESTALE if the writer has begun to overwrite it. */
int vms_ring_view_check(const struct vms_ring *r, uint64_t seq);
/* The last seq a writer in another process committed (its header). */
uint64_t vms_ring_write_seq(const struct vms_ring *r);

/* ---- the event area (vmsampler-ring(5)) ------------------------------------ */

/* Writer: put an event (head, tail ignored) as the next number; nothing
 * for a ring without an event area.  No allocation, no system call. */
void vms_ring_event_put(struct vms_ring *r, const struct vms_ring_event *ev);
/* The number of the last event written (0: none, or no event area). */
uint64_t vms_ring_event_last(const struct vms_ring *r);
/* Reader: copy event n.  0; -EAGAIN not written yet; -ESTALE overwritten
 * (before or while copying: the reader fell behind); -ENOENT no area. */
int vms_ring_event_get(const struct vms_ring *r, uint64_t n, struct vms_ring_event *out);
/* Give nr (empty, just built) the events of old (ring growth). */
void vms_ring_events_carry(struct vms_ring *nr, const struct vms_ring *old);

/* The seqlock reader's payload copy (see ring.c). */
void vms_ring_copy(void *dst, const void *src, size_t len);

/* A store into a frame that readers in other threads may be copying: a
 * relaxed atomic store (a plain mov on x86-64), so that ThreadSanitizer
 * sees the in-process stress test's writer as race-free by design. */
#define VMS_RING_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)

/* ---- the writer's liveness, seen by a reader (ring_file.c) ------------------ */

enum vms_writer_state {
	VMS_WRITER_ALIVE = 0,
	VMS_WRITER_EXITED, /* VMS_RING_F_CLOSED: exited cleanly */
	VMS_WRITER_DIED,   /* its pid no longer exists */
	VMS_WRITER_HUNG,   /* no heartbeat for max(10 intervals, 5 s) */
};
/* Inode of this process's pid namespace (0: unknown). */
uint64_t vms_pidns_ino(void);
/* The writer's state from its header; a system call (kill(pid, 0)) only
 * when frames are late. */
int vms_ring_writer_state(const struct vms_ring_header *h, uint64_t my_pidns);
const char *vms_writer_state_name(int st);

/* Frames the ring holds. */
static inline uint64_t vms_ring_capacity(const struct vms_ring *r)
{
	return (uint64_t)r->mask + 1;
}

static inline size_t vms_frame_size(uint32_t ncols)
{
	return sizeof(struct vms_frame) + (size_t)ncols * sizeof(uint64_t);
}

#endif

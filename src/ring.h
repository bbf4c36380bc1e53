/* SPDX-License-Identifier: MIT */
/* ring.h - the preallocated frame ring (single writer). Layout and memory
 * ordering: include/vmsampler/ring.h. */
#ifndef VMS_RING_H
#define VMS_RING_H

#include "vms.h"
#include <vmsampler/ring.h>

struct vms_ring {
	struct vms_ring_header *hdr;
	uint8_t *slots;
	size_t map_len;
	uint32_t mask;
	uint32_t slot_size;
	uint32_t slot_cols;
	uint64_t next_seq; /* seq the next vms_ring_begin() writes */
	struct vms_frame *open; /* frame being written, or NULL */
};

/* Anonymous ring of `slot_count` (rounded up to a power of two, >= 2)
 * slots of `slot_cols` values each. 0 or -errno. */
int vms_ring_create(struct vms_ring *r, uint32_t slot_count, uint32_t slot_cols);
void vms_ring_destroy(struct vms_ring *r);

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
 * (overwritten: the reader fell behind), -EBUSY (torn: retry or skip),
 * -ENOBUFS (dst too small). */
int vms_ring_read(const struct vms_ring *r, uint64_t seq, struct vms_frame *dst, uint32_t dst_cols);

static inline size_t vms_frame_size(uint32_t ncols)
{
	return sizeof(struct vms_frame) + (size_t)ncols * sizeof(uint64_t);
}

#endif

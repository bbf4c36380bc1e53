/* SPDX-License-Identifier: MIT */
#include "ring.h"

#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define HEADER_SIZE 4096u

static inline _Atomic uint64_t *at64(void *p) { return (_Atomic uint64_t *)p; }

static inline uint8_t *slot_ptr(const struct vms_ring *r, uint64_t seq)
{
	return r->slots + (size_t)((seq - 1) & r->mask) * r->slot_size;
}

static inline struct vms_frame *slot_frame(uint8_t *slot)
{
	return (struct vms_frame *)(slot + sizeof(struct vms_ring_slot_head));
}

static inline _Atomic uint64_t *slot_tail(const struct vms_ring *r, uint8_t *slot)
{
	return at64(slot + r->slot_size - sizeof(uint64_t));
}

int vms_ring_create(struct vms_ring *r, uint32_t slot_count, uint32_t slot_cols)
{
	uint32_t n = 2;
	while (n < slot_count) {
		if (n >= (1u << 20))
			return -EINVAL;
		n <<= 1;
	}
	size_t ss = sizeof(struct vms_ring_slot_head) + vms_frame_size(slot_cols) + sizeof(uint64_t);
	ss = (ss + 63) & ~(size_t)63;
	if (ss > UINT32_MAX)
		return -EINVAL;
	size_t len = HEADER_SIZE + ss * n;
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -errno;
	memset(r, 0, sizeof(*r));
	r->hdr = m;
	r->slots = (uint8_t *)m + HEADER_SIZE;
	r->map_len = len;
	r->mask = n - 1;
	r->slot_size = (uint32_t)ss;
	r->slot_cols = slot_cols;
	r->next_seq = 1;
	memcpy(r->hdr->magic, VMS_RING_MAGIC, 8);
	r->hdr->version = VMS_RING_VERSION;
	r->hdr->header_size = HEADER_SIZE;
	r->hdr->slot_size = r->slot_size;
	r->hdr->slot_count = n;
	r->hdr->slot_cols = slot_cols;
	r->hdr->writer_pid = (uint64_t)getpid();
	return 0;
}

void vms_ring_destroy(struct vms_ring *r)
{
	if (r && r->hdr)
		munmap(r->hdr, r->map_len);
	if (r)
		memset(r, 0, sizeof(*r));
}

struct vms_frame *vms_ring_begin(struct vms_ring *r)
{
	if (r->open)
		return r->open;
	uint8_t *slot = slot_ptr(r, r->next_seq);
	atomic_store_explicit(at64(slot), r->next_seq, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	r->open = slot_frame(slot);
	return r->open;
}

uint64_t vms_ring_commit(struct vms_ring *r)
{
	uint64_t seq = r->next_seq++;
	uint8_t *slot = slot_ptr(r, seq);
	r->open->seq = seq;
	r->open = NULL;
	atomic_store_explicit(slot_tail(r, slot), seq, memory_order_release);
	atomic_store_explicit(at64(&r->hdr->write_seq), seq, memory_order_release);
	return seq;
}

uint64_t vms_ring_last(const struct vms_ring *r)
{
	return r->next_seq - 1;
}

const struct vms_frame *vms_ring_get(const struct vms_ring *r, uint64_t seq)
{
	if (seq == 0 || seq >= r->next_seq || r->next_seq - seq > r->mask + 1u)
		return NULL;
	return slot_frame(slot_ptr(r, seq));
}

int vms_ring_read(const struct vms_ring *r, uint64_t seq, struct vms_frame *dst, uint32_t dst_cols)
{
	uint8_t *slot = slot_ptr(r, seq);
	uint64_t t = atomic_load_explicit(slot_tail(r, slot), memory_order_acquire);
	if (t < seq)
		return -EAGAIN;
	if (t > seq)
		return -ESTALE;
	const struct vms_frame *f = slot_frame(slot);
	uint32_t n = f->ncols;
	if (n > r->slot_cols)
		return -EBUSY;
	if (n > dst_cols)
		return -ENOBUFS;
	memcpy(dst, f, vms_frame_size(n));
	atomic_thread_fence(memory_order_acquire);
	uint64_t h = atomic_load_explicit(at64(slot), memory_order_relaxed);
	if (h != seq)
		return h > seq ? -ESTALE : -EBUSY;
	if (dst->ncols != n || dst->seq != seq)
		return -EBUSY;
	return 0;
}

/* SPDX-License-Identifier: MIT */
#include "ring.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define HEADER_SIZE VMS_RING_PAGE

_Static_assert(sizeof(struct vms_frame) == 64, "frame header");
_Static_assert(offsetof(struct vms_ring_header, write_seq) == 128, "ring header layout");
_Static_assert(offsetof(struct vms_ring_header, schema_seq) == 192, "ring header layout");
_Static_assert(offsetof(struct vms_ring_header, schema_len) == 204, "ring header layout");
_Static_assert(offsetof(struct vms_ring_header, event_write) == 144, "ring header layout");
_Static_assert(offsetof(struct vms_ring_header, event_off) == 88, "ring header layout");
_Static_assert(sizeof(struct vms_ring_header) <= VMS_RING_PAGE, "ring header size");
_Static_assert(sizeof(struct vms_ring_event) == 288, "ring event layout");
_Static_assert((VMS_RING_NEVENTS & (VMS_RING_NEVENTS - 1)) == 0, "event count");

static inline _Atomic uint64_t *at64(void *p) { return (_Atomic uint64_t *)p; }

/* The payload copy of a seqlock reader races with the writer by design:
 * the copy is only trusted once the sequence numbers show that no write
 * overlapped it.  Under ThreadSanitizer (which checks the in-process
 * stress test) the copy is made of relaxed atomic loads, the C11-correct
 * form of the same thing, so that TSan checks the protocol instead of
 * flagging the copy; otherwise memcpy, which compiles to the same loads
 * but vectorised (a relaxed-load loop is 2 to 3 times slower for a
 * 2,000-column frame).  The writer's side in that test uses relaxed
 * stores (VMS_RING_STORE). */
#if defined(__SANITIZE_THREAD__)
#define VMS_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define VMS_TSAN 1
#endif
#endif

void vms_ring_copy(void *dst, const void *src, size_t len)
{
#ifdef VMS_TSAN
	uint64_t *d = dst;
	const uint64_t *s = src;
	size_t i;
	for (i = 0; i < len / 8; i++)
		d[i] = __atomic_load_n(&s[i], __ATOMIC_RELAXED);
	for (i *= 8; i < len; i++)
		((uint8_t *)dst)[i] = __atomic_load_n((const uint8_t *)src + i, __ATOMIC_RELAXED);
#else
	memcpy(dst, src, len);
#endif
}

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

int vms_ring_layout(struct vms_ring_layout *lay, uint32_t slot_count, uint32_t slot_cols,
		    size_t schema_bytes)
{
	uint32_t n = 2;
	while (n < slot_count) {
		if (n >= (1u << 20))
			return -EINVAL;
		n <<= 1;
	}
	size_t ss = sizeof(struct vms_ring_slot_head) + vms_frame_size(slot_cols) + sizeof(uint64_t);
	ss = (ss + 63) & ~(size_t)63;
	if (ss > UINT32_MAX || schema_bytes > (1u << 30))
		return -EINVAL;
	size_t cap = schema_bytes ? (2 * schema_bytes + 16384 + VMS_RING_PAGE - 1) & ~(size_t)(VMS_RING_PAGE - 1) : 0;
	/* a shared ring (it has a schema area) has an event area after it */
	size_t evb = schema_bytes ? (VMS_RING_NEVENTS * sizeof(struct vms_ring_event) + VMS_RING_PAGE - 1) &
					     ~(size_t)(VMS_RING_PAGE - 1)
				  : 0;
	lay->slot_count = n;
	lay->slot_size = (uint32_t)ss;
	lay->schema_cap = cap;
	lay->event_off = evb ? HEADER_SIZE + cap : 0;
	lay->header_size = HEADER_SIZE + cap + evb;
	lay->len = lay->header_size + ss * n;
	if (lay->header_size > UINT32_MAX || (lay->len - lay->header_size) / n != ss)
		return -EINVAL;
	return 0;
}

void vms_ring_init_mapping(struct vms_ring *r, void *m, const struct vms_ring_layout *lay,
			   uint32_t slot_cols)
{
	memset(r, 0, sizeof(*r));
	r->hdr = m;
	r->slots = (uint8_t *)m + lay->header_size;
	r->map_len = lay->len;
	r->mask = lay->slot_count - 1;
	r->slot_size = lay->slot_size;
	r->slot_cols = slot_cols;
	r->next_seq = 1;
	memcpy(r->hdr->magic, VMS_RING_MAGIC, 8);
	r->hdr->version = VMS_RING_VERSION;
	r->hdr->header_size = (uint32_t)lay->header_size;
	r->hdr->slot_size = r->slot_size;
	r->hdr->slot_count = lay->slot_count;
	r->hdr->slot_cols = slot_cols;
	r->hdr->writer_pid = (uint64_t)getpid();
	r->hdr->schema_off = lay->schema_cap ? HEADER_SIZE : 0;
	r->hdr->schema_cap = lay->schema_cap;
	if (lay->event_off) {
		r->hdr->event_off = lay->event_off;
		r->hdr->event_count = VMS_RING_NEVENTS;
		r->hdr->event_size = sizeof(struct vms_ring_event);
		r->events = (struct vms_ring_event *)((uint8_t *)m + lay->event_off);
		r->ev_mask = VMS_RING_NEVENTS - 1;
	}
}

int vms_ring_create(struct vms_ring *r, uint32_t slot_count, uint32_t slot_cols)
{
	struct vms_ring_layout lay;
	int e = vms_ring_layout(&lay, slot_count, slot_cols, 0);
	if (e < 0)
		return e;
	void *m = mmap(NULL, lay.len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -errno;
	vms_ring_init_mapping(r, m, &lay, slot_cols);
	return 0;
}

void vms_ring_destroy(struct vms_ring *r)
{
	if (!r)
		return;
	if (r->hdr && r->path && !r->readonly)
		__atomic_fetch_or(&r->hdr->flags, VMS_RING_F_CLOSED, __ATOMIC_RELEASE);
	if (r->hdr && r->map_len)
		munmap(r->hdr, r->map_len);
	if (r->tmp)
		unlink(r->tmp); /* built but never installed */
	free(r->path);
	free(r->tmp);
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
	VMS_RING_STORE(&r->open->seq, seq);
	r->open = NULL;
	atomic_store_explicit(slot_tail(r, slot), seq, memory_order_release);
	atomic_store_explicit(at64(&r->hdr->write_seq), seq, memory_order_release);
	atomic_store_explicit(at64(&r->hdr->heartbeat_mono_ns), slot_frame(slot)->t_mono_ns,
			      memory_order_relaxed);
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

int vms_ring_view(const struct vms_ring *r, uint64_t seq, const struct vms_frame **f)
{
	uint8_t *slot = slot_ptr(r, seq);
	uint64_t t = atomic_load_explicit(slot_tail(r, slot), memory_order_acquire);
	if (t != seq)
		return t < seq ? -EAGAIN : -ESTALE;
	*f = slot_frame(slot);
	if (__atomic_load_n(&(*f)->ncols, __ATOMIC_RELAXED) > r->slot_cols)
		return -EBUSY;
	return 0;
}

int vms_ring_view_check(const struct vms_ring *r, uint64_t seq)
{
	const uint8_t *slot = slot_ptr(r, seq);
	atomic_thread_fence(memory_order_acquire);
	return __atomic_load_n((const uint64_t *)slot, __ATOMIC_RELAXED) == seq ? 0 : -ESTALE;
}

uint64_t vms_ring_write_seq(const struct vms_ring *r)
{
	return atomic_load_explicit(at64(&r->hdr->write_seq), memory_order_acquire);
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
	uint32_t n = __atomic_load_n(&f->ncols, __ATOMIC_RELAXED);
	if (n > r->slot_cols)
		return -EBUSY;
	if (n > dst_cols)
		return -ENOBUFS;
	vms_ring_copy(dst, f, vms_frame_size(n));
	atomic_thread_fence(memory_order_acquire);
	uint64_t h = atomic_load_explicit(at64(slot), memory_order_relaxed);
	if (h != seq)
		return -EBUSY; /* torn: overwritten while we copied */
	if (dst->ncols != n || dst->seq != seq)
		return -EBUSY;
	return 0;
}

/* ---- the event area ------------------------------------------------------ */

void vms_ring_event_put(struct vms_ring *r, const struct vms_ring_event *ev)
{
	if (!r->events || r->readonly)
		return;
	uint64_t n = atomic_load_explicit(at64(&r->hdr->event_write), memory_order_relaxed) + 1;
	struct vms_ring_event *e = &r->events[(n - 1) & r->ev_mask];
	atomic_store_explicit(at64(&e->head), n, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	VMS_RING_STORE(&e->type, ev->type);
	VMS_RING_STORE(&e->gen, ev->gen);
	VMS_RING_STORE(&e->before_seq, ev->before_seq);
	VMS_RING_STORE(&e->t_mono_ns, ev->t_mono_ns);
	VMS_RING_STORE(&e->t_real_ns, ev->t_real_ns);
	for (size_t i = 0; i < sizeof(e->subject); i++)
		VMS_RING_STORE(&e->subject[i], i + 1 < sizeof(e->subject) ? ev->subject[i] : '\0');
	for (size_t i = 0; i < sizeof(e->detail); i++)
		VMS_RING_STORE(&e->detail[i], i + 1 < sizeof(e->detail) ? ev->detail[i] : '\0');
	atomic_store_explicit(at64(&e->tail), n, memory_order_release);
	atomic_store_explicit(at64(&r->hdr->event_write), n, memory_order_release);
}

uint64_t vms_ring_event_last(const struct vms_ring *r)
{
	return r->events ? atomic_load_explicit(at64(&r->hdr->event_write), memory_order_acquire) : 0;
}

int vms_ring_event_get(const struct vms_ring *r, uint64_t n, struct vms_ring_event *out)
{
	if (!r->events)
		return -ENOENT;
	if (n == 0)
		return -ESTALE;
	const struct vms_ring_event *e = &r->events[(n - 1) & r->ev_mask];
	uint64_t t = atomic_load_explicit(at64((void *)&e->tail), memory_order_acquire);
	if (t != n)
		return t < n ? -EAGAIN : -ESTALE;
	vms_ring_copy(out, e, sizeof(*out));
	atomic_thread_fence(memory_order_acquire);
	if (__atomic_load_n(&e->head, __ATOMIC_RELAXED) != n)
		return -ESTALE;
	out->subject[sizeof(out->subject) - 1] = '\0';
	out->detail[sizeof(out->detail) - 1] = '\0';
	return 0;
}

void vms_ring_events_carry(struct vms_ring *nr, const struct vms_ring *old)
{
	if (!nr->events || !old->events || nr->ev_mask != old->ev_mask)
		return;
	memcpy(nr->events, old->events, (size_t)(old->ev_mask + 1) * sizeof(*old->events));
	atomic_store_explicit(at64(&nr->hdr->event_write), vms_ring_event_last(old), memory_order_release);
}

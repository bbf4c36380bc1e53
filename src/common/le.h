/* SPDX-License-Identifier: MIT */
/* le.h - little-endian integers in byte buffers, and a bounded reader of
 * them: the binary format (binfmt.c), the agent protocol (virt_proto.c)
 * and the CRC (private).  Inline: the encoders run in the tick's sinks. */
#ifndef VMS_LE_H
#define VMS_LE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Store v in the n bytes at p (n <= 8); returns p + n. */
static inline uint8_t *vms_le_put(uint8_t *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
	return p + n;
}

/* The fixed widths spelled out: one store or load each once the compiler
 * merges them (the binary format's encoder runs in the tick's sink). */
static inline uint8_t *vms_le_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	return p + 2;
}

static inline uint8_t *vms_le_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
	return p + 4;
}

static inline uint8_t *vms_le_put64(uint8_t *p, uint64_t v)
{
	vms_le_put32(p, (uint32_t)v);
	vms_le_put32(p + 4, (uint32_t)(v >> 32));
	return p + 8;
}

/* The n bytes at p (n <= 8). */
static inline uint64_t vms_le_get(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static inline uint16_t vms_le_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t vms_le_get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t vms_le_get64(const uint8_t *p)
{
	return (uint64_t)vms_le_get32(p) | (uint64_t)vms_le_get32(p + 4) << 32;
}

/* A payload read front to back: every read past its end (or after one
 * did) sets bad and yields nothing, so a decoder reads all its fields and
 * checks bad once. */
struct vms_bytes {
	const uint8_t *p, *end;
	bool bad;
};

static inline struct vms_bytes vms_bytes_of(const uint8_t *p, size_t len)
{
	return (struct vms_bytes){p, p + len, false};
}

/* The next n bytes, or NULL (bad set). */
static inline const uint8_t *vms_bytes_take(struct vms_bytes *b, size_t n)
{
	if (b->bad || (size_t)(b->end - b->p) < n) {
		b->bad = true;
		return NULL;
	}
	const uint8_t *s = b->p;
	b->p += n;
	return s;
}

/* The next n bytes (n <= 8) as a number, or 0 (bad set). */
static inline uint64_t vms_bytes_le(struct vms_bytes *b, unsigned n)
{
	const uint8_t *p = vms_bytes_take(b, n);
	return p ? vms_le_get(p, n) : 0;
}

#endif

/* SPDX-License-Identifier: MIT */
/* cursor.h - strict, allocation-free scanning of /proc text.
 *
 * A cursor walks a (buf, len) region without copying.  Number readers
 * reject missing digits and overflow; any failure sets a sticky error that
 * the caller checks once per line (vms_cur_ok).  Nothing here allocates,
 * so parsers built on it can run in the sampling tick and in fuzzers. */
#ifndef VMS_CURSOR_H
#define VMS_CURSOR_H

#include "vms.h"

struct vms_cur {
	const char *p;   /* next byte */
	const char *end; /* one past the last byte of the region */
	int err;         /* 0, or the first -errno (sticky) */
};

static inline void vms_cur_init(struct vms_cur *c, const char *buf, size_t len)
{
	c->p = buf;
	c->end = buf + len;
	c->err = 0;
}

static inline bool vms_cur_ok(const struct vms_cur *c) { return c->err == 0; }
static inline bool vms_cur_eof(const struct vms_cur *c) { return c->p >= c->end; }
static inline size_t vms_cur_left(const struct vms_cur *c) { return (size_t)(c->end - c->p); }
static inline void vms_cur_fail(struct vms_cur *c, int err)
{
	if (c->err == 0)
		c->err = err;
}

/* Split off the next line (without its '\n'; a last line without a
 * newline counts).  Returns false at the end of the buffer. */
bool vms_cur_line(struct vms_cur *c, struct vms_cur *line);
/* The same, passing over lines that are empty or only blanks. */
bool vms_cur_text_line(struct vms_cur *c, struct vms_cur *line);
/* Skip spaces and tabs (never newlines). Returns how many were skipped. */
size_t vms_cur_skip_blank(struct vms_cur *c);
/* Next whitespace-delimited token (after skipping blanks). Sets -ENODATA
 * if there is none. */
bool vms_cur_token(struct vms_cur *c, const char **tok, size_t *len);
/* Unsigned decimal; leading blanks skipped; at least one digit; the number
 * must end at a blank, a newline or the end of the region.  Overflow of 64
 * bits gives -ERANGE, no digit -EINVAL (-ENODATA at the end of the region).
 * Returns the value (0 after an error). */
uint64_t vms_cur_u64(struct vms_cur *c);
/* A run of numbers, each exactly as strict as vms_cur_u64, separated by
 * blanks, up to the end of the region or a '\n' (not consumed): the
 * numbers of one /proc line in one call, without the per-call and
 * per-digit overhead of vms_cur_u64 (overflow is only checked for numbers
 * of 20 digits or more).  Stores the first `max` in v[], counts the rest
 * without storing them, and returns how many there were; a bad number
 * sets the sticky error (-EINVAL, -ERANGE) and stops there. */
unsigned vms_cur_u64_list(struct vms_cur *c, uint64_t *v, unsigned max);
/* Like vms_cur_u64, but the number must be followed by `sep`, which is
 * consumed ("1/719" in /proc/loadavg). */
uint64_t vms_cur_u64_sep(struct vms_cur *c, char sep);
/* Fixed-point decimal "I.F" scaled by 10^scale (e.g. "0.21", scale 2 -> 21).
 * Extra fraction digits beyond `scale` are rejected (-EINVAL), missing ones
 * are zero-filled ("1.5" -> 150). */
uint64_t vms_cur_fixed(struct vms_cur *c, unsigned scale);
/* Expect one literal byte (after blanks when skip_blank). */
bool vms_cur_expect(struct vms_cur *c, char ch);
/* True if the region at the cursor starts with `lit` (no advance). */
bool vms_cur_startswith(const struct vms_cur *c, const char *lit, size_t n);
/* True if only blanks remain. */
bool vms_cur_rest_blank(const struct vms_cur *c);
/* Move past the next '\n' (or to the end of the region), without looking
 * at what is skipped: one memchr.  For lines we do not use. */
void vms_cur_skip_line(struct vms_cur *c);
/* The last `ch` in what is left of the region (memrchr), or NULL.  Does not
 * advance. */
const char *vms_cur_rfind(const struct vms_cur *c, char ch);
/* '0'..'9' (for any char, signed or not). */
static inline bool vms_is_digit(char ch)
{
	return (unsigned)(unsigned char)ch - '0' <= 9;
}
/* s[0..n) is one or more digits. */
static inline bool vms_all_digits(const char *s, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!vms_is_digit(s[i]))
			return false;
	return true;
}
/* The byte at the cursor, or -1 at the end of the region. */
static inline int vms_cur_peek(const struct vms_cur *c)
{
	return c->p < c->end ? (unsigned char)*c->p : -1;
}

#endif

/* SPDX-License-Identifier: MIT */
#include "cursor.h"

#include <string.h>

static inline bool is_blank(char ch) { return ch == ' ' || ch == '\t'; }

bool vms_cur_line(struct vms_cur *c, struct vms_cur *line)
{
	if (c->p >= c->end)
		return false;
	const char *nl = memchr(c->p, '\n', (size_t)(c->end - c->p));
	line->p = c->p;
	line->err = 0;
	if (nl) {
		line->end = nl;
		c->p = nl + 1;
	} else {
		line->end = c->end;
		c->p = c->end;
	}
	return true;
}

bool vms_cur_text_line(struct vms_cur *c, struct vms_cur *line)
{
	while (vms_cur_line(c, line))
		if (!vms_cur_rest_blank(line))
			return true;
	return false;
}

size_t vms_cur_skip_blank(struct vms_cur *c)
{
	const char *s = c->p;
	while (c->p < c->end && is_blank(*c->p))
		c->p++;
	return (size_t)(c->p - s);
}

bool vms_cur_token(struct vms_cur *c, const char **tok, size_t *len)
{
	vms_cur_skip_blank(c);
	const char *s = c->p;
	while (c->p < c->end && !is_blank(*c->p) && *c->p != '\n')
		c->p++;
	if (c->p == s) {
		vms_cur_fail(c, -ENODATA);
		return false;
	}
	*tok = s;
	*len = (size_t)(c->p - s);
	return true;
}

static uint64_t digits(struct vms_cur *c)
{
	vms_cur_skip_blank(c);
	const char *s = c->p;
	uint64_t v = 0;
	while (c->p < c->end) {
		unsigned d = (unsigned char)*c->p - '0';
		if (d > 9)
			break;
		if (VMS_UNLIKELY(v > (UINT64_MAX - d) / 10)) {
			vms_cur_fail(c, -ERANGE);
			return 0;
		}
		v = v * 10 + d;
		c->p++;
	}
	if (c->p == s) {
		vms_cur_fail(c, c->p >= c->end ? -ENODATA : -EINVAL);
		return 0;
	}
	return v;
}

uint64_t vms_cur_u64(struct vms_cur *c)
{
	uint64_t v = digits(c);
	if (c->err)
		return 0;
	if (c->p < c->end && !is_blank(*c->p) && *c->p != '\n') {
		vms_cur_fail(c, -EINVAL); /* "12x" is not a number */
		return 0;
	}
	return v;
}

uint64_t vms_cur_u64_sep(struct vms_cur *c, char sep)
{
	uint64_t v = digits(c);
	if (c->err)
		return 0;
	if (c->p >= c->end || *c->p != sep) {
		vms_cur_fail(c, -EINVAL);
		return 0;
	}
	c->p++;
	return v;
}

uint64_t vms_cur_fixed(struct vms_cur *c, unsigned scale)
{
	vms_cur_skip_blank(c);
	const char *s = c->p;
	uint64_t v = 0;
	unsigned frac = 0;
	bool dot = false;
	while (c->p < c->end) {
		char ch = *c->p;
		if (ch == '.' && !dot) {
			dot = true;
			c->p++;
			continue;
		}
		unsigned d = (unsigned char)ch - '0';
		if (d > 9)
			break;
		if (dot && ++frac > scale) {
			vms_cur_fail(c, -EINVAL);
			return 0;
		}
		if (v > (UINT64_MAX - d) / 10) {
			vms_cur_fail(c, -ERANGE);
			return 0;
		}
		v = v * 10 + d;
		c->p++;
	}
	/* need a digit before and, if there is a dot, after it */
	if (c->p == s || (dot && frac == 0) || (dot && c->p - s == 1 + (long)frac)) {
		vms_cur_fail(c, -EINVAL);
		return 0;
	}
	if (c->p < c->end && !is_blank(*c->p) && *c->p != '\n') {
		vms_cur_fail(c, -EINVAL);
		return 0;
	}
	for (; frac < scale; frac++) {
		if (v > UINT64_MAX / 10) {
			vms_cur_fail(c, -ERANGE);
			return 0;
		}
		v *= 10;
	}
	return v;
}

bool vms_cur_expect(struct vms_cur *c, char ch)
{
	if (c->p < c->end && *c->p == ch) {
		c->p++;
		return true;
	}
	vms_cur_fail(c, -EINVAL);
	return false;
}

bool vms_cur_startswith(const struct vms_cur *c, const char *lit, size_t n)
{
	return (size_t)(c->end - c->p) >= n && memcmp(c->p, lit, n) == 0;
}

bool vms_cur_rest_blank(const struct vms_cur *c)
{
	for (const char *q = c->p; q < c->end; q++)
		if (!is_blank(*q) && *q != '\n')
			return false;
	return true;
}

void vms_cur_skip_line(struct vms_cur *c)
{
	if (c->p >= c->end)
		return;
	const char *nl = memchr(c->p, '\n', (size_t)(c->end - c->p));
	c->p = nl ? nl + 1 : c->end;
}

const char *vms_cur_rfind(const struct vms_cur *c, char ch)
{
	if (c->p >= c->end)
		return NULL;
	return memrchr(c->p, ch, (size_t)(c->end - c->p));
}

/* Measured (callgrind, a tick of stat + diskstats + net/dev): this plain
 * loop costs about 80 instructions per /proc number, blanks included;
 * word-at-a-time versions (SWAR blank runs, SWAR digit conversion) came out
 * no better on these short, space-padded numbers and were dropped. */
unsigned vms_cur_u64_list(struct vms_cur *c, uint64_t *v, unsigned max)
{
	const char *p = c->p, *end = c->end;
	unsigned n = 0;

	for (;;) {
		while (p < end && is_blank(*p))
			p++;
		if (p >= end || *p == '\n')
			break;
		const char *s = p;
		uint64_t x = 0;
		while (p < end) {
			unsigned d = (unsigned)(unsigned char)*p - '0';
			if (d > 9)
				break;
			x = x * 10 + d; /* may wrap past 19 digits: checked below */
			p++;
		}
		if (VMS_UNLIKELY(p - s >= 20)) {
			/* 10^19 - 1 < 2^64: only 20+ digits can overflow */
			struct vms_cur again = {.p = s, .end = p, .err = 0};
			x = digits(&again);
			if (again.err) {
				c->p = again.p;
				vms_cur_fail(c, again.err);
				return n;
			}
		}
		if (p == s || (p < end && !is_blank(*p) && *p != '\n')) {
			c->p = p;
			vms_cur_fail(c, -EINVAL);
			return n;
		}
		if (n < max)
			v[n] = x;
		if (n < UINT32_MAX)
			n++;
	}
	c->p = p;
	return n;
}

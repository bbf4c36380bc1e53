/* SPDX-License-Identifier: MIT */
/* name.c - the one rule for the names that enter a schema (name.h). */
#include "name.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static bool cont(unsigned char c)
{
	return (c & 0xc0) == 0x80;
}

size_t vms_name_keep(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	unsigned char c = u[0];
	if (c < 0x80)
		return c >= 0x20 && c != 0x7f && c != '\\';
	size_t len;
	unsigned char lo = 0x80, hi = 0xbf; /* the second byte's range */
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		lo = 0xa0; /* U+0080..U+009F are the C1 controls */
		if (c > 0xc2)
			lo = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0; /* no overlong forms */
		else if (c == 0xed)
			hi = 0x9f; /* no surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f; /* nothing above U+10FFFF */
	} else {
		return 0;
	}
	if (n < len || u[1] < lo || u[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (!cont(u[i]))
			return 0;
	if (c == 0xe2 && u[1] == 0x80 && (u[2] == 0xa8 || u[2] == 0xa9))
		return 0; /* U+2028, U+2029: line and paragraph separators */
	return len;
}

bool vms_name_valid(const char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		if (s[i] == '\\') {
			i++;
			continue;
		}
		size_t k = vms_name_keep(s + i, n - i);
		if (!k)
			return false;
		i += k;
	}
	return true;
}

/* The escaped bytes of the character at s, into e (at most 4); *len its
 * length in s. */
static size_t esc_one(const char *s, size_t n, char e[4], size_t *len)
{
	static const char hex[] = "0123456789abcdef";
	size_t k = vms_name_keep(s, n);
	if (k) {
		memcpy(e, s, k);
		*len = k;
		return k;
	}
	*len = 1;
	if (*s == '\\') {
		e[0] = e[1] = '\\';
		return 2;
	}
	unsigned char c = (unsigned char)*s;
	e[0] = '\\';
	e[1] = 'x';
	e[2] = hex[c >> 4];
	e[3] = hex[c & 15];
	return 4;
}

size_t vms_name_escape(char *dst, size_t cap, const char *s, size_t n)
{
	size_t out = 0, put = 0; /* put: bytes written, whole characters and escapes only */
	for (size_t i = 0; i < n;) {
		char e[4];
		size_t len, m = esc_one(s + i, n - i, e, &len);
		if (put == out && out + m < cap) {
			memcpy(dst + out, e, m);
			put += m;
		}
		out += m;
		i += len;
	}
	if (cap)
		dst[put] = '\0';
	return out;
}

bool vms_name_fit(char *dst, size_t max, const char *s, size_t n)
{
	enum { HASH = 17 }; /* "~" and 16 hex digits */
	size_t raw = 0, esc = 0;
	bool fits = true;
	size_t cut = 0; /* raw bytes that leave room for the hash */
	while (raw < n) {
		char e[4];
		size_t len, m = esc_one(s + raw, n - raw, e, &len);
		if (esc + m <= max - HASH)
			cut = raw + len;
		if (esc + m > max) {
			fits = false;
			break;
		}
		esc += m;
		raw += len;
	}
	if (fits) {
		memcpy(dst, s, n);
		dst[n] = '\0';
		return false;
	}
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	memcpy(dst, s, cut);
	snprintf(dst + cut, HASH + 1, "~%016llx", (unsigned long long)h);
	return true;
}

/* SPDX-License-Identifier: MIT */
/* reftext.h - the tests' and fuzzers' reference for "valid text": glibc's
 * UTF-8 decoder (mbrtowc in C.UTF-8) and its idea of a control character
 * (iswcntrl), not the code under test (src/common/name.c).  Header-only:
 * the fuzz targets link no test library. */
#ifndef VMS_REFTEXT_H
#define VMS_REFTEXT_H

#include <locale.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <wctype.h>

/* The n bytes at s are UTF-8 without control characters ('\n' allowed if
 * nl).  Sets the C.UTF-8 locale for LC_CTYPE on first use. */
static inline bool vms_ref_text_ok(const char *s, size_t n, bool nl)
{
	static bool set;
	if (!set) {
		if (!setlocale(LC_CTYPE, "C.UTF-8"))
			abort();
		set = true;
	}
	mbstate_t st;
	memset(&st, 0, sizeof(st));
	for (size_t i = 0; i < n;) {
		wchar_t w;
		size_t k = mbrtowc(&w, s + i, n - i, &st);
		/* (glibc decodes up to 0x7fffffff: Unicode ends at U+10FFFF) */
		if (k == (size_t)-1 || k == (size_t)-2 || k == 0 || w > 0x10ffff ||
		    (iswcntrl((wint_t)w) && !(nl && w == L'\n')))
			return false;
		i += k;
	}
	return true;
}

/* The inverse of the rule of name.h, from its text (\\ -> \, \xHH -> the
 * byte): the bytes written to out (room for strlen(s)), or -1 for a
 * backslash that starts neither. */
static inline long vms_ref_unescape(const char *s, char *out)
{
	static const char hex[] = "0123456789abcdef";
	long o = 0;
	for (size_t i = 0; s[i];) {
		if (s[i] != '\\') {
			out[o++] = s[i++];
		} else if (s[i + 1] == '\\') {
			out[o++] = '\\';
			i += 2;
		} else if (s[i + 1] == 'x' && s[i + 2] && s[i + 3] && strchr(hex, s[i + 2]) &&
			   strchr(hex, s[i + 3])) {
			out[o++] = (char)((strchr(hex, s[i + 2]) - hex) * 16 + (strchr(hex, s[i + 3]) - hex));
			i += 4;
		} else {
			return -1;
		}
	}
	return o;
}

#endif

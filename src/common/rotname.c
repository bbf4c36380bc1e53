/* SPDX-License-Identifier: MIT */
/* rotname.c - the names of rotated output files (rotname.h). */
#include "rotname.h"

#include <string.h>

static bool all_digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* p starts with YYYYmmddTHHMMSSZ[_NNN]: the length of that, else 0 */
static size_t stamp_len(const char *p)
{
	if (strnlen(p, VMS_ROTNAME_STAMP_LEN) < VMS_ROTNAME_STAMP_LEN || !all_digits(p, 8) || p[8] != 'T' ||
	    !all_digits(p + 9, 6) || p[15] != 'Z')
		return 0;
	p += VMS_ROTNAME_STAMP_LEN;
	if (p[0] == '_' && p[1] && p[2] && p[3] && all_digits(p + 1, 3))
		return VMS_ROTNAME_STAMP_LEN + 4;
	return VMS_ROTNAME_STAMP_LEN;
}

bool vms_rotname_match(const char *stem, const char *ext, const char *name, bool *zst)
{
	size_t sl = strlen(stem), el = strlen(ext);
	if (strncmp(name, stem, sl) != 0 || name[sl] != '-')
		return false;
	const char *p = name + sl + 1;
	size_t n = stamp_len(p);
	if (!n)
		return false;
	p += n;
	if (strncmp(p, ext, el) != 0)
		return false;
	p += el;
	if (*p == '\0') {
		*zst = false;
		return true;
	}
	if (strcmp(p, ".zst") == 0) {
		*zst = true;
		return true;
	}
	return false;
}

bool vms_rotname_split(const char *name, size_t *stem_len, char *ext, size_t extcap)
{
	size_t len = strlen(name);
	if (len > 4 && strcmp(name + len - 4, ".zst") == 0)
		len -= 4;
	/* the last '-' followed by a stamp and an EXT that is empty or one
	 * dot and what follows it (the output's EXT starts at its last dot) */
	for (size_t i = len; i-- > 1;) {
		if (name[i] != '-')
			continue;
		size_t n = stamp_len(name + i + 1);
		if (!n || i + 1 + n > len)
			continue;
		const char *e = name + i + 1 + n;
		size_t el = len - (size_t)(e - name);
		if (el && (e[0] != '.' || memchr(e + 1, '.', el - 1)))
			continue;
		if (el >= extcap)
			return false;
		memcpy(ext, e, el);
		ext[el] = '\0';
		*stem_len = i;
		return true;
	}
	return false;
}

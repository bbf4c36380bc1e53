/* SPDX-License-Identifier: MIT */
/* parse_mem.c - /proc/meminfo, /proc/vmstat and /proc/pressure/<resource>,
 * one line at a time (parse.h).
 *
 * meminfo: "Key:<blanks>value[ kB]".  The key is what precedes the colon
 * (letters, digits, '_', '(' and ')': "Active(anon)", "HugePages_Total");
 * the value one number, with the unit "kB" or none (the HugePages_ counts).
 * A value in kB is returned in bytes (x 1024, -ERANGE past 64 bits).
 * vmstat: "key value", exactly two tokens, the key of the same letters
 * (no parentheses).  pressure: "some|full avg10=A avg60=B avg300=C
 * total=T", the averages as percentages with two decimals (x 100), the
 * total in microseconds; a line of another kind is -EINVAL. */
#include <string.h>

#include "parse.h"

static int cur_err(const struct vms_cur *c)
{
	return c->err == -ERANGE ? -ERANGE : -EINVAL;
}

static bool key_char(char ch, bool parens)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || vms_is_digit(ch) || ch == '_' ||
	       (parens && (ch == '(' || ch == ')'));
}

/* The key at the start of the line, up to `stop` (':' or a blank). */
static int line_key(struct vms_cur *l, char stop, bool parens, struct vms_kv_line *out)
{
	const char *s = l->p;
	while (l->p < l->end && key_char(*l->p, parens))
		l->p++;
	size_t n = (size_t)(l->p - s);
	if (n == 0 || n > VMS_KV_KEY_MAX || l->p == l->end || *l->p != stop)
		return -EINVAL;
	if (stop == ':')
		l->p++;
	out->key = s;
	out->key_len = n;
	return 0;
}

/* meminfo: "Key: N[ kB]"; vmstat: "key N". */
static int kv_next(struct vms_cur *c, struct vms_kv_line *out, bool meminfo)
{
	struct vms_cur l;
	if (!vms_cur_text_line(c, &l))
		return 0;
	if (line_key(&l, meminfo ? ':' : ' ', meminfo, out) < 0)
		return -EINVAL;
	uint64_t v = vms_cur_u64(&l);
	if (!vms_cur_ok(&l))
		return cur_err(&l);
	vms_cur_skip_blank(&l);
	out->kb = false;
	if (meminfo && vms_cur_startswith(&l, "kB", 2)) {
		l.p += 2;
		if (v > UINT64_MAX / 1024)
			return -ERANGE;
		v *= 1024;
		out->kb = true;
	}
	if (!vms_cur_rest_blank(&l))
		return -EINVAL;
	out->v = v;
	return 1;
}

int vms_meminfo_next(struct vms_cur *c, struct vms_kv_line *out)
{
	return kv_next(c, out, true);
}

int vms_vmstat_next(struct vms_cur *c, struct vms_kv_line *out)
{
	return kv_next(c, out, false);
}

int vms_psi_next(struct vms_cur *c, struct vms_psi_line *out)
{
	static const char *const avg[3] = {"avg10=", "avg60=", "avg300="};
	struct vms_cur l;
	if (!vms_cur_text_line(c, &l))
		return 0;
	if (vms_cur_startswith(&l, "some ", 5))
		out->full = false;
	else if (vms_cur_startswith(&l, "full ", 5))
		out->full = true;
	else
		return -EINVAL;
	l.p += 5;
	for (int i = 0; i < 3; i++) {
		size_t n = strlen(avg[i]);
		vms_cur_skip_blank(&l);
		if (!vms_cur_startswith(&l, avg[i], n))
			return -EINVAL;
		l.p += n;
		out->avg[i] = vms_cur_fixed(&l, 2);
		if (!vms_cur_ok(&l))
			return cur_err(&l);
	}
	vms_cur_skip_blank(&l);
	if (!vms_cur_startswith(&l, "total=", 6))
		return -EINVAL;
	l.p += 6;
	out->total = vms_cur_u64(&l);
	if (!vms_cur_ok(&l))
		return cur_err(&l);
	if (!vms_cur_rest_blank(&l))
		return -EINVAL;
	return 1;
}

/* SPDX-License-Identifier: MIT */
/* parse_stat.c - /proc/stat, one line at a time.
 *
 * Lines are recognised by their key (the first token).  CPU lines carry 4
 * to 10 fields depending on the kernel (2.4: 4; 2.6.0: 7; 2.6.11: steal;
 * 2.6.24: guest; 2.6.33: guest_nice); more are parsed and ignored.  For
 * `intr` and `softirq` only the first number (the total) is read: the
 * per-IRQ list can be hundreds of kilobytes and is passed over by the
 * line split (one memchr), never tokenised. */
#include <string.h>

#include "parse.h"

const char *const vms_stat_cpu_field_names[VMS_STAT_CPU_FIELDS] = {
	"user", "nice", "system", "idle", "iowait",
	"irq", "softirq", "steal", "guest", "guest_nice",
};

/* The cursor's sticky error as a parser result (-ERANGE or -EINVAL). */
static int cur_err(const struct vms_cur *c)
{
	return c->err == -ERANGE ? -ERANGE : -EINVAL;
}

static bool is_blank(char ch)
{
	return ch == ' ' || ch == '\t';
}

/* The line starts with the key `k` (followed by a blank or nothing): step
 * over it.  No tokenising: one memcmp of the key's bytes. */
static bool key(struct vms_cur *l, const char *k, size_t n)
{
	size_t left = vms_cur_left(l);
	if (left < n || memcmp(l->p, k, n) != 0 || (left > n && !is_blank(l->p[n])))
		return false;
	l->p += n;
	return true;
}

int vms_cpu_number(const char *d, size_t n, uint32_t *cpu)
{
	uint64_t v = 0;
	if (n == 0 || (d[0] == '0' && n > 1))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		unsigned x = (unsigned char)d[i] - '0';
		if (x > 9)
			return -EINVAL;
		v = v * 10 + x;
		if (v > UINT32_MAX)
			return -ERANGE;
	}
	*cpu = (uint32_t)v;
	return 0;
}

static int cpu_fields(struct vms_cur *line, struct vms_stat_line *out)
{
	/* fields past the 10th are read (and must be numbers) but not kept */
	unsigned n = vms_cur_u64_list(line, out->v, VMS_STAT_CPU_FIELDS);
	if (!vms_cur_ok(line))
		return cur_err(line);
	if (n < 4)
		return -EINVAL;
	out->nfields = n < VMS_STAT_CPU_FIELDS ? n : VMS_STAT_CPU_FIELDS;
	for (unsigned i = out->nfields; i < VMS_STAT_CPU_FIELDS; i++)
		out->v[i] = VMS_NONE;
	return 1;
}

/* A key with exactly one number. */
static int one_value(struct vms_cur *line, struct vms_stat_line *out)
{
	out->v[0] = vms_cur_u64(line);
	if (!vms_cur_ok(line))
		return cur_err(line);
	if (!vms_cur_rest_blank(line))
		return -EINVAL;
	out->nfields = 1;
	return 1;
}

/* A key whose first number is a total followed by a breakdown we do not
 * read ("intr 95105080 8 0 0 ..."). */
static int first_value(struct vms_cur *line, struct vms_stat_line *out)
{
	out->v[0] = vms_cur_u64(line);
	if (!vms_cur_ok(line))
		return cur_err(line);
	out->nfields = 1;
	return 1;
}

/* The lines read besides the cpu lines. */
struct stat_key {
	const char *name;
	size_t len;
	enum vms_stat_key key;
	bool total; /* the first number is a total followed by a breakdown */
};
static const struct stat_key stat_keys[] = {
	{"ctxt", 4, VMS_STAT_CTXT, false},
	{"intr", 4, VMS_STAT_INTR, true},
	{"processes", 9, VMS_STAT_PROCESSES, false},
	{"procs_running", 13, VMS_STAT_PROCS_RUNNING, false},
	{"procs_blocked", 13, VMS_STAT_PROCS_BLOCKED, false},
	{"softirq", 7, VMS_STAT_SOFTIRQ, true},
};

int vms_stat_next(struct vms_cur *c, struct vms_stat_line *out)
{
	struct vms_cur line;
	int r;

	if (!vms_cur_line(c, &line))
		return 0;
	out->cpu = 0;
	out->nfields = 0;
	out->key = VMS_STAT_OTHER;
	vms_cur_skip_blank(&line);
	if (vms_cur_eof(&line))
		return 1; /* an empty line carries nothing */
	if (key(&line, "cpu", 3)) {
		out->key = VMS_STAT_CPU_ALL;
		return cpu_fields(&line, out);
	}
	if (vms_cur_left(&line) > 3 && memcmp(line.p, "cpu", 3) == 0 && vms_is_digit(line.p[3])) {
		const char *d = line.p + 3, *e = d;
		while (e < line.end && !is_blank(*e))
			e++;
		r = vms_cpu_number(d, (size_t)(e - d), &out->cpu);
		if (r < 0)
			return r;
		line.p = e;
		out->key = VMS_STAT_CPU;
		return cpu_fields(&line, out);
	}
	for (size_t i = 0; i < VMS_ARRAY_SIZE(stat_keys); i++) {
		const struct stat_key *k = &stat_keys[i];
		if (*line.p == k->name[0] && key(&line, k->name, k->len)) {
			out->key = k->key;
			return k->total ? first_value(&line, out) : one_value(&line, out);
		}
	}
	return 1; /* "cpufreq...", "btime": somebody else's line */
}

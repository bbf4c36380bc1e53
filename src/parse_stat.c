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
	"user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal", "guest", "guest_nice",
};

/* The cursor's sticky error as a parser result (-ERANGE or -EINVAL). */
static int cur_err(const struct vms_cur *c)
{
	return c->err == -ERANGE ? -ERANGE : -EINVAL;
}

static bool tok_is(const char *tok, size_t len, const char *lit, size_t n)
{
	return len == n && memcmp(tok, lit, n) == 0;
}

/* "cpuN": N is decimal without leading zeros and fits in 32 bits. */
static int cpu_number(const char *d, size_t n, uint32_t *cpu)
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
	unsigned n = 0;
	for (;;) {
		vms_cur_skip_blank(line);
		if (vms_cur_eof(line))
			break;
		uint64_t v = vms_cur_u64(line);
		if (!vms_cur_ok(line))
			return cur_err(line);
		if (n < VMS_STAT_CPU_FIELDS)
			out->v[n] = v;
		if (n < UINT32_MAX)
			n++;
	}
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

int vms_stat_next(struct vms_cur *c, struct vms_stat_line *out)
{
	struct vms_cur line;
	const char *tok;
	size_t len;
	int r;

	if (!vms_cur_line(c, &line))
		return 0;
	out->cpu = 0;
	out->nfields = 0;
	if (!vms_cur_token(&line, &tok, &len)) {
		/* an empty line carries nothing */
		out->key = VMS_STAT_OTHER;
		return 1;
	}
	switch (tok[0]) {
	case 'c':
		if (len >= 3 && memcmp(tok, "cpu", 3) == 0) {
			if (len == 3) {
				out->key = VMS_STAT_CPU_ALL;
				return cpu_fields(&line, out);
			}
			if (vms_is_digit(tok[3])) {
				r = cpu_number(tok + 3, len - 3, &out->cpu);
				if (r < 0)
					return r;
				out->key = VMS_STAT_CPU;
				return cpu_fields(&line, out);
			}
			break; /* "cpufreq..." is somebody else's line */
		}
		if (tok_is(tok, len, "ctxt", 4)) {
			out->key = VMS_STAT_CTXT;
			return one_value(&line, out);
		}
		break;
	case 'i':
		if (tok_is(tok, len, "intr", 4)) {
			out->key = VMS_STAT_INTR;
			return first_value(&line, out);
		}
		break;
	case 'p':
		if (tok_is(tok, len, "processes", 9)) {
			out->key = VMS_STAT_PROCESSES;
			return one_value(&line, out);
		}
		if (tok_is(tok, len, "procs_running", 13)) {
			out->key = VMS_STAT_PROCS_RUNNING;
			return one_value(&line, out);
		}
		if (tok_is(tok, len, "procs_blocked", 13)) {
			out->key = VMS_STAT_PROCS_BLOCKED;
			return one_value(&line, out);
		}
		break;
	case 's':
		if (tok_is(tok, len, "softirq", 7)) {
			out->key = VMS_STAT_SOFTIRQ;
			return first_value(&line, out);
		}
		break;
	default:
		break;
	}
	out->key = VMS_STAT_OTHER;
	return 1;
}

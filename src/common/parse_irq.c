/* SPDX-License-Identifier: MIT */
/* parse_irq.c - /proc/interrupts and /proc/softirqs (parse.h).
 *
 * Both files are a header naming the CPU of each column ("CPU0 CPU1 CPU3":
 * an offline CPU has no column, so the columns are not the CPU numbers)
 * and then one line per vector: "NAME: n n n [description]".  The name is
 * what precedes the colon, blanks before it dropped (" 24", "LOC",
 * "NET_RX", "IPI0"); then one count per column.  /proc/interrupts follows
 * the counts with the controller, the hardware IRQ and the handlers'
 * names ("IO-APIC   2-edge      timer"), and some of its lines are not per
 * CPU at all: x86's ERR and MIS carry one number.  So the numbers are read
 * while the tokens are numbers, at most one per column; the first token
 * that is not all digits ends them ("2-edge", "PCI-MSI").  A description
 * whose first word is all digits, on a line with fewer counts than
 * columns, would be read as counts: no kernel prints one. */
#include <string.h>

#include "parse.h"

static int cur_err(const struct vms_cur *c)
{
	return c->err == -ERANGE ? -ERANGE : -EINVAL;
}

static bool is_blank(char ch)
{
	return ch == ' ' || ch == '\t';
}

static bool name_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || vms_is_digit(ch) || ch == '_';
}

int vms_irq_header(struct vms_cur *c, uint32_t *cpu, unsigned cap, unsigned *ncpu)
{
	struct vms_cur l;
	unsigned n = 0;

	*ncpu = 0;
	if (!vms_cur_text_line(c, &l))
		return -ENODATA;
	for (;;) {
		vms_cur_skip_blank(&l);
		if (vms_cur_eof(&l))
			break;
		if (!vms_cur_startswith(&l, "CPU", 3))
			return -EINVAL;
		l.p += 3;
		if (!vms_is_digit((char)vms_cur_peek(&l)))
			return -EINVAL;
		uint64_t v = vms_cur_u64(&l);
		if (!vms_cur_ok(&l))
			return cur_err(&l);
		if (v > UINT32_MAX)
			return -ERANGE;
		/* the kernel lists online CPUs in increasing order */
		if (n > 0 && v <= cpu[n - 1])
			return -EINVAL;
		if (n == cap)
			return -E2BIG;
		cpu[n++] = (uint32_t)v;
	}
	if (n == 0)
		return -EINVAL;
	*ncpu = n;
	return 1;
}

/* The token at the cursor (after blanks) is all digits. */
static bool number_next(const struct vms_cur *l)
{
	const char *p = l->p;
	while (p < l->end && is_blank(*p))
		p++;
	if (p == l->end || !vms_is_digit(*p))
		return false;
	while (p < l->end && vms_is_digit(*p))
		p++;
	return p == l->end || is_blank(*p);
}

int vms_irq_next(struct vms_cur *c, uint64_t *v, unsigned ncpu, struct vms_irq_line *out)
{
	struct vms_cur l;

	if (!vms_cur_text_line(c, &l))
		return 0;
	out->n = 0;
	vms_cur_skip_blank(&l);
	out->name = l.p;
	while (l.p < l.end && name_char(*l.p))
		l.p++;
	out->name_len = (size_t)(l.p - out->name);
	if (out->name_len == 0 || out->name_len > VMS_IRQ_NAME_MAX || l.p == l.end || *l.p != ':')
		return -EINVAL;
	l.p++;
	unsigned n = 0;
	while (n < ncpu && number_next(&l)) {
		v[n++] = vms_cur_u64(&l);
		if (!vms_cur_ok(&l))
			return cur_err(&l);
	}
	if (n == 0)
		return -EINVAL;
	out->n = n;
	return 1;
}

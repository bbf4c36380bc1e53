/* SPDX-License-Identifier: MIT */
/* fuzz_irq.c - the /proc/interrupts and /proc/softirqs parser
 * (parse_irq.c) and the CPU list of a task's status (parse_vm.c).  The
 * first byte picks: 0 a header and its lines, 1 a CPU list, 2 a status
 * file; the rest is the file.  Invariants: the header's CPUs increase,
 * every line is consumed, a name lies inside the buffer and is not empty,
 * 1 <= counts <= columns, errors are -EINVAL/-ERANGE (and -E2BIG, -ENODATA
 * for a header), a list's first CPU is below its limit and its count at
 * most the limit. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NCPU 64

static void lines(const char *buf, size_t size)
{
	struct vms_cur c;
	uint32_t cpu[NCPU];
	uint64_t v[NCPU];
	unsigned n;
	vms_cur_init(&c, buf, size);
	int r = vms_irq_header(&c, cpu, NCPU, &n);
	if (r != 1) {
		if (r != -EINVAL && r != -ERANGE && r != -E2BIG && r != -ENODATA)
			abort();
		return;
	}
	if (n == 0 || n > NCPU)
		abort();
	for (unsigned i = 1; i < n; i++)
		if (cpu[i] <= cpu[i - 1])
			abort();
	for (unsigned k = 0;; k++) {
		const char *before = c.p;
		struct vms_irq_line l;
		r = vms_irq_next(&c, v, n, &l);
		if (r == 0)
			break;
		if (c.p <= before || k > size)
			abort(); /* no progress */
		if (r < 0) {
			if (r != -EINVAL && r != -ERANGE)
				abort();
			continue;
		}
		if (l.name_len == 0 || l.name_len > VMS_IRQ_NAME_MAX || l.name < buf ||
		    l.name + l.name_len > buf + size || l.n == 0 || l.n > n)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned which = data[0] % 3;
	size--;
	char *buf = malloc(size ? size : 1); /* exact size: ASan sees overreads */
	memcpy(buf, data + 1, size);
	uint32_t count = 0, first = 0;
	int r;
	switch (which) {
	case 0:
		lines(buf, size);
		break;
	case 1:
		r = vms_parse_cpulist(buf, size, &count, &first);
		if (r != 0 && r != -EINVAL)
			abort();
		if (r == 0 && (count > VMS_CPULIST_MAX || first >= VMS_CPULIST_MAX || (count && first + count > VMS_CPULIST_MAX)))
			abort();
		break;
	default:
		r = vms_parse_status_cpus(buf, size, &count, &first);
		if (r != 0 && r != -EINVAL && r != -ENOENT)
			abort();
		break;
	}
	free(buf);
	return 0;
}

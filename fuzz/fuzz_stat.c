/* SPDX-License-Identifier: MIT */
/* fuzz_stat.c - vms_stat_next() over every line of the input, and the
 * cursor's number-list reader against vms_cur_u64. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* an exact-size heap copy so ASan sees any read past the end */
	char *buf = malloc(size ? size : 1);
	memcpy(buf, data, size);
	struct vms_cur c;
	struct vms_stat_line sl;
	int r;

	vms_cur_init(&c, buf, size);
	for (;;) {
		const char *before = c.p;
		r = vms_stat_next(&c, &sl);
		if (r == 0)
			break;
		if (c.p <= before || c.p > buf + size)
			abort(); /* every call consumes one line */
		if (r != 1 && r != -EINVAL && r != -ERANGE)
			abort();
		if (r < 0)
			continue;
		if (sl.key == VMS_STAT_CPU_ALL || sl.key == VMS_STAT_CPU) {
			if (sl.nfields < 4 || sl.nfields > VMS_STAT_CPU_FIELDS)
				abort();
			for (unsigned i = sl.nfields; i < VMS_STAT_CPU_FIELDS; i++)
				if (sl.v[i] != VMS_NONE)
					abort();
		} else if (sl.key != VMS_STAT_OTHER && sl.nfields != 1) {
			abort();
		}
	}
	if (c.p != buf + size)
		abort();

	/* the cursor's number-list reader against vms_cur_u64 in a loop, on
	 * each line of the input: same numbers, count and error */
	struct vms_cur all, line;
	vms_cur_init(&all, buf, size);
	while (vms_cur_line(&all, &line)) {
		struct vms_cur a = line, b = line;
		uint64_t va[8], vb[8];
		unsigned na = vms_cur_u64_list(&a, va, 8), nb = 0;
		for (;;) {
			vms_cur_skip_blank(&b);
			if (vms_cur_eof(&b))
				break;
			uint64_t x = vms_cur_u64(&b);
			if (!vms_cur_ok(&b))
				break;
			if (nb < 8)
				vb[nb] = x;
			nb++;
		}
		if (na != nb || a.err != b.err || memcmp(va, vb, (na < 8 ? na : 8) * sizeof(uint64_t)))
			abort();
	}
	free(buf);
	return 0;
}

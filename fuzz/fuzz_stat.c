/* SPDX-License-Identifier: MIT */
/* fuzz_stat.c - vms_stat_next() over every line of the input. */
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
	free(buf);
	return 0;
}

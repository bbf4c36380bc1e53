/* SPDX-License-Identifier: MIT */
/* fuzz_diskstats.c - vms_diskstats_next() over every line of the input. */
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
	struct vms_disk_line dl;
	int r;

	vms_cur_init(&c, buf, size);
	for (;;) {
		const char *before = c.p;
		r = vms_diskstats_next(&c, &dl);
		if (r == 0)
			break;
		if (c.p <= before || c.p > buf + size)
			abort(); /* every call consumes one line */
		if (r != 1 && r != -EINVAL && r != -ERANGE)
			abort();
		if (r < 0)
			continue;
		/* the name is a non-empty token inside this line */
		if (dl.name < before || dl.name_len == 0 || dl.name + dl.name_len > c.p)
			abort();
		for (size_t i = 0; i < dl.name_len; i++)
			if (dl.name[i] == ' ' || dl.name[i] == '\t' || dl.name[i] == '\n')
				abort();
		switch (dl.nfields) {
		case 4:
			if (dl.v[1] != VMS_NONE || dl.v[3] != VMS_NONE || dl.v[5] != VMS_NONE)
				abort();
			for (unsigned i = 7; i < VMS_DISK_FIELDS; i++)
				if (dl.v[i] != VMS_NONE)
					abort();
			break;
		case 11:
		case 15:
		case 17:
			for (unsigned i = dl.nfields; i < VMS_DISK_FIELDS; i++)
				if (dl.v[i] != VMS_NONE)
					abort();
			break;
		default:
			abort();
		}
	}
	if (c.p != buf + size)
		abort();
	free(buf);
	return 0;
}

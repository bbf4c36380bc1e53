/* SPDX-License-Identifier: MIT */
/* fuzz_schedstat.c - the /proc/schedstat parser (parse_schedstat.c).
 * Invariants: the version line's answers are 1 (a version 15-17),
 * -EPROTONOSUPPORT (another version, given), -EINVAL or -ENODATA; the
 * line iterator always moves forward, ends, and its errors are -EINVAL or
 * -ERANGE. */
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
	struct vms_schedstat_cpu l;
	unsigned v;
	vms_cur_init(&c, buf, size);
	int r = vms_schedstat_version(&c, &v);
	if (r == 1 && (v < VMS_SCHEDSTAT_VERSION_MIN || v > VMS_SCHEDSTAT_VERSION_MAX))
		abort();
	if (r == -EPROTONOSUPPORT && v >= VMS_SCHEDSTAT_VERSION_MIN && v <= VMS_SCHEDSTAT_VERSION_MAX)
		abort();
	if (r != 1 && r != -EPROTONOSUPPORT && r != -EINVAL && r != -ENODATA)
		abort();
	/* the lines after whatever the first one was */
	for (size_t k = 0;; k++) {
		const char *before = c.p;
		r = vms_schedstat_next(&c, &l);
		if (r == 0)
			break;
		if (c.p <= before || k > size)
			abort(); /* no progress */
		if (r < 0 && r != -EINVAL && r != -ERANGE)
			abort();
	}
	if (c.p != c.end)
		abort();
	free(buf);
	return 0;
}

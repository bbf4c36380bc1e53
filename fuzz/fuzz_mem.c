/* SPDX-License-Identifier: MIT */
/* fuzz_mem.c - the /proc/meminfo, /proc/vmstat and /proc/pressure parsers.
 * The first byte picks the parser (0 meminfo, 1 vmstat, 2 pressure),
 * the rest is the file.  Invariants: every line is consumed (the cursor
 * always moves), a key lies inside the buffer and is not empty, a value
 * in kB is a multiple of 1024, a pressure line is some or full. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned which = data[0] % 3;
	size--;
	/* an exact-size heap copy so ASan sees any read past the end */
	char *buf = malloc(size ? size : 1);
	memcpy(buf, data + 1, size);
	struct vms_cur c;
	vms_cur_init(&c, buf, size);
	for (unsigned n = 0;; n++) {
		const char *before = c.p;
		struct vms_kv_line kv;
		struct vms_psi_line pl;
		int r = which == 0 ? vms_meminfo_next(&c, &kv) : which == 1 ? vms_vmstat_next(&c, &kv)
									   : vms_psi_next(&c, &pl);
		if (r == 0)
			break;
		if (c.p <= before || n > size)
			abort(); /* no progress */
		if (r < 0 && r != -EINVAL && r != -ERANGE)
			abort();
		if (r > 0 && which < 2) {
			if (kv.key_len == 0 || kv.key_len > VMS_KV_KEY_MAX || kv.key < buf ||
			    kv.key + kv.key_len > buf + size)
				abort();
			if (kv.kb && kv.v % 1024 != 0)
				abort();
		}
	}
	free(buf);
	return 0;
}

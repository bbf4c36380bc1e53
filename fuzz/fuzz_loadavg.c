/* SPDX-License-Identifier: MIT */
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
	struct vms_loadavg la;
	/* what the parser accepts holds together: running <= total (it
	 * rejects the rest), loads within the fixed-point range */
	if (vms_parse_loadavg(buf, size, &la) == 0 && la.running > la.total)
		abort();
	free(buf);
	return 0;
}

/* SPDX-License-Identifier: MIT */
#include "grow.h"

#include <stdlib.h>

void *vms_grow(void *buf, size_t *cap, size_t want, size_t first)
{
	size_t c = *cap ? *cap : first;
	while (c < want)
		c *= 2;
	void *nb = realloc(buf, c);
	if (nb)
		*cap = c;
	return nb;
}

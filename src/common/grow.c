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

void *vms_grow_array(void *arr, uint32_t *cap, uint32_t want, size_t size, uint32_t first)
{
	if (want <= *cap)
		return arr;
	uint32_t c = *cap ? *cap : first;
	while (c < want)
		c *= 2;
	void *na = realloc(arr, c * size);
	if (na)
		*cap = c;
	return na;
}

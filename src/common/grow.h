/* SPDX-License-Identifier: MIT */
/* grow.h - growing a heap buffer by doubling (private). */
#ifndef VMS_GROW_H
#define VMS_GROW_H

#include <stddef.h>

/* `buf` (of *cap bytes; NULL when *cap is 0) reallocated to hold at least
 * `want` bytes: the capacity doubles from *cap, or from `first` when
 * nothing is allocated yet, until it is enough.  Returns the buffer, with
 * *cap updated, or NULL when out of memory (then `buf` and *cap are as
 * they were). */
void *vms_grow(void *buf, size_t *cap, size_t want, size_t first);

#endif

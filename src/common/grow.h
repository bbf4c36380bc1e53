/* SPDX-License-Identifier: MIT */
/* grow.h - growing a heap buffer by doubling (private). */
#ifndef VMS_GROW_H
#define VMS_GROW_H

#include <stddef.h>
#include <stdint.h>

/* `buf` (of *cap bytes; NULL when *cap is 0) reallocated to hold at least
 * `want` bytes: the capacity doubles from *cap, or from `first` when
 * nothing is allocated yet, until it is enough.  Returns the buffer, with
 * *cap updated, or NULL when out of memory (then `buf` and *cap are as
 * they were). */
void *vms_grow(void *buf, size_t *cap, size_t want, size_t first);
/* The same for an array of elements of `size` bytes, its capacity *cap
 * counted in elements (want > 0); one that holds `want` already is
 * returned as it is. */
void *vms_grow_array(void *arr, uint32_t *cap, uint32_t want, size_t size, uint32_t first);

#endif

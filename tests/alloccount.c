/* SPDX-License-Identifier: MIT */
/* alloccount.c - see alloccount.h. */
#include <stddef.h>

#include "alloccount.h"

volatile int armed;
volatile unsigned long allocs;

#if HAVE_COUNTING_MALLOC
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
void *malloc(size_t n);
void *calloc(size_t a, size_t b);
void *realloc(void *p, size_t n);
void free(void *p);

void *malloc(size_t n)
{
	if (armed)
		allocs++;
	return __libc_malloc(n);
}

void *calloc(size_t a, size_t b)
{
	if (armed)
		allocs++;
	return __libc_calloc(a, b);
}

void *realloc(void *p, size_t n)
{
	if (armed)
		allocs++;
	return __libc_realloc(p, n);
}

void free(void *p)
{
	__libc_free(p);
}
#endif

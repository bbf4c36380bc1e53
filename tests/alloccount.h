/* SPDX-License-Identifier: MIT */
/* alloccount.h - a counting allocator for the tests (and benchmarks) that
 * prove a steady state allocates nothing: alloccount.c interposes malloc,
 * calloc and realloc for the whole process, libc's internal calls
 * included, and counts the calls made while `armed` is set.  Under ASan
 * the sanitizer owns malloc: nothing is interposed (HAVE_COUNTING_MALLOC
 * 0) and those tests skip; the plain build runs them.  (allocwrap.h
 * counts only our own code's calls, through -Wl,--wrap.) */
#ifndef VMS_TEST_ALLOCCOUNT_H
#define VMS_TEST_ALLOCCOUNT_H

#if defined(__SANITIZE_ADDRESS__)
#define HAVE_COUNTING_MALLOC 0
#else
#define HAVE_COUNTING_MALLOC 1
#endif

extern volatile int armed;
extern volatile unsigned long allocs;

#endif

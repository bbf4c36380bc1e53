/* SPDX-License-Identifier: MIT */
/* allocwrap.h - counts our code's calls to the allocator.
 * Tests that link allocwrap.c are built with -Wl,--wrap=malloc,calloc,
 * realloc (tests/meson.build: alloc_tests): calls from libvmscore and the
 * test object go through __wrap_*; libc's own internal calls do not. */
#ifndef VMS_ALLOCWRAP_H
#define VMS_ALLOCWRAP_H

extern unsigned long test_allocs;

#endif

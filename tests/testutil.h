/* SPDX-License-Identifier: MIT */
/* testutil.h - helpers shared by the unit tests. */
#ifndef VMS_TESTUTIL_H
#define VMS_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

/* Absolute path of a fixture file or directory under tests/fixtures
 * (from $VMS_FIXTURES). Returns a static buffer. */
const char *fixture_path(const char *rel);
/* Read a whole fixture file into a malloc'ed buffer; *len gets its size. */
char *fixture_read(const char *rel, size_t *len);
/* A fresh temporary directory (removed by the caller with rm_rf). */
char *tmpdir_make(void);
void rm_rf(const char *path);
/* Write a file (creating parent directories). */
void write_file(const char *path, const char *data, size_t len);

#endif

/* SPDX-License-Identifier: MIT */
/* runbin.h - run the vmsampler binary ($VMS_BIN) and capture its output. */
#ifndef VMS_RUNBIN_H
#define VMS_RUNBIN_H

#include <stddef.h>

struct run_result {
	int status;  /* exit code, or 128 + signal number */
	char *out;   /* stdout, NUL-terminated */
	char *err;   /* stderr, NUL-terminated */
};

/* Run $VMS_BIN with args (NULL-terminated, without argv[0]); stdin is
 * /dev/null, stdout and stderr go to files.  If sig is not 0, send it
 * once stdout holds at least one line (or after 5 s) and then wait. */
void run_bin(struct run_result *r, int sig, const char *const *args);
void run_result_free(struct run_result *r);
/* Lines in s (a last line without '\n' counts). */
unsigned count_lines(const char *s);
/* The path of a file in the source tree ($VMS_SRCDIR/rel), static buffer. */
const char *src_path(const char *rel);
/* Read a whole file (NUL-terminated, malloc'ed), NULL on failure. */
char *read_whole(const char *path, size_t *len);

#endif

/* SPDX-License-Identifier: MIT */
/* safefile.h - the rules for the files vmsampler reads its settings and
 * secrets from, and for the files it writes into.
 *
 * A configuration or secret file (-c, export's --basic-auth, --tls-cert,
 * --tls-key, --rw-bearer-file, --rw-cursor) is opened non-blocking, so a
 * FIFO, a terminal or a device never holds the start-up, and must be a
 * regular file of bounded size; a secret must moreover not be readable or
 * writable by others, and be owned by the user that reads it or by root.
 * A file vmsampler writes into (the output, the ring) must be owned by
 * the user vmsampler runs as: another user's file in a world-writable
 * directory (/tmp, /dev/shm) is never appended to, truncated or replaced,
 * so that its owner cannot alter the data.  Every refusal comes with one
 * short reason, for one line "PATH: reason". */
#ifndef VMS_SAFEFILE_H
#define VMS_SAFEFILE_H

#include <sys/stat.h>

#include "vms.h"

/* A secret: not readable or writable by others ("chmod o-rw"), owned by
 * this process's effective user or root. */
#define VMS_SAFE_SECRET 0x1u

/* Open `path` for reading as a configuration or secret file (`how`:
 * VMS_SAFE_*) of at most `max` bytes, following symbolic links.  The fd
 * (O_RDONLY|O_CLOEXEC, blocking again) with *st filled, or -errno with
 * the reason in why: -EISDIR (a directory), -EINVAL (a FIFO, a device, a
 * socket: not a regular file), -EFBIG (larger than max), -EACCES (a
 * secret others may read or write), -EPERM (a secret owned by another
 * user), or open(2)'s error. */
int vms_safe_open(const char *path, unsigned how, size_t max, struct stat *st, char *why, size_t whylen);
/* The same, and the whole file read into a malloc'd, NUL-terminated
 * buffer (*len bytes, not counting the NUL).  0 or -errno (-ENOMEM, read
 * errors, -EFBIG if it grew past max while being read) with why. */
int vms_safe_read(const char *path, unsigned how, size_t max, char **buf, size_t *len, char *why,
		  size_t whylen);
/* Is the regular file *st owned by another user than the one this
 * process runs as (its effective uid)?  Then vmsampler must not write
 * into it or replace it: 1 with the reason in why, else 0. */
int vms_safe_foreign(const struct stat *st, char *why, size_t whylen);
/* The exit status of a command whose start failed to open a file that
 * its command line or configuration names (an input, an output, a ring,
 * a socket, a settings file), given the -errno: 1 when the machine failed
 * (out of memory, of file descriptors or of room, an I/O error, a wait
 * interrupted), which a restart may mend; else 2, a configuration error:
 * the path is wrong (missing, a directory, not permitted, a link), or
 * what is there is wrong (a refused existing file, not a vmsampler stream
 * or ring, another major version of the format), which only a change of
 * the command line or of the files mends (vmsampler(1), EXIT STATUS). */
int vms_safe_status(int err);

#endif

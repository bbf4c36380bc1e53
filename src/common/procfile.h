/* SPDX-License-Identifier: MIT */
/* procfile.h - a /proc file kept open and re-read with one pread per tick.
 *
 * The file is opened once relative to a directory fd (the proc root, a
 * runtime seam: tests pass a fixture directory).  vms_procfile_read()
 * preads from offset 0 until EOF: a seq_file (/proc/net/dev) gives at most
 * a page per call, so a short read is not the whole file.  When the buffer
 * fills, it is doubled: that allocation happens only when the file
 * outgrows the buffer, never in the steady state. */
#ifndef VMS_PROCFILE_H
#define VMS_PROCFILE_H

#include "vms.h"

struct vms_procfile {
	int fd;
	char *buf;
	size_t cap;
	size_t len;  /* bytes of the last successful read */
	unsigned grows; /* how many times the buffer grew (tests, diagnostics) */
};

#define VMS_PROCFILE_INIT { .fd = -1, .buf = NULL, .cap = 0, .len = 0, .grows = 0 }

/* Open `relpath` under `dirfd`, read it once and size the buffer to twice
 * that (at least min_cap).  Returns 0 or -errno.  *f need not be set
 * before: on failure it is VMS_PROCFILE_INIT, which vms_procfile_close()
 * accepts (a source's close after its open failed). */
int vms_procfile_open(struct vms_procfile *f, int dirfd, const char *relpath, size_t min_cap);
/* Re-read the whole file into f->buf (f->len bytes).  0 or -errno. */
int vms_procfile_read(struct vms_procfile *f);
void vms_procfile_close(struct vms_procfile *f);
/* The proc root dirfd is a procfs (a fixture directory is not: its
 * net/dev is the test's, which netlink cannot give). */
bool vms_proc_is_procfs(int dirfd);

/* A file that several sources read in the same tick (/proc/net/dev for
 * the netdev and vm sources): whoever opens the same path under the same
 * directory gets the same struct, and vms_procfile_shared_read() does one
 * pread per tick index, the others reuse its bytes.  Reference counted;
 * the registry is process-wide (the loop is single-threaded). */
#define VMS_PROCFILE_FORCE UINT64_MAX /* a tick index that always reads */
int vms_procfile_shared_open(struct vms_procfile **out, int dirfd, const char *relpath,
			     size_t min_cap);
/* Read unless it was read for this tick already.  0 or -errno (an error
 * is not cached: the next reader of the tick tries again). */
int vms_procfile_shared_read(struct vms_procfile *f, uint64_t tick);
void vms_procfile_shared_close(struct vms_procfile *f);

#endif

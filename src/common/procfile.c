/* SPDX-License-Identifier: MIT */
#include "procfile.h"
#include "grow.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <linux/magic.h>
#include <sys/vfs.h>
#include <unistd.h>

#define PROCFILE_MAX (64u << 20) /* no /proc file we read is near this */

static int grow(struct vms_procfile *f, size_t want)
{
	if (want > PROCFILE_MAX)
		return -EFBIG;
	char *nb = vms_grow(f->buf, &f->cap, want, 4096);
	if (!nb)
		return -ENOMEM;
	f->buf = nb;
	return 0;
}

/* Until EOF: a seq_file read (/proc/net/dev, /proc/diskstats) returns at
 * most one page of records per call however large the buffer, so a short
 * read is not the end.  The kernel keeps its position between preads at
 * increasing offsets (no re-walk from the start), and a pread at 0 starts
 * over: one read per page, plus the one that returns 0. */
int vms_procfile_read(struct vms_procfile *f)
{
	size_t off = 0;
	for (;;) {
		if (off == f->cap) {
			int r = grow(f, f->cap * 2);
			if (r < 0)
				return r;
			f->grows++;
		}
		ssize_t n = pread(f->fd, f->buf + off, f->cap - off, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0) {
			f->len = off;
			return 0;
		}
		off += (size_t)n;
	}
}

int vms_procfile_open(struct vms_procfile *f, int dirfd, const char *relpath, size_t min_cap)
{
	struct vms_procfile nf = VMS_PROCFILE_INIT;
	int r;

	*f = nf;
	nf.fd = openat(dirfd, relpath, O_RDONLY | O_CLOEXEC);
	if (nf.fd < 0)
		return -errno;
	r = grow(&nf, min_cap ? min_cap : 4096);
	if (r < 0)
		goto fail;
	r = vms_procfile_read(&nf);
	if (r < 0)
		goto fail;
	/* headroom: a file that grows a little (one more interface) must not
	 * make the steady state allocate */
	if (nf.len * 2 > nf.cap) {
		r = grow(&nf, nf.len * 2);
		if (r < 0)
			goto fail;
	}
	nf.grows = 0;
	*f = nf;
	return 0;
fail:
	vms_procfile_close(&nf);
	return r;
}

void vms_procfile_close(struct vms_procfile *f)
{
	if (!f)
		return;
	if (f->fd >= 0)
		close(f->fd);
	free(f->buf);
	f->fd = -1;
	f->buf = NULL;
	f->cap = f->len = 0;
}

/* ---- shared files ---------------------------------------------------------- */

struct shared {
	struct vms_procfile f; /* first: the public pointer is &s->f */
	dev_t dev;             /* of the directory */
	ino_t ino;
	char *path;
	unsigned refs;
	uint64_t tick;
	bool valid;            /* f holds the bytes of `tick` */
	struct shared *next;
};

static struct shared *shared_list;

int vms_procfile_shared_open(struct vms_procfile **out, int dirfd, const char *relpath, size_t min_cap)
{
	struct stat st;
	if (fstat(dirfd, &st) < 0)
		return -errno;
	for (struct shared *s = shared_list; s; s = s->next) {
		if (s->dev == st.st_dev && s->ino == st.st_ino && strcmp(s->path, relpath) == 0) {
			s->refs++;
			*out = &s->f;
			return 0;
		}
	}
	struct shared *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->path = strdup(relpath);
	if (!s->path) {
		free(s);
		return -ENOMEM;
	}
	int r = vms_procfile_open(&s->f, dirfd, relpath, min_cap);
	if (r < 0) {
		free(s->path);
		free(s);
		return r;
	}
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	s->refs = 1;
	s->next = shared_list;
	shared_list = s;
	*out = &s->f;
	return 0;
}

int vms_procfile_shared_read(struct vms_procfile *f, uint64_t tick)
{
	struct shared *s = (struct shared *)f;
	if (s->valid && tick == s->tick && tick != VMS_PROCFILE_FORCE)
		return 0;
	s->valid = false;
	int r = vms_procfile_read(f);
	if (r < 0)
		return r;
	s->tick = tick;
	s->valid = tick != VMS_PROCFILE_FORCE;
	return 0;
}

void vms_procfile_shared_close(struct vms_procfile *f)
{
	if (!f)
		return;
	struct shared *s = (struct shared *)f;
	if (--s->refs)
		return;
	for (struct shared **pp = &shared_list; *pp; pp = &(*pp)->next) {
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	}
	vms_procfile_close(&s->f);
	free(s->path);
	free(s);
}

bool vms_proc_is_procfs(int dirfd)
{
	struct statfs sf;
	return fstatfs(dirfd, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC;
}

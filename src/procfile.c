/* SPDX-License-Identifier: MIT */
#include "procfile.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#define PROCFILE_MAX (64u << 20) /* no /proc file we read is near this */

static int grow(struct vms_procfile *f, size_t want)
{
	size_t cap = f->cap ? f->cap : 4096;
	while (cap < want) {
		if (cap >= PROCFILE_MAX)
			return -EFBIG;
		cap *= 2;
	}
	char *nb = realloc(f->buf, cap);
	if (!nb)
		return -ENOMEM;
	f->buf = nb;
	f->cap = cap;
	return 0;
}

int vms_procfile_read(struct vms_procfile *f)
{
	for (;;) {
		ssize_t n = pread(f->fd, f->buf, f->cap, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if ((size_t)n < f->cap) {
			f->len = (size_t)n;
			return 0;
		}
		int r = grow(f, f->cap * 2);
		if (r < 0)
			return r;
		f->grows++;
	}
}

int vms_procfile_open(struct vms_procfile *f, int dirfd, const char *relpath, size_t min_cap)
{
	struct vms_procfile nf = VMS_PROCFILE_INIT;
	int r;

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

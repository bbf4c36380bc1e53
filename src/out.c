/* SPDX-License-Identifier: MIT */
#include "out.h"

#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int setup(struct vms_out *o, int fd, bool owns, size_t bufsize)
{
	struct stat st;
	memset(o, 0, sizeof(*o));
	o->fd = fd;
	o->owns_fd = owns;
	o->saved_flags = -1;
	o->cap = bufsize ? bufsize : 65536;
	o->buf = malloc(o->cap);
	if (!o->buf)
		return -ENOMEM;
	if (fstat(fd, &st) == 0) {
		o->is_reg = S_ISREG(st.st_mode);
		if (o->is_reg) {
			off_t end = lseek(fd, 0, SEEK_END);
			o->written = o->committed = end > 0 ? (uint64_t)end : 0;
		} else if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) {
			/* a slow reader must never block the tick */
			int fl = fcntl(fd, F_GETFL);
			if (fl >= 0 && !(fl & O_NONBLOCK) && fcntl(fd, F_SETFL, fl | O_NONBLOCK) == 0)
				o->saved_flags = fl;
		}
	}
	return 0;
}

int vms_out_open(struct vms_out *o, const char *path, bool append, size_t bufsize)
{
	if (strcmp(path, "-") == 0)
		return setup(o, STDOUT_FILENO, false, bufsize);
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC), 0644);
	if (fd < 0)
		return -errno;
	int r = setup(o, fd, true, bufsize);
	if (r < 0) {
		close(fd);
		return r;
	}
	o->path = strdup(path);
	if (!o->path) {
		vms_out_close(o);
		return -ENOMEM;
	}
	return 0;
}

int vms_out_fdopen(struct vms_out *o, int fd, size_t bufsize)
{
	return setup(o, fd, false, bufsize);
}

int vms_out_ensure(struct vms_out *o, size_t n)
{
	if (!o->buf)
		return -EBADF; /* closed (a reopen failed) */
	if (n <= o->cap)
		return 0;
	size_t cap = o->cap ? o->cap : 4096;
	while (cap < n)
		cap *= 2;
	char *nb = realloc(o->buf, cap);
	if (!nb)
		return -ENOMEM;
	o->buf = nb;
	o->cap = cap;
	return 0;
}

int vms_out_put(struct vms_out *o, const void *p, size_t n)
{
	if (o->cap - o->len < n)
		return -ENOBUFS;
	memcpy(o->buf + o->len, p, n);
	o->len += n;
	return 0;
}

void vms_out_end_record(struct vms_out *o)
{
	uint64_t end = o->written + o->len;
	if (o->bq_n == VMS_ARRAY_SIZE(o->bq)) {
		/* drop the oldest boundary: truncation gets coarser, never wrong */
		o->bq_head = (o->bq_head + 1) % VMS_ARRAY_SIZE(o->bq);
		o->bq_n--;
	}
	o->bq[(o->bq_head + o->bq_n) % VMS_ARRAY_SIZE(o->bq)] = end;
	o->bq_n++;
	o->rec_start = o->len;
}

void vms_out_cancel_record(struct vms_out *o)
{
	o->len = o->rec_start;
}

static void retire_boundaries(struct vms_out *o)
{
	while (o->bq_n && o->bq[o->bq_head] <= o->written) {
		o->committed = o->bq[o->bq_head];
		o->bq_head = (o->bq_head + 1) % VMS_ARRAY_SIZE(o->bq);
		o->bq_n--;
	}
}

/* Write out complete records only; a partial record stays buffered. */
int vms_out_flush(struct vms_out *o)
{
	size_t todo = o->rec_start; /* bytes of whole records */
	size_t off = 0;
	int r = 0;

	while (off < todo) {
		ssize_t n = write(o->fd, o->buf + off, todo - off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = (errno == EAGAIN || errno == EWOULDBLOCK) ? -EAGAIN : -errno;
			break;
		}
		off += (size_t)n;
		o->written += (uint64_t)n;
	}
	if (off) {
		memmove(o->buf, o->buf + off, o->len - off);
		o->len -= off;
		o->rec_start -= off;
		retire_boundaries(o);
	}
	if (r == 0 && o->rec_start > 0)
		r = -EAGAIN;
	if (r < 0 && r != -EAGAIN)
		o->err = r;
	else if (r == 0)
		o->err = 0;
	return r;
}

int vms_out_drain(struct vms_out *o)
{
	for (;;) {
		int r = vms_out_flush(o);
		if (r != -EAGAIN)
			return r;
		struct pollfd p = {.fd = o->fd, .events = POLLOUT};
		if (poll(&p, 1, 1000) < 0 && errno != EINTR)
			return -errno;
	}
}

int vms_out_close(struct vms_out *o)
{
	if (!o || !o->buf)
		return 0;
	int r = o->err;
	int f = vms_out_drain(o);
	if (f < 0 && r == 0)
		r = f;
	if (f < 0 && o->is_reg && o->written > o->committed) {
		/* a record was cut off by the error: remove its head so the file
		 * ends with a whole record */
		if (ftruncate(o->fd, (off_t)o->committed) < 0 && r == 0)
			r = -errno;
	}
	if (o->saved_flags >= 0)
		(void)fcntl(o->fd, F_SETFL, o->saved_flags);
	if (o->owns_fd && close(o->fd) < 0 && r == 0)
		r = -errno;
	free(o->buf);
	free(o->path);
	memset(o, 0, sizeof(*o));
	o->fd = -1;
	return r;
}

/* SPDX-License-Identifier: MIT */
#include "out.h"
#include "grow.h"
#include "safefile.h"

#include <vmsampler/format.h>
#include <vmsampler/ring.h>

#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
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

volatile sig_atomic_t vms_out_stop;

static struct {
	dev_t dev;
	ino_t ino;
} protected_files[4];
static unsigned nprotected;
static char refusal[256];

int vms_out_protect(const struct stat *st)
{
	if (!S_ISREG(st->st_mode))
		return 0; /* a pipe or a terminal cannot be an output's target */
	if (nprotected == VMS_ARRAY_SIZE(protected_files))
		return -ENOSPC;
	protected_files[nprotected].dev = st->st_dev;
	protected_files[nprotected].ino = st->st_ino;
	nprotected++;
	return 0;
}

const char *vms_out_strerror(int err)
{
	return vms_out_refused(err) && refusal[0] ? refusal : strerror(-err);
}

static int refuse(int err, const char *why)
{
	snprintf(refusal, sizeof(refusal), "%s", why);
	return err;
}

/* The first bytes of the file open (write-only) on fd, through a second,
 * read-only open of the same file: n, or -1 if it cannot be read. */
static ssize_t read_head(int fd, char *head, size_t len)
{
	char self[64];
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	int rfd = open(self, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (rfd < 0)
		return -1;
	ssize_t n = pread(rfd, head, len, 0);
	close(rfd);
	return n;
}

/* Is the regular file open on fd one that `how` may overwrite? */
static int check_target(int fd, const struct stat *st, unsigned how)
{
	for (unsigned i = 0; i < nprotected; i++)
		if (protected_files[i].dev == st->st_dev && protected_files[i].ino == st->st_ino)
			return refuse(-EBUSY, "is the input being read; not overwriting it");
	char head[16] = {0};
	ssize_t n = st->st_size > 0 ? read_head(fd, head, sizeof(head)) : 0;
	if (n < 0 && !(how & VMS_OUT_FORCE))
		return refuse(-EEXIST, "exists and cannot be read to check that it is a vmsampler output; "
				       "not overwriting it (--force overwrites)");
	/* a ring, even one whose writer is gone: its readers have it mapped,
	 * and a truncated mapping is a SIGBUS for them */
	if (n >= 7 && memcmp(head, VMS_RING_MAGIC, 7) == 0)
		return refuse(-EBUSY, "is a vmsampler ring; not overwriting it");
	if (n == 0 || (how & (VMS_OUT_FORCE | VMS_OUT_APPEND)))
		return 0;
	if ((how & VMS_OUT_BIN) && (size_t)n >= VMS_FMT_MAGIC_LEN &&
	    memcmp(head, VMS_FMT_MAGIC, VMS_FMT_MAGIC_LEN) == 0)
		return 0;
	if ((how & VMS_OUT_CSV) && n >= 9 && memcmp(head, "seq,time,", 9) == 0)
		return 0;
	return refuse(-EEXIST, (how & VMS_OUT_BIN) ? "exists and is not a vmsampler .vms stream; not overwriting it (--force overwrites)"
		      : (how & VMS_OUT_CSV) ? "exists and is not a vmsampler CSV file; not overwriting it (--force overwrites)"
		      : "exists; not overwriting it (--force overwrites)");
}

/* open(2) for writing that waits for the reader of a FIFO without ever
 * blocking in the kernel: a FIFO is opened non-blocking, and retried in
 * steps of 20 ms, so that vms_out_stop, set by a signal at any moment
 * (also just before the open), ends the wait (-EINTR).  Anything else is
 * opened as open(2) would.  The fd returned is blocking.  fd or -errno. */
static int open_wait(const char *path, int flags, mode_t mode)
{
	struct stat st;
	bool fifo = stat(path, &st) == 0 && S_ISFIFO(st.st_mode);
	for (;;) {
		if (vms_out_stop)
			return -EINTR;
		int fd = open(path, flags | (fifo ? O_NONBLOCK : 0), mode);
		if (fd < 0 && errno == EINTR)
			continue;
		if (fd < 0 && !(fifo && errno == ENXIO)) /* ENXIO: a FIFO without a reader */
			return -errno;
		if (fd >= 0) {
			if (fifo)
				fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
			return fd;
		}
		nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
	}
}

int vms_out_open_fd(const char *path, unsigned how)
{
	int flags = O_WRONLY | O_CREAT | O_CLOEXEC | ((how & VMS_OUT_APPEND) ? O_APPEND : 0) |
		    ((how & VMS_OUT_FORCE) ? 0 : O_NOFOLLOW);
	int fd;
	refusal[0] = '\0';
	/* a FIFO waits here until its reader comes: a signal ends the wait */
	if ((fd = open_wait(path, flags, 0644)) < 0) {
		if (fd == -ELOOP && !(how & VMS_OUT_FORCE))
			return refuse(-ELOOP, "is a symbolic link; not following it (--force follows it)");
		/* "Permission denied" for another user's file (its mode, or the
		 * kernel's fs.protected_regular in a sticky directory): say whose */
		struct stat lst;
		if (fd == -EACCES && stat(path, &lst) == 0 && vms_safe_foreign(&lst, refusal, sizeof(refusal)))
			return -EEXIST;
		return fd;
	}
	struct stat st;
	int r = fstat(fd, &st) < 0 ? -errno : 0;
	/* another user's file (one they made in /tmp, say, before we came):
	 * they could alter what we write; never, even with --force (checked
	 * on the fd: no race with a rename) */
	if (r == 0 && vms_safe_foreign(&st, refusal, sizeof(refusal)))
		r = -EEXIST;
	else if (r == 0 && S_ISREG(st.st_mode)) {
		r = check_target(fd, &st, how);
		if (r == 0 && !(how & VMS_OUT_APPEND) && st.st_size > 0 && ftruncate(fd, 0) < 0)
			r = -errno;
	}
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

int vms_out_open(struct vms_out *o, const char *path, unsigned how, size_t bufsize)
{
	if (strcmp(path, "-") == 0)
		return setup(o, STDOUT_FILENO, false, bufsize);
	int fd = vms_out_open_fd(path, how);
	if (fd < 0)
		return fd;
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
	char *nb = vms_grow(o->buf, &o->cap, n, 4096);
	if (!nb)
		return -ENOMEM;
	o->buf = nb;
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

void vms_out_end_record_tag(struct vms_out *o, uint64_t tag)
{
	uint64_t end = o->written + o->len;
	if (o->bq_n == VMS_ARRAY_SIZE(o->bq)) {
		/* drop the oldest boundary: truncation gets coarser, never wrong */
		o->bq_head = (o->bq_head + 1) % VMS_ARRAY_SIZE(o->bq);
		o->bq_n--;
	}
	unsigned k = (o->bq_head + o->bq_n) % VMS_ARRAY_SIZE(o->bq);
	o->bq[k] = end;
	o->bq_tag[k] = tag;
	o->bq_n++;
	o->rec_start = o->len;
}

void vms_out_end_record(struct vms_out *o)
{
	vms_out_end_record_tag(o, 0);
}

void vms_out_cancel_record(struct vms_out *o)
{
	o->len = o->rec_start;
}

static void retire_boundaries(struct vms_out *o)
{
	while (o->bq_n && o->bq[o->bq_head] <= o->written) {
		o->committed = o->bq[o->bq_head];
		if (o->bq_tag[o->bq_head])
			o->committed_tag = o->bq_tag[o->bq_head];
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

/* SPDX-License-Identifier: MIT */
#include "safefile.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int VMS_PRINTF(4, 5) say(char *why, size_t whylen, int err, const char *fmt, ...)
{
	if (whylen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(why, whylen, fmt, ap);
		va_end(ap);
	}
	return err;
}

static const char *file_kind(mode_t m)
{
	return S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device"
	       : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

int vms_safe_open(const char *path, unsigned how, size_t max, struct stat *st, char *why, size_t whylen)
{
	/* O_NONBLOCK: the open of a FIFO without a writer returns at once
	 * (fstat then refuses it); O_NOCTTY: a terminal never becomes ours */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		int e = -errno;
		return say(why, whylen, e, "%s", strerror(-e));
	}
	int r = 0;
	if (fstat(fd, st) < 0)
		r = say(why, whylen, -errno, "%s", strerror(errno));
	else if (S_ISDIR(st->st_mode))
		r = say(why, whylen, -EISDIR, "%s", strerror(EISDIR)); /* as read(2) says it */
	else if (!S_ISREG(st->st_mode))
		r = say(why, whylen, -EINVAL, "is %s, not a regular file", file_kind(st->st_mode));
	else if ((uint64_t)st->st_size > max)
		r = say(why, whylen, -EFBIG, "larger than %zu bytes", max);
	else if ((how & VMS_SAFE_SECRET) && (st->st_mode & (S_IROTH | S_IWOTH)))
		r = say(why, whylen, -EACCES, "readable by others (chmod o-rw)");
	else if ((how & VMS_SAFE_SECRET) && st->st_uid != geteuid() && st->st_uid != 0)
		r = say(why, whylen, -EPERM, "owned by uid %u, not by this user (uid %u) or root",
			(unsigned)st->st_uid, (unsigned)geteuid());
	else if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0)
		r = say(why, whylen, -errno, "%s", strerror(errno));
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

int vms_safe_read(const char *path, unsigned how, size_t max, char **buf, size_t *len, char *why,
		  size_t whylen)
{
	struct stat st;
	*buf = NULL;
	*len = 0;
	int fd = vms_safe_open(path, how, max, &st, why, whylen);
	if (fd < 0)
		return fd;
	/* st_size is a hint (the file may change): read to the end, at most
	 * max + 1 bytes to tell a file that grew past the limit */
	size_t cap = (size_t)st.st_size + 1, n = 0;
	char *p = malloc(cap + 1);
	int r = p ? 0 : say(why, whylen, -ENOMEM, "out of memory");
	while (r == 0) {
		if (n == cap && cap > max) {
			r = say(why, whylen, -EFBIG, "larger than %zu bytes", max);
			break;
		}
		if (n == cap) {
			size_t nc = cap > max / 2 ? max + 1 : cap * 2;
			char *np = realloc(p, nc + 1);
			if (!np) {
				r = say(why, whylen, -ENOMEM, "out of memory");
				break;
			}
			p = np;
			cap = nc;
		}
		ssize_t k = read(fd, p + n, cap - n);
		if (k < 0 && errno != EINTR)
			r = say(why, whylen, -errno, "%s", strerror(errno));
		else if (k == 0)
			break;
		else if (k > 0)
			n += (size_t)k;
	}
	close(fd);
	if (r < 0) {
		free(p);
		return r;
	}
	p[n] = '\0';
	*buf = p;
	*len = n;
	return 0;
}

int vms_safe_foreign(const struct stat *st, char *why, size_t whylen)
{
	if (!S_ISREG(st->st_mode) || st->st_uid == geteuid())
		return 0;
	say(why, whylen, 1, "is owned by another user (uid %u, not %u); not writing into it",
	    (unsigned)st->st_uid, (unsigned)geteuid());
	return 1;
}

int vms_safe_status(int err)
{
	switch (-err) {
	case ENOMEM:
	case EIO:
	case EMFILE:
	case ENFILE:
	case ENOSPC:
	case EDQUOT:
	case ENOBUFS:
	case EINTR:
	case EAGAIN:
	case ETIMEDOUT:
		return 1;
	default:
		return 2;
	}
}

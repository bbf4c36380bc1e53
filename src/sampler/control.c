/* SPDX-License-Identifier: MIT */
/* control.c - the control socket (control.h): markers from `vmsampler
 * mark`, bounded and answered, handled between ticks. */
#include "control.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "vms.h"
#include "ctl_proto_int.h"

VMS_PRINTF(3, 4)
static int say(char *err, size_t errlen, const char *fmt, ...)
{
	if (!errlen)
		return 0;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return 0;
}

void vms_control_init(struct vms_control *c)
{
	memset(c, 0, sizeof(*c));
	c->lfd = -1;
	for (unsigned i = 0; i < VMS_CTL_CONNS; i++)
		c->conn[i].fd = -1;
	c->budget = VMS_CTL_MARKS;
}

/* What is at path: 0 nothing (or a socket nobody listens on: removed);
 * -errno refused. */
static int clear_path(const char *path, const struct sockaddr_un *a, char *err, size_t errlen)
{
	struct stat st;
	if (lstat(path, &st) < 0) {
		if (errno == ENOENT)
			return 0;
		int e = -errno;
		say(err, errlen, "%s", strerror(-e));
		return e;
	}
	if (!S_ISSOCK(st.st_mode)) {
		say(err, errlen, "exists and is not a socket; not replacing it");
		return -EEXIST;
	}
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int r = connect(fd, (const struct sockaddr *)a, sizeof(*a));
	int e = errno;
	close(fd);
	if (r == 0 || e == EAGAIN) {
		say(err, errlen, "another vmsampler listens on it");
		return -EBUSY;
	}
	if (e != ECONNREFUSED) {
		say(err, errlen, "cannot tell whether it is in use: %s", strerror(e));
		return -e;
	}
	if (unlink(path) < 0 && errno != ENOENT) {
		e = errno;
		say(err, errlen, "cannot remove the stale socket: %s", strerror(e));
		return -e;
	}
	return 0;
}

int vms_control_open(struct vms_control *c, const char *path, vms_control_mark_fn mark, void *ctx,
		     char *err, size_t errlen)
{
	struct sockaddr_un a;
	vms_control_init(c);
	c->mark = mark;
	c->ctx = ctx;
	if (errlen)
		err[0] = '\0';
	int e = vms_ctl_addr(path, &a);
	if (e < 0) {
		say(err, errlen, "path too long for a socket");
		return e;
	}
	if ((e = clear_path(path, &a, err, errlen)) < 0)
		return e;
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		e = -errno;
		say(err, errlen, "socket: %s", strerror(-e));
		return e;
	}
	/* 0660 from the start: the sampler is single-threaded, the umask
	 * is its own to set around bind */
	mode_t old = umask(0117);
	int r = bind(fd, (const struct sockaddr *)&a, sizeof(a));
	e = errno;
	umask(old);
	if (r < 0 || listen(fd, VMS_CTL_CONNS) < 0) {
		e = r < 0 ? e : errno;
		say(err, errlen, "%s: %s", r < 0 ? "bind" : "listen", strerror(e));
		close(fd);
		if (r == 0)
			unlink(path);
		return -e;
	}
	c->path = strdup(path);
	if (!c->path) {
		close(fd);
		unlink(path);
		return -ENOMEM;
	}
	c->lfd = fd;
	return 0;
}

int vms_control_pollfds(const struct vms_control *c, struct pollfd *fds, int max)
{
	int n = 0;
	if (c->lfd < 0 || max < 1)
		return 0;
	fds[n++] = (struct pollfd){.fd = c->lfd, .events = POLLIN};
	for (unsigned i = 0; i < VMS_CTL_CONNS && n < max; i++)
		fds[n++] = (struct pollfd){.fd = c->conn[i].fd, .events = POLLIN};
	return n;
}

static void answer(int fd, const char *msg)
{
	/* non-blocking: a client that does not read its answer loses it */
	(void)!send(fd, msg, strlen(msg), MSG_DONTWAIT | MSG_NOSIGNAL);
}

static void drop(struct vms_control *c, unsigned i)
{
	close(c->conn[i].fd);
	c->conn[i].fd = -1;
}

static void take_message(struct vms_control *c, unsigned i)
{
	char buf[VMS_CTL_TEXT + 2], out[64], who[64];
	int fd = c->conn[i].fd;
	ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) { /* gone without a word */
		drop(c, i);
		return;
	}
	const char *why = (size_t)n >= sizeof(buf) ? "text longer than 79 bytes" : vms_ctl_text_problem(buf, (size_t)n);
	if (!why && c->budget == 0)
		why = "too many marks in this interval (64 at most)";
	if (why) {
		c->refused++;
		snprintf(out, sizeof(out), "error: %s", why);
		answer(fd, out);
		drop(c, i);
		return;
	}
	buf[n] = '\0';
	struct ucred cr;
	socklen_t crl = sizeof(cr);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crl) == 0)
		snprintf(who, sizeof(who), "pid=%d uid=%u", (int)cr.pid, (unsigned)cr.uid);
	else
		snprintf(who, sizeof(who), "pid=? uid=?");
	c->budget--;
	c->marks++;
	uint64_t seq = c->mark ? c->mark(c->ctx, buf, who) : 0;
	snprintf(out, sizeof(out), "ok %llu", (unsigned long long)seq);
	answer(fd, out);
	drop(c, i);
}

void vms_control_ready(struct vms_control *c, const struct pollfd *fds, int n, uint64_t now_ns)
{
	if (c->lfd < 0 || n < 1)
		return;
	/* messages on open connections, and the idle ones closed */
	for (int k = 1; k < n; k++) {
		unsigned i = (unsigned)(k - 1);
		if (i >= VMS_CTL_CONNS || c->conn[i].fd < 0 || fds[k].fd != c->conn[i].fd)
			continue;
		if (fds[k].revents)
			take_message(c, i);
	}
	for (unsigned i = 0; i < VMS_CTL_CONNS; i++)
		if (c->conn[i].fd >= 0 && now_ns - c->conn[i].since_ns > VMS_CTL_IDLE_NS)
			drop(c, i);
	if (!(fds[0].revents & POLLIN))
		return;
	/* new connections: at most a table's worth per wakeup */
	for (unsigned k = 0; k < VMS_CTL_CONNS; k++) {
		int fd = accept4(c->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			break;
		unsigned i = 0;
		while (i < VMS_CTL_CONNS && c->conn[i].fd >= 0)
			i++;
		if (i == VMS_CTL_CONNS) {
			/* read what it sent first: a socket closed with unread
			 * data resets its peer, who would lose the answer */
			char sink[VMS_CTL_TEXT + 2];
			(void)!recv(fd, sink, sizeof(sink), MSG_DONTWAIT | MSG_TRUNC);
			c->refused++;
			answer(fd, "error: busy");
			close(fd);
			continue;
		}
		c->conn[i].fd = fd;
		c->conn[i].since_ns = now_ns;
		take_message(c, i); /* usually already there */
	}
}

void vms_control_interval(struct vms_control *c)
{
	c->budget = VMS_CTL_MARKS;
}

void vms_control_close(struct vms_control *c)
{
	for (unsigned i = 0; i < VMS_CTL_CONNS; i++)
		if (c->conn[i].fd >= 0)
			drop(c, i);
	if (c->lfd >= 0) {
		close(c->lfd);
		c->lfd = -1;
		if (c->path)
			unlink(c->path);
	}
	free(c->path);
	c->path = NULL;
}


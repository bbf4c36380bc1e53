/* SPDX-License-Identifier: MIT */
/* sockwatch.c - where libvirt's socket will appear, watched (sockwatch.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "sockwatch.h"

static int put(char *out, size_t cap, const char *a, size_t alen, const char *b)
{
	int n = snprintf(out, cap, "%.*s%s", (int)alen, a, b);
	return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* socket=PATH among the query's parameters: its directory and name */
static int socket_param(const char *q, char *out, size_t cap, char *name, size_t ncap)
{
	for (const char *p = q; p && *p; p = strchr(p, '&') ? strchr(p, '&') + 1 : NULL) {
		if (strncmp(p, "socket=", 7) != 0)
			continue;
		const char *v = p + 7;
		size_t n = strcspn(v, "&");
		if (n == 0 || v[0] != '/')
			return -1;
		size_t d = n;
		while (d > 0 && v[d - 1] != '/')
			d--;
		/* d: the length up to and with the last '/'; "/x" -> "/" */
		if (d == n || put(name, ncap, v + d, n - d, "") < 0)
			return -1;
		return put(out, cap, v, d > 1 ? d - 1 : 1, "");
	}
	return 1; /* no socket parameter */
}

int vms_sockwatch_dir(const char *uri, bool root, const char *runtime, const char *home, char *out, size_t cap,
		char *name, size_t ncap)
{
	if (ncap)
		name[0] = '\0';
	if (!uri || !*uri)
		uri = root ? "qemu:///system" : "qemu:///session";
	const char *q = strchr(uri, '?');
	const char *sep = strstr(uri, "://");
	if (!sep || (q && sep > q))
		return -1;
	size_t slen = (size_t)(sep - uri);
	const char *plus = memchr(uri, '+', slen);
	if (plus && !((size_t)(sep - plus - 1) == 4 && strncmp(plus + 1, "unix", 4) == 0))
		return -1; /* ssh, tcp, tls, libssh...: a daemon elsewhere */
	size_t dlen = plus ? (size_t)(plus - uri) : slen;
	if ((dlen == 4 && strncmp(uri, "test", 4) == 0) || dlen == 0)
		return -1; /* in-process: never down */
	const char *host = sep + 3;
	size_t hlen = strcspn(host, "/?");
	if (hlen)
		return -1;
	if (q) {
		int r = socket_param(q + 1, out, cap, name, ncap);
		if (r <= 0)
			return r;
	}
	const char *path = host;
	size_t plen = strcspn(path, "?");
	if (plen == 7 && strncmp(path, "/system", 7) == 0)
		return put(out, cap, "/run/libvirt", 12, "");
	if (plen == 8 && strncmp(path, "/session", 8) == 0) {
		if (runtime && runtime[0] == '/')
			return put(out, cap, runtime, strlen(runtime), "/libvirt");
		if (home && home[0] == '/')
			return put(out, cap, home, strlen(home), "/.cache/libvirt");
	}
	return -1;
}

int vms_sockwatch_open(struct vms_sockwatch *w, const char *dir, const char *name)
{
	w->wd = -1;
	w->at_target = false;
	w->next[0] = '\0';
	if (snprintf(w->dir, sizeof(w->dir), "%s", dir) >= (int)sizeof(w->dir) ||
	    snprintf(w->name, sizeof(w->name), "%s", name ? name : "") >= (int)sizeof(w->name)) {
		w->fd = -1;
		return -ENAMETOOLONG;
	}
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	return w->fd < 0 ? -errno : 0;
}

#define WATCH_MASK (IN_CREATE | IN_MOVED_TO | IN_ATTRIB | IN_ONLYDIR)

int vms_sockwatch_arm(struct vms_sockwatch *w)
{
	if (w->fd < 0)
		return -EBADF;
	vms_sockwatch_disarm(w);
	char p[sizeof(w->dir)];
	memcpy(p, w->dir, sizeof(p));
	for (;;) {
		int wd = inotify_add_watch(w->fd, p, WATCH_MASK);
		if (wd >= 0) {
			w->wd = wd;
			w->at_target = strcmp(p, w->dir) == 0;
			w->next[0] = '\0';
			if (!w->at_target) {
				/* the component of dir after p */
				size_t k = strlen(p);
				const char *c = w->dir + (k > 1 ? k + 1 : 1);
				snprintf(w->next, sizeof(w->next), "%.*s", (int)strcspn(c, "/"), c);
			}
			return 0;
		}
		if (errno != ENOENT && errno != ENOTDIR)
			return -errno;
		char *s = strrchr(p, '/');
		if (!s || (s == p && p[1] == '\0'))
			return -ENOENT;
		if (s == p)
			s[1] = '\0'; /* "/run" -> "/" */
		else
			*s = '\0';
	}
}

void vms_sockwatch_disarm(struct vms_sockwatch *w)
{
	if (w->fd >= 0 && w->wd >= 0)
		inotify_rm_watch(w->fd, w->wd);
	w->wd = -1;
	w->at_target = false;
}

static bool is_socket_name(const struct vms_sockwatch *w, const char *n)
{
	return w->name[0] ? strcmp(n, w->name) == 0 : strstr(n, "sock") != NULL;
}

bool vms_sockwatch_read(struct vms_sockwatch *w)
{
	bool hit = false, rearm = false;
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	for (;;) {
		ssize_t n = w->fd >= 0 ? read(w->fd, buf, sizeof(buf)) : -1;
		if (n <= 0)
			break;
		for (ssize_t off = 0; off + (ssize_t)sizeof(struct inotify_event) <= n;) {
			const struct inotify_event *e = (const struct inotify_event *)(buf + off);
			if (e->mask & IN_Q_OVERFLOW)
				hit = rearm = true;
			else if (e->wd == w->wd && (e->mask & IN_IGNORED))
				w->wd = -1, rearm = true; /* the directory went: watch what is left */
			else if (e->wd == w->wd && e->len && (e->mask & (IN_CREATE | IN_MOVED_TO | IN_ATTRIB))) {
				if (w->at_target)
					hit |= is_socket_name(w, e->name);
				else
					rearm |= strcmp(e->name, w->next) == 0; /* a step on the way */
			}
			off += (ssize_t)sizeof(*e) + e->len;
		}
	}
	if (rearm) {
		bool was = w->at_target;
		vms_sockwatch_arm(w);
		hit |= w->at_target && !was; /* the socket may be in it already */
	}
	return hit;
}

void vms_sockwatch_close(struct vms_sockwatch *w)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = w->wd = -1;
}

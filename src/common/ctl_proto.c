/* SPDX-License-Identifier: MIT */
/* ctl_proto.c - the control socket's protocol (ctl_proto.h). */
#include "ctl_proto.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "name.h"
#include "ctl_proto_int.h"
#include "vms.h"

int vms_ctl_addr(const char *path, struct sockaddr_un *a)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(a->sun_path))
		return -ENAMETOOLONG;
	memcpy(a->sun_path, path, strlen(path) + 1);
	return 0;
}

/* printable text: valid UTF-8, no control characters (those of name.h) */
const char *vms_ctl_text_problem(const char *t, size_t n)
{
	if (n == 0)
		return "empty text";
	if (n > VMS_CTL_TEXT)
		return "text longer than 79 bytes";
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)t[i];
		if (ch < 0x20 || ch == 0x7f)
			return "control characters in the text";
	}
	if (!vms_name_valid(t, n))
		return "text not valid UTF-8, or with control characters";
	return NULL;
}

/* ---- client ----------------------------------------------------------------- */

int vms_ctl_send(const char *path, const char *text, int timeout_ms, char *reply, size_t replylen)
{
	struct sockaddr_un a;
	int e = vms_ctl_addr(path, &a);
	if (e < 0)
		return e;
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)&a, sizeof(a)) < 0 ||
	    (send(fd, text, strlen(text), MSG_NOSIGNAL) < 0 && errno != EPIPE)) {
		/* (EPIPE: answered and closed before we spoke, "busy": read it) */
		e = -errno;
		close(fd);
		return e;
	}
	struct pollfd p = {.fd = fd, .events = POLLIN};
	int r = poll(&p, 1, timeout_ms);
	ssize_t n = r > 0 ? recv(fd, reply, replylen - 1, 0) : -1;
	e = r == 0 ? -ETIMEDOUT : -errno;
	close(fd);
	if (n <= 0)
		return n == 0 ? -ECONNRESET : e;
	reply[n] = '\0';
	return strncmp(reply, "ok", 2) == 0 ? 0 : 1;
}

/* "socket:[INODE]" of each fd of pid, matched against the listening
 * SEQPACKET sockets with a path in /proc/net/unix */
int vms_ctl_find(pid_t pid, char *path, size_t pathlen)
{
	char dir[64], link[64], line[512];
	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	DIR *d = opendir(dir);
	if (!d)
		return -errno;
	unsigned long inodes[256];
	unsigned ni = 0;
	for (struct dirent *de; (de = readdir(d)) && ni < VMS_ARRAY_SIZE(inodes);) {
		ssize_t n = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		unsigned long ino;
		if (sscanf(link, "socket:[%lu]", &ino) == 1)
			inodes[ni++] = ino;
	}
	closedir(d);
	FILE *f = fopen("/proc/net/unix", "re");
	if (!f)
		return -errno;
	int found = -ENOENT;
	while (found < 0 && fgets(line, sizeof(line), f)) {
		/* Num RefCount Protocol Flags Type St Inode Path */
		unsigned long flags, type, st, ino;
		char p[256];
		if (sscanf(line, "%*s %*s %*s %lx %lx %lx %lu %255s", &flags, &type, &st, &ino, p) != 5)
			continue;
		if (type != SOCK_SEQPACKET || !(flags & 0x10000) || p[0] != '/')
			continue; /* not listening (__SO_ACCEPTCON), or no path */
		for (unsigned i = 0; i < ni; i++)
			if (inodes[i] == ino) {
				if (strlen(p) >= pathlen) {
					found = -ENAMETOOLONG;
					break;
				}
				memcpy(path, p, strlen(p) + 1);
				found = 0;
				break;
			}
	}
	fclose(f);
	return found;
}

/* SPDX-License-Identifier: MIT */
/* notify.c - sd_notify (notify.h). */
#include "notify.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"
#include "vms_build.h"

#if HAVE_LIBSYSTEMD
#include <systemd/sd-daemon.h>

static int send_state(const char *state)
{
	return sd_notify(0, state);
}

static uint64_t watchdog_usec(void)
{
	uint64_t usec = 0;
	return sd_watchdog_enabled(0, &usec) > 0 ? usec : 0;
}
#else
/* The protocol itself: one datagram to the AF_UNIX socket $NOTIFY_SOCKET
 * (a leading '@' is the abstract namespace). */
static int send_state(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t len;
	if (!path || !path[0])
		return 0;
	len = strlen(path);
	if ((path[0] != '/' && path[0] != '@') || len >= sizeof(sa.sun_path))
		return -EINVAL;
	memcpy(sa.sun_path, path, len);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	ssize_t w = sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa,
			   (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len));
	int r = w < 0 ? -errno : 1;
	close(fd);
	return r;
}

/* $WATCHDOG_USEC, when $WATCHDOG_PID is unset or ours (sd_watchdog_enabled) */
static uint64_t watchdog_usec(void)
{
	const char *s = getenv("WATCHDOG_USEC"), *pid = getenv("WATCHDOG_PID");
	char *end;
	if (!s)
		return 0;
	if (pid && strtol(pid, &end, 10) != (long)getpid())
		return 0;
	unsigned long long v = strtoull(s, &end, 10);
	return end != s && *end == '\0' ? v : 0;
}
#endif

static void say(struct vms_notify *n, const char *state)
{
	int r = send_state(state);
	if (r < 0)
		vms_debug("sd_notify %s: %s", state, strerror(-r));
	(void)n;
}

void vms_notify_init(struct vms_notify *n)
{
	memset(n, 0, sizeof(*n));
	n->wd_fd = -1;
	const char *s = getenv("NOTIFY_SOCKET");
	n->on = s && s[0];
	if (!n->on)
		return;
	n->wd_usec = watchdog_usec();
	if (!n->wd_usec)
		return;
	/* pinged at half the period, as sd_watchdog_enabled(3) advises */
	uint64_t half = n->wd_usec / 2 ? n->wd_usec / 2 : 1;
	struct itimerspec it = {
		.it_value = {(time_t)(half / 1000000), (long)(half % 1000000) * 1000},
		.it_interval = {(time_t)(half / 1000000), (long)(half % 1000000) * 1000},
	};
	n->wd_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (n->wd_fd < 0 || timerfd_settime(n->wd_fd, 0, &it, NULL) < 0) {
		vms_warn("watchdog: cannot arm a timer: %s; WATCHDOG=1 is not sent", strerror(errno));
		if (n->wd_fd >= 0)
			close(n->wd_fd);
		n->wd_fd = -1;
	}
}

void vms_notify_ready(struct vms_notify *n, const char *status)
{
	if (!n->on || n->ready)
		return;
	char msg[256];
	snprintf(msg, sizeof(msg), "READY=1\nSTATUS=%s", status);
	say(n, msg);
	n->ready = true;
}

void vms_notify_watchdog(struct vms_notify *n)
{
	uint64_t expirations;
	if (n->wd_fd < 0)
		return;
	if (read(n->wd_fd, &expirations, sizeof(expirations)) != (ssize_t)sizeof(expirations))
		return;
	say(n, "WATCHDOG=1");
	n->pings++;
}

void vms_notify_stopping(struct vms_notify *n)
{
	if (n->on)
		say(n, "STOPPING=1");
}

void vms_notify_close(struct vms_notify *n)
{
	if (n->wd_fd >= 0)
		close(n->wd_fd);
	n->wd_fd = -1;
}

/* SPDX-License-Identifier: MIT */
/* service.c - main's part of the run (service.h). */
#include "service.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "log.h"

/* A mark from the control socket: an event before the next frame. */
static uint64_t on_mark(void *ctx, const char *text, const char *who)
{
	struct vms_loop *l = ctx;
	vms_loop_event(l, VMS_EV_MARK, text, who);
	return vms_loop_next_seq(l);
}

/* Opened after the ring: a live ring at the path is the first thing to
 * say. */
static int open_control(void *ctx, struct vms_loop *l)
{
	struct vms_service *sv = ctx;
	if (!sv->ctl_path)
		return 0;
	char why[256];
	int r = vms_control_open(&sv->ctl, sv->ctl_path, on_mark, l, why, sizeof(why));
	if (r < 0)
		vms_err("control socket %s: %s", sv->ctl_path, why);
	return r;
}

/* Signals first, then the watchdog's timer (pinged between ticks, never
 * in one), then the control socket. */
static unsigned pollfds(void *ctx, struct pollfd *fds, unsigned max)
{
	struct vms_service *sv = ctx;
	unsigned n = 0;
	if (sv->sigfd >= 0)
		fds[n++] = (struct pollfd){.fd = sv->sigfd, .events = POLLIN};
	if (sv->notify.wd_fd >= 0)
		fds[n++] = (struct pollfd){.fd = sv->notify.wd_fd, .events = POLLIN};
	return n + (unsigned)vms_control_pollfds(&sv->ctl, fds + n, (int)(max - n));
}

static void handle_signals(struct vms_service *sv, struct vms_loop *l)
{
	struct signalfd_siginfo si;
	while (read(sv->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGHUP)
			l->reopen = true;
		else
			l->stop = true;
	}
}

static void ready(void *ctx, struct vms_loop *l, const struct pollfd *fds, unsigned n)
{
	struct vms_service *sv = ctx;
	unsigned k = 0;
	if (sv->sigfd >= 0 && (fds[k++].revents & POLLIN))
		handle_signals(sv, l);
	if (sv->notify.wd_fd >= 0 && (fds[k++].revents & POLLIN))
		vms_notify_watchdog(&sv->notify);
	if (n > k)
		vms_control_ready(&sv->ctl, fds + k, (int)(n - k), vms_clock_mono(&l->clock));
}

static int stop_fd(void *ctx)
{
	const struct vms_service *sv = ctx;
	return sv->sigfd;
}

/* The first frame is out: the service is up (Type=notify). */
static void ticked(void *ctx, struct vms_loop *l)
{
	struct vms_service *sv = ctx;
	vms_control_interval(&sv->ctl);
	if (l->frames && !sv->notify.ready) {
		char st[160];
		snprintf(st, sizeof(st), "sampling every %llu ms, %u columns, to %s",
			 (unsigned long long)(sv->conf->interval_ns / VMS_NSEC_PER_MSEC), l->schema->ncols,
			 l->out.nsink ? l->out.sink[0].path : "-");
		vms_notify_ready(&sv->notify, st);
	}
}

static void stopping(void *ctx, struct vms_loop *l)
{
	struct vms_service *sv = ctx;
	(void)l;
	vms_notify_stopping(&sv->notify);
}

int vms_service_init(struct vms_service *sv, const struct vms_config *conf, struct vms_loop_hooks *hooks)
{
	memset(sv, 0, sizeof(*sv));
	sv->conf = conf;
	sv->sigfd = -1;
	sv->notify.wd_fd = -1;
	vms_control_init(&sv->ctl);
	*hooks = (struct vms_loop_hooks){
		.ctx = sv, .started = open_control, .pollfds = pollfds, .ready = ready,
		.stop_fd = stop_fd, .ticked = ticked, .stopping = stopping,
	};
	const char *cp = conf->control_path;
	if (cp && strcmp(cp, "none") == 0)
		return 0;
	if (cp)
		sv->ctl_path = strdup(cp);
	else if (conf->ring_path && asprintf(&sv->ctl_path, "%s.ctl", conf->ring_path) < 0)
		sv->ctl_path = NULL;
	else if (!conf->ring_path)
		return 0;
	if (!sv->ctl_path)
		return -ENOMEM;
	/* the columns are declared before the socket is opened */
	hooks->counter[0] = (struct vms_loop_counter){"marks", &sv->ctl.marks};
	hooks->counter[1] = (struct vms_loop_counter){"marks_refused", &sv->ctl.refused};
	hooks->ncounter = 2;
	return 0;
}

int vms_service_signals(struct vms_service *sv)
{
	sigset_t m;
	sigemptyset(&m);
	sigaddset(&m, SIGINT);
	sigaddset(&m, SIGTERM);
	sigaddset(&m, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &m, NULL) < 0)
		return -errno;
	sv->sigfd = signalfd(-1, &m, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sv->sigfd < 0)
		return -errno;
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

void vms_service_start(struct vms_service *sv)
{
	vms_notify_init(&sv->notify);
}

void vms_service_fini(struct vms_service *sv)
{
	vms_control_close(&sv->ctl);
	vms_notify_close(&sv->notify);
	free(sv->ctl_path);
	if (sv->sigfd >= 0)
		close(sv->sigfd);
	sv->sigfd = -1;
}

/* SPDX-License-Identifier: MIT */
#include "clock.h"

#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

struct real_clock {
	int tfd;
	uint64_t armed; /* deadline the timerfd is armed for (0: none) */
};

static uint64_t ts_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * VMS_NSEC_PER_SEC + (uint64_t)ts->tv_nsec;
}

static uint64_t real_mono(void *ctx)
{
	(void)ctx;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts_ns(&ts);
}

static int64_t real_real(void *ctx)
{
	(void)ctx;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * (int64_t)VMS_NSEC_PER_SEC + ts.tv_nsec;
}

static uint64_t real_cpu(void *ctx)
{
	(void)ctx;
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts_ns(&ts);
}

static int real_wait(void *ctx, uint64_t deadline, struct pollfd *fds, unsigned n)
{
	struct real_clock *rc = ctx;
	struct pollfd pf[64];

	if (n + 1 > VMS_ARRAY_SIZE(pf))
		return -E2BIG;
	if (rc->armed != deadline) {
		struct itimerspec its = {
			.it_value = {.tv_sec = (time_t)(deadline / VMS_NSEC_PER_SEC),
				     .tv_nsec = (long)(deadline % VMS_NSEC_PER_SEC)},
		};
		if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
			its.it_value.tv_nsec = 1; /* 0 would disarm */
		if (timerfd_settime(rc->tfd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
			return -errno;
		rc->armed = deadline;
	}
	pf[0] = (struct pollfd){.fd = rc->tfd, .events = POLLIN};
	if (n)
		memcpy(pf + 1, fds, n * sizeof(*fds));
	for (;;) {
		int r = ppoll(pf, n + 1, NULL, NULL);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		break;
	}
	for (unsigned i = 0; i < n; i++)
		fds[i].revents = pf[i + 1].revents;
	if (pf[0].revents & POLLIN) {
		uint64_t exp;
		if (read(rc->tfd, &exp, sizeof(exp)) < 0 && errno != EAGAIN)
			return -errno;
		rc->armed = 0;
		return 1;
	}
	return 0;
}

static const struct vms_clock_ops real_ops = {
	.mono = real_mono,
	.real = real_real,
	.cpu = real_cpu,
	.wait = real_wait,
};

int vms_clock_real_open(struct vms_clock *c)
{
	struct real_clock *rc = calloc(1, sizeof(*rc));
	if (!rc)
		return -ENOMEM;
	rc->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (rc->tfd < 0) {
		int e = -errno;
		free(rc);
		return e;
	}
	c->ops = &real_ops;
	c->ctx = rc;
	return 0;
}

void vms_clock_real_close(struct vms_clock *c)
{
	if (!c || c->ops != &real_ops)
		return;
	struct real_clock *rc = c->ctx;
	close(rc->tfd);
	free(rc);
	c->ops = NULL;
	c->ctx = NULL;
}

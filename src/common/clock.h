/* SPDX-License-Identifier: MIT */
/* clock.h - the loop's clock and its one blocking point, as a runtime seam.
 *
 * The real clock arms a timerfd (CLOCK_MONOTONIC, TFD_TIMER_ABSTIME) at
 * each absolute deadline and waits in a single ppoll() on it and the
 * loop's other fds.  Re-arming at start + k * period (instead of arming
 * one periodic timer) costs one timerfd_settime per tick (~0.5 us) and lets
 * the fake clock used by tests drive the very same loop code. */
#ifndef VMS_CLOCK_H
#define VMS_CLOCK_H

#include <poll.h>

#include "vms.h"

struct vms_clock_ops {
	uint64_t (*mono)(void *ctx);  /* CLOCK_MONOTONIC ns */
	int64_t (*real)(void *ctx);   /* CLOCK_REALTIME ns */
	uint64_t (*cpu)(void *ctx);   /* this process's CPU time (user+sys) ns */
	/* Block until the absolute monotonic deadline or until an fd in
	 * fds[0..n) is ready (revents set).  1: the deadline passed, 0: only
	 * fds are ready, -errno. */
	int (*wait)(void *ctx, uint64_t deadline_ns, struct pollfd *fds, unsigned n);
};

struct vms_clock {
	const struct vms_clock_ops *ops;
	void *ctx;
};

/* The real clock; vms_clock_real_open creates its timerfd. */
int vms_clock_real_open(struct vms_clock *c);
void vms_clock_real_close(struct vms_clock *c);

static inline uint64_t vms_clock_mono(const struct vms_clock *c) { return c->ops->mono(c->ctx); }
static inline int64_t vms_clock_real(const struct vms_clock *c) { return c->ops->real(c->ctx); }
static inline uint64_t vms_clock_cpu(const struct vms_clock *c) { return c->ops->cpu(c->ctx); }

#endif

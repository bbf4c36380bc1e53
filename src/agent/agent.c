/* SPDX-License-Identifier: MIT */
/* agent.c - what every part of the agent uses: its clocks, and the send of
 * the messages queued for the sampler (virt_agent.c, virt_dom.c and
 * virt_stats.c queue them; none of them calls another to send). */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <time.h>

#include "agent.h"
#include "vms.h"

uint64_t vms_agent_mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * VMS_NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

int64_t vms_agent_real(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * (int64_t)VMS_NSEC_PER_SEC + ts.tv_nsec;
}

void vms_agent_send(struct vms_agent *a)
{
	if (a->hold)
		return;
	size_t off = 0;
	int r;
	while ((r = vms_vp_w_send(&a->w, a->fd, &off)) == -EAGAIN) {
		struct pollfd p = {.fd = a->fd, .events = POLLOUT};
		poll(&p, 1, -1);
	}
	if (r < 0) {
		a->quit = true; /* the sampler is gone */
		vms_vp_w_reset(&a->w);
	}
}

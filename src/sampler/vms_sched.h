/* SPDX-License-Identifier: MIT */
/* vms_sched.h - absolute, drift-free tick deadlines (pure arithmetic).
 *
 * Deadline k is start + k * period, computed by multiplication, never by
 * accumulating periods, so rounding cannot drift.  On each wake-up the
 * tick due is the last deadline at or before `now`; deadlines passed over
 * since the previous tick are counted as missed, not caught up in a
 * burst. */
#ifndef VMS_SCHED_H
#define VMS_SCHED_H

#include "vms.h"

struct vms_sched {
	uint64_t start_ns;  /* CLOCK_MONOTONIC of deadline 0 */
	uint64_t period_ns;
	uint64_t next_idx;  /* index of the next deadline to serve */
};

struct vms_tickinfo {
	uint64_t idx;      /* deadline index served */
	uint64_t deadline_ns;
	uint64_t late_ns;  /* now - deadline */
	uint64_t missed;   /* deadlines skipped since the previous tick */
};

void vms_sched_init(struct vms_sched *s, uint64_t start_ns, uint64_t period_ns);
static inline uint64_t vms_sched_deadline(const struct vms_sched *s, uint64_t idx)
{
	return s->start_ns + idx * s->period_ns;
}
static inline uint64_t vms_sched_next(const struct vms_sched *s)
{
	return vms_sched_deadline(s, s->next_idx);
}
/* A wake-up at `now`: false if no deadline is due yet (spurious wake-up),
 * else fills *ti and advances. */
bool vms_sched_wake(struct vms_sched *s, uint64_t now_ns, struct vms_tickinfo *ti);
/* First deadline (monotonic) for a grid aligned to wall-clock multiples of
 * align_ns (0: the next whole period after now, i.e. start right away). */
uint64_t vms_sched_first(uint64_t mono_now, int64_t real_now, uint64_t align_ns);

/* Parse "10ms", "250ms", "1s", "1.5s", "5m", "2h", "100us" (a bare number
 * is seconds).  Returns 0 and *ns, or -EINVAL / -ERANGE. */
int vms_parse_duration(const char *s, uint64_t *ns);

#endif

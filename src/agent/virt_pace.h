/* SPDX-License-Identifier: MIT */
/* virt_pace.h - which domains the agent's slow path asks libvirt about on
 * a tick (balloon and block stats; measured cost: one QMP round trip per
 * group and domain, about 2-5 ms of wall time per domain, FACTS.md g).
 *
 * Rules, for n domains, refresh period R and per-tick budget B:
 *   - a domain never refreshed yet is due at once (values soon after a VM
 *     starts or the agent connects);
 *   - otherwise domains are due at the rate n / R, oldest refresh first
 *     (a credit that grows by n * dt / R per tick and is spent one per
 *     domain): after the first round the refreshes spread evenly, one
 *     domain every R / n;
 *   - a domain whose last refresh is R old or older is due whatever the
 *     credit says;
 *   - a batch holds at most B / c domains, c being the measured wall time
 *     per domain (a moving average of batch wall time / batch size), and
 *     at least one (the first batch: one, to measure c): the budget wins
 *     over R when both cannot hold, and vms_pace.behind says so;
 *   - a domain whose stats failed waits 1 s, 2 s, 4 s ... (at most
 *     VMS_PACE_BACKOFF_MAX) before it is asked again; a stuck batch (the
 *     sampler killed the agent) waits as long as the sampler says;
 *   - the caller's skip() leaves out domains that cannot answer now (a
 *     QEMU stopped with SIGSTOP would hang libvirt's call: FACTS.md g);
 *   - with a spacing S (0: none), refreshes are gathered: batches are
 *     taken at batch points S apart, each taking what the credit pays
 *     for and every domain that would be overdue before the next point
 *     (so that none waits longer than R); between points only first
 *     values, and a pace that is behind, are taken.  One call for S
 *     seconds' worth of domains instead of one per tick: the agent's
 *     cost is per call more than per domain (bench/vm, issue 15), and
 *     between points it needs no tick at all (vms_pace_next).
 * Times are CLOCK_MONOTONIC ns. */
#ifndef VMS_VIRT_PACE_H
#define VMS_VIRT_PACE_H

#include "vms.h"

#define VMS_PACE_BACKOFF_FIRST VMS_NSEC_PER_SEC
#define VMS_PACE_BACKOFF_MAX (600 * VMS_NSEC_PER_SEC)
#define VMS_PACE_BATCH_MAX 256
/* the agent's spacing: at most this, at most a quarter of the refresh */
#define VMS_PACE_SPACING (5 * VMS_NSEC_PER_SEC)

struct vms_pace_dom {
	char uuid[37];
	uint64_t last_ns;  /* last successful refresh, 0: never */
	uint64_t retry_ns; /* not asked before this */
	uint32_t fails;    /* consecutive failures */
	bool mark;         /* for the caller's mark and sweep */
};

struct vms_pace {
	struct vms_pace_dom *d;
	unsigned n, cap;
	uint64_t refresh_ns, budget_ns, spacing_ns;
	uint64_t point_ns; /* the last batch point (spacing), 0: none yet */
	double cost_ns;    /* wall time per domain (moving average) */
	double credit;
	uint64_t last_pick_ns;
	bool behind;       /* the last pick could not take every overdue domain */
};

void vms_pace_init(struct vms_pace *p, uint64_t refresh_ns, uint64_t budget_ns, uint64_t spacing_ns);
void vms_pace_free(struct vms_pace *p);
/* Index of the domain, or -1. */
int vms_pace_find(const struct vms_pace *p, const char *uuid);
/* Add (never refreshed) unless present; returns its index or -ENOMEM. */
int vms_pace_add(struct vms_pace *p, const char *uuid);
void vms_pace_remove(struct vms_pace *p, const char *uuid);
/* Domains per batch under the budget. */
unsigned vms_pace_batch_max(const struct vms_pace *p);
/* Choose this tick's batch: up to max indexes into out[], oldest first.
 * skip(ctx, i) true leaves domain i out this time. */
unsigned vms_pace_pick(struct vms_pace *p, uint64_t now_ns, bool (*skip)(void *ctx, unsigned i),
		       void *ctx, unsigned *out, unsigned max);
/* The earliest time at which a pick may take a domain (now_ns: at once,
 * UINT64_MAX: no domains), for the agent's NEXT. */
uint64_t vms_pace_next(const struct vms_pace *p, uint64_t now_ns);
/* The batch came back after wall_ns: ok[k] for out[k]. */
void vms_pace_done(struct vms_pace *p, const unsigned *idx, const bool *ok, unsigned n,
		   uint64_t now_ns, uint64_t wall_ns);
/* Leave the domain alone until then (a stuck batch). */
void vms_pace_hold(struct vms_pace *p, const char *uuid, uint64_t until_ns);

#endif

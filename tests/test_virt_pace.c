/* SPDX-License-Identifier: MIT */
/* test_virt_pace.c - the agent's slow-path pacing over simulated hours:
 * first values at once within the budget, then an even spread (one
 * domain every refresh/n), every domain refreshed at least every refresh
 * period, batches under the budget from the measured cost, the budget
 * winning over the refresh period (and saying so), doubling back-off for
 * failing domains, holds, and skipped domains; refreshes gathered into
 * batches a spacing apart. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "virt_pace.h"

#define S VMS_NSEC_PER_SEC
#define MS VMS_NSEC_PER_MSEC

static void uuid_of(unsigned i, char *out)
{
	snprintf(out, 37, "00000000-0000-0000-0000-%012u", i);
}

struct sim {
	struct vms_pace p;
	unsigned n;
	uint64_t now;
	uint64_t per_dom;       /* simulated wall time per domain */
	uint64_t last[64];      /* last refresh per domain (sim's view) */
	uint64_t max_gap[64];
	unsigned refreshes[64];
	bool fail[64];
	bool stopped[64];
	unsigned max_batch;
	uint64_t max_wall;
	unsigned skips_asked;
};

static bool skip_cb(void *ctx, unsigned i)
{
	struct sim *s = ctx;
	s->skips_asked++;
	unsigned dom = (unsigned)atoi(s->p.d[i].uuid + 24);
	return s->stopped[dom];
}

static void sim_init_sp(struct sim *s, unsigned n, uint64_t refresh, uint64_t budget, uint64_t per_dom,
			uint64_t spacing)
{
	memset(s, 0, sizeof(*s));
	vms_pace_init(&s->p, refresh, budget, spacing);
	s->n = n;
	s->per_dom = per_dom;
	s->now = 1000 * S;
	for (unsigned i = 0; i < n; i++) {
		char u[37];
		uuid_of(i, u);
		assert_int_equal(vms_pace_add(&s->p, u), (int)i);
	}
}

static void sim_init(struct sim *s, unsigned n, uint64_t refresh, uint64_t budget, uint64_t per_dom)
{
	sim_init_sp(s, n, refresh, budget, per_dom, 0);
}

/* One tick: pick, "call libvirt", report. */
static unsigned sim_tick(struct sim *s)
{
	unsigned idx[VMS_PACE_BATCH_MAX];
	bool ok[VMS_PACE_BATCH_MAX];
	unsigned n = vms_pace_pick(&s->p, s->now, skip_cb, s, idx, VMS_PACE_BATCH_MAX);
	uint64_t wall = n * s->per_dom;
	for (unsigned k = 0; k < n; k++) {
		unsigned dom = (unsigned)atoi(s->p.d[idx[k]].uuid + 24);
		assert_false(s->stopped[dom]);
		ok[k] = !s->fail[dom];
		if (ok[k]) {
			if (s->last[dom] && s->now - s->last[dom] > s->max_gap[dom])
				s->max_gap[dom] = s->now - s->last[dom];
			s->last[dom] = s->now;
			s->refreshes[dom]++;
		}
	}
	if (n > s->max_batch)
		s->max_batch = n;
	if (wall > s->max_wall)
		s->max_wall = wall;
	vms_pace_done(&s->p, idx, ok, n, s->now + wall, wall);
	s->now += S;
	return n;
}

static void test_spread_and_refresh(void **state)
{
	(void)state;
	struct sim *s = malloc(sizeof(*s));
	/* 60 domains, refresh 60 s, budget 50 ms, 4 ms per domain */
	sim_init(s, 60, 60 * S, 50 * MS, 4 * MS);
	/* first values: every domain within ceil(60 / 12) ticks */
	unsigned first = 0, ticks = 0;
	while (first < 60) {
		sim_tick(s);
		ticks++;
		first = 0;
		for (unsigned i = 0; i < 60; i++)
			first += s->refreshes[i] > 0;
	}
	/* one to measure the cost, then 12 per tick (50 / 4) */
	assert_true(ticks <= 6);
	assert_true(s->max_wall <= 50 * MS);
	/* an hour: steady one per tick, each domain every 60 s */
	for (unsigned i = 0; i < 60; i++)
		s->max_gap[i] = 0;
	unsigned calls = 0;
	for (unsigned t = 0; t < 3600; t++) {
		unsigned n = sim_tick(s);
		if (t > 120) {
			assert_true(n <= 2); /* no bursts once spread */
			calls += n;
		}
	}
	for (unsigned i = 0; i < 60; i++) {
		assert_true(s->max_gap[i] <= 61 * S);
		assert_true(s->max_gap[i] >= 55 * S); /* not refreshed more than needed */
	}
	/* 3479 s at 1 per s */
	assert_true(calls >= 3400 && calls <= 3560);
	assert_true(s->max_wall <= 50 * MS);
	assert_false(s->p.behind);
	vms_pace_free(&s->p);

	/* a 10 s refresh: 6 per tick */
	sim_init(s, 60, 10 * S, 50 * MS, 4 * MS);
	for (unsigned t = 0; t < 600; t++)
		sim_tick(s);
	for (unsigned i = 0; i < 60; i++)
		assert_true(s->max_gap[i] <= 11 * S);
	vms_pace_free(&s->p);
	free(s);
}

static void test_budget_wins(void **state)
{
	(void)state;
	struct sim *s = malloc(sizeof(*s));
	/* 60 domains, 20 ms per domain, budget 50 ms: 2 per tick at most,
	 * a 10 s refresh cannot hold */
	sim_init(s, 60, 10 * S, 50 * MS, 20 * MS);
	bool behind = false;
	for (unsigned t = 0; t < 300; t++) {
		sim_tick(s);
		behind |= s->p.behind;
	}
	assert_true(behind);
	assert_true(s->max_wall <= 50 * MS);
	assert_int_equal(vms_pace_batch_max(&s->p), 2);
	/* everyone still gets refreshed, round robin: every 30 s */
	for (unsigned i = 0; i < 60; i++)
		assert_true(s->max_gap[i] <= 31 * S);
	vms_pace_free(&s->p);
	/* one domain costs more than the budget: batches of one */
	sim_init(s, 3, 60 * S, 5 * MS, 40 * MS);
	for (unsigned t = 0; t < 10; t++)
		sim_tick(s);
	assert_int_equal(s->max_batch, 1);
	vms_pace_free(&s->p);
	free(s);
}

static void test_backoff_hold_skip(void **state)
{
	(void)state;
	struct sim *s = malloc(sizeof(*s));
	sim_init(s, 4, 10 * S, 50 * MS, 1 * MS);
	s->fail[2] = true;
	unsigned asked[64] = {0};
	uint64_t when[64][16];
	for (unsigned t = 0; t < 200; t++) {
		unsigned idx[VMS_PACE_BATCH_MAX];
		bool ok[VMS_PACE_BATCH_MAX];
		unsigned n = vms_pace_pick(&s->p, s->now, NULL, NULL, idx, VMS_PACE_BATCH_MAX);
		for (unsigned k = 0; k < n; k++) {
			unsigned dom = (unsigned)atoi(s->p.d[idx[k]].uuid + 24);
			ok[k] = !s->fail[dom];
			if (asked[dom] < 16)
				when[dom][asked[dom]] = s->now;
			asked[dom]++;
		}
		vms_pace_done(&s->p, idx, ok, n, s->now, n * MS);
		s->now += S;
	}
	/* the failing domain: retried after 1, 2, 4, 8 ... s */
	assert_true(asked[2] >= 5 && asked[2] <= 9);
	for (unsigned k = 1; k < 5; k++)
		assert_int_equal(when[2][k] - when[2][k - 1], (1ull << (k - 1)) * S);
	/* the others every 10 s */
	assert_true(asked[0] >= 19 && asked[0] <= 22);

	/* a hold (stuck batch): not asked until it ends */
	char u[37];
	uuid_of(1, u);
	vms_pace_hold(&s->p, u, s->now + 60 * S);
	unsigned before = asked[1];
	for (unsigned t = 0; t < 59; t++) {
		unsigned idx[VMS_PACE_BATCH_MAX];
		bool ok[VMS_PACE_BATCH_MAX];
		unsigned n = vms_pace_pick(&s->p, s->now, NULL, NULL, idx, VMS_PACE_BATCH_MAX);
		for (unsigned k = 0; k < n; k++) {
			ok[k] = true;
			assert_int_not_equal(atoi(s->p.d[idx[k]].uuid + 24), 1);
		}
		vms_pace_done(&s->p, idx, ok, n, s->now, MS);
		s->now += S;
	}
	(void)before;
	s->now += 2 * S;
	unsigned idx[VMS_PACE_BATCH_MAX];
	unsigned n = vms_pace_pick(&s->p, s->now, NULL, NULL, idx, VMS_PACE_BATCH_MAX);
	bool seen = false;
	for (unsigned k = 0; k < n; k++)
		seen |= atoi(s->p.d[idx[k]].uuid + 24) == 1;
	assert_true(seen); /* overdue after the hold: asked at once */
	vms_pace_free(&s->p);

	/* a stopped QEMU is skipped, and skip() is asked sparingly */
	sim_init(s, 60, 60 * S, 50 * MS, 4 * MS);
	s->stopped[7] = true;
	for (unsigned t = 0; t < 300; t++)
		sim_tick(s);
	assert_int_equal(s->refreshes[7], 0);
	assert_true(s->refreshes[8] >= 5);
	assert_true(s->skips_asked < 300 * 60 / 2);
	/* add and remove */
	uuid_of(7, u);
	vms_pace_remove(&s->p, u);
	assert_int_equal(vms_pace_find(&s->p, u), -1);
	assert_int_equal(s->p.n, 59);
	assert_int_equal(vms_pace_add(&s->p, u), 59);
	assert_int_equal(vms_pace_add(&s->p, u), 59);
	vms_pace_free(&s->p);
	free(s);
}

/* With a spacing (the agent's: 5 s), refreshes gather into one batch per
 * point: the same number of refreshes, none older than the refresh
 * period, first values and a pace that is behind at once, and
 * vms_pace_next says when the next batch point is. */
static void test_spacing(void **state)
{
	(void)state;
	struct sim *s = malloc(sizeof(*s));
	/* the agent's numbers for 60 domains, refresh 60 s at 1 s ticks */
	sim_init_sp(s, 60, 59 * S, 50 * MS, 4 * MS, 5 * S);
	for (unsigned t = 0; t < 10; t++)
		sim_tick(s);
	for (unsigned i = 0; i < 60; i++) {
		assert_true(s->refreshes[i] > 0); /* first values: not gathered */
		s->max_gap[i] = 0;
	}
	unsigned calls = 0, batches = 0;
	uint64_t last_batch = 0, min_apart = UINT64_MAX;
	for (unsigned t = 0; t < 3600; t++) {
		uint64_t now = s->now, next = vms_pace_next(&s->p, now);
		unsigned n = sim_tick(s);
		if (n) {
			/* a batch only where vms_pace_next said one could be */
			assert_true(next <= now);
			if (last_batch && now - last_batch < min_apart)
				min_apart = now - last_batch;
			last_batch = now;
		} else if (t > 120) {
			assert_true(next > now && next <= now + 5 * S);
		}
		if (t > 120) {
			calls += n;
			batches += n > 0;
		}
	}
	assert_true(min_apart >= 5 * S);
	/* 3479 s: at a point the domains that would pass 59 s before the
	 * next one go too, so the gaps are 54..59 s: 3540..3870 refreshes,
	 * in ~696 batches */
	if (calls < 3500 || calls > 3870 || batches < 650 || batches > 700)
		fail_msg("%u refreshes in %u batches", calls, batches);
	for (unsigned i = 0; i < 60; i++)
		if (s->max_gap[i] > 59 * S || s->max_gap[i] < 54 * S)
			fail_msg("domain %u: gap %.1f s", i, (double)s->max_gap[i] / S);
	assert_false(s->p.behind);

	/* a new domain between two points: due at once (with what the
	 * credit has paid for since the point) */
	char u[37];
	uint64_t now = s->now;
	while (vms_pace_next(&s->p, now) <= now) { /* step to just after a point */
		sim_tick(s);
		now = s->now;
	}
	uuid_of(60, u);
	s->n = 61;
	assert_int_equal(vms_pace_add(&s->p, u), 60);
	assert_int_equal(vms_pace_next(&s->p, now), now);
	assert_true(sim_tick(s) >= 1);
	assert_int_equal(s->refreshes[60], 1);
	assert_true(vms_pace_next(&s->p, s->now) > s->now);
	vms_pace_free(&s->p);

	/* behind (the budget cannot hold a 10 s refresh): every tick */
	sim_init_sp(s, 60, 10 * S, 50 * MS, 20 * MS, 2500 * MS);
	unsigned busy = 0;
	for (unsigned t = 0; t < 300; t++) {
		busy += sim_tick(s) > 0;
		if (s->p.behind)
			assert_int_equal(vms_pace_next(&s->p, s->now), s->now);
	}
	assert_true(busy >= 290);
	for (unsigned i = 0; i < 60; i++)
		assert_true(s->max_gap[i] <= 31 * S);
	vms_pace_free(&s->p);
	/* no spacing of a refresh period or more */
	vms_pace_init(&s->p, 4 * S, 0, 5 * S);
	assert_int_equal(s->p.spacing_ns, 0);
	vms_pace_free(&s->p);
	free(s);
}

VMS_TEST_MAIN(NULL, NULL,
	test_spread_and_refresh, test_budget_wins, test_backoff_hold_skip, test_spacing)

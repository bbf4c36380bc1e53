/* SPDX-License-Identifier: MIT */
/* The scheduler under a fake clock: no drift over 100,000 ticks, missed
 * ticks counted exactly, never a catch-up burst. */
#include "testutil.h"

#include <stdlib.h>

#include "vms_sched.h"

/* xorshift: deterministic jitter */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void run_drift(uint64_t period, uint64_t start)
{
	struct vms_sched s;
	struct vms_tickinfo ti;
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	uint64_t now = start;
	uint64_t frames = 0, missed_total = 0, injected = 0;
	const uint64_t N = 100000;

	vms_sched_init(&s, start, period);
	while (frames < N) {
		/* the loop waits for the next deadline; the wake-up comes late by
		 * a jitter below 30% of the period; now and then the process is
		 * stalled for several periods */
		uint64_t dl = vms_sched_next(&s);
		now = dl + rnd(&seed) % (period * 3 / 10);
		uint64_t stall = 0;
		if (frames % 997 == 500) {
			stall = 1 + rnd(&seed) % 5; /* whole periods lost */
			now += stall * period;
			injected += stall;
		}
		/* a spurious wake-up before the deadline does nothing */
		assert_false(vms_sched_wake(&s, dl - 1, &ti));
		assert_true(vms_sched_wake(&s, now, &ti));
		frames++;
		missed_total += ti.missed;
		assert_int_equal(ti.missed, stall);
		/* the deadline served is on the grid, exactly */
		assert_true(ti.deadline_ns == start + ti.idx * period);
		assert_true(ti.late_ns < period);
		assert_true(ti.late_ns == now - ti.deadline_ns);
		/* no burst: the next deadline is in the future */
		assert_true(vms_sched_next(&s) > now);
	}
	assert_true(missed_total == injected);
	/* every deadline is either served or counted missed */
	assert_true(frames + missed_total == s.next_idx);
	/* no drift: after 100k ticks the grid is exactly where it should be */
	assert_true(vms_sched_next(&s) == start + s.next_idx * period);
}

static void test_no_drift_10ms(void **state)
{
	(void)state;
	run_drift(10 * 1000 * 1000, 123456789);
}

static void test_no_drift_odd_period(void **state)
{
	(void)state;
	/* a period that is not a whole number of microseconds (1/3 s) */
	run_drift(333333333, 1);
}

static void test_long_stall(void **state)
{
	(void)state;
	struct vms_sched s;
	struct vms_tickinfo ti;
	vms_sched_init(&s, 1000, 100);
	assert_true(vms_sched_wake(&s, 1000, &ti));
	assert_int_equal(ti.idx, 0);
	assert_int_equal(ti.missed, 0);
	/* asleep for 10 seconds worth of 100 ns periods */
	assert_true(vms_sched_wake(&s, 1000 + 100 * 100000 + 50, &ti));
	assert_int_equal(ti.idx, 100000);
	assert_int_equal(ti.missed, 99999);
	assert_int_equal(ti.late_ns, 50);
	assert_int_equal(vms_sched_next(&s), 1000 + 100 * 100001);
}

static void test_first_aligned(void **state)
{
	(void)state;
	/* wall clock at 12:00:07.25; align to 10 s -> first tick 2.75 s later */
	int64_t real = 1795330807250000000LL;
	assert_int_equal(vms_sched_first(5000, real, 10 * 1000000000ULL), 5000 + 2750000000ULL);
	assert_int_equal(vms_sched_first(5000, real, 0), 5000);
	/* already on a multiple: now */
	assert_int_equal(vms_sched_first(5000, 1795330800000000000LL, 10 * 1000000000ULL), 5000);
}

static void test_durations(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		uint64_t ns;
	} ok[] = {
		{"10ms", 10000000ULL},     {"250ms", 250000000ULL}, {"1s", 1000000000ULL},
		{"1.5s", 1500000000ULL},   {"5m", 300000000000ULL}, {"2h", 7200000000000ULL},
		{"100us", 100000ULL},      {"7", 7000000000ULL},    {"0.01", 10000000ULL},
		{"1min", 60000000000ULL},  {"3ns", 3ULL},          {"0.333333333s", 333333333ULL},
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		uint64_t v = 0;
		assert_int_equal(vms_parse_duration(ok[i].s, &v), 0);
		assert_true(v == ok[i].ns);
	}
	const char *bad[] = {"", "ms", "1x", "-1s", "1.2.3s", "s1", "1 s", "99999999999999999999h"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t v = 0;
		assert_true(vms_parse_duration(bad[i], &v) < 0);
	}
}

VMS_TEST_MAIN(NULL, NULL,
	test_no_drift_10ms, test_no_drift_odd_period, test_long_stall, test_first_aligned,
	test_durations)

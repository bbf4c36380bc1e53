/* SPDX-License-Identifier: MIT */
/* The real loop (vms_loop_run) under a fake clock: deadlines on the grid,
 * missed ticks counted, no catch-up burst; and the steady-state tick
 * (sources + commit + CSV sink write/flush) performs zero heap
 * allocations and logs nothing. */
#include "testutil.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "loop.h"

/* ---- counting allocator (interposes malloc & co. for the whole process) --
 * Under ASan the sanitizer owns malloc; the allocation test is skipped there
 * (the plain build in CI runs it). */
#if defined(__SANITIZE_ADDRESS__)
#define HAVE_COUNTING_MALLOC 0
#else
#define HAVE_COUNTING_MALLOC 1
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
static volatile int armed;
static volatile unsigned long allocs;
void *malloc(size_t n);
void *calloc(size_t a, size_t b);
void *realloc(void *p, size_t n);
void free(void *p);
void *malloc(size_t n)
{
	if (armed)
		allocs++;
	return __libc_malloc(n);
}
void *calloc(size_t a, size_t b)
{
	if (armed)
		allocs++;
	return __libc_calloc(a, b);
}
void *realloc(void *p, size_t n)
{
	if (armed)
		allocs++;
	return __libc_realloc(p, n);
}
void free(void *p)
{
	__libc_free(p);
}
#endif

/* ---- fake clock ---------------------------------------------------------- */
struct fake {
	uint64_t now, period, seed, cpu;
	uint64_t waits, stalls, stall_periods;
};

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static uint64_t f_mono(void *c) { return ((struct fake *)c)->now; }
static int64_t f_real(void *c) { return (int64_t)((struct fake *)c)->now + 1795330800000000000LL; }
static uint64_t f_cpu(void *c) { return ((struct fake *)c)->cpu += 1000; }
static int f_wait(void *c, uint64_t deadline, struct pollfd *fds, unsigned n)
{
	struct fake *f = c;
	for (unsigned i = 0; i < n; i++)
		fds[i].revents = 0;
	if (f->now < deadline)
		f->now = deadline;
	f->now += rnd(&f->seed) % (f->period / 4);
	if (++f->waits % 101 == 50) {
		uint64_t k = 1 + rnd(&f->seed) % 4;
		f->now += k * f->period;
		f->stalls++;
		f->stall_periods += k;
	}
	return 1;
}
static const struct vms_clock_ops fake_ops = {f_mono, f_real, f_cpu, f_wait};

static char *make_root(void)
{
	char *d = tmpdir_make();
	char p[512];
	snprintf(p, sizeof(p), "%s/loadavg", d);
	const char *la = "0.21 0.37 0.39 1/719 19737\n"; /* node_exporter's fixture line */
	write_file(p, la, strlen(la));
	return d;
}

static void conf_for(struct vms_config *c, const char *root, const char *out, uint64_t count)
{
	vms_config_defaults(c);
	free(c->proc_root);
	c->proc_root = strdup(root);
	free(c->output);
	c->output = strdup(out);
	c->interval_ns = 10 * VMS_NSEC_PER_MSEC;
	c->count = count;
	c->libvirt.src.enabled = false; /* the loop's test: no per-VM agent */
}

static void test_fake_clock_loop(void **state)
{
	(void)state;
	char *root = make_root(), out[512];
	snprintf(out, sizeof(out), "%s/out.csv", root);
	struct fake fk = {.now = 5 * VMS_NSEC_PER_SEC, .period = 10 * VMS_NSEC_PER_MSEC, .seed = 88172645463325252ULL};
	struct vms_clock clk = {&fake_ops, &fk};
	struct vms_config conf;
	struct vms_loop l;
	const uint64_t N = 3000;

	conf_for(&conf, root, out, N);
	assert_int_equal(vms_loop_init(&l, &conf, &clk), 0);
	assert_int_equal(vms_loop_run(&l), 0);
	assert_int_equal(vms_loop_fini(&l), 0);

	FILE *f = fopen(out, "r");
	assert_non_null(f);
	char line[4096];
	assert_non_null(fgets(line, sizeof(line), f)); /* header */
	uint64_t rows = 0, missed_sum = 0, start = 0, prev_idx = 0;
	const uint64_t P = fk.period;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long seq, mono, gen, flags, missed, lost, late, cpu;
		char tbuf[64];
		assert_int_equal(sscanf(line, "%llu,%63[^,],%llu,%llu,%llu,%llu,%llu,%llu,%llu", &seq, tbuf,
					&mono, &gen, &flags, &missed, &lost, &late, &cpu),
				 9);
		rows++;
		assert_int_equal(seq, rows);
		assert_true(late < P);
		uint64_t deadline = mono - late;
		if (rows == 1)
			start = deadline;
		/* on the grid, and exactly (1 + missed) periods after the last */
		assert_int_equal((deadline - start) % P, 0);
		uint64_t idx = (deadline - start) / P;
		if (rows > 1)
			assert_int_equal(idx, prev_idx + 1 + missed);
		prev_idx = idx;
		missed_sum += missed;
		assert_int_equal(lost, 0);
		assert_int_equal(cpu, 1000); /* the fake CPU clock advances 1000 per read */
	}
	fclose(f);
	assert_int_equal(rows, N);
	/* every stall of k periods shows up as exactly k missed ticks */
	assert_int_equal(missed_sum, fk.stall_periods);
	assert_true(fk.stalls > 10);
	rm_rf(root);
	free(root);
	vms_config_free(&conf);
}

static void test_steady_state_no_alloc_no_log(void **state)
{
	(void)state;
#if !HAVE_COUNTING_MALLOC
	skip();
#else
	char *root = make_root(), out[512];
	snprintf(out, sizeof(out), "%s/out.csv", root);
	struct fake fk = {.now = VMS_NSEC_PER_SEC, .period = 10 * VMS_NSEC_PER_MSEC, .seed = 7};
	struct vms_clock clk = {&fake_ops, &fk};
	struct vms_config conf;
	struct vms_loop l;

	conf_for(&conf, root, out, 0);
	assert_int_equal(vms_loop_init(&l, &conf, &clk), 0);
	struct vms_sched s;
	vms_sched_init(&s, fk.now, fk.period);
	struct vms_tickinfo ti;
	/* warm-up: first frame (header, schema), buffers sized */
	for (int i = 0; i < 20; i++) {
		fk.now = vms_sched_next(&s) + 1000;
		assert_true(vms_sched_wake(&s, fk.now, &ti));
		vms_loop_tick(&l, &ti);
		vms_loop_drain(&l);
	}
	unsigned long logs = vms_log_count;
	allocs = 0;
	armed = 1;
	for (int i = 0; i < 5000; i++) {
		fk.now = vms_sched_next(&s) + 1000 + (uint64_t)(i % 7) * 100000;
		vms_sched_wake(&s, fk.now, &ti);
		vms_loop_tick(&l, &ti);
		vms_loop_drain(&l);
	}
	armed = 0;
	assert_int_equal(allocs, 0);
	assert_int_equal(vms_log_count, logs);
	assert_int_equal(l.frames, 5020);
	/* the counter is not dead: allocations outside the tick are seen */
	armed = 1;
	void *p = malloc(16);
	armed = 0;
	free(p);
	assert_int_equal(allocs, 1);
	assert_int_equal(vms_loop_fini(&l), 0);
	rm_rf(root);
	free(root);
	vms_config_free(&conf);
#endif
}

int main(void)
{
	setenv("TZ", "UTC", 1);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fake_clock_loop),
		cmocka_unit_test(test_steady_state_no_alloc_no_log),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

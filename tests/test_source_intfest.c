/* SPDX-License-Identifier: MIT */
/* test_source_intfest.c - the interference estimate without BPF (source
 * "intfest", doc/interference.md) on this host, without guests: three
 * busy processes pinned to one CPU, V the vCPU of VM v, A the vCPU of
 * VM a and H a host process.  V never sleeps, so it waits exactly while
 * another task runs on the CPU; the estimate splits V's run delay in
 * proportion to the run time of each thing on that CPU, so (everything
 * pinned) behind a is A's run time and the host part at least H's.  The
 * references are the kernel's: V's run delay (field 2 of
 * /proc/V/task/V/schedstat), A's and H's run time (field 1), read with A
 * and H stopped at both ends of the interval (V then runs alone, its
 * delay still).  The rest of this shared machine that runs on that CPU
 * lands in host (and irq). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

#include "allocwrap.h"
#include "srcdrv.h"
#include "vmtab.h"

extern const struct vms_source_ops vms_source_intfest;

static int teardown(void **state)
{
	(void)state;
	test_spin_kill_all();
	return 0;
}


struct kside {
	uint64_t delay_v, run_a, run_h;
};

/* A and H stopped; 50 ms for V's last wait behind them to end */
static void stop_and_read(pid_t v, pid_t a, pid_t h, struct kside *k)
{
	kill(a, SIGSTOP);
	kill(h, SIGSTOP);
	usleep(50 * 1000);
	k->delay_v = test_thread_schedstat(v, 2);
	k->run_a = test_thread_schedstat(a, 1);
	k->run_h = test_thread_schedstat(h, 1);
}

static void cont(pid_t a, pid_t h)
{
	kill(a, SIGCONT);
	kill(h, SIGCONT);
}

static const char *const parts[] = {"vms", "own", "host", "irq", "unknown"};

static uint64_t sum_parts(const struct drv *d, const char *vm)
{
	char n[64];
	uint64_t s = 0;
	for (unsigned i = 0; i < 5; i++) {
		snprintf(n, sizeof(n), "vm.%s.intfest.%s", vm, parts[i]);
		s += val(d, n);
	}
	return s;
}

static void test_pinned(void **state)
{
	(void)state;
	int cpu = test_last_cpu();
	pid_t v = test_spin_kept(cpu), a = test_spin_kept(cpu), h = test_spin_kept(cpu);
	usleep(100 * 1000);
	pid_t tv[1] = {v}, ta[1] = {a};
	struct vms_vm vm[3] = {
		{.uuid = "00000000-0000-0000-0000-0000000000aa", .name = "v", .state = 1, .pid = v,
		 .nvcpu = 1, .vcpu_tid = tv},
		{.uuid = "00000000-0000-0000-0000-0000000000bb", .name = "a", .state = 1, .pid = a,
		 .nvcpu = 1, .vcpu_tid = ta},
		/* a VM that is not a local process: its columns are missing */
		{.uuid = "00000000-0000-0000-0000-0000000000cc", .name = "r", .state = 1, .pid = 0},
	};
	struct vms_vmtab tab = {.vm = vm, .n = 3, .gen = 1};
	struct drv *d = drv_new("/proc", &vms_source_intfest);
	d->vms = &tab;
	assert_int_equal(drv_declare(d), 0);
	assert_int_equal(d->schema->ncols, 18);
	assert_string_equal(d->schema->cols[0].name, "vm.v.intfest.wait");
	assert_int_equal(d->schema->cols[0].group, VMS_G_VMINTFEST);
	assert_int_equal(d->schema->cols[0].unit, VMS_UNIT_NS);
	assert_string_equal(d->schema->cols[4].name, "vm.v.intfest.irq");
	drv_sample_settled(d);
	assert_int_equal(val(d, "vm.r.intfest.wait"), VMS_NONE);
	usleep(300 * 1000);
	/* V waited behind A: a new pair, a new schema */
	drv_sample_settled(d);
	int c = col(d, "vm.v.intfest.by.a");
	assert_true(c >= 0);
	assert_int_equal(d->schema->cols[c].group, VMS_G_VMINTFESTBY);
	assert_true(col(d, "vm.a.intfest.by.v") >= 0);
	assert_int_equal(col(d, "vm.v.intfest.by.r"), -ENOENT);

	struct kside k0, k1;
	stop_and_read(v, a, h, &k0);
	drv_sample_settled(d);
	uint64_t w0 = val(d, "vm.v.intfest.wait"), by0 = val(d, "vm.v.intfest.by.a");
	uint64_t host0 = val(d, "vm.v.intfest.host");
	cont(a, h);
	sleep(2);
	stop_and_read(v, a, h, &k1);
	drv_sample_settled(d);
	uint64_t w1 = val(d, "vm.v.intfest.wait"), by1 = val(d, "vm.v.intfest.by.a");
	uint64_t host1 = val(d, "vm.v.intfest.host");
	double wait = (double)(w1 - w0), by = (double)(by1 - by0), host = (double)(host1 - host0);
	double delay = (double)(k1.delay_v - k0.delay_v), run_a = (double)(k1.run_a - k0.run_a);
	double run_h = (double)(k1.run_h - k0.run_h);
	fprintf(stderr, "V's run delay %.1f ms, estimated wait %.1f; A ran %.1f ms, behind a %.1f; H ran %.1f ms, "
			"host %.1f; irq %.1f, unknown %.1f, own %.1f (all since the start)\n",
		delay / 1e6, wait / 1e6, run_a / 1e6, by / 1e6, run_h / 1e6, host / 1e6,
		(double)val(d, "vm.v.intfest.irq") / 1e6, (double)val(d, "vm.v.intfest.unknown") / 1e6,
		(double)val(d, "vm.v.intfest.own") / 1e6);
	/* the parts add up to wait, exactly; vms is the one pair */
	assert_int_equal(sum_parts(d, "v"), val(d, "vm.v.intfest.wait"));
	assert_int_equal(val(d, "vm.v.intfest.vms"), val(d, "vm.v.intfest.by.a"));
	/* wait is the kernel's run delay (the same schedstat, read ms apart) */
	assert_true(run_a > 5e7 && run_h > 5e7); /* they ran (a loaded machine: little) */
	if (wait < delay * 0.98 - 1e7 || wait > delay * 1.02 + 1e7)
		fail_msg("wait %.1f ms, run delay %.1f ms", wait / 1e6, delay / 1e6);
	/* pinned: behind a is A's run time; /proc/stat's busy time is in
	 * USER_HZ ticks (10 ms, each end of the tick) and the other tasks of
	 * this machine run on that CPU too: 5 % + 20 ms */
	if (by < run_a * 0.95 - 2e7 || by > run_a * 1.05 + 2e7)
		fail_msg("behind a %.1f ms, A ran %.1f ms", by / 1e6, run_a / 1e6);
	if (host < run_h * 0.95 - 2e7)
		fail_msg("host %.1f ms, H ran %.1f ms", host / 1e6, run_h / 1e6);

	/* the tick allocates nothing */
	cont(a, h);
	uint32_t errs;
	assert_int_equal(drv_sample_allocs(d, 50, true, &errs), 0);
	assert_int_equal(errs, 0);
	drv_close(d);
	pid_t all[3] = {v, a, h};
	for (int i = 0; i < 3; i++) {
		kill(all[i], SIGKILL);
		waitpid(all[i], NULL, 0);
	}
}

VMS_TEST_MAIN(NULL, teardown, test_pinned)

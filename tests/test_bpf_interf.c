/* SPDX-License-Identifier: MIT */
/* test_bpf_interf.c - the interference program (interf.bpf.c) on this
 * host, without guests: two busy processes pinned to one CPU, V watched
 * as a victim (a "vCPU" of VM v) and A the aggressor, as another VM, as a
 * thread of V's own VM, and as a host process.  The references are the
 * kernel's own: V's run delay (field 2 of /proc/V/task/V/schedstat) and
 * A's run time (field 1 of A's).  V never sleeps, so V waits exactly while
 * something else runs on the CPU: behind(V, A) is A's run time over the
 * same interval, and the parts of V's account add up to V's run delay
 * (the sum rule of doc/interference.md).  Whatever else this shared
 * machine runs on that CPU lands in the other parts (host, kernel), which
 * the sum rule covers.  As A, unregistered, is a host process: put in a
 * cgroup of its own (the machine's other processes share the test's), its
 * part is keyed by that cgroup's v2 id, the inode of its directory
 * (kernfs).  Needs root (loading a BPF program); the kernel's
 * BTF; classic tracepoints. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

#include "bpf_interf.h"
#include "cgroup.h"

/* where cgroup2 is mounted (/sys/fs/cgroup, or .../unified on a hybrid
 * host), from our mountinfo */
static char cg2[512];

static int last_cpu(void)
{
	unsigned long mask[16] = {0};
	long r = syscall(SYS_sched_getaffinity, 0, sizeof(mask), mask);
	assert_true(r > 0);
	int cpu = -1;
	for (int c = 0; c < (int)(8 * (size_t)r); c++)
		if (mask[c / (8 * (int)sizeof(long))] >> (c % (8 * (int)sizeof(long))) & 1)
			cpu = c;
	return cpu;
}

static pid_t spin_on(int cpu)
{
	pid_t p = fork();
	assert_true(p >= 0);
	if (p == 0) {
		unsigned long one[16] = {0};
		one[cpu / (8 * (int)sizeof(long))] = 1ul << (cpu % (8 * (int)sizeof(long)));
		if (syscall(SYS_sched_setaffinity, 0, sizeof(one), one) != 0)
			_exit(1);
		for (;;)
			;
	}
	return p;
}

/* schedstat field f (1: run ns, 2: delay ns) of the thread */
static uint64_t schedstat(pid_t pid, int f)
{
	char p[64];
	unsigned long long v[3];
	snprintf(p, sizeof(p), "/proc/%d/task/%d/schedstat", (int)pid, (int)pid);
	FILE *fp = fopen(p, "r");
	assert_non_null(fp);
	assert_int_equal(fscanf(fp, "%llu %llu %llu", &v[0], &v[1], &v[2]), 3);
	fclose(fp);
	return v[f - 1];
}

/* The inode of the process's cgroup v2 directory: its cgroup id. */
static uint64_t cgroup_ino(pid_t pid)
{
	char p[64], line[512], dir[1024];
	snprintf(p, sizeof(p), "/proc/%d/cgroup", (int)pid);
	FILE *fp = fopen(p, "r");
	assert_non_null(fp);
	uint64_t ino = 0;
	while (fgets(line, sizeof(line), fp)) {
		if (strncmp(line, "0::", 3) != 0)
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(dir, sizeof(dir), "%s%s", cg2, line + 3);
		struct stat st;
		if (stat(dir, &st) == 0)
			ino = st.st_ino;
	}
	fclose(fp);
	return ino;
}

static struct vms_interf *X;

static int setup(void **state)
{
	(void)state;
	char err[256];
	struct vms_cgmounts m;
	int dirfd = open("/proc", O_RDONLY | O_DIRECTORY);
	if (dirfd >= 0 && vms_cgmounts_load(&m, dirfd, NULL) == 0) {
		if (m.v2.point)
			snprintf(cg2, sizeof(cg2), "%s", m.v2.point);
		vms_cgmounts_free(&m);
	}
	if (dirfd >= 0)
		close(dirfd);
	if (geteuid() != 0)
		return 0;
	int r = vms_interf_open(&X, err, sizeof(err));
	if (r < 0)
		fprintf(stderr, "interference program: %s\n", err);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	vms_interf_close(X);
	return 0;
}

enum mode { OTHER_VM, OWN, HOST };

/* The account of victim VM vvm so far: its sum, and its part behind A
 * (as mode registered it; host: A's cgroup, host_id) */
struct acc {
	uint64_t sum, behind;
};
static uint64_t host_id;

static void account(uint32_t vvm, enum mode mode, uint32_t avm, struct acc *out)
{
	static struct vms_interf_ent e[4096];
	unsigned n;
	assert_int_equal(vms_interf_read(X, e, 4096, &n), 0);
	*out = (struct acc){0, 0};
	for (unsigned i = 0; i < n; i++) {
		if (e[i].victim != vvm)
			continue;
		out->sum += e[i].ns;
		if ((mode == OTHER_VM && e[i].kind == INTERF_VM && e[i].id == avm) ||
		    (mode == OWN && e[i].kind == INTERF_OWN) ||
		    (mode == HOST && e[i].kind == INTERF_HOST && e[i].id == host_id))
			out->behind += e[i].ns;
	}
}

static void run(enum mode mode)
{
	if (geteuid() != 0)
		vms_skip("VMS_REQUIRE_ROOT", "loading a BPF program needs root");
	if (!X)
		vms_skip("VMS_REQUIRE_BPF", "the interference program did not load here");
	int cpu = last_cpu();
	uint32_t vvm = 10 * (uint32_t)mode + 10, avm = vvm + 1;
	pid_t v = spin_on(cpu), a = spin_on(cpu);
	usleep(100 * 1000); /* both pinned and running */
	assert_int_equal(vms_interf_thread(X, (uint32_t)v, vvm, true), 0);
	if (mode == OTHER_VM)
		assert_int_equal(vms_interf_vm(X, (uint32_t)a, avm), 0);
	else if (mode == OWN)
		assert_int_equal(vms_interf_thread(X, (uint32_t)a, vvm, false), 0);
	char cg[600] = "";
	if (mode == HOST) {
		snprintf(cg, sizeof(cg), "%s/vms-test-interf-%d", cg2, (int)getpid());
		char procs[640], pid[32];
		snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
		int n = snprintf(pid, sizeof(pid), "%d\n", (int)a);
		int fd = *cg2 && mkdir(cg, 0755) == 0 ? open(procs, O_WRONLY) : -1;
		if (fd < 0 || write(fd, pid, (size_t)n) != n) {
			if (fd >= 0)
				close(fd);
			kill(v, SIGKILL);
			kill(a, SIGKILL);
			waitpid(v, NULL, 0);
			waitpid(a, NULL, 0);
			rmdir(cg);
			vms_skip(NULL, "no cgroup2 group of its own for the host process");
		}
		close(fd);
	}
	host_id = cgroup_ino(a);
	/* the interval: A stopped at both ends, so that no wait of V behind A
	 * is in progress when it is read (V's last wait behind A ends within
	 * the 50 ms after A stops) */
	kill(a, SIGSTOP);
	usleep(50 * 1000);
	struct acc s0, s1;
	uint64_t w0, w1;
	account(vvm, mode, avm, &s0);
	assert_int_equal(vms_interf_waited(X, (uint32_t)v, &w0), 0);
	uint64_t d0 = schedstat(v, 2), r0 = schedstat(a, 1);
	kill(a, SIGCONT);
	sleep(2);
	kill(a, SIGSTOP);
	usleep(50 * 1000);
	uint64_t d1 = schedstat(v, 2), r1 = schedstat(a, 1);
	assert_int_equal(vms_interf_waited(X, (uint32_t)v, &w1), 0);
	account(vvm, mode, avm, &s1);
	kill(v, SIGKILL);
	kill(a, SIGKILL);
	waitpid(v, NULL, 0);
	waitpid(a, NULL, 0);
	if (*cg)
		assert_int_equal(rmdir(cg), 0);

	uint64_t sum = s1.sum - s0.sum, behind_a = s1.behind - s0.behind;
	double delay = (double)(d1 - d0), run_a = (double)(r1 - r0), waited = (double)(w1 - w0);
	fprintf(stderr, "mode %d: V's run delay %.1f ms, waited (BPF) %.1f ms, account %.1f ms; "
			"A ran %.1f ms, behind A %.1f ms (%.1f %% of the account)\n",
		(int)mode, delay / 1e6, waited / 1e6, (double)sum / 1e6, run_a / 1e6, (double)behind_a / 1e6,
		100.0 * (double)behind_a / (double)sum);
	/* the account is the waits it measured, every part placed (a wait
	 * that ends between the two reads: 1 %) */
	if ((double)sum < waited * 0.99 - 5e6 || (double)sum > waited * 1.01 + 5e6)
		fail_msg("account %.1f ms, waited %.1f ms", (double)sum / 1e6, waited / 1e6);
	/* the sum rule: the kernel's run delay, within 2 % (its waits and ours
	 * end at the same switches; the reads are microseconds apart) */
	assert_true(run_a > 2e8); /* A ran: about 1 s of 2 on an idle CPU */
	if (waited < delay * 0.98 - 1e7 || waited > delay * 1.02 + 1e7)
		fail_msg("waited %.1f ms, run delay %.1f ms", waited / 1e6, delay / 1e6);
	/* what ran while V waited: A, for all of its run time (A's run time
	 * is the kernel's clock_task, without the interrupts and the steal
	 * time inside its segments, which the program counts as A's: +2 %
	 * here, doc/interference.md) */
	uint64_t lost, over;
	assert_int_equal(vms_interf_stats(X, &lost, &over), 0);
	assert_int_equal(lost, 0);
	if ((double)behind_a < run_a * 0.97 - 5e6 || (double)behind_a > run_a * 1.03 + 5e6)
		fail_msg("behind A %.1f ms, A ran %.1f ms (waits past the ring so far: %llu)",
			 (double)behind_a / 1e6, run_a / 1e6, (unsigned long long)over);
	vms_interf_forget_thread(X, (uint32_t)v);
	vms_interf_forget_thread(X, (uint32_t)a);
	vms_interf_forget_vm(X, (uint32_t)a);
}

static void test_behind_other_vm(void **state)
{
	(void)state;
	run(OTHER_VM);
}

static void test_behind_own_thread(void **state)
{
	(void)state;
	run(OWN);
}

static void test_behind_host_cgroup(void **state)
{
	(void)state;
	run(HOST);
}

VMS_TEST_MAIN(setup, teardown, test_behind_other_vm, test_behind_own_thread, test_behind_host_cgroup)

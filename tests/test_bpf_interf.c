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
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "testutil.h"

#include "allocwrap.h"
#include "bpf_interf.h"
#include "cgroup.h"
#include "srcdrv.h"
#include "vmtab.h"

extern const struct vms_source_ops vms_source_interference;

/* where cgroup2 is mounted (/sys/fs/cgroup, or .../unified on a hybrid
 * host), from our mountinfo */
static char cg2[512];


/* The steal time of CPU cpu so far (ns; /proc/stat's cpuN steal field,
 * in USER_HZ ticks): time this (virtual) machine's CPU did not run. */
static uint64_t steal_ns(int cpu)
{
	char want[16], line[512];
	unsigned long long f[8];
	snprintf(want, sizeof(want), "cpu%d ", cpu);
	FILE *fp = fopen("/proc/stat", "r");
	assert_non_null(fp);
	uint64_t v = 0;
	while (fgets(line, sizeof(line), fp))
		if (strncmp(line, want, strlen(want)) == 0 &&
		    sscanf(line + strlen(want), "%llu %llu %llu %llu %llu %llu %llu %llu", &f[0], &f[1], &f[2], &f[3],
			   &f[4], &f[5], &f[6], &f[7]) == 8)
			v = f[7] * (1000000000ull / (uint64_t)sysconf(_SC_CLK_TCK));
	fclose(fp);
	return v;
}

/* behind A against A's run time: A's run time is the kernel's clock_task,
 * which leaves out the steal time of a virtualised host (and, with
 * CONFIG_IRQ_TIME_ACCOUNTING, interrupts) inside A's segments; the
 * program's segments are wall time.  So behind A is A's run time plus at
 * most the CPU's steal over the interval (one tick of granularity at each
 * end), and at least A's run time less what the program could not place
 * (unknown: waits longer than its ring of segments, on a CPU switching
 * very often), each side within 2 % + 5 ms. */
static void check_behind(double behind, double run, double steal, double unknown, uint64_t over)
{
	if (behind < run * 0.98 - 5e6 - unknown || behind > run * 1.02 + 5e6 + steal + 2e7)
		fail_msg("behind A %.1f ms, A ran %.1f ms, the CPU's steal %.1f ms, unknown %.1f ms (waits past "
			 "the ring: %llu)", behind / 1e6, run / 1e6, steal / 1e6, unknown / 1e6, (unsigned long long)over);
}

/* The irq + softirq time of CPU cpu so far (ns; /proc/stat, USER_HZ),
 * and its busy time (user + nice + system + irq + softirq) */
static uint64_t irq_ns(int cpu, uint64_t *busy)
{
	char want[16], line[512];
	unsigned long long f[7];
	uint64_t b = 0;
	snprintf(want, sizeof(want), "cpu%d ", cpu);
	FILE *fp = fopen("/proc/stat", "r");
	assert_non_null(fp);
	uint64_t v = 0;
	while (fgets(line, sizeof(line), fp))
		if (strncmp(line, want, strlen(want)) == 0 &&
		    sscanf(line + strlen(want), "%llu %llu %llu %llu %llu %llu %llu", &f[0], &f[1], &f[2], &f[3], &f[4],
			   &f[5], &f[6]) == 7)
		{
			v = (f[5] + f[6]) * (1000000000ull / (uint64_t)sysconf(_SC_CLK_TCK));
			b = (f[0] + f[1] + f[2] + f[5] + f[6]) * (1000000000ull / (uint64_t)sysconf(_SC_CLK_TCK));
		}
	fclose(fp);
	if (busy)
		*busy = b;
	return v;
}

/* The kernel's side of a window: V's run delay, A's run time, the CPU's
 * steal, read with A stopped (its last run ended 50 ms before, and so did
 * V's last wait behind it). */
struct kside {
	uint64_t delay, run_a, steal, irq;
};

/* The state letter of /proc/PID/stat ('R', 'T' ...). */
static char proc_state(pid_t pid)
{
	char p[64], buf[512];
	snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
	FILE *fp = fopen(p, "r");
	assert_non_null(fp);
	size_t n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	const char *e = strrchr(buf, ')');
	return e && e[1] == ' ' ? e[2] : '?';
}

/* A stopped for good: SIGSTOP is acted on when A next runs, which on a
 * loaded machine can be long after kill(): its state is waited for, not
 * a fixed time. */
static void stop_proc(pid_t a)
{
	kill(a, SIGSTOP);
	for (int i = 0; i < 1000 && proc_state(a) != 'T'; i++)
		usleep(10 * 1000);
	assert_int_equal(proc_state(a), 'T');
}

/* then 50 ms for V's last wait behind A to end */
static void stop_and_read(pid_t v, pid_t a, int cpu, struct kside *k)
{
	stop_proc(a);
	usleep(50 * 1000);
	k->delay = test_thread_schedstat(v, 2);
	k->run_a = test_thread_schedstat(a, 1);
	k->steal = steal_ns(cpu);
	k->irq = irq_ns(cpu, NULL);
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


enum { RQ_SPIN = 3, RQ_MAXCPU = 1024 };

/* The highest cpuN line of /proc/stat + 1: the CPUs the source has
 * rq.N.delay columns for */
static unsigned stat_ncpu(void)
{
	char line[512];
	unsigned n = 0, c;
	FILE *fp = fopen("/proc/stat", "r");
	assert_non_null(fp);
	while (fgets(line, sizeof(line), fp))
		if (line[3] >= '0' && line[3] <= '9' && sscanf(line, "cpu%u ", &c) == 1 && c + 1 > n)
			n = c + 1;
	fclose(fp);
	return n;
}

static struct vms_interf *X;
static char cgleft[700]; /* the cgroup the running test made */

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
	/* with the run time kept: every test below runs the program whole */
	int r = vms_interf_open_flags(&X, VMS_INTERF_RUN_TIME, err, sizeof(err));
	if (r < 0)
		fprintf(stderr, "interference program: %s\n", err);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	test_spin_kill_all();
	if (*cgleft)
		rmdir(cgleft); /* a test that failed with its process in it */
	vms_interf_close(X);
	return 0;
}

/* Process pid moved into a new cgroup2 group rel (under cg2), its path
 * into cg; a real SKIP where that cannot be done (not root, no cgroup2:
 * the teardown kills the loops) */
static void own_cgroup(const char *rel, pid_t pid, char *cg, size_t cap)
{
	char procs[800], line[32];
	snprintf(cg, cap, "%s/%s", cg2, rel);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
	int n = snprintf(line, sizeof(line), "%d\n", (int)pid);
	snprintf(cgleft, sizeof(cgleft), "%s", cg);
	int fd = *cg2 && mkdir(cg, 0755) == 0 ? open(procs, O_WRONLY) : -1;
	if (fd < 0 || write(fd, line, (size_t)n) != n) {
		if (fd >= 0)
			close(fd);
		test_spin_kill_all();
		rmdir(cg);
		*cgleft = '\0';
		vms_skip(NULL, "no cgroup2 group of its own for the host process");
	}
	close(fd);
}

enum mode { OTHER_VM, OWN, HOST };

/* The account of victim VM vvm so far: its sum, and its part behind A
 * (as mode registered it; host: A's cgroup, host_id) */
struct acc {
	uint64_t sum, behind, unknown;
};
static uint64_t host_id;

static void account(uint32_t vvm, enum mode mode, uint32_t avm, struct acc *out)
{
	static struct vms_interf_ent e[4096];
	unsigned n;
	assert_int_equal(vms_interf_read(X, e, 4096, &n), 0);
	*out = (struct acc){0, 0, 0};
	for (unsigned i = 0; i < n; i++) {
		if (e[i].victim != vvm)
			continue;
		out->sum += e[i].ns;
		if (e[i].kind == INTERF_UNKNOWN)
			out->unknown += e[i].ns;
		if ((mode == OTHER_VM && e[i].kind == INTERF_VM && e[i].id == avm) ||
		    (mode == OWN && e[i].kind == INTERF_OWN) ||
		    (mode == HOST && e[i].kind == INTERF_HOST && e[i].id == host_id))
			out->behind += e[i].ns;
	}
}

/* A real SKIP where the program cannot be loaded here (not root, or it
 * did not load), which VMS_REQUIRE_ROOT / VMS_REQUIRE_BPF make a failure */
static void require_prog(void)
{
	if (geteuid() != 0)
		vms_skip("VMS_REQUIRE_ROOT", "loading a BPF program needs root");
	if (!X)
		vms_skip("VMS_REQUIRE_BPF", "the interference program did not load here");
}

static void run(enum mode mode)
{
	require_prog();
	int cpu = test_last_cpu();
	uint32_t vvm = 10 * (uint32_t)mode + 10, avm = vvm + 1;
	pid_t v = test_spin_kept(cpu), a = test_spin_kept(cpu);
	usleep(100 * 1000); /* both pinned and running */
	assert_int_equal(vms_interf_thread(X, (uint32_t)v, vvm, true), 0);
	if (mode == OTHER_VM)
		assert_int_equal(vms_interf_vm(X, (uint32_t)a, avm), 0);
	else if (mode == OWN)
		assert_int_equal(vms_interf_thread(X, (uint32_t)a, vvm, false), 0);
	char cg[600] = "";
	if (mode == HOST) {
		char rel[64];
		snprintf(rel, sizeof(rel), "vms-test-interf-%d", (int)getpid());
		own_cgroup(rel, a, cg, sizeof(cg));
	}
	host_id = cgroup_ino(a);
	/* the interval: A stopped at both ends, so that no wait of V behind A
	 * is in progress when it is read (V's last wait behind A ends within
	 * the 50 ms after A stops) */
	struct acc s0, s1;
	struct kside k0, k1;
	uint64_t w0, w1;
	stop_and_read(v, a, cpu, &k0);
	account(vvm, mode, avm, &s0);
	assert_int_equal(vms_interf_waited(X, (uint32_t)v, &w0), 0);
	kill(a, SIGCONT);
	sleep(2);
	stop_and_read(v, a, cpu, &k1);
	assert_int_equal(vms_interf_waited(X, (uint32_t)v, &w1), 0);
	account(vvm, mode, avm, &s1);
	kill(v, SIGKILL);
	kill(a, SIGKILL);
	waitpid(v, NULL, 0);
	waitpid(a, NULL, 0);
	if (*cg)
		assert_int_equal(rmdir(cg), 0);

	uint64_t sum = s1.sum - s0.sum, behind_a = s1.behind - s0.behind;
	double delay = (double)(k1.delay - k0.delay), run_a = (double)(k1.run_a - k0.run_a);
	double waited = (double)(w1 - w0), steal = (double)(k1.steal - k0.steal);
	fprintf(stderr, "steal %.1f ms; ", steal / 1e6);
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
	/* A ran: about 1 s of 2 on an idle CPU, 0.2 s at a load of 20, little on a loaded one */
	assert_true(run_a > 5e7);
	if (waited < delay * 0.98 - 1e7 || waited > delay * 1.02 + 1e7)
		fail_msg("waited %.1f ms, run delay %.1f ms", waited / 1e6, delay / 1e6);
	/* what ran while V waited: A, for all of its run time */
	uint64_t lost, over;
	assert_int_equal(vms_interf_stats(X, &lost, &over), 0);
	assert_int_equal(lost, 0);
	check_behind((double)behind_a, run_a, steal, (double)(s1.unknown - s0.unknown), over);
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

/* The program keeps every other user of the same tracepoints counting:
 * a tracepoint program's return value decides whether the kernel passes
 * the event on to perf (0: dropped for every perf event on that
 * tracepoint, host-wide -- the perf source's sched:sched_switch columns,
 * `perf stat`, `perf sched record`).  A perf counter of sched:sched_switch
 * on this thread, opened while the program is attached, counts each of
 * 50 sleeps (the kernel's nvcsw of this thread is the reference). */
static uint64_t tracepoint_id(const char *ev)
{
	char p[256];
	snprintf(p, sizeof(p), "/sys/kernel/tracing/events/%s/id", ev);
	FILE *fp = fopen(p, "r");
	unsigned long long id = 0;
	if (fp) {
		if (fscanf(fp, "%llu", &id) != 1)
			id = 0;
		fclose(fp);
	}
	return id;
}

static uint64_t nvcsw(void)
{
	char line[256];
	unsigned long long n = 0;
	FILE *fp = fopen("/proc/thread-self/status", "r");
	assert_non_null(fp);
	while (fgets(line, sizeof(line), fp))
		if (sscanf(line, "voluntary_ctxt_switches: %llu", &n) == 1)
			break;
	fclose(fp);
	return n;
}

static void test_perf_still_counts(void **state)
{
	(void)state;
	require_prog();
	uint64_t id = tracepoint_id("sched/sched_switch");
	assert_true(id > 0);
	struct perf_event_attr pa = {.type = PERF_TYPE_TRACEPOINT, .size = sizeof(pa), .config = id,
				     .sample_period = 1};
	int fd = (int)syscall(SYS_perf_event_open, &pa, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	assert_true(fd >= 0);
	uint64_t c0, c1, n0 = nvcsw();
	assert_int_equal(read(fd, &c0, sizeof(c0)), (ssize_t)sizeof(c0));
	for (int i = 0; i < 50; i++)
		usleep(200);
	assert_int_equal(read(fd, &c1, sizeof(c1)), (ssize_t)sizeof(c1));
	uint64_t n1 = nvcsw();
	close(fd);
	fprintf(stderr, "sched:sched_switch on this thread: +%llu, voluntary switches +%llu\n",
		(unsigned long long)(c1 - c0), (unsigned long long)(n1 - n0));
	assert_true(n1 - n0 >= 50);
	assert_true(c1 - c0 >= n1 - n0);
}

/* V's counters, each at least before[] (as when before was read) */
enum { IF_NCOLS = 8 };
static const char *if_col_name(unsigned i)
{
	static const char *const n[IF_NCOLS] = {"vm.v.intf.wait", "vm.v.intf.vms", "vm.v.intf.own",
						"vm.v.intf.host", "vm.v.intf.host_other", "vm.v.intf.kernel",
						"vm.v.intf.unknown", "vm.v.intf.irq_est"};
	return n[i];
}

static void check_monotonic(struct drv *d, uint64_t *before)
{
	for (unsigned i = 0; i < IF_NCOLS; i++) {
		uint64_t now = val(d, if_col_name(i));
		if (now < before[i])
			fail_msg("%s went back from %llu to %llu ns", if_col_name(i), (unsigned long long)before[i],
				 (unsigned long long)now);
		before[i] = now;
	}
}

/* The source "interference" through its ops, as the loop drives it, with
 * a VM set of two "VMs", each a busy process (its own vCPU), pinned to
 * one CPU: vm.v.intf.wait is V's run delay and vm.v.intf.by.a A's run
 * time over the same interval (A stopped at its ends, as above), the
 * parts add up to wait, and the pair's column appears with a new schema
 * once V waited behind A (and the hold after the last declaration,
 * VMS_INTERF_DECLARE_NS, is over). */
static void test_source_columns(void **state)
{
	(void)state;
	require_prog();
	int cpu = test_last_cpu();
	pid_t v = test_spin_kept(cpu), a = test_spin_kept(cpu);
	usleep(100 * 1000);
	stop_proc(a);
	pid_t tv[1] = {v}, ta[1] = {a};
	struct vms_vm vm[2] = {
		{.uuid = "00000000-0000-0000-0000-0000000000aa", .name = "v", .state = 1, .pid = v,
		 .nvcpu = 1, .vcpu_tid = tv},
		{.uuid = "00000000-0000-0000-0000-0000000000bb", .name = "a", .state = 1, .pid = a,
		 .nvcpu = 1, .vcpu_tid = ta},
	};
	struct vms_vmtab tab = {.vm = vm, .n = 2, .gen = 1};
	struct drv *d = drv_new("/proc", &vms_source_interference);
	d->vms = &tab;
	assert_int_equal(drv_declare(d), 0);
	unsigned ncpu = stat_ncpu(); /* rq.N.delay */
	assert_int_equal(d->schema->ncols, 16 + ncpu);
	assert_string_equal(d->schema->cols[0].name, "vm.v.intf.wait");
	assert_string_equal(d->schema->cols[8].name, "vm.a.intf.wait");
	assert_string_equal(d->schema->cols[7].name, "vm.v.intf.irq_est");
	/* declared by identity (the catalogue's group and field) */
	assert_int_equal(d->schema->cols[0].group, VMS_G_VMINTF);
	assert_string_equal(d->schema->cols[0].entity, "v");
	assert_string_equal(d->schema->cols[0].field, "wait");
	assert_int_equal(d->schema->cols[0].unit, VMS_UNIT_NS);
	/* each CPU's run queue delay, after the VMs' columns (its values:
	 * below) */
	for (unsigned c = 0; c < ncpu; c++) {
		char rn[32];
		snprintf(rn, sizeof(rn), "rq.%u.delay", c);
		const struct vms_col *rc = &d->schema->cols[16 + c];
		assert_string_equal(rc->name, rn);
		assert_int_equal(rc->group, VMS_G_RQ);
		assert_int_equal(rc->unit, VMS_UNIT_NS);
		assert_int_equal(rc->kind, VMS_KIND_COUNTER);
	}
	assert_int_equal(drv_sample(d), 0);
	kill(a, SIGCONT);
	usleep(300 * 1000);
	/* V waited behind A: a new pair, a new schema once the hold after the
	 * last declaration is over */
	assert_int_equal(drv_sample(d), 0);
	d->mono_ns += VMS_INTERF_DECLARE_NS;
	int r = drv_sample(d);
	assert_int_equal(r, VMS_RESCHEMA);
	assert_int_equal(drv_declare(d), 0);
	assert_true(col(d, "vm.v.intf.by.a") >= 0);
	assert_true(col(d, "vm.a.intf.by.v") >= 0);
	assert_int_equal(d->schema->cols[col(d, "vm.v.intf.by.a")].group, VMS_G_VMINTFBY);
	struct kside k0, k1;
	stop_and_read(v, a, cpu, &k0);
	assert_int_equal(drv_sample(d), 0);
	uint64_t wait0 = val(d, "vm.v.intf.wait"), by0 = val(d, "vm.v.intf.by.a");
	uint64_t unk0 = val(d, "vm.v.intf.unknown"), irq0 = val(d, "vm.v.intf.irq_est");
	kill(a, SIGCONT);
	sleep(2);
	stop_and_read(v, a, cpu, &k1);
	int s = drv_sample(d);
	if (s == VMS_RESCHEMA) { /* A waited behind something new */
		assert_int_equal(drv_declare(d), 0);
		s = drv_sample(d);
	}
	assert_int_equal(s, 0);
	uint64_t parts = 0;
	static const char *const p5[] = {"vms", "own", "host", "kernel", "unknown"};
	char n[64];
	for (unsigned i = 0; i < 5; i++) {
		snprintf(n, sizeof(n), "vm.v.intf.%s", p5[i]);
		parts += val(d, n);
	}
	assert_int_equal(parts, val(d, "vm.v.intf.wait"));
	assert_int_equal(val(d, "vm.v.intf.vms"), val(d, "vm.v.intf.by.a")); /* the only other VM */
	double wait = (double)(val(d, "vm.v.intf.wait") - wait0), by = (double)(val(d, "vm.v.intf.by.a") - by0);
	double delay = (double)(k1.delay - k0.delay), run_a = (double)(k1.run_a - k0.run_a);
	fprintf(stderr, "source: wait %.1f ms (run delay %.1f), behind a %.1f ms (a ran %.1f)\n", wait / 1e6,
		delay / 1e6, by / 1e6, run_a / 1e6);
	if (wait < delay * 0.98 - 1e7 || wait > delay * 1.02 + 1e7)
		fail_msg("wait %.1f ms, run delay %.1f ms", wait / 1e6, delay / 1e6);
	check_behind(by, run_a, (double)(k1.steal - k0.steal), (double)(val(d, "vm.v.intf.unknown") - unk0), 0);
	/* irq_est: V's waits on that CPU times the CPU's interrupt share of
	 * its busy time, tick by tick; V waits only while the CPU is busy, so
	 * it is at most the CPU's interrupt time (/proc/stat), a tick of it
	 * at each end */
	double irq_est = (double)(val(d, "vm.v.intf.irq_est") - irq0), irq_cpu = (double)(k1.irq - k0.irq);
	fprintf(stderr, "irq_est %.1f ms, the CPU's irq + softirq %.1f ms\n", irq_est / 1e6, irq_cpu / 1e6);
	if (irq_est > irq_cpu + 2e7)
		fail_msg("irq_est %.1f ms, the CPU's irq + softirq %.1f ms", irq_est / 1e6, irq_cpu / 1e6);
	/* irq_est tick by tick: V (pinned) waits only on that CPU, so its
	 * estimate is its wait in each tick times the CPU's irq + softirq
	 * share of its busy time in the tick, read by the test from
	 * /proc/stat right after the source did (the counters move at the
	 * scheduler tick, 10 ms, sometimes between the two reads; and the
	 * program's two maps are read microseconds apart): 25 % + 3 ms */
	kill(a, SIGCONT);
	uint64_t busy_p, irq_p = irq_ns(cpu, &busy_p), we_p = val(d, "vm.v.intf.wait"),
			 ie_p = val(d, "vm.v.intf.irq_est");
	/* the run queue delay of V's and A's CPU over these ticks, the
	 * source's program's against the test's (test_rq_delay checks the
	 * program against the kernel): loaded at different times, they
	 * count the same waits once each task has switched out under both
	 * (the source's, 3 s old: a wait it saw begin before its load and
	 * the test's did not, added at a switch-out after: 5 % + 10 ms) */
	static uint64_t rqx0[RQ_MAXCPU], rqx1[RQ_MAXCPU];
	char rqn[32];
	snprintf(rqn, sizeof(rqn), "rq.%d.delay", cpu);
	uint64_t rqs0 = val(d, rqn);
	assert_true(vms_interf_read_rq(X, rqx0, RQ_MAXCPU) > cpu);
	double ref = 0;
	for (int i = 0; i < 20; i++) {
		usleep(100 * 1000);
		int rs = drv_sample(d);
		if (rs == VMS_RESCHEMA) {
			assert_int_equal(drv_declare(d), 0);
			rs = drv_sample(d);
		}
		assert_int_equal(rs, 0);
		uint64_t busy_n, irq_n = irq_ns(cpu, &busy_n), we_n = val(d, "vm.v.intf.wait");
		if (busy_n > busy_p)
			ref += (double)(we_n - we_p) * (double)(irq_n - irq_p) / (double)(busy_n - busy_p);
		busy_p = busy_n;
		irq_p = irq_n;
		we_p = we_n;
	}
	assert_true(vms_interf_read_rq(X, rqx1, RQ_MAXCPU) > cpu);
	double rqs = (double)(val(d, rqn) - rqs0), rqx = (double)(rqx1[cpu] - rqx0[cpu]);
	fprintf(stderr, "%s over 20 ticks %.1f ms, the test's program %.1f ms\n", rqn, rqs / 1e6, rqx / 1e6);
	assert_true(rqx > 5e8); /* V and A take turns: each waits while the other runs */
	if (rqs < rqx * 0.95 - 1e7 || rqs > rqx * 1.05 + 1e7)
		fail_msg("%s grew %.1f ms over 20 ticks, the test's program's %.1f ms", rqn, rqs / 1e6, rqx / 1e6);
	double est = (double)(val(d, "vm.v.intf.irq_est") - ie_p);
	fprintf(stderr, "irq_est over 20 ticks %.2f ms, the reference %.2f ms\n", est / 1e6, ref / 1e6);
	if (est < ref * 0.75 - 3e6 || est > ref * 1.25 + 3e6)
		fail_msg("irq_est %.2f ms, the reference %.2f ms", est / 1e6, ref / 1e6);
	/* the tick allocates nothing (a's waits go on meanwhile) */
	uint32_t errs;
	unsigned long allocs = drv_sample_allocs(d, 100, true, &errs);
	assert_int_equal(allocs, 0);
	assert_int_equal(errs, 0);
	stop_proc(a);
	/* the VM set changes (a leaves): a new schema without a's columns;
	 * V's counters keep what V waited behind a (seconds: the program's
	 * entries for it are dropped, the source carries them), each column
	 * at least what the last sample before had */
	uint64_t before[IF_NCOLS];
	assert_int_equal(drv_sample(d), 0);
	for (unsigned i = 0; i < IF_NCOLS; i++)
		before[i] = val(d, if_col_name(i));
	assert_true(val(d, "vm.v.intf.by.a") > 100000000); /* a ran with v for seconds */
	tab.n = 1;
	tab.gen = 2;
	assert_int_equal(drv_sample(d), VMS_RESCHEMA);
	assert_int_equal(drv_declare(d), 0);
	assert_int_equal(col(d, "vm.a.intf.wait"), -ENOENT);
	assert_int_equal(col(d, "vm.v.intf.by.a"), -ENOENT);
	assert_int_equal(drv_sample(d), 0);
	check_monotonic(d, before);
	/* and comes back (A stopped): its account was dropped when it left,
	 * so it starts from 0, and V's row has no pair with it until V waits
	 * behind it again; V's columns still never went back */
	tab.n = 2;
	tab.gen = 3;
	assert_int_equal(drv_sample(d), VMS_RESCHEMA);
	assert_int_equal(drv_declare(d), 0);
	assert_int_equal(drv_sample(d), 0);
	/* from 0: not its old account (seconds); a stopped task can still be
	 * put on a run queue for an instant (6 ns seen at a load of 20) */
	assert_true(val(d, "vm.a.intf.wait") < 1000000);
	assert_int_equal(col(d, "vm.v.intf.by.a"), -ENOENT);
	check_monotonic(d, before);
	drv_close(d);
	kill(v, SIGKILL);
	kill(a, SIGKILL);
	waitpid(v, NULL, 0);
	waitpid(a, NULL, 0);
}

/* A host process in a cgroup of its own, pinned with V: the source names
 * the cgroup by its path (its directory under the cgroup2 mount, which
 * the test made), and vm.v.intf.host.PATH is the process's run time over
 * an interval (as check_behind), host_other none of it. */
static void test_source_host_cgroup(void **state)
{
	(void)state;
	require_prog();
	int cpu = test_last_cpu();
	pid_t v = test_spin_kept(cpu), h = test_spin_kept(cpu);
	usleep(100 * 1000);
	kill(h, SIGSTOP);
	char rel[64], cg[700];
	snprintf(rel, sizeof(rel), "vms-test-intfhost-%d", (int)getpid());
	own_cgroup(rel, h, cg, sizeof(cg));
	pid_t tv[1] = {v};
	struct vms_vm vm[1] = {
		{.uuid = "00000000-0000-0000-0000-0000000000cc", .name = "v", .state = 1, .pid = v,
		 .nvcpu = 1, .vcpu_tid = tv},
	};
	struct vms_vmtab tab = {.vm = vm, .n = 1, .gen = 1};
	struct vms_source_conf sc = {.host_cgroups = 5};
	struct drv *d = drv_new_conf("/proc", &vms_source_interference, &sc);
	d->vms = &tab;
	assert_int_equal(drv_declare(d), 0);
	assert_int_equal(d->schema->ncols, 8 + stat_ncpu()); /* no cgroup named yet; rq.N.delay */
	assert_int_equal(drv_sample(d), 0);
	kill(h, SIGCONT);
	usleep(300 * 1000);
	/* the tick reads the account; idle ranks the host's cgroups (H's
	 * first: it held V's CPU), names them and asks for a new schema (at
	 * the end of the hold after the last declaration) */
	assert_int_equal(drv_sample(d), 0);
	d->src.ops->idle(&d->src, UINT64_MAX, &d->env);
	assert_int_equal(drv_sample(d), 0);
	d->mono_ns += VMS_INTERF_DECLARE_NS;
	for (int i = 0; i < 4; i++) {
		int r = drv_sample(d);
		if (r == 0)
			break;
		assert_int_equal(r, VMS_RESCHEMA);
		assert_int_equal(drv_declare(d), 0);
	}
	char name[200];
	snprintf(name, sizeof(name), "vm.v.intf.host.%s", rel);
	int c = col(d, name);
	if (c < 0) {
		for (uint32_t i = 0; i < d->schema->ncols; i++)
			fprintf(stderr, "column %s\n", d->schema->cols[i].name);
		fail_msg("no column %s", name);
	}
	assert_int_equal(d->schema->cols[c].group, VMS_G_VMINTFHOST);
	assert_string_equal(d->schema->cols[c].field, rel);
	struct kside k0, k1;
	stop_and_read(v, h, cpu, &k0);
	int s = drv_sample(d);
	if (s == VMS_RESCHEMA) {
		assert_int_equal(drv_declare(d), 0);
		s = drv_sample(d);
	}
	assert_int_equal(s, 0);
	uint64_t by0 = val(d, name), oth0 = val(d, "vm.v.intf.host_other"), host0 = val(d, "vm.v.intf.host");
	uint64_t unk0 = val(d, "vm.v.intf.unknown");
	kill(h, SIGCONT);
	sleep(2);
	stop_and_read(v, h, cpu, &k1);
	s = drv_sample(d);
	if (s == VMS_RESCHEMA) {
		assert_int_equal(drv_declare(d), 0);
		s = drv_sample(d);
	}
	assert_int_equal(s, 0);
	double by = (double)(val(d, name) - by0), run_h = (double)(k1.run_a - k0.run_a);
	double oth = (double)(val(d, "vm.v.intf.host_other") - oth0);
	double host = (double)(val(d, "vm.v.intf.host") - host0);
	fprintf(stderr, "host cgroup %s: behind it %.1f ms (it ran %.1f), host %.1f ms, host_other %.1f ms\n", rel,
		by / 1e6, run_h / 1e6, host / 1e6, oth / 1e6);
	assert_true(run_h > 5e7);
	check_behind(by, run_h, (double)(k1.steal - k0.steal), (double)(val(d, "vm.v.intf.unknown") - unk0), 0);
	/* the named cgroups and host_other add up to host */
	uint64_t named = 0;
	for (uint32_t i = 0; i < d->schema->ncols; i++)
		if (d->schema->cols[i].group == VMS_G_VMINTFHOST)
			named += d->slots[i];
	assert_int_equal(named + val(d, "vm.v.intf.host_other"), val(d, "vm.v.intf.host"));
	/* the tick allocates nothing */
	uint32_t errs;
	assert_int_equal(drv_sample_allocs(d, 50, true, &errs), 0);
	drv_close(d);
	kill(v, SIGKILL);
	kill(h, SIGKILL);
	waitpid(v, NULL, 0);
	waitpid(h, NULL, 0);
	assert_int_equal(rmdir(cg), 0);
}

/* The ids of the maps named "acct" this process holds a descriptor of,
 * and the descriptor of the first one not in skip[nskip] (-1: none). */
static int acct_maps(uint32_t *ids, unsigned cap, unsigned *n, const uint32_t *skip, unsigned nskip)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int found = -1;
	*n = 0;
	assert_non_null(d);
	while ((e = readdir(d))) {
		char path[300], link[64];
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		ssize_t l = readlink(path, link, sizeof(link) - 1);
		if (l <= 0)
			continue;
		link[l] = '\0';
		if (strcmp(link, "anon_inode:bpf-map") != 0)
			continue;
		int fd = atoi(e->d_name);
		struct bpf_map_info info;
		uint32_t len = sizeof(info);
		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0 || strcmp(info.name, "acct") != 0)
			continue;
		bool old = false;
		for (unsigned i = 0; i < nskip; i++)
			old = old || skip[i] == info.id;
		if (!old && found < 0)
			found = fd;
		if (*n < cap)
			ids[(*n)++] = info.id;
	}
	closedir(d);
	return found;
}

/* Victim (the source's index of a VM) behind culprit (kind, id) for ns in
 * total, as the program keeps it */
static void acct_put(int fd, uint32_t victim, uint32_t kind, uint64_t id, uint64_t ns)
{
	struct interf_key k = {.victim = victim, .kind = kind, .id = id};
	assert_int_equal(bpf_map_update_elem(fd, &k, &ns, BPF_ANY), 0);
}

/* Victim 0 behind host cgroup id for ns in total */
static void host_put(int fd, uint64_t id, uint64_t ns)
{
	acct_put(fd, 0, INTERF_HOST, id, ns);
}

/* The source's host columns of VM v checked against what the test put in
 * its account: host is the sum of all, each named cgroup's column (named
 * cgroup-ID: the ids are no directory's) what it grew since it was named
 * (since[]), host_other the rest, so that named columns + host_other =
 * host as long as no cgroup left the named set (left: what the columns of
 * those that left had at the end). */
enum { NCG = 7 };
static const uint64_t cg_base = 0x7e57000000000000ull;
static void check_host(struct drv *d, const uint64_t *tot, const bool *named, const uint64_t *since,
		       uint64_t left)
{
	uint64_t host = 0, cols = 0;
	unsigned ncols = 0;
	for (unsigned i = 0; i < NCG; i++) {
		char n[96];
		host += tot[i];
		snprintf(n, sizeof(n), "vm.v.intf.host.cgroup-%llu", (unsigned long long)(cg_base + i));
		if (!named[i]) {
			assert_int_equal(col(d, n), -ENOENT);
			continue;
		}
		if (col(d, n) < 0)
			fail_msg("no column %s", n);
		assert_int_equal(val(d, n), tot[i] - since[i]);
		cols += val(d, n);
		ncols++;
	}
	for (uint32_t i = 0; i < d->schema->ncols; i++)
		ncols -= d->schema->cols[i].group == VMS_G_VMINTFHOST;
	assert_int_equal(ncols, 0);
	/* (the real program adds nothing for v: its vCPU sleeps) */
	assert_int_equal(val(d, "vm.v.intf.host"), host);
	assert_int_equal(cols + val(d, "vm.v.intf.host_other") + left, host);
}

/* vm.NAME.intf.host_other is a counter: when a cgroup joins the named set
 * (its wait so far leaves host_other for a column of its own) or leaves
 * it (its wait comes back to host_other), it must not go back, or every
 * reader takes it for a reset.  The source's own account map (found among
 * this process's descriptors) is given a victim's waits behind seven
 * cgroup ids by the test, as the program would keep them, and the source
 * names its top five (sources.interference.host_cgroups) through idle():
 * first five of them, then the sixth overtakes the fifth.  After each
 * change every column of V's is at least what it was (check_monotonic),
 * and each named column, host and host_other are what the test put in
 * (check_host). */
static void test_source_host_rename(void **state)
{
	(void)state;
	require_prog();
	pid_t v = fork();
	assert_true(v >= 0);
	if (v == 0) {
		test_die_with_parent();
		for (;;)
			pause();
	}
	pid_t tv[1] = {v};
	struct vms_vm vm[1] = {
		{.uuid = "00000000-0000-0000-0000-0000000000ee", .name = "v", .state = 1, .pid = v,
		 .nvcpu = 1, .vcpu_tid = tv},
	};
	struct vms_vmtab tab = {.vm = vm, .n = 1, .gen = 1};
	struct vms_source_conf sc = {.host_cgroups = 5};
	uint32_t before_ids[16], ids[16];
	unsigned nbefore, n;
	acct_maps(before_ids, 16, &nbefore, NULL, 0);
	struct drv *d = drv_new_conf("/proc", &vms_source_interference, &sc);
	d->vms = &tab;
	assert_int_equal(drv_declare(d), 0);
	int fd = acct_maps(ids, 16, &n, before_ids, nbefore);
	assert_true(fd >= 0);
	assert_int_equal(n, nbefore + 1);
	/* V (index 0 of the source's program) behind the seven cgroups */
	uint64_t tot[NCG], since[NCG] = {0}, before[IF_NCOLS];
	bool named[NCG] = {false};
	for (unsigned i = 0; i < NCG; i++) {
		tot[i] = (uint64_t)(NCG - i) * 100000000ull + i; /* 700 ms, 600 ms, ... */
		host_put(fd, cg_base + i, tot[i]);
	}
	drv_sample_settled(d);
	check_host(d, tot, named, since, 0);
	for (unsigned i = 0; i < IF_NCOLS; i++)
		before[i] = val(d, if_col_name(i));
	/* idle names the top five: 0..4 (in a new schema at the end of the
	 * hold after the last declaration: none before) */
	d->src.ops->idle(&d->src, UINT64_MAX, &d->env);
	drv_sample_settled(d);
	check_monotonic(d, before);
	check_host(d, tot, named, since, 0);
	d->mono_ns += VMS_INTERF_DECLARE_NS;
	drv_sample_settled(d);
	check_monotonic(d, before);
	for (unsigned i = 0; i < 5; i++) {
		named[i] = true;
		since[i] = tot[i];
	}
	check_host(d, tot, named, since, 0);
	/* they grow, and so do the two others */
	for (unsigned i = 0; i < NCG; i++) {
		tot[i] += 1000000ull * (i + 1);
		host_put(fd, cg_base + i, tot[i]);
	}
	drv_sample_settled(d);
	check_monotonic(d, before);
	check_host(d, tot, named, since, 0);
	/* cgroup 5 overtakes cgroup 4: 5 joins, 4 leaves */
	tot[5] += 500000000ull;
	host_put(fd, cg_base + 5, tot[5]);
	drv_sample_settled(d);
	check_monotonic(d, before);
	check_host(d, tot, named, since, 0);
	d->src.ops->idle(&d->src, UINT64_MAX, &d->env);
	d->mono_ns += VMS_INTERF_DECLARE_NS;
	drv_sample_settled(d);
	check_monotonic(d, before);
	uint64_t left = tot[4] - since[4];
	named[4] = false;
	named[5] = true;
	since[5] = tot[5];
	check_host(d, tot, named, since, left);
	/* and all grow again: 4's growth is host_other's now */
	for (unsigned i = 0; i < NCG; i++) {
		tot[i] += 3000000ull * (i + 1);
		host_put(fd, cg_base + i, tot[i]);
	}
	drv_sample_settled(d);
	check_monotonic(d, before);
	check_host(d, tot, named, since, left);
	drv_close(d);
	kill(v, SIGKILL);
	waitpid(v, NULL, 0);
}

/* Pairs appearing tick after tick (dozens of VMs whose guests begin to
 * wait behind each other) make one new schema generation per hold
 * (VMS_INTERF_DECLARE_NS after the last declaration), not one per tick:
 * five pausing processes as the VMs V was behind and one more as V, the
 * account written by the test (as test_source_host_rename does; the
 * program adds nothing for sleeping threads), a tick a second on the
 * driver's clock.  V waits behind c1, c2, c3 from ticks 1, 2, 3 and
 * behind c4, c5 from ticks 12, 13: a generation at 10 s and one at 20 s,
 * none in between; at every tick V's wait and vms are all of what the
 * test put (nothing held back) and a declared pair's column is the
 * account's total for it (the first value included).  Then a host pair:
 * c1 behind a cgroup already named (for V) is held the same way, its
 * wait in c1's host_other, and its column starts from 0 when declared,
 * host_other keeping what it had (never going back), so that the named
 * columns and host_other add up to host at every tick. */
enum { NV = 6 };
static void tick_hold(struct drv *d, uint64_t *decl, unsigned *gens)
{
	d->mono_ns += VMS_NSEC_PER_SEC;
	int r = drv_sample(d);
	if (r == VMS_RESCHEMA) {
		if (d->mono_ns - *decl < VMS_INTERF_DECLARE_NS)
			fail_msg("a new schema generation %.1f s after the last one (hold %.1f s)",
				 (double)(d->mono_ns - *decl) / 1e9, (double)VMS_INTERF_DECLARE_NS / 1e9);
		assert_int_equal(drv_declare(d), 0);
		*decl = d->mono_ns;
		(*gens)++;
		r = drv_sample(d);
	}
	assert_int_equal(r, 0);
}

static void check_host_sum(struct drv *d, const char *vm)
{
	char prefix[64], n[96];
	uint64_t named = 0;
	snprintf(prefix, sizeof(prefix), "vm.%s.intf.host.", vm);
	for (uint32_t i = 0; i < d->schema->ncols; i++)
		if (strncmp(d->schema->cols[i].name, prefix, strlen(prefix)) == 0)
			named += d->slots[i];
	snprintf(n, sizeof(n), "vm.%s.intf.host_other", vm);
	uint64_t other = val(d, n);
	snprintf(n, sizeof(n), "vm.%s.intf.host", vm);
	assert_int_equal(named + other, val(d, n));
}

static void test_source_pair_hold(void **state)
{
	(void)state;
	require_prog();
	pid_t pid[NV];
	struct vms_vm vm[NV];
	char name[NV][8];
	memset(vm, 0, sizeof(vm));
	for (unsigned i = 0; i < NV; i++) {
		pid[i] = fork();
		assert_true(pid[i] >= 0);
		if (pid[i] == 0) {
			test_die_with_parent();
			for (;;)
				pause();
		}
		if (i)
			snprintf(name[i], sizeof(name[i]), "c%u", i);
		else
			snprintf(name[i], sizeof(name[i]), "v");
		vm[i] = (struct vms_vm){.name = name[i], .state = 1, .pid = pid[i], .nvcpu = 1, .vcpu_tid = &pid[i]};
		snprintf(vm[i].uuid, sizeof(vm[i].uuid), "00000000-0000-0000-0000-0000000001%02u", i);
	}
	struct vms_vmtab tab = {.vm = vm, .n = NV, .gen = 1};
	uint32_t before_ids[16], ids[16];
	unsigned nbefore, n;
	acct_maps(before_ids, 16, &nbefore, NULL, 0);
	struct vms_source_conf sc = {.host_cgroups = 5};
	struct drv *d = drv_new_conf("/proc", &vms_source_interference, &sc);
	d->vms = &tab;
	assert_int_equal(drv_declare(d), 0);
	int fd = acct_maps(ids, 16, &n, before_ids, nbefore);
	assert_true(fd >= 0);
	assert_int_equal(drv_sample(d), 0);
	/* V (index 0) behind c1..c5 (indices 1..5, the set's order) */
	static const unsigned from[NV] = {0, 1, 2, 3, 12, 13};
	uint64_t tot[NV] = {0}, decl = d->mono_ns;
	unsigned gens = 0;
	for (unsigned tick = 1; tick <= 30; tick++) {
		uint64_t sum = 0;
		for (unsigned j = 1; j < NV; j++) {
			if (tick >= from[j]) {
				tot[j] += 1000000ull * j + tick;
				acct_put(fd, 0, INTERF_VM, j, tot[j]);
			}
			sum += tot[j];
		}
		tick_hold(d, &decl, &gens);
		assert_int_equal(val(d, "vm.v.intf.vms"), sum);
		assert_int_equal(val(d, "vm.v.intf.wait"), sum);
		for (unsigned j = 1; j < NV; j++) {
			char c[64];
			snprintf(c, sizeof(c), "vm.v.intf.by.%s", name[j]);
			if (col(d, c) >= 0)
				assert_int_equal(val(d, c), tot[j]);
			else if (tick >= from[j] + VMS_INTERF_DECLARE_NS / VMS_NSEC_PER_SEC + 1)
				fail_msg("no column %s %u s after the pair appeared", c, tick - from[j]);
		}
	}
	assert_int_equal(gens, 2);
	/* a host cgroup named for V's wait behind it (at the end of a hold) */
	const uint64_t h = cg_base + 42;
	char hname[96], c1name[96];
	snprintf(hname, sizeof(hname), "vm.v.intf.host.cgroup-%llu", (unsigned long long)h);
	snprintf(c1name, sizeof(c1name), "vm.c1.intf.host.cgroup-%llu", (unsigned long long)h);
	acct_put(fd, 0, INTERF_HOST, h, 500000000ull);
	tick_hold(d, &decl, &gens);
	d->src.ops->idle(&d->src, UINT64_MAX, &d->env);
	for (unsigned i = 0; i < 10 && col(d, hname) < 0; i++)
		tick_hold(d, &decl, &gens);
	assert_int_equal(gens, 3);
	assert_int_equal(val(d, hname), 0); /* named just now: from 0 */
	check_host_sum(d, "v");
	/* c1 behind it: held, in c1's host_other meanwhile */
	uint64_t c1h = 300000000ull, oth = 0;
	for (unsigned i = 0; i < 12 && col(d, c1name) < 0; i++) {
		c1h += 10000000ull;
		acct_put(fd, 1, INTERF_HOST, h, c1h);
		tick_hold(d, &decl, &gens);
		if (col(d, c1name) < 0)
			assert_int_equal(val(d, "vm.c1.intf.host_other"), c1h);
		else /* declared at this tick's read: from 0, what came before in host_other */
			assert_int_equal(val(d, c1name), 0);
		assert_true(val(d, "vm.c1.intf.host_other") >= oth);
		oth = val(d, "vm.c1.intf.host_other");
		assert_int_equal(val(d, "vm.c1.intf.host"), c1h);
		check_host_sum(d, "c1");
	}
	assert_int_equal(gens, 4);
	assert_int_equal(oth, c1h);
	acct_put(fd, 1, INTERF_HOST, h, c1h + 50000000ull);
	tick_hold(d, &decl, &gens);
	assert_int_equal(val(d, c1name), 50000000ull);
	assert_int_equal(val(d, "vm.c1.intf.host_other"), oth);
	check_host_sum(d, "c1");
	check_host_sum(d, "v");
	drv_close(d);
	for (unsigned i = 0; i < NV; i++) {
		kill(pid[i], SIGKILL);
		waitpid(pid[i], NULL, 0);
	}
}

/* A VM leaves and comes back (the source through its ops, two busy
 * "VMs" pinned to one CPU, as above, no timing bounds): V's eight
 * columns never go back, though the program's entries of V behind A
 * are dropped when A leaves (the source carries them), and V had waited
 * behind A for a good part of a second before. */
static void test_source_leave(void **state)
{
	(void)state;
	require_prog();
	int cpu = test_last_cpu();
	pid_t v = test_spin_kept(cpu), a = test_spin_kept(cpu);
	pid_t tv[1] = {v}, ta[1] = {a};
	struct vms_vm vm[2] = {
		{.uuid = "00000000-0000-0000-0000-0000000000ac", .name = "v", .state = 1, .pid = v,
		 .nvcpu = 1, .vcpu_tid = tv},
		{.uuid = "00000000-0000-0000-0000-0000000000bd", .name = "a", .state = 1, .pid = a,
		 .nvcpu = 1, .vcpu_tid = ta},
	};
	struct vms_vmtab tab = {.vm = vm, .n = 2, .gen = 1};
	struct drv *d = drv_new("/proc", &vms_source_interference);
	d->vms = &tab;
	assert_int_equal(drv_declare(d), 0);
	int s = drv_sample(d);
	for (int i = 0; i < 20 && (s == VMS_RESCHEMA || col(d, "vm.v.intf.by.a") < 0 ||
				   val(d, "vm.v.intf.by.a") < 100000000); i++) {
		usleep(100 * 1000);
		d->mono_ns += VMS_INTERF_DECLARE_NS; /* a new pair's hold over */
		if (s == VMS_RESCHEMA)
			assert_int_equal(drv_declare(d), 0);
		s = drv_sample(d);
	}
	assert_int_equal(s, 0);
	assert_true(val(d, "vm.v.intf.by.a") >= 100000000);
	uint64_t before[IF_NCOLS];
	for (unsigned i = 0; i < IF_NCOLS; i++)
		before[i] = val(d, if_col_name(i));
	tab.n = 1; /* a leaves */
	tab.gen = 2;
	assert_int_equal(drv_sample(d), VMS_RESCHEMA);
	assert_int_equal(drv_declare(d), 0);
	assert_int_equal(col(d, "vm.v.intf.by.a"), -ENOENT);
	assert_int_equal(drv_sample(d), 0);
	check_monotonic(d, before);
	tab.n = 2; /* and comes back */
	tab.gen = 3;
	assert_int_equal(drv_sample(d), VMS_RESCHEMA);
	assert_int_equal(drv_declare(d), 0);
	for (int i = 0; i < 5; i++) {
		usleep(50 * 1000);
		s = drv_sample(d);
		if (s == VMS_RESCHEMA) {
			assert_int_equal(drv_declare(d), 0);
			s = drv_sample(d);
		}
		assert_int_equal(s, 0);
		check_monotonic(d, before);
	}
	drv_close(d);
	kill(v, SIGKILL);
	kill(a, SIGKILL);
	waitpid(v, NULL, 0);
	waitpid(a, NULL, 0);
}

/* The account read by batches (BPF_MAP_LOOKUP_BATCH) and entry by entry
 * (the fallback where the kernel refuses batch ops, forced here) gives
 * the same entries: 3,000 put from user space under victims no test
 * registers (their values known), whatever else the map holds the same
 * both ways (no thread is registered now: nothing adds to it).  A
 * caller's array too small: -ENOSPC and as many as it holds, both ways.
 * Forgetting one of the VMs drops its entries and carries the others'
 * waits behind it, both ways. */
enum { NPUT = 3000, VBASE = 100000 };
static int cmp_ent(const void *a, const void *b)
{
	const struct vms_interf_ent *x = a, *y = b;
	if (x->victim != y->victim)
		return x->victim < y->victim ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static unsigned read_sorted(struct vms_interf_ent *e, unsigned cap)
{
	unsigned n;
	assert_int_equal(vms_interf_read(X, e, cap, &n), 0);
	qsort(e, n, sizeof(*e), cmp_ent);
	return n;
}

static void test_read_walk(void **state)
{
	(void)state;
	require_prog();
	static struct vms_interf_ent put[NPUT], b[16384], w[16384];
	for (unsigned i = 0; i < NPUT; i++) {
		/* 30 victims, each behind the 30 others and a few host cgroups */
		uint32_t v = VBASE + i % 30, c = VBASE + (i / 30) % 30;
		put[i] = (struct vms_interf_ent){.victim = v, .kind = i < 900 ? INTERF_VM : INTERF_HOST,
						 .id = i < 900 ? c : 1000 + i, .ns = 1000003ull * (i + 1)};
		assert_int_equal(vms_interf_account_add(X, &put[i]), 0);
	}
	vms_interf_walk_only(X, false);
	unsigned nb = read_sorted(b, 16384);
	vms_interf_walk_only(X, true);
	unsigned nw = read_sorted(w, 16384);
	assert_int_equal(nb, nw);
	assert_true(nb >= NPUT);
	assert_memory_equal(b, w, nb * sizeof(*b));
	/* ours among them, each with its value */
	qsort(put, NPUT, sizeof(*put), cmp_ent);
	unsigned j = 0;
	for (unsigned i = 0; i < nb && j < NPUT; i++)
		if (cmp_ent(&b[i], &put[j]) == 0)
			assert_int_equal(b[i].ns, put[j++].ns);
	assert_int_equal(j, NPUT);
	/* a short array: -ENOSPC, full */
	unsigned n;
	for (int walk = 0; walk < 2; walk++) {
		vms_interf_walk_only(X, walk);
		assert_int_equal(vms_interf_read(X, w, 100, &n), -ENOSPC);
		assert_int_equal(n, 100);
	}
	/* forget victim VBASE + 1 (walking), then VBASE + 2 (by batches):
	 * the others' entries behind each are carried, theirs are gone */
	for (int walk = 1; walk >= 0; walk--) {
		uint32_t gone = VBASE + 2 - (uint32_t)walk;
		static uint64_t carry[VBASE + 30];
		memset(carry, 0, sizeof(carry));
		uint64_t want[30] = {0};
		for (unsigned i = 0; i < NPUT; i++)
			if (put[i].kind == INTERF_VM && put[i].id == gone && put[i].victim != gone &&
			    put[i].victim != VBASE + 1) /* forgotten first */
				want[put[i].victim - VBASE] += put[i].ns;
		vms_interf_walk_only(X, walk);
		assert_int_equal(vms_interf_forget_account(X, gone, carry, VBASE + 30), 0);
		for (unsigned v = 0; v < 30; v++)
			assert_int_equal(carry[VBASE + v], want[v]);
		n = read_sorted(w, 16384);
		for (unsigned i = 0; i < n; i++)
			assert_false(w[i].victim == gone || (w[i].kind == INTERF_VM && w[i].id == gone));
	}
	for (uint32_t v = VBASE; v < VBASE + 30; v++)
		assert_int_equal(vms_interf_forget_account(X, v, NULL, 0), 0);
	vms_interf_walk_only(X, false);
	n = read_sorted(w, 16384);
	assert_int_equal(n, nb - NPUT);
}

/* V, stopped, off its CPU for good: its run time (schedstat's field 1,
 * which for a running task includes its current run) no longer moves
 * over 20 ms; 'T' is its state already before its last switch-out, which
 * on a loaded CPU can come later still */
static uint64_t switched_out(pid_t v)
{
	stop_proc(v);
	uint64_t a = test_thread_schedstat(v, 1), b = 0;
	for (int i = 0; i < 200; i++, a = b) {
		usleep(20 * 1000);
		b = test_thread_schedstat(v, 1);
		if (b == a)
			return b;
	}
	fail_msg("V's run time still moves 4 s after it stopped");
	return 0;
}

static uint64_t ran_in_map(uint32_t tid)
{
	static struct vms_interf_thr t[4096];
	unsigned n;
	assert_int_equal(vms_interf_read_threads(X, t, 4096, &n), 0);
	for (unsigned i = 0; i < n; i++)
		if (t[i].tid == tid)
			return t[i].ran;
	fail_msg("thread %u not in the threads map", tid);
	return 0;
}

/* The run time the program keeps per registered thread (with
 * VMS_INTERF_RUN_TIME) is the kernel's: a busy process V pinned with
 * another to one CPU (so that it is switched in and out ~100 times a
 * second), registered as a vCPU; over a second, V's run time in the
 * threads map (by vms_interf_ran and by the batched read of the whole
 * map) against field 1 of /proc/V/task/V/schedstat, V stopped and
 * switched out at both ends (the kernel's figure of a running task
 * includes its current run, the program's not): within 2 % + 10 ms, plus
 * the CPU's steal time (the program's time is wall time, the kernel's
 * clock_task leaves steal out).  Measured on this loaded 2-core guest
 * (load average 12-28), 17 runs: 15 within 1.1 % of schedstat (steal
 * aside), two short by 4.3 and 5.4 ms (2.7 and 3.4 %; about one run's
 * slice, with no recursion miss of on_switch seen), unexplained: hence
 * the 10 ms. */
static void test_run_time(void **state)
{
	(void)state;
	require_prog();
	int cpu = test_last_cpu();
	pid_t v = test_spin_kept(cpu), a = test_spin_kept(cpu);
	usleep(100 * 1000);
	assert_int_equal(vms_interf_thread(X, (uint32_t)v, 40, true), 0);
	usleep(100 * 1000);
	uint64_t k0 = switched_out(v), r0, s0 = steal_ns(cpu), n0 = test_thread_schedstat(v, 3);
	assert_int_equal(vms_interf_ran(X, (uint32_t)v, &r0), 0);
	assert_int_equal(ran_in_map((uint32_t)v), r0);
	kill(v, SIGCONT);
	sleep(1);
	uint64_t k1 = switched_out(v), r1, s1 = steal_ns(cpu), n1 = test_thread_schedstat(v, 3);
	assert_int_equal(vms_interf_ran(X, (uint32_t)v, &r1), 0);
	assert_int_equal(ran_in_map((uint32_t)v), r1);
	kill(v, SIGKILL);
	kill(a, SIGKILL);
	waitpid(v, NULL, 0);
	waitpid(a, NULL, 0);
	vms_interf_forget_thread(X, (uint32_t)v);
	double ran = (double)(r1 - r0), run = (double)(k1 - k0), steal = (double)(s1 - s0);
	fprintf(stderr, "run time: program %.3f ms, schedstat %.3f ms, steal %.1f ms, %llu runs\n", ran / 1e6,
		run / 1e6, steal / 1e6, (unsigned long long)(n1 - n0));
	assert_true(run > 5e7);
	if (ran < run * 0.98 - 1e7 || ran > run * 1.02 + 1e7 + steal)
		fail_msg("run time in the program %.3f ms, schedstat %.3f ms (steal %.1f ms)", ran / 1e6, run / 1e6,
			 steal / 1e6);
}

/* The run delay gained by every thread of the host but those in skip[n]
 * (field 2 of each /proc/PID/task/TID/schedstat) so far */
static uint64_t others_delay(const pid_t *skip, unsigned n)
{
	uint64_t sum = 0;
	DIR *pd = opendir("/proc");
	assert_non_null(pd);
	struct dirent *p;
	while ((p = readdir(pd))) {
		pid_t pid = (pid_t)atoi(p->d_name);
		bool ours = false;
		for (unsigned i = 0; i < n; i++)
			ours |= skip[i] == pid;
		if (pid <= 0 || ours)
			continue;
		char path[300];
		snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
		DIR *td = opendir(path);
		struct dirent *t;
		while (td && (t = readdir(td))) {
			unsigned long long run, delay;
			if (t->d_name[0] < '0' || t->d_name[0] > '9')
				continue;
			snprintf(path, sizeof(path), "/proc/%d/task/%s/schedstat", (int)pid, t->d_name);
			FILE *fp = fopen(path, "r");
			if (fp && fscanf(fp, "%llu %llu", &run, &delay) == 2)
				sum += delay;
			if (fp)
				fclose(fp);
		}
		if (td)
			closedir(td);
	}
	closedir(pd);
	return sum;
}

/* The run delay of CPU cpu in /proc/schedstat (the cpuN line's eighth
 * number, run_delay), false without the file (CONFIG_SCHEDSTATS off) */
static bool schedstat_cpu(int cpu, uint64_t *ns)
{
	FILE *fp = fopen("/proc/schedstat", "r");
	if (!fp)
		return false;
	char line[512], want[16];
	unsigned long long f[8];
	bool ok = false;
	snprintf(want, sizeof(want), "cpu%d ", cpu);
	while (fgets(line, sizeof(line), fp))
		if (strncmp(line, want, strlen(want)) == 0 &&
		    sscanf(line + strlen(want), "%llu %llu %llu %llu %llu %llu %llu %llu", &f[0], &f[1], &f[2], &f[3],
			   &f[4], &f[5], &f[6], &f[7]) == 8) {
			*ns = f[7];
			ok = true;
		}
	fclose(fp);
	return ok;
}

/* Each CPU's run queue delay (vms_interf_read_rq, the rq.N.delay
 * columns): three busy processes pinned to one CPU, stopped at both ends
 * of an interval (each one's last wait is added at the switch-out that
 * stops it): that CPU's delay grows by their run delay (the kernel's:
 * field 2 of their schedstat), about 2 s each second, plus what the
 * host's other tasks waited there meanwhile -- at most the run delay all
 * of them gained (every /proc/PID/task/TID/schedstat); the other CPUs'
 * grow by no more than that.  Where the kernel has /proc/schedstat (not
 * this one: CONFIG_SCHEDSTATS is off) its cpuN run_delay is the
 * reference too. */
static void test_rq_delay(void **state)
{
	(void)state;
	require_prog();
	static uint64_t rq0[RQ_MAXCPU], rq1[RQ_MAXCPU];
	int cpu = test_last_cpu();
	pid_t sp[RQ_SPIN];
	for (int i = 0; i < RQ_SPIN; i++)
		sp[i] = test_spin_kept(cpu);
	usleep(100 * 1000);
	for (int i = 0; i < RQ_SPIN; i++)
		stop_proc(sp[i]);
	usleep(50 * 1000);
	uint64_t d0 = 0, d1 = 0, k0 = 0, k1 = 0;
	for (int i = 0; i < RQ_SPIN; i++)
		d0 += test_thread_schedstat(sp[i], 2);
	int n = vms_interf_read_rq(X, rq0, RQ_MAXCPU);
	bool have_k = schedstat_cpu(cpu, &k0);
	uint64_t o0 = others_delay(sp, RQ_SPIN);
	assert_true(n > cpu);
	for (int i = 0; i < RQ_SPIN; i++)
		kill(sp[i], SIGCONT);
	sleep(2);
	for (int i = 0; i < RQ_SPIN; i++)
		stop_proc(sp[i]);
	usleep(50 * 1000);
	for (int i = 0; i < RQ_SPIN; i++)
		d1 += test_thread_schedstat(sp[i], 2);
	assert_int_equal(vms_interf_read_rq(X, rq1, RQ_MAXCPU), n);
	have_k = have_k && schedstat_cpu(cpu, &k1);
	uint64_t o1 = others_delay(sp, RQ_SPIN);
	for (int i = 0; i < RQ_SPIN; i++) {
		kill(sp[i], SIGKILL);
		waitpid(sp[i], NULL, 0);
	}
	double ours = (double)(d1 - d0), others = (double)(o1 - o0), got = (double)(rq1[cpu] - rq0[cpu]);
	fprintf(stderr, "CPU %d: run queue delay %.1f ms; the loops' run delay %.1f ms, every other thread's %.1f ms",
		cpu, got / 1e6, ours / 1e6, others / 1e6);
	if (have_k)
		fprintf(stderr, "; /proc/schedstat %.1f ms", (double)(k1 - k0) / 1e6);
	fprintf(stderr, "\n");
	/* the loops wait 2 s a second between them (three on one CPU),
	 * less what the machine's own work took from them */
	assert_true(ours > 1e9);
	/* (the others' bound: a wait that ended before the first read but
	 * was added at a switch-out after it, and the tasks born and gone
	 * between the reads, whose waits no read saw: 20 % + 20 ms; counting
	 * a task's waits from before the program, the fault this catches,
	 * would be seconds) */
	if (got < ours * 0.99 - 1e6 || got > ours * 1.01 + others * 1.2 + 2e7)
		fail_msg("CPU %d: run queue delay %.1f ms, the loops' run delay %.1f ms, the others' %.1f ms", cpu,
			 got / 1e6, ours / 1e6, others / 1e6);
	for (int c = 0; c < n; c++) {
		double g = (double)(rq1[c] - rq0[c]);
		if (c != cpu && g > others * 1.2 + 2e7)
			fail_msg("CPU %d (not the loops'): run queue delay %.1f ms, every other thread's %.1f ms", c,
				 g / 1e6, others / 1e6);
	}
	if (have_k) {
		double k = (double)(k1 - k0);
		if (got < k * 0.98 - 1e7 || got > k * 1.02 + 1e7)
			fail_msg("CPU %d: run queue delay %.1f ms, /proc/schedstat's %.1f ms", cpu, got / 1e6, k / 1e6);
	}
	/* without it (VMS_INTERF_NO_RQ): none, said so */
	struct vms_interf *y;
	char err[256];
	assert_int_equal(vms_interf_open_flags(&y, VMS_INTERF_NO_RQ, err, sizeof(err)), 0);
	assert_int_equal(vms_interf_read_rq(y, rq0, RQ_MAXCPU), -ENODATA);
	vms_interf_close(y);
}

VMS_TEST_MAIN(setup, teardown, test_behind_other_vm, test_behind_own_thread, test_behind_host_cgroup,
	      test_perf_still_counts, test_source_columns, test_source_host_cgroup,
	      test_source_host_rename, test_source_pair_hold, test_source_leave, test_read_walk, test_run_time,
	      test_rq_delay)

/* SPDX-License-Identifier: MIT */
/* switch_cost.c - what the interference programs (interf.bpf.c) cost per
 * call and per context switch, and what a tick's read of every thread's
 * run delay costs by the threads map against /proc/PID/task/TID/schedstat,
 * on this host without guests (issue 26, doc/interference.md's Cost).
 * Needs root (it loads the program through the sampler's own loader,
 * bpf_interf.h).
 *
 *   sudo build/bench/interf/switch_cost [-s SECONDS] [-n ROUNDS] [-r RATE]
 *        [-v VMS] [-t THREADS_PER_VM] [-k TICKS] [-R HOST_RATE] [-Q]
 *
 * VMS processes (default 4) are the "VMs": each registered as a VM (its
 * tgid), every thread of it as a vCPU (a victim).  Each has, on each of
 * the first two CPUs, a pair of threads pinned to that CPU that ping-pong
 * one byte through two pipes (each round trip two context switches,
 * between two victims of the same VM: a wakeup, a wait behind the other,
 * a switch-in that ends it and walks the ring), paced so that the pairs
 * together switch RATE times a second (default 8000); the rest of the
 * THREADS_PER_VM threads (default 60) sleep (idle vCPUs).
 *
 * 1. Ticks (-k TICKS, default 200): for T = 60, 120, 240 threads of these
 *    processes registered (the threads map holds T), the CPU time of one
 *    tick's read of all T (the program loaded with VMS_INTERF_RUN_TIME, so
 *    that the map holds run time and run delay, schedstat's fields 1 and
 *    2): pread + parse of each thread's schedstat (fds
 *    kept open, as the vm source reads its vCPUs'), against one batched
 *    read of the threads map (vms_interf_read_threads), alternated, the
 *    median of 5 runs of TICKS ticks each.
 * 2. Program cost (-n ROUNDS of -s SECONDS, default 3 of 5, each round
 *    twice: the program loaded without, then with, the run time kept,
 *    VMS_INTERF_RUN_TIME), all threads registered: run-time statistics on (BPF_ENABLE_STATS, for the run
 *    only), each program's calls and run time over the round
 *    (bpf_prog_info run_cnt, run_time_ns), the host's context switches
 *    (/proc/stat ctxt: every switch is one on_switch call, the bench's and
 *    everyone else's on this machine), and from them: ns a call per
 *    program, the programs' ns per context switch (all of them over the
 *    switches), and that as a share of one core at HOST_RATE switches a
 *    second (default 38183: the 60-guest host of doc/interference.md).
 *    With -Q each round is twice the program without, then with, each
 *    CPU's run queue delay (VMS_INTERF_NO_RQ; rq.N.delay), the run time
 *    not kept; without -Q the run queue delay is kept in both (the
 *    default).
 *    Beside them, an empty program (return 1) on sched:sched_switch, as
 *    the floor: what the statistics themselves and the call of any
 *    program on that tracepoint cost here (its ns a call is not in the
 *    programs' total).
 */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <sys/ioctl.h>

#include <bpf/bpf.h>

#include "bpf_interf.h"
#include "parse.h"

enum { MAXVM = 64, MAXT = 4096, MAXPROG = 8 };

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static unsigned long long ctxt(void)
{
	char line[256];
	unsigned long long v = 0;
	FILE *fp = fopen("/proc/stat", "r");
	if (!fp)
		return 0;
	while (fgets(line, sizeof(line), fp))
		if (sscanf(line, "ctxt %llu", &v) == 1)
			break;
	fclose(fp);
	return v;
}

static void pin(int cpu)
{
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	sched_setaffinity(0, sizeof(s), &s);
}

/* a thread of a "VM" process */
struct role {
	int cpu;   /* pinned to, or -1 */
	int kind;  /* 0 sleeps, 1 pings, 2 pongs */
	int rfd, wfd;
	double rt_rate; /* round trips a second (the pinger) */
	int report;     /* where its TID goes */
};

static void *thread_main(void *arg)
{
	struct role *r = arg;
	pid_t tid = (pid_t)syscall(SYS_gettid);
	char b = 0;
	if (r->cpu >= 0)
		pin(r->cpu);
	if (write(r->report, &tid, sizeof(tid)) != (ssize_t)sizeof(tid))
		_exit(1);
	if (r->kind == 0)
		for (;;)
			pause();
	if (r->kind == 2)
		for (;;)
			if (read(r->rfd, &b, 1) != 1 || write(r->wfd, &b, 1) != 1)
				_exit(1);
	double t0 = now_s();
	unsigned long long done = 0;
	for (;;) {
		if ((double)done >= (now_s() - t0) * r->rt_rate) {
			struct timespec ts = {0, 200000};
			nanosleep(&ts, NULL);
			continue;
		}
		if (write(r->wfd, &b, 1) != 1 || read(r->rfd, &b, 1) != 1)
			_exit(1);
		done++;
	}
	return NULL;
}

/* A "VM": npairs ping-pong pairs (pair i on CPU i % ncpu), the rest of
 * nthreads sleeping; every thread's TID written to report */
static void vm_main(int ncpu, unsigned nthreads, double rt_rate, int report)
{
	static struct role roles[MAXT];
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	unsigned t = 0;
	for (int c = 0; c < ncpu && t + 2 <= nthreads; c++) {
		int a[2], b[2];
		if (pipe(a) || pipe(b))
			_exit(1);
		roles[t++] = (struct role){c, 1, b[0], a[1], rt_rate, report};
		roles[t++] = (struct role){c, 2, a[0], b[1], 0, report};
	}
	while (t < nthreads)
		roles[t++] = (struct role){-1, 0, -1, -1, 0, report};
	for (unsigned i = 0; i < t; i++) {
		pthread_t th;
		pthread_attr_t at;
		pthread_attr_init(&at);
		pthread_attr_setstacksize(&at, 64 * 1024);
		if (pthread_create(&th, &at, thread_main, &roles[i]))
			_exit(1);
	}
	for (;;)
		pause();
}

struct thr {
	pid_t pid, tid;
	uint32_t vm;
	int fd; /* its schedstat */
};
static struct thr thr[MAXT];
static unsigned nthr;
static struct vms_interf_thr tbuf[MAXT];

/* CPU µs of one tick: every one of the first n threads' schedstat
 * (sched), or the threads map in one batched read; the median of 5 runs
 * of ticks ticks */
static double tick_us(struct vms_interf *x, unsigned n, bool sched, unsigned ticks, unsigned *got)
{
	double run[5];
	char buf[256];
	for (int r = 0; r < 5; r++) {
		double c0 = cpu_s();
		for (unsigned k = 0; k < ticks; k++) {
			if (sched) {
				unsigned ok = 0;
				for (unsigned i = 0; i < n; i++) {
					struct vms_schedstat ss;
					ssize_t m = pread(thr[i].fd, buf, sizeof(buf), 0);
					if (m > 0 && vms_parse_schedstat(buf, (size_t)m, &ss) == 0)
						ok++;
				}
				*got = ok;
			} else {
				vms_interf_read_threads(x, tbuf, MAXT, got);
			}
		}
		run[r] = (cpu_s() - c0) * 1e6 / ticks;
	}
	qsort(run, 5, sizeof(*run), cmp_d);
	return run[2];
}

/* An empty tracepoint program (r0 = 1; exit) on sched:sched_switch: its
 * fd, or -1.  One perf event (on CPU 0, as libbpf attaches) puts it in the
 * tracepoint's program array, which runs on every CPU. */
static int empty_prog(void)
{
	struct bpf_insn insns[2] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 1},
		{.code = BPF_JMP | BPF_EXIT},
	};
	int pfd = bpf_prog_load(BPF_PROG_TYPE_TRACEPOINT, "empty", "GPL", insns, 2, NULL);
	FILE *fp = fopen("/sys/kernel/tracing/events/sched/sched_switch/id", "r");
	unsigned long long id = 0;
	if (fp) {
		if (fscanf(fp, "%llu", &id) != 1)
			id = 0;
		fclose(fp);
	}
	if (pfd < 0 || !id)
		return -1;
	struct perf_event_attr pa = {.type = PERF_TYPE_TRACEPOINT, .size = sizeof(pa), .config = id,
				     .sample_period = 1, .wakeup_events = 1};
	int fd = (int)syscall(SYS_perf_event_open, &pa, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 || ioctl(fd, PERF_EVENT_IOC_SET_BPF, pfd) || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0))
		return -1;
	return pfd;
}

static int prog_ns(int fd, uint64_t *cnt, uint64_t *ns)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);
	memset(&info, 0, sizeof(info));
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len) != 0)
		return -1;
	*cnt = info.run_cnt;
	*ns = info.run_time_ns;
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: switch_cost [-s SECONDS] [-n ROUNDS] [-r RATE] [-v VMS] [-t THREADS_PER_VM] "
			"[-k TICKS] [-R HOST_RATE] [-Q]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	double secs = 5, rate = 8000, host_rate = 38183;
	unsigned rounds = 3, nvm = 4, tpv = 60, ticks = 200;
	bool rq = false;
	int o;
	while ((o = getopt(argc, argv, "s:n:r:v:t:k:R:Q")) != -1) {
		switch (o) {
		case 's': secs = atof(optarg); break;
		case 'n': rounds = (unsigned)atoi(optarg); break;
		case 'r': rate = atof(optarg); break;
		case 'v': nvm = (unsigned)atoi(optarg); break;
		case 't': tpv = (unsigned)atoi(optarg); break;
		case 'k': ticks = (unsigned)atoi(optarg); break;
		case 'R': host_rate = atof(optarg); break;
		case 'Q': rq = true; break;
		default: usage();
		}
	}
	if (!nvm || nvm > MAXVM || tpv < 2 || (size_t)nvm * tpv > MAXT || secs <= 0 || !ticks)
		usage();
	int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	ncpu = ncpu > 2 ? 2 : ncpu < 1 ? 1 : ncpu;
	char err[256];
	struct vms_interf *x;
	if (vms_interf_open_flags(&x, VMS_INTERF_RUN_TIME, err, sizeof(err)) < 0) {
		fprintf(stderr, "switch_cost: %s\n", err);
		return 2;
	}
	int stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (stats_fd < 0) {
		fprintf(stderr, "switch_cost: cannot turn on the programs' run-time statistics: %s\n",
			strerror(errno));
		return 2;
	}
	int efd = empty_prog();
	if (efd < 0)
		fprintf(stderr, "switch_cost: no empty program beside (%s)\n", strerror(errno));
	/* the VMs: each pair's round trips are 2 switches */
	double rt_rate = rate / 2 / (double)(nvm * (unsigned)ncpu);
	int rep[2];
	if (pipe(rep))
		return 2;
	pid_t pids[MAXVM];
	for (unsigned v = 0; v < nvm; v++) {
		pids[v] = fork();
		if (pids[v] == 0) {
			close(rep[0]);
			vm_main(ncpu, tpv, rt_rate, rep[1]);
		}
	}
	close(rep[1]);
	/* which process a TID is in: /proc/TID/status's Tgid */
	for (nthr = 0; nthr < nvm * tpv; nthr++) {
		pid_t tid;
		if (read(rep[0], &tid, sizeof(tid)) != (ssize_t)sizeof(tid))
			break;
		thr[nthr].tid = tid;
	}
	if (nthr != nvm * tpv) {
		fprintf(stderr, "switch_cost: %u of %u threads started\n", nthr, nvm * tpv);
		return 2;
	}
	for (unsigned i = 0; i < nthr; i++) {
		char p[96], line[128];
		snprintf(p, sizeof(p), "/proc/%d/status", (int)thr[i].tid);
		FILE *fp = fopen(p, "r");
		int tgid = 0;
		while (fp && fgets(line, sizeof(line), fp))
			if (sscanf(line, "Tgid: %d", &tgid) == 1)
				break;
		if (fp)
			fclose(fp);
		thr[i].pid = tgid;
		for (unsigned v = 0; v < nvm; v++)
			if (pids[v] == tgid)
				thr[i].vm = v;
		snprintf(p, sizeof(p), "/proc/%d/task/%d/schedstat", (int)tgid, (int)thr[i].tid);
		thr[i].fd = open(p, O_RDONLY | O_CLOEXEC);
	}
	for (unsigned v = 0; v < nvm; v++)
		vms_interf_vm(x, (uint32_t)pids[v], v);

	printf("switch_cost: %u VMs x %u threads, %d CPUs, bench pairs at %.0f switches/s\n", nvm, tpv, ncpu, rate);
	/* 1. ticks: the threads map holding T entries */
	printf("%8s %14s %14s %8s\n", "threads", "schedstat_us", "bpf_map_us", "ratio");
	static const unsigned Ts[] = {60, 120, 240, 480, 960};
	unsigned reg = 0;
	for (unsigned k = 0; k < sizeof(Ts) / sizeof(Ts[0]) && Ts[k] <= nthr; k++) {
		for (; reg < Ts[k]; reg++)
			vms_interf_thread(x, (uint32_t)thr[reg].tid, thr[reg].vm, true);
		unsigned gs = 0, gb = 0;
		double s = tick_us(x, Ts[k], true, ticks, &gs), b = tick_us(x, Ts[k], false, ticks, &gb);
		printf("%8u %14.1f %14.1f %8.1f\n", Ts[k], s, b, s / b);
		if (gs != Ts[k] || gb != Ts[k])
			fprintf(stderr, "switch_cost: %u schedstat read, %u map entries, of %u\n", gs, gb, Ts[k]);
	}
	vms_interf_close(x);

	/* 2. the programs, without and with the run time, alternated: each
	 * round loads the program again and registers every thread */
	for (unsigned r = 0; r < 2 * rounds; r++) {
		unsigned flags = rq ? (r % 2 ? 0 : VMS_INTERF_NO_RQ) : r % 2 ? VMS_INTERF_RUN_TIME : 0;
		if (vms_interf_open_flags(&x, flags, err, sizeof(err)) < 0) {
			fprintf(stderr, "switch_cost: %s\n", err);
			return 2;
		}
		for (unsigned v = 0; v < nvm; v++)
			vms_interf_vm(x, (uint32_t)pids[v], v);
		for (unsigned i = 0; i < nthr; i++)
			vms_interf_thread(x, (uint32_t)thr[i].tid, thr[i].vm, true);
		struct timespec settle = {0, 300000000};
		nanosleep(&settle, NULL);
		struct vms_interf_prog p0[MAXPROG], p1[MAXPROG];
		uint64_t ec0 = 0, en0 = 0, ec1 = 0, en1 = 0;
		prog_ns(efd, &ec0, &en0);
		int n0 = vms_interf_prog_stats(x, p0, MAXPROG);
		unsigned long long c0 = ctxt();
		double t0 = now_s();
		struct timespec ts = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};
		nanosleep(&ts, NULL);
		int n1 = vms_interf_prog_stats(x, p1, MAXPROG);
		prog_ns(efd, &ec1, &en1);
		unsigned long long c1 = ctxt();
		double dt = now_s() - t0;
		if (n0 < 0 || n1 != n0) {
			fprintf(stderr, "switch_cost: cannot read the programs' statistics\n");
			return 2;
		}
		double sw = (double)(c1 - c0), total = 0;
		printf("round %u %s %-3s: %.0f switches/s", r / 2 + 1, rq ? "run-queue" : "run-time", r % 2 ? "on" : "off",
		       sw / dt);
		for (int i = 0; i < n1; i++) {
			double c = (double)(p1[i].run_cnt - p0[i].run_cnt), t = (double)(p1[i].run_ns - p0[i].run_ns);
			total += t;
			printf("  %s %.0f/s %.0f ns", p1[i].name, c / dt, c > 0 ? t / c : 0);
		}
		if (ec1 > ec0)
			printf("  empty %.0f ns", (double)(en1 - en0) / (double)(ec1 - ec0));
		double per_sw = sw > 0 ? total / sw : 0;
		printf("  | %.0f ns/switch, %.2f %% of a core at %.0f switches/s\n", per_sw, per_sw * host_rate / 1e7,
		       host_rate);
		fflush(stdout);
		vms_interf_close(x);
	}
	for (unsigned v = 0; v < nvm; v++) {
		kill(pids[v], SIGKILL);
		waitpid(pids[v], NULL, 0);
	}
	close(stats_fd);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/* bench_perf.c - CPU cost of the perf source's tick (not a test).
 *
 *   bench_perf [-v VMS] [-t THREADS] [-n TICKS] [-l idle|sleep|spin] [-e HOST_EVENTS]
 *
 * Sets up the real loop with only the perf source: host-wide events on
 * every online CPU (default: context-switches, cpu-migrations,
 * page-faults, task-clock) and, with -v, VMS simulated VMs: child
 * processes with THREADS threads each (default 4: a "main loop" and three
 * "vCPUs"), registered in the VM table as QEMU processes are, counted with
 * the default per-VM events (context-switches, cpu-migrations,
 * kvm:kvm_exit).  The threads are idle (blocked), sleep (wake every ms,
 * like a lightly loaded guest) or spin (always running: reading their
 * counters needs an IPI to their CPU).
 *
 * Then, pinned to the first CPU it may use, calls the source's sample()
 * TICKS times, 10 ms apart, and reports
 * its CPU time (CLOCK_THREAD_CPUTIME_ID) and wall time per tick, per group
 * read(2) and per counter value read, and the heap allocations made
 * during the ticks (malloc is interposed; must be 0).
 *
 * Before that, the floor under the host-wide part: one read(2) of a
 * one-event per-CPU group (raw perf_event_open, no libperf, no source) for
 * each CPU, from the CPU this runs on.  Reading the counters of another
 * CPU's active event makes the kernel interrupt that CPU (an IPI) to bring
 * the count up to date, which is most of the cost of a remote read. */
#include <errno.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "loop.h"
#include "tthreads.h"
#include "vmtab.h"

/* the counting allocator: see tests/alloccount.h */
#include "alloccount.h"

enum load { LOAD_IDLE, LOAD_SLEEP, LOAD_SPIN };
static enum load load;
static int gate[2];

static uint64_t clk(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * VMS_NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static void *vm_thread(void *arg)
{
	(void)arg;
	char c;
	switch (load) {
	case LOAD_IDLE:
		while (read(gate[0], &c, 1) > 0)
			;
		break;
	case LOAD_SLEEP:
		for (;;)
			usleep(1000);
	case LOAD_SPIN:
		for (volatile unsigned long i = 0;; i++)
			;
	}
	return NULL;
}

/* A "QEMU process": threads - 1 threads besides its main one. */
static pid_t vm_spawn(unsigned threads)
{
	int ready[2];
	char c;
	if (pipe(ready) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		for (unsigned i = 1; i < threads; i++)
			tt_start_detached(vm_thread, NULL);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(ready[1]);
	if (pid < 0 || read(ready[0], &c, 1) != 1)
		pid = -1;
	close(ready[0]);
	return pid;
}

/* ns per read(2) of a per-CPU group of one event, for each CPU 0..n-1 */
static void raw_floor(unsigned ncpu)
{
	unsigned here = 0; /* (sched_getcpu: <sched.h> is shadowed by src/sampler/sched.h here) */
	syscall(SYS_getcpu, &here, NULL, NULL);
	printf("raw read(2) of a 1-event per-CPU group, from cpu%u:", here);
	for (unsigned cpu = 0; cpu < ncpu; cpu++) {
		struct perf_event_attr a = {
			.type = PERF_TYPE_SOFTWARE,
			.size = sizeof(a),
			.config = PERF_COUNT_SW_CONTEXT_SWITCHES,
			.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
				       PERF_FORMAT_TOTAL_TIME_RUNNING,
		};
		int fd = (int)syscall(__NR_perf_event_open, &a, -1, (int)cpu, -1, 0);
		uint64_t b[8], sum = 0;
		if (fd < 0) {
			printf(" cpu%u: %s", cpu, strerror(errno));
			continue;
		}
		for (int i = 0; i < 300; i++) {
			struct timespec ts = {0, 1000 * 1000};
			nanosleep(&ts, NULL);
			uint64_t t0 = clk(CLOCK_MONOTONIC);
			if (read(fd, b, sizeof(b)) <= 0)
				break;
			sum += clk(CLOCK_MONOTONIC) - t0;
		}
		close(fd);
		printf(" cpu%u %.0f ns%s", cpu, sum / 300.0, cpu == here ? " (local)" : "");
	}
	printf("\n");
}

static void usage(void)
{
	fprintf(stderr, "usage: bench_perf [-v VMS] [-t THREADS] [-n TICKS] [-l idle|sleep|spin] "
			"[-e HOST_EVENTS_YAML_LIST]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned nvm = 0, threads = 4, ticks = 500;
	const char *host = "[context-switches, cpu-migrations, page-faults, task-clock]";
	int o;
	while ((o = getopt(argc, argv, "v:t:n:l:e:")) != -1) {
		switch (o) {
		case 'v': nvm = (unsigned)atoi(optarg); break;
		case 't': threads = (unsigned)atoi(optarg); break;
		case 'n': ticks = (unsigned)atoi(optarg); break;
		case 'e': host = optarg; break;
		case 'l':
			if (!strcmp(optarg, "idle"))
				load = LOAD_IDLE;
			else if (!strcmp(optarg, "sleep"))
				load = LOAD_SLEEP;
			else if (!strcmp(optarg, "spin"))
				load = LOAD_SPIN;
			else
				usage();
			break;
		default: usage();
		}
	}
	if (pipe(gate) < 0 || threads < 1 || ticks < 1)
		return 1;
	pid_t *pids = calloc(nvm ? nvm : 1, sizeof(*pids));
	for (unsigned i = 0; i < nvm; i++) {
		pids[i] = vm_spawn(threads);
		if (pids[i] < 0) {
			perror("fork");
			return 1;
		}
	}
	/* the sampler on the first CPU (the VMs' threads go anywhere) */
	int first = tt_first_cpu();
	if (first < 0 || tt_pin(first) < 0) {
		fprintf(stderr, "cannot pin to a CPU\n");
		return 1;
	}
	raw_floor((unsigned)sysconf(_SC_NPROCESSORS_ONLN));

	struct vms_config conf;
	struct vms_loop l;
	char yaml[1024], err[256];
	vms_config_defaults(&conf);
	snprintf(yaml, sizeof(yaml), "output: /dev/null\nlog_level: warning\nsources:\n  loadavg: {enabled: false}\n"
		 "  perf: {host: %s}\n", host);
	if (vms_config_load_buffer(&conf, "bench", yaml, strlen(yaml), err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	if (vms_loop_init(&l, &conf, NULL, NULL) < 0)
		return 1;
	for (unsigned i = 0; i < nvm; i++) {
		struct vms_vm vm = {.state = 1, .pid = pids[i]};
		char name[32];
		snprintf(vm.uuid, sizeof(vm.uuid), "00000000-0000-4000-8000-%012u", i);
		snprintf(name, sizeof(name), "vm%02u", i);
		vm.name = name;
		vms_vmtab_upsert(&l.sh.vms, &vm);
	}
	uint64_t t0 = clk(CLOCK_MONOTONIC);
	struct vms_tickinfo ti = {.idx = 1, .deadline_ns = t0};
	vms_loop_tick(&l, &ti); /* declares the VMs: opens their counters */
	uint64_t attach_ns = clk(CLOCK_MONOTONIC) - t0;

	struct vms_source *src = NULL;
	for (unsigned i = 0; i < l.sh.nsrc; i++)
		if (l.sh.src[i].ops && !strcmp(l.sh.src[i].ops->name, "perf"))
			src = &l.sh.src[i];
	if (!src) {
		fprintf(stderr, "no perf source\n");
		return 1;
	}
	/* what one tick reads, from the schema */
	unsigned ncpu = 0, nhost = 0, nhost_groups = 0, nvm_cols = 0;
	for (uint32_t i = src->base; i < src->base + src->ncols; i++) {
		const char *n = l.schema->cols[i].name;
		if (!strncmp(n, "perf.cpu", 8) && strstr(n, ".time_enabled"))
			ncpu++, nhost_groups++;
		else if (!strncmp(n, "perf.cpu", 8) && strstr(n, "_time_enabled"))
			nhost_groups++;
		else if (!strncmp(n, "perf.cpu", 8) && !strstr(n, "time_"))
			nhost++;
		else if (!strncmp(n, "vm.", 3) && !strstr(n, "time_"))
			nvm_cols++;
	}
	unsigned vm_events = nvm ? nvm_cols / nvm : 0;
	unsigned long counters = nhost + (unsigned long)nvm * threads * vm_events;
	unsigned long reads = nhost_groups + (unsigned long)nvm * threads; /* one group per thread */

	uint64_t *slots = calloc(src->ncols ? src->ncols : 1, sizeof(*slots));
	struct vms_tick_ctx t = {0};
	for (int i = 0; i < 5; i++)
		src->ops->sample(src, slots, &t);
	uint64_t cpu = 0, wall = 0, worst = 0;
	allocs = 0;
	for (unsigned i = 0; i < ticks; i++) {
		struct timespec pause_ts = {0, 10 * 1000 * 1000};
		nanosleep(&pause_ts, NULL);
		uint64_t c0 = clk(CLOCK_THREAD_CPUTIME_ID), w0 = clk(CLOCK_MONOTONIC);
		armed = 1;
		int r = src->ops->sample(src, slots, &t);
		armed = 0;
		uint64_t c1 = clk(CLOCK_THREAD_CPUTIME_ID), w1 = clk(CLOCK_MONOTONIC);
		if (r != 0) {
			fprintf(stderr, "sample: %d\n", r);
			return 1;
		}
		cpu += c1 - c0;
		wall += w1 - w0;
		if (c1 - c0 > worst)
			worst = c1 - c0;
	}
	static const char *const lname[] = {"idle", "sleep", "spin"};
	printf("host: %u CPUs x %u events; VMs: %u x %u threads x %u events (%s); %u ticks\n", ncpu,
	       ncpu ? nhost / ncpu : 0, nvm, threads, vm_events, lname[load], ticks);
	printf("per tick: %lu counter values in %lu group reads (+%u fstat); CPU %.1f us (worst %.1f us), "
	       "wall %.1f us\n",
	       counters, reads, nvm, cpu / 1e3 / ticks, worst / 1e3, wall / 1e3 / ticks);
	printf("per group read: %.0f ns CPU; per counter value: %.0f ns CPU\n", (double)cpu / ticks / reads,
	       (double)cpu / ticks / counters);
	printf("heap allocations during %u ticks: %lu\n", ticks, allocs);
	if (nvm)
		printf("opening the counters of %u VMs (first tick): %.1f ms\n", nvm, attach_ns / 1e6);
	vms_loop_fini(&l);
	vms_config_free(&conf);
	for (unsigned i = 0; i < nvm; i++) {
		kill(pids[i], SIGKILL);
		waitpid(pids[i], NULL, 0);
	}
	free(pids);
	free(slots);
	return allocs ? 1 : 0;
}

/* SPDX-License-Identifier: MIT */
/* runner.c - run one sampler and report what it cost (bench/run.sh).
 *
 *   runner [-T TRACEDIR] [-R] -- COMMAND [ARG...]
 *
 * Forks, execs COMMAND, waits for it with wait4() and prints one line of
 * key=value pairs on stdout:
 *
 *   utime_us stime_us  the child's getrusage() user and system time.  On a
 *                      kernel with tick-based CPU accounting (this one:
 *                      CONFIG_TICK_CPU_ACCOUNTING, HZ=250) their SUM is
 *                      exact (it is the scheduler's sum_exec_runtime) but
 *                      the SPLIT is decided by which of the few timer ticks
 *                      happened to land in user or kernel mode; run.sh
 *                      therefore uses only the sum (cpu_us) and takes the
 *                      split from a traced run (-T, tracesplit.py).
 *   cpu_us             utime_us + stime_us
 *   maxrss_kb          ru_maxrss (peak resident set, KiB)
 *   wall_us            fork to reap
 *   status             the wait status (0: exited 0)
 *   rss_kb anon_kb file_kb (with -R) the largest exact resident set seen
 *                      by reading /proc/PID/smaps_rollup every 20 ms while
 *                      the child runs (a page-table walk, unlike ru_maxrss
 *                      which comes from approximate per-CPU counters)
 *
 * -T TRACEDIR: an ftrace instance directory (run.sh enables
 * raw_syscalls:sys_enter/sys_exit and sched:sched_switch in it); event
 * filters selecting the child's pid are written and tracing is switched on
 * before the child execs, and off when it has exited.  The child waits on
 * a pipe until then, so none of its events is lost.  (Event filters, not
 * set_event_pid: with set_event_pid this kernel dropped about half of the
 * switches into the task.) */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int put(const char *dir, const char *file, const char *text)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "runner: %s: %s\n", path, strerror(errno));
		return -1;
	}
	ssize_t n = write(fd, text, strlen(text));
	int e = errno;
	close(fd);
	if (n != (ssize_t)strlen(text)) {
		fprintf(stderr, "runner: write %s: %s\n", path, strerror(e));
		return -1;
	}
	return 0;
}

static long us(struct timeval tv)
{
	return tv.tv_sec * 1000000L + tv.tv_usec;
}

struct rss {
	long rss, anon, file;
};

static void poll_rss(pid_t pid, struct rss *best)
{
	char path[64], buf[4096];
	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	struct rss r = {0, 0, 0};
	for (char *l = buf; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		if (strncmp(l, "Rss:", 4) == 0)
			r.rss = strtol(l + 4, NULL, 10);
		else if (strncmp(l, "Anonymous:", 10) == 0)
			r.anon = strtol(l + 10, NULL, 10);
	}
	if (r.rss > best->rss) {
		best->rss = r.rss;
		best->anon = r.anon;
		best->file = r.rss - r.anon;
	}
}

int main(int argc, char **argv)
{
	const char *trace = NULL;
	bool rss = false;
	int opt;

	while ((opt = getopt(argc, argv, "+T:R")) != -1) {
		switch (opt) {
		case 'T':
			trace = optarg;
			break;
		case 'R':
			rss = true;
			break;
		default:
			goto usage;
		}
	}
	if (optind >= argc)
		goto usage;

	int go[2];
	if (pipe2(go, O_CLOEXEC) < 0) {
		perror("runner: pipe");
		return 1;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid_t pid = fork();
	if (pid < 0) {
		perror("runner: fork");
		return 1;
	}
	if (pid == 0) {
		char c;
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(126);
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "runner: %s: %s\n", argv[optind], strerror(errno));
		_exit(127);
	}
	close(go[0]);
	if (trace) {
		char sysf[64], swf[96];
		snprintf(sysf, sizeof(sysf), "common_pid == %d\n", (int)pid);
		snprintf(swf, sizeof(swf), "prev_pid == %d || next_pid == %d\n", (int)pid, (int)pid);
		if (put(trace, "events/raw_syscalls/filter", sysf) < 0 ||
		    put(trace, "events/sched/sched_switch/filter", swf) < 0 ||
		    put(trace, "tracing_on", "1") < 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			return 1;
		}
	}
	if (write(go[1], "x", 1) != 1) {
		perror("runner: write");
		return 1;
	}
	close(go[1]);

	struct rss best = {0, 0, 0};
	struct rusage ru;
	int st;
	for (;;) {
		pid_t r = wait4(pid, &st, rss ? WNOHANG : 0, &ru);
		if (r == pid)
			break;
		if (r < 0 && errno != EINTR) {
			perror("runner: wait4");
			return 1;
		}
		if (r == 0) {
			poll_rss(pid, &best);
			poll(NULL, 0, 20);
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (trace)
		put(trace, "tracing_on", "0");
	long wall = (long)(t1.tv_sec - t0.tv_sec) * 1000000L + (t1.tv_nsec - t0.tv_nsec) / 1000;
	printf("pid=%d utime_us=%ld stime_us=%ld cpu_us=%ld maxrss_kb=%ld wall_us=%ld status=%d", (int)pid, us(ru.ru_utime),
	       us(ru.ru_stime), us(ru.ru_utime) + us(ru.ru_stime), ru.ru_maxrss, wall, st);
	if (rss)
		printf(" rss_kb=%ld anon_kb=%ld file_kb=%ld", best.rss, best.anon, best.file);
	printf("\n");
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
usage:
	fprintf(stderr, "usage: runner [-T TRACEDIR] [-R] -- COMMAND [ARG...]\n");
	return 2;
}

/* SPDX-License-Identifier: MIT */
/* floor.c - the cheapest sampler one could reasonably write: the baseline
 * vmsampler is measured against (bench/run.sh).
 *
 * Each tick: wake on an absolute timerfd deadline, pread /proc/stat,
 * /proc/diskstats and /proc/net/dev (kept open), parse every number of
 * every line into an array (no names, no validation, no schema), write one
 * CSV line of all the numbers.  No ring, no frame, no loadavg, no
 * timestamps beyond one clock_gettime.
 *
 *   floor INTERVAL_NS COUNT OUTPUT */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

static char buf[3][65536];
static uint64_t vals[16384];
static char line[1 << 18];

static size_t parse_all(const char *p, size_t len, uint64_t *out, size_t n)
{
	const char *e = p + len;
	while (p < e) {
		if (*p >= '0' && *p <= '9') {
			uint64_t v = 0;
			while (p < e && *p >= '0' && *p <= '9')
				v = v * 10 + (uint64_t)(*p++ - '0');
			out[n++] = v;
			if (n == 16384)
				return n;
		} else {
			p++;
		}
	}
	return n;
}

static char *u64(char *p, uint64_t v)
{
	char t[24];
	int n = 0;
	do {
		t[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = t[--n];
	return p;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: floor INTERVAL_NS COUNT OUTPUT\n");
		return 2;
	}
	uint64_t period = strtoull(argv[1], NULL, 10);
	long count = strtol(argv[2], NULL, 10);
	int out = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	const char *files[3] = {"/proc/stat", "/proc/diskstats", "/proc/net/dev"};
	int fd[3];
	for (int i = 0; i < 3; i++)
		fd[i] = open(files[i], O_RDONLY);
	int tfd = timerfd_create(CLOCK_MONOTONIC, 0);
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	uint64_t start = (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec;
	for (long k = 0; k < count; k++) {
		uint64_t dl = start + (uint64_t)k * period;
		struct itimerspec its = {.it_value = {(time_t)(dl / 1000000000ULL), (long)(dl % 1000000000ULL)}};
		timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL);
		uint64_t exp;
		if (read(tfd, &exp, sizeof(exp)) < 0)
			return 1;
		clock_gettime(CLOCK_REALTIME, &now);
		size_t n = 0;
		vals[n++] = (uint64_t)now.tv_sec;
		for (int i = 0; i < 3; i++) {
			ssize_t r = pread(fd[i], buf[i], sizeof(buf[i]), 0);
			if (r > 0)
				n = parse_all(buf[i], (size_t)r, vals, n);
		}
		char *p = line;
		for (size_t i = 0; i < n; i++) {
			p = u64(p, vals[i]);
			*p++ = i + 1 < n ? ',' : '\n';
		}
		if (write(out, line, (size_t)(p - line)) < 0)
			return 1;
	}
	close(out);
	return 0;
}

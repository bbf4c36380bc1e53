/* SPDX-License-Identifier: MIT */
/* filecost.c - what one pread(2) of each given file costs, as the sampler
 * reads them (opened once, read whole from offset 0 again and again):
 *
 *   cc -O2 -o /tmp/filecost bench/vm/filecost.c
 *   /tmp/filecost 20000 /proc/PID/stat /sys/fs/cgroup/.../memory.stat ...
 *
 * prints, per file, the mean wall time of one read over N reads (after one
 * untimed read) and the file's size.  A hot loop: the sampler, reading 60
 * VMs' files once a tick, meets colder caches and pays ~2x (README,
 * Per-VM statistics, 2026-11-28). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
	static char buf[65536];
	if (argc < 3) {
		fprintf(stderr, "usage: filecost N FILE...\n");
		return 2;
	}
	long n = strtol(argv[1], NULL, 10);
	if (n < 1)
		return 2;
	for (int i = 2; i < argc; i++) {
		int fd = open(argv[i], O_RDONLY | O_CLOEXEC);
		ssize_t len = fd >= 0 ? pread(fd, buf, sizeof(buf), 0) : -1;
		if (len < 0) {
			printf("%-90s cannot be read\n", argv[i]);
			if (fd >= 0)
				close(fd);
			continue;
		}
		double t0 = now_ns();
		for (long k = 0; k < n; k++)
			if (pread(fd, buf, sizeof(buf), 0) < 0)
				break;
		printf("%-90s %7.2f us %6zd bytes\n", argv[i], (now_ns() - t0) / (double)n / 1000, len);
		close(fd);
	}
	return 0;
}

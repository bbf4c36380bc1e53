/* SPDX-License-Identifier: MIT */
/* bench_compress.c - what compress: zstd costs and gains on a file:
 * the sampler's own compressor (vms_rotate_compress, zstd level 3) on a
 * copy of FILE, then libvmsampler reading every frame of the .zst and of
 * the original (the CPU time of each, in this process).
 *
 *   bench_compress FILE.vms...     one line per file:
 *   file=... in_bytes=... zst_bytes=... ratio=... compress_cpu_s=...
 *   compress_mb_per_cpu_s=... read_vms_cpu_s=... read_zst_cpu_s=...
 *   read_ratio=... frames=...
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <vmsampler/reader.h>

#include "rotate.h"

static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int copy(const char *from, int dirfd, const char *to)
{
	int in = open(from, O_RDONLY | O_CLOEXEC), out = openat(dirfd, to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	static char buf[1 << 20];
	ssize_t n;
	int r = in >= 0 && out >= 0 ? 0 : -1;
	while (r == 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			r = -1;
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out) < 0)
		r = -1;
	return r;
}

/* Every frame and every value through libvmsampler; frames, or -1. */
static long read_all(const char *path, double *cpu)
{
	struct vms_reader *r;
	double t0 = cpu_s();
	long frames = 0;
	volatile uint64_t sum = 0;
	if (vms_reader_open(&r, path, 0) < 0) {
		fprintf(stderr, "%s\n", vms_reader_error(r));
		vms_reader_close(r);
		return -1;
	}
	while (vms_reader_next(r) > 0) {
		uint32_t n = vms_reader_ncols(r);
		for (uint32_t i = 0; i < n; i++) {
			uint64_t v;
			if (vms_reader_value(r, i, &v) == 0)
				sum += v;
		}
		frames++;
	}
	if (vms_reader_error(r)[0])
		fprintf(stderr, "%s: %s\n", path, vms_reader_error(r));
	vms_reader_close(r);
	*cpu = cpu_s() - t0;
	return frames;
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/vms-bench-compress.XXXXXX";
	if (argc < 2 || !mkdtemp(dir)) {
		fprintf(stderr, "usage: bench_compress FILE.vms...\n");
		return 2;
	}
	int dirfd = open(dir, O_RDONLY | O_DIRECTORY);
	int rc = 0;
	for (int i = 1; i < argc; i++) {
		char err[256], zpath[4200];
		struct stat a, b;
		if (copy(argv[i], dirfd, "f.vms") < 0 || fstatat(dirfd, "f.vms", &a, 0) < 0) {
			fprintf(stderr, "%s: cannot copy\n", argv[i]);
			rc = 1;
			continue;
		}
		double t0 = cpu_s();
		if (vms_rotate_compress(dirfd, "f.vms", err, sizeof(err)) < 0) {
			fprintf(stderr, "%s: %s\n", argv[i], err);
			rc = 1;
			continue;
		}
		double ccpu = cpu_s() - t0;
		fstatat(dirfd, "f.vms.zst", &b, 0);
		snprintf(zpath, sizeof(zpath), "%s/f.vms.zst", dir);
		double rv, rz;
		long fv = read_all(argv[i], &rv), fz = read_all(zpath, &rz);
		if (fv != fz || fv < 0) {
			fprintf(stderr, "%s: %ld frames, %ld from the .zst\n", argv[i], fv, fz);
			rc = 1;
		}
		printf("file=%s in_bytes=%lld zst_bytes=%lld ratio=%.2f compress_cpu_s=%.3f "
		       "compress_mb_per_cpu_s=%.1f read_vms_cpu_s=%.3f read_zst_cpu_s=%.3f read_ratio=%.2f frames=%ld\n",
		       argv[i], (long long)a.st_size, (long long)b.st_size, (double)a.st_size / (double)b.st_size, ccpu,
		       (double)a.st_size / 1e6 / ccpu, rv, rz, rz / rv, fv);
		unlinkat(dirfd, "f.vms.zst", 0);
	}
	close(dirfd);
	rmdir(dir);
	return rc;
}

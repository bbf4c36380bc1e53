/* SPDX-License-Identifier: MIT */
/* fuzz_sources.c - the procstat, diskstats and netdev sources, through
 * their ops, on files made from the input.
 *
 * Input: one flags byte, then file A, optionally a NUL byte and file B.
 *   flags & 3: 0 procstat, 1 diskstats, 2 netdev (3: diskstats)
 *   flags & 4: per_cpu / partitions;  flags & 8: exclude "l*"
 * The source declares on A, then samples B (B = A without a NUL).
 * Invariants checked:
 *   - sample returns 0 or VMS_RESCHEMA, never an error, and on 0 every
 *     declared slot was written;
 *   - after declaring on a file, sampling that same file returns 0, twice,
 *     with the same values (a file never contradicts itself). */
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "source.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

extern const struct vms_source_ops vms_source_procstat;
extern const struct vms_source_ops vms_source_diskstats;
extern const struct vms_source_ops vms_source_netdev;

#define CANARY 0x5a5a5a5a5a5a5a5aull

static char root[64];
static int rootfd = -1;

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static void cleanup(void)
{
	if (root[0])
		nftw(root, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

static void setup(void)
{
	if (rootfd >= 0)
		return;
	snprintf(root, sizeof(root), "/tmp/vmsfuzz.XXXXXX");
	if (!mkdtemp(root))
		abort();
	atexit(cleanup);
	rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0 || mkdirat(rootfd, "net", 0755) < 0)
		abort();
}

static void put(const char *rel, const uint8_t *d, size_t n)
{
	int fd = openat(rootfd, rel, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || (n && write(fd, d, n) != (ssize_t)n))
		abort();
	close(fd);
}

/* The sources fuzzed here (procstat, diskstats, netdev, ...) read no
 * clock, queue no events and have no VM set. */
static const struct vms_source_env env = {0};

static uint64_t *declare(struct vms_source *src, uint32_t *ncols, int *r)
{
	struct vms_schema_builder b;
	vms_schema_builder_init(&b);
	vms_schema_builder_source(&b, 0);
	*r = src->ops->declare(src, &b, &env);
	*ncols = vms_schema_builder_count(&b);
	vms_schema_builder_free(&b);
	src->ncols = *ncols;
	return malloc((*ncols + 1) * sizeof(uint64_t));
}

static int sample(struct vms_source *src, uint64_t *slots, uint32_t ncols)
{
	static uint64_t idx; /* a new tick each time: shared files are read again */
	struct vms_tick_ctx t = {.idx = ++idx};
	for (uint32_t i = 0; i <= ncols; i++)
		slots[i] = CANARY;
	int r = src->ops->sample(src, slots, &t);
	if (r != 0 && r != VMS_RESCHEMA)
		abort();
	if (slots[ncols] != CANARY)
		abort(); /* wrote past its columns */
	if (r == 0)
		for (uint32_t i = 0; i < ncols; i++)
			if (slots[i] == CANARY)
				abort(); /* a declared slot left unwritten */
	return r;
}

/* Declared on the file now in place: sampling it must settle. */
static void settled(struct vms_source *src, uint64_t *slots, uint32_t ncols)
{
	if (sample(src, slots, ncols) != 0)
		abort();
	uint64_t *again = malloc((ncols + 1) * sizeof(uint64_t));
	memcpy(again, slots, (ncols + 1) * sizeof(uint64_t));
	if (sample(src, slots, ncols) != 0 || memcmp(again, slots, ncols * sizeof(uint64_t)))
		abort();
	free(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct vms_source_ops *const ops[] = {
		&vms_source_procstat, &vms_source_diskstats, &vms_source_netdev, &vms_source_diskstats,
	};
	static const char *const files[] = {"stat", "diskstats", "net/dev", "diskstats"};
	struct vms_source_conf sc = {.enabled = true};
	struct vms_source src = {0};
	uint32_t ncols;
	int r;

	if (size < 1)
		return 0;
	setup();
	unsigned flags = data[0];
	const uint8_t *a = data + 1, *b = a;
	size_t alen = size - 1, blen = alen;
	const uint8_t *nul = memchr(a, 0, alen);
	if (nul) {
		alen = (size_t)(nul - a);
		b = nul + 1;
		blen = size - 1 - alen - 1;
	}
	sc.per_cpu = sc.partitions = flags & 4;
	if (flags & 8)
		vms_globs_add(&sc.exclude, "l*");

	src.ops = ops[flags & 3];
	src.sconf = &sc;
	src.proc_dirfd = rootfd;
	src.priv = calloc(1, src.ops->priv_size);
	put(files[flags & 3], a, alen);
	if (src.ops->open(&src, &env) < 0)
		abort(); /* the file is there */
	uint64_t *slots = declare(&src, &ncols, &r);
	if (r == 0) {
		settled(&src, slots, ncols);
		if (nul) {
			put(files[flags & 3], b, blen);
			if (sample(&src, slots, ncols) == VMS_RESCHEMA) {
				free(slots);
				slots = declare(&src, &ncols, &r);
				if (r == 0)
					settled(&src, slots, ncols);
			}
		}
	}
	free(slots);
	src.ops->close(&src);
	free(src.priv);
	vms_globs_clear(&sc.exclude);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/* bench_live.c - costs of the live ring (bench/live/run.sh runs it).
 *
 *   bench_live reader COLS ROUNDS
 *     A writer process fills a ring of 256 slots of COLS values, then a
 *     reader process (this one) reads the 256 frames; ROUNDS times.  The
 *     frames were just written by another process on another core, as in
 *     real use (cold: 256 frames of 2,000 columns are 4 MB, they come
 *     from the shared cache or memory).  Reported per frame (median of
 *     the rounds):
 *       copy+validate   vms_ring_read (seqlock copy and check)
 *       reader_next     vms_reader_next (the library: the same, plus the
 *                       write_seq load and schema lookup)
 *       view+check      vms_reader_view + vms_reader_view_check
 *                       (zero-copy: validate only)
 *       view+sum+check  the same, summing every value in place
 *     and copy+validate again over the last 8 frames, repeatedly (warm:
 *     the cost of the protocol and the copy without the cache misses).
 *   bench_live writer COLS FRAMES READERS
 *     The writer's cost per frame (fill COLS values + commit) into a file
 *     ring, with READERS reader processes following it (each reading every
 *     frame with vms_reader_next and sleeping 1 ms when there is none, as
 *     tail does).  Reports ns per frame. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <vmsampler/reader.h>

#include "../../src/common/binfmt.h"
#include "../../src/common/ring.h"
#include "../../src/common/schema.h"

static uint64_t now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct vms_schema *schema(uint32_t n)
{
	struct vms_col *c = calloc(n, sizeof(*c));
	char (*names)[24] = calloc(n, 24);
	struct vms_schema *s = NULL;
	for (uint32_t i = 0; i < n; i++) {
		snprintf(names[i], 24, "c.%u", i);
		c[i] = (struct vms_col){.name = names[i], .key = "", .kind = VMS_KIND_COUNTER,
					.unit = VMS_UNIT_COUNT, .wrap_bits = 64};
	}
	if (vms_schema_new(1, 0, n, c, &s) < 0)
		exit(1);
	free(c);
	free(names);
	return s;
}

static void put(struct vms_ring *r, uint32_t cols)
{
	struct vms_frame *f = vms_ring_begin(r);
	f->t_mono_ns = now();
	f->gen = 1;
	f->ncols = cols;
	for (uint32_t i = 0; i < cols; i++)
		f->v[i] = r->next_seq * 1000 + i;
	vms_ring_commit(r);
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static char path[256];

static void make(struct vms_ring *r, struct vms_schema *s, uint32_t slots, uint64_t iv)
{
	char err[256];
	struct vms_ring_file_opts o = {.interval_ns = iv};
	unlink(path);
	if (vms_ring_create_file(r, path, slots, s->ncols, vms_bin_head_size(s), &o, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: %s\n", path, err);
		exit(1);
	}
	vms_bin_ring_publish(r, s);
}

static int bench_reader(uint32_t cols, int rounds)
{
	const uint32_t N = 256;
	struct vms_schema *s = schema(cols);
	struct vms_ring w;
	make(&w, s, N, 1000000);
	int go[2], done[2];
	if (pipe(go) < 0 || pipe(done) < 0)
		return 1;
	pid_t pid = fork();
	if (pid == 0) {
		char c;
		close(go[1]); /* EOF when the parent is done */
		while (read(go[0], &c, 1) == 1) {
			for (uint32_t i = 0; i < N; i++)
				put(&w, cols);
			if (write(done[1], "d", 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	struct vms_ring rv;
	char err[256];
	if (vms_ring_open_read(&rv, path, err, sizeof(err)) < 0)
		return 1;
	struct vms_reader *rd;
	if (vms_reader_open(&rd, path, 0) < 0)
		return 1;
	struct vms_frame *dst = malloc(vms_frame_size(cols));
	double *t[4];
	for (int k = 0; k < 4; k++)
		t[k] = calloc((size_t)rounds, sizeof(double));
	uint64_t seq = 1, bad = 0;
	volatile uint64_t sink = 0;
	for (int round = 0; round < rounds; round++) {
		int k = round % 4, idx = round / 4;
		char c;
		if (write(go[1], "g", 1) != 1 || read(done[0], &c, 1) != 1)
			return 1;
		uint64_t t0 = now();
		if (k == 0) {
			for (uint32_t i = 0; i < N; i++, seq++)
				bad += vms_ring_read(&rv, seq, dst, cols) != 0;
			if (vms_reader_next(rd) < 0) /* keep the library reader in step */
				return 1;
		} else {
			const struct vms_frame *f;
			for (uint32_t i = 0; i < N; i++, seq++) {
				if (k == 1) {
					bad += vms_reader_next(rd) != 1;
				} else {
					bad += vms_reader_view(rd, &f) != 1;
					if (k == 3)
						for (uint32_t j = 0; j < cols; j++)
							sink += f->v[j];
					bad += vms_reader_view_check(rd) != 0;
				}
			}
		}
		uint64_t t1 = now();
		if (k == 0) {
			/* the library reader skips these frames unmeasured */
			while (vms_reader_next(rd) == 1)
				;
		}
		t[k][idx] = (double)(t1 - t0) / N;
	}
	close(go[1]);
	waitpid(pid, NULL, 0);
	/* warm: the last 8 frames again and again, in this core's cache */
	const int W = 8, REP = 2000;
	uint64_t t0 = now();
	for (int rep = 0; rep < REP; rep++)
		for (int i = 0; i < W; i++)
			bad += vms_ring_read(&rv, seq - (uint64_t)W + (uint64_t)i, dst, cols) != 0;
	double warm = (double)(now() - t0) / (W * REP);
	/* the floor: the same copy (memcpy) of the same bytes, no protocol */
	t0 = now();
	for (int rep = 0; rep < REP; rep++)
		for (int i = 0; i < W; i++) {
			uint64_t q = seq - (uint64_t)W + (uint64_t)i;
			vms_ring_copy(dst, rv.slots + (size_t)((q - 1) & rv.mask) * rv.slot_size + 16, vms_frame_size(cols));
			__asm__ volatile("" ::: "memory");
		}
	double floor_ns = (double)(now() - t0) / (W * REP);
	const char *names[4] = {"copy+validate (vms_ring_read)", "vms_reader_next (copy+validate)",
				"view+check (zero-copy, validate only)", "view+sum+check (zero-copy, every value)"};
	printf("reader, %u columns (%zu-byte frames), %d rounds of %u frames written by another process:\n",
	       cols, vms_frame_size(cols), rounds, N);
	for (int k = 0; k < 4; k++) {
		int n = rounds / 4;
		qsort(t[k], (size_t)n, sizeof(double), cmp);
		printf("  %-42s median %7.1f ns/frame  (p10 %7.1f, p90 %7.1f)\n", names[k], t[k][n / 2],
		       t[k][n / 10], t[k][n * 9 / 10]);
	}
	printf("  %-42s mean   %7.1f ns/frame  (the same 8 frames again: in this core's cache)\n",
	       "copy+validate, warm", warm);
	printf("  %-42s mean   %7.1f ns/frame  (the floor: the same copy of the same 8 frames, no protocol)\n",
	       "plain copy, warm", floor_ns);
	printf("  invalid reads: %llu (must be 0: nothing overwrote the frames)\n", (unsigned long long)bad);
	vms_reader_close(rd);
	vms_ring_destroy(&rv);
	vms_ring_destroy(&w);
	unlink(path);
	return bad != 0;
}

static int bench_writer(uint32_t cols, uint64_t frames, int readers)
{
	struct vms_schema *s = schema(cols);
	struct vms_ring w;
	make(&w, s, 1024, 10000);
	pid_t pids[64];
	int ready[2];
	if (pipe(ready) < 0)
		return 1;
	for (int i = 0; i < readers; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			struct vms_reader *rd;
			if (vms_reader_open(&rd, path, 0) < 0)
				_exit(1);
			if (write(ready[1], "r", 1) != 1)
				_exit(1);
			uint64_t n = 0;
			int e;
			while ((e = vms_reader_next(rd)) >= 0) {
				if (e == 1) {
					n++;
					continue;
				}
				nanosleep(&(struct timespec){0, 1000000}, NULL);
			}
			fprintf(stderr, "    reader %d: %llu frames, %llu missed\n", i, (unsigned long long)n,
				(unsigned long long)vms_reader_missed(rd));
			_exit(0);
		}
	}
	for (int i = 0; i < readers; i++) {
		char c;
		if (read(ready[0], &c, 1) != 1)
			return 1;
	}
	/* paced like a sampler: a frame, then a short pause, so the readers
	 * catch up and touch the lines the writer writes next */
	uint64_t total = 0;
	for (uint64_t k = 0; k < frames; k++) {
		uint64_t t0 = now();
		put(&w, cols);
		total += now() - t0;
		if (k % 16 == 15)
			nanosleep(&(struct timespec){0, 200000}, NULL);
	}
	vms_ring_destroy(&w);
	for (int i = 0; i < readers; i++)
		waitpid(pids[i], NULL, 0);
	printf("writer, %u columns, %llu frames, %d readers attached: %.1f ns/frame (fill + commit)\n", cols,
	       (unsigned long long)frames, readers, (double)total / (double)frames);
	unlink(path);
	return 0;
}

int main(int argc, char **argv)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(path, sizeof(path), "%s/vms-bench-%d", tmp && *tmp ? tmp : "/dev/shm", (int)getpid());
	if (argc >= 4 && strcmp(argv[1], "reader") == 0)
		return bench_reader((uint32_t)atoi(argv[2]), atoi(argv[3]));
	if (argc >= 5 && strcmp(argv[1], "writer") == 0)
		return bench_writer((uint32_t)atoi(argv[2]), strtoull(argv[3], NULL, 10), atoi(argv[4]));
	fprintf(stderr, "usage: bench_live reader COLS ROUNDS | writer COLS FRAMES READERS\n");
	return 2;
}

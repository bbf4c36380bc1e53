/* SPDX-License-Identifier: MIT */
/* stress_ring.c - a torn read is never returned as data.
 *
 * One writer commits frames into a small live ring as fast as it can (no
 * sleep); several readers follow it through libvmsampler, half of them
 * copying (vms_reader_next), half reading in place (vms_reader_view, then
 * vms_reader_view_check).  Every frame carries random values and, in its
 * last column, a checksum of them and of its seq; a reader verifies every
 * frame it is given (and every view that its check says is valid).  One
 * bad frame fails the test.  Reported per reader: frames verified, frames
 * missed (overwritten before it got there), torn reads caught.
 *
 *   stress_ring [procs|threads]     (default procs: readers are processes)
 *   VMS_STRESS_FRAMES=N  frames to write (default 300000)
 *   VMS_STRESS_READERS=N readers (default 4)
 *   VMS_STRESS_COLS=N    values per frame (default 64)
 *   VMS_STRESS_SLOTS=N   ring slots (default 16: small, so readers get lapped)
 *
 * The threads mode exists for ThreadSanitizer (-Db_sanitize=thread), which
 * sees only one process: it checks the seqlock protocol itself.  Thread
 * readers read through the writer's own mapping: to TSan two mappings of
 * one file are unrelated addresses, and it would see no race at all.  (Built
 * without src/sampler on the include path: its sched.h would shadow <sched.h>,
 * which <pthread.h> needs; and TSan does not intercept C11 thrd_create.) */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <vmsampler/reader.h>

#include "binfmt.h"
#include "reader_int.h"
#include "ring.h"
#include "schema.h"

static uint64_t nframes = 300000, ncols = 64, nslots = 16;
static bool threads_mode;
static unsigned nreaders = 4;
static char path[256];

static uint64_t env_u64(const char *name, uint64_t def)
{
	const char *v = getenv(name);
	return v && *v ? strtoull(v, NULL, 10) : def;
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

static uint64_t checksum(uint64_t seq, const uint64_t *v, uint64_t n)
{
	uint64_t h = mix(seq);
	for (uint64_t i = 0; i < n; i++)
		h = mix(h ^ v[i]);
	return h;
}

static uint64_t mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct vms_schema *make_schema(void)
{
	struct vms_col *c = calloc(ncols, sizeof(*c));
	char (*names)[24] = calloc(ncols, 24);
	struct vms_schema *s = NULL;
	for (uint64_t i = 0; i < ncols; i++) {
		snprintf(names[i], 24, "x.%llu", (unsigned long long)i);
		c[i] = (struct vms_col){.name = names[i], .key = "", .kind = VMS_KIND_COUNTER,
					.unit = VMS_UNIT_COUNT, .wrap_bits = 64};
	}
	if (vms_schema_new(1, 0, (uint32_t)ncols, c, &s) < 0)
		abort();
	free(c);
	free(names);
	return s;
}

static struct vms_ring ring;
static struct vms_schema *schema;

/* an event every EV_EVERY frames: its subject and detail say the same
 * number two ways, so that a torn copy shows */
#define EV_EVERY 5
static uint64_t nevents;

static void writer(void)
{
	uint64_t rng = 0x9E3779B97F4A7C15ull;
	uint64_t *tmp = malloc(ncols * sizeof(*tmp));
	for (uint64_t k = 0; k < nframes; k++) {
		struct vms_frame *f = vms_ring_begin(&ring);
		uint64_t seq = ring.next_seq;
		for (uint64_t i = 0; i + 1 < ncols; i++) {
			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			tmp[i] = rng == VMS_VALUE_NONE ? 0 : rng;
			VMS_RING_STORE(&f->v[i], tmp[i]);
		}
		VMS_RING_STORE(&f->v[ncols - 1], checksum(seq, tmp, ncols - 1));
		VMS_RING_STORE(&f->t_mono_ns, mono());
		VMS_RING_STORE(&f->gen, 1u);
		VMS_RING_STORE(&f->ncols, (uint32_t)ncols);
		if (k % EV_EVERY == 0) {
			struct vms_ring_event ev = {.type = 99, .before_seq = seq, .t_mono_ns = k};
			snprintf(ev.subject, sizeof(ev.subject), "%llu", (unsigned long long)k);
			snprintf(ev.detail, sizeof(ev.detail), "%016llx", (unsigned long long)mix(k));
			vms_ring_event_put(&ring, &ev);
			nevents++;
		}
		vms_ring_commit(&ring);
	}
	free(tmp);
}

struct stats {
	uint64_t ok, missed, torn, bad, views_discarded;
	uint64_t ev_ok, ev_lost, ev_bad;
	int err;
};

static int ready_fd = -1;        /* procs: a reader says it is attached */
static unsigned threads_ready;   /* threads: the same, counted */

static void reader(unsigned id, struct stats *st)
{
	struct vms_reader *r;
	bool view = id % 2;
	memset(st, 0, sizeof(*st));
	int oe = threads_mode ? vms_rdr_open_mapping(&r, ring.hdr, ring.map_len) : vms_reader_open(&r, path, 0);
	if (oe < 0) {
		fprintf(stderr, "reader %u: %s\n", id, vms_reader_error(r));
		st->err = 1;
		vms_reader_close(r);
		return;
	}
	/* attached before the first frame: every frame is seen or counted */
	if (ready_fd >= 0 && write(ready_fd, "r", 1) != 1)
		st->err = 1;
	__atomic_fetch_add(&threads_ready, 1, __ATOMIC_RELEASE);
	/* the copying readers take the events too */
	if (!view)
		vms_rdr_want_events(r, true);
	uint64_t *tmp = malloc(ncols * sizeof(*tmp)), last = 0, ev_last = 0;
	bool ev_first = true;
	for (;;) {
		int e;
		const struct vms_frame *f = NULL;
		if (view) {
			e = vms_reader_view(r, &f);
		} else {
			e = vms_reader_next(r);
			f = vms_reader_frame(r);
		}
		if (e == 0)
			continue; /* spin: the writer does not sleep either */
		if (e < 0)
			break;
		if (e == 2) {
			const struct vms_event *ev = vms_rdr_event(r);
			char want[32];
			uint64_t k = strtoull(ev->subject, NULL, 10);
			snprintf(want, sizeof(want), "%016llx", (unsigned long long)mix(k));
			/* in order, each once, whole, before the frame it names */
			if (ev->type != 99 || k != ev->t_mono_ns || strcmp(want, ev->detail) != 0 ||
			    (!ev_first && k <= ev_last) || ev->before_seq <= last) {
				fprintf(stderr, "reader %u: BAD event %s/%s (after %llu)\n", id, ev->subject,
					ev->detail, (unsigned long long)ev_last);
				st->ev_bad++;
			} else {
				st->ev_ok++;
			}
			ev_first = false;
			ev_last = k;
			continue;
		}
		uint64_t seq = __atomic_load_n(&f->seq, __ATOMIC_RELAXED);
		for (uint64_t i = 0; i < ncols; i++)
			tmp[i] = __atomic_load_n(&f->v[i], __ATOMIC_RELAXED);
		bool good = tmp[ncols - 1] == checksum(seq, tmp, ncols - 1) &&
			    __atomic_load_n(&f->ncols, __ATOMIC_RELAXED) == ncols && seq > last;
		if (view && vms_reader_view_check(r) < 0) {
			st->views_discarded++; /* what we computed is void */
			continue;
		}
		if (!good) {
			fprintf(stderr, "reader %u: BAD frame seq %llu (after %llu)\n", id,
				(unsigned long long)seq, (unsigned long long)last);
			st->bad++;
		} else {
			st->ok++;
		}
		last = seq;
	}
	st->missed = vms_reader_missed(r);
	st->torn = vms_reader_torn(r);
	st->ev_lost = vms_rdr_events_lost(r);
	if (st->ok + st->missed != nframes) {
		fprintf(stderr, "reader %u: %llu ok + %llu missed != %llu written (%s)\n", id,
			(unsigned long long)st->ok, (unsigned long long)st->missed,
			(unsigned long long)nframes, vms_reader_error(r));
		st->err = 1;
	}
	free(tmp);
	vms_reader_close(r);
}

static struct stats *tstats;

static void *reader_thread(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg;
	reader(id, &tstats[id]);
	return NULL;
}

int main(int argc, char **argv)
{
	bool threads = threads_mode = argc > 1 && strcmp(argv[1], "threads") == 0;
	nframes = env_u64("VMS_STRESS_FRAMES", nframes);
	nreaders = (unsigned)env_u64("VMS_STRESS_READERS", nreaders);
	ncols = env_u64("VMS_STRESS_COLS", ncols);
	nslots = env_u64("VMS_STRESS_SLOTS", nslots);
	if (ncols < 2 || nreaders < 1 || nreaders > 64)
		return 2;
	const char *tmp = getenv("TMPDIR");
	snprintf(path, sizeof(path), "%s/vms-stress-%d", tmp && *tmp ? tmp : "/tmp", (int)getpid());

	schema = make_schema();
	char err[256];
	struct vms_ring_file_opts o = {.interval_ns = 1000000};
	if (vms_ring_create_file(&ring, path, (uint32_t)nslots, (uint32_t)ncols, vms_bin_head_size(schema), &o,
				 err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: %s\n", path, err);
		return 1;
	}
	vms_bin_ring_publish(&ring, schema);

	struct stats *st = tstats = calloc(nreaders, sizeof(*st));
	pthread_t *th = calloc(nreaders, sizeof(*th));
	pid_t *pids = calloc(nreaders, sizeof(*pids));
	int (*pipes)[2] = calloc(nreaders, sizeof(*pipes));
	int ready[2];
	if (pipe(ready) < 0)
		return 1;
	ready_fd = threads ? -1 : ready[1];
	for (unsigned i = 0; i < nreaders; i++) {
		if (threads) {
			pthread_create(&th[i], NULL, reader_thread, (void *)(uintptr_t)i);
			continue;
		}
		if (pipe(pipes[i]) < 0)
			return 1;
		pids[i] = fork();
		if (pids[i] == 0) {
			struct stats s;
			reader(i, &s);
			_exit(write(pipes[i][1], &s, sizeof(s)) == (ssize_t)sizeof(s) ? 0 : 1);
		}
		close(pipes[i][1]);
	}
	for (unsigned i = 0; i < nreaders; i++) {
		char c;
		if (threads) {
			while (__atomic_load_n(&threads_ready, __ATOMIC_ACQUIRE) < nreaders)
				sched_yield();
			break;
		}
		if (read(ready[0], &c, 1) != 1)
			return 1;
	}
	close(ready[0]);
	close(ready[1]);
	uint64_t t0 = mono();
	writer();
	double secs = (double)(mono() - t0) / 1e9;
	/* CLOSED: readers finish (threads read the writer's mapping: it
	 * stays until they are done) */
	if (threads)
		__atomic_fetch_or(&ring.hdr->flags, VMS_RING_F_CLOSED, __ATOMIC_RELEASE);
	else
		vms_ring_destroy(&ring);
	int rc = 0;
	for (unsigned i = 0; i < nreaders; i++) {
		if (threads) {
			pthread_join(th[i], NULL);
		} else {
			int ws;
			if (read(pipes[i][0], &st[i], sizeof(st[i])) != (ssize_t)sizeof(st[i]))
				st[i].err = 1;
			waitpid(pids[i], &ws, 0);
			close(pipes[i][0]);
		}
	}
	uint64_t ok = 0, missed = 0, torn = 0, bad = 0, disc = 0;
	printf("%s: %llu frames of %llu values into %llu slots in %.2f s (%.0f frames/s), %u readers (%s)\n",
	       threads ? "threads" : "processes", (unsigned long long)nframes, (unsigned long long)ncols,
	       (unsigned long long)nslots, secs, (double)nframes / secs, nreaders,
	       "even: copy, odd: zero-copy view");
	for (unsigned i = 0; i < nreaders; i++) {
		printf("  reader %u (%s): %llu verified, %llu missed, %llu torn reads caught, %llu views discarded, %llu bad\n",
		       i, i % 2 ? "view" : "copy", (unsigned long long)st[i].ok, (unsigned long long)st[i].missed,
		       (unsigned long long)st[i].torn, (unsigned long long)st[i].views_discarded,
		       (unsigned long long)st[i].bad);
		ok += st[i].ok;
		missed += st[i].missed;
		torn += st[i].torn;
		bad += st[i].bad;
		disc += st[i].views_discarded;
		if (i % 2 == 0)
			printf("  reader %u: %llu events verified, %llu lost, %llu bad (of %llu)\n", i,
			       (unsigned long long)st[i].ev_ok, (unsigned long long)st[i].ev_lost,
			       (unsigned long long)st[i].ev_bad, (unsigned long long)nevents);
		if (i % 2 == 0 && (st[i].ev_bad || st[i].ev_ok + st[i].ev_lost != nevents))
			rc = 1;
		if (st[i].err || st[i].bad)
			rc = 1;
	}
	printf("total: %llu verified, %llu missed, %llu torn caught, %llu views discarded, %llu bad\n",
	       (unsigned long long)ok, (unsigned long long)missed, (unsigned long long)torn,
	       (unsigned long long)disc, (unsigned long long)bad);
	if (threads)
		vms_ring_destroy(&ring);
	unlink(path);
	vms_schema_unref(schema);
	free(st);
	free(th);
	free(pids);
	free(pipes);
	return rc;
}

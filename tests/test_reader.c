/* SPDX-License-Identifier: MIT */
/* libvmsampler (include/vmsampler/reader.h) over streams and live rings:
 *   - every frame of a three-generation stream comes back exactly, with
 *     columns by name and glob, missing values as -ENODATA and rates equal
 *     to the rates plan's;
 *   - a damaged stream: the frames before the damage, then -EBADMSG
 *     naming the record and offset; a torn tail is the end, noted;
 *   - a growing stream is followed (tail -f);
 *   - a ring: frames and schema, exact count of frames missed when the
 *     reader fell behind, zero-copy view invalidated by an overwrite,
 *     growth (the file is replaced, the reader reattaches and keeps its
 *     place), another version refused with a message, a snapshot in
 *     memory; a new run on the ring with another schema under the same
 *     generation: the rates follow the new schema;
 *   - creation safety: symlink, foreign file, live ring refused; a stale
 *     ring replaced and its readers told; mode 0640;
 *   - a writer killed with SIGKILL: its frames stay readable, the reader
 *     reports it gone within seconds, never hangs. */
#include "testutil.h"

#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <vmsampler/reader.h>

#include "binfmt.h"
#include "binutil.h"
#include "reader_int.h"
#include "rates.h"
#include "ring.h"
#include "sink.h"


static uint64_t mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* ---- streams ------------------------------------------------------------------ */

/* Each column's last present value and its time, by name (and kind,
 * scale, key), kept here independently of the library: a rate is over
 * its column's own interval, since the last frame that had it. */
struct lastval {
	const struct vms_col *c;
	uint64_t v, t;
};
static struct lastval lastvals[512];
static unsigned nlastvals;

static struct lastval *lastval_of(const struct vms_col *c)
{
	for (unsigned k = 0; k < nlastvals; k++) {
		const struct vms_col *o = lastvals[k].c;
		if (strcmp(o->name, c->name) == 0) {
			if (o->kind != c->kind || o->scale != c->scale || strcmp(o->key, c->key))
				lastvals[k] = (struct lastval){c, VMS_NONE, 0}; /* not a continuation */
			return &lastvals[k];
		}
	}
	assert_true(nlastvals < VMS_ARRAY_SIZE(lastvals));
	lastvals[nlastvals] = (struct lastval){c, VMS_NONE, 0};
	return &lastvals[nlastvals++];
}

static void test_stream_frames_columns_rates(void **state)
{
	(void)state;
	struct run run;
	run_make(&run, 300);
	assert_int_equal(feed_sink(&vms_sink_bin, tp("a.vms"), &run, 0, run.n, true), 0);

	struct vms_reader *r;
	assert_int_equal(vms_reader_open(&r, tp("a.vms"), 0), 0);
	assert_int_equal(vms_reader_kind(r), VMS_READER_FILE);
	assert_int_equal(vms_reader_rates_enable(r), 0);
	struct vms_rate_plan *plan = NULL;
	const struct vms_schema *plan_s = NULL;
	double *want = NULL;
	uint64_t prev[256];
	double dts[256];
	size_t i = 0;
	nlastvals = 0;
	unsigned changes = 0, missing = 0, rates_checked = 0;
	int e;
	while ((e = vms_reader_next(r)) == 1) {
		assert_true(i < run.n);
		const struct vms_frame *f = vms_reader_frame(r), *o = run.f[i];
		assert_frame_eq(f, o);
		assert_int_equal(vms_reader_seq(r), o->seq);
		assert_int_equal(vms_reader_time_mono_ns(r), o->t_mono_ns);
		assert_int_equal(vms_reader_time_real_ns(r), o->t_real_ns);
		assert_int_equal(vms_reader_gen(r), run.sch[i]->gen);
		assert_int_equal(vms_reader_schema_changed(r), i == 0 || run.sch[i] != run.sch[i - 1]);
		changes += vms_reader_schema_changed(r);
		const struct vms_schema *s = run.sch[i];
		assert_int_equal(vms_reader_ncols(r), s->ncols);
		for (uint32_t c = 0; c < s->ncols; c++) {
			assert_int_equal(vms_reader_column(r, s->cols[c].name), (int)c);
			uint64_t v;
			int x = vms_reader_value(r, c, &v);
			if (o->v[c] == VMS_NONE) {
				assert_int_equal(x, -ENODATA);
				missing++;
			} else {
				assert_int_equal(x, 0);
				assert_true(v == o->v[c]);
			}
		}
		uint64_t v;
		assert_int_equal(vms_reader_value(r, s->ncols, &v), -ERANGE);
		assert_int_equal(vms_reader_column(r, "no.such.column"), -ENOENT);
		/* rates: the plan's numbers over each column's interval */
		assert_true(s->ncols <= VMS_ARRAY_SIZE(prev));
		for (uint32_t c = 0; c < s->ncols; c++) {
			struct lastval *l = lastval_of(&s->cols[c]);
			prev[c] = l->v;
			dts[c] = l->t ? (double)(o->t_mono_ns - l->t) / 1e9 : 0;
			if (o->v[c] != VMS_NONE) {
				l->v = o->v[c];
				l->t = o->t_mono_ns;
			}
			l->c = &s->cols[c];
		}
		if (i > 0) {
			if (plan_s != s) {
				vms_rate_plan_free(plan);
				assert_int_equal(vms_rate_plan_new(s, &plan), 0);
				plan_s = s;
				free(want);
				want = calloc(plan->ncols + 1, sizeof(*want));
			}
			vms_rate_compute_dt(plan, prev, o->v, dts, want);
			assert_int_equal(vms_reader_nrates(r), plan->ncols);
			for (uint32_t k = 0; k < plan->ncols; k++) {
				double got;
				assert_string_equal(vms_reader_rate_name(r, k), plan->cols[k].name);
				int x = vms_reader_rate(r, k, &got);
				if (plan->cols[k].op == VMS_ROP_GAUGE)
					continue;
				if (isnan(want[k])) {
					assert_int_equal(x, -ENODATA);
				} else {
					assert_int_equal(x, 0);
					assert_true(got == want[k]);
					rates_checked++;
				}
			}
		}
		i++;
	}
	assert_int_equal(e, 0);
	assert_true(vms_reader_eof(r));
	assert_int_equal(i, run.n);
	assert_int_equal(changes, 3);
	assert_true(missing > 0);
	assert_true(rates_checked > 100);
	assert_string_equal(vms_reader_error(r), "");
	/* globs over the last schema (c.0 .. c.199) */
	uint32_t idx[8];
	assert_int_equal(vms_reader_columns_match(r, "c.1?,c.5", idx, 8), 11);
	assert_int_equal(idx[0], 5);
	assert_int_equal(idx[1], 10);
	assert_int_equal(vms_reader_columns_match(r, "nothing*", idx, 8), 0);
	assert_int_equal(vms_reader_next(r), 0); /* and stays at the end */
	vms_rate_plan_free(plan);
	free(want);
	vms_reader_close(r);
	run_free(&run);
}

static void test_stream_damage_and_torn_tail(void **state)
{
	(void)state;
	struct run run;
	run_make(&run, 120);
	assert_int_equal(feed_sink(&vms_sink_bin, tp("d.vms"), &run, 0, run.n, false), 0);
	size_t len;
	/* find the record of frame 50 */
	struct vms_bin_dec d;
	uint64_t off = 0, idx = 0;
	uint8_t *b = slurp_dec(tp("d.vms"), &len, &d);
	int it;
	while ((it = vms_bin_dec_next(&d)) > 0)
		if (it == VMS_BIN_DATA && d.frame->seq == run.f[50]->seq) {
			off = d.rec_off;
			idx = d.rec_index;
		}
	vms_bin_dec_close(&d);
	assert_true(off > 0);
	b[off + 20] ^= 0x40;
	spit(tp("d2.vms"), b, len);

	struct vms_reader *r;
	assert_int_equal(vms_reader_open(&r, tp("d2.vms"), 0), 0);
	size_t n = 0;
	int e;
	while ((e = vms_reader_next(r)) == 1)
		assert_frame_eq(vms_reader_frame(r), run.f[n++]);
	assert_int_equal(e, -EBADMSG);
	assert_int_equal(n, 50);
	char want[96];
	snprintf(want, sizeof(want), "record %llu at offset %llu: ", (unsigned long long)idx,
		 (unsigned long long)off);
	if (!strstr(vms_reader_error(r), want))
		fail_msg("\"%s\" lacks \"%s\"", vms_reader_error(r), want);
	assert_int_equal(vms_reader_next(r), -EBADMSG); /* sticky */
	vms_reader_close(r);

	/* the same bytes cut inside frame 50's record: a torn tail */
	b[off + 20] ^= 0x40;
	assert_int_equal(vms_reader_open_mem(&r, b, off + 7, 0), 0);
	n = 0;
	while ((e = vms_reader_next(r)) == 1)
		assert_frame_eq(vms_reader_frame(r), run.f[n++]);
	assert_int_equal(e, 0);
	assert_int_equal(n, 50);
	assert_true(vms_reader_eof(r));
	snprintf(want, sizeof(want), "torn tail at offset %llu (7 bytes)", (unsigned long long)off);
	assert_non_null(strstr(vms_reader_error(r), want));
	vms_reader_close(r);

	/* neither a stream nor a ring */
	write_file(tp("x.csv"), "seq,time\n", 9);
	assert_int_equal(vms_reader_open(&r, tp("x.csv"), 0), -EBADMSG);
	assert_non_null(strstr(vms_reader_error(r), "not a vmsampler stream or ring"));
	vms_reader_close(r);
	assert_int_equal(vms_reader_open(&r, tp("missing"), 0), -ENOENT);
	vms_reader_close(r);
	free(b);
	run_free(&run);
}

/* A stream that grows while it is read (FOLLOW), cut at arbitrary bytes. */
static void test_stream_follow(void **state)
{
	(void)state;
	struct run run;
	run_make(&run, 90);
	assert_int_equal(feed_sink(&vms_sink_bin, tp("g.vms"), &run, 0, run.n, true), 0);
	size_t len;
	uint8_t *b = slurp(tp("g.vms"), &len);
	int fd = open(tp("grow.vms"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	struct vms_reader *r;
	assert_int_equal(vms_reader_open(&r, tp("grow.vms"), VMS_READER_FOLLOW), 0);
	size_t written = 0, n = 0;
	unsigned step = 1;
	while (written < len || n < run.n) {
		int e = vms_reader_next(r);
		assert_true(e >= 0);
		if (e == 1) {
			assert_frame_eq(vms_reader_frame(r), run.f[n++]);
			continue;
		}
		assert_false(vms_reader_eof(r));
		assert_true(written < len); /* nothing new and nothing left: lost frames */
		size_t k = step * 37 % 1500 + 1;
		step++;
		if (k > len - written)
			k = len - written;
		assert_int_equal(write(fd, b + written, k), (ssize_t)k);
		written += k;
	}
	assert_int_equal(n, run.n);
	assert_int_equal(vms_reader_next(r), 0);
	assert_false(vms_reader_eof(r)); /* followed: never over */
	vms_reader_close(r);
	close(fd);
	free(b);
	run_free(&run);
}

/* Read everything there is now: the frames' seqs into seqs (up to cap),
 * how many; the files changed on the way (notes) into *notes. */
static size_t read_now(struct vms_reader *r, uint64_t *seqs, size_t cap, unsigned *notes)
{
	size_t n = 0;
	for (int idle = 0; idle < 3;) {
		int e = vms_reader_next(r);
		assert_true(e >= 0);
		if (vms_rdr_follow_note(r))
			(*notes)++;
		if (e == 0) {
			idle++;
			sleep_ms(250); /* past the reader's 200 ms between looks */
			continue;
		}
		assert_true(n < cap);
		seqs[n++] = vms_reader_seq(r);
	}
	return n;
}

/* VMS_READER_FOLLOW_NAME: rotated files in order (not another output's,
 * not a CSV), a file rewritten in place read again from its start, a
 * file renamed away followed by the new one at its path. */
static void test_stream_follow_name(void **state)
{
	(void)state;
	struct run run;
	run_make(&run, 90);
	/* the files of one rotated output, and others beside them */
	assert_int_equal(feed_sink(&vms_sink_bin, tp("o-20260101T000000Z.vms"), &run, 0, 30, false), 0);
	assert_int_equal(feed_sink(&vms_sink_bin, tp("o-20260101T000001Z_001.vms"), &run, 60, 90, false), 0);
	assert_int_equal(feed_sink(&vms_sink_bin, tp("o-20260101T000001Z.vms"), &run, 30, 60, false), 0);
	assert_int_equal(feed_sink(&vms_sink_bin, tp("x-20260101T000001Z.vms"), &run, 0, 10, false), 0);
	assert_int_equal(feed_sink(&vms_sink_bin, tp("o-20260101T000000Z.vms.1"), &run, 0, 10, false), 0);
	struct vms_reader *r;
	uint64_t seqs[400];
	unsigned notes = 0;
	assert_int_equal(vms_reader_open(&r, tp("o-20260101T000000Z.vms"), VMS_READER_FOLLOW_NAME), 0);
	size_t n = read_now(r, seqs, 400, &notes);
	assert_int_equal(n, 90);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(seqs[i], run.f[i]->seq);
	assert_int_equal(notes, 2);
	assert_false(vms_reader_eof(r));
	assert_string_equal(vms_rdr_path(r), tp("o-20260101T000001Z_001.vms"));
	vms_reader_close(r);

	/* rewritten in place: shorter, then a new stream from its start */
	assert_int_equal(feed_sink(&vms_sink_bin, tp("h.vms"), &run, 0, 50, false), 0);
	assert_int_equal(vms_reader_open(&r, tp("h.vms"), VMS_READER_FOLLOW_NAME), 0);
	notes = 0;
	assert_int_equal(read_now(r, seqs, 400, &notes), 50);
	struct stat st0, st1;
	assert_int_equal(stat(tp("h.vms"), &st0), 0);
	size_t len;
	uint8_t *b = slurp(tp("o-20260101T000001Z.vms"), &len); /* frames 30..59, a stream of its own */
	int fd = open(tp("h.vms"), O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, b, len), (ssize_t)len);
	close(fd);
	free(b);
	assert_int_equal(stat(tp("h.vms"), &st1), 0);
	assert_int_equal(st0.st_ino, st1.st_ino);
	n = read_now(r, seqs, 400, &notes);
	assert_int_equal(n, 30);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(seqs[i], run.f[30 + i]->seq);
	assert_int_equal(notes, 1);

	/* renamed away (logrotate), a new file at the path */
	assert_int_equal(rename(tp("h.vms"), tp("h.vms.1")), 0);
	assert_int_equal(read_now(r, seqs, 400, &notes), 0);
	assert_int_equal(feed_sink(&vms_sink_bin, tp("h.vms"), &run, 60, 90, false), 0);
	n = read_now(r, seqs, 400, &notes);
	assert_int_equal(n, 30);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(seqs[i], run.f[60 + i]->seq);
	assert_int_equal(notes, 2);
	vms_reader_close(r);
	run_free(&run);
}

/* ---- rings ---------------------------------------------------------------------- */

static const struct colspec ring_cols[] = {
	{"cpu.all.user", VMS_KIND_COUNTER, VMS_UNIT_TICKS, 64, 0},
	{"cpu.all.idle", VMS_KIND_COUNTER, VMS_UNIT_TICKS, 64, 0},
	{"load.1m", VMS_KIND_GAUGE, VMS_UNIT_LOAD, 0, 2},
	{"vm.a.cpu_time", VMS_KIND_COUNTER, VMS_UNIT_NS, 64, 0},
};

static void put(struct vms_ring *r, const struct vms_schema *s)
{
	struct vms_frame *f = vms_ring_begin(r);
	uint64_t seq = r->next_seq;
	memset(f, 0, sizeof(*f));
	f->t_mono_ns = mono();
	f->t_real_ns = 1700000000000000000LL + (int64_t)seq;
	f->gen = s->gen;
	f->ncols = s->ncols;
	for (uint32_t i = 0; i < s->ncols; i++)
		f->v[i] = i == 2 && seq % 5 == 0 ? VMS_NONE : seq * 1000 + i;
	vms_ring_commit(r);
}

static void make_ring(struct vms_ring *ring, const char *path, const struct vms_schema *s, uint32_t slots)
{
	char err[256];
	struct vms_ring_file_opts o = {.interval_ns = 10 * 1000 * 1000};
	assert_int_equal(vms_ring_create_file(ring, path, slots, s->ncols + 4, vms_bin_head_size(s), &o,
					      err, sizeof(err)), 0);
	vms_bin_ring_publish(ring, s);
}

static void check_frame(struct vms_reader *r, uint64_t seq, const struct vms_schema *s)
{
	assert_int_equal(vms_reader_seq(r), seq);
	assert_int_equal(vms_reader_gen(r), s->gen);
	assert_int_equal(vms_reader_ncols(r), s->ncols);
	for (uint32_t i = 0; i < s->ncols; i++) {
		uint64_t v;
		int e = vms_reader_value(r, i, &v);
		if (i == 2 && seq % 5 == 0) {
			assert_int_equal(e, -ENODATA);
		} else {
			assert_int_equal(e, 0);
			assert_true(v == seq * 1000 + i);
		}
	}
}

static void test_ring_read_fall_behind_view(void **state)
{
	(void)state;
	struct vms_schema *s = mk_schema(1, ring_cols, 4);
	struct vms_ring ring;
	make_ring(&ring, tp("r1"), s, 8);
	struct stat st;
	assert_int_equal(stat(tp("r1"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);

	struct vms_reader *r;
	assert_int_equal(vms_reader_open(&r, tp("r1"), 0), 0);
	assert_int_equal(vms_reader_kind(r), VMS_READER_RING);
	assert_int_equal(vms_reader_writer(r), 0);
	assert_int_equal(vms_reader_writer_pid(r), getpid());
	assert_int_equal(vms_reader_interval_ns(r), 10000000);
	assert_int_equal(vms_reader_next(r), 0); /* nothing yet */
	for (int i = 0; i < 5; i++)
		put(&ring, s);
	for (uint64_t seq = 1; seq <= 5; seq++) {
		assert_int_equal(vms_reader_next(r), 1);
		check_frame(r, seq, s);
		assert_int_equal(vms_reader_schema_changed(r), seq == 1);
	}
	assert_int_equal(vms_reader_column(r, "load.1m"), 2);
	double d;
	assert_int_equal(vms_reader_value_double(r, 2, &d), -ENODATA); /* seq 5: missing */
	assert_int_equal(vms_reader_value_double(r, 3, &d), 0);
	assert_true(d == 5003);
	assert_int_equal(vms_reader_next(r), 0);
	assert_int_equal(vms_reader_missed(r), 0);

	/* 20 more frames into 8 slots: 12 of them are lost to this reader */
	for (int i = 0; i < 20; i++)
		put(&ring, s);
	assert_int_equal(vms_reader_next(r), 1);
	check_frame(r, 18, s);
	assert_int_equal(vms_reader_missed(r), 12);
	assert_int_equal(vms_reader_value_double(r, 2, &d), 0);
	assert_true(d == 180.02); /* 18002 / 10^2 */
	for (uint64_t seq = 19; seq <= 25; seq++) {
		assert_int_equal(vms_reader_next(r), 1);
		check_frame(r, seq, s);
	}
	assert_int_equal(vms_reader_next(r), 0);

	/* zero-copy: valid while not overwritten */
	put(&ring, s);
	const struct vms_frame *f;
	assert_int_equal(vms_reader_view(r, &f), 1);
	assert_int_equal(f->seq, 26);
	assert_true(f->v[3] == 26003);
	assert_int_equal(vms_reader_view_check(r), 0);
	put(&ring, s);
	assert_int_equal(vms_reader_view(r, &f), 1);
	assert_int_equal(f->seq, 27);
	for (int i = 0; i < 8; i++) /* the slot of 27 now holds 35 */
		put(&ring, s);
	assert_int_equal(vms_reader_view_check(r), -ESTALE);
	assert_int_equal(vms_reader_missed(r), 13);

	/* a copy of the file in memory is a snapshot */
	size_t len;
	uint8_t *snap = slurp(tp("r1"), &len);
	struct vms_reader *m;
	assert_int_equal(vms_reader_open_mem(&m, snap, len, 0), 0);
	assert_int_equal(vms_reader_kind(m), VMS_READER_RING);
	for (uint64_t seq = 28; seq <= 35; seq++) {
		assert_int_equal(vms_reader_next(m), 1);
		check_frame(m, seq, s);
	}
	assert_int_equal(vms_reader_next(m), 0);
	assert_true(vms_reader_eof(m));
	vms_reader_close(m);
	free(snap);

	/* the writer exits: the reader reads what is left, then -ESRCH */
	vms_ring_destroy(&ring);
	int e, n = 0;
	while ((e = vms_reader_next(r)) == 1)
		n++;
	assert_int_equal(n, 8);
	assert_int_equal(e, -ESRCH);
	assert_int_equal(vms_reader_writer(r), 1);
	assert_non_null(strstr(vms_reader_error(r), "exited"));
	vms_reader_close(r);
	vms_schema_unref(s);
}

/* The loop grows the ring when a generation no longer fits: the file is
 * replaced, readers reattach and go on from the seq they wanted. */
static void test_ring_growth_reattach(void **state)
{
	(void)state;
	struct vms_schema *s1 = mk_schema(1, ring_cols, 4);
	static char names[100][16];
	struct colspec big[100];
	for (int i = 0; i < 100; i++) {
		snprintf(names[i], sizeof(names[i]), "disk.d%d.rd_ios", i);
		big[i] = (struct colspec){names[i], VMS_KIND_COUNTER, VMS_UNIT_COUNT, 64, 0};
	}
	struct vms_schema *s2 = mk_schema(2, big, 100);
	struct vms_ring ring;
	make_ring(&ring, tp("r2"), s1, 16);
	struct vms_reader *r;
	assert_int_equal(vms_reader_open(&r, tp("r2"), 0), 0);
	for (int i = 0; i < 3; i++)
		put(&ring, s1);
	assert_int_equal(vms_reader_next(r), 1);
	check_frame(r, 1, s1);
	/* what grow_ring() does */
	assert_false(vms_ring_fits(&ring, s2->ncols, vms_bin_head_size(s2)));
	struct vms_ring nr;
	assert_int_equal(vms_ring_create_like(&nr, &ring, 200, vms_bin_head_size(s2)), 0);
	nr.next_seq = 2;
	for (uint64_t seq = 2; seq < ring.next_seq; seq++) {
		const struct vms_frame *f = vms_ring_get(&ring, seq);
		memcpy(vms_ring_begin(&nr), f, vms_frame_size(f->ncols));
		vms_ring_commit(&nr);
	}
	assert_int_equal(vms_ring_install(&ring, &nr), 0);
	assert_true(vms_ring_fits(&ring, s2->ncols, vms_bin_head_size(s2)));
	vms_bin_ring_publish(&ring, s2);
	for (int i = 0; i < 3; i++)
		put(&ring, s2);
	/* the old mapping says superseded; the reader moves on */
	for (uint64_t seq = 2; seq <= 6; seq++) {
		assert_int_equal(vms_reader_next(r), 1);
		check_frame(r, seq, seq <= 3 ? s1 : s2);
		assert_int_equal(vms_reader_schema_changed(r), seq == 4);
	}
	assert_int_equal(vms_reader_missed(r), 0);
	assert_int_equal(vms_reader_column(r, "disk.d99.rd_ios"), 99);
	assert_int_equal(vms_reader_next(r), 0);
	/* no temporary file is left beside it */
	DIR *dd = opendir(test_tmp);
	struct dirent *de;
	unsigned dots = 0;
	while ((de = readdir(dd)))
		dots += de->d_name[0] == '.' && strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(dd);
	assert_int_equal(dots, 0);
	vms_reader_close(r);
	vms_ring_destroy(&ring);
	vms_schema_unref(s1);
	vms_schema_unref(s2);
}

static void test_ring_create_safety_and_version(void **state)
{
	(void)state;
	struct vms_schema *s = mk_schema(1, ring_cols, 4);
	struct vms_ring ring, other;
	char err[256];
	struct vms_ring_file_opts o = {.interval_ns = 10000000};
	size_t sb = vms_bin_head_size(s);

	/* a symbolic link: refused, its target untouched */
	write_file(tp("target"), "precious\n", 9);
	assert_int_equal(symlink(tp("target"), tp("link")), 0);
	assert_int_equal(vms_ring_create_file(&other, tp("link"), 8, 8, sb, &o, err, sizeof(err)), -ELOOP);
	assert_non_null(strstr(err, "symbolic link"));
	size_t len;
	char *t = (char *)slurp(tp("target"), &len);
	assert_int_equal(len, 9);
	free(t);
	/* a file that is not a ring */
	assert_int_equal(vms_ring_create_file(&other, tp("target"), 8, 8, sb, &o, err, sizeof(err)), -EEXIST);
	assert_non_null(strstr(err, "not a vmsampler ring"));
	/* a live ring (this process is its writer) */
	make_ring(&ring, tp("r3"), s, 8);
	put(&ring, s);
	assert_int_equal(vms_ring_create_file(&other, tp("r3"), 8, 8, sb, &o, err, sizeof(err)), -EBUSY);
	assert_non_null(strstr(err, "running vmsampler"));
	/* once its writer exited it is replaced, and its readers are told */
	struct vms_reader *r;
	assert_int_equal(vms_reader_open(&r, tp("r3"), 0), 0);
	assert_int_equal(vms_reader_next(r), 1);
	vms_ring_destroy(&ring);
	make_ring(&ring, tp("r3"), s, 8);
	put(&ring, s);
	put(&ring, s);
	/* the reader reattaches to the new run and reads it from its start */
	assert_int_equal(vms_reader_next(r), 1);
	check_frame(r, 1, s);
	assert_int_equal(vms_reader_next(r), 1);
	check_frame(r, 2, s);
	assert_int_equal(vms_reader_next(r), 0);
	vms_reader_close(r);
	vms_ring_destroy(&ring);

	/* a ring of another version: a clear error */
	size_t n;
	uint8_t *b = slurp(tp("r3"), &n);
	struct vms_ring_header *h = (struct vms_ring_header *)b;
	h->version = 2;
	h->magic[7] = 2;
	spit(tp("v2"), b, n);
	assert_int_equal(vms_reader_open(&r, tp("v2"), 0), -ENOTSUP);
	assert_non_null(strstr(vms_reader_error(r), "version 2; this reader knows version 1"));
	vms_reader_close(r);
	/* a header that lies about its size */
	h->version = 1;
	h->magic[7] = 1;
	h->slot_count = 1u << 20;
	spit(tp("bad"), b, n);
	assert_int_equal(vms_reader_open(&r, tp("bad"), 0), -EBADMSG);
	assert_non_null(strstr(vms_reader_error(r), "header describes"));
	vms_reader_close(r);
	free(b);
	vms_schema_unref(s);
}

/* A new run on the ring path whose schema differs under the same
 * generation number: a reader computing rates renews its plan for the
 * new schema (it must not keep the old run's plan because the new
 * schema object happens to sit where the freed old one was).  Checked
 * against a reader opened on the new run only. */
static const struct colspec ring_cols_b[] = {
	{"cpu.all.user", VMS_KIND_GAUGE, VMS_UNIT_COUNT, 0, 0},
	{"cpu.all.idle", VMS_KIND_GAUGE, VMS_UNIT_COUNT, 0, 0},
	{"load.1m", VMS_KIND_COUNTER, VMS_UNIT_COUNT, 64, 0},
	{"vm.a.cpu_time", VMS_KIND_GAUGE, VMS_UNIT_NS, 0, 0},
};

static void rate_names(const struct vms_reader *r, char *buf, size_t n)
{
	size_t o = 0;
	buf[0] = 0;
	for (uint32_t i = 0; i < vms_reader_nrates(r) && o < n; i++)
		o += (size_t)snprintf(buf + o, n - o, "%s,", vms_reader_rate_name(r, i));
}

static void test_ring_new_run_renews_rates(void **state)
{
	(void)state;
	struct vms_schema *a = mk_schema(1, ring_cols, 4);
	struct vms_ring ring;
	make_ring(&ring, tp("r4"), a, 8);
	struct vms_reader *r, *fresh;
	assert_int_equal(vms_reader_open(&r, tp("r4"), 0), 0);
	assert_int_equal(vms_reader_rates_enable(r), 0);
	for (int i = 0; i < 3; i++)
		put(&ring, a);
	for (int i = 0; i < 3; i++)
		assert_int_equal(vms_reader_next(r), 1);
	char old[1024], got[1024], want[1024];
	rate_names(r, old, sizeof(old));
	assert_true(vms_reader_nrates(r) > 0);
	vms_ring_destroy(&ring);
	vms_schema_unref(a);
	struct vms_schema *b = mk_schema(1, ring_cols_b, 4);
	make_ring(&ring, tp("r4"), b, 8);
	for (int i = 0; i < 3; i++)
		put(&ring, b);
	assert_int_equal(vms_reader_open(&fresh, tp("r4"), 0), 0);
	assert_int_equal(vms_reader_rates_enable(fresh), 0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(vms_reader_next(fresh), 1);
		assert_int_equal(vms_reader_next(r), 1);
		assert_int_equal(vms_reader_seq(r), vms_reader_seq(fresh));
		rate_names(r, got, sizeof(got));
		rate_names(fresh, want, sizeof(want));
		assert_string_equal(got, want);
		for (uint32_t k = 0; k < vms_reader_nrates(fresh); k++) {
			double x, y;
			int ex = vms_reader_rate(r, k, &x), ey = vms_reader_rate(fresh, k, &y);
			assert_int_equal(ex, ey);
			if (ex == 0)
				assert_true(x == y);
		}
	}
	assert_string_not_equal(got, old);
	vms_reader_close(fresh);
	vms_reader_close(r);
	vms_ring_destroy(&ring);
	vms_schema_unref(b);
}

static void test_ring_writer_killed(void **state)
{
	(void)state;
	struct vms_schema *s = mk_schema(1, ring_cols, 4);
	int pfd[2];
	assert_int_equal(pipe(pfd), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct vms_ring ring;
		char err[256];
		struct vms_ring_file_opts o = {.interval_ns = 10000000};
		if (vms_ring_create_file(&ring, tp("rk"), 16, 8, vms_bin_head_size(s), &o, err, sizeof(err)) < 0)
			_exit(1);
		vms_bin_ring_publish(&ring, s);
		for (int i = 0; i < 10; i++)
			put(&ring, s);
		if (write(pfd[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	char c;
	assert_int_equal(read(pfd[0], &c, 1), 1);
	close(pfd[0]);
	close(pfd[1]);
	struct vms_reader *r;
	assert_int_equal(vms_reader_open(&r, tp("rk"), 0), 0);
	for (uint64_t seq = 1; seq <= 4; seq++) {
		assert_int_equal(vms_reader_next(r), 1);
		check_frame(r, seq, s);
	}
	assert_int_equal(kill(pid, SIGKILL), 0);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	uint64_t t0 = mono(), seq = 4;
	int e;
	for (;;) {
		e = vms_reader_next(r);
		if (e == 1) {
			check_frame(r, ++seq, s);
			continue;
		}
		if (e != 0)
			break;
		assert_true(mono() - t0 < 10000000000ull); /* never hangs */
		sleep_ms(5);
	}
	assert_int_equal(e, -ESRCH);
	assert_int_equal(seq, 10);
	assert_int_equal(vms_reader_writer(r), 2);
	assert_non_null(strstr(vms_reader_error(r), "died"));
	vms_reader_close(r);
	/* a new reader still gets all of it */
	assert_int_equal(vms_reader_open(&r, tp("rk"), 0), 0);
	seq = 0;
	while ((e = vms_reader_next(r)) == 1)
		check_frame(r, ++seq, s);
	assert_int_equal(seq, 10);
	assert_int_equal(e, -ESRCH);
	vms_reader_close(r);
	vms_schema_unref(s);
}


VMS_TESTS(
	test_stream_frames_columns_rates, test_stream_damage_and_torn_tail, test_stream_follow,
	test_stream_follow_name,
	test_ring_read_fall_behind_view, test_ring_growth_reattach,
	test_ring_create_safety_and_version, test_ring_new_run_renews_rates, test_ring_writer_killed);

int main(void)
{
	setenv("TZ", "UTC", 1);
	return vms_run_list(NULL, NULL, tmp_setup, tmp_teardown);
}

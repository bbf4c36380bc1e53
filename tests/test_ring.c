/* SPDX-License-Identifier: MIT */
#include "testutil.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ring.h"

static void put(struct vms_ring *r, uint32_t ncols, uint64_t base)
{
	struct vms_frame *f = vms_ring_begin(r);
	f->ncols = ncols;
	f->t_mono_ns = base;
	for (uint32_t i = 0; i < ncols; i++)
		f->v[i] = base + i;
	vms_ring_commit(r);
}

static void test_write_get(void **state)
{
	(void)state;
	struct vms_ring r;
	assert_int_equal(vms_ring_create(&r, 3, 8), 0); /* rounds up to 4 */
	assert_int_equal(r.mask, 3);
	assert_null(vms_ring_get(&r, 1));
	for (uint64_t s = 1; s <= 6; s++)
		put(&r, 8, s * 100);
	assert_int_equal(vms_ring_last(&r), 6);
	/* 4 slots: seqs 3..6 live, 1..2 overwritten */
	assert_null(vms_ring_get(&r, 1));
	assert_null(vms_ring_get(&r, 2));
	assert_null(vms_ring_get(&r, 7));
	for (uint64_t s = 3; s <= 6; s++) {
		const struct vms_frame *f = vms_ring_get(&r, s);
		assert_non_null(f);
		assert_int_equal(f->seq, s);
		assert_int_equal(f->v[7], s * 100 + 7);
	}
	vms_ring_destroy(&r);
}

static void test_begin_is_idempotent(void **state)
{
	(void)state;
	struct vms_ring r;
	assert_int_equal(vms_ring_create(&r, 2, 4), 0);
	struct vms_frame *a = vms_ring_begin(&r), *b = vms_ring_begin(&r);
	assert_ptr_equal(a, b);
	a->ncols = 0;
	assert_int_equal(vms_ring_commit(&r), 1);
	assert_ptr_not_equal(vms_ring_begin(&r), a);
	vms_ring_destroy(&r);
}

static void test_read_validate(void **state)
{
	(void)state;
	struct vms_ring r;
	union {
		struct vms_frame f;
		uint64_t raw[64];
	} dst;
	assert_int_equal(vms_ring_create(&r, 4, 16), 0);
	assert_int_equal(vms_ring_read(&r, 1, &dst.f, 16), -EAGAIN);
	put(&r, 16, 1000);
	assert_int_equal(vms_ring_read(&r, 1, &dst.f, 16), 0);
	assert_int_equal(dst.f.seq, 1);
	assert_int_equal(dst.f.v[15], 1015);
	assert_int_equal(vms_ring_read(&r, 1, &dst.f, 8), -ENOBUFS);
	assert_int_equal(vms_ring_read(&r, 2, &dst.f, 16), -EAGAIN);
	for (int i = 0; i < 4; i++)
		put(&r, 16, 2000);
	/* seq 1 was overwritten by seq 5 */
	assert_int_equal(vms_ring_read(&r, 1, &dst.f, 16), -ESTALE);
	assert_int_equal(vms_ring_read(&r, 5, &dst.f, 16), 0);

	/* a writer in the middle of overwriting seq 5 with seq 9: head moved,
	 * tail not yet: the reader must reject the copy as torn */
	for (int i = 0; i < 3; i++)
		put(&r, 16, 3000);
	assert_int_equal(vms_ring_read(&r, 5, &dst.f, 16), 0);
	struct vms_frame *f = vms_ring_begin(&r);
	(void)f;
	assert_int_equal(vms_ring_read(&r, 5, &dst.f, 16), -EBUSY);
	vms_ring_destroy(&r);
}

/* A file ring has all its blocks when it is created, and so has the larger
 * one that replaces it: a sparse file gets its pages only when the mapping
 * is first written, and on a file system that filled meanwhile (/dev/shm)
 * that write is a SIGBUS. */
static void assert_allocated(const char *path, size_t len)
{
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal((uint64_t)st.st_size, len);
	if ((uint64_t)st.st_blocks * 512 < (uint64_t)st.st_size)
		fail_msg("%s: %lld bytes, %lld of them allocated", path, (long long)st.st_size,
			 (long long)st.st_blocks * 512);
}

static void test_file_ring_reserved(void **state)
{
	(void)state;
	char *dir = tmpdir_make(), path[512], why[256];
	assert_non_null(dir);
	snprintf(path, sizeof(path), "%s/ring", dir);
	struct vms_ring r, nr;
	struct vms_ring_file_opts o = {.interval_ns = 1000000000};
	assert_int_equal(vms_ring_create_file(&r, path, 64, 500, 4096, &o, why, sizeof(why)), 0);
	assert_true(r.map_len > 64 * 500 * 8);
	assert_allocated(path, r.map_len);
	/* growth: the new file, before and after it is renamed into place */
	assert_int_equal(vms_ring_create_like(&nr, &r, 2000, 16384), 0);
	assert_non_null(nr.tmp);
	assert_allocated(nr.tmp, nr.map_len);
	size_t len = nr.map_len;
	assert_int_equal(vms_ring_install(&r, &nr), 0);
	assert_allocated(path, len);
	vms_ring_destroy(&r);
	tmpdir_free(dir);
}

static void ev_put(struct vms_ring *r, uint32_t type, uint64_t before, const char *subject)
{
	struct vms_ring_event e = {.type = type, .before_seq = before, .t_mono_ns = before * 10};
	snprintf(e.subject, sizeof(e.subject), "%s", subject);
	snprintf(e.detail, sizeof(e.detail), "detail of %s", subject);
	vms_ring_event_put(r, &e);
}

/* The event area of a shared ring (vmsampler-ring(5)): numbered, read
 * through the seqlock, overwritten oldest first, carried when the ring
 * grows; a ring in the sampler's own memory has none. */
static void test_ring_events(void **state)
{
	(void)state;
	struct vms_ring a, r, v, nr;
	struct vms_ring_event e;
	assert_int_equal(vms_ring_create(&a, 8, 10), 0);
	assert_null(a.events);
	ev_put(&a, 7, 1, "ignored");
	assert_int_equal(vms_ring_event_last(&a), 0);
	assert_int_equal(vms_ring_event_get(&a, 1, &e), -ENOENT);
	vms_ring_destroy(&a);

	char *dir = tmpdir_make(), path[512], why[256];
	assert_non_null(dir);
	snprintf(path, sizeof(path), "%s/ring", dir);
	struct vms_ring_file_opts o = {.interval_ns = 1000000000};
	assert_int_equal(vms_ring_create_file(&r, path, 64, 50, 4096, &o, why, sizeof(why)), 0);
	assert_int_equal(r.hdr->event_count, VMS_RING_NEVENTS);
	assert_int_equal(r.hdr->event_size, sizeof(struct vms_ring_event));
	/* the area lies between the schema area and the slots */
	assert_true(r.hdr->event_off >= r.hdr->schema_off + r.hdr->schema_cap);
	assert_true(r.hdr->event_off + VMS_RING_NEVENTS * sizeof(struct vms_ring_event) <= r.hdr->header_size);

	ev_put(&r, 40, 1, "first");
	ev_put(&r, 41, 2, "second");
	char longs[200];
	memset(longs, 'x', sizeof(longs) - 1);
	longs[sizeof(longs) - 1] = '\0';
	ev_put(&r, 42, 2, longs);
	assert_int_equal(vms_ring_event_last(&r), 3);

	/* a reader's view of the file */
	assert_int_equal(vms_ring_open_read(&v, path, why, sizeof(why)), 0);
	assert_int_equal(vms_ring_event_last(&v), 3);
	assert_int_equal(vms_ring_event_get(&v, 1, &e), 0);
	assert_int_equal(e.type, 40);
	assert_int_equal(e.before_seq, 1);
	assert_int_equal(e.t_mono_ns, 10);
	assert_string_equal(e.subject, "first");
	assert_string_equal(e.detail, "detail of first");
	assert_int_equal(vms_ring_event_get(&v, 3, &e), 0);
	assert_int_equal(strlen(e.subject), sizeof(e.subject) - 1);
	assert_int_equal(vms_ring_event_get(&v, 4, &e), -EAGAIN);
	assert_int_equal(vms_ring_event_get(&v, 0, &e), -ESTALE);
	/* a reader cannot write */
	ev_put(&v, 43, 3, "not from a reader");
	assert_int_equal(vms_ring_event_last(&v), 3);

	/* the oldest are overwritten */
	for (unsigned i = 0; i < VMS_RING_NEVENTS; i++)
		ev_put(&r, 50, 3 + i, "more");
	uint64_t last = 3 + VMS_RING_NEVENTS;
	assert_int_equal(vms_ring_event_last(&v), last);
	assert_int_equal(vms_ring_event_get(&v, 3, &e), -ESTALE);
	assert_int_equal(vms_ring_event_get(&v, last - VMS_RING_NEVENTS + 1, &e), 0);
	assert_int_equal(vms_ring_event_get(&v, last, &e), 0);
	assert_int_equal(e.before_seq, 2 + VMS_RING_NEVENTS);

	/* growth keeps the numbers and the events */
	assert_int_equal(vms_ring_create_like(&nr, &r, 500, 16384), 0);
	assert_int_equal(vms_ring_event_last(&nr), last);
	assert_int_equal(vms_ring_event_get(&nr, last, &e), 0);
	assert_int_equal(e.before_seq, 2 + VMS_RING_NEVENTS);
	assert_int_equal(vms_ring_install(&r, &nr), 0);
	ev_put(&r, 51, 200, "after growth");
	vms_ring_destroy(&v);
	assert_int_equal(vms_ring_open_read(&v, path, why, sizeof(why)), 0);
	assert_int_equal(vms_ring_event_get(&v, last + 1, &e), 0);
	assert_string_equal(e.subject, "after growth");
	vms_ring_destroy(&v);
	vms_ring_destroy(&r);
	tmpdir_free(dir);
}

VMS_TEST_MAIN(NULL, NULL,
	test_write_get, test_begin_is_idempotent, test_read_validate, test_file_ring_reserved,
	test_ring_events)

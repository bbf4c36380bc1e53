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
	rm_rf(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_get),
		cmocka_unit_test(test_begin_is_idempotent),
		cmocka_unit_test(test_read_validate),
		cmocka_unit_test(test_file_ring_reserved),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: MIT */
/* The buffered output: whole records, non-blocking pipes, and a full disk
 * (RLIMIT_FSIZE makes the kernel refuse writes past a size, the same
 * partial-write-then-error sequence as ENOSPC) never corrupting what was
 * already written. */
#include "testutil.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "out.h"

static void rec(struct vms_out *o, char ch, size_t n)
{
	char *p = vms_out_reserve(o, n);
	assert_non_null(p);
	memset(p, ch, n - 1);
	p[n - 1] = '\n';
	vms_out_advance(o, n);
	vms_out_end_record(o);
}

static void test_file_roundtrip(void **state)
{
	(void)state;
	char *d = tmpdir_make();
	char path[256];
	snprintf(path, sizeof(path), "%s/a.txt", d);
	struct vms_out o;
	assert_int_equal(vms_out_open(&o, path, 0, 64), 0);
	rec(&o, 'a', 10);
	rec(&o, 'b', 20);
	/* a record that does not fit is refused; nothing half-appended */
	assert_null(vms_out_reserve(&o, 64));
	assert_int_equal(vms_out_put(&o, "x", 1), 0);
	vms_out_cancel_record(&o);
	assert_int_equal(o.len, 30);
	assert_int_equal(vms_out_flush(&o), 0);
	assert_int_equal(vms_out_close(&o), 0);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 30);
	/* append mode continues at the end */
	assert_int_equal(vms_out_open(&o, path, VMS_OUT_APPEND, 64), 0);
	assert_int_equal(o.written, 30);
	rec(&o, 'c', 5);
	assert_int_equal(vms_out_close(&o), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 35);
	tmpdir_free(d);
}

static void test_pipe_nonblocking(void **state)
{
	(void)state;
	int p[2];
	assert_int_equal(pipe(p), 0);
	fcntl(p[1], F_SETPIPE_SZ, 4096);
	struct vms_out o;
	/* a pipe given as fd: vms_out sets it non-blocking */
	assert_int_equal(vms_out_fdopen(&o, p[1], 1 << 16), 0);
	assert_true(fcntl(p[1], F_GETFL) & O_NONBLOCK);
	int r = 0;
	size_t total = 0;
	for (int i = 0; i < 100; i++) {
		rec(&o, (char)('a' + i % 26), 500);
		total += 500;
		r = vms_out_flush(&o);
		if (r == -EAGAIN)
			break;
		assert_int_equal(r, 0);
	}
	/* the pipe is full: data stays buffered, the call did not block */
	assert_int_equal(r, -EAGAIN);
	assert_true(vms_out_pending(&o));
	/* drain the reader side and check records arrive whole and in order */
	char buf[8192];
	size_t got = 0;
	int next = 0;
	while (got < total) {
		ssize_t n = read(p[0], buf, sizeof(buf));
		if (n <= 0) {
			assert_int_equal(vms_out_flush(&o) == 0 || vms_out_flush(&o) == -EAGAIN, 1);
			continue;
		}
		for (ssize_t k = 0; k < n; k++, got++) {
			size_t pos = got % 500;
			char want = pos == 499 ? '\n' : (char)('a' + (int)(got / 500) % 26);
			assert_int_equal(buf[k], want);
		}
		(void)next;
		vms_out_flush(&o);
	}
	assert_false(vms_out_pending(&o));
	int fl = fcntl(p[1], F_GETFL);
	vms_out_close(&o);
	/* flags restored */
	assert_true(fl & O_NONBLOCK);
	assert_false(fcntl(p[1], F_GETFL) & O_NONBLOCK);
	close(p[0]);
	close(p[1]);
}

static void test_disk_full_truncates_to_record(void **state)
{
	(void)state;
	char *d = tmpdir_make();
	char path[256];
	snprintf(path, sizeof(path), "%s/full.txt", d);
	signal(SIGXFSZ, SIG_IGN);
	struct rlimit old, lim = {.rlim_cur = 1000, .rlim_max = RLIM_INFINITY};
	getrlimit(RLIMIT_FSIZE, &old);
	lim.rlim_max = old.rlim_max;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);

	struct vms_out o;
	assert_int_equal(vms_out_open(&o, path, 0, 4096), 0);
	for (int i = 0; i < 4; i++)
		rec(&o, (char)('a' + i), 300); /* 1200 bytes > 1000 allowed */
	int r = vms_out_flush(&o);
	/* 1000 bytes went out (3 whole records and 100 bytes of the 4th),
	 * then the "disk" is full */
	assert_int_equal(r, -EFBIG);
	assert_int_equal(o.written, 1000);
	assert_int_equal(o.committed, 900);
	assert_int_equal(vms_out_close(&o), -EFBIG);
	setrlimit(RLIMIT_FSIZE, &old);

	size_t len;
	char rel[300];
	snprintf(rel, sizeof(rel), "%s", path);
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	char buf[2000];
	len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	/* the cut record is gone; the three whole ones are intact */
	assert_int_equal(len, 900);
	for (size_t i = 0; i < len; i++)
		assert_int_equal(buf[i], i % 300 == 299 ? '\n' : (char)('a' + (int)(i / 300)));
	tmpdir_free(d);
}

static void test_closed_out_ensure(void **state)
{
	(void)state;
	struct vms_out o;
	assert_int_equal(vms_out_open(&o, "/dev/null", 0, 64), 0);
	assert_int_equal(vms_out_ensure(&o, 1000), 0);
	assert_true(o.cap >= 1000);
	assert_int_equal(vms_out_close(&o), 0);
	/* after close (a failed reopen leaves it so) ensure must not loop */
	assert_int_equal(vms_out_ensure(&o, 10), -EBADF);
}

static void test_dev_full(void **state)
{
	(void)state;
	struct vms_out o;
	assert_int_equal(vms_out_open(&o, "/dev/full", 0, 256), 0);
	rec(&o, 'z', 100);
	assert_int_equal(vms_out_flush(&o), -ENOSPC);
	/* data is kept for a retry */
	assert_true(vms_out_pending(&o));
	assert_int_equal(vms_out_close(&o), -ENOSPC);
}

VMS_TEST_MAIN(NULL, NULL,
	test_file_roundtrip, test_pipe_nonblocking, test_disk_full_truncates_to_record,
	test_dev_full, test_closed_out_ensure)

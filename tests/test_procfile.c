/* SPDX-License-Identifier: MIT */
/* test_procfile.c - a kept-open /proc file read whole, every time.
 *
 * The kernel's seq_file gives at most one page of records per read()
 * however large the buffer (/proc/net/dev, /proc/diskstats on a host with
 * many interfaces or disks): a reader that takes a short read for the end
 * of the file sees only the first ~4 KiB.  These tests read real seq_files
 * (this process's /proc/self/maps, made larger than a page with mappings
 * of its own) and a regular file larger than the initial buffer, and check
 * that every byte is there; the steady state re-read does not allocate. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "testutil.h"

#include "allocwrap.h"
#include "procfile.h"

#define NMAP 400

/* A whole file the plain way (read() to EOF). */
static size_t slurp(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	size_t off = 0;
	ssize_t n;
	while ((n = read(fd, buf + off, cap - off)) > 0)
		off += (size_t)n;
	assert_true(n == 0);
	assert_true(off < cap);
	close(fd);
	return off;
}

static void test_seq_file_longer_than_a_page(void **state)
{
	(void)state;
	/* NMAP mappings that the kernel cannot merge (alternating
	 * protections): /proc/self/maps gets one line each, > 20 KiB */
	long pg = sysconf(_SC_PAGESIZE);
	char *base = mmap(NULL, (size_t)pg * NMAP, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(base != MAP_FAILED);
	for (int i = 0; i < NMAP; i += 2)
		assert_int_equal(mprotect(base + (size_t)i * pg, (size_t)pg, PROT_READ | PROT_WRITE), 0);

	int proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(proc >= 0);
	struct vms_procfile f = VMS_PROCFILE_INIT;
	assert_int_equal(vms_procfile_open(&f, proc, "self/maps", 4096), 0);
	assert_true(f.len > 4 * 4096);

	/* every one of our mappings is in what was read, the last one too */
	for (int i = 0; i < NMAP; i++) {
		char addr[32];
		snprintf(addr, sizeof(addr), "%lx-", (unsigned long)(base + (size_t)i * pg));
		if (!memmem(f.buf, f.len, addr, strlen(addr)))
			fail_msg("mapping %d (%s) missing from %zu bytes read", i, addr, f.len);
	}
	/* and it is the file as read() to EOF sees it (nothing mapped or
	 * unmapped in between: the buffer below is on the stack) */
	static char want[1 << 20];
	size_t wl = slurp("/proc/self/maps", want, sizeof(want));
	assert_int_equal(vms_procfile_read(&f), 0);
	assert_int_equal(f.len, wl);
	assert_memory_equal(f.buf, want, wl);
	assert_true(f.buf[f.len - 1] == '\n');

	/* the steady state: re-read whole, no allocation, no growth */
	unsigned grows = f.grows;
	test_allocs = 0;
	for (int i = 0; i < 100; i++) {
		assert_int_equal(vms_procfile_read(&f), 0);
		assert_int_equal(f.len, wl);
	}
	assert_int_equal(test_allocs, 0);
	assert_int_equal(f.grows, grows);

	vms_procfile_close(&f);
	close(proc);
	munmap(base, (size_t)pg * NMAP);
}

/* A regular file larger than the first buffer: the buffer doubles until
 * it holds it (growth is counted), and it is read whole. */
static void test_regular_file_grows(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	char path[4096];
	snprintf(path, sizeof(path), "%s/big", dir);
	FILE *w = fopen(path, "w");
	assert_non_null(w);
	for (int i = 0; i < 3000; i++)
		fprintf(w, "line %d of the file\n", i);
	assert_int_equal(fclose(w), 0);
	static char want[1 << 20];
	size_t wl = slurp(path, want, sizeof(want));

	int d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(d >= 0);
	struct vms_procfile f = VMS_PROCFILE_INIT;
	assert_int_equal(vms_procfile_open(&f, d, "big", 4096), 0);
	assert_int_equal(f.len, wl);
	assert_memory_equal(f.buf, want, wl);
	assert_true(f.cap >= 2 * wl); /* headroom for a file that grows a little */

	/* it grows past the buffer: read whole again, growth counted */
	w = fopen(path, "a");
	assert_non_null(w);
	for (int i = 0; i < 6000; i++)
		fprintf(w, "another line %d\n", i);
	assert_int_equal(fclose(w), 0);
	wl = slurp(path, want, sizeof(want));
	assert_int_equal(vms_procfile_read(&f), 0);
	assert_int_equal(f.len, wl);
	assert_memory_equal(f.buf, want, wl);
	assert_true(f.grows > 0);

	/* and shrinks: the new length, not the old bytes */
	assert_int_equal(truncate(path, 10), 0);
	assert_int_equal(vms_procfile_read(&f), 0);
	assert_int_equal(f.len, 10);
	assert_memory_equal(f.buf, "line 0 of ", 10);

	vms_procfile_close(&f);
	close(d);
	unlink(path);
	rmdir(dir);
	free(dir);
}

VMS_TEST_MAIN(NULL, NULL,
	test_seq_file_longer_than_a_page, test_regular_file_grows)

/* SPDX-License-Identifier: MIT */
/* The control socket's server (src/sampler/control.c) driven directly:
 * a mark is taken and answered between ticks without one allocation (the
 * counting allocator of alloccount.h), the budget of marks per interval
 * holds and refills, refused marks are counted.  The binary end to end,
 * with `vmsampler mark`, is tests/test_mark.py. */
#include "testutil.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "alloccount.h"
#include "control.h"
#include "vms.h"

static char got_text[128], got_who[128];
static unsigned got_n;

static uint64_t on_mark(void *ctx, const char *text, const char *who)
{
	(void)ctx;
	snprintf(got_text, sizeof(got_text), "%s", text);
	snprintf(got_who, sizeof(got_who), "%s", who);
	got_n++;
	return 41 + got_n;
}

/* a client that has sent its message (the server has not accepted yet:
 * the listen backlog holds it) */
static int client_send(const char *path, const char *msg)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(send(fd, msg, strlen(msg), 0), (ssize_t)strlen(msg));
	return fd;
}

static void client_answer(int fd, char *buf, size_t len)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	assert_int_equal(poll(&p, 1, 5000), 1);
	ssize_t n = recv(fd, buf, len - 1, 0);
	assert_true(n > 0);
	buf[n] = '\0';
	close(fd);
}

/* one pass of the loop's wait: pollfds, poll, ready */
static unsigned long serve(struct vms_control *c, uint64_t now)
{
	struct pollfd fds[VMS_CTL_CONNS + 1];
	int n = vms_control_pollfds(c, fds, (int)VMS_ARRAY_SIZE(fds));
	assert_int_equal(n, VMS_CTL_CONNS + 1);
	assert_true(poll(fds, (nfds_t)n, 2000) > 0);
	allocs = 0;
	armed = 1;
	vms_control_ready(c, fds, n, now);
	armed = 0;
	return allocs;
}

static void test_mark_without_allocation(void **state)
{
	(void)state;
	char *dir = tmpdir_make(), path[512], why[256], ans[128];
	snprintf(path, sizeof(path), "%s/ctl", dir);
	struct vms_control c;
	assert_int_equal(vms_control_open(&c, path, on_mark, NULL, why, sizeof(why)), 0);
	got_n = 0;

	int fd = client_send(path, "iperf start");
	unsigned long a = serve(&c, 1000);
	client_answer(fd, ans, sizeof(ans));
	assert_string_equal(ans, "ok 42");
	assert_int_equal(got_n, 1);
	assert_string_equal(got_text, "iperf start");
	char want[64];
	snprintf(want, sizeof(want), "pid=%d uid=%u", (int)getpid(), (unsigned)getuid());
	assert_string_equal(got_who, want);
	assert_int_equal(c.marks, 1);
#if HAVE_COUNTING_MALLOC
	assert_int_equal(a, 0);
#else
	(void)a;
	vms_skip_note("VMS_REQUIRE_NOALLOC", "no counting allocator in this build: the allocation count is not checked");
#endif
	/* refused: answered, counted, not marked */
	fd = client_send(path, "two\nlines");
	serve(&c, 2000);
	client_answer(fd, ans, sizeof(ans));
	assert_string_equal(ans, "error: control characters in the text");
	assert_int_equal(c.refused, 1);
	assert_int_equal(got_n, 1);

	/* the budget: VMS_CTL_MARKS per interval, then refused until the
	 * next interval */
	for (unsigned i = 1; i < VMS_CTL_MARKS; i++) {
		fd = client_send(path, "m");
		serve(&c, 3000);
		client_answer(fd, ans, sizeof(ans));
		assert_memory_equal(ans, "ok ", 3);
	}
	assert_int_equal(c.marks, VMS_CTL_MARKS);
	fd = client_send(path, "one too many");
	serve(&c, 3000);
	client_answer(fd, ans, sizeof(ans));
	assert_string_equal(ans, "error: too many marks in this interval (64 at most)");
	assert_int_equal(c.refused, 2);
	vms_control_interval(&c);
	fd = client_send(path, "next interval");
	serve(&c, 4000);
	client_answer(fd, ans, sizeof(ans));
	assert_memory_equal(ans, "ok ", 3);
	assert_string_equal(got_text, "next interval");

	vms_control_close(&c);
	assert_int_equal(access(path, F_OK), -1); /* removed */
	tmpdir_free(dir);
}

VMS_TEST_MAIN(NULL, NULL,
	test_mark_without_allocation)

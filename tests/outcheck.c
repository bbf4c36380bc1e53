/* SPDX-License-Identifier: MIT */
#include "outcheck.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runbin.h"
#include "testutil.h"
#include "vms_build.h"
#include <vmsampler/format.h>
#include <vmsampler/ring.h>

void sampler_root(const char *dir, const char *netdev_root, char *root, char *conf, size_t len)
{
	char p[1024];
	snprintf(root, len, "%s/proc", dir);
	snprintf(conf, len, "%s/vmsampler.yaml", dir);
	snprintf(p, sizeof(p), "%s/loadavg", root);
	const char *la = "0.21 0.37 0.39 1/719 19737\n"; /* node_exporter's fixture line */
	write_file(p, la, strlen(la));
	sampler_set_netdev(root, netdev_root);
	/* a section of a source the build leaves out is a configuration
	 * error: name perf and libvirt only where they are built */
	const char *y = "sources:\n"
			"  procstat: {enabled: false}\n"
			"  diskstats: {enabled: false}\n"
			"  meminfo: {enabled: false}\n"
			"  vmstat: {enabled: false}\n"
			"  psi: {enabled: false}\n"
			"  interrupts: {enabled: false}\n"
			"  softirqs: {enabled: false}\n"
			"  schedstat: {enabled: false}\n"
#if HAVE_PERF
			"  perf: {enabled: false}\n"
#endif
#if HAVE_LIBVIRT
			"  libvirt: {enabled: false}\n"
#endif
			;
	write_file(conf, y, strlen(y));
}

void sampler_set_netdev(const char *root, const char *netdev_root)
{
	char rel[512], p[1024];
	size_t n;
	snprintf(rel, sizeof(rel), "roots/%s/net/dev", netdev_root);
	char *b = fixture_read(rel, &n);
	assert_non_null(b);
	snprintf(p, sizeof(p), "%s/net/dev", root);
	int fd = open(p, O_WRONLY | O_CREAT, 0644);
	if (fd < 0) {
		write_file(p, b, n); /* creates the directory */
	} else {
		/* one write, then cut what the old content had beyond it */
		assert_int_equal(pwrite(fd, b, n, 0), (ssize_t)n);
		assert_int_equal(ftruncate(fd, (off_t)n), 0);
		close(fd);
	}
	free(b);
}

pid_t spawn_bin(const char *const *args, int out_fd, const char *err_path)
{
	const char *bin = getenv("VMS_BIN");
	const char *argv[64];
	unsigned n = 0;
	assert_non_null(bin);
	argv[n++] = bin;
	for (; *args && n < 63; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	int efd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(efd >= 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int in = open("/dev/null", O_RDWR);
		dup2(in, 0);
		dup2(out_fd >= 0 ? out_fd : in, 1);
		dup2(efd, 2);
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	close(efd);
	return pid;
}

static int read_header(const char *path, struct vms_ring_header *h)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = pread(fd, h, sizeof(*h), 0);
	close(fd);
	return n == (ssize_t)sizeof(*h) && memcmp(h->magic, VMS_RING_MAGIC, 8) == 0 ? 0 : -1;
}

uint64_t ring_write_seq(const char *path)
{
	struct vms_ring_header h;
	return read_header(path, &h) == 0 ? __atomic_load_n(&h.write_seq, __ATOMIC_RELAXED) : 0;
}

uint32_t ring_flags(const char *path)
{
	struct vms_ring_header h;
	assert_int_equal(read_header(path, &h), 0);
	return h.flags;
}

static void nap(void)
{
	struct timespec ts = {0, 2 * 1000 * 1000};
	nanosleep(&ts, NULL);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void wait_ring_seq(const char *path, pid_t pid, uint64_t seq)
{
	double until = now_s() + 60;
	while (ring_write_seq(path) < seq) {
		int st;
		if (waitpid(pid, &st, WNOHANG) == pid)
			fail_msg("the sampler ended (status 0x%x) before frame %llu", st,
				 (unsigned long long)seq);
		if (now_s() > until) {
			kill(pid, SIGKILL);
			fail_msg("no frame %llu in %s after 60 s", (unsigned long long)seq, path);
		}
		nap();
	}
}

int wait_child(pid_t pid, int timeout_s)
{
	double until = now_s() + timeout_s;
	int st;
	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			break;
		assert_true(r == 0 || errno == EINTR);
		if (now_s() > until) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			fail_msg("the sampler did not end within %d s", timeout_s);
		}
		nap();
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

void frames_add(struct frames *fr, uint64_t seq, uint32_t flags, uint32_t lost)
{
	if (fr->n == fr->cap) {
		fr->cap = fr->cap ? fr->cap * 2 : 256;
		fr->seq = realloc(fr->seq, fr->cap * sizeof(*fr->seq));
		fr->flags = realloc(fr->flags, fr->cap * sizeof(*fr->flags));
		fr->lost = realloc(fr->lost, fr->cap * sizeof(*fr->lost));
		assert_true(fr->seq && fr->flags && fr->lost);
	}
	fr->seq[fr->n] = seq;
	fr->flags[fr->n] = flags;
	fr->lost[fr->n] = lost;
	fr->n++;
}

/* seq,time,t_mono_ns,gen,flags,missed_ticks,lost_frames,... */
void frames_add_csv(struct frames *fr, const char *csv)
{
	const char *p = csv;
	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		if (strncmp(p, "seq,", 4) != 0) {
			unsigned long long seq, mono, gen, flags, missed, lost;
			char tbuf[64];
			int k = sscanf(p, "%llu,%63[^,],%llu,%llu,%llu,%llu,%llu", &seq, tbuf, &mono, &gen,
				       &flags, &missed, &lost);
			if (k != 7)
				fail_msg("not a frame row: %.*s", (int)(len > 120 ? 120 : len), p);
			frames_add(fr, seq, (uint32_t)flags, (uint32_t)lost);
		}
		p += len + (eol ? 1 : 0);
	}
}

void frames_add_vms(struct frames *fr, const char *path)
{
	struct run_result r;
	run_bin(&r, 0, (const char *const[]){"dump", path, NULL});
	if (r.status != 0)
		fail_msg("dump %s: status %d: %s", path, r.status, r.err);
	assert_int_equal(strncmp(r.out, "seq,", 4), 0);
	frames_add_csv(fr, r.out);
	run_result_free(&r);
}

void frames_free(struct frames *fr)
{
	free(fr->seq);
	free(fr->flags);
	free(fr->lost);
	memset(fr, 0, sizeof(*fr));
}

void frames_check(const struct frames *fr, struct frames_sum *sum)
{
	uint64_t prev = 0;
	memset(sum, 0, sizeof(*sum));
	for (size_t i = 0; i < fr->n; i++) {
		uint64_t seq = fr->seq[i];
		if (seq <= prev)
			fail_msg("frame %zu: seq %llu after %llu (written twice or out of order)", i,
				 (unsigned long long)seq, (unsigned long long)prev);
		uint64_t missing = seq - prev - 1;
		if (fr->lost[i] != missing)
			fail_msg("seq %llu after %llu: lost_frames %u, %llu seqs are missing", (unsigned long long)seq,
				 (unsigned long long)prev, fr->lost[i], (unsigned long long)missing);
		if (missing && !(fr->flags[i] & VMS_FRAME_GAP))
			fail_msg("seq %llu after a gap has no gap flag (flags %u)", (unsigned long long)seq,
				 fr->flags[i]);
		sum->gaps += missing > 0;
		sum->missing += missing;
		sum->lost_sum += fr->lost[i];
		prev = seq;
	}
	sum->last = prev;
}

/* SPDX-License-Identifier: MIT */
/* `vmsampler dump` end to end with the real binary ($VMS_BIN): a real run
 * to .vms against one to .csv, SIGKILL mid-run, torn tails, damage,
 * foreign files and usage errors, with their exit codes and messages. */
#include "testutil.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "binfmt.h"
#include "binutil.h"

static const char *bin;

static int setup(void **state)
{
	bin = getenv("VMS_BIN");
	return bin ? tmp_setup(state) : -1;
}

static char *text(const char *path)
{
	size_t len;
	char *t = (char *)slurp(path, &len);
	assert_non_null(t);
	t[len] = '\0';
	return t;
}

static unsigned count_lines(const char *t)
{
	unsigned n = 0;
	for (; *t; t++)
		n += *t == '\n';
	return n;
}

/* The n-th comma-separated field of a line into buf. */
static const char *field(const char *line, unsigned n, char *buf, size_t cap)
{
	for (unsigned i = 0; i < n; i++) {
		line = strchr(line, ',');
		assert_non_null(line);
		line++;
	}
	size_t l = strcspn(line, ",\r\n");
	assert_true(l < cap);
	memcpy(buf, line, l);
	buf[l] = '\0';
	return buf;
}

static void sample(const char *out, const char *count)
{
	char *argv[] = {(char *)bin, "-i", "10ms", "-n", (char *)count, "-o", (char *)out,
			"--proc-root", (char *)fixture_path("vms"), NULL};
	assert_int_equal(run_cmd(argv, NULL, tp("sample.out"), tp("sample.err")), 0);
}

static int dump(const char *in, const char *extra, const char *out, const char *err)
{
	char *argv[] = {(char *)bin, "dump", (char *)in, (char *)extra, NULL};
	return run_cmd(argv, NULL, out, err);
}

/* Frames of a .vms, by the decoder (count, record count, end offset). */
struct info {
	uint64_t frames, records, end, last_rec_off;
	bool torn;
};

static struct info decode_info(const char *path)
{
	struct info in = {0};
	size_t len;
	struct vms_bin_dec d;
	int it;
	uint8_t *b = slurp_dec(path, &len, &d);
	uint64_t seq = 0;
	while ((it = vms_bin_dec_next(&d)) > 0) {
		if (it != VMS_BIN_HEADER)
			in.last_rec_off = d.rec_off;
		if (it == VMS_BIN_DATA) {
			assert_int_equal(d.frame->seq, seq + 1); /* contiguous */
			seq = d.frame->seq;
		}
	}
	assert_int_equal(it, VMS_BIN_END);
	in.frames = d.nframes;
	in.records = d.nrec;
	in.torn = d.torn;
	in.end = d.torn ? d.torn_off : len;
	vms_bin_dec_close(&d);
	free(b);
	return in;
}

/* A real run to .vms and one to .csv: the dump has the CSV's header and
 * shape, the same values (the fixture does not change), seq 1..50; it is
 * deterministic, and -o and stdin give the same bytes. */
static void test_real_run(void **state)
{
	(void)state;
	sample(tp("x.vms"), "50");
	sample(tp("x.csv"), "50");
	assert_int_equal(dump(tp("x.vms"), NULL, tp("d1.csv"), tp("d1.err")), 0);
	assert_int_equal(dump(tp("x.vms"), NULL, tp("d2.csv"), tp("d2.err")), 0);
	assert_true(same_file(tp("d1.csv"), tp("d2.csv")));
	char *argv[] = {(char *)bin, "dump", tp("x.vms"), "-o", tp("d3.csv"), NULL};
	assert_int_equal(run_cmd(argv, NULL, tp("d3.out"), tp("d3.err")), 0);
	assert_true(same_file(tp("d1.csv"), tp("d3.csv")));
	char *argv2[] = {(char *)bin, "dump", "-", NULL};
	assert_int_equal(run_cmd(argv2, tp("x.vms"), tp("d4.csv"), tp("d4.err")), 0);
	assert_true(same_file(tp("d1.csv"), tp("d4.csv")));

	char *d = text(tp("d1.csv")), *c = text(tp("x.csv"));
	assert_int_equal(count_lines(d), 51);
	assert_int_equal(count_lines(c), 51);
	size_t hl = strcspn(c, "\n");
	assert_memory_equal(d, c, hl); /* same header */
	/* row by row: seq 1..50 and the fixture's values */
	const char *dl = strchr(d, '\n') + 1, *cl = strchr(c, '\n') + 1;
	for (unsigned row = 1; row <= 50; row++) {
		char a[64], b2[64], want[16];
		snprintf(want, sizeof(want), "%u", row);
		assert_string_equal(field(dl, 0, a, sizeof(a)), want);
		assert_string_equal(field(cl, 0, b2, sizeof(b2)), want);
		for (unsigned k = 9; k < 14; k++)
			assert_string_equal(field(dl, k, a, sizeof(a)), field(cl, k, b2, sizeof(b2)));
		dl = strchr(dl, '\n') + 1;
		cl = strchr(cl, '\n') + 1;
	}
	char v[32];
	const char *row1 = strchr(d, '\n') + 1;
	assert_string_equal(field(row1, 9, v, sizeof(v)), "3.16");  /* load.1m of the fixture */
	assert_string_equal(field(row1, 13, v, sizeof(v)), "956"); /* load.tasks */
	free(d);
	free(c);

	/* --rates: one row per interval */
	assert_int_equal(dump(tp("x.vms"), "--rates", tp("r.csv"), tp("r.err")), 0);
	char *r = text(tp("r.csv"));
	assert_int_equal(count_lines(r), 50);
	assert_int_equal(strncmp(r, "seq,time,t_mono_ns,interval_s,rate_flags,load.1m,", 49), 0);
	free(r);
}

/* The sampler at 10 ms into out, until signalled. */
static pid_t spawn_sampler(const char *out)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);
		dup2(devnull, 1);
		dup2(devnull, 2);
		execl(bin, bin, "-i", "10ms", "-o", out, "--proc-root", fixture_path("vms"), (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* Wait (up to 20 s) until path holds at least n bytes: the sampler has
 * set up its signal handling and written frames. */
static void wait_for_bytes(const char *path, off_t n)
{
	struct stat st;
	for (int i = 0; i < 2000; i++) {
		if (stat(path, &st) == 0 && st.st_size >= n)
			return;
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	fail_msg("%s: no data from the sampler", path);
}

/* SIGKILL mid-run: every complete record is recovered, seq contiguous;
 * a torn tail, if the kill left one, is reported and exits 0. */
static void test_sigkill(void **state)
{
	(void)state;
	pid_t pid = spawn_sampler(tp("k.vms"));
	wait_for_bytes(tp("k.vms"), 200);
	struct timespec ts = {0, 500 * 1000 * 1000};
	nanosleep(&ts, NULL);
	assert_int_equal(kill(pid, SIGKILL), 0);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st));

	struct info in = decode_info(tp("k.vms"));
	assert_true(in.frames >= 1);
	assert_int_equal(dump(tp("k.vms"), NULL, tp("k.csv"), tp("k.err")), 0);
	char *out = text(tp("k.csv")), *err = text(tp("k.err"));
	assert_int_equal(count_lines(out), in.frames + 1);
	assert_int_equal(in.torn, strstr(err, "torn tail at offset") != NULL);
	free(out);
	free(err);

	/* cut the last record: now there is one for sure */
	size_t len;
	uint8_t *b = slurp(tp("k.vms"), &len);
	size_t cut = (size_t)in.last_rec_off + 5;
	spit(tp("k2.vms"), b, cut);
	free(b);
	struct info in2 = decode_info(tp("k2.vms"));
	assert_true(in2.torn);
	assert_int_equal(dump(tp("k2.vms"), NULL, tp("k2.csv"), tp("k2.err")), 0);
	out = text(tp("k2.csv"));
	err = text(tp("k2.err"));
	char want[256];
	snprintf(want, sizeof(want), "torn tail at offset %llu (5 bytes): %llu complete records recovered",
		 (unsigned long long)in.last_rec_off, (unsigned long long)in2.records);
	if (!strstr(err, want))
		fail_msg("stderr \"%s\" lacks \"%s\"", err, want);
	assert_int_equal(count_lines(err), 1);
	assert_int_equal(count_lines(out), in2.frames + (in2.frames ? 1 : 0));
	free(out);
	free(err);
}

/* The real loop: SIGHUP reopens (appends a SCHEMA and a keyframe to the
 * same file), SIGTERM ends cleanly: the file decodes to its end with
 * contiguous seq and no torn tail. */
static void test_sighup_sigterm(void **state)
{
	(void)state;
	pid_t pid = spawn_sampler(tp("h.vms"));
	wait_for_bytes(tp("h.vms"), 200);
	struct timespec ts = {0, 200 * 1000 * 1000};
	nanosleep(&ts, NULL);
	assert_int_equal(kill(pid, SIGHUP), 0);
	nanosleep(&ts, NULL);
	assert_int_equal(kill(pid, SIGTERM), 0);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);

	size_t len;
	struct vms_bin_dec d;
	int it;
	unsigned headers = 0, schemas = 0, events = 0;
	uint64_t seq = 0;
	uint8_t *b = slurp_dec(tp("h.vms"), &len, &d);
	while ((it = vms_bin_dec_next(&d)) > 0) {
		headers += it == VMS_BIN_HEADER;
		schemas += it == VMS_BIN_SCHEMA;
		if (it == VMS_BIN_EVENT && d.event.type == VMS_EV_OUTPUT_REOPENED)
			events++;
		if (it == VMS_BIN_DATA) {
			assert_int_equal(d.frame->seq, seq + 1);
			seq = d.frame->seq;
		}
	}
	assert_int_equal(it, VMS_BIN_END);
	assert_false(d.torn);
	assert_int_equal(headers, 1);
	assert_int_equal(schemas, 2);
	assert_int_equal(events, 1);
	assert_true(seq >= 10);
	vms_bin_dec_close(&d);
	free(b);

	/* --events lists it, as CSV */
	assert_int_equal(dump(tp("h.vms"), "--events", tp("e.csv"), tp("e.err")), 0);
	char *ev = text(tp("e.csv"));
	assert_int_equal(strncmp(ev, "before_seq,time,t_mono_ns,type,event,subject,detail\r\n", 53), 0);
	assert_non_null(strstr(ev, ",5,output_reopened,"));
	assert_int_equal(count_lines(ev), 2);
	free(ev);
}

/* A flipped byte in a middle record: exit 1, one line naming the record
 * and its offset, and every frame before it on stdout. */
static void test_corrupt_middle(void **state)
{
	(void)state;
	sample(tp("c.vms"), "30");
	size_t len;
	struct vms_bin_dec d;
	int it;
	uint64_t off = 0, index = 0, frames_before = 0;
	uint8_t *b = slurp_dec(tp("c.vms"), &len, &d);
	while ((it = vms_bin_dec_next(&d)) > 0) {
		if (it == VMS_BIN_DATA && d.frame->seq == 15) {
			off = d.rec_off;
			index = d.rec_index;
			frames_before = d.nframes - 1;
		}
	}
	vms_bin_dec_close(&d);
	assert_true(off > 0);
	b[off + 40] ^= 0x20;
	spit(tp("c2.vms"), b, len);
	free(b);
	assert_int_equal(dump(tp("c2.vms"), NULL, tp("c2.csv"), tp("c2.err")), 1);
	char *out = text(tp("c2.csv")), *err = text(tp("c2.err"));
	char want[128];
	snprintf(want, sizeof(want), "record %llu at offset %llu: payload CRC mismatch",
		 (unsigned long long)index, (unsigned long long)off);
	if (!strstr(err, want))
		fail_msg("stderr \"%s\" lacks \"%s\"", err, want);
	assert_int_equal(count_lines(err), 1);
	assert_int_equal(count_lines(out), frames_before + 1);
	free(out);
	free(err);
}

static void test_foreign_and_usage(void **state)
{
	(void)state;
	write_file(tp("f.csv"), "seq,time\r\n1,2\r\n", 15);
	/* not a vmsampler stream, another major version, missing: 2 */
	assert_int_equal(dump(tp("f.csv"), NULL, tp("f.out"), tp("f.err")), 2);
	char *err = text(tp("f.err"));
	assert_int_equal(count_lines(err), 1);
	assert_non_null(strstr(err, "not a vmsampler stream"));
	free(err);

	uint8_t h[VMS_FMT_HEADER_SIZE];
	vms_bin_header_enc(h, 0);
	h[7] = 2;
	spit(tp("v2.vms"), h, sizeof(h));
	assert_int_equal(dump(tp("v2.vms"), NULL, tp("v.out"), tp("v.err")), 2);
	err = text(tp("v.err"));
	assert_int_equal(count_lines(err), 1);
	assert_non_null(strstr(err, "major version 2"));
	free(err);

	assert_int_equal(dump(tp("missing.vms"), NULL, tp("m.out"), tp("m.err")), 2);
	/* an empty file: the writer died before its first flush */
	spit(tp("empty.vms"), "", 0);
	assert_int_equal(dump(tp("empty.vms"), NULL, tp("e.out"), tp("e.err")), 0);
	err = text(tp("e.err"));
	assert_non_null(strstr(err, "torn tail at offset 0 (0 bytes): 0 complete records recovered"));
	free(err);

	char *none[] = {(char *)bin, "dump", NULL};
	assert_int_equal(run_cmd(none, NULL, tp("u.out"), tp("u.err")), 2);
	char *bad[] = {(char *)bin, "dump", "--bogus", tp("x.vms"), NULL};
	assert_int_equal(run_cmd(bad, NULL, tp("u.out"), tp("u.err")), 2);
	char *two[] = {(char *)bin, "dump", "a.vms", "b.vms", NULL};
	assert_int_equal(run_cmd(two, NULL, tp("u.out"), tp("u.err")), 2);
	char *help[] = {(char *)bin, "dump", "--help", NULL};
	assert_int_equal(run_cmd(help, NULL, tp("h.out"), tp("h.err")), 0);
	char *h2 = text(tp("h.out"));
	assert_non_null(strstr(h2, "Usage: vmsampler dump FILE.vms [--rates | --events] [-o OUT]"));
	free(h2);
}

VMS_TEST_MAIN(setup, tmp_teardown,
	test_real_run, test_sigkill, test_sighup_sigterm, test_corrupt_middle,
	test_foreign_and_usage)

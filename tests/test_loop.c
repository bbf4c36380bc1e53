/* SPDX-License-Identifier: MIT */
/* The real loop (vms_loop_run) under a fake clock: deadlines on the grid,
 * missed ticks counted, no catch-up burst; and the steady-state tick
 * (sources + commit + CSV sink write/flush) performs zero heap
 * allocations and logs nothing. */
#include "testutil.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "binfmt.h"
#include "log.h"
#include "loop.h"
#include "loop_int.h"
#include "outcheck.h"
#include "vmtab.h"
#include <dirent.h>
#include <sys/stat.h>
#include <vmsampler/reader.h>

/* the counting allocator: see alloccount.h */
#include "alloccount.h"

/* ---- fake clock ---------------------------------------------------------- */
struct fake {
	uint64_t now, period, seed, cpu;
	uint64_t waits, stalls, stall_periods;
};

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static uint64_t f_mono(void *c) { return ((struct fake *)c)->now; }
static int64_t f_real(void *c) { return (int64_t)((struct fake *)c)->now + 1795330800000000000LL; }
static uint64_t f_cpu(void *c) { return ((struct fake *)c)->cpu += 1000; }
static int f_wait(void *c, uint64_t deadline, struct pollfd *fds, unsigned n)
{
	struct fake *f = c;
	for (unsigned i = 0; i < n; i++)
		fds[i].revents = 0;
	if (f->now < deadline)
		f->now = deadline;
	f->now += rnd(&f->seed) % (f->period / 4);
	if (++f->waits % 101 == 50) {
		uint64_t k = 1 + rnd(&f->seed) % 4;
		f->now += k * f->period;
		f->stalls++;
		f->stall_periods += k;
	}
	return 1;
}
static const struct vms_clock_ops fake_ops = {f_mono, f_real, f_cpu, f_wait};

static char *make_root(void)
{
	char *d = tmpdir_make();
	char p[512];
	snprintf(p, sizeof(p), "%s/loadavg", d);
	const char *la = "0.21 0.37 0.39 1/719 19737\n"; /* node_exporter's fixture line */
	write_file(p, la, strlen(la));
	return d;
}

/* The fake clock at 1 s, a 10 ms period: fk, and clk that reads it. */
#define FAKE_CLOCK(seed_)                                                                          \
	struct fake fk = {.now = VMS_NSEC_PER_SEC, .period = 10 * VMS_NSEC_PER_MSEC, .seed = seed_}; \
	struct vms_clock clk = {&fake_ops, &fk}

/* The loop ends cleanly; its root and configuration are freed. */
static void loop_end(struct vms_loop *l, char *root, struct vms_config *conf)
{
	assert_int_equal(vms_loop_fini(l), 0);
	tmpdir_free(root);
	vms_config_free(conf);
}

static void conf_for(struct vms_config *c, const char *root, const char *out, uint64_t count)
{
	vms_config_defaults(c);
	free(c->proc_root);
	c->proc_root = strdup(root);
	free(c->output);
	c->output = strdup(out);
	c->interval_ns = 10 * VMS_NSEC_PER_MSEC;
	c->count = count;
	c->libvirt.src.enabled = false; /* the loop's test: no per-VM agent */
}

static void test_fake_clock_loop(void **state)
{
	(void)state;
	char *root = make_root(), out[512];
	snprintf(out, sizeof(out), "%s/out.csv", root);
	struct fake fk = {.now = 5 * VMS_NSEC_PER_SEC, .period = 10 * VMS_NSEC_PER_MSEC, .seed = 88172645463325252ULL};
	struct vms_clock clk = {&fake_ops, &fk};
	struct vms_config conf;
	struct vms_loop l;
	const uint64_t N = 3000;

	conf_for(&conf, root, out, N);
	assert_int_equal(vms_loop_init(&l, &conf, &clk, NULL), 0);
	assert_int_equal(vms_loop_run(&l), 0);
	assert_int_equal(vms_loop_fini(&l), 0);

	FILE *f = fopen(out, "r");
	assert_non_null(f);
	char line[4096];
	assert_non_null(fgets(line, sizeof(line), f)); /* header */
	uint64_t rows = 0, missed_sum = 0, start = 0, prev_idx = 0;
	const uint64_t P = fk.period;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long seq, mono, gen, flags, missed, lost, late, cpu;
		char tbuf[64];
		assert_int_equal(sscanf(line, "%llu,%63[^,],%llu,%llu,%llu,%llu,%llu,%llu,%llu", &seq, tbuf,
					&mono, &gen, &flags, &missed, &lost, &late, &cpu),
				 9);
		rows++;
		assert_int_equal(seq, rows);
		assert_true(late < P);
		uint64_t deadline = mono - late;
		if (rows == 1)
			start = deadline;
		/* on the grid, and exactly (1 + missed) periods after the last */
		assert_int_equal((deadline - start) % P, 0);
		uint64_t idx = (deadline - start) / P;
		if (rows > 1)
			assert_int_equal(idx, prev_idx + 1 + missed);
		prev_idx = idx;
		missed_sum += missed;
		assert_int_equal(lost, 0);
		assert_int_equal(cpu, 1000); /* the fake CPU clock advances 1000 per read */
	}
	fclose(f);
	assert_int_equal(rows, N);
	/* every stall of k periods shows up as exactly k missed ticks */
	assert_int_equal(missed_sum, fk.stall_periods);
	assert_true(fk.stalls > 10);
	tmpdir_free(root);
	vms_config_free(&conf);
}

/* with_ring: the ring is a shared file (--ring) with a reader attached */
static void steady_state(bool with_ring)
{
#if !HAVE_COUNTING_MALLOC
	(void)with_ring;
	vms_skip("VMS_REQUIRE_NOALLOC", "no counting allocator in this build (ASan owns malloc)");
#else
	char *root = make_root(), out[512], ringp[512];
	snprintf(out, sizeof(out), "%s/out.csv", root);
	snprintf(ringp, sizeof(ringp), "%s/ring", root);
	FAKE_CLOCK(7);
	struct vms_config conf;
	struct vms_loop l;

	conf_for(&conf, root, out, 0);
	if (with_ring)
		conf.ring_path = strdup(ringp);
	assert_int_equal(vms_loop_init(&l, &conf, &clk, NULL), 0);
	struct vms_sched s;
	vms_sched_init(&s, fk.now, fk.period);
	struct vms_tickinfo ti;
	/* warm-up: first frame (header, schema), buffers sized */
	for (int i = 0; i < 20; i++) {
		fk.now = vms_sched_next(&s) + 1000;
		assert_true(vms_sched_wake(&s, fk.now, &ti));
		vms_loop_tick(&l, &ti);
		vms_loop_drain(&l);
	}
	unsigned long logs = vms_log_count;
	allocs = 0;
	armed = 1;
	for (int i = 0; i < 5000; i++) {
		fk.now = vms_sched_next(&s) + 1000 + (uint64_t)(i % 7) * 100000;
		vms_sched_wake(&s, fk.now, &ti);
		vms_loop_tick(&l, &ti);
		vms_loop_drain(&l);
	}
	armed = 0;
	assert_int_equal(allocs, 0);
	assert_int_equal(vms_log_count, logs);
	assert_int_equal(l.frames, 5020);
	/* the counter is not dead: allocations outside the tick are seen */
	armed = 1;
	void *volatile p = malloc(16); /* volatile: not elided */
	armed = 0;
	free(p);
	assert_int_equal(allocs, 1);
	if (with_ring) {
		/* the frames are in the file, the last one readable */
		struct vms_reader *r;
		assert_int_equal(vms_reader_open(&r, ringp, VMS_READER_NEW_ONLY), 0);
		assert_int_equal(l.ring.hdr->write_seq, 5020);
		/* nothing after the newest (the fake clock's heartbeat looks
		 * ancient to the reader, so it may also say the writer hangs) */
		int e = vms_reader_next(r);
		assert_true(e == 0 || e == -ESRCH);
		vms_reader_close(r);
		assert_int_equal(vms_reader_open(&r, ringp, 0), 0);
		assert_int_equal(vms_reader_next(r), 1);
		assert_int_equal(vms_reader_seq(r), 5020 - 63);
		assert_true(vms_reader_column(r, "load.1m") >= 0);
		vms_reader_close(r);
	}
	loop_end(&l, root, &conf);
#endif
}

static void test_steady_state_no_alloc_no_log(void **state)
{
	(void)state;
	steady_state(false);
}

/* The same with the ring in a shared file: still no allocation. */
static void test_steady_state_live_ring_no_alloc(void **state)
{
	(void)state;
	steady_state(true);
}

static char *read_fixture(const char *rel)
{
	size_t n;
	char *b = fixture_read(rel, &n);
	assert_non_null(b);
	return b;
}

static void set_netdev(const char *root, const char *fixture_root)
{
	char p[512], rel[256];
	snprintf(p, sizeof(p), "%s/net/dev", root);
	snprintf(rel, sizeof(rel), "roots/%s/net/dev", fixture_root);
	char *b = read_fixture(rel);
	write_file(p, b, strlen(b));
	free(b);
}

static void one_tick(struct vms_loop *l, struct vms_sched *s, struct fake *fk)
{
	struct vms_tickinfo ti;
	fk->now = vms_sched_next(s) + 1000;
	assert_true(vms_sched_wake(s, fk->now, &ti));
	vms_loop_tick(l, &ti);
	vms_loop_drain(l);
}

static uint64_t last_value(struct vms_loop *l, const char *col)
{
	int k = vms_schema_find(l->schema, col);
	assert_true(k >= 0);
	const struct vms_frame *f = vms_ring_get(&l->ring, vms_ring_last(&l->ring));
	assert_non_null(f);
	assert_int_equal(f->gen, l->schema->gen);
	return f->v[k];
}

/* A loop over the netdev fixture with lo and eth0 and only veth*
 * included (no net. column yet), on the fake clock, its scheduler at the
 * first tick; conf set up by conf_for, then tuned by the caller's `tune`
 * (NULL: none). */
struct netrun {
	struct fake fk;
	struct vms_clock clk;
	struct vms_config conf;
	struct vms_sched s;
	struct vms_loop l;
};

static void netrun_start(struct netrun *n, const char *root, const char *out, void (*tune)(struct vms_config *, int),
			 int arg)
{
	set_netdev(root, "procfs-pid26231-netns"); /* lo, eth0 */
	n->fk = (struct fake){.now = VMS_NSEC_PER_SEC, .period = 10 * VMS_NSEC_PER_MSEC, .seed = 3};
	n->clk = (struct vms_clock){&fake_ops, &n->fk};
	conf_for(&n->conf, root, out, 0);
	if (tune)
		tune(&n->conf, arg);
	assert_int_equal(vms_globs_add(&n->conf.netdev.include, "veth*"), 0);
	assert_int_equal(vms_loop_init(&n->l, &n->conf, &n->clk, NULL), 0);
	vms_sched_init(&n->s, n->fk.now, n->fk.period);
}

/* A source whose every entity is filtered out declares no column, but is
 * still sampled, so an interface that appears later gets its columns. */
static void test_zero_column_source_sees_new_entity(void **state)
{
	(void)state;
	char *root = make_root(), out[512];
	snprintf(out, sizeof(out), "%s/out.csv", root);
	struct netrun *n = calloc(1, sizeof(*n));
	assert_non_null(n);
	netrun_start(n, root, out, NULL, 0);
	one_tick(&n->l, &n->s, &n->fk);
	assert_int_equal(n->l.schema->gen, 1);
	for (uint32_t i = 0; i < n->l.schema->ncols; i++)
		assert_null(strstr(n->l.schema->cols[i].name, "net."));
	set_netdev(root, "procfs-docker-veth"); /* adds vethf345468 */
	one_tick(&n->l, &n->s, &n->fk);
	assert_int_equal(n->l.schema->gen, 2);
	/* procfs's TestNetDev: vethf345468 RxBytes 648, TxPackets 5 */
	assert_int_equal(last_value(&n->l, "net.vethf345468.rx_bytes"), 648);
	assert_int_equal(last_value(&n->l, "net.vethf345468.tx_packets"), 5);
	loop_end(&n->l, root, &n->conf);
	free(n);
}

/* A schema change is switched in between ticks, not inside one: when an
 * interface appears, or a VM starts (the VM table's generation moves and
 * netdev re-declares to leave its taps out), the tick commits nothing and
 * says so, without allocating or logging; the loop re-declares between
 * ticks (that allocates); the tick taken again has the new columns, with
 * the fixture's values, again without allocating. */
static void test_reschema_between_ticks_no_alloc(void **state)
{
	(void)state;
#if !HAVE_COUNTING_MALLOC
	vms_skip("VMS_REQUIRE_NOALLOC", "no counting allocator in this build (ASan owns malloc)");
#else
	char *root = make_root(), out[512];
	snprintf(out, sizeof(out), "%s/out.csv", root);
	set_netdev(root, "procfs-pid26231-netns"); /* lo, eth0 */
	FAKE_CLOCK(13);
	struct vms_config conf;
	struct vms_loop l;
	conf_for(&conf, root, out, 0);
	assert_int_equal(vms_loop_init(&l, &conf, &clk, NULL), 0);
	struct vms_sched s;
	vms_sched_init(&s, fk.now, fk.period);
	for (int i = 0; i < 20; i++)
		one_tick(&l, &s, &fk);
	assert_int_equal(l.schema->gen, 1);

	for (int change = 0; change < 2; change++) {
		struct vms_vm vm = {.uuid = "6f0b2e52-5a4d-4d8e-9d3e-2b1f0c7a9e11", .name = (char *)"t"};
		if (change == 0)
			set_netdev(root, "procfs-docker-veth"); /* adds vethf345468 */
		else
			assert_int_equal(vms_vmtab_upsert(&l.sh.vms, &vm), 1);
		uint32_t gen = l.schema->gen;
		uint64_t frames = l.frames;
		struct vms_tickinfo ti;
		fk.now = vms_sched_next(&s) + 1000;
		assert_true(vms_sched_wake(&s, fk.now, &ti));
		int64_t real = vms_clock_real(&l.clock);
		unsigned long logs = vms_log_count;
		allocs = 0;
		armed = 1;
		int r = vms_loop_take(&l, &ti, real, false);
		armed = 0;
		assert_int_equal(r, VMS_RESCHEMA);
		assert_int_equal(allocs, 0);
		assert_int_equal(vms_log_count, logs);
		assert_int_equal(l.frames, frames); /* nothing committed */

		assert_int_equal(vms_loop_reschema(&l), 0); /* between ticks */
		/* a new interface is a new generation; this VM has no tap in
		 * net/dev: re-declared, the same columns */
		assert_int_equal(l.schema->gen, change == 0 ? gen + 1 : gen);

		logs = vms_log_count;
		allocs = 0;
		armed = 1;
		r = vms_loop_take(&l, &ti, real, false);
		armed = 0;
		assert_int_equal(r, 0);
		assert_int_equal(allocs, 0);
		assert_int_equal(vms_log_count, logs);
		assert_int_equal(l.frames, frames + 1);
		/* procfs's TestNetDev: vethf345468 RxBytes 648, TxPackets 5 */
		assert_int_equal(last_value(&l, "net.vethf345468.rx_bytes"), 648);
		assert_int_equal(last_value(&l, "net.vethf345468.tx_packets"), 5);
		vms_loop_drain(&l);
	}
	loop_end(&l, root, &conf);
#endif
}

/* A source whose discovery fails has no columns; the loop retries the
 * discovery with back-off and its columns appear once it succeeds. */
static void test_failed_discovery_is_retried(void **state)
{
	(void)state;
	char *root = make_root(), out[512], p[600];
	snprintf(out, sizeof(out), "%s/out.csv", root);
	snprintf(p, sizeof(p), "%s/net/dev", root);
	const char *garbage = "this is not\na net/dev header\n";
	write_file(p, garbage, strlen(garbage));
	FAKE_CLOCK(5);
	struct vms_config conf;
	struct vms_loop l;
	conf_for(&conf, root, out, 0);
	assert_int_equal(vms_loop_init(&l, &conf, &clk, NULL), 0);
	struct vms_sched s;
	vms_sched_init(&s, fk.now, fk.period);
	for (int i = 0; i < 5; i++)
		one_tick(&l, &s, &fk);
	assert_int_equal(vms_schema_find(l.schema, "net.eth0.rx_bytes"), -ENOENT);
	set_netdev(root, "procfs-pid26231-netns");
	for (int i = 0; i < 70; i++) /* back-off is at most 64 ticks */
		one_tick(&l, &s, &fk);
	/* procfs's TestProcNetDev: eth0 RxBytes 438, TxBytes 648 */
	assert_int_equal(last_value(&l, "net.eth0.rx_bytes"), 438);
	assert_int_equal(last_value(&l, "net.eth0.tx_bytes"), 648);
	loop_end(&l, root, &conf);
}

/* A live ring whose schema outgrows its slots: the loop replaces the
 * file, and a reader attached all along sees every frame, the old
 * generation's and the new one's. */
static void test_live_ring_grows(void **state)
{
	(void)state;
	char *root = make_root(), out[512], ringp[512];
	snprintf(out, sizeof(out), "%s/out.csv", root);
	snprintf(ringp, sizeof(ringp), "%s/ring", root);
	set_netdev(root, "procfs-pid26231-netns"); /* lo, eth0 */
	FAKE_CLOCK(11);
	struct vms_config conf;
	struct vms_loop l;
	conf_for(&conf, root, out, 0);
	conf.ring_path = strdup(ringp);
	assert_int_equal(vms_loop_init(&l, &conf, &clk, NULL), 0);
	struct vms_sched s;
	vms_sched_init(&s, fk.now, fk.period);
	struct vms_reader *r;
	assert_int_equal(vms_reader_open(&r, ringp, 0), 0);
	uint32_t slot_cols = l.ring.slot_cols;
	for (int i = 0; i < 5; i++)
		one_tick(&l, &s, &fk);
	set_netdev(root, "pcp-bigsys-hpbl920-49if"); /* 49 interfaces */
	for (int i = 0; i < 5; i++)
		one_tick(&l, &s, &fk);
	assert_true(l.ring.slot_cols > slot_cols); /* it grew */
	uint64_t seq = 0;
	unsigned changes = 0;
	while (vms_reader_next(r) == 1) {
		assert_int_equal(vms_reader_seq(r), ++seq);
		changes += vms_reader_schema_changed(r);
		assert_int_equal(vms_reader_gen(r), seq <= 5 ? 1 : 2);
	}
	assert_int_equal(seq, 10);
	assert_int_equal(changes, 2);
	assert_int_equal(vms_reader_missed(r), 0);
	assert_true(vms_reader_column(r, "net.eth0.rx_bytes") >= 0);
	assert_int_equal(vms_reader_ncols(r), l.schema->ncols);
	vms_reader_close(r);
	loop_end(&l, root, &conf);
}

/* ---- lost frames, output by output --------------------------------------- */

/* Read what the pipe holds (rfd is non-blocking). */
static void read_avail(int rfd, char **buf, size_t *len, size_t *cap)
{
	for (;;) {
		if (*cap - *len < 65536) {
			*cap = *cap * 2 + 65536;
			*buf = realloc(*buf, *cap + 1);
			assert_non_null(*buf);
		}
		ssize_t n = read(rfd, *buf + *len, *cap - *len);
		if (n <= 0) {
			assert_true(n == 0 || errno == EAGAIN);
			break;
		}
		*len += (size_t)n;
	}
	(*buf)[*len] = '\0';
}

/* Drain and read until the sink has nothing left (the pipe stays empty
 * after a drain). */
static void read_all(struct vms_loop *l, int rfd, char **buf, size_t *len, size_t *cap)
{
	for (int idle = 0; idle < 2;) {
		size_t before = *len;
		vms_loop_drain(l);
		read_avail(rfd, buf, len, cap);
		idle = *len == before ? idle + 1 : 0;
	}
}

/* The frames of what an output named name (.vms or CSV) wrote: buf. */
static void frames_read(const char *name, const char *buf, size_t len, struct frames *fr)
{
	if (!strstr(name, ".vms")) {
		frames_add_csv(fr, buf);
		return;
	}
	struct vms_bin_dec d;
	int it;
	assert_int_equal(vms_bin_dec_open_mem(&d, buf, len), 0);
	while ((it = vms_bin_dec_next(&d)) > 0)
		if (it == VMS_BIN_DATA) {
			const struct vms_frame *f = d.frame;
			assert_int_equal(f->missed_ticks, 0);
			frames_add(fr, f->seq, f->flags, f->lost_frames);
		}
	assert_int_equal(it, VMS_BIN_END);
	vms_bin_dec_close(&d);
}

/* A run whose output is a FIFO of 4 KiB that this test reads (rfd,
 * non-blocking), 4 ring slots, the fake clock. */
struct fiforun {
	char *root, out[512];
	int rfd;
	struct fake fk;
	struct vms_clock clk;
	struct vms_config conf;
	struct vms_sched s;
	struct vms_loop l;
	char *buf;
	size_t len, cap;
	struct frames fr;
	struct frames_sum sum;
};

static void fifo_start(struct fiforun *f, const char *name, uint64_t seed)
{
	memset(f, 0, sizeof(*f)); /* (static: a failed test before left it as it was) */
	f->root = make_root();
	snprintf(f->out, sizeof(f->out), "%s/%s", f->root, name);
	assert_int_equal(mkfifo(f->out, 0600), 0);
	f->rfd = open(f->out, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	assert_true(f->rfd >= 0);
	assert_true(fcntl(f->rfd, F_SETPIPE_SZ, 4096) >= 4096);
	f->fk = (struct fake){.now = VMS_NSEC_PER_SEC, .period = 10 * VMS_NSEC_PER_MSEC, .seed = seed};
	f->clk = (struct vms_clock){&fake_ops, &f->fk};
	conf_for(&f->conf, f->root, f->out, 0);
	f->conf.ring_slots = 4;
	assert_int_equal(vms_loop_init(&f->l, &f->conf, &f->clk, NULL), 0);
	vms_sched_init(&f->s, f->fk.now, f->fk.period);
}

/* The loop ends; what the FIFO got is read and checked (frames_check):
 * f->fr, f->sum. */
static void fifo_end(struct fiforun *f, const char *name)
{
	assert_int_equal(vms_loop_fini(&f->l), 0);
	read_avail(f->rfd, &f->buf, &f->len, &f->cap);
	close(f->rfd);
	frames_read(name, f->buf, f->len, &f->fr);
	frames_check(&f->fr, &f->sum);
}

static void fifo_free(struct fiforun *f)
{
	frames_free(&f->fr);
	free(f->buf);
	tmpdir_free(f->root);
	vms_config_free(&f->conf);
}

/* The output is a FIFO whose reader (this test) stops reading for
 * thousands of ticks, three times: frames are lost, and the first frame
 * written after each gap, and only it, carries the number lost (the old
 * loop put the count on the newest frame in the ring, which the output
 * got some 60 frames later). */
static void lost_on_stalled_fifo(const char *name)
{
	static struct fiforun f;
	fifo_start(&f, name, 13);
	uint64_t total = 0;
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 10; i++, total++) { /* a reader that keeps up */
			one_tick(&f.l, &f.s, &f.fk);
			read_all(&f.l, f.rfd, &f.buf, &f.len, &f.cap);
		}
		/* > 64 KiB buffer + 4 KiB pipe + 4 slots, whatever the row size */
		for (int i = 0; i < 3000; i++, total++)
			one_tick(&f.l, &f.s, &f.fk);
		read_all(&f.l, f.rfd, &f.buf, &f.len, &f.cap);
	}
	for (int i = 0; i < 10; i++, total++) {
		one_tick(&f.l, &f.s, &f.fk);
		read_all(&f.l, f.rfd, &f.buf, &f.len, &f.cap);
	}
	fifo_end(&f, name);
	assert_int_equal(f.sum.gaps, 3);
	assert_int_equal(f.sum.last, total);
	assert_int_equal(f.sum.lost_sum, total - f.fr.n);
	fifo_free(&f);
}

static void test_lost_frames_on_stalled_csv(void **state)
{
	(void)state;
	lost_on_stalled_fifo("out.csv");
}

static void test_lost_frames_on_stalled_vms(void **state)
{
	(void)state;
	lost_on_stalled_fifo("out.vms");
}

/* The reader of a stalled output wakes up at exit between the flush that
 * found its pipe full and the next one, and keeps up from then on: that
 * next flush empties the sink's buffer.  The exit (vms_output_finish(),
 * after the loop) still writes every frame the ring holds.  The drain used
 * to stop at that flush, with frames in the ring and no byte to wait for,
 * which the exit took for "all written": lost_frames' SIGTERM test under
 * load ("last frame written 104, taken 151"). */
static struct {
	const struct vms_sink_ops *real;
	int rfd;
	char **buf;
	size_t *len, *cap;
	unsigned flushes, full;
} wake;

static int wake_flush(struct vms_sink *s)
{
	int r = wake.real->flush(s);
	if (wake.flushes++ == 0) { /* still stalled */
		wake.full += r == -EAGAIN;
		return r;
	}
	while (r == -EAGAIN) { /* the reader keeps up: the pipe empties as it fills */
		read_avail(wake.rfd, wake.buf, wake.len, wake.cap);
		r = wake.real->flush(s);
	}
	return r;
}

static void reader_wakes_at_exit(const char *name)
{
	static struct fiforun f;
	fifo_start(&f, name, 17);
	const uint64_t total = 3010;
	for (int i = 0; i < 10; i++) {
		one_tick(&f.l, &f.s, &f.fk);
		read_all(&f.l, f.rfd, &f.buf, &f.len, &f.cap);
	}
	/* > 64 KiB buffer + 4 KiB pipe + 4 slots, whatever the row size */
	for (uint64_t i = 10; i < total; i++)
		one_tick(&f.l, &f.s, &f.fk);
	struct vms_sink *sk = &f.l.out.sink[0];
	struct vms_sink_ops ops = *sk->ops;
	ops.flush = wake_flush;
	wake = (typeof(wake)){.real = sk->ops, .rfd = f.rfd, .buf = &f.buf, .len = &f.len, .cap = &f.cap};
	sk->ops = &ops;
	vms_output_finish(&f.l);
	sk->ops = wake.real;
	assert_int_equal(wake.full, 1); /* the exit's first flush found the pipe full */
	assert_int_equal(vms_ring_last(&f.l.ring), total);
	fifo_end(&f, name);
	assert_int_equal(f.sum.last, total); /* the ring's 4 frames too */
	assert_int_equal(f.sum.gaps, 1);
	assert_int_equal(f.sum.lost_sum, total - f.fr.n);
	fifo_free(&f);
}

static void test_exit_drains_after_reader_wakes_csv(void **state)
{
	(void)state;
	reader_wakes_at_exit("out.csv");
}

static void test_exit_drains_after_reader_wakes_vms(void **state)
{
	(void)state;
	reader_wakes_at_exit("out.vms");
}

/* A long-layout CSV frame of thousands of columns (a host with 300
 * interfaces: /proc/net/dev made up here, the parser's own tests use real
 * ones) is written whole: every frame, a row per column.  It used to be
 * one record larger than the sink's 64 KiB buffer, which never fitted:
 * the run ended with status 0 and only the header in the file. */
static void test_long_layout_wide_frames(void **state)
{
	(void)state;
	char *root = make_root(), out[512], p[512];
	snprintf(out, sizeof(out), "%s/out.csv", root);
	snprintf(p, sizeof(p), "%s/net", root);
	assert_int_equal(mkdir(p, 0755), 0);
	size_t cap = 1 << 20, n = 0;
	char *dev = malloc(cap);
	assert_non_null(dev);
	n += (size_t)snprintf(dev + n, cap - n,
			      "Inter-|   Receive                                                |  Transmit\n"
			      " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs "
			      "drop fifo colls carrier compressed\n");
	for (unsigned i = 0; i < 300; i++)
		n += (size_t)snprintf(dev + n, cap - n,
				      "vnet%u: %u 2 3 4 5 6 7 8 %u 10 11 12 13 14 15 16\n", i, 1000 + i, 2000 + i);
	snprintf(p, sizeof(p), "%s/net/dev", root);
	write_file(p, dev, n);
	free(dev);
	FAKE_CLOCK(11);
	struct vms_config conf;
	struct vms_loop l;
	conf_for(&conf, root, out, 3);
	conf.csv_layout = VMS_CSV_LONG;
	assert_int_equal(vms_loop_init(&l, &conf, &clk, NULL), 0);
	uint32_t ncols = l.schema->ncols;
	assert_true(ncols > 1200); /* a frame of > 100 KiB in the long layout */
	assert_int_equal(vms_loop_run(&l), 0);

	FILE *f = fopen(out, "r");
	assert_non_null(f);
	char line[4096];
	assert_non_null(fgets(line, sizeof(line), f)); /* header */
	unsigned long rows[4] = {0}, vnet299 = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long seq = strtoul(line, NULL, 10);
		assert_true(seq >= 1 && seq <= 3);
		rows[seq]++;
		if (strstr(line, ",net.vnet299.rx_bytes,1299\r\n"))
			vnet299++;
	}
	fclose(f);
	for (unsigned s = 1; s <= 3; s++)
		assert_int_equal(rows[s], ncols);
	assert_int_equal(vnet299, 3);
	loop_end(&l, root, &conf);
}

/* Rotation and a new generation: each sink decides (its newgen_file op,
 * sink.h).  A rotated wide CSV, whose header cannot change, starts a new
 * file when an interface appears; a long one goes on in the same file.
 * Checked on the files in the output's directory: their number, and the
 * header of each wide file against the schema generation it holds. */
static unsigned rotated_files(const char *dir, const char *want_col, unsigned *with_col)
{
	DIR *d = opendir(dir);
	assert_non_null(d);
	unsigned n = 0;
	*with_col = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (strncmp(e->d_name, "run-", 4) != 0)
			continue;
		char p[1024];
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		FILE *f = fopen(p, "r");
		assert_non_null(f);
		char line[8192];
		assert_non_null(fgets(line, sizeof(line), f));
		*with_col += strstr(line, want_col) != NULL;
		fclose(f);
		n++;
	}
	closedir(d);
	return n;
}

/* rotated every hour (not due in the run), in the given CSV layout */
static void rotate_hourly(struct vms_config *c, int layout)
{
	c->csv_layout = (enum vms_csv_layout)layout;
	c->rotate.ns = 3600 * VMS_NSEC_PER_SEC;
}

static void test_rotation_new_generation_by_sink(void **state)
{
	(void)state;
	for (int layout = VMS_CSV_WIDE; layout <= VMS_CSV_LONG; layout++) {
		char *root = make_root(), dir[512], out[600];
		snprintf(dir, sizeof(dir), "%s/out", root);
		assert_int_equal(mkdir(dir, 0700), 0);
		snprintf(out, sizeof(out), "%s/run.csv", dir);
		struct netrun *n = calloc(1, sizeof(*n));
		assert_non_null(n);
		netrun_start(n, root, out, rotate_hourly, layout);
		for (int i = 0; i < 3; i++)
			one_tick(&n->l, &n->s, &n->fk);
		set_netdev(root, "procfs-docker-veth"); /* adds vethf345468: generation 2 */
		for (int i = 0; i < 3; i++)
			one_tick(&n->l, &n->s, &n->fk);
		assert_int_equal(n->l.schema->gen, 2);
		assert_int_equal(vms_loop_fini(&n->l), 0);
		unsigned with_veth;
		unsigned files = rotated_files(dir, "net.vethf345468.rx_bytes", &with_veth);
		if (layout == VMS_CSV_WIDE) {
			assert_int_equal(files, 2);     /* generation 1, then 2 */
			assert_int_equal(with_veth, 1); /* only the second header has it */
		} else {
			assert_int_equal(files, 1);     /* one file, the columns in the rows */
		}
		tmpdir_free(root);
		vms_config_free(&n->conf);
		free(n);
	}
}

/* A column a source cannot name (longer than the 511 bytes of a column
 * name; no entity name does that any more, vms_name_fit) fails that source
 * only: the others go on in the new schema, and the source comes back when
 * it can declare again.  Before, the schema failed and the sampler stopped
 * ("cannot build the schema: File name too long"). */
static const struct vms_source_ops *real_loadavg;
static int unnameable_declare(struct vms_source *src, struct vms_schema_builder *b,
			      const struct vms_source_env *env)
{
	(void)src;
	(void)env;
	const struct vms_coldef d = {.kind = VMS_KIND_GAUGE, .unit = VMS_UNIT_LOAD, .scale = 2};
	vms_schema_addf(b, &d, "load.%0600d", 1);
	return b->err;
}

static void test_unnameable_column_fails_one_source(void **state)
{
	(void)state;
	char *root = make_root(), out[512];
	snprintf(out, sizeof(out), "%s/out.csv", root);
	FAKE_CLOCK(7);
	struct vms_config conf;
	struct vms_loop l;
	conf_for(&conf, root, out, 0);
	assert_int_equal(vms_loop_init(&l, &conf, &clk, NULL), 0);
	struct vms_sched s;
	vms_sched_init(&s, fk.now, fk.period);
	one_tick(&l, &s, &fk);
	assert_int_equal(last_value(&l, "load.1m"), 21); /* the fixture's 0.21, scale 2 */
	struct vms_source *la = NULL;
	for (unsigned i = 0; i < l.sh.nsrc; i++)
		if (l.sh.src[i].ops && strcmp(l.sh.src[i].ops->name, "loadavg") == 0)
			la = &l.sh.src[i];
	assert_non_null(la);
	static struct vms_source_ops bad;
	real_loadavg = la->ops;
	bad = *la->ops;
	bad.declare = unnameable_declare;
	la->ops = &bad;
	assert_int_equal(vms_loop_reschema(&l), 0);
	assert_false(l.stop);
	assert_true(la->declare_failed);
	assert_int_equal(vms_schema_find(l.schema, "load.1m"), -ENOENT);
	assert_true(vms_schema_find(l.schema, "vms.parse_errors") >= 0);
	for (int i = 0; i < 5; i++)
		one_tick(&l, &s, &fk);
	assert_false(l.stop);
	la->ops = real_loadavg; /* it can name its columns again: back after its back-off */
	for (int i = 0; i < 70; i++)
		one_tick(&l, &s, &fk);
	assert_int_equal(last_value(&l, "load.1m"), 21);
	loop_end(&l, root, &conf);
}

VMS_TESTS(
	test_fake_clock_loop, test_steady_state_no_alloc_no_log,
	test_steady_state_live_ring_no_alloc, test_reschema_between_ticks_no_alloc,
	test_live_ring_grows, test_zero_column_source_sees_new_entity,
	test_failed_discovery_is_retried, test_lost_frames_on_stalled_csv,
	test_lost_frames_on_stalled_vms, test_exit_drains_after_reader_wakes_csv,
	test_exit_drains_after_reader_wakes_vms, test_long_layout_wide_frames, test_rotation_new_generation_by_sink,
	test_unnameable_column_fails_one_source);

int main(void)
{
	setenv("TZ", "UTC", 1);
	return vms_run_list(NULL, NULL, NULL, NULL);
}

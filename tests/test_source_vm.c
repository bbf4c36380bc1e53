/* SPDX-License-Identifier: MIT */
/* test_source_vm.c - the vm source end to end, through the real loop and
 * the binary sink, against a fixture proc root and cgroup tree
 * (tests/fixtures/vm/v2-vms-002: a guest of this host captured with its
 * `virsh domstats`), with its agent replaced by tests/fake_agent.c: the
 * real agent needs libvirtd and gives no scripted timing (it is tested
 * on real guests in tests/integration).  The fake is started exactly as
 * the agent is (fork+exec from the source, the protocol on fd 3).
 *
 * The clock is fake (the deadlines come at once) but its wait() lets a
 * deadline come only once the agent owes the source nothing: it said
 * HELLO and acknowledged every TICK it was sent (what it answers comes
 * with the ACK), or it is gone, or it said it hangs (the stuck scenario);
 * until then it polls the agent's socket for real, and fails the test
 * when the agent says nothing for 10 s.  So frame k + 1 has the answer to
 * tick k however busy the host, and no tick waits longer than that.
 * Checked: per-VM columns (keyed by UUID) from the first frame; kernel
 * values equal to libvirt's reading (mem.rss in the VM's detail frames
 * only, the memory path bit in all); the agent's fallback values with
 * their path bits; slow values in exactly the frame after their arrival
 * with slow_t; lifecycle EVENTs and the state column; columns vanishing
 * with a VM; the connection gap (virt.connected, LIBVIRT_LOST/BACK) with
 * the kernel values going on; the VM's tap left out of the host's net.*;
 * the watchdog (a stuck agent is killed and restarted, the domains of
 * its batch held back); restarts after exit and after garbage; one line
 * when libvirt is unavailable; and a steady-state tick that allocates
 * nothing and logs nothing. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

#include "binfmt.h"
#include "log.h"
#include "loop.h"
#include "virt_proto.h"
#include "vm_int.h"
#include "vmtab.h"

#define U_LOCAL "4d0c6bd9-5ae6-43b2-8d56-3c9c6e0e7e3a"
#define U_REMOTE "11111111-2222-3333-4444-555555555555"
#define FIX "vm/v2-vms-002"
#define TICK (100 * VMS_NSEC_PER_MSEC)
#define DETAIL_EVERY 3

/* the counting allocator: see alloccount.h */
#include "alloccount.h"

/* ---- a fake clock that waits for the agent's answers ------------------------- */

/* How long the agent may stay silent while it owes an answer (it answers
 * in a few ms on an idle host) */
#define ANSWER_WAIT_MS 10000

struct fake {
	uint64_t now, cpu;
	const struct vms_loop *l;   /* the run (its vm source's agent) */
	const char *agent_log;      /* the fake agents' notes (NULL: none) */
	int saved_stderr;           /* the test's stderr while the run's goes to a file (-1: none) */
};

static char *slurp_text(const char *path, char *buf, size_t cap)
{
	buf[0] = '\0';
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return buf;
	ssize_t n = read(fd, buf, cap - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/* The run's vm source (NULL: none open). */
static const struct vms_vmsrc *vm_src(const struct vms_loop *l)
{
	for (unsigned i = 0; l && i < l->sh.nsrc; i++)
		if (l->sh.src[i].ops && l->sh.src[i].ops->produces_vms)
			return l->sh.src[i].priv;
	return NULL;
}

/* What the agent still owes the source, into why (NULL: nothing): its
 * HELLO (the rest of its start comes with it), the ACK of the last TICK
 * (its answer comes in the same write), or the reading of what the
 * source queued for it.  Nothing when it is gone (a restart is due in the
 * run's time) or said it hangs (fake_agent.c: "hang PID" before its last
 * answer; the watchdog's time must pass). */
static const char *agent_owes(const struct fake *f, char *why, size_t cap)
{
	const struct vms_vmsrc *p = vm_src(f->l);
	char log[8192], hang[64];
	if (!p || p->cl.fd < 0 || p->fatal)
		return NULL;
	if (!p->hello) {
		snprintf(why, cap, "no HELLO from the agent (pid %d) since its start", (int)p->cl.pid);
		return why;
	}
	if (p->tick_acked < p->tick_sent) {
		snprintf(hang, sizeof(hang), "hang - %d\n", (int)p->cl.pid);
		if (f->agent_log && strstr(slurp_text(f->agent_log, log, sizeof(log)), hang))
			return NULL;
		snprintf(why, cap, "TICK %llu unacknowledged by the agent (pid %d; its last ACK: %llu)",
			 (unsigned long long)p->tick_sent, (int)p->cl.pid, (unsigned long long)p->tick_acked);
		return why;
	}
	if (p->cl.outpos < p->cl.out.len) {
		snprintf(why, cap, "%zu bytes for the agent (pid %d) not sent", p->cl.out.len - p->cl.outpos,
			 (int)p->cl.pid);
		return why;
	}
	return NULL;
}

static uint64_t real_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Poll fds until one is ready (returns how many) or the agent owes
 * nothing and none is (0); -errno.  Fails the test (its stderr back, the
 * agent killed) after ANSWER_WAIT_MS with nothing ready while the agent
 * owes an answer.  The condition is checked again every 50 ms (the agent
 * may say it hangs without a message). */
static int agent_wait(const struct fake *f, struct pollfd *fds, unsigned n)
{
	char why[160], log[8192];
	uint64_t t0 = real_ms();
	for (;;) {
		const char *owes = agent_owes(f, why, sizeof(why));
		int r = poll(fds, n, owes ? 50 : 0);
		if (r > 0)
			return r;
		if (r < 0 && errno != EINTR)
			return -errno;
		if (!owes)
			return 0;
		if (real_ms() - t0 < ANSWER_WAIT_MS)
			continue;
		const struct vms_vmsrc *p = vm_src(f->l);
		if (p && p->cl.pid > 0)
			kill(p->cl.pid, SIGKILL);
		if (f->saved_stderr >= 0) {
			fflush(stderr);
			dup2(f->saved_stderr, 2);
		}
		fail_msg("nothing from the fake agent for %d s: %s; its log:\n%s", ANSWER_WAIT_MS / 1000, owes,
			 f->agent_log ? slurp_text(f->agent_log, log, sizeof(log)) : "(none)");
	}
}

static uint64_t f_mono(void *c) { return ((struct fake *)c)->now; }
static int64_t f_real(void *c) { return (int64_t)((struct fake *)c)->now + 1795330800000000000LL; }
static uint64_t f_cpu(void *c) { return ((struct fake *)c)->cpu += 1000; }
static int f_wait(void *c, uint64_t deadline, struct pollfd *fds, unsigned n)
{
	struct fake *f = c;
	int r = agent_wait(f, fds, n);
	if (r != 0)
		return r > 0 ? 0 : r;
	/* the agent has answered everything: the next deadline has come */
	if (f->now < deadline)
		f->now = deadline;
	return 1;
}
static const struct vms_clock_ops fake_ops = {f_mono, f_real, f_cpu, f_wait};

/* ---- a run ------------------------------------------------------------------ */

struct run {
	struct vms_bin_dec d;
	uint8_t *bytes;
	struct vms_schema *sch[256];  /* of each frame (owned by d) */
	uint64_t *val[256];
	struct {
		uint64_t seq;
		uint32_t gen, flags, missed_ticks;
	} fr[256];
	unsigned n;
	struct vms_event ev[64];
	uint64_t ev_seq[64];
	unsigned nev;
	char log[8192];              /* the fake agents' notes */
	char err[8192];              /* stderr of the run */
};

static void conf_for(struct vms_config *c, const char *scenario, uint64_t count, const char *out)
{
	char p[1024];
	vms_config_defaults(c);
	free(c->proc_root);
	snprintf(p, sizeof(p), "%s/proc", fixture_path(FIX));
	c->proc_root = strdup(p);
	free(c->output);
	c->output = strdup(out);
	c->interval_ns = TICK;
	c->count = count;
	c->procstat.enabled = c->loadavg.enabled = c->diskstats.enabled = false;
	c->meminfo.enabled = c->vmstat.enabled = c->psi.enabled = false;
	c->interrupts.enabled = c->softirqs.enabled = c->schedstat.enabled = false;
	free(c->libvirt.cgroup_root);
	snprintf(p, sizeof(p), "%s/cgroup/sys/fs/cgroup", fixture_path(FIX));
	c->libvirt.cgroup_root = strdup(p);
	snprintf(p, sizeof(p), "%s/tests/fake_agent", getenv("VMS_BUILD"));
	c->libvirt.agent = strdup(p);
	snprintf(p, sizeof(p), "fake:%s", scenario);
	c->libvirt.uri = strdup(p);
	/* sparse: its watchdog ticks every second (timeout / 4) */
	c->libvirt.timeout_ns = strcmp(scenario, "sparse") == 0 ? 4 * VMS_NSEC_PER_SEC : VMS_NSEC_PER_SEC;
	/* each VM's detail reads (mem.rss, the cgroup detail files) every
	 * third tick: the VM at position i on the ticks whose index + i is a
	 * multiple of 3 (vms-002 is at 0: frames 0, 3, 6 ...) */
	c->libvirt.detail_ns = DETAIL_EVERY * TICK;
}

static void run_scenario(struct run *r, const char *scenario, uint64_t frames)
{
	char out[512], logp[512], errp[512];
	struct vms_config conf;
	struct vms_loop l;
	struct fake fk = {.now = 10 * VMS_NSEC_PER_SEC, .l = &l, .agent_log = logp, .saved_stderr = -1};
	struct vms_clock clk = {&fake_ops, &fk};

	memset(r, 0, sizeof(*r));
	snprintf(out, sizeof(out), "%s/%s.vms", test_tmp, scenario);
	snprintf(logp, sizeof(logp), "%s/%s.agent", test_tmp, scenario);
	snprintf(errp, sizeof(errp), "%s/%s.err", test_tmp, scenario);
	unlink(logp);
	setenv("FAKE_AGENT_LOG", logp, 1);
	conf_for(&conf, scenario, frames, out);
	if (strncmp(scenario, "migrate", 7) == 0) {
		/* its VM is a real process (a child of the fake): the real files */
		struct vms_config d;
		vms_config_defaults(&d);
		free(conf.proc_root);
		conf.proc_root = strdup(d.proc_root);
		free(conf.libvirt.cgroup_root);
		conf.libvirt.cgroup_root = d.libvirt.cgroup_root ? strdup(d.libvirt.cgroup_root) : NULL;
		vms_config_free(&d);
	}
	/* stderr into a file: the run's messages are checked */
	fflush(stderr);
	int saved = dup(2), efd = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	dup2(efd, 2);
	close(efd);
	fk.saved_stderr = saved;
	int rc = vms_loop_init(&l, &conf, &clk, NULL);
	if (rc == 0)
		rc = vms_loop_run(&l);
	vms_loop_fini(&l);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	vms_config_free(&conf);
	assert_int_equal(rc, 0);
	slurp_text(logp, r->log, sizeof(r->log));
	slurp_text(errp, r->err, sizeof(r->err));

	/* decode everything */
	int fd = open(out, O_RDONLY);
	assert_true(fd >= 0);
	off_t len = lseek(fd, 0, SEEK_END);
	r->bytes = malloc((size_t)len);
	assert_int_equal(pread(fd, r->bytes, (size_t)len, 0), len);
	close(fd);
	assert_int_equal(vms_bin_dec_open_mem(&r->d, r->bytes, (size_t)len), 0);
	int it;
	while ((it = vms_bin_dec_next(&r->d)) > 0) {
		if (it == VMS_BIN_DATA && r->n < 256) {
			r->sch[r->n] = r->d.schema;
			r->fr[r->n].seq = r->d.frame->seq;
			r->fr[r->n].gen = r->d.frame->gen;
			r->fr[r->n].flags = r->d.frame->flags;
			r->fr[r->n].missed_ticks = r->d.frame->missed_ticks;
			r->val[r->n] = malloc(r->d.frame->ncols * sizeof(uint64_t));
			memcpy(r->val[r->n], r->d.frame->v, r->d.frame->ncols * sizeof(uint64_t));
			r->n++;
		} else if (it == VMS_BIN_EVENT && r->nev < 64) {
			r->ev[r->nev++] = r->d.event;
		}
	}
	assert_int_equal(it, VMS_BIN_END);
	assert_false(r->d.torn);
	assert_int_equal(r->n, frames);
}

static void run_free(struct run *r)
{
	for (unsigned i = 0; i < r->n; i++)
		free(r->val[i]);
	vms_bin_dec_close(&r->d);
	free(r->bytes);
}

/* Value of column `name` in frame i (VMS_NONE: missing or no column). */
static uint64_t val(const struct run *r, unsigned i, const char *name)
{
	int c = vms_schema_find(r->sch[i], name);
	return c < 0 ? VMS_NONE : r->val[i][c];
}

static bool has_col(const struct run *r, unsigned i, const char *name)
{
	return vms_schema_find(r->sch[i], name) >= 0;
}

/* Events of a type (and subject).  Note on frame indexes below: frame i
 * (seq i + 1) sends TICK i + 1, and what the agent answers to it lands in
 * frame i + 1: the fake's tick k shows in frame index k. */
static int event_count(const struct run *r, uint32_t type, const char *subject)
{
	int n = 0;
	for (unsigned i = 0; i < r->nev; i++)
		if (r->ev[i].type == type && (!subject || strcmp(r->ev[i].subject, subject) == 0))
			n++;
	return n;
}

static unsigned count_str(const char *hay, const char *needle)
{
	unsigned n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* ---- tests ---------------------------------------------------------------------- */

static void test_basic(void **state)
{
	(void)state;
	struct run *r = calloc(1, sizeof(*r));
	run_scenario(r, "basic", 14);

	/* the first frame already has both VMs (open waits for the listing) */
	assert_int_equal(r->fr[0].seq, 1);
	assert_int_equal(val(r, 0, "virt.connected"), 1);
	assert_int_equal(val(r, 0, "virt.domains"), 2);
	assert_true(has_col(r, 0, "vm.vms-002.cpu_time"));
	assert_true(has_col(r, 0, "vm.remote-1.cpu_time"));
	int c = vms_schema_find(r->sch[0], "vm.vms-002.vcpu0.delay");
	assert_string_equal(r->sch[0]->cols[c].key, U_LOCAL);
	assert_int_equal(r->sch[0]->cols[c].unit, VMS_UNIT_NS);
	c = vms_schema_find(r->sch[0], "vm.vms-002.state");
	assert_int_equal(r->sch[0]->cols[c].unit, VMS_UNIT_STATE);
	c = vms_schema_find(r->sch[0], "vm.vms-002.slow_t");
	assert_int_equal(r->sch[0]->cols[c].unit, VMS_UNIT_NS_EPOCH);
	/* its v1 cpu group's throttling counters (the capture has its cpu.stat
	 * but no cpu.cfs_quota_us: no quota column, rather than a 0) */
	c = vms_schema_find(r->sch[0], "vm.vms-002.cg.throttled");
	assert_true(c >= 0);
	assert_int_equal(r->sch[0]->cols[c].unit, VMS_UNIT_NS);
	assert_int_equal(r->sch[0]->cols[c].kind, VMS_KIND_COUNTER);
	assert_false(has_col(r, 0, "vm.vms-002.cg.cpu_quota_us"));
	assert_false(has_col(r, 0, "vm.vms-002.cg.mem_max"));
	/* the VM's tap is not a host interface column */
	assert_false(has_col(r, 0, "net.vmst2.rx_bytes"));
	assert_true(has_col(r, 0, "net.vmst1.rx_bytes"));

	for (unsigned i = 0; i < r->n; i++) {
		/* contiguous, on time */
		assert_int_equal(r->fr[i].seq, i + 1);
		assert_int_equal(r->fr[i].missed_ticks, 0);
		/* the kernel path: every frame, libvirt's values (domstats.txt),
		 * also while libvirtd is gone (ticks 8..10) */
		assert_int_equal(val(r, i, "vm.vms-002.cpu_time"), 30417216000ull);
		assert_int_equal(val(r, i, "vm.vms-002.cpu_user"), 27713355000ull);
		assert_int_equal(val(r, i, "vm.vms-002.vcpu0.delay"), 14625403213ull);
		assert_int_equal(val(r, i, "vm.vms-002.net.vmst2.rx_bytes"), 67976);
		assert_int_equal(val(r, i, "vm.vms-002.net.vmst2.tx_bytes"), 65280);
		/* mem.rss in its detail frames only (sources.libvirt.detail_interval),
		 * mem.cgroup every frame */
		if (i % DETAIL_EVERY == 0)
			assert_int_equal(val(r, i, "vm.vms-002.mem.rss"), 208144ull * 1024);
		else
			assert_true(val(r, i, "vm.vms-002.mem.rss") == VMS_NONE);
		assert_int_equal(val(r, i, "vm.vms-002.mem.cgroup"), 189550592);
		/* cpu/machine/qemu-11-vms-002.libvirt-qemu/cpu.stat: nr_periods 0 */
		assert_int_equal(val(r, i, "vm.vms-002.cg.nr_periods"), 0);
		assert_int_equal(val(r, i, "vm.vms-002.cg.throttled"), 0);
		/* all from the kernel, memory too in the frames without mem.rss
		 * (not due is not failed) */
		assert_int_equal(val(r, i, "vm.vms-002.path") & 0xff, 0x1f);
	}
	/* remote-1: the agent's values of tick k in frame k + 1 */
	for (unsigned i = 1; i < 6; i++) {
		assert_int_equal(val(r, i, "vm.remote-1.cpu_time"), (uint64_t)i * 1000000000ull);
		assert_int_equal(val(r, i, "vm.remote-1.vcpu0.time"), (uint64_t)i * 900000000ull);
		assert_int_equal(val(r, i, "vm.remote-1.net.vnet9.tx_bytes"), (uint64_t)i * 2000);
		assert_true(val(r, i, "vm.remote-1.vcpu0.delay") == VMS_NONE);
		assert_int_equal(val(r, i, "vm.remote-1.path"), (VMS_VG_CPU | VMS_VG_VCPU | VMS_VG_NET) << 8);
	}
	assert_true(val(r, 0, "vm.remote-1.cpu_time") == VMS_NONE);
	/* slow values: only in the frame after the batch (tick 2 -> frame 3) */
	for (unsigned i = 0; i < r->n; i++) {
		uint64_t rss = val(r, i, "vm.vms-002.balloon.rss"), t = val(r, i, "vm.vms-002.slow_t");
		if (i == 2) {
			assert_int_equal(rss, 208144);
			assert_int_equal(val(r, i, "vm.vms-002.balloon.current"), 131072);
			assert_int_equal(val(r, i, "vm.vms-002.block.vda.rd_bytes"), 321917440);
			assert_int_equal(val(r, i, "vm.vms-002.block.vda.wr_reqs"), 4912);
			assert_true(val(r, i, "vm.vms-002.block.vda.wr_bytes") == VMS_NONE);
			assert_int_equal(t, 1795338677547753397ull + 2);
			assert_int_equal(val(r, i, "vm.vms-002.path"), 0x1f | (VMS_VG_BALLOON | VMS_VG_BLOCK) << 8);
			/* the kernel's cpu_time wins over the agent's */
			assert_int_equal(val(r, i, "vm.vms-002.cpu_time"), 30417216000ull);
		} else {
			assert_true(rss == VMS_NONE);
			assert_true(t == VMS_NONE);
		}
	}
	/* paused on tick 4: the state column from frame 5 on */
	assert_int_equal(val(r, 3, "vm.vms-002.state"), 1);
	assert_int_equal(val(r, 4, "vm.vms-002.state"), 3);
	assert_int_equal(val(r, 13, "vm.vms-002.state"), 3);
	assert_int_equal(event_count(r, VMS_EV_VM_PAUSED, U_LOCAL), 1);
	for (unsigned i = 0; i < r->nev; i++)
		if (r->ev[i].type == VMS_EV_VM_PAUSED)
			assert_string_equal(r->ev[i].detail, "vms-002: paused");
	/* remote-1 stopped on tick 6: gone from frame 7 (a new generation) */
	assert_true(has_col(r, 5, "vm.remote-1.cpu_time"));
	assert_false(has_col(r, 6, "vm.remote-1.cpu_time"));
	assert_true(r->fr[6].gen > r->fr[5].gen);
	assert_true(r->fr[6].flags & VMS_FRAME_NEWGEN);
	assert_int_equal(val(r, 6, "virt.domains"), 1);
	assert_int_equal(event_count(r, VMS_EV_VM_STOPPED, U_REMOTE), 1);
	/* libvirtd lost on tick 8, back on tick 10: marked, same UUID key,
	 * the same columns (no new generation) */
	assert_int_equal(val(r, 8, "virt.connected"), 0);
	assert_int_equal(val(r, 9, "virt.connected"), 0);
	assert_int_equal(val(r, 10, "virt.connected"), 1);
	assert_int_equal(event_count(r, VMS_EV_LIBVIRT_LOST, NULL), 1);
	assert_int_equal(event_count(r, VMS_EV_LIBVIRT_BACK, NULL), 1);
	assert_int_equal(r->fr[13].gen, r->fr[6].gen);
	c = vms_schema_find(r->sch[13], "vm.vms-002.cpu_time");
	assert_string_equal(r->sch[13]->cols[c].key, U_LOCAL);
	/* messages: the loss and the return, once each */
	assert_int_equal(count_str(r->err, "lost the connection to libvirt"), 1);
	assert_int_equal(count_str(r->err, "connected to libvirt at fake:basic"), 1);
	/* one agent, no restarts */
	assert_int_equal(count_str(r->log, "start "), 1);
	assert_int_equal(val(r, 13, "virt.agent_restarts"), 0);
	run_free(r);
	free(r);
}

/* A stuck agent: killed after the timeout, restarted, told to hold the
 * domain of its batch back; the kernel values never stop. */
static void test_stuck(void **state)
{
	(void)state;
	struct run *r = calloc(1, sizeof(*r));
	run_scenario(r, "stuck", 40);
	assert_int_equal(count_str(r->log, "start "), 2);
	assert_int_equal(count_str(r->log, "backoff " U_LOCAL " "), 1);
	unsigned long ms = strtoul(strstr(r->log, "backoff " U_LOCAL " ") + 45, NULL, 10);
	assert_true(ms > 50000 && ms <= 60000);
	assert_int_equal(val(r, 39, "virt.agent_restarts"), 1);
	assert_true(strstr(r->err, "was stuck in a libvirt call") != NULL);
	assert_true(strstr(r->err, "asking about vms-002") != NULL);
	assert_true(event_count(r, VMS_EV_LIBVIRT_LOST, NULL) >= 1);
	for (unsigned i = 0; i < r->n; i++) {
		assert_int_equal(r->fr[i].seq, i + 1);
		assert_int_equal(val(r, i, "vm.vms-002.cpu_time"), 30417216000ull);
	}
	/* the restarted agent's values arrive */
	assert_int_equal(val(r, 39, "vm.remote-1.cpu_time") % 1000000000ull, 0);
	assert_true(val(r, 39, "vm.remote-1.cpu_time") != VMS_NONE);
	run_free(r);
	free(r);
}

static void test_restarts(void **state)
{
	(void)state;
	const char *const sc[] = {"exit", "garbage"};
	for (size_t k = 0; k < VMS_ARRAY_SIZE(sc); k++) {
		struct run *r = calloc(1, sizeof(*r));
		run_scenario(r, sc[k], 30);
		if (count_str(r->log, "start ") != 2)
			fail_msg("%s: agent log:\n%s\nstderr:\n%s", sc[k], r->log, r->err);
		assert_int_equal(val(r, 29, "virt.agent_restarts"), 1);
		assert_true(val(r, 29, "vm.remote-1.cpu_time") != VMS_NONE);
		assert_true(strstr(r->err, k == 0 ? "agent exited" : "sent a malformed message") != NULL);
		for (unsigned i = 0; i < r->n; i++)
			assert_int_equal(val(r, i, "vm.vms-002.cpu_time"), 30417216000ull);
		run_free(r);
		free(r);
	}
}

/* libvirt unavailable from the start: host sampling, no VMs, one line. */
static void test_unavailable(void **state)
{
	(void)state;
	struct run *r = calloc(1, sizeof(*r));
	run_scenario(r, "down", 25);
	assert_int_equal(count_str(r->err, "\n"), 1);
	assert_int_equal(count_str(r->err, "per-VM statistics unavailable"), 1);
	assert_true(strstr(r->err, "keeps trying") != NULL);
	assert_true(strstr(r->err, "No such file or directory") != NULL);
	for (unsigned i = 0; i < r->n; i++) {
		assert_int_equal(val(r, i, "virt.connected"), 0);
		assert_int_equal(val(r, i, "virt.domains"), 0);
		assert_true(val(r, i, "net.vmst1.rx_bytes") != VMS_NONE); /* host sampling */
	}
	assert_int_equal(event_count(r, VMS_EV_LIBVIRT_LOST, NULL), 1);
	/* without VMs a TICK has nothing to pace, and an agent without
	 * libvirt has nothing to do: they go out every timeout (1 s here) to
	 * keep the watchdog, not every 100 ms tick, nor every timeout / 4 as
	 * while connected (issue 15) */
	unsigned ticks = count_str(r->log, "tick - ");
	if (ticks < 2 || ticks > 4)
		fail_msg("%u TICKs in 25 ticks of 100 ms without VMs or libvirt:\n%s", ticks, r->log);
	run_free(r);
	free(r);
}

/* The agent's NEXT: TICKs go out only when it has work (issue 15: a TICK
 * is a wake-up of both processes), but every tick while a batch is open
 * (the watchdog times the call), at least every timeout / 4 (a NEXT of
 * 10 s: every second), and every tick once it says 0. */
static void test_next(void **state)
{
	(void)state;
	struct run *r = calloc(1, sizeof(*r));
	run_scenario(r, "sparse", 40);
	unsigned long long t[64];
	unsigned n = 0;
	for (const char *p = r->log; (p = strstr(p, "tick - ")) && n < 64; p++)
		t[n++] = strtoull(p + 7, NULL, 10);
	/* h:       1 2 3 4(open) 5(done) 6(10 s) 7 (0 from here) */
	static const unsigned gap[] = {5, 5, 5, 1, 5, 10, 1};
	if (n < 12)
		fail_msg("%u TICKs:\n%s", n, r->log);
	for (unsigned i = 1; i < n; i++) {
		unsigned want = i <= VMS_ARRAY_SIZE(gap) ? gap[i - 1] : 1;
		if (t[i] - t[i - 1] != want)
			fail_msg("TICK %u: %llu after %llu, want a gap of %u:\n%s", i + 1, t[i], t[i - 1], want,
				 r->log);
	}
	assert_int_equal(count_str(r->log, "start "), 1); /* never taken for stuck */
	/* the VMs' kernel values every frame all the same */
	for (unsigned i = 2; i < r->n; i++)
		assert_true(val(r, i, "vm.vms-002.cpu_time") != VMS_NONE);
	run_free(r);
	free(r);
}

#if HAVE_COUNTING_MALLOC /* only the allocation test uses it */
/* Move the ticks out and the agent's messages in, as vms_loop_run does
 * between two ticks, until the agent owes nothing (fake_ops' wait). */
static void pump(struct vms_loop *l, const struct fake *f)
{
	vms_srchost_idle(&l->sh, 0);
	for (;;) {
		struct pollfd fds[8];
		unsigned n = vms_srchost_pollfds(&l->sh, fds, 8);
		int r = agent_wait(f, fds, n);
		assert_true(r >= 0);
		if (r == 0)
			break;
		vms_srchost_ready(&l->sh, fds);
		vms_srchost_idle(&l->sh, 0);
	}
}
#endif

static void test_tick_allocates_nothing(void **state)
{
	(void)state;
#if !HAVE_COUNTING_MALLOC
	vms_skip("VMS_REQUIRE_NOALLOC", "no counting allocator in this build (ASan owns malloc)");
#else
	char out[512];
	struct vms_config conf;
	struct vms_loop l;
	struct fake fk = {.now = 10 * VMS_NSEC_PER_SEC, .l = &l, .saved_stderr = -1};
	struct vms_clock clk = {&fake_ops, &fk};
	snprintf(out, sizeof(out), "%s/alloc.vms", test_tmp);
	unsetenv("FAKE_AGENT_LOG");
	conf_for(&conf, "steady", 0, out);
	assert_int_equal(vms_loop_init(&l, &conf, &clk, NULL), 0);
	struct vms_sched s;
	struct vms_tickinfo ti;
	vms_sched_init(&s, fk.now, TICK);
	unsigned long logs = 0, total = 0;
	uint64_t frames0 = 0;
	for (int i = 0; i < 60; i++) {
		fk.now = vms_sched_next(&s) + 1000;
		assert_true(vms_sched_wake(&s, fk.now, &ti));
		if (i == 10) { /* warmed up: buffers sized, both VMs declared */
			logs = vms_log_count;
			frames0 = l.frames;
		}
		allocs = 0;
		armed = i >= 10;
		vms_loop_tick(&l, &ti);
		vms_loop_drain(&l);
		armed = 0;
		total += allocs;
		pump(&l, &fk); /* agent values for the next tick (may allocate) */
	}
	assert_int_equal(total, 0);
	assert_int_equal(vms_log_count, logs);
	assert_int_equal(l.frames - frames0, 50);
	/* and the ticks did carry agent values and slow values */
	assert_int_equal(l.sh.vms.n, 2);
	assert_int_equal(vms_loop_fini(&l), 0);
	vms_config_free(&conf);
	/* the counter is not dead */
	armed = 1;
	void *volatile p = malloc(16); /* volatile: not elided */
	armed = 0;
	free(p);
	assert_int_equal(allocs, 1);
#endif
}

/* A VM migrated out whose QEMU exits before the agent's word of its end
 * (its state, the job's final values) arrives, in either order: the VM
 * stays, its kernel columns missing, until one last frame has both; then
 * it goes.  (it_migrate met this on a busy host: the VM was dropped when
 * its process went, the final values were lost and the late state brought
 * it back for a frame without them.) */
static void check_migrated_out(const char *scenario)
{
	struct run *r = calloc(1, sizeof(*r));
	run_scenario(r, scenario, 16);
	bool late = strcmp(scenario, "migrate-late") == 0;
	int last = -1, finals = 0;
	for (unsigned i = 0; i < r->n; i++) {
		if (val(r, i, "vm.mig.state") != VMS_NONE)
			last = (int)i;
		finals += val(r, i, "vm.mig.migration.job") == 3;
	}
	assert_int_equal(finals, 1);
	assert_true(last >= 10 && last <= 12);
	assert_int_equal(val(r, (unsigned)last, "vm.mig.state"), 5);
	assert_int_equal(val(r, (unsigned)last, "vm.mig.migration.job"), 3);
	assert_int_equal(val(r, (unsigned)last, "vm.mig.migration.time_elapsed"), late ? 10000 : 9000);
	for (unsigned i = (unsigned)last + 1; i < r->n; i++)
		assert_false(has_col(r, i, "vm.mig.state"));
	/* the running job: its values from the frame after the first (which
	 * made the columns), each in the frame after the agent's tick (that
	 * of tick 3 too, which the fake answers 0.4 s late) */
	for (unsigned i = 3; i <= 5; i++) {
		assert_int_equal(val(r, i, "vm.mig.migration.job"), 2);
		assert_int_equal(val(r, i, "vm.mig.migration.time_elapsed"), i * 1000);
	}
	/* the kernel's values while the process lived, missing once it went */
	for (unsigned i = 0; i <= 5; i++)
		assert_true(val(r, i, "vm.mig.vcpu0.time") != VMS_NONE);
	for (unsigned i = 7; i <= (unsigned)last; i++) {
		assert_true(has_col(r, i, "vm.mig.state"));
		assert_true(val(r, i, "vm.mig.vcpu0.time") == VMS_NONE);
	}
	assert_int_equal(event_count(r, VMS_EV_VM_MIGRATED_OUT, U_LOCAL), 1);
	run_free(r);
	free(r);
}

static void test_migrated_out(void **state)
{
	(void)state;
	check_migrated_out("migrate");
	check_migrated_out("migrate-late");
}

static int setup(void **state)
{
	return getenv("VMS_BUILD") ? tmp_setup(state) : -1;
}

VMS_TESTS(
	test_basic, test_stuck, test_restarts, test_unavailable, test_next, test_migrated_out,
	test_tick_allocates_nothing);

int main(void)
{
	setenv("TZ", "UTC", 1);
	return vms_run_list(setup, tmp_teardown, NULL, NULL);
}

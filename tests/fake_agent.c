/* SPDX-License-Identifier: MIT */
/* fake_agent.c - stands in for vmsampler-virt in test_source_vm.
 *
 * Why a fake: the vm source's own logic (the VM table, kernel reads
 * against a fixture proc root, slow values in the next frame, lifecycle
 * events, connection state, the watchdog and restarts) must be tested
 * where no libvirtd runs and with exact, scripted timing; the real agent
 * is tested against real guests (tests/integration).  It speaks the same
 * protocol (virt_proto.c), started the same way (fork+exec, fd 3), and
 * its scenario is chosen by the URI the source passes on (--uri=fake:NAME).
 * It appends what it heard to $FAKE_AGENT_LOG ("start PID", "tick N",
 * "backoff UUID MS", "need UUID GROUPS"), and "hang PID" before the
 * answer after which it stops answering (stuck): the test's clock waits
 * for every TICK's ACK but that agent's.
 *
 * Scenarios:
 *   basic   two VMs: vms-002 (the fixture process, kernel path) and
 *           remote-1 (no pid: CPU, vCPU and net come from the agent every
 *           tick); tick 2: a slow batch for vms-002; tick 4: vms-002
 *           paused; tick 6: remote-1 stopped; tick 8: libvirtd lost;
 *           tick 10: back, the same domains listed again
 *   steady  the same two VMs, fallback values every tick and a slow
 *           batch every third tick, forever
 *   stuck   announces a batch for vms-002 on tick 3, then never reads or
 *           answers again (a libvirt call that hangs); a restarted agent
 *           (FAKE_AGENT_LOG already has a start line) behaves as steady
 *   exit    exits on tick 2; restarted ones behave as steady
 *   garbage sends a malformed message on tick 2 (after its ACK, in the
 *           same write); restarted: steady
 *   down    libvirtd never answers: CONN down, forever
 *   sparse  the two VMs of basic; it says when it next needs a tick
 *           (NEXT), by the count h of ticks heard: h 1-3 in 450 ms; h 4
 *           opens a batch (BATCH without BATCH_DONE) and says 450 ms;
 *           h 5 closes it, 450 ms; h 6 says 10 s; from h 7 on: 0
 *   pid     one local VM "standin" on a real process: $FAKE_AGENT_PID (its
 *           first thread as vCPU 0), tap $FAKE_AGENT_TAP (default lo);
 *           nothing else, forever (tests/test_priv.py: what the kernel
 *           files give an unprivileged sampler)
 *   migrate, migrate-late
 *           one local VM "mig" on a child of the fake (its QEMU): ticks
 *           2..5 a running migration job (job 2, time_elapsed k s), tick 5
 *           paused; tick 6 the child is killed and reaped (QEMU exits at
 *           the end of a migration out) and the fake says nothing, as a
 *           busy agent would; then the end: "migrate" the final values
 *           (job 3) on tick 9 and the state (shut off, migrated-out event)
 *           on tick 10, "migrate-late" the other way round; GONE on 13.
 *           Its answer to tick 3 comes 0.4 s late (a busy host, an agent at
 *           nice 10): the test waits for answers, not for a quiet moment */
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "virt_proto.h"
#include <vmsampler/format.h>

#define U_LOCAL "4d0c6bd9-5ae6-43b2-8d56-3c9c6e0e7e3a"
#define U_REMOTE "11111111-2222-3333-4444-555555555555"

static int fd = 3;
static struct vms_vp_w w;
static FILE *agent_log;
static pid_t child; /* migrate: the VM's process */

static void flush(void)
{
	size_t off = 0;
	while (off < w.len) {
		ssize_t n = write(fd, w.buf + off, w.len - off);
		if (n <= 0)
			exit(0);
		off += (size_t)n;
	}
	vms_vp_w_reset(&w);
}

static void note(const char *what, const char *a, unsigned long long b)
{
	if (!agent_log)
		return;
	fprintf(agent_log, "%s %s %llu\n", what, a, b);
	fflush(agent_log);
}

static int64_t real_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void conn(int up, const char *msg)
{
	vms_vp_begin(&w, VMS_VP_CONN);
	vms_vp_u8(&w, (uint8_t)up);
	vms_vp_u8(&w, 0);
	vms_vp_cstr(&w, "QEMU");
	vms_vp_cstr(&w, msg);
	vms_vp_end(&w);
}

static void sync_msg(unsigned n, int end)
{
	vms_vp_begin(&w, VMS_VP_SYNC);
	vms_vp_u32(&w, n);
	vms_vp_u8(&w, (uint8_t)end);
	vms_vp_end(&w);
}

static void dom(const char *uuid, const char *name, int state, uint32_t pid, uint32_t tid, const char *tap,
		const char *disk, uint8_t fallback)
{
	vms_vp_begin(&w, VMS_VP_DOM);
	vms_vp_uuid(&w, uuid);
	vms_vp_cstr(&w, name);
	vms_vp_u32(&w, 7);
	vms_vp_u8(&w, (uint8_t)state);
	vms_vp_u8(&w, 1);
	vms_vp_u32(&w, pid);
	vms_vp_u8(&w, pid ? VMS_VP_DOM_LOCAL : 0);
	vms_vp_u8(&w, fallback);
	vms_vp_u16(&w, 1);
	vms_vp_u32(&w, tid);
	vms_vp_u16(&w, 1);
	vms_vp_cstr(&w, tap);
	vms_vp_u16(&w, 1);
	vms_vp_cstr(&w, disk);
	vms_vp_end(&w);
}

/* a full listing of one domain, U_LOCAL */
static void list_one(const char *name, int state, uint32_t pid, uint32_t tid, const char *tap)
{
	sync_msg(1, 0);
	dom(U_LOCAL, name, state, pid, tid, tap, "vda", 0);
	sync_msg(1, 1);
}

static void gone(const char *uuid)
{
	vms_vp_begin(&w, VMS_VP_GONE);
	vms_vp_uuid(&w, uuid);
	vms_vp_end(&w);
}

static void doms(bool with_remote)
{
	sync_msg(2, 0);
	dom(U_LOCAL, "vms-002", 1, 17562, 17586, "vmst2", "vda", 0);
	if (with_remote)
		dom(U_REMOTE, "remote-1", 1, 0, 0, "vnet9", "vdb", VMS_VG_CPU | VMS_VG_VCPU | VMS_VG_NET);
	sync_msg(with_remote ? 2 : 1, 1);
}

static void event(unsigned type, const char *uuid, const char *name, const char *what)
{
	vms_vp_begin(&w, VMS_VP_EVENT);
	vms_vp_u16(&w, (uint16_t)type);
	vms_vp_uuid(&w, uuid);
	vms_vp_cstr(&w, name);
	vms_vp_cstr(&w, what);
	vms_vp_end(&w);
}

struct kv {
	uint16_t id, idx;
	uint64_t v;
};

static void stats(const char *uuid, int slow, int64_t t, const struct kv *kv, unsigned n)
{
	vms_vp_begin(&w, VMS_VP_STATS);
	vms_vp_uuid(&w, uuid);
	vms_vp_u64(&w, (uint64_t)t);
	vms_vp_u8(&w, (uint8_t)slow);
	vms_vp_u16(&w, (uint16_t)n);
	for (unsigned i = 0; i < n; i++) {
		vms_vp_u16(&w, kv[i].id);
		vms_vp_u16(&w, kv[i].idx);
		vms_vp_u64(&w, kv[i].v);
	}
	vms_vp_end(&w);
}

/* remote-1's values on tick k: cpu_time = k s, the rest derived */
static void remote_fast(unsigned long long k)
{
	const struct kv kv[] = {
		{VMS_VM_CPU_TIME, 0, k * 1000000000ull},
		{VMS_VM_CPU_USER, 0, k * 600000000ull},
		{VMS_VM_CPU_SYSTEM, 0, k * 400000000ull},
		{VMS_VM_VCPU_TIME, 0, k * 900000000ull},
		{VMS_VM_NET_RX_BYTES, 0, k * 1000},
		{VMS_VM_NET_TX_BYTES, 0, k * 2000},
	};
	stats(U_REMOTE, 0, real_ns(), kv, VMS_ARRAY_SIZE(kv));
}

static void slow_batch(uint32_t id)
{
	vms_vp_begin(&w, VMS_VP_BATCH);
	vms_vp_u32(&w, id);
	vms_vp_u16(&w, 1);
	vms_vp_uuid(&w, U_LOCAL);
	vms_vp_end(&w);
	const struct kv kv[] = {
		{VMS_VM_BALLOON_CURRENT, 0, 131072},
		{VMS_VM_BALLOON_RSS, 0, 208144},
		{VMS_VM_BLOCK_RD_BYTES, 0, 321917440},
		{VMS_VM_BLOCK_WR_REQS, 0, 4912},
		{VMS_VM_BLOCK_RD_BYTES, 5, 1}, /* a disk it does not have: dropped */
		{VMS_VM_CPU_TIME, 0, 5},       /* the kernel has it: not used */
	};
	stats(U_LOCAL, 1, 1795338677547753397ll + (int64_t)id, kv, VMS_ARRAY_SIZE(kv));
	vms_vp_begin(&w, VMS_VP_BATCH_DONE);
	vms_vp_u32(&w, id);
	vms_vp_u16(&w, 0);
	vms_vp_u64(&w, 3000000);
	vms_vp_end(&w);
}

static void mig_job(unsigned long long k, uint64_t type)
{
	const struct kv kv[] = {
		{VMS_VM_MIG_JOB, 0, type},
		{VMS_VM_MIG_TIME_ELAPSED, 0, k * 1000},
	};
	stats(U_LOCAL, 0, real_ns(), kv, VMS_ARRAY_SIZE(kv));
}

static void migrate_tick(unsigned long long k, bool late)
{
	if (k == 3)
		nanosleep(&(struct timespec){.tv_nsec = 400000000}, NULL);
	if (k >= 2 && k <= 5)
		mig_job(k, 2);
	if (k == 5)
		dom(U_LOCAL, "mig", 3, (uint32_t)child, (uint32_t)child, "lo", "vda", 0);
	if (k == 6 && child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	if (k == (late ? 10u : 9u))
		mig_job(k, 3);
	if (k == (late ? 9u : 10u)) {
		event(VMS_EV_VM_MIGRATED_OUT, U_LOCAL, "mig", "migrated");
		dom(U_LOCAL, "mig", 5, (uint32_t)child, (uint32_t)child, "lo", "vda", 0);
	}
	if (k == 13)
		gone(U_LOCAL);
}

static void next_msg(uint64_t delay_ns)
{
	vms_vp_begin(&w, VMS_VP_NEXT);
	vms_vp_u64(&w, delay_ns);
	vms_vp_end(&w);
}

static void sparse_tick(void)
{
	static unsigned h;
	switch (++h) {
	case 4:
		vms_vp_begin(&w, VMS_VP_BATCH);
		vms_vp_u32(&w, 4);
		vms_vp_u16(&w, 1);
		vms_vp_uuid(&w, U_LOCAL);
		vms_vp_end(&w);
		next_msg(450000000);
		break;
	case 5:
		vms_vp_begin(&w, VMS_VP_BATCH_DONE);
		vms_vp_u32(&w, 4);
		vms_vp_u16(&w, 0);
		vms_vp_u64(&w, 3000000);
		vms_vp_end(&w);
		next_msg(450000000);
		break;
	case 6:
		next_msg(10000000000ull);
		break;
	default:
		next_msg(h < 4 ? 450000000 : 0);
	}
}

static void on_tick(const char *sc, unsigned long long k, bool restarted)
{
	vms_vp_begin(&w, VMS_VP_ACK);
	vms_vp_u64(&w, k);
	vms_vp_end(&w);
	if (strcmp(sc, "sparse") == 0) {
		sparse_tick();
		return;
	}
	if (restarted || strcmp(sc, "steady") == 0) {
		remote_fast(k);
		if (k % 3 == 0)
			slow_batch((uint32_t)k);
		return;
	}
	if (strcmp(sc, "stuck") == 0) {
		if (k == 3) {
			vms_vp_begin(&w, VMS_VP_BATCH);
			vms_vp_u32(&w, 3);
			vms_vp_u16(&w, 1);
			vms_vp_uuid(&w, U_LOCAL);
			vms_vp_end(&w);
			/* said before the answer: the test's clock, once this
			 * is read, lets the watchdog's time pass */
			note("hang", "-", (unsigned long long)getpid());
			flush();
			for (;;)
				pause(); /* in a libvirt call that never returns */
		}
		return;
	}
	if (strcmp(sc, "exit") == 0 && k == 2)
		exit(0);
	if (strcmp(sc, "garbage") == 0 && k == 2) {
		static const uint8_t bad[12] = {12, 0, 0, 0, VMS_VP_VERSION, VMS_VP_STATS, 0, 0, 1, 2, 3, 4};
		/* in the same write as the ACK: the source reads both at once */
		struct iovec iov[2] = {{w.buf, w.len}, {(void *)bad, sizeof(bad)}};
		if (writev(fd, iov, 2) != (ssize_t)(w.len + sizeof(bad)))
			exit(0);
		vms_vp_w_reset(&w);
		return;
	}
	if (strncmp(sc, "migrate", 7) == 0) {
		migrate_tick(k, strcmp(sc, "migrate-late") == 0);
		return;
	}
	if (strcmp(sc, "basic") != 0)
		return;
	bool remote_alive = k < 6;
	if (remote_alive)
		remote_fast(k);
	switch (k) {
	case 2:
		slow_batch(2);
		break;
	case 4:
		event(VMS_EV_VM_PAUSED, U_LOCAL, "vms-002", "paused");
		dom(U_LOCAL, "vms-002", 3, 17562, 17586, "vmst2", "vda", 0);
		break;
	case 6:
		event(VMS_EV_VM_STOPPED, U_REMOTE, "remote-1", "destroyed");
		gone(U_REMOTE);
		break;
	case 8:
		conn(0, "libvirtd closed the connection");
		break;
	case 10:
		conn(1, "qemu:///system");
		list_one("vms-002", 3, 17562, 17586, "vmst2");
		break;
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"fd", required_argument, NULL, 'f'},  {"uri", required_argument, NULL, 'u'},
		{"proc-root", required_argument, NULL, 'p'}, {"interval-ns", required_argument, NULL, 'i'},
		{"refresh-ns", required_argument, NULL, 'r'}, {"budget-ns", required_argument, NULL, 'b'},
		{"crosscheck", no_argument, NULL, 'c'}, {NULL, 0, NULL, 0},
	};
	const char *sc = "basic";
	int o;
	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1)
		if (o == 'u' && strncmp(optarg, "fake:", 5) == 0)
			sc = optarg + 5;
		else if (o == 'f')
			fd = atoi(optarg);
	const char *lp = getenv("FAKE_AGENT_LOG");
	bool restarted = false;
	if (lp) {
		FILE *old = fopen(lp, "r");
		restarted = old != NULL;
		if (old)
			fclose(old);
		agent_log = fopen(lp, "a");
	}
	note("start", sc, (unsigned long long)getpid());
	vms_vp_w_init(&w);
	vms_vp_begin(&w, VMS_VP_HELLO);
	vms_vp_u32(&w, VMS_VP_VERSION);
	vms_vp_u32(&w, (uint32_t)getpid());
	vms_vp_u64(&w, 9000000);
	vms_vp_cstr(&w, "fake");
	vms_vp_end(&w);
	if (strcmp(sc, "down") == 0 && !restarted) {
		conn(0, "Failed to connect socket to '/nonexistent/libvirt-sock': No such file or directory");
	} else if (strcmp(sc, "pid") == 0) {
		const char *ps = getenv("FAKE_AGENT_PID"), *tap = getenv("FAKE_AGENT_TAP");
		uint32_t pid = ps ? (uint32_t)strtoul(ps, NULL, 10) : 0;
		conn(1, "qemu:///system");
		list_one("standin", 1, pid, pid, tap ? tap : "lo");
	} else if (strncmp(sc, "migrate", 7) == 0) {
		child = fork();
		if (child == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			for (;;)
				pause();
		}
		conn(1, "qemu:///system");
		list_one("mig", 1, (uint32_t)child, (uint32_t)child, "lo");
	} else {
		conn(1, "qemu:///system");
		doms(true);
	}
	flush();

	uint8_t in[65536];
	size_t have = 0;
	for (;;) {
		ssize_t n = read(fd, in + have, sizeof(in) - have);
		if (n <= 0)
			return 0;
		have += (size_t)n;
		size_t off = 0;
		struct vms_vp_msg m;
		int k;
		while ((k = vms_vp_frame(in + off, have - off, &m)) > 0) {
			struct vms_vp_num num;
			struct vms_vp_uuids u;
			if (m.type == VMS_VP_TICK && vms_vp_num_dec(&m, &num) == 0) {
				note("tick", "-", (unsigned long long)num.a);
				on_tick(sc, num.a, restarted);
			} else if (m.type == VMS_VP_BACKOFF && vms_vp_uuids_dec(&m, &u) == 0) {
				char uu[37];
				for (unsigned i = 0; i < u.n; i++) {
					vms_vp_uuids_get(&u, i, uu);
					note("backoff", uu, u.id);
				}
			} else if (m.type == VMS_VP_NEED && vms_vp_num_dec(&m, &num) == 0) {
				note("need", num.uuid, (unsigned long long)num.b);
			}
			off += (size_t)k;
		}
		if (k < 0)
			return 2;
		memmove(in, in + off, have - off);
		have -= off;
		flush();
	}
}

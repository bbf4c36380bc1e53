/* SPDX-License-Identifier: MIT */
/* agent.h - the state shared by the parts of vmsampler-virt, the libvirt
 * agent of the vm source: the agent (virt_agent.c), its domains
 * (virt_dom.c, virt_dom.h) and a tick's libvirt work (virt_stats.c,
 * virt_stats.h).  Each of the three includes this header; this header
 * includes none of theirs.
 *
 * One thread: libvirt's default event loop runs the sampler's socket, the
 * lifecycle events and the connection's keepalive; work (a tick's
 * libvirt calls, a reconnect, refreshing identities after events) is
 * done between two turns of the loop.  The agent logs only its own
 * faults; what the sampler should say goes to it in messages. */
#ifndef VMS_AGENT_H
#define VMS_AGENT_H

#include <libvirt/libvirt.h>
#include <sys/types.h>

#include "sockwatch.h"
#include "virt_pace.h"
#include "virt_proto.h"

struct vms_adom {
	char uuid[VMS_VP_UUID_LEN + 1];
	char *name;
	virDomainPtr dom;
	unsigned id;
	int state, reason;
	pid_t pid;           /* 0: not known (remote, another driver) */
	bool local;          /* pid verified against /proc/PID/cmdline */
	int stat_fd;         /* /proc/PID/stat, for the stopped check */
	unsigned nvcpu;
	pid_t *tid;
	unsigned ntap;
	char **tap;
	unsigned ndisk;
	char **disk;
	uint8_t fallback;    /* groups served through libvirt every tick */
	uint64_t hold_until; /* a stuck batch: leave it alone until then */
	bool mark;
	/* migration: mig while it has a migration job (learned from its
	 * iteration events; its job statistics are read each tick only
	 * then).  A domain migrated out stays (dead) until its final
	 * statistics are sent and two ticks went by, or gone_at passed. */
	bool mig, dead, final_sent;
	uint8_t mig_fail;    /* failed job-statistics calls in a row */
	unsigned gone_ticks;
	uint64_t gone_at;
	/* dirty-rate sampling (a->rw): the next start is due at dirty_next;
	 * dirty_wait while a calculation we started runs (its result is read
	 * at dirty_read_at, polled again while libvirt says measuring) */
	uint64_t dirty_next, dirty_read_at;
	bool dirty_wait;
	uint8_t dirty_polls;
	long long dirty_last; /* calc_start_time of the last result sent */
};

/* lcevent kinds beyond lifecycle */
enum { LC_LIFECYCLE, LC_MIG_ITERATION, LC_JOB_COMPLETED };

struct vms_agent_lcevent {
	char uuid[VMS_VP_UUID_LEN + 1];
	char name[256];      /* the event's domain object has it, even undefined */
	int event, detail;
	int kind;            /* LC_* */
	uint64_t job[VMS_VM_NMIG]; /* LC_JOB_COMPLETED: vms_vm_mig order, VMS_NONE: absent */
};

struct vms_agent {
	int fd;              /* to the sampler */
	uint8_t *in;
	size_t inlen, incap;
	struct vms_vp_w w;
	const char *uri;     /* NULL: libvirt's default */
	const char *proc_root;
	int proc_dirfd;
	uint64_t interval_ns, refresh_ns, budget_ns;
	bool crosscheck;
	uint64_t dirty_every_ns; /* 0: no dirty-rate sampling, no read-write connection */
	unsigned dirty_seconds;
	virConnectPtr rw;        /* only with dirty_every_ns: starts the calculations */
	bool rw_said, dirty_said;

	virConnectPtr conn;
	int cb_id, cb_iter, cb_job;
	bool closed;         /* the close callback fired */
	char *conn_uri;      /* what we are connected to */
	char driver[32];
	uint64_t hv_version; /* virConnectGetVersion of the connection, 0 unknown */
	bool local_qemu;     /* local QEMU driver: pids and /proc are ours */
	char *run_dir;       /* its /run/libvirt/qemu */
	bool reported_down;
	uint64_t retry_at, retry_wait;
	int timer;
	struct vms_sockwatch sw; /* the daemon's socket directory (fd -1: none) */
	uint64_t sw_seen_at;     /* last entry there, or connection lost (0: never) */

	struct vms_adom *d;
	unsigned nd, capd;
	struct vms_pace pace;
	struct vms_agent_lcevent *ev;
	unsigned nev, capev;
	bool tick_work;
	uint64_t next_said;  /* the last NEXT, as CLOCK_MONOTONIC ns (0: none yet) */
	uint64_t next_relist;
	uint32_t batch_id;
	/* bulk stats of this driver lack a group: per-domain calls instead */
	bool no_bulk_cpu, no_bulk_vcpu, no_bulk_net, no_bulk_balloon, no_bulk_block;
	bool hold;           /* queue messages without writing (one write for several) */
	bool quit;
};

/* agent.c: the agent's clocks, and its writes to the sampler */
uint64_t vms_agent_mono(void);
int64_t vms_agent_real(void);
/* Write the messages built in a->w (unless a->hold); a failed write ends
 * the agent. */
void vms_agent_send(struct vms_agent *a);

#endif

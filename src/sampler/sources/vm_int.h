/* SPDX-License-Identifier: MIT */
/* vm_int.h - the vm source's own header (vm_rec.c, source_vm.c): its
 * state, the record of each VM (the files kept open for it, its columns),
 * and the calls between the two files.  The design is described at the
 * top of source_vm.c. */
#ifndef VMS_VM_INT_H
#define VMS_VM_INT_H

#include "cgroup.h"
#include "procfile.h"
#include "source.h"
#include "virt_client.h"
#include "netdev_nl.h"
#include "vm_kernel.h"
#include "vmtab.h"

#define SCRATCH (64 * 1024)
#define RESPAWN_FIRST VMS_NSEC_PER_SEC
/* Without VMs a TICK has nothing to pace: the agent only acknowledges it,
 * a wake-up of both processes and ~8 system calls per tick (issue 15).
 * Ticks then go out at most this often (and at least 4 per timeout), to
 * keep the watchdog of a stuck agent; while the agent is not connected
 * to libvirt either, once per timeout (all it can be stuck in is a
 * connection attempt, and there is no VM to lose).  With VMs, the agent
 * says when it next has work (NEXT: its next slow batch, every tick for
 * fallback values or a migration): the ticks between go out only for the
 * watchdog, at the same rate, and every tick while a batch is open (the
 * watchdog then times the call as before). */
#define IDLE_TICK_EVERY (5 * VMS_NSEC_PER_SEC)
#define RESPAWN_MAX (60 * VMS_NSEC_PER_SEC)
#define STUCK_HOLD_FIRST (60 * VMS_NSEC_PER_SEC)
#define STUCK_HOLD_MAX (1800 * VMS_NSEC_PER_SEC)
#define OUT_KEEP 8192 /* bytes of unsent messages before ticks are dropped */
#define HOST_COLS 3   /* virt.connected, virt.domains, virt.agent_restarts */
#define FAST_GROUPS (VMS_VG_CPU | VMS_VG_VCPU | VMS_VG_NET)

/* libvirt's numbers as vm.NAME.state and vm.NAME.migration.job carry them
 * (the sampler does not include libvirt's headers) */
#define VMS_LV_SHUTOFF 5     /* virDomainState VIR_DOMAIN_SHUTOFF */
#define VMS_LV_JOB_RUNNING 2 /* virDomainJobType VIR_DOMAIN_JOB_UNBOUNDED */

struct vms_vmsrc_rec {
	struct vms_vm id;      /* copy of the table entry the files were opened for */
	char *cname;           /* the name as it appears in column names */
	struct vms_vmk k;
	struct vms_vmlay lay;
	uint32_t base;         /* first column, relative to the source */
	uint8_t *grp;          /* group of each column */
	uint64_t *pend;        /* values from the agent for the next frame */
	int64_t pend_slow_t;   /* when libvirt returned the slow ones, 0: none */
	bool pend_any;
	uint8_t need_sent;
	bool want_mig;         /* the agent sent migration values: migration.* columns */
	bool mig_open;         /* its last job value said running: the end is to come */
	bool gone;
	uint64_t gone_at;      /* when vm_idle first found its process gone (0: not) */
	bool keep;             /* declare: still in the table */
};

struct vms_vmsrc_aux {
	char uuid[VMS_UUID_LEN + 1];
	uint8_t fallback;      /* groups the agent serves every tick */
	bool listed;
};

struct vms_vmsrc_stuck {
	char uuid[VMS_UUID_LEN + 1];
	uint64_t until;
	uint64_t hold;
};

struct vms_vmsrc {
	const struct vms_libvirt_conf *lc;
	uint32_t detail_every;     /* ticks between two reads of a VM's detail files */
	struct vms_cgmounts cg;
	struct vms_procfile *nd;   /* /proc/net/dev, shared with netdev */
	struct vms_nettab nt;
	struct vms_nl nl;          /* the taps through rtnetlink, fd -1: /proc/net/dev */
	bool nl_want;              /* reopened by declare after a failed dump */
	struct vms_nlstats st;
	char *scratch;
	int ino;                   /* inotify: the VMs' cgroup limits (vm_kernel.h) */
	bool ino_open;
	struct vms_vmsrc_rec *rec;
	unsigned nrec;
	uint64_t vmgen;
	const struct vms_source_env *env; /* the run's, from vm_open: clock, events, the VM set */

	/* the agent */
	struct vms_vclient cl;
	char **argv;
	char *uri;                 /* for messages */
	uint64_t respawn_at, respawn_wait, started_at;
	uint64_t restarts;
	uint64_t last_rx, unacked_since;
	uint64_t tick_due, tick_sent, tick_acked;
	uint64_t tick_sent_at;     /* when the last TICK went out */
	uint64_t next_tick_at;     /* the agent's NEXT: no work before (0: every tick) */
	bool hello;
	bool fatal;                /* protocol mismatch: do not restart */
	bool connected, ever_connected, said_unavailable, lost_marked;
	bool synced;               /* a full listing arrived */
	bool mig_reschema;         /* a VM needs its migration.* columns */
	struct vms_vmsrc_aux *aux;
	unsigned naux, capaux;
	char batch[VMS_VP_BATCH_MAX][VMS_UUID_LEN + 1];
	unsigned nbatch;
	bool batch_open;
	struct vms_vmsrc_stuck *stuck;
	unsigned nstuck;
};

/* vm_rec.c: the records of the VMs, and their columns */
/* The libvirt-side values kept for the VM of that UUID, NULL without. */
struct vms_vmsrc_aux *vms_vmsrc_aux_find(struct vms_vmsrc *p, const char *uuid);
void vms_vmsrc_rec_free(struct vms_vmsrc_rec *r);
/* Requests for what the kernel cannot serve (not for the agent that is
 * serving it already). */
void vms_vmsrc_rec_queue_needs(struct vms_vmsrc *p, struct vms_vmsrc_rec *r);
int vms_vmsrc_rec_declare(struct vms_schema_builder *b, struct vms_vmsrc_rec *r, const struct vms_libvirt_conf *lc);
/* Make the records follow the table: keep the files of VMs whose identity
 * did not change, open those of new ones, close the others. */
int vms_vmsrc_reconcile(struct vms_source *src, const struct vms_vmtab *t);

#endif

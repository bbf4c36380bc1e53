/* SPDX-License-Identifier: MIT */
/* interf_maps.h - what the interference program (interf.bpf.c) and its loader
 * (src/sampler/sources/bpf_interf.c) share: the maps' keys and values.
 * doc/interference.md says what is counted. */
#ifndef VMS_INTERF_MAPS_H
#define VMS_INTERF_MAPS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define INTERF_RING 256       /* closed segments kept per CPU (a power of 2; 1024 does not load on Linux 6.18: EFAULT) */
#define INTERF_MAX_CPUS 1024  /* the per-CPU state array */

/* culprit kinds (acct_key.kind) */
enum interf_kind {
	INTERF_VM = 1,      /* another VM: id = its index */
	INTERF_OWN = 2,     /* a thread of the victim's own VM */
	INTERF_HOST = 3,    /* another user task: id = its cgroup v2 id */
	INTERF_KERNEL = 4,  /* kernel threads and idle */
	INTERF_UNKNOWN = 5, /* a part of a wait the program could not place */
};

/* thread roles (thread_val.role) */
enum interf_role {
	INTERF_VICTIM = 1, /* a vCPU: its waits are accounted */
	INTERF_MEMBER = 2, /* another thread of the VM (vhost worker, ...) */
};

/* threads: TID -> the VM it belongs to and its role; its wait state
 * (written by the program) */
struct interf_thread {
	__u32 vm;
	__u32 role;
	__u32 waiting;  /* 1 while runnable and not running */
	__u32 wait_cpu;
	__u64 wait_start;
	__u64 waited;   /* ns waited in total (for the sum rule) */
	/* with the run time on (the loader's VMS_INTERF_RUN_TIME): ns run
	 * in total, up to its last switch-out (schedstat's field 1), and
	 * the start of its running segment (0: not running, or running
	 * since before it was told) */
	__u64 ran;
	__u64 run_start;
};

/* a victim VM's waits per CPU waited on: (vm, cpu) -> ns (the sampler
 * estimates the interrupt time in them from /proc/stat) */
struct interf_wkey {
	__u32 vm;
	__u32 cpu;
};

/* the account: (victim's VM, culprit) -> ns behind it */
struct interf_key {
	__u32 victim;
	__u32 kind;
	__u64 id;
};

/* a culprit as the ring keeps it */
struct interf_culprit {
	__u32 kind;
	__u32 vm;       /* INTERF_VM: the VM; else ~0 */
	__u64 id;       /* INTERF_HOST: the cgroup id */
};

struct interf_seg {
	__u64 start, end;
	struct interf_culprit c;
};

struct interf_cpu {
	__u64 seg_start;             /* the running segment */
	/* the running task's culprit when its switch-in knew it (a thread
	 * in threads, idle: cur_ok, cur_tid the task), else kind UNKNOWN:
	 * its switch-out then looks it up */
	struct interf_culprit cur;
	__u32 cur_tid, cur_ok;
	__u32 head;                  /* next ring slot to write */
	/* victims whose wait on this CPU began and has not ended (changed
	 * atomically: a wakeup or migration from another CPU), and whether
	 * a wait began on it during the running segment: a segment that
	 * overlaps no wait is not put in the ring (its culprit not looked
	 * up); the waits the loader ended by forgetting a waiting thread
	 * are in unwaits[cpu] */
	__u32 nwait;
	__u32 began;
	__u32 pad;
	struct interf_seg ring[INTERF_RING];
};

#endif

/* SPDX-License-Identifier: MIT */
/* bpf_interf.h - the interference program (interf.bpf.c,
 * doc/interference.md): load, tell it the threads, read its account.
 *
 * Loading needs what loading a BPF program and attaching it to
 * tracepoints needs (root, or CAP_BPF and CAP_PERFMON with the tracefs
 * readable); a host where it cannot load says why in one line (err).  The
 * reads allocate nothing (the caller's arrays): they may run in the tick. */
#ifndef VMS_BPF_INTERF_H
#define VMS_BPF_INTERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "interf_maps.h"

struct vms_interf;

/* Load and attach.  0, or -errno with err holding one line (what failed,
 * the kernel's reason). */
int vms_interf_open(struct vms_interf **out, char *err, size_t errlen);
/* The same with flags: VMS_INTERF_RUN_TIME keeps each registered thread's
 * run time too (vms_interf_ran, vms_interf_thr.ran): one more store at a
 * registered thread's switch-in and a lookup and two at its switch-out
 * (doc/interference.md, Cost); VMS_INTERF_NO_RQ leaves out the CPUs' run
 * queue delay (vms_interf_read_rq: a task-storage lookup at every
 * switch). */
enum { VMS_INTERF_RUN_TIME = 1, VMS_INTERF_NO_RQ = 2 };
int vms_interf_open_flags(struct vms_interf **out, unsigned flags, char *err, size_t errlen);
void vms_interf_close(struct vms_interf *x);

/* A thread of VM vm (an index of the caller's): a victim (a vCPU: its waits
 * are accounted) or a member (its running counts as the VM's).  A QEMU
 * process's threads are the VM's without being told one by one: see
 * vms_interf_vm.  0 or -errno (a full map: -E2BIG). */
int vms_interf_thread(struct vms_interf *x, uint32_t tid, uint32_t vm, bool victim);
int vms_interf_forget_thread(struct vms_interf *x, uint32_t tid);
/* Every thread of process tgid runs for VM vm. */
int vms_interf_vm(struct vms_interf *x, uint32_t tgid, uint32_t vm);
int vms_interf_forget_vm(struct vms_interf *x, uint32_t tgid);

/* Drop the account's entries of VM vm, as victim and as culprit, and its
 * waits per CPU (a VM that went away: the sampler never gives its index
 * to another).  What each other VM w < ncarry had waited behind vm, as
 * the entries dropped held it, is added to carry[w]: the reader keeps it
 * in w's counters, which so never go back.  0 or -errno.  Between ticks:
 * it reads the whole map. */
int vms_interf_forget_account(struct vms_interf *x, uint32_t vm, uint64_t *carry, uint32_t ncarry);

/* The account so far: (victim VM, culprit kind, culprit id) -> ns, at
 * most cap entries into out (*n of them; -ENOSPC when there were more).
 * Allocates nothing: the map is read whole with BPF_MAP_LOOKUP_BATCH
 * into buffers allocated at open, or entry by entry (two calls each)
 * where the kernel refuses batch ops (before 5.6). */
struct vms_interf_ent {
	uint32_t victim, kind;
	uint64_t id, ns;
};
int vms_interf_read(struct vms_interf *x, struct vms_interf_ent *out, unsigned cap, unsigned *n);
/* The victim VMs' waits per CPU waited on, so far: at most cap entries
 * into out (*n of them; -ENOSPC when there were more).  Allocates
 * nothing. */
struct vms_interf_wait {
	uint32_t vm, cpu;
	uint64_t ns;
};
int vms_interf_read_waits(struct vms_interf *x, struct vms_interf_wait *out, unsigned cap, unsigned *n);
/* Read the maps entry by entry from now on (on: as on a kernel without
 * batch ops), or again by batches: for the tests and bench/interf. */
void vms_interf_walk_only(struct vms_interf *x, bool on);
/* Add entry e to the account as the program would (its ns set, not added
 * to): for the tests and bench/interf.  0 or -errno (full: -E2BIG). */
int vms_interf_account_add(struct vms_interf *x, const struct vms_interf_ent *e);
/* What thread tid waited in total since it was told (the sum rule). */
int vms_interf_waited(struct vms_interf *x, uint32_t tid, uint64_t *ns);
/* Every registered thread (vms_interf_thread) as the program keeps it:
 * its VM and the run delay it waited in total (as interf_thread), at most
 * cap into out (*n of them; -ENOSPC when there were more).  One batched
 * read of the threads map (as vms_interf_read).  Allocates nothing. */
struct vms_interf_thr {
	uint32_t tid, vm;
	uint64_t waited;
	uint64_t ran; /* with VMS_INTERF_RUN_TIME, else 0 */
};
int vms_interf_read_threads(struct vms_interf *x, struct vms_interf_thr *out, unsigned cap, unsigned *n);
/* Each program's calls and run time so far, as the kernel counts them
 * while run-time statistics are on (kernel.bpf_stats_enabled, or an fd of
 * bpf_enable_stats held): at most cap into out; their number, or -errno.
 * For bench/interf. */
struct vms_interf_prog {
	const char *name; /* the program's, valid while x is open */
	uint64_t run_cnt, run_ns;
};
int vms_interf_prog_stats(struct vms_interf *x, struct vms_interf_prog *out, unsigned cap);
/* What thread tid ran in total (up to its last switch-out) since it was
 * told, with VMS_INTERF_RUN_TIME (else 0): schedstat's field 1. */
int vms_interf_ran(struct vms_interf *x, uint32_t tid, uint64_t *ns);
/* Each CPU's run queue delay so far (ns): the run delay of every task
 * (schedstat's, sched_info.run_delay) that ran on it, added at the task's
 * switch-out on the CPU where the wait ended; a task older than the
 * program counts from its first switch-out after the load.  At most cap
 * CPUs (the possible CPUs) into out: their number, or -ENODATA where the
 * program does not keep it (VMS_INTERF_NO_RQ, or a kernel that refused
 * it: vms_interf_open loads the rest without).  No system call, no
 * allocation: the program's mapped memory. */
int vms_interf_read_rq(struct vms_interf *x, uint64_t *out, unsigned cap);
/* How many CPUs vms_interf_read_rq gives at most, or -ENODATA (as it). */
int vms_interf_rq_ncpu(struct vms_interf *x);
/* Additions lost to a full account map, and waits whose oldest part went
 * under "unknown" because they spanned more than the ring's segments. */
int vms_interf_stats(struct vms_interf *x, uint64_t *lost_ns, uint64_t *overflows);

#endif

/* SPDX-License-Identifier: MIT */
/* vmtab.h - the table of running VMs, shared by the per-VM sources.
 *
 * The vm source owns it: it learns domains (UUID, name, state, QEMU pid,
 * vCPU threads, taps, disks) from libvirt through its agent, and updates
 * the table between ticks.  Other sources (perf) read it: when
 * vms_vmtab_gen() changed since their last declare(), their sample()
 * returns VMS_RESCHEMA and they re-declare from the table.  VMs are keyed
 * by UUID; the name is only a label (a VM can be renamed). */
#ifndef VMS_VMTAB_H
#define VMS_VMTAB_H

#include <sys/types.h>

#include "vms.h"

#define VMS_UUID_LEN 36

struct vms_vm {
	char uuid[VMS_UUID_LEN + 1];
	char *name;
	int state;         /* virDomainState (1 running, 3 paused, ...) */
	int reason;
	pid_t pid;         /* QEMU process, 0 if not known (remote, Xen, test driver) */
	unsigned nvcpu;
	pid_t *vcpu_tid;   /* [vcpu number] thread id, 0 if not known */
	unsigned ntap;
	char **tap;        /* host-side tap names ("vnet3") */
	unsigned ndisk;
	char **disk;       /* guest disk targets ("vda") */
};

struct vms_vmtab {
	struct vms_vm *vm;
	unsigned n;
	uint64_t gen;      /* bumped whenever the set or an identity changes */
};

/* The process-wide table (empty when no vm source runs). */
const struct vms_vmtab *vms_vmtab(void);
static inline uint64_t vms_vmtab_gen(void) { return vms_vmtab()->gen; }
/* The VM with this UUID, or NULL. */
const struct vms_vm *vms_vmtab_find(const char *uuid);

/* Deep copy of one VM (dst is overwritten): 0 or -ENOMEM. */
int vms_vm_dup(struct vms_vm *dst, const struct vms_vm *src);
/* Free what a copy owns and zero it. */
void vms_vm_clear(struct vms_vm *vm);
/* Same process, threads, taps, disks and name (state may differ): the
 * files a reader keeps open for a VM are still the right ones. */
bool vms_vm_same_files(const struct vms_vm *a, const struct vms_vm *b);

/* Mutation: the vm source (and tests).  Not for the tick: these allocate.
 * upsert copies *vm and bumps the generation only if something changed;
 * returns 1 if it changed, 0 if not, -errno. */
int vms_vmtab_upsert(const struct vms_vm *vm);
/* 1 if removed, 0 if it was not there. */
int vms_vmtab_remove(const char *uuid);
void vms_vmtab_clear(void);

#endif

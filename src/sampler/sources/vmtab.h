/* SPDX-License-Identifier: MIT */
/* vmtab.h - a table of running VMs: the VM set of a run.
 *
 * The loop owns one (struct vms_loop's vms) and hands it to the sources:
 * the source that produces it (ops->produces_vms: the vm source) learns
 * domains (UUID, name, state, QEMU pid, vCPU threads, taps, disks) from
 * libvirt through its agent and updates the table between ticks (open,
 * ready, idle; never in sample).  The others (netdev, perf) read it
 * (env->vms, and the tick context's vms): when vms_vmtab_gen() changed
 * since their last declare(), their sample() returns VMS_RESCHEMA and
 * they re-declare from the table.  VMs are keyed by UUID; the name is
 * only a label (a VM can be renamed). */
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

/* An empty table is all zeroes.  Its generation (0 for no table). */
static inline uint64_t vms_vmtab_gen(const struct vms_vmtab *t) { return t ? t->gen : 0; }
/* The VM with this UUID, or NULL. */
const struct vms_vm *vms_vmtab_find(const struct vms_vmtab *t, const char *uuid);

/* Deep copy of one VM (dst is overwritten): 0 or -ENOMEM. */
int vms_vm_dup(struct vms_vm *dst, const struct vms_vm *src);
/* The VM's name in its column names ("vm.<it>.cpu_time") into dst
 * (VMS_NAME_PART_MAX + 1 bytes): characters other than letters, digits
 * and "_-+:@" become '_' (a '.' would split the hierarchy), and a name too
 * long for a column name keeps its first bytes and gets "~" and the hash
 * of vms_name_fit() appended.  Returns true if it was shortened. */
bool vms_vm_colname(char *dst, const char *name);
/* Free what a copy owns and zero it. */
void vms_vm_clear(struct vms_vm *vm);
/* Same process, threads, taps, disks and name (state may differ): the
 * files a reader keeps open for a VM are still the right ones. */
bool vms_vm_same_files(const struct vms_vm *a, const struct vms_vm *b);

/* Mutation: the VM set's producer (and tests).  Not for the tick: these allocate.
 * upsert copies *vm and bumps the generation only if something changed;
 * returns 1 if it changed, 0 if not, -errno. */
int vms_vmtab_upsert(struct vms_vmtab *t, const struct vms_vm *vm);
/* 1 if removed, 0 if it was not there. */
int vms_vmtab_remove(struct vms_vmtab *t, const char *uuid);
/* Empty it (frees what it holds; the generation moves on). */
void vms_vmtab_clear(struct vms_vmtab *t);

#endif

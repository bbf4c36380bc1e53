/* SPDX-License-Identifier: MIT */
/* cgroup.h - where a VM's cgroup accounting files are.
 *
 * The hierarchies come from the mount table (<proc root>/self/mountinfo):
 * the cgroup2 mount and the v1 mounts of the cpuacct and memory
 * controllers.  Mount points below /sys/fs/cgroup are looked for below
 * `root` instead (the cgroup_root seam: tests point it at a fixture tree,
 * a container at the host's tree); without any cgroup mount in the table,
 * root itself is probed (a cgroup2 mount at root or root/unified, v1
 * controllers at root/<controller>).
 *
 * A VM's group is where its QEMU process is, per /proc/<pid>/cgroup,
 * without a trailing "/emulator": libvirt keeps QEMU's threads in the
 * emulator/ and vcpuN/ sub-groups of the VM's group and reads the VM's
 * group, which the kernel aggregates (tests/vmlab/FACTS.md a).  CPU comes
 * from the v2 group's cpu.stat when the VM has a v2 group (not the root)
 * with one, else from the v1 cpuacct group (cpuacct.usage and
 * cpuacct.stat); memory from the v2 memory.current, else the v1
 * memory.usage_in_bytes; I/O from the v2 io.stat only (the v1 blkio
 * throttle counters read 0 for libvirt's guests on the test host although
 * they do I/O: FACTS.md a, d). */
#ifndef VMS_CGROUP_H
#define VMS_CGROUP_H

#include <sys/types.h>

#include "vms.h"

#define VMS_CGROUP_ROOT_DEFAULT "/sys/fs/cgroup"

struct vms_cgmount {
	char *point; /* where to find it (re-rooted), NULL: none */
	char *root;  /* the mount's root within the hierarchy ("/" usually) */
};

struct vms_cgmounts {
	struct vms_cgmount v2, cpuacct, memory, cpu;
};

/* 0 (also when nothing is found: every mount NULL) or -ENOMEM. */
int vms_cgmounts_load(struct vms_cgmounts *m, int proc_dirfd, const char *root);
void vms_cgmounts_free(struct vms_cgmounts *m);

/* The files of one VM, as absolute paths (NULL: not available). */
struct vms_cgfiles {
	union {
		struct {
			char *cpu_stat;      /* v2 cpu.stat */
			char *cpuacct_usage; /* v1 */
			char *cpuacct_stat;  /* v1 */
			char *mem;           /* v2 memory.current or v1 memory.usage_in_bytes */
			char *io_stat;       /* v2 io.stat */
			/* the VM's groups (limits, throttling, memory events,
			 * pressure: vm_kernel.c), NULL when not placed in that
			 * hierarchy */
			char *v2_dir, *cpu_dir, *mem_dir;
		};
		char *path[8]; /* all of them, each owned (vms_cgfiles_free) */
	};
};

/* From the text of /proc/<pid>/cgroup (pidcg, len bytes): the files that
 * exist.  0, -EINVAL (malformed text) or -ENOMEM. */
int vms_cgfiles_find(struct vms_cgfiles *f, const struct vms_cgmounts *m, const char *pidcg,
		     size_t len);
void vms_cgfiles_free(struct vms_cgfiles *f);

#endif

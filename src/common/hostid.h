/* SPDX-License-Identifier: MIT */
/* hostid.h - what identifies and describes the host a run was recorded on:
 * hostname, machine-id, boot id, kernel, CPU model, CPUs online, NUMA
 * nodes, USER_HZ, page size, time zone, the vmsampler version and build
 * features, the libvirt URI and versions.  The sampler collects it once at
 * start (and learns libvirt's part when the agent connects) and writes it
 * as the HOST record before each SCHEMA (vmsampler-format(5)), so every
 * file, rotated part and ring head carries it.  Values are strings; an
 * unknown one is empty (and not written). */
#ifndef VMS_HOSTID_H
#define VMS_HOSTID_H

#include <stddef.h>
#include <stdint.h>

#include "vms.h"

enum vms_hostkey {
	VMS_HK_HOSTNAME,
	VMS_HK_MACHINE_ID,
	VMS_HK_BOOT_ID,
	VMS_HK_KERNEL,
	VMS_HK_CPU_MODEL,
	VMS_HK_CPUS_ONLINE,
	VMS_HK_NUMA_NODES,
	VMS_HK_USER_HZ,
	VMS_HK_PAGE_SIZE,
	VMS_HK_TIMEZONE,
	VMS_HK_VERSION,
	VMS_HK_FEATURES,
	VMS_HK_LIBVIRT_URI,
	VMS_HK_LIBVIRT_VERSION,
	VMS_HK_HYPERVISOR,
	VMS_HK_HYPERVISOR_VERSION,
	VMS_HK_N
};

/* The keys as written in the HOST record (and printed by dump --info). */
extern const char *const vms_hostkey_names[VMS_HK_N];

#define VMS_HOSTVAL_MAX 128 /* bytes of a value, with its NUL */

struct vms_hostid {
	char val[VMS_HK_N][VMS_HOSTVAL_MAX];
};

/* Fill h from the proc root (an open directory fd of /proc or what
 * --proc-root names: hostname, kernel, boot id, CPU model come from its
 * sys/kernel and cpuinfo), /sys and /etc of this machine, and the build.
 * What cannot be read stays empty. */
void vms_hostid_collect(struct vms_hostid *h, int proc_dirfd);
/* Set one value (printf; escaped by the names' rule, name.h: bytes that
 * are not UTF-8 and control characters become \xHH, a backslash \\). */
void vms_hostid_set(struct vms_hostid *h, enum vms_hostkey k, const char *fmt, ...) VMS_PRINTF(3, 4);

/* Set a libvirt-style version number (major * 1,000,000 + minor * 1,000 +
 * release) as "major.minor.release". */
void vms_hostid_set_version(struct vms_hostid *h, enum vms_hostkey k, uint64_t v);

/* The HOST record: its exact size and its encoder (binfmt.c's framing). */
size_t vms_bin_host_size(const struct vms_hostid *h);
size_t vms_bin_host_enc(uint8_t *p, const struct vms_hostid *h);

#endif

/* SPDX-License-Identifier: MIT */
/* source.c - the registry of compiled-in sources, in frame order.  The
 * order is only that of the columns: what one source produces for another
 * (the VM set) goes through the source host (struct vms_srchost's vms). */
#include <string.h>

#include "source.h"
#include "vms_build.h"

extern const struct vms_source_ops vms_source_procstat;
extern const struct vms_source_ops vms_source_loadavg;
extern const struct vms_source_ops vms_source_diskstats;
extern const struct vms_source_ops vms_source_netdev;
extern const struct vms_source_ops vms_source_meminfo;
extern const struct vms_source_ops vms_source_vmstat;
extern const struct vms_source_ops vms_source_psi;
extern const struct vms_source_ops vms_source_interrupts;
extern const struct vms_source_ops vms_source_softirqs;
extern const struct vms_source_ops vms_source_schedstat;
#if HAVE_LIBVIRT
extern const struct vms_source_ops vms_source_vm;
#endif
#if HAVE_PERF
extern const struct vms_source_ops vms_source_perf;
#endif
#if HAVE_BPF
extern const struct vms_source_ops vms_source_interference;
#endif
extern const struct vms_source_ops vms_source_intfest;

const struct vms_source_ops *const vms_source_registry[] = {
	&vms_source_procstat,
	&vms_source_loadavg,
	&vms_source_diskstats,
	&vms_source_netdev,
	&vms_source_meminfo,
	&vms_source_vmstat,
	&vms_source_psi,
	&vms_source_interrupts,
	&vms_source_softirqs,
	&vms_source_schedstat,
#if HAVE_LIBVIRT
	&vms_source_vm, /* the VM set's producer (produces_vms) */
#endif
#if HAVE_PERF
	&vms_source_perf,
#endif
#if HAVE_BPF
	&vms_source_interference, /* reads the VM set, like perf */
#endif
	&vms_source_intfest, /* the same without BPF, estimated (reads the VM set) */
};
const unsigned vms_source_registry_len = VMS_ARRAY_SIZE(vms_source_registry);

const struct vms_source_ops *vms_source_lookup(const char *name)
{
	for (unsigned i = 0; i < vms_source_registry_len; i++)
		if (strcmp(vms_source_registry[i]->name, name) == 0)
			return vms_source_registry[i];
	return NULL;
}

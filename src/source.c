/* SPDX-License-Identifier: MIT */
/* source.c - the registry of compiled-in sources, in frame order. */
#include <string.h>

#include "source.h"

#include "vms_build.h"

extern const struct vms_source_ops vms_source_loadavg;
#if HAVE_PERF
extern const struct vms_source_ops vms_source_perf;
#endif

const struct vms_source_ops *const vms_source_registry[] = {
	&vms_source_loadavg,
#if HAVE_PERF
	/* last: it reads the VM table the per-VM source fills */
	&vms_source_perf,
#endif
};
const unsigned vms_source_registry_len = VMS_ARRAY_SIZE(vms_source_registry);

const struct vms_source_ops *vms_source_lookup(const char *name)
{
	for (unsigned i = 0; i < vms_source_registry_len; i++)
		if (strcmp(vms_source_registry[i]->name, name) == 0)
			return vms_source_registry[i];
	return NULL;
}

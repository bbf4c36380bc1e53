/* SPDX-License-Identifier: MIT */
/* virt_stats.h - a tick's libvirt work (virt_stats.c). */
#ifndef VMS_VIRT_STATS_H
#define VMS_VIRT_STATS_H

#include "agent.h"

/* Fast values of the fallback domains, then one slow batch. */
void vms_agent_fast(struct agent *a);
void vms_agent_slow(struct agent *a);

#endif

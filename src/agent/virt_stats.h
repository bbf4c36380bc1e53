/* SPDX-License-Identifier: MIT */
/* virt_stats.h - a tick's libvirt work (virt_stats.c). */
#ifndef VMS_VIRT_STATS_H
#define VMS_VIRT_STATS_H

#include "agent.h"

/* Fast values of the fallback domains, then one slow batch. */
void vms_agent_fast(struct vms_agent *a);
void vms_agent_slow(struct vms_agent *a);
/* The job statistics of the domains with a migration job (a->d[].mig):
 * one virDomainGetJobStats each; none without. */
void vms_agent_jobs(struct vms_agent *a);
/* Typed job parameters as migration values (vms_vm_mig order, VMS_NONE
 * when absent) of a job of type `type` (virDomainJobType). */
void vms_agent_job_values(const virTypedParameter *p, int n, int type, uint64_t *v);
/* Send the values (vms_vm_mig order) of d as one STATS message. */
void vms_agent_job_send(struct vms_agent *a, const struct vms_adom *d, const uint64_t *v);
/* Dirty-page rates (a->rw only): the results of the calculations that
 * are done, then at most one calculation started. */
void vms_agent_dirty(struct vms_agent *a);

#endif

/* SPDX-License-Identifier: MIT */
/* virt_dom.h - the agent's domains (virt_dom.c): identity, XML, threads. */
#ifndef VMS_VIRT_DOM_H
#define VMS_VIRT_DOM_H

#include "agent.h"

/* Fill o from the domain (state, XML, pid, threads); the XML is parsed
 * here and nowhere else (lifecycle events and (re)connects). */
int vms_adom_load(struct vms_agent *a, virDomainPtr dom, struct vms_adom *o);
void vms_adom_free(struct vms_adom *o);
void vms_adom_send(struct vms_agent *a, const struct vms_adom *o);
/* Its QEMU is stopped (SIGSTOP, state T/t): libvirt's call would hang. */
bool vms_adom_stopped(const struct vms_adom *o);

#endif

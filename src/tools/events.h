/* SPDX-License-Identifier: MIT */
/* events.h - EVENT records (VM lifecycle, sources, markers) as the tools
 * print them: one CSV row each, under VMS_EVENT_HEADER (dump --events,
 * tail --events). */
#ifndef VMS_EVENTS_H
#define VMS_EVENTS_H

#include <stdint.h>
#include <stdio.h>

#include "sink.h"

#define VMS_EVENT_HEADER "before_seq,time,t_mono_ns,type,event,subject,detail\r\n"

/* "vm_started", "mark", ...; "" for a type this version does not know */
const char *vms_event_name(uint32_t t);
/* One row: before_seq,time,t_mono_ns,type,event,subject,detail.  0 or -EIO. */
int vms_event_row(FILE *f, const struct vms_event *e);

#endif

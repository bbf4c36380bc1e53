/* SPDX-License-Identifier: MIT */
/* perfev.h - perf event names: what `sources.perf.host` and `.vm` accept.
 *
 * Compiled in every build (it needs only <linux/perf_event.h>), so the
 * configuration loader checks names the same way with or without libperf.
 *
 * A name is one of
 *   - a generic software event: context-switches (cs), cpu-migrations
 *     (migrations), page-faults (faults), minor-faults, major-faults,
 *     task-clock, cpu-clock, alignment-faults, emulation-faults;
 *   - a generic hardware event: cycles (cpu-cycles), instructions,
 *     cache-references, cache-misses, branch-instructions (branches),
 *     branch-misses, bus-cycles, ref-cycles, stalled-cycles-frontend,
 *     stalled-cycles-backend;
 *   - a tracepoint SUBSYSTEM:EVENT ("kvm:kvm_exit"), each part letters,
 *     digits and '_' (at most 63 bytes); whether it exists is known only
 *     when it is opened.
 * Aliases (in parentheses) are accepted and mean the same event; columns
 * use the first name. */
#ifndef VMS_PERFEV_H
#define VMS_PERFEV_H

#include "vms.h"

/* Events per list (sources.perf.host, sources.perf.vm). */
#define VMS_PERF_MAX_EVENTS 16
#define VMS_PERF_TP_PART_MAX 63

enum vms_perf_class {
	VMS_PERF_SOFTWARE = 0, /* kernel software counters */
	VMS_PERF_TRACEPOINT,   /* kernel tracepoints (counted, not recorded) */
	VMS_PERF_HARDWARE,     /* the CPU's PMU */
};

struct vms_perf_evspec {
	const char *name;   /* canonical: the table's name, or the tracepoint as given */
	enum vms_perf_class cls;
	uint32_t type;      /* PERF_TYPE_*; for a tracepoint config is looked up later */
	uint64_t config;
	uint8_t unit;       /* enum vms_unit: COUNT, or NS for the clocks */
	char tp_sys[VMS_PERF_TP_PART_MAX + 1];
	char tp_event[VMS_PERF_TP_PART_MAX + 1];
};

/* Parse `name` (it must outlive *out when it is a tracepoint).
 * 0, or -EINVAL with a message (no location, no key name) such as
 * "unknown event 'context-switch' (did you mean 'context-switches'?)". */
int vms_perf_event_parse(const char *name, struct vms_perf_evspec *out, char *msg, size_t msglen);

#endif

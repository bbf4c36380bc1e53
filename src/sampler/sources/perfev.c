/* SPDX-License-Identifier: MIT */
#include "perfev.h"
#include "edit.h"

#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>

#include <vmsampler/format.h>

#include "config.h"

struct evdef {
	const char *name;
	const char *alias;
	uint32_t type;
	uint64_t config;
	uint8_t unit;
};

/* perf's own names (perf list), so a name means what it means to perf stat. */
static const struct evdef defs[] = {
	{"context-switches", "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, VMS_UNIT_COUNT},
	{"cpu-migrations", "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, VMS_UNIT_COUNT},
	{"page-faults", "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, VMS_UNIT_COUNT},
	{"minor-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, VMS_UNIT_COUNT},
	{"major-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, VMS_UNIT_COUNT},
	{"task-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, VMS_UNIT_NS},
	{"cpu-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, VMS_UNIT_NS},
	{"alignment-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS, VMS_UNIT_COUNT},
	{"emulation-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS, VMS_UNIT_COUNT},
	{"cycles", "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, VMS_UNIT_COUNT},
	{"instructions", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, VMS_UNIT_COUNT},
	{"cache-references", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, VMS_UNIT_COUNT},
	{"cache-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, VMS_UNIT_COUNT},
	{"branch-instructions", "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS,
	 VMS_UNIT_COUNT},
	{"branch-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, VMS_UNIT_COUNT},
	{"bus-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES, VMS_UNIT_COUNT},
	{"ref-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, VMS_UNIT_COUNT},
	{"stalled-cycles-frontend", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND,
	 VMS_UNIT_COUNT},
	{"stalled-cycles-backend", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND,
	 VMS_UNIT_COUNT},
};

static bool tp_part(const char *s, size_t n)
{
	if (n == 0 || n > VMS_PERF_TP_PART_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
			return false;
	}
	return true;
}

int vms_perf_event_parse(const char *name, struct vms_perf_evspec *out, char *msg, size_t msglen)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < VMS_ARRAY_SIZE(defs); i++) {
		const struct evdef *d = &defs[i];
		if (strcmp(name, d->name) != 0 && !(d->alias && strcmp(name, d->alias) == 0))
			continue;
		out->name = d->name;
		out->type = d->type;
		out->config = d->config;
		out->unit = d->unit;
		out->cls = d->type == PERF_TYPE_HARDWARE ? VMS_PERF_HARDWARE : VMS_PERF_SOFTWARE;
		return 0;
	}
	const char *colon = strchr(name, ':');
	if (colon) {
		size_t ns = (size_t)(colon - name), ne = strlen(colon + 1);
		if (!tp_part(name, ns) || !tp_part(colon + 1, ne)) {
			snprintf(msg, msglen,
				 "'%.80s' is not a tracepoint name (SUBSYSTEM:EVENT, each letters, digits "
				 "and '_', such as kvm:kvm_exit)",
				 name);
			return -EINVAL;
		}
		memcpy(out->tp_sys, name, ns);
		memcpy(out->tp_event, colon + 1, ne);
		out->name = name;
		out->cls = VMS_PERF_TRACEPOINT;
		out->type = PERF_TYPE_TRACEPOINT;
		out->unit = VMS_UNIT_COUNT;
		return 0;
	}
	const char *pick = NULL;
	unsigned best = 4;
	for (size_t i = 0; i < VMS_ARRAY_SIZE(defs); i++) {
		unsigned d = vms_edit_distance(name, defs[i].name);
		if (d < best && d < strlen(defs[i].name)) {
			best = d;
			pick = defs[i].name;
		}
	}
	if (pick)
		snprintf(msg, msglen, "unknown event '%.80s' (did you mean '%s'?)", name, pick);
	else
		snprintf(msg, msglen,
			 "unknown event '%.80s' (a software or hardware event of perf list, or a "
			 "tracepoint SUBSYSTEM:EVENT)",
			 name);
	return -EINVAL;
}

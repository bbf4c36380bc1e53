/* SPDX-License-Identifier: MIT */
/* events.c - EVENT records as the tools print them (events.h). */
#include "events.h"

#include <errno.h>

#include "csv.h"
#include "fmt.h"
#include "vms.h"
#include <vmsampler/format.h>

const char *vms_event_name(uint32_t t)
{
	static const struct {
		uint32_t t;
		const char *n;
	} names[] = {
		{VMS_EV_SOURCE_FAILED, "source_failed"}, {VMS_EV_SOURCE_RECOVERED, "source_recovered"},
		{VMS_EV_FRAMES_LOST, "frames_lost"}, {VMS_EV_CLOCK_STEPPED, "clock_stepped"},
		{VMS_EV_OUTPUT_REOPENED, "output_reopened"}, {VMS_EV_MARK, "mark"}, {VMS_EV_VM_STARTED, "vm_started"},
		{VMS_EV_VM_STOPPED, "vm_stopped"}, {VMS_EV_VM_CRASHED, "vm_crashed"},
		{VMS_EV_VM_PAUSED, "vm_paused"}, {VMS_EV_VM_RESUMED, "vm_resumed"},
		{VMS_EV_VM_MIGRATED_IN, "vm_migrated_in"}, {VMS_EV_VM_MIGRATED_OUT, "vm_migrated_out"},
		{VMS_EV_VM_DEFINED, "vm_defined"}, {VMS_EV_VM_UNDEFINED, "vm_undefined"},
		{VMS_EV_LIBVIRT_LOST, "libvirt_lost"}, {VMS_EV_LIBVIRT_BACK, "libvirt_back"},
	};
	for (size_t i = 0; i < VMS_ARRAY_SIZE(names); i++)
		if (names[i].t == t)
			return names[i].n;
	return "";
}

/* One CSV row: before_seq,time,t_mono_ns,type,event,subject,detail */
int vms_event_row(FILE *f, const struct vms_event *e)
{
	char buf[64 + 2 * (sizeof(e->subject) + sizeof(e->detail)) + 8], *p = buf;
	p = vms_fmt_u64(p, e->before_seq);
	*p++ = ',';
	p = vms_fmt_time(p, e->t_real_ns, vms_local_gmtoff(e->t_real_ns));
	*p++ = ',';
	p = vms_fmt_u64(p, e->t_mono_ns);
	*p++ = ',';
	p = vms_fmt_u64(p, e->type);
	*p++ = ',';
	p = vms_csv_field(p, vms_event_name(e->type));
	*p++ = ',';
	p = vms_csv_field(p, e->subject);
	*p++ = ',';
	p = vms_csv_field(p, e->detail);
	*p++ = '\r';
	*p++ = '\n';
	return fwrite(buf, 1, (size_t)(p - buf), f) == (size_t)(p - buf) ? 0 : -EIO;
}

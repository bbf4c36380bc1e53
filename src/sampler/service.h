/* SPDX-License-Identifier: MIT */
/* service.h - main's part of the run (main.c): the signals (SIGINT and
 * SIGTERM stop, SIGHUP reopens the outputs, through a signalfd in the
 * loop's wait), the service manager (sd_notify: READY after the first
 * frame, the watchdog between ticks, STOPPING) and the control socket
 * (vmsampler mark, with its columns vms.marks and vms.marks_refused),
 * plugged into the loop through struct vms_loop_hooks. */
#ifndef VMS_SERVICE_H
#define VMS_SERVICE_H

#include "control.h"
#include "loop.h"
#include "notify.h"

struct vms_service {
	const struct vms_config *conf;
	int sigfd;                  /* -1: no signal handling yet */
	struct vms_notify notify;
	struct vms_control ctl;     /* lfd -1: none */
	char *ctl_path;
};

/* Before vms_loop_init: where the control socket goes (control_path, or
 * RING.ctl beside a shared ring), and the hooks to give the loop.  0 or
 * -ENOMEM. */
int vms_service_init(struct vms_service *sv, const struct vms_config *conf, struct vms_loop_hooks *hooks);
/* After vms_loop_init: signal handling through a signalfd.  0 or -errno. */
int vms_service_signals(struct vms_service *sv);
/* Just before vms_loop_run: the service manager's environment. */
void vms_service_start(struct vms_service *sv);
/* After vms_loop_fini. */
void vms_service_fini(struct vms_service *sv);

#endif

/* SPDX-License-Identifier: MIT */
/* notify.h - the service manager's notify protocol (sd_notify(3)): READY=1
 * once the first frame is out, WATCHDOG=1 from the loop between ticks at
 * half of $WATCHDOG_USEC, STOPPING=1 at the end.  Through libsystemd where
 * the build has it, else the same datagrams written to $NOTIFY_SOCKET.
 * Without $NOTIFY_SOCKET every call does nothing. */
#ifndef VMS_NOTIFY_H
#define VMS_NOTIFY_H

#include <stdbool.h>
#include <stdint.h>

struct vms_notify {
	bool on;           /* $NOTIFY_SOCKET is set */
	bool ready;        /* READY=1 was sent */
	int wd_fd;         /* timerfd at half the watchdog period, -1: no watchdog */
	uint64_t wd_usec;  /* $WATCHDOG_USEC (for this pid) */
	uint64_t pings;    /* WATCHDOG=1 sent */
};

/* Read the environment, arm the watchdog's timer.  Never fails: a
 * watchdog that cannot be armed is said in one line. */
void vms_notify_init(struct vms_notify *n);
/* READY=1 with a STATUS line (once). */
void vms_notify_ready(struct vms_notify *n, const char *status);
/* The watchdog's timer fired (its fd is readable): WATCHDOG=1. */
void vms_notify_watchdog(struct vms_notify *n);
void vms_notify_stopping(struct vms_notify *n);
void vms_notify_close(struct vms_notify *n);

#endif

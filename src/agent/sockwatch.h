/* SPDX-License-Identifier: MIT */
/* sockwatch.h - where libvirt's socket will appear, and an inotify watch
 * on it, so that the agent of a host without libvirtd retries when the
 * daemon starts instead of every few seconds (issue 15: without VMs and
 * without libvirtd, the default build should cost what the host-only build
 * costs).  No libvirt in here: its unit test runs in every build. */
#ifndef VMS_SOCKWATCH_H
#define VMS_SOCKWATCH_H

#include <stdbool.h>
#include <stddef.h>

/* The directory in which the daemon behind URI creates its socket:
 * socket=PATH's directory when the URI names one; for a local URI (no
 * host, no transport but unix) /run/libvirt for .../system and
 * RUNTIME/libvirt for .../session (RUNTIME: $XDG_RUNTIME_DIR, else
 * $HOME/.cache); URI NULL or "" (the caller passes $LIBVIRT_DEFAULT_URI
 * when it has no URI): system for root and session for others (libvirt's
 * own defaults).
 * 0 with the directory in out, -1 when there is nothing to watch (a remote
 * daemon, an in-process driver such as test:///, a path too long). */
int vms_sockwatch_dir(const char *uri, bool root, const char *runtime, const char *home, char *out, size_t cap,
		char *name, size_t ncap);
/* name: the socket's file name where socket= names it, else "" (libvirt's
 * own sockets: libvirt-sock, libvirt-sock-ro, virtqemud-sock-ro, ...). */

struct vms_sockwatch {
	int fd;            /* inotify, -1: none */
	int wd;            /* -1: no watch */
	bool at_target;    /* the watch is on the socket's directory itself */
	char dir[4096];    /* the socket's directory */
	char name[256];    /* the socket's name, "": any name with "sock" in it */
	char next[256];    /* watching an ancestor: the entry on the way */
};

/* Open the inotify instance (non-blocking) for the socket NAME in DIR
 * (vms_sockwatch_dir's); -errno. */
int vms_sockwatch_open(struct vms_sockwatch *w, const char *dir, const char *name);
/* Watch the directory, or while it does not exist its nearest existing
 * ancestor, for the entry on the way to it; -errno. */
int vms_sockwatch_arm(struct vms_sockwatch *w);
/* No watch (connected: nothing to wait for). */
void vms_sockwatch_disarm(struct vms_sockwatch *w);
/* Drain the queue: true when the socket appeared (created, moved in, its
 * mode or owner changed), when the directory itself just appeared (the
 * socket may be in it already), or when events were lost.  Nothing else
 * in those directories counts. */
bool vms_sockwatch_read(struct vms_sockwatch *w);
void vms_sockwatch_close(struct vms_sockwatch *w);

#endif

/* SPDX-License-Identifier: MIT */
/* control.h - the sampler's control socket: `vmsampler mark` puts a
 * marker into the running sampler's stream through it.
 *
 * The protocol is ctl_proto.h's.  Everything is bounded and non-blocking:
 * VMS_CTL_CONNS connections at a time (more are answered "error: busy"),
 * VMS_CTL_MARKS marks per interval (more are answered and counted as
 * refused), text of at most VMS_CTL_TEXT bytes without control characters
 * (else refused), a connection that says nothing for a second is closed.
 * The handling runs between ticks, never in one, and allocates nothing
 * after open. */
#ifndef VMS_CONTROL_H
#define VMS_CONTROL_H

#include <poll.h>
#include <stdint.h>
#include <sys/types.h>

#include "ctl_proto.h"

#define VMS_CTL_CONNS 8
#define VMS_CTL_MARKS 64
#define VMS_CTL_IDLE_NS 1000000000ull

/* What a mark becomes: the loop's event; returns the seq of the frame it
 * goes before. */
typedef uint64_t (*vms_control_mark_fn)(void *ctx, const char *text, const char *who);

struct vms_control {
	int lfd;    /* listening socket, -1: none */
	char *path; /* owned; unlinked at close */
	struct {
		int fd;
		uint64_t since_ns;
	} conn[VMS_CTL_CONNS];
	uint32_t budget;          /* marks still taken this interval */
	uint64_t marks, refused;  /* counted since open */
	vms_control_mark_fn mark;
	void *ctx;
};

/* No socket (every fd -1): close() and pollfds() are harmless. */
void vms_control_init(struct vms_control *c);
/* Bind the socket at path.  A socket left there by a sampler that is gone
 * is replaced; a live one (another sampler) or anything that is not a
 * socket is refused and left alone.  0, or -errno with err set. */
int vms_control_open(struct vms_control *c, const char *path, vms_control_mark_fn mark, void *ctx,
		     char *err, size_t errlen);
/* The fds to wait on (listening socket, open connections); how many. */
int vms_control_pollfds(const struct vms_control *c, struct pollfd *fds, int max);
/* Handle what the wait found ready on the fds pollfds() gave. */
void vms_control_ready(struct vms_control *c, const struct pollfd *fds, int n, uint64_t now_ns);
/* A new interval: the mark budget is full again. */
void vms_control_interval(struct vms_control *c);
void vms_control_close(struct vms_control *c);

#endif

/* SPDX-License-Identifier: MIT */
/* virt_client.h - the sampler's end of the agent: start vmsampler-virt
 * with one end of a socketpair, exchange protocol messages without ever
 * blocking, and stop it.  The policy (when to restart, the watchdog) is
 * the vm source's. */
#ifndef VMS_VIRT_CLIENT_H
#define VMS_VIRT_CLIENT_H

#include <sys/types.h>

#include "virt_proto.h"

struct vms_vclient {
	pid_t pid;           /* 0: none (or reaped) */
	int fd;              /* -1: none */
	uint8_t *in;         /* received bytes [inpos, inlen) not yet decoded */
	size_t inpos, inlen, incap;
	size_t taken;        /* length of the message handed out last */
	struct vms_vp_w out; /* messages to send; [outpos, out.len) not yet sent */
	size_t outpos;
	uint64_t dropped;    /* messages not sent because the agent did not read */
};

void vms_vclient_init(struct vms_vclient *c);
/* Start argv[0] with the agent's end of a fresh socketpair as fd 3, its
 * own process group, default signal dispositions and an empty signal
 * mask.  0 or -errno. */
int vms_vclient_spawn(struct vms_vclient *c, char *const argv[]);
/* Close the socket and end the process: SIGTERM and up to grace_ms for it
 * to exit, then SIGKILL (grace_ms 0: SIGKILL at once), and reap it. */
void vms_vclient_stop(struct vms_vclient *c, unsigned grace_ms);
/* Read what the agent sent (non-blocking).  The number of bytes read,
 * -EPIPE at end of file, -EMSGSIZE if it sends more than we hold, -errno. */
ssize_t vms_vclient_read(struct vms_vclient *c);
/* The next whole message: 1 (m points into the input buffer until the
 * next call), 0 (none yet), -EBADMSG (the stream is broken). */
int vms_vclient_next(struct vms_vclient *c, struct vms_vp_msg *m);
/* Send queued messages without blocking: 0 (all sent), -EAGAIN (some
 * wait), -errno. */
int vms_vclient_flush(struct vms_vclient *c);
/* Drop queued messages that could not be sent when more than `keep` bytes
 * wait (counted in c->dropped). */
void vms_vclient_trim(struct vms_vclient *c, size_t keep);
void vms_vclient_free(struct vms_vclient *c);

#endif

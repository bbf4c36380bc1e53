/* SPDX-License-Identifier: MIT */
/* ctl_proto.h - the control socket's protocol, shared by the sampler
 * (src/sampler/control.c, the server) and `vmsampler mark` (the client).
 *
 * A SOCK_SEQPACKET socket bound at a path (PATH.ctl beside a shared ring,
 * or control_path), mode 0660: only the sampler's user and group may
 * connect.  A client sends one message, the marker's text; the sampler
 * answers one message, "ok SEQ" (the mark goes before frame SEQ) or
 * "error: WHY", and closes the connection. */
#ifndef VMS_CTL_PROTO_H
#define VMS_CTL_PROTO_H

#include <stddef.h>
#include <sys/types.h>

#define VMS_CTL_TEXT 79 /* bytes of text: an EVENT's subject */

/* Why text (n bytes) cannot be a mark, or NULL: empty, too long, control
 * characters (printable ASCII and UTF-8 are fine). */
const char *vms_ctl_text_problem(const char *t, size_t n);
/* Send text to the socket at path, wait for the answer (at most
 * timeout_ms), put it in reply.  0 on "ok", 1 on an "error:" answer,
 * -errno when there was no answer. */
int vms_ctl_send(const char *path, const char *text, int timeout_ms, char *reply, size_t replylen);
/* The path of the control socket that process pid listens on (through
 * /proc/PID/fd and /proc/net/unix).  0 or -errno. */
int vms_ctl_find(pid_t pid, char *path, size_t pathlen);

#endif

/* SPDX-License-Identifier: MIT */
/* ctl_proto_int.h - the socket address of a control socket path. */
#ifndef VMS_CTL_PROTO_INT_H
#define VMS_CTL_PROTO_INT_H

#include <sys/un.h>

/* 0, or -ENAMETOOLONG */
int vms_ctl_addr(const char *path, struct sockaddr_un *a);

#endif

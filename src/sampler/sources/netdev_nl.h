/* SPDX-License-Identifier: MIT */
/* netdev_nl.h - interface counters through rtnetlink (the netdev source's
 * netlink backend).
 *
 * One NETLINK_ROUTE socket is kept open; each tick sends one RTM_GETSTATS
 * dump request (IFLA_STATS_LINK_64 only) and receives the replies into a
 * buffer allocated at open: the same 64-bit counters /proc/net/dev prints,
 * without the kernel formatting them as text.  The socket also listens to
 * RTNLGRP_LINK, so a renamed interface (whose ifindex, the only key of a
 * stats reply, stays the same) is seen in the next dump's receive loop. */
#ifndef VMS_NETDEV_NL_H
#define VMS_NETDEV_NL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse.h"

struct vms_nl {
	int fd;
	uint32_t seq;
	char *buf;
	size_t cap;
};

#define VMS_NL_INIT { .fd = -1, .seq = 0, .buf = NULL, .cap = 0 }

/* What a dump found, message by message. */
struct vms_nl_ops {
	/* a stats reply: the interface's 16 /proc/net/dev fields (vms_net_field_names) */
	void (*stats)(void *arg, int ifindex, const uint64_t v[VMS_NET_FIELDS]);
	/* a link: a reply of an RTM_GETLINK dump (notify false), or a change
	 * notification (notify true); name NULL for a deleted link */
	void (*link)(void *arg, bool notify, int ifindex, const char *name, size_t len);
};

/* Open the socket and its receive buffer, then probe with one stats dump
 * (a kernel without RTM_GETSTATS, before 4.7, or a sandbox that refuses
 * netlink fails here).  0 or -errno; on failure n is closed. */
int vms_nl_open(struct vms_nl *n);
void vms_nl_close(struct vms_nl *n);
/* After a failed dump in a tick: close the socket (it may hold the rest of
 * the dump) and keep the buffer (the tick frees nothing); the next
 * declare's vms_nl_open starts afresh. */
void vms_nl_drop(struct vms_nl *n);
/* One dump: RTM_GETSTATS (the tick: allocates nothing) or RTM_GETLINK
 * (discovery).  0 or -errno; after an error the socket may hold the rest
 * of the dump: close it and open again. */
int vms_nl_dump(struct vms_nl *n, int type, const struct vms_nl_ops *ops, void *arg);
/* The /proc/net/dev fields of a struct rtnl_link_stats64 of `len` bytes
 * (an older kernel's is shorter: the missing members are 0), as
 * dev_seq_printf_stats() in net/core/net-procfs.c sums them. */
void vms_nl_fields(const void *stats64, size_t len, uint64_t v[VMS_NET_FIELDS]);

/* The netdev source uses this backend (tests, diagnostics). */
struct vms_source;
bool vms_netdev_netlink(const struct vms_source *src);

#endif

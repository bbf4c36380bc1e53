/* SPDX-License-Identifier: MIT */
/* netdev_nl.c - interface counters through rtnetlink (see netdev_nl.h). */
#include <errno.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "netdev_nl.h"

/* One reply datagram: the kernel's dump skbs are at most 32 KiB (netlink_dump). */
#define NL_BUF (64 * 1024)

void vms_nl_fields(const void *stats64, size_t len, uint64_t v[VMS_NET_FIELDS])
{
	struct rtnl_link_stats64 s;
	memset(&s, 0, sizeof(s));
	memcpy(&s, stats64, len < sizeof(s) ? len : sizeof(s));
	v[0] = s.rx_bytes;
	v[1] = s.rx_packets;
	v[2] = s.rx_errors;
	v[3] = s.rx_dropped + s.rx_missed_errors;
	v[4] = s.rx_fifo_errors;
	v[5] = s.rx_length_errors + s.rx_over_errors + s.rx_crc_errors + s.rx_frame_errors;
	v[6] = s.rx_compressed;
	v[7] = s.multicast;
	v[8] = s.tx_bytes;
	v[9] = s.tx_packets;
	v[10] = s.tx_errors;
	v[11] = s.tx_dropped;
	v[12] = s.tx_fifo_errors;
	v[13] = s.collisions;
	v[14] = s.tx_carrier_errors + s.tx_aborted_errors + s.tx_window_errors + s.tx_heartbeat_errors;
	v[15] = s.tx_compressed;
}

void vms_nl_close(struct vms_nl *n)
{
	if (n->fd >= 0)
		close(n->fd);
	n->fd = -1;
	free(n->buf);
	n->buf = NULL;
	n->cap = 0;
}

void vms_nl_drop(struct vms_nl *n)
{
	if (n->fd >= 0)
		close(n->fd);
	n->fd = -1;
}

static void nop_stats(void *arg, int ifindex, const uint64_t v[VMS_NET_FIELDS])
{
	(void)arg, (void)ifindex, (void)v;
}

int vms_nl_open(struct vms_nl *n)
{
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK, .nl_groups = RTMGRP_LINK};
	/* a reply never takes long; a stuck socket must not stop the loop */
	const struct timeval tmo = {.tv_sec = 1};

	vms_nl_close(n);
	n->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (n->fd < 0)
		return -errno;
	n->buf = malloc(NL_BUF);
	if (!n->buf) {
		vms_nl_close(n);
		return -ENOMEM;
	}
	n->cap = NL_BUF;
	if (bind(n->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    setsockopt(n->fd, SOL_SOCKET, SO_RCVTIMEO, &tmo, sizeof(tmo)) < 0) {
		int e = -errno;
		vms_nl_close(n);
		return e;
	}
	const struct vms_nl_ops probe = {.stats = nop_stats};
	int r = vms_nl_dump(n, RTM_GETSTATS, &probe, NULL);
	if (r < 0)
		vms_nl_close(n);
	return r;
}

static int nl_request(struct vms_nl *n, int type)
{
	struct {
		struct nlmsghdr h;
		union {
			struct if_stats_msg st;
			struct ifinfomsg li;
		};
	} req;
	memset(&req, 0, sizeof(req));
	req.h.nlmsg_type = (uint16_t)type;
	req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.h.nlmsg_seq = ++n->seq ? n->seq : ++n->seq; /* 0 is a notification's */
	if (type == RTM_GETSTATS) {
		req.h.nlmsg_len = NLMSG_LENGTH(sizeof(req.st));
		req.st.family = AF_UNSPEC;
		req.st.filter_mask = IFLA_STATS_FILTER_BIT(IFLA_STATS_LINK_64);
	} else {
		req.h.nlmsg_len = NLMSG_LENGTH(sizeof(req.li));
		req.li.ifi_family = AF_UNSPEC;
	}
	struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
	ssize_t w;
	do
		w = sendto(n->fd, &req, req.h.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel));
	while (w < 0 && errno == EINTR);
	if (w < 0)
		return -errno;
	return w == (ssize_t)req.h.nlmsg_len ? 0 : -EIO;
}

static void nl_link(const struct nlmsghdr *h, bool notify, const struct vms_nl_ops *ops, void *arg)
{
	if (!ops->link || h->nlmsg_len < NLMSG_LENGTH(sizeof(struct ifinfomsg)))
		return;
	const struct ifinfomsg *ifi = NLMSG_DATA(h);
	if (h->nlmsg_type == RTM_DELLINK) {
		ops->link(arg, notify, ifi->ifi_index, NULL, 0);
		return;
	}
	int len = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*ifi)));
	for (const struct rtattr *a = IFLA_RTA(ifi); RTA_OK(a, len); a = RTA_NEXT(a, len))
		if (a->rta_type == IFLA_IFNAME) {
			const char *name = RTA_DATA(a);
			ops->link(arg, notify, ifi->ifi_index, name, strnlen(name, RTA_PAYLOAD(a)));
			return;
		}
}

static void nl_stats(const struct nlmsghdr *h, const struct vms_nl_ops *ops, void *arg)
{
	if (!ops->stats || h->nlmsg_len < NLMSG_LENGTH(sizeof(struct if_stats_msg)))
		return;
	const struct if_stats_msg *ism = NLMSG_DATA(h);
	int len = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*ism)));
	const struct rtattr *a = (const struct rtattr *)((const char *)ism + NLMSG_ALIGN(sizeof(*ism)));
	for (; RTA_OK(a, len); a = RTA_NEXT(a, len))
		if (a->rta_type == IFLA_STATS_LINK_64) {
			uint64_t v[VMS_NET_FIELDS];
			vms_nl_fields(RTA_DATA(a), RTA_PAYLOAD(a), v);
			ops->stats(arg, (int)ism->ifindex, v);
			return;
		}
}

int vms_nl_dump(struct vms_nl *n, int type, const struct vms_nl_ops *ops, void *arg)
{
	if (n->fd < 0)
		return -EBADF;
	int r = nl_request(n, type);
	if (r < 0)
		return r;
	for (;;) {
		ssize_t len = recv(n->fd, n->buf, n->cap, MSG_TRUNC);
		if (len < 0 && errno == EINTR)
			continue;
		if (len < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		if ((size_t)len > n->cap)
			return -EMSGSIZE; /* a datagram cut short: its messages are lost */
		int left = (int)len;
		for (const struct nlmsghdr *h = (const void *)n->buf; NLMSG_OK(h, left);
		     h = NLMSG_NEXT(h, left)) {
			if (h->nlmsg_seq == 0 && h->nlmsg_pid == 0) {
				/* a notification of the RTNLGRP_LINK group */
				if (h->nlmsg_type == RTM_NEWLINK || h->nlmsg_type == RTM_DELLINK)
					nl_link(h, true, ops, arg);
				continue;
			}
			if (h->nlmsg_seq != n->seq)
				continue; /* not this dump's */
			switch (h->nlmsg_type) {
			case NLMSG_DONE:
				/* a dump that failed part-way says so here */
				if (h->nlmsg_len >= NLMSG_LENGTH(sizeof(int)) && *(const int *)NLMSG_DATA(h) < 0)
					return *(const int *)NLMSG_DATA(h);
				return 0;
			case NLMSG_ERROR: {
				const struct nlmsgerr *e = NLMSG_DATA(h);
				if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
					return -EIO;
				return e->error < 0 ? e->error : -EIO;
			}
			case RTM_NEWSTATS:
				nl_stats(h, ops, arg);
				break;
			case RTM_NEWLINK:
				nl_link(h, false, ops, arg);
				break;
			default:
				break;
			}
		}
	}
}

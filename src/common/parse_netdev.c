/* SPDX-License-Identifier: MIT */
/* parse_netdev.c - /proc/net/dev.
 *
 *   Inter-|   Receive                                                |  Transmit
 *    face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
 *       lo: 1664039048 1566805    0    0    0     0          0         0 1664039048 ...
 *
 * The columns are taken from the second header line, never assumed.  The
 * interface name is everything (after leading blanks) up to the LAST ':' of
 * the line: old alias names contain ':' ("ibr10:30"), and kernels before
 * 2.6.x printed "%6s:%8lu", gluing long counters to the colon
 * ("eth0:68210035552"). */
#include <string.h>

#include "parse.h"

const char *const vms_net_field_names[VMS_NET_FIELDS] = {
	"rx_bytes", "rx_packets", "rx_errs", "rx_drop",
	"rx_fifo", "rx_frame", "rx_compressed", "rx_multicast",
	"tx_bytes", "tx_packets", "tx_errs", "tx_drop",
	"tx_fifo", "tx_colls", "tx_carrier", "tx_compressed",
};

static int cur_err(const struct vms_cur *c)
{
	return c->err == -ERANGE ? -ERANGE : -EINVAL;
}

/* Our index of "<dir>_<name>" (dir "rx" or "tx"), or -1. */
static int field_index(char dir, const char *name, size_t len)
{
	for (int i = 0; i < VMS_NET_FIELDS; i++) {
		const char *f = vms_net_field_names[i];
		if (f[0] == dir && strlen(f + 3) == len && memcmp(f + 3, name, len) == 0)
			return i;
	}
	return -1;
}

/* Map the names of one '|'-separated group of the second header line. */
static int header_group(struct vms_netdev_hdr *h, char dir, const char *p, const char *end,
			uint32_t *have)
{
	struct vms_cur g;
	const char *tok;
	size_t len;

	vms_cur_init(&g, p, (size_t)(end - p));
	for (;;) {
		vms_cur_skip_blank(&g);
		if (vms_cur_eof(&g))
			return 0;
		vms_cur_token(&g, &tok, &len);
		if (h->ncols == VMS_ARRAY_SIZE(h->map))
			return -EINVAL;
		int f = field_index(dir, tok, len);
		if (f >= 0) {
			if (*have & (1u << f))
				return -EINVAL; /* the same column twice */
			*have |= 1u << f;
		}
		h->map[h->ncols++] = (int8_t)f;
	}
}

int vms_netdev_header(struct vms_cur *c, struct vms_netdev_hdr *h)
{
	struct vms_cur l1, l2;
	struct vms_netdev_hdr nh = {.ncols = 0};
	uint32_t have = 0;
	int r;

	if (!vms_cur_line(c, &l1) || !vms_cur_line(c, &l2))
		return -EINVAL;
	/* "Inter-|   Receive  |  Transmit": a data line has no '|' */
	if (!memchr(l1.p, '|', vms_cur_left(&l1)))
		return -EINVAL;
	const char *b1 = memchr(l2.p, '|', vms_cur_left(&l2));
	if (!b1)
		return -EINVAL;
	const char *b2 = memchr(b1 + 1, '|', (size_t)(l2.end - (b1 + 1)));
	if (!b2 || memchr(b2 + 1, '|', (size_t)(l2.end - (b2 + 1))))
		return -EINVAL;
	r = header_group(&nh, 'r', b1 + 1, b2, &have);
	if (r == 0)
		r = header_group(&nh, 't', b2 + 1, l2.end, &have);
	if (r < 0)
		return r;
	if (nh.ncols == 0)
		return -EINVAL;
	*h = nh;
	return 0;
}

int vms_netdev_next(struct vms_cur *c, const struct vms_netdev_hdr *h, struct vms_net_line *out)
{
	struct vms_cur line;

	if (!vms_cur_line(c, &line))
		return 0;
	if (h->ncols == 0 || h->ncols > VMS_ARRAY_SIZE(h->map))
		return -EINVAL;
	vms_cur_skip_blank(&line);
	const char *colon = vms_cur_rfind(&line, ':');
	if (!colon || colon == line.p)
		return -EINVAL;
	for (const char *q = line.p; q < colon; q++)
		if (*q == ' ' || *q == '\t' || *q == '\0')
			return -EINVAL; /* "eth0: 1 2 3:" is not a name */
	out->name = line.p;
	out->name_len = (size_t)(colon - line.p);
	line.p = colon + 1;
	uint64_t v[VMS_ARRAY_SIZE(h->map)];
	unsigned n = vms_cur_u64_list(&line, v, VMS_ARRAY_SIZE(v));
	if (!vms_cur_ok(&line))
		return cur_err(&line);
	if (n != h->ncols)
		return -EINVAL;
	for (unsigned i = 0; i < VMS_NET_FIELDS; i++)
		out->v[i] = VMS_NONE;
	for (unsigned i = 0; i < n; i++)
		if (h->map[i] >= 0 && h->map[i] < VMS_NET_FIELDS)
			out->v[h->map[i]] = v[i];
	return 1;
}

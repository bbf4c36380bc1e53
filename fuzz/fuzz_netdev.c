/* SPDX-License-Identifier: MIT */
/* fuzz_netdev.c - vms_netdev_header() on the input, then vms_netdev_next()
 * over every following line.  When the input has no valid header, its
 * lines are read with the standard one, so that the line parser is
 * exercised either way. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char std_header[] =
	"Inter-|   Receive                                                |  Transmit\n"
	" face |bytes    packets errs drop fifo frame compressed multicast|"
	"bytes    packets errs drop fifo colls carrier compressed\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* an exact-size heap copy so ASan sees any read past the end */
	char *buf = malloc(size ? size : 1);
	memcpy(buf, data, size);
	struct vms_cur c;
	struct vms_netdev_hdr h;
	struct vms_net_line nl;
	int r;

	vms_cur_init(&c, buf, size);
	if (vms_netdev_header(&c, &h) < 0) {
		struct vms_cur hc;
		vms_cur_init(&hc, std_header, sizeof(std_header) - 1);
		if (vms_netdev_header(&hc, &h) < 0)
			abort();
		vms_cur_init(&c, buf, size);
	}
	if (h.ncols == 0 || h.ncols > VMS_ARRAY_SIZE(h.map))
		abort();
	for (unsigned i = 0; i < h.ncols; i++)
		if (h.map[i] < -1 || h.map[i] >= VMS_NET_FIELDS)
			abort();
	for (;;) {
		const char *before = c.p;
		r = vms_netdev_next(&c, &h, &nl);
		if (r == 0)
			break;
		if (c.p <= before || c.p > buf + size)
			abort(); /* every call consumes one line */
		if (r != 1 && r != -EINVAL && r != -ERANGE)
			abort();
		if (r < 0)
			continue;
		/* the name is inside this line, non-empty, blank-free, and ends
		 * at a ':' */
		if (nl.name < before || nl.name_len == 0 || nl.name + nl.name_len >= c.p ||
		    nl.name[nl.name_len] != ':')
			abort();
		for (size_t i = 0; i < nl.name_len; i++)
			if (nl.name[i] == ' ' || nl.name[i] == '\t' || nl.name[i] == '\n')
				abort();
	}
	if (c.p != buf + size)
		abort();
	free(buf);
	return 0;
}

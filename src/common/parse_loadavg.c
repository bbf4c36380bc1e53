/* SPDX-License-Identifier: MIT */
#include "parse.h"

int vms_parse_loadavg(const char *buf, size_t len, struct vms_loadavg *out)
{
	struct vms_cur c, line;
	struct vms_loadavg la;

	vms_cur_init(&c, buf, len);
	if (!vms_cur_line(&c, &line))
		return -EINVAL;
	for (int i = 0; i < 3; i++)
		la.load[i] = vms_cur_fixed(&line, 2);
	la.running = vms_cur_u64_sep(&line, '/');
	la.total = vms_cur_u64(&line);
	la.last_pid = vms_cur_u64(&line);
	if (!vms_cur_ok(&line) || !vms_cur_rest_blank(&line))
		return -EINVAL;
	/* running is a subset of all threads: more is not a kernel's file */
	if (la.running > la.total)
		return -EINVAL;
	*out = la;
	return 0;
}

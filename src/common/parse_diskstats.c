/* SPDX-License-Identifier: MIT */
/* parse_diskstats.c - /proc/diskstats, one line at a time.
 *
 * "%4d %7d %s " then the statistics: 11 numbers (2.6), 15 (4.18+, discards)
 * or 17 (5.5+, flushes); 2.5/2.6.0-2.6.24 partition lines have only 4
 * (reads, sectors read, writes, sectors written).  Any other count is a
 * damaged line: in particular a line cut short is never read as if the
 * missing counters were zero. */
#include <string.h>

#include "parse.h"

const char *const vms_disk_field_names[VMS_DISK_FIELDS] = {
	"rd_ios", "rd_merges", "rd_sectors", "rd_ticks",
	"wr_ios", "wr_merges", "wr_sectors", "wr_ticks",
	"in_flight", "io_ticks", "time_in_queue",
	"dc_ios", "dc_merges", "dc_sectors", "dc_ticks",
	"fl_ios", "fl_ticks",
};

static int cur_err(const struct vms_cur *c)
{
	return c->err == -ERANGE ? -ERANGE : -EINVAL;
}

int vms_diskstats_next(struct vms_cur *c, struct vms_disk_line *out)
{
	struct vms_cur line;
	uint64_t major, minor;
	unsigned n;

	if (!vms_cur_line(c, &line))
		return 0;
	major = vms_cur_u64(&line);
	minor = vms_cur_u64(&line);
	if (!vms_cur_token(&line, &out->name, &out->name_len) || !vms_cur_ok(&line))
		return cur_err(&line);
	if (major > UINT32_MAX || minor > UINT32_MAX)
		return -ERANGE;
	if (memchr(out->name, '\0', out->name_len))
		return -EINVAL; /* not a kernel name; would end a column name early */
	out->major = (uint32_t)major;
	out->minor = (uint32_t)minor;
	n = vms_cur_u64_list(&line, out->v, VMS_DISK_FIELDS);
	if (!vms_cur_ok(&line))
		return cur_err(&line);
	switch (n) {
	case 4:
		/* rd_ios rd_sectors wr_ios wr_sectors -> 0 2 4 6 */
		out->v[6] = out->v[3];
		out->v[4] = out->v[2];
		out->v[2] = out->v[1];
		out->v[1] = out->v[3] = out->v[5] = VMS_NONE;
		for (unsigned i = 7; i < VMS_DISK_FIELDS; i++)
			out->v[i] = VMS_NONE;
		break;
	case 11:
	case 15:
	case 17:
		for (unsigned i = n; i < VMS_DISK_FIELDS; i++)
			out->v[i] = VMS_NONE;
		break;
	default:
		return -EINVAL;
	}
	out->nfields = n;
	return 1;
}

/* SPDX-License-Identifier: MIT */
#include "sink.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const struct vms_sink_ops *vms_sink_for_format(int format)
{
	switch (format) {
	case VMS_FORMAT_CSV:
		return &vms_sink_csv;
	case VMS_FORMAT_BIN:
		return &vms_sink_bin;
	default:
		return NULL;
	}
}

/* ---- which frames reached the output --------------------------------------- */

/* Retire the frames whose records end at or before `upto`. */
static void ledger_retire(struct vms_ledger *lg, uint64_t upto)
{
	while (lg->n && lg->end[lg->head] <= upto) {
		lg->done_seq = lg->seq[lg->head];
		lg->head = (lg->head + 1) % VMS_LEDGER_CAP;
		lg->n--;
	}
}

bool vms_ledger_room(struct vms_ledger *lg, uint64_t committed)
{
	ledger_retire(lg, committed);
	return lg->n < VMS_LEDGER_CAP;
}

void vms_ledger_add(struct vms_ledger *lg, uint64_t end, uint64_t seq)
{
	if (lg->n == VMS_LEDGER_CAP) {
		/* vms_ledger_room() said no: cannot happen; keep the newest */
		lg->done_seq = lg->seq[lg->head];
		lg->head = (lg->head + 1) % VMS_LEDGER_CAP;
		lg->n--;
	}
	uint32_t i = (lg->head + lg->n) % VMS_LEDGER_CAP;
	lg->end[i] = end;
	lg->seq[i] = seq;
	lg->n++;
}

int vms_sink_close_out(struct vms_sink *s, struct vms_out *o)
{
	struct vms_ledger *lg = &s->ledger;
	if (!o->buf)
		return 0;
	/* the size of the file after the close says which records are whole
	 * in it (a failed close truncates the one it cut); the path may
	 * already name another file (rotation), the descriptor does not */
	int dfd = o->is_reg ? fcntl(o->fd, F_DUPFD_CLOEXEC, 0) : -1;
	int r = vms_out_close(o);
	if (r < 0) {
		struct stat st;
		if (dfd >= 0 && fstat(dfd, &st) == 0)
			ledger_retire(lg, (uint64_t)st.st_size);
		/* the frames still noted did not make it */
		if (lg->n && s->out_seq > lg->done_seq)
			s->out_seq = lg->done_seq;
	}
	if (dfd >= 0)
		close(dfd);
	lg->head = lg->n = 0;
	lg->done_seq = s->out_seq;
	return r;
}

void vms_sink_adopt_out(struct vms_out *o, struct vms_out *n)
{
	if (n->is_reg) {
		off_t end = lseek(n->fd, 0, SEEK_END);
		n->written = n->committed = end > 0 ? (uint64_t)end : 0;
	}
	*o = *n;
	memset(n, 0, sizeof(*n));
	n->fd = -1;
}

int vms_sink_reopen_out(struct vms_sink *s, struct vms_out *o, bool reopenable, const char *path, unsigned how,
			size_t bufsize)
{
	struct vms_out n;
	s->close_err = 0;
	if (!reopenable) {
		(void)vms_out_flush(o); /* never blocks the loop */
		return 1;
	}
	int r = vms_out_open(&n, path, vms_sink_out_how(s, how | VMS_OUT_APPEND), bufsize);
	if (r < 0)
		return r; /* the old file goes on */
	s->close_err = vms_sink_close_out(s, o);
	vms_sink_adopt_out(o, &n);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/* sink_bin.c - the binary stream (vmsampler/format.h, vmsampler-format(5)).
 *
 *   open     create/truncate the output; the file header goes first
 *   begin    the HOST record (the host's identity, hostid.h) and a SCHEMA
 *            record; the next DATA record is a keyframe
 *   write    one DATA record: deltas against the previous frame of the
 *            generation, a keyframe at least every VMS_BIN_KEY_EVERY
 *            records; encoded straight into the output buffer (no
 *            allocation, no copy)
 *   event    one EVENT record
 *   reopen   (SIGHUP) append to the path: a new file gets a file header;
 *            either way the loop's next begin() writes a SCHEMA and a
 *            keyframe, so the part after the reopen decodes on its own;
 *            the old file is closed only once the new one is open
 * Records are whole or absent: struct vms_out writes record boundaries
 * only, and truncates a record cut by a write error at close. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "binfmt.h"
#include "hostid.h"
#include "sink.h"

#define VMS_BIN_KEY_EVERY 64 /* DATA records per keyframe, at most */
#define BIN_BUFSIZE (1 << 16)

struct bin {
	struct vms_out out;
	uint64_t *prev;      /* delta base: values of the previous frame */
	uint32_t prev_cap;
	uint32_t ncols;      /* columns of the generation begun */
	uint32_t since_key;  /* DATA records since the last keyframe */
	bool need_key;
	bool begun;
};

static int64_t now_real(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * (int64_t)VMS_NSEC_PER_SEC + ts.tv_nsec;
}

/* A file header if the file is new (or empty). */
static int put_file_header(struct bin *b)
{
	if (b->out.written > 0 || b->out.len > 0)
		return 0;
	uint8_t *p = (uint8_t *)vms_out_reserve(&b->out, VMS_FMT_HEADER_SIZE);
	if (!p)
		return -ENOBUFS; /* cannot happen: the buffer is empty */
	vms_out_advance(&b->out, vms_bin_header_enc(p, now_real()));
	vms_out_end_record(&b->out);
	return 0;
}

static int bin_open(struct vms_sink *s)
{
	struct bin *b = s->priv;
	int r = vms_out_open(&b->out, vms_sink_target(s), vms_sink_out_how(s, VMS_OUT_BIN), BIN_BUFSIZE);
	if (r < 0)
		return r;
	return put_file_header(b);
}

static int bin_begin(struct vms_sink *s, const struct vms_schema *sch)
{
	struct bin *b = s->priv;
	/* the HOST record, then the SCHEMA, as one piece */
	size_t hrec = sch->host ? vms_bin_host_size(sch->host) : 0;
	size_t srec = hrec + vms_bin_schema_size(sch);
	size_t dmax = vms_bin_data_max(sch->ncols);
	int r;

	if (!b->out.buf)
		return -EBADF; /* closed */
	if (sch->ncols > b->prev_cap) {
		uint64_t *np = realloc(b->prev, sch->ncols * sizeof(*np));
		if (!np)
			return -ENOMEM;
		b->prev = np;
		b->prev_cap = sch->ncols;
	}
	/* room for the SCHEMA record and then any DATA or EVENT record */
	size_t need = srec > dmax ? srec : dmax;
	if (need < VMS_BIN_EVENT_MAX)
		need = VMS_BIN_EVENT_MAX;
	r = vms_out_ensure(&b->out, need + dmax);
	if (r < 0)
		return r;
	uint8_t *p = (uint8_t *)vms_out_reserve(&b->out, srec);
	if (!p) {
		r = vms_out_flush(&b->out);
		if (r < 0 && r != -EAGAIN)
			return r;
		p = (uint8_t *)vms_out_reserve(&b->out, srec);
		if (!p)
			return -EAGAIN; /* nothing appended: the loop retries */
	}
	if (hrec) {
		vms_out_advance(&b->out, vms_bin_host_enc(p, sch->host));
		vms_out_end_record(&b->out);
	}
	vms_out_advance(&b->out, vms_bin_schema_enc(p + hrec, sch));
	vms_out_end_record(&b->out);
	b->ncols = sch->ncols;
	b->need_key = true;
	b->begun = true;
	return 0;
}

static int bin_write(struct vms_sink *s, const struct vms_schema *sch, const struct vms_frame *f)
{
	struct bin *b = s->priv;
	(void)sch;
	if (VMS_UNLIKELY(!b->begun || f->ncols != b->ncols || !b->out.buf))
		return -EINVAL; /* a frame of a generation that was not begun */
	if (!vms_ledger_room(&s->ledger, b->out.committed))
		return -EAGAIN;
	uint8_t *p = (uint8_t *)vms_out_reserve(&b->out, vms_bin_data_max(f->ncols));
	if (!p)
		return -EAGAIN;
	bool key = b->need_key || b->since_key >= VMS_BIN_KEY_EVERY - 1;
	vms_out_advance(&b->out, vms_bin_data_enc_meta(p, f, vms_sink_frame_flags(s, f),
						       vms_sink_lost_frames(s, f), b->prev, key, &key));
	vms_out_end_record(&b->out);
	vms_ledger_add(&s->ledger, b->out.written + b->out.len, f->seq);
	b->need_key = false;
	b->since_key = key ? 0 : b->since_key + 1;
	return 0;
}

static int bin_event(struct vms_sink *s, const struct vms_event *ev)
{
	struct bin *b = s->priv;
	if (!b->out.buf)
		return -EBADF;
	uint8_t *p = (uint8_t *)vms_out_reserve(&b->out, VMS_BIN_EVENT_MAX);
	if (!p)
		return -EAGAIN;
	vms_out_advance(&b->out, vms_bin_event_enc(p, ev));
	vms_out_end_record(&b->out);
	return 0;
}

static int bin_flush(struct vms_sink *s)
{
	struct bin *b = s->priv;
	return vms_out_flush(&b->out);
}

static int bin_reopen(struct vms_sink *s)
{
	struct bin *b = s->priv;
	bool pipe = strcmp(s->path, "-") == 0 || (b->out.buf && !b->out.is_reg); /* stdout, a pipe */
	int r = vms_sink_reopen_out(s, &b->out, !pipe, vms_sink_target(s), VMS_OUT_BIN, BIN_BUFSIZE);
	if (r != 0)
		return r;
	b->begun = false; /* the loop begins again: SCHEMA + keyframe */
	return put_file_header(b);
}

static int bin_close(struct vms_sink *s)
{
	struct bin *b = s->priv;
	int r = vms_sink_close_out(s, &b->out);
	free(b->prev);
	b->prev = NULL;
	return r;
}

static int bin_pollfd(struct vms_sink *s)
{
	struct bin *b = s->priv;
	return vms_out_pending(&b->out) ? b->out.fd : -1;
}

static uint64_t bin_bytes(struct vms_sink *s)
{
	struct bin *b = s->priv;
	return b->out.written + b->out.len;
}

VMS_SINK_OPS(bin, .event = bin_event);

/* SPDX-License-Identifier: MIT */
/* output.c - the output supervisor (loop.h): after the tick, each sink
 * takes the frames it has not written from the ring, and the events
 * before them, without blocking; it starts a new file when its rotation
 * says so (rotate.h, and the sink's own newgen_file: sink.h), reopens on
 * SIGHUP, and at exit waits for every frame to be out. */
#include "loop_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

/* ---- events ------------------------------------------------------------ */

/* An event for the sinks (a queue they take from after the tick) and for
 * the shared ring's readers (its event area).  No allocation. */
void vms_loop_event(struct vms_loop *l, uint32_t type, const char *subject, const char *detail)
{
	if (l->ring.events) {
		struct vms_ring_event re = {
			.type = type,
			.gen = l->schema ? l->schema->gen : 0,
			.before_seq = vms_loop_next_seq(l),
			.t_mono_ns = vms_clock_mono(&l->clock),
			.t_real_ns = vms_clock_real(&l->clock),
		};
		snprintf(re.subject, sizeof(re.subject), "%s", subject ? subject : "");
		snprintf(re.detail, sizeof(re.detail), "%s", detail ? detail : "");
		vms_ring_event_put(&l->ring, &re);
	}
	uint64_t oldest = l->ev_next;
	for (unsigned i = 0; i < l->out.nsink; i++)
		if (!l->out.sink[i].failed && l->out.sink[i].next_event < oldest)
			oldest = l->out.sink[i].next_event;
	if (l->ev_next - oldest >= VMS_EVQ) {
		l->ev_dropped++;
		return;
	}
	struct vms_event *e = &l->ev[l->ev_next % VMS_EVQ];
	memset(e, 0, sizeof(*e));
	e->type = type;
	e->gen = l->schema ? l->schema->gen : 0;
	e->before_seq = vms_loop_next_seq(l);
	e->t_mono_ns = vms_clock_mono(&l->clock);
	e->t_real_ns = vms_clock_real(&l->clock);
	snprintf(e->subject, sizeof(e->subject), "%s", subject ? subject : "");
	snprintf(e->detail, sizeof(e->detail), "%s", detail ? detail : "");
	l->ev_next++;
}

static void deliver_events(struct vms_loop *l, struct vms_sink *s, uint64_t upto_seq)
{
	while (s->next_event < l->ev_next) {
		if (l->ev_next - s->next_event > VMS_EVQ) {
			s->next_event = l->ev_next - VMS_EVQ; /* overwritten ones are gone */
			continue;
		}
		const struct vms_event *e = &l->ev[s->next_event % VMS_EVQ];
		if (e->before_seq > upto_seq)
			break;
		if (s->ops->event && s->ops->event(s, e) == -EAGAIN)
			break;
		s->next_event++;
	}
}

/* ---- the sinks ------------------------------------------------------------ */

uint64_t vms_output_oldest(const struct vms_loop *l)
{
	uint64_t nslots = (uint64_t)l->ring.mask + 1;
	return l->ring.next_seq > nslots ? l->ring.next_seq - nslots : 1;
}

/* A sink whose next frame is about to be overwritten skips it: it is lost
 * to that output, which counts it on the next frame it writes (the frame
 * in the ring is everyone's and does not carry it). */
void vms_output_overrun(struct vms_loop *l)
{
	uint64_t nslots = (uint64_t)l->ring.mask + 1;
	for (unsigned i = 0; i < l->out.nsink; i++) {
		struct vms_sink *s = &l->out.sink[i];
		if (s->next_seq + nslots <= l->ring.next_seq) {
			uint64_t to = l->ring.next_seq - nslots + 1;
			s->lost += to - s->next_seq;
			s->next_seq = to;
		}
	}
}

static void sink_error(struct vms_loop *l, struct vms_sink *s, int err)
{
	if (err == -EPIPE && strcmp(s->path, "-") == 0) {
		/* the reader of our stdout went away (| head): stop quietly */
		l->stop = true;
		s->failed = true;
		return;
	}
	if (s->last_err != err)
		vms_err("output %s: %s; frames wait in the ring (%u slots) and are counted as lost when it is full",
			s->path, strerror(-err), l->ring.mask + 1);
	s->last_err = err;
}

/* A sink went on in a new file (SIGHUP, rotation).  What the old file
 * could not take (a full disk) is written again to the new one from the
 * ring, as far as the ring still holds it, and the rest is counted on the
 * first frame the new file gets. */
static void after_reopen(struct vms_loop *l, struct vms_sink *s, const char *what)
{
	if (s->close_err) {
		vms_err("output %s: the file before %s: %s; its frames that did not reach it go to the new file or are counted as lost",
			s->path, what, strerror(-s->close_err));
		s->close_err = 0;
	}
	s->last_err = 0; /* the new file's errors are its own */
	/* frames handed to the old file that it did not keep, as far as the
	 * ring (and the generations kept) still has them */
	uint64_t to = s->out_seq + 1, oldest = vms_output_oldest(l);
	if (to < oldest)
		to = oldest;
	while (to < s->next_seq && !vms_gen_find(l, vms_ring_get(&l->ring, to)->gen))
		to++;
	if (to < s->next_seq)
		s->next_seq = to;
	s->gen = 0; /* next frame begins a generation in the new file */
	s->file_frames = 0;
}

/* Rotation, before frame f (rotate.h): the next file is opened, then the
 * old one closed; 0, or -errno and the sink goes on in the old file. */
static int rotate_sink(struct vms_loop *l, struct vms_sink *s, const struct vms_frame *f)
{
	struct vms_rotate *rot = &l->out.rot;
	uint64_t frames = s->file_frames;
	char *prev = vms_rotate_advance(rot, f->t_real_ns);
	int r = prev ? 0 : -ENOMEM;
	if (prev) {
		s->file = rot->cur;
		r = s->ops->reopen(s);
		if (r > 0)
			r = -EINVAL; /* cannot happen: rotation is for files */
	}
	if (r < 0) {
		if (prev)
			vms_rotate_undo(rot, prev);
		s->file = rot->cur;
		l->out.rot_hold = f->seq + 64;
		vms_err("output %s: cannot start a new file: %s; writing on to %s (trying again in 64 frames)",
			s->path, strerror(-r), rot->cur);
		return r;
	}
	vms_info("output %s: %s closed after %llu frames, continuing in %s", s->path, prev,
		 (unsigned long long)frames, rot->cur);
	after_reopen(l, s, "rotation");
	vms_rotate_closed(rot, prev, vms_clock_real(&l->clock));
	return 0;
}

/* Does frame f start a new file?  Not the first frame of a file, not
 * while the output fails (a full disk: a new file would not take more and
 * the old one is where the frames wait); a new generation does when the
 * sink says so (its newgen_file: wide CSV, whose header is fixed). */
static bool rotation_due(const struct vms_loop *l, struct vms_sink *s, const struct vms_frame *f)
{
	const struct vms_rotate *rot = &l->out.rot;
	if (!rot->on || !s->file_frames || f->seq < l->out.rot_hold || s->last_err)
		return false;
	if (s->gen && f->gen != s->gen && s->ops->newgen_file && s->ops->newgen_file(s))
		return true;
	return vms_rotate_due(rot, f->t_real_ns, s->ops->bytes(s));
}

/* Hand frame f (of generation sch) to sink s: 0, or -errno (-EAGAIN: no
 * room yet). */
static int write_frame(struct vms_loop *l, struct vms_sink *s, const struct vms_schema *sch,
		       const struct vms_frame *f)
{
	if (f->gen != s->gen) {
		int r = s->ops->begin(s, sch);
		if (r < 0)
			return r;
		s->gen = f->gen;
	}
	deliver_events(l, s, f->seq);
	/* the frames this output misses before f (begin() may have dropped
	 * some with a file it closed) */
	s->gap = f->seq > s->out_seq ? f->seq - s->out_seq - 1 : 0;
	int r = s->ops->write(s, sch, f);
	if (r == -EAGAIN) {
		r = s->ops->flush(s);
		if (r < 0)
			return r;
		r = s->ops->write(s, sch, f);
		/* everything flushed and still no room: the frame can never fit
		 * (a sink's bug), an error, not a wait that ends the run with
		 * frames silently unwritten */
		if (VMS_UNLIKELY(r == -EAGAIN))
			r = -EMSGSIZE;
	}
	if (r < 0)
		return r;
	s->out_seq = f->seq;
	s->gap = 0;
	s->next_seq++;
	s->file_frames++;
	return 0;
}

/* Hand sink s the frames up to last, as far as its output takes them now.
 * It stops only on an error or with bytes still waiting in the sink's
 * buffer (its pollfd then says when to go on): the flush after a full
 * buffer may empty it (the reader read in the meantime), and a stop
 * there left frames in the ring with nothing to wait for, which
 * vms_output_finish() took for "all out" (lost_frames' SIGTERM test under
 * load: frames 105 to 151 of 151 never written). */
static void drain_sink(struct vms_loop *l, struct vms_sink *s, uint64_t last)
{
	int r = 0;
again:
	while (s->next_seq <= last) {
		const struct vms_frame *f = vms_ring_get(&l->ring, s->next_seq);
		if (!f) {
			uint64_t to = vms_output_oldest(l); /* overwritten: lost */
			s->lost += to - s->next_seq;
			s->next_seq = to;
			continue;
		}
		const struct vms_schema *sch = vms_gen_find(l, f->gen);
		if (VMS_UNLIKELY(!sch)) {
			s->next_seq++; /* cannot happen: vms_gen_prune() keeps it */
			continue;
		}
		if (VMS_UNLIKELY(rotation_due(l, s, f)) && rotate_sink(l, s, f) == 0)
			continue; /* from s->next_seq again, into the new file */
		r = write_frame(l, s, sch, f);
		if (r < 0)
			break;
	}
	if (r == 0 || r == -EAGAIN)
		r = s->ops->flush(s);
	/* all out and frames left: room for them (each pass writes a frame
	 * or ends in -EAGAIN with the buffer not empty, or in an error) */
	if (r == 0 && s->next_seq <= last)
		goto again;
	if (r == 0 && s->last_err) {
		vms_info("output %s: writing again", s->path);
		s->last_err = 0;
	}
	if (r < 0 && r != -EAGAIN)
		sink_error(l, s, r);
}

void vms_loop_drain(struct vms_loop *l)
{
	uint64_t last = vms_ring_last(&l->ring);
	for (unsigned i = 0; i < l->out.nsink; i++)
		if (!l->out.sink[i].failed)
			drain_sink(l, &l->out.sink[i], last);
	vms_gen_prune(l);
}

unsigned vms_output_pollfds(struct vms_loop *l, struct pollfd *fds)
{
	for (unsigned i = 0; i < l->out.nsink; i++) {
		struct vms_sink *s = &l->out.sink[i];
		int fd = (!s->failed && s->ops->pollfd) ? s->ops->pollfd(s) : -1;
		fds[i] = (struct pollfd){.fd = fd, .events = POLLOUT};
	}
	return l->out.nsink;
}

/* SIGHUP.  The sink opens its path anew (with rotation: the name of the
 * file being written) before it lets the old file go. */
void vms_output_reopen(struct vms_loop *l)
{
	l->reopen = false;
	for (unsigned i = 0; i < l->out.nsink; i++) {
		struct vms_sink *s = &l->out.sink[i];
		if (!s->ops->reopen || s->failed)
			continue;
		int r = s->ops->reopen(s);
		if (r < 0) {
			vms_err("output %s: cannot reopen it: %s; writing on to the file already open",
				vms_sink_target(s), strerror(-r));
			continue;
		}
		if (r > 0)
			continue; /* nothing to reopen */
		after_reopen(l, s, "SIGHUP");
		vms_loop_event(l, VMS_EV_OUTPUT_REOPENED, vms_sink_target(s), "SIGHUP");
	}
}

/* At exit: every frame taken goes out, also those still in the ring
 * behind a full output buffer (a slow pipe): wait for the outputs, unless
 * one fails or the hooks' stop fd becomes readable (another SIGINT or
 * SIGTERM). */
void vms_output_finish(struct vms_loop *l)
{
	int stopfd = l->hooks.stop_fd ? l->hooks.stop_fd(l->hooks.ctx) : -1;
	for (;;) {
		vms_loop_drain(l);
		struct pollfd p[17];
		unsigned n = 0;
		if (stopfd >= 0)
			p[n++] = (struct pollfd){.fd = stopfd, .events = POLLIN};
		uint64_t last = vms_ring_last(&l->ring);
		for (unsigned i = 0; i < l->out.nsink && n < VMS_ARRAY_SIZE(p); i++) {
			struct vms_sink *s = &l->out.sink[i];
			if (s->failed || s->last_err || s->next_seq > last)
				continue;
			int fd = s->ops->pollfd ? s->ops->pollfd(s) : -1;
			if (fd >= 0)
				p[n++] = (struct pollfd){.fd = fd, .events = POLLOUT};
		}
		if (n == (stopfd >= 0))
			return; /* all out, or nothing to wait for */
		if (poll(p, n, -1) < 0 && errno != EINTR)
			return;
		if (stopfd >= 0 && (p[0].revents & POLLIN))
			return;
	}
}

int vms_output_open(struct vms_loop *l)
{
	struct vms_output *o = &l->out;
	const struct vms_sink_ops *ops = vms_sink_for_format(vms_config_format(l->conf));
	o->sink = calloc(1, sizeof(*o->sink));
	if (!o->sink || !ops)
		return -ENOMEM;
	struct vms_sink *s = &o->sink[0];
	s->ops = ops;
	s->force = l->conf->force;
	s->csv_layout = l->conf->csv_layout;
	s->path = l->conf->output ? l->conf->output : "-";
	s->next_seq = 1;
	char why[512];
	int r = vms_rotate_init(&o->rot, l->conf, vms_clock_real(&l->clock), why, sizeof(why));
	if (r < 0) {
		vms_err("%s", why);
		return r; /* main's exit status by it (a missing directory: 2) */
	}
	s->file = o->rot.on ? o->rot.cur : NULL;
	s->priv = calloc(1, ops->priv_size ? ops->priv_size : 1);
	if (!s->priv)
		return -ENOMEM;
	r = ops->open(s);
	if (r < 0) {
		if (!(r == -EINTR && vms_out_stop)) /* stopped while a FIFO waited: quiet */
			vms_err("cannot open output %s: %s", vms_sink_target(s), vms_out_strerror(r));
		free(s->priv);
		s->priv = NULL;
		return r;
	}
	o->nsink = 1;
	if (o->rot.on)
		vms_info("output %s: rotated%s%s, writing %s", s->path, o->rot.keep.ns || o->rot.keep.bytes ? ", kept" : "",
			 o->rot.zstd ? ", compressed" : "", o->rot.cur);
	vms_rotate_start(&o->rot, vms_clock_real(&l->clock));
	return 0;
}

int vms_output_close(struct vms_loop *l)
{
	struct vms_output *o = &l->out;
	int first = 0;
	for (unsigned i = 0; i < o->nsink; i++) {
		struct vms_sink *s = &o->sink[i];
		int r = s->ops->close(s);
		if (r < 0 && !(r == -EPIPE && strcmp(s->path, "-") == 0)) {
			vms_err("output %s: %s", s->path, strerror(-r));
			if (!first)
				first = r;
		}
		free(s->priv);
	}
	free(o->sink);
	if (o->rot.on)
		vms_rotate_fini(&o->rot, vms_clock_real(&l->clock));
	return first;
}

/* SPDX-License-Identifier: MIT */
/* loop.c - the conductor (loop.h): the run waits for the next absolute
 * deadline, takes the tick's frame from the source host into the ring,
 * and hands it to the output supervisor; set-up and tear-down in order. */
#include "loop_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

#define RESCHEMA_ATTEMPTS 3
#define CLOCKSTEP_NS (10 * VMS_NSEC_PER_MSEC)

/* The source host's events go to the loop's queue. */
static void source_event(void *ctx, uint32_t type, const char *subject, const char *detail)
{
	vms_loop_event(ctx, type, subject, detail);
}

/* ---- the tick ------------------------------------------------------------ */

/* The frame's flags: the sources', a gap, and a step of the real clock
 * against the monotonic one (an event too). */
static uint32_t frame_flags(struct vms_loop *l, const struct vms_tick_ctx *t, uint64_t missed)
{
	uint32_t flags = l->pending_flags | t->flags;
	l->pending_flags = 0;
	if (t->parse_errors || vms_srchost_partial(&l->sh))
		flags |= VMS_FRAME_PARTIAL;
	if (missed)
		flags |= VMS_FRAME_GAP;
	int64_t off = t->t_real_ns - (int64_t)t->t_mono_ns;
	if (l->have_offset) {
		int64_t d = off - l->last_offset_ns;
		if (d > (int64_t)CLOCKSTEP_NS || d < -(int64_t)CLOCKSTEP_NS) {
			flags |= VMS_FRAME_CLOCKSTEP;
			char det[64];
			snprintf(det, sizeof(det), "%+lld ns", (long long)d);
			vms_loop_event(l, VMS_EV_CLOCK_STEPPED, "realtime", det);
		}
	}
	l->last_offset_ns = off;
	l->have_offset = true;
	return flags;
}

int vms_loop_take(struct vms_loop *l, const struct vms_tickinfo *ti, int64_t t_real_ns, bool final)
{
	struct vms_tick_ctx t = {
		.t_mono_ns = ti->deadline_ns + ti->late_ns,
		.t_real_ns = t_real_ns,
		.idx = ti->idx,
		.vms = &l->sh.vms,
	};
	l->tick_idx = ti->idx;
	vms_output_overrun(l);
	struct vms_frame *f = vms_ring_begin(&l->ring);
	if (vms_srchost_sample(&l->sh, f->v, &t, final) == VMS_RESCHEMA)
		return VMS_RESCHEMA; /* nothing committed: the loop re-declares */
	l->parse_errors += t.parse_errors;
	f->v[l->self_base] = l->parse_errors;
	for (unsigned i = 0; i < l->hooks.ncounter; i++)
		f->v[l->self_base + 1 + i] = *l->hooks.counter[i].v;

	f->t_mono_ns = t.t_mono_ns;
	f->t_real_ns = t.t_real_ns;
	f->gen = l->schema->gen;
	f->ncols = l->schema->ncols;
	f->reserved = 0;
	f->late_ns = ti->late_ns;
	uint64_t missed = ti->missed + l->pending_missed;
	f->missed_ticks = missed > UINT32_MAX ? UINT32_MAX : (uint32_t)missed;
	f->lost_frames = 0; /* each output counts its own (sink.h) */
	l->pending_missed = 0;
	f->flags = frame_flags(l, &t, missed);

	uint64_t cpu = vms_clock_cpu(&l->clock);
	f->self_cpu_ns = cpu - l->last_cpu_ns;
	l->last_cpu_ns = cpu;
	vms_ring_commit(&l->ring);
	l->frames++;
	return 0;
}

void vms_loop_tick(struct vms_loop *l, const struct vms_tickinfo *ti)
{
	int64_t t_real_ns = vms_clock_real(&l->clock);
	for (unsigned attempt = 1;; attempt++) {
		if (vms_loop_take(l, ti, t_real_ns, attempt == RESCHEMA_ATTEMPTS) == 0)
			break;
		/* between two attempts at this tick's frame, not in it */
		if (vms_loop_reschema(l) < 0)
			return;
	}
	vms_srchost_say(&l->sh);
}

/* ---- the run ------------------------------------------------------------- */

/* One wait for the next deadline and for every fd (main's, the sinks',
 * the sources'), and what comes of it; true: the tick is due. */
static int wait_once(struct vms_loop *l)
{
	const struct vms_loop_hooks *h = &l->hooks;
	struct pollfd fds[64];
	unsigned nh = h->pollfds ? h->pollfds(h->ctx, fds, VMS_ARRAY_SIZE(fds) / 2) : 0;
	unsigned ns = vms_output_pollfds(l, fds + nh);
	unsigned first_src = nh + ns;
	unsigned n = first_src + vms_srchost_pollfds(&l->sh, fds + first_src, VMS_ARRAY_SIZE(fds) - first_src);
	int r = l->clock.ops->wait(l->clock.ctx, vms_sched_next(&l->sched), fds, n);
	if (r < 0) {
		vms_err("wait: %s", strerror(-r));
		return r;
	}
	if (nh)
		h->ready(h->ctx, l, fds, nh);
	if (l->reopen)
		vms_output_reopen(l);
	for (unsigned i = nh; i < first_src; i++)
		if (fds[i].fd >= 0 && fds[i].revents)
			vms_loop_drain(l);
	if (n > first_src)
		vms_srchost_ready(&l->sh, fds + first_src);
	return r;
}

int vms_loop_run(struct vms_loop *l)
{
	const struct vms_config *c = l->conf;
	const struct vms_loop_hooks *h = &l->hooks;
	uint64_t start = vms_sched_first(vms_clock_mono(&l->clock), vms_clock_real(&l->clock), c->align_ns);

	vms_sched_init(&l->sched, start, c->interval_ns);
	while (!l->stop) {
		int r = wait_once(l);
		if (r < 0)
			return r;
		if (l->stop)
			break;
		struct vms_tickinfo ti;
		if (r == 1 && vms_sched_wake(&l->sched, vms_clock_mono(&l->clock), &ti)) {
			vms_loop_tick(l, &ti);
			vms_loop_drain(l);
			if (h->ticked)
				h->ticked(h->ctx, l);
			if (c->count && l->frames >= c->count)
				break;
		}
		vms_srchost_idle(&l->sh, vms_sched_next(&l->sched));
		vms_rotate_poll(&l->out.rot); /* a compression done, the next one */
	}
	if (h->stopping)
		h->stopping(h->ctx, l);
	vms_output_finish(l);
	return l->exit_code;
}

/* ---- set-up and tear-down ---------------------------------------------- */

/* Zero the loop except its event queue.  The queue is 256 slots of 272
 * bytes (~68 KiB, on main()'s stack); vms_loop_event() clears a slot before
 * writing it and only written slots [next_event, ev_next) are ever read, so
 * touching all of it at start and at exit only made it resident for
 * nothing (bench/README.md: peak RSS). */
_Static_assert(offsetof(struct vms_loop, ev_next) ==
		       offsetof(struct vms_loop, ev) + sizeof(((struct vms_loop *)0)->ev),
	       "ev_next must follow ev");
static void loop_zero(struct vms_loop *l)
{
	memset(l, 0, offsetof(struct vms_loop, ev));
	memset(&l->ev_next, 0, sizeof(*l) - offsetof(struct vms_loop, ev_next));
	l->proc_dirfd = -1;
	l->out.rot.dirfd = -1;
}

static int open_sources(struct vms_loop *l)
{
	return vms_srchost_open(&l->sh, l->conf, l->proc_dirfd, &l->clock, source_event, l);
}

static int started(struct vms_loop *l)
{
	return l->hooks.started ? l->hooks.started(l->hooks.ctx, l) : 0;
}

int vms_loop_init(struct vms_loop *l, const struct vms_config *conf, const struct vms_clock *clock,
		  const struct vms_loop_hooks *hooks)
{
	int r;
	loop_zero(l);
	l->conf = conf;
	if (hooks)
		l->hooks = *hooks;
	/* (another name for the same file is refused when the output is
	 * opened: it is then a ring) */
	if (conf->ring_path && conf->output && strcmp(conf->output, conf->ring_path) == 0) {
		vms_err("the output and the ring are both %s: they must be different files", conf->output);
		return -EINVAL;
	}
	if (clock) {
		l->clock = *clock;
	} else {
		r = vms_clock_real_open(&l->clock);
		if (r < 0) {
			vms_err("timerfd: %s", strerror(-r));
			return r;
		}
	}
	l->proc_dirfd = open(conf->proc_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (l->proc_dirfd < 0) {
		r = -errno;
		vms_err("cannot open proc root %s: %s", conf->proc_root, strerror(errno));
		return r;
	}
	vms_hostid_collect(&l->sh.host, l->proc_dirfd);
	/* the sources make the schema, the ring holds it; main's part (the
	 * control socket) after the ring, before the outputs */
	static int (*const open_step[])(struct vms_loop *) = {
		open_sources, vms_gen_open_ring, started, vms_output_open,
	};
	for (size_t i = 0; i < VMS_ARRAY_SIZE(open_step); i++) {
		r = open_step[i](l);
		if (r < 0)
			return r;
	}
	l->last_cpu_ns = vms_clock_cpu(&l->clock);
	return 0;
}

int vms_loop_fini(struct vms_loop *l)
{
	int first = vms_output_close(l);
	vms_srchost_close(&l->sh);
	vms_gen_fini(l);
	if (l->proc_dirfd >= 0)
		close(l->proc_dirfd);
	vms_clock_real_close(&l->clock);
	loop_zero(l);
	return first;
}

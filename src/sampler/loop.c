/* SPDX-License-Identifier: MIT */
#include "loop.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "binfmt.h"
#include "grow.h"
#include "log.h"

#define RESCHEMA_ATTEMPTS 3
#define BACKOFF_MAX 64             /* ticks */
#define CLOCKSTEP_NS (10 * VMS_NSEC_PER_MSEC)

/* ---- schema generations ------------------------------------------------ */

static struct vms_schema *live_find(struct vms_loop *l, uint32_t gen)
{
	for (unsigned i = 0; i < l->nlive; i++)
		if (l->live[i]->gen == gen)
			return l->live[i];
	return NULL;
}

static int live_add(struct vms_loop *l, struct vms_schema *s)
{
	struct vms_schema **n = vms_grow_array(l->live, &l->caplive, l->nlive + 1, sizeof(*n), 4);
	if (!n)
		return -ENOMEM;
	l->live = n;
	l->live[l->nlive++] = vms_schema_ref(s);
	return 0;
}

/* Drop generations no frame in the ring still needs. */
static void live_prune(struct vms_loop *l)
{
	uint32_t need = l->schema->gen;
	for (unsigned i = 0; i < l->nsink; i++) {
		const struct vms_frame *f = vms_ring_get(&l->ring, l->sink[i].next_seq);
		if (f && f->gen < need)
			need = f->gen;
	}
	unsigned k = 0;
	for (unsigned i = 0; i < l->nlive; i++) {
		if (l->live[i]->gen < need)
			vms_schema_unref(l->live[i]);
		else
			l->live[k++] = l->live[i];
	}
	l->nlive = k;
}

/* ---- events ------------------------------------------------------------ */

/* An event for the sinks (a queue they take from after the tick) and for
 * the shared ring's readers (its event area).  No allocation. */
void vms_loop_event(struct vms_loop *l, uint32_t type, const char *subject, const char *detail)
{
	if (l->ring.events) {
		struct vms_ring_event re = {
			.type = type,
			.gen = l->schema ? l->schema->gen : 0,
			.before_seq = l->ring.next_seq ? l->ring.next_seq : 1,
			.t_mono_ns = vms_clock_mono(&l->clock),
			.t_real_ns = vms_clock_real(&l->clock),
		};
		snprintf(re.subject, sizeof(re.subject), "%s", subject ? subject : "");
		snprintf(re.detail, sizeof(re.detail), "%s", detail ? detail : "");
		vms_ring_event_put(&l->ring, &re);
	}
	uint64_t oldest = l->ev_next;
	for (unsigned i = 0; i < l->nsink; i++)
		if (!l->sink[i].failed && l->sink[i].next_event < oldest)
			oldest = l->sink[i].next_event;
	if (l->ev_next - oldest >= VMS_EVQ) {
		l->ev_dropped++;
		return;
	}
	struct vms_event *e = &l->ev[l->ev_next % VMS_EVQ];
	memset(e, 0, sizeof(*e));
	e->type = type;
	e->gen = l->schema ? l->schema->gen : 0;
	e->before_seq = l->ring.next_seq ? l->ring.next_seq : 1;
	e->t_mono_ns = vms_clock_mono(&l->clock);
	e->t_real_ns = vms_clock_real(&l->clock);
	snprintf(e->subject, sizeof(e->subject), "%s", subject ? subject : "");
	snprintf(e->detail, sizeof(e->detail), "%s", detail ? detail : "");
	l->ev_next++;
}

void vms_source_event(struct vms_source *src, uint32_t type, const char *subject, const char *detail)
{
	vms_loop_event(src->loop, type, subject, detail);
}

/* ---- schema (re)building ------------------------------------------------ */

/* Copy into the empty ring nr the frames a sink (or, for a shared ring,
 * any reader) has not taken yet; seqs stay the same. */
static void carry_frames(struct vms_loop *l, struct vms_ring *nr)
{
	uint64_t from = l->ring.next_seq;
	if (l->ring.path)
		while (from > 1 && vms_ring_get(&l->ring, from - 1))
			from--;
	for (unsigned i = 0; i < l->nsink; i++)
		if (vms_ring_get(&l->ring, l->sink[i].next_seq) && l->sink[i].next_seq < from)
			from = l->sink[i].next_seq;
	nr->next_seq = from;
	for (uint64_t s = from; s < l->ring.next_seq; s++) {
		const struct vms_frame *f = vms_ring_get(&l->ring, s);
		memcpy(vms_ring_begin(nr), f, vms_frame_size(f->ncols));
		vms_ring_commit(nr);
	}
	nr->next_seq = l->ring.next_seq;
}

/* A ring whose slots hold sch's frames.  A file ring is replaced by a
 * larger file renamed over it (its readers reattach).  When that file
 * cannot be had (its file system is full: the new one is reserved whole
 * before it is used), sampling must not stop for it: the loop goes on
 * with a ring in its own memory and the file is marked closed, so that
 * its readers see the writer gone rather than wait (vmsampler-ring(5)). */
static int grow_ring(struct vms_loop *l, const struct vms_schema *sch)
{
	struct vms_ring nr;
	uint32_t cols = sch->ncols + sch->ncols / 2 + 64;
	int r = vms_ring_create_like(&nr, &l->ring, cols, vms_bin_head_size(sch));
	if (r == 0) {
		carry_frames(l, &nr);
		r = vms_ring_install(&l->ring, &nr); /* destroys nr if it fails */
		if (r == 0 || !l->ring.path)
			return r;
	}
	if (!l->ring.path)
		return r;
	vms_err("ring %s: cannot grow it for %u columns: %s; it is closed for its readers, sampling goes on without it",
		l->ring.path, sch->ncols, strerror(-r));
	r = vms_ring_create(&nr, l->ring.mask + 1, cols);
	if (r < 0)
		return r;
	carry_frames(l, &nr);
	return vms_ring_install(&l->ring, &nr); /* marks the file CLOSED */
}

/* A source's state changes are events in the stream at once (the event
 * queue is preallocated) and log lines after the tick (say_sources). */
static void source_failed(struct vms_loop *l, struct vms_source *src, int err, uint64_t idx)
{
	if (!src->failed) {
		char d[96];
		snprintf(d, sizeof(d), "%s", strerror(-err));
		vms_loop_event(l, VMS_EV_SOURCE_FAILED, src->ops->name, d);
		src->say = -1;
		src->backoff = 1;
	} else if (src->backoff < BACKOFF_MAX) {
		src->backoff *= 2;
	}
	src->failed = true;
	src->last_err = err;
	src->next_idx = idx + src->backoff;
}

static void source_ok(struct vms_loop *l, struct vms_source *src)
{
	if (!src->failed)
		return;
	vms_loop_event(l, VMS_EV_SOURCE_RECOVERED, src->ops->name, "");
	src->say = 1;
	src->failed = false;
	src->backoff = 0;
	src->last_err = 0;
}

static void say_sources(struct vms_loop *l)
{
	for (unsigned i = 0; i < l->nsrc; i++) {
		struct vms_source *src = &l->src[i];
		if (src->say < 0)
			vms_warn("source %s failed: %s (retrying with back-off)", src->ops->name,
				 strerror(-src->last_err));
		else if (src->say > 0)
			vms_info("source %s recovered", src->ops->name);
		src->say = 0;
	}
}

/* Ask every source to declare its columns; install a new generation if
 * they differ from the current one.  Between ticks: it allocates. */
static int rebuild_schema(struct vms_loop *l)
{
	struct vms_schema_builder b;
	struct vms_schema *s = NULL;
	int r;

	vms_schema_builder_init(&b);
	for (unsigned i = 0; i < l->nsrc; i++) {
		struct vms_source *src = &l->src[i];
		vms_schema_builder_source(&b, (uint16_t)i);
		src->base = b.ncols;
		if (src->ops) {
			r = src->ops->declare(src, &b);
			if (b.err && b.err != -ENOMEM) {
				/* a column it could not name (no name should do
				 * this: name.h): that source fails, not the others */
				r = b.err;
				b.err = 0;
			}
			if (r < 0 && b.err == 0) {
				/* the source declares nothing this generation; the
				 * tick retries the discovery with back-off */
				b.ncols = src->base;
				source_failed(l, src, r, l->tick_idx);
				src->declare_failed = true;
			} else if (r >= 0 && src->declare_failed) {
				src->declare_failed = false;
				source_ok(l, src);
			}
		}
		src->ncols = vms_schema_builder_count(&b);
	}
	vms_schema_builder_source(&b, (uint16_t)l->nsrc);
	l->self_base = b.ncols;
	vms_schema_addc(&b, &(struct vms_coldef){.kind = VMS_KIND_COUNTER, .unit = VMS_UNIT_COUNT, .wrap_bits = 64},
			VMS_G_VMS, NULL, NULL, "parse_errors");
	if (l->ctl_path) {
		vms_schema_addc(&b, &(struct vms_coldef){.kind = VMS_KIND_COUNTER, .unit = VMS_UNIT_COUNT, .wrap_bits = 64},
				VMS_G_VMS, NULL, NULL, "marks");
		vms_schema_addc(&b, &(struct vms_coldef){.kind = VMS_KIND_COUNTER, .unit = VMS_UNIT_COUNT, .wrap_bits = 64},
				VMS_G_VMS, NULL, NULL, "marks_refused");
	}
	uint32_t gen = l->schema ? l->schema->gen + 1 : 1;
	r = vms_schema_finish(&b, gen, vms_clock_real(&l->clock), &s);
	vms_schema_builder_free(&b);
	if (r < 0)
		return r;
	s->host = &l->host;
	if (l->schema && vms_schema_same_columns(l->schema, s)) {
		vms_schema_unref(s);
		return 0;
	}
	if (l->ring.hdr && !vms_ring_fits(&l->ring, s->ncols, vms_bin_head_size(s))) {
		r = grow_ring(l, s);
		if (r < 0) {
			vms_schema_unref(s);
			return r;
		}
	}
	r = live_add(l, s);
	if (r < 0) {
		vms_schema_unref(s);
		return r;
	}
	vms_schema_unref(l->schema);
	l->schema = s;
	if (l->ring.hdr)
		vms_bin_ring_publish(&l->ring, s);
	l->pending_flags |= VMS_FRAME_NEWGEN;
	if (gen > 1)
		vms_info("schema generation %u: %u columns", gen, s->ncols);
	return 0;
}

/* ---- the tick ------------------------------------------------------------ */

/* A source with no columns (all its entities filtered out) is still
 * sampled: that is how it notices an entity appearing. */
static bool source_due(const struct vms_source *src, uint64_t idx)
{
	if (!src->ops || src->declare_failed)
		return false;
	if (idx < src->next_idx)
		return false;
	return vms_cadence_due(idx, 0, src->every);
}

/* A sink whose next frame is about to be overwritten skips it: it is lost
 * to that output, which counts it on the next frame it writes (the frame
 * in the ring is everyone's and does not carry it). */
static void account_overrun(struct vms_loop *l)
{
	uint64_t nslots = (uint64_t)l->ring.mask + 1;
	for (unsigned i = 0; i < l->nsink; i++) {
		struct vms_sink *s = &l->sink[i];
		if (s->next_seq + nslots <= l->ring.next_seq) {
			uint64_t to = l->ring.next_seq - nslots + 1;
			s->lost += to - s->next_seq;
			s->next_seq = to;
		}
	}
}

int vms_loop_take(struct vms_loop *l, const struct vms_tickinfo *ti, int64_t t_real_ns, bool final)
{
	struct vms_tick_ctx t = {
		.t_mono_ns = ti->deadline_ns + ti->late_ns,
		.t_real_ns = t_real_ns,
		.idx = ti->idx,
		.vms = &l->vms,
	};
	l->tick_idx = ti->idx;
	account_overrun(l);
	struct vms_frame *f = vms_ring_begin(&l->ring);
	for (unsigned i = 0; i < l->nsrc; i++) {
		struct vms_source *src = &l->src[i];
		uint64_t *slots = f->v + src->base;
		if (src->declare_failed && !final && ti->idx >= src->next_idx)
			return VMS_RESCHEMA; /* retry its discovery first */
		if (!source_due(src, ti->idx)) {
			vms_slots_none(slots, src->ncols);
			continue;
		}
		int r = src->ops->sample(src, slots, &t);
		if (r == VMS_RESCHEMA && !final)
			return VMS_RESCHEMA; /* nothing committed: the loop re-declares */
		if (r == VMS_RESCHEMA) {
			/* still changing after re-declaring: missing this tick */
			vms_slots_none(slots, src->ncols);
		} else if (r < 0) {
			vms_slots_none(slots, src->ncols);
			source_failed(l, src, r, ti->idx);
		} else {
			source_ok(l, src);
		}
	}
	l->parse_errors += t.parse_errors;
	f->v[l->self_base] = l->parse_errors;
	if (l->ctl_path) {
		f->v[l->self_base + 1] = l->ctl.marks;
		f->v[l->self_base + 2] = l->ctl.refused;
	}

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

	uint32_t flags = l->pending_flags | t.flags;
	l->pending_flags = 0;
	if (t.parse_errors)
		flags |= VMS_FRAME_PARTIAL;
	for (unsigned i = 0; i < l->nsrc; i++)
		if (l->src[i].failed && l->src[i].ncols)
			flags |= VMS_FRAME_PARTIAL;
	if (missed)
		flags |= VMS_FRAME_GAP;
	int64_t off = t.t_real_ns - (int64_t)t.t_mono_ns;
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
	f->flags = flags;

	uint64_t cpu = vms_clock_cpu(&l->clock);
	f->self_cpu_ns = cpu - l->last_cpu_ns;
	l->last_cpu_ns = cpu;
	vms_ring_commit(&l->ring);
	l->frames++;
	return 0;
}

int vms_loop_reschema(struct vms_loop *l)
{
	int r = rebuild_schema(l);
	if (r < 0) {
		/* the sources have laid out their new columns and the ring has
		 * no room for them: no frame can be taken safely any more */
		vms_err("cannot rebuild the schema: %s; stopping", strerror(-r));
		l->stop = true;
		l->exit_code = r;
	}
	say_sources(l);
	return r;
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
	say_sources(l);
}

static void after_reopen(struct vms_loop *l, struct vms_sink *s, const char *what);

/* ---- sinks ---------------------------------------------------------------- */

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

/* The oldest frame still in the ring. */
static uint64_t ring_oldest(const struct vms_loop *l)
{
	uint64_t nslots = (uint64_t)l->ring.mask + 1;
	return l->ring.next_seq > nslots ? l->ring.next_seq - nslots : 1;
}

/* Rotation, before frame f (rotate.h): the next file is opened, then the
 * old one closed; 0, or -errno and the sink goes on in the old file. */
static int rotate_sink(struct vms_loop *l, struct vms_sink *s, const struct vms_frame *f)
{
	uint64_t frames = s->file_frames;
	char *prev = vms_rotate_advance(&l->rot, f->t_real_ns);
	int r = prev ? 0 : -ENOMEM;
	if (prev) {
		s->file = l->rot.cur;
		r = s->ops->reopen(s);
		if (r > 0)
			r = -EINVAL; /* cannot happen: rotation is for files */
	}
	if (r < 0) {
		if (prev)
			vms_rotate_undo(&l->rot, prev);
		s->file = l->rot.cur;
		l->rot_hold = f->seq + 64;
		vms_err("output %s: cannot start a new file: %s; writing on to %s (trying again in 64 frames)",
			s->path, strerror(-r), l->rot.cur);
		return r;
	}
	vms_info("output %s: %s closed after %llu frames, continuing in %s", s->path, prev,
		 (unsigned long long)frames, l->rot.cur);
	after_reopen(l, s, "rotation");
	vms_rotate_closed(&l->rot, prev, vms_clock_real(&l->clock));
	return 0;
}

/* Does frame f start a new file?  Not the first frame of a file, not
 * while the output fails (a full disk: a new file would not take more and
 * the old one is where the frames wait); a new generation of wide CSV (a
 * new header) also does. */
static bool rotation_due(struct vms_loop *l, struct vms_sink *s, const struct vms_frame *f)
{
	if (!l->rot.on || !s->file_frames || f->seq < l->rot_hold || s->last_err)
		return false;
	if (s->gen && f->gen != s->gen && s->ops == &vms_sink_csv && s->csv_layout == VMS_CSV_WIDE)
		return true;
	return vms_rotate_due(&l->rot, f->t_real_ns, s->ops->bytes(s));
}

void vms_loop_drain(struct vms_loop *l)
{
	uint64_t last = vms_ring_last(&l->ring);
	for (unsigned i = 0; i < l->nsink; i++) {
		struct vms_sink *s = &l->sink[i];
		if (s->failed)
			continue;
		int r = 0;
		while (s->next_seq <= last) {
			const struct vms_frame *f = vms_ring_get(&l->ring, s->next_seq);
			if (!f) {
				uint64_t to = ring_oldest(l); /* overwritten: lost */
				s->lost += to - s->next_seq;
				s->next_seq = to;
				continue;
			}
			const struct vms_schema *sch = live_find(l, f->gen);
			if (VMS_UNLIKELY(!sch)) {
				s->next_seq++; /* cannot happen: live_prune() keeps it */
				continue;
			}
			if (VMS_UNLIKELY(rotation_due(l, s, f)) && rotate_sink(l, s, f) == 0)
				continue; /* from s->next_seq again, into the new file */
			if (f->gen != s->gen) {
				r = s->ops->begin(s, sch);
				if (r < 0)
					break;
				s->gen = f->gen;
			}
			deliver_events(l, s, f->seq);
			/* the frames this output misses before f (begin() may
			 * have dropped some with a file it closed) */
			s->gap = f->seq > s->out_seq ? f->seq - s->out_seq - 1 : 0;
			r = s->ops->write(s, sch, f);
			if (r == -EAGAIN) {
				r = s->ops->flush(s);
				if (r < 0)
					break;
				r = s->ops->write(s, sch, f);
				/* everything flushed and still no room: the frame
				 * can never fit (a sink's bug), an error, not a wait
				 * that ends the run with frames silently unwritten */
				if (VMS_UNLIKELY(r == -EAGAIN))
					r = -EMSGSIZE;
			}
			if (r < 0)
				break;
			s->out_seq = f->seq;
			s->gap = 0;
			s->next_seq++;
			s->file_frames++;
		}
		if (r == 0 || r == -EAGAIN)
			r = s->ops->flush(s);
		if (r == 0 && s->last_err) {
			vms_info("output %s: writing again", s->path);
			s->last_err = 0;
		}
		if (r < 0 && r != -EAGAIN)
			sink_error(l, s, r);
	}
	live_prune(l);
}

/* ---- set-up and the run ------------------------------------------------- */

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
	vms_control_init(&l->ctl);
	l->notify.wd_fd = -1;
}

/* A source's section of the configuration, by the key table (config.c):
 * the vm source's is sources.libvirt, whose struct starts with the keys
 * every source has. */
static const struct vms_source_conf *source_conf(const struct vms_config *c, const char *name)
{
	const struct vms_conf_section *s = vms_conf_section_find(strcmp(name, "vm") == 0 ? "libvirt" : name);
	return s ? (const struct vms_source_conf *)(const void *)((const char *)c + s->off) : NULL;
}

static int open_sources(struct vms_loop *l)
{
	l->src = calloc(vms_source_registry_len, sizeof(*l->src));
	if (!l->src)
		return -ENOMEM;
	unsigned opened = 0;
	for (unsigned i = 0; i < vms_source_registry_len; i++) {
		const struct vms_source_ops *ops = vms_source_registry[i];
		const struct vms_source_conf *sc = source_conf(l->conf, ops->name);
		struct vms_source *src = &l->src[l->nsrc];
		if (sc && !sc->enabled)
			continue;
		src->conf = l->conf;
		src->sconf = sc;
		src->proc_dirfd = l->proc_dirfd;
		src->loop = l;
		src->vms = &l->vms;
		src->vms_w = ops->produces_vms ? &l->vms : NULL;
		src->host_w = ops->produces_vms ? &l->host : NULL;
		src->index = (uint16_t)l->nsrc;
		src->every = sc && sc->every ? sc->every : 1;
		src->priv = calloc(1, ops->priv_size ? ops->priv_size : 1);
		if (!src->priv)
			return -ENOMEM;
		int r = ops->open(src);
		if (r < 0) {
			/* a fatal source has said why (a required counter) */
			bool fatal = src->fatal;
			if (!fatal)
				vms_warn("source %s unavailable: %s", ops->name, strerror(-r));
			ops->close(src);
			free(src->priv);
			memset(src, 0, sizeof(*src));
			if (fatal)
				return r;
			continue;
		}
		src->ops = ops;
		l->nsrc++;
		opened++;
	}
	if (!opened) {
		vms_err("no source could be opened under %s", l->conf->proc_root);
		return -ENOENT;
	}
	return 0;
}

/* A mark from the control socket: an event before the next frame. */
static uint64_t on_mark(void *ctx, const char *text, const char *who)
{
	struct vms_loop *l = ctx;
	vms_loop_event(l, VMS_EV_MARK, text, who);
	return l->ring.next_seq ? l->ring.next_seq : 1;
}

/* Where the control socket goes: control_path, or RING.ctl beside a
 * shared ring (the columns are declared for it before it is opened). */
static int control_path(struct vms_loop *l)
{
	const char *cp = l->conf->control_path;
	if (cp && strcmp(cp, "none") == 0)
		return 0;
	if (cp)
		l->ctl_path = strdup(cp);
	else if (l->conf->ring_path && asprintf(&l->ctl_path, "%s.ctl", l->conf->ring_path) < 0)
		l->ctl_path = NULL;
	else if (!l->conf->ring_path)
		return 0;
	return l->ctl_path ? 0 : -ENOMEM;
}

/* Opened after the ring: a live ring at the path is the first thing to
 * say. */
static int open_control(struct vms_loop *l)
{
	if (!l->ctl_path)
		return 0;
	char why[256];
	int r = vms_control_open(&l->ctl, l->ctl_path, on_mark, l, why, sizeof(why));
	if (r < 0)
		vms_err("control socket %s: %s", l->ctl_path, why);
	return r;
}

static int open_sinks(struct vms_loop *l)
{
	const struct vms_sink_ops *ops = vms_sink_for_format(vms_config_format(l->conf));
	l->sink = calloc(1, sizeof(*l->sink));
	if (!l->sink || !ops)
		return -ENOMEM;
	struct vms_sink *s = &l->sink[0];
	s->ops = ops;
	s->force = l->conf->force;
	s->csv_layout = l->conf->csv_layout;
	s->path = l->conf->output ? l->conf->output : "-";
	s->next_seq = 1;
	char why[512];
	int r = vms_rotate_init(&l->rot, l->conf, vms_clock_real(&l->clock), why, sizeof(why));
	if (r < 0) {
		vms_err("%s", why);
		return r == -EINVAL ? r : -EIO;
	}
	s->file = l->rot.on ? l->rot.cur : NULL;
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
	l->nsink = 1;
	if (l->rot.on)
		vms_info("output %s: rotated%s%s, writing %s", s->path, l->rot.keep.ns || l->rot.keep.bytes ? ", kept" : "",
			 l->rot.zstd ? ", compressed" : "", l->rot.cur);
	vms_rotate_start(&l->rot, vms_clock_real(&l->clock));
	return 0;
}

/* The first schema, and the ring for it: in the file conf->ring_path, or
 * in memory. */
static int open_ring(struct vms_loop *l)
{
	const struct vms_config *conf = l->conf;
	int r = rebuild_schema(l);
	if (r < 0) {
		vms_err("cannot build the schema: %s", strerror(-r));
		return r;
	}
	uint32_t cols = l->schema->ncols + l->schema->ncols / 2 + 64;
	uint32_t slots = conf->ring_slots ? conf->ring_slots : 64;
	if (conf->ring_path) {
		char why[256];
		struct vms_ring_file_opts o = {.interval_ns = conf->interval_ns};
		r = vms_ring_create_file(&l->ring, conf->ring_path, slots, cols,
					 vms_bin_head_size(l->schema), &o, why, sizeof(why));
		if (r < 0) {
			vms_err("ring %s: %s", conf->ring_path, why);
			return r;
		}
		vms_bin_ring_publish(&l->ring, l->schema);
	} else {
		r = vms_ring_create(&l->ring, slots, cols);
	}
	if (r < 0)
		vms_err("cannot allocate the ring: %s", strerror(-r));
	return r;
}

int vms_loop_init(struct vms_loop *l, const struct vms_config *conf, const struct vms_clock *clock)
{
	int r;
	loop_zero(l);
	l->conf = conf;
	l->sigfd = -1;
	l->rot.dirfd = -1;
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
	vms_hostid_collect(&l->host, l->proc_dirfd);
	/* the sources make the schema, the ring holds it; the control
	 * socket after the ring (open_control) */
	static int (*const open_step[])(struct vms_loop *) = {
		open_sources, control_path, open_ring, open_control, open_sinks,
	};
	for (size_t i = 0; i < VMS_ARRAY_SIZE(open_step); i++) {
		r = open_step[i](l);
		if (r < 0)
			return r;
	}
	l->last_cpu_ns = vms_clock_cpu(&l->clock);
	return 0;
}

int vms_loop_signals(struct vms_loop *l)
{
	sigset_t m;
	sigemptyset(&m);
	sigaddset(&m, SIGINT);
	sigaddset(&m, SIGTERM);
	sigaddset(&m, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &m, NULL) < 0)
		return -errno;
	l->sigfd = signalfd(-1, &m, SFD_CLOEXEC | SFD_NONBLOCK);
	if (l->sigfd < 0)
		return -errno;
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

static void handle_signals(struct vms_loop *l)
{
	struct signalfd_siginfo si;
	while (read(l->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGHUP)
			l->reopen = true;
		else
			l->stop = true;
	}
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
	uint64_t to = s->out_seq + 1, oldest = ring_oldest(l);
	if (to < oldest)
		to = oldest;
	while (to < s->next_seq && !live_find(l, vms_ring_get(&l->ring, to)->gen))
		to++;
	if (to < s->next_seq)
		s->next_seq = to;
	s->gen = 0; /* next frame begins a generation in the new file */
	s->file_frames = 0;
}

/* SIGHUP.  The sink opens its path anew (with rotation: the name of the
 * file being written) before it lets the old file go. */
static void reopen_sinks(struct vms_loop *l)
{
	l->reopen = false;
	for (unsigned i = 0; i < l->nsink; i++) {
		struct vms_sink *s = &l->sink[i];
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
 * one fails or another SIGINT/SIGTERM comes. */
static void drain_all(struct vms_loop *l)
{
	for (;;) {
		vms_loop_drain(l);
		struct pollfd p[17];
		unsigned n = 0;
		if (l->sigfd >= 0)
			p[n++] = (struct pollfd){.fd = l->sigfd, .events = POLLIN};
		uint64_t last = vms_ring_last(&l->ring);
		for (unsigned i = 0; i < l->nsink && n < VMS_ARRAY_SIZE(p); i++) {
			struct vms_sink *s = &l->sink[i];
			if (s->failed || s->last_err || s->next_seq > last)
				continue;
			int fd = s->ops->pollfd ? s->ops->pollfd(s) : -1;
			if (fd >= 0)
				p[n++] = (struct pollfd){.fd = fd, .events = POLLOUT};
		}
		if (n == (l->sigfd >= 0))
			return; /* all out, or nothing to wait for */
		if (poll(p, n, -1) < 0 && errno != EINTR)
			return;
		if (l->sigfd >= 0 && (p[0].revents & POLLIN))
			return;
	}
}

/* The first frame is out: the service is up (Type=notify). */
static void notify_ready(struct vms_loop *l)
{
	char st[160];
	snprintf(st, sizeof(st), "sampling every %llu ms, %u columns, to %s",
		 (unsigned long long)(l->conf->interval_ns / VMS_NSEC_PER_MSEC), l->schema->ncols,
		 l->nsink ? l->sink[0].path : "-");
	vms_notify_ready(&l->notify, st);
}

int vms_loop_run(struct vms_loop *l)
{
	const struct vms_config *c = l->conf;
	struct pollfd fds[64];
	uint64_t start = vms_sched_first(vms_clock_mono(&l->clock), vms_clock_real(&l->clock), c->align_ns);

	vms_sched_init(&l->sched, start, c->interval_ns);
	vms_notify_init(&l->notify);
	while (!l->stop) {
		unsigned n = 0, nsinkfd, first_src, first_ctl, nctl, wd = 0;
		if (l->sigfd >= 0)
			fds[n++] = (struct pollfd){.fd = l->sigfd, .events = POLLIN};
		/* the watchdog's timer: pinged here, between ticks, never in one */
		if (l->notify.wd_fd >= 0) {
			wd = n;
			fds[n++] = (struct pollfd){.fd = l->notify.wd_fd, .events = POLLIN};
		}
		first_ctl = n;
		nctl = (unsigned)vms_control_pollfds(&l->ctl, fds + n, (int)(VMS_ARRAY_SIZE(fds) - n));
		n += nctl;
		for (unsigned i = 0; i < l->nsink; i++) {
			struct vms_sink *s = &l->sink[i];
			int fd = (!s->failed && s->ops->pollfd) ? s->ops->pollfd(s) : -1;
			fds[n++] = (struct pollfd){.fd = fd, .events = POLLOUT};
		}
		nsinkfd = n;
		first_src = n;
		for (unsigned i = 0; i < l->nsrc; i++) {
			struct vms_source *src = &l->src[i];
			src->npoll = 0;
			if (src->ops && src->ops->pollfds) {
				int m = src->ops->pollfds(src, fds + n, (int)(VMS_ARRAY_SIZE(fds) - n));
				src->npoll = m > 0 ? (unsigned)m : 0;
				n += src->npoll;
			}
		}
		int r = l->clock.ops->wait(l->clock.ctx, vms_sched_next(&l->sched), fds, n);
		if (r < 0) {
			vms_err("wait: %s", strerror(-r));
			return r;
		}
		if (l->sigfd >= 0 && (fds[0].revents & POLLIN))
			handle_signals(l);
		if (l->notify.wd_fd >= 0 && (fds[wd].revents & POLLIN))
			vms_notify_watchdog(&l->notify);
		if (l->reopen)
			reopen_sinks(l);
		if (nctl)
			vms_control_ready(&l->ctl, fds + first_ctl, (int)nctl, vms_clock_mono(&l->clock));
		for (unsigned i = first_ctl + nctl; i < nsinkfd; i++)
			if (fds[i].fd >= 0 && fds[i].revents)
				vms_loop_drain(l);
		if (n > first_src) {
			unsigned k = first_src;
			for (unsigned i = 0; i < l->nsrc; i++) {
				struct vms_source *src = &l->src[i];
				if (src->npoll && src->ops->ready)
					src->ops->ready(src, fds + k, (int)src->npoll);
				k += src->npoll;
			}
		}
		if (l->stop)
			break;
		if (r == 1) {
			struct vms_tickinfo ti;
			if (vms_sched_wake(&l->sched, vms_clock_mono(&l->clock), &ti)) {
				vms_loop_tick(l, &ti);
				vms_control_interval(&l->ctl);
				vms_loop_drain(l);
				if (l->frames && !l->notify.ready)
					notify_ready(l);
				if (c->count && l->frames >= c->count)
					break;
			}
		}
		for (unsigned i = 0; i < l->nsrc; i++) {
			struct vms_source *src = &l->src[i];
			if (src->ops && src->ops->idle)
				src->ops->idle(src, vms_sched_next(&l->sched));
		}
		vms_rotate_poll(&l->rot); /* a compression done, the next one */
	}
	vms_notify_stopping(&l->notify);
	drain_all(l);
	return l->exit_code;
}

int vms_loop_fini(struct vms_loop *l)
{
	int first = 0;
	for (unsigned i = 0; i < l->nsink; i++) {
		struct vms_sink *s = &l->sink[i];
		int r = s->ops->close(s);
		if (r < 0 && !(r == -EPIPE && strcmp(s->path, "-") == 0)) {
			vms_err("output %s: %s", s->path, strerror(-r));
			if (!first)
				first = r;
		}
		free(s->priv);
	}
	free(l->sink);
	if (l->rot.on)
		vms_rotate_fini(&l->rot, vms_clock_real(&l->clock));
	for (unsigned i = 0; i < l->nsrc; i++) {
		if (l->src[i].ops)
			l->src[i].ops->close(&l->src[i]);
		free(l->src[i].priv);
	}
	free(l->src);
	vms_vmtab_clear(&l->vms);
	vms_schema_unref_n(l->live, l->nlive);
	free(l->live);
	vms_schema_unref(l->schema);
	vms_ring_destroy(&l->ring);
	vms_control_close(&l->ctl);
	vms_notify_close(&l->notify);
	free(l->ctl_path);
	if (l->proc_dirfd >= 0)
		close(l->proc_dirfd);
	if (l->sigfd >= 0)
		close(l->sigfd);
	vms_clock_real_close(&l->clock);
	loop_zero(l);
	return first;
}

/* SPDX-License-Identifier: MIT */
/* generation.c - the schema generations and the ring that holds their
 * frames (loop.h): the sources' declarations (through the source host)
 * become a new generation between ticks, the ring grows for it, and the
 * generations still used by a frame in the ring are kept for the sinks. */
#include "loop_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "binfmt.h"
#include "grow.h"
#include "log.h"

const struct vms_schema *vms_gen_find(const struct vms_loop *l, uint32_t gen)
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

void vms_gen_prune(struct vms_loop *l)
{
	uint32_t need = l->schema->gen;
	for (unsigned i = 0; i < l->out.nsink; i++) {
		const struct vms_frame *f = vms_ring_get(&l->ring, l->out.sink[i].next_seq);
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

/* Copy into the empty ring nr the frames a sink (or, for a shared ring,
 * any reader) has not taken yet; seqs stay the same. */
static void carry_frames(struct vms_loop *l, struct vms_ring *nr)
{
	uint64_t from = l->ring.next_seq;
	if (l->ring.path)
		while (from > 1 && vms_ring_get(&l->ring, from - 1))
			from--;
	for (unsigned i = 0; i < l->out.nsink; i++)
		if (vms_ring_get(&l->ring, l->out.sink[i].next_seq) && l->out.sink[i].next_seq < from)
			from = l->out.sink[i].next_seq;
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

/* The loop's own columns, after the sources': vms.parse_errors and the
 * hooks' counters. */
static void declare_self(struct vms_loop *l, struct vms_schema_builder *b)
{
	static const struct vms_coldef counter = {.kind = VMS_KIND_COUNTER, .unit = VMS_UNIT_COUNT, .wrap_bits = 64};
	vms_schema_builder_source(b, (uint16_t)l->sh.nsrc);
	l->self_base = b->ncols;
	vms_schema_addc(b, &counter, VMS_G_VMS, NULL, NULL, "parse_errors");
	for (unsigned i = 0; i < l->hooks.ncounter; i++)
		vms_schema_addc(b, &counter, VMS_G_VMS, NULL, NULL, l->hooks.counter[i].field);
}

/* Switch to generation s (new columns): the ring grows if it must. */
static int install(struct vms_loop *l, struct vms_schema *s)
{
	int r = 0;
	if (l->ring.hdr && !vms_ring_fits(&l->ring, s->ncols, vms_bin_head_size(s)))
		r = grow_ring(l, s);
	if (r == 0)
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
	if (s->gen > 1)
		vms_info("schema generation %u: %u columns", s->gen, s->ncols);
	return 0;
}

int vms_gen_build(struct vms_loop *l)
{
	struct vms_schema_builder b;
	struct vms_schema *s = NULL;

	vms_schema_builder_init(&b);
	vms_srchost_declare(&l->sh, &b, l->tick_idx);
	declare_self(l, &b);
	uint32_t gen = l->schema ? l->schema->gen + 1 : 1;
	int r = vms_schema_finish(&b, gen, vms_clock_real(&l->clock), &s);
	vms_schema_builder_free(&b);
	if (r < 0)
		return r;
	s->host = &l->sh.host;
	if (l->schema && vms_schema_same_columns(l->schema, s)) {
		vms_schema_unref(s);
		return 0;
	}
	return install(l, s);
}

int vms_loop_reschema(struct vms_loop *l)
{
	int r = vms_gen_build(l);
	if (r < 0) {
		/* the sources have laid out their new columns and the ring has
		 * no room for them: no frame can be taken safely any more */
		vms_err("cannot rebuild the schema: %s; stopping", strerror(-r));
		l->stop = true;
		l->exit_code = r;
	}
	vms_srchost_say(&l->sh);
	return r;
}

int vms_gen_open_ring(struct vms_loop *l)
{
	const struct vms_config *conf = l->conf;
	int r = vms_gen_build(l);
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

void vms_gen_fini(struct vms_loop *l)
{
	vms_schema_unref_n(l->live, l->nlive);
	free(l->live);
	vms_schema_unref(l->schema);
	vms_ring_destroy(&l->ring);
}

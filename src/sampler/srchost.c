/* SPDX-License-Identifier: MIT */
/* srchost.c - the source host (srchost.h). */
#include "srchost.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include <vmsampler/format.h>

#define BACKOFF_MAX 64 /* ticks */

/* A source's section of the configuration, by the key table (config.c):
 * the vm source's is sources.libvirt, whose struct starts with the keys
 * every source has. */
static const struct vms_source_conf *source_conf(const struct vms_config *c, const char *name)
{
	const struct vms_conf_section *s = vms_conf_section_find(strcmp(name, "vm") == 0 ? "libvirt" : name);
	return s ? (const struct vms_source_conf *)(const void *)((const char *)c + s->off) : NULL;
}

/* Close source src (which may have failed to open part-way) and free its
 * state; closing the VM set's producer empties the set. */
static void close_source(struct vms_srchost *h, struct vms_source *src, const struct vms_source_ops *ops)
{
	ops->close(src);
	free(src->priv);
	src->priv = NULL;
	if (ops->produces_vms)
		vms_vmtab_clear(&h->vms);
}

int vms_srchost_open(struct vms_srchost *h, const struct vms_config *conf, int proc_dirfd,
		     const struct vms_clock *clock,
		     void (*event)(void *ctx, uint32_t type, const char *subject, const char *detail),
		     void *event_ctx)
{
	h->env = (struct vms_source_env){
		.clock = clock, .vms = &h->vms, .event = event, .event_ctx = event_ctx,
	};
	h->env_w = h->env;
	h->env_w.vms_w = &h->vms;
	h->env_w.host_w = &h->host;
	h->src = calloc(vms_source_registry_len, sizeof(*h->src));
	if (!h->src)
		return -ENOMEM;
	for (unsigned i = 0; i < vms_source_registry_len; i++) {
		const struct vms_source_ops *ops = vms_source_registry[i];
		const struct vms_source_conf *sc = source_conf(conf, ops->name);
		struct vms_source *src = &h->src[h->nsrc];
		if (sc && !sc->enabled)
			continue;
		src->conf = conf;
		src->sconf = sc;
		src->proc_dirfd = proc_dirfd;
		src->index = (uint16_t)h->nsrc;
		src->every = sc && sc->every ? sc->every : 1;
		src->priv = calloc(1, ops->priv_size ? ops->priv_size : 1);
		if (!src->priv)
			return -ENOMEM;
		int r = ops->open(src, ops->produces_vms ? &h->env_w : &h->env);
		if (r < 0) {
			/* a fatal source has said why (a required counter) */
			bool fatal = src->fatal;
			if (!fatal)
				vms_warn("source %s unavailable: %s", ops->name, strerror(-r));
			close_source(h, src, ops);
			memset(src, 0, sizeof(*src));
			if (fatal)
				return r;
			continue;
		}
		src->ops = ops;
		h->nsrc++;
	}
	if (!h->nsrc) {
		vms_err("no source could be opened under %s", conf->proc_root);
		return -ENOENT;
	}
	return 0;
}

/* A source's state changes are events in the stream at once (the event
 * queue is preallocated) and log lines after the tick (vms_srchost_say). */
static void source_failed(struct vms_srchost *h, struct vms_source *src, int err, uint64_t idx)
{
	if (!src->failed) {
		char d[96];
		snprintf(d, sizeof(d), "%s", strerror(-err));
		vms_source_event(&h->env, VMS_EV_SOURCE_FAILED, src->ops->name, d);
		src->say = -1;
		src->backoff = 1;
	} else if (src->backoff < BACKOFF_MAX) {
		src->backoff *= 2;
	}
	src->failed = true;
	src->last_err = err;
	src->next_idx = idx + src->backoff;
}

static void source_ok(struct vms_srchost *h, struct vms_source *src)
{
	if (!src->failed)
		return;
	vms_source_event(&h->env, VMS_EV_SOURCE_RECOVERED, src->ops->name, "");
	src->say = 1;
	src->failed = false;
	src->backoff = 0;
	src->last_err = 0;
}

void vms_srchost_say(struct vms_srchost *h)
{
	for (unsigned i = 0; i < h->nsrc; i++) {
		struct vms_source *src = &h->src[i];
		if (src->say < 0)
			vms_warn("source %s failed: %s (retrying with back-off)", src->ops->name,
				 strerror(-src->last_err));
		else if (src->say > 0)
			vms_info("source %s recovered", src->ops->name);
		src->say = 0;
	}
}

void vms_srchost_declare(struct vms_srchost *h, struct vms_schema_builder *b, uint64_t idx)
{
	for (unsigned i = 0; i < h->nsrc; i++) {
		struct vms_source *src = &h->src[i];
		vms_schema_builder_source(b, (uint16_t)i);
		src->base = b->ncols;
		if (src->ops) {
			int r = src->ops->declare(src, b, vms_srchost_env(h, src));
			if (b->err && b->err != -ENOMEM) {
				/* a column it could not name (no name should do
				 * this: name.h): that source fails, not the others */
				r = b->err;
				b->err = 0;
			}
			if (r < 0 && b->err == 0) {
				/* the source declares nothing this generation; the
				 * tick retries the discovery with back-off */
				b->ncols = src->base;
				source_failed(h, src, r, idx);
				src->declare_failed = true;
			} else if (r >= 0 && src->declare_failed) {
				src->declare_failed = false;
				source_ok(h, src);
			}
		}
		src->ncols = vms_schema_builder_count(b);
	}
}

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

int vms_srchost_sample(struct vms_srchost *h, uint64_t *v, struct vms_tick_ctx *t, bool final)
{
	for (unsigned i = 0; i < h->nsrc; i++) {
		struct vms_source *src = &h->src[i];
		uint64_t *slots = v + src->base;
		if (src->declare_failed && !final && t->idx >= src->next_idx)
			return VMS_RESCHEMA; /* retry its discovery first */
		if (!source_due(src, t->idx)) {
			vms_slots_none(slots, src->ncols);
			continue;
		}
		int r = src->ops->sample(src, slots, t);
		if (r == VMS_RESCHEMA && !final)
			return VMS_RESCHEMA; /* nothing committed: re-declare first */
		if (r == VMS_RESCHEMA) {
			/* still changing after re-declaring: missing this tick */
			vms_slots_none(slots, src->ncols);
		} else if (r < 0) {
			vms_slots_none(slots, src->ncols);
			source_failed(h, src, r, t->idx);
		} else {
			source_ok(h, src);
		}
	}
	return 0;
}

bool vms_srchost_partial(const struct vms_srchost *h)
{
	for (unsigned i = 0; i < h->nsrc; i++)
		if (h->src[i].failed && h->src[i].ncols)
			return true;
	return false;
}

unsigned vms_srchost_pollfds(struct vms_srchost *h, struct pollfd *fds, unsigned max)
{
	unsigned n = 0;
	for (unsigned i = 0; i < h->nsrc; i++) {
		struct vms_source *src = &h->src[i];
		src->npoll = 0;
		if (src->ops && src->ops->pollfds) {
			int m = src->ops->pollfds(src, fds + n, (int)(max - n));
			src->npoll = m > 0 ? (unsigned)m : 0;
			n += src->npoll;
		}
	}
	return n;
}

void vms_srchost_ready(struct vms_srchost *h, const struct pollfd *fds)
{
	unsigned k = 0;
	for (unsigned i = 0; i < h->nsrc; i++) {
		struct vms_source *src = &h->src[i];
		if (src->npoll && src->ops->ready)
			src->ops->ready(src, fds + k, (int)src->npoll, vms_srchost_env(h, src));
		k += src->npoll;
	}
}

void vms_srchost_idle(struct vms_srchost *h, uint64_t until_ns)
{
	for (unsigned i = 0; i < h->nsrc; i++) {
		struct vms_source *src = &h->src[i];
		if (src->ops && src->ops->idle)
			src->ops->idle(src, until_ns, vms_srchost_env(h, src));
	}
}

void vms_srchost_close(struct vms_srchost *h)
{
	for (unsigned i = 0; i < h->nsrc; i++) {
		if (h->src[i].ops)
			close_source(h, &h->src[i], h->src[i].ops);
		else
			free(h->src[i].priv);
	}
	free(h->src);
	h->src = NULL;
	h->nsrc = 0;
	vms_vmtab_clear(&h->vms);
}

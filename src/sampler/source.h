/* SPDX-License-Identifier: MIT */
/* source.h - what a source is, and all it may know of the run.
 *
 * The source API, in the spirit of chrony's refclock drivers: a source is
 * an ops table (VMS_SOURCE_OPS) over private state; the host (srchost.c)
 * calls it, and everything a source needs from the run comes in as a
 * parameter: its clock, the event queue and the VM set in the
 * struct vms_source_env given to open, declare, ready and idle (the same
 * one for the source's life), the tick in struct vms_tick_ctx.  A source
 * never sees the loop (tests/archcheck.sh, rule 5).
 *
 *   open(src, env)         allocate, open fds; src->conf, src->sconf and
 *                          src->proc_dirfd are set. 0 or -errno.  An open
 *                          that fails because the configuration requires
 *                          what is missing (a required perf event) sets
 *                          src->fatal: the run does not start.
 *   declare(src, b, env)   discovery: read once and declare only the
 *                          columns that exist (a 7-field /proc/stat
 *                          declares no steal column).  Called at start and
 *                          again whenever any source returned VMS_RESCHEMA.
 *                          May allocate.
 *   sample(src, slots, t)  fill slots[0 .. declared-1]; VMS_NONE for a
 *                          value not available this tick; count malformed
 *                          lines in t->parse_errors.  Returns 0,
 *                          VMS_RESCHEMA (entities appeared or vanished:
 *                          the host re-declares and samples again) or
 *                          -errno (the host marks the source failed and
 *                          backs off).  Must not allocate, block or log.
 *                          A source that declared no columns is sampled
 *                          too (no slots), so that it can report entities
 *                          that appear later; one whose declare failed is
 *                          not.
 *   close(src)             free everything; must accept a source whose
 *                          open failed part-way (src->priv is there,
 *                          zeroed before open, until after close).
 * Optional hooks for sources with their own I/O (libvirt, perf):
 *   pollfds(src, fds, max) fds to add to the run's single wait
 *   ready(src, fds, n, env) those fds are ready (between ticks)
 *   idle(src, until_ns, env) slow-path work after the tick's frame was
 *                          committed, to be finished before until_ns.
 * The VM set (the running VMs, their threads and taps) is read through
 * env->vms (t->vms in the tick); its one producer (ops->produces_vms)
 * writes it through env->vms_w, only outside sample().
 */
#ifndef VMS_SOURCE_H
#define VMS_SOURCE_H

#include <poll.h>

#include "config.h"
#include "schema.h"

struct vms_clock;
struct vms_hostid;
struct vms_vmtab;

/* What the run gives a source (see above).  The host keeps it for as long
 * as the source is open: a source may keep the pointer. */
struct vms_source_env {
	const struct vms_clock *clock;   /* the run's clock (tests: a fake one) */
	const struct vms_vmtab *vms;     /* the VM set, read-only */
	struct vms_vmtab *vms_w;         /* the same, writable: its producer's only, else NULL */
	struct vms_hostid *host_w;       /* the host's identity (hostid.h): the producer's only */
	/* an event before the next frame (VM started, ...): not for the steady
	 * state; never fails (a full queue counts a drop) */
	void (*event)(void *ctx, uint32_t type, const char *subject, const char *detail);
	void *event_ctx;
};

struct vms_tick_ctx {
	uint64_t t_mono_ns;   /* when this tick's reads started */
	int64_t t_real_ns;
	uint64_t idx;         /* deadline index */
	uint32_t parse_errors; /* malformed lines skipped this tick (add to it) */
	uint32_t flags;       /* frame flags to set (VMS_FRAME_SCALED); or into it */
	const struct vms_vmtab *vms; /* the VM set (the loop's), as between ticks */
};

struct vms_source;

struct vms_source_ops {
	const char *name;
	size_t priv_size;
	int (*open)(struct vms_source *src, const struct vms_source_env *env);
	int (*declare)(struct vms_source *src, struct vms_schema_builder *b, const struct vms_source_env *env);
	int (*sample)(struct vms_source *src, uint64_t *slots, struct vms_tick_ctx *t);
	void (*close)(struct vms_source *src);
	/* it produces the VM set (the vm source): the host gives it env->vms_w.
	 * It changes the set only outside sample() (open, ready, idle), so no
	 * source depends on the order of the registry to see it. */
	bool produces_vms;
	/* optional */
	int (*pollfds)(struct vms_source *src, struct pollfd *fds, int max);
	void (*ready)(struct vms_source *src, const struct pollfd *fds, int n, const struct vms_source_env *env);
	void (*idle)(struct vms_source *src, uint64_t until_ns, const struct vms_source_env *env);
};

struct vms_source {
	const struct vms_source_ops *ops;
	void *priv;                        /* priv_size bytes, zeroed: the host's, from
					    * before open to after close */
	const struct vms_config *conf;
	const struct vms_source_conf *sconf; /* this source's section, if any */
	int proc_dirfd;
	uint16_t index;
	uint32_t base;   /* first column in the frame */
	uint32_t ncols;  /* columns declared */
	/* cadence and back-off, managed by the host */
	uint32_t every;
	uint32_t backoff;      /* ticks to wait after the current failure */
	uint64_t next_idx;     /* first tick index it may run again */
	int last_err;
	bool failed;
	bool declare_failed;   /* its last declare() failed: no columns */
	bool fatal;            /* set by open before failing: stop the run (a required counter) */
	int8_t say;            /* a state change to log after the tick: +1 recovered, -1 failed */
	unsigned npoll;        /* fds it added to this wait */
};

/* The ops table vms_source_<id> of the source named "<id>": its private
 * state is struct <id>, its ops are <prefix>_open, _declare, _sample and
 * _close, and the optional ones follow as designated initializers:
 *   VMS_SOURCE_OPS(perf, perf, .idle = perf_idle);
 * VMS_SOURCE_OPS_PRIV names the state's type; VMS_SOURCE_OPS_FAMILY is
 * for sources of one file format (meminfo and vmstat, interrupts and
 * softirqs): their own open and declare, the family's sample and close. */
#define VMS_SOURCE_OPS_FAMILY(id, type, prefix, family, ...)                 \
	const struct vms_source_ops vms_source_##id = {                      \
		.name = #id,                                                 \
		.priv_size = sizeof(type),                                   \
		.open = prefix##_open,                                       \
		.declare = prefix##_declare,                                 \
		.sample = family##_sample,                                   \
		.close = family##_close,                                     \
		__VA_ARGS__                                                  \
	}
#define VMS_SOURCE_OPS_PRIV(id, type, prefix, ...) VMS_SOURCE_OPS_FAMILY(id, type, prefix, prefix, __VA_ARGS__)
#define VMS_SOURCE_OPS(id, prefix, ...) VMS_SOURCE_OPS_FAMILY(id, struct id, prefix, prefix, __VA_ARGS__)

/* The registry: every compiled-in source, in frame order. */
extern const struct vms_source_ops *const vms_source_registry[];
extern const unsigned vms_source_registry_len;
const struct vms_source_ops *vms_source_lookup(const char *name);

/* For sources: record an event (VM started, ...) before the next frame. */
static inline void vms_source_event(const struct vms_source_env *env, uint32_t type, const char *subject,
				    const char *detail)
{
	env->event(env->event_ctx, type, subject, detail);
}

/* Fill n slots with VMS_NONE. */
static inline void vms_slots_none(uint64_t *slots, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		slots[i] = VMS_NONE;
}

#endif

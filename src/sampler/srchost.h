/* SPDX-License-Identifier: MIT */
/* srchost.h - the source host: it opens the sources the configuration
 * enables (in registry order), hands each its environment (the run's
 * clock, the event queue, the VM set: struct vms_source_env, source.h),
 * has them declare and sample, backs off from a failing one and says its
 * failures and recoveries after the tick.  It owns the VM set and the
 * host's identity; it never sees the ring, the sinks or the loop.
 */
#ifndef VMS_SRCHOST_H
#define VMS_SRCHOST_H

#include <poll.h>

#include "clock.h"
#include "config.h"
#include "hostid.h"
#include "source.h"
#include "vmtab.h"

struct vms_srchost {
	struct vms_source *src;
	unsigned nsrc;
	struct vms_vmtab vms;        /* the VM set: its producer fills it, the sources read it */
	struct vms_hostid host;      /* this host's identity, in every schema (HOST record) */
	struct vms_source_env env;   /* what every source is given */
	struct vms_source_env env_w; /* the same, with the VM set writable: its producer's */
};

/* The environment source src is given (open, declare, ready, idle). */
static inline const struct vms_source_env *vms_srchost_env(const struct vms_srchost *h,
							    const struct vms_source *src)
{
	return src->ops && src->ops->produces_vms ? &h->env_w : &h->env;
}

/* Open the enabled sources under proc_dirfd; `event` queues an event
 * before the next frame (its ctx: event_ctx).  Logs; 0 or -errno (no
 * source at all, or one that the configuration requires failed). */
int vms_srchost_open(struct vms_srchost *h, const struct vms_config *conf, int proc_dirfd,
		     const struct vms_clock *clock,
		     void (*event)(void *ctx, uint32_t type, const char *subject, const char *detail),
		     void *event_ctx);
/* Every source declares its columns into b (source i as source i of the
 * schema); a declare that fails leaves that source without columns, to
 * be retried with back-off from tick idx.  Between ticks. */
void vms_srchost_declare(struct vms_srchost *h, struct vms_schema_builder *b, uint64_t idx);
/* The tick: each due source fills its slots of the frame's values v; the
 * others' are VMS_NONE.  VMS_RESCHEMA (nothing to commit) when a source's
 * entities changed or a failed discovery is due again, unless `final`.
 * Allocates nothing, logs nothing. */
int vms_srchost_sample(struct vms_srchost *h, uint64_t *v, struct vms_tick_ctx *t, bool final);
/* A failed source has columns: the frame is partial. */
bool vms_srchost_partial(const struct vms_srchost *h);
/* After the tick: the log lines of the sources that failed or recovered. */
void vms_srchost_say(struct vms_srchost *h);
/* The sources' fds for the run's wait (returns how many went in fds), and
 * their readiness after it (the same fds), between ticks. */
unsigned vms_srchost_pollfds(struct vms_srchost *h, struct pollfd *fds, unsigned max);
void vms_srchost_ready(struct vms_srchost *h, const struct pollfd *fds);
/* The sources' slow-path work, to be done before until_ns. */
void vms_srchost_idle(struct vms_srchost *h, uint64_t until_ns);
void vms_srchost_close(struct vms_srchost *h);

#endif

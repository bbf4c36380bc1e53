/* SPDX-License-Identifier: MIT */
/* loop.h - the sampling loop: one thread, one blocking point.
 *
 *   wait (clock->wait: timerfd + the sinks', sources' and main's fds in
 *         one ppoll)
 *   -> tick: t_mono/t_real, each due source fills its slots of the ring
 *      frame, commit (seq, flags, missed ticks, lost frames, self cost)
 *   -> sinks drain the ring without blocking
 *   -> (entities changed? re-declare, new schema generation)
 *   -> sources' slow-path work until shortly before the next deadline
 *
 * Its jobs, one file each: the conductor (loop.c: the tick at absolute
 * deadlines, the frame, the run), the source host (srchost.c: the
 * sources), the schema generations and the ring (generation.c), the
 * output supervisor (output.c: sinks, rotation, events).  What the service
 * around it adds (signals, the service manager, the control socket) is
 * main's (service.c), plugged in through struct vms_loop_hooks.
 */
#ifndef VMS_LOOP_H
#define VMS_LOOP_H

#include "clock.h"
#include "config.h"
#include "ring.h"
#include "rotate.h"
#include "sink.h"
#include "srchost.h"
#include "vms_sched.h"

#define VMS_EVQ 256
#define VMS_LOOP_COUNTERS 4

struct vms_loop;

/* What main adds to the run (service.c); every hook is optional. */
struct vms_loop_hooks {
	void *ctx;
	/* the loop's own columns vms.<field>, after vms.parse_errors: the
	 * value of *v in each frame */
	struct vms_loop_counter {
		const char *field;
		const uint64_t *v;
	} counter[VMS_LOOP_COUNTERS];
	unsigned ncounter;
	/* after the ring was made, before the outputs are opened: 0 or -errno
	 * (said) */
	int (*started)(void *ctx, struct vms_loop *l);
	/* fds for the run's wait (at most max), and what to do when the wait
	 * returns (fds: the same ones) */
	unsigned (*pollfds)(void *ctx, struct pollfd *fds, unsigned max);
	void (*ready)(void *ctx, struct vms_loop *l, const struct pollfd *fds, unsigned n);
	/* at exit, while the outputs are waited for: an fd that, readable,
	 * ends the wait (-1: none) */
	int (*stop_fd)(void *ctx);
	/* after each tick's frame went to the outputs */
	void (*ticked)(void *ctx, struct vms_loop *l);
	/* the run ends (before the outputs are waited for) */
	void (*stopping)(void *ctx, struct vms_loop *l);
};

/* The outputs (output.c): the sinks and their rotation. */
struct vms_output {
	struct vms_sink *sink;
	unsigned nsink;
	struct vms_rotate rot;      /* rotate, keep, compress of the output (rotate.h) */
	uint64_t rot_hold;          /* a rotation failed: not again before this seq */
};

struct vms_loop {
	const struct vms_config *conf;
	struct vms_clock clock;
	int proc_dirfd;
	struct vms_loop_hooks hooks;

	struct vms_srchost sh;      /* the sources, the VM set, the host's identity */
	struct vms_output out;

	struct vms_ring ring;
	struct vms_schema *schema;  /* current generation */
	struct vms_schema **live;   /* generations frames in the ring may use */
	unsigned nlive, caplive;
	uint32_t self_base;         /* the loop's own columns */
	uint64_t parse_errors;      /* cumulative (vms.parse_errors) */

	struct vms_sched sched;
	uint64_t tick_idx;          /* deadline index of the tick being taken */
	uint64_t frames;            /* committed */
	uint64_t pending_missed;    /* carried into the next frame */
	uint32_t pending_flags;
	uint64_t last_cpu_ns;
	int64_t last_offset_ns;     /* t_real - t_mono of the previous frame */
	bool have_offset;

	struct vms_event ev[VMS_EVQ];
	uint64_t ev_next;           /* id of the next event */
	uint64_t ev_dropped;

	bool stop;
	bool reopen;
	int exit_code;              /* -errno: stopped on a fatal error */
};

/* Set up: open the proc root, the sources (in registry order, those the
 * config enables), the first schema, the ring, hooks->started and the
 * sinks.  `clock` may be NULL for the real clock, `hooks` NULL for none
 * (copied).  On failure logs one line and returns -errno (-EINVAL-like
 * errors are configuration errors: exit 2). */
int vms_loop_init(struct vms_loop *l, const struct vms_config *conf, const struct vms_clock *clock,
		  const struct vms_loop_hooks *hooks);
/* Run until count frames were written or l->stop.  0 or -errno (a fatal
 * error, said in one line). */
int vms_loop_run(struct vms_loop *l);
/* One tick (tests drive it directly): vms_loop_take, and when a source's
 * entities changed, vms_loop_reschema and vms_loop_take again (at most
 * three times; then a source still changing is missing from the frame),
 * then the log lines of sources that failed or recovered. */
void vms_loop_tick(struct vms_loop *l, const struct vms_tickinfo *ti);
/* The tick proper: every due source samples into the ring's next slot
 * and the frame is committed (0).  It allocates nothing, logs nothing and
 * never retries: when a source's entities changed (or a failed discovery
 * is due again) it commits nothing and returns VMS_RESCHEMA, unless
 * `final`, when that source's values are missing from the frame. */
int vms_loop_take(struct vms_loop *l, const struct vms_tickinfo *ti, int64_t t_real_ns, bool final);
/* Between ticks: the sources declare again and a new generation is
 * switched in (it allocates and logs; the ring may be replaced).  0, or
 * -errno and the run stops (generation.c). */
int vms_loop_reschema(struct vms_loop *l);
/* Hand committed frames to sinks, without blocking (output.c). */
void vms_loop_drain(struct vms_loop *l);
/* Flush and close sinks, close sources. Returns the first sink error. */
int vms_loop_fini(struct vms_loop *l);
/* Queue an event before the next frame (output.c). */
void vms_loop_event(struct vms_loop *l, uint32_t type, const char *subject, const char *detail);
/* The seq the next frame will have (the one an event now comes before). */
static inline uint64_t vms_loop_next_seq(const struct vms_loop *l)
{
	return l->ring.next_seq ? l->ring.next_seq : 1;
}

#endif

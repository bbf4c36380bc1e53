/* SPDX-License-Identifier: MIT */
/* loop_int.h - between the loop's files (loop.h): the conductor
 * (loop.c), the schema generations (generation.c) and the output
 * supervisor (output.c).  Nothing else includes it. */
#ifndef VMS_LOOP_INT_H
#define VMS_LOOP_INT_H

#include "loop.h"

/* generation.c */
/* Ask every source to declare its columns; install a new generation if
 * they differ from the current one.  Between ticks: it allocates. */
int vms_gen_build(struct vms_loop *l);
/* The first schema, and the ring for it: in the file conf->ring_path, or
 * in memory.  Logs. */
int vms_gen_open_ring(struct vms_loop *l);
/* The generation gen, as long as a frame in the ring may use it. */
const struct vms_schema *vms_gen_find(const struct vms_loop *l, uint32_t gen);
/* Drop generations no frame in the ring still needs. */
void vms_gen_prune(struct vms_loop *l);
void vms_gen_fini(struct vms_loop *l);

/* output.c */
int vms_output_open(struct vms_loop *l);
/* Before a frame is begun: a sink whose next frame is about to be
 * overwritten skips it (counted as lost to that output). */
void vms_output_overrun(struct vms_loop *l);
/* SIGHUP: every sink opens its file anew (vms_loop.reopen). */
void vms_output_reopen(struct vms_loop *l);
/* At exit: wait for the outputs to take every frame (hooks.stop_fd may
 * cut it short). */
void vms_output_finish(struct vms_loop *l);
/* The sinks' fds to wait on (POLLOUT; -1 for none), one per sink. */
unsigned vms_output_pollfds(struct vms_loop *l, struct pollfd *fds);
/* Flush and close the sinks and end the rotation: the first error. */
int vms_output_close(struct vms_loop *l);
/* The oldest frame still in the ring. */
uint64_t vms_output_oldest(const struct vms_loop *l);

#endif

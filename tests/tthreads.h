/* SPDX-License-Identifier: MIT */
/* tthreads.h - threads and CPU pinning for the tests and benchmarks.
 *
 * In a file of its own because <pthread.h> includes <sched.h>, and the
 * sampler's src/sampler/sched.h, on the include path of everything that uses the
 * core, shadows it.  tthreads.c is compiled without that path. */
#ifndef VMS_TTHREADS_H
#define VMS_TTHREADS_H

struct tt_thread;

/* Start fn(arg) in a new thread; aborts if it cannot. */
struct tt_thread *tt_start(void *(*fn)(void *), void *arg);
/* Wait for it and free the handle. */
void tt_join(struct tt_thread *t);
/* Start it detached (nobody joins it). */
void tt_start_detached(void *(*fn)(void *), void *arg);
/* The lowest CPU this thread may run on. */
int tt_first_cpu(void);
/* Pin the calling thread to one CPU: 0 or -errno. */
int tt_pin(int cpu);

#endif

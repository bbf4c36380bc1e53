/* SPDX-License-Identifier: MIT */
#include "tthreads.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

struct tt_thread {
	pthread_t t;
};

struct tt_thread *tt_start(void *(*fn)(void *), void *arg)
{
	struct tt_thread *t = malloc(sizeof(*t));
	if (!t || pthread_create(&t->t, NULL, fn, arg) != 0) {
		fprintf(stderr, "tt_start: cannot start a thread\n");
		abort();
	}
	return t;
}

void tt_join(struct tt_thread *t)
{
	pthread_join(t->t, NULL);
	free(t);
}

void tt_start_detached(void *(*fn)(void *), void *arg)
{
	pthread_t t;
	if (pthread_create(&t, NULL, fn, arg) != 0) {
		fprintf(stderr, "tt_start_detached: cannot start a thread\n");
		abort();
	}
	pthread_detach(t);
}

int tt_first_cpu(void)
{
	cpu_set_t s;
	if (sched_getaffinity(0, sizeof(s), &s) < 0)
		return -errno;
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &s))
			return i;
	return -ENOENT;
}

int tt_pin(int cpu)
{
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	return -pthread_setaffinity_np(pthread_self(), sizeof(s), &s);
}

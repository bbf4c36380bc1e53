/* SPDX-License-Identifier: MIT */
/* vms.h - definitions shared by every vmsampler module (private). */
#ifndef VMS_H
#define VMS_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* A value that could not be read this tick.  Never a real reading: the
 * kernel's counters would need 584 years at 1 GHz to get there, and the
 * binary format reserves it (varint 0). */
#define VMS_NONE UINT64_MAX

/* sample() return: the set of entities (CPUs, disks, interfaces, VMs)
 * changed; the loop must rebuild the schema and sample again. */
#define VMS_RESCHEMA 1

#define VMS_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define VMS_LIKELY(x) __builtin_expect(!!(x), 1)
#define VMS_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define VMS_UNUSED __attribute__((unused))
#define VMS_PRINTF(a, b) __attribute__((format(printf, a, b)))

#define VMS_NSEC_PER_SEC 1000000000ULL
#define VMS_NSEC_PER_MSEC 1000000ULL

/* CLOCK_MONOTONIC now, ns (readers and tools; the sampler has clock.h) */
static inline uint64_t vms_mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * VMS_NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

#endif

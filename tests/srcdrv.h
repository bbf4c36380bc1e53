/* SPDX-License-Identifier: MIT */
/* srcdrv.h - drives one source's ops against a proc-root directory, the
 * way the loop does (open, declare into a fresh schema, sample), with a
 * canary check that sample() writes exactly its declared slots. */
#ifndef VMS_SRCDRV_H
#define VMS_SRCDRV_H

#include "source.h"

struct drv {
	struct vms_source_conf sconf;
	struct vms_source src;
	struct vms_schema *schema;
	uint32_t gen;
	int dirfd;
	uint64_t slots[8192];
	uint32_t parse_errors; /* of the last sample */
};

/* A driver with an empty configuration (no globs, no partitions, no
 * per-CPU columns); set d->sconf before drv_declare. */
struct drv *drv_new(const char *root, const struct vms_source_ops *ops);
/* Same, with a configuration (copied before open(); globs are not copied
 * deeply: the driver frees them at drv_close). */
struct drv *drv_new_conf(const char *root, const struct vms_source_ops *ops,
			 const struct vms_source_conf *sc);
int drv_declare(struct drv *d);
/* One sample; on success every declared slot must have been written. */
int drv_sample(struct drv *d);
void drv_close(struct drv *d);
int col(const struct drv *d, const char *name);
uint64_t val(const struct drv *d, const char *name);
/* The fixture directory tests/fixtures/<name> (static buffer). */
const char *root(const char *name);

#endif

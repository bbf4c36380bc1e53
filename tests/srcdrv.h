/* SPDX-License-Identifier: MIT */
/* srcdrv.h - drives one source's ops against a proc-root directory, the
 * way the loop does (open, declare into a fresh schema, sample), with a
 * canary check that sample() writes exactly its declared slots. */
#ifndef VMS_SRCDRV_H
#define VMS_SRCDRV_H

#include "clock.h"
#include "source.h"

struct drv {
	struct vms_source_conf sconf;
	struct vms_source src;
	struct vms_schema *schema;
	uint32_t gen;
	int dirfd;
	uint64_t slots[8192];
	uint32_t parse_errors; /* of the last sample */
	const struct vms_vmtab *vms; /* the VM set: env.vms and the tick's (NULL: none) */
	struct vms_source_env env;   /* what the source is given: the driver's clock, events counted */
	struct vms_clock clock;      /* env.clock: reads mono_ns */
	uint64_t mono_ns;            /* the driver's clock (its mono and each tick's t_mono_ns): 1000 s,
				      * standing still unless a test moves it */
	unsigned events;             /* events the source queued */
};

/* Case `i` of a table: a sample returns want (else the test fails, naming
 * the case), and if that is 0, counts `errors` damaged lines.  True if
 * the sample succeeded. */
bool drv_sample_case(struct drv *d, unsigned i, int want, uint32_t errors);

/* An independent reader of the source's file: the value of column `col`
 * in the file's text (false: no line for it). */
typedef bool drv_ref_fn(const char *file, size_t len, const char *col, uint64_t *out);

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
/* One successful sample, declaring again as often as the source asks (a
 * new VM, a new pair of the interference sources; 4 times in a row fail). */
void drv_sample_settled(struct drv *d);
void drv_close(struct drv *d);
int col(const struct drv *d, const char *name);
uint64_t val(const struct drv *d, const char *name);
/* The fixture directory tests/fixtures/<name> (static buffer). */
const char *root(const char *name);

/* The source's file missing from `root`: open fails with -ENOENT, and
 * close still works (a half-opened source). */
void drv_open_missing(const char *root, const struct vms_source_ops *ops);
/* `text` written as <dir>/<file>: a driver (no_sconf: with no
 * configuration at all, the source's defaults) declares `ncols` columns
 * and samples them; with ref, each equals ref's reading of the text. */
void drv_put_expect(const char *dir, const char *file, const struct vms_source_ops *ops, const char *text,
		    size_t len, bool no_sconf, uint32_t ncols, drv_ref_fn *ref);
/* Write the file <dir>/<file> (in place: the source keeps it open). */
void drv_put(const char *dir, const char *file, const char *data, size_t len);
/* `n` samples, each successful (new_tick: each a tick of its own, the
 * file read again); returns the allocations they made (allocwrap.h), and
 * the parse errors they counted in *parse_errors. */
unsigned long drv_sample_allocs(struct drv *d, unsigned n, bool new_tick, uint32_t *parse_errors);
/* drv_declare (which must succeed), counting its allocations: a test that
 * the counting wrapper sees them (declare does allocate) */
unsigned long drv_declare_allocs(struct drv *d);

/* Every column equals ref's reading of the text. */
void drv_check_all(const struct drv *d, drv_ref_fn *ref, const char *text, size_t len);
/* The columns whose names start with none_prefix (if not NULL) are
 * missing (VMS_NONE): returns how many; every other equals ref's reading
 * of the text. */
unsigned drv_check_none(const struct drv *d, drv_ref_fn *ref, const char *text, size_t len,
			const char *none_prefix);
/* ... of roots/<name>/<file>. */
void drv_check_fixture(const struct drv *d, drv_ref_fn *ref, const char *name, const char *file);
/* The entities that have a column <prefix><entity><suffix>, in column
 * order, as "a b c". */
void drv_entities(const struct drv *d, const char *prefix, const char *suffix, char *out, size_t cap);

/* Case `i` of a table of edits, after the edit: drv_sample_case; if the
 * sample succeeded, every column is as ref reads roots/<fixture>/<file>
 * but those of <kind>.<none>. (none NULL: none), which are missing: returns
 * how many; if it did not, a new declaration and a sample succeed
 * (returns 0). */
unsigned drv_case_check(struct drv *d, unsigned i, int want, uint32_t errors, drv_ref_fn *ref,
			const char *fixture, const char *file, const char *kind, const char *none);

#endif

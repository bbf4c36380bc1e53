/* SPDX-License-Identifier: MIT */
#include "srcdrv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "allocwrap.h"
#include "testutil.h"

#define CANARY 0x5a5a5a5a5a5a5a5aull

/* The driver's clock: it stands still (a source under the driver reads
 * its files, not the time) unless a test moves d->mono_ns, and it never
 * waits. */
static uint64_t fixed_mono(void *ctx)
{
	return ((const struct drv *)ctx)->mono_ns;
}
static int64_t fixed_real(void *ctx)
{
	(void)ctx;
	return (int64_t)1700000000 * VMS_NSEC_PER_SEC;
}
static int fixed_wait(void *ctx, uint64_t deadline_ns, struct pollfd *fds, unsigned n)
{
	(void)ctx, (void)deadline_ns, (void)fds, (void)n;
	return -ENOSYS;
}
static const struct vms_clock_ops fixed_ops = {fixed_mono, fixed_real, fixed_mono, fixed_wait};

static void count_event(void *ctx, uint32_t type, const char *subject, const char *detail)
{
	(void)type, (void)subject, (void)detail;
	((struct drv *)ctx)->events++;
}

static void drv_open(struct drv *d, const char *root, const struct vms_source_ops *ops, int want)
{
	d->clock = (struct vms_clock){&fixed_ops, d};
	d->mono_ns = 1000 * VMS_NSEC_PER_SEC;
	d->env = (struct vms_source_env){.clock = &d->clock, .event = count_event, .event_ctx = d};
	d->dirfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(d->dirfd >= 0);
	d->src.ops = ops;
	d->src.sconf = &d->sconf;
	d->src.proc_dirfd = d->dirfd;
	d->src.priv = calloc(1, ops->priv_size);
	assert_non_null(d->src.priv);
	assert_int_equal(d->src.ops->open(&d->src, &d->env), want);
}

void drv_open_missing(const char *root, const struct vms_source_ops *ops)
{
	struct drv *d = calloc(1, sizeof(*d));
	assert_non_null(d);
	drv_open(d, root, ops, -ENOENT);
	drv_close(d);
}

void drv_put(const char *dir, const char *file, const char *data, size_t len)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/%s", dir, file);
	write_file(p, data, len);
}

unsigned long drv_sample_allocs(struct drv *d, unsigned n, bool new_tick, uint32_t *parse_errors)
{
	struct vms_tick_ctx t = {.t_mono_ns = d->mono_ns, .idx = 1, .vms = d->vms};
	test_allocs = 0;
	for (unsigned i = 0; i < n; i++) {
		if (new_tick)
			t.idx++;
		assert_int_equal(d->src.ops->sample(&d->src, d->slots, &t), 0);
	}
	unsigned long a = test_allocs;
	*parse_errors = t.parse_errors;
	return a;
}

unsigned long drv_declare_allocs(struct drv *d)
{
	test_allocs = 0;
	assert_int_equal(drv_declare(d), 0);
	return test_allocs;
}

int drv_declare(struct drv *d)
{
	struct vms_schema_builder b;
	struct vms_schema *s = NULL;
	vms_schema_builder_init(&b);
	vms_schema_builder_source(&b, 0);
	d->env.vms = d->vms;
	int r = d->src.ops->declare(&d->src, &b, &d->env);
	if (r < 0) {
		vms_schema_builder_free(&b);
		return r;
	}
	d->src.ncols = vms_schema_builder_count(&b);
	assert_true(d->src.ncols <= VMS_ARRAY_SIZE(d->slots));
	assert_int_equal(vms_schema_finish(&b, ++d->gen, 0, &s), 0);
	vms_schema_builder_free(&b);
	vms_schema_unref(d->schema);
	d->schema = s;
	return 0;
}

int drv_sample(struct drv *d)
{
	/* a new tick index each time: files shared by sources (procfile.c)
	 * are read once per tick */
	static uint64_t idx;
	struct vms_tick_ctx t = {.t_mono_ns = d->mono_ns, .idx = ++idx, .vms = d->vms};
	for (unsigned i = 0; i < VMS_ARRAY_SIZE(d->slots); i++)
		d->slots[i] = CANARY;
	int r = d->src.ops->sample(&d->src, d->slots, &t);
	d->parse_errors = t.parse_errors;
	if (r == 0)
		for (uint32_t i = 0; i < d->src.ncols; i++)
			if (d->slots[i] == CANARY)
				fail_msg("slot %u (%s) not written", i, d->schema->cols[i].name);
	for (unsigned i = d->src.ncols; i < VMS_ARRAY_SIZE(d->slots); i++)
		assert_true(d->slots[i] == CANARY); /* nothing past its columns */
	return r;
}

void drv_sample_settled(struct drv *d)
{
	for (int i = 0; i < 4; i++) {
		int r = drv_sample(d);
		if (r == 0)
			return;
		assert_int_equal(r, VMS_RESCHEMA);
		assert_int_equal(drv_declare(d), 0);
	}
	fail_msg("the source asked for a new schema 4 times in a row");
}

void drv_close(struct drv *d)
{
	d->src.ops->close(&d->src);
	free(d->src.priv);
	vms_schema_unref(d->schema);
	if (d->dirfd >= 0)
		close(d->dirfd);
	vms_globs_clear(&d->sconf.include);
	vms_globs_clear(&d->sconf.exclude);
	free(d);
}

struct drv *drv_new_conf(const char *root, const struct vms_source_ops *ops,
			 const struct vms_source_conf *sc)
{
	struct drv *d = calloc(1, sizeof(*d));
	assert_non_null(d);
	d->dirfd = -1;
	if (sc)
		d->sconf = *sc; /* before open: a source may read it there */
	d->sconf.enabled = true;
	drv_open(d, root, ops, 0);
	return d;
}

struct drv *drv_new(const char *root, const struct vms_source_ops *ops)
{
	return drv_new_conf(root, ops, NULL);
}

int col(const struct drv *d, const char *name)
{
	return vms_schema_find(d->schema, name);
}

uint64_t val(const struct drv *d, const char *name)
{
	int i = col(d, name);
	if (i < 0)
		fail_msg("no column %s", name);
	return d->slots[i];
}

const char *root(const char *name)
{
	static char buf[4096];
	snprintf(buf, sizeof(buf), "%s", fixture_path(name));
	return buf;
}

void drv_check_all(const struct drv *d, drv_ref_fn *ref, const char *text, size_t len)
{
	for (uint32_t i = 0; i < d->schema->ncols; i++) {
		uint64_t want;
		const char *n = d->schema->cols[i].name;
		if (!ref(text, len, n, &want))
			fail_msg("column %s has no line in the file", n);
		if (d->slots[i] != want)
			fail_msg("%s = %llu, file says %llu", n, (unsigned long long)d->slots[i],
				 (unsigned long long)want);
	}
}

void drv_check_fixture(const struct drv *d, drv_ref_fn *ref, const char *name, const char *file)
{
	size_t len;
	char *b = fixture_root_read(name, file, &len);
	drv_check_all(d, ref, b, len);
	free(b);
}

void drv_entities(const struct drv *d, const char *prefix, const char *suffix, char *out, size_t cap)
{
	size_t o = 0, pl = strlen(prefix), sl = strlen(suffix);
	out[0] = '\0';
	for (uint32_t i = 0; i < d->schema->ncols; i++) {
		const char *n = d->schema->cols[i].name;
		size_t l = strlen(n);
		if (l < pl + sl || strncmp(n, prefix, pl) != 0 || strcmp(n + l - sl, suffix) != 0)
			continue;
		o += (size_t)snprintf(out + o, cap - o, "%s%.*s", o ? " " : "", (int)(l - pl - sl), n + pl);
		assert_true(o < cap);
	}
}

void drv_put_expect(const char *dir, const char *file, const struct vms_source_ops *ops, const char *text,
		    size_t len, bool no_sconf, uint32_t ncols, drv_ref_fn *ref)
{
	drv_put(dir, file, text, len);
	struct drv *d = drv_new(dir, ops);
	if (no_sconf)
		d->src.sconf = NULL;
	assert_int_equal(drv_declare(d), 0);
	assert_int_equal(d->schema->ncols, ncols);
	assert_int_equal(drv_sample(d), 0);
	if (ref)
		drv_check_all(d, ref, text, len);
	drv_close(d);
}

unsigned drv_check_none(const struct drv *d, drv_ref_fn *ref, const char *text, size_t len,
			const char *none_prefix)
{
	unsigned none = 0;
	for (uint32_t c = 0; c < d->schema->ncols; c++) {
		const char *name = d->schema->cols[c].name;
		if (none_prefix && strncmp(name, none_prefix, strlen(none_prefix)) == 0) {
			assert_true(d->slots[c] == VMS_NONE);
			none++;
			continue;
		}
		uint64_t want;
		assert_true(ref(text, len, name, &want));
		assert_int_equal(d->slots[c], want);
	}
	return none;
}

bool drv_sample_case(struct drv *d, unsigned i, int want, uint32_t errors)
{
	int r = drv_sample(d);
	if (r != want)
		fail_msg("case %u: sample %d, want %d", i, r, want);
	if (r == 0)
		assert_int_equal(d->parse_errors, errors);
	return r == 0;
}

unsigned drv_case_check(struct drv *d, unsigned i, int want, uint32_t errors, drv_ref_fn *ref,
			const char *fixture, const char *file, const char *kind, const char *none)
{
	if (!drv_sample_case(d, i, want, errors)) {
		assert_int_equal(drv_declare(d), 0);
		assert_int_equal(drv_sample(d), 0);
		return 0;
	}
	size_t n;
	char *orig = fixture_root_read(fixture, file, &n), pfx[64] = "-";
	if (none)
		snprintf(pfx, sizeof(pfx), "%s.%s.", kind, none);
	unsigned missing = drv_check_none(d, ref, orig, n, pfx);
	free(orig);
	return missing;
}

/* SPDX-License-Identifier: MIT */
#include "testutil.h"

#include <string.h>

#include "schema.h"

static const struct vms_coldef ctr = {.kind = VMS_KIND_COUNTER, .unit = VMS_UNIT_COUNT, .wrap_bits = 64};
static const struct vms_coldef gauge = {.kind = VMS_KIND_GAUGE, .unit = VMS_UNIT_LOAD, .scale = 2};

static struct vms_schema *build(uint32_t gen, int ndisks)
{
	struct vms_schema_builder b;
	struct vms_schema *s = NULL;
	vms_schema_builder_init(&b);
	vms_schema_builder_source(&b, 0);
	assert_int_equal(vms_schema_addf(&b, &gauge, "load.1m"), 0);
	vms_schema_builder_source(&b, 1);
	for (int i = 0; i < ndisks; i++)
		assert_int_equal(vms_schema_addf(&b, &ctr, "disk.sd%c.rd_ios", 'a' + i), i);
	assert_int_equal(vms_schema_builder_count(&b), (uint32_t)ndisks);
	struct vms_coldef k = ctr;
	k.key = "6695eb01-f6a4-8304-79aa-97f2502e193f";
	vms_schema_builder_source(&b, 2);
	assert_int_equal(vms_schema_addf(&b, &k, "vm.%s.cpu_time", "web1"), 0);
	assert_int_equal(vms_schema_finish(&b, gen, 42, &s), 0);
	return s;
}

static void test_build(void **state)
{
	(void)state;
	struct vms_schema *s = build(1, 3);
	assert_int_equal(s->ncols, 5);
	assert_string_equal(s->cols[0].name, "load.1m");
	assert_int_equal(s->cols[0].scale, 2);
	assert_string_equal(s->cols[3].name, "disk.sdc.rd_ios");
	assert_int_equal(s->cols[3].source, 1);
	assert_string_equal(s->cols[4].key, "6695eb01-f6a4-8304-79aa-97f2502e193f");
	assert_string_equal(s->cols[0].key, "");
	assert_int_equal(vms_schema_find(s, "vm.web1.cpu_time"), 4);
	assert_int_equal(vms_schema_find(s, "nope"), -ENOENT);
	vms_schema_unref(s);
}

static void test_same_columns(void **state)
{
	(void)state;
	struct vms_schema *a = build(1, 2), *b = build(2, 2), *c = build(3, 3);
	assert_true(vms_schema_same_columns(a, b));
	assert_false(vms_schema_same_columns(a, c));
	struct vms_schema *copy = NULL;
	assert_int_equal(vms_schema_new(9, 0, c->ncols, c->cols, &copy), 0);
	assert_true(vms_schema_same_columns(c, copy));
	assert_int_equal(copy->gen, 9);
	vms_schema_unref(a);
	vms_schema_unref(b);
	vms_schema_unref(c);
	vms_schema_unref(copy);
}

static void test_refcount(void **state)
{
	(void)state;
	struct vms_schema *a = build(1, 1);
	assert_ptr_equal(vms_schema_ref(a), a);
	assert_int_equal(a->refs, 2);
	vms_schema_unref(a);
	assert_int_equal(a->refs, 1);
	vms_schema_unref(a); /* freed: ASan would catch a double free below */
	vms_schema_unref(NULL);
}

static void test_name_too_long(void **state)
{
	(void)state;
	struct vms_schema_builder b;
	char big[600];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	vms_schema_builder_init(&b);
	assert_int_equal(vms_schema_addf(&b, &ctr, "net.%s.rx_bytes", big), -ENAMETOOLONG);
	/* sticky */
	assert_int_equal(vms_schema_addf(&b, &ctr, "ok"), -ENAMETOOLONG);
	struct vms_schema *s = NULL;
	assert_int_equal(vms_schema_finish(&b, 1, 0, &s), -ENAMETOOLONG);
	vms_schema_builder_free(&b);
}

VMS_TEST_MAIN(NULL, NULL,
	test_build, test_same_columns, test_refcount, test_name_too_long)

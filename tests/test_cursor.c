/* SPDX-License-Identifier: MIT */
#include "testutil.h"

#include <string.h>

#include "cursor.h"

static struct vms_cur cur(const char *s)
{
	struct vms_cur c;
	vms_cur_init(&c, s, strlen(s));
	return c;
}

static void test_u64(void **state)
{
	(void)state;
	struct vms_cur c = cur("  0 42\t18446744073709551615 7");
	assert_int_equal(vms_cur_u64(&c), 0);
	assert_int_equal(vms_cur_u64(&c), 42);
	assert_true(vms_cur_u64(&c) == UINT64_MAX);
	assert_int_equal(vms_cur_u64(&c), 7);
	assert_true(vms_cur_ok(&c));
	/* end of region: ENODATA */
	vms_cur_u64(&c);
	assert_int_equal(c.err, -ENODATA);
}

static void test_u64_errors(void **state)
{
	(void)state;
	struct vms_cur c = cur("18446744073709551616");
	assert_int_equal(vms_cur_u64(&c), 0);
	assert_int_equal(c.err, -ERANGE);

	c = cur("12x");
	vms_cur_u64(&c);
	assert_int_equal(c.err, -EINVAL);

	c = cur("-1");
	vms_cur_u64(&c);
	assert_int_equal(c.err, -EINVAL);

	/* sticky: after an error every read gives 0 and the first error stays */
	c = cur("x 5");
	vms_cur_u64(&c);
	c.p += 1;
	assert_int_equal(vms_cur_u64(&c), 0);
	assert_int_equal(c.err, -EINVAL);
}

static void test_u64_sep(void **state)
{
	(void)state;
	struct vms_cur c = cur("1/719 x");
	assert_int_equal(vms_cur_u64_sep(&c, '/'), 1);
	assert_int_equal(vms_cur_u64(&c), 719);
	assert_true(vms_cur_ok(&c));
	c = cur("1 719");
	vms_cur_u64_sep(&c, '/');
	assert_int_equal(c.err, -EINVAL);
}

static void test_fixed(void **state)
{
	(void)state;
	struct vms_cur c = cur("0.21 12.5 3 100.00");
	assert_int_equal(vms_cur_fixed(&c, 2), 21);
	assert_int_equal(vms_cur_fixed(&c, 2), 1250);
	assert_int_equal(vms_cur_fixed(&c, 2), 300);
	assert_int_equal(vms_cur_fixed(&c, 2), 10000);
	assert_true(vms_cur_ok(&c));
	const char *bad[] = {"0.123", ".5", "5.", "1.2.3", "a", "1,5"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		c = cur(bad[i]);
		vms_cur_fixed(&c, 2);
		assert_false(vms_cur_ok(&c));
	}
}

static void test_lines(void **state)
{
	(void)state;
	struct vms_cur c = cur("a b\n\nlast"), l;
	const char *t;
	size_t n;
	assert_true(vms_cur_line(&c, &l));
	assert_true(vms_cur_token(&l, &t, &n));
	assert_int_equal(n, 1);
	assert_memory_equal(t, "a", 1);
	assert_true(vms_cur_token(&l, &t, &n));
	assert_memory_equal(t, "b", 1);
	assert_false(vms_cur_token(&l, &t, &n));
	assert_true(vms_cur_line(&c, &l)); /* empty line */
	assert_true(vms_cur_eof(&l));
	assert_true(vms_cur_line(&c, &l)); /* no trailing newline */
	assert_int_equal(vms_cur_left(&l), 4);
	assert_false(vms_cur_line(&c, &l));
}

static void test_rest_blank(void **state)
{
	(void)state;
	struct vms_cur c = cur("1  \t");
	vms_cur_u64(&c);
	assert_true(vms_cur_rest_blank(&c));
	c = cur("1 x");
	vms_cur_u64(&c);
	assert_false(vms_cur_rest_blank(&c));
	assert_true(vms_cur_startswith(&c, " x", 2));
}

VMS_TEST_MAIN(NULL, NULL,
	test_u64, test_u64_errors, test_u64_sep, test_fixed, test_lines, test_rest_blank)

/* SPDX-License-Identifier: MIT */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fmt.h"

static const char *u64s(uint64_t v)
{
	static char b[32];
	*vms_fmt_u64(b, v) = '\0';
	return b;
}

static const char *fixed(uint64_t v, int scale)
{
	static char b[32];
	*vms_fmt_fixed(b, v, scale) = '\0';
	return b;
}

static void test_u64(void **state)
{
	(void)state;
	assert_string_equal(u64s(0), "0");
	assert_string_equal(u64s(9), "9");
	assert_string_equal(u64s(10), "10");
	assert_string_equal(u64s(UINT64_MAX), "18446744073709551615");
	/* against snprintf for a spread of values */
	char ref[32];
	for (uint64_t v = 1; v < UINT64_MAX / 3; v = v * 3 + 1) {
		snprintf(ref, sizeof(ref), "%llu", (unsigned long long)v);
		assert_string_equal(u64s(v), ref);
	}
}

static void test_fixed(void **state)
{
	(void)state;
	assert_string_equal(fixed(21, 2), "0.21");
	assert_string_equal(fixed(5, 2), "0.05");
	assert_string_equal(fixed(0, 2), "0.00");
	assert_string_equal(fixed(12345, 2), "123.45");
	assert_string_equal(fixed(100, 2), "1.00");
	assert_string_equal(fixed(7, 0), "7");
	assert_string_equal(fixed(UINT64_MAX, 3), "18446744073709551.615");
}

static void test_time(void **state)
{
	(void)state;
	/* expected strings computed with Python's datetime (independent) */
	static const struct {
		int64_t ns;
		int32_t off;
		const char *s;
	} cases[] = {
		{0, 0, "1970-01-01T00:00:00.000000+00:00"},
		{1795330903123456789LL, 19800, "2026-11-22T12:31:43.123456+05:30"},
		{951782400999999000LL, -18000, "2000-02-28T19:00:00.999999-05:00"},
		{4102444799000001000LL, 0, "2099-12-31T23:59:59.000001+00:00"},
	};
	char b[64];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		*vms_fmt_time(b, cases[i].ns, cases[i].off) = '\0';
		assert_string_equal(b, cases[i].s);
		assert_true(strlen(b) <= VMS_FMT_TIME_MAX);
	}
}

static void test_double(void **state)
{
	(void)state;
	char b[64];
	*vms_fmt_double(b, 1.005, 2) = '\0';
	assert_true(strcmp(b, "1.00") == 0 || strcmp(b, "1.01") == 0); /* binary 1.005 */
	*vms_fmt_double(b, 39.905, 2) = '\0';
	assert_true(strcmp(b, "39.90") == 0 || strcmp(b, "39.91") == 0);
	*vms_fmt_double(b, -2.5, 1) = '\0';
	assert_string_equal(b, "-2.5");
	*vms_fmt_double(b, 0.0049, 2) = '\0';
	assert_string_equal(b, "0.00");
	*vms_fmt_double(b, 222.144, 2) = '\0';
	assert_string_equal(b, "222.14");
	*vms_fmt_double(b, 1.0 / 0.0, 2) = '\0';
	assert_string_equal(b, "");
}

static void test_local_offset(void **state)
{
	(void)state;
	setenv("TZ", "Asia/Kolkata", 1);
	tzset();
	assert_int_equal(vms_local_gmtoff(1795330903000000000LL), 19800);
	setenv("TZ", "UTC", 1);
	tzset();
	assert_int_equal(vms_local_gmtoff(1795330903000000000LL), 0);
}

VMS_TEST_MAIN(NULL, NULL,
	test_u64, test_fixed, test_time, test_double, test_local_offset)

/* SPDX-License-Identifier: MIT */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "name.h"
#include "reftext.h"
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


static bool ref_valid(const char *s, size_t n)
{
	return vms_ref_text_ok(s, n, false);
}

static void check_escape(const char *in, size_t n)
{
	char out[4 * 64 + 1], back[4 * 64 + 1];
	assert_true(n <= 64);
	size_t len = vms_name_escape(out, sizeof(out), in, n);
	assert_int_equal(len, strlen(out));
	assert_true(ref_valid(out, len));
	assert_int_equal(vms_ref_unescape(out, back), n);
	assert_memory_equal(back, in, n);
	/* valid means: escaping changes only backslashes */
	bool has_bs = memchr(in, '\\', n) != NULL;
	assert_int_equal(vms_name_valid(in, n), ref_valid(in, n) && !memchr(in, 0, n));
	if (vms_name_valid(in, n) && !has_bs)
		assert_true(len == n && memcmp(out, in, n) == 0);
}

static void test_name_escape(void **state)
{
	(void)state;
	static const struct {
		const char *in, *out;
	} cases[] = {
		{"eth0", "eth0"},
		{"\xff\xfe", "\\xff\\xfe"},
		{"a\\b", "a\\\\b"},
		{"\\xff", "\\\\xff"}, /* a name that is the escape of another stays distinct */
		{"t\x1b[31m\n", "t\\x1b[31m\\x0a"},
		{"\x7f", "\\x7f"},
		{"\xc2\x9b", "\\xc2\\x9b"},  /* U+009B CSI, a C1 control */
		{"\xc2\xa0\xc3\xa9", "\xc2\xa0\xc3\xa9"}, /* U+00A0, é */
		{"\xe2\x82\xac\xf0\x9f\x98\x80", "\xe2\x82\xac\xf0\x9f\x98\x80"}, /* €, emoji */
		{"\xc0\xaf", "\\xc0\\xaf"},  /* overlong '/' */
		{"\xed\xa0\x80", "\\xed\\xa0\\x80"}, /* a surrogate */
		{"\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"}, /* above U+10FFFF */
		{"\xe2\x82", "\\xe2\\x82"},  /* cut short */
		{"\xe2\x80\xa8", "\\xe2\\x80\\xa8"}, /* U+2028 */
	};
	for (size_t i = 0; i < VMS_ARRAY_SIZE(cases); i++) {
		char out[64];
		vms_name_escape(out, sizeof(out), cases[i].in, strlen(cases[i].in));
		assert_string_equal(out, cases[i].out);
		check_escape(cases[i].in, strlen(cases[i].in));
	}
	/* every byte, and random strings, against the reference */
	for (unsigned c = 0; c < 256; c++) {
		char one = (char)c;
		check_escape(&one, 1);
	}
	srand(23);
	for (int k = 0; k < 20000; k++) {
		char in[64];
		size_t n = (size_t)(rand() % 64);
		for (size_t i = 0; i < n; i++)
			in[i] = (char)(k & 1 ? 0x80 | rand() : rand()); /* half of them mostly multi-byte */
		check_escape(in, n);
	}
	/* a cut output stays NUL-terminated */
	char small[3];
	assert_int_equal(vms_name_escape(small, sizeof(small), "\xff", 1), 4);
	assert_string_equal(small, ""); /* never half an escape */
	assert_int_equal(vms_name_escape(small, sizeof(small), "a\xe2\x82\xac", 4), 4);
	assert_string_equal(small, "a"); /* never half a character */
}

static void test_name_fit(void **state)
{
	(void)state;
	char out[VMS_NAME_PART_MAX + 1], esc[4 * VMS_NAME_PART_MAX + 1];
	char a[600], b2[600];
	/* short enough: as it is */
	memset(a, 'v', VMS_NAME_PART_MAX);
	a[VMS_NAME_PART_MAX] = 0;
	assert_false(vms_name_fit(out, VMS_NAME_PART_MAX, a, VMS_NAME_PART_MAX));
	assert_string_equal(out, a);
	/* one byte more, or escapes that make it longer: shortened, and two
	 * names that differ only at their end stay distinct */
	memset(a, 'v', 590);
	a[590] = 0;
	memcpy(b2, a, sizeof(a));
	b2[589] = 'w';
	assert_true(vms_name_fit(out, VMS_NAME_PART_MAX, a, 590));
	size_t l1 = vms_name_escape(esc, sizeof(esc), out, strlen(out));
	assert_true(l1 <= VMS_NAME_PART_MAX);
	char first[VMS_NAME_PART_MAX + 1];
	strcpy(first, out);
	assert_true(vms_name_fit(out, VMS_NAME_PART_MAX, b2, 590));
	assert_string_not_equal(first, out);
	assert_int_equal(strncmp(first, out, VMS_NAME_PART_MAX - 17), 0);
	assert_int_equal(out[VMS_NAME_PART_MAX - 17], '~');
	/* 41 bytes that escape to 164 */
	assert_true(vms_name_fit(out, VMS_NAME_PART_MAX, "\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"
				      "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff",
				 41));
	assert_true(vms_name_escape(esc, sizeof(esc), out, strlen(out)) <= VMS_NAME_PART_MAX);
	assert_true(ref_valid(esc, strlen(esc)));
	/* a multi-byte character is never cut */
	for (int i = 0; i < 100; i++)
		memcpy(a + 3 * i, "\xe2\x82\xac", 3);
	assert_true(vms_name_fit(out, VMS_NAME_PART_MAX, a, 300));
	vms_name_escape(esc, sizeof(esc), out, strlen(out));
	assert_string_equal(esc, out);
	assert_true(ref_valid(out, strlen(out)));
}

static void test_fnv_vector(void **state)
{
	(void)state;
	/* the suffix is FNV-1a 64 of the whole name, computed here from the
	 * algorithm's definition, checked on its reference vector ("a" ->
	 * af63dc4c8601ec8c, from the FNV authors' test suite) */
	char a[200], out[VMS_NAME_PART_MAX + 1], want[17];
	memset(a, 'a', sizeof(a));
	uint64_t h = 0xcbf29ce484222325ull;
	assert_true(((h ^ 'a') * 0x100000001b3ull) == 0xaf63dc4c8601ec8cull);
	for (size_t i = 0; i < sizeof(a); i++)
		h = (h ^ 'a') * 0x100000001b3ull;
	snprintf(want, sizeof(want), "%016llx", (unsigned long long)h);
	assert_true(vms_name_fit(out, VMS_NAME_PART_MAX, a, sizeof(a)));
	assert_string_equal(out + VMS_NAME_PART_MAX - 16, want);
}

/* The schema escapes what sources give it, and a decoder's names only if
 * they are not valid (a file of an older sampler). */
static void test_schema_escapes(void **state)
{
	(void)state;
	struct vms_schema_builder b;
	struct vms_schema *s = NULL;
	vms_schema_builder_init(&b);
	assert_int_equal(vms_schema_addf(&b, &ctr, "net.%s.rx_bytes", "\xff"), 0);
	assert_int_equal(vms_schema_addf(&b, &ctr, "net.%s.rx_bytes", "\xfe"), 1);
	assert_int_equal(vms_schema_addf(&b, &ctr, "net.%s.rx_bytes", "\\xff"), 2);
	assert_int_equal(vms_schema_finish(&b, 1, 0, &s), 0);
	assert_string_equal(s->cols[0].name, "net.\\xff.rx_bytes");
	assert_string_equal(s->cols[1].name, "net.\\xfe.rx_bytes");
	assert_string_equal(s->cols[2].name, "net.\\\\xff.rx_bytes");
	struct vms_schema *d = NULL;
	assert_int_equal(vms_schema_new(2, 0, s->ncols, s->cols, &d), 0);
	for (uint32_t i = 0; i < s->ncols; i++)
		assert_string_equal(d->cols[i].name, s->cols[i].name);
	vms_schema_unref(d);
	struct vms_col raw = s->cols[0];
	raw.name = "net.\x1b[2J.rx_bytes";
	assert_int_equal(vms_schema_new(3, 0, 1, &raw, &d), 0);
	assert_string_equal(d->cols[0].name, "net.\\x1b[2J.rx_bytes");
	vms_schema_unref(d);
	vms_schema_unref(s);
}

VMS_TEST_MAIN(NULL, NULL,
	test_build, test_same_columns, test_refcount, test_name_too_long,
	test_name_escape, test_name_fit, test_fnv_vector, test_schema_escapes)

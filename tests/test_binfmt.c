/* SPDX-License-Identifier: MIT */
/* The binary stream: varints, records, the bin sink, the decoder, and the
 * acceptance test "binary write -> dump equals the CSV sink's output". */
#include "testutil.h"
#include "allocwrap.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "binfmt.h"
#include "binutil.h"
#include "crc32c.h"
#include "dump.h"
#include "hostid.h"
#include "le.h"
#include "ring.h"

/* ---- allocation counting (the link wraps malloc, calloc, realloc) -------- */



/* ---- varints and zigzag ------------------------------------------------- */

static void test_varint_edges(void **state)
{
	(void)state;
	static const uint64_t v[] = {
		0, 1, 127, 128, 16383, 16384, UINT32_MAX, 1ull << 63, UINT64_MAX - 1, UINT64_MAX,
	};
	static const size_t len[] = {1, 1, 1, 2, 2, 3, 5, 10, 10, 10};
	for (size_t i = 0; i < VMS_ARRAY_SIZE(v); i++) {
		uint8_t b[VMS_VARINT_MAX + 1];
		uint8_t *e = vms_varint_put(b, v[i]);
		assert_int_equal((size_t)(e - b), len[i]);
		assert_int_equal(vms_varint_len(v[i]), len[i]);
		const uint8_t *p = b;
		uint64_t got;
		assert_int_equal(vms_varint_get(&p, e, &got), 0);
		assert_int_equal(got, v[i]);
		assert_ptr_equal(p, e);
		/* every truncation fails */
		for (size_t cut = 0; cut < len[i]; cut++) {
			p = b;
			assert_int_equal(vms_varint_get(&p, b + cut, &got), -EBADMSG);
		}
	}
	/* UINT64_MAX ends with 0x01; anything above 64 bits is rejected */
	uint8_t b[12];
	memset(b, 0xff, 9);
	b[9] = 0x01;
	const uint8_t *p = b;
	uint64_t got;
	assert_int_equal(vms_varint_get(&p, b + 10, &got), 0);
	assert_int_equal(got, UINT64_MAX);
	b[9] = 0x02;
	p = b;
	assert_int_equal(vms_varint_get(&p, b + 10, &got), -EBADMSG);
	b[9] = 0x81;
	b[10] = 0x00;
	p = b;
	assert_int_equal(vms_varint_get(&p, b + 11, &got), -EBADMSG);
}

static void test_zigzag_edges(void **state)
{
	(void)state;
	assert_int_equal(vms_zigzag(0), 0);
	assert_int_equal(vms_zigzag((uint64_t)-1), 1);
	assert_int_equal(vms_zigzag(1), 2);
	assert_int_equal(vms_zigzag((uint64_t)INT64_MAX), UINT64_MAX - 1);
	/* the one difference with no delta code: 2^63 (== -2^63 mod 2^64) */
	assert_int_equal(vms_zigzag(1ull << 63), UINT64_MAX);
	static const uint64_t d[] = {0, 1, (uint64_t)-1, 1ull << 62, (uint64_t)INT64_MAX,
				     1ull << 63, UINT64_MAX - 1, 12345678901234ull};
	for (size_t i = 0; i < VMS_ARRAY_SIZE(d); i++)
		assert_int_equal(vms_unzigzag(vms_zigzag(d[i])), d[i]);
}

/* Value codes of one DATA record: missing is 0, values near 2^64 survive,
 * and a delta of 2^63 turns the record into a keyframe. */
static void test_data_values(void **state)
{
	(void)state;
	struct colspec cs[4] = {
		{"a", VMS_KIND_COUNTER, VMS_UNIT_COUNT, 64, 0},
		{"b", VMS_KIND_COUNTER, VMS_UNIT_COUNT, 64, 0},
		{"c", VMS_KIND_COUNTER, VMS_UNIT_COUNT, 64, 0},
		{"d", VMS_KIND_GAUGE, VMS_UNIT_COUNT, 0, 0},
	};
	struct vms_schema *s = mk_schema(1, cs, 4);
	static const uint64_t rows[][4] = {
		{0, UINT64_MAX - 1, VMS_VALUE_NONE, 5},
		{1ull << 63, 0, 7, VMS_VALUE_NONE},             /* a: +2^63 -> keyframe */
		{(1ull << 63) + 1, UINT64_MAX - 1, 8, 0},        /* deltas */
		{1, 1, VMS_VALUE_NONE, UINT64_MAX - 1},          /* a: -2^63 -> keyframe */
		{2, 2, 3, 4},
	};
	static const bool key[] = {true, true, false, true, false};
	uint8_t buf[4096];
	size_t len = vms_bin_header_enc(buf, 42);
	len += vms_bin_schema_enc(buf + len, s);
	uint64_t prev[4] = {0};
	struct vms_frame *f = calloc(1, vms_frame_size(4));
	for (size_t i = 0; i < VMS_ARRAY_SIZE(rows); i++) {
		*f = (struct vms_frame){.seq = i + 1, .gen = 1, .ncols = 4, .t_mono_ns = i};
		memcpy(f->v, rows[i], sizeof(rows[i]));
		bool k;
		len += vms_bin_data_enc(buf + len, f, prev, i == 0, &k);
		assert_int_equal(k, key[i]);
	}
	struct vms_bin_dec d;
	assert_int_equal(vms_bin_dec_open_mem(&d, buf, len), 0);
	assert_int_equal(vms_bin_dec_next(&d), VMS_BIN_HEADER);
	assert_int_equal(d.created_real_ns, 42);
	assert_int_equal(vms_bin_dec_next(&d), VMS_BIN_SCHEMA);
	for (size_t i = 0; i < VMS_ARRAY_SIZE(rows); i++) {
		assert_int_equal(vms_bin_dec_next(&d), VMS_BIN_DATA);
		assert_int_equal(d.keyframe, key[i]);
		for (int k = 0; k < 4; k++)
			assert_int_equal(d.frame->v[k], rows[i][k]);
	}
	assert_int_equal(vms_bin_dec_next(&d), VMS_BIN_END);
	assert_false(d.torn);
	assert_int_equal(d.nrec, 1 + VMS_ARRAY_SIZE(rows));
	vms_bin_dec_close(&d);
	free(f);
	vms_schema_unref(s);
}

/* ---- the sink and the decoder -------------------------------------------- */

/* Decode a whole buffer; check every frame against the run, events,
 * schemas, and the keyframe rule. Returns the number of frames. */
static size_t check_stream(const uint8_t *b, size_t len, const struct run *r, size_t first)
{
	struct vms_bin_dec d;
	size_t fi = first, since_key = 0;
	bool after_schema = false;
	uint64_t prevv[256] = {0};
	int it;
	assert_int_equal(vms_bin_dec_open_mem(&d, b, len), 0);
	while ((it = vms_bin_dec_next(&d)) > 0) {
		if (it == VMS_BIN_SCHEMA) {
			assert_true(fi < r->n);
			assert_true(vms_schema_same_columns(d.schema, r->sch[fi]));
			assert_int_equal(d.schema->gen, r->sch[fi]->gen);
			after_schema = true;
		} else if (it == VMS_BIN_DATA) {
			assert_true(fi < r->n);
			const struct vms_frame *o = r->f[fi];
			assert_frame_eq(d.frame, o);
			/* keyframe: after a SCHEMA, at least every 64 records, or
			 * forced by a difference of 2^63 */
			bool forced = false;
			for (uint32_t k = 0; k < o->ncols; k++)
				if (o->v[k] != VMS_VALUE_NONE && o->v[k] - prevv[k] == 1ull << 63)
					forced = true;
			bool want = after_schema || since_key >= 63 || forced;
			assert_int_equal(d.keyframe, want);
			since_key = d.keyframe ? 0 : since_key + 1;
			after_schema = false;
			for (uint32_t k = 0; k < o->ncols; k++)
				prevv[k] = o->v[k] == VMS_VALUE_NONE ? 0 : o->v[k];
			fi++;
		} else if (it == VMS_BIN_EVENT) {
			assert_int_equal(d.event.before_seq, r->f[fi]->seq);
			char want[80];
			snprintf(want, sizeof(want), "source-%zu", fi);
			assert_string_equal(d.event.subject, want);
			assert_int_equal(d.event.type, VMS_EV_SOURCE_FAILED);
		}
	}
	assert_int_equal(it, VMS_BIN_END);
	assert_false(d.torn);
	vms_bin_dec_close(&d);
	return fi - first;
}

/* The HOST record: the values set come back in the decoder's pairs, in
 * key order, empty ones left out; a later HOST replaces the earlier; a
 * pair count past the limit, a string past the payload and a NUL in a
 * value are damage, named by record number. */
static void test_host_record(void **state)
{
	(void)state;
	struct colspec cs[1] = {{"a", VMS_KIND_COUNTER, VMS_UNIT_COUNT, 64, 0}};
	struct vms_schema *s = mk_schema(1, cs, 1);
	struct vms_hostid h;
	memset(&h, 0, sizeof(h));
	vms_hostid_set(&h, VMS_HK_HOSTNAME, "host-%c", 'a');
	vms_hostid_set(&h, VMS_HK_KERNEL, "6.1.0\t-x"); /* a tab is escaped (name.h) */
	vms_hostid_set_version(&h, VMS_HK_HYPERVISOR_VERSION, 7002001);
	uint8_t buf[4096];
	size_t len = vms_bin_header_enc(buf, 1);
	size_t hs = vms_bin_host_size(&h);
	assert_int_equal(vms_bin_host_enc(buf + len, &h), hs);
	len += hs;
	vms_hostid_set(&h, VMS_HK_HOSTNAME, "host-b");
	len += vms_bin_host_enc(buf + len, &h);
	len += vms_bin_schema_enc(buf + len, s);
	struct vms_bin_dec d;
	assert_int_equal(vms_bin_dec_open_mem(&d, buf, len), 0);
	assert_int_equal(vms_bin_dec_next(&d), VMS_BIN_HEADER);
	assert_null(d.host);
	assert_int_equal(vms_bin_dec_next(&d), VMS_BIN_SCHEMA); /* HOST is not an item */
	assert_int_equal(d.nhosts, 2);
	assert_int_equal(d.host_n, 3);
	static const char want[] = "hostname\0host-b\0kernel\0" "6.1.0\\x09-x\0hypervisor_version\0" "7.2.1";
	assert_int_equal(d.host_len, sizeof(want));
	assert_memory_equal(d.host, want, sizeof(want));
	vms_bin_dec_close(&d);

	/* damage: too many pairs; a value with a NUL (CRCs made valid) */
	uint8_t bad[64];
	size_t b0 = vms_bin_header_enc(bad, 1);
	static const uint8_t payloads[][8] = {{0x81, 0x02}, {1, 1, 'k', 2, 'v', 0}};
	static const size_t plen[] = {2, 6};
	for (size_t i = 0; i < 2; i++) {
		uint8_t *p = bad + b0;
		memcpy(p + 12, payloads[i], plen[i]);
		vms_le_put32(p, (uint32_t)plen[i]);
		vms_le_put16(p + 4, VMS_REC_HOST);
		vms_le_put16(p + 6, 0);
		vms_le_put32(p + 8, vms_crc32c(0, p, 8));
		vms_le_put32(p + 12 + plen[i], vms_crc32c(0, p + 12, plen[i]));
		assert_int_equal(vms_bin_dec_open_mem(&d, bad, b0 + 16 + plen[i]), 0);
		assert_int_equal(vms_bin_dec_next(&d), VMS_BIN_HEADER);
		assert_int_equal(vms_bin_dec_next(&d), -EBADMSG);
		assert_int_equal(d.err, VMS_BIN_EMALFORMED);
		assert_int_equal(d.err_index, 1);
		assert_non_null(strstr(d.err_msg, "HOST"));
		vms_bin_dec_close(&d);
	}
	vms_schema_unref(s);
}

static void test_sink_roundtrip_decoder(void **state)
{
	(void)state;
	struct run r;
	run_make(&r, 300);
	assert_int_equal(feed_sink(&vms_sink_bin, tp("a.vms"), &r, 0, r.n, true), 0);
	size_t len;
	uint8_t *b = slurp(tp("a.vms"), &len);
	assert_int_equal(check_stream(b, len, &r, 0), r.n);
	/* a 200-column delta record is far below 10 bytes per value */
	assert_true(len < 300 * (VMS_BIN_REC_OVERHEAD + VMS_BIN_DATA_FIXED + 200 * 4));
	free(b);
	run_free(&r);
}

/* The acceptance test: frames -> bin sink -> file -> `dump` -> CSV equals
 * the CSV sink fed the same frames, byte for byte, with the roll-over to
 * out.g2.csv, out.g3.csv at generation changes. */
static void test_dump_equals_csv_sink_files(void **state)
{
	(void)state;
	struct run r;
	run_make(&r, 300);
	assert_int_equal(feed_sink(&vms_sink_bin, tp("x.vms"), &r, 0, r.n, true), 0);
	assert_int_equal(feed_sink(&vms_sink_csv, tp("direct.csv"), &r, 0, r.n, false), 0);
	char *argv[] = {"dump", (char *)tp("x.vms"), "-o", (char *)tp("dumped.csv"), NULL};
	assert_int_equal(vms_dump_main(4, argv), 0);
	assert_true(same_file(tp("direct.csv"), tp("dumped.csv")));
	assert_true(same_file(tp("direct.g2.csv"), tp("dumped.g2.csv")));
	assert_true(same_file(tp("direct.g3.csv"), tp("dumped.g3.csv")));
	/* and the split is really there: 120 + 60 + 120 rows plus headers */
	size_t len;
	uint8_t *b = slurp(tp("dumped.g3.csv"), &len);
	size_t lines = 0;
	for (size_t i = 0; i < len; i++)
		lines += b[i] == '\n';
	assert_int_equal(lines, 121);
	free(b);
	run_free(&r);
}

/* Same on stdout, where the CSV sink keeps the first header and projects
 * later generations onto it. */
static void test_dump_equals_csv_sink_stdout(void **state)
{
	(void)state;
	struct run r;
	run_make(&r, 200);
	assert_int_equal(feed_sink(&vms_sink_bin, tp("y.vms"), &r, 0, r.n, true), 0);

	fflush(stdout);
	int saved = dup(1);
	int fd = open(tp("direct-stdout.csv"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	dup2(fd, 1);
	close(fd);
	int e = feed_sink(&vms_sink_csv, "-", &r, 0, r.n, false);
	fd = open(tp("dump-stdout.csv"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	dup2(fd, 1);
	close(fd);
	char *argv[] = {"dump", (char *)tp("y.vms"), NULL};
	int rc = vms_dump_main(2, argv);
	dup2(saved, 1);
	close(saved);
	assert_int_equal(e, 0);
	assert_int_equal(rc, 0);
	assert_true(same_file(tp("direct-stdout.csv"), tp("dump-stdout.csv")));
	run_free(&r);
}

/* SIGHUP: the sink reopens in append mode; the part after it starts with a
 * SCHEMA and a keyframe and the whole file still decodes. */
static void test_reopen_appends(void **state)
{
	(void)state;
	struct run r;
	run_make(&r, 100);
	struct vms_sink s = {.ops = &vms_sink_bin, .path = tp("r.vms")};
	s.priv = calloc(1, vms_sink_bin.priv_size);
	assert_int_equal(vms_sink_bin.open(&s), 0);
	const struct vms_schema *begun = NULL;
	for (size_t i = 0; i < r.n; i++) {
		if (i == 70) /* logrotate moves the file away */
			assert_int_equal(rename(tp("r.vms"), tp("r.1.vms")), 0);
		if (i == 30 || i == 31 || i == 70) {
			assert_int_equal(vms_sink_bin.reopen(&s), 0);
			begun = NULL; /* the loop begins again */
		}
		if (r.sch[i] != begun) {
			assert_int_equal(vms_sink_bin.begin(&s, r.sch[i]), 0);
			begun = r.sch[i];
		}
		assert_int_equal(vms_sink_bin.write(&s, r.sch[i], r.f[i]), 0);
		assert_int_equal(vms_sink_bin.flush(&s), 0);
	}
	assert_int_equal(vms_sink_bin.close(&s), 0);
	free(s.priv);

	size_t len;
	struct vms_bin_dec d;
	int it;
	size_t frames = 0, schemas = 0, headers = 0;
	uint8_t *b = slurp_dec(tp("r.1.vms"), &len, &d);
	while ((it = vms_bin_dec_next(&d)) > 0) {
		headers += it == VMS_BIN_HEADER;
		schemas += it == VMS_BIN_SCHEMA;
		if (it == VMS_BIN_DATA) {
			assert_frame_eq(d.frame, r.f[frames]);
			if (frames == 30 || frames == 31)
				assert_true(d.keyframe);
			frames++;
		}
	}
	assert_int_equal(it, VMS_BIN_END);
	assert_int_equal(frames, 70);
	assert_int_equal(headers, 1);     /* appended to a non-empty file */
	assert_int_equal(schemas, 3 + 2); /* gen 1 three times, gens 2, 3 once */
	vms_bin_dec_close(&d);
	free(b);
	/* the new file after the rotation stands on its own */
	headers = schemas = 0;
	b = slurp_dec(tp("r.vms"), &len, &d);
	while ((it = vms_bin_dec_next(&d)) > 0) {
		headers += it == VMS_BIN_HEADER;
		schemas += it == VMS_BIN_SCHEMA;
		if (it == VMS_BIN_DATA)
			assert_frame_eq(d.frame, r.f[frames++]);
	}
	assert_int_equal(it, VMS_BIN_END);
	assert_int_equal(frames, r.n);
	assert_int_equal(headers, 1);
	assert_int_equal(schemas, 1);
	vms_bin_dec_close(&d);
	free(b);
	run_free(&r);
}

/* Truncate at every offset inside the last two records: every complete
 * record is recovered, the tail is reported with its offset and length. */
static void test_torn_tail_every_offset(void **state)
{
	(void)state;
	struct run r;
	run_make(&r, 150);
	assert_int_equal(feed_sink(&vms_sink_bin, tp("t.vms"), &r, 0, r.n, true), 0);
	size_t len;
	/* record offsets */
	uint64_t offs[1024];
	size_t nrec = 0;
	struct vms_bin_dec d;
	int it;
	uint8_t *b = slurp_dec(tp("t.vms"), &len, &d);
	while ((it = vms_bin_dec_next(&d)) > 0)
		if (it != VMS_BIN_HEADER)
			offs[nrec++] = d.rec_off;
	vms_bin_dec_close(&d);
	assert_true(nrec > 2);
	for (size_t cut = offs[nrec - 2]; cut < len; cut++) {
		/* an exact-size copy: ASan catches any read past the end */
		uint8_t *c = malloc(cut);
		memcpy(c, b, cut);
		size_t complete = cut < offs[nrec - 1] ? nrec - 2 : nrec - 1;
		uint64_t at = offs[complete];
		assert_int_equal(vms_bin_dec_open_mem(&d, c, cut), 0);
		size_t frames = 0;
		while ((it = vms_bin_dec_next(&d)) > 0)
			if (it == VMS_BIN_DATA)
				assert_frame_eq(d.frame, r.f[frames++]);
		assert_int_equal(it, VMS_BIN_END);
		assert_int_equal(d.nrec, complete);
		if (cut == at) {
			assert_false(d.torn); /* ends on a boundary */
		} else {
			assert_true(d.torn);
			assert_int_equal(d.torn_off, at);
			assert_int_equal(d.torn_len, cut - at);
		}
		vms_bin_dec_close(&d);
		free(c);
	}
	/* the same through a file descriptor */
	spit(tp("t2.vms"), b, len - 3);
	int fd = open(tp("t2.vms"), O_RDONLY);
	assert_int_equal(vms_bin_dec_open_fd(&d, fd), 0);
	while ((it = vms_bin_dec_next(&d)) > 0)
		;
	assert_int_equal(it, VMS_BIN_END);
	assert_true(d.torn);
	assert_int_equal(d.torn_off, offs[nrec - 1]);
	assert_int_equal(d.nrec, nrec - 1);
	vms_bin_dec_close(&d);
	close(fd);
	free(b);
	run_free(&r);
}

/* A short stream cut at every byte, the file header included. */
static void test_torn_everywhere_small(void **state)
{
	(void)state;
	struct run r;
	run_make(&r, 20);
	assert_int_equal(feed_sink(&vms_sink_bin, tp("s.vms"), &r, 0, 8, true), 0);
	size_t len;
	uint8_t *b = slurp(tp("s.vms"), &len);
	for (size_t cut = 0; cut <= len; cut++) {
		uint8_t *c = malloc(cut ? cut : 1);
		memcpy(c, b, cut);
		struct vms_bin_dec d;
		int it;
		size_t frames = 0;
		assert_int_equal(vms_bin_dec_open_mem(&d, c, cut), 0);
		while ((it = vms_bin_dec_next(&d)) > 0)
			if (it == VMS_BIN_DATA)
				assert_frame_eq(d.frame, r.f[frames++]);
		assert_int_equal(it, VMS_BIN_END);
		if (cut < VMS_FMT_HEADER_SIZE) {
			assert_true(d.torn);
			assert_int_equal(d.torn_off, 0);
			assert_int_equal(d.nrec, 0);
		}
		if (cut == len)
			assert_false(d.torn);
		vms_bin_dec_close(&d);
		free(c);
	}
	free(b);
	run_free(&r);
}

/* Zeros after the last record (a file system's crash tail) are a torn
 * tail; zeros followed by data are damage. */
static void test_zero_tail(void **state)
{
	(void)state;
	struct run r;
	run_make(&r, 20);
	assert_int_equal(feed_sink(&vms_sink_bin, tp("z.vms"), &r, 0, 10, false), 0);
	size_t len;
	uint8_t *b = slurp(tp("z.vms"), &len);
	uint8_t *c = calloc(1, len + 4096 + len);
	memcpy(c, b, len);
	struct vms_bin_dec d;
	int it;
	assert_int_equal(vms_bin_dec_open_mem(&d, c, len + 4096), 0);
	while ((it = vms_bin_dec_next(&d)) > 0)
		;
	assert_int_equal(it, VMS_BIN_END);
	assert_true(d.torn);
	assert_int_equal(d.torn_off, len);
	assert_int_equal(d.torn_len, 4096);
	assert_int_equal(d.nframes, 10);
	vms_bin_dec_close(&d);
	/* zeros, then the records again (without the file header) */
	memcpy(c + len + 4096, b + VMS_FMT_HEADER_SIZE, len - VMS_FMT_HEADER_SIZE);
	assert_int_equal(vms_bin_dec_open_mem(&d, c, 2 * len + 4096 - VMS_FMT_HEADER_SIZE), 0);
	while ((it = vms_bin_dec_next(&d)) > 0)
		;
	assert_int_equal(it, -EBADMSG);
	assert_int_equal(d.err, VMS_BIN_ECRC);
	assert_int_equal(d.err_off, len);
	vms_bin_dec_close(&d);
	free(c);
	free(b);
	run_free(&r);
}

/* Flip each byte of a middle record (a DATA and a SCHEMA): the decoder
 * names that record's offset and number, after returning everything
 * before it. */
static void flip_record(const uint8_t *b, size_t len, uint64_t off, uint64_t end, uint64_t index,
			size_t frames_before)
{
	uint8_t *c = malloc(len);
	for (uint64_t pos = off; pos < end; pos++) {
		for (int m = 0; m < 2; m++) {
			memcpy(c, b, len);
			c[pos] ^= m ? 0xff : 0x10;
			struct vms_bin_dec d;
			int it;
			size_t frames = 0;
			assert_int_equal(vms_bin_dec_open_mem(&d, c, len), 0);
			while ((it = vms_bin_dec_next(&d)) > 0)
				frames += it == VMS_BIN_DATA;
			assert_int_equal(it, -EBADMSG);
			assert_int_equal(d.err, VMS_BIN_ECRC);
			assert_int_equal(d.err_off, off);
			assert_int_equal(d.err_index, index);
			assert_int_equal(d.nrec, index - 1);
			assert_int_equal(frames, frames_before);
			/* sticky */
			assert_int_equal(vms_bin_dec_next(&d), -EBADMSG);
			vms_bin_dec_close(&d);
		}
	}
	free(c);
}

static void test_corruption_names_record(void **state)
{
	(void)state;
	struct run r;
	run_make(&r, 100);
	assert_int_equal(feed_sink(&vms_sink_bin, tp("c.vms"), &r, 0, r.n, true), 0);
	size_t len;
	struct vms_bin_dec d;
	int it;
	uint64_t offs[512], frames_at[512];
	int types[512];
	size_t n = 0, frames = 0;
	uint8_t *b = slurp_dec(tp("c.vms"), &len, &d);
	while ((it = vms_bin_dec_next(&d)) > 0) {
		if (it == VMS_BIN_HEADER)
			continue;
		offs[n] = d.rec_off;
		types[n] = it;
		frames_at[n] = frames;
		frames += it == VMS_BIN_DATA;
		n++;
	}
	vms_bin_dec_close(&d);
	offs[n] = len;
	size_t mid = n / 2;
	while (types[mid] != VMS_BIN_DATA)
		mid++;
	flip_record(b, len, offs[mid], offs[mid + 1], mid + 1, frames_at[mid]);
	size_t sch = 1;
	while (types[sch] != VMS_BIN_SCHEMA)
		sch++;
	flip_record(b, len, offs[sch], offs[sch + 1], sch + 1, frames_at[sch]);
	free(b);
	run_free(&r);
}

static size_t raw_record(uint8_t *p, uint16_t type, const void *pl, uint32_t n)
{
	uint8_t h[8] = {(uint8_t)n, (uint8_t)(n >> 8), (uint8_t)(n >> 16), (uint8_t)(n >> 24),
			(uint8_t)type, (uint8_t)(type >> 8), 0, 0};
	uint32_t hc = vms_crc32c(0, h, 8), pc = vms_crc32c(0, pl, n);
	memcpy(p, h, 8);
	for (int i = 0; i < 4; i++)
		p[8 + i] = (uint8_t)(hc >> (8 * i));
	memcpy(p + 12, pl, n);
	for (int i = 0; i < 4; i++)
		p[12 + n + i] = (uint8_t)(pc >> (8 * i));
	return 16 + n;
}

/* Unknown record types are skipped; a second stream after the first
 * (cat a.vms b.vms) decodes with its own generations. */
static void test_unknown_and_concatenated(void **state)
{
	(void)state;
	struct run r;
	run_make(&r, 50);
	assert_int_equal(feed_sink(&vms_sink_bin, tp("u.vms"), &r, 0, 10, false), 0);
	size_t len;
	/* header, schema, an unknown record, the rest; then the file again */
	struct vms_bin_dec d;
	uint8_t *b = slurp_dec(tp("u.vms"), &len, &d);
	uint8_t *c = malloc(2 * len + 200);
	assert_int_equal(vms_bin_dec_next(&d), VMS_BIN_HEADER);
	assert_int_equal(vms_bin_dec_next(&d), VMS_BIN_SCHEMA);
	size_t cut = (size_t)(d.base + d.pos);
	vms_bin_dec_close(&d);
	memcpy(c, b, cut);
	size_t n = cut + raw_record(c + cut, 77, "future things", 13);
	memcpy(c + n, b + cut, len - cut);
	n += len - cut;
	memcpy(c + n, b, len);
	n += len;
	int it;
	size_t frames = 0, headers = 0;
	assert_int_equal(vms_bin_dec_open_mem(&d, c, n), 0);
	while ((it = vms_bin_dec_next(&d)) > 0) {
		headers += it == VMS_BIN_HEADER;
		if (it == VMS_BIN_DATA) {
			assert_frame_eq(d.frame, r.f[frames % 10]);
			frames++;
		}
	}
	assert_int_equal(it, VMS_BIN_END);
	assert_int_equal(frames, 20);
	assert_int_equal(headers, 2);
	assert_int_equal(d.nskipped, 1);
	vms_bin_dec_close(&d);
	free(c);
	free(b);
	run_free(&r);
}

static void test_foreign_input(void **state)
{
	(void)state;
	struct vms_bin_dec d;
	uint8_t h[64];
	size_t n = vms_bin_header_enc(h, 1);
	assert_int_equal(n, VMS_FMT_HEADER_SIZE);

	assert_int_equal(vms_bin_dec_open_mem(&d, "seq,time,t_mono_ns\r\n1,2,3\r\n", 27), 0);
	assert_int_equal(vms_bin_dec_next(&d), -EBADMSG);
	assert_int_equal(d.err, VMS_BIN_ENOTVMS);
	vms_bin_dec_close(&d);

	uint8_t v2[64];
	memcpy(v2, h, n);
	v2[7] = 2; /* major version 2 */
	assert_int_equal(vms_bin_dec_open_mem(&d, v2, n), 0);
	assert_int_equal(vms_bin_dec_next(&d), -EBADMSG);
	assert_int_equal(d.err, VMS_BIN_EVERSION);
	vms_bin_dec_close(&d);

	memcpy(v2, h, n);
	v2[20] ^= 1; /* created time: header CRC */
	assert_int_equal(vms_bin_dec_open_mem(&d, v2, n), 0);
	assert_int_equal(vms_bin_dec_next(&d), -EBADMSG);
	assert_int_equal(d.err, VMS_BIN_ECRC);
	assert_int_equal(d.err_off, 0);
	vms_bin_dec_close(&d);

	/* a valid CRC around a malformed payload: a DATA before any SCHEMA,
	 * and a SCHEMA with a scale the CSV formatter could not print */
	uint8_t buf[256], pl[64] = {0};
	memcpy(buf, h, n);
	size_t m = n + raw_record(buf + n, VMS_REC_DATA, pl, 60);
	assert_int_equal(vms_bin_dec_open_mem(&d, buf, m), 0);
	assert_int_equal(vms_bin_dec_next(&d), VMS_BIN_HEADER);
	assert_int_equal(vms_bin_dec_next(&d), -EBADMSG);
	assert_int_equal(d.err, VMS_BIN_EMALFORMED);
	assert_int_equal(d.err_off, n);
	assert_int_equal(d.err_index, 1);
	vms_bin_dec_close(&d);
	static const uint8_t sch[] = {1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
				      2, 0, 0, 100, 1, 'x', 0};
	m = n + raw_record(buf + n, VMS_REC_SCHEMA, sch, sizeof(sch));
	assert_int_equal(vms_bin_dec_open_mem(&d, buf, m), 0);
	assert_int_equal(vms_bin_dec_next(&d), VMS_BIN_HEADER);
	assert_int_equal(vms_bin_dec_next(&d), -EBADMSG);
	assert_int_equal(d.err, VMS_BIN_EMALFORMED);
	vms_bin_dec_close(&d);
}

/* Steady-state write() and flush() allocate nothing. */
static void test_write_allocates_nothing(void **state)
{
	(void)state;
	struct run r;
	run_make(&r, 400);
	struct vms_sink s = {.ops = &vms_sink_bin, .path = tp("m.vms")};
	s.priv = calloc(1, vms_sink_bin.priv_size);
	assert_int_equal(vms_sink_bin.open(&s), 0);
	const struct vms_schema *begun = NULL;
	unsigned long in_write = 0, calls = 0;
	for (size_t i = 0; i < r.n; i++) {
		if (r.sch[i] != begun) {
			assert_int_equal(vms_sink_bin.begin(&s, r.sch[i]), 0); /* may allocate */
			begun = r.sch[i];
		}
		unsigned long before = test_allocs;
		int e = vms_sink_bin.write(&s, r.sch[i], r.f[i]);
		if (e == -EAGAIN) {
			assert_int_equal(vms_sink_bin.flush(&s), 0);
			e = vms_sink_bin.write(&s, r.sch[i], r.f[i]);
		}
		assert_int_equal(e, 0);
		if (i % 5 == 0)
			assert_int_equal(vms_sink_bin.flush(&s), 0);
		in_write += test_allocs - before;
		calls++;
	}
	assert_int_equal(calls, r.n);
	assert_int_equal(in_write, 0);
	/* the counter works: begin() of a larger schema does allocate */
	unsigned long before = test_allocs;
	struct colspec big[300];
	char names[300][8];
	for (int i = 0; i < 300; i++) {
		snprintf(names[i], sizeof(names[i]), "n%d", i);
		big[i] = (struct colspec){names[i], VMS_KIND_GAUGE, 0, 0, 0};
	}
	struct vms_schema *bs = mk_schema(9, big, 300);
	assert_int_equal(vms_sink_bin.begin(&s, bs), 0);
	assert_true(test_allocs > before);
	vms_schema_unref(bs);
	assert_int_equal(vms_sink_bin.close(&s), 0);
	free(s.priv);
	run_free(&r);
}

/* ---- disk full ------------------------------------------------------------ */

/* In a child: write frames until the output fails, then close.  Exit 0 if
 * the failure was seen and close() reported it. */
static void write_until_full(const char *path, const struct run *r, rlim_t fsize)
{
	if (fsize) {
		struct rlimit rl = {fsize, fsize};
		signal(SIGXFSZ, SIG_IGN);
		if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
			_exit(10);
	}
	struct vms_sink s = {.ops = &vms_sink_bin, .path = path};
	s.priv = calloc(1, vms_sink_bin.priv_size);
	if (vms_sink_bin.open(&s) < 0)
		_exit(11);
	const struct vms_schema *begun = NULL;
	int failed = 0;
	for (size_t i = 0; i < r->n; i++) {
		if (r->sch[i] != begun) {
			if (vms_sink_bin.begin(&s, r->sch[i]) < 0)
				break;
			begun = r->sch[i];
		}
		int e = vms_sink_bin.write(&s, r->sch[i], r->f[i]);
		if (e == -EAGAIN)
			break; /* buffer full behind the failed output */
		e = vms_sink_bin.flush(&s);
		if (e == -EFBIG || e == -ENOSPC)
			failed++;
		else if (e < 0 && e != -EAGAIN)
			_exit(12);
	}
	int e = vms_sink_bin.close(&s);
	_exit(failed && (e == -EFBIG || e == -ENOSPC) ? 0 : 13);
}

static void check_full_file(const char *path, const struct run *r, size_t limit)
{
	size_t len;
	uint8_t *b = slurp(path, &len);
	assert_non_null(b);
	assert_true(len <= limit);
	struct vms_bin_dec d;
	int it;
	size_t frames = 0;
	assert_int_equal(vms_bin_dec_open_mem(&d, b, len), 0);
	while ((it = vms_bin_dec_next(&d)) > 0)
		if (it == VMS_BIN_DATA)
			assert_frame_eq(d.frame, r->f[frames++]);
	/* the cut record was truncated away: clean end, no torn tail */
	assert_int_equal(it, VMS_BIN_END);
	assert_false(d.torn);
	assert_true(frames >= 1 && frames < r->n);
	vms_bin_dec_close(&d);
	free(b);
}

static void test_disk_full_rlimit(void **state)
{
	(void)state;
	struct run r;
	run_make(&r, 400);
	const size_t limit = 20000;
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		write_until_full(tp("full.vms"), &r, limit);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	check_full_file(tp("full.vms"), &r, limit);
	run_free(&r);
}

static void test_disk_full_tmpfs(void **state)
{
	(void)state;
	char mnt[PATH_MAX];
	snprintf(mnt, sizeof(mnt), "%s/mnt", test_tmp);
	assert_int_equal(mkdir(mnt, 0755), 0);
	if (mount("vmstest", mnt, "tmpfs", 0, "size=16k") < 0) {
		fprintf(stderr, "tmpfs mount not permitted (%s): covered by the RLIMIT_FSIZE test\n",
			strerror(errno));
		rmdir(mnt);
		vms_skip("VMS_REQUIRE_ROOT", "mounting a tmpfs needs root");
	}
	struct run r;
	run_make(&r, 400);
	char path[PATH_MAX + 16];
	snprintf(path, sizeof(path), "%s/full.vms", mnt);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		write_until_full(path, &r, 0);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	bool ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
	if (ok)
		check_full_file(path, &r, 16384);
	umount(mnt);
	rmdir(mnt);
	run_free(&r);
	assert_true(ok);
}

VMS_TEST_MAIN(tmp_setup, tmp_teardown,
	test_varint_edges, test_zigzag_edges, test_data_values, test_host_record, test_sink_roundtrip_decoder,
	test_dump_equals_csv_sink_files, test_dump_equals_csv_sink_stdout, test_reopen_appends,
	test_torn_tail_every_offset, test_torn_everywhere_small, test_zero_tail,
	test_corruption_names_record, test_unknown_and_concatenated, test_foreign_input,
	test_write_allocates_nothing, test_disk_full_rlimit, test_disk_full_tmpfs)

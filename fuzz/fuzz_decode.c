/* SPDX-License-Identifier: MIT */
/* fuzz_decode.c - the binary stream decoder over arbitrary bytes, and
 * what dump does with its output: CSV cells of every decoded value and a
 * rates plan and interval for every schema.  Must never crash, leak or
 * read out of bounds.
 *
 * Random mutations almost never carry a valid CRC-32C, so every input is
 * decoded twice: as it is (framing, torn tails, CRC errors), and with the
 * CRCs of its file headers and records recomputed (payload decoders). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "binfmt.h"
#include "crc32c.h"
#include "csv.h"
#include "rates.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void fix_crcs(uint8_t *b, size_t size)
{
	size_t pos = 0;
	while (pos + VMS_FMT_RECORD_HDR <= size) {
		if (size - pos >= VMS_FMT_HEADER_SIZE &&
		    memcmp(b + pos, VMS_FMT_MAGIC, VMS_FMT_MAGIC_LEN - 1) == 0) {
			put32(b + pos + 28, vms_crc32c(0, b + pos, 28));
			pos += VMS_FMT_HEADER_SIZE;
			continue;
		}
		uint32_t len = (uint32_t)b[pos] | (uint32_t)b[pos + 1] << 8 | (uint32_t)b[pos + 2] << 16 |
			       (uint32_t)b[pos + 3] << 24;
		put32(b + pos + 8, vms_crc32c(0, b + pos, 8));
		if (len > size - pos - VMS_FMT_RECORD_HDR || size - pos - VMS_FMT_RECORD_HDR - len < 4)
			break;
		put32(b + pos + VMS_FMT_RECORD_HDR + len, vms_crc32c(0, b + pos + VMS_FMT_RECORD_HDR, len));
		pos += VMS_BIN_REC_OVERHEAD + len;
	}
}

static void decode(const uint8_t *buf, size_t size)
{
	struct vms_bin_dec d;
	struct vms_rate_plan *plan = NULL;
	const struct vms_schema *plan_of = NULL;
	double *out = NULL;
	uint64_t *prev = NULL;
	char cell[VMS_CSV_VALUE_MAX + 1];
	int it;

	if (vms_bin_dec_open_mem(&d, buf, size) < 0)
		abort();
	while ((it = vms_bin_dec_next(&d)) > 0) {
		if (it == VMS_BIN_SCHEMA) {
			/* header cells: quoting stays within its bound */
			for (uint32_t i = 0; i < d.schema->ncols; i++) {
				const char *name = d.schema->cols[i].name;
				size_t max = vms_csv_field_max(name);
				char *start = malloc(max), *e = vms_csv_field(start, name);
				if ((size_t)(e - start) > max)
					abort();
				free(start);
			}
		}
		if (it != VMS_BIN_DATA)
			continue;
		const struct vms_frame *f = d.frame;
		const struct vms_schema *s = d.schema;
		for (uint32_t i = 0; i < f->ncols; i++) {
			char *e = vms_csv_value(cell, f->v[i], s->cols[i].scale);
			if ((size_t)(e - cell) > VMS_CSV_VALUE_MAX)
				abort();
		}
		if (s != plan_of) {
			vms_rate_plan_free(plan);
			plan = NULL;
			free(out);
			free(prev);
			if (vms_rate_plan_new(s, &plan) < 0)
				break;
			out = calloc(plan->ncols + 1, sizeof(*out));
			prev = calloc(s->ncols + 1, sizeof(*prev));
			for (uint32_t i = 0; i < s->ncols; i++)
				prev[i] = VMS_VALUE_NONE;
			plan_of = s;
		}
		/* one interval for all columns, then per-column intervals, some
		 * shared and some not */
		double *dt = malloc((s->ncols + 1) * sizeof(*dt));
		for (uint32_t i = 0; i < s->ncols; i++)
			dt[i] = 1.5;
		vms_rate_compute_dt(plan, prev, f->v, dt, out);
		for (uint32_t i = 0; i < s->ncols; i++)
			dt[i] = (double)(f->v[i] % 4);
		vms_rate_compute_dt(plan, prev, f->v, dt, out);
		free(dt);
		memcpy(prev, f->v, f->ncols * sizeof(*prev));
	}
	if (it == 0 && d.torn && d.torn_off + d.torn_len != size)
		abort(); /* a torn tail runs to the end of the input */
	vms_rate_plan_free(plan);
	free(out);
	free(prev);
	vms_bin_dec_close(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* exact-size heap copies so ASan sees any read past the end */
	uint8_t *buf = malloc(size ? size : 1);
	memcpy(buf, data, size);
	decode(buf, size);
	fix_crcs(buf, size);
	decode(buf, size);
	free(buf);
	return 0;
}

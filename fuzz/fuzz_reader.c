/* SPDX-License-Identifier: MIT */
/* fuzz_reader.c - libvmsampler over arbitrary bytes: a binary stream or a
 * snapshot of a ring file (told apart by the magic, as vms_reader_open
 * does), every frame, every accessor, globs, rates and zero-copy views.
 * Must never crash, hang, leak or read out of bounds.  The ring header's
 * sizes are checked against the input's length before any slot is read. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <vmsampler/reader.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void walk(const uint8_t *data, size_t size, bool view)
{
	struct vms_reader *r;
	if (vms_reader_open_mem(&r, data, size, 0) < 0) {
		vms_reader_close(r);
		return;
	}
	vms_reader_rates_enable(r);
	uint32_t idx[16];
	for (int n = 0; n < 100000; n++) {
		int e;
		if (view) {
			const struct vms_frame *f;
			e = vms_reader_view(r, &f);
			if (e == 1) {
				volatile uint64_t sink = 0;
				for (uint32_t i = 0; i < f->ncols && i < 64; i++)
					sink += f->v[i];
				(void)sink;
				vms_reader_view_check(r);
			}
		} else {
			e = vms_reader_next(r);
		}
		if (e <= 0)
			break;
		if (view)
			continue;
		uint32_t nc = vms_reader_ncols(r);
		for (uint32_t i = 0; i <= nc && i < 300; i++) {
			struct vms_reader_col c;
			uint64_t v;
			double d;
			if (vms_reader_col_info(r, i, &c) == 0)
				(void)vms_reader_column(r, c.name);
			(void)vms_reader_value(r, i, &v);
			(void)vms_reader_value_double(r, i, &d);
		}
		(void)vms_reader_columns_match(r, "cpu.*,*[0-9],disk.s?a.*", idx, 16);
		uint32_t nr = vms_reader_nrates(r);
		for (uint32_t i = 0; i <= nr && i < 300; i++) {
			double d;
			(void)vms_reader_rate_name(r, i);
			(void)vms_reader_rate(r, i, &d);
		}
		(void)vms_reader_rates_match(r, "*/s", idx, 16);
		(void)vms_reader_seq(r);
		(void)vms_reader_time_real_ns(r);
		(void)vms_reader_rate_interval(r);
	}
	(void)vms_reader_error(r);
	(void)vms_reader_missed(r);
	(void)vms_reader_writer(r);
	vms_reader_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* the ring code wants aligned 8-byte words, as a mapping gives */
	uint64_t *copy = malloc(size + 8);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	walk((const uint8_t *)copy, size, false);
	walk((const uint8_t *)copy, size, true);
	free(copy);
	return 0;
}

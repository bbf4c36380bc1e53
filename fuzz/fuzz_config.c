/* SPDX-License-Identifier: MIT */
/* fuzz_config.c - the YAML configuration loader.
 *
 * Beyond "no crash, no leak" (ASan), each input checks what the loader
 * promises:
 *   - a failed load leaves the configuration unchanged and reports one
 *     non-empty line naming the file;
 *   - a successful load can be written (--print-config) and read back
 *     into an equal configuration, starting from other values.
 *
 * The system libyaml has no coverage instrumentation, so libFuzzer only
 * sees our side of the parser.  For deeper runs, link libyaml's sources
 * (the same release, 0.2.5) into the target:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE \
 *     -DYAML_DECLARE_STATIC -DYAML_VERSION_MAJOR=0 -DYAML_VERSION_MINOR=2 \
 *     -DYAML_VERSION_PATCH=5 '-DYAML_VERSION_STRING="0.2.5"' \
 *     -I$LIBYAML/include -Isrc -Ibuild-fuzz -Iinclude fuzz/fuzz_config.c \
 *     src/sampler/config.c src/sampler/config_yaml.c src/sampler/sched.c src/common/log.c src/common/edit.c \
 *     $LIBYAML/src/{api,reader,scanner,parser}.c -o fuzz-config-full
 *   ./fuzz-config-full -dict=fuzz/config.dict -max_len=4096 CORPUS_DIR */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char other[] = "interval: 250ms\ncount: 3\nalign: 1m\noutput: o.vms\nformat: bin\n"
			    "csv_layout: long\nproc_root: /p\nring_slots: 2\nlog_level: error\n"
			    "sources:\n  procstat: {enabled: false, every: 9, per_cpu: false}\n"
			    "  loadavg: {enabled: false, every: 9}\n"
			    "  diskstats: {enabled: false, every: 9, partitions: true, include: [x], exclude: [y]}\n"
			    "  netdev: {enabled: false, every: 9, include: [x], exclude: [y]}\n";

static void check_roundtrip(const struct vms_config *c)
{
	char *out = NULL, err[512];
	size_t len = 0;
	struct vms_config d;
	FILE *f = open_memstream(&out, &len);
	if (!f)
		abort();
	if (vms_config_write(c, f) != 0)
		abort();
	fclose(f);
	if (vms_config_defaults(&d) != 0 ||
	    vms_config_load_buffer(&d, "other", other, sizeof(other) - 1, err, sizeof(err)) != 0)
		abort();
	if (vms_config_load_buffer(&d, "written", out, len, err, sizeof(err)) != 0) {
		fprintf(stderr, "written config does not load: %s\n%s", err, out);
		abort();
	}
	if (!vms_config_equal(c, &d)) {
		fprintf(stderr, "written config loads differently:\n%s", out);
		abort();
	}
	vms_config_free(&d);
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vms_config c, ref;
	char err[512];

	/* an exact-size heap copy so ASan sees any read past the end */
	char *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	if (vms_config_defaults(&c) != 0 || vms_config_defaults(&ref) != 0)
		abort();
	int r = vms_config_load_buffer(&c, "fuzz", buf, size, err, sizeof(err));
	if (r == 0) {
		check_roundtrip(&c);
	} else {
		if (r != -EINVAL && r != -ENOMEM && r != -EFBIG)
			abort();
		if (strncmp(err, "fuzz:", 5) != 0 || strchr(err, '\n') || strlen(err) < 8)
			abort();
		if (!vms_config_equal(&c, &ref))
			abort();
	}
	vms_config_free(&c);
	vms_config_free(&ref);
	free(buf);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/* follow.c - the smallest libvmsampler consumer: print seq and the
 * columns matching a pattern of every frame of a ring or a file.
 *
 *   cc follow.c $(pkg-config --cflags --libs vmsampler) -o follow
 *   ./follow /dev/shm/vmsampler 'cpu.all.*' [COUNT]
 *
 * Only the public header; no system call per frame (it sleeps only when
 * no frame is there).  Exit status: 0 the writer exited or COUNT frames
 * were printed, 1 otherwise. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include <vmsampler/reader.h>

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s RING|FILE GLOBS [COUNT]\n", argv[0]);
		return 2;
	}
	unsigned long count = argc > 3 ? strtoul(argv[3], NULL, 10) : 0, n = 0;
	struct vms_reader *r;
	if (vms_reader_open(&r, argv[1], 0) < 0) {
		fprintf(stderr, "%s\n", vms_reader_error(r));
		vms_reader_close(r);
		return 1;
	}
	uint32_t idx[256];
	int nidx = 0, e, rc = 1;
	while ((e = vms_reader_next(r)) >= 0) {
		if (e == 0) {
			if (vms_reader_eof(r)) {
				rc = 0;
				break;
			}
			nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
			continue;
		}
		if (vms_reader_schema_changed(r)) {
			nidx = vms_reader_columns_match(r, argv[2], idx, 256);
			if (nidx > 256)
				nidx = 256;
		}
		printf("%llu", (unsigned long long)vms_reader_seq(r));
		for (int i = 0; i < nidx; i++) {
			uint64_t v;
			if (vms_reader_value(r, idx[i], &v) == 0)
				printf(" %llu", (unsigned long long)v);
			else
				printf(" -");
		}
		putchar('\n');
		if (count && ++n >= count) {
			rc = 0;
			break;
		}
	}
	if (e == -ESRCH && vms_reader_writer(r) == 1)
		rc = 0;
	if (e < 0)
		fprintf(stderr, "%s\n", vms_reader_error(r));
	fprintf(stderr, "missed %llu\n", (unsigned long long)vms_reader_missed(r));
	vms_reader_close(r);
	return rc;
}

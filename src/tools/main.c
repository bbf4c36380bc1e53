/* SPDX-License-Identifier: MIT */
/* main.c - vmsampler-tools, the reader side's program: `vmsampler dump`,
 * `vmsampler tail`, `vmsampler report` and `vmsampler export` are this program, which the
 * sampler's binary runs in its own process (sampler/libexec.h).  Thin
 * front ends over libvmsampler; argv is the sampler's, unchanged:
 * argv[1] names the tool. */
#include <stdio.h>
#include <string.h>

#include "dump.h"
#include "export.h"
#include "mark.h"
#include "report.h"
#include "tail.h"

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "dump") == 0)
		return vms_dump_main(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "tail") == 0)
		return vms_tail_main(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "mark") == 0)
		return vms_mark_main(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "report") == 0)
		return vms_report_main(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "export") == 0)
		return vms_export_main(argc - 1, argv + 1);
	fprintf(stderr, "vmsampler-tools: usage: vmsampler dump|tail|mark|report|export ARGS (see vmsampler(1))\n");
	return 2;
}

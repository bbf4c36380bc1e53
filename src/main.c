/* SPDX-License-Identifier: MIT */
/* main.c - command line and wiring. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "dump.h"
#include "log.h"
#include "loop.h"
#include "sched.h"

static int usage_error(const char *msg, const char *arg)
{
	fprintf(stderr, "vmsampler: %s%s%s\nTry 'vmsampler --help'.\n", msg, arg ? ": " : "", arg ? arg : "");
	return 2;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"interval", required_argument, NULL, 'i'},
		{"output", required_argument, NULL, 'o'},
		{"count", required_argument, NULL, 'n'},
		{"format", required_argument, NULL, 'f'},
		{"proc-root", required_argument, NULL, 'P'},
		{NULL, 0, NULL, 0},
	};
	struct vms_config conf;
	struct vms_loop loop;
	int c, rc;

	if (argc > 1 && strcmp(argv[1], "dump") == 0)
		return vms_dump_main(argc - 1, argv + 1);
	vms_config_defaults(&conf);
	while ((c = getopt_long(argc, argv, "i:o:n:f:", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (vms_parse_duration(optarg, &conf.interval_ns) < 0)
				return usage_error("bad interval", optarg);
			break;
		case 'o':
			free(conf.output);
			conf.output = strdup(optarg);
			break;
		case 'n':
			conf.count = strtoull(optarg, NULL, 10);
			break;
		case 'f':
			conf.format = strcmp(optarg, "bin") == 0 ? VMS_FORMAT_BIN : VMS_FORMAT_CSV;
			break;
		case 'P':
			free(conf.proc_root);
			conf.proc_root = strdup(optarg);
			break;
		default:
			return 2;
		}
	}
	if (vms_loop_init(&loop, &conf, NULL) < 0) {
		vms_loop_fini(&loop);
		vms_config_free(&conf);
		return 1;
	}
	vms_loop_signals(&loop);
	rc = vms_loop_run(&loop) < 0 ? 1 : 0;
	if (vms_loop_fini(&loop) < 0)
		rc = 1;
	vms_config_free(&conf);
	return rc;
}

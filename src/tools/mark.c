/* SPDX-License-Identifier: MIT */
/* mark.c - `vmsampler mark [--ring PATH | --control PATH | --pid PID] TEXT`:
 * sends TEXT to a running sampler's control socket (ctl_proto.h), which
 * puts a MARK event before its next frame, and prints the answer. */
#include "mark.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_proto.h"
#include "tool.h"

static const char usage_text[] =
	"Usage: vmsampler mark (--ring PATH | --control PATH | --pid PID) TEXT\n"
	"Put a marker (a MARK event with TEXT) into a running sampler's stream, before\n"
	"its next frame: its outputs, its live ring, dump --events and report show it.\n"
	"\n"
	"  -r, --ring=PATH      the sampler that writes the ring PATH (its control\n"
	"                       socket is PATH.ctl)\n"
	"      --control=PATH   the sampler whose control socket is PATH\n"
	"  -p, --pid=PID        the sampler with that process id\n"
	"  -h, --help           show this help\n"
	"\n"
	"TEXT: 1 to 79 bytes of valid UTF-8, printable, no control characters.  A\n"
	"sampler takes at most 64 marks per interval and answers the rest with an\n"
	"error.  Prints the seq of the frame the mark goes before.\n"
	"\n"
	"Exit status: 0 marked, 1 the sampler refused the mark or did not answer\n"
	"(or none answers at that path), 2 usage error.  See vmsampler(1).\n";

int vms_mark_main(int argc, char **argv)
{
	static const struct vms_tool_opt opts[] = {
		{"ring", required_argument, 'r', NULL, NULL},
		{"control", required_argument, 'C', NULL, NULL},
		{"pid", required_argument, 'p', NULL, NULL},
		{NULL, 0, 0, NULL, NULL},
	};
	static const char *const help[] = {usage_text, NULL};
	struct vms_tool_cmd cmd = {.tool = "mark", .shortopts = "+r:p:h", .opts = opts, .help = help};
	const char *ring = NULL, *control = NULL;
	long pid = 0;
	char path[PATH_MAX], reply[128];
	int c, how = 0;
	while ((c = vms_tool_next(&cmd, argc, argv)) > 0) {
		char *end;
		how++;
		if (c == 'r')
			ring = optarg;
		else if (c == 'C')
			control = optarg;
		else {
			errno = 0;
			pid = strtol(optarg, &end, 10);
			if (errno || *end || pid <= 0 || pid > INT_MAX)
				return vms_tool_usage("mark", "--pid needs a process id", optarg);
		}
	}
	if (c < 0)
		return cmd.rc;
	if (how != 1)
		return vms_tool_usage("mark", how ? "give one of --ring, --control and --pid"
				       : "which sampler? give --ring, --control or --pid",
				   NULL);
	if (optind != argc - 1)
		return vms_tool_usage("mark", optind == argc ? "missing TEXT" : "more than one TEXT (quote it)", NULL);
	const char *text = argv[optind];
	const char *why = vms_ctl_text_problem(text, strlen(text));
	if (why)
		return vms_tool_usage("mark", why, NULL);
	if (ring) {
		if (snprintf(path, sizeof(path), "%s.ctl", ring) >= (int)sizeof(path))
			return vms_tool_usage("mark", "path too long", ring);
	} else if (control) {
		if (snprintf(path, sizeof(path), "%s", control) >= (int)sizeof(path))
			return vms_tool_usage("mark", "path too long", control);
	} else {
		int e = vms_ctl_find((pid_t)pid, path, sizeof(path));
		if (e < 0) {
			fprintf(stderr, "vmsampler mark: pid %ld: %s\n", pid,
				e == -ENOENT ? "no control socket (is it a vmsampler with --ring or control_path?)"
					     : strerror(-e));
			return 1;
		}
	}
	int r = vms_ctl_send(path, text, 5000, reply, sizeof(reply));
	if (r < 0) {
		fprintf(stderr, "vmsampler mark: %s: %s\n", path,
			r == -ETIMEDOUT ? "no answer within 5 s" : strerror(-r));
		return 1;
	}
	if (r > 0) {
		fprintf(stderr, "vmsampler mark: %s: %s\n", path, reply);
		return 1;
	}
	/* "ok SEQ" */
	printf("marked before frame %s\n", reply + 3);
	return 0;
}

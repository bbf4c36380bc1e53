/* SPDX-License-Identifier: MIT */
/* tool.c - the front ends' shared command-line replies (tool.h). */
#include "tool.h"

#include <getopt.h>
#include <stdio.h>

int vms_tool_usage(const char *tool, const char *msg, const char *arg)
{
	fprintf(stderr, "vmsampler %s: %s%s%s. Try 'vmsampler %s --help'.\n", tool, msg, arg ? ": " : "",
		arg ? arg : "", tool);
	return 2;
}

int vms_tool_bad_option(const char *tool, int c, char **argv)
{
	if (c == ':')
		return vms_tool_usage(tool, "option needs an argument", argv[optind - 1]);
	char opt[3] = {'-', (char)optopt, 0};
	return vms_tool_usage(tool, optopt ? "unknown option" : "unknown or ambiguous option",
			      optopt ? opt : argv[optind - 1]);
}

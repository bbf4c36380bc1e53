/* SPDX-License-Identifier: MIT */
/* tool.c - the front ends' shared command-line replies (tool.h). */
#include "tool.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

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

int vms_tool_parse_u64(const char *s, uint64_t *v)
{
	char *end;
	if (!(*s >= '0' && *s <= '9'))
		return -EINVAL;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*v = x;
	return 0;
}

/* SPDX-License-Identifier: MIT */
/* tool.c - the front ends' shared command line (tool.h). */
#include "tool.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "safefile.h"

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

/* getopt_long's table from the front end's, with --help */
static void start(struct vms_tool_cmd *cmd)
{
	unsigned n = 0;
	for (const struct vms_tool_opt *o = cmd->opts; o && o->name && n < VMS_TOOL_MAXOPT; o++, n++)
		cmd->lo[n] = (struct option){o->name, o->has_arg, NULL, o->val};
	cmd->lo[n++] = (struct option){"help", no_argument, NULL, 'h'};
	cmd->lo[n] = (struct option){NULL, 0, NULL, 0};
	cmd->started = true;
	optind = 1;
	opterr = 0; /* our own one-line messages */
}

int vms_tool_next(struct vms_tool_cmd *cmd, int argc, char **argv)
{
	if (!cmd->started)
		start(cmd);
	for (;;) {
		int c = getopt_long(argc, argv, cmd->shortopts, cmd->lo, NULL);
		if (c == -1)
			return 0;
		if (c == 'h') {
			for (const char *const *h = cmd->help; h && *h; h++)
				fputs(*h, stdout);
			cmd->rc = fflush(stdout) == 0 ? 0 : 1;
			return -1;
		}
		if (c == ':' || c == '?') {
			cmd->rc = vms_tool_bad_option(cmd->tool, c, argv);
			return -1;
		}
		const struct vms_tool_opt *o = cmd->opts;
		while (o && o->name && o->val != c)
			o++;
		if (o && o->name && o->str)
			*o->str = optarg;
		else if (o && o->name && o->flag)
			*o->flag = true;
		else
			return c;
	}
}

int vms_tool_pick(const char *arg, const char *const *words)
{
	for (int i = 0; words[i]; i++)
		if (strcmp(arg, words[i]) == 0)
			return i;
	return -1;
}

int vms_tool_one_operand(const char *tool, int argc, const char *what)
{
	if (optind == argc - 1)
		return 0;
	char msg[64];
	snprintf(msg, sizeof(msg), "%s %s", optind == argc ? "missing" : "more than one", what);
	return vms_tool_usage(tool, msg, NULL);
}

int vms_tool_input_status(int err, bool opened)
{
	if (opened)
		return err == -ENOTSUP ? 2 : 1;
	return vms_safe_status(err);
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

int vms_tool_flush(FILE *f)
{
	if (fflush(f) != EOF && !ferror(f))
		return 0;
	if (errno == EPIPE)
		return 0;
	vms_err("output: %s", strerror(errno));
	return -1;
}

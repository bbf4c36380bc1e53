/* SPDX-License-Identifier: MIT */
/* tool.h - what the front ends (dump, tail, report, compare, mark, export)
 * share on their command lines: the option loop with its --help and its
 * one-line usage errors, as every usage error of vmsampler, with exit
 * status 2. */
#ifndef VMS_TOOL_H
#define VMS_TOOL_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* One option of a front end: getopt_long's long name, argument and code,
 * and where a plain one goes, so that the front end's switch holds only
 * the options that want checking. */
struct vms_tool_opt {
	const char *name; /* the long name */
	int has_arg;      /* no_argument or required_argument */
	int val;          /* the short letter, or a code >= 256 */
	const char **str; /* a string option: optarg goes here (the last given wins) */
	bool *flag;       /* a switch: set to true */
};

#define VMS_TOOL_MAXOPT 32

/* A front end's command line: fill the first four, the rest is the loop's. */
struct vms_tool_cmd {
	const char *tool;                /* "dump": the messages' prefix */
	const char *shortopts;           /* getopt_long's, with its leading ':' (or "+") */
	const struct vms_tool_opt *opts; /* ended by a NULL name; --help (-h) is added */
	const char *const *help;         /* what --help prints, in order, ended by NULL */
	int rc;                          /* the exit status once vms_tool_next returned -1 */
	bool started;
	struct option lo[VMS_TOOL_MAXOPT + 2];
};

/* The next option the table does not settle: > 0 its code (optarg set);
 * 0 at the end of the options (argv[optind] the first operand); -1 when
 * the front end is done and returns cmd->rc: --help printed (0, or 1 if
 * standard output failed) or a usage error said (2). */
int vms_tool_next(struct vms_tool_cmd *cmd, int argc, char **argv);
/* The index of arg in words (ended by NULL), or -1. */
int vms_tool_pick(const char *arg, const char *const *words);
/* Exactly one operand left (argv[optind]): 0; else "missing WHAT" or
 * "more than one WHAT" as a usage error, 2. */
int vms_tool_one_operand(const char *tool, int argc, const char *what);

/* "vmsampler TOOL: MSG[: ARG]. Try 'vmsampler TOOL --help'."; returns 2. */
int vms_tool_usage(const char *tool, const char *msg, const char *arg);
/* getopt_long's answer c ':' (a missing argument) or '?' (an unknown or
 * ambiguous option) as that one line; returns 2.  argv as given to
 * getopt_long (optind, optopt as it left them). */
int vms_tool_bad_option(const char *tool, int c, char **argv);
/* The exit status of a failure of an input: err from vms_reader_open
 * (opened false: 2 when the path or the file is wrong, a configuration
 * error; 1 when the machine failed: safefile.h, vms_safe_status) or
 * from reading it (opened true: 2 for a stream of another major version
 * of the format, -ENOTSUP; damage and I/O errors 1). */
int vms_tool_input_status(int err, bool opened);
/* A non-negative decimal integer, the whole of s: 0 or -EINVAL. */
int vms_tool_parse_u64(const char *s, uint64_t *v);
/* Flush f at the end of a front end's output: 0, or -1 after saying
 * "output: ERROR" (a closed pipe, EPIPE, is no error: the reader left). */
int vms_tool_flush(FILE *f);

#endif

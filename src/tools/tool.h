/* SPDX-License-Identifier: MIT */
/* tool.h - what the front ends (dump, tail, report, mark) share on their
 * command lines: one-line usage errors, as every usage error of
 * vmsampler, with exit status 2. */
#ifndef VMS_TOOL_H
#define VMS_TOOL_H

#include <stdint.h>

/* "vmsampler TOOL: MSG[: ARG]. Try 'vmsampler TOOL --help'."; returns 2. */
int vms_tool_usage(const char *tool, const char *msg, const char *arg);
/* getopt_long's answer c ':' (a missing argument) or '?' (an unknown or
 * ambiguous option) as that one line; returns 2.  argv as given to
 * getopt_long (optind, optopt as it left them). */
int vms_tool_bad_option(const char *tool, int c, char **argv);
/* A non-negative decimal integer, the whole of s: 0 or -EINVAL. */
int vms_tool_parse_u64(const char *s, uint64_t *v);

#endif

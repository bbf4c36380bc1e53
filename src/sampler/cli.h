/* SPDX-License-Identifier: MIT */
/* cli.h - the command line: options into an action and key overrides.
 *
 * Every option that sets something maps onto a key of the configuration
 * table (-i -> interval, -q -> log_level: error, ...) and is checked by the
 * same code as the file.  main() parses the command line first (so a bad
 * option is reported before the file is read), loads the file over the
 * defaults, then applies the overrides: defaults < file < command line. */
#ifndef VMS_CLI_H
#define VMS_CLI_H

#include <getopt.h>
#include <stdio.h>

#include "config.h"

enum vms_cli_action {
	VMS_CLI_RUN = 0,
	VMS_CLI_HELP,
	VMS_CLI_VERSION,
	VMS_CLI_PRINT_CONFIG,
};

#define VMS_CLI_MAX_SET 16

struct vms_cli_set {
	const char *key;   /* a key of the table, "interval" */
	const char *value; /* argv text, or a fixed value ("error" for -q) */
	const char *opt;   /* the long option, for messages */
};

struct vms_cli {
	enum vms_cli_action action;
	const char *config_path; /* -c FILE, or NULL */
	bool force;              /* --force: outputs may overwrite what is not ours */
	/* one per key (the last one given wins), applied over the file */
	struct vms_cli_set set[VMS_CLI_MAX_SET];
	unsigned nset;
};

/* Parse argv with getopt_long (argv may be permuted; getopt's state is
 * reset, so it can be called again).  0, or -EINVAL with a one-line
 * message in err (without the program name or a "--help" hint), or
 * -ENOMEM. */
int vms_cli_parse(struct vms_cli *cli, int argc, char **argv, char *err, size_t errlen);
/* Apply the overrides to *c.  0 or -errno with err. */
int vms_cli_apply(const struct vms_cli *cli, struct vms_config *c, char *err, size_t errlen);
/* --help and --version text. */
void vms_cli_help(FILE *f);
void vms_cli_version(FILE *f);

/* The long options, terminated by a zeroed entry (for the documentation
 * test). */
extern const struct option vms_cli_options[];

#endif

/* SPDX-License-Identifier: MIT */
/* export_opts.h - `vmsampler export`'s command line: its options, read and
 * checked against each other (export_opts.c); export.c runs what they say. */
#ifndef VMS_EXPORT_OPTS_H
#define VMS_EXPORT_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metrics.h"

#define VMS_XOPT_MAX_LABELS 16 /* --label */
#define VMS_XOPT_MAX_GLOBS 64  /* --include, --exclude: of each */
#define VMS_XOPT_LISTEN "127.0.0.1:9465"
#define VMS_XOPT_HEADER_TIMEOUT_NS (10 * 1000000000ull)

/* What the command line asked for: strings point into argv (file: or
 * into file_zst, its .zst, when a rotated file was compressed since). */
struct vms_xopts {
	const char *ring, *file;
	char file_zst[4096];
	/* /metrics */
	const char *listen, *cert, *key, *auth;
	uint64_t header_timeout; /* ns */
	bool header_set, stamp;
	/* remote write */
	const char *rw_url, *rw_cursor, *rw_bearer, *rw_auth, *rw_ca;
	unsigned rw_frames;
	size_t rw_bytes;
	bool no_follow;
	const char *labels[VMS_XOPT_MAX_LABELS];
	unsigned nlabels;
	/* the families, for both */
	bool list; /* --list-columns */
	const char *inc[VMS_XOPT_MAX_GLOBS], *exc[VMS_XOPT_MAX_GLOBS];
	struct vms_mopts mo; /* its globs point into inc and exc: o stays in place */
};

/* What --help prints, ended by NULL. */
extern const char *const vms_export_help[];

/* Read argv into *o and check the options together: -1 to go on, else the
 * exit status (0 after --help, 2 after a usage error said in one line;
 * listen is DEFAULT_LISTEN when /metrics is served by default). */
int vms_xopts_parse(struct vms_xopts *o, int argc, char **argv);

#endif

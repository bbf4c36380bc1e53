/* SPDX-License-Identifier: MIT */
/* tail.h - `vmsampler tail`: follow a live ring or a growing binary
 * stream and print its frames as they come: CSV, InfluxDB line protocol
 * or JSON lines (lineproto.h).
 *
 *   vmsampler tail RING|FILE.vms [--columns GLOBS] [--rates] [-n N]
 *                                [--format csv|influx|json] [--host NAME]
 *                                [--new] [--no-follow]
 *
 * Exit status: 0 stopped by SIGINT/SIGTERM, -n reached, the end of a file
 * with --no-follow, or a ring whose writer exited cleanly; 1 a ring whose
 * writer died or stopped responding, damaged input, an I/O error; 2 a
 * usage error.  See vmsampler(1). */
#ifndef VMS_TAIL_H
#define VMS_TAIL_H

/* argv[0] is "tail". */
int vms_tail_main(int argc, char **argv);

#endif

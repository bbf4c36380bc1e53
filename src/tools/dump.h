/* SPDX-License-Identifier: MIT */
/* dump.h - `vmsampler dump`: the reader side of the binary stream.
 *
 *   vmsampler dump FILE.vms [--rates | --events] [-o OUT]
 *
 * Without --rates the frames go through the CSV sink itself, so the
 * output is byte for byte what `-o x.csv` would have written for the same
 * frames (including its roll-over or projection on schema changes).
 * Exit status: 0 (also after a torn tail, reported on stderr), 1 for a
 * damaged or foreign file (everything before the damage is output) or an
 * I/O error, 2 for a usage error.  See vmsampler-format(5). */
#ifndef VMS_DUMP_H
#define VMS_DUMP_H

#include <stdint.h>

/* argv[0] is "dump". */
int vms_dump_main(int argc, char **argv);

#endif

/* SPDX-License-Identifier: MIT */
/* rotname.h - the names of rotated output files (vmsampler(1), --rotate):
 * STEM-YYYYmmddTHHMMSSZ[_NNN]EXT, and .zst once compressed, for an output
 * PATH = DIR/STEM.EXT.  One definition for the sampler, which makes and
 * prunes them (sampler/rotate.c), and the reader, which follows a run from
 * one to the next (lib/reader.c); the names sort in the order written. */
#ifndef VMS_ROTNAME_H
#define VMS_ROTNAME_H

#include <stdbool.h>
#include <stddef.h>

#define VMS_ROTNAME_STAMP_LEN 16 /* YYYYmmddTHHMMSSZ */

/* Is name (a base name) a rotated file of STEM.EXT?  *zst: it ends in .zst. */
bool vms_rotname_match(const char *stem, const char *ext, const char *name, bool *zst);
/* Split a rotated base name into its stem (the first *stem_len bytes of
 * name) and its EXT (*ext, within name, without a .zst): false if name
 * is not a rotated file's name. */
bool vms_rotname_split(const char *name, size_t *stem_len, char *ext, size_t extcap);

#endif

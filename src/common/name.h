/* SPDX-License-Identifier: MIT */
/* name.h - the one rule for the names that enter a schema.
 *
 * Entity names (interfaces, disks, VMs' taps and disks) come from the
 * kernel and from libvirt as bytes: they may be any length, not UTF-8,
 * or hold control characters.  Column names must be valid UTF-8 without
 * control characters (every consumer: JSON, Prometheus, the terminal), and
 * at most 511 bytes (the binary format).  The rule, applied by the schema
 * builder to every column name and key (vms_schema_addf):
 *
 *   - a byte that does not belong to a valid UTF-8 sequence, and every byte
 *     of a control character (U+0000..U+001F, U+007F..U+009F, and the
 *     line and paragraph separators U+2028, U+2029: what iswcntrl() says in
 *     a UTF-8 locale), becomes the four characters \xHH (lower-case hex);
 *   - a backslash becomes two backslashes;
 *   - everything else stays as it is.
 *
 * The result is reversible (\\ -> \, \xHH -> the byte) and so distinct
 * for distinct names.  An entity's name whose escaped form is longer than
 * VMS_NAME_PART_MAX is shortened first (vms_name_fit): its leading bytes,
 * "~" and 16 hex digits of a hash of the whole name. */
#ifndef VMS_NAME_H
#define VMS_NAME_H

#include <stdbool.h>
#include <stddef.h>

/* The most bytes one entity's escaped name takes in a column name: two of
 * them and the longest fixed part ("vm." ".block." ".wr_total_times"...)
 * stay well within a column name's 511 bytes. */
#define VMS_NAME_PART_MAX 160

/* Bytes of the character at s (1 to 4) if it stays as it is, 0 if its
 * first byte is escaped (a backslash, a control character, a byte that
 * is not valid UTF-8).  n > 0 bytes are readable at s. */
size_t vms_name_keep(const char *s, size_t n);
/* True if escaping would change nothing but backslashes: valid UTF-8
 * without control characters. */
bool vms_name_valid(const char *s, size_t n);
/* The escaped form of the n bytes at s into dst (at most cap - 1 bytes and
 * a NUL: a form too long is cut before the first character or escape that
 * does not fit whole); returns its whole length, as snprintf does. */
size_t vms_name_escape(char *dst, size_t cap, const char *s, size_t n);
/* The name an entity gets in column names, still unescaped: the n bytes
 * at s themselves if their escaped form has at most max bytes, otherwise
 * the longest leading whole characters that leave room for "~" and the 16
 * hex digits of a 64-bit FNV-1a hash of all n bytes.  dst holds max + 1
 * bytes; max is at least 32 (VMS_NAME_PART_MAX for a column name's part).
 * Returns true if shortened. */
bool vms_name_fit(char *dst, size_t max, const char *s, size_t n);

#endif

/* SPDX-License-Identifier: MIT */
/* edit.h - edit distance for "did you mean" messages (the configuration's
 * keys, perf event names). */
#ifndef VMS_EDIT_H
#define VMS_EDIT_H

/* Levenshtein distance of two short strings (over 32 bytes: 99). */
unsigned vms_edit_distance(const char *a, const char *b);

#endif

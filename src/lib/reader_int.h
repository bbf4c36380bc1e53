/* SPDX-License-Identifier: MIT */
/* reader_int.h - what vmsampler's own commands need from the reader
 * beyond the public API (not exported by the shared library). */
#ifndef VMS_READER_INT_H
#define VMS_READER_INT_H

#include <vmsampler/reader.h>

#include "schema.h"

/* The current frame's schema (valid until the reader is closed). */
const struct vms_schema *vms_rdr_schema(const struct vms_reader *r);
/* Rate column i of the current schema (vms_reader_nrates()), or NULL. */
struct vms_rate_col;
const struct vms_rate_col *vms_rdr_rate_col(const struct vms_reader *r, uint32_t i);
/* A live ring through the writer's own mapping (map, len), as a reader
 * in another thread of the writer's process: the in-process stress test,
 * so that ThreadSanitizer sees writer and readers at the same addresses
 * (two mappings of one file are different addresses to it). */
int vms_rdr_open_mapping(struct vms_reader **out, const void *map, size_t len);
/* File headers read so far (concatenated streams: > 1). */
uint64_t vms_rdr_streams(const struct vms_reader *r);
/* on: vms_reader_next() also stops at each EVENT record of a file, and
 * at each event of a live ring's event area (vmsampler-ring(5)) before
 * the frame it belongs before, and returns 2, the event then in
 * vms_rdr_event() (dump --events, tail). */
void vms_rdr_want_events(struct vms_reader *r, bool on);
struct vms_event;
const struct vms_event *vms_rdr_event(const struct vms_reader *r);
/* Events of a live ring overwritten before this reader read them. */
uint64_t vms_rdr_events_lost(const struct vms_reader *r);

/* VMS_READER_FOLLOW_NAME: one line about the last change of file since
 * the previous call (went on in the next file of a rotation, the file
 * was rewritten...), or NULL; the file being read (NULL if none). */
const char *vms_rdr_follow_note(struct vms_reader *r);
const char *vms_rdr_path(const struct vms_reader *r);

#endif

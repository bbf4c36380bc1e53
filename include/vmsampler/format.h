/* SPDX-License-Identifier: MIT */
/*
 * vmsampler/format.h - the vmsampler binary stream (".vms"), version 1.
 *
 * This header is the public contract for writers and readers; the prose
 * description with examples is vmsampler-format(5).
 *
 * All integers are little-endian.  A stream is a 32-byte file header
 * followed by records:
 *
 *   file header  magic[8] "VMSAMPL\x01" (the last byte is the major version)
 *                u16 version_major, u16 version_minor, u32 header_size (32)
 *                i64 created_real_ns, u32 flags (0), u32 crc32c(bytes 0..27)
 *                A reader skips header_size - 32 further bytes (a later
 *                minor version may extend the header).
 *
 *   record       u32 payload_len, u16 type, u16 rflags,
 *                u32 hcrc = crc32c(the 8 bytes before it),
 *                payload[payload_len],
 *                u32 crc32c(payload)
 *
 * CRC-32C is the Castagnoli CRC of RFC 3720 (init and final xor ~0).
 * Records are numbered 1, 2, ... in the order they appear (file headers
 * are not records).  A reader
 *   - skips record types it does not know (using payload_len);
 *   - ignores payload bytes after the fields it knows (a minor version may
 *     append fields at the end of a payload);
 *   - stops with an error naming the offset and the record number at an
 *     hcrc or payload CRC mismatch or an undecodable payload;
 *   - reports a record whose header is intact (hcrc matches) but that ends
 *     past the end of the file, a header cut short by the end of the file,
 *     or a tail of zero bytes (what some file systems leave after a crash)
 *     as a torn tail: a writer killed mid-record.  Every record before it
 *     is complete and valid.  The header CRC is what tells a torn tail from
 *     a corrupted length field, which would otherwise "extend past the end
 *     of the file" as well;
 *   - accepts a file header where a record is expected (streams written
 *     one after the other, `cat a.vms b.vms`): schemas and delta state
 *     start over.
 *
 * Varints are unsigned LEB128 (at most 10 bytes; the 10th byte is 0 or 1).
 * Strings are a varint length followed by that many bytes (no NUL).
 */
#ifndef VMSAMPLER_FORMAT_H
#define VMSAMPLER_FORMAT_H

#include <stdint.h>

#define VMS_FMT_MAGIC "VMSAMPL\x01"
#define VMS_FMT_MAGIC_LEN 8
#define VMS_FMT_VERSION_MAJOR 1
#define VMS_FMT_VERSION_MINOR 2
#define VMS_FMT_HEADER_SIZE 32
#define VMS_FMT_RECORD_HDR 12    /* u32 len, u16 type, u16 rflags, u32 hcrc */
#define VMS_FMT_RECORD_TRAILER 4 /* u32 crc32c */
#define VMS_FMT_MAX_PAYLOAD (64u << 20)
#define VMS_FMT_MAX_SCALE 19     /* columns' scale is 0..19 */

/* Record types. */
enum vms_rec_type {
	VMS_REC_SCHEMA = 1, /* the columns of one generation */
	VMS_REC_DATA = 2,   /* one frame */
	VMS_REC_EVENT = 3,  /* something that happened between frames */
	VMS_REC_HOST = 4,   /* the host the stream was recorded on */
};

/* rflags of a DATA record. */
#define VMS_RECF_KEYFRAME 0x0001u /* values are absolute, not deltas */

/*
 * SCHEMA payload:
 *   u32 gen, u32 ncols, i64 t_real_ns
 *   ncols x column:
 *     u8 kind (enum vms_kind), u8 unit (enum vms_unit), u8 wrap_bits
 *     (0 = not a counter, else 32 or 64), i8 scale (value = raw / 10^scale;
 *     0..VMS_FMT_MAX_SCALE, readers reject other values),
 *     string name (1..511 bytes, no NUL), string key (entity key, e.g. a
 *     VM's UUID; may be empty; no NUL)
 *   since minor version 2, then ncols x identity (vmsampler(1), COLUMNS):
 *     string group ("cpu", "vcpu", ...; empty: not in the catalogue),
 *     varint entity_off, varint entity_len, varint sub_off, varint sub_len,
 *     varint field_off: where the entity (the CPU, the device, the VM's
 *     name), the sub-entity (a VM's vCPU, tap or disk) and the field (which
 *     runs to the end) are in the name; all 0 without a group.  Readers
 *     reject offsets outside the name, and, for a group they know, a name
 *     that is not head [entity "."] mid [sub "."] field or a field the
 *     group does not have.  Without them (versions 1.0, 1.1) readers derive
 *     the identity from the name.
 *   A SCHEMA record for a generation already seen replaces it (a writer
 *   repeats the SCHEMA after reopening its output on SIGHUP).
 *
 * DATA payload:
 *   u32 gen, u32 flags (VMS_FRAME_*), u64 seq, u64 t_mono_ns, i64 t_real_ns,
 *   u32 missed_ticks, u32 lost_frames, u64 self_cpu_ns, u64 late_ns,
 *   u32 ncols (must equal the schema's), then ncols varints:
 *     0            the value is missing (VMS_NONE)
 *     n >= 1       keyframe: value = n - 1
 *                  delta frame: value = previous value of this column in
 *                  this generation + zigzag_decode(n - 1), modulo 2^64
 *   In a delta frame, when the previous value of a column was missing, the
 *   base is 0 (the delta is the value itself).  The first DATA record after
 *   a SCHEMA record, and the first of a generation, is always a keyframe;
 *   writers emit a keyframe at least every 64 DATA records so that a
 *   damaged record costs at most 63 frames.  A difference of exactly 2^63
 *   has no delta code (zigzag gives 2^64 - 1, and + 1 wraps to "missing"):
 *   a writer that meets one writes that frame as a keyframe.  A value that
 *   decodes to 2^64 - 1 (VMS_VALUE_NONE) is invalid.
 *
 * EVENT payload:
 *   u32 type (enum vms_event_type), u32 gen, u64 before_seq (the event
 *   happened before the frame with this seq), u64 t_mono_ns, i64 t_real_ns,
 *   string subject (what it is about: a source name, a VM UUID), string
 *   detail (human-readable text)
 * HOST payload (minor version 1; older readers skip it):
 *   varint n (at most 256), n x {string key, string value}: what identifies
 *   and describes the host the stream was recorded on (keys: hostname,
 *   machine_id, boot_id, kernel, cpu_model, cpus_online, numa_nodes,
 *   user_hz, page_size, timezone, vmsampler_version, build_features,
 *   libvirt_uri, libvirt_version, hypervisor, hypervisor_version; a reader
 *   keeps keys it does not know).  The sampler writes one before every
 *   SCHEMA record; the last one read describes the frames that follow.
 */

/* Column kinds. */
enum vms_kind {
	VMS_KIND_COUNTER = 1, /* cumulative, monotonic until wrap or reset */
	VMS_KIND_GAUGE = 2,   /* instantaneous */
};

/* Column units. */
enum vms_unit {
	VMS_UNIT_NONE = 0,
	VMS_UNIT_COUNT = 1,   /* events, operations, packets */
	VMS_UNIT_TICKS = 2,   /* USER_HZ clock ticks (/proc/stat) */
	VMS_UNIT_NS = 3,
	VMS_UNIT_US = 4,
	VMS_UNIT_MS = 5,
	VMS_UNIT_BYTES = 6,
	VMS_UNIT_KIB = 7,
	VMS_UNIT_SECTORS = 8, /* 512 bytes */
	VMS_UNIT_PAGES = 9,
	VMS_UNIT_TASKS = 10,
	VMS_UNIT_LOAD = 11,   /* load average, with scale 2 */
	VMS_UNIT_STATE = 12,  /* an enumeration (e.g. a VM's libvirt state) */
	VMS_UNIT_NS_EPOCH = 13, /* a CLOCK_REALTIME timestamp in ns */
};

/* Frame flags. */
#define VMS_FRAME_PARTIAL 0x0001u   /* some values missing because of errors */
#define VMS_FRAME_NEWGEN 0x0002u    /* first frame of a schema generation */
#define VMS_FRAME_CLOCKSTEP 0x0004u /* wall clock stepped since the last frame */
#define VMS_FRAME_GAP 0x0008u       /* missed ticks or lost frames before this one */
#define VMS_FRAME_RESTARTED 0x0010u /* a source was reset (e.g. libvirt reconnected) */
#define VMS_FRAME_SCALED 0x0020u    /* a perf counter group ran only part of the interval
				       (multiplexed): its values need scaling by the group's
				       time_enabled / time_running deltas */

/* Event types. */
enum vms_event_type {
	VMS_EV_SOURCE_FAILED = 1,
	VMS_EV_SOURCE_RECOVERED = 2,
	VMS_EV_FRAMES_LOST = 3,
	VMS_EV_CLOCK_STEPPED = 4,
	VMS_EV_OUTPUT_REOPENED = 5,
	VMS_EV_MARK = 6,            /* vmsampler mark: subject the text, detail who sent it */
	VMS_EV_VM_STARTED = 16,
	VMS_EV_VM_STOPPED = 17,
	VMS_EV_VM_CRASHED = 18,
	VMS_EV_VM_PAUSED = 19,
	VMS_EV_VM_RESUMED = 20,
	VMS_EV_VM_MIGRATED_IN = 21,
	VMS_EV_VM_MIGRATED_OUT = 22,
	VMS_EV_VM_DEFINED = 23,
	VMS_EV_VM_UNDEFINED = 24,
	VMS_EV_LIBVIRT_LOST = 32,
	VMS_EV_LIBVIRT_BACK = 33,
};

#endif

/* SPDX-License-Identifier: MIT */
/*
 * vmsampler/ring.h - the frame and the frame ring's memory layout
 * (version 1).  The prose description is vmsampler-ring(5).
 *
 * The sampler writes each tick's frame into a ring of fixed-size slots.
 * In the sampler process the ring is an anonymous mapping; with --ring
 * PATH it is a shared file mapping (any path; /dev/shm for memory) that
 * other processes read without locks or system calls.  There is exactly
 * one writer; readers never block it and it never waits for them.
 *
 * File layout (all integers native-endian, which on every Linux host that
 * runs vmsampler today is little-endian; a reader checks the magic):
 *
 *   [0, 4096)                   struct vms_ring_header
 *   [schema_off, +schema_cap)   the schema area: a complete binary stream
 *                               (vmsampler-format(5)): its 32-byte file
 *                               header and the SCHEMA record of the
 *                               current generation, schema_len bytes
 *   [event_off, +event_count * event_size)
 *                               the event area (shared rings): the
 *                               latest events, struct vms_ring_event
 *   [header_size, +slot_count * slot_size)
 *                               the slots; frame S lives in slot
 *                               (S - 1) & (slot_count - 1)
 *
 * A slot is: u64 head seq, u64 reserved, struct vms_frame (64 bytes and
 * slot_cols values), padding, and the u64 tail seq in its last 8 bytes.
 *
 * Slot protocol (seqlock with a sequence number before and after the
 * payload):
 *   writer, frame seq S:  store head = S (relaxed); release fence;
 *                         write the frame; store tail = S (release);
 *                         store header.write_seq = S (release);
 *                         store header.heartbeat_mono_ns (relaxed)
 *   reader, frame seq S:  t = load tail (acquire); t != S: not written yet
 *                         (t < S) or overwritten (t > S); copy the frame;
 *                         acquire fence; h = load head (relaxed);
 *                         valid only if h == S (h > S: overwritten while
 *                         copying: the reader fell behind).
 * Sequence numbers start at 1; 0 marks a slot never written.  A reader
 * that wants frame S when write_seq = W >= S + slot_count has lost frames
 * S .. W - slot_count: it knows exactly how many.
 *
 * Schema protocol (the same seqlock on the whole area): the writer
 * publishes a generation's SCHEMA before committing its first frame:
 *   store schema_seq = odd (relaxed); release fence; write the area,
 *   schema_gen, schema_len; store schema_seq = next even (release).
 * A reader loads schema_seq (acquire; odd: retry), copies schema_len
 * bytes, acquire fence, loads schema_seq again: equal means a consistent
 * copy (the CRCs of the stream check it once more).  A frame's gen names
 * its schema; a reader keeps the schemas it has seen, so frames of an
 * older generation that still sit in the ring stay readable.
 *
 * Growth: when a new generation has more columns than a slot holds (or a
 * SCHEMA larger than the area), the writer builds a new ring file beside
 * the old one, copies the frames readers may still want (same seqs),
 * renames it over PATH (atomic), and then sets VMS_RING_F_SUPERSEDED in
 * the old header.  A reader that sees the flag reopens PATH and goes on
 * from the seq it wanted.
 *
 * Liveness: the writer stores the monotonic time of every frame in
 * heartbeat_mono_ns (CLOCK_MONOTONIC is system-wide) and sets
 * VMS_RING_F_CLOSED when it exits cleanly.  A reader decides that the
 * writer is gone when CLOSED is set, or when no frame came for a while
 * and writer_pid does not exist (checked only when writer_pidns matches
 * the reader's own pid namespace), or when the heartbeat is older than
 * max(10 intervals, 5 s).
 */
#ifndef VMSAMPLER_RING_H
#define VMSAMPLER_RING_H

#include <stdint.h>

/* One sample: 64 bytes of header, then ncols values.  A value equal to
 * VMS_VALUE_NONE is missing (could not be read this tick). */
struct vms_frame {
	uint64_t seq;          /* 1, 2, ... per run */
	uint64_t t_mono_ns;    /* CLOCK_MONOTONIC when the values were read */
	int64_t t_real_ns;     /* CLOCK_REALTIME at the same instant */
	uint32_t gen;          /* schema generation */
	uint32_t flags;        /* VMS_FRAME_* (vmsampler/format.h) */
	uint32_t missed_ticks; /* deadlines skipped since the previous frame */
	uint32_t lost_frames;  /* frames a consumer lost since the previous frame */
	uint64_t self_cpu_ns;  /* sampler CPU time (user+sys) since the previous frame */
	uint64_t late_ns;      /* how late this tick started after its deadline */
	uint32_t ncols;        /* values that follow */
	uint32_t reserved;
	uint64_t v[];
};

#define VMS_VALUE_NONE UINT64_MAX

#define VMS_RING_MAGIC "VMSRING\x01"
#define VMS_RING_VERSION 1
#define VMS_RING_PAGE 4096u

/* header flags */
#define VMS_RING_F_SHARED 0x1u     /* a file mapping other processes may read */
#define VMS_RING_F_SUPERSEDED 0x2u /* a new ring replaced this one at the path: reopen it */
#define VMS_RING_F_CLOSED 0x4u     /* the writer exited cleanly */

struct vms_ring_slot_head {
	uint64_t head; /* atomic: seq being / last written */
	uint64_t reserved;
	/* struct vms_frame follows; the slot's last 8 bytes are the tail seq */
};

/* An entry of the event area: the EVENT records of vmsampler-format(5)
 * (VM lifecycle, sources failing, markers, ...), numbered 1, 2, ... in
 * the order the writer put them; event N lives in entry
 * (N - 1) & (event_count - 1).  The same seqlock as a slot: the writer
 * stores head = N, release fence, the payload, then tail = N (release)
 * and header.event_write = N (release); a reader loads tail (acquire),
 * copies, acquire fence, loads head: valid only if both are N.  An event
 * belongs before the frame with seq before_seq. */
struct vms_ring_event {
	uint64_t head;        /* atomic */
	uint32_t type;        /* enum vms_event_type (format.h) */
	uint32_t gen;         /* schema generation when it happened */
	uint64_t before_seq;
	uint64_t t_mono_ns;
	int64_t t_real_ns;
	char subject[80];     /* NUL-terminated */
	char detail[160];     /* NUL-terminated */
	uint64_t tail;        /* atomic */
};

/* The first 4096 bytes of a ring mapping.  Fields marked atomic change
 * while readers look; the others are fixed when the file is created. */
struct vms_ring_header {
	char magic[8];             /*   0: VMS_RING_MAGIC */
	uint32_t version;          /*   8: VMS_RING_VERSION */
	uint32_t header_size;      /*  12: bytes before slot 0 (multiple of 4096) */
	uint32_t slot_size;        /*  16: bytes per slot (multiple of 64) */
	uint32_t slot_count;       /*  20: power of two */
	uint32_t slot_cols;        /*  24: value capacity of a slot */
	uint32_t flags;            /*  28: atomic: VMS_RING_F_* */
	uint64_t writer_pid;       /*  32 */
	uint64_t created_real_ns;  /*  40 */
	uint64_t schema_off;       /*  48: offset of the schema area (4096) */
	uint64_t schema_cap;       /*  56: its size */
	uint64_t interval_ns;      /*  64: the writer's sampling interval */
	uint64_t writer_pidns;     /*  72: inode of the writer's pid namespace (0: unknown) */
	uint64_t run_id;           /*  80: the same in every ring of one run (kept when it
				    *      grows); another value at the path: a new run */
	uint64_t event_off;        /*  88: offset of the event area (0: none) */
	uint32_t event_count;      /*  96: its entries (a power of two) */
	uint32_t event_size;       /* 100: bytes per entry (sizeof struct vms_ring_event) */
	uint64_t reserved0[3];     /* 104 */
	/* written by the writer every frame (own cache line) */
	uint64_t write_seq __attribute__((aligned(64))); /* 128: atomic: last committed seq */
	uint64_t heartbeat_mono_ns;                        /* 136: atomic */
	uint64_t event_write;                              /* 144: atomic: last event number written */
	/* the schema area's seqlock (own cache line) */
	uint64_t schema_seq __attribute__((aligned(64))); /* 192: atomic: odd while written */
	uint32_t schema_gen;                               /* 200: atomic */
	uint32_t schema_len;                               /* 204: atomic: bytes in the area */
};

#endif

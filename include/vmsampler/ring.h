/* SPDX-License-Identifier: MIT */
/*
 * vmsampler/ring.h - the frame and the frame ring's memory layout.
 *
 * The sampler writes each tick's frame into a ring of fixed-size slots.
 * In the sampler process the ring is an anonymous mapping; with --ring it
 * is a shared file mapping that other processes read without locks or
 * system calls.  There is exactly one writer; readers never block it.
 *
 * Slot protocol (seqlock with a sequence number before and after the
 * payload):
 *   writer, frame seq S:  store head = S (relaxed); release fence;
 *                         write the frame; store tail = S (release);
 *                         store header.write_seq = S (release)
 *   reader, frame seq S:  t = load tail (acquire); t != S: not written yet
 *                         (t < S) or overwritten (t > S); copy the frame;
 *                         acquire fence; h = load head (relaxed);
 *                         valid only if h == S.
 * Sequence numbers start at 1; 0 marks a slot never written.  Frame S lives
 * in slot (S - 1) & (slot_count - 1).
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

struct vms_ring_slot_head {
	uint64_t head; /* atomic: seq being / last written */
	uint64_t reserved;
	/* struct vms_frame follows; the slot's last 8 bytes are the tail seq */
};

/* The first 4096 bytes of a ring mapping. */
struct vms_ring_header {
	char magic[8];
	uint32_t version;
	uint32_t header_size;  /* bytes before slot 0 */
	uint32_t slot_size;    /* bytes per slot (multiple of 64) */
	uint32_t slot_count;   /* power of two */
	uint32_t slot_cols;    /* value capacity of a slot */
	uint32_t flags;
	uint64_t writer_pid;
	uint64_t created_real_ns;
	uint64_t reserved0[2];
	/* written by the writer, read by readers (own cache line) */
	uint64_t write_seq __attribute__((aligned(64))); /* atomic: last committed seq */
	uint64_t heartbeat_mono_ns;                        /* atomic */
};

#endif

/* SPDX-License-Identifier: MIT */
/* binfmt.h - the binary stream (vmsampler/format.h): record encoder and
 * streaming decoder.
 *
 * Encoder: plain functions that write one whole record (header, payload,
 * CRC) into a caller's buffer of a known maximum size.  The DATA encoder
 * runs every tick: it allocates nothing and makes one pass over the
 * values.
 *
 * Decoder: reads a stream from a file descriptor (pipes too) or from
 * memory and yields items one at a time: the file header, SCHEMA (a
 * struct vms_schema), DATA (a struct vms_frame with absolute values, and
 * its schema), EVENT (a struct vms_event).  Unknown record types are
 * skipped.  It stops at the first damaged record with its offset and
 * number, and tells a torn tail (the writer was killed mid-record) from
 * damage.  Bad input never makes it read out of bounds or crash; memory
 * grows only with the bytes actually present. */
#ifndef VMS_BINFMT_H
#define VMS_BINFMT_H

#include "schema.h"
#include "sink.h"
#include <vmsampler/format.h>
#include <vmsampler/ring.h>

/* ---- varints and zigzag ------------------------------------------------ */

#define VMS_VARINT_MAX 10

static inline uint8_t *vms_varint_put(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* Decode one varint from [*p, end): 0 and *p advanced, or -EBADMSG
 * (truncated, or more than 64 bits). */
int vms_varint_get(const uint8_t **p, const uint8_t *end, uint64_t *v);

static inline size_t vms_varint_len(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static inline uint64_t vms_zigzag(uint64_t d)
{
	return (d << 1) ^ (uint64_t)((int64_t)d >> 63);
}

static inline uint64_t vms_unzigzag(uint64_t z)
{
	return (z >> 1) ^ (0 - (z & 1));
}

/* ---- encoder ------------------------------------------------------------- */

/* Bytes of the fixed part of a DATA payload (before the values). */
#define VMS_BIN_DATA_FIXED 60
/* Bytes of the fixed part of an EVENT payload (before the strings). */
#define VMS_BIN_EVENT_FIXED 32
/* Record overhead: header and CRC trailer. */
#define VMS_BIN_REC_OVERHEAD (VMS_FMT_RECORD_HDR + VMS_FMT_RECORD_TRAILER)

/* The 32-byte file header. Returns VMS_FMT_HEADER_SIZE. */
size_t vms_bin_header_enc(uint8_t *p, int64_t created_real_ns);

/* Exact size of the SCHEMA record for s, and its encoder (returns the
 * same size). */
size_t vms_bin_schema_size(const struct vms_schema *s);
size_t vms_bin_schema_enc(uint8_t *p, const struct vms_schema *s);

/* Upper bound of a DATA record with ncols values. */
static inline size_t vms_bin_data_max(uint32_t ncols)
{
	return VMS_BIN_REC_OVERHEAD + VMS_BIN_DATA_FIXED + (size_t)ncols * VMS_VARINT_MAX;
}

/* Encode frame f as a DATA record at p (room: vms_bin_data_max(f->ncols)).
 * prev[0..ncols) holds the previous values of this generation (the delta
 * base; a missing value counts as 0) and is updated to f's.  With key
 * false the values are deltas, unless one of them cannot be encoded (a
 * difference of 2^63): then the record becomes a keyframe.  *keyframe
 * says which it is.  Returns the record's size. */
size_t vms_bin_data_enc(uint8_t *p, const struct vms_frame *f, uint64_t *prev, bool key,
			bool *keyframe);
/* The same with flags and lost_frames given (an output's own gaps: see
 * sink.h) instead of f's. */
size_t vms_bin_data_enc_meta(uint8_t *p, const struct vms_frame *f, uint32_t flags,
			     uint32_t lost_frames, uint64_t *prev, bool key, bool *keyframe);

/* A HOST record (hostid.h) has at most this many pairs (a decoder
 * refuses more). */
#define VMS_BIN_HOST_MAX_PAIRS 256

/* Upper bound of an EVENT record, and its encoder. */
#define VMS_BIN_EVENT_MAX                                                                      \
	(VMS_BIN_REC_OVERHEAD + VMS_BIN_EVENT_FIXED + 2 * VMS_VARINT_MAX +                      \
	 sizeof(((struct vms_event *)0)->subject) + sizeof(((struct vms_event *)0)->detail))
size_t vms_bin_event_enc(uint8_t *p, const struct vms_event *ev);

/* ---- decoder ------------------------------------------------------------- */

enum vms_bin_item {
	VMS_BIN_END = 0,   /* end of input (see torn) */
	VMS_BIN_HEADER,    /* a file header (the first, or one of a concatenated stream) */
	VMS_BIN_SCHEMA,    /* d->schema */
	VMS_BIN_DATA,      /* d->frame, d->schema */
	VMS_BIN_EVENT,     /* d->event */
};

enum vms_bin_err {
	VMS_BIN_OK = 0,
	VMS_BIN_ENOTVMS,   /* not a vmsampler stream */
	VMS_BIN_EVERSION,  /* a vmsampler stream of another major version */
	VMS_BIN_ECRC,      /* header or payload CRC mismatch */
	VMS_BIN_EMALFORMED, /* CRC fine but the payload does not decode */
	VMS_BIN_EIO,       /* read error */
	VMS_BIN_ENOMEM,
};

struct vms_bin_dec {
	/* input */
	int fd;                  /* -1: memory input */
	/* set by the caller after opening with an fd: the input is read
	 * through this instead of read(2) (a .zst: src/lib/zread.c); bytes,
	 * 0 at the end, or -errno */
	ssize_t (*read)(void *ctx, void *buf, size_t n);
	void *read_ctx;
	const uint8_t *data;     /* buf (fd) or the caller's memory */
	uint8_t *buf;
	size_t cap;
	size_t pos, end;         /* unread bytes are data[pos, end) */
	uint64_t base;           /* stream offset of data[0] */
	bool eof;
	bool follow;             /* set by the caller: the input may grow (tail -f) */
	bool pending;            /* follow: END because the next item is incomplete */

	/* the item just returned */
	uint64_t rec_off;        /* its offset */
	uint64_t rec_index;      /* its record number (1-based; 0 for a file header) */
	uint16_t version_minor;  /* of the last file header */
	int64_t created_real_ns;
	struct vms_schema *schema;
	struct vms_frame *frame;
	struct vms_event event;
	bool keyframe;           /* the DATA item was a keyframe */
	/* the last HOST record read (not an item: it is kept here), as
	 * host_n "key\0value\0" pairs in host[0, host_len); NULL: none yet */
	char *host;
	size_t host_len;
	uint32_t host_n;

	/* counts */
	uint64_t nrec;           /* complete, valid records so far */
	uint64_t nframes, nevents, nschemas_read, nskipped, nheaders, nhosts;

	/* how it ended */
	bool torn;               /* a torn tail: */
	uint64_t torn_off;       /*   where the incomplete record starts */
	uint64_t torn_len;       /*   and its bytes up to the end of the input */
	enum vms_bin_err err;    /* sticky: next() keeps failing */
	uint64_t err_off;        /* offset of the damaged record (or header) */
	uint64_t err_index;      /* its record number (0: a file header) */
	char err_msg[160];       /* what is wrong, e.g. "payload CRC mismatch" */

	/* state */
	bool in_stream;          /* a file header was read */
	bool done;
	struct vms_schema **schemas; /* every schema read (owned) */
	uint32_t nschemas, capschemas;
	uint32_t visible;        /* schemas[visible..] belong to the current stream */
	uint64_t *prev;          /* delta base */
	struct vms_schema *prev_schema; /* whose values prev holds (NULL: none) */
	uint32_t frame_cap;
};

/* Decode from fd (not closed by the decoder) or from memory (not copied;
 * must stay valid).  0 or -ENOMEM. */
int vms_bin_dec_open_fd(struct vms_bin_dec *d, int fd);
int vms_bin_dec_open_mem(struct vms_bin_dec *d, const void *data, size_t len);
/* The next item (enum vms_bin_item > 0), VMS_BIN_END (0) at the end of the
 * input (a torn tail sets d->torn; with d->follow an incomplete item is
 * left unread and the next call tries again, so the input may grow), or -EBADMSG / -EIO / -ENOMEM with
 * d->err, d->err_off, d->err_index and d->err_msg set. */
int vms_bin_dec_next(struct vms_bin_dec *d);
void vms_bin_dec_close(struct vms_bin_dec *d);

const char *vms_bin_err_name(enum vms_bin_err e);

/* A stream's head: the file header, the HOST record of s->host (if any)
 * and the SCHEMA record of s, what a
 * reader needs before the frames of s's generation.  Its size, and its
 * publication in a shared ring's schema area (nothing for an anonymous
 * ring; the loop checked vms_ring_fits() with this size first). */
struct vms_ring;
size_t vms_bin_head_size(const struct vms_schema *s);
void vms_bin_ring_publish(struct vms_ring *r, const struct vms_schema *s);

#endif

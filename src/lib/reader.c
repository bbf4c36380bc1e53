/* SPDX-License-Identifier: MIT */
/* reader.c - libvmsampler (include/vmsampler/reader.h): binary streams
 * through the binfmt decoder, live rings through their seqlock protocol
 * (include/vmsampler/ring.h), rates through the rates plan of `dump
 * --rates`.  Never prints, never exits. */
#include <vmsampler/reader.h>

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "binfmt.h"
#include "grow.h"
#include "rates.h"
#include "reader_int.h"
#include "ring.h"
#include "rotname.h"
#include "schema.h"
#include "zread.h"

/* consecutive torn copies of one slot before it counts as lost */
#define TORN_LIMIT 1000
/* attempts at a consistent copy of the schema area per call */
#define SCHEMA_TRIES 100
/* FOLLOW_NAME: at the end of a file, look for its successor at most this often */
#define NAME_CHECK_NS (200ull * 1000 * 1000)
/* sequence numbers beyond this are damage */
#define VMS_SEQ_MAX (1ull << 62)

struct vms_reader {
	int kind;
	unsigned flags;
	char err[320];

	/* file */
	int fd;
	bool own_fd;
	bool dec_open;
	bool eof;
	bool want_events; /* vms_rdr_want_events: next() returns 2 on an EVENT */
	struct vms_bin_dec dec;
	struct vms_zread *z; /* a .zst: the decoder reads through it */
	/* VMS_READER_FOLLOW_NAME */
	char *fpath;              /* the file being read (NULL: not followed by name) */
	uint64_t fdev, fino;      /* its identity */
	uint8_t hdr0[VMS_FMT_HEADER_SIZE]; /* its file header, as first read */
	bool have_hdr0;
	char *next_path;          /* go on in it once this file is read to its end */
	uint64_t checked_ns;      /* the last look for a successor (CLOCK_MONOTONIC) */
	char note[600], note_out[600];

	/* ring */
	struct vms_ring ring;
	bool snapshot;            /* a copy in memory: no writer */
	uint64_t next_seq;
	uint64_t my_pidns;
	uint64_t run_id;          /* the run being followed */
	uint8_t *sbuf;            /* schema area copy */
	size_t sbuf_cap;
	struct vms_schema **schemas; /* generations seen (owned) */
	uint32_t nschemas, capschemas;
	char *host;               /* the HOST record of the schema area last read */
	size_t host_len;
	uint32_t host_n;
	struct vms_frame *buf;    /* copied frame */
	uint32_t buf_cols;
	uint64_t view_seq;
	/* the ring's event area (vms_rdr_want_events) */
	uint64_t ev_next;         /* number of the next event to deliver */
	uint64_t ev_min_seq;      /* events before this frame are older than the reading */
	uint64_t ev_lost;         /* overwritten before they were read */
	struct vms_event rev;     /* the event delivered */

	/* the current frame */
	const struct vms_frame *cur;
	const struct vms_schema *sch;
	const struct vms_schema *last_sch;
	bool changed;
	uint64_t missed, torn;

	/* rates */
	bool rates;
	struct vms_rate_stream st; /* the plan, each column's last value and when */
	double *rv;                /* the current interval's rates, per plan column */
	bool rates_ok;
};

VMS_PRINTF(3, 4)
static void put_line(char *dst, size_t cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(dst, cap, fmt, ap);
	va_end(ap);
}
/* the last failure (vms_reader_error) */
#define seterr(r, ...) put_line((r)->err, sizeof((r)->err), __VA_ARGS__)
/* a change of file (vms_rdr_follow_note) */
#define note(r, ...) put_line((r)->note, sizeof((r)->note), __VA_ARGS__)

/* ---- opening ---------------------------------------------------------------- */

static struct vms_reader *reader_new(unsigned flags)
{
	struct vms_reader *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->flags = flags;
	r->fd = -1;
	r->next_seq = 1;
	return r;
}

static int grow_buf(struct vms_reader *r, uint32_t cols)
{
	if (r->buf && cols <= r->buf_cols)
		return 0;
	struct vms_frame *b = realloc(r->buf, vms_frame_size(cols));
	if (!b)
		return -ENOMEM;
	r->buf = b;
	r->buf_cols = cols;
	return 0;
}

static int ring_setup(struct vms_reader *r)
{
	const struct vms_ring_header *h = r->ring.hdr;
	int e = grow_buf(r, r->ring.slot_cols);
	if (e < 0)
		return e;
	if (h->schema_cap > r->sbuf_cap) {
		uint8_t *b = realloc(r->sbuf, h->schema_cap);
		if (!b)
			return -ENOMEM;
		r->sbuf = b;
		r->sbuf_cap = h->schema_cap;
	}
	r->run_id = h->run_id;
	return 0;
}

/* the oldest frame still in the ring, or the next one (NEW_ONLY) */
static void ring_start(struct vms_reader *r)
{
	uint64_t w = vms_ring_write_seq(&r->ring);
	uint64_t n = vms_ring_capacity(&r->ring);
	if (r->flags & VMS_READER_NEW_ONLY)
		r->next_seq = w + 1;
	else
		r->next_seq = w >= n ? w - n + 1 : 1;
	uint64_t last = vms_ring_event_last(&r->ring), cap = (uint64_t)r->ring.ev_mask + 1;
	r->ev_next = last >= cap ? last - cap + 1 : 1;
	r->ev_min_seq = r->next_seq;
}

/* The next event of the ring's event area that belongs before frame
 * upto_seq: 2 (in r->rev), or 0 (none yet). */
static int ring_event(struct vms_reader *r, uint64_t upto_seq)
{
	uint64_t last = vms_ring_event_last(&r->ring), cap = (uint64_t)r->ring.ev_mask + 1;
	if (last >= r->ev_next + cap) {
		r->ev_lost += last - cap + 1 - r->ev_next;
		r->ev_next = last - cap + 1;
	}
	while (r->ev_next <= last) {
		struct vms_ring_event ev;
		int e = vms_ring_event_get(&r->ring, r->ev_next, &ev);
		if (e == -EAGAIN)
			return 0; /* being written */
		if (e < 0) {
			r->ev_lost++;
			r->ev_next++;
			continue;
		}
		if (ev.before_seq < r->ev_min_seq) {
			r->ev_next++; /* before the first frame this reader sees */
			continue;
		}
		if (ev.before_seq > upto_seq)
			return 0;
		r->ev_next++;
		memset(&r->rev, 0, sizeof(r->rev));
		r->rev.type = ev.type;
		r->rev.gen = ev.gen;
		r->rev.before_seq = ev.before_seq;
		r->rev.t_mono_ns = ev.t_mono_ns;
		r->rev.t_real_ns = ev.t_real_ns;
		memcpy(r->rev.subject, ev.subject, sizeof(r->rev.subject) - 1);
		memcpy(r->rev.detail, ev.detail, sizeof(r->rev.detail) - 1);
		return 2;
	}
	return 0;
}

static int file_setup(struct vms_reader *r)
{
	int e = r->fd >= 0 || r->z ? vms_bin_dec_open_fd(&r->dec, r->fd) : 0;
	if (e < 0)
		return e;
	r->dec_open = true;
	/* a compressed file is a closed one: it does not grow */
	r->dec.follow = (r->flags & VMS_READER_FOLLOW) != 0 && !r->z;
	if (r->z) {
		r->dec.read = vms_zread_read;
		r->dec.read_ctx = r->z;
	}
	r->kind = VMS_READER_FILE;
	if (r->flags & VMS_READER_NEW_ONLY) {
		/* decode what is there, keep the state, return what follows */
		while ((e = vms_reader_next(r)) > 0)
			;
		r->eof = false;
		if (e < 0)
			return e;
	}
	return 0;
}

/* A zstd-compressed stream (a rotated file, compress: zstd): r->fd, or
 * memory, decompressed as the decoder reads it. */
static int zst_setup(struct vms_reader *r, const char *name, int unused, const void *data, size_t len)
{
	(void)unused;
	int e = data ? vms_zread_open_mem(&r->z, data, len) : vms_zread_open_fd(&r->z, r->fd);
	if (e == -ENOTSUP) {
		seterr(r, "%s: a zstd-compressed file, and this libvmsampler was built without zstd", name);
		return e;
	}
	if (e < 0) {
		seterr(r, "%s: %s", name, strerror(-e));
		return e;
	}
	e = file_setup(r);
	if (e < 0 && !r->err[0])
		seterr(r, "%s: %s", name, strerror(-e));
	return e;
}

/* FOLLOW_NAME: remember the file by its path and identity */
static int name_setup(struct vms_reader *r, const char *path)
{
	struct stat st;
	if (!(r->flags & VMS_READER_FOLLOW_NAME) || fstat(r->fd, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	if (!(r->fpath = strdup(path)))
		return -ENOMEM;
	r->fdev = (uint64_t)st.st_dev;
	r->fino = (uint64_t)st.st_ino;
	return 0;
}

int vms_reader_open(struct vms_reader **out, const char *path, unsigned flags)
{
	if (flags & VMS_READER_FOLLOW_NAME)
		flags |= VMS_READER_FOLLOW;
	struct vms_reader *r = reader_new(flags);
	int e;
	*out = r;
	if (!r)
		return -ENOMEM;
	if (strcmp(path, "-") == 0) {
		r->fd = STDIN_FILENO;
		e = file_setup(r);
		if (e < 0 && !r->err[0])
			seterr(r, "standard input: %s", strerror(-e));
		return e;
	}
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		e = -errno;
		seterr(r, "%s: %s", path, strerror(-e));
		return e;
	}
	r->own_fd = true;
	char magic[8];
	ssize_t n = pread(r->fd, magic, sizeof(magic), 0);
	if (n >= 7 && memcmp(magic, VMS_RING_MAGIC, 7) == 0) {
		char why[256];
		close(r->fd);
		r->fd = -1;
		r->own_fd = false;
		r->kind = VMS_READER_RING;
		e = vms_ring_open_read(&r->ring, path, why, sizeof(why));
		if (e < 0) {
			seterr(r, "%s: %s", path, why);
			return e;
		}
		r->my_pidns = vms_pidns_ino();
		e = ring_setup(r);
		if (e < 0) {
			seterr(r, "%s: %s", path, strerror(-e));
			return e;
		}
		ring_start(r);
		return 0;
	}
	if ((e = name_setup(r, path)) < 0) {
		seterr(r, "%s: %s", path, strerror(-e));
		return e;
	}
	if (n >= 4 && memcmp(magic, VMS_ZSTD_MAGIC, 4) == 0)
		return zst_setup(r, path, -1, NULL, 0);
	/* an empty file is a stream whose writer has not written yet (or
	 * died before its first write: the decoder calls that a torn tail) */
	if (n < 0) {
		e = -errno; /* a directory: EISDIR */
		seterr(r, "%s: %s", path, strerror(-e));
		return e;
	}
	/* a header cut short (1 to 7 bytes of the magic) is a stream whose
	 * writer died in its first write: the decoder calls it a torn tail */
	if (n > 0 && memcmp(magic, VMS_FMT_MAGIC, n < 7 ? (size_t)n : 7) != 0) {
		seterr(r, "%s: not a vmsampler stream or ring (no VMSAMPL or VMSRING magic)", path);
		return -EBADMSG;
	}
	e = file_setup(r);
	if (e < 0 && !r->err[0])
		seterr(r, "%s: %s", path, strerror(-e));
	return e;
}

int vms_reader_open_mem(struct vms_reader **out, const void *data, size_t len, unsigned flags)
{
	struct vms_reader *r = reader_new(flags & ~(VMS_READER_FOLLOW | VMS_READER_FOLLOW_NAME));
	int e;
	*out = r;
	if (!r)
		return -ENOMEM;
	if (len >= 7 && memcmp(data, VMS_RING_MAGIC, 7) == 0) {
		char why[256];
		r->kind = VMS_READER_RING;
		r->snapshot = true;
		e = vms_ring_view_mem(&r->ring, data, len, why, sizeof(why));
		if (e < 0) {
			seterr(r, "ring: %s", why);
			return e;
		}
		e = ring_setup(r);
		if (e < 0)
			return e;
		ring_start(r);
		return 0;
	}
	if (len >= 4 && memcmp(data, VMS_ZSTD_MAGIC, 4) == 0)
		return zst_setup(r, "memory", -1, data, len);
	e = vms_bin_dec_open_mem(&r->dec, data, len);
	if (e < 0)
		return e;
	return file_setup(r);
}

int vms_rdr_open_mapping(struct vms_reader **out, const void *map, size_t len)
{
	int e = vms_reader_open_mem(out, map, len, 0);
	if (e == 0 && (*out)->kind == VMS_READER_RING) {
		(*out)->snapshot = false; /* live: its writer is in this process */
		(*out)->my_pidns = vms_pidns_ino();
	}
	return e;
}

static void rates_free(struct vms_reader *r)
{
	vms_rate_stream_free(&r->st);
	free(r->rv);
}

void vms_reader_close(struct vms_reader *r)
{
	if (!r)
		return;
	if (r->dec_open)
		vms_bin_dec_close(&r->dec);
	vms_zread_close(r->z);
	if (r->own_fd && r->fd >= 0)
		close(r->fd);
	free(r->fpath);
	free(r->next_path);
	vms_ring_destroy(&r->ring);
	vms_schema_unref_n(r->schemas, r->nschemas);
	free(r->schemas);
	free(r->host);
	free(r->sbuf);
	free(r->buf);
	rates_free(r);
	free(r);
}

int vms_reader_kind(const struct vms_reader *r)
{
	return r->kind;
}

const char *vms_reader_error(const struct vms_reader *r)
{
	return r ? r->err : "out of memory";
}

bool vms_reader_eof(const struct vms_reader *r)
{
	return r->eof;
}

/* ---- rates -------------------------------------------------------------------- */

int vms_reader_rates_enable(struct vms_reader *r)
{
	r->rates = true;
	return 0;
}

static int rates_frame(struct vms_reader *r)
{
	r->rates_ok = false;
	int e = vms_rate_stream_schema(&r->st, r->sch);
	if (e > 0) {
		uint32_t n = r->st.plan->ncols;
		double *rv = realloc(r->rv, (n ? n : 1) * sizeof(*rv));
		if (!rv)
			return -ENOMEM;
		r->rv = rv;
	}
	if (e < 0)
		return e;
	/* each rate over its own columns' interval: since the last frame
	 * that had them (by name across generations), as dump --rates
	 * computes them */
	e = vms_rate_stream_values(&r->st, r->cur, r->rv);
	if (e < 0)
		return e;
	r->rates_ok = e > 0 && r->st.dt > 0;
	return 0;
}

uint32_t vms_reader_nrates(const struct vms_reader *r)
{
	return r->rates && r->st.plan && r->st.sch == r->sch ? r->st.plan->ncols : 0;
}

const struct vms_rate_col *vms_rdr_rate_col(const struct vms_reader *r, uint32_t i)
{
	return i < vms_reader_nrates(r) ? &r->st.plan->cols[i] : NULL;
}

const char *vms_reader_rate_name(const struct vms_reader *r, uint32_t i)
{
	return i < vms_reader_nrates(r) ? r->st.plan->cols[i].name : NULL;
}

int vms_reader_rate(const struct vms_reader *r, uint32_t i, double *v)
{
	if (i >= vms_reader_nrates(r))
		return -ERANGE;
	const struct vms_rate_col *c = &r->st.plan->cols[i];
	if (c->op == VMS_ROP_GAUGE) {
		uint64_t x = r->cur->v[c->a];
		if (x == VMS_NONE)
			return -ENODATA;
		*v = vms_unscale((double)x, c->scale);
		return 0;
	}
	if (!r->rates_ok || isnan(r->rv[i]))
		return -ENODATA;
	*v = r->rv[i];
	return 0;
}

double vms_reader_rate_interval(const struct vms_reader *r)
{
	return r->rates_ok ? r->st.dt : 0;
}

unsigned vms_reader_rate_flags(const struct vms_reader *r)
{
	return r->st.flags;
}

/* ---- frames from a stream ------------------------------------------------------ */

/* ---- following a file by its name (VMS_READER_FOLLOW_NAME) ---------------------- */

/* A new stream (another file, another run on the ring): its schemas are
 * new objects, the old ones freed, and one may sit where an old one was:
 * nothing may be compared against the old ones (the rate plan is renewed
 * for the new objects) and no interval runs across. */
static void new_stream(struct vms_reader *r)
{
	r->last_sch = NULL;
	vms_rate_stream_restart(&r->st);
	r->st.sch = r->st.psch = NULL;
}

static const char *base_of(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* The file was rewritten in place (a new run truncated it): it is now
 * shorter than its records read whole, or its file header is another. */
static bool rewritten(struct vms_reader *r)
{
	struct stat st;
	if (r->z || fstat(r->fd, &st) < 0)
		return false;
	uint64_t whole = r->dec.base + r->dec.pos; /* the end of the last whole record */
	if ((uint64_t)st.st_size < whole)
		return true;
	uint8_t h[VMS_FMT_HEADER_SIZE];
	if (r->have_hdr0 && pread(r->fd, h, sizeof(h), 0) == (ssize_t)sizeof(h) &&
	    memcmp(h, r->hdr0, sizeof(h)) != 0)
		return true;
	off_t pos = lseek(r->fd, 0, SEEK_CUR);
	if (pos > st.st_size) {
		/* the writer cut the incomplete record it could not finish (a
		 * full disk: out.c): drop what was read of it, and read on
		 * from the last whole record, where the writer goes on */
		r->dec.end = r->dec.pos;
		lseek(r->fd, (off_t)whole, SEEK_SET);
	}
	return false;
}

/* The file that follows this one, if it has begun (malloc'd), or NULL:
 * a new file at the path (the old one was renamed away, or removed), else
 * the next rotated file of the same output by name. */
static char *successor(struct vms_reader *r)
{
	struct stat st;
	if (stat(r->fpath, &st) == 0 && ((uint64_t)st.st_dev != r->fdev || (uint64_t)st.st_ino != r->fino))
		return S_ISREG(st.st_mode) && st.st_size > 0 ? strdup(r->fpath) : NULL;
	const char *base = base_of(r->fpath);
	char ext[256];
	size_t sl;
	if (!vms_rotname_split(base, &sl, ext, sizeof(ext)))
		return NULL;
	size_t dl = (size_t)(base - r->fpath);
	char *dir = dl ? strndup(r->fpath, dl) : strdup("."), *stem = strndup(base, sl);
	size_t kl = strlen(base) - (strlen(base) > 4 && !strcmp(base + strlen(base) - 4, ".zst") ? 4 : 0);
	DIR *d = dir && stem ? opendir(dir) : NULL;
	char *best = NULL;
	bool best_zst = false;
	struct dirent *de;
	while (d && (de = readdir(d))) {
		bool zst;
		if (!vms_rotname_match(stem, ext, de->d_name, &zst))
			continue;
		/* names compared without .zst: sorted in the order written */
		size_t nl = strlen(de->d_name) - (zst ? 4 : 0);
		int c = strncmp(de->d_name, base, nl < kl ? nl : kl);
		if (c < 0 || (c == 0 && nl <= kl))
			continue; /* this one or an earlier one */
		if (best) {
			size_t bl = strlen(best) - (best_zst ? 4 : 0);
			int b = strncmp(de->d_name, best, nl < bl ? nl : bl);
			if (b > 0 || (b == 0 && (nl > bl || (nl == bl && zst))))
				continue; /* later than the best so far (or its .zst) */
		}
		char *n = strdup(de->d_name);
		if (!n)
			continue;
		free(best);
		best = n;
		best_zst = zst;
	}
	if (d)
		closedir(d);
	char *path = NULL;
	if (best && asprintf(&path, "%s%s", dl ? dir : "", best) < 0)
		path = NULL;
	free(best);
	free(dir);
	free(stem);
	/* the file being written begins with its header: an empty one has
	 * not begun (the sampler opens the next file, then closes this one) */
	if (path && !best_zst && (stat(path, &st) != 0 || st.st_size == 0)) {
		free(path);
		path = NULL;
	}
	return path;
}

/* Read path from its start instead of the file being read: 0 or -errno
 * (the old file is kept then). */
static int name_open(struct vms_reader *r, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	uint8_t magic[4];
	struct vms_zread *z = NULL;
	char *p = strdup(path);
	int e = !p ? -ENOMEM : fstat(fd, &st) < 0 ? -errno : 0;
	if (e == 0 && pread(fd, magic, sizeof(magic), 0) == (ssize_t)sizeof(magic) &&
	    memcmp(magic, VMS_ZSTD_MAGIC, 4) == 0)
		e = vms_zread_open_fd(&z, fd);
	if (e < 0) {
		free(p);
		close(fd);
		return e;
	}
	if (r->dec_open)
		vms_bin_dec_close(&r->dec);
	r->dec_open = false;
	vms_zread_close(r->z);
	r->z = z;
	close(r->fd);
	r->fd = fd;
	free(r->fpath);
	r->fpath = p;
	r->fdev = (uint64_t)st.st_dev;
	r->fino = (uint64_t)st.st_ino;
	r->have_hdr0 = false;
	/* a new stream: its schemas are new objects (the old ones are freed:
	 * nothing may compare against them) and no interval runs across */
	r->cur = NULL;
	r->sch = NULL;
	new_stream(r);
	r->eof = false;
	r->flags &= ~VMS_READER_NEW_ONLY;
	return file_setup(r);
}

/* At the end of the file: 1 go on decoding (another file is open, or
 * the old one is to be read to its end first), 0 nothing new, -errno. */
static int name_follow(struct vms_reader *r, bool now)
{
	if (r->next_path) {
		/* this file was read to its end after its successor began */
		char *p = r->next_path;
		bool pending = r->dec.pending;
		r->next_path = NULL;
		char *old = strdup(r->fpath);
		int e = name_open(r, p);
		if (e == 0)
			note(r, "%s: continuing in %s%s", old ? old : "?", p,
			     pending ? " (the old file ends with an incomplete record)" : "");
		free(old);
		free(p);
		if (e == -ENOENT)
			return 0; /* gone meanwhile (compressed, pruned): look again */
		if (e < 0)
			seterr(r, "%s: %s", r->fpath, strerror(-e));
		return e < 0 ? e : 1;
	}
	uint64_t t = vms_mono_now();
	if (!now && t - r->checked_ns < NAME_CHECK_NS)
		return 0;
	r->checked_ns = t;
	if (rewritten(r)) {
		char *p = strdup(r->fpath);
		int e = p ? name_open(r, p) : -ENOMEM;
		if (e == 0)
			note(r, "%s was rewritten (a new file header: a new run): reading it from its start", p);
		else
			seterr(r, "%s: reopening it after it was rewritten: %s", p ? p : "?", strerror(-e));
		free(p);
		return e < 0 ? e : 1;
	}
	if (!(r->next_path = successor(r)))
		return 0;
	return 1;
}

static int file_next(struct vms_reader *r)
{
	if (r->eof)
		return 0;
	for (;;) {
		int e = vms_bin_dec_next(&r->dec);
		if (e == VMS_BIN_DATA) {
			r->cur = r->dec.frame;
			r->sch = r->dec.schema;
			return 1;
		}
		if (e == VMS_BIN_HEADER && r->dec.nheaders > 1)
			vms_rate_stream_restart(&r->st); /* no interval across concatenated streams */
		if (e == VMS_BIN_HEADER && r->dec.nheaders == 1 && r->fpath && !r->z)
			r->have_hdr0 = pread(r->fd, r->hdr0, sizeof(r->hdr0), 0) == (ssize_t)sizeof(r->hdr0);
		if (e == VMS_BIN_EVENT && r->want_events)
			return 2;
		if (e > 0)
			continue;
		if (e == VMS_BIN_END && r->fpath) {
			int x = name_follow(r, false);
			if (x > 0)
				continue;
			if (x < 0)
				return x;
		}
		/* damage where a new run rewrote the file under the reader */
		if (e < 0 && r->fpath && rewritten(r)) {
			int x = name_follow(r, true);
			if (x > 0)
				continue;
			if (x < 0)
				return x;
		}
		if (e == VMS_BIN_END) {
			if (!r->dec.follow && !r->fpath) {
				r->eof = true;
				if (vms_zread_torn(r->z))
					seterr(r, "torn .zst: the compressed stream ends inside a zstd frame after %llu bytes "
						  "(%llu decompressed): %llu complete records recovered",
					       (unsigned long long)vms_zread_in(r->z), (unsigned long long)vms_zread_out(r->z),
					       (unsigned long long)r->dec.nrec);
				else if (r->dec.torn)
					seterr(r, "torn tail at offset %llu (%llu bytes): %llu complete records recovered",
					       (unsigned long long)r->dec.torn_off, (unsigned long long)r->dec.torn_len,
					       (unsigned long long)r->dec.nrec);
			}
			return 0;
		}
		const struct vms_bin_dec *d = &r->dec;
		if (r->z && vms_zread_error(r->z)[0])
			seterr(r, "compressed data at offset %llu of the .zst: %s (the %llu records before it are complete)",
			       (unsigned long long)vms_zread_in(r->z), vms_zread_error(r->z),
			       (unsigned long long)d->nrec);
		else if (d->err_index == 0)
			seterr(r, "file header at offset %llu: %s", (unsigned long long)d->err_off, d->err_msg);
		else
			seterr(r, "record %llu at offset %llu: %s (the %llu records before it are complete)",
			       (unsigned long long)d->err_index, (unsigned long long)d->err_off, d->err_msg,
			       (unsigned long long)d->nrec);
		return d->err == VMS_BIN_EVERSION ? -ENOTSUP : e;
	}
}

/* ---- frames from a ring ----------------------------------------------------------- */

static struct vms_schema *ring_schema(struct vms_reader *r, uint32_t gen)
{
	for (uint32_t i = r->nschemas; i > 0; i--)
		if (r->schemas[i - 1]->gen == gen)
			return r->schemas[i - 1];
	return NULL;
}

/* Copy and decode the schema area: 1 it holds generation gen (now in the
 * cache), 0 it holds another one or is being written, -errno. */
static int ring_load_schema(struct vms_reader *r, uint32_t gen)
{
	uint32_t g = 0;
	ssize_t n = -EAGAIN;
	for (int i = 0; i < SCHEMA_TRIES && n == -EAGAIN; i++)
		n = vms_ring_read_schema(&r->ring, r->sbuf, r->sbuf_cap, &g);
	if (n == -EAGAIN)
		return 0;
	if (n < 0 || g != gen)
		return n < 0 && n != -EAGAIN ? (int)n : 0;
	struct vms_bin_dec d;
	int e = vms_bin_dec_open_mem(&d, r->sbuf, (size_t)n), got = 0;
	while (e >= 0 && (e = vms_bin_dec_next(&d)) > 0)
		if (e == VMS_BIN_SCHEMA && d.schema->gen == gen)
			got = 1;
	if (got && r->nschemas == r->capschemas) {
		struct vms_schema **s = vms_grow_array(r->schemas, &r->capschemas, r->nschemas + 1, sizeof(*s), 4);
		if (!s)
			got = -ENOMEM;
		else
			r->schemas = s;
	}
	if (got == 1) {
		r->schemas[r->nschemas++] = vms_schema_ref(d.schema);
		if (d.host) { /* keep the writer's identity */
			free(r->host);
			r->host = d.host;
			r->host_len = d.host_len;
			r->host_n = d.host_n;
			d.host = NULL;
		}
	}
	else if (got == 0 && e < 0)
		seterr(r, "ring schema area: %s", d.err_msg);
	vms_bin_dec_close(&d);
	return got;
}

/* The path now holds another ring (grown, or a new run): map it. */
static int ring_reattach(struct vms_reader *r)
{
	struct vms_ring nr;
	char why[256];
	int e = vms_ring_open_read(&nr, r->ring.path, why, sizeof(why));
	if (e < 0) {
		seterr(r, "%s: reopening the ring after it was replaced: %s", r->ring.path, why);
		return e;
	}
	bool same_run = nr.hdr->run_id == r->run_id;
	vms_ring_destroy(&r->ring);
	r->ring = nr;
	e = ring_setup(r);
	if (e < 0)
		return e;
	if (!same_run) {
		/* another writer started over: seqs and generations restart */
		vms_schema_unref_n(r->schemas, r->nschemas);
		r->nschemas = 0;
		new_stream(r);
		r->flags &= ~VMS_READER_NEW_ONLY;
		ring_start(r);
	}
	return 0;
}

/* No new frame: 0, or -ESRCH when the writer is gone. */
static int ring_idle(struct vms_reader *r, uint64_t w, bool *again)
{
	const struct vms_ring_header *h = r->ring.hdr;
	*again = false;
	if (r->snapshot) {
		r->eof = true;
		return 0;
	}
	if (__atomic_load_n(&h->flags, __ATOMIC_ACQUIRE) & VMS_RING_F_SUPERSEDED) {
		int e = ring_reattach(r);
		*again = e == 0;
		return e;
	}
	int st = vms_ring_writer_state(h, r->my_pidns);
	if (st == VMS_WRITER_ALIVE)
		return 0;
	if (vms_ring_write_seq(&r->ring) != w) {
		*again = true; /* it wrote a last frame meanwhile */
		return 0;
	}
	seterr(r, "the writer (pid %llu) %s after frame %llu",
	       (unsigned long long)h->writer_pid, vms_writer_state_name(st), (unsigned long long)w);
	return -ESRCH;
}

static int ring_next(struct vms_reader *r, const struct vms_frame **view)
{
	unsigned torn_here = 0;
	uint64_t torn_seq = 0, stale_seq = 0;
	for (;;) {
		uint64_t w = vms_ring_write_seq(&r->ring);
		uint64_t n = vms_ring_capacity(&r->ring);
		if (w >= VMS_SEQ_MAX) {
			/* 2^62 frames would take 146 million years at 1 ms */
			seterr(r, "ring write_seq %llu is out of range: a damaged ring", (unsigned long long)w);
			return -EBADMSG;
		}
		if (r->next_seq <= w && w - r->next_seq >= n) {
			/* fell behind: these were overwritten */
			r->missed += w - n + 1 - r->next_seq;
			r->next_seq = w - n + 1;
		}
		/* the events that belong before the frame come first */
		uint64_t ev_last = 0;
		if (r->want_events && !view) {
			if (ring_event(r, r->next_seq) == 2)
				return 2;
			ev_last = vms_ring_event_last(&r->ring);
		}
		if (r->next_seq > w) {
			bool again;
			int e = ring_idle(r, w, &again);
			if (again)
				continue;
			return e;
		}
		uint64_t seq = r->next_seq;
		const struct vms_frame *f;
		int e;
		if (view) {
			e = vms_ring_view(&r->ring, seq, &f);
		} else {
			e = vms_ring_read(&r->ring, seq, r->buf, r->buf_cols);
			f = r->buf;
		}
		if (e == -ESTALE && !r->snapshot && seq != stale_seq) {
			stale_seq = seq;
			continue; /* overwritten before we came: the next pass counts it */
		}
		if (e == -EBUSY || e == -EAGAIN || e == -ESTALE) {
			/* (ESTALE twice for one seq: a slot ahead of write_seq,
			 * which only a damaged file has) */
			r->torn += e == -EBUSY;
			if (seq != torn_seq) {
				torn_seq = seq;
				torn_here = 0;
			}
			/* a slot that never settles (a damaged snapshot): skip it */
			if (r->snapshot || ++torn_here >= TORN_LIMIT) {
				r->missed++;
				r->next_seq++;
				torn_here = 0;
			}
			continue;
		}
		if (e < 0)
			return e;
		/* (a view reads the slot itself: atomically, like the copy) */
		uint32_t gen = __atomic_load_n(&f->gen, __ATOMIC_RELAXED);
		const struct vms_schema *s = ring_schema(r, gen);
		if (!s) {
			e = ring_load_schema(r, gen);
			if (e < 0)
				return e;
			s = ring_schema(r, gen);
		}
		if (!s || s->ncols != __atomic_load_n(&f->ncols, __ATOMIC_RELAXED)) {
			/* a generation whose schema is gone from the area */
			r->missed++;
			r->next_seq++;
			continue;
		}
		/* an event put (and the frame committed) since we looked: it may
		 * belong before this frame; look again */
		if (r->want_events && !view && vms_ring_event_last(&r->ring) != ev_last)
			continue;
		r->next_seq = seq + 1;
		r->cur = f;
		r->sch = s;
		r->view_seq = seq;
		return 1;
	}
}

int vms_reader_next(struct vms_reader *r)
{
	int e = r->kind == VMS_READER_RING ? ring_next(r, NULL) : file_next(r);
	if (e <= 0 || e == 2)
		return e;
	r->changed = r->sch != r->last_sch;
	r->last_sch = r->sch;
	if (r->rates) {
		int x = rates_frame(r);
		if (x < 0) {
			seterr(r, "rates: %s", strerror(-x));
			return x;
		}
	}
	return 1;
}

int vms_reader_view(struct vms_reader *r, const struct vms_frame **f)
{
	if (r->kind != VMS_READER_RING)
		return -ENOTTY;
	int e = ring_next(r, f);
	if (e > 0) {
		*f = r->cur;
		r->changed = r->sch != r->last_sch;
		r->last_sch = r->sch;
	}
	return e;
}

int vms_reader_view_check(struct vms_reader *r)
{
	if (r->kind != VMS_READER_RING)
		return -ENOTTY;
	if (vms_ring_view_check(&r->ring, r->view_seq) == 0)
		return 0;
	r->missed++;
	r->torn++;
	return -ESTALE;
}

/* ---- accessors ------------------------------------------------------------------- */

const struct vms_frame *vms_reader_frame(const struct vms_reader *r)
{
	return r->cur;
}

uint64_t vms_reader_seq(const struct vms_reader *r)
{
	return r->cur ? r->cur->seq : 0;
}

uint64_t vms_reader_time_mono_ns(const struct vms_reader *r)
{
	return r->cur ? r->cur->t_mono_ns : 0;
}

int64_t vms_reader_time_real_ns(const struct vms_reader *r)
{
	return r->cur ? r->cur->t_real_ns : 0;
}

uint32_t vms_reader_gen(const struct vms_reader *r)
{
	return r->sch ? r->sch->gen : 0;
}

bool vms_reader_schema_changed(const struct vms_reader *r)
{
	return r->changed;
}

uint64_t vms_reader_missed(const struct vms_reader *r)
{
	return r->missed;
}

uint64_t vms_reader_torn(const struct vms_reader *r)
{
	return r->torn;
}

uint32_t vms_reader_ncols(const struct vms_reader *r)
{
	return r->sch ? r->sch->ncols : 0;
}

int vms_reader_column(const struct vms_reader *r, const char *name)
{
	return r->sch ? vms_schema_find(r->sch, name) : -ENOENT;
}

/* Does name match one of the comma-separated patterns? */
static bool globs_match(const char *globs, const char *name)
{
	char pat[512];
	const char *p = globs;
	while (*p) {
		size_t n = strcspn(p, ",");
		if (n && n < sizeof(pat)) {
			memcpy(pat, p, n);
			pat[n] = '\0';
			if (fnmatch(pat, name, 0) == 0)
				return true;
		}
		p += n;
		if (*p == ',')
			p++;
	}
	return false;
}

int vms_reader_columns_match(const struct vms_reader *r, const char *globs, uint32_t *idx,
			     uint32_t cap)
{
	uint32_t k = 0;
	for (uint32_t i = 0; r->sch && i < r->sch->ncols; i++)
		if (globs_match(globs, r->sch->cols[i].name)) {
			if (k < cap)
				idx[k] = i;
			k++;
		}
	return (int)k;
}

int vms_reader_rates_match(const struct vms_reader *r, const char *globs, uint32_t *idx,
			   uint32_t cap)
{
	uint32_t k = 0, n = vms_reader_nrates(r);
	for (uint32_t i = 0; i < n; i++)
		if (globs_match(globs, r->st.plan->cols[i].name)) {
			if (k < cap)
				idx[k] = i;
			k++;
		}
	return (int)k;
}

int vms_reader_col_info(const struct vms_reader *r, uint32_t col, struct vms_reader_col *out)
{
	if (!r->sch || col >= r->sch->ncols)
		return -ERANGE;
	const struct vms_col *c = &r->sch->cols[col];
	*out = (struct vms_reader_col){c->name, c->key, c->kind, c->unit, c->wrap_bits, c->scale};
	return 0;
}

int vms_reader_col_id(const struct vms_reader *r, uint32_t col, struct vms_reader_colid *out)
{
	if (!r->sch || col >= r->sch->ncols)
		return -ERANGE;
	const struct vms_col *c = &r->sch->cols[col];
	*out = (struct vms_reader_colid){vms_catalog[c->group].name, c->entity, c->sub, c->field};
	return 0;
}

int vms_reader_value(const struct vms_reader *r, uint32_t col, uint64_t *v)
{
	if (!r->cur || col >= r->cur->ncols)
		return -ERANGE;
	if (r->cur->v[col] == VMS_NONE)
		return -ENODATA;
	*v = r->cur->v[col];
	return 0;
}

int vms_reader_value_double(const struct vms_reader *r, uint32_t col, double *v)
{
	uint64_t x;
	int e = vms_reader_value(r, col, &x);
	if (e < 0)
		return e;
	*v = vms_unscale((double)x, r->sch->cols[col].scale);
	return 0;
}

int vms_reader_writer(struct vms_reader *r)
{
	if (r->kind != VMS_READER_RING)
		return -ENOTTY;
	if (r->snapshot)
		return VMS_WRITER_EXITED;
	return vms_ring_writer_state(r->ring.hdr, r->my_pidns);
}

uint64_t vms_reader_writer_pid(const struct vms_reader *r)
{
	return r->kind == VMS_READER_RING ? r->ring.hdr->writer_pid : 0;
}

uint64_t vms_reader_interval_ns(const struct vms_reader *r)
{
	return r->kind == VMS_READER_RING ? r->ring.hdr->interval_ns : 0;
}

/* ---- for vmsampler itself (reader_int.h) --------------------------------------- */

const struct vms_schema *vms_rdr_schema(const struct vms_reader *r)
{
	return r->sch;
}

uint64_t vms_rdr_streams(const struct vms_reader *r)
{
	return r->dec_open ? r->dec.nheaders : 0;
}

void vms_rdr_want_events(struct vms_reader *r, bool on)
{
	r->want_events = on;
}

const struct vms_event *vms_rdr_event(const struct vms_reader *r)
{
	if (r->kind == VMS_READER_RING)
		return &r->rev;
	return r->dec_open ? &r->dec.event : NULL;
}

uint64_t vms_rdr_events_lost(const struct vms_reader *r)
{
	return r->ev_lost;
}

const char *vms_rdr_follow_note(struct vms_reader *r)
{
	if (!r->note[0])
		return NULL;
	memcpy(r->note_out, r->note, sizeof(r->note_out));
	r->note[0] = '\0';
	return r->note_out;
}

const char *vms_rdr_path(const struct vms_reader *r)
{
	return r->fpath;
}

/* ---- the host it was recorded on ---------------------------------------------------- */

static const char *host_kv(const struct vms_reader *r, uint32_t *n)
{
	if (r->dec_open) {
		*n = r->dec.host ? r->dec.host_n : 0;
		return r->dec.host;
	}
	*n = r->host ? r->host_n : 0;
	return r->host;
}

uint32_t vms_reader_host_count(const struct vms_reader *r)
{
	uint32_t n;
	host_kv(r, &n);
	return n;
}

int vms_reader_host_pair(const struct vms_reader *r, uint32_t i, const char **key, const char **value)
{
	uint32_t n;
	const char *kv = host_kv(r, &n);
	if (i >= n)
		return -ENOENT;
	for (uint32_t k = 0; k < 2 * i; k++)
		kv += strlen(kv) + 1; /* past a key or a value */
	*key = kv;
	*value = kv + strlen(kv) + 1;
	return 0;
}

const char *vms_reader_host(const struct vms_reader *r, const char *key)
{
	const char *k, *v;
	for (uint32_t i = 0; vms_reader_host_pair(r, i, &k, &v) == 0; i++)
		if (strcmp(k, key) == 0)
			return v;
	return NULL;
}

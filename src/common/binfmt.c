/* SPDX-License-Identifier: MIT */
#include "binfmt.h"
#include "hostid.h"
#include "name.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crc32c.h"
#include "grow.h"
#include "le.h"
#include "ring.h"

int vms_varint_get(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
	const uint8_t *p = *pp;
	uint64_t v = 0;

	for (unsigned shift = 0; shift < 70; shift += 7) {
		if (p >= end)
			return -EBADMSG;
		uint8_t b = *p++;
		if (shift == 63 && b > 1)
			return -EBADMSG; /* more than 64 bits */
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*pp = p;
			*out = v;
			return 0;
		}
	}
	return -EBADMSG;
}

/* ---- encoder ------------------------------------------------------------- */

/* Fill in the record header in front of a payload of len bytes at
 * p + VMS_FMT_RECORD_HDR and the CRC after it; returns the record size. */
static size_t seal(uint8_t *p, uint16_t type, uint16_t rflags, size_t len)
{
	vms_le_put32(p, (uint32_t)len);
	vms_le_put16(p + 4, type);
	vms_le_put16(p + 6, rflags);
	vms_le_put32(p + 8, vms_crc32c(0, p, 8));
	uint8_t *pl = p + VMS_FMT_RECORD_HDR;
	vms_le_put32(pl + len, vms_crc32c(0, pl, len));
	return VMS_BIN_REC_OVERHEAD + len;
}

size_t vms_bin_header_enc(uint8_t *p, int64_t created_real_ns)
{
	memcpy(p, VMS_FMT_MAGIC, VMS_FMT_MAGIC_LEN);
	vms_le_put16(p + 8, VMS_FMT_VERSION_MAJOR);
	vms_le_put16(p + 10, VMS_FMT_VERSION_MINOR);
	vms_le_put32(p + 12, VMS_FMT_HEADER_SIZE);
	vms_le_put64(p + 16, (uint64_t)created_real_ns);
	vms_le_put32(p + 24, 0);
	vms_le_put32(p + 28, vms_crc32c(0, p, 28));
	return VMS_FMT_HEADER_SIZE;
}

static size_t string_size(const char *s)
{
	size_t n = strlen(s);
	return vms_varint_len(n) + n;
}

static uint8_t *put_string(uint8_t *p, const char *s, size_t n)
{
	p = vms_varint_put(p, n);
	memcpy(p, s, n);
	return p + n;
}

/* Where a column's entity, sub and field are in its name: entity offset
 * and length, sub offset and length, field offset (0 0 0 0 0 without a
 * group).  A known group's name is built from them (vms_colname), so the
 * field ends it and the entity and sub, when there, come first. */
static void identity_offsets(const struct vms_col *c, size_t off[5])
{
	memset(off, 0, 5 * sizeof(*off));
	if (c->group == VMS_G_NONE)
		return;
	const struct vms_catgroup *g = &vms_catalog[c->group];
	size_t el = strlen(c->entity), sl = strlen(c->sub), fl = strlen(c->field);
	off[0] = strlen(g->head);
	off[1] = el;
	off[2] = off[0] + (el ? el + 1 : 0) + strlen(g->mid);
	off[3] = sl;
	off[4] = strlen(c->name) - fl;
}

size_t vms_bin_schema_size(const struct vms_schema *s)
{
	size_t n = 16;
	for (uint32_t i = 0; i < s->ncols; i++) {
		const struct vms_col *c = &s->cols[i];
		n += 4 + string_size(c->name) + string_size(c->key);
		size_t off[5];
		identity_offsets(c, off);
		n += string_size(vms_catalog[c->group].name);
		for (int k = 0; k < 5; k++)
			n += vms_varint_len(off[k]);
	}
	return VMS_BIN_REC_OVERHEAD + n;
}

size_t vms_bin_schema_enc(uint8_t *out, const struct vms_schema *s)
{
	uint8_t *p = out + VMS_FMT_RECORD_HDR;
	p = vms_le_put32(p, s->gen);
	p = vms_le_put32(p, s->ncols);
	p = vms_le_put64(p, (uint64_t)s->t_real_ns);
	for (uint32_t i = 0; i < s->ncols; i++) {
		const struct vms_col *c = &s->cols[i];
		*p++ = c->kind;
		*p++ = c->unit;
		*p++ = c->wrap_bits;
		*p++ = (uint8_t)c->scale;
		p = put_string(p, c->name, strlen(c->name));
		p = put_string(p, c->key, strlen(c->key));
	}
	/* minor version 2: each column's identity after the columns */
	for (uint32_t i = 0; i < s->ncols; i++) {
		const struct vms_col *c = &s->cols[i];
		size_t off[5];
		identity_offsets(c, off);
		p = put_string(p, vms_catalog[c->group].name, strlen(vms_catalog[c->group].name));
		for (int k = 0; k < 5; k++)
			p = vms_varint_put(p, off[k]);
	}
	return seal(out, VMS_REC_SCHEMA, 0,
		    (size_t)(p - out) - VMS_FMT_RECORD_HDR);
}

const char *const vms_hostkey_names[VMS_HK_N] = {
	[VMS_HK_HOSTNAME] = "hostname",
	[VMS_HK_MACHINE_ID] = "machine_id",
	[VMS_HK_BOOT_ID] = "boot_id",
	[VMS_HK_KERNEL] = "kernel",
	[VMS_HK_CPU_MODEL] = "cpu_model",
	[VMS_HK_CPUS_ONLINE] = "cpus_online",
	[VMS_HK_NUMA_NODES] = "numa_nodes",
	[VMS_HK_USER_HZ] = "user_hz",
	[VMS_HK_PAGE_SIZE] = "page_size",
	[VMS_HK_TIMEZONE] = "timezone",
	[VMS_HK_VERSION] = "vmsampler_version",
	[VMS_HK_FEATURES] = "build_features",
	[VMS_HK_LIBVIRT_URI] = "libvirt_uri",
	[VMS_HK_LIBVIRT_VERSION] = "libvirt_version",
	[VMS_HK_HYPERVISOR] = "hypervisor",
	[VMS_HK_HYPERVISOR_VERSION] = "hypervisor_version",
};

size_t vms_bin_host_size(const struct vms_hostid *h)
{
	size_t n = 0, pairs = 0;
	for (int k = 0; k < VMS_HK_N; k++)
		if (h->val[k][0]) {
			n += string_size(vms_hostkey_names[k]) + string_size(h->val[k]);
			pairs++;
		}
	return VMS_BIN_REC_OVERHEAD + vms_varint_len(pairs) + n;
}

size_t vms_bin_host_enc(uint8_t *out, const struct vms_hostid *h)
{
	uint64_t pairs = 0;
	for (int k = 0; k < VMS_HK_N; k++)
		pairs += h->val[k][0] != '\0';
	uint8_t *p = vms_varint_put(out + VMS_FMT_RECORD_HDR, pairs);
	for (int k = 0; k < VMS_HK_N; k++)
		if (h->val[k][0]) {
			p = put_string(p, vms_hostkey_names[k], strlen(vms_hostkey_names[k]));
			p = put_string(p, h->val[k], strlen(h->val[k]));
		}
	return seal(out, VMS_REC_HOST, 0, (size_t)(p - out) - VMS_FMT_RECORD_HDR);
}

size_t vms_bin_data_enc(uint8_t *out, const struct vms_frame *f, uint64_t *prev, bool key,
			bool *keyframe)
{
	return vms_bin_data_enc_meta(out, f, f->flags, f->lost_frames, prev, key, keyframe);
}

size_t vms_bin_data_enc_meta(uint8_t *out, const struct vms_frame *f, uint32_t flags,
			     uint32_t lost_frames, uint64_t *prev, bool key, bool *keyframe)
{
	uint8_t *p = out + VMS_FMT_RECORD_HDR;
	const uint64_t *v = f->v;
	const uint32_t n = f->ncols;

	p = vms_le_put32(p, f->gen);
	p = vms_le_put32(p, flags);
	p = vms_le_put64(p, f->seq);
	p = vms_le_put64(p, f->t_mono_ns);
	p = vms_le_put64(p, (uint64_t)f->t_real_ns);
	p = vms_le_put32(p, f->missed_ticks);
	p = vms_le_put32(p, lost_frames);
	p = vms_le_put64(p, f->self_cpu_ns);
	p = vms_le_put64(p, f->late_ns);
	p = vms_le_put32(p, n);
	uint8_t *values = p;
	if (!key) {
		for (uint32_t i = 0; i < n; i++) {
			uint64_t x = v[i];
			if (x == VMS_VALUE_NONE) {
				*p++ = 0;
				prev[i] = 0;
				continue;
			}
			uint64_t z = vms_zigzag(x - prev[i]);
			if (VMS_UNLIKELY(z == UINT64_MAX)) {
				/* a difference of 2^63 has no delta code */
				key = true;
				break;
			}
			p = vms_varint_put(p, z + 1);
			prev[i] = x;
		}
		if (key)
			p = values;
	}
	if (key) {
		for (uint32_t i = 0; i < n; i++) {
			uint64_t x = v[i];
			if (x == VMS_VALUE_NONE) {
				*p++ = 0;
				prev[i] = 0;
			} else {
				p = vms_varint_put(p, x + 1);
				prev[i] = x;
			}
		}
	}
	*keyframe = key;
	return seal(out, VMS_REC_DATA, key ? VMS_RECF_KEYFRAME : 0,
		    (size_t)(p - out) - VMS_FMT_RECORD_HDR);
}

size_t vms_bin_event_enc(uint8_t *out, const struct vms_event *ev)
{
	uint8_t *p = out + VMS_FMT_RECORD_HDR;
	p = vms_le_put32(p, ev->type);
	p = vms_le_put32(p, ev->gen);
	p = vms_le_put64(p, ev->before_seq);
	p = vms_le_put64(p, ev->t_mono_ns);
	p = vms_le_put64(p, (uint64_t)ev->t_real_ns);
	p = put_string(p, ev->subject, strnlen(ev->subject, sizeof(ev->subject) - 1));
	p = put_string(p, ev->detail, strnlen(ev->detail, sizeof(ev->detail) - 1));
	return seal(out, VMS_REC_EVENT, 0, (size_t)(p - out) - VMS_FMT_RECORD_HDR);
}

/* ---- decoder: input ------------------------------------------------------ */

#define READ_CHUNK 65536

static int dec_init(struct vms_bin_dec *d)
{
	memset(d, 0, sizeof(*d));
	d->fd = -1;
	return 0;
}

int vms_bin_dec_open_fd(struct vms_bin_dec *d, int fd)
{
	dec_init(d);
	d->fd = fd;
	d->cap = READ_CHUNK;
	d->buf = malloc(d->cap);
	if (!d->buf)
		return -ENOMEM;
	d->data = d->buf;
	return 0;
}

int vms_bin_dec_open_mem(struct vms_bin_dec *d, const void *data, size_t len)
{
	dec_init(d);
	d->data = data;
	d->end = len;
	d->eof = true;
	return 0;
}

/* Make at least n unread bytes available if the input has them.  Returns
 * the number available (< n only at the end of the input), or -errno. */
static ssize_t fill(struct vms_bin_dec *d, size_t n)
{
	if (d->end - d->pos >= n || d->eof)
		return (ssize_t)(d->end - d->pos < n ? d->end - d->pos : n);
	/* fd input: move the unread bytes to the front, grow, read */
	if (d->pos) {
		memmove(d->buf, d->buf + d->pos, d->end - d->pos);
		d->base += d->pos;
		d->end -= d->pos;
		d->pos = 0;
	}
	while (d->end < n && !d->eof) {
		if (d->end == d->cap) {
			/* grow only with the bytes that are really there */
			size_t cap = d->cap * 2;
			uint8_t *nb = realloc(d->buf, cap);
			if (!nb)
				return -ENOMEM;
			d->buf = nb;
			d->data = nb;
			d->cap = cap;
		}
		ssize_t r = d->read ? d->read(d->read_ctx, d->buf + d->end, d->cap - d->end)
				    : read(d->fd, d->buf + d->end, d->cap - d->end);
		if (r < 0 && d->read)
			return r;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0) {
			if (d->follow)
				break; /* the file may still grow: ask again next time */
			d->eof = true;
		}
		d->end += (size_t)r;
	}
	return (ssize_t)(d->end < n ? d->end : n);
}

static uint64_t offset(const struct vms_bin_dec *d)
{
	return d->base + d->pos;
}

/* Count the bytes from the current position to the end of the input; true
 * if they are all zero (a zero-filled tail).  Consumes the input. */
static int rest_is_zero(struct vms_bin_dec *d, uint64_t *len)
{
	uint64_t n = 0;
	for (;;) {
		for (size_t i = d->pos; i < d->end; i++)
			if (d->data[i])
				return 0;
		n += d->end - d->pos;
		d->pos = d->end;
		if (d->eof)
			break;
		ssize_t r = fill(d, READ_CHUNK);
		if (r < 0)
			return (int)r;
	}
	*len = n;
	return 1;
}

/* The -errno that next() returns for an error. */
static int err_ret(enum vms_bin_err e)
{
	return e == VMS_BIN_EIO ? -EIO : e == VMS_BIN_ENOMEM ? -ENOMEM : -EBADMSG;
}

VMS_PRINTF(3, 4)
static int fail(struct vms_bin_dec *d, enum vms_bin_err e, const char *fmt, ...)
{
	va_list ap;
	d->err = e;
	va_start(ap, fmt);
	vsnprintf(d->err_msg, sizeof(d->err_msg), fmt, ap);
	va_end(ap);
	return err_ret(e);
}

static int fail_errno(struct vms_bin_dec *d, int r)
{
	d->err_off = offset(d);
	d->err_index = d->nrec + 1;
	if (r == -ENOMEM)
		return fail(d, VMS_BIN_ENOMEM, "out of memory");
	return fail(d, VMS_BIN_EIO, "read error: %s", strerror(-r));
}

/* The input ends with an incomplete record (or file header) of len bytes
 * at off. */
static int torn(struct vms_bin_dec *d, uint64_t off, uint64_t len)
{
	if (d->follow) {
		/* being written: leave it unread and try again later */
		d->pending = true;
		return VMS_BIN_END;
	}
	d->torn = true;
	d->torn_off = off;
	d->torn_len = len;
	d->pos = d->end;
	d->done = true;
	return VMS_BIN_END;
}

/* ---- decoder: payloads --------------------------------------------------- */

static uint32_t take32(struct vms_bytes *c)
{
	const uint8_t *p = vms_bytes_take(c, 4);
	return p ? vms_le_get32(p) : 0;
}

static uint64_t take64(struct vms_bytes *c)
{
	const uint8_t *p = vms_bytes_take(c, 8);
	return p ? vms_le_get64(p) : 0;
}

static uint64_t take_varint(struct vms_bytes *c)
{
	uint64_t v = 0;
	if (!c->bad && vms_varint_get(&c->p, c->end, &v) < 0)
		c->bad = true;
	return v;
}

/* A string: its bytes (not NUL-terminated) and length. */
static const uint8_t *take_string(struct vms_bytes *c, size_t *len)
{
	uint64_t n = take_varint(c);
	if (c->bad || n > (uint64_t)(c->end - c->p)) {
		c->bad = true;
		return NULL;
	}
	*len = (size_t)n;
	return vms_bytes_take(c, (size_t)n);
}

static struct vms_schema *find_schema(struct vms_bin_dec *d, uint32_t gen)
{
	for (uint32_t i = d->nschemas; i > d->visible; i--)
		if (d->schemas[i - 1]->gen == gen)
			return d->schemas[i - 1];
	return NULL;
}

static int grow_frame(struct vms_bin_dec *d, uint32_t ncols)
{
	if (ncols <= d->frame_cap && d->frame)
		return 0;
	struct vms_frame *f = realloc(d->frame, vms_frame_size(ncols));
	if (!f)
		return -ENOMEM;
	d->frame = f;
	uint64_t *p = realloc(d->prev, (ncols ? ncols : 1) * sizeof(*p));
	if (!p)
		return -ENOMEM;
	d->prev = p;
	d->frame_cap = ncols;
	return 0;
}

static int push_schema(struct vms_bin_dec *d, struct vms_schema *s)
{
	struct vms_schema **ns = vms_grow_array(d->schemas, &d->capschemas, d->nschemas + 1, sizeof(*ns), 8);
	if (!ns)
		return -ENOMEM;
	d->schemas = ns;
	d->schemas[d->nschemas++] = s;
	return 0;
}

/* The columns' identities that follow them (minor version 2; none in a
 * payload of an older version, whose columns get theirs from their names in
 * vms_schema_new).  The parts are copied from the names to sp. */
static int dec_identity(struct vms_bin_dec *d, struct vms_bytes *c, uint32_t ncols, struct vms_col *cols,
			char *sp)
{
	char name[VMS_COL_NAME_MAX + 1];
	for (uint32_t i = 0; i < ncols; i++) {
		size_t gl = 0;
		const uint8_t *gs = take_string(c, &gl);
		uint64_t off[5];
		for (int k = 0; k < 5; k++)
			off[k] = take_varint(c);
		if (c->bad)
			return fail(d, VMS_BIN_EMALFORMED, "SCHEMA identity of column %u truncated", i);
		size_t nl = strlen(cols[i].name);
		if (off[0] > nl || off[1] > nl - off[0] || off[2] > nl || off[3] > nl - off[2] || off[4] > nl)
			return fail(d, VMS_BIN_EMALFORMED, "SCHEMA identity of column %u out of its name", i);
		unsigned g = vms_catalog_group((const char *)gs, gl);
		const size_t pos[3] = {off[0], off[2], off[4]};
		const size_t len[3] = {off[1], off[3], gl ? nl - off[4] : 0}; /* no group: no parts */
		const char **out[3] = {&cols[i].entity, &cols[i].sub, &cols[i].field};
		for (int k = 0; k < 3; k++) {
			memcpy(sp, cols[i].name + pos[k], len[k]);
			sp[len[k]] = '\0';
			*out[k] = sp;
			sp += len[k] + 1;
		}
		cols[i].group = (uint8_t)g;
		cols[i].field_id = (uint16_t)vms_catalog_field(g, cols[i].field);
		if (g == VMS_G_NONE)
			continue; /* none, or a group of a later catalogue (its parts kept) */
		int n = vms_colname(name, sizeof(name), g, cols[i].entity, cols[i].sub, cols[i].field);
		if (n < 0 || strcmp(name, cols[i].name) != 0 ||
		    (cols[i].field_id == VMS_FIELD_OPEN && !vms_catalog[g].open))
			return fail(d, VMS_BIN_EMALFORMED, "SCHEMA column %u: its identity does not make its name", i);
	}
	return 0;
}

static int dec_schema(struct vms_bin_dec *d, const uint8_t *pl, size_t len)
{
	struct vms_bytes c = vms_bytes_of(pl, len);
	uint32_t gen = take32(&c), ncols = take32(&c);
	int64_t t_real = (int64_t)take64(&c);
	struct vms_col *cols = NULL;
	char *strings = NULL;
	struct vms_schema *s = NULL;
	int r;

	if (c.bad)
		return fail(d, VMS_BIN_EMALFORMED, "SCHEMA payload too short");
	/* the first DATA after a SCHEMA is a keyframe */
	d->prev_schema = NULL;
	/* every column takes at least 6 bytes: bound the allocation */
	if (ncols > (len - 16) / 6)
		return fail(d, VMS_BIN_EMALFORMED, "SCHEMA declares %u columns in %zu bytes", ncols, len);
	cols = calloc(ncols ? ncols : 1, sizeof(*cols));
	/* every name and key, NUL-terminated, and the parts of the names */
	strings = malloc(2 * len + 5 * (size_t)ncols + 1);
	if (!cols || !strings) {
		r = fail(d, VMS_BIN_ENOMEM, "out of memory");
		goto out;
	}
	char *sp = strings;
	for (uint32_t i = 0; i < ncols; i++) {
		const uint8_t *a = vms_bytes_take(&c, 4);
		size_t nl = 0, kl = 0;
		const uint8_t *name = take_string(&c, &nl);
		const uint8_t *key = take_string(&c, &kl);
		if (c.bad) {
			r = fail(d, VMS_BIN_EMALFORMED, "SCHEMA column %u truncated", i);
			goto out;
		}
		int8_t scale = (int8_t)a[3];
		if (scale < 0 || scale > VMS_FMT_MAX_SCALE) {
			r = fail(d, VMS_BIN_EMALFORMED, "SCHEMA column %u: scale %d out of range", i, scale);
			goto out;
		}
		if (a[2] > 64) {
			r = fail(d, VMS_BIN_EMALFORMED, "SCHEMA column %u: wrap_bits %u", i, a[2]);
			goto out;
		}
		if (nl == 0 || nl > VMS_COL_NAME_MAX || memchr(name, 0, nl) || memchr(key, 0, kl)) {
			r = fail(d, VMS_BIN_EMALFORMED, "SCHEMA column %u: bad name or key", i);
			goto out;
		}
		cols[i].kind = a[0];
		cols[i].unit = a[1];
		cols[i].wrap_bits = a[2];
		cols[i].scale = scale;
		memcpy(sp, name, nl);
		sp[nl] = '\0';
		cols[i].name = sp;
		sp += nl + 1;
		memcpy(sp, key, kl);
		sp[kl] = '\0';
		cols[i].key = sp;
		sp += kl + 1;
	}
	if (c.p < c.end) {
		r = dec_identity(d, &c, ncols, cols, sp);
		if (r < 0)
			goto out;
	}
	r = vms_schema_new(gen, t_real, ncols, cols, &s);
	if (r < 0) {
		r = r == -ENOMEM ? fail(d, VMS_BIN_ENOMEM, "out of memory")
				 : fail(d, VMS_BIN_EMALFORMED, "SCHEMA rejected: %s", strerror(-r));
		goto out;
	}
	struct vms_schema *old = find_schema(d, gen);
	if (old && vms_schema_same_columns(old, s)) {
		/* repeated after a reopen: keep the one callers already know */
		vms_schema_unref(s);
		d->schema = old;
		r = VMS_BIN_SCHEMA;
		goto out;
	}
	if (grow_frame(d, ncols) < 0 || push_schema(d, s) < 0) {
		vms_schema_unref(s);
		r = fail(d, VMS_BIN_ENOMEM, "out of memory");
		goto out;
	}
	d->schema = s;
	r = VMS_BIN_SCHEMA;
out:
	free(cols);
	free(strings);
	return r;
}

static int dec_data(struct vms_bin_dec *d, const uint8_t *pl, size_t len, uint16_t rflags)
{
	struct vms_bytes c = vms_bytes_of(pl, len);
	struct vms_frame *f;
	uint32_t gen = take32(&c);
	uint32_t flags = take32(&c);
	uint64_t seq = take64(&c), t_mono = take64(&c);
	int64_t t_real = (int64_t)take64(&c);
	uint32_t missed = take32(&c), lost = take32(&c);
	uint64_t self_cpu = take64(&c), late = take64(&c);
	uint32_t ncols = take32(&c);
	bool key = rflags & VMS_RECF_KEYFRAME;

	if (c.bad)
		return fail(d, VMS_BIN_EMALFORMED, "DATA payload too short");
	struct vms_schema *s = find_schema(d, gen);
	if (!s)
		return fail(d, VMS_BIN_EMALFORMED, "DATA of generation %u before its SCHEMA", gen);
	if (ncols != s->ncols)
		return fail(d, VMS_BIN_EMALFORMED, "DATA has %u values, its schema %u columns", ncols,
			    s->ncols);
	if (!key && d->prev_schema != s)
		return fail(d, VMS_BIN_EMALFORMED, "delta DATA without a keyframe of generation %u", gen);
	f = d->frame;
	uint64_t *prev = d->prev;
	/* prev is only trusted again after a whole record decoded */
	d->prev_schema = NULL;
	for (uint32_t i = 0; i < ncols; i++) {
		uint64_t n;
		if (vms_varint_get(&c.p, c.end, &n) < 0)
			return fail(d, VMS_BIN_EMALFORMED, "DATA value %u truncated", i);
		uint64_t v;
		if (n == 0) {
			v = VMS_VALUE_NONE;
			prev[i] = 0;
		} else {
			v = key ? n - 1 : prev[i] + vms_unzigzag(n - 1);
			if (v == VMS_VALUE_NONE)
				return fail(d, VMS_BIN_EMALFORMED, "DATA value %u decodes to the reserved 2^64-1", i);
			prev[i] = v;
		}
		f->v[i] = v;
	}
	d->prev_schema = s;
	f->seq = seq;
	f->t_mono_ns = t_mono;
	f->t_real_ns = t_real;
	f->gen = gen;
	f->flags = flags;
	f->missed_ticks = missed;
	f->lost_frames = lost;
	f->self_cpu_ns = self_cpu;
	f->late_ns = late;
	f->ncols = ncols;
	f->reserved = 0;
	d->schema = s;
	d->keyframe = key;
	d->nframes++;
	return VMS_BIN_DATA;
}

/* An event's text: escaped by the rule of name.h if it is not valid
 * UTF-8 without control characters (a file of an older sampler). */
static void copy_string(char *dst, size_t cap, const uint8_t *s, size_t n)
{
	if (!vms_name_valid((const char *)s, n)) {
		vms_name_escape(dst, cap, (const char *)s, n);
		return;
	}
	if (n > cap - 1)
		for (n = cap - 1; n && (s[n] & 0xc0) == 0x80; n--)
			; /* not in the middle of a character */
	if (n)
		memcpy(dst, s, n);
	dst[n] = '\0';
}

static int dec_event(struct vms_bin_dec *d, const uint8_t *pl, size_t len)
{
	struct vms_bytes c = vms_bytes_of(pl, len);
	struct vms_event *e = &d->event;
	size_t sl = 0, dl = 0;

	memset(e, 0, sizeof(*e));
	e->type = take32(&c);
	e->gen = take32(&c);
	e->before_seq = take64(&c);
	e->t_mono_ns = take64(&c);
	e->t_real_ns = (int64_t)take64(&c);
	const uint8_t *subj = take_string(&c, &sl);
	const uint8_t *det = take_string(&c, &dl);
	if (c.bad)
		return fail(d, VMS_BIN_EMALFORMED, "EVENT payload truncated");
	copy_string(e->subject, sizeof(e->subject), subj, sl);
	copy_string(e->detail, sizeof(e->detail), det, dl);
	d->nevents++;
	return VMS_BIN_EVENT;
}

/* ---- decoder: framing ---------------------------------------------------- */

/* HOST: varint n, n x (string key, string value).  Kept as "key\0value\0"
 * pairs in d->host (replacing the previous HOST); not an item of its own:
 * callers that step through items see nothing new. */
static int dec_host(struct vms_bin_dec *d, const uint8_t *pl, size_t len)
{
	struct vms_bytes c = vms_bytes_of(pl, len);
	uint64_t n = take_varint(&c);
	if (c.bad || n > VMS_BIN_HOST_MAX_PAIRS)
		return fail(d, VMS_BIN_EMALFORMED, "HOST record: bad pair count");
	char *kv = malloc(len + 2 * n + 1);
	if (!kv)
		return fail_errno(d, -ENOMEM);
	size_t at = 0;
	for (uint64_t i = 0; i < 2 * n; i++) {
		size_t sl;
		const uint8_t *str = take_string(&c, &sl);
		if (c.bad || (sl && memchr(str, '\0', sl))) {
			free(kv);
			return fail(d, VMS_BIN_EMALFORMED, "HOST record: bad string");
		}
		if (sl)
			memcpy(kv + at, str, sl);
		at += sl;
		kv[at++] = '\0';
	}
	free(d->host);
	d->host = kv;
	d->host_len = at;
	d->host_n = (uint32_t)n;
	d->nhosts++;
	return 0;
}

static int read_file_header(struct vms_bin_dec *d)
{
	d->rec_off = offset(d);
	d->rec_index = 0;
	ssize_t n = fill(d, VMS_FMT_HEADER_SIZE);
	if (n < 0)
		return fail_errno(d, (int)n);
	const uint8_t *h = d->data + d->pos;
	size_t cmp = (size_t)n < VMS_FMT_MAGIC_LEN - 1 ? (size_t)n : VMS_FMT_MAGIC_LEN - 1;
	d->err_off = d->rec_off;
	d->err_index = 0;
	if (memcmp(h, VMS_FMT_MAGIC, cmp) != 0)
		return fail(d, VMS_BIN_ENOTVMS, "not a vmsampler stream (no VMSAMPL magic)");
	if ((size_t)n < VMS_FMT_HEADER_SIZE)
		return torn(d, d->rec_off, (uint64_t)n); /* the header itself is cut short */
	if (h[7] != VMS_FMT_VERSION_MAJOR || vms_le_get16(h + 8) != VMS_FMT_VERSION_MAJOR)
		return fail(d, VMS_BIN_EVERSION,
			    "vmsampler stream of major version %u; this reader knows version %u",
			    h[7] != VMS_FMT_VERSION_MAJOR ? h[7] : vms_le_get16(h + 8), VMS_FMT_VERSION_MAJOR);
	if (vms_le_get32(h + 28) != vms_crc32c(0, h, 28))
		return fail(d, VMS_BIN_ECRC, "file header CRC mismatch");
	uint32_t hs = vms_le_get32(h + 12);
	if (hs < VMS_FMT_HEADER_SIZE || hs > 65536)
		return fail(d, VMS_BIN_EMALFORMED, "file header size %u", hs);
	d->version_minor = vms_le_get16(h + 10);
	d->created_real_ns = (int64_t)vms_le_get64(h + 16);
	n = fill(d, hs);
	if (n < 0)
		return fail_errno(d, (int)n);
	if ((size_t)n < hs)
		return torn(d, d->rec_off, (uint64_t)n);
	d->pos += hs;
	d->in_stream = true;
	d->nheaders++;
	/* a new stream: its generations and deltas start over */
	d->visible = d->nschemas;
	d->prev_schema = NULL;
	return VMS_BIN_HEADER;
}

int vms_bin_dec_next(struct vms_bin_dec *d)
{
	if (d->err)
		return err_ret(d->err); /* sticky */
	d->pending = false;
	for (;;) {
		if (d->done)
			return VMS_BIN_END;
		if (!d->in_stream)
			return read_file_header(d);

		d->rec_off = offset(d);
		d->rec_index = d->nrec + 1;
		d->err_off = d->rec_off;
		d->err_index = d->rec_index;
		ssize_t n = fill(d, VMS_FMT_RECORD_HDR);
		if (n < 0)
			return fail_errno(d, (int)n);
		if (n == 0) {
			d->done = !d->follow;
			return VMS_BIN_END;
		}
		const uint8_t *h = d->data + d->pos;
		if ((size_t)n >= VMS_FMT_MAGIC_LEN && memcmp(h, VMS_FMT_MAGIC, VMS_FMT_MAGIC_LEN) == 0) {
			/* another stream follows (concatenated files) */
			d->in_stream = false;
			continue;
		}
		if ((size_t)n < VMS_FMT_RECORD_HDR)
			return torn(d, d->rec_off, (uint64_t)n); /* the record header is cut short */
		if (vms_le_get32(h + 8) != vms_crc32c(0, h, 8)) {
			uint64_t z = 0;
			if (d->follow)
				return fail(d, VMS_BIN_ECRC, "record header CRC mismatch");
			int r = rest_is_zero(d, &z);
			if (r < 0)
				return fail_errno(d, r);
			if (r == 0)
				return fail(d, VMS_BIN_ECRC, "record header CRC mismatch");
			/* zeros up to the end: a tail the file system extended
			 * but the writer never filled */
			return torn(d, d->rec_off, z);
		}
		uint32_t len = vms_le_get32(h);
		uint16_t type = vms_le_get16(h + 4), rflags = vms_le_get16(h + 6);
		if (len > VMS_FMT_MAX_PAYLOAD)
			return fail(d, VMS_BIN_EMALFORMED, "payload length %u exceeds the maximum", len);
		size_t total = VMS_BIN_REC_OVERHEAD + (size_t)len;
		n = fill(d, total);
		if (n < 0)
			return fail_errno(d, (int)n);
		if ((size_t)n < total)
			return torn(d, d->rec_off, (uint64_t)n);
		const uint8_t *pl = d->data + d->pos + VMS_FMT_RECORD_HDR;
		uint32_t stored = vms_le_get32(pl + len), crc = vms_crc32c(0, pl, len);
		if (stored != crc)
			return fail(d, VMS_BIN_ECRC, "payload CRC mismatch (stored 0x%08x, computed 0x%08x)",
				    stored, crc);
		int r;
		switch (type) {
		case VMS_REC_SCHEMA:
			r = dec_schema(d, pl, len);
			if (r > 0)
				d->nschemas_read++;
			break;
		case VMS_REC_DATA:
			r = dec_data(d, pl, len, rflags);
			break;
		case VMS_REC_EVENT:
			r = dec_event(d, pl, len);
			break;
		case VMS_REC_HOST:
			r = dec_host(d, pl, len);
			break;
		default:
			r = 0; /* unknown: skip */
			d->nskipped++;
			break;
		}
		if (r < 0)
			return r;
		d->pos += total;
		d->nrec++;
		if (r > 0)
			return r;
	}
}

void vms_bin_dec_close(struct vms_bin_dec *d)
{
	if (!d)
		return;
	vms_schema_unref_n(d->schemas, d->nschemas);
	free(d->schemas);
	free(d->frame);
	free(d->prev);
	free(d->buf);
	free(d->host);
	memset(d, 0, sizeof(*d));
	d->fd = -1;
}

const char *vms_bin_err_name(enum vms_bin_err e)
{
	switch (e) {
	case VMS_BIN_OK:
		return "ok";
	case VMS_BIN_ENOTVMS:
		return "not a vmsampler stream";
	case VMS_BIN_EVERSION:
		return "unsupported version";
	case VMS_BIN_ECRC:
		return "CRC mismatch";
	case VMS_BIN_EMALFORMED:
		return "undecodable record";
	case VMS_BIN_EIO:
		return "read error";
	case VMS_BIN_ENOMEM:
		return "out of memory";
	}
	return "?";
}

size_t vms_bin_head_size(const struct vms_schema *s)
{
	return VMS_FMT_HEADER_SIZE + (s->host ? vms_bin_host_size(s->host) : 0) + vms_bin_schema_size(s);
}

void vms_bin_ring_publish(struct vms_ring *r, const struct vms_schema *s)
{
	size_t n = vms_bin_head_size(s);
	uint8_t *area = vms_ring_schema_begin(r, n);
	if (!area)
		return;
	size_t at = vms_bin_header_enc(area, s->t_real_ns);
	if (s->host)
		at += vms_bin_host_enc(area + at, s->host);
	vms_bin_schema_enc(area + at, s);
	vms_ring_schema_end(r, s->gen, n);
}

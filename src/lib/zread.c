/* SPDX-License-Identifier: MIT */
/* zread.c - a zstd-compressed stream (.vms.zst), decompressed as it is
 * read (zread.h). */
#include "zread.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vms_build.h"

#if HAVE_ZSTD
#include <zstd.h>

/* Frames whose window is larger are refused (vmsampler compresses with
 * zstd's level 3: 2 MiB at most), so that a hostile file cannot make the
 * reader allocate more than this. */
#define WINDOW_LOG_MAX 23

struct vms_zread {
	ZSTD_DStream *ds;
	int fd;               /* -1: memory */
	uint8_t *in;
	size_t in_cap;
	ZSTD_inBuffer ib;
	bool in_eof;
	size_t hint;          /* ZSTD_decompressStream's last result: 0 at a frame's end */
	bool started;         /* some compressed input was decompressed */
	uint64_t in_total, out_total;
	bool torn;
	char err[160];
};

static int zr_new(struct vms_zread **out, int fd)
{
	struct vms_zread *z = calloc(1, sizeof(*z));
	*out = z;
	if (!z)
		return -ENOMEM;
	z->fd = fd;
	z->ds = ZSTD_createDStream();
	if (!z->ds)
		return -ENOMEM;
	ZSTD_DCtx_setParameter(z->ds, ZSTD_d_windowLogMax, WINDOW_LOG_MAX);
	if (fd >= 0) {
		z->in_cap = ZSTD_DStreamInSize();
		z->in = malloc(z->in_cap);
		if (!z->in)
			return -ENOMEM;
		z->ib.src = z->in;
	}
	return 0;
}

int vms_zread_open_fd(struct vms_zread **out, int fd)
{
	return zr_new(out, fd);
}

int vms_zread_open_mem(struct vms_zread **out, const void *data, size_t len)
{
	int e = zr_new(out, -1);
	if (e < 0)
		return e;
	(*out)->ib = (ZSTD_inBuffer){data, len, 0};
	(*out)->in_eof = true;
	(*out)->in_total = len;
	return 0;
}

ssize_t vms_zread_read(void *ctx, void *buf, size_t n)
{
	struct vms_zread *z = ctx;
	if (z->err[0])
		return -EBADMSG;
	ZSTD_outBuffer ob = {buf, n, 0};
	while (ob.pos == 0) {
		if (z->ib.pos == z->ib.size && !z->in_eof) {
			ssize_t r = read(z->fd, z->in, z->in_cap);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0) {
				int e = errno;
				snprintf(z->err, sizeof(z->err), "read error: %s", strerror(e));
				return -e;
			}
			if (r == 0)
				z->in_eof = true;
			z->ib = (ZSTD_inBuffer){z->in, (size_t)r, 0};
			z->in_total += (uint64_t)r;
		}
		if (z->ib.pos == z->ib.size && z->in_eof) {
			/* the end of the compressed input: inside a frame, the
			 * file was cut (decompressed so far: handed over) */
			z->torn = z->hint != 0 || !z->started;
			return 0;
		}
		size_t r = ZSTD_decompressStream(z->ds, &ob, &z->ib);
		if (ZSTD_isError(r)) {
			snprintf(z->err, sizeof(z->err), "zstd: %s", ZSTD_getErrorName(r));
			return -EBADMSG;
		}
		z->hint = r;
		z->started = true;
	}
	z->out_total += ob.pos;
	return (ssize_t)ob.pos;
}

bool vms_zread_torn(const struct vms_zread *z)
{
	return z && z->torn;
}

const char *vms_zread_error(const struct vms_zread *z)
{
	return z ? z->err : "";
}

uint64_t vms_zread_in(const struct vms_zread *z)
{
	return z ? z->in_total : 0;
}

uint64_t vms_zread_out(const struct vms_zread *z)
{
	return z ? z->out_total : 0;
}

void vms_zread_close(struct vms_zread *z)
{
	if (!z)
		return;
	ZSTD_freeDStream(z->ds);
	free(z->in);
	free(z);
}

#else /* no zstd */

struct vms_zread {
	int unused;
};

int vms_zread_open_fd(struct vms_zread **out, int fd)
{
	(void)fd;
	*out = NULL;
	return -ENOTSUP;
}

int vms_zread_open_mem(struct vms_zread **out, const void *data, size_t len)
{
	(void)data;
	(void)len;
	*out = NULL;
	return -ENOTSUP;
}

ssize_t vms_zread_read(void *ctx, void *buf, size_t n)
{
	(void)ctx;
	(void)buf;
	(void)n;
	return -ENOTSUP;
}

bool vms_zread_torn(const struct vms_zread *z)
{
	(void)z;
	return false;
}

const char *vms_zread_error(const struct vms_zread *z)
{
	(void)z;
	return "";
}

uint64_t vms_zread_in(const struct vms_zread *z)
{
	(void)z;
	return 0;
}

uint64_t vms_zread_out(const struct vms_zread *z)
{
	(void)z;
	return 0;
}

void vms_zread_close(struct vms_zread *z)
{
	(void)z;
}

#endif

/* SPDX-License-Identifier: MIT */
/* zread.h - a zstd-compressed input (a rotated file compressed by the
 * sampler, .vms.zst), decompressed while it is read: streaming, memory
 * bounded (zstd's input buffer, and a window of at most 8 MiB), as the
 * binary decoder's read function (binfmt.h: d->read).  In a build without
 * libzstd every open returns -ENOTSUP. */
#ifndef VMS_ZREAD_H
#define VMS_ZREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The first bytes of a zstd frame (RFC 8878). */
#define VMS_ZSTD_MAGIC "\x28\xb5\x2f\xfd"

struct vms_zread;

/* From fd (not closed), or from memory (not copied).  0, -ENOMEM or
 * -ENOTSUP; *out is set even on failure (vms_zread_close it). */
int vms_zread_open_fd(struct vms_zread **out, int fd);
int vms_zread_open_mem(struct vms_zread **out, const void *data, size_t len);
/* Decompressed bytes into buf: n > 0, 0 at the end of the compressed
 * input, -EBADMSG (damaged: vms_zread_error says how) or -errno. */
ssize_t vms_zread_read(void *ctx, void *buf, size_t n);
/* The compressed input ended inside a zstd frame (a torn .zst). */
bool vms_zread_torn(const struct vms_zread *z);
/* What was wrong ("" if nothing). */
const char *vms_zread_error(const struct vms_zread *z);
/* Compressed bytes read, decompressed bytes handed out. */
uint64_t vms_zread_in(const struct vms_zread *z);
uint64_t vms_zread_out(const struct vms_zread *z);
void vms_zread_close(struct vms_zread *z);

#endif

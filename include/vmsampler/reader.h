/* SPDX-License-Identifier: MIT */
/*
 * vmsampler/reader.h - libvmsampler, the reader library.
 *
 * Reads what vmsampler writes: a binary stream (".vms", also one that is
 * still growing) or a live ring (--ring PATH), frame by frame, with the
 * columns looked up by name, missing values told apart from zeros, and
 * per-interval rates computed the way `vmsampler dump --rates` does.
 *
 *   struct vms_reader *r;
 *   if (vms_reader_open(&r, "/dev/shm/vmsampler", 0) < 0) ...
 *   int col = -1;
 *   for (;;) {
 *           int e = vms_reader_next(r);
 *           if (e == 0) { usleep(100000); continue; }   // nothing new yet
 *           if (e < 0) break;    // -ESRCH: the writer is gone; else an error
 *           if (vms_reader_schema_changed(r))
 *                   col = vms_reader_column(r, "cpu.all.user");
 *           uint64_t v;
 *           if (col >= 0 && vms_reader_value(r, col, &v) == 0) ...
 *   }
 *   fprintf(stderr, "%s\n", vms_reader_error(r));
 *   vms_reader_close(r);
 *
 * Conventions: functions return >= 0 on success and -errno on failure;
 * the library never prints and never exits; after a failure
 * vms_reader_error() says what happened in one line (for a damaged file:
 * the record number and byte offset; everything before it was returned).
 * A struct vms_reader is not thread-safe; use one per thread.  Link with
 * `pkg-config --cflags --libs vmsampler`.
 *
 * Reading a live ring costs no system call per frame: vms_reader_next()
 * copies the slot and validates it with the ring's sequence numbers
 * (vmsampler/ring.h).  When no new frame is there it returns 0 at once;
 * only then may it look at the writer's pid (one kill(pid, 0) when frames
 * are late).
 */
#ifndef VMSAMPLER_READER_H
#define VMSAMPLER_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <vmsampler/format.h>
#include <vmsampler/ring.h>

#ifdef __cplusplus
extern "C" {
#endif

struct vms_reader;

/* open flags */
#define VMS_READER_FOLLOW 0x1u   /* a file: at its end wait for more (like tail -f);
				  * a ring is always followed */
#define VMS_READER_NEW_ONLY 0x2u /* a ring: start after the newest frame (default:
				  * the oldest frame still in the ring); a file:
				  * skip to its end */
#define VMS_READER_FOLLOW_NAME 0x4u /* a file: FOLLOW, and follow it by its name, as
				  * tail -F does: at its end, go on in the next file
				  * of a rotation (vmsampler --rotate's STEM-STAMP.EXT
				  * names, .zst too) or in a new file at its path
				  * (renamed away: logrotate), each once the old one is
				  * read to its end and the new one has begun; a file
				  * rewritten in place (a new run on the same -o: a new
				  * file header, or shorter than what was read) is read
				  * again from its start.  Frames go on as after a
				  * new stream: schema_changed, no rates across. */

/* what was opened */
enum vms_reader_kind {
	VMS_READER_FILE = 1, /* a binary stream */
	VMS_READER_RING = 2, /* a live ring (or a copy of one in memory) */
};

/* Open path: a ring or a binary stream, told apart by their magic ("-"
 * reads a stream from standard input).  0 or -errno (-ENOENT, -EACCES,
 * -EBADMSG neither a ring nor a stream, -ENOTSUP a ring or stream of
 * another version, -ELOOP a symbolic link where a ring was expected...);
 * on failure *out is still a reader whose vms_reader_error() says why
 * (or NULL for -ENOMEM), to be closed. */
int vms_reader_open(struct vms_reader **out, const char *path, unsigned flags);
/* The same over bytes in memory (a stream, or a snapshot of a ring); the
 * memory is not copied and must stay valid until close. */
int vms_reader_open_mem(struct vms_reader **out, const void *data, size_t len, unsigned flags);
void vms_reader_close(struct vms_reader *r);

int vms_reader_kind(const struct vms_reader *r);
/* One line about the last failure or end ("" if none). */
const char *vms_reader_error(const struct vms_reader *r);

/* Advance to the next frame.
 *   1        a frame (read it with the accessors below)
 *   0        no frame now: a file at its end (FOLLOW: it may grow), a ring
 *            whose writer has not written the next frame yet
 *   -ESRCH   a ring whose writer is gone and whose frames were all read
 *            (vms_reader_writer() says how it went)
 *   -EBADMSG a damaged stream (the error names the record and offset)
 *   -ENOTSUP a ring or stream of another version
 *   -ENOMEM, -EIO
 * A file not followed returns 0 at its end, and then 0 again; call
 * vms_reader_eof() to tell whether it is over.  A torn tail (a writer
 * killed mid-record) is the end, noted in vms_reader_error(). */
int vms_reader_next(struct vms_reader *r);
/* A file (not followed) was read to its end. */
bool vms_reader_eof(const struct vms_reader *r);

/* ---- the current frame ------------------------------------------------------ */

/* The whole frame (header and raw values), valid until the next call. */
const struct vms_frame *vms_reader_frame(const struct vms_reader *r);
uint64_t vms_reader_seq(const struct vms_reader *r);
uint64_t vms_reader_time_mono_ns(const struct vms_reader *r);
int64_t vms_reader_time_real_ns(const struct vms_reader *r);
uint32_t vms_reader_gen(const struct vms_reader *r);
/* The frame's schema differs from the previous frame's (true for the
 * first frame): column indices must be looked up again. */
bool vms_reader_schema_changed(const struct vms_reader *r);
/* Frames that were lost to this reader so far: overwritten in the ring
 * before it read them, or of a generation whose schema it never saw. */
uint64_t vms_reader_missed(const struct vms_reader *r);
/* Torn reads detected and discarded so far (a slot overwritten while it
 * was being copied). */
uint64_t vms_reader_torn(const struct vms_reader *r);

/* ---- columns of the current frame's schema ---------------------------------- */

uint32_t vms_reader_ncols(const struct vms_reader *r);
/* Index of the column named `name`, or -ENOENT. */
int vms_reader_column(const struct vms_reader *r, const char *name);
/* Indices of the columns matching any of the comma-separated fnmatch(3)
 * patterns (e.g. "cpu.all.*,vm.*.cpu_time"), in schema order: writes up
 * to cap of them and returns how many match (may exceed cap). */
int vms_reader_columns_match(const struct vms_reader *r, const char *globs, uint32_t *idx,
			     uint32_t cap);

struct vms_reader_col {
	const char *name; /* e.g. "disk.sda.rd_ios" */
	const char *key;  /* entity key ("" if none), e.g. a VM's UUID */
	uint8_t kind;     /* enum vms_kind */
	uint8_t unit;     /* enum vms_unit */
	uint8_t wrap_bits; /* counters: 32 or 64; gauges: 0 */
	int8_t scale;     /* value = raw / 10^scale */
};
/* 0 or -ERANGE.  The strings live as long as the schema: until the
 * reader is closed. */
int vms_reader_col_info(const struct vms_reader *r, uint32_t col, struct vms_reader_col *out);

/* What a column is, from the column catalogue (vmsampler(1), COLUMNS):
 * its group, the entity it belongs to, a VM's sub-entity, its field.  A
 * file of format 1.0 or 1.1 has the identities derived from the names. */
struct vms_reader_colid {
	const char *group;  /* "cpu", "disk", "vcpu", ...; "" when the catalogue
			     * does not know the column */
	const char *entity; /* the CPU ("3", "all"), device, VM name...; "" if none */
	const char *sub;    /* a VM's vCPU index, tap or disk; "" if none */
	const char *field;  /* "user", "rd_ios", "delay", ...; "" without a group */
};
/* 0 or -ERANGE; the strings live as long as the schema. */
int vms_reader_col_id(const struct vms_reader *r, uint32_t col, struct vms_reader_colid *out);

/* The raw value of column col: 0, -ENODATA when it is missing in this
 * frame (not read this tick), -ERANGE for a bad index. */
int vms_reader_value(const struct vms_reader *r, uint32_t col, uint64_t *v);
/* The value divided by 10^scale (e.g. a load average): 0, -ENODATA,
 * -ERANGE. */
int vms_reader_value_double(const struct vms_reader *r, uint32_t col, double *v);

/* ---- rates -------------------------------------------------------------------- */

/* Compute per-interval rates from now on (sar/iostat/mpstat definitions,
 * as `vmsampler dump --rates`): each frame after the first gets the
 * rates of the interval since the previous one.  0 or -ENOMEM. */
int vms_reader_rates_enable(struct vms_reader *r);
/* Rate columns of the current frame's schema (0 before the first frame
 * or without rates_enable). */
uint32_t vms_reader_nrates(const struct vms_reader *r);
const char *vms_reader_rate_name(const struct vms_reader *r, uint32_t i);
/* Indices of the rate columns matching the patterns (as columns_match). */
int vms_reader_rates_match(const struct vms_reader *r, const char *globs, uint32_t *idx,
			   uint32_t cap);
/* Rate i of the interval ending at the current frame: 0, -ENODATA (no
 * interval yet, a counter reset, a value missing at either end), -ERANGE. */
int vms_reader_rate(const struct vms_reader *r, uint32_t i, double *v);
/* Length of that interval in seconds (0: none) and its flags
 * (1 a counter wrapped, 2 a counter reset, 4 a gap: missed ticks, lost
 * frames or a new generation). */
double vms_reader_rate_interval(const struct vms_reader *r);
unsigned vms_reader_rate_flags(const struct vms_reader *r);

/* ---- live rings ------------------------------------------------------------- */

/* The writer of a ring: 0 alive, 1 exited cleanly, 2 died (its process
 * is gone), 3 not responding (no heartbeat for max(10 intervals, 5 s));
 * -ENOTTY for a file. */
int vms_reader_writer(struct vms_reader *r);
/* Its pid and sampling interval (0 for a file). */
uint64_t vms_reader_writer_pid(const struct vms_reader *r);
uint64_t vms_reader_interval_ns(const struct vms_reader *r);

/* The identity of the host the input was recorded on, as its writer
 * recorded it (vmsampler-format(5), HOST: hostname, machine_id, boot_id,
 * kernel, cpu_model, cpus_online, numa_nodes, user_hz, page_size,
 * timezone, vmsampler_version, build_features, libvirt_uri,
 * libvirt_version, hypervisor, hypervisor_version): known once the first
 * frame has been read (the record precedes each schema; the last one read
 * applies).  The number of key/value pairs (0: none, e.g. a file of an
 * older vmsampler), pair i (-ENOENT past the end), or the value of one key
 * (NULL: not recorded).  The strings stay valid until the next call of
 * vms_reader_next() or vms_reader_close(). */
uint32_t vms_reader_host_count(const struct vms_reader *r);
int vms_reader_host_pair(const struct vms_reader *r, uint32_t i, const char **key, const char **value);
const char *vms_reader_host(const struct vms_reader *r, const char *key);

/* Zero-copy: point *f at the next frame in place in the ring (no copy),
 * with the same return values as vms_reader_next() (-ENOTTY for a file).
 * The frame may be overwritten at any time: use its values, then call
 * vms_reader_view_check(), and trust what you computed only if it
 * returns 0 (-ESTALE: overwritten meanwhile, counted as missed).  The
 * accessors above do not apply to a view; the schema is that of
 * vms_reader_gen() after the call (the view's gen). */
int vms_reader_view(struct vms_reader *r, const struct vms_frame **f);
int vms_reader_view_check(struct vms_reader *r);

#ifdef __cplusplus
}
#endif

#endif

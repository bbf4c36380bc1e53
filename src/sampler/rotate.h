/* SPDX-License-Identifier: MIT */
/* rotate.h - files that do not grow forever (rotate, keep, compress).
 *
 * With `rotate` set, the output PATH = DIR/STEM.EXT is never written
 * itself: the run writes DIR/STEM-YYYYmmddTHHMMSSZ.EXT, named after the
 * wall-clock time (UTC, to the second) at which the file starts (its first
 * frame; the first file of a run: the start), and starts a new one at a
 * frame boundary (the loop's drain, after the tick, never in it):
 *   - time: before the first frame at or past the next whole multiple of
 *     the period since the epoch (1h: on the hour, 1d: at 00:00 UTC);
 *   - size: before the first frame once the file holds SIZE bytes.
 * Names sort in the order the files were written: the time in a name is
 * never earlier than the previous file's (a clock stepped back keeps the
 * previous second), and a second name in the same second gets _001, _002
 * ... before the extension (STEM-...Z_001.EXT sorts after STEM-...Z.EXT).
 *
 * A closed file (rotation, exit) is compressed to NAME.zst (compress:
 * zstd) by a child process at nice 10 (NAME.zst.tmp, renamed when whole,
 * then NAME removed): the loop only forks it and reaps it between ticks.
 * Then retention (keep) deletes the oldest closed files of this output
 * beyond the age (by modification time) or the total size (the open file
 * counted): only names of the pattern above (with or without .zst), never
 * the open file, never the one being compressed.  At start, closed files
 * a previous run left uncompressed are compressed, and its temporary
 * files removed. */
#ifndef VMS_ROTATE_H
#define VMS_ROTATE_H

#include <sys/types.h>

#include "config.h"

#define VMS_ROTATE_QUEUE 64

struct vms_rotate {
	bool on;
	struct vms_limit every, keep;
	bool zstd;
	char *dir;          /* "." when PATH has no directory */
	char *stem, *ext;   /* ext: ".vms", or "" */
	int dirfd;
	char *cur;          /* DIR/name of the file being written */
	int64_t cur_sec;    /* the second in its name */
	unsigned cur_n;     /* its _NNN (0: none) */
	int64_t next_ns;    /* time rotation: first frame time of the next file */
	/* compression */
	pid_t child;        /* 0: none running */
	char *child_name;   /* the file it compresses (name in dir) */
	char *queue[VMS_ROTATE_QUEUE]; /* closed files waiting (names in dir) */
	unsigned nqueue;
	uint64_t deleted, compressed, compress_failed;
};

/* The configuration's rotate, keep and compress: off (r->on false, 0), or
 * set up with the name of the first file in r->cur (0).  A configuration
 * error (rotation of stdout, keep or compress without rotate, zstd not
 * compiled in) is one line in err and -EINVAL; -errno (the directory
 * cannot be opened) with err too. */
int vms_rotate_init(struct vms_rotate *r, const struct vms_config *c, int64_t now_real_ns, char *err,
		    size_t errlen);
/* At start, after the first file is open: leftovers of a previous run
 * (uncompressed closed files queued, temporary files removed) and
 * retention. */
void vms_rotate_start(struct vms_rotate *r, int64_t now_real_ns);
/* Does a frame at t_real_ns start a new file, the open one holding bytes? */
static inline bool vms_rotate_due(const struct vms_rotate *r, int64_t t_real_ns, uint64_t bytes)
{
	return (r->every.ns && t_real_ns >= r->next_ns) || (r->every.bytes && bytes >= r->every.bytes);
}
/* The next file's name into r->cur, for a first frame at t_real_ns; the
 * previous name is returned (the caller owns it; NULL: no memory, nothing
 * changed). */
char *vms_rotate_advance(struct vms_rotate *r, int64_t t_real_ns);
/* Going back to `prev` (the new file could not be opened). */
void vms_rotate_undo(struct vms_rotate *r, char *prev);
/* The file `path` (a former r->cur) is closed: compress it (queued) and
 * apply retention.  Takes path. */
void vms_rotate_closed(struct vms_rotate *r, char *path, int64_t now_real_ns);
/* Between ticks: reap a finished compression and start the next. */
void vms_rotate_poll(struct vms_rotate *r);
/* At exit, the last file closed: compress what is queued (waiting for
 * the child; the rest in this process: no tick is left to delay), apply
 * retention, free. */
void vms_rotate_fini(struct vms_rotate *r, int64_t now_real_ns);
/* Does `name` (in the directory) belong to this output's rotated files?
 * *zst: it is compressed. */
bool vms_rotate_match(const struct vms_rotate *r, const char *name, bool *zst);
/* Compress the file `in` (dirfd-relative) to `in`.zst (through a
 * temporary file), remove `in`.  0 or -errno, why in err.  Built with zstd
 * only (else -ENOTSUP). */
int vms_rotate_compress(int dirfd, const char *in, char *err, size_t errlen);

#endif

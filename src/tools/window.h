/* SPDX-License-Identifier: MIT */
/* window.h - a window of a run read in one pass: FROM..TO, each end a
 * time as report's --from/--to take it (report.h, vms_tspec), a mark
 * (mark:TEXT: the time of the first MARK event of that text) or nothing
 * (the start, the end).  An interval between two frames is in the window
 * when it begins at or after FROM and ends at or before TO (a time end
 * with report's 1 ms tolerance, a mark exactly), which is report's and
 * report --window's rule.
 *
 * A mark's time is learned when its event is read: a MARK event comes
 * before the frame it precedes, so every interval that begins at or
 * after a mark is read after it, and every interval that ends at or
 * before it was read before it; one pass is enough.
 *
 *   struct vms_window w = {0};
 *   vms_window_parse(&w, "mark:a..mark:b");  // or vms_window_times()
 *   first frame:  vms_window_start(&w, t0_mono, t0_real);
 *   each MARK:    vms_window_mark(&w, event);
 *   each interval: vms_window_in(&w, m0, r0, m1, r1)
 *   at the end:   vms_window_check(&w, path, err, sizeof(err));
 *   vms_window_free(&w); */
#ifndef VMS_WINDOW_H
#define VMS_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report.h"

struct vms_event;

struct vms_wedge {
	enum { VMS_WE_NONE, VMS_WE_MARK, VMS_WE_TIME } kind;
	char *mark;       /* VMS_WE_MARK: the text */
	struct vms_tspec t; /* VMS_WE_TIME (t.text owned when parsed from a window) */
	bool owned;       /* t.text is ours */
	bool known;       /* resolved: at is set */
	bool mono;        /* at is a t_mono_ns (else a t_real_ns) */
	int64_t at;
};

struct vms_window {
	struct vms_wedge from, to;
	const char *text; /* the window as given, NULL: none (or --from/--to) */
	char *marks;      /* the marks met, quoted, for the message of a mark not found */
};

/* "FROM..TO" (the first ".." at which both ends parse): 0 or -EINVAL
 * (-ENOMEM). */
int vms_window_parse(struct vms_window *w, const char *text);
/* The window of --from/--to (either may be VMS_T_NONE). */
void vms_window_times(struct vms_window *w, const struct vms_tspec *from, const struct vms_tspec *to);
/* The first frame's times: the ends given as times are resolved. */
void vms_window_start(struct vms_window *w, uint64_t t0_mono, int64_t t0_real);
/* A MARK event: an end waiting for its text learns its time. */
void vms_window_mark(struct vms_window *w, const struct vms_event *e);
/* The interval from (m0, r0) to (m1, r1), monotonic and real ns: -1
 * before the window, 0 in it, 1 after it (nothing later can be in). */
int vms_window_in(const struct vms_window *w, uint64_t m0, int64_t r0, uint64_t m1, int64_t r1);
/* After the pass: 0, or -ENOENT with "PATH: no mark "X" (its marks: ...)"
 * in err. */
int vms_window_check(const struct vms_window *w, const char *path, char *err, size_t cap);
void vms_window_free(struct vms_window *w);

#endif

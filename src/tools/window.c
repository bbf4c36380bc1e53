/* SPDX-License-Identifier: MIT */
/* window.c - a window of a run read in one pass (window.h). */
#include "window.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sink.h"

#define TOL_NS 1000000 /* 1 ms, as report's --from/--to */

static int parse_edge(const char *s, size_t len, struct vms_wedge *e)
{
	*e = (struct vms_wedge){0};
	if (len == 0)
		return 0;
	if (len >= 5 && strncmp(s, "mark:", 5) == 0) {
		e->kind = VMS_WE_MARK;
		e->mark = strndup(s + 5, len - 5);
		return e->mark ? 0 : -ENOMEM;
	}
	char *t = strndup(s, len);
	if (!t)
		return -ENOMEM;
	if (vms_report_parse_time(t, &e->t) < 0) {
		free(t);
		return -EINVAL;
	}
	e->kind = VMS_WE_TIME;
	e->t.text = t;
	e->owned = true;
	return 0;
}

static void edge_free(struct vms_wedge *e)
{
	free(e->mark);
	if (e->owned)
		free((char *)e->t.text);
	*e = (struct vms_wedge){0};
}

int vms_window_parse(struct vms_window *w, const char *text)
{
	int r = -EINVAL;
	for (const char *d = strstr(text, ".."); d; d = strstr(d + 1, "..")) {
		struct vms_wedge a, b;
		if ((r = parse_edge(text, (size_t)(d - text), &a)) < 0) {
			if (r == -ENOMEM)
				return r;
			continue;
		}
		if ((r = parse_edge(d + 2, strlen(d + 2), &b)) < 0) {
			edge_free(&a);
			if (r == -ENOMEM)
				return r;
			continue;
		}
		edge_free(&w->from);
		edge_free(&w->to);
		w->from = a;
		w->to = b;
		w->text = text;
		return 0;
	}
	return -EINVAL;
}

void vms_window_times(struct vms_window *w, const struct vms_tspec *from, const struct vms_tspec *to)
{
	edge_free(&w->from);
	edge_free(&w->to);
	if (from->kind != VMS_T_NONE)
		w->from = (struct vms_wedge){.kind = VMS_WE_TIME, .t = *from};
	if (to->kind != VMS_T_NONE)
		w->to = (struct vms_wedge){.kind = VMS_WE_TIME, .t = *to};
}

static void edge_start(struct vms_wedge *e, uint64_t t0_mono, int64_t t0_real)
{
	if (e->kind != VMS_WE_TIME)
		return;
	vms_report_resolve_tod(&e->t, t0_real);
	e->known = true;
	if (e->t.kind == VMS_T_REL) {
		e->mono = true;
		e->at = (int64_t)t0_mono + (int64_t)(e->t.rel * 1e9);
	} else {
		e->at = e->t.abs_ns;
	}
}

void vms_window_start(struct vms_window *w, uint64_t t0_mono, int64_t t0_real)
{
	edge_start(&w->from, t0_mono, t0_real);
	edge_start(&w->to, t0_mono, t0_real);
}

void vms_window_mark(struct vms_window *w, const struct vms_event *e)
{
	if (e->type != VMS_EV_MARK)
		return;
	struct vms_wedge *ends[2] = {&w->from, &w->to};
	for (int i = 0; i < 2; i++)
		if (ends[i]->kind == VMS_WE_MARK && !ends[i]->known && strcmp(ends[i]->mark, e->subject) == 0) {
			ends[i]->known = true;
			ends[i]->mono = true;
			ends[i]->at = (int64_t)e->t_mono_ns;
		}
	/* the marks met, for vms_window_check()'s message */
	size_t old = w->marks ? strlen(w->marks) : 0, add = strlen(e->subject) + 4;
	char *m = realloc(w->marks, old + add + 1);
	if (!m)
		return; /* only the message is shorter */
	snprintf(m + old, add + 1, "%s\"%s\"", old ? ", " : " ", e->subject);
	w->marks = m;
}

int vms_window_in(const struct vms_window *w, uint64_t m0, int64_t r0, uint64_t m1, int64_t r1)
{
	const struct vms_wedge *f = &w->from, *t = &w->to;
	if (f->kind == VMS_WE_MARK && !f->known)
		return -1; /* its mark is still to come */
	if (f->known &&
	    (f->mono ? (int64_t)m0 : r0) < f->at - (f->kind == VMS_WE_MARK ? 0 : TOL_NS))
		return -1;
	if (t->known && (t->mono ? (int64_t)m1 : r1) > t->at + (t->kind == VMS_WE_MARK ? 0 : TOL_NS))
		return 1;
	return 0;
}

int vms_window_check(const struct vms_window *w, const char *path, char *err, size_t cap)
{
	const struct vms_wedge *ends[2] = {&w->from, &w->to};
	for (int i = 0; i < 2; i++)
		if (ends[i]->kind == VMS_WE_MARK && !ends[i]->known) {
			snprintf(err, cap, "%s: no mark \"%s\" (its marks:%s)", path, ends[i]->mark,
				 w->marks ? w->marks : " none");
			return -ENOENT;
		}
	return 0;
}

void vms_window_free(struct vms_window *w)
{
	edge_free(&w->from);
	edge_free(&w->to);
	free(w->marks);
	w->marks = NULL;
}

/* SPDX-License-Identifier: MIT */
#include "virt_pace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void vms_pace_init(struct vms_pace *p, uint64_t refresh_ns, uint64_t budget_ns, uint64_t spacing_ns)
{
	memset(p, 0, sizeof(*p));
	p->refresh_ns = refresh_ns ? refresh_ns : 60 * VMS_NSEC_PER_SEC;
	p->budget_ns = budget_ns ? budget_ns : 50 * VMS_NSEC_PER_MSEC;
	p->spacing_ns = spacing_ns < p->refresh_ns ? spacing_ns : 0;
}

void vms_pace_free(struct vms_pace *p)
{
	free(p->d);
	memset(p, 0, sizeof(*p));
}

int vms_pace_find(const struct vms_pace *p, const char *uuid)
{
	for (unsigned i = 0; i < p->n; i++)
		if (strcmp(p->d[i].uuid, uuid) == 0)
			return (int)i;
	return -1;
}

int vms_pace_add(struct vms_pace *p, const char *uuid)
{
	int i = vms_pace_find(p, uuid);
	if (i >= 0)
		return i;
	if (p->n == p->cap) {
		unsigned cap = p->cap ? p->cap * 2 : 16;
		struct vms_pace_dom *d = realloc(p->d, cap * sizeof(*d));
		if (!d)
			return -ENOMEM;
		p->d = d;
		p->cap = cap;
	}
	struct vms_pace_dom *d = &p->d[p->n];
	memset(d, 0, sizeof(*d));
	snprintf(d->uuid, sizeof(d->uuid), "%s", uuid);
	return (int)p->n++;
}

void vms_pace_remove(struct vms_pace *p, const char *uuid)
{
	int i = vms_pace_find(p, uuid);
	if (i < 0)
		return;
	memmove(&p->d[i], &p->d[i + 1], (p->n - (unsigned)i - 1) * sizeof(p->d[0]));
	p->n--;
}

unsigned vms_pace_batch_max(const struct vms_pace *p)
{
	if (p->cost_ns <= 0)
		return 1; /* measure one domain before trusting the budget */
	double m = (double)p->budget_ns / p->cost_ns;
	if (m < 1)
		return 1;
	if (m > VMS_PACE_BATCH_MAX)
		return VMS_PACE_BATCH_MAX;
	return (unsigned)m;
}

/* Order for picking: never refreshed first, then the oldest refresh. */
static bool before(const struct vms_pace_dom *a, const struct vms_pace_dom *b)
{
	return a->last_ns < b->last_ns;
}

unsigned vms_pace_pick(struct vms_pace *p, uint64_t now_ns, bool (*skip)(void *ctx, unsigned i),
		       void *ctx, unsigned *out, unsigned max)
{
	unsigned bmax = vms_pace_batch_max(p);
	if (max > bmax)
		max = bmax;

	/* how many: every first value and every overdue one, else what the
	 * credit pays for; the credit grows with the domains that can be
	 * asked (not those backed off or held).  At a batch point, overdue
	 * is what would be overdue before the next point. */
	bool point = !p->spacing_ns || !p->point_ns || now_ns >= p->point_ns + p->spacing_ns;
	uint64_t early = point ? p->spacing_ns : 0;
	unsigned never = 0, overdue = 0, active = 0;
	for (unsigned i = 0; i < p->n; i++) {
		const struct vms_pace_dom *d = &p->d[i];
		if (d->retry_ns > now_ns)
			continue;
		active++;
		if (d->last_ns == 0)
			never++;
		else if (now_ns - d->last_ns + early >= p->refresh_ns)
			overdue++;
	}
	if (p->last_pick_ns && now_ns > p->last_pick_ns)
		p->credit += (double)active * (double)(now_ns - p->last_pick_ns) / (double)p->refresh_ns;
	p->last_pick_ns = now_ns;
	if (p->credit > bmax)
		p->credit = bmax; /* no bursts after a pause */
	if (!point && !never && !p->behind)
		return 0; /* gathering until the next point */
	if (point)
		p->point_ns = now_ns;
	unsigned want = never + overdue, by_credit = never + (unsigned)p->credit;
	p->behind = want > max;
	if (want < by_credit)
		want = by_credit;
	if (want > max)
		want = max;

	/* which: the `want` oldest, asking skip() only about a domain that
	 * would make the list (a check may cost a file read) */
	unsigned ne = 0, first = 0;
	for (unsigned i = 0; i < p->n && want; i++) {
		const struct vms_pace_dom *d = &p->d[i];
		if (d->retry_ns > now_ns)
			continue;
		unsigned pos = ne;
		while (pos > 0 && before(d, &p->d[out[pos - 1]]))
			pos--;
		if (pos >= want || (skip && skip(ctx, i)))
			continue;
		unsigned last = ne < want ? ne : want - 1;
		memmove(&out[pos + 1], &out[pos], (last - pos) * sizeof(*out));
		out[pos] = i;
		if (ne < want)
			ne++;
	}
	for (unsigned k = 0; k < ne; k++)
		if (p->d[out[k]].last_ns == 0)
			first++;
	/* credit pays for refreshes, not for first values */
	p->credit -= ne - first;
	if (p->credit < 0)
		p->credit = 0;
	return ne;
}

uint64_t vms_pace_next(const struct vms_pace *p, uint64_t now_ns)
{
	if (!p->n)
		return UINT64_MAX;
	if (!p->spacing_ns || !p->point_ns || p->behind)
		return now_ns;
	uint64_t next = p->point_ns + p->spacing_ns;
	for (unsigned i = 0; i < p->n; i++)
		if (p->d[i].last_ns == 0) {
			uint64_t t = p->d[i].retry_ns > now_ns ? p->d[i].retry_ns : now_ns;
			if (t < next)
				next = t;
		}
	return next > now_ns ? next : now_ns;
}

void vms_pace_done(struct vms_pace *p, const unsigned *idx, const bool *ok, unsigned n, uint64_t now_ns,
		   uint64_t wall_ns)
{
	if (n > 0 && wall_ns > 0) {
		double per = (double)wall_ns / n;
		p->cost_ns = p->cost_ns > 0 ? 0.8 * p->cost_ns + 0.2 * per : per;
	}
	for (unsigned k = 0; k < n; k++) {
		if (idx[k] >= p->n)
			continue;
		struct vms_pace_dom *d = &p->d[idx[k]];
		if (ok[k]) {
			d->last_ns = now_ns;
			d->fails = 0;
			d->retry_ns = 0;
			continue;
		}
		d->fails++;
		uint64_t wait = VMS_PACE_BACKOFF_FIRST;
		for (uint32_t f = 1; f < d->fails && wait < VMS_PACE_BACKOFF_MAX; f++)
			wait *= 2;
		if (wait > VMS_PACE_BACKOFF_MAX)
			wait = VMS_PACE_BACKOFF_MAX;
		d->retry_ns = now_ns + wait;
	}
}

void vms_pace_hold(struct vms_pace *p, const char *uuid, uint64_t until_ns)
{
	int i = vms_pace_find(p, uuid);
	if (i >= 0 && p->d[i].retry_ns < until_ns)
		p->d[i].retry_ns = until_ns;
}
